#include "reference/wire/mpa_fpdu.h"

#include <gtest/gtest.h>

#include "reference/wire/crc32c.h"

namespace rdmapct::wire {
namespace {

// The 42-octet ULPDU of RFC 5044 Figures 5 (MSN 1) / 6 (MSN 2).
Bytes FigureUlpdu(uint8_t msn) {
  Bytes u = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, msn, 0, 0, 0, 0};
  u.resize(42, 0);
  return u;
}

// REQ R5044-4.1-05: pad = (4 - (2 + len) mod 4) mod 4; 42 -> 0 (Fig. 5), 16 -> 2 (Fig. 4).
TEST(Fpdu, PadLength_R5044_4_1_05) {
  EXPECT_EQ(FpduPadLength(42), 0u);
  EXPECT_EQ(FpduPadLength(16), 2u);
  EXPECT_EQ(FpduPadLength(0), 2u);
  EXPECT_EQ(FpduPadLength(1), 1u);
  EXPECT_EQ(FpduPadLength(2), 0u);
  EXPECT_EQ(FpduPadLength(3), 3u);
  for (std::size_t n = 0; n < 64; ++n) EXPECT_EQ(FpduLength(n) % 4, 0u) << n;
  EXPECT_EQ(FpduLength(42), 48u);
}

// REQ R5044-4.1-01, R5044-4.1-03, R5044-4.4-10, R5044-4.4-11: layout written by hand.
TEST(Fpdu, EncodesLayoutByteExact_R5044_4_1_01) {
  const Bytes ulpdu = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  const Bytes fpdu = EncodeFpdu(ulpdu);
  ASSERT_EQ(fpdu.size(), 16u);  // 2 + 9 + 1 PAD + 4
  const Bytes covered = {0x00, 0x09, '1', '2', '3', '4', '5', '6', '7', '8', '9', 0x00};
  EXPECT_TRUE(std::equal(covered.begin(), covered.end(), fpdu.begin()));
  const uint32_t crc = Crc32cPortable(0, covered);
  EXPECT_EQ(fpdu[12], crc & 0xFF);  // least significant octet first
  EXPECT_EQ(fpdu[13], (crc >> 8) & 0xFF);
  EXPECT_EQ(fpdu[14], (crc >> 16) & 0xFF);
  EXPECT_EQ(fpdu[15], crc >> 24);
}

// REQ R5044-4.4-09, R5044-4.1-07: CRC field present (zero here) with CRCs off.
TEST(Fpdu, CrcFieldPresentAndZeroWhenDisabled_R5044_4_4_09) {
  const Bytes fpdu = EncodeFpdu(FigureUlpdu(1), {.crc_enabled = false});
  ASSERT_EQ(fpdu.size(), 48u);
  EXPECT_EQ(LoadCrc32c(fpdu.data() + 44), 0u);
  auto v = DecodeFpdu(fpdu, /*crc_enabled=*/false);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->computed_crc, 0u);
}

// REQ R5044-4.1-07, R5044-7.1.1-13: with CRCs off any CRC value is valid.
TEST(Fpdu, AnyCrcAcceptedWhenDisabled_R5044_7_1_1_13) {
  const Bytes fpdu = EncodeFpdu(FigureUlpdu(1), {.crc_enabled = false, .crc_xor = 0xDEADBEEF});
  auto v = DecodeFpdu(fpdu, false);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->received_crc, 0xDEADBEEFu);
}

TEST(Fpdu, RoundTripEveryShortLength) {
  for (std::size_t n = 0; n <= 70; ++n) {
    Bytes u(n);
    for (std::size_t i = 0; i < n; ++i) u[i] = static_cast<uint8_t>(i * 7 + 1);
    const Bytes fpdu = EncodeFpdu(u);
    ASSERT_EQ(fpdu.size(), FpduLength(n));
    auto v = DecodeFpdu(fpdu, true);
    ASSERT_TRUE(v.ok()) << v.error().Describe();
    EXPECT_EQ(v->ulpdu_length, n);
    EXPECT_EQ(Bytes(v->ulpdu.begin(), v->ulpdu.end()), u);
    EXPECT_EQ(v->pad.size(), FpduPadLength(n));
    EXPECT_EQ(v->size, fpdu.size());
    EXPECT_EQ(v->received_crc, v->computed_crc);
  }
}

// REQ R5044-4.1-04: PAD content ignored except for the CRC.
TEST(Fpdu, NonZeroPadAcceptedWhenCrcCoversIt_R5044_4_1_04) {
  const Bytes u(16, 0x11);
  const Bytes fpdu = EncodeFpdu(u, {.pad_octet = 0xA5});
  EXPECT_EQ(fpdu[18], 0xA5);
  EXPECT_EQ(fpdu[19], 0xA5);
  auto v = DecodeFpdu(fpdu, true);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->pad[0], 0xA5);
  // The CRC covers the PAD: flipping a PAD octet is a CRC error.
  Bytes bad = fpdu;
  bad[19] = 0;
  EXPECT_FALSE(DecodeFpdu(bad, true).ok());
}

// REQ R5044-4.4-14, R5044-4.4-15: mismatch at the CRC field's offset.
TEST(Fpdu, CrcMismatchReportsFieldOffsetAndBothValues_R5044_4_4_15) {
  Bytes fpdu = EncodeFpdu(FigureUlpdu(1));
  const uint32_t good = LoadCrc32c(fpdu.data() + 44);
  fpdu[10] ^= 0x01;  // one payload bit
  auto v = DecodeFpdu(fpdu, true);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kind, DecodeErrorKind::kCrcMismatch);
  EXPECT_STREQ(v.error().field, "CRC");
  EXPECT_EQ(v.error().offset, 44u);
  EXPECT_EQ(v.error().value >> 32, good);
  EXPECT_EQ(v.error().value & 0xFFFFFFFF, Crc32c(ByteSpan(fpdu).first(44)));
  // A big-endian store of the right value is also a mismatch (decisions D-G2).
  Bytes be = EncodeFpdu(FigureUlpdu(1));
  StoreBe32(be.data() + 44, good);
  EXPECT_FALSE(DecodeFpdu(be, true).ok());
}

TEST(Fpdu, TruncationNamesFieldAndOffset) {
  const Bytes fpdu = EncodeFpdu(Bytes(3, 0x22));  // 2 + 3 + 3 PAD + 4 = 12
  ASSERT_EQ(fpdu.size(), 12u);
  for (std::size_t n = 0; n < fpdu.size(); ++n) {
    auto v = DecodeFpdu(ByteSpan(fpdu).first(n), true);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().kind, DecodeErrorKind::kTruncated);
    const char* field = n < 2 ? "ULPDU_Length" : n < 5 ? "ULPDU" : n < 8 ? "PAD" : "CRC";
    const std::size_t off = n < 2 ? 0 : n < 5 ? 2 : n < 8 ? 5 : 8;
    EXPECT_STREQ(v.error().field, field) << n;
    EXPECT_EQ(v.error().offset, off) << n;
  }
}

// REQ R5044-4.5-02, R5044-4.5-03, R5044-4.5-08, R5044-3-04
TEST(Mulpdu, Formulas_R5044_4_5_02_03) {
  EXPECT_EQ(Mulpdu(1460, true), 1442u);   // 1460 - (6 + 4*3 + 0)
  EXPECT_EQ(Mulpdu(1460, false), 1454u);  // 1460 - (6 + 0)
  EXPECT_EQ(Mulpdu(1461, false), 1454u);  // 1461 - (6 + 1)
  EXPECT_EQ(Mulpdu(512, true), 502u);     // 512 - (6 + 4 + 0)
  EXPECT_EQ(Mulpdu(513, true), 498u);     // 513 - (6 + 8 + 1)
  EXPECT_EQ(Mulpdu(8960, true), 8882u);   // 8960 - (6 + 4*18 + 0)
  EXPECT_EQ(Mulpdu(88, false), 128u);     // never below 128
  EXPECT_EQ(Mulpdu(0, true), 128u);
  EXPECT_EQ(Mulpdu(65535, false), 64768u);  // never above 64768
}

}  // namespace
}  // namespace rdmapct::wire
