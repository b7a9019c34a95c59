#include "reference/wire/hex.h"

#include <gtest/gtest.h>

namespace rdmapct::wire {
namespace {

TEST(ParseHex, DigitsInEitherCaseWithWhitespaceCommentsAndPrefixes) {
  auto r = ParseHex("# header line\n4d 50\tA0  # trailing comment\n0x20 0Xff\r\nAb");
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, (Bytes{0x4D, 0x50, 0xA0, 0x20, 0xFF, 0xAB}));
}

TEST(ParseHex, OctetsMayStraddleTokens) {
  auto r = ParseHex("4d5 0");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (Bytes{0x4D, 0x50}));
}

TEST(ParseHex, EmptyAndCommentOnlyTextIsNoOctets) {
  EXPECT_TRUE(ParseHex("")->empty());
  EXPECT_TRUE(ParseHex("  # nothing\n\n# here")->empty());
}

TEST(ParseHex, InvalidDigitNamesTheCharacterAndItsOffset) {
  auto r = ParseHex("4d 50 41 20 49 4g");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kInvalidValue);
  EXPECT_STREQ(r.error().field, kFieldHexDigit);
  EXPECT_EQ(r.error().offset, 16u);
  EXPECT_EQ(r.error().value, uint64_t{'g'});
  EXPECT_EQ(DescribeHexError(r.error()), "invalid hex digit 'g' at offset 16");
}

TEST(ParseHex, ZeroXInsideATokenIsAnError) {
  // Only a token may start with 0x: "000x" would otherwise hide a digit.
  auto r = ParseHex("000x12");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().offset, 3u);
  EXPECT_EQ(r.error().value, uint64_t{'x'});
}

TEST(ParseHex, OddDigitCountPointsAtTheLoneDigit) {
  auto r = ParseHex("4d 50\n4");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kLengthMismatch);
  EXPECT_STREQ(r.error().field, kFieldHexDigitCount);
  EXPECT_EQ(r.error().offset, 6u);
  EXPECT_EQ(r.error().value, 5u);
  EXPECT_EQ(DescribeHexError(r.error(), "4d 50\n4"),
            "odd number of hex digits (5), the last one at offset 6 (line 2, column 1)");
}

TEST(ParseHex, DescribeAddsLineAndColumnAndEscapesUnprintables) {
  const std::string text = "00\n11 2\x01";
  auto r = ParseHex(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(DescribeHexError(r.error(), text), "invalid hex digit '\\x01' at offset 7 (line 2, column 5)");
}

TEST(ParseHexLines, OneOctetStringPerLineSkippingBlankAndCommentLines) {
  const std::string text = "# segments\nc1 40\n\n   # note\n41 43 00\n";
  auto r = ParseHexLines(text);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].line, 2u);
  EXPECT_EQ((*r)[0].text_offset, 11u);
  EXPECT_EQ((*r)[0].octets, (Bytes{0xC1, 0x40}));
  EXPECT_EQ((*r)[1].line, 5u);
  EXPECT_EQ((*r)[1].octets, (Bytes{0x41, 0x43, 0x00}));
}

TEST(ParseHexLines, EachLineNeedsAnEvenDigitCount) {
  auto r = ParseHexLines("c1 4\n0 41");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kLengthMismatch);
  EXPECT_EQ(r.error().offset, 3u);
}

TEST(LooksLikeText, PrintableAsciiAndLineBreaksOnly) {
  const std::string text = "# c\n4d 50\r\n\t";
  EXPECT_TRUE(LooksLikeText(ByteSpan(reinterpret_cast<const uint8_t*>(text.data()), text.size())));
  const Bytes binary = {0x4D, 0x50, 0x80};
  EXPECT_FALSE(LooksLikeText(binary));
}

TEST(HexDump, OffsetsHexAndAsciiColumns) {
  Bytes data;
  for (int i = 0; i < 18; ++i) data.push_back(static_cast<uint8_t>(0x41 + i));
  data[1] = 0x00;
  const auto lines = HexDumpLines(data, 0x20);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "0020  41 00 43 44 45 46 47 48  49 4a 4b 4c 4d 4e 4f 50  A.CDEFGHIJKLMNOP");
  EXPECT_EQ(lines[1], "0030  51 52                                             QR");
}

TEST(HexOctets, SpacesBetweenGroupsOrNone) {
  const Bytes data = {0x4D, 0x50, 0x41, 0x20, 0x49};
  EXPECT_EQ(HexOctets(data), "4d 50 41 20 49");
  EXPECT_EQ(HexOctets(data, 4), "4d504120 49");
  EXPECT_EQ(HexOctets(data, 0), "4d50412049");
  EXPECT_EQ(HexOctets({}), "");
}

TEST(HexValue, LowercaseWithOptionalZeroPadding) {
  EXPECT_EQ(HexValue(0), "0x0");
  EXPECT_EQ(HexValue(0x1F), "0x1f");
  EXPECT_EQ(HexValue(0x1F, 4), "0x001f");
  EXPECT_EQ(HexValue(0x12345, 2), "0x12345");
  EXPECT_EQ(HexValue(UINT64_MAX, 16), "0xffffffffffffffff");
}

TEST(FormatHexLines, RoundTripsThroughParseHex) {
  Bytes data;
  for (int i = 0; i < 40; ++i) data.push_back(static_cast<uint8_t>(i * 7));
  const std::string text = FormatHexLines(data, 16);
  EXPECT_EQ(text.substr(0, 48), "00 07 0e 15 1c 23 2a 31 38 3f 46 4d 54 5b 62 69\n");
  auto back = ParseHex(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, data);
}

}  // namespace
}  // namespace rdmapct::wire
