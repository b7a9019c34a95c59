// What every report says about a run as a whole, beyond the counts, so a
// CI (or a reader of the first screen) can act on it:
//   - the "INTERRUPTED, partial" marker of a run stopped by SIGINT/SIGTERM;
//   - whether the certification is complete or partial, naming the
//     capabilities the target lacked (cases skipped for a missing
//     capability; cases outside the profile do not count: the profile was
//     chosen);
//   - the ids of the failing, erroring and warning cases;
//   - links to the capture of a case, relative to the report's directory.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "conformance/report_common.h"
#include "conformance/result.h"

namespace rdmapct::conformance {

// "INTERRUPTED, partial: 3 of 12 case(s) ran, 9 not run" for an
// interrupted run; "" otherwise.
std::string InterruptedMarker(const RunResult& run);

struct Completeness {
  bool complete = true;
  // One sentence, starting "complete:" or "partial:".
  std::string statement;
  // Each capability the target lacked with how many cases were skipped for
  // it, in the order first seen.
  std::vector<std::pair<std::string, std::size_t>> lacking;
  std::size_t capability_skips = 0;  // cases skipped for a missing capability
  std::size_t profile_skips = 0;     // cases outside the profile
};
Completeness AssessCompleteness(const RunResult& run);

// The ids of the cases with verdict `v`, in run order.
std::vector<std::string> CaseIds(const RunResult& run, Verdict v);

// The capture of case `id` (ReportContext::pcap_files), "" if none.
std::string PcapFile(const ReportContext& ctx, const std::string& id);

// `file` as a URL path relative to `base` (a directory; empty: `file` as
// given), with every octet outside [A-Za-z0-9._~/-] percent-encoded, for an
// href in a page written to `base`.
std::string RelativeHref(const std::filesystem::path& file, const std::filesystem::path& base);

}  // namespace rdmapct::conformance
