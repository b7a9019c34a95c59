// `rdmapct serve`: flags only; the work is RunServe (cli_serve.h) on top of
// targets::TcpServer.
#include <memory>

#include "cli/cli_serve.h"
#include "cli/commands.h"

namespace rdmapct::cli {

namespace {

constexpr const char* kServeHelp =
    "Run the reference target as an iWARP MPA Responder on a TCP port: one target\n"
    "(Connection Serial, Keep Memory and the previous-connection outcome carry over\n"
    "between connections), one fresh session per TCP connection, many connections at\n"
    "once. Certify it, or check the suite itself, with\n"
    "  rdmapct conform --target tcp://HOST:PORT --profile P\n"
    "using the same --profile (and --fault, to see the suite fail the cases citing it).\n"
    "\n"
    "MPA: --mpa-rev 2 (default) accepts Rev 1 and Rev 2 with RFC 6581; --mpa-rev 1\n"
    "accepts Rev 1 only. --crc on (default) sets C in the Reply; optional leaves C = 0\n"
    "and uses CRCs only when the Request sets C; off rejects a Request with C = 1\n"
    "(R = 1). --markers on sets M in the Reply (Markers wanted from the peer); Markers\n"
    "toward the peer follow its Request's M.\n"
    "\n"
    "Output: 'listening on ADDRESS' on stdout (port 0 picks a free port and prints it);\n"
    "on stderr one line per connection and per Terminate (--quiet: none). Limits per\n"
    "connection: 1 MiB of unsent output (reading stops until the peer reads), reset\n"
    "after --idle-timeout seconds without progress or 10 s after the target's FIN.\n"
    "\n"
    "--connect HOST:PORT instead: the reference target is the MPA Initiator and\n"
    "connects to a suite listening there (rdmapct conform --listen HOST:PORT), one\n"
    "connection at a time, again as soon as each has ended; its Request carries the\n"
    "Advertisement, and a rejecting Reply with a Connect Directive sets the options\n"
    "of its next Request (docs/target-convention.md section 10). It stops after\n"
    "--connections N, or when the suite refused it for 10 s (exit 2 if it never\n"
    "connected).\n"
    "\n"
    "Stop with SIGINT or SIGTERM. Exit status: 0 stopped by SIGINT or SIGTERM; 2 bad\n"
    "flags or an address that cannot be bound.\n"
    "\n"
    "Example: rdmapct serve --listen 127.0.0.1:4791 --profile rfc7306";

}  // namespace

void RegisterServe(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub =
      app.add_subcommand("serve", "Serve the reference target over TCP (MPA Responder, or Initiator with --connect)");
  sub->footer(kServeHelp);
  struct State {
    ServeCommand cmd;
    std::string profile = "rfc5040", crc = "on", markers = "off";
  };
  auto st = std::make_shared<State>();
  ServeCommand& c = st->cmd;
  CLI::Option* listen =
      sub->add_option("--listen", c.listen, "HOST:PORT or [IPv6]:PORT to listen on (port 0: any free port)");
  CLI::Option* connect =
      sub->add_option("--connect", c.connect, "HOST:PORT of a listening suite: be the MPA Initiator instead");
  listen->excludes(connect);
  sub->add_option("--connections", c.connections,
                  "with --connect: stop after this many connections (default: no limit)")
      ->check(CLI::Range(0, 1'000'000'000));
  sub->add_option("--profile", st->profile, "rfc5040 (default), rfc7306 or commit")
      ->check(CLI::IsMember({"rfc5040", "rfc7306", "commit"}));
  sub->add_option("--fault", c.faults, "fault switch (repeatable; rdmapct --list-faults)")->allow_extra_args(false);
  sub->add_option("--mpa-rev", c.mpa_rev, "highest MPA Rev accepted: 1 or 2 (default 2)")->check(CLI::IsMember({1, 2}));
  sub->add_option("--crc", st->crc, "on (default), optional or off")->check(CLI::IsMember({"on", "off", "optional"}));
  sub->add_option("--markers", st->markers, "on or off (default): M bit of the Reply")
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_option("--max-connections", c.max_connections, "connections open at once (default 64)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--idle-timeout", c.idle_timeout_s, "reset a connection idle this many seconds (default 60)")
      ->check(CLI::Range(1, 86400));
  sub->add_flag("--quiet", c.quiet, "no per-connection or per-Terminate log lines");
  sub->callback([st, &run] {
    ServeCommand& cmd = st->cmd;
    if (cmd.listen.empty() && cmd.connect.empty()) throw CLI::RequiredError("--listen or --connect");
    cmd.profile = *wire::ParseProfile(st->profile);
    cmd.crc = st->crc == "on" ? CrcPolicy::kOn : st->crc == "optional" ? CrcPolicy::kOptional : CrcPolicy::kOff;
    cmd.markers = st->markers == "on";
    run = [st] { return RunServe(st->cmd, stdout, stderr); };
  });
}

}  // namespace rdmapct::cli
