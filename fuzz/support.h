// Helpers shared by the fuzz_*.cc harnesses.
//
// Why not clang's <fuzzer/FuzzedDataProvider.h>: it ships in clang's resource
// directory only (a gcc build of the same harness, which CTest uses to
// replay corpora, cannot find it without a hard-coded LLVM path), and it
// takes integers from the *end* of the input. InputSplitter reads strictly
// front to back, so a seed file reads like the frame it holds: a few
// configuration octets, then wire octets. Corpora therefore mean the same
// thing under every compiler and every libFuzzer version.
//
// Oracles report a broken invariant with FUZZ_CHECK, which prints the
// condition and aborts: libFuzzer records a crash and saves the input;
// the standalone replayer (standalone_main.cc) dies, so CTest fails.
#pragma once

#include <cstddef>
#include <cstdint>

#include "reference/wire/bytes.h"
#include "reference/wire/result.h"

namespace rdmapct::fuzz {

using wire::ByteSpan;

// Splits a fuzzer input into configuration values and byte runs. Reading
// past the end yields zeros and empty spans (never an error), so every
// input, however short, is a valid configuration.
class InputSplitter {
 public:
  InputSplitter(const uint8_t* data, std::size_t size) : p_(data), n_(size) {}
  explicit InputSplitter(ByteSpan data) : InputSplitter(data.data(), data.size()) {}

  std::size_t remaining() const { return n_; }
  bool empty() const { return n_ == 0; }

  uint8_t U8() {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  bool Bool() { return (U8() & 1) != 0; }
  uint16_t U16() {
    const uint16_t hi = U8();
    return static_cast<uint16_t>(hi << 8 | U8());
  }
  uint32_t U32() {
    const uint32_t hi = U16();
    return hi << 16 | U16();
  }
  // Up to `n` octets (fewer at the end of the input).
  ByteSpan Take(std::size_t n) {
    if (n > n_) n = n_;
    ByteSpan out(p_, n);
    p_ += n;
    n_ -= n;
    return out;
  }
  ByteSpan Rest() { return Take(n_); }

 private:
  const uint8_t* p_;
  std::size_t n_;
};

// Prints "<file>:<line>: oracle failed: <what>" and aborts.
[[noreturn]] void OracleFailure(const char* file, int line, const char* what);

// Equal kind, field name (compared as strings), offset and value.
bool SameError(const wire::DecodeError& a, const wire::DecodeError& b);

// Equal length and octets.
bool SameBytes(ByteSpan a, ByteSpan b);

// True when `inner` lies within `outer` (same storage).
bool Within(ByteSpan inner, ByteSpan outer);

}  // namespace rdmapct::fuzz

#define FUZZ_CHECK(cond)                                                    \
  do {                                                                      \
    if (!(cond)) ::rdmapct::fuzz::OracleFailure(__FILE__, __LINE__, #cond); \
  } while (0)
