// Internals of the session driver (session.h), shared by session.cc (the
// connect and send steps) and session_expect.cc (the expectations). Not a
// public interface.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conformance/connection.h"
#include "conformance/matchers.h"
#include "conformance/message_builder.h"
#include "conformance/session.h"
#include "reference/wire/test_ulp_directive.h"

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

// A Read Request a case sent, with where its data comes from.
struct ReadRecord {
  ReadRequestSent request;
  std::optional<wire::AdvertisedRegion> source;
  uint64_t source_tagged_offset = 0;
};

class CaseSession {
 public:
  CaseSession(const LoadedCase& c, targets::TargetConnector& connector, const SessionOptions& options);
  CaseRun Run();

 private:
  // session.cc
  StepResult Execute(const proto::Step& step, int index);
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

  // session_listen.cc (the target as MPA Initiator)
  StepResult DoListen(const proto::Listen& l, int index);
  StepResult DoReply(const proto::Reply& r, int index);
  bool AcceptTarget(std::chrono::milliseconds timeout, bool keep_memory, StepResult& sr);
  void SendDirective(const wire::ConnectDirective& d, StepResult& sr);
  void SendReply(const proto::Reply& r, StepResult& sr);
  void AwaitFirstFpdu(const wire::MpaStartupFrame& reply, StepResult& sr);

  // session_expect.cc
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

  Clock::time_point Deadline(std::chrono::milliseconds timeout) const;
  proto::Level Level(proto::Level expect_severity) const;
  bool Connected() const { return conn_ != nullptr; }

  const LoadedCase& case_;
  targets::TargetConnector& connector_;
  SessionOptions options_;
  CaseRun run_;
  Clock::time_point start_;
  Clock::time_point case_deadline_;
  Recorder recorder_;

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
  std::optional<SentMessage> last_send_;
  std::vector<ReadRecord> reads_;
  MemoryModel memory_;
  wire::Bytes held_;  // octets of `hold` sends waiting for the next send
  proto::TcpWrites held_tcp_;
};

}  // namespace rdmapct::conformance
