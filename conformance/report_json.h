// JSON view of a run (`rdmapct conform --json FILE`): the whole RunResult,
// every case, step and accept-set choice, the frames (raw octets as hex) of
// every case that did not pass (of every case with --verbose), the capture
// of each case, plus the per-document / per-level summary, the failing and
// warning case ids and the complete / partial statement a certification
// needs. The schema is
// documented field by field in docs/reports.md; "schema_version" changes
// when a field changes meaning or disappears (adding fields does not).
#pragma once

#include <string>

#include "conformance/report_common.h"
#include "conformance/result.h"

namespace rdmapct::conformance {

// 2: a passing or skipped case's `frames` are empty unless the run was
// verbose (`frames_omitted` counts them).
inline constexpr int kJsonReportSchemaVersion = 2;

// Pretty-printed (2 spaces), ending in a newline; any ill-formed UTF-8 in
// target-controlled text is replaced by U+FFFD.
std::string RenderJsonReport(const RunResult& run, const ReportContext& ctx);

}  // namespace rdmapct::conformance
