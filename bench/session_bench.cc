// The session fuzzer's in-process cost (fuzz/fuzz_session.cc, README
// "Session fuzzing"):
//
//  * BM_SessionHarness: what LLVMFuzzerTestOneInput does for one input,
//    called directly: parse the binary FuzzSession, run it against the
//    reference target and its fault-free twin with every oracle. The inputs
//    are the seed sessions and 512 mutants of them (SessionMutator, seed 1),
//    serialized once outside the timed loop, taken round robin.
//    items_per_second is execs/s, comparable with libFuzzer's exec/s
//    without libFuzzer's own cost (coverage, mutation).
//  * BM_SessionSearch: the mutation search `rdmapct fuzz --target reference`
//    runs (fuzz/session_search.h), fault-free, 2000 sessions per iteration;
//    items_per_second is sessions/s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz/session_mutator.h"
#include "fuzz/session_oracle.h"
#include "fuzz/session_search.h"
#include "fuzz/session_seeds.h"
#include "proto/session.pb.h"
#include "reference/model/faults.h"

namespace {

using namespace rdmapct;  // NOLINT

const std::vector<std::string>& HarnessInputs() {
  static const std::vector<std::string> inputs = [] {
    std::vector<proto::FuzzSession> sessions;
    for (const fuzz::NamedSession& n : fuzz::SeedSessions()) sessions.push_back(n.session);
    const std::size_t seeds = sessions.size();
    fuzz::SessionMutator m(1, fuzz::SeededByteMutator(1));
    for (int i = 0; i < 512; ++i) {
      proto::FuzzSession s = sessions[m.Below(seeds)];
      for (uint64_t k = 1 + m.Below(3); k > 0; --k) m.Mutate(s);
      sessions.push_back(std::move(s));
    }
    std::vector<std::string> out;
    for (const proto::FuzzSession& s : sessions) out.push_back(s.SerializeAsString());
    return out;
  }();
  return inputs;
}

void BM_SessionHarness(benchmark::State& state, const char* fault) {
  model::FaultSet faults;
  if (*fault != '\0' && faults.AddByNames(fault)) {
    state.SkipWithError("unknown fault");
    return;
  }
  const std::vector<std::string>& inputs = HarnessInputs();
  std::size_t next = 0, steps = 0;
  for (auto _ : state) {
    const std::string& in = inputs[next++ % inputs.size()];
    proto::FuzzSession s;
    if (!s.ParseFromArray(in.data(), static_cast<int>(in.size()))) continue;
    const fuzz::OracleResult r = fuzz::RunSessionOracles(s, faults);
    steps += r.steps;
    benchmark::DoNotOptimize(r.findings.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["steps_per_exec"] =
      static_cast<double>(steps) / static_cast<double>(std::max<int64_t>(state.iterations(), 1));
}

BENCHMARK_CAPTURE(BM_SessionHarness, no_fault, "");
// A fault whose findings are cheap (skip-bounds-check, say, lets one mutant
// read back half a GiB and would dominate the figure).
BENCHMARK_CAPTURE(BM_SessionHarness, skip_msn_check, "skip-msn-check");

void BM_SessionSearch(benchmark::State& state) {
  fuzz::SearchOptions options;
  options.budget = 2000;
  const model::FaultSet none;
  const fuzz::SessionRun run = [&](const proto::FuzzSession& s) { return fuzz::RunSessionOracles(s, none); };
  int64_t sessions = 0;
  for (auto _ : state) {
    const fuzz::SearchResult r = fuzz::SearchSessions(run, options);
    if (!r.findings.empty()) {
      state.SkipWithError("the fault-free reference gave a finding");
      return;
    }
    sessions += r.sessions;
  }
  state.SetItemsProcessed(sessions);
}

BENCHMARK(BM_SessionSearch)->Unit(benchmark::kMillisecond);

}  // namespace
