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

// NOTES.md §5.3: MUST family fails, SHOULD family warns, MAY only informs.
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
  EXPECT_EQ(ExitStatus(RunWith({})), kExitPass);
  EXPECT_EQ(ExitStatus(RunWith({Verdict::kPass, Verdict::kWarn, Verdict::kSkip})), kExitPass);
  EXPECT_EQ(ExitStatus(RunWith({Verdict::kPass, Verdict::kFail, Verdict::kError})), kExitFail);
  EXPECT_EQ(ExitStatus(RunWith({Verdict::kPass, Verdict::kError})), kExitError);
  RunResult aborted = RunWith({Verdict::kPass});
  aborted.aborted = true;
  EXPECT_EQ(ExitStatus(aborted), kExitError);
}

TEST(ResultTest, Counts) {
  const Counts c = CountVerdicts(RunWith({Verdict::kPass, Verdict::kPass, Verdict::kWarn,
                                          Verdict::kFail, Verdict::kSkip, Verdict::kError}).cases);
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
