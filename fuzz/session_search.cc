#include "fuzz/session_search.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "fuzz/session_builder.h"
#include "fuzz/session_mutator.h"
#include "fuzz/session_seeds.h"

namespace rdmapct::fuzz {

namespace {

struct Pool {
  std::vector<proto::FuzzSession> sessions;
  std::size_t seeds = 0;
};

proto::FuzzSession Draw(SessionMutator& m, const Pool& pool, const SearchOptions& options) {
  const auto& p = pool.sessions;
  proto::FuzzSession s;
  if (m.Below(10) == 0) {
    m.CrossOver(p[m.Below(p.size())], p[m.Below(p.size())], s);
  } else {
    // Half the time a seed itself, else anything in the pool; half the
    // time one mutation (an error path needs one wrong field, the rest
    // valid), else two to four.
    s = p[m.Below(m.Below(2) == 0 ? pool.seeds : p.size())];
    for (uint64_t k = m.Below(2) == 0 ? 1 : 2 + m.Below(3); k > 0; --k) m.Mutate(s);
  }
  // The mutator may change the profile; a profile-bound search keeps it.
  if (options.only_profile) s.mutable_connection()->set_profile(p.front().connection().profile());
  return s;
}

// The seeds stay: an error path only a seed reaches (a Flush with its
// flags, an Atomic Write with its length) must not be evicted by the
// sessions grown from others.
void Keep(SessionMutator& m, Pool& pool, proto::FuzzSession s, std::size_t capacity) {
  if (pool.sessions.size() < pool.seeds + capacity)
    pool.sessions.push_back(std::move(s));
  else
    pool.sessions[pool.seeds + m.Below(capacity)] = std::move(s);
}

void RunBatch(const SessionRun& run, const std::vector<proto::FuzzSession>& batch, std::vector<OracleResult>& results,
              int jobs) {
  results.assign(batch.size(), {});
  if (jobs <= 1 || batch.size() <= 1) {
    for (std::size_t k = 0; k < batch.size(); ++k) results[k] = run(batch[k]);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs && static_cast<std::size_t>(j) < batch.size(); ++j) {
    threads.emplace_back([&] {
      for (std::size_t k = next++; k < batch.size(); k = next++) results[k] = run(batch[k]);
    });
  }
  for (std::thread& t : threads) t.join();
}

// The first finding of a batch (at `first`) and every later one in it.
void TakeFindings(std::vector<proto::FuzzSession>& batch, std::vector<OracleResult>& results, int batch_start,
                  std::size_t first, SearchResult& result) {
  result.findings = std::move(results[first].findings);
  result.session = std::move(batch[first]);
  for (std::size_t k = first + 1; k < batch.size(); ++k) {
    if (results[k].findings.empty()) continue;
    result.also.push_back({std::move(batch[k]), std::move(results[k].findings), batch_start + static_cast<int>(k) + 1});
  }
}

}  // namespace

SearchResult SearchSessions(const SessionRun& run, const SearchOptions& options) {
  // The short seeds (one message, and the two-step error paths): sessions
  // the mutator grows.
  Pool pool;
  for (const NamedSession& n : SeedSessions()) {
    if (n.session.action_size() > 2) continue;
    if (options.only_profile && SessionProfile(n.session) != *options.only_profile) continue;
    pool.sessions.push_back(n.session);
  }
  SearchResult result;
  if (pool.sessions.empty()) return result;
  pool.seeds = pool.sessions.size();
  SessionMutator m(options.seed, SeededByteMutator(options.seed));
  const int batch_size = std::max(1, options.batch);
  std::vector<proto::FuzzSession> batch;
  std::vector<OracleResult> results;
  for (int i = 0; i < options.budget; i += batch_size) {
    if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) break;
    if (options.stop && options.stop->load() > 0) break;
    batch.clear();
    for (int k = 0; k < batch_size && i + k < options.budget; ++k) batch.push_back(Draw(m, pool, options));
    RunBatch(run, batch, results, options.jobs);
    result.executed = i + static_cast<int>(batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k) {
      result.sessions = i + static_cast<int>(k) + 1;
      if (!results[k].findings.empty()) {
        TakeFindings(batch, results, i, k, result);
        return result;
      }
      Keep(m, pool, std::move(batch[k]), options.pool);
    }
  }
  return result;
}

}  // namespace rdmapct::fuzz
