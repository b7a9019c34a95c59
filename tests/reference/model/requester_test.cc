// The requester / Data Source side: Post* builds valid messages (MSN per
// queue, segmentation, headers), ORD, and the checks on what comes back on QN3.
#include <gtest/gtest.h>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

struct Untagged {
  uint8_t ddp_control, rdmap_control;
  uint32_t inv, qn, msn, mo;
  Bytes payload;
};
Untagged ParseUntagged(const Bytes& b) {
  EXPECT_GE(b.size(), 18u);
  return Untagged{b[0],
                  b[1],
                  wire::LoadBe32(&b[2]),
                  wire::LoadBe32(&b[6]),
                  wire::LoadBe32(&b[10]),
                  wire::LoadBe32(&b[14]),
                  Bytes(b.begin() + 18, b.end())};
}

// RFC 5041 §5.2 example (R5041-5.2-07): 2048 octets, MULPDU 1500 -> MO 0 with 1482
// octets, then MO 1482 with 566; R5041-4.1-04/05: L only on the last segment.
TEST(PostSend, SegmentationPerRfc5041Example) {
  EndpointConfig c = Config();
  c.mulpdu = 1500;
  Peer p(c);
  const Bytes data = Pattern(2048);
  ASSERT_EQ(p.ep.PostSend(Opcode::kSend, data, 0, p.r), PostStatus::kOk);
  ASSERT_EQ(p.r.segments().size(), 2u);
  Untagged a = ParseUntagged(p.r.segments()[0]);
  Untagged b = ParseUntagged(p.r.segments()[1]);
  EXPECT_EQ(a.ddp_control, 0x01);  // T=0 L=0 DV=1
  EXPECT_EQ(b.ddp_control, 0x41);  // T=0 L=1 DV=1
  EXPECT_EQ(a.rdmap_control, 0x43);
  EXPECT_EQ(a.qn, 0u);
  EXPECT_EQ(a.msn, 1u);
  EXPECT_EQ(b.msn, 1u);
  EXPECT_EQ(a.mo, 0u);
  EXPECT_EQ(a.payload.size(), 1482u);
  EXPECT_EQ(b.mo, 1482u);
  EXPECT_EQ(b.payload.size(), 566u);
  EXPECT_EQ(p.r.segments()[0].size(), 1500u);
}

// R5041-4.3-07 R5041-4.3-08 R5040-5.3-10: QN0 MSNs 1, 2, 3 in posting order;
// R5040-4.1-03 R5040-4.1-12: the Invalidate STag only on the Invalidate variants.
TEST(PostSend, MsnsAndInvalidateStag) {
  Peer p{Config()};
  p.ep.PostSend(Opcode::kSend, Pattern(3), 0x1234, p.r);
  p.ep.PostSend(Opcode::kSendWithInvalidate, Pattern(3), 0x1234, p.r);
  p.ep.PostSend(Opcode::kSendWithSeAndInvalidate, {}, 0x55, p.r);  // R5041-5.2-11
  ASSERT_EQ(p.r.segments().size(), 3u);
  Untagged s1 = ParseUntagged(p.r.segments()[0]);
  Untagged s2 = ParseUntagged(p.r.segments()[1]);
  Untagged s3 = ParseUntagged(p.r.segments()[2]);
  EXPECT_EQ(s1.inv, 0u);
  EXPECT_EQ(s2.inv, 0x1234u);
  EXPECT_EQ(s2.rdmap_control, 0x44);
  EXPECT_EQ(s3.inv, 0x55u);
  EXPECT_EQ(s3.rdmap_control, 0x46);
  EXPECT_EQ(p.r.segments()[2].size(), 18u);
  EXPECT_EQ((std::vector<uint32_t>{s1.msn, s2.msn, s3.msn}), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(p.ep.PostSend(Opcode::kRdmaWrite, {}, 0, p.r), PostStatus::kInvalidArgument);
}

// R5041-5.2-09 R5040-5.1-01 R5040-5.1-07 R5040-5.1-09: tagged segmentation, one STag,
// contiguous TOs.
TEST(PostWrite, TaggedSegmentation) {
  EndpointConfig c = Config();
  c.mulpdu = 1500;
  Peer p(c);
  ASSERT_EQ(p.ep.PostRdmaWrite(0x77, 16384, Pattern(2048), p.r), PostStatus::kOk);
  ASSERT_EQ(p.r.segments().size(), 2u);
  const Bytes& a = p.r.segments()[0];
  const Bytes& b = p.r.segments()[1];
  EXPECT_EQ(a[0], 0x81);
  EXPECT_EQ(b[0], 0xC1);
  EXPECT_EQ(a[1], 0x40);
  EXPECT_EQ(wire::LoadBe32(&b[2]), 0x77u);
  EXPECT_EQ(wire::LoadBe64(&a[6]), 16384u);
  EXPECT_EQ(wire::LoadBe64(&b[6]), 17870u);
  EXPECT_EQ(b.size() - 14, 562u);
}

// R5040-4.4-01 R5040-5.2.1-01 R5040-5.2.1-06 R5040-5.2.1-07: Read Request = 18-octet header on QN1 + 28 octets.
TEST(PostRead, HeaderLayout) {
  Peer p{Config()};
  ASSERT_EQ(p.ep.PostReadRequest({0x11, 0x2233, 0x44, 0x55, 0x6677}, p.r), PostStatus::kOk);
  ASSERT_EQ(p.r.segments().size(), 1u);
  Untagged u = ParseUntagged(p.r.segments()[0]);
  EXPECT_EQ(u.rdmap_control, 0x41);
  EXPECT_EQ(u.qn, 1u);
  EXPECT_EQ(u.msn, 1u);
  const Bytes expect = {0, 0,    0, 0x11, 0, 0,    0, 0, 0, 0, 0x22, 0x33, 0,    0,
                        0, 0x44, 0, 0,    0, 0x55, 0, 0, 0, 0, 0,    0,    0x66, 0x77};
  EXPECT_EQ(u.payload, expect);
  EXPECT_EQ(p.ep.outstanding_reads(), 1u);
}

// R5040-6.1-09: no more than ORD outstanding reads.
TEST(PostRead, OrdLimit) {
  EndpointConfig c = Config();
  c.ord = 2;
  Peer p(c);
  p.ep.resources().AddRegion(1, 0, 64, kAllAccess, kStream);
  EXPECT_EQ(p.ep.PostReadRequest({1, 0, 4, 9, 0}, p.r), PostStatus::kOk);
  EXPECT_EQ(p.ep.PostReadRequest({1, 4, 4, 9, 0}, p.r), PostStatus::kOk);
  EXPECT_EQ(p.ep.PostReadRequest({1, 8, 4, 9, 0}, p.r), PostStatus::kOrdExceeded);
  p.Feed(wire::MakeReadResponse(1, 0, Pattern(4)));
  EXPECT_EQ(p.ep.PostReadRequest({1, 8, 4, 9, 0}, p.r), PostStatus::kOk);
}

// R7306-5.2-02 R7306-5.2.1-S1 R7306-5.2.2-S5 RCOMMIT-3.1-07 RCOMMIT-3.1-T01 (decisions D-E): Read and extension
// requests share QN1 MSNs; the extensions need their profile.
TEST(PostExtensions, SharedQn1MsnAndProfiles) {
  Peer old{Config()};
  EXPECT_EQ(old.ep.PostAtomicRequest({}, old.r), PostStatus::kNotInProfile);
  EXPECT_EQ(old.ep.PostImmediateData(1, false, old.r), PostStatus::kNotInProfile);
  Peer p{Config(wire::Profile::kRfc7306)};
  EXPECT_EQ(p.ep.PostFlushRequest({}, p.r), PostStatus::kNotInProfile);
  p.ep.PostReadRequest({1, 0, 4, 2, 0}, p.r);
  wire::AtomicRequestHeader a;
  a.request_identifier = 0xCAFE;
  p.ep.PostAtomicRequest(a, p.r);
  p.ep.PostReadRequest({1, 0, 4, 2, 0}, p.r);
  ASSERT_EQ(p.r.segments().size(), 3u);
  EXPECT_EQ(ParseUntagged(p.r.segments()[1]).rdmap_control, 0x4A);
  EXPECT_EQ(ParseUntagged(p.r.segments()[1]).payload.size(), 52u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(ParseUntagged(p.r.segments()[i]).msn, i + 1);
  EXPECT_EQ(p.ep.outstanding_responses(), 1u);
}

// RCOMMIT-3.1-T05 (decisions D-D1): Atomic Write Request 0x10 needs the 5-bit opcode:
// RDMAP Control 0x50 under the commit profile.
TEST(PostExtensions, AtomicWriteUsesFiveBitOpcode) {
  Peer p{Config(wire::Profile::kCommit)};
  wire::AtomicWriteRequestHeader h;
  h.data = 0x0102030405060708;
  ASSERT_EQ(p.ep.PostAtomicWriteRequest(h, p.r), PostStatus::kOk);
  Untagged u = ParseUntagged(p.r.segments()[0]);
  EXPECT_EQ(u.rdmap_control, 0x50);
  EXPECT_EQ(u.qn, 1u);
  EXPECT_EQ(u.payload.size(), 24u);
}

// R7306-6.3-05 R7306-6.3-06: Immediate Data is exactly 8 octets on QN0.
TEST(PostExtensions, ImmediateData) {
  Peer p{Config(wire::Profile::kRfc7306)};
  ASSERT_EQ(p.ep.PostImmediateData(0x1122334455667788, true, p.r), PostStatus::kOk);
  Untagged u = ParseUntagged(p.r.segments()[0]);
  EXPECT_EQ(u.rdmap_control, 0x49);
  EXPECT_EQ(u.payload, (Bytes{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}));
}

// R7306-5.2.2-S7 (decisions D-C8): a QN3 response with nothing outstanding -> 1/2/0x02.
TEST(Qn3, UnexpectedResponse) {
  Peer p{Config(wire::Profile::kRfc7306)};
  const Bytes seg = Encode(wire::MakeAtomicResponse(1, {7, 9}));
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x02), seg, false);
  EXPECT_EQ(p.ep.first_violation()->kind, ViolationKind::kUnexpectedResponse);
}

// decisions D-C8: the n-th QN3 response answers the n-th QN3 request; another response
// type -> 0/2/0x06; an MSN other than the next -> 1/2/0x03.
TEST(Qn3, WrongTypeAndWrongMsn) {
  Peer p{Config(wire::Profile::kCommit)};
  p.ep.PostAtomicRequest({}, p.r);
  const Bytes flush = Encode(wire::MakeFlushResponse(1));
  ExpectEcho(ExpectSingleTerminate(p.Feed(flush), 0, 2, 0x06), flush, false);
  EXPECT_EQ(p.ep.first_violation()->kind, ViolationKind::kResponseOpcodeMismatch);

  Peer q{Config(wire::Profile::kCommit)};
  q.ep.PostAtomicRequest({}, q.r);
  const Bytes late = Encode(wire::MakeAtomicResponse(2, {0, 0}));
  ExpectEcho(ExpectSingleTerminate(q.Feed(late), 1, 2, 0x03), late, false);
}

// Two endpoints wired back to back: every segment one produces is valid input for
// the other (R5040-5.5-R10: the Send is delivered after the Write is placed).
TEST(Loopback, WriteSendAndReadBetweenTwoModels) {
  Peer a{Config()};
  Peer b{Config()};
  b.ep.resources().AddRegion(0xB0, 0, 8192, kAllAccess, kStream);
  b.ep.PostReceive(4096);
  a.ep.resources().AddRegion(0xA0, 0, 8192, kAllAccess, kStream);
  const Bytes data = Pattern(5000);
  a.ep.PostRdmaWrite(0xB0, 100, data, a.r);
  a.ep.PostSend(Opcode::kSend, Pattern(3000), 0, a.r);
  a.ep.PostReadRequest({0xA0, 10, 5000, 0xB0, 100}, a.r);
  std::vector<Bytes> to_b(a.r.segments().begin(), a.r.segments().end());
  for (const Bytes& s : to_b) b.ep.OnSegment(s, b.r);
  EXPECT_FALSE(b.ep.first_violation().has_value());
  ASSERT_EQ(b.r.events().size(), 1u);
  EXPECT_EQ(b.r.events()[0].data, Pattern(3000));
  a.r.Clear();
  for (const Bytes& s : b.r.segments()) a.ep.OnSegment(s, a.r);
  EXPECT_FALSE(a.ep.first_violation().has_value());
  ASSERT_EQ(a.r.events().size(), 1u);
  EXPECT_EQ(a.r.events()[0].kind, UlpEventKind::kReadCompleted);
  auto got = a.ep.PeekRegion(0xA0, 10, 5000);
  EXPECT_EQ(Bytes(got.begin(), got.end()), data);
}

}  // namespace
}  // namespace rdmapct::model
