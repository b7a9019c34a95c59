// `rdmapct report compare A.json B.json ...`: reads JSON reports of
// `rdmapct conform --json` (conformance/report_compare.h), prints the
// verdicts that changed from each run to the next, and with --html FILE
// writes the interop matrix (case x run).
//
// Exit status: 0 no case regressed from the next-to-last run to the last;
// 1 one did (a pass or warn became a warn, fail or error); 2 bad flags or a
// file that is not a conform report.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace rdmapct::cli {

struct ReportCompareCommand {
  std::vector<std::string> files;  // at least two
  std::string html_file;           // --html: the matrix page
};

int RunReportCompare(const ReportCompareCommand& cmd, std::FILE* out, std::FILE* err);

}  // namespace rdmapct::cli
