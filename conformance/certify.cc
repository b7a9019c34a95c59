#include "conformance/certify.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "conformance/report_html.h"
#include "conformance/report_json.h"
#include "conformance/report_junit.h"
#include "conformance/report_pcap.h"
#include "targets/target_uri.h"
#include "targets/tcp_listen.h"

namespace rdmapct::conformance {
namespace {

namespace fs = std::filesystem;

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

std::string CheckOutputs(const CertifyOptions& o) {
  for (const auto& [flag, path] :
       {std::pair{"--json", o.json_file}, {"--junit", o.junit_file}, {"--report", o.report_file}}) {
    if (std::string e = CheckOutputPath(flag, path); !e.empty()) return e;
  }
  if (!o.pcap_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.pcap_dir, ec);
    if (ec || !fs::is_directory(o.pcap_dir)) {
      return "--pcap-dir " + o.pcap_dir + ": cannot create the directory" + (ec ? ": " + ec.message() : "");
    }
  }
  return {};
}

std::unique_ptr<targets::TargetConnector> MakeTarget(const CertifyOptions& o, std::string& error) {
  targets::ConnectorOptions opts;
  const bool reference = o.target == "reference" || o.target.starts_with("reference?");
  if (reference) opts.profile = o.profile;
  for (const std::string& name : o.faults) {
    if (!reference) {
      error = "--fault only applies to the reference target (got --target " + o.target + ")";
      return nullptr;
    }
    if (auto bad = opts.faults.AddByNames(name)) {
      error = "unknown fault \"" + std::string(*bad) + "\" (see rdmapct --list-faults)";
      return nullptr;
    }
  }
  auto connector = targets::MakeConnector(o.target, opts, error);
  if (!connector) error = "target " + o.target + ": " + error;
  if (!connector || o.listen.empty()) return connector;
  // --listen: the target also connects to the suite (convention §10).
  auto listener = targets::TcpListenConnector::Create(o.listen, targets::TcpOptions{}, error);
  if (!listener) return nullptr;
  return std::make_unique<targets::ListeningConnector>(std::move(connector), std::move(listener));
}

// What a reproduce command must repeat besides target, profile and case.
std::vector<std::string> ReproduceArgs(const CertifyOptions& o) {
  std::vector<std::string> args;
  for (const std::string& f : o.faults) args.insert(args.end(), {"--fault", f});
  if (!o.cases_dir.empty()) args.insert(args.end(), {"--cases-dir", fs::absolute(o.cases_dir).string()});
  for (const std::string& s : o.scripts) args.insert(args.end(), {"--script", fs::absolute(s).string()});
  if (o.timeout_ms) args.insert(args.end(), {"--timeout", std::to_string(*o.timeout_ms)});
  if (o.pause_after_reply_ms > 0) {
    args.insert(args.end(), {"--pause-after-reply", std::to_string(o.pause_after_reply_ms)});
  }
  if (!o.listen.empty()) args.insert(args.end(), {"--listen", o.listen});
  if (o.no_fence) args.push_back("--no-fence");
  if (o.fixed_quiet) args.insert(args.end(), {"--quiet", "fixed"});
  for (const std::string& q : o.quirks) args.insert(args.end(), {"--quirk", q});
  return args;
}

RunOptions MakeRunOptions(const CertifyOptions& o) {
  RunOptions opts;
  opts.profile = o.profile;
  opts.jobs = o.jobs;
  opts.keep_going = o.keep_going;
  opts.stop = o.stop;
  if (o.timeout_ms) {
    opts.driver.expect_timeout = std::chrono::milliseconds(*o.timeout_ms);
    opts.driver.reply_timeout = std::chrono::milliseconds(*o.timeout_ms);
  }
  opts.driver.pause_after_reply = std::chrono::milliseconds(o.pause_after_reply_ms);
  opts.driver.fence = !o.no_fence;
  opts.driver.adaptive_quiet = !o.fixed_quiet;
  opts.driver.undo_terminate_bitfield_order =
      std::find(o.quirks.begin(), o.quirks.end(), "terminate-bitfields") != o.quirks.end();
  return opts;
}

// The captures, before the reports so that they can name them: every case
// with --pcap-dir, else the failing ones. A failure capture that cannot be
// written is a warning; an unwritable --pcap-dir makes outputs_ok false.
void WritePcaps(const CertifyOptions& o, CertifyResult& r) {
  const bool all = !o.pcap_dir.empty();
  const RunResult failed = all ? RunResult{} : CasesNeedingFailurePcap(r.run);
  const RunResult& subject = all ? r.run : failed;
  if (subject.cases.empty()) return;
  const fs::path dir = all ? fs::path(o.pcap_dir) : FailurePcapDir(o);
  std::string error;
  if (!WriteCasePcaps(dir, subject, error)) {
    (all ? r.errors : r.warnings).push_back((all ? "--pcap-dir: " : "captures of failing cases: ") + error);
    if (all) r.outputs_ok = false;
    return;
  }
  for (const CaseResult& c : subject.cases) {
    const fs::path file = dir / PcapFileName(c.id);
    r.context.pcap_files[c.id] = file.string();
    r.pcaps_written.push_back(file);
  }
}

void WriteReports(const CertifyOptions& o, CertifyResult& r) {
  std::string error;
  const auto write = [&](const std::string& path, auto render) {
    if (path.empty()) return;
    ReportContext ctx = r.context;
    ctx.link_base = fs::absolute(path).parent_path();  // the HTML links its captures relative to itself
    if (!WriteTextFile(path, render(r.run, ctx), error)) {
      r.errors.push_back(error);
      r.outputs_ok = false;
      return;
    }
    r.reports_written.emplace_back(path);
  };
  write(o.json_file, RenderJsonReport);
  write(o.junit_file, RenderJunitReport);
  write(o.report_file, RenderHtmlReport);
}

CertifyResult Problem(CertifyProblem problem, std::vector<std::string> errors) {
  CertifyResult r;
  r.problem = problem;
  r.errors = std::move(errors);
  return r;
}

}  // namespace

bool CertifyResult::judged() const { return ran && !run.interrupted && ExitStatus(run) != kExitError; }

bool CertifyResult::failed() const { return ran && run.counts.fail > 0; }

fs::path FailurePcapDir(const CertifyOptions& o) {
  if (!o.failure_pcap_dir.empty()) return o.failure_pcap_dir;
  for (const std::string& report : {o.report_file, o.json_file, o.junit_file}) {
    if (!report.empty()) return fs::path(report).parent_path() / kFailurePcapDirName;
  }
  return fs::path(kFailurePcapDirName);
}

CaseSet LoadCaseSet(const CertifyOptions& o) {
  CaseSet set;
  CatalogLoad catalog = Catalog::LoadDefault();
  if (!catalog.ok()) {
    set.problem = CertifyProblem::kUsage;
    set.errors.push_back(catalog.error.Describe());
    return set;
  }
  set.catalog = std::make_shared<const Catalog>(std::move(*catalog.catalog));
  set.load = o.scripts.empty() ? LoadCaseFiles(o.cases_dir.empty() ? DefaultCasesDir() : fs::path(o.cases_dir))
                               : LoadScripts(o.scripts);
  if (set.load.ok()) {
    for (std::string& e : ValidateCases(set.load.cases, *set.catalog)) set.load.errors.push_back(std::move(e));
  }
  if (!set.load.ok()) {
    set.problem = CertifyProblem::kInvalidCases;
    set.errors = set.load.errors;
  }
  return set;
}

CertifyResult Certify(const CertifyOptions& o) {
  InstallPcapWriter();
  CaseSet set = LoadCaseSet(o);
  if (set.problem != CertifyProblem::kNone) return Problem(set.problem, std::move(set.errors));
  const std::vector<const LoadedCase*> selected = SelectCases(set.load.cases, o.filter);
  if (selected.empty()) {
    return Problem(CertifyProblem::kEmptySelection,
                   {fmt::format("no case matches the selection ({} case(s) loaded)", set.load.cases.size())});
  }
  if (std::string e = CheckOutputs(o); !e.empty()) return Problem(CertifyProblem::kUsage, {e});
  std::string error;
  std::unique_ptr<targets::TargetConnector> connector = MakeTarget(o, error);
  if (!connector) return Problem(CertifyProblem::kUsage, {error});
  CertifyResult r;
  r.cases_loaded = set.load.cases.size();
  r.catalog = set.catalog;
  r.context.catalog = r.catalog.get();
  r.context.tool_version = o.tool_version;
  r.context.target_arg = o.target;
  r.context.reproduce_args = ReproduceArgs(o);
  r.context.verbose = o.verbose;
  r.run = RunCases(selected, MakeRunOptions(o), *connector, o.on_case);
  r.ran = true;
  WritePcaps(o, r);
  WriteReports(o, r);
  return r;
}

}  // namespace rdmapct::conformance
