// A mutation search over fuzz sessions without libFuzzer: the session
// mutator applied to a pool that starts from the seed sessions
// (fuzz/session_seeds.h), every session run through a caller's oracle run
// (the in-process reference with faults, or a live target over TCP). No
// coverage feedback; deterministic for a seed. Used by tests/fuzz (a fixed
// budget must find each fault) and by `rdmapct fuzz --target`.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "fuzz/session_oracle.h"
#include "proto/session.pb.h"

namespace rdmapct::fuzz {

struct SearchOptions {
  uint64_t seed = 1;
  int budget = 3000;  // sessions at most
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::size_t pool = 512;                     // mutants kept
  std::optional<wire::Profile> only_profile;  // seeds of one profile only
  // Sessions per batch. A batch is drawn from the pool as it stood before
  // the batch, run, and its results applied in order, so the session
  // stream and the findings depend on `batch` only, never on `jobs`.
  // 1: every session sees the pool its predecessor left (the default; the
  // fixed-budget tests count on its stream).
  int batch = 1;
  // Threads that run a batch's sessions; `run` must then be safe to call
  // from several threads at once (RunSessionOracles and RunSessionRemote
  // with a TcpConnector are).
  int jobs = 1;
  const std::atomic<int>* stop = nullptr;  // set (SIGINT): no further session
};

using SessionRun = std::function<OracleResult(const proto::FuzzSession&)>;

struct SearchResult {
  int sessions = 0;               // sessions up to and including the first with findings
  std::vector<Finding> findings;  // of the first session with any
  proto::FuzzSession session;     // that session
  // With batches, the whole batch of the first finding has run: `executed`
  // counts it all, and `also` holds its later sessions with findings, in
  // order, so a caller neither undercounts nor loses them.
  int executed = 0;
  struct Found {
    proto::FuzzSession session;
    std::vector<Finding> findings;
    int number = 0;  // its place in the search's session stream, 1-based
  };
  std::vector<Found> also;
};

// Stops at the first batch with findings, at the budget, the deadline or `stop`.
SearchResult SearchSessions(const SessionRun& run, const SearchOptions& options);

}  // namespace rdmapct::fuzz
