// Tests of the field-table codec (field_table.h) that the test-ULP
// convention codecs read and write their layouts with: every width both ways
// at known big-endian octets, and where a truncated or bad field is reported.
#include "reference/wire/field_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>

namespace rdmapct::wire {
namespace {

constexpr LayoutField kOne{"One", 0, 1};
constexpr LayoutField kTwo{"Two", 1, 2};
constexpr LayoutField kFour{"Four", 3, 4};
constexpr LayoutField kSeven{"Seven", 7, 7};
constexpr LayoutField kEight{"Eight", 14, 8};
constexpr std::array<LayoutField, 5> kLayout{kOne, kTwo, kFour, kSeven, kEight};
constexpr std::size_t kLayoutLength = 22;

struct Known {
  const LayoutField* field;
  uint64_t value;
  Bytes octets;  // big-endian, `width` of them
};

const std::array<Known, 5>& KnownFields() {
  static const std::array<Known, 5> known{{
      {&kOne, 0xA5, {0xA5}},
      {&kTwo, 0x1234, {0x12, 0x34}},
      {&kFour, 0xDEADBEEF, {0xDE, 0xAD, 0xBE, 0xEF}},
      {&kSeven, 0x01020304050607, {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07}},
      {&kEight, 0x8877665544332211, {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}},
  }};
  return known;
}

TEST(FieldTableTest, StoresEachWidthBigEndianAtItsOffsetAndLoadsItBack) {
  for (std::size_t start : {std::size_t{0}, std::size_t{5}}) {
    Bytes out(start + kLayoutLength, 0);
    for (const Known& k : KnownFields()) StoreField(out, start, *k.field, k.value);
    for (const Known& k : KnownFields()) {
      SCOPED_TRACE(k.field->name);
      const auto at = out.begin() + static_cast<std::ptrdiff_t>(start + k.field->offset);
      EXPECT_EQ(Bytes(at, at + static_cast<std::ptrdiff_t>(k.field->width)), k.octets);
      EXPECT_EQ(LoadField(out, start, *k.field), k.value);
    }
    EXPECT_TRUE(
        std::all_of(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(start), [](uint8_t b) { return b == 0; }));
  }
}

TEST(FieldTableTest, StoreKeepsOnlyTheLowOctetsOfTheValue) {
  Bytes out(kLayoutLength, 0);
  StoreField(out, 0, kTwo, 0xFFFF1234);
  StoreField(out, 0, kOne, 0x1FF);
  EXPECT_EQ(LoadField(out, 0, kTwo), 0x1234u);
  EXPECT_EQ(LoadField(out, 0, kOne), 0xFFu);
  EXPECT_EQ(out[3], 0);  // nothing written past kTwo
}

TEST(FieldTableTest, FirstTruncatedNamesTheFirstFieldTheDataCannotHold) {
  const Bytes whole(kLayoutLength, 0);
  EXPECT_FALSE(FirstTruncated(whole, 0, 100, kLayout).has_value());
  // Cut inside Four (offset 3, width 4): two of its octets are present.
  const Bytes cut(5, 0);
  auto e = FirstTruncated(cut, 0, 100, kLayout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, DecodeErrorKind::kTruncated);
  EXPECT_STREQ(e->field, "Four");
  EXPECT_EQ(e->offset, 103u);  // base + start + field offset
  EXPECT_EQ(e->value, 2u);     // the octets present
}

TEST(FieldTableTest, TruncatedFieldBeyondTheDataIsReportedWhereTheDataEnds) {
  const Bytes data(10, 0);
  // A block starting at 8 whose Eight field would start at 22: past the end.
  const DecodeError e = TruncatedField(kEight, 8, 1000, data.size());
  EXPECT_STREQ(e.field, "Eight");
  EXPECT_EQ(e.offset, 1010u);
  EXPECT_EQ(e.value, 0u);
  auto first = FirstTruncated(data, 8, 1000, kLayout);
  ASSERT_TRUE(first.has_value());
  EXPECT_STREQ(first->field, "Two");  // One (octet 8) fits, Two (9-10) does not
  EXPECT_EQ(first->offset, 1009u);
  EXPECT_EQ(first->value, 1u);
}

TEST(FieldTableTest, FieldErrorAndBlockReportTheFieldsOffsetPlusBase) {
  const DecodeError e = FieldError(DecodeErrorKind::kInvalidValue, kSeven, 4, 50, 0x42);
  EXPECT_EQ(e.kind, DecodeErrorKind::kInvalidValue);
  EXPECT_STREQ(e.field, "Seven");
  EXPECT_EQ(e.offset, 61u);
  EXPECT_EQ(e.value, 0x42u);

  Bytes data(4 + kLayoutLength, 0);
  StoreField(data, 4, kFour, 0xCAFEF00D);
  const FieldBlock b(data, 4, 50);
  EXPECT_EQ(b.Get(kFour), 0xCAFEF00Du);
  EXPECT_FALSE(b.FirstTruncated(kLayout).has_value());
  const DecodeError be = b.Error(DecodeErrorKind::kReservedNonZero, kSeven, 7);
  EXPECT_EQ(be.offset, e.offset);
  EXPECT_STREQ(be.field, "Seven");
  EXPECT_FALSE(FieldBlock(data, 10, 0).FirstTruncated(kLayout) == std::nullopt);
}

TEST(FieldTableTest, MagicMatchesOnlyAWholeMagicAtTheStart) {
  constexpr std::array<uint8_t, 4> kMagic{0x52, 0x50, 0x43, 0x43};
  EXPECT_TRUE(MagicMatches(Bytes{0x52, 0x50, 0x43, 0x43}, kMagic));
  EXPECT_TRUE(MagicMatches(Bytes{0x52, 0x50, 0x43, 0x43, 0x01}, kMagic));
  EXPECT_FALSE(MagicMatches(Bytes{0x52, 0x50, 0x43}, kMagic));
  EXPECT_FALSE(MagicMatches(Bytes{0x00, 0x52, 0x50, 0x43, 0x43}, kMagic));
}

}  // namespace
}  // namespace rdmapct::wire
