// `rdmapct conform`: flags only; the work is RunConform (cli_conform.h) on
// top of conformance::RunCases and the report renderers.
#include <memory>

#include "cli/cli_conform.h"
#include "cli/commands.h"

namespace rdmapct::cli {

namespace {

constexpr const char* kConformHelp =
    "Run the conformance cases (conformance/cases/<doc>/<section>_<slug>.textproto)\n"
    "against a target acting as MPA Responder, and grade every case from the case's\n"
    "own expectations: PASS, WARN (a SHOULD-level miss, or a registered Terminate\n"
    "code outside the accept-set), FAIL (a MUST / MUST NOT miss), SKIP (the target\n"
    "lacks what the case needs, or the case is not in the profile), ERROR (the target\n"
    "could not be judged).\n"
    "\n"
    "Targets: reference[?k=v&...] (the in-process reference model), plugin:PATH[?config],\n"
    "tcp://HOST:PORT. --fault NAME runs the reference target with a fault switch\n"
    "(rdmapct --list-faults); the suite must then fail the cases that cite it.\n"
    "\n"
    "The target as MPA Initiator (docs/target-convention.md section 10): cases with a\n"
    "`listen` step (tag initiator) wait for the target to connect to the suite, once\n"
    "per case. --listen HOST:PORT makes the suite listen there, next to --target, so\n"
    "one run certifies both roles (e.g. --target tcp://T:4791 --listen 0.0.0.0:4792,\n"
    "with the target started as `rdmapct serve --connect SUITE:4792`). The in-process\n"
    "reference connects by itself; without either, those cases are skipped.\n"
    "\n"
    "Profile: rfc5040 (default: the base protocol every iWARP target implements),\n"
    "rfc7306 or commit. The profiles are not cumulative (the COMMIT opcode width\n"
    "changes the RDMAP Control Field), so a target is judged under the one profile it\n"
    "implements; run the command once per profile to cover several. Cases outside\n"
    "the profile are listed as skipped.\n"
    "\n"
    "Selection: --case ID|GLOB, --section 7.2 (also 7.2.x), --doc rfc5040, --level MUST,\n"
    "--tag alignment; each repeatable; the kinds combine with AND. --script FILE runs\n"
    "the cases of that textproto file (e.g. a fuzz reproducer) instead of the tree.\n"
    "\n"
    "Output: the console report on stdout (grouped by document and section, the\n"
    "reason, expected vs actual and a reproduce command for every case that did not\n"
    "pass; -v adds every step and every frame, decoded and hex-dumped), a live line\n"
    "per case on stderr; --json, --junit and --report write the JSON, JUnit XML and\n"
    "HTML certification reports (docs/reports.md). --coverage prints which cases\n"
    "cite each MUST / SHOULD-level requirement instead of running (with --json FILE:\n"
    "as JSON).\n"
    "\n"
    "Captures: --pcap-dir DIR writes DIR/<case id, '/' -> '_'>.pcap for every case,\n"
    "synthetic Ethernet/IPv4/TCP packets (suite 10.0.0.1, target 10.0.0.2:5040) that\n"
    "Wireshark and tshark decode as iWARP (MPA, DDP, RDMAP). A case that fails or\n"
    "ends in an error after exchanging frames always gets one: without --pcap-dir in\n"
    "rdmapct-failures/ next to the first of --report, --json, --junit, else in the\n"
    "current directory (--failure-pcap-dir DIR: in DIR). The console and every report\n"
    "name the file.\n"
    "\n"
    "Interrupts: the first Ctrl-C (SIGINT) finishes the cases in flight and starts no\n"
    "more, the second (or a SIGTERM) abandons them, a third exits at once. The console and\n"
    "every requested report are still written, with the verdicts so far, marked\n"
    "\"INTERRUPTED, partial\" and listing the cases not run.\n"
    "\n"
    "Exit status: 0 every case passed, warned or was skipped, and something was\n"
    "tested; 1 a case failed (a MUST-level expectation missed); 2 bad flags, invalid\n"
    "case files, an empty selection, an unreachable target, an aborted run or a case\n"
    "in error; 3 nothing was tested (every selected case, or every selected MUST-level\n"
    "case, was skipped): never a pass; 130 interrupted (SIGINT or SIGTERM).\n"
    "\n"
    "Example: rdmapct conform --target reference --report report.html --junit junit.xml";

}  // namespace

namespace {

// How the suite reads a live target: a pause after the Reply, the fence, the
// quiet, diagnostic readings of known target bugs.
void AddTargetReadingOptions(CLI::App& sub_app, ConformCommand& c) {
  CLI::App* sub = &sub_app;
  sub->add_option("--pause-after-reply", c.pause_after_reply_ms,
                  "ms of quiet between the target's MPA Reply and the first FPDU (default 0; see docs/reports/siw S7)")
      ->check(CLI::Range(0, 60'000));
  sub->add_flag("--no-fence", c.no_fence,
                "over TCP, let every `expect nothing` wait its quiet (--quiet) instead of ending it at the fence's "
                "answer (for a target that cannot answer a zero-length RDMA Read; docs/target-convention.md 2.5)");
  sub->add_option_function<std::string>(
         "--quiet", [&c](const std::string& v) { c.fixed_quiet = v == "fixed"; },
         "over TCP, how long an `expect nothing` no fence can end waits: adaptive (default) = 8 times the target's "
         "slowest reaction in the run, 20 ms at least, the step's window at most; fixed = the step's whole window "
         "(docs/target-convention.md 2.5)")
      ->check(CLI::IsMember({"adaptive", "fixed"}));
  sub->add_option("--quirk", c.quirks,
                  "read the target through a known bug, for diagnosis only (repeatable): terminate-bitfields = its "
                  "Terminate Control uses little-endian bit-field order (Linux siw, docs/reports/siw S1)")
      ->check(CLI::IsMember({"terminate-bitfields"}))
      ->allow_extra_args(false);
}

}  // namespace

void RegisterConform(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub = app.add_subcommand("conform", "Run the conformance suite against a target");
  sub->footer(kConformHelp);
  struct State {
    ConformCommand cmd;
    std::string profile = "rfc5040";
    std::vector<std::string> levels;
    int timeout = 0;
  };
  auto st = std::make_shared<State>();
  ConformCommand& c = st->cmd;
  sub->add_option("--target", c.target,
                  "reference[?options] | plugin:PATH[?config] | tcp://HOST:PORT (default reference)");
  sub->add_option("--listen", c.listen, "HOST:PORT where the target connects as MPA Initiator (listen-step cases)");
  sub->add_option("--profile", st->profile, "rfc5040 (default), rfc7306 or commit")
      ->check(CLI::IsMember({"rfc5040", "rfc7306", "commit"}));
  sub->add_option("--case", c.filter.ids, "case id or glob (repeatable)")->allow_extra_args(false);
  sub->add_option("--section", c.filter.sections, "RFC section, e.g. 7.2 (repeatable)")->allow_extra_args(false);
  sub->add_option("--doc", c.filter.documents, "document: rfc5040, rfc7306, commit, rfc5041, rfc5044, rfc6581")
      ->allow_extra_args(false);
  sub->add_option("--level", st->levels, "MUST, MUST_NOT, SHOULD, SHOULD_NOT or MAY (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--tag", c.filter.tags, "case tag, e.g. alignment (repeatable)")->allow_extra_args(false);
  sub->add_flag("--list", c.list, "list the selected cases and exit");
  sub->add_flag("--coverage", c.coverage, "print the requirement coverage and exit");
  sub->add_option("--jobs", c.jobs, "cases in flight at once (default 1)")->check(CLI::Range(1, 256));
  CLI::Option* timeout =
      sub->add_option("--timeout", st->timeout, "default wait of an expectation and of the MPA Reply, ms")
          ->check(CLI::Range(1, 3'600'000));
  AddTargetReadingOptions(*sub, c);
  sub->add_flag("-v,--verbose", c.verbose, "every step and frame of every case");
  sub->add_option("--pcap-dir", c.pcap_dir, "write one pcap capture per case into DIR (created if missing)");
  sub->add_option("--failure-pcap-dir", c.failure_pcap_dir,
                  "without --pcap-dir: write the captures of failing cases into DIR (default: rdmapct-failures/ "
                  "next to the first report)");
  sub->add_option("--junit", c.junit_file, "write a JUnit XML report");
  sub->add_option("--json", c.json_file, "write the JSON report (with --coverage: the coverage)");
  sub->add_option("--report", c.report_file, "write the HTML certification report");
  sub->add_option("--fault", c.faults, "reference target fault switch (repeatable; rdmapct --list-faults)")
      ->allow_extra_args(false);
  sub->add_flag("--keep-going", c.keep_going, "do not stop after repeated connection failures");
  sub->add_option("--cases-dir", c.cases_dir,
                  "case tree (default: conformance/cases of the data directory, see rdmapct --help)");
  sub->add_option("--script", c.scripts, "run the cases of this textproto file instead (repeatable)")
      ->allow_extra_args(false)
      ->check(CLI::ExistingFile);
  sub->callback([st, timeout, &run] {
    ConformCommand& cmd = st->cmd;
    cmd.profile = *wire::ParseProfile(st->profile);
    for (const std::string& l : st->levels) {
      const std::optional<proto::Level> level = ParseLevelFlag(l);
      if (!level)
        throw CLI::ValidationError("--level", "unknown level '" + l + "' (MUST, MUST_NOT, SHOULD, SHOULD_NOT, MAY)");
      cmd.filter.levels.push_back(*level);
    }
    if (timeout->count() > 0) cmd.timeout_ms = st->timeout;
    if (cmd.list && cmd.coverage) throw CLI::ValidationError("conform", "--list and --coverage exclude each other");
    if (!cmd.pcap_dir.empty() && !cmd.failure_pcap_dir.empty()) {
      throw CLI::ValidationError("conform", "--pcap-dir and --failure-pcap-dir exclude each other");
    }
    if (!cmd.scripts.empty() && !cmd.cases_dir.empty()) {
      throw CLI::ValidationError("conform", "--script and --cases-dir exclude each other");
    }
    cmd.tool_version = RDMAPCT_VERSION;
    run = [st] { return RunConform(st->cmd, stdout, stderr); };
  });
}

}  // namespace rdmapct::cli
