#include "fuzz/session_search.h"

#include "fuzz/session_builder.h"
#include "fuzz/session_mutator.h"
#include "fuzz/session_seeds.h"

namespace rdmapct::fuzz {

SearchResult SearchSessions(const SessionRun& run, const SearchOptions& options) {
  // The short seeds (one message, and the two-step error paths): sessions
  // the mutator grows.
  std::vector<proto::FuzzSession> pool;
  for (const NamedSession& n : SeedSessions()) {
    if (n.session.action_size() > 2) continue;
    if (options.only_profile && SessionProfile(n.session) != *options.only_profile) continue;
    pool.push_back(n.session);
  }
  SearchResult result;
  if (pool.empty()) return result;
  const std::size_t seeds = pool.size();
  SessionMutator m(options.seed, SeededByteMutator(options.seed));
  for (int i = 0; i < options.budget; ++i) {
    if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) break;
    if (options.stop && options.stop->load() > 0) break;
    proto::FuzzSession s;
    if (m.Below(10) == 0) {
      m.CrossOver(pool[m.Below(pool.size())], pool[m.Below(pool.size())], s);
    } else {
      // Half the time a seed itself, else anything in the pool; half the
      // time one mutation (an error path needs one wrong field, the rest
      // valid), else two to four.
      s = pool[m.Below(m.Below(2) == 0 ? seeds : pool.size())];
      for (uint64_t k = m.Below(2) == 0 ? 1 : 2 + m.Below(3); k > 0; --k) m.Mutate(s);
    }
    // The mutator may change the profile; a profile-bound search keeps it.
    if (options.only_profile) s.mutable_connection()->set_profile(pool.front().connection().profile());
    result.sessions = i + 1;
    OracleResult r = run(s);
    if (!r.findings.empty()) {
      result.findings = std::move(r.findings);
      result.session = std::move(s);
      return result;
    }
    // The seeds stay: an error path only a seed reaches (a Flush with its
    // flags, an Atomic Write with its length) must not be evicted by the
    // sessions grown from others.
    if (pool.size() < seeds + options.pool) pool.push_back(std::move(s));
    else pool[seeds + m.Below(options.pool)] = std::move(s);
  }
  return result;
}

}  // namespace rdmapct::fuzz
