// `rdmapct report compare`: flags only; the work is RunReportCompare
// (cli_report.h) on top of conformance/report_compare.h.
#include <memory>

#include "cli/cli_report.h"
#include "cli/commands.h"

namespace rdmapct::cli {

namespace {

constexpr const char* kCompareHelp =
    "Compare JSON reports of `rdmapct conform --json` (several releases of one\n"
    "implementation, or several implementations): prints every case whose verdict\n"
    "changed from each run to the next, a change for the worse (pass -> warn, pass or\n"
    "warn -> fail or error, error -> fail) marked REGRESSED; --html FILE also writes\n"
    "the interop matrix, one row per case and one column per run.\n"
    "\n"
    "Exit status: 0 no case regressed from the next-to-last run to the last; 1 one\n"
    "did; 2 bad flags or a file that is not a conform report.\n"
    "\n"
    "Example: rdmapct report compare v1.2/rfc5040.json v1.3/rfc5040.json --html matrix.html";

}  // namespace

void RegisterReport(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub = app.add_subcommand("report", "Work with conformance reports (compare runs)");
  sub->require_subcommand(1);
  CLI::App* compare = sub->add_subcommand("compare", "Interop matrix and verdict changes of several JSON reports");
  compare->footer(kCompareHelp);
  auto cmd = std::make_shared<ReportCompareCommand>();
  compare->add_option("reports", cmd->files, "JSON reports of rdmapct conform --json, oldest first")
      ->required()
      ->expected(2, CLI::detail::expected_max_vector_size)
      ->check(CLI::ExistingFile);
  compare->add_option("--html", cmd->html_file, "write the interop matrix (case x run) as one HTML page");
  compare->callback([cmd, &run] { run = [cmd] { return RunReportCompare(*cmd, stdout, stderr); }; });
}

}  // namespace rdmapct::cli
