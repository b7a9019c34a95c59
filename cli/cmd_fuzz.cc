// `rdmapct fuzz [--target URI]`, `fuzz show`, `fuzz repro`, `fuzz campaign`:
// flags only; the work is in cli_fuzz.cc and cli_campaign.cc.
#include <memory>

#include "cli/cli_fuzz.h"
#include "cli/commands.h"

namespace rdmapct::cli {

namespace {

constexpr const char* kFuzzHelp =
    "Without a subcommand: send mutated fuzz sessions (proto/session.proto: valid\n"
    "messages of every type from templates, header overrides, MPA framing\n"
    "corruptions, raw octets, TCP write boundaries) to a target for --time and check\n"
    "every oracle. --target reference runs the in-process reference (with --fault\n"
    "switches) with every oracle of the session harness, including octet-exact\n"
    "differential checks against a fault-free twin. Any other target (tcp://HOST:PORT,\n"
    "plugin:PATH) is a black box: no answer, a connection lost without a Terminate\n"
    "(crash), silence (hang), the invariant oracles (Terminate shape, Read Response\n"
    "order and length, framing) and divergence from the fault-free reference's\n"
    "reaction (frame kinds, Terminate codes, closing). A target that stops\n"
    "answering (no MPA Reply) is waited for (--restart-wait); --restart-command\n"
    "restarts it (e.g. a VM) when it does not come back by itself.\n"
    "\n"
    "Every distinct finding (deduplicated by oracle, violated requirement and the shape\n"
    "of the diverging step; a finding its reproducer does not reproduce is flaky and not counted)\n"
    "goes to OUT/findings/<oracle>-<hash>/: session.pb and session.txt (the input),\n"
    "repro.textproto (a conformance script: `rdmapct conform --script FILE --target\n"
    "...`), and the script replayed once against the target: replay.txt, replay.json\n"
    "and a pcap. OUT/stats.json has the counts.\n"
    "\n"
    "Bounds: the in-process reference runs its sessions in a child process; a\n"
    "session over --session-time (default 10s) or --session-memory (default 384 MB\n"
    "RSS) is cut and reported as a `resource` finding with its reproducer, so a run\n"
    "stays under 512 MB RSS. --time is honoured within a second (sessions are cut\n"
    "at it). A live target's session is cut at --session-time too.\n"
    "\n"
    "A status line every 10 s: sessions, sessions/s, findings, distinct, RSS.\n"
    "SIGINT or SIGTERM ends the run: stats.json, summary.md and the findings so far\n"
    "are written and marked \"interrupted\".\n"
    "\n"
    "Exit status: 0 no finding (flaky ones aside); 1 findings; 2 bad flags, a --profile\n"
    "the target does not claim, or a target that never answered; 130 interrupted.\n"
    "\n"
    "Examples: rdmapct fuzz --target reference --fault wrong-terminate-code --time 20s\n"
    "          rdmapct fuzz --target tcp://127.0.0.1:4791 --profile rfc5040 --time 1h --out siw-fuzz\n"
    "          rdmapct fuzz show corpus/fuzz_session/rfc5040_mixed\n"
    "          rdmapct fuzz campaign --harness all --time 8h --jobs 2 --out /var/lib/rdmapct";

constexpr const char* kCampaignHelp =
    "Run the libFuzzer harnesses (build them with fuzz/build.sh; binaries from\n"
    "--fuzzers, $RDMAPCT_FUZZERS or build-fuzz/out) one after another within --time,\n"
    "each in fork mode with --jobs workers, its .dict, .options and seed corpus\n"
    "(corpus/<harness>, corpus/regressions/<harness>). OUT/corpus/<harness> keeps the\n"
    "corpus between campaigns (merged after each run), so a nightly campaign resumes.\n"
    "Crash, timeout, OOM and leak artifacts are replayed for a signature (the session\n"
    "oracle's finding, or the sanitizer report's kind and top frames), deduplicated\n"
    "against every earlier campaign (OUT/findings.json), minimized, and written to\n"
    "OUT/findings/<harness>-<hash>/ with reproduce.sh (fuzz_session: also a\n"
    "conformance script and its pcap). OUT/stats.json and OUT/summary.md report exec/s,\n"
    "coverage, corpus sizes and findings with their first-seen times.\n"
    "\n"
    "A status line every 10 s per harness (execs, exec/s, findings, distinct known,\n"
    "RSS). SIGINT or SIGTERM stops the running harness, collects its artifacts and\n"
    "writes stats.json and summary.md marked \"interrupted\".\n"
    "\n"
    "Exit status: 0 no new finding; 1 new findings; 2 bad flags or no fuzzer binaries;\n"
    "130 interrupted.";

}  // namespace

void RegisterFuzz(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub =
      app.add_subcommand("fuzz", "Fuzz a target with structure-aware sessions; show, reproduce, run campaigns");
  sub->footer(kFuzzHelp);
  sub->require_subcommand(0, 1);
  struct State {
    FuzzRunCommand cmd;
    std::string time = "60s", profile, restart_wait = "30s", session_time = "10s";
    long runs = 0;
  };
  auto st = std::make_shared<State>();
  sub->add_option("--target", st->cmd.target, "reference (default, in-process) | tcp://HOST:PORT | plugin:PATH");
  sub->add_option("--fault", st->cmd.faults, "reference fault switch (repeatable; rdmapct --list-faults)")
      ->allow_extra_args(false);
  sub->add_option("--time", st->time, "how long (e.g. 90s, 10m, 1h; default 60s)");
  CLI::Option* runs = sub->add_option("--runs", st->runs, "at most this many sessions")->check(CLI::PositiveNumber);
  sub->add_option("--seed", st->cmd.seed, "random seed (default 1)");
  sub->add_option("--profile", st->profile,
                  "sessions of this profile only: rfc5040, rfc7306 or commit (a live target: default and must match "
                  "what its Advertisement claims)")
      ->check(CLI::IsMember({"rfc5040", "rfc7306", "commit"}));
  sub->add_option("--out", st->cmd.out_dir, "findings and stats.json go here (default rdmapct-fuzz)");
  sub->add_option("--restart-wait", st->restart_wait,
                  "wait this long for a target that stopped answering (default 30s)");
  sub->add_option("--restart-command", st->cmd.restart_command,
                  "shell command that restarts the target when it stays silent for --restart-wait (at most 3 times)");
  sub->add_option("--settle", st->cmd.settle_ms,
                  "most ms of quiet that ends an answer no fence can (fenced: 4x the target's reaction; default 30)")
      ->check(CLI::Range(1, 10000));
  sub->add_option("--jobs", st->cmd.jobs,
                  "live targets: run sessions on this many connections at once; the session stream and the "
                  "findings do not depend on it (default 1)")
      ->check(CLI::Range(1, 64));
  sub->add_flag("--no-fence", st->cmd.no_fence,
                "end every write's answer over TCP by --settle quiet, for a target that cannot answer the "
                "zero-length Read fence (docs/target-convention.md 2.5)");
  sub->add_option("--pause-after-reply", st->cmd.pause_after_reply_ms,
                  "ms of quiet between a live target's MPA Reply and the first FPDU, also in reproducer replays "
                  "(default 0; see docs/reports/siw S7)")
      ->check(CLI::Range(0, 60'000));
  sub->add_option("--session-time", st->session_time,
                  "cut a session running longer as a `resource` finding (default 10s)");
  sub->add_option("--session-memory", st->cmd.session_memory_mb,
                  "MB of RSS at which an in-process session is cut as a `resource` finding (default 384)")
      ->check(CLI::Range(32, 1 << 20));
  sub->add_flag("-q,--quiet", st->cmd.quiet, "only the final line");
  sub->add_flag("--stop-at-first", st->cmd.stop_at_first, "end the run at the first finding");

  CLI::App* show =
      sub->add_subcommand("show", "Print fuzz inputs as readable text (FuzzSession text format, or a hexdump)");
  auto show_files = std::make_shared<std::vector<std::string>>();
  show->add_option("file", *show_files, "inputs (binary FuzzSession, or raw harness input)")->required();
  show->callback([show_files, &run] { run = [show_files] { return RunFuzzShow(*show_files, stdout, stderr); }; });

  CLI::App* repro =
      sub->add_subcommand("repro", "Turn a fuzz_session input into a conformance script (and replay it for a pcap)");
  auto rc = std::make_shared<FuzzReproCommand>();
  rc->out_dir = "rdmapct-repro";
  repro->add_option("file", rc->input, "a FuzzSession (binary or text format)")->required();
  repro->add_option("--out", rc->out_dir,
                    "directory for the script, the pcap and the replay report (default rdmapct-repro)");
  repro->add_option("--fault", rc->faults, "faults of the in-process reference it failed on (repeatable)")
      ->allow_extra_args(false);
  repro->add_option("--target", rc->target,
                    "replay the script against this target (default: the reference with the faults)");
  auto no_replay = std::make_shared<bool>(false);
  repro->add_flag("--no-replay", *no_replay, "only write the script");
  repro->callback([rc, no_replay, &run] {
    rc->replay = !*no_replay;
    run = [rc] { return RunFuzzRepro(*rc, stdout, stderr); };
  });

  CLI::App* camp =
      sub->add_subcommand("campaign", "Run the libFuzzer harnesses within a time budget: corpus, findings, stats");
  camp->footer(kCampaignHelp);
  struct CampaignState {
    CampaignCommand cmd;
    std::string time = "10m";
    bool no_minimize = false;
  };
  auto cs = std::make_shared<CampaignState>();
  camp->add_option("--harness", cs->cmd.harnesses, "fuzz_* name or all (repeatable; default all)")
      ->allow_extra_args(false);
  camp->add_option("--time", cs->time, "whole campaign budget (e.g. 8h; default 10m)");
  camp->add_option("--jobs", cs->cmd.jobs, "libFuzzer fork workers per harness (default 1)")->check(CLI::Range(1, 256));
  camp->add_option("--out", cs->cmd.out_dir,
                   "campaign directory, reused by the next campaign (default rdmapct-campaign)");
  camp->add_option("--fuzzers", cs->cmd.fuzzers_dir,
                   "directory of the fuzz_* binaries (default $RDMAPCT_FUZZERS or build-fuzz/out)");
  camp->add_option("--source", cs->cmd.source_dir,
                   "source tree with corpus/ and build-fuzz/ (default: the one build/share/rdmapct links to)");
  camp->add_option("--fault", cs->cmd.faults, "reference faults for fuzz_session (repeatable)")
      ->allow_extra_args(false);
  camp->add_flag("--no-minimize", cs->no_minimize, "keep findings as found");
  camp->add_flag("-q,--quiet", cs->cmd.quiet, "only the final line");
  camp->callback([cs, &run] {
    const auto t = ParseDuration(cs->time);
    if (!t || t->count() <= 0) throw CLI::ValidationError("--time", "expected a duration like 90s, 10m or 8h");
    cs->cmd.time = *t;
    cs->cmd.minimize = !cs->no_minimize;
    run = [cs] { return RunCampaign(cs->cmd, stdout, stderr); };
  });

  sub->callback([sub, st, runs, &run] {
    if (!sub->get_subcommands().empty()) return;
    const auto t = ParseDuration(st->time);
    if (!t || t->count() <= 0) throw CLI::ValidationError("--time", "expected a duration like 90s, 10m or 1h");
    const auto w = ParseDuration(st->restart_wait);
    if (!w) throw CLI::ValidationError("--restart-wait", "expected a duration like 30s");
    const auto session = ParseDuration(st->session_time);
    if (!session || session->count() <= 0) throw CLI::ValidationError("--session-time", "expected a duration like 10s");
    st->cmd.time = *t;
    st->cmd.restart_wait = *w;
    st->cmd.session_time = *session;
    if (runs->count() > 0) st->cmd.runs = st->runs;
    if (!st->profile.empty()) st->cmd.profile = wire::ParseProfile(st->profile);
    run = [st] { return RunFuzzRun(st->cmd, stdout, stderr); };
  });
}

}  // namespace rdmapct::cli
