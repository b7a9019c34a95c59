// Helpers shared by describe.cc and describe_rdmap.cc (not a public API).
#pragma once

#include <cstdio>
#include <string>

#include "reference/wire/describe.h"
#include "reference/wire/hex.h"

namespace rdmapct::wire::describe_detail {

// "22 (0x0016)".
inline std::string DecHex(uint64_t v, int digits) { return std::to_string(v) + " (" + HexValue(v, digits) + ")"; }

inline std::string Plural(uint64_t n, const char* unit) { return std::to_string(n) + " " + unit + (n == 1 ? "" : "s"); }

// A whole-octet numeric field.
inline Field Num(std::string name, uint64_t value, std::string text, uint64_t offset, uint64_t length) {
  Field f;
  f.name = std::move(name);
  f.value = std::move(text);
  f.number = value;
  f.offset = offset;
  f.length = length;
  return f;
}

// A bit field of `width` bits at `shift` inside `length` octets at `offset`.
inline Field Bits(std::string name, uint64_t value, std::string text, uint64_t offset, uint64_t length, uint8_t shift,
                  uint8_t width) {
  Field f = Num(std::move(name), value, std::move(text), offset, length);
  f.bit_shift = shift;
  f.bit_width = width;
  return f;
}

// A node grouping other fields.
inline Field Node(std::string name, std::string text, uint64_t offset, uint64_t length) {
  Field f;
  f.name = std::move(name);
  f.value = std::move(text);
  f.offset = offset;
  f.length = length;
  return f;
}

// Raw octets, hexdumped by the renderers.
inline Field Octets(std::string name, ByteSpan data, uint64_t offset, std::string text = {}) {
  Field f = Node(std::move(name), text.empty() ? Plural(data.size(), "octet") : std::move(text), offset, data.size());
  f.octets = Bytes(data.begin(), data.end());
  return f;
}

inline Field Problem(std::string name, std::string text, uint64_t offset, uint64_t length) {
  Field f = Node(std::move(name), std::move(text), offset, length);
  f.problem = true;
  return f;
}

inline const char* YesNo(bool b) { return b ? "1" : "0"; }

}  // namespace rdmapct::wire::describe_detail
