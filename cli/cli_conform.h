// `rdmapct conform` and `rdmapct --list-faults`: the glue between the flags
// (cmd_conform.cc, cmd_faults.cc) and conformance::Certify
// (conformance/certify.h), which loads, selects and runs the cases and
// writes the reports and captures. This file only prints: the live line per
// case, the console report, every problem Certify names; and maps the
// CertifyResult to an exit status. --list and --coverage print the
// selection or the requirement coverage instead of running.
//
// Exit status (conformance::ExitStatus): 0 every case passed, warned or was
// skipped; 1 a case failed (a MUST-level expectation missed); 2 usage
// errors (bad flags, unknown fault, invalid case files, an empty
// selection, an unwritable report path) and target errors (unreachable,
// run aborted, cases in error); 3 nothing was tested (every selected case,
// or every selected MUST-level case, was skipped); 130 interrupted (SIGINT /
// SIGTERM: the reports hold the verdicts so far, marked partial).
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/certify.h"
#include "reference/wire/profile.h"

namespace rdmapct::cli {

// The run itself is conformance::CertifyOptions (target, profile,
// selection, faults, reports, captures); the rest is what only the console
// needs.
struct ConformCommand : conformance::CertifyOptions {
  bool list = false;      // --list: print the selection, run nothing
  bool coverage = false;  // --coverage: requirement coverage, run nothing
  // Colour on the console: nullopt = when `out` is a terminal and NO_COLOR is unset.
  std::optional<bool> color;
};

// Runs the command and prints; `result`, if given, receives what Certify
// returned, for drivers that act on the verdicts (replay --against, fuzz
// reproducers) rather than on the exit status. SIGINT / SIGTERM during the
// run interrupt it (cli_interrupt.h).
int RunConform(const ConformCommand& cmd, std::FILE* out, std::FILE* err, conformance::CertifyResult* result = nullptr);

// The exit status of a Certify call (0, 1, 2 or 130 as above).
int ConformExitStatus(const conformance::CertifyResult& r);

// Every fault switch of the reference target: name, description, the
// requirement ids it violates.
int RunListFaults(std::FILE* out);

// "MUST", "MUST NOT", "MUST_NOT", "must-not", "SHOULD", ... (any case).
std::optional<proto::Level> ParseLevelFlag(std::string_view text);

}  // namespace rdmapct::cli
