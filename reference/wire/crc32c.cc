#include "reference/wire/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define RDMAPCT_CRC32C_X86 1
#endif

namespace rdmapct::wire {
namespace {

// Reflected CRC-32C polynomial (0x1EDC6F41 bit-reversed). In the reflected
// representation bit 31 is the coefficient of x^0 and bit 0 that of x^31.
constexpr uint32_t kPoly = 0x82F63B78;

// ---- portable slicing-by-8 ------------------------------------------------

using SliceTables = std::array<std::array<uint32_t, 256>, 8>;

constexpr SliceTables MakeSliceTables() {
  SliceTables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  }
  return t;
}

constexpr SliceTables kSlice = MakeSliceTables();

// `reg` is the raw CRC register (not inverted).
uint32_t PortableUpdate(uint32_t reg, const uint8_t* p, std::size_t n) {
  while (n >= 8) {
    const uint32_t lo = LoadLe32(p) ^ reg;
    const uint32_t hi = LoadLe32(p + 4);
    reg = kSlice[7][lo & 0xFF] ^ kSlice[6][(lo >> 8) & 0xFF] ^ kSlice[5][(lo >> 16) & 0xFF] ^ kSlice[4][lo >> 24] ^
          kSlice[3][hi & 0xFF] ^ kSlice[2][(hi >> 8) & 0xFF] ^ kSlice[1][(hi >> 16) & 0xFF] ^ kSlice[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) reg = (reg >> 8) ^ kSlice[0][(reg ^ *p++) & 0xFF];
  return reg;
}

// ---- GF(2) arithmetic modulo P (reflected) ---------------------------------
// Feeding n zero octets into a raw register r yields r * x^(8n) mod P, and
// the register is linear in its start value. Hence, for blocks A and B,
// reg(start, A ++ B) = reg(start, A) * x^(8|B|) + reg(0, B): that is how the
// three hardware streams are joined and how Crc32cCombine works.

constexpr uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;  // b *= x
  }
  return product;
}

// x^(2^k) mod P for k = 0..kPowers-1 (repeated squaring from x^1).
constexpr int kPowers = 72;
constexpr std::array<uint32_t, kPowers> MakeX2k() {
  std::array<uint32_t, kPowers> t{};
  t[0] = 1u << 30;  // x^1
  for (int k = 1; k < kPowers; ++k) t[k] = MultModP(t[k - 1], t[k - 1]);
  return t;
}
constexpr std::array<uint32_t, kPowers> kX2k = MakeX2k();

// x^(8n) mod P.
constexpr uint32_t XPow8n(uint64_t n) {
  uint32_t result = 1u << 31;  // x^0
  for (int k = 3; n != 0; n >>= 1, ++k) {
    if (n & 1) result = MultModP(kX2k[k], result);
  }
  return result;
}

// The linear operator "feed `octets` zero octets" as four byte-indexed
// tables, so applying it costs four lookups.
struct ShiftTable {
  std::array<std::array<uint32_t, 256>, 4> t;
};

constexpr ShiftTable MakeShiftTable(uint64_t octets) {
  ShiftTable s{};
  const uint32_t op = XPow8n(octets);
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) s.t[k][b] = MultModP(op, b << (8 * k));
  }
  return s;
}

[[maybe_unused]] inline uint32_t Shift(const ShiftTable& s, uint32_t reg) {
  return s.t[0][reg & 0xFF] ^ s.t[1][(reg >> 8) & 0xFF] ^ s.t[2][(reg >> 16) & 0xFF] ^ s.t[3][reg >> 24];
}

// ---- SSE4.2 three-stream path ------------------------------------------------

#if RDMAPCT_CRC32C_X86
// Octets per stream in one interleaved block. Long blocks keep the join cost
// (two table shifts) negligible on big buffers; short ones still use three
// streams for 768..24575-octet buffers such as typical FPDUs.
constexpr std::size_t kLongBlock = 8192;
constexpr std::size_t kShortBlock = 256;
constexpr ShiftTable kShiftLong = MakeShiftTable(kLongBlock);
constexpr ShiftTable kShiftShort = MakeShiftTable(kShortBlock);

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Consumes as many whole 3*block chunks from p/n as possible.
__attribute__((target("sse4.2"))) uint32_t ThreeStreams(uint32_t reg, const uint8_t*& p, std::size_t& n,
                                                        std::size_t block, const ShiftTable& shift) {
  while (n >= 3 * block) {
    uint64_t c0 = reg, c1 = 0, c2 = 0;
    const uint8_t* const end = p + block;
    do {
      c0 = _mm_crc32_u64(c0, Load64(p));
      c1 = _mm_crc32_u64(c1, Load64(p + block));
      c2 = _mm_crc32_u64(c2, Load64(p + 2 * block));
      p += 8;
    } while (p < end);
    reg = Shift(shift, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    reg = Shift(shift, reg) ^ static_cast<uint32_t>(c2);
    p += 2 * block;
    n -= 3 * block;
  }
  return reg;
}

__attribute__((target("sse4.2"))) uint32_t HardwareUpdate(uint32_t reg, const uint8_t* p, std::size_t n) {
  // Align the 64-bit loads (an unaligned load that crosses a cache line is slower).
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    reg = _mm_crc32_u8(reg, *p++);
    --n;
  }
  reg = ThreeStreams(reg, p, n, kLongBlock, kShiftLong);
  reg = ThreeStreams(reg, p, n, kShortBlock, kShiftShort);
  uint64_t c = reg;
  for (; n >= 8; p += 8, n -= 8) c = _mm_crc32_u64(c, Load64(p));
  reg = static_cast<uint32_t>(c);
  while (n-- > 0) reg = _mm_crc32_u8(reg, *p++);
  return reg;
}
#endif

bool DetectHardware() {
#if RDMAPCT_CRC32C_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

}  // namespace

bool Crc32cHardwareAvailable() {
  static const bool available = DetectHardware();
  return available;
}

uint32_t Crc32cPortable(uint32_t crc, ByteSpan data) { return ~PortableUpdate(~crc, data.data(), data.size()); }

uint32_t Crc32cHardware(uint32_t crc, ByteSpan data) {
#if RDMAPCT_CRC32C_X86
  if (Crc32cHardwareAvailable()) return ~HardwareUpdate(~crc, data.data(), data.size());
#endif
  return Crc32cPortable(crc, data);
}

uint32_t Crc32cExtend(uint32_t crc, ByteSpan data) { return Crc32cHardware(crc, data); }

uint32_t Crc32c(ByteSpan data) { return Crc32cHardware(0, data); }

uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  // The pre/post inversions of crc_a and crc_b cancel (see the GF(2) note).
  return MultModP(XPow8n(length_b), crc_a) ^ crc_b;
}

}  // namespace rdmapct::wire
