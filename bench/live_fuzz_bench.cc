// `rdmapct fuzz --target tcp://` against `rdmapct serve`, in-process: the
// reference target served on loopback TCP on a thread of its own
// (targets/serve_thread.h) and the remote session fuzzer
// (fuzz/session_remote.h) driving the mutation search against it, the
// commit profile, fault-free (a finding is an error).
//
//  * BM_LiveFuzz/fence/jobs:N: each write's answer ended by the protocol
//    fence (the default); one search (seed 1) in batches of 32 sessions,
//    run on N threads, each session its own connection, one server.
//  * BM_LiveFuzz/settle30/jobs:1: the fence off, every write waiting for
//    30 ms of quiet (the old default, --settle 30), for comparison.
//
// items_per_second is sessions/s (wall clock: the waits are the point);
// settled_per_session counts the writes that still waited for quiet.
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <string>

#include "fuzz/session_remote.h"
#include "fuzz/session_search.h"
#include "targets/serve_thread.h"
#include "targets/tcp.h"

namespace {

using namespace rdmapct;  // NOLINT

// One search of `budget` sessions in batches of 32 on `jobs` threads (the
// same session stream whatever `jobs`, fuzz/session_search.h).
struct RunStats {
  long sessions = 0, settled = 0, findings = 0;
};

RunStats RunSearch(const std::string& address, int jobs, int budget, const fuzz::RemoteOptions& options) {
  RunStats stats;
  std::string error;
  auto connector = targets::TcpConnector::Create(address, {}, error);
  if (!connector) return stats;
  fuzz::SearchOptions search;
  search.budget = budget;
  search.batch = 32;
  search.jobs = jobs;
  search.only_profile = wire::Profile::kCommit;
  std::atomic<long> settled{0};
  const fuzz::SessionRun run = [&](const proto::FuzzSession& s0) {
    proto::FuzzSession s = s0;  // as `rdmapct fuzz --target tcp://` sends it
    s.mutable_connection()->set_target_crc_optional(false);
    s.mutable_connection()->set_target_markers(false);
    fuzz::RemoteResult r = fuzz::RunSessionRemote(s, *connector, options);
    settled += r.settled_steps;
    return std::move(r.oracles);
  };
  const fuzz::SearchResult r = fuzz::SearchSessions(run, search);
  stats.sessions = r.sessions;
  stats.settled = settled;
  stats.findings = static_cast<long>(r.findings.size());
  return stats;
}

void BM_LiveFuzz(benchmark::State& state, bool fence) {
  const int jobs = static_cast<int>(state.range(0));
  const int budget = fence ? 800 : 24;  // sessions per iteration
  targets::ReferenceTargetConfig config;
  config.profile = wire::Profile::kCommit;
  std::string error;
  targets::ServeThread serve(config, error);
  if (!serve.ok()) {
    state.SkipWithError(error.c_str());
    return;
  }
  fuzz::RemoteOptions options;
  options.fence = fence;
  long sessions = 0, settled = 0;
  for (auto _ : state) {
    const RunStats s = RunSearch(serve.address(), jobs, budget, options);
    if (s.findings > 0 || s.sessions == 0) {
      state.SkipWithError(s.sessions == 0 ? "no session ran" : "a finding against the fault-free reference");
      return;
    }
    sessions += s.sessions;
    settled += s.settled;
  }
  state.SetItemsProcessed(sessions);
  state.counters["settled_per_session"] = sessions ? static_cast<double>(settled) / sessions : 0;
}

BENCHMARK_CAPTURE(BM_LiveFuzz, fence, true)
    ->ArgName("jobs")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LiveFuzz, settle30, false)
    ->ArgName("jobs")
    ->Arg(1)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
