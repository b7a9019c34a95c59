// The Terminate expectation when no Terminate arrives (terminate_matcher.cc
// MissingTerminate): the verdict, the one-line reason and the exact `actual`
// text a report shows for each way the wait can end. `actual` says what the
// target did; it used to be cut out of the reason and lost letters
// ("erminate within 2000 ms").
#include <gtest/gtest.h>

#include <google/protobuf/text_format.h>

#include <string>
#include <vector>

#include "conformance/matchers.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::conformance {
namespace {

proto::TerminateMatcher Matcher(const std::string& text) {
  proto::TerminateMatcher m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

// Invalid STag (RDMAP 0/1/0x00), offending headers echoed.
const char kInvalidStag[] = R"pb(accept { layer: 0 etype: 1 code: 0 preferred: true })pb";

class MissingTerminateTest : public ::testing::Test {
 protected:
  Evaluation Evaluate(const Observation& obs, const char* matcher = kInvalidStag) {
    return EvaluateTerminate(Matcher(matcher), obs, ctx_);
  }
  MatchContext ctx_;
};

TEST_F(MissingTerminateTest, NothingBeforeTheDeadlineIsUndecided) {
  Observation obs;
  const Evaluation e = Evaluate(obs);
  EXPECT_FALSE(e.decided);
  EXPECT_EQ(e.outcome.actual, "");
}

TEST_F(MissingTerminateTest, DeadlinePassedSaysNoTerminateWithinTheTimeout) {
  Observation obs;
  obs.deadline_passed = true;
  const Evaluation e = Evaluate(obs);
  ASSERT_TRUE(e.decided);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_EQ(e.outcome.reason, "no Terminate within 2000 ms");
  EXPECT_EQ(e.outcome.expected, "a Terminate");
  EXPECT_EQ(e.outcome.actual, "no Terminate within 2000 ms");
  EXPECT_EQ(e.frames_used, 0u);
}

TEST_F(MissingTerminateTest, ActualNamesTheCaseTimeoutNotAFixedOne) {
  ctx_.timeout = std::chrono::milliseconds(150);
  Observation obs;
  obs.deadline_passed = true;
  EXPECT_EQ(Evaluate(obs).outcome.actual, "no Terminate within 150 ms");
}

TEST_F(MissingTerminateTest, ClosedConnectionSaysHowItEnded) {
  Observation obs;
  obs.link = LinkState::kFin;
  Evaluation e = Evaluate(obs);
  ASSERT_TRUE(e.decided);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_EQ(e.outcome.reason, "no Terminate: the connection ended (FIN) without one");
  EXPECT_EQ(e.outcome.actual, "the connection ended (FIN) without a Terminate");
  obs.link = LinkState::kReset;
  EXPECT_EQ(Evaluate(obs).outcome.actual, "the connection ended (RST) without a Terminate");
}

TEST_F(MissingTerminateTest, BrokenStreamShowsTheProblemWhole) {
  Observation obs;
  obs.problem = StreamProblem{Verdict::kFail, "octets at stream offset 34 are no FPDU", std::nullopt};
  Evaluation e = Evaluate(obs);
  ASSERT_TRUE(e.decided);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_EQ(e.outcome.reason, "no Terminate: octets at stream offset 34 are no FPDU");
  EXPECT_EQ(e.outcome.actual, "octets at stream offset 34 are no FPDU");
  // A flood is the suite giving up, not a conformance statement.
  obs.problem = StreamProblem{Verdict::kError, "target flood: too much", std::nullopt};
  e = Evaluate(obs);
  EXPECT_EQ(e.outcome.verdict, Verdict::kError);
  EXPECT_EQ(e.outcome.actual, "target flood: too much");
}

TEST_F(MissingTerminateTest, SeverityGradesTheMissButNotTheText) {
  ctx_.severity = proto::SHOULD;
  Observation obs;
  obs.deadline_passed = true;
  const Evaluation e = Evaluate(obs);
  EXPECT_EQ(e.outcome.verdict, Verdict::kWarn);
  EXPECT_EQ(e.outcome.actual, "no Terminate within 2000 ms");
}

// An UPDATED echo lets Read Responses precede the Terminate; when none
// follows them, `actual` lists them before what ended the wait.
TEST_F(MissingTerminateTest, ReadResponsesThatPrecededAreListed) {
  const wire::ReadRequestHeader read{0x5157e000, 0x510000000000, 64, 0x3108, 0x7f3a12345800};
  SentMessage offending;
  offending.opcode = wire::Opcode::kRdmaReadRequest;
  offending.read_request = read;
  ctx_.offending = &offending;
  const wire::Bytes data(16, 0xAB);
  const std::vector<ReceivedFrame> frames = {
      ReceivedFrame{3, wire::EncodeSegment(wire::MakeReadResponse(read.sink_stag, read.sink_tagged_offset, data))}};
  Observation obs;
  obs.frames = frames;
  obs.deadline_passed = true;
  const Evaluation e = Evaluate(obs, R"pb(accept { layer: 0 etype: 1 code: 1 } rdma_header { kind: UPDATED })pb");
  ASSERT_TRUE(e.decided);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_EQ(e.outcome.reason, "no Terminate within 2000 ms");
  EXPECT_EQ(e.outcome.actual,
            "RDMA Read Response STag 0x5157e000 TO 0x0000510000000000 L=1 payload 16\n"
            "no Terminate within 2000 ms");
  EXPECT_EQ(e.frames_used, 0u);  // the Read Responses stay for a later expectation
}

}  // namespace
}  // namespace rdmapct::conformance
