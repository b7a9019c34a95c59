// JSON view of a run (`rdmapct conform --json FILE`): the whole RunResult,
// every case, step, accept-set choice and frame (raw octets as hex), plus the
// per-document / per-level summary a certification needs. The schema is
// documented field by field in docs/reports.md; "schema_version" changes
// when a field changes meaning or disappears (adding fields does not).
#pragma once

#include <string>

#include "conformance/report_common.h"
#include "conformance/result.h"

namespace rdmapct::conformance {

inline constexpr int kJsonReportSchemaVersion = 1;

// Pretty-printed (2 spaces), ending in a newline; any ill-formed UTF-8 in
// target-controlled text is replaced by U+FFFD.
std::string RenderJsonReport(const RunResult& run, const ReportContext& ctx);

}  // namespace rdmapct::conformance
