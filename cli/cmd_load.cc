// `rdmapct load`: flags only; the work is RunLoadCommand (cli_load.h) on top
// of targets::RunLoad.
#include <memory>

#include "cli/cli_load.h"
#include "cli/commands.h"

namespace rdmapct::cli {

namespace {

constexpr const char* kLoadHelp =
    "Measure a target's throughput: RDMA Writes or Sends of --size octets from\n"
    "--connections concurrent MPA connections (Rev 1 Requests, C = 1 with --crc on,\n"
    "C = 0 with --crc off; a target like `rdmapct serve --crc optional` then runs\n"
    "without CRCs), for --seconds or --messages, whichever ends first.\n"
    "\n"
    "The target must follow the test-ULP convention (docs/target-convention.md).\n"
    "Writes go to its first rw (else wo) region, cycling over whole-message slots;\n"
    "the target must stay silent. Sends use the receive buffers it advertises: at\n"
    "most that many per connection (they are never reposted), then a fresh\n"
    "connection; each must come back as a matching Event Record. A message counts\n"
    "only once its connection closed cleanly (our FIN, the target's FIN). A\n"
    "Terminate, an unexpected frame or a timeout (--timeout) is an error.\n"
    "\n"
    "Output: one line, messages/s and MB/s (10^6 octets of payload per second).\n"
    "Ctrl-C (SIGINT) or SIGTERM stops sending; the connections close as usual and\n"
    "the line, marked \"INTERRUPTED, partial:\", gives the figures of what they carried.\n"
    "Exit status: 0 a clean run; 2 bad flags, an unreachable target or an error;\n"
    "130 interrupted.\n"
    "\n"
    "Example: rdmapct serve --listen 127.0.0.1:4791 --crc optional --quiet &\n"
    "         rdmapct load --target tcp://127.0.0.1:4791 --op send --crc off --connections 4";

}  // namespace

void RegisterLoad(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub = app.add_subcommand("load", "Measure a target's Write / Send throughput (load generator)");
  sub->footer(kLoadHelp);
  struct State {
    LoadCommand cmd;
    std::string op = "write", crc = "on", profile = "rfc5040";
    double seconds = 5;
    int timeout_ms = 5000;
  };
  auto st = std::make_shared<State>();
  targets::LoadOptions& o = st->cmd.options;
  sub->add_option("--target", st->cmd.target, "tcp://HOST:PORT (or reference[?options], plugin:PATH)")->required();
  sub->add_option("--op", st->op, "write (default) or send")->check(CLI::IsMember({"write", "send"}));
  sub->add_option("--size", o.message_size, "payload octets per message (default 4096)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{16} << 20));
  sub->add_option("--crc", st->crc, "on (default) or off: the C bit of the MPA Request")
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_option("--connections", o.connections, "concurrent connections (default 1)")->check(CLI::Range(1, 1024));
  sub->add_option("--seconds", st->seconds, "stop sending after this long (default 5; 0: only --messages)")
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_option("--messages", o.max_messages, "stop after this many messages in all (default: no limit)");
  sub->add_option("--batch", o.batch, "messages per socket write (default 16)")->check(CLI::Range(1, 4096));
  sub->add_option("--mulpdu", o.mulpdu, "largest ULPDU sent (default 64768: one FPDU per message up to ~63 KiB)");
  sub->add_option("--timeout", st->timeout_ms,
                  "ms to wait for connect, Reply, a write and the final close (default 5000)")
      ->check(CLI::Range(1, 3600000));
  sub->add_option("--profile", st->profile, "rfc5040 (default), rfc7306 or commit: decodes what the target sends")
      ->check(CLI::IsMember({"rfc5040", "rfc7306", "commit"}));
  sub->callback([st, &run] {
    targets::LoadOptions& opts = st->cmd.options;
    opts.op = st->op == "send" ? targets::LoadOp::kSend : targets::LoadOp::kWrite;
    opts.crc = st->crc == "on";
    opts.duration = std::chrono::milliseconds(static_cast<long long>(st->seconds * 1000));
    opts.io_timeout = std::chrono::milliseconds(st->timeout_ms);
    opts.profile = *wire::ParseProfile(st->profile);
    run = [st] { return RunLoadCommand(st->cmd, stdout, stderr); };
  });
}

}  // namespace rdmapct::cli
