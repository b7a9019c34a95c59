// Internals of the case driver (case_driver.h), shared by case_driver.cc (the
// connect and send steps) and case_driver_expect.cc (the expectations). Not a
// public interface.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conformance/atomic_serial.h"
#include "conformance/case_driver.h"
#include "conformance/connection.h"
#include "conformance/matchers.h"
#include "conformance/message_builder.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention_commands.h"
#include "reference/wire/ulp_convention_directive.h"

namespace rdmapct::conformance {

// What the suite believes target memory holds: the convention's pattern
// with the plain Writes of this case laid over it (convention §4: the suite
// keeps its own copy across Keep Memory connections).
class MemoryModel {
 public:
  void Reset() { written_.clear(); }
  void Write(const MemoryWrite& w);
  wire::Bytes Expected(const wire::AdvertisedRegion& region, uint64_t tagged_offset, std::size_t length) const;

 private:
  std::map<uint16_t, std::map<uint64_t, uint8_t>> written_;  // object -> offset -> octet
};

// The suite's own region (convention §2.4), advertised in the Suite Request
// extension of cases that send commands; its memory starts as the pattern of
// Memory Object 0xFFFF.
inline constexpr uint32_t kSuitePeerStag = 0x5157e100;
inline constexpr uint64_t kSuitePeerBase = 0x0000530000000000;
inline constexpr uint32_t kSuitePeerLength = 65536;
inline constexpr uint16_t kSuitePeerObject = 0xFFFF;
inline constexpr uint16_t kDefaultSuiteIrd = 4;
// Four more suite STags over the region's first 4096 octets, one for each
// Send with Invalidate a connection may command (a correct Data Sink
// invalidates the STag it names, so each can be named once).
inline constexpr uint32_t kSuiteInvalidateStag = 0x5157e101;
inline constexpr uint32_t kSuiteInvalidateStags = 4;

// One command the suite sent on this connection and what the suite has
// seen of it (case_driver_peer.cc).
struct PeerCommand {
  wire::Command command;
  std::optional<wire::AdvertisedRegion> local;  // the target region it names
  wire::Bytes expected;                         // the octets it must move (Write / Send data; a Read's answer)
  uint64_t progress = 0;                        // octets of its message seen so far
  bool message_done = false;
  uint32_t msn = 0;           // Sends: the message's MSN
  wire::Bytes rsvd_ulp;       // Sends: RsvdULP octets of the first segment
  uint32_t read_request = 0;  // Reads: its number among the target's Read Requests
  bool answered = false;      // Reads, Atomics: the suite sent the response
  uint32_t request_id = 0;    // Atomics: the Request Identifier to echo
};

struct PeerState {
  std::vector<PeerCommand> commands;  // Command Id k is commands[k - 1]
  std::size_t next_message = 0;       // the command whose message comes next
  std::size_t next_completion = 0;    // the command whose completion comes next
  uint32_t next_qn1_msn = 1;
  std::vector<uint32_t> qn0_msns;  // the target's QN 0 MSNs seen (commanded Sends, completion records)
  uint32_t last_message_msn = 0;   // of its last commanded Send / Immediate Data (they rise in posting order)
  uint32_t read_requests = 0;
  std::vector<std::size_t> unanswered;  // commands whose Read Request the suite holds
  uint16_t suite_ird = kDefaultSuiteIrd;
  bool broken_sent = false;  // a broken answer (or none) ends the expectation
  std::string case_error;    // a broken answer the request cannot take
  wire::Bytes memory;        // the suite's region
};

std::string CommandText(const PeerCommand& p);

// A Read Request a case sent, with where its data comes from.
struct ReadRecord {
  ReadRequestSent request;
  std::optional<wire::AdvertisedRegion> source;
  uint64_t source_tagged_offset = 0;
};

// The per-connection state of one of a case's concurrent connections
// (Step.connection, convention §10) while another one is the active one.
struct ConnectionSlot {
  std::unique_ptr<Connection> conn;
  std::optional<MpaRequest> request;
  HandshakeOutcome handshake;
  bool have_advertisement = false;
  wire::Advertisement adv;
  RegionMap regions;
  SendState send_state;
  bool send_rtr_used = false;
  std::vector<ReadRecord> reads;
  MemoryModel memory;
  PeerState peer;  // commands (§7) are per connection too
};

class CaseDriver {
 public:
  CaseDriver(const LoadedCase& c, targets::TargetConnector& connector, const CaseDriverOptions& options);
  CaseRun Run();

 private:
  // case_driver.cc
  StepResult Execute(const proto::Step& step, int index);
  std::unique_ptr<Connection> NewConnection(std::unique_ptr<targets::Transport> transport);
  StepResult DoConnect(const proto::Connect& c, int index);
  bool CheckReply(const proto::Connect& c, const MpaRequest& req, const HandshakeOutcome& h, StepResult& sr);
  bool TakeAdvertisement(const wire::MpaStartupFrame& reply, StepResult& sr);
  void StartFraming(const proto::Connect& c, const MpaRequest& req, const wire::MpaStartupFrame& reply);
  void SendRtr(const proto::Connect& c, const MpaRequest& req, const wire::MpaStartupFrame& reply);
  std::vector<std::string> MissingNeeds() const;
  StepResult DoSend(const proto::Send& s, int index);
  bool FrameMessage(const proto::Send& s, wire::Bytes& octets, std::optional<SentMessage>& sent, std::string& error);
  bool FrameRaw(const proto::Send& s, wire::Bytes& octets, std::optional<SentMessage>& sent, std::string& error);
  bool Transmit(const wire::Bytes& octets, const proto::TcpWrites& tcp, StepResult& sr);
  StepResult DoPause(const proto::Pause& p, int index);
  void Finish();
  // Makes connection `k` the active one (its state in the members below).
  bool SelectConnection(uint32_t k, std::string& error);
  void SwapActive(ConnectionSlot& slot);

  // case_driver_listen.cc (the target as MPA Initiator)
  StepResult DoListen(const proto::Listen& l, int index);
  StepResult DoReply(const proto::Reply& r, int index);
  bool AcceptTarget(std::chrono::milliseconds timeout, bool keep_memory, StepResult& sr);
  void SendDirective(const wire::ConnectDirective& d, StepResult& sr);
  void SendReply(const proto::Reply& r, StepResult& sr);
  void AwaitFirstFpdu(const wire::MpaStartupFrame& reply, StepResult& sr);

  // case_driver_expect.cc
  StepResult DoExpect(const proto::Expect& e, int index);
  MatchContext ContextFor(const proto::Expect& e, std::string& error) const;
  using Evaluator = std::function<Evaluation(const Observation&, bool deadline_passed)>;
  Evaluation WaitFor(const Evaluator& eval, Clock::time_point deadline);
  std::optional<Evaluator> EvaluatorFor(const proto::Expect& e, Clock::time_point start, Clock::time_point& deadline,
                                        std::string& error);
  Evaluation Memory(const proto::MemoryExpectation& m, const MatchContext& ctx, Clock::time_point deadline,
                    std::string& error);
  Evaluation ReadResponses(const proto::ReadResponses& m, const MatchContext& ctx, Clock::time_point deadline,
                           std::string& error);

  // case_driver_fence.cc (docs/target-convention.md §2.5)
  struct FenceWait {
    uint32_t reads = 0;                // FenceTracker::reads_answered() that ends the wait
    uint32_t sends = 0;                // FenceTracker::sends_answered() likewise
    std::vector<std::size_t> records;  // the fence's FPDUs in CaseResult::frames
  };
  bool LaterStepsLeaveQn0Alone(int index) const;
  std::string FenceBlocked(const proto::Nothing& m) const;
  std::string SendFenceBlocked(int index) const;
  std::optional<FenceWait> SendFences(const proto::Nothing& m, int index, std::vector<std::string>& notes);
  Evaluation FencedNothing(const proto::Nothing& m, const MatchContext& ctx, const FenceWait& w,
                           Clock::time_point deadline);
  Evaluation Nothing(const proto::Nothing& m, int index, MatchContext ctx, Clock::time_point start,
                     std::vector<std::string>& notes);

  // case_driver_peer.cc, case_driver_peer_expect.cc (convention §7)
  bool UsesCommands() const;
  wire::SuiteRequestExtension SuiteExtension(const proto::Connect& c) const;
  std::vector<std::string> MissingCommands() const;
  void ResetPeer();
  std::optional<PeerCommand> MakePeerCommand(const proto::Command& pc, std::string& error) const;
  StepResult DoTarget(const proto::TargetAction& t, int index);
  PeerCommand* NextMessageCommand();
  std::string CheckTargetFrame(const ReceivedFrame& f);
  std::string CheckWriteSegment(const wire::RdmapMessageView& v, PeerCommand& p);
  std::string CheckSendSegment(const wire::RdmapMessageView& v, wire::ByteSpan ulpdu, PeerCommand& p);
  std::string CheckReadRequest(const wire::RdmapMessageView& v, PeerCommand& p);
  std::string CheckImmediateData(const wire::RdmapMessageView& v, PeerCommand& p);
  std::string CheckAtomicRequest(const wire::RdmapMessageView& v, PeerCommand& p);
  std::string CheckCommitRequest(const wire::RdmapMessageView& v, PeerCommand& p);
  std::string CommitFieldsProblem(const wire::RdmapMessageView& v, const PeerCommand& p) const;
  std::string TakeQn1Request(const wire::DdpSegmentHeader& h, PeerCommand& p, const std::string& who);
  std::string HoldQn1Request(PeerCommand& p, const std::string& who, const char* held);
  std::string TakeQn0Message(const wire::DdpSegmentHeader& h, const std::string& who);
  wire::Bytes CommitResponseOctets(PeerCommand& p, proto::BrokenAnswer::Kind broken);
  wire::Bytes AtomicResponseOctets(PeerCommand& p, proto::BrokenAnswer::Kind broken);
  wire::Bytes ReadResponseOctets(PeerCommand& p, proto::BrokenAnswer::Kind broken);
  wire::Bytes FrameReadResponse(uint32_t stag, uint64_t to, wire::ByteSpan data, const std::string& what);
  wire::Bytes FrameAnswer(const wire::RdmapSegment& seg, const std::string& what);
  wire::Bytes AnswerOctets(PeerCommand& p, proto::BrokenAnswer::Kind broken);
  wire::Bytes OutOfOrderOctets(std::size_t at);
  void AnswerReads(const proto::CommandsExpectation& m, Clock::time_point deadline);
  std::string CheckCompletion(const ReceivedEvent& got);
  std::string TakePeerInput(MatchOutcome& o);
  Evaluation Commands(const proto::CommandsExpectation& m, const MatchContext& ctx, Clock::time_point deadline);
  Evaluation PreviousCommands(const proto::PreviousCommands& m, const MatchContext& ctx);

  // case_driver_atomic.cc (atomics of concurrent connections, convention §12)
  Evaluation Atomics(const proto::Expect& e, const MatchContext& ctx, Clock::time_point deadline, std::string& error);
  Evaluation AtomicResponses(const proto::AtomicResponses& m, const MatchContext& ctx, Clock::time_point deadline,
                             std::string& error);
  Evaluation SerialAtomics(const proto::SerialAtomics& m, const MatchContext& ctx, Clock::time_point deadline,
                           std::string& error);
  std::optional<uint64_t> ReadWord(const proto::RegionRef& at, const MatchContext& ctx, Clock::time_point deadline,
                                   Evaluation& ev, std::string& error);

  Clock::time_point Deadline(std::chrono::milliseconds timeout) const;
  proto::Level Level(proto::Level expect_severity) const;
  bool Connected() const { return conn_ != nullptr; }

  const LoadedCase& case_;
  targets::TargetConnector& connector_;
  CaseDriverOptions options_;
  CaseRun run_;
  Clock::time_point start_;
  Clock::time_point case_deadline_;
  Recorder recorder_;
  std::shared_ptr<ReactionClock> reactions_;  // options_.reactions, or the case's own

  uint32_t connections_ = 0;
  std::unique_ptr<Connection> conn_;
  std::optional<MpaRequest> request_;
  HandshakeOutcome handshake_;
  RequestOutcome listen_;       // the target's Request on a listen connection
  bool reply_pending_ = false;  // a listen step's Request is not answered yet
  bool have_advertisement_ = false;
  wire::Advertisement adv_;
  bool needs_checked_ = false;
  RegionMap regions_;
  SendState send_state_;
  bool send_rtr_used_ = false;
  std::map<std::string, SentMessage> labels_;
  std::map<std::string, ObservedAtomic> atomics_;  // atomic_responses recorded, by send label
  std::optional<SentMessage> last_send_;
  std::vector<ReadRecord> reads_;
  MemoryModel memory_;
  PeerState peer_;
  wire::Bytes held_;  // octets of `hold` sends waiting for the next send
  proto::TcpWrites held_tcp_;
  // Concurrent connections: slots_[active_] holds an empty placeholder, the
  // other slots the state of the inactive connections.
  std::vector<ConnectionSlot> slots_ = std::vector<ConnectionSlot>(kMaxConcurrentConnections);
  uint32_t active_ = 0;
  static constexpr uint32_t kMaxConcurrentConnections = 2;
};

}  // namespace rdmapct::conformance
