// Matchers: how the target's reactions are graded against one expectation
// of a case (proto/case.proto, message Expect). Pure functions of what has
// been observed so far and of what the suite sent; the case driver (case_driver.h)
// waits for input and re-evaluates until a matcher decides or its deadline
// passes. All expectations come from the case file: a matcher never asks a
// model what the answer should be.
//
// Grading (decisions D-S): a miss is graded at the expectation's level
// (VerdictForMiss); Terminate codes by accept-set (preferred or another
// accepted member: pass; another registered code: the case's
// other_registered level, default warn; an unassigned code, a malformed
// Terminate or none at all: fail).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "conformance/result.h"
#include "proto/case.pb.h"
#include "reference/wire/bytes.h"
#include "reference/wire/mpa.h"
#include "reference/wire/profile.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::conformance {

// A DDP segment the target sent that is not an Event Record.
struct ReceivedFrame {
  std::size_t record = 0;  // index into CaseResult::frames
  wire::Bytes ulpdu;       // DDP header + payload (Markers, PAD, CRC removed)
};

// A target Send carrying a test-ULP Event Record (docs/target-convention.md §6.3).
struct ReceivedEvent {
  std::size_t record = 0;
  uint32_t msn = 0;                        // QN 0 MSN of the carrying Send
  std::optional<wire::EventRecord> event;  // nullopt: the record did not decode
  std::string error;                       // why it did not decode
};

enum class LinkState : uint8_t {
  kOpen,
  kFin,    // the target closed gracefully (no more octets will come)
  kReset,  // the connection was reset
  kError,  // a transport failure
};
std::string_view LinkStateName(LinkState s);

// The target's byte stream broke after the frames observed: octets that are
// no FPDU (fail: the target framed wrongly) or more than the suite's bounds
// allow (error: a flood).
struct StreamProblem {
  Verdict verdict = Verdict::kFail;
  std::string reason;
  std::optional<std::size_t> record;
};

// Everything received and not yet consumed by an earlier expectation.
struct Observation {
  std::span<const ReceivedFrame> frames;
  std::span<const ReceivedEvent> events;
  LinkState link = LinkState::kOpen;
  std::optional<StreamProblem> problem;  // after `frames`
  bool deadline_passed = false;          // this expectation's time is up
  std::chrono::milliseconds waited{0};   // since the expectation started
};

struct MatchOutcome {
  Verdict verdict = Verdict::kPass;
  std::string reason;  // one line; empty for a plain pass
  std::string expected;
  std::string actual;  // decoded frames and raw octets where there are any
  std::vector<std::string> notes;
  std::vector<AcceptChoice> choices;
  std::vector<std::size_t> frames;  // CaseResult::frames indexes looked at
};

inline MatchOutcome MakeOutcome(Verdict v, std::string reason, std::string expected, std::string actual) {
  MatchOutcome o;
  o.verdict = v;
  o.reason = std::move(reason);
  o.expected = std::move(expected);
  o.actual = std::move(actual);
  return o;
}

struct Evaluation {
  bool decided = false;  // false: wait for more input (never once the deadline passed)
  MatchOutcome outcome;
  std::size_t frames_used = 0;  // leading Observation::frames this expectation consumed
  std::size_t events_used = 0;
};

// What the suite sent in one send step, as matchers need it.
struct SentMessage {
  std::string label;
  wire::Opcode opcode = wire::Opcode::kRdmaWrite;
  // The segment a Terminate echoes: the first one transmitted.
  wire::DdpSegmentHeader ddp_header;
  wire::Bytes ddp_header_octets;                            // 14 or 18 octets as sent
  std::optional<wire::ReadRequestHeader> read_request;      // RDMA Read Requests
  wire::Bytes rdma_header_octets;                           // the RDMAP header as sent (Read Request: 28 octets)
  uint32_t ulpdu_length = 0;                                // that segment's ULPDU_Length (DDP header + payload)
  uint32_t payload_length = 0;                              // that segment's DDP payload length
  wire::Bytes ulp_payload;                                  // the whole message's ULP payload
  std::optional<wire::AtomicRequestHeader> atomic_request;  // Atomic Requests
  uint32_t connection = 0;                                  // Step.connection it went out on
  // Read Requests: octets of Read Response received for it so far
  // (the Terminated RDMA Header of an UPDATED echo is advanced by these).
  uint64_t response_octets = 0;
};

// The concrete values an expectation refers to, resolved by the case driver
// (regions via the Advertisement, labels via the sends).
struct MatchContext {
  wire::Profile profile = wire::Profile::kRfc5040;
  proto::Level severity = proto::MUST;       // Expect.severity or the case level
  const SentMessage* offending = nullptr;    // Terminate: the offending send
  std::optional<wire::Bytes> expected_data;  // frame payload / event data
  std::optional<uint32_t> invalidated_stag;  // event: STag expected invalidated
  std::chrono::milliseconds timeout{2000};   // for messages only
};

// ---- frame-based expectations --------------------------------------------

Evaluation EvaluateFrame(const proto::FrameMatcher& m, const Observation& obs, const MatchContext& ctx);
Evaluation EvaluateTerminate(const proto::TerminateMatcher& m, const Observation& obs, const MatchContext& ctx);
// The grading of one received frame as the expected Terminate (unit tests
// and EvaluateTerminate).
MatchOutcome MatchTerminateFrame(const proto::TerminateMatcher& m, const ReceivedFrame& frame, const MatchContext& ctx);
Evaluation EvaluateEvent(const proto::EventMatcher& m, const Observation& obs, const MatchContext& ctx);
Evaluation EvaluateClosed(const proto::ConnectionClosed& m, const Observation& obs, const MatchContext& ctx);
Evaluation EvaluateNothing(const proto::Nothing& m, const Observation& obs, const MatchContext& ctx);

// One RDMA Read Request the suite sent and what its answer must hold.
struct ReadRequestSent {
  uint32_t sink_stag = 0;
  uint64_t sink_tagged_offset = 0;
  uint32_t size = 0;                    // RDMARDSZ
  std::optional<wire::Bytes> expected;  // the source memory; nullopt: not checked
  std::string what;                     // "Read Request 2", "memory at RW+1000 (1500 octets)"
};

// Read Responses answering `requests`, in order: each complete (every octet
// of [SinkTO, SinkTO + RDMARDSZ) exactly once, STag = SinkSTag, L=1 on the
// segment that ends it) before the next begins, data as expected.
// `data` (optional) receives the octets read, one entry per request.
Evaluation EvaluateReadResponses(std::span<const ReadRequestSent> requests, const Observation& obs,
                                 const MatchContext& ctx, std::vector<wire::Bytes>* data = nullptr);

// Expected vs actual memory: "" when equal, else "N octets differ, the first
// at offset k: expected 0x.., got 0x..".
std::string MemoryDifference(wire::ByteSpan expected, wire::ByteSpan actual);

// ---- the MPA Reply ----------------------------------------------------------

// What the suite got back for its MPA Request.
struct HandshakeOutcome {
  std::optional<wire::MpaStartupFrame> reply;
  std::string reply_error;            // the Reply arrived but did not decode
  LinkState link = LinkState::kOpen;  // how the target ended it when there is no Reply
  bool timed_out = false;             // neither Reply nor close before the deadline
  bool advertisement = false;         // the Reply carried an Advertisement (RPCA)
  std::size_t early_octets = 0;       // octets the target sent before the Request was complete
  std::optional<std::size_t> record;
};

MatchOutcome MatchMpaReply(const proto::MpaReplyMatcher& m, const HandshakeOutcome& h,
                           const wire::MpaStartupFrame& request, const MatchContext& ctx);

// The target's MPA Request when it is the Initiator (a `listen` step).
struct RequestOutcome {
  std::optional<wire::MpaStartupFrame> request;
  std::string error;                  // the Request arrived but did not decode
  LinkState link = LinkState::kOpen;  // how the target ended it when there is no Request
  bool timed_out = false;             // neither Request nor close before the deadline
  bool advertisement = false;         // the Request carried an Advertisement (RPCA)
  std::optional<std::size_t> record;
};

// conformance/request_matcher.cc
MatchOutcome MatchMpaRequest(const proto::MpaRequestMatcher& m, const RequestOutcome& r, const MatchContext& ctx);

}  // namespace rdmapct::conformance
