#include "reference/wire/ddp.h"

#include <gtest/gtest.h>

#include <string>

namespace rdmapct::wire {
namespace {

// RFC 5041 Figure 4 (tagged): ctrl | RsvdULP | STag | TO, then payload.
// 0xC1 = T=1, L=1, Rsvd=0, DV=01b; RsvdULP 0x40 = RDMAP RDMA Write.
const Bytes kTaggedWrite = {0xC1, 0x40,                                      // DDP Control, RsvdULP
                            0xDE, 0xAD, 0xBE, 0xEF,                          // STag
                            0x00, 0x00, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89,  // TO
                            'a',  'b',  'c'};                                // payload

// RFC 5041 Figure 5 (untagged): ctrl | RsvdULP[0] | RsvdULP[8:39] | QN | MSN | MO.
// 0x01 = T=0, L=0, DV=01b; RsvdULP[0] 0x44 = Send with Invalidate.
const Bytes kUntaggedSendInv = {0x01, 0x44,              // DDP Control, RsvdULP[0:7]
                                0x11, 0x22, 0x33, 0x44,  // RsvdULP[8:39] = Invalidate STag
                                0x00, 0x00, 0x00, 0x00,  // QN 0
                                0x00, 0x00, 0x00, 0x07,  // MSN 7
                                0x00, 0x00, 0x05, 0xCA,  // MO 1482
                                0xFF};                   // payload

// R5041-4.1-01 R5041-4.2-01 R5040-3.1-07
TEST(DdpDecode, TaggedKnownAnswer) {
  auto r = DecodeDdpSegment(kTaggedWrite, 100);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  const DdpSegmentHeader& h = r->header;
  EXPECT_TRUE(h.tagged);
  EXPECT_TRUE(h.last);
  EXPECT_EQ(h.rsvd, 0);
  EXPECT_EQ(h.ddp_version, 1);
  EXPECT_EQ(h.rsvd_ulp0, 0x40);
  EXPECT_EQ(h.stag, 0xDEADBEEFu);
  EXPECT_EQ(h.tagged_offset, 0x0000000123456789ull);
  EXPECT_EQ(h.HeaderLength(), 14u);
  EXPECT_EQ(r->header_offset, 100u);
  EXPECT_EQ(r->payload_offset, 114u);
  ASSERT_EQ(r->payload.size(), 3u);
  EXPECT_EQ(r->payload.data(), kTaggedWrite.data() + 14);  // zero-copy
}

// R5041-4.3-01 R5040-4.1-03 (Invalidate STag at RsvdULP octets 2-5)
TEST(DdpDecode, UntaggedKnownAnswer) {
  auto r = DecodeDdpSegment(kUntaggedSendInv);
  ASSERT_TRUE(r.ok());
  const DdpSegmentHeader& h = r->header;
  EXPECT_FALSE(h.tagged);
  EXPECT_FALSE(h.last);
  EXPECT_EQ(h.rsvd_ulp0, 0x44);
  EXPECT_EQ(h.invalidate_stag, 0x11223344u);
  EXPECT_EQ(h.queue_number, 0u);
  EXPECT_EQ(h.msn, 7u);
  EXPECT_EQ(h.message_offset, 1482u);
  EXPECT_EQ(h.stag, 0u);
  EXPECT_EQ(h.tagged_offset, 0u);
  EXPECT_EQ(r->payload_offset, 18u);
  EXPECT_EQ(r->payload.size(), 1u);
}

// R5041-4.1-10 R5041-4.1-12: Rsvd and DV are reported, never rejected here.
TEST(DdpDecode, ControlFieldsAreReportedForEveryOctet) {
  for (unsigned c = 0; c < 256; ++c) {
    Bytes seg(18, 0);
    seg[0] = static_cast<uint8_t>(c);
    auto r = DecodeDdpSegment(seg);
    ASSERT_TRUE(r.ok()) << c;
    EXPECT_EQ(r->header.tagged, (c & 0x80) != 0);
    EXPECT_EQ(r->header.last, (c & 0x40) != 0);
    EXPECT_EQ(r->header.rsvd, (c >> 2) & 0xF);
    EXPECT_EQ(r->header.ddp_version, c & 3);
    EXPECT_EQ(EncodeDdpControl(r->header.tagged, r->header.last, r->header.rsvd, r->header.ddp_version), c);
    // Re-encoding reproduces the header octets exactly.
    Bytes out;
    EncodeDdpHeader(r->header, out);
    EXPECT_EQ(out, Bytes(seg.begin(), seg.begin() + static_cast<long>(r->header.HeaderLength())));
  }
}

// R5041-4.4-01: a ULPDU shorter than its DDP header. Every prefix length
// reports the field it cuts, at its absolute offset.
TEST(DdpDecode, EveryTruncationPointNamesTheField) {
  // Tagged: Control(0) RsvdULP(1) STag(2-5) TO(6-13).
  // Untagged: Control(0) RsvdULP(1-5) QN(6-9) MSN(10-13) MO(14-17).
  const std::string tagged[] = {"DDP Control", "RsvdULP", "STag", "STag", "STag", "STag", "TO",
                                "TO",          "TO",      "TO",   "TO",   "TO",   "TO",   "TO"};
  const std::size_t tagged_at[] = {0, 1, 2, 2, 2, 2, 6, 6, 6, 6, 6, 6, 6, 6};
  const std::string untagged[] = {"DDP Control", "RsvdULP", "RsvdULP", "RsvdULP", "RsvdULP", "RsvdULP",
                                  "QN",          "QN",      "QN",      "QN",      "MSN",     "MSN",
                                  "MSN",         "MSN",     "MO",      "MO",      "MO",      "MO"};
  const std::size_t untagged_at[] = {0, 1, 1, 1, 1, 1, 6, 6, 6, 6, 10, 10, 10, 10, 14, 14, 14, 14};
  constexpr std::size_t kBase = 1000;
  for (std::size_t n = 0; n < 14; ++n) {
    auto r = DecodeDdpSegment(ByteSpan(kTaggedWrite.data(), n), kBase);
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.error().kind, DecodeErrorKind::kTruncated);
    EXPECT_EQ(std::string(r.error().field), tagged[n]) << n;
    EXPECT_EQ(r.error().offset, kBase + tagged_at[n]) << n;
    EXPECT_EQ(r.error().value, n - tagged_at[n]) << n;  // octets available of that field
  }
  for (std::size_t n = 0; n < 18; ++n) {
    auto r = DecodeDdpSegment(ByteSpan(kUntaggedSendInv.data(), n), kBase);
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.error().kind, DecodeErrorKind::kTruncated);
    EXPECT_EQ(std::string(r.error().field), untagged[n]) << n;
    EXPECT_EQ(r.error().offset, kBase + untagged_at[n]) << n;
  }
  // Exactly a header: valid, empty payload (R5041-5.2-11 zero-length segment).
  auto t = DecodeDdpSegment(ByteSpan(kTaggedWrite.data(), 14));
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->payload.empty());
  auto u = DecodeDdpSegment(ByteSpan(kUntaggedSendInv.data(), 18));
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->payload.empty());
}

TEST(DdpEncode, ByteExactKnownAnswers) {
  DdpSegmentHeader t;
  t.tagged = true;
  t.last = true;
  t.rsvd_ulp0 = 0x40;
  t.stag = 0xDEADBEEF;
  t.tagged_offset = 0x123456789;
  const uint8_t payload[] = {'a', 'b', 'c'};
  EXPECT_EQ(EncodeDdpSegment(t, payload), kTaggedWrite);

  DdpSegmentHeader u;
  u.tagged = false;
  u.last = false;
  u.rsvd_ulp0 = 0x44;
  u.invalidate_stag = 0x11223344;
  u.queue_number = 0;
  u.msn = 7;
  u.message_offset = 1482;
  const uint8_t one[] = {0xFF};
  EXPECT_EQ(EncodeDdpSegment(u, one), kUntaggedSendInv);
}

// Reserved and version fields are written exactly as set (malformed frames on purpose).
TEST(DdpEncode, WritesWrongReservedAndVersionOnPurpose) {
  DdpSegmentHeader h;
  h.tagged = false;
  h.last = true;
  h.rsvd = 0xF;
  h.ddp_version = 3;
  Bytes out;
  EncodeDdpHeader(h, out);
  ASSERT_EQ(out.size(), 18u);
  EXPECT_EQ(out[0], 0x7F);  // 0 1 1111 11
  h.rsvd = 0x1F;            // wider than 4 bits: masked, does not touch L
  h.last = false;
  out.clear();
  EncodeDdpHeader(h, out);
  EXPECT_EQ(out[0], 0x3F);
}

// RFC 5044 Figure 5 shows the control octet 0x41 (untagged, last, DV=1).
TEST(DdpControl, Rfc5044ExampleOctet) {
  EXPECT_FALSE(DdpControlTagged(0x41));
  EXPECT_TRUE(DdpControlLast(0x41));
  EXPECT_EQ(DdpControlRsvd(0x41), 0);
  EXPECT_EQ(DdpControlVersion(0x41), 1);
  EXPECT_EQ(EncodeDdpControl(false, true, 0, 1), 0x41);
}

}  // namespace
}  // namespace rdmapct::wire
