#include "reference/wire/hex.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

namespace rdmapct::wire {
namespace {

constexpr int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// What each character is to the scanner: a digit's value (0-15), kSpace,
// kComment or kOther. Looked up once per character instead of the dozen
// comparisons of DigitValue and IsSpace: the scanner runs over whole files
// (and, in the coverage-instrumented fuzz build, every comparison is a callback).
constexpr int8_t kOther = -1, kSpace = -2, kComment = -3;
constexpr std::array<int8_t, 256> kCharClass = [] {
  std::array<int8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    const char ch = static_cast<char>(c);
    t[static_cast<std::size_t>(c)] = ch == '#' ? kComment : IsSpace(ch) ? kSpace : static_cast<int8_t>(DigitValue(ch));
  }
  return t;
}();

// Digits of text[begin, end) appended to `out`; the last digit's offset and
// the count let the caller report an odd count where it happens.
struct Scan {
  std::size_t digits = 0;
  std::size_t last_digit_offset = 0;
};

bool ScanRange(std::string_view text, std::size_t begin, std::size_t end, Bytes& out, Scan& scan, DecodeError& err) {
  bool token_start = true;
  int high = -1;  // pending high nibble
  for (std::size_t i = begin; i < end; ++i) {
    const char c = text[i];
    const int8_t cls = kCharClass[static_cast<uint8_t>(c)];
    if (cls < 0) {
      if (cls == kOther) {
        err = DecodeError{DecodeErrorKind::kInvalidValue, kFieldHexDigit, i, static_cast<uint8_t>(c)};
        return false;
      }
      if (cls == kComment) i = std::min(end, text.find('\n', i));  // the newline ends the comment
      token_start = true;
      continue;
    }
    // An optional 0x prefix only at the start of a token, so that "00 0x" is
    // an error rather than a silently dropped octet.
    if (token_start && c == '0' && i + 1 < end && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
      ++i;
      token_start = false;
      continue;
    }
    token_start = false;
    ++scan.digits;
    scan.last_digit_offset = i;
    if (high < 0) {
      high = cls;
    } else {
      out.push_back(static_cast<uint8_t>(high << 4 | cls));
      high = -1;
    }
  }
  if (high >= 0) {
    err = DecodeError{DecodeErrorKind::kLengthMismatch, kFieldHexDigitCount, scan.last_digit_offset, scan.digits};
    return false;
  }
  return true;
}

std::string Printable(uint64_t code) {
  char buf[16];
  if (code >= 0x20 && code < 0x7F && code != '\'') {
    std::snprintf(buf, sizeof buf, "'%c'", static_cast<char>(code));
  } else {
    std::snprintf(buf, sizeof buf, "'\\x%02llx'", static_cast<unsigned long long>(code & 0xFF));
  }
  return buf;
}

}  // namespace

Result<Bytes> ParseHex(std::string_view text) {
  Bytes out;
  out.reserve(text.size() / 2);
  Scan scan;
  DecodeError err{};
  if (!ScanRange(text, 0, text.size(), out, scan, err)) return err;
  return out;
}

Result<std::vector<HexLine>> ParseHexLines(std::string_view text) {
  std::vector<HexLine> lines;
  std::size_t begin = 0;
  for (std::size_t number = 1; begin < text.size(); ++number) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    HexLine line{number, begin, {}};
    Scan scan;
    DecodeError err{};
    if (!ScanRange(text, begin, end, line.octets, scan, err)) return err;
    if (scan.digits > 0) lines.push_back(std::move(line));
    begin = end + 1;
  }
  return lines;
}

std::string DescribeHexError(const DecodeError& e, std::string_view text) {
  std::string s;
  if (std::strcmp(e.field, kFieldHexDigit) == 0) {
    s = "invalid hex digit " + Printable(e.value) + " at offset " + std::to_string(e.offset);
  } else if (std::strcmp(e.field, kFieldHexDigitCount) == 0) {
    s = "odd number of hex digits (" + std::to_string(e.value) + "), the last one at offset " +
        std::to_string(e.offset);
  } else {
    return e.Describe();
  }
  if (!text.empty() && e.offset < text.size()) {
    std::size_t line = 1, line_start = 0;
    for (std::size_t nl = text.find('\n'); nl < e.offset; nl = text.find('\n', nl + 1)) {
      ++line;
      line_start = nl + 1;
    }
    s += " (line " + std::to_string(line) + ", column " + std::to_string(e.offset - line_start + 1) + ")";
  }
  return s;
}

bool LooksLikeText(ByteSpan data) {
  for (uint8_t b : data) {
    if ((b < 0x20 || b > 0x7E) && b != '\t' && b != '\r' && b != '\n') return false;
  }
  return true;
}

std::string HexOctets(ByteSpan data, std::size_t group) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const std::size_t spaces = group == 0 || data.empty() ? 0 : (data.size() - 1) / group;
  std::string s(data.size() * 2 + spaces, ' ');
  const std::size_t per_group = group == 0 ? data.size() + 1 : group;  // group 0: one group
  std::size_t at = 0, in_group = 0;
  for (uint8_t b : data) {
    if (in_group == per_group) {
      ++at;  // the space
      in_group = 0;
    }
    s[at++] = kDigits[b >> 4];
    s[at++] = kDigits[b & 0xF];
    ++in_group;
  }
  return s;
}

std::string HexValue(uint64_t value, int min_digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", min_digits, static_cast<unsigned long long>(value));
  return buf;
}

std::vector<std::string> HexDumpLines(ByteSpan data, std::size_t first_index) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::vector<std::string> lines;
  lines.reserve((data.size() + 15) / 16);
  for (std::size_t at = 0; at < data.size(); at += 16) {
    const ByteSpan row = data.subspan(at, std::min<std::size_t>(16, data.size() - at));
    // "0000  " + 16 "xx " columns with an extra space after the eighth + " " + ASCII.
    char head[24];
    const int n = std::snprintf(head, sizeof head, "%04zx  ", first_index + at);
    std::string line(head, static_cast<std::size_t>(n));
    const std::size_t hex_at = line.size();
    line.append(16 * 3 + 1 + 1, ' ');  // the ASCII column stays aligned on a short last row
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::size_t col = hex_at + 3 * i + (i >= 8 ? 1 : 0);
      line[col] = kDigits[row[i] >> 4];
      line[col + 1] = kDigits[row[i] & 0xF];
    }
    for (uint8_t b : row) line.push_back(b >= 0x20 && b < 0x7F ? static_cast<char>(b) : '.');
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string FormatHexLines(ByteSpan data, std::size_t per_line) {
  std::string s;
  if (per_line == 0) per_line = 16;
  for (std::size_t at = 0; at < data.size(); at += per_line) {
    s += HexOctets(data.subspan(at, std::min(per_line, data.size() - at)));
    s.push_back('\n');
  }
  return s;
}

}  // namespace rdmapct::wire
