// Reproducers (fuzz/session_repro.h) are conformance scripts that the
// runner accepts and that reproduce: the fault-free reference target passes
// the reproducer of every seed session, and the reproducer of each fault
// the bounded search finds fails on the faulty reference and passes on the
// fault-free one, through the same runner `rdmapct conform --script` uses.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "conformance/case_loader.h"
#include "conformance/catalog.h"
#include "conformance/runner.h"
#include "fuzz/session_builder.h"
#include "fuzz/session_repro.h"
#include "fuzz/session_search.h"
#include "fuzz/session_seeds.h"
#include "targets/target_uri.h"
#include "tests/fuzz/fault_test_name.h"

namespace rdmapct::fuzz {
namespace {

struct ReproRun {
  conformance::Verdict verdict = conformance::Verdict::kError;
  std::string reason;
};

// Loads the reproducer from its text, validates it against the catalog and
// runs it against the in-process reference with the session's options.
std::string Slug(std::string s) {
  for (char& ch : s) ch = ch == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

ReproOptions Named(std::string id, std::vector<Finding> findings = {}) {
  ReproOptions o;
  o.id = std::move(id);
  o.findings = std::move(findings);
  return o;
}

ReproRun RunRepro(const proto::FuzzSession& s, const proto::Case& c, const model::FaultSet& faults) {
  ReproRun out;
  conformance::CaseLoad load = conformance::ParseCaseFile(CaseFileText(c), "repro.textproto", "fuzz", "session");
  if (!load.ok()) {
    out.reason = load.errors.front();
    return out;
  }
  auto catalog = conformance::Catalog::LoadDefault();
  if (!catalog.catalog) {
    out.reason = "no catalog";
    return out;
  }
  const auto bad = conformance::ValidateCases(load.cases, *catalog.catalog);
  if (!bad.empty()) {
    out.reason = bad.front();
    return out;
  }
  targets::ConnectorOptions co;
  co.reference = SessionTargetConfig(s, faults);
  std::string error;
  auto connector = targets::MakeConnector("reference", co, error);
  if (!connector) {
    out.reason = error;
    return out;
  }
  conformance::RunOptions ro;
  ro.profile = SessionProfile(s);
  ro.driver.expect_timeout = std::chrono::milliseconds(500);
  const conformance::RunResult r = conformance::RunCases({&load.cases.front()}, ro, *connector);
  if (r.cases.size() != 1) {
    out.reason = "ran " + std::to_string(r.cases.size()) + " cases";
    return out;
  }
  out.verdict = r.cases.front().verdict;
  out.reason = r.cases.front().reason;
  return out;
}

TEST(SessionRepro, FaultFreeReferencePassesTheReproducerOfEverySeed) {
  for (const NamedSession& n : SeedSessions()) {
    const proto::Case c = SessionToCase(n.session, Named("fuzz/session/" + Slug(n.name)));
    const ReproRun r = RunRepro(n.session, c, {});
    EXPECT_TRUE(r.verdict == conformance::Verdict::kPass || r.verdict == conformance::Verdict::kWarn)
        << n.name << ": " << conformance::VerdictName(r.verdict) << ": " << r.reason << "\n"
        << CaseFileText(c);
  }
}

TEST(SessionRepro, ScriptStatesTheReferenceReaction) {
  // A Write past the end of the RW region: the reference answers with the
  // DDP Tagged Base or Bounds Violation Terminate and closes.
  proto::FuzzSession s;
  proto::SessionMessage& m = *s.add_action()->mutable_message();
  m.set_type(proto::RDMA_WRITE);
  m.set_offset(1u << 30);
  m.set_payload_size(16);
  const proto::Case c = SessionToCase(s, Named("fuzz/session/write-out-of-bounds"));
  const std::string text = CaseFileText(c);
  EXPECT_NE(text.find("type: RDMA_WRITE"), std::string::npos) << text;
  EXPECT_NE(text.find("region: RW"), std::string::npos) << text;
  EXPECT_NE(text.find("layer: 1\n"), std::string::npos) << text;  // DDP
  EXPECT_NE(text.find("etype: 1\n"), std::string::npos) << text;  // Tagged Buffer
  EXPECT_NE(text.find("code: 1\n"), std::string::npos) << text;   // Base or Bounds Violation
  EXPECT_NE(text.find("closed"), std::string::npos) << text;
}

class ReproFault : public ::testing::TestWithParam<const char*> {};

TEST_P(ReproFault, ReproducerFailsTheFaultyTargetAndPassesTheReference) {
  const auto fault = model::FindFault(GetParam());
  ASSERT_TRUE(fault.has_value()) << GetParam();
  const model::FaultSet faults{*fault};
  SearchOptions search;
  search.seed = 1;
  search.budget = 3000;
  const SearchResult found =
      SearchSessions([&](const proto::FuzzSession& s) { return RunSessionOracles(s, faults); }, search);
  ASSERT_FALSE(found.findings.empty()) << GetParam();
  const proto::Case c = SessionToCase(found.session, Named("fuzz/session/repro", found.findings));
  const ReproRun bad = RunRepro(found.session, c, faults);
  EXPECT_EQ(bad.verdict, conformance::Verdict::kFail)
      << conformance::VerdictName(bad.verdict) << ": " << bad.reason << "\n"
      << CaseFileText(c);
  const ReproRun good = RunRepro(found.session, c, {});
  EXPECT_EQ(good.verdict, conformance::Verdict::kPass)
      << conformance::VerdictName(good.verdict) << ": " << good.reason << "\n"
      << CaseFileText(c);
}

// ignore-ird is absent: a conforming target may answer each Read at once,
// so no script can tell (tests/conformance/fault_detection_test.cc).
INSTANTIATE_TEST_SUITE_P(Faults, ReproFault,
                         ::testing::Values("skip-bounds-check", "wrong-terminate-code", "read-responses-out-of-order",
                                           "execute-misaligned-atomic"),
                         testing::FaultTestName);

}  // namespace
}  // namespace rdmapct::fuzz
