#include "reference/wire/mpa_deframer.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "tests/reference/wire/mpa_figures.h"

namespace rdmapct::wire {
namespace {

using testing::Figure5;
using testing::Figure6;
using testing::FigureUlpdu;
using testing::kFigure6Offset;

// What a callback saw, with the ULPDU copied out (views die with the callback).
struct Seen {
  uint64_t offset, header_offset;
  uint32_t wire_length;
  uint16_t ulpdu_length, markers;
  Bytes ulpdu;
  uint32_t received_crc, computed_crc;
  bool crc_ok, marker_ok;
  bool operator==(const Seen&) const = default;
};

struct Outcome {
  std::vector<Seen> fpdus;
  std::vector<bool> zero_copy;
  Status status = Ok{};
};

using Chunker = std::function<std::size_t(std::size_t remaining)>;

Outcome Deframe(MpaDeframer& d, ByteSpan stream, const Chunker& next_size) {
  Outcome out;
  auto cb = [&](const MpaFpdu& f) {
    EXPECT_EQ(f.ulpdu.size(), f.ulpdu_length);
    out.fpdus.push_back({f.offset, f.header_offset, f.wire_length, f.ulpdu_length, f.markers,
                         Bytes(f.ulpdu.begin(), f.ulpdu.end()), f.received_crc, f.computed_crc, f.crc_ok, f.marker_ok});
    out.zero_copy.push_back(f.zero_copy);
  };
  while (!stream.empty()) {
    const std::size_t n = std::min(stream.size(), next_size(stream.size()));
    out.status = d.Feed(stream.first(n), cb);
    if (!out.status.ok()) return out;
    stream = stream.subspan(n);
  }
  return out;
}

Outcome Deframe(const MpaDeframerConfig& cfg, ByteSpan stream, const Chunker& next_size) {
  MpaDeframer d(cfg);
  return Deframe(d, stream, next_size);
}

const Chunker kWhole = [](std::size_t r) { return r; };
const Chunker kOneOctet = [](std::size_t) { return std::size_t{1}; };
Chunker RandomChunks(uint32_t seed, std::size_t max) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [rng, max](std::size_t) { return std::uniform_int_distribution<std::size_t>(1, max)(*rng); };
}

std::vector<Chunker> AllChunkings() {
  return {kWhole,
          kOneOctet,
          RandomChunks(1, 7),
          RandomChunks(2, 100),
          RandomChunks(3, 3000),
          [](std::size_t) { return std::size_t{512}; },
          [](std::size_t) { return std::size_t{513}; }};
}

struct Stream {
  Bytes wire;
  std::vector<Bytes> ulpdus;
};

// FPDUs with ULPDU sizes 0..max_ulpdu (fixed seed), Markers optional.
Stream MakeStream(bool markers, std::size_t count, std::size_t max_ulpdu, uint32_t seed, uint32_t seq_start = 0) {
  std::mt19937 rng(seed);
  Stream s;
  MarkerInserter ins(seq_start);
  for (std::size_t i = 0; i < count; ++i) {
    Bytes u(std::uniform_int_distribution<std::size_t>(0, max_ulpdu)(rng));
    for (auto& b : u) b = static_cast<uint8_t>(rng());
    if (markers)
      ins.AppendUlpdu(s.wire, u);
    else
      AppendFpdu(s.wire, u);
    s.ulpdus.push_back(std::move(u));
  }
  return s;
}

Outcome ExpectOk(const MpaDeframerConfig& cfg, ByteSpan stream, const Chunker& c = kWhole) {
  Outcome o = Deframe(cfg, stream, c);
  EXPECT_TRUE(o.status.ok()) << o.status.error().Describe();
  return o;
}

void ExpectError(const Status& s, DecodeErrorKind kind, const char* field, std::size_t offset, uint64_t value) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, kind) << s.error().Describe();
  EXPECT_STREQ(s.error().field, field);
  EXPECT_EQ(s.error().offset, offset);
  EXPECT_EQ(s.error().value, value);
}

// ---- known answers --------------------------------------------------------

// REQ R5044-4.4-T01: the hand-written Figure 5 octets deframe to the 42-octet
// ULPDU; the leading Marker is removed and covered by the CRC.
TEST(MpaDeframer, Figure5_R5044_4_4_T01) {
  for (const Chunker& c : AllChunkings()) {
    const Outcome o = ExpectOk({.markers_enabled = true}, Figure5(), c);
    ASSERT_EQ(o.fpdus.size(), 1u);
    const Seen& f = o.fpdus[0];
    EXPECT_EQ(f.offset, 0u);
    EXPECT_EQ(f.header_offset, 4u);
    EXPECT_EQ(f.wire_length, 0x34u);
    EXPECT_EQ(f.ulpdu_length, 42);
    EXPECT_EQ(f.markers, 1);
    EXPECT_EQ(f.ulpdu, FigureUlpdu(1));
    EXPECT_EQ(f.received_crc, 0x83992352u);
    EXPECT_EQ(f.computed_crc, 0x83992352u);
  }
}

// REQ R5044-4.4-T02, R5044-4.3-15: Figure 6 behind a 492-octet first FPDU;
// the Marker at 0x200 (FPDUPTR 0x14) is removed from the ULPDU.
TEST(MpaDeframer, Figure6_R5044_4_4_T02) {
  Bytes stream;
  MarkerInserter(0).AppendUlpdu(stream, Bytes(482, 0x5A));
  ASSERT_EQ(stream.size(), kFigure6Offset);
  const Bytes fig6 = Figure6();
  stream.insert(stream.end(), fig6.begin(), fig6.end());
  for (const Chunker& c : AllChunkings()) {
    const Outcome o = ExpectOk({.markers_enabled = true}, stream, c);
    ASSERT_EQ(o.fpdus.size(), 2u);
    const Seen& f = o.fpdus[1];
    EXPECT_EQ(f.offset, 0x1ecu);
    EXPECT_EQ(f.header_offset, 0x1ecu);
    EXPECT_EQ(f.ulpdu_length, 42);
    EXPECT_EQ(f.markers, 1);
    EXPECT_EQ(f.ulpdu, FigureUlpdu(2));
    EXPECT_EQ(f.received_crc, 0x98589284u);
    EXPECT_EQ(f.computed_crc, 0x98589284u);
  }
  // Starting mid-stream at 0x1ec (an auditor joining late).
  const Outcome o = ExpectOk({.markers_enabled = true, .first_position = 0x1ec}, fig6);
  ASSERT_EQ(o.fpdus.size(), 1u);
  EXPECT_EQ(o.fpdus[0].ulpdu, FigureUlpdu(2));
}

// ---- chunking ----------------------------------------------------------------

// REQ R5044-5.1-05, R5044-A.4-01, R5044-6-03: identical results whatever
// the segmentation, Markers on or off.
TEST(MpaDeframer, EveryChunkingGivesIdenticalResults_R5044_5_1_05) {
  for (bool markers : {false, true}) {
    const Stream s = MakeStream(markers, 300, 3000, 42);
    const MpaDeframerConfig cfg{.markers_enabled = markers};
    const Outcome ref = ExpectOk(cfg, s.wire);
    ASSERT_EQ(ref.fpdus.size(), s.ulpdus.size());
    for (std::size_t i = 0; i < s.ulpdus.size(); ++i) ASSERT_EQ(ref.fpdus[i].ulpdu, s.ulpdus[i]) << i;
    for (const Chunker& c : AllChunkings()) {
      const Outcome o = ExpectOk(cfg, s.wire, c);
      ASSERT_EQ(o.fpdus, ref.fpdus) << "markers " << markers;
    }
  }
}

// Zero copy: without Markers and fed whole, every ULPDU is a view of the chunk.
TEST(MpaDeframer, ZeroCopyWhenNothingSplitsTheUlpdu) {
  const Stream s = MakeStream(false, 50, 2000, 5);
  const Outcome o = ExpectOk({.markers_enabled = false}, s.wire);
  for (bool z : o.zero_copy) EXPECT_TRUE(z);
  const Outcome split = ExpectOk({.markers_enabled = false}, s.wire, kOneOctet);
  std::size_t copied = 0;
  for (bool z : split.zero_copy) copied += !z;
  EXPECT_EQ(copied, split.zero_copy.size());
}

// ---- Marker corner cases ------------------------------------------------------

// REQ R5044-4.3-07, R5044-4.3-08: Marker exactly between FPDUs; REQ
// R5044-4.4-11: Marker between PAD and CRC; REQ R5044-4.3-11: several Markers.
TEST(MpaDeframer, MarkerCornerCases_R5044_4_3_07_R5044_4_4_11) {
  MarkerInserter ins;
  Bytes wire;
  const std::vector<Bytes> ulpdus = {Bytes(502, 1),  // ends exactly at 512
                                     Bytes(10, 2),   // preceded by the Marker at 512
                                     Bytes(489, 3),  // header at 532: 2 + 489 + PAD 1 ends at 1024 -> Marker before CRC
                                     Bytes(2000, 4)};  // at 1032: Markers at 1536, 2048, 2560
  for (const Bytes& u : ulpdus) ins.AppendUlpdu(wire, u);
  for (const Chunker& c : AllChunkings()) {
    const Outcome o = ExpectOk({.markers_enabled = true}, wire, c);
    ASSERT_EQ(o.fpdus.size(), 4u);
    EXPECT_EQ(o.fpdus[0].markers, 1);
    EXPECT_EQ(o.fpdus[0].wire_length, 512u);
    EXPECT_EQ(o.fpdus[1].offset, 512u);  // the FPDUPTR-0 Marker belongs to it
    EXPECT_EQ(o.fpdus[1].header_offset, 516u);
    EXPECT_EQ(o.fpdus[1].markers, 1);
    EXPECT_EQ(o.fpdus[2].offset, 532u);
    EXPECT_EQ(o.fpdus[2].markers, 1);  // between PAD and CRC
    EXPECT_EQ(o.fpdus[2].wire_length, 2u + 489 + 1 + 4 + 4);
    EXPECT_EQ(o.fpdus[3].offset, 1024u + 4 + 4);
    EXPECT_EQ(o.fpdus[3].markers, 3);
    EXPECT_EQ(o.fpdus[3].wire_length, 2008u + 12);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(o.fpdus[i].ulpdu, ulpdus[i]);
  }
}

// REQ R5044-4.3-06: TCP sequence wrap. The inserter starts just below 2^32;
// an auditor joins at an FPDU whose SeqNum has wrapped past zero.
TEST(MpaDeframer, SequenceWrap_R5044_4_3_06) {
  const uint32_t seq_start = 0xFFFFFE10;
  const Stream s = MakeStream(true, 40, 900, 9, seq_start);
  const Outcome all = ExpectOk({.markers_enabled = true}, s.wire);
  ASSERT_EQ(all.fpdus.size(), 40u);
  // Join at the first FPDU starting at a SeqNum beyond the wrap.
  std::size_t k = 0;
  while (static_cast<uint32_t>(seq_start + all.fpdus[k].offset) > 0x80000000u) ++k;
  const uint32_t join_seq = static_cast<uint32_t>(seq_start + all.fpdus[k].offset);
  ASSERT_LT(join_seq, 0x1000u);
  const MpaDeframerConfig late{.markers_enabled = true, .first_position = MarkerSpacePosition(join_seq, seq_start)};
  const Outcome o = ExpectOk(late, ByteSpan(s.wire).subspan(all.fpdus[k].offset), RandomChunks(4, 50));
  ASSERT_EQ(o.fpdus.size(), 40 - k);
  for (std::size_t i = 0; i < o.fpdus.size(); ++i) EXPECT_EQ(o.fpdus[i].ulpdu, s.ulpdus[k + i]);
}

// REQ R5044-7.1.1-06..08 (decisions D-G3): Markers in one direction only - two
// independently configured deframers, as NegotiateMpa decides.
TEST(MpaDeframer, MarkersInOneDirectionOnly_R5044_7_1_1_08) {
  MpaStartupFrame req, rep;
  req.marker_required = true;  // Responder -> Initiator carries Markers
  req.crc_required = true;
  rep.is_reply = true;
  const MpaNegotiation n = NegotiateMpa(req, rep);
  const Stream i_to_r = MakeStream(n.markers_initiator_to_responder, 30, 1500, 1);
  const Stream r_to_i = MakeStream(n.markers_responder_to_initiator, 30, 1500, 2);
  const Outcome a = ExpectOk({.crc_enabled = n.crc, .markers_enabled = n.markers_initiator_to_responder}, i_to_r.wire);
  const Outcome b =
      ExpectOk({.crc_enabled = n.crc, .markers_enabled = n.markers_responder_to_initiator}, r_to_i.wire, kOneOctet);
  ASSERT_EQ(a.fpdus.size(), 30u);
  ASSERT_EQ(b.fpdus.size(), 30u);
  EXPECT_EQ(a.fpdus[0].markers, 0);
  EXPECT_EQ(a.fpdus[0].header_offset, 0u);
  EXPECT_EQ(b.fpdus[0].header_offset, 4u);  // behind the leading Marker
  // The wrong configuration is caught: the leading Marker reads as ULPDU_Length 0.
  const Outcome wrong = Deframe({.markers_enabled = false}, r_to_i.wire, kWhole);
  EXPECT_FALSE(wrong.status.ok());
}

// REQ R5044-4.3-09, R5044-4.2-06: FPDUPTR low bits ignored; R5044-4.2-03: RESERVED ignored.
TEST(MpaDeframer, MarkerLowBitsAndReservedIgnored_R5044_4_3_09) {
  MarkerInserter ins(0, MarkerInserterOptions{.reserved = 0xFFFF, .fpduptr_xor = 0x3});
  Bytes wire;
  ins.AppendUlpdu(wire, Bytes(1500, 6));
  const Outcome o = ExpectOk({.markers_enabled = true}, wire);
  ASSERT_EQ(o.fpdus.size(), 1u);
  EXPECT_EQ(o.fpdus[0].ulpdu, Bytes(1500, 6));
}

// ---- error paths ---------------------------------------------------------------

Bytes RequestFrame(std::size_t pd = 3, bool reply = false) {
  MpaStartupFrame f;
  f.is_reply = reply;
  f.marker_required = true;
  f.crc_required = true;
  f.private_data.assign(pd, 'x');
  return EncodeMpaStartupFrame(f);
}

const MpaDeframerConfig kExpectRequest{.expect_startup_frame = true, .startup_kind = MpaFrameKind::kRequest};

// REQ R5044-7.1.2-R09a/R10a: an incomplete frame is only an error at the end.
TEST(MpaDeframerErrors, TruncatedStartupFrame) {
  for (const Chunker& c : {kWhole, kOneOctet}) {
    MpaDeframer d(kExpectRequest);
    const Bytes req = RequestFrame();
    const Outcome o = Deframe(d, ByteSpan(req).first(10), c);
    EXPECT_TRUE(o.status.ok());
    ExpectError(d.Finish(), DecodeErrorKind::kTruncated, "MPA Request/Reply Frame", 0, 10);
  }
  MpaDeframer empty(kExpectRequest);
  ExpectError(empty.Finish(), DecodeErrorKind::kTruncated, "MPA Request/Reply Frame", 0, 0);
}

// REQ R5044-7.1.1-03, R5044-7.1.2-R08a: a Reply where a Request is due; the
// error comes with the first wrong octet and is latched.
TEST(MpaDeframerErrors, BadKeyIsReportedAtOnceAndLatched_R5044_7_1_1_03) {
  const Bytes rep = RequestFrame(3, /*reply=*/true);
  MpaDeframer d(kExpectRequest);
  std::size_t fed = 0;
  Status st = Ok{};
  int calls = 0;
  for (; fed < rep.size() && st.ok(); ++fed)
    st = d.Feed(ByteSpan(rep).subspan(fed, 1), [&](const MpaFpdu&) { ++calls; });
  EXPECT_EQ(fed, 10u);  // octet 9 ('p') is the first that cannot be a Request
  ExpectError(st, DecodeErrorKind::kBadKey, "Key (expected \"MPA ID Req Frame\")", 9, 'p');
  ExpectError(d.Feed(EncodeFpdu(Bytes(20, 0)), [&](const MpaFpdu&) { ++calls; }), DecodeErrorKind::kBadKey,
              "Key (expected \"MPA ID Req Frame\")", 9, 'p');
  ExpectError(d.Finish(), DecodeErrorKind::kBadKey, "Key (expected \"MPA ID Req Frame\")", 9, 'p');
  EXPECT_EQ(calls, 0);
}

// REQ R5044-7.1.1-22: PD_Length > 512, known from the 20-octet header alone.
TEST(MpaDeframerErrors, PrivateDataTooLong_R5044_7_1_1_22) {
  Bytes req = RequestFrame(0);
  StoreBe16(req.data() + 18, 600);
  for (const Chunker& c : {kWhole, kOneOctet}) {
    const Outcome o = Deframe(kExpectRequest, req, c);
    ExpectError(o.status, DecodeErrorKind::kTooLong, "PD_Length", 18, 600);
  }
}

// REQ R5044-4.4-15, R5044-8-09: bad CRC at the CRC field's stream offset; the
// FPDU and everything after it are not delivered.
TEST(MpaDeframerErrors, BadCrcWithExactOffset_R5044_4_4_15) {
  Bytes wire;
  for (std::size_t n : {100u, 50u, 30u}) AppendFpdu(wire, Bytes(n, 0x33));  // 108 + 56 + 36
  ASSERT_EQ(wire.size(), 200u);
  wire[108 + 10] ^= 0x80;
  const uint32_t received = LoadCrc32c(wire.data() + 160);
  const uint32_t computed = Crc32c(ByteSpan(wire).subspan(108, 52));
  for (const Chunker& c : AllChunkings()) {
    MpaDeframer d;
    const Outcome o = Deframe(d, wire, c);
    ExpectError(o.status, DecodeErrorKind::kCrcMismatch, "CRC", 160, uint64_t{received} << 32 | computed);
    ASSERT_EQ(o.fpdus.size(), 1u);
    ExpectError(d.Feed(EncodeFpdu(Bytes(4, 0)), [](const MpaFpdu&) { FAIL(); }), DecodeErrorKind::kCrcMismatch, "CRC",
                160, uint64_t{received} << 32 | computed);
  }
}

// Same with Markers: FPDU of 600 at position 0 is M(4) + 508 + M(4) + 100,
// its CRC field is at wire offset 612.
TEST(MpaDeframerErrors, BadCrcWithMarkersExactOffset_R5044_4_4_14) {
  Bytes wire;
  MarkerInserter ins;
  ins.AppendUlpdu(wire, Bytes(600, 0x44));
  ASSERT_EQ(wire.size(), 616u);
  wire[100] ^= 1;
  for (const Chunker& c : AllChunkings()) {
    const Outcome o = Deframe({.markers_enabled = true}, wire, c);
    ASSERT_FALSE(o.status.ok());
    EXPECT_EQ(o.status.error().kind, DecodeErrorKind::kCrcMismatch);
    EXPECT_EQ(o.status.error().offset, 612u);
  }
}

// A 1500-octet ULPDU at position 0: Markers at 0, 512 (FPDUPTR 508), 1024
// (1020); CRC field at 1516.
Bytes MarkedStreamWithFpduPtrAt512(uint16_t fpduptr, bool fix_crc) {
  Bytes wire;
  MarkerInserter ins;
  ins.AppendUlpdu(wire, Bytes(1500, 0x55));
  EXPECT_EQ(wire.size(), 1520u);
  EXPECT_EQ(LoadMarker(wire.data() + 512).fpduptr, 508);
  StoreMarker(wire.data() + 512, fpduptr);
  if (fix_crc) StoreCrc32c(wire.data() + 1516, Crc32c(ByteSpan(wire).first(1516)));
  ins.AppendUlpdu(wire, Bytes(8, 0x66));
  return wire;
}

// REQ R5044-8-03, R5044-8-T03, R5044-4.3-05: a wrong FPDUPTR under a good CRC.
TEST(MpaDeframerErrors, MarkerMismatchAtMarkerOffset_R5044_8_T03) {
  const Bytes wire = MarkedStreamWithFpduPtrAt512(0x200, /*fix_crc=*/true);
  for (const Chunker& c : AllChunkings()) {
    const Outcome o = Deframe({.markers_enabled = true}, wire, c);
    ExpectError(o.status, DecodeErrorKind::kMarkerMismatch, "FPDUPTR", 512, 0x200);
    EXPECT_TRUE(o.fpdus.empty());
  }
  // Leading Marker with a non-zero FPDUPTR.
  Bytes lead = MarkedStreamWithFpduPtrAt512(508, true);
  StoreMarker(lead.data(), 4);
  StoreCrc32c(lead.data() + 1516, Crc32c(ByteSpan(lead).first(1516)));
  ExpectError(Deframe({.markers_enabled = true}, lead, kWhole).status, DecodeErrorKind::kMarkerMismatch, "FPDUPTR", 0,
              4);
  // Low bits only: not a mismatch (R5044-4.3-09).
  EXPECT_TRUE(Deframe({.markers_enabled = true}, MarkedStreamWithFpduPtrAt512(508 | 3, true), kWhole).status.ok());
}

// REQ R5044-8-T03: with a bad CRC as well, the CRC error is what is reported.
TEST(MpaDeframerErrors, CrcIsCheckedBeforeMarkers_R5044_8_T03) {
  const Bytes wire = MarkedStreamWithFpduPtrAt512(0x200, /*fix_crc=*/false);
  const Outcome o = Deframe({.markers_enabled = true}, wire, kWhole);
  ASSERT_FALSE(o.status.ok());
  EXPECT_EQ(o.status.error().kind, DecodeErrorKind::kCrcMismatch);
  EXPECT_EQ(o.status.error().offset, 1516u);
}

// REQ R5044-8-05: checking Markers is OPTIONAL; an auditor may also go on.
TEST(MpaDeframerErrors, MarkerCheckOffOrContinue_R5044_8_05) {
  const Bytes wire = MarkedStreamWithFpduPtrAt512(0x200, true);
  const Outcome off = ExpectOk({.markers_enabled = true, .check_markers = false}, wire);
  ASSERT_EQ(off.fpdus.size(), 2u);
  EXPECT_TRUE(off.fpdus[0].marker_ok);
  MpaDeframer d({.markers_enabled = true, .continue_after_marker_mismatch = true});
  std::vector<uint64_t> bad;
  ASSERT_TRUE(d.Feed(wire, [&](const MpaFpdu& f) {
                 if (!f.marker_ok) bad.push_back(f.bad_marker_offset);
               }).ok());
  EXPECT_EQ(bad, std::vector<uint64_t>{512});
  EXPECT_EQ(d.fpdu_count(), 2u);
}

// The configured maximum bounds memory: reported from the ULPDU_Length alone.
TEST(MpaDeframerErrors, UlpduLengthOverMaximum) {
  Bytes wire;
  AppendFpdu(wire, Bytes(100, 1));
  AppendFpdu(wire, Bytes(1001, 2));
  for (const Chunker& c : {kWhole, kOneOctet}) {
    MpaDeframer d({.max_ulpdu_length = 1000});
    const Outcome o = Deframe(d, ByteSpan(wire).first(108 + 2), c);
    ExpectError(o.status, DecodeErrorKind::kTooLong, "ULPDU_Length", 108, 1001);
    EXPECT_EQ(o.fpdus.size(), 1u);
  }
}

// ULPDU_Length below the smallest DDP header (14): flagged, or rejected on request.
TEST(MpaDeframerErrors, UlpduShorterThanDdpHeader) {
  Bytes wire;
  AppendFpdu(wire, Bytes(14, 1));
  AppendFpdu(wire, Bytes(10, 2));
  const Outcome o = ExpectOk({}, wire);
  ASSERT_EQ(o.fpdus.size(), 2u);
  MpaDeframer d;
  std::vector<bool> flags;
  ASSERT_TRUE(d.Feed(wire, [&](const MpaFpdu& f) { flags.push_back(f.shorter_than_ddp_header); }).ok());
  EXPECT_EQ(flags, (std::vector<bool>{false, true}));
  const Outcome strict = Deframe({.reject_shorter_than_ddp_header = true}, wire, kWhole);
  ExpectError(strict.status, DecodeErrorKind::kInvalidValue, "ULPDU_Length", 20, 10);
}

TEST(MpaDeframerErrors, FinishReportsPartialFpdu) {
  Bytes wire;
  AppendFpdu(wire, Bytes(100, 1));
  AppendFpdu(wire, Bytes(100, 2));
  MpaDeframer d;
  const Outcome o = Deframe(d, ByteSpan(wire).first(108 + 50), RandomChunks(7, 30));
  EXPECT_TRUE(o.status.ok());
  EXPECT_EQ(o.fpdus.size(), 1u);
  EXPECT_EQ(d.buffered(), 50u);
  ExpectError(d.Finish(), DecodeErrorKind::kTruncated, "FPDU", 108, 50);
  EXPECT_TRUE(d.Feed(ByteSpan(wire).subspan(158), [](const MpaFpdu&) {}).ok());
  EXPECT_TRUE(d.Finish().ok());
  EXPECT_EQ(d.fpdu_count(), 2u);
}

// An auditor's mode: deliver a bad-CRC FPDU flagged and go on by its length.
TEST(MpaDeframerErrors, ContinueAfterCrcError) {
  Bytes wire;
  for (std::size_t n : {100u, 50u, 30u}) AppendFpdu(wire, Bytes(n, 0x33));
  wire[108 + 10] ^= 0x80;
  const Outcome o = ExpectOk({.continue_after_crc_error = true}, wire, kOneOctet);
  ASSERT_EQ(o.fpdus.size(), 3u);
  EXPECT_TRUE(o.fpdus[0].crc_ok);
  EXPECT_FALSE(o.fpdus[1].crc_ok);
  EXPECT_NE(o.fpdus[1].received_crc, o.fpdus[1].computed_crc);
  EXPECT_TRUE(o.fpdus[2].crc_ok);
}

// REQ R5044-4.1-07, R5044-7.1.1-13: CRCs off - any CRC field is valid;
// REQ R5044-4.4-08: an auditor can still see whether the peer generates it.
TEST(MpaDeframer, CrcDisabledAcceptsAnyCrcField_R5044_4_1_07) {
  Bytes wire;
  AppendFpdu(wire, Bytes(40, 1), {.crc_enabled = false, .crc_xor = 0x12345678});
  AppendFpdu(wire, Bytes(40, 2), {.crc_enabled = true});
  const Outcome o = ExpectOk({.crc_enabled = false}, wire);
  ASSERT_EQ(o.fpdus.size(), 2u);
  EXPECT_EQ(o.fpdus[0].received_crc, 0x12345678u);
  EXPECT_EQ(o.fpdus[0].computed_crc, 0u);
  const Outcome seen = ExpectOk({.crc_enabled = false, .compute_crc_when_disabled = true}, wire);
  EXPECT_NE(seen.fpdus[0].computed_crc, seen.fpdus[0].received_crc);
  EXPECT_EQ(seen.fpdus[1].computed_crc, seen.fpdus[1].received_crc);
  EXPECT_TRUE(seen.fpdus[0].crc_ok);
}

// ---- startup frame, then Full Operation ------------------------------------------

// REQ R5044-7.1.2-R07, R5044-4.3-10: SeqStart is the octet after the frame,
// so with Markers the first FPDU octets are 00 00 00 00.
TEST(MpaDeframer, StartupFrameThenFpdusAfterNegotiation_R5044_7_1_2_R07) {
  const Bytes req = RequestFrame(3);  // 23 octets
  const Stream s = MakeStream(true, 20, 1200, 8);
  Bytes wire = req;
  wire.insert(wire.end(), s.wire.begin(), s.wire.end());
  for (const Chunker& c : AllChunkings()) {
    MpaDeframer d(kExpectRequest);
    Outcome o = Deframe(d, wire, c);
    ASSERT_TRUE(o.status.ok()) << o.status.error().Describe();
    EXPECT_TRUE(o.fpdus.empty());
    ASSERT_TRUE(d.startup_frame().has_value());
    EXPECT_TRUE(d.startup_frame()->marker_required);
    EXPECT_EQ(d.startup_frame()->private_data, Bytes(3, 'x'));
    EXPECT_TRUE(d.awaiting_full_operation());
    EXPECT_EQ(d.buffered(), s.wire.size());
    d.StartFullOperation(/*crc_enabled=*/true, /*markers_enabled=*/true);
    o = Outcome{};  // the held octets are parsed by the next Feed, even an empty one
    ASSERT_TRUE(d.Feed(ByteSpan(), [&](const MpaFpdu& f) {
                   o.fpdus.push_back({f.offset, f.header_offset, f.wire_length, f.ulpdu_length, f.markers,
                                      Bytes(f.ulpdu.begin(), f.ulpdu.end()), f.received_crc, f.computed_crc, f.crc_ok,
                                      f.marker_ok});
                 }).ok());
    ASSERT_EQ(o.fpdus.size(), 20u);
    EXPECT_EQ(o.fpdus[0].offset, 23u);
    EXPECT_EQ(o.fpdus[0].header_offset, 27u);
    for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(o.fpdus[i].ulpdu, s.ulpdus[i]);
    EXPECT_TRUE(d.Finish().ok());
  }
}

TEST(MpaDeframer, StartupFrameWithoutWaiting) {
  const Bytes rep = RequestFrame(5, /*reply=*/true);
  const Stream s = MakeStream(false, 10, 300, 3);
  Bytes wire = rep;
  wire.insert(wire.end(), s.wire.begin(), s.wire.end());
  const MpaDeframerConfig cfg{
      .expect_startup_frame = true, .startup_kind = MpaFrameKind::kReply, .wait_for_full_operation = false};
  for (const Chunker& c : AllChunkings()) {
    const Outcome o = ExpectOk(cfg, wire, c);
    ASSERT_EQ(o.fpdus.size(), 10u);
    EXPECT_EQ(o.fpdus[0].offset, rep.size());
    EXPECT_EQ(o.fpdus[9].ulpdu, s.ulpdus[9]);
  }
  // StartFullOperation before the frame is complete works the same.
  MpaDeframer d(kExpectRequest);
  d.StartFullOperation(true, false);
  Bytes w2 = RequestFrame(0);
  w2.insert(w2.end(), s.wire.begin(), s.wire.end());
  EXPECT_EQ(Deframe(d, w2, kOneOctet).fpdus.size(), 10u);
}

// ---- robustness ---------------------------------------------------------------

// Any start position, including ones no conformant stream has (not a
// multiple of 4: a Marker may then split ULPDU_Length or the CRC field).
TEST(MpaDeframer, RoundTripAtEveryStartPosition) {
  for (uint32_t pos = 0; pos < 1024; ++pos) {
    MarkerInserter ins(0, pos);
    Bytes wire;
    std::vector<Bytes> ulpdus;
    for (std::size_t n : {0u, 1u, 13u, 509u, 1200u}) {
      ulpdus.emplace_back(n, static_cast<uint8_t>(n));
      ins.AppendUlpdu(wire, ulpdus.back());
    }
    const MpaDeframerConfig cfg{.markers_enabled = true, .first_position = pos};
    for (const Chunker& c : {kWhole, RandomChunks(pos, 40)}) {
      const Outcome o = Deframe(cfg, wire, c);
      ASSERT_TRUE(o.status.ok()) << pos << ": " << o.status.error().Describe();
      ASSERT_EQ(o.fpdus.size(), ulpdus.size()) << pos;
      for (std::size_t i = 0; i < ulpdus.size(); ++i) ASSERT_EQ(o.fpdus[i].ulpdu, ulpdus[i]) << pos;
    }
  }
}

// Garbage in: never out of bounds (run under ASan), and the same FPDUs and
// the same error whatever the chunking.
TEST(MpaDeframer, GarbageGivesSameOutcomeInEveryChunking) {
  std::mt19937 rng(99);
  for (int round = 0; round < 300; ++round) {
    Bytes junk(std::uniform_int_distribution<std::size_t>(0, 3000)(rng));
    for (auto& b : junk) b = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : 0);  // small lengths are likely
    const MpaDeframerConfig cfg{.crc_enabled = (round & 1) != 0,
                                .markers_enabled = (round & 2) != 0,
                                .first_position = static_cast<uint32_t>(rng()),
                                .expect_startup_frame = round % 7 == 0,
                                .wait_for_full_operation = false,
                                .max_ulpdu_length = 2000,
                                .continue_after_crc_error = (round & 4) != 0,
                                .continue_after_marker_mismatch = (round & 8) != 0};
    const Outcome ref = Deframe(cfg, junk, kWhole);
    for (const Chunker& c : {kOneOctet, RandomChunks(round, 64)}) {
      const Outcome o = Deframe(cfg, junk, c);
      ASSERT_EQ(o.fpdus, ref.fpdus) << round;
      ASSERT_EQ(o.status.ok(), ref.status.ok()) << round;
      if (!ref.status.ok()) {
        EXPECT_EQ(o.status.error().kind, ref.status.error().kind) << round;
        EXPECT_EQ(o.status.error().offset, ref.status.error().offset) << round;
        EXPECT_EQ(o.status.error().value, ref.status.error().value) << round;
      }
    }
  }
}

}  // namespace
}  // namespace rdmapct::wire
