#include "reference/wire/stream_decode.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "tests/reference/wire/mpa_figures.h"

namespace rdmapct::wire {
namespace {

using testing::Figure5;
using testing::Figure6;
using testing::kFigure6Offset;

// What the sink saw, copied out of the callbacks (views die with them).
struct SeenSegment {
  uint64_t number = 0;
  bool has_fpdu = false;
  DecodedFpdu fpdu;  // markers span cleared
  std::vector<MarkerSeen> markers;
  Bytes ulpdu;
  StreamOffsetMap map;
  bool decoded = false;
  bool opcode_known = false;
  uint8_t opcode = 0;
  std::optional<DecodeError> error;
};

struct Recorder : StreamDecodeSink {
  std::vector<std::string> events;  // "startup", "segment N", "error N fatal|soft"
  std::vector<DecodedStartupFrame> startup;
  std::vector<SeenSegment> segments;
  std::vector<StreamError> errors;

  void OnStartupFrame(const DecodedStartupFrame& f) override {
    events.push_back("startup");
    startup.push_back(f);
    startup.back().octets = {};
  }
  void OnSegment(const DecodedSegment& s) override {
    events.push_back("segment " + std::to_string(s.number));
    SeenSegment r;
    r.number = s.number;
    if (s.fpdu != nullptr) {
      r.has_fpdu = true;
      r.fpdu = *s.fpdu;
      r.markers.assign(s.fpdu->markers.begin(), s.fpdu->markers.end());
      r.fpdu.markers = {};
    }
    r.ulpdu.assign(s.ulpdu.begin(), s.ulpdu.end());
    r.map = s.map;
    r.decoded = s.rdmap.has_value();
    if (s.rdmap) {
      r.opcode_known = s.rdmap->opcode_known;
      r.opcode = s.rdmap->ctrl.opcode;
    }
    r.error = s.error;
    segments.push_back(std::move(r));
  }
  void OnError(const StreamError& e) override {
    events.push_back("error " + std::to_string(e.frame_number) + (e.fatal ? " fatal" : " soft"));
    errors.push_back(e);
  }
};

void ExpectError(const DecodeError& e, DecodeErrorKind kind, const char* field, uint64_t offset) {
  EXPECT_EQ(e.kind, kind) << e.Describe();
  EXPECT_STREQ(e.field, field);
  EXPECT_EQ(e.offset, offset) << e.Describe();
}

Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// The RFC 5044 Figure 5/6 stream: Figure 5 (Marker + Send MSN 1), an RDMA
// Write filling up to 0x1ec, then Figure 6 (Send MSN 2, Marker at 0x200).
Bytes FigureStream() {
  Bytes stream = Figure5();
  MarkerInserter ins(0, static_cast<uint32_t>(stream.size()));
  const Bytes write = EncodeSegment(MakeRdmaWrite(0x1234, 0, Bytes(kFigure6Offset - 0x34 - 20, 0x5A)));
  ins.AppendUlpdu(stream, write);
  EXPECT_EQ(stream.size(), kFigure6Offset);
  const Bytes fig6 = Figure6();
  stream.insert(stream.end(), fig6.begin(), fig6.end());
  return stream;
}

Bytes RequestFrame() {
  MpaStartupFrame f;
  f.crc_required = true;
  f.revision = 1;
  f.private_data = {0xAA, 0xBB};
  return EncodeMpaStartupFrame(f);
}

Bytes SendFpdu(uint32_t msn, std::size_t payload = 7) {
  return EncodeFpdu(EncodeSegment(MakeSend(Opcode::kSend, msn, Bytes(payload, 0x33))));
}

// ---- offset map ---------------------------------------------------------------

TEST(StreamOffsetMap, SkipsMarkersEvery508LogicalOctets_R5044_4_3_05) {
  StreamOffsetMap m;
  m.start = 100;
  EXPECT_EQ(m.At(0), 100u);
  EXPECT_EQ(m.At(1000), 1100u);  // no Markers: identity plus start
  m.before_marker = 10;          // a Marker right after logical octet 9
  EXPECT_EQ(m.At(9), 109u);
  EXPECT_EQ(m.At(10), 114u);
  EXPECT_EQ(m.At(517), 621u);  // last octet before the second Marker
  EXPECT_EQ(m.At(518), 626u);
  EXPECT_EQ(m.From(10).At(0), 114u);
}

TEST(LooksLikeMpaStartupFrame, CommonKeyPrefix) {
  EXPECT_TRUE(LooksLikeMpaStartupFrame(RequestFrame()));
  const Bytes rep(kMpaReplyKey.begin(), kMpaReplyKey.end());
  EXPECT_TRUE(LooksLikeMpaStartupFrame(rep));
  EXPECT_TRUE(LooksLikeMpaStartupFrame(Bytes{0x4D, 0x50, 0x41}));  // a prefix
  EXPECT_FALSE(LooksLikeMpaStartupFrame(Bytes{}));
  EXPECT_FALSE(LooksLikeMpaStartupFrame(SendFpdu(1)));
}

// ---- known answers ----------------------------------------------------------------

// REQ R5044-4.4-T01 R5044-4.4-T02: the RFC figures decode to Sends with MSN
// 1 and 2; each Marker and CRC is where the figures show it, and offsets of
// fields behind the Marker at 0x200 skip it.
TEST(DecodeMpaStream, RfcFiguresWithMarkers_R5044_4_4_T02) {
  Recorder r;
  const Bytes stream = FigureStream();
  const auto sum = DecodeMpaStream(stream, {.markers_enabled = true, .handshake = HandshakeMode::kAuto}, r);
  EXPECT_TRUE(sum.ok());
  EXPECT_EQ(sum.frames, 3u);
  ASSERT_EQ(r.segments.size(), 3u);
  const SeenSegment& first = r.segments[0];
  EXPECT_EQ(first.fpdu.offset, 0u);
  EXPECT_EQ(first.fpdu.header_offset, 4u);
  ASSERT_EQ(first.markers.size(), 1u);
  EXPECT_EQ(first.markers[0].offset, 0u);
  EXPECT_EQ(first.markers[0].fpduptr, 0u);
  EXPECT_EQ(first.fpdu.crc_offset, 0x30u);
  EXPECT_EQ(first.fpdu.received_crc, 0x83992352u);
  EXPECT_TRUE(first.fpdu.crc_ok);
  EXPECT_EQ(first.opcode, static_cast<uint8_t>(Opcode::kSend));

  const SeenSegment& fig6 = r.segments[2];
  EXPECT_EQ(fig6.number, 3u);
  EXPECT_EQ(fig6.fpdu.offset, 0x1ecu);
  EXPECT_EQ(fig6.fpdu.wire_length, 0x34u);
  ASSERT_EQ(fig6.markers.size(), 1u);
  EXPECT_EQ(fig6.markers[0].offset, 0x200u);
  EXPECT_EQ(fig6.markers[0].fpduptr, 0x14u);
  EXPECT_EQ(fig6.markers[0].expected_fpduptr, 0x14u);
  EXPECT_TRUE(fig6.markers[0].ok());
  EXPECT_EQ(fig6.fpdu.crc_offset, 0x21cu);
  EXPECT_EQ(fig6.fpdu.received_crc, 0x98589284u);
  EXPECT_EQ(fig6.fpdu.computed_crc, 0x98589284u);
  EXPECT_EQ(fig6.ulpdu, testing::FigureUlpdu(2));
  EXPECT_EQ(fig6.map.At(0), 0x1eeu);   // DDP Control Field
  EXPECT_EQ(fig6.map.At(14), 0x1fcu);  // MO
  EXPECT_EQ(fig6.map.At(18), 0x204u);  // first Send Data octet, after the Marker
}

TEST(DecodeMpaStream, StartupFrameThenFpdus_R5044_7_1_2_R07) {
  Recorder r;
  const Bytes req = RequestFrame();
  const Bytes stream = Concat({req, SendFpdu(1), SendFpdu(2)});
  const auto sum = DecodeMpaStream(stream, {}, r);
  EXPECT_TRUE(sum.ok());
  EXPECT_EQ(sum.frames, 3u);
  EXPECT_EQ(r.events, (std::vector<std::string>{"startup", "segment 2", "segment 3"}));
  ASSERT_EQ(r.startup.size(), 1u);
  EXPECT_FALSE(r.startup[0].frame.is_reply);
  EXPECT_TRUE(r.startup[0].frame.crc_required);
  EXPECT_EQ(r.startup[0].frame.private_data, (Bytes{0xAA, 0xBB}));
  EXPECT_EQ(r.segments[0].fpdu.offset, req.size());
  EXPECT_EQ(r.segments[1].fpdu.offset, req.size() + 32);
}

// With Markers, SeqStart is the octet after the startup frame: the first
// Marker (FPDUPTR 0) sits right there.
TEST(DecodeMpaStream, MarkersCountFromTheOctetAfterTheStartupFrame_R5044_4_3_10) {
  Recorder r;
  const Bytes req = RequestFrame();
  Bytes fpdus;
  MarkerInserter ins(0);
  for (uint32_t msn = 1; msn <= 20; ++msn)
    ins.AppendUlpdu(fpdus, EncodeSegment(MakeSend(Opcode::kSend, msn, Bytes(40, 1))));
  const auto sum = DecodeMpaStream(Concat({req, fpdus}), {.markers_enabled = true}, r);
  EXPECT_TRUE(sum.ok()) << (sum.fatal ? sum.fatal->Describe() : "");
  ASSERT_EQ(r.segments.size(), 20u);
  ASSERT_FALSE(r.segments[0].markers.empty());
  EXPECT_EQ(r.segments[0].markers[0].offset, req.size());
  std::size_t markers = 0;
  for (const SeenSegment& s : r.segments) {
    for (const MarkerSeen& m : s.markers) {
      EXPECT_EQ((m.offset - req.size()) % 512, 0u);
      EXPECT_TRUE(m.ok());
      ++markers;
    }
  }
  EXPECT_EQ(markers, (fpdus.size() + 511) / 512);
}

// A part of a direction (e.g. a capture after a gap) decodes with the
// offsets and Marker positions of the whole stream when told where it sits.
TEST(DecodeMpaStream, PartOfAStreamKeepsStreamOffsetsAndMarkerPositions) {
  const Bytes req = RequestFrame();
  Bytes fpdus;
  MarkerInserter ins(0);
  for (uint32_t msn = 1; msn <= 20; ++msn)
    ins.AppendUlpdu(fpdus, EncodeSegment(MakeSend(Opcode::kSend, msn, Bytes(40 + msn, 1))));
  const Bytes whole = Concat({req, fpdus});
  Recorder all;
  ASSERT_TRUE(DecodeMpaStream(whole, {.markers_enabled = true}, all).ok());
  ASSERT_EQ(all.segments.size(), 20u);
  for (std::size_t first : {3u, 12u}) {  // start at the FPDU of segment `first`
    const uint64_t at = all.segments[first].fpdu.offset;
    Recorder part;
    const StreamDecodeOptions o{.markers_enabled = true,
                                .handshake = HandshakeMode::kAbsent,
                                .stream_offset = at,
                                .first_position = static_cast<uint32_t>(at - req.size())};
    const auto sum = DecodeMpaStream(ByteSpan(whole).subspan(at), o, part);
    EXPECT_TRUE(sum.ok()) << (sum.fatal ? sum.fatal->Describe() : "");
    ASSERT_EQ(part.segments.size(), 20u - first);
    for (std::size_t i = 0; i < part.segments.size(); ++i) {
      const SeenSegment& a = all.segments[first + i];
      const SeenSegment& b = part.segments[i];
      EXPECT_EQ(b.fpdu.offset, a.fpdu.offset);
      EXPECT_EQ(b.fpdu.header_offset, a.fpdu.header_offset);
      EXPECT_EQ(b.fpdu.crc_offset, a.fpdu.crc_offset);
      EXPECT_EQ(b.map.At(0), a.map.At(0));
      EXPECT_EQ(b.ulpdu, a.ulpdu);
      ASSERT_EQ(b.markers.size(), a.markers.size());
      for (std::size_t k = 0; k < a.markers.size(); ++k) {
        EXPECT_EQ(b.markers[k].offset, a.markers[k].offset);
        EXPECT_TRUE(b.markers[k].ok());
      }
    }
  }
  // Errors carry stream offsets too.
  Recorder cut;
  const uint64_t at = all.segments[19].fpdu.offset;
  const auto sum = DecodeMpaStream(ByteSpan(whole).subspan(at, 10),
                                   {.markers_enabled = true,
                                    .handshake = HandshakeMode::kAbsent,
                                    .stream_offset = at,
                                    .first_position = static_cast<uint32_t>(at - req.size())},
                                   cut);
  ASSERT_TRUE(sum.fatal);
  ExpectError(*sum.fatal, DecodeErrorKind::kTruncated, "FPDU", at);
}

TEST(DecodeMpaStream, HandshakeModes) {
  const Bytes stream = Concat({RequestFrame(), SendFpdu(1)});
  {
    Recorder r;  // forced absent: the key octets are read as ULPDU_Length 0x4d50
    const auto sum = DecodeMpaStream(stream, {.handshake = HandshakeMode::kAbsent}, r);
    ASSERT_TRUE(sum.fatal);
    ExpectError(*sum.fatal, DecodeErrorKind::kTruncated, "FPDU", 0);
    EXPECT_TRUE(r.startup.empty());
  }
  {
    Recorder r;  // forced present on a stream without one: bad key at octet 0
    const auto sum = DecodeMpaStream(SendFpdu(1), {.handshake = HandshakeMode::kPresent}, r);
    ASSERT_TRUE(sum.fatal);
    EXPECT_EQ(sum.fatal->kind, DecodeErrorKind::kBadKey);
    EXPECT_EQ(sum.fatal->offset, 0u);
  }
}

// ---- errors ------------------------------------------------------------------------

// REQ R5044-7.1.1-03: a wrong Key octet is reported at its offset.
TEST(DecodeMpaStream, BadKeyAtItsOffset_R5044_7_1_1_03) {
  Bytes stream = Concat({RequestFrame(), SendFpdu(1)});
  stream[13] = 'o';  // "MPA ID Req Fro..."
  Recorder r;
  const auto sum = DecodeMpaStream(stream, {.handshake = HandshakeMode::kPresent}, r);
  ASSERT_TRUE(sum.fatal);
  EXPECT_EQ(sum.fatal->kind, DecodeErrorKind::kBadKey);
  EXPECT_EQ(sum.fatal->offset, 13u);
  EXPECT_EQ(sum.fatal->value, uint64_t{'o'});
  EXPECT_EQ(r.events, (std::vector<std::string>{"error 1 fatal"}));
}

TEST(DecodeMpaStream, TruncatedPrivateData) {
  Bytes stream = RequestFrame();
  stream.pop_back();
  Recorder r;
  const auto sum = DecodeMpaStream(stream, {}, r);
  ASSERT_TRUE(sum.fatal);
  ExpectError(*sum.fatal, DecodeErrorKind::kTruncated, "Private Data", 20);
}

// REQ R5044-4.4-15: the FPDU with the bad CRC is shown, then the error at the
// CRC field's offset stops decoding; nothing after it is delivered.
TEST(DecodeMpaStream, BadCrcStopsWithExactOffset_R5044_4_4_15) {
  const Bytes req = RequestFrame();
  Bytes bad = SendFpdu(2);
  bad[25] ^= 0x01;  // a payload octet
  const Bytes stream = Concat({req, SendFpdu(1), bad, SendFpdu(3)});
  Recorder r;
  const auto sum = DecodeMpaStream(stream, {}, r);
  ASSERT_TRUE(sum.fatal);
  const uint64_t crc_at = req.size() + 32 + 28;
  ExpectError(*sum.fatal, DecodeErrorKind::kCrcMismatch, "CRC", crc_at);
  const Bytes good = SendFpdu(2);
  EXPECT_EQ(sum.fatal->value >> 32, LoadCrc32c(good.data() + 28));
  EXPECT_EQ(sum.fatal->value & 0xFFFFFFFF, Crc32c(ByteSpan(bad).first(28)));
  EXPECT_EQ(r.events, (std::vector<std::string>{"startup", "segment 2", "segment 3", "error 3 fatal"}));
  EXPECT_FALSE(r.segments[1].fpdu.crc_ok);
  EXPECT_EQ(sum.frames, 3u);
  EXPECT_EQ(sum.errors, 1u);
}

TEST(DecodeMpaStream, ContinueReportsEveryBadCrcAndGoesOn) {
  Bytes bad2 = SendFpdu(2), bad4 = SendFpdu(4);
  bad2[30] ^= 0xFF;  // the CRC field itself
  bad4[20] ^= 0xFF;
  const Bytes stream = Concat({SendFpdu(1), bad2, SendFpdu(3), bad4, SendFpdu(5)});
  Recorder r;
  const auto sum = DecodeMpaStream(stream, {.continue_after_errors = true}, r);
  EXPECT_FALSE(sum.fatal);
  EXPECT_EQ(sum.errors, 2u);
  EXPECT_EQ(sum.frames, 5u);
  EXPECT_EQ(r.events, (std::vector<std::string>{"segment 1", "segment 2", "error 2 soft", "segment 3", "segment 4",
                                                "error 4 soft", "segment 5"}));
  ExpectError(r.errors[0].error, DecodeErrorKind::kCrcMismatch, "CRC", 32 + 28);
  ExpectError(r.errors[1].error, DecodeErrorKind::kCrcMismatch, "CRC", 3 * 32 + 28);
}

// REQ R5044-4.1-07: with CRCs off nothing is checked; the CRC is still
// computed for display (R5044-4.4-08).
TEST(DecodeMpaStream, CrcOffIsNotChecked_R5044_4_1_07) {
  Bytes fpdu = SendFpdu(1);
  const uint32_t good = LoadCrc32c(fpdu.data() + 28);
  StoreCrc32c(fpdu.data() + 28, 0);
  Recorder r;
  const auto sum = DecodeMpaStream(fpdu, {.crc_enabled = false}, r);
  EXPECT_TRUE(sum.ok());
  ASSERT_EQ(r.segments.size(), 1u);
  EXPECT_FALSE(r.segments[0].fpdu.crc_checked);
  EXPECT_TRUE(r.segments[0].fpdu.crc_computed);
  EXPECT_EQ(r.segments[0].fpdu.computed_crc, good);
  EXPECT_EQ(r.segments[0].fpdu.received_crc, 0u);
  Recorder quiet;
  (void)DecodeMpaStream(fpdu, {.crc_enabled = false, .compute_crc_when_disabled = false}, quiet);
  EXPECT_FALSE(quiet.segments[0].fpdu.crc_computed);
}

// REQ R5044-8-T03: a wrong FPDUPTR (CRCs off, so the CRC cannot catch it first)
// is reported at the Marker's offset with the value received.
TEST(DecodeMpaStream, MarkerMismatchAtTheMarker_R5044_8_T03) {
  Bytes stream = FigureStream();
  stream[0x203] = 0x18;
  Recorder r;
  const auto sum = DecodeMpaStream(stream, {.crc_enabled = false, .markers_enabled = true}, r);
  ASSERT_TRUE(sum.fatal);
  ExpectError(*sum.fatal, DecodeErrorKind::kMarkerMismatch, "FPDUPTR", 0x200);
  EXPECT_EQ(sum.fatal->value, 0x18u);
  ASSERT_EQ(r.segments.size(), 3u);
  EXPECT_FALSE(r.segments[2].fpdu.marker_ok);
  ASSERT_EQ(r.segments[2].markers.size(), 1u);
  EXPECT_FALSE(r.segments[2].markers[0].ok());
  EXPECT_EQ(r.segments[2].markers[0].expected_fpduptr, 0x14u);
}

TEST(DecodeMpaStream, TruncatedFpduAtTheEnd_R5044_6_04) {
  const Bytes stream = Concat({SendFpdu(1), SendFpdu(2)});
  Recorder r;
  const auto sum = DecodeMpaStream(ByteSpan(stream).first(stream.size() - 3), {}, r);
  ASSERT_TRUE(sum.fatal);
  ExpectError(*sum.fatal, DecodeErrorKind::kTruncated, "FPDU", 32);
  EXPECT_EQ(sum.fatal->value, 29u);
  EXPECT_EQ(r.events, (std::vector<std::string>{"segment 1", "error 0 fatal"}));
}

// A Read Request whose header is cut short: the segment is delivered
// undecoded, and the error names the RDMAP field at its stream offset.
TEST(DecodeMpaStream, UndecodableSegmentNamesTheRdmapField) {
  Bytes rr = EncodeSegment(MakeReadRequest(1, {}));
  rr.resize(18 + 10);  // SinkSTag and 6 octets of SinkTO
  const Bytes stream = Concat({SendFpdu(1), EncodeFpdu(rr), SendFpdu(2)});
  Recorder r;
  const auto sum = DecodeMpaStream(stream, {}, r);
  ASSERT_TRUE(sum.fatal);
  ExpectError(*sum.fatal, DecodeErrorKind::kTruncated, "SinkTO", 32 + 2 + 22);
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_FALSE(r.segments[1].decoded);
  ASSERT_TRUE(r.segments[1].error);
  EXPECT_EQ(r.segments[1].error->offset, 32u + 2 + 22);
  Recorder go_on;
  const auto soft = DecodeMpaStream(stream, {.continue_after_errors = true}, go_on);
  EXPECT_FALSE(soft.fatal);
  EXPECT_EQ(soft.errors, 1u);
  EXPECT_EQ(go_on.segments.size(), 3u);
}

// An opcode the profile does not define is a decoded frame, not an error.
TEST(DecodeMpaStream, UnknownOpcodeIsShownNotFatal) {
  const Bytes payload(4, 0);
  RdmapSegment seg = MakeSend(Opcode::kSend, 1, payload);
  seg.ddp.rsvd_ulp0 = 0x48;  // Immediate Data under rfc7306, undefined under rfc5040
  const Bytes stream = EncodeFpdu(EncodeSegment(seg));
  Recorder r;
  const auto sum = DecodeMpaStream(stream, {.profile = Profile::kRfc5040}, r);
  EXPECT_TRUE(sum.ok());
  ASSERT_EQ(r.segments.size(), 1u);
  EXPECT_TRUE(r.segments[0].decoded);
  EXPECT_FALSE(r.segments[0].opcode_known);
  EXPECT_EQ(r.segments[0].opcode, 0x8);
}

TEST(DecodeMpaStream, EmptyStreamIsNoFrames) {
  Recorder r;
  const auto sum = DecodeMpaStream({}, {}, r);
  EXPECT_TRUE(sum.ok());
  EXPECT_EQ(sum.frames, 0u);
}

// ---- bare DDP segments ----------------------------------------------------------

TEST(DecodeDdpSegments, OffsetsCountSegmentsBackToBack) {
  const Bytes a = EncodeSegment(MakeRdmaWrite(1, 0, Bytes(6, 0)));  // 20 octets
  const Bytes b = EncodeSegment(MakeSend(Opcode::kSend, 1, {}));    // 18 octets
  Bytes c = EncodeSegment(MakeSend(Opcode::kSend, 2, {}));
  c.resize(12);  // cut inside MSN
  const std::vector<ByteSpan> segs = {a, b, c};
  Recorder r;
  const auto sum = DecodeDdpSegments(segs, {}, r);
  ASSERT_TRUE(sum.fatal);
  ExpectError(*sum.fatal, DecodeErrorKind::kTruncated, "MSN", 20 + 18 + 10);
  ASSERT_EQ(r.segments.size(), 3u);
  EXPECT_FALSE(r.segments[0].has_fpdu);
  EXPECT_EQ(r.segments[1].map.At(0), 20u);
  EXPECT_EQ(r.segments[2].map.At(0), 38u);
  EXPECT_FALSE(r.segments[2].decoded);
}

TEST(DescribeStreamError, CrcMismatchSpellsOutBothValues) {
  const DecodeError e{DecodeErrorKind::kCrcMismatch, "CRC", 60, 0x1122334455667788};
  EXPECT_EQ(DescribeStreamError(e), "CRC mismatch in CRC at offset 60: received CRC 0x11223344, computed 0x55667788");
  // Issue 18: the packed 64-bit value glued both CRCs into one number.
  EXPECT_EQ(DescribeStreamError(e).find("1122334455667788"), std::string::npos);
  const DecodeError t{DecodeErrorKind::kTruncated, "FPDU", 8, 3};
  EXPECT_EQ(DescribeStreamError(t), t.Describe());
}

}  // namespace
}  // namespace rdmapct::wire
