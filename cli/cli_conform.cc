#include "cli/cli_conform.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "cli/cli_interrupt.h"
#include "conformance/coverage.h"
#include "conformance/report_common.h"
#include "conformance/report_console.h"
#include "conformance/result.h"
#include "reference/model/faults.h"

namespace rdmapct::cli {
namespace {

using namespace conformance;

// Every line through kPrefix is an error (cli_error.h: one style everywhere).
constexpr const char* kPrefix = "rdmapct conform: error: ";

int Usage(std::FILE* err, const std::string& message) {
  std::fprintf(err, "%s%s\n", kPrefix, message.c_str());
  return kExitError;
}

void PrintLines(std::FILE* err, const std::vector<std::string>& lines) {
  for (const std::string& e : lines) std::fprintf(err, "%s%s\n", kPrefix, e.c_str());
}

// Every problem that stopped a command before it ran anything; exit 2.
int PrintProblem(std::FILE* err, CertifyProblem problem, const std::vector<std::string>& errors) {
  PrintLines(err, errors);
  if (problem == CertifyProblem::kInvalidCases) std::fprintf(err, "%sinvalid case files: nothing was run\n", kPrefix);
  return kExitError;
}

int PrintCoverage(const ConformCommand& cmd, const CaseSet& set, std::FILE* out, std::FILE* err) {
  const ReasonsLoad reasons = LoadUncoveredReasons();
  PrintLines(err, reasons.errors);
  const Coverage cov = ComputeCoverage(*set.catalog, set.load.cases, reasons.reasons);
  std::fputs(RenderCoverageText(cov).c_str(), out);
  if (!cmd.json_file.empty()) {
    std::string error;
    if (!WriteTextFile(cmd.json_file, RenderCoverageJson(cov), error)) return Usage(err, error);
  }
  return kExitPass;
}

int PrintList(const ConformCommand& cmd, const std::vector<const LoadedCase*>& selected, std::FILE* out) {
  for (const LoadedCase* c : selected) {
    std::string line = fmt::format("{:<52} {:<10} {}", c->id(), LevelText(c->proto.level()), c->proto.title());
    if (!c->AppliesTo(cmd.profile))
      line += fmt::format("  [not in profile {}: skipped]", wire::ProfileName(cmd.profile));
    std::fprintf(out, "%s\n", line.c_str());
  }
  std::fprintf(out, "%zu case(s)\n", selected.size());
  return kExitPass;
}

// --list and --coverage: load and select like a run, print, run nothing.
int ListOrCoverage(const ConformCommand& cmd, std::FILE* out, std::FILE* err) {
  const CaseSet set = LoadCaseSet(cmd);
  if (set.problem != CertifyProblem::kNone) return PrintProblem(err, set.problem, set.errors);
  if (cmd.coverage) return PrintCoverage(cmd, set, out, err);
  const std::vector<const LoadedCase*> selected = SelectCases(set.load.cases, cmd.filter);
  if (selected.empty()) {
    return Usage(err, fmt::format("no case matches the selection ({} case(s) loaded)", set.load.cases.size()));
  }
  return PrintList(cmd, selected, out);
}

bool UseColour(const ConformCommand& cmd, std::FILE* f) {
  if (cmd.color) return *cmd.color;
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(fileno(f)) && !(no_color && *no_color);
}

}  // namespace

std::optional<proto::Level> ParseLevelFlag(std::string_view text) {
  std::string t;
  for (char c : text) t += c == '-' || c == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (proto::Level l : {proto::MUST, proto::MUST_NOT, proto::SHOULD, proto::SHOULD_NOT, proto::MAY}) {
    if (LevelText(l) == t) return l;
  }
  return std::nullopt;
}

int ConformExitStatus(const CertifyResult& r) {
  if (!r.ran) return kExitError;
  if (r.run.interrupted) return kExitInterrupted;
  if (!r.outputs_ok) return kExitError;
  return ExitStatus(r.run);
}

int RunConform(const ConformCommand& cmd, std::FILE* out, std::FILE* err, CertifyResult* result) {
  if (cmd.list || cmd.coverage) return ListOrCoverage(cmd, out, err);
  // Live lines go to stderr: stdout keeps the grouped report alone, and a
  // terminal shows one line rewritten in place.
  // The runner calls on_case one case at a time, the first call knows the total.
  std::optional<LiveProgress> progress;
  InterruptScope interrupt("rdmapct conform");
  CertifyOptions options = cmd;
  options.on_case = [&](const CaseResult& c, std::size_t, std::size_t total) {
    if (!progress) progress.emplace(err, total, isatty(fileno(err)) != 0, ConsoleStyle{UseColour(cmd, err)});
    progress->OnCase(c);
  };
  options.stop = &interrupt.level();
  CertifyResult r = Certify(options);
  if (progress) progress->Finish();
  if (!r.ran) return PrintProblem(err, r.problem, r.errors);
  PrintLines(err, r.warnings);
  std::fputs(RenderConsoleReport(r.run, r.context, ConsoleStyle{UseColour(cmd, out)}).c_str(), out);
  std::fflush(out);
  if (r.run.aborted) std::fprintf(err, "%srun aborted: %s\n", kPrefix, r.run.abort_reason.c_str());
  PrintLines(err, r.errors);
  const int status = ConformExitStatus(r);
  if (result) *result = std::move(r);
  return status;
}

int RunListFaults(std::FILE* out) {
  for (const model::FaultInfo& f : model::AllFaults()) {
    std::fprintf(out, "%-36s %s\n%-36s requirements: %s\n", f.name, f.description, "", f.requirement_ids);
  }
  std::fprintf(out, "%zu fault(s); use one with: rdmapct conform --target reference --fault NAME\n",
               model::AllFaults().size());
  return kExitPass;
}

}  // namespace rdmapct::cli
