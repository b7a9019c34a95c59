// The Connect Directive codec (docs/target-convention.md §10.2).
#include "reference/wire/ulp_convention_directive.h"

#include <gtest/gtest.h>

namespace rdmapct::wire {
namespace {

TEST(ConnectDirective, EncodesToTheDocumentedOctets) {
  ConnectDirective d;
  d.flags = kDirectiveCrc | kDirectiveEnhanced | kDirectivePeerToPeer | kDirectiveReadRtr;
  d.ird = 8;
  d.ord = 0x3FFF;
  d.case_hash = 0x01020304;
  Bytes out;
  EncodeConnectDirective(d, out);
  const Bytes want = {0x52, 0x50, 0x43, 0x44, 1, 0, 0x00, 0x4D, 0x00, 0x08, 0x3F, 0xFF, 1, 2, 3, 4};
  EXPECT_EQ(out, want);
  auto back = DecodeConnectDirective(out);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, d);
}

TEST(ConnectDirective, RejectsWhatIsNoDirective) {
  Bytes out;
  EncodeConnectDirective({}, out);
  EXPECT_EQ(DecodeConnectDirective(ByteSpan(out).first(15)).error().kind, DecodeErrorKind::kTruncated);
  Bytes bad = out;
  bad[3] = 'A';  // an Advertisement's magic
  EXPECT_EQ(DecodeConnectDirective(bad).error().kind, DecodeErrorKind::kInvalidValue);
  bad = out;
  bad[4] = 2;
  EXPECT_EQ(DecodeConnectDirective(bad).error().kind, DecodeErrorKind::kInvalidValue);
  bad = out;
  bad[6] = 0x01;  // reserved flag 0x0100
  EXPECT_EQ(DecodeConnectDirective(bad).error().kind, DecodeErrorKind::kReservedNonZero);
  bad[5] = 1;  // a newer minor version may use it
  EXPECT_TRUE(DecodeConnectDirective(bad).ok());
  bad = out;
  bad[8] = 0x40;  // IRD 0x4000 does not fit 14 bits
  EXPECT_EQ(DecodeConnectDirective(bad).error().kind, DecodeErrorKind::kInvalidValue);
}

}  // namespace
}  // namespace rdmapct::wire
