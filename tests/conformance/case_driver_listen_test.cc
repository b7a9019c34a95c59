// The listen and reply steps (conformance/case_driver_listen.cc): the target as
// MPA Initiator. A target that cannot connect, one that cannot ask for an
// option, a silent one and a faulty one each end in a bounded, explained
// verdict; the suite's default Reply grants what the Request asks.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "conformance/case_driver.h"
#include "conformance/case_loader.h"
#include "conformance/matchers.h"
#include "reference/wire/mpa.h"
#include "targets/in_process.h"
#include "targets/reference_target.h"

namespace rdmapct::conformance {
namespace {

using std::chrono::milliseconds;

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

LoadedCase Case(const std::string& body) {
  CaseLoad load = ParseCaseFile(
      "case { id: \"rfc6581/9.2/t\" title: \"t\" requirement: \"R6581-9.2-02\" level: MUST " + body + " }",
      "t.textproto", "rfc6581", "9.2");
  EXPECT_TRUE(load.ok()) << (load.errors.empty() ? "" : load.errors.front());
  return std::move(load.cases.at(0));
}

CaseDriverOptions FastOptions() {
  CaseDriverOptions o;
  o.reply_timeout = milliseconds(200);
  o.expect_timeout = milliseconds(200);
  o.connect_timeout = milliseconds(200);
  o.close_timeout = milliseconds(50);
  return o;
}

CaseRun RunAgainst(const targets::ReferenceTargetConfig& config, const std::string& body) {
  targets::InProcessConnector connector(std::make_shared<targets::ReferenceTarget>(config));
  return RunCase(Case(body), connector, FastOptions());
}

// Connects as usual, never connects back.
class ResponderOnly : public targets::TargetConnector {
 public:
  std::unique_ptr<targets::Transport> Connect(milliseconds, std::string& error) override {
    error = "unused";
    return nullptr;
  }
  std::string Describe() const override { return "responder only"; }
};

TEST(SessionListen, TargetThatNeverConnectsIsSkipped) {
  ResponderOnly connector;
  const CaseRun run = RunCase(Case("step { listen {} }"), connector, FastOptions());
  EXPECT_EQ(run.result.verdict, Verdict::kSkip);
  EXPECT_TRUE(Contains(run.result.reason, "--listen")) << run.result.reason;
}

// A target that cannot ask for what the case needs, or asks wrongly: one
// verdict each, with the reason naming why.
struct GradedListen {
  const char* name;
  std::optional<model::Fault> fault;  // switched on in the reference target
  bool rfc6581;                       // the target offers RFC 6581
  const char* body;
  Verdict verdict;
  const char* reason;  // part of the case's reason
};

const GradedListen kGradedListens[] = {
    // An option the target cannot ask for is a skip.
    {"OptionTheTargetCannotAskForIsASkip", std::nullopt, false,
     "step { listen { ask { rfc6581 { peer_to_peer: true } } } }", Verdict::kSkip, "does not ask for RFC 6581"},
    // An enhanced Request nobody asked for is graded, not skipped.
    {"UnaskedEnhancedRequestIsGradedNotSkipped", model::Fault::kEnhancedRequestAlways, true,
     "step { listen { ask {} defer_reply: true } } step { expect { mpa_request { enhanced: false } } }", Verdict::kFail,
     "R6581-10-04"},
    {"WrongFirstFpduAfterPeerToPeerReplyFails", model::Fault::kWrongRtrType, true,
     "step { listen { ask { rfc6581 { peer_to_peer: true } } reply { rtr: RTR_WRITE } } }", Verdict::kFail,
     "not a negotiated RTR"},
};

class SessionListenGraded : public ::testing::TestWithParam<GradedListen> {};

TEST_P(SessionListenGraded, EndsInItsVerdictWithItsReason) {
  const GradedListen& g = GetParam();
  targets::ReferenceTargetConfig c;
  c.mpa.rfc6581 = g.rfc6581;
  if (g.fault) c.faults.Add(*g.fault);
  const CaseRun run = RunAgainst(c, g.body);
  EXPECT_EQ(run.result.verdict, g.verdict);
  EXPECT_TRUE(Contains(run.result.reason, g.reason)) << run.result.reason;
}

INSTANTIATE_TEST_SUITE_P(SessionListen, SessionListenGraded, ::testing::ValuesIn(kGradedListens),
                         [](const ::testing::TestParamInfo<GradedListen>& i) { return std::string(i.param.name); });

TEST(SessionListen, InitiatorThatNeverSendsItsFirstFpduIsBounded) {
  targets::ReferenceTargetConfig c;
  c.faults.Add(model::Fault::kSkipRtr);
  const auto began = std::chrono::steady_clock::now();
  const CaseRun run = RunAgainst(c, "step { listen { ask { rfc6581 { peer_to_peer: true } } } }");
  EXPECT_EQ(run.result.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(run.result.reason, "expected an RTR")) << run.result.reason;
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5));
}

// In-process the Initiator's Reply timer runs on the suite's waits, so a
// silent suite costs no wall time and a shorter hold-back never fires it.
TEST(SessionListen, InProcessReplyTimerRunsOnTheSuitesWaits) {
  const auto began = std::chrono::steady_clock::now();
  const CaseRun silent =
      RunAgainst({}, "step { listen { reply { silent: true } } } step { expect { timeout_ms: 10000 closed {} } }");
  EXPECT_EQ(silent.result.verdict, Verdict::kPass) << silent.result.reason;
  const CaseRun held = RunAgainst({},
                                  "step { listen { defer_reply: true } } step { expect { timeout_ms: 200 nothing { "
                                  "stay_open: true } } } step { reply {} }");
  EXPECT_EQ(held.result.verdict, Verdict::kPass) << held.result.reason;
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(900));
}

TEST(SessionListen, DefaultReplyGrantsWhatTheRequestAsks) {
  wire::MpaStartupFrame req;
  req.revision = 2;
  req.crc_required = false;
  req.enhanced = true;
  req.enhanced_data =
      wire::EnhancedIrdOrd{.peer_to_peer = true, .send_rtr = true, .ird = 16, .read_rtr = true, .ord = 4};
  std::string error;
  const std::optional<wire::Bytes> octets = BuildMpaReply(proto::Reply{}, req, error);
  ASSERT_TRUE(octets);
  auto reply = wire::DecodeMpaStartupFrame(*octets, {.expect = wire::MpaFrameKind::kReply});
  ASSERT_TRUE(reply.ok());
  EXPECT_FALSE(reply->crc_required);
  ASSERT_TRUE(reply->enhanced_data);
  EXPECT_EQ(reply->enhanced_data->ird, 4);  // responder IRD >= initiator ORD
  EXPECT_EQ(reply->enhanced_data->ord, 8);  // responder ORD <= initiator IRD, at most 8
  EXPECT_TRUE(reply->enhanced_data->peer_to_peer);
  EXPECT_TRUE(reply->enhanced_data->send_rtr);  // Send preferred over Read when Write is not offered
  EXPECT_FALSE(reply->enhanced_data->read_rtr);

  proto::Reply request_key;
  request_key.set_key(proto::Reply::REQUEST_KEY);
  const std::optional<wire::Bytes> bad = BuildMpaReply(request_key, req, error);
  ASSERT_TRUE(bad);
  EXPECT_TRUE(wire::DecodeMpaStartupFrame(*bad, {.expect = wire::MpaFrameKind::kRequest}).ok());
}

TEST(MpaRequestMatcher, FlagsAndResAreRules) {
  MatchContext ctx;
  ctx.severity = proto::MUST;
  RequestOutcome h;
  wire::MpaStartupFrame r;
  r.revision = 2;
  r.enhanced = true;
  r.enhanced_data = wire::EnhancedIrdOrd{.peer_to_peer = true, .ird = 8, .ord = 8};
  h.request = r;
  proto::MpaRequestMatcher m;
  m.set_rtr_flags_consistent(true);
  EXPECT_EQ(MatchMpaRequest(m, h, ctx).verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(MatchMpaRequest(m, h, ctx).reason, "R6581-9.2-03"));
  h.request->enhanced_data->write_rtr = true;
  EXPECT_EQ(MatchMpaRequest(m, h, ctx).verdict, Verdict::kPass);
  m.set_valid(true);
  h.request->res = 0x08;
  EXPECT_TRUE(Contains(MatchMpaRequest(m, h, ctx).reason, "Res is 8"));
  RequestOutcome none;
  none.timed_out = true;
  EXPECT_EQ(MatchMpaRequest(m, none, ctx).verdict, Verdict::kFail);
}

}  // namespace
}  // namespace rdmapct::conformance
