// RDMA Read Requests at the responder (Data Source): responses, validation,
// IRD, ordering, and the Terminated RDMA Header.
#include <gtest/gtest.h>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

constexpr uint32_t kSrc = 0x5000;
constexpr uint64_t kSrcBase = 0x2000;
constexpr uint64_t kSrcLen = 4096;

// The region's contents are Pattern(kSrcLen) so responses can be checked.
struct ReadFixture {
  explicit ReadFixture(EndpointConfig c = Config()) : p(c) {}
  Peer p;
  Bytes src = Pattern(kSrcLen, 3);
  void Init() {
    MemoryRegion& r = p.ep.resources().AddRegion(kSrc, kSrcBase, kSrcLen, kAllAccess, kStream);
    auto bytes = p.ep.resources().RegionBytes(r, kSrcBase, kSrcLen);
    std::copy(src.begin(), src.end(), bytes.begin());
  }
  static Bytes Request(uint32_t msn, uint32_t sink, uint64_t sink_to, uint32_t size, uint32_t src_stag,
                       uint64_t src_to) {
    return Encode(wire::MakeReadRequest(msn, {sink, sink_to, size, src_stag, src_to}));
  }
};

struct ReadTest : ::testing::Test, ReadFixture {
  explicit ReadTest(EndpointConfig c = Config()) : ReadFixture(c) {}
  void SetUp() override { Init(); }
};

struct Segment {
  bool tagged, last;
  uint8_t rdmap_control;
  uint32_t stag;
  uint64_t to;
  Bytes payload;
};
Segment ParseTagged(const Bytes& b) {
  EXPECT_GE(b.size(), 14u);
  return Segment{(b[0] & 0x80) != 0,    (b[0] & 0x40) != 0,    b[1],
                 wire::LoadBe32(&b[2]), wire::LoadBe64(&b[6]), Bytes(b.begin() + 14, b.end())};
}

// RFC 5041 §5.2 example (R5041-5.2-09): 2048 octets at TO 16384, MULPDU 1500 ->
// TO 16384 with 1486 octets, then TO 17870 with 562 octets; R5040-4.4-02: the
// Data Sink STag is copied without interpretation; R5040-5.2.1-11 R5040-5.2.1-03
// R5040-5.2-01 R5040-5.2.2-02 R5040-5.2.2-09 R5041-4.2-06 R5041-4.2-04: one Read Response,
// tagged, one STag, one RDMAP Control octet on every segment.
TEST(ReadResponseSegmentation, Rfc5041Example) {
  EndpointConfig c = Config();
  c.mulpdu = 1500;
  Peer p(c);
  MemoryRegion& r = p.ep.resources().AddRegion(kSrc, 0, 4096, kAllAccess, kStream);
  const Bytes data = Pattern(2048, 5);
  auto dst = p.ep.resources().RegionBytes(r, 100, 2048);
  std::copy(data.begin(), data.end(), dst.begin());
  const auto& out = p.Feed(ReadFixture::Request(1, 0xA5A5A5A5, 16384, 2048, kSrc, 100));
  ASSERT_EQ(out.segments().size(), 2u);
  Segment s1 = ParseTagged(out.segments()[0]);
  Segment s2 = ParseTagged(out.segments()[1]);
  EXPECT_TRUE(s1.tagged);
  EXPECT_FALSE(s1.last);
  EXPECT_EQ(s1.rdmap_control, 0x42);  // RV=01b, opcode 0x2
  EXPECT_EQ(s1.stag, 0xA5A5A5A5u);
  EXPECT_EQ(s1.to, 16384u);
  EXPECT_EQ(s1.payload.size(), 1486u);
  EXPECT_EQ(out.segments()[0].size(), 1500u);
  EXPECT_TRUE(s2.last);
  EXPECT_EQ(s2.stag, 0xA5A5A5A5u);
  EXPECT_EQ(s2.to, 17870u);
  EXPECT_EQ(s2.payload.size(), 562u);
  Bytes joined = s1.payload;
  joined.insert(joined.end(), s2.payload.begin(), s2.payload.end());
  EXPECT_EQ(joined, data);
  EXPECT_TRUE(out.events().empty());  // R5040-5.2.1-04: not delivered to the ULP
}

// R5040-5.2.1-12 R5040-5.2.1-14 R5040-5.2.1-15: zero-length Read is not validated and answered with
// one zero-length Read Response at SinkSTag/SinkTO.
TEST_F(ReadTest, ZeroLengthReadNotValidated) {
  const auto& out = p.Feed(Request(1, 0x77, 0x1234, 0, 0xDEADBEEF, ~uint64_t{0}));
  ASSERT_EQ(out.segments().size(), 1u);
  EXPECT_EQ(out.segments()[0].size(), 14u);
  Segment s = ParseTagged(out.segments()[0]);
  EXPECT_TRUE(s.last);
  EXPECT_EQ(s.stag, 0x77u);
  EXPECT_EQ(s.to, 0x1234u);
}

// R5040-7.2-09d: SrcTO + size exactly at the end succeeds.
TEST_F(ReadTest, ReadUpToTheLastOctet) {
  const auto& out = p.Feed(Request(1, 0x77, 0, 16, kSrc, kSrcBase + kSrcLen - 16));
  ASSERT_EQ(out.segments().size(), 1u);
  EXPECT_EQ(ParseTagged(out.segments()[0]).payload, Bytes(src.end() - 16, src.end()));
}

// R5040-7.2-09a R5040-7.2-09b R5040-7.2-09c R5040-7.2-09d R5040-7.2-09e R5040-5.2.1-13
// R5040-8.1.1-05 R5040-7.1-02c3 R5040-4.8-14: Remote Protection errors carry
// M=1 D=1 R=1, the 18-octet DDP header and the original 28-octet Read Request header.
TEST_F(ReadTest, SourceErrorsEchoTheReadRequestHeader) {
  p.ep.resources().AddRegion(0x66, 0, 64, kAllAccess, kOtherStream);
  p.ep.resources().AddRegion(0x67, 0, 64, kRemoteWrite, kStream);
  p.ep.resources().AddRegion(0x68, 0, 64, kAllAccess, kStream).valid = false;
  struct Case {
    uint32_t stag;
    uint64_t to;
    uint32_t size;
    uint8_t code;
  };
  const Case cases[] = {
      {0x9999, 0, 8, 0x00},                     // 09a never registered
      {0x68, 0, 8, 0x00},                       // 09a invalidated
      {0x66, 0, 8, 0x03},                       // 09b other stream
      {0x67, 0, 8, 0x02},                       // access (decisions D-A3)
      {kSrc, kSrcBase - 1, 8, 0x01},            // 09c below base
      {kSrc, kSrcBase + kSrcLen + 1, 1, 0x01},  // 09c past the end
      {kSrc, kSrcBase + kSrcLen - 8, 9, 0x01},  // 09d end + 1
      {kSrc, ~uint64_t{0} - 15, 32, 0x04},      // 09e wrap
  };
  for (const Case& c : cases) {
    ReadFixture t;
    t.Init();
    t.p.ep.resources().AddRegion(0x66, 0, 64, kAllAccess, kOtherStream);
    t.p.ep.resources().AddRegion(0x67, 0, 64, kRemoteWrite, kStream);
    t.p.ep.resources().AddRegion(0x68, 0, 64, kAllAccess, kStream).valid = false;
    const Bytes seg = Request(1, 0x77, 0x10, c.size, c.stag, c.to);
    RawTerminate term = ExpectSingleTerminate(t.p.Feed(seg), 0, 1, c.code);
    ExpectEcho(term, seg, true);
    EXPECT_EQ(t.p.ep.pending_responses(), 0u);
  }
}

// R5041-7.1-U5 R5040-5.2.1-02 R5040-7.2-06: QN1 MSNs 1, 2, 3...; a skipped one -> 1/2/0x03 (R=0:
// Figure 10, DDP errors carry no RDMA header).
TEST_F(ReadTest, SkippedMsnIsRangeNotValid) {
  p.Feed(Request(1, 0x77, 0, 8, kSrc, kSrcBase));
  const Bytes seg = Request(3, 0x77, 0, 8, kSrc, kSrcBase);
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x03), seg, false);
}

// R5040-4.2-01 R5040-4.2-T02 (decisions.md): a Read Request message that is not exactly
// 28 octets.
TEST_F(ReadTest, WrongHeaderLength) {
  for (std::size_t n : {27u, 29u}) {
    ReadFixture t;
    t.Init();
    Bytes seg = Request(1, 0x77, 0, 8, kSrc, kSrcBase);
    seg.resize(18 + n, 0xEE);
    ExpectEcho(ExpectSingleTerminate(t.p.Feed(seg), 0, 2, 0xFF), seg, false);
    EXPECT_EQ(t.p.ep.first_violation()->kind, ViolationKind::kRdmapHeaderLength);
  }
}

// R5040-5.5-R12 R5040-5.5-R17: data written earlier on the stream is read back.
TEST_F(ReadTest, ReadSeesEarlierWrite) {
  p.Feed(wire::MakeRdmaWrite(kSrc, kSrcBase, Pattern(8, 0xC0)));
  const auto& out = p.Feed(Request(1, 0x77, 0, 8, kSrc, kSrcBase));
  ASSERT_EQ(out.segments().size(), 1u);
  EXPECT_EQ(ParseTagged(out.segments()[0]).payload, Pattern(8, 0xC0));
}

struct DeferredReadTest : ReadTest {
  static EndpointConfig Cfg() {
    EndpointConfig c = Config();
    c.auto_respond = false;
    c.ird = 4;
    c.mulpdu = 128;
    return c;
  }
  DeferredReadTest() : ReadTest(Cfg()) {}
};

// R5040-5.5-R20a R5040-5.2.2-07 R5040-5.2.1-08 R5040-6.1-05 R5040-5.2.2-03: IRD requests outstanding at
// once are all accepted and answered strictly in request order, each response
// complete (L=1) before the next starts.
TEST_F(DeferredReadTest, ResponsesInRequestOrder) {
  for (uint32_t i = 1; i <= 4; ++i) {
    EXPECT_TRUE(p.Feed(Request(i, 0x100 + i, 0, 200, kSrc, kSrcBase + i)).segments().empty());
  }
  EXPECT_EQ(p.ep.pending_responses(), 4u);
  p.r.Clear();
  p.ep.EmitPendingResponses(1000, p.r);
  ASSERT_EQ(p.r.segments().size(), 8u);  // 200 octets = 114 + 86 at MULPDU 128
  for (uint32_t i = 0; i < 8; ++i) {
    Segment s = ParseTagged(p.r.segments()[i]);
    EXPECT_EQ(s.stag, 0x101u + i / 2) << i;
    EXPECT_EQ(s.last, i % 2 == 1) << i;
    EXPECT_LE(p.r.segments()[i].size(), 128u);
  }
}

// R5040-6.1-10 (decisions D-A7): IRD + 1 outstanding -> 1/2/0x02, or 0/2/0x07 by option.
TEST_F(DeferredReadTest, IrdExceeded) {
  for (uint32_t i = 1; i <= 4; ++i) p.Feed(Request(i, 0x77, 0, 8, kSrc, kSrcBase));
  const Bytes seg = Request(5, 0x77, 0, 8, kSrc, kSrcBase);
  ExpectEcho(ExpectSingleTerminate(p.Feed(seg), 1, 2, 0x02), seg, false);
  EXPECT_EQ(p.ep.first_violation()->kind, ViolationKind::kIrdExceeded);
  EXPECT_EQ(p.ep.pending_responses(), 0u);  // nothing is answered after a Terminate

  EndpointConfig c = Cfg();
  c.decisions.ird_overrun_as_rdmap = true;
  Peer q(c);
  q.ep.resources().AddRegion(kSrc, kSrcBase, kSrcLen, kAllAccess, kStream);
  for (uint32_t i = 1; i <= 4; ++i) q.Feed(Request(i, 0x77, 0, 8, kSrc, kSrcBase));
  ExpectSingleTerminate(q.Feed(seg), 0, 2, 0x07);
}

// A slot is freed once its response is fully sent.
TEST_F(DeferredReadTest, SlotFreedAfterResponse) {
  for (uint32_t i = 1; i <= 4; ++i) p.Feed(Request(i, 0x77, 0, 8, kSrc, kSrcBase));
  p.ep.EmitPendingResponses(1, p.r);
  EXPECT_TRUE(p.Feed(Request(5, 0x77, 0, 8, kSrc, kSrcBase)).violations().empty());
}

// R5040-4.8-15: a Read that fails part-way returns the Read Request header advanced
// by the octets already sent (SinkTO, SrcTO + N; size - N), same STags.
TEST_F(DeferredReadTest, MidReadFailureUpdatesTerminatedRdmaHeader) {
  const Bytes seg = Request(1, 0x77, 0x100, 300, kSrc, kSrcBase);
  p.Feed(seg);
  p.r.Clear();
  EXPECT_EQ(p.ep.EmitPendingResponses(1, p.r), 1u);  // 114 octets sent
  p.ep.resources().Invalidate(kSrc);
  p.r.Clear();
  p.ep.EmitPendingResponses(10, p.r);
  RawTerminate t = ExpectSingleTerminate(p.r, 0, 1, 0x00);
  EXPECT_TRUE(t.r);
  EXPECT_EQ(t.terminated_ddp_header, Prefix(seg, 18));
  EXPECT_EQ(*t.ddp_segment_length, seg.size());
  ASSERT_EQ(t.terminated_rdma_header.size(), 28u);
  const uint8_t* h = t.terminated_rdma_header.data();
  EXPECT_EQ(wire::LoadBe32(h), 0x77u);                // SinkSTag
  EXPECT_EQ(wire::LoadBe64(h + 4), 0x100u + 114);     // SinkTO + N
  EXPECT_EQ(wire::LoadBe32(h + 12), 300u - 114);      // RDMARDSZ - N
  EXPECT_EQ(wire::LoadBe32(h + 16), kSrc);            // SrcSTag
  EXPECT_EQ(wire::LoadBe64(h + 20), kSrcBase + 114);  // SrcTO + N
  EXPECT_EQ(p.ep.pending_responses(), 0u);
}

}  // namespace
}  // namespace rdmapct::model
