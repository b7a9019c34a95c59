// `rdmapct replay FILE --decode`: flags only; the work is RunReplayDecode
// (cli_replay.h) on top of capture::DecodeCaptureFile.
#include <cstdio>
#include <memory>

#include "cli/cli_replay.h"
#include "cli/commands.h"

namespace rdmapct::cli {

namespace {

constexpr const char* kReplayHelp =
    "Decode the iWARP traffic of a capture (pcap or pcapng; link types Ethernet with\n"
    "or without VLAN tags, Linux cooked v1/v2, raw IP, BSD loopback; IPv4 and IPv6):\n"
    "every TCP connection is reassembled, the MPA Request/Reply Frames are found on\n"
    "any port (they decide the Initiator and the CRC and Markers of each direction),\n"
    "and every MPA frame is printed with its capture frame number, connection and\n"
    "direction, and every field by its RFC name (the trees of `rdmapct decode`).\n"
    "Without the handshake (a capture started mid-connection) or after a gap, FPDU\n"
    "boundaries are found again by their CRCs.\n"
    "\n"
    "Warnings (frames that cannot be parsed, TCP gaps and conflicting retransmissions,\n"
    "streams that cannot be resynchronised) and decoding errors go to stderr as\n"
    "'warning: ...' / 'error: ...' lines.\n"
    "\n"
    "Exit status: 0 decoded without errors; 1 a decoding error was found or the file\n"
    "is cut short (what it holds is decoded first); 2 bad flags, or a file that\n"
    "cannot be read as a capture.\n"
    "\n"
    "Example: rdmapct replay pcaps/rfc5040-read-request.pcap --decode";

}  // namespace

void RegisterReplay(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub = app.add_subcommand("replay", "Decode the iWARP traffic of a pcap/pcapng capture");
  sub->footer(kReplayHelp);
  struct State {
    ReplayCommand cmd;
    std::string profile = "commit";
    bool decode = false;
    std::size_t connection = 0;
  };
  auto st = std::make_shared<State>();
  sub->add_option("file", st->cmd.file, "the capture (pcap or pcapng)")->required();
  sub->add_flag("--decode", st->decode, "decode every MPA frame, field by field (required for now)");
  sub->add_flag("--json", st->cmd.json, "JSON instead of text");
  sub->add_option("--profile", st->profile, "rfc5040, rfc7306 or commit (default commit: every opcode)")
      ->check(CLI::IsMember({"rfc5040", "rfc7306", "commit"}));
  CLI::Option* conn = sub->add_option("--connection", st->connection, "only this connection (its index, from 0)");
  sub->add_flag("-v,--verbose", st->cmd.verbose, "hexdump every payload octet (default: the first 32)");
  sub->add_flag("--offsets", st->cmd.offsets, "print the stream offset and length of every field");
  sub->callback([st, conn, &run] {
    if (!st->decode) {
      throw CLI::ValidationError("replay", "give --decode (replaying a capture against a target is not implemented)");
    }
    if (conn->count() > 0) st->cmd.connection = st->connection;
    st->cmd.profile = *wire::ParseProfile(st->profile);
    run = [st] { return RunReplayDecode(st->cmd, stdout, stderr); };
  });
}

}  // namespace rdmapct::cli
