#include "reference/wire/ddp_segmentation.h"

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::wire {
namespace {

Bytes Pattern(std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7 + 3);
  return b;
}

DdpSegmentHeader SendTemplate(uint32_t msn) { return MakeSend(Opcode::kSend, msn, {}).ddp; }

DdpSegmentHeader WriteTemplate(uint32_t stag, uint64_t to) { return MakeRdmaWrite(stag, to, {}).ddp; }

// R5041-5.2-07: RFC 5041 §5.2 example: a 2048-octet untagged message with
// MULPDU 1500 gives MO 0 / 1482 octets and MO 1482 / 566 octets.
TEST(Segmentation, Rfc5041UntaggedExample) {
  const Bytes msg = Pattern(2048);
  auto segs = SegmentDdpMessage(SendTemplate(4), msg, 1500);
  ASSERT_TRUE(segs.ok());
  ASSERT_EQ(segs->size(), 2u);
  EXPECT_EQ((*segs)[0].header.message_offset, 0u);
  EXPECT_EQ((*segs)[0].payload.size(), 1482u);
  EXPECT_FALSE((*segs)[0].header.last);
  EXPECT_EQ((*segs)[1].header.message_offset, 1482u);
  EXPECT_EQ((*segs)[1].payload.size(), 566u);
  EXPECT_TRUE((*segs)[1].header.last);
  for (const auto& s : *segs) {
    EXPECT_EQ(s.header.msn, 4u);
    EXPECT_EQ(s.header.queue_number, 0u);
    EXPECT_EQ(s.header.rsvd_ulp0, 0x43);  // R5041-4.3-04: same RsvdULP in every segment
  }
  const auto encoded = EncodeDdpSegments(*segs);
  EXPECT_EQ(encoded[0].size(), 1500u);
  EXPECT_EQ(encoded[1].size(), 18u + 566u);
}

// R5041-5.2-09: 2048 octets at TO 16384, MULPDU 1500 -> TO 16384 / 1486, TO 17870 / 562.
TEST(Segmentation, Rfc5041TaggedExample) {
  const Bytes msg = Pattern(2048);
  auto segs = SegmentDdpMessage(WriteTemplate(0x77, 16384), msg, 1500);
  ASSERT_TRUE(segs.ok());
  ASSERT_EQ(segs->size(), 2u);
  EXPECT_EQ((*segs)[0].header.tagged_offset, 16384u);
  EXPECT_EQ((*segs)[0].payload.size(), 1486u);
  EXPECT_EQ((*segs)[1].header.tagged_offset, 17870u);
  EXPECT_EQ((*segs)[1].payload.size(), 562u);
  EXPECT_FALSE((*segs)[0].header.last);
  EXPECT_TRUE((*segs)[1].header.last);
  EXPECT_EQ((*segs)[1].header.stag, 0x77u);  // R5041-4.2-08
}

// R5041-5.2-02 R5041-5.2-04 R5041-4.1-04 R5041-4.1-05
TEST(Segmentation, BoundariesAroundMulpdu) {
  const std::size_t mulpdu = 100;
  for (bool tagged : {false, true}) {
    const DdpSegmentHeader first = tagged ? WriteTemplate(1, 0) : SendTemplate(1);
    const std::size_t room = mulpdu - first.HeaderLength();
    struct Case {
      std::size_t length;
      std::size_t segments;
    };
    for (Case c :
         {Case{room * 3, 3}, Case{room * 3 + 1, 4}, Case{room - 1, 1}, Case{room, 1}, Case{room + 1, 2}, Case{1, 1}}) {
      SCOPED_TRACE(std::to_string(c.length) + (tagged ? " tagged" : " untagged"));
      const Bytes msg = Pattern(c.length);
      auto segs = SegmentDdpMessage(first, msg, mulpdu);
      ASSERT_TRUE(segs.ok());
      ASSERT_EQ(segs->size(), c.segments);
      std::size_t total = 0;
      for (std::size_t i = 0; i < segs->size(); ++i) {
        const auto& s = (*segs)[i];
        EXPECT_LE(s.header.HeaderLength() + s.payload.size(), mulpdu);
        EXPECT_EQ(s.header.last, i + 1 == segs->size());
        EXPECT_EQ(tagged ? s.header.tagged_offset : s.header.message_offset, total);
        EXPECT_EQ(s.payload.data(), msg.data() + total);  // views, in order
        if (i + 1 < segs->size()) {
          EXPECT_EQ(s.payload.size(), room);  // full but the last
        }
        total += s.payload.size();
      }
      EXPECT_EQ(total, c.length);
    }
  }
}

// R5041-5.2-11: a zero-length message is exactly one segment, L=1, no payload.
TEST(Segmentation, ZeroLengthMessageIsOneSegment) {
  for (bool tagged : {false, true}) {
    const DdpSegmentHeader first = tagged ? WriteTemplate(1, 5) : SendTemplate(2);
    auto segs = SegmentDdpMessage(first, {}, first.HeaderLength());  // MULPDU = header only
    ASSERT_TRUE(segs.ok());
    ASSERT_EQ(segs->size(), 1u);
    EXPECT_TRUE((*segs)[0].header.last);
    EXPECT_TRUE((*segs)[0].payload.empty());
    EXPECT_EQ(EncodeDdpSegments(*segs)[0].size(), first.HeaderLength());
  }
}

TEST(Segmentation, RejectsMulpduWithoutRoomForPayload) {
  const Bytes msg = Pattern(10);
  auto a = SegmentDdpMessage(SendTemplate(1), msg, 18);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().kind, DecodeErrorKind::kInvalidValue);
  EXPECT_STREQ(a.error().field, "MULPDU");
  EXPECT_EQ(a.error().value, 18u);
  auto b = SegmentDdpMessage(WriteTemplate(1, 0), {}, 13);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(SegmentDdpMessage(WriteTemplate(1, 0), msg, 15).ok());  // one octet per segment
}

TEST(Segmentation, StartingMoAndWrappingToAreApplied) {
  DdpSegmentHeader first = SendTemplate(1);
  first.message_offset = 1000;  // for tests that start mid-message on purpose
  const Bytes msg = Pattern(10);
  auto a = SegmentDdpMessage(first, msg, 18 + 4);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)[2].header.message_offset, 1008u);
  auto b = SegmentDdpMessage(WriteTemplate(1, ~uint64_t{0} - 3), msg, 14 + 4);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)[1].header.tagged_offset, 0u);  // TO wraps modulo 2^64
}

// An untagged RDMAP message: header + payload segmented together; only the
// MO = 0 segment decodes with the RDMAP header (R5040-4-01).
TEST(Segmentation, RdmapHeaderTravelsInTheFirstSegment) {
  const Bytes payload = Pattern(40);
  const Bytes body = EncodeRdmapMessageBody(ImmediateDataHeader{0xABCD}, payload);
  auto segs = SegmentDdpMessage(MakeImmediateData(3, 0).ddp, body, 18 + 16);
  ASSERT_TRUE(segs.ok());
  ASSERT_EQ(segs->size(), 3u);
  const auto wire = EncodeDdpSegments(*segs);
  auto first = DecodeRdmapSegment(wire[0], Profile::kRfc7306);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(std::get<ImmediateDataHeader>(first->header).immediate_data, 0xABCDu);
  EXPECT_EQ(first->ulp_payload.size(), 8u);
  auto second = DecodeRdmapSegment(wire[1], Profile::kRfc7306);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->header_present);
}

// ---------------------------------------------------------------------------
// Reassembly.

DdpSegmentHeader Untagged(uint32_t mo, bool last, uint32_t qn = 0, uint32_t msn = 1) {
  DdpSegmentHeader h = SendTemplate(msn);
  h.queue_number = qn;
  h.message_offset = mo;
  h.last = last;
  return h;
}

TEST(Reassembly, InOrderSegmentsComplete) {
  const Bytes msg = Pattern(2048);
  auto segs = SegmentDdpMessage(SendTemplate(9), msg, 1500);
  ASSERT_TRUE(segs.ok());
  UntaggedMessageAssembler a;
  EXPECT_EQ(a.Add((*segs)[0].header, (*segs)[0].payload), ReassemblyStatus::kAccepted);
  EXPECT_FALSE(a.complete());
  EXPECT_EQ(a.Add((*segs)[1].header, (*segs)[1].payload), ReassemblyStatus::kComplete);
  EXPECT_TRUE(a.complete());
  EXPECT_EQ(a.msn(), 9u);
  EXPECT_EQ(a.message_length(), 2048u);
  EXPECT_EQ(Bytes(a.message().begin(), a.message().end()), msg);
  EXPECT_EQ(a.TakeMessage(), msg);
  EXPECT_FALSE(a.started());
}

// R5041-5.3-03, decisions D-F5: MO 1000 before MO 0 must be accepted, and even the
// L=1 segment may arrive before the others.
TEST(Reassembly, OutOfOrderMoIsAccepted) {
  const Bytes msg = Pattern(3000);
  auto segs = SegmentDdpMessage(SendTemplate(1), msg, 18 + 1000);
  ASSERT_TRUE(segs.ok());
  ASSERT_EQ(segs->size(), 3u);
  for (auto order : {std::array<int, 3>{1, 0, 2}, std::array<int, 3>{2, 1, 0}, std::array<int, 3>{0, 2, 1}}) {
    UntaggedMessageAssembler a;
    for (int k = 0; k < 3; ++k) {
      const auto& s = (*segs)[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
      EXPECT_EQ(a.Add(s.header, s.payload), k == 2 ? ReassemblyStatus::kComplete : ReassemblyStatus::kAccepted);
    }
    EXPECT_EQ(a.TakeMessage(), msg);
  }
}

TEST(Reassembly, ZeroLengthMessageCompletesAtOnce) {
  UntaggedMessageAssembler a;
  EXPECT_EQ(a.Add(Untagged(0, true), {}), ReassemblyStatus::kComplete);
  EXPECT_EQ(a.message_length(), 0u);
  EXPECT_TRUE(a.message().empty());
  EXPECT_EQ(a.Add(Untagged(0, true), {}), ReassemblyStatus::kAlreadyComplete);
}

// R5041-5.3-04: a segment may be placed more than once.
TEST(Reassembly, DuplicateOctetsAreAcceptedAndCounted) {
  const Bytes p = Pattern(20);
  UntaggedMessageAssembler a;
  EXPECT_EQ(a.Add(Untagged(0, false), ByteSpan(p).first(10)), ReassemblyStatus::kAccepted);
  EXPECT_EQ(a.Add(Untagged(0, false), ByteSpan(p).first(10)), ReassemblyStatus::kAccepted);
  EXPECT_EQ(a.Add(Untagged(5, false), ByteSpan(p).subspan(5, 10)), ReassemblyStatus::kAccepted);
  EXPECT_EQ(a.octets_received(), 15u);
  EXPECT_EQ(a.duplicate_octets(), 15u);
  EXPECT_EQ(a.Add(Untagged(15, true), ByteSpan(p).subspan(15)), ReassemblyStatus::kComplete);
  EXPECT_EQ(a.TakeMessage(), p);
}

TEST(Reassembly, InconsistentSegmentsAreRejectedWithoutSideEffects) {
  const Bytes p = Pattern(30);
  UntaggedMessageAssembler a(/*capacity=*/25);
  EXPECT_EQ(a.Add(Untagged(10, false, 0, 4), ByteSpan(p).subspan(10, 5)), ReassemblyStatus::kAccepted);
  EXPECT_FALSE(a.first_segment_header().has_value());
  EXPECT_EQ(a.Add(Untagged(0, false, 1, 4), ByteSpan(p).first(5)), ReassemblyStatus::kQueueMismatch);
  EXPECT_EQ(a.Add(Untagged(0, false, 0, 5), ByteSpan(p).first(5)), ReassemblyStatus::kMsnMismatch);
  EXPECT_EQ(a.Add(Untagged(20, false, 0, 4), ByteSpan(p).subspan(20, 10)),
            ReassemblyStatus::kTooLong);  // ends at 30 > capacity 25
  DdpSegmentHeader tagged = WriteTemplate(1, 0);
  EXPECT_EQ(a.Add(tagged, ByteSpan(p).first(5)), ReassemblyStatus::kNotUntagged);
  // L=1 ending at 20; then a segment reaching past it, and a second L=1 elsewhere.
  EXPECT_EQ(a.Add(Untagged(15, true, 0, 4), ByteSpan(p).subspan(15, 5)), ReassemblyStatus::kAccepted);
  EXPECT_EQ(a.message_length(), 20u);
  EXPECT_EQ(a.Add(Untagged(18, false, 0, 4), ByteSpan(p).subspan(18, 4)), ReassemblyStatus::kBeyondLast);
  EXPECT_EQ(a.Add(Untagged(0, true, 0, 4), ByteSpan(p).first(10)), ReassemblyStatus::kSecondLast);
  EXPECT_EQ(a.octets_received(), 10u);
  // Completing it.
  EXPECT_EQ(a.Add(Untagged(0, false, 0, 4), ByteSpan(p).first(10)), ReassemblyStatus::kComplete);
  ASSERT_TRUE(a.first_segment_header().has_value());
  EXPECT_EQ(a.first_segment_header()->message_offset, 0u);
  EXPECT_EQ(a.TakeMessage(), Bytes(p.begin(), p.begin() + 20));
}

// R5041-4.1-07: an L=1 segment that does not carry the highest MO.
TEST(Reassembly, LastSegmentMustEndAfterEverythingReceived) {
  const Bytes p = Pattern(30);
  UntaggedMessageAssembler a;
  EXPECT_EQ(a.Add(Untagged(20, false), ByteSpan(p).subspan(20, 10)), ReassemblyStatus::kAccepted);
  EXPECT_EQ(a.Add(Untagged(0, true), ByteSpan(p).first(10)), ReassemblyStatus::kBeyondLast);
  EXPECT_FALSE(a.message_length().has_value());
  EXPECT_STREQ(ReassemblyStatusName(ReassemblyStatus::kBeyondLast), "beyond the last segment");
}

}  // namespace
}  // namespace rdmapct::wire
