// Shared helpers for the harnesses (support.h). The library also fixes the
// set of project layers every harness links.
#include "fuzz/support.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rdmapct::fuzz {

void OracleFailure(const char* file, int line, const char* what) {
  std::fprintf(stderr, "%s:%d: oracle failed: %s\n", file, line, what);
  std::fflush(stderr);
  std::abort();
}

bool SameError(const wire::DecodeError& a, const wire::DecodeError& b) {
  const bool same_field =
      a.field == b.field || (a.field != nullptr && b.field != nullptr && std::strcmp(a.field, b.field) == 0);
  return a.kind == b.kind && same_field && a.offset == b.offset && a.value == b.value;
}

bool SameBytes(ByteSpan a, ByteSpan b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

bool Within(ByteSpan inner, ByteSpan outer) {
  if (inner.empty()) return true;
  const auto in = reinterpret_cast<std::uintptr_t>(inner.data());
  const auto out = reinterpret_cast<std::uintptr_t>(outer.data());
  return in >= out && in + inner.size() <= out + outer.size();
}

}  // namespace rdmapct::fuzz
