#include "cli/cli_report.h"

#include <algorithm>

#include "cli/cli_error.h"
#include "cli/commands.h"
#include "conformance/report_common.h"
#include "conformance/report_compare.h"

namespace rdmapct::cli {

int RunReportCompare(const ReportCompareCommand& cmd, std::FILE* out, std::FILE* err) {
  std::vector<conformance::ComparedRun> runs(cmd.files.size());
  for (std::size_t i = 0; i < cmd.files.size(); ++i) {
    std::string error;
    if (!conformance::LoadComparedRun(cmd.files[i], runs[i], error)) {
      PrintError(err, "report compare", error);
      return kExitUsage;
    }
  }
  std::fputs(conformance::RenderCompareText(runs).c_str(), out);
  if (!cmd.html_file.empty()) {
    std::string error;
    if (!conformance::WriteTextFile(cmd.html_file, conformance::RenderCompareHtml(runs), error)) {
      PrintError(err, "report compare", error);
      return kExitUsage;
    }
    std::fprintf(out, "matrix: %s\n", cmd.html_file.c_str());
  }
  const std::vector<conformance::VerdictChange> last = conformance::DiffVerdicts(runs[runs.size() - 2], runs.back());
  const bool regressed = std::any_of(last.begin(), last.end(), [](const auto& c) { return c.regression; });
  return regressed ? kExitFail : kExitOk;
}

}  // namespace rdmapct::cli
