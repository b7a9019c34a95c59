// Checks every segment gets (DV, QN, RV, opcode), LLP errors, the stream
// state machine, Terminate shape options and Reactions reuse.
#include <gtest/gtest.h>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

// A Send on QN0 MSN 1, written octet by octet from RFC 5040 Figure 3 / RFC 5041
// Figure 4: DDP Control 0x41 (T=0 L=1 DV=1), RDMAP Control 0x43 (RV=01b, Send).
Bytes HandSend(uint8_t ddp_control = 0x41, uint8_t rdmap_control = 0x43, uint8_t qn = 0) {
  return Bytes{ddp_control, rdmap_control,
               0,           0,
               0,           0,  // Invalidate STag
               0,           0,
               0,           qn,  // QN
               0,           0,
               0,           1,  // MSN
               0,           0,
               0,           0,  // MO
               'a',         'b',
               'c'};
}

Peer ReadyPeer(wire::Profile profile = wire::Profile::kRfc5040) {
  Peer p(Config(profile));
  p.ep.PostReceive(64);
  return p;
}

TEST(Common, HandWrittenSendIsDelivered) {
  Peer p = ReadyPeer();
  const auto& r = p.Feed(HandSend());
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].data, (Bytes{'a', 'b', 'c'}));
}

// R5041-4.1-12 R5041-7.2-T12 R5041-7.2-T06 (decisions D-F2): DV != 1.
TEST(Common, InvalidDdpVersion) {
  for (uint8_t dv : {0, 2, 3}) {
    Peer p = ReadyPeer();
    const Bytes seg = HandSend(static_cast<uint8_t>(0x40 | dv));
    ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x06), seg, false);
  }
  Peer p = ReadyPeer();
  p.ep.resources().AddRegion(1, 0, 8, kAllAccess, kStream);
  Bytes w = Encode(wire::MakeRdmaWrite(1, 0, Pattern(4)));
  w[0] = 0xC2;  // T=1 L=1 DV=2
  ExpectEcho(ExpectSingleTerminate(p.Feed(w), 1, 1, 0x04), w, false);
}

// R5040-7.2-01 R5040-7.2-03 R5040-4.1-08 (decisions D-A5): RV 00b, 10b, 11b on an RV=01b stream.
TEST(Common, InvalidRdmapVersion) {
  for (uint8_t rv : {0, 2, 3}) {
    Peer p = ReadyPeer();
    const Bytes seg = HandSend(0x41, static_cast<uint8_t>(rv << 6 | 0x03));
    ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 0, 2, 0x05), seg, false);
  }
}

// R5040-4.1-10: the Rsv bits are ignored; R5041-4.1-10: DDP Rsvd is not checked.
TEST(Common, ReservedBitsIgnored) {
  Peer p = ReadyPeer();
  EXPECT_EQ(p.Feed(HandSend(0x41 | 0x3C, 0x43 | 0x30)).events().size(), 1u);
  EXPECT_EQ(p.ep.state(), StreamState::kStreaming);
}

// R5040-4.1-T09 R5040-7.2-02 R7306-1.1-05 RCOMMIT-3.1.4-04: opcodes the profile
// does not define -> 0/2/0x06.
TEST(Common, UnexpectedOpcodePerProfile) {
  for (uint8_t op = 0x8; op <= 0xF; ++op) {
    Peer p = ReadyPeer();
    const Bytes seg = HandSend(0x41, static_cast<uint8_t>(0x40 | op));
    ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 0, 2, 0x06), seg, false);
  }
  for (uint8_t op = 0xC; op <= 0xF; ++op) {
    Peer p = ReadyPeer(wire::Profile::kRfc7306);
    const Bytes seg = HandSend(0x41, static_cast<uint8_t>(0x40 | op), 1);
    ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 0, 2, 0x06), seg, false);
  }
}

// R5040-5.3-09 R5040-5.2.1-06 R5040-7.2-07 (decisions D-A6): valid opcode on the wrong QN -> 0/2/0x06,
// 1/2/0x01 by option.
TEST(Common, OpcodeOnWrongQueue) {
  Peer p = ReadyPeer();
  const Bytes send_on_qn1 = HandSend(0x41, 0x43, 1);
  ExpectEcho(ExpectSingleTerminate(p.Feed(send_on_qn1), 0, 2, 0x06), send_on_qn1, false);

  Peer q = ReadyPeer();
  const Bytes read_on_qn0 = [] {
    auto s = wire::MakeReadRequest(1, {1, 0, 8, 2, 0});
    s.ddp.queue_number = 0;
    return Encode(s);
  }();
  ExpectEcho(ExpectSingleTerminate(q.Feed(read_on_qn0), 0, 2, 0x06), read_on_qn0, false);

  EndpointConfig c = Config();
  c.decisions.opcode_queue_mismatch_as_ddp = true;
  Peer o(c);
  ExpectSingleTerminate(o.Feed(send_on_qn1), 1, 2, 0x01);
}

// R5040-4.1-05 R5040-4.1-T01 (decisions D-A6): RDMA Write with T=0 -> 0/2/0x06.
TEST(Common, OpcodeWithWrongTaggedFlag) {
  Peer p = ReadyPeer();
  const Bytes seg = HandSend(0x41, 0x40);  // opcode 0x0 on an untagged QN0 segment
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 0, 2, 0x06), seg, false);
  EXPECT_EQ(p.ep.first_violation()->kind, ViolationKind::kOpcodeTaggedMismatch);
}

// R5041-7.1-U1 R5041-7.2-T07 R7306-10.2-01 (decisions D-F3): QN 3 is undefined under rfc5040, QN 4+
// always; a zero-length segment is checked too.
TEST(Common, InvalidQueueNumber) {
  Peer p = ReadyPeer();
  const Bytes qn3 = HandSend(0x41, 0x43, 3);
  ExpectEcho(ExpectSingleTerminate(p.Feed(qn3), 1, 2, 0x01), qn3, false);
  Peer q = ReadyPeer(wire::Profile::kRfc7306);
  Bytes qn7 = HandSend(0x41, 0x43, 7);
  qn7.resize(18);  // zero-length
  ExpectEcho(ExpectSingleTerminate(q.Feed(qn7), 1, 2, 0x01), qn7, false);
}

// decisions D-F4 (decisions.md): a ULPDU shorter than its DDP header cannot be echoed:
// 1/0/0x00 with M=D=R=0.
TEST(Common, TruncatedDdpHeader) {
  Peer p = ReadyPeer();
  Bytes seg = HandSend();
  seg.resize(10);
  RawTerminate t = ExpectSingleTerminate(p.Feed(seg), 1, 0, 0x00);
  EXPECT_FALSE(t.m);
  EXPECT_FALSE(t.d);
  EXPECT_FALSE(t.r);
  EXPECT_EQ(t.total_length, 22u);
}

// R5044-8-02 R5044-8-T02 R5044-8-T03 R5044-8-03 R5044-8-07 R5041-7-01 R5040-4.8-T21
// R5040-6.2.1-01: LLP errors -> Layer 2 EType 0, M=D=R=0.
TEST(Common, LlpErrors) {
  for (auto code : {wire::term::kMpaCrcError, wire::term::kMpaMarkerMismatch}) {
    Peer p = ReadyPeer();
    p.ep.OnLlpError(code, p.r);
    RawTerminate t = ExpectSingleTerminate(p.r, 2, 0, code.error_code);
    EXPECT_FALSE(t.m || t.d || t.r);
    EXPECT_EQ(p.ep.state(), StreamState::kTerminateSent);
  }
  Peer p = ReadyPeer();
  p.ep.OnLlpError(wire::term::kMpaTcpConnectionLost, p.r);
  EXPECT_TRUE(p.r.segments().empty());
  EXPECT_EQ(p.ep.state(), StreamState::kError);
}

// R5040-5.4-10 R5041-7.1-03: one Terminate only; states are explicit and queryable.
TEST(States, TransitionsAreReported) {
  Peer p = ReadyPeer();
  EXPECT_EQ(p.ep.state(), StreamState::kStreaming);
  const auto& r = p.Feed(HandSend(0x40));  // DV 0
  ASSERT_EQ(r.state_changes().size(), 1u);
  EXPECT_EQ(r.state_changes()[0].from, StreamState::kStreaming);
  EXPECT_EQ(r.state_changes()[0].to, StreamState::kTerminateSent);
  p.r.Clear();
  p.ep.OnLlpError(wire::term::kMpaCrcError, p.r);
  EXPECT_TRUE(p.r.segments().empty());
  EXPECT_EQ(p.ep.PostSend(Opcode::kSend, Pattern(1), 0, p.r), PostStatus::kNotStreaming);
  EXPECT_STREQ(StreamStateName(p.ep.state()), "terminate-sent");
}

// RFC 5040 §6.2: after Close() nothing can be posted, inbound traffic still works.
TEST(States, Closing) {
  Peer p = ReadyPeer();
  p.ep.Close(p.r);
  EXPECT_EQ(p.ep.state(), StreamState::kClosing);
  EXPECT_EQ(p.ep.PostSend(Opcode::kSend, Pattern(1), 0, p.r), PostStatus::kNotStreaming);
  EXPECT_EQ(p.Feed(HandSend()).events().size(), 1u);
}

// R5040-7.1-02c1 R5040-4.8-T17: the ULP ends the stream; no echoed headers.
TEST(States, AbortSendsTerminateWithoutHeaders) {
  Peer p = ReadyPeer();
  ASSERT_EQ(p.ep.Abort(wire::term::kRdmapLocalCatastrophic, p.r), PostStatus::kOk);
  RawTerminate t = ExpectSingleTerminate(p.r, 0, 0, 0x00);
  EXPECT_FALSE(t.m || t.d || t.r);
  EXPECT_EQ(p.ep.state(), StreamState::kTerminateSent);
}

// decisions D-A4 (decisions.md): by option, the fixed 52-octet zero-filled layout.
TEST(TerminateShape, FixedForm) {
  EndpointConfig c = Config();
  c.decisions.terminate_form = wire::TerminateForm::kFixed;
  Peer p(c);
  p.ep.PostReceive(8);
  const Bytes seg = HandSend(0x40);
  p.Feed(seg);
  ASSERT_EQ(p.r.segments().size(), 1u);
  const Bytes& t = p.r.segments()[0];
  ASSERT_EQ(t.size(), 18u + 52u);
  EXPECT_EQ(wire::LoadBe32(&t[18]) >> 13, (0x1u << 12 | 0x2u << 8 | 0x06u) << 3 | 0x6u);  // M D
  EXPECT_EQ(wire::LoadBe16(&t[22]), seg.size());
  EXPECT_EQ(Bytes(t.begin() + 24, t.begin() + 42), Prefix(seg, 18));
  EXPECT_EQ(Bytes(t.begin() + 42, t.end()), Bytes(28, 0));
}

// decisions D-E (decisions.md): by option the DDP Segment Length is the payload length.
TEST(TerminateShape, PayloadLengthOption) {
  EndpointConfig c = Config();
  c.decisions.segment_length = SegmentLengthConvention::kPayloadLength;
  Peer p(c);
  p.Feed(HandSend(0x40));
  RawTerminate t = ParseRawTerminate(p.r.segments()[0]);
  EXPECT_EQ(*t.ddp_segment_length, 3u);
}

// The receive path reuses the caller's buffers: no reallocation once warm.
TEST(ReactionsReuse, BuffersKeepTheirCapacity) {
  Peer p = ReadyPeer();
  p.ep.resources().AddRegion(9, 0, 4096, kAllAccess, kStream);
  const Bytes req = Encode(wire::MakeReadRequest(1, {1, 0, 1000, 9, 0}));
  p.Feed(req);
  ASSERT_EQ(p.r.segments().size(), 1u);
  const uint8_t* first = p.r.segments()[0].data();
  p.Feed(Encode(wire::MakeReadRequest(2, {1, 0, 1000, 9, 0})));
  ASSERT_EQ(p.r.segments().size(), 1u);
  EXPECT_EQ(p.r.segments()[0].data(), first);
  p.r.Clear();
  EXPECT_TRUE(p.r.segments().empty());
  EXPECT_TRUE(p.r.events().empty());
}

}  // namespace
}  // namespace rdmapct::model

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

// R5040-7.2-08: the RDMA Version of a Read Request; R7306-8.2-01 R7306-8.2-02
// R7306-8.2-03 R7306-5.2.1-S5 RCOMMIT-5.2-01: the same DDP/RDMAP field checks for
// the extension messages.
TEST(CommonExtensions, FieldChecksOnExtensionMessages) {
  auto rv2 = wire::MakeReadRequest(1, {1, 0, 8, 2, 0});
  rv2.ddp.rsvd_ulp0 = 0x81;  // RV=10b
  Peer p{Config()};
  const Bytes read = Encode(rv2);
  ExpectEcho(ExpectSingleTerminate(p.Feed(read), 0, 2, 0x05), read, false);

  auto atomic = wire::MakeAtomicRequest(1, {});
  atomic.ddp.rsvd_ulp0 = 0x0A;  // RV=00b
  Peer q{Config(wire::Profile::kRfc7306)};
  const Bytes a = Encode(atomic);
  ExpectEcho(ExpectSingleTerminate(q.Feed(a), 0, 2, 0x05), a, false);

  auto on_qn0 = wire::MakeAtomicRequest(1, {});
  on_qn0.ddp.queue_number = 0;
  Peer r{Config(wire::Profile::kRfc7306)};
  r.ep.PostReceive(64);
  ExpectSingleTerminate(r.Feed(on_qn0), 0, 2, 0x06);

  auto response_on_qn1 = wire::MakeAtomicResponse(1, {});
  response_on_qn1.ddp.queue_number = 1;
  Peer s{Config(wire::Profile::kRfc7306)};
  ExpectSingleTerminate(s.Feed(response_on_qn1), 0, 2, 0x06);

  auto flush = wire::MakeFlushRequest(1, {});
  flush.ddp.ddp_version = 2;
  Peer t{Config(wire::Profile::kCommit)};
  const Bytes f = Encode(flush);
  ExpectEcho(ExpectSingleTerminate(t.Feed(f), 1, 2, 0x06), f, false);
}

}  // namespace
}  // namespace rdmapct::model
