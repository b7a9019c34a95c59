#include "reference/wire/rdmap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace rdmapct::wire {
namespace {

constexpr Profile kAllProfiles[] = {Profile::kRfc5040, Profile::kRfc7306, Profile::kCommit};

// ---------------------------------------------------------------------------
// Known answers written by hand from the RFC figures.

// RFC 5040 Figure 12: RDMA Read Request, DDP Segment.
const Bytes kReadRequestSegment = {
    0x41, 0x41,                                      // DDP ctrl (T=0 L=1 DV=1), RDMAP (RV=1 op 1)
    0x00, 0x00, 0x00, 0x00,                          // Reserved (Invalidate STag field)
    0x00, 0x00, 0x00, 0x01,                          // QN 1
    0x00, 0x00, 0x00, 0x05,                          // MSN 5
    0x00, 0x00, 0x00, 0x00,                          // MO 0
    0xAA, 0xBB, 0xCC, 0xDD,                          // SinkSTag
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,  // SinkTO
    0x00, 0x00, 0x10, 0x00,                          // RDMARDSZ 4096
    0x12, 0x34, 0x56, 0x78,                          // SrcSTag
    0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,  // SrcTO
};

ReadRequestHeader KnownReadRequest() {
  return ReadRequestHeader{0xAABBCCDD, 0x0001020304050607, 0x1000, 0x12345678, 0x08090A0B0C0D0E0F};
}

// R5040-4.4 Figure 6, R5040-4.2-T02, R5040-4-01
TEST(ReadRequest, KnownAnswerDecodeAndEncode) {
  auto v = DecodeRdmapSegment(kReadRequestSegment, Profile::kRfc5040, 20);
  ASSERT_TRUE(v.ok()) << v.error().Describe();
  EXPECT_TRUE(v->opcode_known);
  EXPECT_EQ(v->opcode(), Opcode::kRdmaReadRequest);
  EXPECT_TRUE(v->tagged_flag_matches);
  EXPECT_TRUE(v->header_present);
  EXPECT_EQ(v->ddp.header.queue_number, 1u);
  EXPECT_EQ(v->ddp.header.msn, 5u);
  ASSERT_TRUE(std::holds_alternative<ReadRequestHeader>(v->header));
  EXPECT_EQ(std::get<ReadRequestHeader>(v->header), KnownReadRequest());
  EXPECT_TRUE(v->ulp_payload.empty());
  EXPECT_EQ(v->ulp_payload_offset, 20u + 46u);

  EXPECT_EQ(EncodeSegment(MakeReadRequest(5, KnownReadRequest())), kReadRequestSegment);
}

// RFC 5040 Figure 16 + §4.8: a Remote Protection Error (0/1/0x00) for the Read
// Request above, with M, D and R set, echoing its DDP header and Read Request
// header. 4 + 2 + 18 + 28 = 52 octets: both readings of §4.8 coincide.
Bytes KnownTerminateForReadRequest() {
  Bytes b = {
      0x41, 0x47,              // DDP ctrl, RDMAP (RV=1, Terminate)
      0x00, 0x00, 0x00, 0x00,  // Reserved (Invalidate STag field)
      0x00, 0x00, 0x00, 0x02,  // QN 2
      0x00, 0x00, 0x00, 0x01,  // MSN 1
      0x00, 0x00, 0x00, 0x00,  // MO 0
      0x01, 0x00, 0xE0, 0x00,  // Layer 0, EType 1, Code 0x00, M D R = 111, Reserved 0
      0x00, 0x2E,              // DDP Segment Length = 46 (the Read Request ULPDU)
  };
  // Terminated DDP Header + Terminated RDMA Header = the Read Request's 46 octets.
  b.insert(b.end(), kReadRequestSegment.begin(), kReadRequestSegment.end());
  return b;
}

// R5040-4.8-01 R5040-4.8-02 R5040-4.8-11 R5040-4.8-12 R5040-4.8-13 R5040-4.2-T08
TEST(Terminate, KnownAnswerWithDAndREchoingAReadRequest) {
  const Bytes wire = KnownTerminateForReadRequest();
  auto v = DecodeRdmapSegment(wire, Profile::kRfc5040);
  ASSERT_TRUE(v.ok()) << v.error().Describe();
  EXPECT_EQ(v->opcode(), Opcode::kTerminate);
  ASSERT_TRUE(v->header_present);
  const auto& t = std::get<TerminateHeader>(v->header);
  EXPECT_EQ(t.code, term::kRdmapInvalidStag);
  EXPECT_TRUE(t.m);
  EXPECT_TRUE(t.d);
  EXPECT_TRUE(t.r);
  EXPECT_EQ(t.reserved, 0);
  EXPECT_EQ(t.form, TerminateForm::kBitDriven);
  EXPECT_TRUE(t.has_segment_length && t.has_ddp_header && t.has_rdma_header);
  EXPECT_EQ(t.ddp_segment_length, 46);
  EXPECT_FALSE(t.terminated_ddp_header.tagged);
  EXPECT_EQ(t.terminated_ddp_header.rsvd_ulp0, 0x41);
  EXPECT_EQ(t.terminated_ddp_header.queue_number, 1u);
  EXPECT_EQ(t.terminated_ddp_header.msn, 5u);
  EXPECT_EQ(t.terminated_rdma_header, KnownReadRequest());
  EXPECT_EQ(t.encoded_length, 52u);
  EXPECT_TRUE(v->ulp_payload.empty());

  auto echoed = DecodeDdpSegment(kReadRequestSegment);
  ASSERT_TRUE(echoed.ok());
  const ReadRequestHeader rr = KnownReadRequest();
  const TerminateHeader built = MakeTerminateHeader(term::kRdmapInvalidStag, &echoed->header, 46, &rr);
  EXPECT_EQ(EncodeSegment(MakeTerminate(1, built)), wire);
  // The fixed form of the same Terminate is byte-identical.
  const TerminateHeader fixed =
      MakeTerminateHeader(term::kRdmapInvalidStag, &echoed->header, 46, &rr, TerminateForm::kFixed);
  EXPECT_EQ(EncodeSegment(MakeTerminate(1, fixed)), wire);
}

// A DDP Tagged Buffer error for an RDMA Write (1/1/0x00, M=D=1, R=0).
const Bytes kTaggedEcho = {0xC1, 0x40, 0x00, 0x00, 0x00, 0x09, 0x00,
                           0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00};  // STag 9, TO 0x1000

// Decision 5.2 / decisions D-A4: both the bit-driven and the fixed form are accepted.
TEST(Terminate, BitDrivenAndFixedFormsAreBothAcceptedAndReported) {
  Bytes bit_driven = {0x11, 0x00, 0xC0, 0x00, 0x00, 0x13};  // 1/1/0x00, M D; length 19
  bit_driven.insert(bit_driven.end(), kTaggedEcho.begin(), kTaggedEcho.end());
  Bytes fixed = bit_driven;
  fixed.resize(kTerminateFixedLength, 0);  // 4 zero octets of DDP area + 28 of RDMA area

  auto a = DecodeTerminateHeader(bit_driven, 18);
  ASSERT_TRUE(a.ok()) << a.error().Describe();
  EXPECT_EQ(a->form, TerminateForm::kBitDriven);
  EXPECT_EQ(a->encoded_length, 20u);
  EXPECT_FALSE(a->has_rdma_header);
  EXPECT_TRUE(a->terminated_ddp_header.tagged);
  EXPECT_EQ(a->terminated_ddp_header.stag, 9u);
  EXPECT_EQ(a->terminated_ddp_header.tagged_offset, 0x1000u);
  EXPECT_EQ(a->ddp_segment_length, 19);

  auto b = DecodeTerminateHeader(fixed, 18);
  ASSERT_TRUE(b.ok()) << b.error().Describe();
  EXPECT_EQ(b->form, TerminateForm::kFixed);
  EXPECT_EQ(b->encoded_length, 52u);
  EXPECT_TRUE(b->has_rdma_header);  // the area exists, zero-filled
  EXPECT_FALSE(b->r);
  EXPECT_EQ(b->terminated_rdma_header, ReadRequestHeader{});
  EXPECT_EQ(b->terminated_ddp_header, a->terminated_ddp_header);

  // The encoder writes the form it is asked for.
  auto echoed = DecodeDdpSegment(kTaggedEcho);
  ASSERT_TRUE(echoed.ok());
  for (auto [form, expected] :
       {std::pair{TerminateForm::kBitDriven, bit_driven}, std::pair{TerminateForm::kFixed, fixed}}) {
    Bytes out;
    const TerminateHeader h = MakeTerminateHeader(term::kDdpTaggedInvalidStag, &echoed->header, 19, nullptr, form);
    EncodeTerminateHeader(h, out);
    EXPECT_EQ(out, expected);
    EXPECT_EQ(TerminateHeaderLength(h), expected.size());
  }
}

TEST(Terminate, LlpErrorIsFourOctetsAndMOnlyCarriesTheLength) {
  // MPA CRC error: Layer 2, EType 0, Code 2, M=D=R=0 (R5040-4.8-T21).
  const Bytes llp = {0x20, 0x02, 0x00, 0x00};
  auto a = DecodeTerminateHeader(llp);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->code, term::kMpaCrcError);
  EXPECT_EQ(a->encoded_length, 4u);
  EXPECT_FALSE(a->has_segment_length || a->has_ddp_header || a->has_rdma_header);
  Bytes out;
  EncodeTerminateHeader(MakeTerminateHeader(term::kMpaCrcError, nullptr, 0, nullptr), out);
  EXPECT_EQ(out, llp);

  // M without D: the Segment Length alone (the form Linux irdma sends).
  const Bytes m_only = {0x11, 0x02, 0x80, 0x00, 0x00, 0x0A};
  auto b = DecodeTerminateHeader(m_only);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->m);
  EXPECT_FALSE(b->d);
  EXPECT_TRUE(b->has_segment_length);
  EXPECT_EQ(b->ddp_segment_length, 10);
  EXPECT_EQ(b->encoded_length, 6u);
}

// Linux siw 6.1's Terminate Control (docs/reports/siw S1): for DDP /
// Untagged Buffer / Invalid MSN (1/2/0x03) with M and D it sends 21 03 03 00
// where R5040-4.8-02 lays out 12 03 c0 00.
TEST(Terminate, LittleEndianBitfieldOrderIsSwappedBothWays) {
  Bytes rfc = {0x41, 0x47, 0,    0,   0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0,  // untagged Terminate, QN 2
               0x12, 0x03, 0xC0, 0x00};
  Bytes siw = rfc;
  for (Profile p : kAllProfiles) {
    siw = rfc;
    ASSERT_TRUE(SwapTerminateControlBitfieldOrder(siw, p)) << ProfileName(p);
    EXPECT_EQ(Bytes(siw.begin() + 18, siw.end()), (Bytes{0x21, 0x03, 0x03, 0x00}));
    ASSERT_TRUE(SwapTerminateControlBitfieldOrder(siw, p));
    EXPECT_EQ(siw, rfc);  // its own inverse
  }
  // R alone (0x20) is 0x04; Reserved bits stay Reserved bits.
  siw = rfc;
  siw[20] = 0x20 | 0x01;
  ASSERT_TRUE(SwapTerminateControlBitfieldOrder(siw, Profile::kRfc5040));
  EXPECT_EQ(siw[20], 0x04 | 0x80);
  // Only untagged Terminates long enough to hold the control field change.
  Bytes send = rfc;
  send[1] = 0x43;  // Send
  EXPECT_FALSE(SwapTerminateControlBitfieldOrder(send, Profile::kRfc5040));
  Bytes tagged = rfc;
  tagged[0] = 0xC1;
  EXPECT_FALSE(SwapTerminateControlBitfieldOrder(tagged, Profile::kRfc5040));
  Bytes shortened(rfc.begin(), rfc.begin() + 21);
  EXPECT_FALSE(SwapTerminateControlBitfieldOrder(shortened, Profile::kRfc5040));
  EXPECT_EQ(send[18], 0x12);
  EXPECT_EQ(tagged[18], 0x12);
  EXPECT_EQ(shortened[18], 0x12);
}

// R5040-4.8-09: Reserved is reported, not rejected; bits and presence may disagree.
TEST(Terminate, ReservedBitsAndTrailingOctetsAreReported) {
  const Bytes wire = {0x02, 0x06, 0x1F, 0xFF, 0xEE};  // 0/2/0x06, Reserved = 0x1FFF, 1 extra
  Bytes seg = EncodeSegment(MakeTerminate(1, TerminateHeader{}));
  seg.resize(18);
  seg.insert(seg.end(), wire.begin(), wire.end());
  auto v = DecodeRdmapSegment(seg, Profile::kRfc5040);
  ASSERT_TRUE(v.ok());
  const auto& t = std::get<TerminateHeader>(v->header);
  EXPECT_EQ(t.code, term::kRdmapUnexpectedOpcode);
  EXPECT_EQ(t.reserved, 0x1FFF);
  ASSERT_EQ(v->ulp_payload.size(), 1u);
  EXPECT_EQ(v->ulp_payload[0], 0xEE);
  EXPECT_EQ(v->ulp_payload_offset, 22u);
  EXPECT_EQ(EncodeSegment(ToSegment(*v)), seg);
}

// R5040-4.1-03 R5040-4.1-T05: Invalidate STag in RsvdULP octets 2-5 (Figure 15).
TEST(SendWithInvalidate, KnownAnswerInvalidateStagInRsvdUlp) {
  const Bytes wire = {0x41, 0x44,              // DDP ctrl, RDMAP (RV=1, Send with Invalidate)
                      0xCA, 0xFE, 0xF0, 0x0D,  // Invalidate STag
                      0x00, 0x00, 0x00, 0x00,  // QN 0
                      0x00, 0x00, 0x00, 0x03,  // MSN 3
                      0x00, 0x00, 0x00, 0x00,  // MO 0
                      'h',  'i'};
  const uint8_t payload[] = {'h', 'i'};
  EXPECT_EQ(EncodeSegment(MakeSend(Opcode::kSendWithInvalidate, 3, payload, 0xCAFEF00D)), wire);
  auto v = DecodeRdmapSegment(wire, Profile::kRfc5040);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->opcode(), Opcode::kSendWithInvalidate);
  EXPECT_EQ(v->invalidate_stag(), 0xCAFEF00Du);
  EXPECT_FALSE(v->header_present);
  EXPECT_EQ(v->ulp_payload.size(), 2u);
  EXPECT_EQ(v->ulp_payload_offset, 18u);
}

// R7306-4.2-T03 and RFC 7306 Figure 4: Reserved|AOpCode, Request Identifier,
// Remote STag, Remote Tagged Offset, Add or Swap Data/Mask, Compare Data/Mask.
TEST(AtomicRequest, KnownAnswerFigure4) {
  AtomicRequestHeader h;
  h.atomic_opcode = static_cast<uint8_t>(AtomicOpcode::kCmpSwap);
  h.request_identifier = 0x01020304;
  h.remote_stag = 0x0A0B0C0D;
  h.remote_tagged_offset = 0x1000;
  h.add_or_swap_data = 0x1111111111111111;
  h.add_or_swap_mask = 0x2222222222222222;
  h.compare_data = 0x3333333333333333;
  h.compare_mask = 0x4444444444444444;
  Bytes expected = {0x00, 0x00, 0x00, 0x02, 0x01, 0x02, 0x03, 0x04, 0x0A, 0x0B,
                    0x0C, 0x0D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00};
  for (uint8_t fill : {0x11, 0x22, 0x33, 0x44}) expected.insert(expected.end(), 8, fill);
  ASSERT_EQ(expected.size(), 52u);
  Bytes out;
  EncodeAtomicRequestHeader(h, out);
  EXPECT_EQ(out, expected);
  // Reserved bits are reported separately from the AOpCode.
  expected[0] = 0xF0;
  expected[3] = 0x12;
  auto d = DecodeAtomicRequestHeader(expected);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->reserved, 0xF000001u);
  EXPECT_EQ(d->atomic_opcode, 0x2);
}

// R7306-4.2-T04 (Figure 6: 12 octets), R7306-4.2-T01 (8 octets), RCOMMIT-3.1-T07/T09/T11.
TEST(OtherHeaders, KnownAnswers) {
  Bytes out;
  EncodeAtomicResponseHeader(AtomicResponseHeader{0xA1B2C3D4, 0x0102030405060708}, out);
  EXPECT_EQ(out, (Bytes{0xA1, 0xB2, 0xC3, 0xD4, 1, 2, 3, 4, 5, 6, 7, 8}));
  out.clear();
  EncodeImmediateDataHeader(ImmediateDataHeader{0x0011223344556677}, out);
  EXPECT_EQ(out, (Bytes{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77}));
  out.clear();
  EncodeFlushRequestHeader(FlushRequestHeader{0x10, 0x2000, 0x30, kFlushToGlobalVisibility}, out);
  EXPECT_EQ(out, (Bytes{0, 0, 0, 0x10, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0x30, 0, 0, 0, 2}));
  out.clear();
  const uint8_t hash[] = {0xFE, 0xED};
  EncodeVerifyRequestHeader(VerifyRequestHeader{0x10, 0x40, 0x50, hash}, out);
  EXPECT_EQ(out, (Bytes{0, 0, 0, 0x10, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x50, 0xFE, 0xED}));
  out.clear();
  EncodeAtomicWriteRequestHeader(AtomicWriteRequestHeader{0x10, 8, 0x18, 0x8877665544332211}, out);
  EXPECT_EQ(out, (Bytes{0, 0, 0, 0x10, 0,    0,    0,    8,    0,    0,    0,    0,
                        0, 0, 0, 0x18, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}));
}

// ---------------------------------------------------------------------------
// Every message of every profile.

struct Sample {
  std::string name;
  RdmapSegment segment;
};

const uint8_t kPayload[] = {1, 2, 3, 4, 5, 6, 7};
const uint8_t kHash[] = {0xAB, 0xCD, 0xEF, 0x01};

std::vector<Sample> AllMessages() {
  AtomicRequestHeader ar;
  ar.atomic_opcode = 0;
  ar.request_identifier = 77;
  ar.remote_stag = 0x55;
  ar.remote_tagged_offset = 0x800;
  ar.add_or_swap_data = 5;
  auto rr = DecodeDdpSegment(kReadRequestSegment);
  const ReadRequestHeader rrh = KnownReadRequest();
  std::vector<Sample> s = {
      {"RDMA Write", MakeRdmaWrite(0x1234, 0x10, kPayload)},
      {"RDMA Read Request", MakeReadRequest(2, rrh)},
      {"RDMA Read Response", MakeReadResponse(0xAABBCCDD, 0x20, kPayload)},
      {"Send", MakeSend(Opcode::kSend, 1, kPayload)},
      {"Send with Invalidate", MakeSend(Opcode::kSendWithInvalidate, 2, kPayload, 0x99)},
      {"Send with SE", MakeSend(Opcode::kSendWithSe, 3, kPayload)},
      {"Send with SE and Invalidate", MakeSend(Opcode::kSendWithSeAndInvalidate, 4, {}, 0x98)},
      {"Terminate (D,R)",
       MakeTerminate(1, MakeTerminateHeader(term::kRdmapBaseOrBoundsViolation, &rr->header, 46, &rrh))},
      {"Terminate (fixed, LLP)",
       MakeTerminate(1, MakeTerminateHeader(term::kMpaCrcError, nullptr, 0, nullptr, TerminateForm::kFixed))},
      {"Terminate (LLP)", MakeTerminate(1, MakeTerminateHeader(term::kMpaMarkerMismatch, nullptr, 0, nullptr))},
      {"Immediate Data", MakeImmediateData(5, 0x0102030405060708)},
      {"Immediate Data with SE", MakeImmediateData(6, 42, true)},
      {"Atomic Request", MakeAtomicRequest(3, ar)},
      {"Atomic Response", MakeAtomicResponse(1, AtomicResponseHeader{77, 0xFFFF})},
      {"RDMA Flush Request", MakeFlushRequest(4, FlushRequestHeader{0x55, 4096, 0x800, 3})},
      {"RDMA Flush Response", MakeFlushResponse(2)},
      {"RDMA Verify Request", MakeVerifyRequest(5, VerifyRequestHeader{0x55, 64, 0x800, kHash})},
      {"RDMA Verify Request (no hash)", MakeVerifyRequest(6, VerifyRequestHeader{0x55, 64, 0, {}})},
      {"RDMA Verify Response", MakeVerifyResponse(3, kHash)},
      {"Atomic Write Request", MakeAtomicWriteRequest(7, AtomicWriteRequestHeader{0x55, 8, 0x808, 0xDEADBEEFCAFEF00D})},
      {"Atomic Write Response", MakeAtomicWriteResponse(4)},
  };
  return s;
}

// Round trip: encode -> decode -> encode is byte-identical for every message
// under every profile, whether or not the profile knows the opcode.
TEST(RoundTrip, EveryMessageEveryProfile) {
  for (const Sample& sample : AllMessages()) {
    const Bytes wire = EncodeSegment(sample.segment);
    const uint8_t opcode = sample.segment.ddp.rsvd_ulp0 & 0x1F;
    for (Profile p : kAllProfiles) {
      SCOPED_TRACE(sample.name + " / " + std::string(ProfileName(p)));
      auto v = DecodeRdmapSegment(wire, p, 7);
      if (opcode == 0x11 && p != Profile::kCommit) {
        // 0x51 reads as a Read Request (Rsv=01b) without its header: see
        // ProfileDifference.AtomicWriteResponseIsATruncatedReadRequestBeforeCommit.
        ASSERT_FALSE(v.ok());
        continue;
      }
      ASSERT_TRUE(v.ok()) << v.error().Describe();
      EXPECT_EQ(EncodeSegment(ToSegment(*v)), wire);
      EXPECT_EQ(v->ddp.header, sample.segment.ddp);
      const bool defined = FindOpcode(opcode, p) != nullptr;
      if (!defined) {
        EXPECT_FALSE(v->header_present);
        continue;
      }
      EXPECT_TRUE(v->opcode_known);
      EXPECT_TRUE(v->tagged_flag_matches);
      EXPECT_EQ(static_cast<uint8_t>(v->opcode()), opcode);
      EXPECT_EQ(v->header.index(), sample.segment.header.index());
      EXPECT_EQ(v->header_present, !std::holds_alternative<std::monostate>(v->header));
      Bytes header_again;
      EncodeRdmapHeader(v->header, header_again);
      Bytes header_orig;
      EncodeRdmapHeader(sample.segment.header, header_orig);
      EXPECT_EQ(header_again, header_orig);
      EXPECT_EQ(v->ulp_payload.size(), sample.segment.ulp_payload.size());
    }
  }
}

// Any octets that decode re-encode to themselves: every bit, reserved ones
// included, is kept by the decoder. Inputs are random segments of random
// length whose first octets are biased towards valid DDP/RDMAP control bytes.
TEST(RoundTrip, ArbitraryDecodableOctetsReencodeExactly) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int decoded = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    Bytes wire(next() % 90);
    for (uint8_t& b : wire) b = static_cast<uint8_t>(next());
    if (!wire.empty() && (next() & 1)) wire[0] &= 0xC3;  // Rsvd = 0 half the time
    if (wire.size() > 1) wire[1] = static_cast<uint8_t>(0x40 | (next() % 0x12));
    if (wire.size() > 18 && (next() & 1)) {
      std::fill(wire.begin() + 14, wire.begin() + 18, 0);  // MO = 0 (untagged)
    }
    if (wire.size() > 18 && (next() & 1)) wire[18] &= 0x0F;  // Terminate Layer 0
    for (Profile p : kAllProfiles) {
      auto v = DecodeRdmapSegment(wire, p);
      if (!v.ok()) {
        ASSERT_EQ(v.error().kind, DecodeErrorKind::kTruncated);
        ASSERT_LE(v.error().offset, wire.size());
        continue;
      }
      ++decoded;
      ASSERT_EQ(EncodeSegment(ToSegment(*v)), wire) << "iteration " << iter;
    }
  }
  EXPECT_GT(decoded, 20000);
}

// R5040-4.1-T09, R5040-7.2-02: unknown opcodes decode (no error), the state
// machine answers Unexpected OpCode.
TEST(UnknownOpcode, IsReportedNotRejected) {
  RdmapSegment seg = MakeImmediateData(1, 99);
  const Bytes wire = EncodeSegment(seg);
  auto v = DecodeRdmapSegment(wire, Profile::kRfc5040);
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->opcode_known);
  EXPECT_EQ(v->opcode_info, nullptr);
  EXPECT_FALSE(v->tagged_flag_matches);
  EXPECT_EQ(v->ctrl.opcode, 0x8);
  EXPECT_FALSE(v->header_present);
  EXPECT_EQ(v->ulp_payload.size(), 8u);  // the Immediate Data octets, undecoded
  // Under rfc7306 the same octets are an Immediate Data message.
  auto w = DecodeRdmapSegment(wire, Profile::kRfc7306);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(std::get<ImmediateDataHeader>(w->header).immediate_data, 99u);
  // A 5-bit opcode beyond the table under commit.
  seg.ddp.rsvd_ulp0 = 0x5F;
  auto x = DecodeRdmapSegment(EncodeSegment(seg), Profile::kCommit);
  ASSERT_TRUE(x.ok());
  EXPECT_FALSE(x->opcode_known);
  EXPECT_EQ(x->ctrl.opcode, 0x1F);
}

// RCOMMIT-3.1-01 (decisions D-D1): the Atomic Write Request octet 0x50 under each profile.
TEST(ProfileDifference, AtomicWriteRequestUnderCommitVsRfc7306) {
  const Bytes wire = EncodeSegment(MakeAtomicWriteRequest(1, AtomicWriteRequestHeader{0x55, 8, 0x808, 1}));
  EXPECT_EQ(wire[1], 0x50);
  auto commit = DecodeRdmapSegment(wire, Profile::kCommit);
  ASSERT_TRUE(commit.ok());
  EXPECT_EQ(commit->opcode(), Opcode::kAtomicWriteRequest);
  EXPECT_EQ(commit->ctrl.rsv, 0);
  EXPECT_TRUE(std::holds_alternative<AtomicWriteRequestHeader>(commit->header));

  auto legacy = DecodeRdmapSegment(wire, Profile::kRfc7306);
  ASSERT_TRUE(legacy.ok());
  EXPECT_EQ(legacy->ctrl, (RdmapControl{1, 1, 0x0}));  // Rsv bit + RDMA Write
  EXPECT_TRUE(legacy->opcode_known);
  EXPECT_EQ(legacy->opcode(), Opcode::kRdmaWrite);
  EXPECT_FALSE(legacy->tagged_flag_matches);  // RDMA Write on an untagged segment
  EXPECT_FALSE(legacy->header_present);
  EXPECT_EQ(legacy->ulp_payload.size(), 24u);
}

// decisions D-D1: a legacy (4-bit opcode) receiver reads 0x51 as RV=01b, Rsv=01b,
// opcode 0x1: a Read Request on QN3 whose 28-octet header is missing.
TEST(ProfileDifference, AtomicWriteResponseIsATruncatedReadRequestBeforeCommit) {
  const Bytes wire = EncodeSegment(MakeAtomicWriteResponse(1));
  EXPECT_EQ(wire[1], 0x51);
  EXPECT_EQ(wire[9], 3);  // QN 3
  auto commit = DecodeRdmapSegment(wire, Profile::kCommit);
  ASSERT_TRUE(commit.ok());
  EXPECT_EQ(commit->opcode(), Opcode::kAtomicWriteResponse);
  EXPECT_FALSE(commit->header_present);
  for (Profile p : {Profile::kRfc5040, Profile::kRfc7306}) {
    auto legacy = DecodeRdmapSegment(wire, p, 40);
    ASSERT_FALSE(legacy.ok());
    EXPECT_EQ(legacy.error().kind, DecodeErrorKind::kTruncated);
    EXPECT_STREQ(legacy.error().field, "SinkSTag");
    EXPECT_EQ(legacy.error().offset, 40u + 18u);
  }
}

TEST(HeaderPlacement, OnlyTheMoZeroSegmentWithTheRightTFlagCarriesIt) {
  RdmapSegment seg = MakeReadRequest(1, KnownReadRequest());
  seg.ddp.message_offset = 28;  // a later segment of the message
  auto v = DecodeRdmapSegment(EncodeSegment(seg), Profile::kRfc5040);
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->header_present);
  EXPECT_EQ(v->ulp_payload.size(), 28u);

  seg = MakeReadRequest(1, KnownReadRequest());
  seg.ddp.tagged = true;  // Read Request with T=1 (R5040-4.1-05 violation)
  auto w = DecodeRdmapSegment(EncodeSegment(seg), Profile::kRfc5040);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->opcode_known);
  EXPECT_FALSE(w->tagged_flag_matches);
  EXPECT_FALSE(w->header_present);
}

TEST(Verify, HashValueIsTheRestOfThePayload) {
  const Bytes wire = EncodeSegment(MakeVerifyRequest(1, VerifyRequestHeader{1, 2, 3, kHash}));
  auto v = DecodeRdmapSegment(wire, Profile::kCommit, 100);
  ASSERT_TRUE(v.ok());
  const auto& h = std::get<VerifyRequestHeader>(v->header);
  EXPECT_EQ(h.data_sink_stag, 1u);
  EXPECT_EQ(h.data_sink_length, 2u);
  EXPECT_EQ(h.data_sink_tagged_offset, 3u);
  ASSERT_EQ(h.hash_value.size(), 4u);
  EXPECT_EQ(h.hash_value.data(), wire.data() + 18 + 16);
  EXPECT_TRUE(v->ulp_payload.empty());
  EXPECT_EQ(v->ulp_payload_offset, 100u + wire.size());

  auto r = DecodeRdmapSegment(EncodeSegment(MakeVerifyResponse(1, kHash)), Profile::kCommit);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::get<VerifyResponseHeader>(r->header).hash_value.size(), 4u);
}

// ---------------------------------------------------------------------------
// Truncation: every prefix of every header names the right field at its
// absolute offset (DDP fields first, then the RDMAP fields).

struct Field {
  const char* name;
  std::size_t length;
};

std::vector<Field> UntaggedDdpFields() {
  return {{"DDP Control", 1}, {"RsvdULP", 5}, {"QN", 4}, {"MSN", 4}, {"MO", 4}};
}

void ExpectEveryPrefixTruncates(const RdmapSegment& seg, Profile p, std::vector<Field> rdmap) {
  const Bytes wire = EncodeSegment(seg);
  std::vector<Field> fields = UntaggedDdpFields();
  fields.insert(fields.end(), rdmap.begin(), rdmap.end());
  std::size_t end = 0;
  for (const Field& f : fields) end += f.length;
  ASSERT_LE(end, wire.size());
  constexpr std::size_t kBase = 4096;
  std::size_t field_start = 0;
  std::size_t i = 0;
  for (std::size_t n = 0; n < end; ++n) {
    while (n >= field_start + fields[i].length) field_start += fields[i++].length;
    auto v = DecodeRdmapSegment(ByteSpan(wire.data(), n), p, kBase);
    ASSERT_FALSE(v.ok()) << "prefix " << n;
    EXPECT_EQ(v.error().kind, DecodeErrorKind::kTruncated) << n;
    EXPECT_STREQ(v.error().field, fields[i].name) << "prefix " << n;
    EXPECT_EQ(v.error().offset, kBase + field_start) << "prefix " << n;
  }
  EXPECT_TRUE(DecodeRdmapSegment(ByteSpan(wire.data(), end), p, kBase).ok());
}

TEST(Truncation, ReadRequest) {
  ExpectEveryPrefixTruncates(MakeReadRequest(1, KnownReadRequest()), Profile::kRfc5040,
                             {{"SinkSTag", 4}, {"SinkTO", 8}, {"RDMARDSZ", 4}, {"SrcSTag", 4}, {"SrcTO", 8}});
}

TEST(Truncation, TerminateBitDrivenWithUntaggedEcho) {
  auto rr = DecodeDdpSegment(kReadRequestSegment);
  const ReadRequestHeader rrh = KnownReadRequest();
  ExpectEveryPrefixTruncates(MakeTerminate(1, MakeTerminateHeader(term::kRdmapToWrap, &rr->header, 46, &rrh)),
                             Profile::kRfc5040,
                             {{"Terminate Control", 4},
                              {"DDP Segment Length", 2},
                              {"Terminated DDP Header", 18},
                              {"Terminated RDMA Header", 28}});
}

TEST(Truncation, TerminateWithTaggedEcho) {
  auto echoed = DecodeDdpSegment(kTaggedEcho);
  ExpectEveryPrefixTruncates(
      MakeTerminate(1, MakeTerminateHeader(term::kDdpTaggedToWrap, &echoed->header, 14, nullptr)), Profile::kRfc5040,
      {{"Terminate Control", 4}, {"DDP Segment Length", 2}, {"Terminated DDP Header", 14}});
}

TEST(Truncation, RdmapOnlyTerminateRHeader) {
  const ReadRequestHeader rrh = KnownReadRequest();
  TerminateHeader h = MakeTerminateHeader(term::kRdmapInvalidStag, nullptr, 0, &rrh);
  ExpectEveryPrefixTruncates(MakeTerminate(1, h), Profile::kRfc5040,
                             {{"Terminate Control", 4}, {"Terminated RDMA Header", 28}});
}

TEST(Truncation, Rfc7306Headers) {
  ExpectEveryPrefixTruncates(MakeImmediateData(1, 5), Profile::kRfc7306, {{"Immediate Data", 8}});
  ExpectEveryPrefixTruncates(MakeImmediateData(1, 5, true), Profile::kCommit, {{"Immediate Data", 8}});
  ExpectEveryPrefixTruncates(MakeAtomicRequest(1, AtomicRequestHeader{}), Profile::kRfc7306,
                             {{"AOpCode", 4},
                              {"Request Identifier", 4},
                              {"Remote STag", 4},
                              {"Remote Tagged Offset", 8},
                              {"Add or Swap Data", 8},
                              {"Add or Swap Mask", 8},
                              {"Compare Data", 8},
                              {"Compare Mask", 8}});
  ExpectEveryPrefixTruncates(MakeAtomicResponse(1, AtomicResponseHeader{}), Profile::kCommit,
                             {{"Original Request Identifier", 4}, {"Original Remote Data Value", 8}});
}

TEST(Truncation, CommitHeaders) {
  const std::vector<Field> sink = {{"Data Sink STag", 4}, {"Data Sink Length", 4}, {"Data Sink Tagged Offset", 8}};
  auto with = [&](std::vector<Field> extra) {
    std::vector<Field> f = sink;
    f.insert(f.end(), extra.begin(), extra.end());
    return f;
  };
  ExpectEveryPrefixTruncates(MakeFlushRequest(1, FlushRequestHeader{}), Profile::kCommit,
                             with({{"Flush Disposition Flags", 4}}));
  ExpectEveryPrefixTruncates(MakeVerifyRequest(1, VerifyRequestHeader{1, 2, 3, kHash}), Profile::kCommit, sink);
  ExpectEveryPrefixTruncates(MakeAtomicWriteRequest(1, AtomicWriteRequestHeader{}), Profile::kCommit,
                             with({{"Data", 8}}));
}

TEST(Truncation, HeaderlessMessagesOnlyNeedTheDdpHeader) {
  for (const Sample& s : AllMessages()) {
    if (!std::holds_alternative<std::monostate>(s.segment.header)) continue;
    const Bytes wire = EncodeSegment(s.segment);
    const std::size_t hlen = s.segment.ddp.HeaderLength();
    EXPECT_TRUE(DecodeRdmapSegment(ByteSpan(wire.data(), hlen), Profile::kCommit).ok()) << s.name;
    auto v = DecodeRdmapSegment(ByteSpan(wire.data(), hlen - 1), Profile::kCommit, 3);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().offset, 3 + (s.segment.ddp.tagged ? 6u : 14u)) << s.name;
  }
}

// ---------------------------------------------------------------------------
// Builders: valid defaults, every field overridable.

// R5040-4.1-05 R5040-4.1-12 R7306-4.1-03 R5041-4.1-11
TEST(Builders, DefaultsFollowTheOpcodeTable) {
  for (const OpcodeInfo& row : kOpcodeTable) {
    const RdmapSegment seg = MakeSegment(row.opcode);
    SCOPED_TRACE(row.name);
    EXPECT_EQ(seg.ddp.tagged, row.tagged);
    EXPECT_TRUE(seg.ddp.last);
    EXPECT_EQ(seg.ddp.ddp_version, 1);
    EXPECT_EQ(seg.ddp.rsvd, 0);
    EXPECT_EQ(DecodeRdmapControl(seg.ddp.rsvd_ulp0, Profile::kCommit),
              (RdmapControl{1, 0, static_cast<uint8_t>(row.opcode)}));
    if (!row.tagged) {
      EXPECT_EQ(seg.ddp.queue_number, row.queue_number);
      EXPECT_EQ(seg.ddp.msn, 1u);
      EXPECT_EQ(seg.ddp.message_offset, 0u);
      EXPECT_EQ(seg.ddp.invalidate_stag, 0u);
    }
  }
}

TEST(Builders, OverridesAreWrittenVerbatim) {
  RdmapSegment seg = MakeSend(Opcode::kSend, 9, kPayload);
  SetRdmapControl(seg, RdmapControl{2, 3, 0x3}, Profile::kRfc5040);  // RV=10b, Rsv=11b
  seg.ddp.queue_number = 7;                                          // wrong QN
  seg.ddp.ddp_version = 0;
  seg.ddp.invalidate_stag = 0xFFFFFFFF;  // MUST be zero for Send
  const Bytes wire = EncodeSegment(seg);
  EXPECT_EQ(wire[0], 0x40);
  EXPECT_EQ(wire[1], 0xB3);
  auto v = DecodeRdmapSegment(wire, Profile::kRfc5040);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->ctrl, (RdmapControl{2, 3, 0x3}));
  EXPECT_EQ(v->ddp.header.queue_number, 7u);
  EXPECT_EQ(v->ddp.header.ddp_version, 0);
  EXPECT_EQ(v->invalidate_stag(), 0xFFFFFFFFu);

  // Header-less message with a header attached, and a header-bearing one without.
  RdmapSegment odd = MakeSend(Opcode::kSend, 1, {});
  odd.header = ImmediateDataHeader{1};
  EXPECT_EQ(EncodeSegment(odd).size(), 18u + 8u);
  RdmapSegment bare = MakeReadRequest(1, KnownReadRequest());
  bare.header = std::monostate{};
  auto b = DecodeRdmapSegment(EncodeSegment(bare), Profile::kRfc5040);
  ASSERT_FALSE(b.ok());
  EXPECT_STREQ(b.error().field, "SinkSTag");
  EXPECT_EQ(b.error().offset, 18u);
}

TEST(Builders, MessageBodyIsHeaderThenPayload) {
  const Bytes body = EncodeRdmapMessageBody(ImmediateDataHeader{0x0102030405060708}, kPayload);
  ASSERT_EQ(body.size(), 8u + sizeof(kPayload));
  EXPECT_EQ(body[0], 0x01);
  EXPECT_EQ(body[8], 1);
  std::size_t consumed = 99;
  auto h = DecodeRdmapHeader(HeaderKind::kNone, body, 0, consumed);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(consumed, 0u);
  auto i = DecodeRdmapHeader(HeaderKind::kImmediateData, body, 0, consumed);
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(consumed, 8u);
}

}  // namespace
}  // namespace rdmapct::wire
