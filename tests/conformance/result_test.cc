#include "conformance/result.h"

#include <gtest/gtest.h>

namespace rdmapct::conformance {
namespace {

TEST(ResultTest, VerdictNamesRoundTrip) {
  for (Verdict v : {Verdict::kPass, Verdict::kWarn, Verdict::kFail, Verdict::kSkip, Verdict::kError}) {
    EXPECT_EQ(ParseVerdict(VerdictName(v)), v);
  }
  EXPECT_EQ(VerdictName(Verdict::kWarn), "warn");
  EXPECT_FALSE(ParseVerdict("PASS").has_value());
}

// decisions D-S3: MUST family fails, SHOULD family warns, MAY only informs.
TEST(ResultTest, SeverityMapping) {
  EXPECT_EQ(VerdictForMiss(proto::MUST), Verdict::kFail);
  EXPECT_EQ(VerdictForMiss(proto::MUST_NOT), Verdict::kFail);
  EXPECT_EQ(VerdictForMiss(proto::LEVEL_UNSPECIFIED), Verdict::kFail);
  EXPECT_EQ(VerdictForMiss(proto::SHOULD), Verdict::kWarn);
  EXPECT_EQ(VerdictForMiss(proto::SHOULD_NOT), Verdict::kWarn);
  EXPECT_EQ(VerdictForMiss(proto::MAY), Verdict::kPass);
}

TEST(ResultTest, WorseOrdersErrorFailWarnPassSkip) {
  EXPECT_EQ(Worse(Verdict::kPass, Verdict::kWarn), Verdict::kWarn);
  EXPECT_EQ(Worse(Verdict::kFail, Verdict::kWarn), Verdict::kFail);
  EXPECT_EQ(Worse(Verdict::kFail, Verdict::kError), Verdict::kError);
  EXPECT_EQ(Worse(Verdict::kSkip, Verdict::kPass), Verdict::kPass);
  EXPECT_EQ(Worse(Verdict::kSkip, Verdict::kSkip), Verdict::kSkip);
}

// An any_of's misses fold to the least severe; a skipped alternative is
// milder than a failed one but not than a warning (unlike Worse()).
TEST(ResultTest, MilderMissOrdersPassWarnSkipFailError) {
  EXPECT_EQ(MilderMiss(Verdict::kWarn, Verdict::kPass), Verdict::kPass);
  EXPECT_EQ(MilderMiss(Verdict::kSkip, Verdict::kWarn), Verdict::kWarn);
  EXPECT_EQ(MilderMiss(Verdict::kFail, Verdict::kSkip), Verdict::kSkip);
  EXPECT_EQ(MilderMiss(Verdict::kError, Verdict::kFail), Verdict::kFail);
  EXPECT_EQ(MilderMiss(Verdict::kWarn, Verdict::kError), Verdict::kWarn);
  EXPECT_EQ(MilderMiss(Verdict::kFail, Verdict::kFail), Verdict::kFail);
}

RunResult RunWith(std::initializer_list<Verdict> verdicts) {
  RunResult run;
  for (Verdict v : verdicts) {
    CaseResult c;
    c.verdict = v;
    run.cases.push_back(c);
  }
  return run;
}

TEST(ResultTest, ExitStatus) {
  EXPECT_EQ(ExitStatus(RunWith({})), kExitNothingTested);
  EXPECT_EQ(ExitStatus(RunWith({Verdict::kPass, Verdict::kWarn, Verdict::kSkip})), kExitPass);
  EXPECT_EQ(ExitStatus(RunWith({Verdict::kPass, Verdict::kFail, Verdict::kError})), kExitFail);
  EXPECT_EQ(ExitStatus(RunWith({Verdict::kPass, Verdict::kError})), kExitError);
  RunResult aborted = RunWith({Verdict::kPass});
  aborted.aborted = true;
  EXPECT_EQ(ExitStatus(aborted), kExitError);
}

// An empty run is not a pass (issue 15): every case skipped, or every
// MUST-level case skipped while SHOULD-level ones ran.
TEST(ResultTest, NothingTestedIsItsOwnExitStatus) {
  const RunResult all_skipped = RunWith({Verdict::kSkip, Verdict::kSkip});
  EXPECT_EQ(ExitStatus(all_skipped), kExitNothingTested);
  EXPECT_EQ(NothingTested(all_skipped).rfind("nothing was tested: every selected case was skipped", 0), 0u)
      << NothingTested(all_skipped);

  RunResult must_skipped = RunWith({Verdict::kSkip, Verdict::kPass});
  must_skipped.cases[0].level = proto::MUST;
  must_skipped.cases[1].level = proto::SHOULD;
  EXPECT_EQ(ExitStatus(must_skipped), kExitNothingTested);
  EXPECT_EQ(NothingTested(must_skipped).rfind("nothing was tested at MUST level", 0), 0u)
      << NothingTested(must_skipped);

  // A selection with no MUST-level case (--level SHOULD) that ran something.
  RunResult should_only = RunWith({Verdict::kPass});
  should_only.cases[0].level = proto::SHOULD;
  EXPECT_EQ(ExitStatus(should_only), kExitPass);
  EXPECT_EQ(NothingTested(should_only), "");

  // A failure or an error still wins.
  RunResult failed = RunWith({Verdict::kSkip, Verdict::kFail});
  failed.cases[1].level = proto::SHOULD;
  EXPECT_EQ(ExitStatus(failed), kExitFail);
  EXPECT_EQ(ExitStatus(RunWith({Verdict::kSkip, Verdict::kError})), kExitError);
}

TEST(ResultTest, Counts) {
  const Counts c = CountVerdicts(
      RunWith({Verdict::kPass, Verdict::kPass, Verdict::kWarn, Verdict::kFail, Verdict::kSkip, Verdict::kError}).cases);
  EXPECT_EQ(c.pass, 2u);
  EXPECT_EQ(c.warn, 1u);
  EXPECT_EQ(c.fail, 1u);
  EXPECT_EQ(c.skip, 1u);
  EXPECT_EQ(c.error, 1u);
  EXPECT_EQ(c.total(), 6u);
  EXPECT_EQ(LevelText(proto::MUST_NOT), "MUST NOT");
}

}  // namespace
}  // namespace rdmapct::conformance
