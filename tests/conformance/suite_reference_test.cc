// The whole conformance suite against the in-process reference target: one
// GoogleTest test per (case, profile). The reference model is just one
// target here: its answers are graded by the case files like any other
// target's, and it must pass (a SHOULD-level warning is allowed).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "conformance/case_driver.h"
#include "conformance/case_loader.h"
#include "conformance/runner.h"
#include "targets/in_process.h"
#include "targets/reference_target.h"

namespace rdmapct::conformance {
namespace {

const std::vector<LoadedCase>& AllCases() {
  static const CaseLoad load = LoadCases();
  return load.cases;
}

struct SuiteParam {
  const LoadedCase* c;
  wire::Profile profile;
};

std::vector<SuiteParam> Params() {
  std::vector<SuiteParam> out;
  for (const LoadedCase& c : AllCases()) {
    for (wire::Profile p : {wire::Profile::kRfc5040, wire::Profile::kRfc7306, wire::Profile::kCommit}) {
      if (c.AppliesTo(p)) out.push_back({&c, p});
    }
  }
  return out;
}

std::string ParamName(const ::testing::TestParamInfo<SuiteParam>& info) {
  std::string name = info.param.c->id() + "_" + std::string(wire::ProfileName(info.param.profile));
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

// Everything a failing case report needs, for the test log.
std::string Explain(const CaseResult& r) {
  std::string s = r.id + ": " + std::string(VerdictName(r.verdict)) + " - " + r.reason + "\n";
  for (const StepResult& st : r.steps) {
    s += "  step " + std::to_string(st.index) + " " + st.action + ": " + std::string(VerdictName(st.verdict)) +
         (st.reason.empty() ? "" : " - " + st.reason) + "\n";
    if (st.verdict != Verdict::kPass) s += "    expected: " + st.expected + "\n    actual: " + st.actual + "\n";
    for (const std::string& n : st.notes) s += "    note: " + n + "\n";
  }
  for (const FrameRecord& f : r.frames) {
    s += "  [" + std::to_string(f.connection) + "] " + std::string(DirectionName(f.direction)) + " " + f.summary + "\n";
  }
  return s;
}

class SuiteReferenceTest : public ::testing::TestWithParam<SuiteParam> {};

TEST_P(SuiteReferenceTest, ReferenceTargetPasses) {
  const SuiteParam& p = GetParam();
  targets::ReferenceTargetConfig config;
  config.profile = p.profile;
  auto target = std::make_shared<targets::ReferenceTarget>(config);
  ASSERT_EQ(target->config_error(), "");
  targets::InProcessConnector connector(target);
  CaseDriverOptions options;
  options.profile = p.profile;
  CaseRun run = RunCase(*p.c, connector, options);
  // A case for a configuration other than the default (C=0 answered with
  // C=0: an administrator's preference not to use CRCs, RFC 5044 §4.4) is
  // skipped by the default reference; it must pass against the reference
  // configured that way.
  if (run.result.verdict == Verdict::kSkip && run.result.reason.find("insists on CRCs") != std::string::npos) {
    config.mpa.crc = false;
    targets::InProcessConnector crc_off(std::make_shared<targets::ReferenceTarget>(config));
    run = RunCase(*p.c, crc_off, options);
  }
  EXPECT_FALSE(run.abort_run) << run.abort_reason;
  EXPECT_TRUE(run.result.verdict == Verdict::kPass || run.result.verdict == Verdict::kWarn) << Explain(run.result);
  EXPECT_FALSE(run.result.frames.empty());
  // RDMAPCT_EXPLAIN=1 shows what every case did, passing or not.
  if (std::getenv("RDMAPCT_EXPLAIN")) std::printf("%s", Explain(run.result).c_str());
}

INSTANTIATE_TEST_SUITE_P(AllCases, SuiteReferenceTest, ::testing::ValuesIn(Params()), ParamName);

// The runner over the same target: deterministic order with several jobs,
// counts, exit status 0 and the target's self-description.
TEST(SuiteReferenceRunTest, WholeSuiteWithJobs) {
  auto target = std::make_shared<targets::ReferenceTarget>();
  targets::InProcessConnector connector(target);
  RunOptions options;
  options.jobs = 3;
  std::vector<std::string> delivered;
  const RunResult run = RunSuite(options, connector, [&](const CaseResult& r, std::size_t index, std::size_t total) {
    EXPECT_EQ(index, delivered.size());
    delivered.push_back(r.id);
  });
  ASSERT_FALSE(run.aborted) << run.abort_reason;
  std::vector<std::string> expected;
  for (const LoadedCase* c : SelectCases(AllCases(), {})) expected.push_back(c->id());
  std::vector<std::string> got;
  for (const CaseResult& r : run.cases) got.push_back(r.id);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(delivered, expected);
  EXPECT_EQ(run.counts.total(), expected.size());
  EXPECT_EQ(run.counts.fail + run.counts.error, 0u);
  EXPECT_EQ(ExitStatus(run), kExitPass);
  EXPECT_EQ(run.profile, "rfc5040");
  EXPECT_FALSE(run.target_info.empty());
  EXPECT_EQ(run.target, connector.Describe());
}

}  // namespace
}  // namespace rdmapct::conformance
