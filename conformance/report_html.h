// HTML certification report (`rdmapct conform --report FILE.html`): one
// self-contained page (inline CSS, no scripts, no external assets) that can
// be archived or mailed as the record of a run:
//   - target, profile, date, duration, rdmapct version, what the target said
//     about itself, and the overall verdict;
//   - a verdict table per document and level (MUST ... MAY), a table per
//     section;
//   - every failure, error and warning: the requirement text of each cited
//     catalog row, expected vs actual, accept-set choices, the steps, the
//     decoded frames (in <details>, which needs no script) and a one-line
//     command that reproduces it;
//   - every case with its verdict and reason.
// Every piece of text is HTML-escaped (report_common.h HtmlEscape).
#pragma once

#include <string>
#include <string_view>

#include "conformance/report_common.h"
#include "conformance/result.h"

namespace rdmapct::conformance {

std::string RenderHtmlReport(const RunResult& run, const ReportContext& ctx);

// The report's inline CSS (verdict badges .v .v-pass ... .v-none, tables),
// for other pages that show verdicts the same way (report_compare.h).
std::string_view HtmlReportStyle();

}  // namespace rdmapct::conformance
