// `rdmapct decode`: read a hex or binary MPA stream (or bare DDP segments),
// decode it with wire::DecodeMpaStream / wire::DecodeDdpSegments and print
// every frame (wire::DescribeSegment) as text or JSON.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "reference/wire/describe.h"
#include "reference/wire/profile.h"
#include "reference/wire/stream_decode.h"

namespace rdmapct::cli {

enum class InputFormat { kAuto, kHex, kBinary };

struct DecodeCommand {
  std::string input;               // FILE, or "-" for standard input; empty with --hex
  std::optional<std::string> hex;  // --hex STRING
  InputFormat format = InputFormat::kAuto;
  bool ddp = false;                   // --ddp: bare DDP segments (default --mpa)
  wire::StreamDecodeOptions options;  // profile, CRC, Markers, handshake, --continue
  bool json = false;
  bool verbose = false;  // -v: every payload octet, not only the first 32
  bool offsets = false;  // --offsets: offset and length of every field
};

// Runs the command; frames go to `out`, "error: ..." lines to `err`.
// Returns kExitOk, kExitFail (malformed input: every frame before the error
// is printed first) or kExitUsage (unreadable input).
int RunDecode(const DecodeCommand& cmd, std::FILE* out, std::FILE* err);

// JSON form of a field tree: {"name", "value", "offset", "length",
// "number"?, "bit_shift"/"bit_width"?, "octets"? (hex, first `max_octets`),
// "octets_truncated"?, "problem"?, "children"?}.
nlohmann::ordered_json FieldToJson(const wire::Field& field, std::size_t max_octets);

}  // namespace rdmapct::cli
