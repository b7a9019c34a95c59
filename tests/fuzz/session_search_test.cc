// A bounded random search (fuzz/session_search.h) with the session mutator
// and oracles, the way fuzz_session runs under libFuzzer but without
// coverage feedback: fixed seed, at most kBudget mutated sessions.
// Each selected fault of the reference target must be found; the
// fault-free target must yield no finding over the same budget.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fuzz/session_oracle.h"
#include "fuzz/session_search.h"
#include "tests/fuzz/fault_test_name.h"

namespace rdmapct::fuzz {
namespace {

constexpr int kBudget = 3000;

SearchResult Search(const model::FaultSet& faults, uint64_t seed) {
  SearchOptions options;
  options.seed = seed;
  options.budget = kBudget;
  return SearchSessions([&](const proto::FuzzSession& s) { return RunSessionOracles(s, faults); }, options);
}

class FaultSearch : public ::testing::TestWithParam<const char*> {};

TEST_P(FaultSearch, FindsTheFault) {
  const auto fault = model::FindFault(GetParam());
  ASSERT_TRUE(fault.has_value()) << GetParam();
  const SearchResult r = Search({*fault}, 1);
  ASSERT_FALSE(r.findings.empty()) << GetParam() << " not found in " << kBudget << " sessions";
  std::printf("%s found after %d sessions: %s\n", GetParam(), r.sessions, FormatFinding(r.findings[0]).c_str());
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultSearch,
                         ::testing::Values("skip-bounds-check", "wrong-terminate-code", "read-responses-out-of-order",
                                           "ignore-ird", "execute-misaligned-atomic"),
                         testing::FaultTestName);

// Every fault switch, not only the five above: the search (which is what
// `rdmapct fuzz --target reference` runs) finds each within a fixed budget.
// tools/fault_time_to_find.sh measures how long each takes.
TEST(FaultSearch, EveryFaultSwitchIsFound) {
  int total = 0;
  int searched = 0;
  for (const model::FaultInfo& info : model::AllFaults()) {
    // A fuzz session drives the target as MPA Responder on one connection
    // without Command Records (issue 13 and 20: sessions with commands and
    // spanning two connections are still to come); the faults that need
    // more are proved caught by the conformance fault matrix.
    if (model::NeedsOf(info.fault) != model::FaultNeeds::kNothing) continue;
    ++searched;
    SearchOptions options;
    options.seed = 1;
    options.budget = 30000;
    const model::FaultSet faults{info.fault};
    const SearchResult r =
        SearchSessions([&](const proto::FuzzSession& s) { return RunSessionOracles(s, faults); }, options);
    EXPECT_FALSE(r.findings.empty()) << info.name << " not found in " << options.budget << " sessions";
    total += r.sessions;
  }
  std::printf("%d faults searched for in %d sessions in all\n", searched, total);
}

// Batches make the stream independent of the number of jobs: the same
// sessions, the same first finding, whether one thread runs them or three.
TEST(FaultSearch, BatchedSearchFindsTheSameWithAnyNumberOfJobs) {
  const model::FaultSet faults{model::Fault::kSkipToWrapCheck};  // found after ~2000 sessions
  const SessionRun run = [&](const proto::FuzzSession& s) { return RunSessionOracles(s, faults); };
  SearchOptions options;
  options.budget = 30000;
  options.batch = 8;
  const SearchResult one = SearchSessions(run, options);
  options.jobs = 3;
  const SearchResult three = SearchSessions(run, options);
  ASSERT_FALSE(one.findings.empty());
  EXPECT_EQ(one.sessions, three.sessions);
  EXPECT_EQ(one.session.SerializeAsString(), three.session.SerializeAsString());
  ASSERT_EQ(one.findings.size(), three.findings.size());
  EXPECT_EQ(FormatFinding(one.findings[0]), FormatFinding(three.findings[0]));
}

// A live run executes a whole batch before it looks at the results: the
// sessions after the first finding ran too, so they count, and their
// findings are handed back instead of being dropped.
TEST(FaultSearch, TheRestOfAFindingsBatchCountsAndKeepsItsFindings) {
  int calls = 0;
  const SessionRun run = [&](const proto::FuzzSession&) {
    OracleResult r;
    if (++calls >= 11 && calls % 2 == 1)
      r.findings.push_back(Finding{"differential", 0, "call " + std::to_string(calls)});
    return r;
  };
  SearchOptions options;
  options.budget = 100;
  options.batch = 8;
  const SearchResult r = SearchSessions(run, options);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].description, "call 11");  // in the second batch (sessions 9-16)
  EXPECT_EQ(r.sessions, 11);
  EXPECT_EQ(r.executed, 16);
  ASSERT_EQ(r.also.size(), 2u);  // calls 13 and 15
  EXPECT_EQ(r.also[0].findings[0].description, "call 13");
  EXPECT_EQ(r.also[1].findings[0].description, "call 15");
  // Each is placed where it ran in the stream, not at the batch's end.
  EXPECT_EQ(r.also[0].number, 13);
  EXPECT_EQ(r.also[1].number, 15);
}

TEST(FaultSearch, FaultFreeReferenceHasNoFinding) {
  const SearchResult r = Search({}, 1);
  EXPECT_EQ(r.sessions, kBudget);
  for (const Finding& f : r.findings) ADD_FAILURE() << FormatFinding(f) << "\n" << r.session.DebugString();
}

}  // namespace
}  // namespace rdmapct::fuzz
