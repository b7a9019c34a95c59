// `rdmapct report compare A.json B.json ...`: several JSON reports of
// `rdmapct conform --json` side by side, for tracking an implementation
// from release to release or comparing implementations:
//   - an interop matrix (case x run) as one self-contained HTML page, the
//     way quic-interop-runner shows its matrix;
//   - the verdicts that changed between each run and the next, as text,
//     with regressions (a case that passed or warned now warns, fails or
//     errs; a pass now warns) named as such.
// Reads only report fields schema versions 1 and 2 both define.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rdmapct::conformance {

struct ComparedRun {
  std::string label;  // the file as given
  std::string target, target_arg, profile, start, tool_version;
  bool interrupted = false;                                // the report is marked "INTERRUPTED, partial"
  std::string verdict;                                     // the run's overall verdict
  std::vector<std::pair<std::string, std::string>> cases;  // id -> verdict, report order
  const std::string* Find(const std::string& id) const;    // the verdict of `id`, null if absent
};

// Reads one JSON report; false with a one-line `error` (unreadable, not
// JSON, another schema).
bool LoadComparedRun(const std::string& path, ComparedRun& out, std::string& error);

struct VerdictChange {
  std::string id;
  std::string before, after;  // "" where the case is absent from that run
  bool regression = false;
};

// The cases whose verdict differs between `a` and `b`, in the order of a
// then b.
std::vector<VerdictChange> DiffVerdicts(const ComparedRun& a, const ComparedRun& b);

// The changes from each run to the next, one block per pair.
std::string RenderCompareText(const std::vector<ComparedRun>& runs);

// The matrix page: one row per case (the union, in first-seen order), one
// column per run, the rows whose verdicts differ marked; then the changes
// from each run to the next.
std::string RenderCompareHtml(const std::vector<ComparedRun>& runs);

}  // namespace rdmapct::conformance
