// The conformance pipeline behind `rdmapct conform`, as a library call:
// load and validate the cases (the case tree or --script files), select
// them, build the target connector, run them (RunCases), write the
// requested JSON / JUnit / HTML reports and the pcap captures, and return
// the run with every file written. It prints nothing and picks no exit
// status: the CLI (cli/cli_conform.cc) parses flags, prints the console
// report and maps a CertifyResult to a status; other drivers (replay
// --against, fuzz reproducers) read the CertifyResult itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/catalog.h"
#include "conformance/report_common.h"
#include "conformance/result.h"
#include "conformance/runner.h"
#include "reference/wire/profile.h"

namespace rdmapct::conformance {

struct CertifyOptions {
  std::string target = "reference";  // --target URI (targets/target_uri.h)
  // --listen HOST:PORT: the suite also listens there, and cases where the
  // target is the MPA Initiator accept its connection (convention §10).
  std::string listen;
  wire::Profile profile = wire::Profile::kRfc5040;
  CaseFilter filter;                // --case, --section, --doc, --level, --tag
  std::vector<std::string> faults;  // --fault NAME (reference target only)
  bool verbose = false;             // -v: every case's steps and frames in the reports
  bool keep_going = false;          // never stop early on connection failures
  int jobs = 1;
  std::optional<int> timeout_ms;     // --timeout: default wait of an expectation
  int pause_after_reply_ms = 0;      // --pause-after-reply: quiet before the first FPDU
  bool no_fence = false;             // --no-fence: every `expect nothing` waits its whole window
  bool fixed_quiet = false;          // --quiet fixed: an unfenced `expect nothing` waits its whole window
  std::vector<std::string> quirks;   // --quirk: diagnostic readings of known target bugs
  std::string cases_dir;             // --cases-dir; empty: the default tree
  std::vector<std::string> scripts;  // --script FILE: run these files' cases instead
  std::string json_file, junit_file, report_file, pcap_dir;
  // Without pcap_dir: where the captures of failing cases go (empty:
  // rdmapct-failures/ next to the first report, FailurePcapDir).
  std::string failure_pcap_dir;
  std::string tool_version;  // for reports
  // Called once per case in selection order as it finishes (live progress).
  CaseCallback on_case;
  // Interrupt request (RunOptions::stop): 1 finishes the cases in flight and
  // starts no more, 2 abandons them too. The reports are written either way.
  const std::atomic<int>* stop = nullptr;
};

// What went wrong before or after the run, by how a caller must react.
enum class CertifyProblem {
  kNone,
  kUsage,           // bad options: unknown fault, unwritable report path, unreachable target spec
  kInvalidCases,    // case files or the catalog did not load / validate: nothing was run
  kEmptySelection,  // no case matches the filter
};

struct CertifyResult {
  CertifyProblem problem = CertifyProblem::kNone;
  // One line each: why nothing ran, or which requested files could not be
  // written (the run itself is then still in `run`).
  std::vector<std::string> errors;
  // Notes that do not change the outcome (a failure capture that could not
  // be written without --pcap-dir).
  std::vector<std::string> warnings;
  bool ran = false;              // the selected cases were run (`run` holds them)
  bool outputs_ok = true;        // every requested report and --pcap-dir capture was written
  std::size_t cases_loaded = 0;  // before selection
  RunResult run;
  // Everything the reports were rendered with (catalog, reproduce
  // arguments, the capture of each case), so a caller renders the console
  // report the same way.
  std::shared_ptr<const Catalog> catalog;
  ReportContext context;
  std::vector<std::filesystem::path> reports_written;  // JSON, JUnit, HTML as requested
  std::vector<std::filesystem::path> pcaps_written;    // every capture, in run order

  // The cases were run and judged (not aborted, interrupted or in error):
  // then failed() says whether a MUST-level expectation was missed.
  bool judged() const;
  bool failed() const;  // ran and at least one case failed
};

CertifyResult Certify(const CertifyOptions& options);

// The loading half of Certify, for --list and --coverage: the default
// catalog, the cases (tree or scripts) validated against it. `problem`
// and `errors` as in CertifyResult.
struct CaseSet {
  CertifyProblem problem = CertifyProblem::kNone;
  std::vector<std::string> errors;
  std::shared_ptr<const Catalog> catalog;
  CaseLoad load;
};
CaseSet LoadCaseSet(const CertifyOptions& options);

// Where failing cases' captures go without --pcap-dir: --failure-pcap-dir
// if given, else rdmapct-failures/ next to the first report file
// (--report, --json, --junit), else in the current directory.
std::filesystem::path FailurePcapDir(const CertifyOptions& options);

}  // namespace rdmapct::conformance
