// Hex text <-> octets, for hand-written and generated example streams
// (examples/streams/*.hex) and for hexdumps in decoded output.
//
// Accepted text: hex digit pairs in either case, separated or not by
// whitespace; `#` starts a comment that runs to the end of the line; a
// token may start with an optional "0x"/"0X". Octet boundaries ignore token
// boundaries ("4d5 0" is 4d 50): only the total digit count must be even.
//
// Errors are DecodeErrors whose offset is the character offset in the text:
//   kInvalidValue  kFieldHexDigit       at the bad character, value = its code;
//   kLengthMismatch kFieldHexDigitCount at the digit left without a partner,
//                                       value = the digit count.
// DescribeHexError turns them into "invalid hex digit 'g' at offset 17
// (line 2, column 5)".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

inline constexpr const char* kFieldHexDigit = "hex digit";
inline constexpr const char* kFieldHexDigitCount = "hex digit count";

// All octets of `text`.
Result<Bytes> ParseHex(std::string_view text);

// One octet string per line holding at least one digit (lines that are
// empty, blank or only a comment are skipped). Each line needs an even digit
// count of its own.
struct HexLine {
  std::size_t line = 0;         // 1-based line number in the text
  std::size_t text_offset = 0;  // character offset of the line's first character
  Bytes octets;
};
Result<std::vector<HexLine>> ParseHexLines(std::string_view text);

// "invalid hex digit 'g' at offset 17" / "odd number of hex digits (37),
// the last one at offset 52"; with `text`, " (line L, column C)" is added.
// Other errors fall back to DecodeError::Describe().
std::string DescribeHexError(const DecodeError& e, std::string_view text = {});

// True when every octet of `data` is printable ASCII, TAB, CR or LF: what a
// hex file can contain. Used to tell a hex file from a binary one.
bool LooksLikeText(ByteSpan data);

// "4d 50 41 20" (lowercase, one space between octets); with `group` 4,
// "4d504120 49"; with 0, "4d50412049" (no spaces).
std::string HexOctets(ByteSpan data, std::size_t group = 1);

// "0x1f" (lowercase); zero-padded to `min_digits` digits: "0x001f". The one
// way the tree writes a number in hex.
std::string HexValue(uint64_t value, int min_digits = 0);

// Classic hexdump lines: "0000  4d 50 41 20 49 44 20 52  65 71 20 46 72 61 6d 65  MPA ID Req Frame".
// `first_index` is the number printed for data[0] (a position inside
// whatever the caller dumps).
std::vector<std::string> HexDumpLines(ByteSpan data, std::size_t first_index = 0);

// `data` as lines of `per_line` octets ("4d 50 41 ..."), each ending in '\n'.
std::string FormatHexLines(ByteSpan data, std::size_t per_line = 16);

}  // namespace rdmapct::wire
