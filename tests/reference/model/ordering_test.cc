// Ordering rules (RFC 5040 §5.5, RFC 7306 §5.4 and §7, COMMIT §3.1): the model
// is synchronous, so most hold by construction; these tests make them explicit.
#include <gtest/gtest.h>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

constexpr uint32_t kMem = 0x40;

EndpointConfig Deferred(wire::Profile p) {
  EndpointConfig c = Config(p);
  c.auto_respond = false;
  c.ird = 64;
  c.mulpdu = 256;
  return c;
}

struct Kind {
  bool tagged;
  uint8_t opcode;
  uint32_t stag_or_msn;
  bool last;
};
Kind KindOf(const Bytes& b) {
  const bool tagged = (b[0] & 0x80) != 0;
  return Kind{tagged, static_cast<uint8_t>(b[1] & 0x0F), tagged ? wire::LoadBe32(&b[2]) : wire::LoadBe32(&b[10]),
              (b[0] & 0x40) != 0};
}

// R5040-5.5-R20a R5040-5.2.1-08 R5040-5.2.2-07: 32 pipelined Reads, each answered
// completely before the next begins, in request order.
TEST(Ordering, ManyOutstandingReadsAnsweredInOrder) {
  Peer p(Deferred(wire::Profile::kRfc5040));
  p.ep.resources().AddRegion(kMem, 0, 4096, kAllAccess, kStream);
  for (uint32_t i = 1; i <= 32; ++i) {
    p.Feed(wire::MakeReadRequest(i, {1000 + i, 0, 600, kMem, i}));
  }
  p.r.Clear();
  p.ep.EmitPendingResponses(1000, p.r);
  ASSERT_EQ(p.r.segments().size(), 32u * 3);  // 600 octets = 242 + 242 + 116
  for (std::size_t k = 0; k < p.r.segments().size(); ++k) {
    Kind s = KindOf(p.r.segments()[k]);
    EXPECT_EQ(s.stag_or_msn, 1001u + k / 3) << k;
    EXPECT_EQ(s.last, k % 3 == 2) << k;
  }
}

// R7306-5.4-R8b R5040-5.5-R20a (one response queue, decisions D-E): a Read then an Atomic:
// every Read Response segment leaves before the Atomic Response.
TEST(Ordering, AtomicResponseAfterEarlierReadResponse) {
  Peer p(Deferred(wire::Profile::kRfc7306));
  p.ep.resources().AddRegion(kMem, 0, 4096, kAllAccess, kStream);
  p.Feed(wire::MakeReadRequest(1, {7, 0, 1000, kMem, 0}));
  wire::AtomicRequestHeader a;
  a.request_identifier = 0x77;
  a.remote_stag = kMem;
  a.remote_tagged_offset = 64;
  a.add_or_swap_data = 1;
  a.add_or_swap_mask = 0;
  p.Feed(wire::MakeAtomicRequest(2, a));
  EXPECT_TRUE(p.r.violations().empty());
  p.r.Clear();
  p.ep.EmitPendingResponses(1000, p.r);
  ASSERT_GE(p.r.segments().size(), 2u);
  for (std::size_t k = 0; k + 1 < p.r.segments().size(); ++k) {
    EXPECT_TRUE(KindOf(p.r.segments()[k]).tagged) << k;
  }
  Kind last = KindOf(p.r.segments().back());
  EXPECT_FALSE(last.tagged);
  EXPECT_EQ(last.opcode, 0xB);
  EXPECT_EQ(last.stag_or_msn, 1u);  // QN3 MSN 1
}

// R7306-5.4-R3 R7306-5.4-R8a: a Write pipelined before a FetchAdd is seen by it,
// and pipelined FetchAdds return strictly increasing originals.
TEST(Ordering, AtomicsSeeEarlierWritesAndRunInOrder) {
  Peer p{Config(wire::Profile::kRfc7306)};
  p.ep.resources().AddRegion(kMem, 0, 64, kAllAccess, kStream);
  Bytes five(8, 0);
  five[0] = 5;  // little-endian memory (decisions.md)
  p.Feed(wire::MakeRdmaWrite(kMem, 0, five));
  for (uint32_t i = 1; i <= 4; ++i) {
    wire::AtomicRequestHeader a;
    a.request_identifier = i;
    a.remote_stag = kMem;
    a.add_or_swap_data = 1;
    a.add_or_swap_mask = 0;
    const auto& r = p.Feed(wire::MakeAtomicRequest(i, a));
    ASSERT_EQ(r.segments().size(), 1u);
    const Bytes& s = r.segments()[0];
    EXPECT_EQ(wire::LoadBe32(&s[18]), i);                // Original Request Identifier
    EXPECT_EQ(wire::LoadBe64(&s[22]), uint64_t{4} + i);  // 5, 6, 7, 8
  }
}

// R5040-5.5-R12 with a multi-segment Write: the Read sees every earlier segment.
TEST(Ordering, ReadAfterMultiSegmentWrite) {
  Peer p{Config()};
  p.ep.resources().AddRegion(kMem, 0, 4096, kAllAccess, kStream);
  const Bytes data = Pattern(3000);
  Peer src{Config()};
  src.ep.PostRdmaWrite(kMem, 0, data, src.r);
  for (const Bytes& s : src.r.segments()) p.Feed(s);
  const auto& r = p.Feed(wire::MakeReadRequest(1, {9, 0, 3000, kMem, 0}));
  Bytes got;
  for (const Bytes& s : r.segments()) got.insert(got.end(), s.begin() + 14, s.end());
  EXPECT_EQ(got, data);
}

// R5040-5.5-R13a (MAY): a deferred Read Response may see a Write that arrived after
// the request; the model reads the source when it sends each segment.
TEST(Ordering, DeferredReadMayObserveLaterWrite) {
  Peer p(Deferred(wire::Profile::kRfc5040));
  p.ep.resources().AddRegion(kMem, 0, 64, kAllAccess, kStream);
  p.Feed(wire::MakeReadRequest(1, {9, 0, 8, kMem, 0}));
  p.Feed(wire::MakeRdmaWrite(kMem, 0, Pattern(8, 0x70)));
  p.r.Clear();
  p.ep.EmitPendingResponses(10, p.r);
  ASSERT_EQ(p.r.segments().size(), 1u);
  EXPECT_EQ(Bytes(p.r.segments()[0].begin() + 14, p.r.segments()[0].end()), Pattern(8, 0x70));
}

// RCOMMIT-3.1.2.3-04 RCOMMIT-3.1.1-01: Write, Flush, Verify pipelined: the responses
// leave in request order on QN3 (MSN 1, 2) and the Verify hash covers the Write.
TEST(Ordering, FlushThenVerifyInOrder) {
  Peer p(Deferred(wire::Profile::kCommit));
  p.ep.resources().AddRegion(kMem, 0, 64, kAllAccess, kStream);
  p.Feed(wire::MakeRdmaWrite(kMem, 0, Pattern(64)));
  p.Feed(wire::MakeFlushRequest(1, {kMem, 64, 0, wire::kFlushToPersistence}));
  p.Feed(wire::MakeVerifyRequest(2, {kMem, 64, 0, {}}));
  EXPECT_TRUE(p.r.violations().empty());
  p.r.Clear();
  p.ep.EmitPendingResponses(10, p.r);
  ASSERT_EQ(p.r.segments().size(), 2u);
  const Bytes& flush = p.r.segments()[0];
  const Bytes& verify = p.r.segments()[1];
  EXPECT_EQ(flush[1] & 0x1F, 0xD);
  EXPECT_EQ(wire::LoadBe32(&flush[10]), 1u);
  EXPECT_EQ(verify[1] & 0x1F, 0xF);
  EXPECT_EQ(wire::LoadBe32(&verify[10]), 2u);
}

}  // namespace
}  // namespace rdmapct::model
