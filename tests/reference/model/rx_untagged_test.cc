// QN 0: Send variants and Immediate Data at the Data Sink.
#include <gtest/gtest.h>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

wire::RdmapSegment SendSeg(uint32_t msn, wire::ByteSpan data, uint32_t mo = 0, bool last = true,
                           Opcode op = Opcode::kSend, uint32_t inv = 0) {
  wire::RdmapSegment s = wire::MakeSend(op, msn, data, inv);
  s.ddp.message_offset = mo;
  s.ddp.last = last;
  return s;
}

struct SendTest : ::testing::Test {
  Peer p{Config()};
};

// R5040-5.3-01 R5040-5.3-02 R5040-5.3-03 R5041-5.4-03 R5041-4.1-03: one receive per Send, the actual length reported.
TEST_F(SendTest, DeliversIntoPostedBufferWithLength) {
  const uint64_t id = p.ep.PostReceive(4096);
  const Bytes data = Pattern(1);
  const auto& r = p.Feed(SendSeg(1, data));
  ASSERT_EQ(r.events().size(), 1u);
  const UlpEvent& e = r.events()[0];
  EXPECT_EQ(e.kind, UlpEventKind::kSendReceived);
  EXPECT_EQ(e.receive_id, id);
  EXPECT_EQ(e.msn, 1u);
  EXPECT_EQ(e.length, 1u);
  EXPECT_EQ(e.data, data);
  EXPECT_FALSE(e.solicited_event);
  EXPECT_TRUE(r.segments().empty());
  EXPECT_EQ(p.ep.expected_msn(0), 2u);
}

// R5040-5.3-06: the SE variants are flagged.
TEST_F(SendTest, SolicitedEventFlag) {
  p.ep.PostReceive(64);
  const auto& r = p.Feed(SendSeg(1, Pattern(4), 0, true, Opcode::kSendWithSe));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_TRUE(r.events()[0].solicited_event);
  EXPECT_EQ(r.events()[0].opcode, Opcode::kSendWithSe);
}

// R5040-5.3-11 R5040-5.3-12: a zero-length Send still consumes a receive.
TEST_F(SendTest, ZeroLengthSendConsumesABuffer) {
  p.ep.PostReceive(64);
  p.ep.PostReceive(64);
  EXPECT_EQ(p.Feed(SendSeg(1, {})).events().size(), 1u);
  EXPECT_EQ(p.Feed(SendSeg(2, Pattern(3))).events()[0].length, 3u);
  EXPECT_EQ(p.ep.resources().posted_receives(), 0u);
}

// R5040-5.5-R16 R5041-4.1-08: a multi-segment Send is delivered only with its L=1
// segment; R5041-5.3-03 / decisions D-F5: segments in any MO order.
TEST_F(SendTest, MultiSegmentOutOfOrderDeliveredOnCompletion) {
  p.ep.PostReceive(300);
  const Bytes data = Pattern(250);
  const wire::ByteSpan d(data);
  EXPECT_TRUE(p.Feed(SendSeg(1, d.subspan(100, 100), 100, false)).events().empty());
  EXPECT_TRUE(p.Feed(SendSeg(1, d.subspan(0, 100), 0, false)).events().empty());
  const auto& r = p.Feed(SendSeg(1, d.subspan(200), 200, true));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].length, 250u);
  EXPECT_EQ(r.events()[0].data, data);
}

// R5041-5.4-02 R5041-5.3-06 R5040-5.3-05: S2 complete before S1 is held until S1 completes.
TEST_F(SendTest, DeliveryInMsnOrder) {
  p.ep.PostReceive(64);
  p.ep.PostReceive(64);
  EXPECT_TRUE(p.Feed(SendSeg(1, Pattern(10), 0, false)).events().empty());
  EXPECT_TRUE(p.Feed(SendSeg(2, Pattern(5, 9))).events().empty());
  const auto& r = p.Feed(SendSeg(1, Pattern(4), 10, true));
  ASSERT_EQ(r.events().size(), 2u);
  EXPECT_EQ(r.events()[0].msn, 1u);
  EXPECT_EQ(r.events()[0].length, 14u);
  EXPECT_EQ(r.events()[1].msn, 2u);
  EXPECT_EQ(r.events()[1].data, Pattern(5, 9));
}

// R5041-7.1-U2 R5041-7.2-T08 R5041-7.1-N4: the next MSN with no posted receive -> 1/2/0x02.
TEST_F(SendTest, NoBufferAvailable) {
  const Bytes seg = Encode(SendSeg(1, Pattern(4)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x02), seg, false);
}

// R5041-7.1-U5 R5041-4.3-08 R5041-7.2-T09 R5041-5.3-05: MSN 0, a skipped MSN, or a reused
// one -> 1/2/0x03 (a message is never delivered twice).
TEST(SendMsn, RangeNotValid) {
  for (uint32_t msn : {0u, 3u, 0xFFFFFFFFu}) {
    Peer p{Config()};
    p.ep.PostReceive(64);
    p.ep.PostReceive(64);
    const Bytes seg = Encode(SendSeg(msn, Pattern(4)));
    ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x03), seg, false);
  }
  Peer p{Config()};
  p.ep.PostReceive(64);
  p.ep.PostReceive(64);
  p.Feed(SendSeg(1, Pattern(4)));
  const Bytes reused = Encode(SendSeg(1, Pattern(4)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(reused), 1, 2, 0x03), reused, false);
}

// R5041-7.1-U5: an MSN inside the posted window (expected+1) is legal.
TEST_F(SendTest, MsnInsideWindowIsLegal) {
  p.ep.PostReceive(64);
  p.ep.PostReceive(64);
  EXPECT_TRUE(p.Feed(SendSeg(2, Pattern(4))).violations().empty());
  EXPECT_EQ(p.Feed(SendSeg(1, Pattern(4))).events().size(), 2u);
}

// R5040-5.3-04 R5041-7.1-U4 R5041-7.2-T11: a Send one octet longer than the buffer -> 1/2/0x05.
TEST_F(SendTest, MessageTooLong) {
  p.ep.PostReceive(16);
  const Bytes seg = Encode(SendSeg(1, Pattern(17)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x05), seg, false);
}

// R5041-7.1-U3 R5041-7.2-T10: MO beyond the buffer -> 1/2/0x04.
TEST_F(SendTest, InvalidMo) {
  p.ep.PostReceive(16);
  const Bytes seg = Encode(SendSeg(1, Pattern(4), 20));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x04), seg, false);
}

// decisions D-F4: segments disagreeing with the L=1 segment -> 1/2/0x04 (decisions.md).
TEST_F(SendTest, SegmentBeyondLastIsBrokenStructure) {
  p.ep.PostReceive(128);
  p.Feed(SendSeg(1, Pattern(10), 10, true));  // L=1 ends at 20, MO 0 still missing
  const Bytes seg = Encode(SendSeg(1, Pattern(10), 20, false));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x04), seg, false);
  EXPECT_EQ(p.ep.first_violation()->kind, ViolationKind::kBrokenMessageStructure);
}

// R5041-4.3-05 R5041-4.3-04 R5041-4.3-06 decisions D-F6: RsvdULP differing between segments; the MO=0 segment's wins.
TEST_F(SendTest, RsvdUlpOfMoZeroSegmentIsUsed) {
  p.ep.PostReceive(64);
  p.ep.resources().AddRegion(0x10, 0, 8, kAllAccess, kStream);
  p.Feed(SendSeg(1, Pattern(8), 8, true, Opcode::kSendWithInvalidate, 0x99));
  const auto& r = p.Feed(SendSeg(1, Pattern(8), 0, false, Opcode::kSendWithInvalidate, 0x10));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].invalidated_stag, 0x10u);
}

// R5040-4.1-13: the Invalidate STag field of a plain Send is ignored.
TEST_F(SendTest, InvalidateFieldOfPlainSendIgnored) {
  p.ep.PostReceive(64);
  p.ep.resources().AddRegion(0x10, 0, 8, kAllAccess, kStream);
  const Bytes data = Pattern(4);  // the segment's payload span points here
  auto s = SendSeg(1, data);
  s.ddp.invalidate_stag = 0x10;
  const auto& r = p.Feed(s);
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_FALSE(r.events()[0].invalidated);
  EXPECT_TRUE(p.ep.resources().FindRegion(0x10)->valid);
}

// R5040-5.3-13 R5040-5.3-14 R5040-5.3-15: Send with Invalidate invalidates an STag of this stream; a later
// Write to it fails with 1/1/0x00.
TEST_F(SendTest, SendWithInvalidateInvalidates) {
  p.ep.PostReceive(64);
  p.ep.resources().AddRegion(0x10, 0, 8, kAllAccess, kStream);
  const auto& r = p.Feed(SendSeg(1, Pattern(4), 0, true, Opcode::kSendWithSeAndInvalidate, 0x10));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_TRUE(r.events()[0].invalidated);
  EXPECT_TRUE(r.events()[0].solicited_event);
  EXPECT_FALSE(p.ep.resources().FindRegion(0x10)->valid);
  ExpectSingleTerminate(p.Feed(wire::MakeRdmaWrite(0x10, 0, Pattern(4))), 1, 1, 0x00);
}

// R5040-5.3-16 R5040-7.2-04 R5040-7.2-05 (decisions D-A1/D-A2): 0/1/0x09, M=1 D=1 R=0; the
// Send is not delivered and the STag of the other stream stays valid.
TEST(SendInvalidate, FailuresTerminateStagCannotBeInvalidated) {
  struct Case {
    uint32_t stag;
    ViolationKind kind;
  };
  for (Case c :
       {Case{0x999, ViolationKind::kInvalidateStagInvalid}, Case{0x20, ViolationKind::kInvalidateStagNotAssociated},
        Case{0x30, ViolationKind::kInvalidateStagNotInvalidatable}}) {
    Peer p{Config()};
    p.ep.PostReceive(64);
    p.ep.resources().AddRegion(0x20, 0, 8, kAllAccess, kOtherStream);
    p.ep.resources().AddRegion(0x30, 0, 8, kAllAccess, kStream).remote_invalidatable = false;
    const Bytes seg = Encode(SendSeg(1, Pattern(4), 0, true, Opcode::kSendWithInvalidate, c.stag));
    const auto& r = p.Feed(seg);
    ExpectEcho(ExpectSingleTerminate(r, 0, 1, 0x09), seg, false);
    EXPECT_EQ(p.ep.first_violation()->kind, c.kind);
    for (const UlpEvent& e : r.events()) EXPECT_NE(e.kind, UlpEventKind::kSendReceived);
    EXPECT_TRUE(p.ep.resources().FindRegion(0x20)->valid);
  }
}

// decisions D-A1/D-A2 options: EType 0x2, and R=1 with a zero-filled RDMA header.
TEST(SendInvalidate, Options) {
  EndpointConfig c = Config();
  c.decisions.invalidate_error_as_remote_operation = true;
  c.decisions.rdma_header_on_invalidate_error = true;
  Peer p(c);
  p.ep.PostReceive(64);
  const Bytes seg = Encode(SendSeg(1, Pattern(4), 0, true, Opcode::kSendWithInvalidate, 0x999));
  RawTerminate t = ExpectSingleTerminate(p.Feed(seg), 0, 2, 0x09);
  EXPECT_TRUE(t.r);
  EXPECT_EQ(t.terminated_rdma_header, Bytes(28, 0));
}

// ---------------------------------------------------------------------------
// Immediate Data (RFC 7306 §6).

struct ImmediateTest : ::testing::Test {
  Peer p{Config(wire::Profile::kRfc7306)};
};

// R7306-6.3-01 R7306-6.3-04 R7306-6.4-01 R7306-4.1-T01 R7306-4.2-T01
// R7306-6.3-02 R7306-6.3-03 R7306-7-T05: consumes a QN0 buffer and MSN, delivered in
// order with Sends.
TEST_F(ImmediateTest, DeliveredInOrderWithSends) {
  p.ep.PostReceive(16);
  p.ep.PostReceive(16);
  p.ep.PostReceive(16);
  EXPECT_EQ(p.Feed(SendSeg(1, Pattern(2))).events().size(), 1u);
  const auto& r = p.Feed(wire::MakeImmediateData(2, 0x0102030405060708, true));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].kind, UlpEventKind::kImmediateDataReceived);
  EXPECT_EQ(r.events()[0].value, 0x0102030405060708u);
  EXPECT_TRUE(r.events()[0].solicited_event);
  EXPECT_EQ(r.events()[0].msn, 2u);
  EXPECT_EQ(p.Feed(SendSeg(3, Pattern(2))).events()[0].msn, 3u);
}

// R7306-6.3-07 (decisions D-C6): not exactly 8 octets -> 0/2/0xFF (decisions.md).
TEST(ImmediateLength, WrongLengthsTerminate) {
  for (std::size_t n : {0u, 7u, 9u, 16u}) {
    Peer p{Config(wire::Profile::kRfc7306)};
    p.ep.PostReceive(64);
    wire::RdmapSegment s = wire::MakeSegment(Opcode::kImmediateData);
    const Bytes data = Pattern(n);
    s.ulp_payload = data;
    const Bytes seg = Encode(s);
    ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 0, 2, 0xFF), seg, false);
    EXPECT_EQ(p.ep.first_violation()->kind, ViolationKind::kImmediateDataLength) << n;
  }
}

// R5040-4.1-T09: under rfc5040, Immediate Data is an Unexpected OpCode.
TEST(ImmediateProfile, UnexpectedUnderRfc5040) {
  Peer p{Config()};
  p.ep.PostReceive(64);
  const Bytes seg = Encode(wire::MakeImmediateData(1, 5));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 0, 2, 0x06), seg, false);
}

}  // namespace
}  // namespace rdmapct::model
