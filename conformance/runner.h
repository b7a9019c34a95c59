// The conformance runner: loads and selects cases, runs each against a
// target (case_driver.h) on a small thread pool, and collects the verdicts in
// the deterministic order of the selection.
//
// Cases are independent: one case, its own connection(s). Cases whose result
// depends on what the target carries between connections (Keep Memory, the
// previous-connection outcome) run alone, with no other case in flight, so
// "the previous connection" is theirs. A target that refuses several
// connections in a row ends the run promptly (unless keep_going), and a
// target speaking an unknown test-ULP major version ends it at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <vector>

#include "conformance/case_driver.h"
#include "conformance/case_loader.h"
#include "conformance/result.h"
#include "targets/transport.h"

namespace rdmapct::conformance {

struct RunOptions {
  wire::Profile profile = wire::Profile::kRfc5040;
  CaseFilter filter;                // selection (ids, sections, documents, levels, tags)
  std::filesystem::path cases_dir;  // empty: DefaultCasesDir()
  int jobs = 1;                     // cases in flight at once
  CaseDriverOptions driver;         // timeouts and bounds; its profile is set from `profile`
  int max_consecutive_connect_failures = 3;
  bool keep_going = false;  // never stop early for connection failures
  // An interrupt request, read while the run goes (a signal handler sets
  // it): kStopFinish starts no further case and lets the cases in flight
  // finish; kStopAbandon also cuts the cases in flight short (their
  // transports fail at once) and reports them as not run. The result is
  // then `interrupted`, with the cases not run listed in `not_run`.
  const std::atomic<int>* stop = nullptr;
};

inline constexpr int kStopFinish = 1;
inline constexpr int kStopAbandon = 2;

// Called once per case, in selection order (not completion order), as soon
// as the case and every case before it have finished; `index` is 0-based.
using CaseCallback = std::function<void(const CaseResult& result, std::size_t index, std::size_t total)>;

// Loads the cases of options.cases_dir, validates them (ValidateCases),
// selects by options.filter and runs them. Invalid case files end the run
// before any connection: aborted, with the errors in abort_reason.
RunResult RunSuite(const RunOptions& options, targets::TargetConnector& connector, const CaseCallback& on_case = {});

// Runs cases already loaded and selected (in this order).
RunResult RunCases(const std::vector<const LoadedCase*>& cases, const RunOptions& options,
                   targets::TargetConnector& connector, const CaseCallback& on_case = {});

// Whether a case must run with no other case in flight.
bool NeedsExclusiveTarget(const proto::Case& c);

}  // namespace rdmapct::conformance
