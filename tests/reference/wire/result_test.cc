#include "reference/wire/result.h"

#include <gtest/gtest.h>

#include "reference/wire/bytes.h"

namespace rdmapct::wire {
namespace {

TEST(ByteReader, ReportsTruncationWithFieldAndAbsoluteOffset) {
  const uint8_t buf[] = {0x12, 0x34, 0x56};
  ByteReader r(ByteSpan(buf, 3), /*base=*/100);
  DecodeError err{};
  uint16_t v16 = 0;
  ASSERT_TRUE(r.Read16("ULPDU_Length", v16, err));
  EXPECT_EQ(v16, 0x1234);
  uint32_t v32 = 0;
  ASSERT_FALSE(r.Read32("STag", v32, err));
  EXPECT_EQ(err.kind, DecodeErrorKind::kTruncated);
  EXPECT_STREQ(err.field, "STag");
  EXPECT_EQ(err.offset, 102u);
  EXPECT_EQ(err.Describe(), "truncated in STag at offset 102 (value 0x1)");
}

TEST(ByteWriter, WritesBigEndian) {
  Bytes out;
  ByteWriter w(out);
  w.Put16(0x0102);
  w.Put32(0x03040506);
  w.Put64(0x0708090A0B0C0D0EULL);
  EXPECT_EQ(out, (Bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
  EXPECT_EQ(LoadBe64(out.data() + 6), 0x0708090A0B0C0D0EULL);
}

TEST(Result, CarriesValueOrError) {
  Result<int> good = 7;
  Result<int> bad = DecodeError{DecodeErrorKind::kInvalidValue, "RV", 1, 2};
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().At(10).offset, 11u);
}

}  // namespace
}  // namespace rdmapct::wire
