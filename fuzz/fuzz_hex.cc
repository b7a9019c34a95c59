// Hex text parser (hex.h): example streams and user-supplied .hex files are
// untrusted text. The input is the text. Oracles:
//  - errors are the two documented ones, at a character of the text
//    (kInvalidValue at a character that is no hex digit, with its code;
//    kLengthMismatch at a digit, with an odd digit count), and
//    DescribeHexError can always describe them;
//  - HexOctets / FormatHexLines of what ParseHex returned parse back to the
//    same octets (ParseHexLines of FormatHexLines gives one line per row);
//  - ParseHexLines succeeds only if ParseHex does, and its lines, in order,
//    concatenate to ParseHex's octets, with increasing line numbers and
//    offsets inside the text;
//  - HexDumpLines gives one line per 16 octets.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "fuzz/support.h"
#include "reference/wire/hex.h"

namespace {

using namespace rdmapct::wire;
using rdmapct::fuzz::SameBytes;

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

void CheckError(const DecodeError& e, std::string_view text) {
  FUZZ_CHECK(e.offset < text.size());
  if (e.kind == DecodeErrorKind::kInvalidValue) {
    FUZZ_CHECK(std::strcmp(e.field, kFieldHexDigit) == 0);
    FUZZ_CHECK(!IsHexDigit(text[e.offset]) && e.value == static_cast<uint8_t>(text[e.offset]));
  } else {
    FUZZ_CHECK(e.kind == DecodeErrorKind::kLengthMismatch);
    FUZZ_CHECK(std::strcmp(e.field, kFieldHexDigitCount) == 0);
    FUZZ_CHECK(IsHexDigit(text[e.offset]) && e.value % 2 == 1);
  }
  FUZZ_CHECK(!DescribeHexError(e, text).empty());
  FUZZ_CHECK(!DescribeHexError(e).empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto all = ParseHex(text);
  if (!all.ok()) {
    CheckError(all.error(), text);
  } else {
    const Bytes& octets = *all;
    FUZZ_CHECK(octets.size() <= size / 2);
    auto again = ParseHex(HexOctets(octets));
    FUZZ_CHECK(again.ok() && *again == octets);
    const std::size_t per_line = size == 0 ? 16 : 1 + data[0] % 32;
    const std::string formatted = FormatHexLines(octets, per_line);
    auto rows = ParseHexLines(formatted);
    FUZZ_CHECK(rows.ok() && rows->size() == (octets.size() + per_line - 1) / per_line);
    FUZZ_CHECK(HexDumpLines(octets).size() == (octets.size() + 15) / 16);
  }

  auto lines = ParseHexLines(text);
  if (!lines.ok()) {
    CheckError(lines.error(), text);
    if (!all.ok()) FUZZ_CHECK(lines.error().offset <= all.error().offset);
    return 0;
  }
  FUZZ_CHECK(all.ok());
  std::size_t at = 0, prev_line = 0, prev_offset = 0;
  for (const HexLine& l : *lines) {
    FUZZ_CHECK(l.line > prev_line && (prev_line == 0 || l.text_offset > prev_offset));
    FUZZ_CHECK(l.text_offset < size && !l.octets.empty());
    FUZZ_CHECK(at + l.octets.size() <= all->size());
    FUZZ_CHECK(SameBytes(l.octets, ByteSpan(*all).subspan(at, l.octets.size())));
    at += l.octets.size();
    prev_line = l.line;
    prev_offset = l.text_offset;
  }
  FUZZ_CHECK(at == all->size());
  (void)LooksLikeText(ByteSpan(data, size));
  return 0;
}
