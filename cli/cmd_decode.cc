// `rdmapct decode`: flags only; the work is RunDecode (cli_decode.h) on top
// of wire::DecodeMpaStream / wire::DescribeSegment.
#include <cstdio>
#include <map>
#include <memory>

#include "cli/cli_decode.h"
#include "cli/commands.h"

namespace rdmapct::cli {

namespace {

constexpr const char* kDecodeHelp =
    "Decode one direction of an MPA byte stream (optionally starting with the MPA\n"
    "Request/Reply Frame) or bare DDP segments, and print every frame with every\n"
    "field by its RFC name (MPA FPDU, DDP Segment, RDMAP, ULP Payload), or --json.\n"
    "\n"
    "Input: FILE, '-' (standard input) or --hex STRING. Hex text may hold whitespace,\n"
    "newlines, '#' comments and 0x prefixes; with --ddp each non-empty line is one\n"
    "segment (a binary file is one segment). --format auto treats *.hex/*.txt and\n"
    "plain-text files as hex, anything else as binary.\n"
    "\n"
    "Framing: --crc and --markers give the negotiated MPA use for this direction (a\n"
    "single direction cannot tell: the peer's Request/Reply decides). Without a\n"
    "handshake the stream must start at the first FPDU of Full Operation (where the\n"
    "first Marker sits). --handshake auto detects the \"MPA ID Re\" key prefix.\n"
    "An opcode the --profile does not define is shown as \"Unknown opcode\", not an\n"
    "error. Example streams: examples/streams/*.hex (each names its decode command).\n"
    "\n"
    "Exit status: 0 all frames decoded; 1 malformed or empty input (every frame\n"
    "before the error is printed, then one 'rdmapct decode: error: <what> at offset\n"
    "<n>' line on stderr; with --continue, CRC/Marker errors and undecodable\n"
    "segments are reported and skipped);\n"
    "2 bad flags or unreadable input.\n"
    "\n"
    "Example: rdmapct decode --mpa --markers off --crc on examples/streams/all-opcodes-commit.hex";

bool OnOff(const std::string& s) { return s == "on"; }

}  // namespace

void RegisterDecode(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub = app.add_subcommand("decode", "Decode an MPA stream or DDP segments, field by field");
  sub->footer(kDecodeHelp);
  // Shared with the callback, which runs after parsing.
  struct State {
    DecodeCommand cmd;
    std::string hex, format = "auto", crc = "on", markers = "off", handshake = "auto", profile = "commit";
    bool mpa = false;
  };
  auto st = std::make_shared<State>();
  sub->add_option("input", st->cmd.input, "input file, or - for standard input");
  CLI::Option* hex = sub->add_option("--hex", st->hex, "the input itself, as hex text");
  sub->add_option("--format", st->format, "input format (default auto)")
      ->check(CLI::IsMember({"auto", "hex", "binary"}));
  CLI::Option* mpa = sub->add_flag("--mpa", st->mpa, "MPA byte stream (default)");
  CLI::Option* ddp = sub->add_flag("--ddp", st->cmd.ddp, "bare DDP segments, no MPA framing");
  mpa->excludes(ddp);
  CLI::Option* crc =
      sub->add_option("--crc", st->crc, "MPA CRC in use (default on)")->check(CLI::IsMember({"on", "off"}));
  CLI::Option* markers = sub->add_option("--markers", st->markers, "MPA Markers in use (default off)")
                             ->check(CLI::IsMember({"on", "off"}));
  CLI::Option* handshake =
      sub->add_option("--handshake", st->handshake, "stream starts with an MPA Request/Reply Frame (default auto)")
          ->check(CLI::IsMember({"auto", "yes", "no"}));
  for (CLI::Option* o : {crc, markers, handshake}) ddp->excludes(o);
  sub->add_option("--profile", st->profile, "rfc5040, rfc7306 or commit (default commit: every opcode)")
      ->check(CLI::IsMember({"rfc5040", "rfc7306", "commit"}));
  sub->add_flag("--json", st->cmd.json, "JSON instead of text");
  sub->add_flag("--continue", st->cmd.options.continue_after_errors,
                "report CRC/Marker errors and undecodable segments, and go on");
  sub->add_flag("-v,--verbose", st->cmd.verbose, "hexdump every payload octet (default: the first 32)");
  sub->add_flag("--offsets", st->cmd.offsets, "print the stream offset and length of every field");
  sub->callback([st, hex, &run] {
    DecodeCommand& cmd = st->cmd;
    if (hex->count() > 0) cmd.hex = st->hex;
    static const std::map<std::string, InputFormat> kFormats = {
        {"auto", InputFormat::kAuto}, {"hex", InputFormat::kHex}, {"binary", InputFormat::kBinary}};
    static const std::map<std::string, wire::HandshakeMode> kHandshakes = {{"auto", wire::HandshakeMode::kAuto},
                                                                           {"yes", wire::HandshakeMode::kPresent},
                                                                           {"no", wire::HandshakeMode::kAbsent}};
    cmd.format = kFormats.at(st->format);
    cmd.options.crc_enabled = OnOff(st->crc);
    cmd.options.markers_enabled = OnOff(st->markers);
    cmd.options.handshake = kHandshakes.at(st->handshake);
    cmd.options.profile = *wire::ParseProfile(st->profile);
    if (cmd.hex.has_value() == !cmd.input.empty()) {
      throw CLI::ValidationError("decode", "give exactly one input: FILE, - or --hex STRING");
    }
    run = [st] { return RunDecode(st->cmd, stdout, stderr); };
  });
}

}  // namespace rdmapct::cli
