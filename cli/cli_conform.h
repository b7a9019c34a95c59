// `rdmapct conform` and `rdmapct --list-faults`: the glue between the flags
// (cmd_conform.cc, cmd_faults.cc) and the library: load and validate the
// cases (or one --script file), select them, build the target connector
// (targets::MakeConnector), run them (conformance::RunCases), print the
// console report with a live line per case, and write the JSON / JUnit /
// HTML reports and the pcap captures (every case with --pcap-dir, else the
// failing ones into rdmapct-failures/); or print the requirement coverage.
//
// Exit status (conformance::ExitStatus): 0 every case passed, warned or was
// skipped; 1 a case failed (a MUST-level expectation missed); 2 usage
// errors (bad flags, unknown fault, invalid case files, an empty
// selection, an unwritable report path) and target errors (unreachable,
// run aborted, cases in error).
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "conformance/case_loader.h"
#include "reference/wire/profile.h"

namespace rdmapct::cli {

struct ConformCommand {
  std::string target = "reference";            // --target URI (targets/target_uri.h)
  wire::Profile profile = wire::Profile::kRfc5040;
  conformance::CaseFilter filter;              // --case, --section, --doc, --level, --tag
  std::vector<std::string> faults;             // --fault NAME (reference target only)
  bool list = false;                           // --list: print the selection, run nothing
  bool coverage = false;                       // --coverage: requirement coverage, run nothing
  bool verbose = false;                        // -v: steps and frames of every case
  bool keep_going = false;                     // never stop early on connection failures
  int jobs = 1;
  std::optional<int> timeout_ms;               // --timeout: default wait of an expectation
  int pause_after_reply_ms = 0;                // --pause-after-reply: quiet before the first FPDU
  std::vector<std::string> quirks;             // --quirk: diagnostic readings of known target bugs
  std::string cases_dir;                       // --cases-dir; empty: the compiled-in tree
  std::vector<std::string> scripts;            // --script FILE: run these files' cases instead
  std::string json_file, junit_file, report_file, pcap_dir;
  std::string tool_version;                    // for reports
  // Colour on the console: nullopt = when `out` is a terminal and NO_COLOR is unset.
  std::optional<bool> color;
};

int RunConform(const ConformCommand& cmd, std::FILE* out, std::FILE* err);

// Every fault switch of the reference target: name, description, the
// requirement ids it violates.
int RunListFaults(std::FILE* out);

// "MUST", "MUST NOT", "MUST_NOT", "must-not", "SHOULD", ... (any case).
std::optional<proto::Level> ParseLevelFlag(std::string_view text);

}  // namespace rdmapct::cli
