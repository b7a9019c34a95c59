// A Terminate received from the peer (RFC 5040 §5.4) and what follows it.
#include <gtest/gtest.h>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

// A peer Terminate written by hand (RFC 5040 Figures 7/8): 0/1/0x00 with M=1 D=1,
// echoing an 18-octet untagged DDP header; Reserved bits all ones.
Bytes HandTerminate(uint32_t msn = 1, uint16_t reserved = 0x1FFF) {
  Bytes b = {0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, static_cast<uint8_t>(msn), 0, 0, 0, 0};
  const uint32_t w = 0x0u << 28 | 0x1u << 24 | 0x00u << 16 | 1u << 15 | 1u << 14 | reserved;
  b.resize(b.size() + 4);
  wire::StoreBe32(&b[18], w);
  b.push_back(0x00);
  b.push_back(46);  // DDP Segment Length
  const Bytes echoed = {0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
  b.insert(b.end(), echoed.begin(), echoed.end());
  return b;
}

Peer Ready() {
  Peer p{Config()};
  p.ep.PostReceive(64);
  p.ep.resources().AddRegion(5, 0, 64, kAllAccess, kStream);
  return p;
}

// R5040-5.4-06 R5040-5.4-07 R5040-4.8-09: delivered to the ULP with its fields,
// reserved bits ignored, no Terminate sent back.
TEST(TerminateReceived, SurfacedToUlp) {
  Peer p = Ready();
  const auto& r = p.Feed(HandTerminate());
  EXPECT_TRUE(r.segments().empty());
  EXPECT_TRUE(r.violations().empty());
  ASSERT_EQ(r.events().size(), 1u);
  const UlpEvent& e = r.events()[0];
  EXPECT_EQ(e.kind, UlpEventKind::kTerminateReceived);
  EXPECT_EQ(e.terminate.code, wire::term::kRdmapInvalidStag);
  EXPECT_TRUE(e.terminate.m);
  EXPECT_TRUE(e.terminate.d);
  EXPECT_EQ(e.terminate.ddp_segment_length, 46u);
  EXPECT_EQ(e.terminate.terminated_ddp_header.queue_number, 1u);
  EXPECT_EQ(p.ep.state(), StreamState::kTerminateReceived);
  ASSERT_EQ(r.state_changes().size(), 1u);
}

// R5040-5.4-01 R5040-5.4-09 R5040-5.4-11 R5041-7.1-03 R5040-5.4-10: after the peer's Terminate nothing is
// placed, delivered or answered; more traffic from the peer is recorded.
TEST(TerminateReceived, NothingAfterwards) {
  Peer p = Ready();
  p.Feed(HandTerminate());
  const auto& r1 = p.Feed(wire::MakeSend(Opcode::kSend, 1, Pattern(4)));
  EXPECT_TRUE(r1.segments().empty());
  ASSERT_EQ(r1.violations().size(), 1u);
  EXPECT_EQ(r1.violations()[0].kind, ViolationKind::kMessageAfterTerminate);
  for (const UlpEvent& e : r1.events()) EXPECT_NE(e.kind, UlpEventKind::kSendReceived);
  EXPECT_TRUE(p.Feed(wire::MakeReadRequest(1, {1, 0, 4, 5, 0})).segments().empty());
  EXPECT_TRUE(p.Feed(wire::MakeRdmaWrite(5, 0, Pattern(4, 0x99))).segments().empty());
  EXPECT_EQ(p.ep.PeekRegion(5, 0, 1)[0], 0);
  EXPECT_EQ(p.ep.state(), StreamState::kTerminateReceived);
}

// R5040-5.4-05: a Terminate is placed even with no receives and IRD exhausted.
TEST(TerminateReceived, AlwaysHasABuffer) {
  EndpointConfig c = Config();
  c.ird = 1;
  c.auto_respond = false;
  Peer p(c);
  p.ep.resources().AddRegion(5, 0, 64, kAllAccess, kStream);
  p.Feed(wire::MakeReadRequest(1, {1, 0, 4, 5, 0}));
  EXPECT_TRUE(p.Feed(HandTerminate()).violations().empty());
  EXPECT_EQ(p.ep.pending_responses(), 0u);  // the queued Read is not answered
}

// R5040-5.4-04 R5041-7.1-U5: QN2's first (and only) MSN is 1.
TEST(TerminateReceived, WrongMsnIsAnError) {
  Peer p = Ready();
  const Bytes seg = HandTerminate(2);
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x03), seg, false);
}

// R5040-5.4-08 decisions D-A9 (decisions.md): an unparseable Terminate is surfaced, not answered
// (by option answered with 0/2/0xFF).
TEST(TerminateReceived, MalformedTerminate) {
  Bytes seg = HandTerminate();
  seg.resize(20);  // Terminate Control cut in half
  Peer p = Ready();
  const auto& r = p.Feed(seg);
  EXPECT_TRUE(r.segments().empty());
  ASSERT_EQ(r.violations().size(), 1u);
  EXPECT_EQ(r.violations()[0].kind, ViolationKind::kMalformedTerminate);
  EXPECT_EQ(p.ep.state(), StreamState::kError);

  EndpointConfig c = Config();
  c.decisions.answer_malformed_terminate = true;
  Peer q(c);
  ExpectEcho(ExpectSingleTerminate(q.Feed(seg), 0, 2, 0xFF), seg, false);
}

// decisions D-E / D-F8: a Terminate from the peer after ours is silently dropped.
TEST(TerminateReceived, DroppedAfterOurTerminate) {
  Peer p = Ready();
  p.Feed(wire::MakeRdmaWrite(0x999, 0, Pattern(4)));
  EXPECT_EQ(p.ep.state(), StreamState::kTerminateSent);
  const auto& r = p.Feed(HandTerminate());
  EXPECT_TRUE(r.events().empty());
  EXPECT_TRUE(r.segments().empty());
  EXPECT_EQ(p.ep.state(), StreamState::kTerminateSent);
}

// decisions D-S2: the fixed zero-filled form is accepted too.
TEST(TerminateReceived, FixedFormAccepted) {
  Peer p = Ready();
  wire::DdpSegmentHeader echoed = wire::MakeSend(Opcode::kSend, 1, {}).ddp;
  auto h =
      wire::MakeTerminateHeader(wire::term::kDdpUntaggedInvalidQn, &echoed, 18, nullptr, wire::TerminateForm::kFixed);
  const auto& r = p.Feed(wire::MakeTerminate(1, h));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].terminate.code, wire::term::kDdpUntaggedInvalidQn);
}

}  // namespace
}  // namespace rdmapct::model
