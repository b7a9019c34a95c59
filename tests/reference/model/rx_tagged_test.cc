// RDMA Write placement and RDMA Read Response handling at the requester.
#include <gtest/gtest.h>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

constexpr uint32_t kStag = 0x1234;
constexpr uint64_t kBase = 0x10000;
constexpr uint64_t kLen = 256;

struct WriteTest : ::testing::Test {
  Peer p{Config()};
  void SetUp() override { p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream); }
  Bytes Region() {
    auto s = p.ep.PeekRegion(kStag, kBase, kLen);
    return Bytes(s.begin(), s.end());
  }
};

// R5041-4.1-02 R5040-5.1-02 R5040-5.1-05 R5041-4.2-05: placed at STag/TO, never delivered.
TEST_F(WriteTest, PlacesAtTaggedOffsetWithoutDeliveryOrReply) {
  const Bytes data = Pattern(40);
  const auto& r = p.Feed(wire::MakeRdmaWrite(kStag, kBase + 16, data));
  EXPECT_TRUE(r.segments().empty());
  EXPECT_TRUE(r.events().empty());
  EXPECT_TRUE(r.violations().empty());
  Bytes expect(kLen, 0);
  std::copy(data.begin(), data.end(), expect.begin() + 16);
  EXPECT_EQ(Region(), expect);
}

// R5041-4.2-09: any TO inside the buffer, odd ones included; R5040-5.1-04 non-zero base.
TEST_F(WriteTest, OddTaggedOffsetAndLastOctet) {
  p.Feed(wire::MakeRdmaWrite(kStag, kBase + 3, Pattern(1, 0xAA)));
  p.Feed(wire::MakeRdmaWrite(kStag, kBase + kLen - 1, Pattern(1, 0xBB)));
  EXPECT_EQ(Region()[3], 0xAA);
  EXPECT_EQ(Region()[kLen - 1], 0xBB);
  EXPECT_EQ(p.ep.state(), StreamState::kStreaming);
}

// R5041-5.3-03 / decisions D-F5: segments of one Write may arrive in any TO order.
TEST_F(WriteTest, OutOfOrderSegmentsOfOneWrite) {
  const Bytes data = Pattern(96);
  auto second = wire::MakeRdmaWrite(kStag, kBase + 48, wire::ByteSpan(data).subspan(48));
  auto first = wire::MakeRdmaWrite(kStag, kBase, wire::ByteSpan(data).subspan(0, 48));
  first.ddp.last = false;
  // The L=1 segment is sent last on the wire (R5041-4.1-06), the others in any order.
  auto middle = wire::MakeRdmaWrite(kStag, kBase + 24, wire::ByteSpan(data).subspan(24, 24));
  middle.ddp.last = false;
  first.ulp_payload = wire::ByteSpan(data).subspan(0, 24);
  p.Feed(middle);
  p.Feed(first);
  p.Feed(second);
  EXPECT_EQ(Prefix(Region(), 96), data);
  EXPECT_FALSE(p.ep.first_violation().has_value());
}

// R5041-5.2-13 R5041-5.2-12 R5040-5.1-10: a zero-length Write is never STag/TO checked.
TEST_F(WriteTest, ZeroLengthWriteToUnknownStagAndWrappingToIsAccepted) {
  const auto& r = p.Feed(wire::MakeRdmaWrite(0xDEADBEEF, ~uint64_t{0}, {}));
  EXPECT_TRUE(r.segments().empty());
  EXPECT_EQ(p.ep.state(), StreamState::kStreaming);
}

// R5041-7.1-G1 R5041-7.2-T02 R5040-7.1-02c2: 1/1/0x00, M=1 D=1 R=0, header echoed.
TEST_F(WriteTest, UnknownStagTerminatesWithDdpInvalidStag) {
  const Bytes seg = Encode(wire::MakeRdmaWrite(0x9999, kBase, Pattern(8)));
  const auto& r = p.Feed(seg);
  RawTerminate t = ExpectSingleTerminate(r, 1, 1, 0x00);
  ExpectEcho(t, seg, false);
  EXPECT_EQ(t.terminated_ddp_header.size(), 14u);
  EXPECT_EQ(p.ep.state(), StreamState::kTerminateSent);
  ASSERT_EQ(r.violations().size(), 1u);
  EXPECT_EQ(r.violations()[0].kind, ViolationKind::kTaggedInvalidStag);
}

// R5041-7.1-G2 R5040-5.3-15: an invalidated STag is invalid.
TEST_F(WriteTest, InvalidatedStagTerminates) {
  p.ep.resources().Invalidate(kStag);
  const Bytes seg = Encode(wire::MakeRdmaWrite(kStag, kBase, Pattern(8)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 1, 0x00), seg, false);
  EXPECT_EQ(Region(), Bytes(kLen, 0));
}

// R5041-7.1-G1 R5041-7.2-T04: STag of another stream -> 1/1/0x02.
TEST_F(WriteTest, ForeignStagTerminatesNotAssociated) {
  p.ep.resources().AddRegion(0x77, 0, 64, kAllAccess, kOtherStream);
  const Bytes seg = Encode(wire::MakeRdmaWrite(0x77, 0, Pattern(8)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 1, 0x02), seg, false);
}

// decisions D-A3 (decisions.md): Write to a read-only region -> 1/1/0x00, or 0/1/0x02 by option.
TEST_F(WriteTest, ReadOnlyRegionTerminates) {
  p.ep.resources().AddRegion(0x55, 0, 64, kRemoteRead, kStream);
  const Bytes seg = Encode(wire::MakeRdmaWrite(0x55, 0, Pattern(8)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 1, 0x00), seg, false);

  EndpointConfig c = Config();
  c.decisions.write_access_error_as_rdmap = true;
  Peer q(c);
  q.ep.resources().AddRegion(0x55, 0, 64, kRemoteRead, kStream);
  ExpectEcho(ExpectSingleTerminate(q.Feed(seg), 0, 1, 0x02), seg, false);
}

// R5041-7.1-G3 R5041-7.1-G4 R5041-7.2-T03 R5040-5.1-04 R5041-7.1-01: TO below base /
// past the end -> 1/1/0x01, nothing placed; ending exactly at the end is fine.
TEST_F(WriteTest, BoundsViolations) {
  for (uint64_t to : {kBase - 1, kBase + kLen - 7, kBase + kLen, kBase + kLen + 1}) {
    Peer q{Config()};
    q.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    const Bytes seg = Encode(wire::MakeRdmaWrite(kStag, to, Pattern(8)));
    ExpectEcho(ExpectSingleTerminate(q.Feed(seg), 1, 1, 0x01), seg, false);
    auto s = q.ep.PeekRegion(kStag, kBase, kLen);
    EXPECT_EQ(Bytes(s.begin(), s.end()), Bytes(kLen, 0)) << "to " << to;
  }
  p.Feed(wire::MakeRdmaWrite(kStag, kBase + kLen - 8, Pattern(8)));
  EXPECT_EQ(p.ep.state(), StreamState::kStreaming);
}

// R5041-7.1-G5 R5041-7.2-T05: TO + length wraps 2^64 -> 1/1/0x03 (decisions D-A7: wrap first,
// or bounds by option).
TEST(WriteWrap, ToWrapAndOption) {
  const Bytes seg = Encode(wire::MakeRdmaWrite(kStag, ~uint64_t{0} - 7, Pattern(16)));
  Peer p{Config()};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 1, 0x03), seg, false);

  EndpointConfig c = Config();
  c.decisions.wrap_before_bounds = false;
  Peer q(c);
  q.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  ExpectEcho(ExpectSingleTerminate(q.Feed(seg), 1, 1, 0x01), seg, false);
}

// R5041-7.1-03 R5041-7.1-04 R5040-5.4-10 R5040-7.1-01: after the error, later segments are dropped
// silently: nothing placed, no second Terminate.
TEST_F(WriteTest, NothingPlacedAfterTerminate) {
  p.Feed(wire::MakeRdmaWrite(0x9999, 0, Pattern(8)));
  const auto& r = p.Feed(wire::MakeRdmaWrite(kStag, kBase, Pattern(8)));
  EXPECT_TRUE(r.segments().empty());
  EXPECT_TRUE(r.violations().empty());
  EXPECT_EQ(Region(), Bytes(kLen, 0));
  EXPECT_EQ(p.ep.segments_dropped(), 1u);
}

// R5040-7.1-03: two bad messages back to back -> the Terminate describes the first.
TEST_F(WriteTest, TerminateDescribesFirstFailure) {
  const Bytes bad1 = Encode(wire::MakeRdmaWrite(0x9999, 0, Pattern(8)));
  const Bytes bad2 = Encode(wire::MakeRdmaWrite(kStag, 0, Pattern(8)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(bad1), 1, 1, 0x00), bad1, false);
  p.Feed(bad2);
  ASSERT_TRUE(p.ep.first_violation());
  EXPECT_EQ(p.ep.first_violation()->kind, ViolationKind::kTaggedInvalidStag);
}

// ---------------------------------------------------------------------------
// Read Responses at the requester (RFC 5040 §5.2.2).

struct ReadResponseTest : ::testing::Test {
  Peer p{Config()};
  void SetUp() override {
    p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    wire::ReadRequestHeader h{kStag, kBase + 8, 64, 0xAB, 0x500};
    ASSERT_EQ(p.ep.PostReadRequest(h, p.r), PostStatus::kOk);
  }
};

// R5040-5.2.2-04 R5040-5.5-R19 R5040-5.5-R11 R5040-5.5-R20c R5041-4.2-08: completion
// only when the L=1 segment is placed; the Read Response alone completes the Read.
TEST_F(ReadResponseTest, CompletesOnLastSegment) {
  const Bytes data = Pattern(64);
  auto s1 = wire::MakeReadResponse(kStag, kBase + 8, wire::ByteSpan(data).subspan(0, 32));
  s1.ddp.last = false;
  EXPECT_TRUE(p.Feed(s1).events().empty());
  const auto& r = p.Feed(wire::MakeReadResponse(kStag, kBase + 40, wire::ByteSpan(data).subspan(32)));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].kind, UlpEventKind::kReadCompleted);
  EXPECT_EQ(r.events()[0].length, 64u);
  EXPECT_EQ(r.events()[0].stag, kStag);
  auto s = p.ep.PeekRegion(kStag, kBase + 8, 64);
  EXPECT_EQ(Bytes(s.begin(), s.end()), data);
  EXPECT_EQ(p.ep.outstanding_reads(), 0u);
}

// R5040-5.2.2-08 (MAY check, on by default): no Read outstanding.
TEST(ReadResponseUnexpected, TerminatesUnexpectedOpcode) {
  Peer p{Config()};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  const Bytes seg = Encode(wire::MakeReadResponse(kStag, kBase, Pattern(8)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 0, 2, 0x06), seg, false);
  EXPECT_EQ(p.ep.first_violation()->kind, ViolationKind::kReadResponseUnexpected);
}

// R5040-5.2.2-08: a response outside the Read's sink range (wrong TO / other STag).
TEST_F(ReadResponseTest, WrongTaggedOffsetIsAMismatch) {
  const Bytes seg = Encode(wire::MakeReadResponse(kStag, kBase, Pattern(64)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 1, 0x01), seg, false);
  EXPECT_EQ(p.ep.first_violation()->kind, ViolationKind::kReadResponseMismatch);
}

// R5040-5.2.2-08: L=1 before all octets of the Read arrived.
TEST_F(ReadResponseTest, ShortResponseIsAMismatch) {
  const Bytes seg = Encode(wire::MakeReadResponse(kStag, kBase + 8, Pattern(10)));
  ExpectSingleTerminate(p.Feed(seg), 1, 1, 0x01);
}

// DDP checks still apply to Read Responses (R5040-5.2.2-05): unknown sink STag.
TEST_F(ReadResponseTest, UnknownSinkStagIsDdpInvalidStag) {
  const Bytes seg = Encode(wire::MakeReadResponse(0x4242, 0, Pattern(64)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 1, 0x00), seg, false);
}

// R5040-4.4-05: DDP protects the sink against a wrapping TO (1/1/0x03).
TEST_F(ReadResponseTest, SinkToWrap) {
  const Bytes seg = Encode(wire::MakeReadResponse(kStag, ~uint64_t{0} - 3, Pattern(8)));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 1, 0x03), seg, false);
}

// The check is a MAY: with it off, the response is just placed.
TEST(ReadResponseOption, NoMatchCheckPlacesAnyway) {
  EndpointConfig c = Config();
  c.decisions.check_read_response_match = false;
  Peer p(c);
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  p.Feed(wire::MakeReadResponse(kStag, kBase, Pattern(8)));
  EXPECT_EQ(p.ep.state(), StreamState::kStreaming);
}

// R5040-5.2.2-08, fault accept-unsolicited-read-response: a Read Response
// with no Read outstanding is placed like an RDMA Write, not Terminated.
TEST(ReadResponseFaults, AcceptUnsolicitedPlacesIt) {
  EndpointConfig c = Config();
  c.faults.Add(Fault::kAcceptUnsolicitedReadResponse);
  Peer p(c);
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  const auto& r = p.Feed(wire::MakeReadResponse(kStag, kBase, Pattern(8)));
  EXPECT_TRUE(r.segments().empty());
  EXPECT_EQ(p.ep.state(), StreamState::kStreaming);
  auto s = p.ep.PeekRegion(kStag, kBase, 8);
  EXPECT_EQ(Bytes(s.begin(), s.end()), Pattern(8));
}

// R5040-5.2.2-08, fault complete-short-read-response: L=1 after 10 of the 64
// octets completes the Read instead of the mismatch Terminate.
TEST(ReadResponseFaults, CompleteShortCompletesTheRead) {
  EndpointConfig c = Config();
  c.faults.Add(Fault::kCompleteShortReadResponse);
  Peer p(c);
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  ASSERT_EQ(p.ep.PostReadRequest(wire::ReadRequestHeader{kStag, kBase + 8, 64, 0xAB, 0x500}, p.r), PostStatus::kOk);
  const auto& r = p.Feed(wire::MakeReadResponse(kStag, kBase + 8, Pattern(10)));
  EXPECT_TRUE(r.segments().empty());
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].kind, UlpEventKind::kReadCompleted);
}

// R5041-5.2-13 R5040-5.2.1-15: zero-length Read Response completes a zero-length Read,
// whatever its STag.
TEST(ReadResponseZero, ZeroLengthCompletesZeroLengthRead) {
  Peer p{Config()};
  ASSERT_EQ(p.ep.PostReadRequest(wire::ReadRequestHeader{0x1, 0, 0, 0x2, 0}, p.r), PostStatus::kOk);
  const auto& r = p.Feed(wire::MakeReadResponse(0xFFFFFFFF, ~uint64_t{0}, {}));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].kind, UlpEventKind::kReadCompleted);
  EXPECT_EQ(r.events()[0].length, 0u);
}

}  // namespace
}  // namespace rdmapct::model
