// `rdmapct fuzz --target tcp://` against `rdmapct serve`, in-process: the
// reference target served on loopback TCP on a thread of its own
// (bench/serve_thread.h) and the remote session fuzzer
// (fuzz/session_remote.h) driving the mutation search against it, the
// commit profile, fault-free (a finding is an error).
//
//  * BM_LiveFuzz/fence/jobs:N: each write's answer ended by the protocol
//    fence (the default). N jobs are N threads, each its own search (seeds
//    1..N) over its own connections, against the one server.
//  * BM_LiveFuzz/settle30/jobs:1: the fence off, every write waiting for
//    30 ms of quiet (the old default, --settle 30), for comparison.
//
// items_per_second is sessions/s (wall clock: the waits are the point);
// settled_per_session counts the writes that still waited for quiet.
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/serve_thread.h"
#include "fuzz/session_remote.h"
#include "fuzz/session_search.h"
#include "targets/tcp.h"

namespace {

using namespace rdmapct;  // NOLINT

struct JobStats {
  long sessions = 0, settled = 0, findings = 0;
};

JobStats RunJob(const std::string& address, uint64_t seed, int budget, const fuzz::RemoteOptions& options) {
  JobStats stats;
  std::string error;
  auto connector = targets::TcpConnector::Create(address, {}, error);
  if (!connector) return stats;
  fuzz::SearchOptions search;
  search.seed = seed;
  search.budget = budget;
  search.only_profile = wire::Profile::kCommit;
  const fuzz::SessionRun run = [&](const proto::FuzzSession& s0) {
    proto::FuzzSession s = s0;  // as `rdmapct fuzz --target tcp://` sends it
    s.mutable_connection()->set_target_crc_optional(false);
    s.mutable_connection()->set_target_markers(false);
    fuzz::RemoteResult r = fuzz::RunSessionRemote(s, *connector, options);
    stats.settled += r.settled_steps;
    return std::move(r.oracles);
  };
  const fuzz::SearchResult r = fuzz::SearchSessions(run, search);
  stats.sessions = r.sessions;
  stats.findings = static_cast<long>(r.findings.size());
  return stats;
}

void BM_LiveFuzz(benchmark::State& state, bool fence) {
  const int jobs = static_cast<int>(state.range(0));
  const int budget = fence ? 400 : 20;  // sessions per job and iteration
  targets::ReferenceTargetConfig config;
  config.profile = wire::Profile::kCommit;
  std::string error;
  bench::ServeThread serve(config, error);
  if (!serve.ok()) {
    state.SkipWithError(error.c_str());
    return;
  }
  fuzz::RemoteOptions options;
  options.fence = fence;
  long sessions = 0, settled = 0;
  for (auto _ : state) {
    std::vector<JobStats> stats(static_cast<std::size_t>(jobs));
    std::vector<std::thread> threads;
    for (int j = 0; j < jobs; ++j) {
      threads.emplace_back([&, j] { stats[j] = RunJob(serve.address(), 1 + j, budget, options); });
    }
    for (std::thread& t : threads) t.join();
    for (const JobStats& s : stats) {
      if (s.findings > 0 || s.sessions == 0) {
        state.SkipWithError(s.sessions == 0 ? "no session ran" : "a finding against the fault-free reference");
        return;
      }
      sessions += s.sessions;
      settled += s.settled;
    }
  }
  state.SetItemsProcessed(sessions);
  state.counters["settled_per_session"] = sessions ? static_cast<double>(settled) / sessions : 0;
}

BENCHMARK_CAPTURE(BM_LiveFuzz, fence, true)->ArgName("jobs")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LiveFuzz, settle30, false)->ArgName("jobs")->Arg(1)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
