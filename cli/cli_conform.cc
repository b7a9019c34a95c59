#include "cli/cli_conform.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "conformance/catalog.h"
#include "conformance/coverage.h"
#include "conformance/report_common.h"
#include "conformance/report_console.h"
#include "conformance/report_html.h"
#include "conformance/report_json.h"
#include "conformance/report_junit.h"
#include "conformance/report_pcap.h"
#include "conformance/result.h"
#include "conformance/runner.h"
#include "reference/model/faults.h"
#include "targets/target_uri.h"

namespace rdmapct::cli {
namespace {

namespace fs = std::filesystem;
using namespace conformance;

constexpr const char* kPrefix = "rdmapct conform: ";

int Usage(std::FILE* err, const std::string& message) {
  std::fprintf(err, "%s%s\n", kPrefix, message.c_str());
  return kExitError;
}

std::string ReadAll(const fs::path& p, bool& ok) {
  std::ifstream in(p, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The cases of --script files: each case takes its document and section
// from its own id, so a reproducer can live anywhere.
CaseLoad LoadScripts(const std::vector<std::string>& scripts) {
  CaseLoad out;
  for (const std::string& path : scripts) {
    bool ok = false;
    const std::string text = ReadAll(path, ok);
    if (!ok) {
      out.errors.push_back(path + ": cannot read");
      continue;
    }
    CaseLoad one = ParseCaseFile(text, path, "", "");
    for (LoadedCase& c : one.cases) {
      c.document = IdComponent(c.id(), 0);
      c.section = IdComponent(c.id(), 1);
      out.cases.push_back(std::move(c));
    }
    for (std::string& e : one.errors) out.errors.push_back(std::move(e));
  }
  return out;
}

// Loads and validates the cases the command is about; false after printing
// every problem.
bool LoadAll(const ConformCommand& cmd, const Catalog& catalog, CaseLoad& load, std::FILE* err) {
  load = cmd.scripts.empty() ? LoadCaseFiles(cmd.cases_dir.empty() ? DefaultCasesDir() : fs::path(cmd.cases_dir))
                             : LoadScripts(cmd.scripts);
  if (load.ok()) {
    for (std::string& e : ValidateCases(load.cases, catalog)) load.errors.push_back(std::move(e));
  }
  for (const std::string& e : load.errors) std::fprintf(err, "%s%s\n", kPrefix, e.c_str());
  if (!load.ok()) std::fprintf(err, "%sinvalid case files: nothing was run\n", kPrefix);
  return load.ok();
}

int PrintCoverage(const ConformCommand& cmd, const Catalog& catalog, const CaseLoad& load, std::FILE* out,
                  std::FILE* err) {
  const ReasonsLoad reasons = LoadUncoveredReasons();
  for (const std::string& e : reasons.errors) std::fprintf(err, "%s%s\n", kPrefix, e.c_str());
  const Coverage cov = ComputeCoverage(catalog, load.cases, reasons.reasons);
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
    if (!c->AppliesTo(cmd.profile)) line += fmt::format("  [not in profile {}: skipped]", wire::ProfileName(cmd.profile));
    std::fprintf(out, "%s\n", line.c_str());
  }
  std::fprintf(out, "%zu case(s)\n", selected.size());
  return kExitPass;
}

// A report file is checked before the run, so a long run never ends in an
// unwritable path.
std::string CheckOutputPath(const std::string& flag, const std::string& path) {
  if (path.empty()) return {};
  const fs::path parent = fs::absolute(path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) return flag + " " + path + ": directory " + parent.string() + " does not exist";
  if (fs::is_directory(path, ec)) return flag + " " + path + ": is a directory";
  return {};
}

std::string CheckOutputs(const ConformCommand& cmd) {
  for (const auto& [flag, path] : {std::pair{"--json", cmd.json_file}, {"--junit", cmd.junit_file},
                                   {"--report", cmd.report_file}}) {
    if (std::string e = CheckOutputPath(flag, path); !e.empty()) return e;
  }
  if (!cmd.pcap_dir.empty()) {
    std::error_code ec;
    fs::create_directories(cmd.pcap_dir, ec);
    if (ec || !fs::is_directory(cmd.pcap_dir)) {
      return "--pcap-dir " + cmd.pcap_dir + ": cannot create the directory" + (ec ? ": " + ec.message() : "");
    }
  }
  return {};
}

// Where failing cases' captures go without --pcap-dir: rdmapct-failures/
// next to the first report file (--report, --json, --junit), so they travel
// with the report; else in the current directory.
fs::path FailurePcapDir(const ConformCommand& cmd) {
  for (const std::string& report : {cmd.report_file, cmd.json_file, cmd.junit_file}) {
    if (!report.empty()) return fs::path(report).parent_path() / kFailurePcapDirName;
  }
  return fs::path(kFailurePcapDirName);
}

// Writes the captures before the console report, so its failure blocks can
// name them: every case with --pcap-dir, else the failing ones. A capture
// of a failure that cannot be written is reported but leaves the exit
// status to the verdicts; an unwritable --pcap-dir is an error (false).
bool WritePcaps(const ConformCommand& cmd, const RunResult& run, ReportContext& ctx, std::FILE* err) {
  const bool all = !cmd.pcap_dir.empty();
  const RunResult failed = all ? RunResult{} : CasesNeedingFailurePcap(run);
  const RunResult& subject = all ? run : failed;
  if (subject.cases.empty()) return true;
  const fs::path dir = all ? fs::path(cmd.pcap_dir) : FailurePcapDir(cmd);
  std::string error;
  if (!WriteCasePcaps(dir, subject, error)) {
    std::fprintf(err, "%s%s%s\n", kPrefix, all ? "--pcap-dir: " : "captures of failing cases: ", error.c_str());
    return !all;
  }
  for (const CaseResult& c : subject.cases) ctx.pcap_files[c.id] = (dir / PcapFileName(c.id)).string();
  return true;
}

std::unique_ptr<targets::TargetConnector> MakeTarget(const ConformCommand& cmd, std::string& error) {
  targets::ConnectorOptions opts;
  const bool reference = cmd.target == "reference" || cmd.target.starts_with("reference?");
  if (reference) opts.profile = cmd.profile;
  for (const std::string& name : cmd.faults) {
    if (!reference) {
      error = "--fault only applies to the reference target (got --target " + cmd.target + ")";
      return nullptr;
    }
    if (auto bad = opts.faults.AddByNames(name)) {
      error = "unknown fault \"" + std::string(*bad) + "\" (see rdmapct --list-faults)";
      return nullptr;
    }
  }
  auto connector = targets::MakeConnector(cmd.target, opts, error);
  if (!connector) error = "target " + cmd.target + ": " + error;
  return connector;
}

// What a reproduce command must repeat besides target, profile and case.
std::vector<std::string> ReproduceArgs(const ConformCommand& cmd) {
  std::vector<std::string> args;
  for (const std::string& f : cmd.faults) args.insert(args.end(), {"--fault", f});
  if (!cmd.cases_dir.empty()) args.insert(args.end(), {"--cases-dir", fs::absolute(cmd.cases_dir).string()});
  for (const std::string& s : cmd.scripts) args.insert(args.end(), {"--script", fs::absolute(s).string()});
  if (cmd.timeout_ms) args.insert(args.end(), {"--timeout", std::to_string(*cmd.timeout_ms)});
  if (cmd.pause_after_reply_ms > 0) {
    args.insert(args.end(), {"--pause-after-reply", std::to_string(cmd.pause_after_reply_ms)});
  }
  for (const std::string& q : cmd.quirks) args.insert(args.end(), {"--quirk", q});
  return args;
}

RunOptions MakeRunOptions(const ConformCommand& cmd) {
  RunOptions opts;
  opts.profile = cmd.profile;
  opts.jobs = cmd.jobs;
  opts.keep_going = cmd.keep_going;
  if (cmd.timeout_ms) {
    opts.session.expect_timeout = std::chrono::milliseconds(*cmd.timeout_ms);
    opts.session.reply_timeout = std::chrono::milliseconds(*cmd.timeout_ms);
  }
  opts.session.pause_after_reply = std::chrono::milliseconds(cmd.pause_after_reply_ms);
  opts.session.undo_terminate_bitfield_order =
      std::find(cmd.quirks.begin(), cmd.quirks.end(), "terminate-bitfields") != cmd.quirks.end();
  return opts;
}

bool WriteReports(const ConformCommand& cmd, const RunResult& run, const ReportContext& ctx, std::FILE* err) {
  bool ok = true;
  std::string error;
  const auto write = [&](const std::string& path, auto render) {
    if (path.empty()) return;
    if (!WriteTextFile(path, render(run, ctx), error)) {
      std::fprintf(err, "%s%s\n", kPrefix, error.c_str());
      ok = false;
    }
  };
  write(cmd.json_file, RenderJsonReport);
  write(cmd.junit_file, RenderJunitReport);
  write(cmd.report_file, RenderHtmlReport);
  return ok;
}

bool UseColour(const ConformCommand& cmd, std::FILE* f) {
  if (cmd.color) return *cmd.color;
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(fileno(f)) && !(no_color && *no_color);
}

int Run(const ConformCommand& cmd, const Catalog& catalog, const std::vector<const LoadedCase*>& selected,
        std::FILE* out, std::FILE* err) {
  if (std::string e = CheckOutputs(cmd); !e.empty()) return Usage(err, e);
  std::string error;
  std::unique_ptr<targets::TargetConnector> connector = MakeTarget(cmd, error);
  if (!connector) return Usage(err, error);
  ReportContext ctx{&catalog, cmd.tool_version, cmd.target, ReproduceArgs(cmd), cmd.verbose, {}};
  // Live lines go to stderr: stdout keeps the grouped report alone, and a
  // terminal shows one line rewritten in place.
  LiveProgress progress(err, selected.size(), isatty(fileno(err)) != 0, ConsoleStyle{UseColour(cmd, err)});
  const RunResult run = RunCases(selected, MakeRunOptions(cmd), *connector,
                                 [&](const CaseResult& c, std::size_t, std::size_t) { progress.OnCase(c); });
  progress.Finish();
  const bool pcaps_ok = WritePcaps(cmd, run, ctx, err);
  std::fputs(RenderConsoleReport(run, ctx, ConsoleStyle{UseColour(cmd, out)}).c_str(), out);
  std::fflush(out);
  if (run.aborted) std::fprintf(err, "%srun aborted: %s\n", kPrefix, run.abort_reason.c_str());
  if (!WriteReports(cmd, run, ctx, err) || !pcaps_ok) return kExitError;
  return ExitStatus(run);
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

int RunConform(const ConformCommand& cmd, std::FILE* out, std::FILE* err) {
  InstallPcapWriter();
  const CatalogLoad catalog = Catalog::LoadDefault();
  if (!catalog.ok()) return Usage(err, catalog.error.Describe());
  CaseLoad load;
  if (!LoadAll(cmd, *catalog.catalog, load, err)) return kExitError;
  if (cmd.coverage) return PrintCoverage(cmd, *catalog.catalog, load, out, err);
  const std::vector<const LoadedCase*> selected = SelectCases(load.cases, cmd.filter);
  if (selected.empty()) return Usage(err, fmt::format("no case matches the selection ({} case(s) loaded)", load.cases.size()));
  if (cmd.list) return PrintList(cmd, selected, out);
  return Run(cmd, *catalog.catalog, selected, out, err);
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
