#include "reference/wire/mpa_markers.h"

#include <gtest/gtest.h>

#include "reference/wire/crc32c.h"
#include "tests/reference/wire/mpa_figures.h"

namespace rdmapct::wire {
namespace {

using testing::Figure5;
using testing::Figure6;
using testing::FigureUlpdu;
using testing::kFigure6Offset;

uint16_t FpduPtrAt(const Bytes& wire, std::size_t marker_offset) {
  return LoadMarker(wire.data() + marker_offset).fpduptr;
}

// REQ R5044-4.4-T01, R5044-4.3-10, R5044-4.4-12, R5044-7.1.2-R07: the first
// FPDU starts with the Marker 00000000, which its CRC covers.
TEST(MarkerInserter, Figure5FirstFpdu_R5044_4_4_T01) {
  MarkerInserter ins;
  Bytes wire;
  ins.AppendUlpdu(wire, FigureUlpdu(1));
  EXPECT_EQ(wire, Figure5());
  EXPECT_EQ(ins.position(), 0x34u);
}

// REQ R5044-4.4-T02, R5044-4.3-02, R5044-4.1-02: a Marker inside the ULPDU
// is covered by the CRC and not counted in ULPDU_Length.
TEST(MarkerInserter, Figure6SecondFpdu_R5044_4_4_T02) {
  MarkerInserter ins(/*seq_start=*/0, /*next_seq=*/kFigure6Offset);
  Bytes wire;
  ins.AppendUlpdu(wire, FigureUlpdu(2));
  EXPECT_EQ(wire, Figure6());
}

// The Figure 6 scenario as a stream: a first Send of 492 octets on the wire
// (Marker + 488-octet FPDU, ULPDU 482) puts the second FPDU at 0x1ec.
TEST(MarkerInserter, Figure6WithinItsStream_R5044_4_4_T02) {
  MarkerInserter ins;
  Bytes wire;
  ins.AppendUlpdu(wire, Bytes(482, 0x5A));
  ASSERT_EQ(wire.size(), kFigure6Offset);
  ins.AppendUlpdu(wire, FigureUlpdu(2));
  EXPECT_EQ(Bytes(wire.begin() + kFigure6Offset, wire.end()), Figure6());
}

// REQ R5044-4.3-07, R5044-4.3-08, R5044-4.3-13: a Marker exactly between
// FPDUs has FPDUPTR 0 and is covered by the *next* FPDU's CRC.
TEST(MarkerInserter, MarkerExactlyBetweenFpdus_R5044_4_3_07) {
  MarkerInserter ins;
  Bytes wire;
  ins.AppendUlpdu(wire, Bytes(502, 1));  // 4 + (2 + 502 + 0 + 4) = 512
  ASSERT_EQ(wire.size(), 512u);
  // First FPDU's CRC covers its leading Marker and nothing at 512.
  EXPECT_EQ(LoadCrc32c(wire.data() + 508), Crc32c(ByteSpan(wire).first(508)));
  ins.AppendUlpdu(wire, Bytes(10, 2));
  ASSERT_EQ(wire.size(), 512u + 4 + 16);
  EXPECT_EQ(FpduPtrAt(wire, 512), 0);
  EXPECT_EQ(LoadBe16(wire.data() + 516), 10);  // an FPDU header follows at once
  EXPECT_EQ(LoadCrc32c(wire.data() + 512 + 4 + 12), Crc32c(ByteSpan(wire).subspan(512, 16)));
}

// REQ R5044-4.4-11: a Marker between PAD and CRC belongs to the current FPDU,
// has a non-zero FPDUPTR and is covered by that FPDU's CRC.
TEST(MarkerInserter, MarkerBetweenPadAndCrc_R5044_4_4_11) {
  MarkerInserter ins;
  Bytes wire;
  ins.AppendUlpdu(wire, Bytes(505, 3));  // header at 4; 2 + 505 + PAD 1 ends at 512
  ASSERT_EQ(wire.size(), 4u + 508 + 4 + 4);
  EXPECT_EQ(wire[511], 0x00);            // the PAD octet
  EXPECT_EQ(FpduPtrAt(wire, 512), 508);  // 512 - 4
  EXPECT_EQ(LoadCrc32c(wire.data() + 516), Crc32c(ByteSpan(wire).first(516)));
  // The next FPDU starts at 520: no Marker before it.
  ins.AppendUlpdu(wire, Bytes(2, 4));
  EXPECT_EQ(LoadBe16(wire.data() + 520), 2);
}

// REQ R5044-4.3-11: several Markers in one FPDU all point to its ULPDU_Length.
TEST(MarkerInserter, FpduSpanningSeveralMarkers_R5044_4_3_11) {
  MarkerInserter ins;
  Bytes wire;
  Bytes ulpdu(2000);
  for (std::size_t i = 0; i < ulpdu.size(); ++i) ulpdu[i] = static_cast<uint8_t>(i);
  ins.AppendUlpdu(wire, ulpdu);  // FPDU 2008 octets + 4 Markers
  ASSERT_EQ(wire.size(), 2008u + 16);
  EXPECT_EQ(FpduPtrAt(wire, 0), 0);
  EXPECT_EQ(FpduPtrAt(wire, 512), 508);
  EXPECT_EQ(FpduPtrAt(wire, 1024), 1020);
  EXPECT_EQ(FpduPtrAt(wire, 1536), 1532);
  // ULPDU octets continue unchanged around each Marker.
  EXPECT_EQ(wire[511], ulpdu[505]);
  EXPECT_EQ(wire[516], ulpdu[506]);
  EXPECT_EQ(LoadCrc32c(wire.data() + 2020), Crc32c(ByteSpan(wire).first(2020)));
}

// REQ R5044-4.3-12: in an interval of small FPDUs each Marker points into its own FPDU.
TEST(MarkerInserter, SmallFpdusEachMarkerPointsIntoItsOwnFpdu_R5044_4_3_12) {
  MarkerInserter ins;
  Bytes wire;
  while (wire.size() < 1100) ins.AppendUlpdu(wire, Bytes(18, 7));  // FPDU 24 octets
  // Stream: M(4) then FPDUs of 24 at 4, 28, ..., 484, 508 (508..531 holds the Marker at 512).
  EXPECT_EQ(FpduPtrAt(wire, 512), 4);  // 512 - 508
  // Next: FPDUs continue at 536, 560, ..., 1016 (1016..1043 holds 1024): FPDUPTR 8.
  EXPECT_EQ(FpduPtrAt(wire, 1024), 8);
}

// REQ R5044-4.3-06, R5044-4.3-10: SeqNum wraps; the back-pointer still works.
TEST(MarkerInserter, SequenceWrap_R5044_4_3_06) {
  const uint32_t seq_start = 0xFFFFFF00;
  MarkerInserter ins(seq_start);
  Bytes wire;
  ins.AppendUlpdu(wire, Bytes(600, 9));
  // Marker at SeqNum seq_start + 512 = 0x00000100 (wrapped); header at 0xFFFFFF04.
  const uint32_t marker_seq = seq_start + 512;
  EXPECT_EQ(marker_seq, 0x100u);
  const uint16_t ptr = FpduPtrAt(wire, 512);
  EXPECT_EQ(ptr, 0x1FC);
  EXPECT_EQ(static_cast<uint32_t>(marker_seq - ptr), 0xFFFFFF04u);
  EXPECT_EQ(ins.next_seq(), static_cast<uint32_t>(seq_start + wire.size()));

  // Mid-stream start across the wrap: next octet at 0x10, SeqStart 0xFFFFFFF0.
  MarkerInserter mid(0xFFFFFFF0, 0x10);
  EXPECT_EQ(mid.position(), 0x20u);
  Bytes w2;
  mid.AppendUlpdu(w2, Bytes(1000, 1));  // header at position 32; Marker at 512
  EXPECT_EQ(FpduPtrAt(w2, 512 - 32), 480);
}

// REQ R5044-4.2-03, R5044-4.2-06: tester knobs for RESERVED and FPDUPTR low bits.
TEST(MarkerInserter, TesterKnobs_R5044_4_2_03) {
  MarkerInserter ins(0, MarkerInserterOptions{.reserved = 0xFFFF, .fpduptr_xor = 0x3});
  Bytes wire;
  ins.AppendUlpdu(wire, Bytes(600, 1));
  EXPECT_EQ(LoadMarker(wire.data()).reserved, 0xFFFF);
  EXPECT_EQ(FpduPtrAt(wire, 0), 0x3);
  EXPECT_EQ(FpduPtrAt(wire, 512), 508 | 3);
  EXPECT_EQ(FpduPtrForCompare(FpduPtrAt(wire, 512)), 508);
  // The CRC still covers the Markers as sent.
  const std::size_t crc_at = wire.size() - 4;
  EXPECT_EQ(LoadCrc32c(wire.data() + crc_at), Crc32c(ByteSpan(wire).first(crc_at)));
}

// With CRCs off the CRC field is copied as given (zero from AppendUlpdu).
TEST(MarkerInserter, CrcDisabledCopiesField_R5044_4_1_07) {
  MarkerInserter ins;
  Bytes wire;
  ins.AppendUlpdu(wire, Bytes(600, 1), {.crc_enabled = false});
  EXPECT_EQ(LoadCrc32c(wire.data() + wire.size() - 4), 0u);
  Bytes plain = EncodeFpdu(Bytes(8, 1), {.crc_enabled = false, .crc_xor = 0x01020304});
  Bytes w2;
  MarkerInserter(0).AppendFpdu(w2, plain, {.crc_enabled = false});
  EXPECT_EQ(LoadCrc32c(w2.data() + w2.size() - 4), 0x01020304u);
}

// LayoutMarkedFpdu agrees with what the inserter emits, at every aligned
// position and many FPDU sizes.
TEST(MarkedFpduLayout, MatchesInserterOutput) {
  for (uint32_t pos = 0; pos < 1024; pos += 4) {
    for (std::size_t ulpdu = 0; ulpdu < 1600; ulpdu += 37) {
      MarkerInserter ins(0, pos);
      Bytes wire;
      ins.AppendUlpdu(wire, Bytes(ulpdu, 0));
      const MarkedFpduLayout l = LayoutMarkedFpdu(pos, FpduLength(ulpdu));
      ASSERT_EQ(l.wire_length, wire.size()) << pos << " " << ulpdu;
      ASSERT_EQ(l.leading_marker, pos % 512 == 0);
      ASSERT_EQ(l.wire_length - FpduLength(ulpdu), 4 * (l.inner_markers + l.leading_marker));
    }
  }
}

}  // namespace
}  // namespace rdmapct::wire
