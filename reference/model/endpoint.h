// The reference RDMAP Stream endpoint (RFC 5040 over RFC 5041, with the
// RFC 7306 and draft-talpey-rdma-commit-01 extensions selected by profile).
//
// One endpoint plays both roles on one stream: responder / Data Sink / Data
// Source for what the peer sends, and requester for what its own ULP posts.
// It is deterministic and synchronous: no I/O, clock or thread. ULPDUs (DDP
// segments as the MPA deframer hands them up) go in through OnSegment();
// reactions (ULPDUs to send, ULP events, violations, state changes) are
// appended to a caller-owned Reactions.
//
// Receive path: decode (wire::DecodeRdmapSegment), run the checks common to
// every segment (DV, QN, RV, opcode, untagged MSN/MO), then dispatch through
// ONE opcode-indexed table of handlers (kRxHandlers in endpoint.cc). Handlers
// live in one file per message family: rx_untagged.cc, rx_tagged.cc,
// rx_read.cc, rx_terminate.cc, rx_atomic.cc, rx_commit.cc.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>

#include "reference/model/checks.h"
#include "reference/model/decision_options.h"
#include "reference/model/faults.h"
#include "reference/model/reactions.h"
#include "reference/model/resources.h"
#include "reference/model/violation.h"
#include "reference/wire/bytes.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/profile.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"

namespace rdmapct::model {

// MULPDU for a 1460-octet EMSS without Markers (RFC 5044 §4.5: 1460 - 6 - 2).
inline constexpr std::size_t kDefaultMulpdu = 1452;

struct EndpointConfig {
  wire::Profile profile = wire::Profile::kRfc5040;
  uint32_t stream_id = 1;                          // regions with another stream_id are "not associated"
  uint32_t ird = 16;                               // inbound QN1 request slots (RFC 5040 §6.1)
  uint32_t ord = 16;                               // outbound outstanding requests
  std::size_t mulpdu = kDefaultMulpdu;             // largest ULPDU this endpoint sends
  uint8_t ddp_version = wire::kDdpVersion;         // DV expected and sent
  uint8_t rdmap_version = wire::kRdmaVersionIetf;  // RV expected and sent
  // true: responses to inbound requests are sent from OnSegment itself.
  // false: they queue (in request order) until EmitPendingResponses(), which
  // lets tests keep requests outstanding (IRD, ordering, mid-read failures).
  bool auto_respond = true;
  // With auto_respond false: responses still queued when an error is found
  // go out ahead of its Terminate (their requests arrived before the error),
  // as a target that answers each batch of input at its end must. False
  // keeps them queued, so tests can fail a request mid-response.
  bool answer_before_terminate = false;
  // Passive audit of captured traffic: the endpoint's memory and receive
  // buffers are unknown. Unregistered STags are accepted without placement,
  // QN0 receives of unknown size are assumed for every legal MSN, and no
  // response is generated: inbound requests wait for the responses the real
  // endpoint sent, which ObserveTransmitted() checks. Terminates the model
  // would send are still produced (what the audited endpoint should send).
  bool passive = false;
  // Passive audit: false when the audited side's receive buffers are known
  // (posted with PostReceive, e.g. from a test-ULP Advertisement, whose
  // buffers are never reposted): no receive is assumed beyond them.
  bool passive_assume_receives = true;
  FaultSet faults;
  DecisionOptions decisions;
};

enum class PostStatus : uint8_t {
  kOk,
  kNotStreaming,     // after a Terminate or Close()
  kNotInProfile,     // the message needs RFC 7306 / COMMIT
  kOrdExceeded,      // RFC 5040 §6.1 MUST NOT exceed ORD
  kInvalidArgument,  // e.g. not a Send opcode
  kMessageTooLong,   // 2^32 octets or more (RFC 5041 §5.2)
};
const char* PostStatusName(PostStatus s);

// A Read Request this endpoint sent and whose Read Response is still due.
struct OutstandingRead {
  uint32_t msn = 0;  // QN1 MSN of the request
  wire::ReadRequestHeader request;
  ByteRangeSet received;  // sink octets placed (offsets from SinkTO)
  bool last_seen = false;
};

// A QN1 request this endpoint sent whose QN3 response is still due
// (Atomic, Flush, Verify, Atomic Write).
struct OutstandingResponse {
  uint32_t request_msn = 0;  // QN1 MSN of the request
  wire::Opcode request = wire::Opcode::kAtomicRequest;
  wire::Opcode response = wire::Opcode::kAtomicResponse;
  uint32_t request_id = 0;  // Atomic Request Identifier
};

// An inbound request whose response has not been (fully) sent.
struct PendingResponse {
  wire::Opcode response = wire::Opcode::kRdmaReadResponse;
  bool extension = false;  // Atomic/COMMIT (IRD accounting, decisions D-C7)
  // The request's segment, for a Terminate if serving it fails later.
  OffendingSegment request_segment;
  // Read Response: the request and how many octets were already sent.
  wire::ReadRequestHeader read;
  uint64_t read_sent = 0;
  bool read_started = false;
  // QN3 responses: RDMAP header + payload, encoded when queued.
  wire::Bytes body;
  // Passive audit: the Request Identifier an Atomic Response must echo, and
  // the Read Response octets observed so far.
  uint32_t request_id = 0;
  ByteRangeSet observed;
};

class RdmapEndpoint {
 public:
  explicit RdmapEndpoint(EndpointConfig config = {});

  // --- inbound ------------------------------------------------------------------
  // One ULPDU (DDP header + payload) as handed up by the MPA deframer.
  void OnSegment(wire::ByteSpan ulpdu, Reactions& out);
  // An error the LLP (MPA) reports: CRC -> Terminate 2/0/0x02, Marker ->
  // 2/0/0x03 (M=D=R=0); any other code (connection lost, ...) -> kError.
  void OnLlpError(wire::TerminateCode code, Reactions& out);

  // Passive audit: one ULPDU this endpoint's side sent. Checks it against what
  // that side must send (header fields, MSN order, MULPDU, ORD, responses in
  // request order matching their requests, nothing after its Terminate) and
  // learns its outstanding requests. Findings are violations with no
  // Terminate and no state change (except the Terminate itself).
  void ObserveTransmitted(wire::ByteSpan ulpdu, Reactions& out);

  // Responses queued while auto_respond is false: sends up to `max_segments`
  // ULPDUs in request order; returns how many it sent.
  std::size_t EmitPendingResponses(std::size_t max_segments, Reactions& out);

  // --- requester / data source (the local ULP posts) -----------------------------
  // `op` is one of the four Send variants.
  PostStatus PostSend(wire::Opcode op, wire::ByteSpan payload, uint32_t invalidate_stag, Reactions& out);
  PostStatus PostImmediateData(uint64_t immediate_data, bool solicited_event, Reactions& out);
  PostStatus PostRdmaWrite(uint32_t stag, uint64_t tagged_offset, wire::ByteSpan payload, Reactions& out);
  PostStatus PostReadRequest(const wire::ReadRequestHeader& h, Reactions& out);
  PostStatus PostAtomicRequest(const wire::AtomicRequestHeader& h, Reactions& out);
  PostStatus PostFlushRequest(const wire::FlushRequestHeader& h, Reactions& out);
  PostStatus PostVerifyRequest(const wire::VerifyRequestHeader& h, Reactions& out);
  PostStatus PostAtomicWriteRequest(const wire::AtomicWriteRequestHeader& h, Reactions& out);
  // RFC 5040 §7.1 case 1: the ULP (or a local error) ends the stream; the
  // Terminate carries `code` and no echoed headers (M=D=R=0).
  PostStatus Abort(wire::TerminateCode code, Reactions& out);
  // ULP graceful termination (RFC 5040 §6.2): no more posts; inbound traffic
  // is still processed.
  void Close(Reactions& out);

  // --- ULP resources ---------------------------------------------------------------
  Resources& resources() { return resources_; }
  const Resources& resources() const { return resources_; }
  uint64_t PostReceive(uint32_t size) { return resources_.PostReceive(size); }

  // --- queries ------------------------------------------------------------------------
  const EndpointConfig& config() const { return config_; }
  StreamState state() const { return state_; }
  const std::optional<Violation>& first_violation() const { return first_violation_; }
  // Octets of a registered region (empty span if unknown or out of range).
  std::span<const uint8_t> PeekRegion(uint32_t stag, uint64_t tagged_offset, std::size_t length) const;
  std::size_t outstanding_reads() const { return outstanding_reads_.size(); }
  std::size_t outstanding_responses() const { return outstanding_responses_.size(); }
  std::size_t pending_responses() const { return pending_.size(); }
  // Next MSN expected on inbound queue `qn` / to be sent on outbound `qn` (0-3).
  uint32_t expected_msn(uint32_t qn) const { return qn < 4 ? expected_msn_[qn] : 0; }
  uint32_t next_msn(uint32_t qn) const { return qn < 4 ? next_msn_[qn] : 0; }
  uint64_t segments_received() const { return segments_received_; }
  uint64_t segments_dropped() const { return segments_dropped_; }

 private:
  // The segment being processed, shared by the checks and the handlers.
  struct RxSegment {
    const wire::RdmapMessageView& view;
    wire::ByteSpan ulpdu;
    const wire::OpcodeInfo* info;  // never null inside a handler
    const wire::DdpSegmentHeader& ddp() const { return view.ddp.header; }
    wire::ByteSpan payload() const { return view.ddp.payload; }  // DDP payload
  };
  using RxHandler = void (RdmapEndpoint::*)(const RxSegment&, Reactions&);
  static const std::array<RxHandler, wire::kOpcodeCount> kRxHandlers;

  // --- dispatch (endpoint.cc) ---
  bool AcceptInState(wire::ByteSpan ulpdu, Reactions& out);
  void OnUndecodable(wire::ByteSpan ulpdu, Reactions& out);
  void Dispatch(const RxSegment& rx, bool header_truncated, Reactions& out);
  bool CheckCommon(const RxSegment& rx, Reactions& out);
  bool CheckUntaggedRequest(const RxSegment& rx, Reactions& out);   // QN1
  bool CheckUntaggedResponse(const RxSegment& rx, Reactions& out);  // QN3
  // QN1-3 buffers hold exactly one RDMAP header (decisions D-F7): MO 0, L=1.
  bool CheckSingleSegment(const RxSegment& rx, Reactions& out);

  // --- handlers: one file per message family ---
  void OnSend(const RxSegment& rx, Reactions& out);                    // rx_untagged.cc
  void OnImmediateData(const RxSegment& rx, Reactions& out);           // rx_untagged.cc
  ReceiveBuffer* ClaimReceive(const RxSegment& rx, Reactions& out);    // rx_untagged.cc
  void DeliverCompletedReceives(const RxSegment& rx, Reactions& out);  // rx_untagged.cc
  void OnRdmaWrite(const RxSegment& rx, Reactions& out);               // rx_tagged.cc
  void OnReadResponse(const RxSegment& rx, Reactions& out);            // rx_tagged.cc
  void OnReadRequest(const RxSegment& rx, Reactions& out);             // rx_read.cc
  void OnTerminate(const RxSegment& rx, Reactions& out);               // rx_terminate.cc
  void OnAtomicRequest(const RxSegment& rx, Reactions& out);           // rx_atomic.cc
  void ApplyDeferredStore();                                           // rx_atomic.cc
  void OnAtomicResponse(const RxSegment& rx, Reactions& out);          // rx_atomic.cc
  void OnFlushRequest(const RxSegment& rx, Reactions& out);            // rx_commit.cc
  void OnFlushResponse(const RxSegment& rx, Reactions& out);           // rx_commit.cc
  void OnVerifyRequest(const RxSegment& rx, Reactions& out);           // rx_commit.cc
  void OnVerifyResponse(const RxSegment& rx, Reactions& out);          // rx_commit.cc
  void OnAtomicWriteRequest(const RxSegment& rx, Reactions& out);      // rx_commit.cc
  void OnAtomicWriteResponse(const RxSegment& rx, Reactions& out);     // rx_commit.cc

  // --- helpers shared by the handlers (endpoint.cc / rx_untagged.cc) ---
  // Records `v` against the current segment: latches the first violation,
  // informs the ULP, sends the Terminate (if the table says so and none was
  // sent) and changes state. RaiseViolation takes v.offending as filled in
  // (LLP errors, failures while serving a queued request).
  void Raise(const RxSegment& rx, Violation v, Reactions& out);
  void RaiseViolation(Violation v, Reactions& out);
  // Latches and reports `v` only (no Terminate, no event, no state change).
  void RecordViolation(Violation v, Reactions& out);
  // Passive audit: an accepted QN1 request whose response the audited side owes.
  void ExpectResponse(const RxSegment& rx, Reactions& out);
  bool PassiveTargetKnown(const wire::RdmapMessageView& v) const;

  // --- passive audit of transmissions (observe_tx.cc) ---
  bool ObserveHeaderFields(const wire::RdmapMessageView& v, Reactions& out);
  void ObserveReadResponse(const wire::RdmapMessageView& v, Reactions& out);
  void ObserveUntagged(const wire::RdmapMessageView& v, Reactions& out);
  void ObserveQn3Response(const wire::RdmapMessageView& v, Reactions& out);
  // Raise(rx, *r) if r holds a violation; returns true when it did.
  bool RaiseIf(const RxSegment& rx, CheckResult r, Reactions& out);
  // Whether responses and other transmissions may still be sent.
  bool CanTransmit() const;
  // Queues the response to an accepted QN1 request (Read Responses are
  // queued by OnReadRequest, QN3 responses by the extension handlers with
  // their encoded RDMAP header + payload) and, in auto_respond mode, sends it.
  void QueueResponse(PendingResponse response, Reactions& out);
  // An untagged QN3 response body: header + payload encoded into a fresh
  // PendingResponse for `rx`'s request.
  PendingResponse MakeQn3Response(const RxSegment& rx, wire::Opcode response, const wire::RdmapHeader& header,
                                  wire::ByteSpan payload) const;
  // The oldest request still waiting for its QN3 response (checked by
  // CheckUntaggedResponse before the extension handlers run), and its removal.
  const OutstandingResponse& FrontOutstandingResponse() const { return outstanding_responses_.front(); }
  OutstandingResponse PopOutstandingResponse();
  OffendingSegment SegmentOf(const RxSegment& rx) const;

  // --- transmit (endpoint_tx.cc) ---
  // Segments `body` to MULPDU and appends the ULPDUs; `first` gives every
  // header field of the first segment (T flag, STag/TO or QN/MSN, RsvdULP).
  // `extra_room` > 0 only under a segmentation fault.
  void TransmitMessage(const wire::DdpSegmentHeader& first, wire::ByteSpan body, Reactions& out,
                       std::size_t extra_room = 0);
  wire::DdpSegmentHeader UntaggedHeader(wire::Opcode op, uint32_t qn) const;
  wire::DdpSegmentHeader TaggedHeader(wire::Opcode op, uint32_t stag, uint64_t to) const;
  PostStatus CheckCanPost(wire::Opcode op) const;
  PostStatus PostQn1Request(wire::Opcode request, const wire::RdmapHeader& header, uint32_t request_id, Reactions& out);
  // Sends (part of) the front pending response; returns segments sent.
  std::size_t EmitFrontResponse(std::size_t max_segments, Reactions& out);
  std::size_t EmitReadResponse(PendingResponse& p, std::size_t max_segments, Reactions& out);
  void AppendSourceOctets(const MemoryRegion& region, uint64_t to, std::size_t n, wire::Bytes& out) const;
  void SetState(StreamState s, Reactions& out);
  uint32_t PendingCount(bool extension) const;

  EndpointConfig config_;
  Resources resources_;
  StreamState state_ = StreamState::kStreaming;
  std::optional<Violation> first_violation_;
  std::array<uint32_t, 4> expected_msn_{1, 1, 1, 1};       // inbound, per QN
  std::array<uint32_t, 4> next_msn_{1, 1, 1, 1};           // outbound, per QN
  std::deque<OutstandingRead> outstanding_reads_;          // requester, in request order
  std::deque<OutstandingResponse> outstanding_responses_;  // requester, QN3, in order
  std::deque<PendingResponse> pending_;                    // responder, in request order
  bool terminate_sent_ = false;
  bool emitting_responses_ = false;  // inside EmitPendingResponses (answer_before_terminate)
  bool terminate_observed_ = false;  // passive: the audited side's own
  uint64_t segments_received_ = 0;
  uint64_t segments_dropped_ = 0;
  // Fault non-atomic-fetchadd: the sum of the last FetchAdd, written only
  // when the next segment arrives (another connection may run in between).
  struct DeferredStore {
    uint32_t stag = 0;
    uint64_t tagged_offset = 0;
    uint64_t value = 0;
  };
  std::optional<DeferredStore> deferred_store_;
  wire::Bytes scratch_;  // reused encode buffer
};

}  // namespace rdmapct::model
