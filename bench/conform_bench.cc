// The whole conformance suite in-process against the reference target: how
// long one suite run takes per profile (goal: well under a second), in cases
// per second (items) and seconds per suite run, with 1 and 2 jobs; one run
// with a fault switched on (failing cases take other paths: missing
// Terminates, still-open connections); and the fault-detection meta-test's
// whole workload (every fault x every profile, tests/conformance/
// fault_detection_test.cc).
//
// The case files are read from the source tree (conformance/cases) once,
// outside the timed loop: the figures are the runner, the case driver, the
// matchers and the reference target, not protobuf text parsing.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/runner.h"
#include "reference/model/faults.h"
#include "targets/in_process.h"
#include "targets/reference_target.h"

namespace {

using namespace rdmapct;  // NOLINT

constexpr wire::Profile kProfiles[] = {wire::Profile::kRfc5040, wire::Profile::kRfc7306, wire::Profile::kCommit};

const conformance::CaseLoad& Cases() {
  static const conformance::CaseLoad load = conformance::LoadCases();
  return load;
}

std::vector<const conformance::LoadedCase*> CasesOf(wire::Profile p) {
  conformance::CaseFilter filter;
  filter.profile = p;
  return conformance::SelectCases(Cases().cases, filter);
}

// One suite run as `rdmapct conform --target reference` does it: a fresh
// target, every case of the profile. Returns the number of cases run, or -1
// (with the reason in `error`) when the run itself went wrong.
long RunOnce(wire::Profile p, const std::vector<const conformance::LoadedCase*>& cases, int jobs,
             const model::FaultSet& faults, bool expect_clean, std::string& error) {
  targets::ReferenceTargetConfig config;
  config.profile = p;
  config.faults = faults;
  targets::InProcessConnector connector(std::make_shared<targets::ReferenceTarget>(config));
  conformance::RunOptions options;
  options.profile = p;
  options.jobs = jobs;
  const conformance::RunResult run = conformance::RunCases(cases, options, connector);
  if (run.aborted) error = "run aborted: " + run.abort_reason;
  if (expect_clean && run.counts.fail + run.counts.error > 0) {
    error = "the clean reference target failed " + std::to_string(run.counts.fail + run.counts.error) + " case(s)";
  }
  return error.empty() ? static_cast<long>(run.cases.size()) : -1;
}

// Items are cases; "s_per_suite" is the wall time of one suite run.
void Report(benchmark::State& state, long cases_per_iteration) {
  state.SetItemsProcessed(state.iterations() * cases_per_iteration);
  state.counters["cases"] = static_cast<double>(cases_per_iteration);
  state.counters["s_per_suite"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Suite(benchmark::State& state, wire::Profile p, int jobs, std::vector<model::Fault> fault_list) {
  if (!Cases().ok() || Cases().cases.empty()) {
    state.SkipWithError("conformance/cases did not load");
    return;
  }
  model::FaultSet faults;
  for (model::Fault f : fault_list) faults.Add(f);
  const auto cases = CasesOf(p);
  long n = 0;
  for (auto _ : state) {
    std::string error;
    n = RunOnce(p, cases, jobs, faults, fault_list.empty(), error);
    if (n < 0) {
      state.SkipWithError(error.c_str());
      return;
    }
  }
  Report(state, n);
}

// Every fault x every profile plus the clean runs: what the meta-test runs.
void BM_FaultMatrix(benchmark::State& state) {
  if (!Cases().ok() || Cases().cases.empty()) {
    state.SkipWithError("conformance/cases did not load");
    return;
  }
  long n = 0;
  for (auto _ : state) {
    n = 0;
    for (wire::Profile p : kProfiles) {
      const auto cases = CasesOf(p);
      std::string error;
      n += RunOnce(p, cases, 2, {}, true, error);
      for (const model::FaultInfo& info : model::AllFaults()) {
        n += RunOnce(p, cases, 2, model::FaultSet{info.fault}, false, error);
      }
      if (!error.empty()) {
        state.SkipWithError(error.c_str());
        return;
      }
    }
  }
  Report(state, n);
}

BENCHMARK_CAPTURE(BM_Suite, rfc5040_jobs1, wire::Profile::kRfc5040, 1, {})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Suite, rfc5040_jobs2, wire::Profile::kRfc5040, 2, {})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Suite, rfc7306_jobs1, wire::Profile::kRfc7306, 1, {})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Suite, rfc7306_jobs2, wire::Profile::kRfc7306, 2, {})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Suite, commit_jobs1, wire::Profile::kCommit, 1, {})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Suite, commit_jobs2, wire::Profile::kCommit, 2, {})->UseRealTime()->Unit(benchmark::kMillisecond);
// A fault whose cases time out instead of closing (the slowest path in-process).
BENCHMARK_CAPTURE(BM_Suite, rfc5040_jobs2_fault_answer_after_terminate, wire::Profile::kRfc5040, 2,
                  {model::Fault::kAnswerAfterTerminate})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FaultMatrix)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
