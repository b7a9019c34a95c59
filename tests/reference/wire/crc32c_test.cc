#include "reference/wire/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string_view>

namespace rdmapct::wire {
namespace {

ByteSpan Span(std::string_view s) { return ByteSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

Bytes Pattern(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// Figure 5 of RFC 5044: the CRC covers the leading Marker, ULPDU_Length and
// the 42-octet ULPDU (no PAD). Written by hand from the hex dump.
Bytes Figure5Covered() {
  Bytes b = {0x00, 0x00, 0x00, 0x00,   // Marker (FPDUPTR 0)
             0x00, 0x2a,               // ULPDU_Length 42
             0x41, 0x43,               // DDP / RDMAP control
             0x00, 0x00, 0x00, 0x00,   // reserved (no STag)
             0x00, 0x00, 0x00, 0x00,   // QN 0
             0x00, 0x00, 0x00, 0x01,   // MSN 1
             0x00, 0x00, 0x00, 0x00};  // MO 0
  b.resize(b.size() + 24, 0);          // 24 octets of Send data
  return b;
}

// Figure 6: second FPDU, with the Marker (FPDUPTR 0x14) inside the ULPDU.
Bytes Figure6Covered() {
  Bytes b = {0x00, 0x2a, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
             0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14};  // Marker at stream offset 0x200
  b.resize(b.size() + 24, 0);
  return b;
}

using CrcFn = uint32_t (*)(uint32_t, ByteSpan);
struct Impl {
  const char* name;
  CrcFn fn;
};
const Impl kImpls[] = {{"portable", &Crc32cPortable}, {"hardware", &Crc32cHardware}, {"dispatch", &Crc32cExtend}};

TEST(Crc32c, CheckValue123456789) {
  for (const Impl& impl : kImpls) {
    EXPECT_EQ(impl.fn(0, Span("123456789")), 0xE3069283u) << impl.name;
  }
  EXPECT_EQ(Crc32c(Span("123456789")), 0xE3069283u);
  EXPECT_EQ(Crc32c(ByteSpan()), 0u);
}

// RFC 3720 Appendix B.4 iSCSI digest vectors (RFC 5044 §4.4 uses the iSCSI CRC).
TEST(Crc32c, Rfc3720AppendixB4Vectors) {
  Bytes zeros(32, 0x00), ones(32, 0xFF), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<uint8_t>(i);
    down[i] = static_cast<uint8_t>(31 - i);
  }
  for (const Impl& impl : kImpls) {
    EXPECT_EQ(impl.fn(0, zeros), 0x8A9136AAu) << impl.name;
    EXPECT_EQ(impl.fn(0, ones), 0x62A8AB43u) << impl.name;
    EXPECT_EQ(impl.fn(0, up), 0x46DD794Eu) << impl.name;
    EXPECT_EQ(impl.fn(0, down), 0x113FDB5Cu) << impl.name;
  }
}

// REQ R5044-4.4-T01, R5044-4.4-10: Figure 5 CRC is 0x83992352, sent 52 23 99 83.
TEST(Crc32c, Rfc5044Figure5_R5044_4_4_T01) {
  const Bytes covered = Figure5Covered();
  ASSERT_EQ(covered.size(), 0x30u);
  for (const Impl& impl : kImpls) EXPECT_EQ(impl.fn(0, covered), 0x83992352u) << impl.name;
  uint8_t wire[4];
  StoreCrc32c(wire, Crc32c(covered));
  EXPECT_EQ(wire[0], 0x52);
  EXPECT_EQ(wire[1], 0x23);
  EXPECT_EQ(wire[2], 0x99);
  EXPECT_EQ(wire[3], 0x83);
  EXPECT_EQ(LoadCrc32c(wire), 0x83992352u);
}

// REQ R5044-4.4-T02, R5044-4.3-02: Figure 6, Marker inside the FPDU is covered.
TEST(Crc32c, Rfc5044Figure6_R5044_4_4_T02) {
  const Bytes covered = Figure6Covered();
  ASSERT_EQ(covered.size(), 0x21cu - 0x1ecu);
  Bytes out;
  AppendCrc32c(out, Crc32c(covered));
  EXPECT_EQ(out, (Bytes{0x84, 0x92, 0x58, 0x98}));
}

TEST(Crc32c, HardwareMatchesPortableForEveryLengthAndMisalignment) {
  if (!Crc32cHardwareAvailable()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  const Bytes src = Pattern(1024 + 16, 7);
  alignas(64) static uint8_t buf[1024 + 16 + 64];
  for (std::size_t misalign = 0; misalign < 16; ++misalign) {
    std::memcpy(buf + misalign, src.data(), 1024);
    for (std::size_t len = 0; len <= 1024; ++len) {
      ByteSpan s(buf + misalign, len);
      ASSERT_EQ(Crc32cHardware(0, s), Crc32cPortable(0, s)) << "len " << len << " misalign " << misalign;
      // A non-trivial start value exercises the register hand-over.
      ASSERT_EQ(Crc32cHardware(0x12345678, s), Crc32cPortable(0x12345678, s));
    }
  }
}

// Sizes around the three-stream block boundaries (3*256 and 3*8192 octets).
TEST(Crc32c, HardwareMatchesPortableAcrossStreamBlockSizes) {
  if (!Crc32cHardwareAvailable()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  const Bytes src = Pattern(200000, 11);
  for (std::size_t len : {767u, 768u, 769u, 1535u, 1536u, 24575u, 24576u, 24577u, 49159u, 65536u, 100003u, 200000u}) {
    for (std::size_t misalign : {0u, 3u}) {
      ByteSpan s(src.data() + misalign, len - misalign);
      EXPECT_EQ(Crc32cHardware(0, s), Crc32cPortable(0, s)) << len;
    }
  }
}

TEST(Crc32c, ExtendOverAnySplitEqualsWhole) {
  const Bytes data = Pattern(3000, 3);
  const uint32_t whole = Crc32c(data);
  for (std::size_t cut : {0u, 1u, 7u, 8u, 255u, 768u, 1500u, 2999u, 3000u}) {
    ByteSpan all(data);
    EXPECT_EQ(Crc32cExtend(Crc32c(all.first(cut)), all.subspan(cut)), whole) << cut;
    EXPECT_EQ(Crc32cPortable(Crc32cPortable(0, all.first(cut)), all.subspan(cut)), whole) << cut;
  }
}

TEST(Crc32c, CombineEqualsConcatenation) {
  const Bytes data = Pattern(70000, 5);
  ByteSpan all(data);
  for (std::size_t cut : {0u, 1u, 13u, 512u, 4096u, 69999u, 70000u}) {
    const uint32_t a = Crc32c(all.first(cut));
    const uint32_t b = Crc32c(all.subspan(cut));
    EXPECT_EQ(Crc32cCombine(a, b, all.size() - cut), Crc32c(all)) << cut;
  }
  // Combining with an empty second part is the identity.
  EXPECT_EQ(Crc32cCombine(0xDEADBEEF, 0, 0), 0xDEADBEEFu);
}

}  // namespace
}  // namespace rdmapct::wire
