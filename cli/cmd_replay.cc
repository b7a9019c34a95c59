// `rdmapct replay FILE --decode|--audit`: flags only; the work is
// RunReplayDecode / RunReplayAudit (cli_replay.h) on top of
// capture::DecodeCaptureFile and replay::AuditCaptureFile.
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
    "'rdmapct replay: warning: ...' / 'rdmapct replay: error: ...' lines.\n"
    "\n"
    "Exit status: 0 decoded without errors; 1 a decoding error was found or the file\n"
    "is cut short (what it holds is decoded first); 2 bad flags, or a file that\n"
    "cannot be read as a capture.\n"
    "\n"
    "--audit runs both endpoints of every iWARP connection through the reference\n"
    "model as passive observers: what each side receives is checked against the\n"
    "receiver's rules, what it sends against the sender's rules, its Terminates\n"
    "against the Terminate the first error it received requires (code, M/D/R), and\n"
    "CRCs and Markers against RFC 5044. One line per violation on stdout: connection,\n"
    "direction, capture frame, stream offset, level and requirement id, what was seen\n"
    "and what was expected; then a summary per connection. Exit status: 0 no\n"
    "violation; 1 violations, or the file is cut short (the frames before the cut\n"
    "are audited); 2 bad flags or a file that cannot be read as a capture.\n"
    "\n"
    "--as-case OUT.textproto writes a connection (--connection N, default the first\n"
    "iWARP one) as a conformance script: the Initiator's ULPDUs as captured, the\n"
    "Responder's answers as expectations; `rdmapct conform --script OUT.textproto\n"
    "--target URI` runs it. --against URI runs that script at once against a live\n"
    "target and reports every step where its answers differ from the capture's.\n"
    "STags and offsets are sent as captured (not remapped).\n"
    "\n"
    "Ctrl-C (SIGINT) or SIGTERM stops reading and decoding: what was printed stays,\n"
    "stderr says \"INTERRUPTED, partial\", and the exit status is 130 (--against: as\n"
    "`conform`, the reports marked partial).\n"
    "\n"
    "Examples: rdmapct replay pcaps/rfc5040_7.2_read-req-invalid-src-stag.pcap --decode\n"
    "          rdmapct replay pcaps/audit_violations.pcap --audit";

}  // namespace

void RegisterReplay(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub = app.add_subcommand("replay", "Decode or audit the iWARP traffic of a pcap/pcapng capture");
  sub->footer(kReplayHelp);
  struct State {
    ReplayCommand cmd;
    std::string profile = "commit";
    bool decode = false;
    bool audit = false;
    std::string as_case, against, side = "initiator";
    std::size_t connection = 0;
  };
  auto st = std::make_shared<State>();
  sub->add_option("file", st->cmd.file, "the capture (pcap or pcapng)")->required();
  sub->add_flag("--decode", st->decode, "decode every MPA frame, field by field");
  sub->add_flag("--audit", st->audit, "check both sides of every connection against the RFCs (reference model)");
  sub->add_option("--as-case", st->as_case, "write the connection as a conformance script (textproto) to this file");
  sub->add_option("--against", st->against, "replay the Initiator's side against this target (tcp://HOST:PORT, ...)");
  sub->add_option("--side", st->side, "the side replayed by --against / --as-case (initiator only)")
      ->check(CLI::IsMember({"initiator"}));
  sub->add_flag("--json", st->cmd.json, "JSON instead of text");
  sub->add_option("--profile", st->profile, "rfc5040, rfc7306 or commit (default commit: every opcode)")
      ->check(CLI::IsMember({"rfc5040", "rfc7306", "commit"}));
  CLI::Option* conn = sub->add_option("--connection", st->connection, "only this connection (its index, from 0)");
  sub->add_flag("-v,--verbose", st->cmd.verbose, "hexdump every payload octet (default: the first 32)");
  sub->add_flag("--offsets", st->cmd.offsets, "print the stream offset and length of every field");
  sub->callback([st, conn, &run] {
    const int modes = int{st->decode} + int{st->audit} + int{!st->as_case.empty()} + int{!st->against.empty()};
    if (modes != 1) {
      throw CLI::ValidationError("replay", "give exactly one of --decode, --audit, --as-case FILE and --against URI");
    }
    if (conn->count() > 0) st->cmd.connection = st->connection;
    st->cmd.profile = *wire::ParseProfile(st->profile);
    if (!st->as_case.empty()) {
      run = [st] { return RunReplayAsCase(st->cmd, st->as_case, stdout, stderr); };
    } else if (!st->against.empty()) {
      run = [st] { return RunReplayAgainst(st->cmd, st->against, stdout, stderr); };
    } else if (st->audit) {
      run = [st] { return RunReplayAudit(st->cmd, stdout, stderr); };
    } else {
      run = [st] { return RunReplayDecode(st->cmd, stdout, stderr); };
    }
  });
}

}  // namespace rdmapct::cli
