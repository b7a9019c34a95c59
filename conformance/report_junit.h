// JUnit XML view of a run (`rdmapct conform --junit FILE`) for CI systems:
//   <testsuites>            the run (target, profile, totals)
//     <testsuite>           one per document and section ("rfc5040 7.2")
//       <testcase>          one per case (classname "rfc5040.7.2", name = case id)
//         <failure>         verdict fail  (message = reason, type = level)
//         <error>           verdict error (message = reason)
//         <skipped>         verdict skip  (message = reason)
//         <system-out>      title, requirements, expected vs actual, choices,
//                           frames (summaries), reproduce command
// A warn is not a failure in JUnit terms: the testcase passes, carries a
// property verdict=warn and says why in system-out. Everything written is
// escaped for XML 1.0 (report_common.h XmlEscape).
#pragma once

#include <string>

#include "conformance/report_common.h"
#include "conformance/result.h"

namespace rdmapct::conformance {

std::string RenderJunitReport(const RunResult& run, const ReportContext& ctx);

}  // namespace rdmapct::conformance
