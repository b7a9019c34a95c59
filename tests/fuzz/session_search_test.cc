// A bounded random search with the session mutator and oracles, the way
// fuzz_session runs under libFuzzer but without coverage feedback: fixed
// seed, at most kBudget mutated sessions, starting from the single-message
// seed sessions (fuzz/session_seeds.h) and keeping every mutant in a pool
// (a third of the picks go back to a seed).
// Each selected fault of the reference target must be found; the
// fault-free target must yield no finding over the same budget.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fuzz/session_mutator.h"
#include "fuzz/session_oracle.h"
#include "fuzz/session_seeds.h"

namespace rdmapct::fuzz {
namespace {

constexpr int kBudget = 3000;
constexpr std::size_t kPool = 512;

struct SearchResult {
  int sessions = 0;  // sessions run
  std::vector<Finding> findings;
  proto::FuzzSession session;  // the one with findings
};

SearchResult Search(const model::FaultSet& faults, uint64_t seed) {
  std::vector<proto::FuzzSession> pool;
  for (const NamedSession& n : SeedSessions()) {
    if (n.session.action_size() == 1) pool.push_back(n.session);
  }
  const std::size_t seeds = pool.size();
  SessionMutator m(seed, SeededByteMutator(seed));
  SearchResult result;
  for (int i = 0; i < kBudget; ++i) {
    proto::FuzzSession s;
    if (m.Below(10) == 0) {
      m.CrossOver(pool[m.Below(pool.size())], pool[m.Below(pool.size())], s);
    } else {
      // A third of the time a seed itself, else anything in the pool.
      s = pool[m.Below(m.Below(3) == 0 ? seeds : pool.size())];
      for (uint64_t k = 1 + m.Below(4); k > 0; --k) m.Mutate(s);
    }
    result.sessions = i + 1;
    OracleResult r = RunSessionOracles(s, faults);
    if (!r.findings.empty()) {
      result.findings = std::move(r.findings);
      result.session = std::move(s);
      return result;
    }
    if (pool.size() < kPool) pool.push_back(std::move(s));
    else pool[m.Below(kPool)] = std::move(s);
  }
  return result;
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
                         ::testing::Values("skip-bounds-check", "wrong-terminate-code",
                                           "read-responses-out-of-order", "ignore-ird",
                                           "execute-misaligned-atomic"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) c = c == '-' ? '_' : c;
                           return s;
                         });

TEST(FaultSearch, FaultFreeReferenceHasNoFinding) {
  const SearchResult r = Search({}, 1);
  EXPECT_EQ(r.sessions, kBudget);
  for (const Finding& f : r.findings) ADD_FAILURE() << FormatFinding(f) << "\n" << r.session.DebugString();
}

}  // namespace
}  // namespace rdmapct::fuzz
