#include "reference/wire/mpa.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace rdmapct::wire {
namespace {

// Hand-written from RFC 5044 Figure 8: Request, M=1 C=1, Rev 1, 3 octets "abc".
const Bytes kRequestMC = {'M', 'P', 'A', ' ', 'I',  'D',  ' ',  'R',  'e', 'q', ' ', 'F',
                          'r', 'a', 'm', 'e', 0xC0, 0x01, 0x00, 0x03, 'a', 'b', 'c'};

// Hand-written from RFC 6581 §6/§9: Reply, C=1 S=1, Rev 2, PD_Length 6:
// A=1 B=0 IRD=5 C=1 D=1 ORD=3 -> 0x8005C003, then ULP Private Data "hi".
const Bytes kEnhancedReply = {'M', 'P', 'A', ' ',  'I',  'D',  ' ',  'R',  'e',  'p',  ' ',  'F', 'r',
                              'a', 'm', 'e', 0x50, 0x02, 0x00, 0x06, 0x80, 0x05, 0xC0, 0x03, 'h', 'i'};

MpaStartupFrame Decoded(const Bytes& b, MpaFrameKind expect = MpaFrameKind::kEither) {
  auto r = DecodeMpaStartupFrame(b, {.expect = expect});
  EXPECT_TRUE(r.ok()) << r.error().Describe();
  return r.ok() ? *r : MpaStartupFrame{};
}

TEST(MpaKey, ConstantsAreTheAsciiKeys_R5044_7_1_1_02_04) {
  EXPECT_EQ(std::memcmp(kMpaRequestKey.data(), "MPA ID Req Frame", 16), 0);
  EXPECT_EQ(std::memcmp(kMpaReplyKey.data(), "MPA ID Rep Frame", 16), 0);
}

TEST(MpaStartupFrame, DecodesHandWrittenRequest_R5044_7_1_1_01) {
  const MpaStartupFrame f = Decoded(kRequestMC, MpaFrameKind::kRequest);
  EXPECT_FALSE(f.is_reply);
  EXPECT_TRUE(f.marker_required);
  EXPECT_TRUE(f.crc_required);
  EXPECT_FALSE(f.reject);
  EXPECT_FALSE(f.enhanced);
  EXPECT_EQ(f.res, 0);
  EXPECT_EQ(f.revision, 1);
  EXPECT_FALSE(f.enhanced_data.has_value());
  EXPECT_EQ(f.private_data, (Bytes{'a', 'b', 'c'}));
  EXPECT_EQ(EncodeMpaStartupFrame(f), kRequestMC);
  EXPECT_EQ(f.EncodedSize(), kRequestMC.size());
}

TEST(MpaStartupFrame, DecodesHandWrittenEnhancedReply_R6581_9_01) {
  const MpaStartupFrame f = Decoded(kEnhancedReply, MpaFrameKind::kReply);
  EXPECT_TRUE(f.is_reply);
  EXPECT_FALSE(f.marker_required);
  EXPECT_TRUE(f.crc_required);
  EXPECT_TRUE(f.enhanced);
  EXPECT_EQ(f.revision, 2);
  ASSERT_TRUE(f.enhanced_data.has_value());
  const EnhancedIrdOrd& e = *f.enhanced_data;
  EXPECT_TRUE(e.peer_to_peer);
  EXPECT_FALSE(e.send_rtr);
  EXPECT_EQ(e.ird, 5);
  EXPECT_TRUE(e.write_rtr);
  EXPECT_TRUE(e.read_rtr);
  EXPECT_EQ(e.ord, 3);
  EXPECT_EQ(f.private_data, (Bytes{'h', 'i'}));  // REQ R6581-9-02: ULP part only
  EXPECT_EQ(EncodeMpaStartupFrame(f), kEnhancedReply);
}

// REQ R6581-9-01: big-endian word, 14-bit IRD/ORD, flags at bits 31, 30, 15, 14.
TEST(EnhancedWord, BitPositions_R6581_9_01) {
  EXPECT_EQ(EncodeEnhancedWord({.peer_to_peer = true}), 0x80000000u);
  EXPECT_EQ(EncodeEnhancedWord({.send_rtr = true}), 0x40000000u);
  EXPECT_EQ(EncodeEnhancedWord({.ird = 0x3FFF}), 0x3FFF0000u);
  EXPECT_EQ(EncodeEnhancedWord({.write_rtr = true}), 0x00008000u);
  EXPECT_EQ(EncodeEnhancedWord({.read_rtr = true}), 0x00004000u);
  EXPECT_EQ(EncodeEnhancedWord({.ord = 0x3FFF}), 0x00003FFFu);
  EXPECT_EQ(EncodeEnhancedWord({.ird = 0xFFFF, .ord = 0xFFFF}), 0x3FFF3FFFu);  // masked to 14 bits
  const EnhancedIrdOrd e = DecodeEnhancedWord(0x7FFEBFFDu);
  EXPECT_FALSE(e.peer_to_peer);
  EXPECT_TRUE(e.send_rtr);
  EXPECT_EQ(e.ird, 0x3FFE);
  EXPECT_TRUE(e.write_rtr);
  EXPECT_FALSE(e.read_rtr);
  EXPECT_EQ(e.ord, 0x3FFD);
}

// decisions D-H3: S with Rev < 2 is an RFC 5044 receiver's view - the 4 octets
// stay ULP Private Data; Rev 3 (> 2) still decodes the enhanced word.
TEST(MpaStartupFrame, EnhancedWordOnlyWithRevAtLeast2AndS_R6581_6_04) {
  Bytes rev1 = kEnhancedReply;
  rev1[17] = 1;
  MpaStartupFrame f = Decoded(rev1);
  EXPECT_TRUE(f.enhanced);
  EXPECT_FALSE(f.enhanced_data.has_value());
  EXPECT_EQ(f.private_data, (Bytes{0x80, 0x05, 0xC0, 0x03, 'h', 'i'}));
  EXPECT_EQ(EncodeMpaStartupFrame(f), rev1);

  Bytes rev3 = kEnhancedReply;
  rev3[17] = 3;
  f = Decoded(rev3);
  EXPECT_EQ(f.revision, 3);
  ASSERT_TRUE(f.enhanced_data.has_value());
  EXPECT_EQ(f.enhanced_data->ird, 5);

  // Rev 2 with S = 0 (decisions D-H3): no enhanced data, all Private Data to the ULP.
  Bytes s0 = kEnhancedReply;
  s0[16] = 0x40;
  f = Decoded(s0);
  EXPECT_FALSE(f.enhanced);
  EXPECT_FALSE(f.enhanced_data.has_value());
  EXPECT_EQ(f.private_data.size(), 6u);
}

// REQ R5044-7.1.1-18: Rev is reported as a value, never rejected by the codec.
TEST(MpaStartupFrame, RevisionIsReportedNotJudged_R5044_7_1_1_18) {
  for (uint8_t rev : {0, 1, 2, 0xFF}) {
    Bytes b = kRequestMC;
    b[17] = rev;
    EXPECT_EQ(Decoded(b).revision, rev);
  }
}

// REQ R5044-7.1.1-16, R6581-6-03: Res is not checked on reception;
// REQ R5044-7.1.1-15: zero on send unless a tester sets it.
TEST(MpaStartupFrame, ResIsNotCheckedAndCanBeSentNonZero_R5044_7_1_1_16) {
  Bytes b = kRequestMC;
  b[16] = 0xC0 | 0x0F;
  MpaStartupFrame f = Decoded(b);
  EXPECT_EQ(f.res, 0x0F);
  EXPECT_EQ(EncodeMpaStartupFrame(f), b);
  f.res = 0;
  EXPECT_EQ(EncodeMpaStartupFrame(f)[16], 0xC0);
  MpaStartupFrame plain;
  EXPECT_EQ(EncodeMpaStartupFrame(plain)[16], 0x00);
}

// REQ R5044-7.1.1-14: R in a Request is not checked on reception.
TEST(MpaStartupFrame, RequestWithRIsDecoded_R5044_7_1_1_14) {
  Bytes b = kRequestMC;
  b[16] |= 0x20;
  const MpaStartupFrame f = Decoded(b, MpaFrameKind::kRequest);
  EXPECT_TRUE(f.reject);
}

TEST(MpaStartupFrame, TruncationAtEveryLength_R5044_7_1_2_R09a) {
  struct Expect {
    const char* field;
    std::size_t offset;
  };
  for (std::size_t n = 0; n < kRequestMC.size(); ++n) {
    auto r = DecodeMpaStartupFrame(ByteSpan(kRequestMC).first(n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.error().kind, DecodeErrorKind::kTruncated) << n;
    Expect e = n < 16    ? Expect{"Key", 0}
               : n == 16 ? Expect{"M C R S Res", 16}
               : n == 17 ? Expect{"Rev", 17}
               : n < 20  ? Expect{"PD_Length", 18}
                         : Expect{"Private Data", 20};
    EXPECT_STREQ(r.error().field, e.field) << n;
    EXPECT_EQ(r.error().offset, e.offset) << n;
    EXPECT_EQ(r.error().value, n - e.offset) << n;  // octets available from the field on
  }
}

TEST(MpaStartupFrame, LengthNeededForStreamingCallers) {
  EXPECT_EQ(MpaStartupFrameLength(ByteSpan()), 20u);
  EXPECT_EQ(MpaStartupFrameLength(ByteSpan(kRequestMC).first(19)), 20u);
  EXPECT_EQ(MpaStartupFrameLength(ByteSpan(kRequestMC).first(20)), 23u);
  EXPECT_EQ(MpaStartupFrameLength(kEnhancedReply), 26u);
}

// REQ R5044-7.1.2-R09c: octets after the frame (the first FPDU) are not Private Data.
TEST(MpaStartupFrame, TrailingOctetsAreNotPrivateData_R5044_7_1_2_R09c) {
  Bytes b = kRequestMC;
  b.insert(b.end(), {0x00, 0x2a, 0x41, 0x43});
  const MpaStartupFrame f = Decoded(b);
  EXPECT_EQ(f.private_data, (Bytes{'a', 'b', 'c'}));
  EXPECT_EQ(MpaStartupFrameLength(b), kRequestMC.size());
}

// REQ R5044-7.1.1-03/05, R5044-7.1.2-R05, R5044-7.1.2-R08a
TEST(MpaStartupFrame, BadKeyNamesExpectedKeyAndOffset_R5044_7_1_1_03) {
  // A Reply where a Request is expected (Initiator/Initiator detection works
  // the other way round): first differing octet is 9 ('p' vs 'q').
  auto r = DecodeMpaStartupFrame(kEnhancedReply, {.expect = MpaFrameKind::kRequest});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kBadKey);
  EXPECT_STREQ(r.error().field, "Key (expected \"MPA ID Req Frame\")");
  EXPECT_EQ(r.error().offset, 9u);
  EXPECT_EQ(r.error().value, uint64_t{'p'});

  r = DecodeMpaStartupFrame(kRequestMC, {.expect = MpaFrameKind::kReply});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kBadKey);
  EXPECT_STREQ(r.error().field, "Key (expected \"MPA ID Rep Frame\")");
  EXPECT_EQ(r.error().offset, 9u);

  // Garbage: the error comes as soon as the first wrong octet is present.
  const std::string http = "GET / HTTP/1.1\r\n\r\n";
  r = DecodeMpaStartupFrame(ByteSpan(reinterpret_cast<const uint8_t*>(http.data()), 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kBadKey);
  EXPECT_EQ(r.error().offset, 0u);
  EXPECT_EQ(r.error().value, uint64_t{'G'});
  const Bytes partial = {'M', 'P', 'A', ' ', 'X'};
  r = DecodeMpaStartupFrame(partial);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kBadKey);
  EXPECT_EQ(r.error().offset, 4u);
  EXPECT_EQ(r.error().value, uint64_t{'X'});
}

// REQ R5044-7.1.1-22, R5044-7.1.1-24: at most 512 octets of Private Data.
TEST(MpaStartupFrame, PrivateDataLimit_R5044_7_1_1_22) {
  MpaStartupFrame f;
  f.private_data.assign(512, 0xAB);
  const Bytes ok = EncodeMpaStartupFrame(f);
  ASSERT_EQ(ok.size(), 532u);
  EXPECT_EQ(LoadBe16(ok.data() + 18), 512);
  EXPECT_EQ(Decoded(ok).private_data.size(), 512u);

  f.private_data.assign(513, 0xAB);
  const Bytes big = EncodeMpaStartupFrame(f);  // a tester may send it on purpose
  ASSERT_EQ(big.size(), 533u);
  // Reported from the header alone: the caller need not wait for 513 octets.
  for (std::size_t n : {std::size_t{20}, big.size()}) {
    auto r = DecodeMpaStartupFrame(ByteSpan(big).first(n));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, DecodeErrorKind::kTooLong);
    EXPECT_STREQ(r.error().field, "PD_Length");
    EXPECT_EQ(r.error().offset, 18u);
    EXPECT_EQ(r.error().value, 513u);
  }
  // Enhanced word counts toward the 512 (R6581-6-07).
  f.private_data.assign(509, 0);
  f.enhanced = true;
  f.revision = 2;
  f.enhanced_data = EnhancedIrdOrd{};
  auto r = DecodeMpaStartupFrame(EncodeMpaStartupFrame(f));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().value, 513u);
}

// REQ R6581-6-08: S = 1 (Rev >= 2) needs at least the 4-octet enhanced word.
TEST(MpaStartupFrame, EnhancedFrameTooShortForWord_R6581_6_08) {
  Bytes b(kEnhancedReply.begin(), kEnhancedReply.begin() + 22);
  b[19] = 2;
  auto r = DecodeMpaStartupFrame(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kInvalidValue);
  EXPECT_STREQ(r.error().field, "PD_Length");
  EXPECT_EQ(r.error().offset, 18u);
  EXPECT_EQ(r.error().value, 2u);
}

// A tester builds a frame whose PD_Length disagrees with the Private Data.
TEST(MpaStartupFrame, PdLengthOverride_R5044_7_1_1_22) {
  MpaStartupFrame f;
  f.private_data = {1, 2, 3};
  f.pd_length_override = 7;
  const Bytes b = EncodeMpaStartupFrame(f);
  EXPECT_EQ(b.size(), 23u);
  EXPECT_EQ(LoadBe16(b.data() + 18), 7);
  EXPECT_EQ(MpaStartupFrameLength(b), 27u);
  auto r = DecodeMpaStartupFrame(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kTruncated);
  EXPECT_STREQ(r.error().field, "Private Data");
}

TEST(MpaStartupFrame, RoundTripOfEveryFlagCombination) {
  for (int bits = 0; bits < 64; ++bits) {
    MpaStartupFrame f;
    f.is_reply = bits & 1;
    f.marker_required = bits & 2;
    f.crc_required = bits & 4;
    f.reject = bits & 8;
    f.enhanced = bits & 16;
    f.revision = (bits & 32) ? 2 : 1;
    if (f.enhanced && f.revision >= 2) f.enhanced_data = EnhancedIrdOrd{.peer_to_peer = true, .ird = 9, .ord = 0x3FFF};
    f.private_data = {static_cast<uint8_t>(bits)};
    const Bytes b = EncodeMpaStartupFrame(f);
    const MpaStartupFrame g = Decoded(b);
    EXPECT_EQ(g.is_reply, f.is_reply);
    EXPECT_EQ(g.marker_required, f.marker_required);
    EXPECT_EQ(g.crc_required, f.crc_required);
    EXPECT_EQ(g.reject, f.reject);
    EXPECT_EQ(g.enhanced, f.enhanced);
    EXPECT_EQ(g.revision, f.revision);
    EXPECT_EQ(g.enhanced_data, f.enhanced_data);
    EXPECT_EQ(g.private_data, f.private_data);
    EXPECT_EQ(EncodeMpaStartupFrame(g), b);
  }
}

// ---- negotiation ----

MpaStartupFrame Frame(bool reply, bool m, bool c) {
  MpaStartupFrame f;
  f.is_reply = reply;
  f.marker_required = m;
  f.crc_required = c;
  return f;
}

// REQ R5044-7.1.1-11, R5044-7.1.1-12: CRC unless both C = 0.
TEST(MpaNegotiation, CrcIfEitherSideSetsC_R5044_7_1_1_12) {
  EXPECT_FALSE(NegotiateMpa(Frame(false, false, false), Frame(true, false, false)).crc);
  EXPECT_TRUE(NegotiateMpa(Frame(false, false, true), Frame(true, false, false)).crc);
  EXPECT_TRUE(NegotiateMpa(Frame(false, false, false), Frame(true, false, true)).crc);
  EXPECT_TRUE(NegotiateMpa(Frame(false, false, true), Frame(true, false, true)).crc);
}

// REQ R5044-7.1.1-06, R5044-7.1.1-07, R5044-7.1.1-08 (decisions D-G3): per direction.
TEST(MpaNegotiation, MarkersPerDirection_R5044_7_1_1_06_07) {
  MpaNegotiation n = NegotiateMpa(Frame(false, true, true), Frame(true, false, true));
  EXPECT_TRUE(n.markers_responder_to_initiator);
  EXPECT_FALSE(n.markers_initiator_to_responder);
  n = NegotiateMpa(Frame(false, false, true), Frame(true, true, true));
  EXPECT_FALSE(n.markers_responder_to_initiator);
  EXPECT_TRUE(n.markers_initiator_to_responder);
  MpaStartupFrame rej = Frame(true, false, false);
  rej.reject = true;
  EXPECT_TRUE(NegotiateMpa(Frame(false, false, false), rej).rejected);
}

MpaStartupFrame Enhanced(bool reply, EnhancedIrdOrd e) {
  MpaStartupFrame f;
  f.is_reply = reply;
  f.enhanced = true;
  f.revision = 2;
  f.enhanced_data = e;
  return f;
}

// REQ R6581-9.1-02, R6581-9.1-09
TEST(IrdOrd, InitiatorAdjustsToReply_R6581_9_1_09) {
  const auto o = NegotiateIrdOrd(Enhanced(false, {.ird = 2, .ord = 4}), Enhanced(true, {.ird = 3, .ord = 6}));
  ASSERT_TRUE(o.applies);
  EXPECT_EQ(o.responder_ird, 3);
  EXPECT_EQ(o.responder_ord, 6);
  EXPECT_EQ(o.initiator_ird, 6);  // raised to the responder ORD
  EXPECT_EQ(o.initiator_ord, 3);  // lowered to the responder IRD
  EXPECT_TRUE(o.initiator_ird_increased);
  EXPECT_TRUE(o.responder_ord_exceeds_initiator_ird);  // R6581-9.1-06 violated by this Reply
  EXPECT_FALSE(o.peer_to_peer);

  const auto ok = NegotiateIrdOrd(Enhanced(false, {.ird = 8, .ord = 4}), Enhanced(true, {.ird = 16, .ord = 8}));
  EXPECT_EQ(ok.initiator_ird, 8);
  EXPECT_EQ(ok.initiator_ord, 4);
  EXPECT_FALSE(ok.initiator_ird_increased);
  EXPECT_FALSE(ok.responder_ord_exceeds_initiator_ird);

  // A reject may name the ORD it needs (R6581-9.1-07): not a violation.
  MpaStartupFrame rej = Enhanced(true, {.ird = 1, .ord = 9});
  rej.reject = true;
  EXPECT_FALSE(NegotiateIrdOrd(Enhanced(false, {.ird = 2, .ord = 1}), rej).responder_ord_exceeds_initiator_ird);
}

// REQ R6581-9.1-13..17: 0x3FFF means "not negotiated".
TEST(IrdOrd, AllOnesMeansUnchanged_R6581_9_1_14_to_17) {
  const EnhancedIrdOrd req{.ird = kIrdOrdNotNegotiated, .ord = kIrdOrdNotNegotiated};
  auto o =
      NegotiateIrdOrd(Enhanced(false, req), Enhanced(true, {.ird = kIrdOrdNotNegotiated, .ord = kIrdOrdNotNegotiated}));
  EXPECT_EQ(o.initiator_ird, kIrdOrdNotNegotiated);
  EXPECT_EQ(o.initiator_ord, kIrdOrdNotNegotiated);
  EXPECT_FALSE(o.responder_ird_not_3fff);
  EXPECT_FALSE(o.responder_ord_not_3fff);
  o = NegotiateIrdOrd(Enhanced(false, req), Enhanced(true, {.ird = 4, .ord = 2}));
  EXPECT_TRUE(o.responder_ird_not_3fff);
  EXPECT_TRUE(o.responder_ord_not_3fff);
  // Responder 0x3FFF leaves the initiator's own values (R6581-9.1-15/17).
  o = NegotiateIrdOrd(Enhanced(false, {.ird = 3, .ord = 7}),
                      Enhanced(true, {.ird = kIrdOrdNotNegotiated, .ord = kIrdOrdNotNegotiated}));
  EXPECT_EQ(o.initiator_ird, 3);
  EXPECT_EQ(o.initiator_ord, 7);
  // Without enhanced data on both sides nothing applies.
  EXPECT_FALSE(NegotiateIrdOrd(Enhanced(false, req), Frame(true, false, true)).applies);
}

// REQ R6581-9.2-05, R6581-9.2-08, R6581-9.2-11, R6581-9.2-17
TEST(IrdOrd, RtrNegotiation_R6581_9_2) {
  auto o =
      NegotiateIrdOrd(Enhanced(false, {.peer_to_peer = true, .send_rtr = true, .write_rtr = true, .read_rtr = true}),
                      Enhanced(true, {.peer_to_peer = true, .write_rtr = true, .read_rtr = true}));
  EXPECT_TRUE(o.peer_to_peer);
  EXPECT_FALSE(o.rtr_send);
  EXPECT_TRUE(o.rtr_write);
  EXPECT_TRUE(o.rtr_read);
  EXPECT_FALSE(o.reply_offers_no_rtr);
  EXPECT_FALSE(o.reply_a_mismatch);

  o = NegotiateIrdOrd(Enhanced(false, {.peer_to_peer = true, .send_rtr = true}),
                      Enhanced(true, {.peer_to_peer = true}));
  EXPECT_TRUE(o.reply_offers_no_rtr);
  EXPECT_FALSE(o.rtr_send);

  o = NegotiateIrdOrd(Enhanced(false, {.peer_to_peer = true, .send_rtr = true}), Enhanced(true, {.send_rtr = true}));
  EXPECT_TRUE(o.reply_a_mismatch);
  EXPECT_FALSE(o.peer_to_peer);

  // A = 0: B/C/D ignored on reception.
  o = NegotiateIrdOrd(Enhanced(false, {.send_rtr = true, .write_rtr = true}), Enhanced(true, {.send_rtr = true}));
  EXPECT_FALSE(o.peer_to_peer);
  EXPECT_FALSE(o.rtr_send);
  EXPECT_FALSE(o.reply_offers_no_rtr);
}

}  // namespace
}  // namespace rdmapct::wire
