// CRC-32C (Castagnoli) as MPA uses it for the FPDU CRC field (RFC 5044 §4.4,
// "the CRC32c polynomial in the manner described in the iSCSI Protocol":
// reflected, polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF).
//
// Two implementations compute identical values:
//  - hardware: the SSE4.2 crc32 instruction, three independent streams
//    interleaved (the instruction has latency 3 and throughput 1, so one
//    dependent chain would run at a third of the possible speed); the three
//    partial registers are joined with precomputed "shift by N zero octets"
//    GF(2) operator tables;
//  - portable: slicing-by-8 tables.
// Crc32c/Crc32cExtend pick the hardware path at run time when the CPU has
// SSE4.2 (__builtin_cpu_supports), the portable one otherwise.
//
// All functions take and return *finished* CRC values: Crc32c(a ++ b) ==
// Crc32cExtend(Crc32c(a), b), and Crc32cExtend(0, x) == Crc32c(x). That is
// what a caller needs when the covered octets are not contiguous (e.g. an
// FPDU split over TCP segments or around Markers).
//
// Wire order: MPA sends the CRC least significant octet first (RFC 5044
// Figures 5 and 6: 0x83992352 is sent as 52 23 99 83; decisions D-G2). Use
// StoreCrc32c/LoadCrc32c, never StoreBe32.
#pragma once

#include <cstdint>

#include "reference/wire/bytes.h"

namespace rdmapct::wire {

inline constexpr std::size_t kCrc32cSize = 4;

// CRC-32C of `data` (the dispatching implementation).
uint32_t Crc32c(ByteSpan data);

// Continues a CRC: `crc` is the finished CRC of the octets before `data`
// (0 for none).
uint32_t Crc32cExtend(uint32_t crc, ByteSpan data);

// The portable slicing-by-8 path, whatever the CPU (for tests and benchmarks).
uint32_t Crc32cPortable(uint32_t crc, ByteSpan data);

// The SSE4.2 three-stream path. Falls back to the portable path when
// Crc32cHardwareAvailable() is false, so it is always safe to call.
uint32_t Crc32cHardware(uint32_t crc, ByteSpan data);

// True when this build targets x86-64 and the CPU has SSE4.2.
bool Crc32cHardwareAvailable();

// CRC of a ++ b from crc_a = Crc32c(a), crc_b = Crc32c(b) and b's length,
// without the octets (GF(2) multiplication by x^(8*length_b) mod P).
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

// REQ R5044-4.4-10: the CRC field is sent least significant octet first.
inline void StoreCrc32c(uint8_t* p, uint32_t crc) { StoreLe32(p, crc); }
inline uint32_t LoadCrc32c(const uint8_t* p) { return LoadLe32(p); }
inline void AppendCrc32c(Bytes& out, uint32_t crc) {
  std::size_t at = out.size();
  out.resize(at + kCrc32cSize);
  StoreCrc32c(out.data() + at, crc);
}

}  // namespace rdmapct::wire
