// draft-talpey-rdma-commit-01 through the reference endpoint: RDMA Flush,
// RDMA Verify and Atomic Write Requests at the Responder (validation, the
// operation, the QN 3 response, ordering, the Terminate of every error path)
// and their responses at the Requester. Responses are checked octet by octet
// (untagged DDP header of RFC 5041 Figure 4, 5-bit opcode per COMMIT §3.1)
// and through wire::DecodeRdmapSegment.
#include <gtest/gtest.h>

#include <vector>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

// The first violation's kind, kCount when there is none (never indexes past the end).
ViolationKind FirstKind(const Reactions& r) {
  return r.violations().empty() ? ViolationKind::kCount : r.violations()[0].kind;
}
ViolationKind FirstKind(const std::optional<Violation>& v) { return v ? v->kind : ViolationKind::kCount; }

constexpr uint32_t kStag = 0xC0DE;
constexpr uint32_t kStag2 = 0xC0DF;
constexpr uint64_t kBase = 0x40000;
constexpr uint64_t kLen = 64;
constexpr uint32_t kP = wire::kFlushToPersistence;
constexpr uint32_t kG = wire::kFlushToGlobalVisibility;

EndpointConfig CommitConfig() { return Config(wire::Profile::kCommit); }

wire::FlushRequestHeader Flush(uint64_t to, uint32_t length, uint32_t flags = kP, uint32_t stag = kStag) {
  return wire::FlushRequestHeader{stag, length, to, flags};
}
wire::VerifyRequestHeader Verify(uint64_t to, uint32_t length, wire::ByteSpan hash = {}, uint32_t stag = kStag) {
  return wire::VerifyRequestHeader{stag, length, to, hash};
}
wire::AtomicWriteRequestHeader AtomicWrite(uint64_t to, uint64_t data, uint32_t length = 8, uint32_t stag = kStag) {
  return wire::AtomicWriteRequestHeader{stag, length, to, data};
}

// "123456789", whose CRC-32C is the well-known check value 0xE3069283.
const Bytes kCheckString = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
const Bytes kCheckHash = {0xE3, 0x06, 0x92, 0x83};

// A QN 3 response of this endpoint: T=0 L=1 DV=1 (RCOMMIT-3.1-02 RCOMMIT-3.1-08),
// RV=01b (RCOMMIT-1-01 RCOMMIT-3.1-03) with the 5-bit opcode (COMMIT §3.1),
// Invalidate STag 0 (RCOMMIT-3.1-05), QN 3, `msn`, MO 0, then `payload`.
void ExpectQn3Response(const Bytes& seg, Opcode op, uint32_t msn, const Bytes& payload) {
  ASSERT_EQ(seg.size(), 18u + payload.size());
  EXPECT_EQ(seg[0], 0x41);
  EXPECT_EQ(seg[1], 0x40 | static_cast<uint8_t>(op));
  EXPECT_EQ(wire::LoadBe32(&seg[2]), 0u);
  EXPECT_EQ(wire::LoadBe32(&seg[6]), 3u);
  EXPECT_EQ(wire::LoadBe32(&seg[10]), msn);
  EXPECT_EQ(wire::LoadBe32(&seg[14]), 0u);
  EXPECT_EQ(Bytes(seg.begin() + 18, seg.end()), payload);
  auto v = wire::DecodeRdmapSegment(seg, wire::Profile::kCommit);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->opcode(), op);
  EXPECT_EQ(v->ddp.header.queue_number, 3u);
}

struct CommitTest : ::testing::Test {
  Peer p{CommitConfig()};
  uint32_t msn = 1;
  void SetUp() override { p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream); }
  void Fill() {
    auto m = p.ep.resources().RegionBytes(*p.ep.resources().FindRegion(kStag), kBase, kLen);
    for (std::size_t i = 0; i < kLen; ++i) m[i] = static_cast<uint8_t>(0xA0 + i);
  }
  Bytes Memory(uint64_t to = kBase, std::size_t n = kLen) {
    auto s = p.ep.PeekRegion(kStag, to, n);
    return Bytes(s.begin(), s.end());
  }
  Bytes Seg(const wire::FlushRequestHeader& h) { return Encode(wire::MakeFlushRequest(msn++, h)); }
  Bytes Seg(const wire::VerifyRequestHeader& h) { return Encode(wire::MakeVerifyRequest(msn++, h)); }
  Bytes Seg(const wire::AtomicWriteRequestHeader& h) { return Encode(wire::MakeAtomicWriteRequest(msn++, h)); }
  template <class H>
  const Reactions& Send(const H& h) {
    return p.Feed(Seg(h));
  }
  // Expects `h` to be answered by exactly one `op` response.
  template <class H>
  void ExpectAnswered(const H& h, Opcode op, uint32_t qn3, const Bytes& payload = {}) {
    const Reactions& r = Send(h);
    EXPECT_TRUE(r.violations().empty());
    ASSERT_EQ(r.segments().size(), 1u);
    ExpectQn3Response(r.segments()[0], op, qn3, payload);
    EXPECT_TRUE(r.events().empty());  // processed by RDMAP, not Delivered to the ULP
  }
  // Expects `seg` to be refused with this code, M=1 D=1 R=0 (COMMIT §5.1 case 2),
  // and the local ULP told (RCOMMIT-5.1-04).
  void ExpectRefused(const Bytes& seg, uint8_t layer, uint8_t etype, uint8_t code, ViolationKind kind) {
    const Reactions& r = p.Feed(seg);
    RawTerminate t = ExpectSingleTerminate(r, layer, etype, code);
    ExpectEcho(t, seg, false);
    ASSERT_EQ(r.violations().size(), 1u);
    EXPECT_EQ(FirstKind(r), kind);
    EXPECT_EQ(p.ep.state(), StreamState::kTerminateSent);
    ASSERT_EQ(r.events().size(), 1u);
    EXPECT_EQ(r.events()[0].kind, UlpEventKind::kError);
    EXPECT_EQ(r.events()[0].violation, kind);
  }
};

// --- RDMA Flush -------------------------------------------------------------------------

// RCOMMIT-3.1.1.2-01 RCOMMIT-3.1.1.2-02 RCOMMIT-3.1.1.2-03 RCOMMIT-3.1.1.3-03
// RCOMMIT-3.1.1.3-09 RCOMMIT-3.1-T02 RCOMMIT-3.1-T08 RCOMMIT-3.1.1.1-02: each valid
// disposition (P, G, both) earns one zero-length Flush Response on QN 3.
TEST_F(CommitTest, FlushIsAnsweredWithAnEmptyQn3Response) {
  ExpectAnswered(Flush(kBase, kLen, kP), Opcode::kFlushResponse, 1);
  ExpectAnswered(Flush(kBase + 8, 8, kG), Opcode::kFlushResponse, 2);
  ExpectAnswered(Flush(kBase, kLen, kP | kG), Opcode::kFlushResponse, 3);
  EXPECT_EQ(p.ep.expected_msn(1), 4u);
  EXPECT_EQ(p.ep.next_msn(3), 4u);
}

// RCOMMIT-3.1.1.1-03 RCOMMIT-3.1.1-02 (decisions D-D7): no disposition, or an unknown
// bit: Terminate 0/2/0xFF, DDP Segment Length 18+20, no Flush Response.
TEST(FlushFlagsTest, InvalidDispositionFlagsTerminate) {
  for (uint32_t flags : {0u, 0x4u, 0x5u, 0x80000003u, 0xFFFFFFFCu}) {
    SCOPED_TRACE(flags);
    Peer p{CommitConfig()};
    p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    const Bytes seg = Encode(wire::MakeFlushRequest(1, Flush(kBase, 8, flags)));
    const auto& r = p.Feed(seg);
    RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0xFF);
    ExpectEcho(t, seg, false);
    EXPECT_EQ(*t.ddp_segment_length, 38u);
    EXPECT_EQ(FirstKind(r), ViolationKind::kFlushInvalidFlags);
  }
}

// decisions D-D7 option reject_unknown_flush_flags = false: unknown bits next to a
// known one are accepted; a Flush with no known bit is still refused.
TEST(FlushFlagsTest, UnknownBitsAcceptedWhenConfigured) {
  EndpointConfig c = CommitConfig();
  c.decisions.reject_unknown_flush_flags = false;
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  const auto& ok = p.Feed(wire::MakeFlushRequest(1, Flush(kBase, 8, 0x80000001)));
  ASSERT_EQ(ok.segments().size(), 1u);
  ExpectQn3Response(ok.segments()[0], Opcode::kFlushResponse, 1, {});
  ExpectSingleTerminate(p.Feed(wire::MakeFlushRequest(2, Flush(kBase, 8, 0x4))), 0, 2, 0xFF);
}

// Fault flush-ignore-flags (RCOMMIT-3.1.1-02): flags 0 is answered instead of refused.
TEST(FlushFlagsTest, FaultFlushIgnoreFlagsAnswersFlagsZero) {
  EndpointConfig c = CommitConfig();
  c.faults.Add(Fault::kFlushIgnoreFlags);
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  const auto& r = p.Feed(wire::MakeFlushRequest(1, Flush(kBase, 8, 0)));
  EXPECT_TRUE(r.violations().empty());
  ASSERT_EQ(r.segments().size(), 1u);
  ExpectQn3Response(r.segments()[0], Opcode::kFlushResponse, 1, {});
}

// RCOMMIT-3.1.1-01 RCOMMIT-3.1.1.3-01 RCOMMIT-3.2.2-01 RCOMMIT-2.1-04 RCOMMIT-2.1-01
// RCOMMIT-3.1.1.3-08: a Flush
// queued behind a Read Request is answered after the Read Response (one
// response queue, request order); both held one IRD slot each.
TEST(CommitOrderTest, FlushResponseFollowsEarlierReadResponse) {
  EndpointConfig c = CommitConfig();
  c.auto_respond = false;
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  p.Feed(wire::MakeReadRequest(1, {0x99, 0, 16, kStag, kBase}));
  p.Feed(wire::MakeFlushRequest(2, Flush(kBase, kLen)));
  EXPECT_EQ(p.ep.pending_responses(), 2u);
  p.r.Clear();
  EXPECT_EQ(p.ep.EmitPendingResponses(10, p.r), 2u);
  ASSERT_EQ(p.r.segments().size(), 2u);
  EXPECT_EQ(p.r.segments()[0][0] & 0x80, 0x80);  // tagged Read Response first
  ExpectQn3Response(p.r.segments()[1], Opcode::kFlushResponse, 1, {});
}

// --- RDMA Verify -------------------------------------------------------------------------

// RCOMMIT-3.1.2-01 RCOMMIT-3.1.2-03 RCOMMIT-2.3-01 RCOMMIT-3.1.2.2-01 RCOMMIT-3.1-T04
// RCOMMIT-3.1-T10 RCOMMIT-3.1.2.3-03 RCOMMIT-3.1.2.1-02: without a Hash Value (a
// 16-octet request) the response carries the computed hash,
// CRC-32C big-endian (decision): "123456789" -> E3 06 92 83.
TEST_F(CommitTest, VerifyWithoutHashReturnsTheCrc32cOfTheRange) {
  EXPECT_TRUE(p.Feed(wire::MakeRdmaWrite(kStag, kBase + 5, kCheckString)).violations().empty());
  ExpectAnswered(Verify(kBase + 5, 9), Opcode::kVerifyResponse, 1, kCheckHash);
  // A zero-length range hashes nothing: CRC-32C of no octets is 0.
  ExpectAnswered(Verify(kBase + 5, 0), Opcode::kVerifyResponse, 2, Bytes(4, 0));
}

// RCOMMIT-3.1.2-03: a matching Hash Value is answered like no hash.
TEST_F(CommitTest, VerifyWithMatchingHashIsAnswered) {
  p.Feed(wire::MakeRdmaWrite(kStag, kBase, kCheckString));
  ExpectAnswered(Verify(kBase, 9, kCheckHash), Opcode::kVerifyResponse, 1, kCheckHash);
}

// RCOMMIT-3.1.2-02 RCOMMIT-3.1.2.1-03 RCOMMIT-3.1.2.2-02 RCOMMIT-5.1-C3 (decisions D-D6):
// a Hash Value that differs (one bit, or in length) is refused with 0/2/0xFF
// and no Verify Response is sent.
TEST(VerifyHashTest, MismatchTerminatesWithoutResponse) {
  const Bytes flipped = {0xE3, 0x06, 0x92, 0x82};
  const Bytes longer = {0xE3, 0x06, 0x92, 0x83, 0x00};
  const Bytes shorter = {0xE3, 0x06, 0x92};
  for (const Bytes* hash : {&flipped, &longer, &shorter}) {
    Peer p{CommitConfig()};
    p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    p.Feed(wire::MakeRdmaWrite(kStag, kBase, kCheckString));
    const Bytes seg = Encode(wire::MakeVerifyRequest(1, Verify(kBase, 9, *hash)));
    const auto& r = p.Feed(seg);
    RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0xFF);
    ExpectEcho(t, seg, false);
    EXPECT_EQ(*t.ddp_segment_length, 18u + 16u + hash->size());
    EXPECT_EQ(FirstKind(r), ViolationKind::kVerifyHashMismatch);
  }
}

// RCOMMIT-3.1.2-01 RCOMMIT-3.1.2.3-04 RCOMMIT-3.1.1-03 RCOMMIT-3.1.2.3-01
// RCOMMIT-3.1.2.3-05: Write, Flush, Verify:
// the hash covers the written data and the responses come in request order.
TEST_F(CommitTest, WriteFlushVerifyInOrder) {
  p.Feed(wire::MakeRdmaWrite(kStag, kBase + 32, kCheckString));
  ExpectAnswered(Flush(kBase, kLen), Opcode::kFlushResponse, 1);
  ExpectAnswered(Verify(kBase + 32, 9), Opcode::kVerifyResponse, 2, kCheckHash);
}

// --- Atomic Write ---------------------------------------------------------------------------

// RCOMMIT-3.1.3-03 RCOMMIT-3.1.3.1-06 RCOMMIT-3.1.3.2-01 RCOMMIT-3.1.3.2-02 RCOMMIT-3.1-T06
// RCOMMIT-3.1-T12 RCOMMIT-3.1.3.1-02 (decisions D-D10): the 8 Data octets are stored as on the wire
// (decision), nothing around them changes, and an empty response (opcode
// 10001b) follows.
TEST_F(CommitTest, AtomicWritePlacesTheEightDataOctets) {
  Fill();
  Bytes expect = Memory();
  ExpectAnswered(AtomicWrite(kBase + 16, 0x0102030405060708), Opcode::kAtomicWriteResponse, 1);
  for (int i = 0; i < 8; ++i) expect[16 + i] = static_cast<uint8_t>(i + 1);
  EXPECT_EQ(Memory(), expect);
}

// decisions D-D10 option atomic_write_stores_wire_order = false: the value goes to
// memory in the memory's byte order, like an RFC 7306 atomic (decisions D-C9).
TEST(AtomicWriteByteOrderTest, MemoryOrderOption) {
  for (bool little : {true, false}) {
    EndpointConfig c = CommitConfig();
    c.decisions.atomic_write_stores_wire_order = false;
    c.decisions.atomic_memory_little_endian = little;
    Peer p{c};
    p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    p.Feed(wire::MakeAtomicWriteRequest(1, AtomicWrite(kBase, 0x0102030405060708)));
    auto m = p.ep.PeekRegion(kStag, kBase, 8);
    EXPECT_EQ(Bytes(m.begin(), m.end()), little ? (Bytes{8, 7, 6, 5, 4, 3, 2, 1}) : (Bytes{1, 2, 3, 4, 5, 6, 7, 8}));
  }
}

// RCOMMIT-3.1.3.1-03 RCOMMIT-3.1.3-02 (decisions D-D10): Data Sink Length other than
// 8 is refused with 0/2/0x07 and nothing is placed.
TEST(AtomicWriteLengthTest, LengthOtherThanEightTerminates) {
  for (uint32_t length : {0u, 4u, 7u, 9u, 16u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(length);
    Peer p{CommitConfig()};
    p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    const Bytes seg = Encode(wire::MakeAtomicWriteRequest(1, AtomicWrite(kBase, ~uint64_t{0}, length)));
    const auto& r = p.Feed(seg);
    RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0x07);
    ExpectEcho(t, seg, false);
    EXPECT_EQ(FirstKind(r), ViolationKind::kAtomicWriteLength);
    auto m = p.ep.PeekRegion(kStag, kBase, kLen);
    EXPECT_EQ(Bytes(m.begin(), m.end()), Bytes(kLen, 0));
  }
}

// Fault atomic-write-wrong-length-accepted: Length 4 is placed (all 8 octets) and answered.
TEST(AtomicWriteLengthTest, FaultWrongLengthAcceptedPlaces) {
  EndpointConfig c = CommitConfig();
  c.faults.Add(Fault::kAtomicWriteWrongLengthAccepted);
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  const auto& r = p.Feed(wire::MakeAtomicWriteRequest(1, AtomicWrite(kBase, 0x1122334455667788, 4)));
  ASSERT_EQ(r.segments().size(), 1u);
  ExpectQn3Response(r.segments()[0], Opcode::kAtomicWriteResponse, 1, {});
  auto m = p.ep.PeekRegion(kStag, kBase, 8);
  EXPECT_EQ(Bytes(m.begin(), m.end()), (Bytes{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}));
}

// RCOMMIT-3.1.3.1-04 RCOMMIT-3.1.3.1-09 RCOMMIT-3.1.3.1-10 RCOMMIT-3.1.3.1-11: every
// misalignment 1..7: 0/2/0x07 (by analogy with RFC 7306 §8.2), M=1 D=1 R=0,
// DDP Segment Length 18+24, memory untouched, no response.
TEST(AtomicWriteAlignmentTest, EveryMisalignmentTerminatesWithoutPlacing) {
  for (uint64_t k = 1; k <= 7; ++k) {
    SCOPED_TRACE(k);
    Peer p{CommitConfig()};
    auto& region = p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    auto mem = p.ep.resources().RegionBytes(region, kBase, kLen);
    for (std::size_t i = 0; i < kLen; ++i) mem[i] = static_cast<uint8_t>(i);
    const Bytes before(mem.begin(), mem.end());
    const Bytes seg = Encode(wire::MakeAtomicWriteRequest(1, AtomicWrite(kBase + 8 + k, 0)));
    const auto& r = p.Feed(seg);
    RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0x07);
    ExpectEcho(t, seg, false);
    EXPECT_EQ(*t.ddp_segment_length, 42u);
    EXPECT_EQ(FirstKind(r), ViolationKind::kAtomicWriteMisaligned);
    auto after = p.ep.PeekRegion(kStag, kBase, kLen);
    EXPECT_EQ(Bytes(after.begin(), after.end()), before);
  }
}

// Fault skip-bounds-check: an Atomic Write running 4 octets past the region
// is Placed on what the memory object holds instead of refused (0/1/0x01);
// a Verify over the same range hashes the clipped octets.
TEST(AtomicWriteFaultTest, SkipBoundsCheckPlacesTheClippedOctets) {
  for (bool faulty : {false, true}) {
    EndpointConfig c = CommitConfig();
    if (faulty) c.faults.Add(Fault::kSkipBoundsCheck);
    Peer p{c};
    p.ep.resources().AddRegion(kStag, kBase, 68, kAllAccess, kStream);
    const auto& r = p.Feed(wire::MakeAtomicWriteRequest(1, AtomicWrite(kBase + 64, ~uint64_t{0})));
    auto tail = p.ep.PeekRegion(kStag, kBase + 64, 4);
    if (!faulty) {
      ExpectSingleTerminate(r, 0, 1, 0x01);
      EXPECT_EQ(Bytes(tail.begin(), tail.end()), Bytes(4, 0));
      continue;
    }
    EXPECT_EQ(r.segments().size(), 1u);
    EXPECT_EQ(Bytes(tail.begin(), tail.end()), Bytes(4, 0xFF));
    const auto& v = p.Feed(wire::MakeVerifyRequest(2, Verify(kBase + 64, 1000)));
    ASSERT_EQ(v.segments().size(), 1u);
    EXPECT_EQ(v.segments()[0].size(), 18u + 4u);
  }
}

// RCOMMIT-3.1.3.1-08: an Atomic Write is never Placed before every earlier
// Flush completed successfully. A failed Flush ends the stream, so the Atomic
// Write behind it is not Placed (nor answered). The fault
// keep-placing-after-terminate breaks exactly this.
TEST(AtomicWriteOrderTest, NotPlacedAfterAFailedFlush) {
  for (bool faulty : {false, true}) {
    EndpointConfig c = CommitConfig();
    if (faulty) c.faults.Add(Fault::kKeepPlacingAfterTerminate);
    Peer p{c};
    p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    ExpectSingleTerminate(p.Feed(wire::MakeFlushRequest(1, Flush(kBase, 8, kP, 0xBAD))), 0, 1, 0x00);
    const auto& r = p.Feed(wire::MakeAtomicWriteRequest(2, AtomicWrite(kBase, ~uint64_t{0})));
    EXPECT_TRUE(r.segments().empty());
    auto m = p.ep.PeekRegion(kStag, kBase, 8);
    EXPECT_EQ(Bytes(m.begin(), m.end()), faulty ? Bytes(8, 0xFF) : Bytes(8, 0)) << faulty;
  }
}

// RCOMMIT-3.1.3-01 RCOMMIT-3.1.3.1-08: after a successful Flush (its response
// still queued) the Atomic Write is Placed; responses keep request order.
TEST(AtomicWriteOrderTest, PlacedAfterASuccessfulFlush) {
  EndpointConfig c = CommitConfig();
  c.auto_respond = false;
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  p.Feed(wire::MakeRdmaWrite(kStag, kBase + 8, Pattern(16)));
  p.Feed(wire::MakeFlushRequest(1, Flush(kBase, kLen)));
  p.Feed(wire::MakeAtomicWriteRequest(2, AtomicWrite(kBase, 0x0A0B0C0D0E0F1011)));
  auto m = p.ep.PeekRegion(kStag, kBase, 8);
  EXPECT_EQ(Bytes(m.begin(), m.end()), (Bytes{0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11}));
  p.r.Clear();
  ASSERT_EQ(p.ep.EmitPendingResponses(10, p.r), 2u);
  ExpectQn3Response(p.r.segments()[0], Opcode::kFlushResponse, 1, {});
  ExpectQn3Response(p.r.segments()[1], Opcode::kAtomicWriteResponse, 2, {});
}

// --- target validation shared by the three requests (decisions D-D5) -------------------------

enum class Op { kFlush, kVerify, kAtomicWrite };

Bytes RequestSegment(Op op, uint32_t stag, uint64_t to, uint32_t length) {
  switch (op) {
    case Op::kFlush:
      return Encode(wire::MakeFlushRequest(1, Flush(to, length, kP, stag)));
    case Op::kVerify:
      return Encode(wire::MakeVerifyRequest(1, Verify(to, length, {}, stag)));
    case Op::kAtomicWrite:
      return Encode(wire::MakeAtomicWriteRequest(1, AtomicWrite(to, ~uint64_t{0}, 8, stag)));
  }
  return {};
}

uint8_t RightOf(Op op) { return op == Op::kFlush ? kRemoteFlush : op == Op::kVerify ? kRemoteVerify : kRemoteWrite; }

// RCOMMIT-5.2-02 RCOMMIT-7-01 RCOMMIT-2.4-01 RCOMMIT-2.1-03 RCOMMIT-3.1.1-02
// RCOMMIT-3.1.2-02 RCOMMIT-3.1.3-02 RCOMMIT-5.1-C2 RCOMMIT-5.1-00 RCOMMIT-5-01
// RCOMMIT-3.1.1.2-04: invalid / invalidated STag
// 0/1/0x00, other stream 0/1/0x03, missing right 0/1/0x02, outside the region
// 0/1/0x01, TO + length wrapping 0/1/0x04; R=0; nothing placed or answered.
TEST(CommitTargetTest, TargetErrorsTerminateWithRemoteProtectionCodes) {
  struct Case {
    const char* what;
    uint32_t stag;
    uint64_t to;
    bool drop_right;
    uint32_t stream;
    bool invalidated;
    ViolationKind kind;
    uint8_t code;
  };
  const Case cases[] = {
      {"unknown STag", 0xBAD, kBase, false, kStream, false, ViolationKind::kCommitInvalidStag, 0},
      {"invalidated", kStag, kBase, false, kStream, true, ViolationKind::kCommitInvalidStag, 0},
      {"other stream", kStag, kBase, false, kOtherStream, false, ViolationKind::kCommitStagNotAssociated, 0x03},
      {"missing right", kStag, kBase, true, kStream, false, ViolationKind::kCommitAccessRights, 0x02},
      {"crosses the end", kStag, kBase + kLen - 4, false, kStream, false, ViolationKind::kCommitBaseOrBounds, 0x01},
      {"below the base", kStag, kBase - 8, false, kStream, false, ViolationKind::kCommitBaseOrBounds, 0x01},
      {"wraps 2^64", kStag, ~uint64_t{0} - 3, false, kStream, false, ViolationKind::kCommitToWrap, 0x04},
  };
  for (Op op : {Op::kFlush, Op::kVerify, Op::kAtomicWrite}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.what) + " op " + std::to_string(static_cast<int>(op)));
      Peer p{CommitConfig()};
      const uint8_t access = c.drop_right ? kAllAccess & ~RightOf(op) : kAllAccess;
      p.ep.resources().AddRegion(kStag, kBase, kLen, access, c.stream);
      if (c.invalidated) p.ep.resources().Invalidate(kStag);
      const Bytes seg = RequestSegment(op, c.stag, c.to, 8);
      const auto& r = p.Feed(seg);
      RawTerminate t = ExpectSingleTerminate(r, 0, 1, c.code);
      ExpectEcho(t, seg, false);
      ASSERT_EQ(r.violations().size(), 1u);
      EXPECT_EQ(FirstKind(r), c.kind);
      auto m = p.ep.resources().ObjectBytes(0);
      EXPECT_EQ(Bytes(m.begin(), m.end()), Bytes(kLen, 0));
    }
  }
}

// RCOMMIT-2.4-01 (decisions D-D7): each request needs its own right and only that
// one: Flushable for Flush, Verifiable for Verify, Remote Write for Atomic Write.
TEST(CommitTargetTest, EachRequestNeedsOnlyItsOwnRight) {
  for (Op op : {Op::kFlush, Op::kVerify, Op::kAtomicWrite}) {
    Peer p{CommitConfig()};
    p.ep.resources().AddRegion(kStag, kBase, kLen, RightOf(op), kStream);
    const auto& r = p.Feed(RequestSegment(op, kStag, kBase, 8));
    EXPECT_TRUE(r.violations().empty()) << static_cast<int>(op);
    EXPECT_EQ(r.segments().size(), 1u);
  }
}

// Decision: a Data Sink Length of 0 is still validated (unknown STag ->
// 0/1/0x00) and, on a valid STag, answered.
TEST(CommitTargetTest, ZeroLengthFlushAndVerifyAreValidated) {
  for (Op op : {Op::kFlush, Op::kVerify}) {
    Peer p{CommitConfig()};
    p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    EXPECT_EQ(p.Feed(RequestSegment(op, kStag, kBase + kLen, 0)).segments().size(), 1u);
    Peer q{CommitConfig()};
    ExpectSingleTerminate(q.Feed(RequestSegment(op, 0xBAD, 0, 0)), 0, 1, 0x00);
  }
}

// --- Invalidate STag (decisions D-D4) --------------------------------------------------------

// RCOMMIT-3.1-06: by default a non-zero Invalidate STag is ignored.
TEST_F(CommitTest, InvalidateStagIgnoredByDefault) {
  wire::RdmapSegment s = wire::MakeFlushRequest(msn++, Flush(kBase, 8));
  s.ddp.invalidate_stag = kStag;
  EXPECT_EQ(p.Feed(s).segments().size(), 1u);
  EXPECT_TRUE(p.ep.resources().FindRegion(kStag)->valid);
}

// RCOMMIT-3.1-05 RCOMMIT-3.1-06, option commit_request_invalidates_stag: the
// STag is checked like a Send with Invalidate's before the operation (a bad
// one: 0/1/0x09, nothing done) and invalidated after it.
TEST(CommitInvalidateTest, OptionInvalidatesAfterTheOperation) {
  EndpointConfig c = CommitConfig();
  c.decisions.commit_request_invalidates_stag = true;
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  p.ep.resources().AddRegion(kStag2, 0, 16, kAllAccess, kStream);
  wire::RdmapSegment s = wire::MakeAtomicWriteRequest(1, AtomicWrite(kBase, 0x0101010101010101));
  s.ddp.invalidate_stag = kStag;  // the request's own target: used, then invalidated
  const auto& r = p.Feed(s);
  ASSERT_EQ(r.segments().size(), 1u);
  ExpectQn3Response(r.segments()[0], Opcode::kAtomicWriteResponse, 1, {});
  EXPECT_FALSE(p.ep.resources().FindRegion(kStag)->valid);
  EXPECT_EQ(p.ep.resources().ObjectBytes(0)[7], 0x01);
  EXPECT_TRUE(p.ep.resources().FindRegion(kStag2)->valid);
  // The STag is gone: the next request on it is refused.
  ExpectSingleTerminate(p.Feed(wire::MakeVerifyRequest(2, Verify(kBase, 8))), 0, 1, 0x00);
}

TEST(CommitInvalidateTest, OptionRefusesABadInvalidateStagBeforeActing) {
  struct Case {
    uint32_t invalidate;
    bool invalidatable;
    ViolationKind kind;
  };
  for (const Case& k : {Case{0x7777, true, ViolationKind::kInvalidateStagInvalid},
                        Case{kStag2, false, ViolationKind::kInvalidateStagNotInvalidatable}}) {
    EndpointConfig c = CommitConfig();
    c.decisions.commit_request_invalidates_stag = true;
    Peer p{c};
    p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    p.ep.resources().AddRegion(kStag2, 0, 16, kAllAccess, kStream).remote_invalidatable = k.invalidatable;
    wire::RdmapSegment s = wire::MakeAtomicWriteRequest(1, AtomicWrite(kBase, ~uint64_t{0}));
    s.ddp.invalidate_stag = k.invalidate;
    const Bytes seg = Encode(s);
    const auto& r = p.Feed(seg);
    RawTerminate t = ExpectSingleTerminate(r, 0, 1, 0x09);
    ExpectEcho(t, seg, false);
    EXPECT_EQ(FirstKind(r), k.kind);
    EXPECT_EQ(p.ep.resources().ObjectBytes(0)[0], 0);  // not placed
    EXPECT_TRUE(p.ep.resources().FindRegion(kStag2)->valid);
  }
}

// --- profiles, IRD, after a Terminate -----------------------------------------------------

// RCOMMIT-3.1.4-04 R7306-1.1-05 (decisions D-D1): without the commit profile the
// handlers never run: 0xC/0xE are Unexpected OpCode, and 0x50 reads as an
// RDMA Write with Rsv=01b on an untagged queue (wrong T flag, 0/2/0x06 too).
TEST(CommitProfileTest, OtherProfilesNeverReachTheHandlers) {
  for (wire::Profile profile : {wire::Profile::kRfc5040, wire::Profile::kRfc7306}) {
    for (Op op : {Op::kFlush, Op::kVerify, Op::kAtomicWrite}) {
      Peer p{Config(profile)};
      p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
      const Bytes seg = RequestSegment(op, kStag, kBase, 8);
      const auto& r = p.Feed(seg);
      RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0x06);
      ExpectEcho(t, seg, false);
      const ViolationKind expect =
          op == Op::kAtomicWrite ? ViolationKind::kOpcodeTaggedMismatch : ViolationKind::kUnexpectedOpcode;
      EXPECT_EQ(FirstKind(r), expect);
      EXPECT_EQ(p.ep.resources().ObjectBytes(0)[0], 0);
    }
  }
}

// RCOMMIT-2.1-04 (decisions D-C7 / D-E, shared accounting): Reads and the COMMIT
// requests share IRD; one more outstanding than IRD is 1/2/0x02.
TEST(CommitIrdTest, CommitRequestsShareIrdWithReads) {
  EndpointConfig c = CommitConfig();
  c.ird = 3;
  c.auto_respond = false;
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  EXPECT_TRUE(p.Feed(wire::MakeReadRequest(1, {0x99, 0, 8, kStag, kBase})).violations().empty());
  EXPECT_TRUE(p.Feed(wire::MakeFlushRequest(2, Flush(kBase, 8))).violations().empty());
  EXPECT_TRUE(p.Feed(wire::MakeVerifyRequest(3, Verify(kBase, 8))).violations().empty());
  const auto& r = p.Feed(wire::MakeAtomicWriteRequest(4, AtomicWrite(kBase, 1)));
  ExpectSingleTerminate(r, 1, 2, 0x02);
  EXPECT_EQ(FirstKind(r), ViolationKind::kIrdExceeded);
  EXPECT_EQ(p.ep.resources().ObjectBytes(0)[7], 0);
}

// R5040-5.4-10 R5041-7.1-03: after a Verify mismatch nothing more is answered.
TEST_F(CommitTest, NothingAnsweredAfterTerminate) {
  ExpectRefused(Seg(Verify(kBase, 8, Bytes{1, 2, 3, 4})), 0, 2, 0xFF, ViolationKind::kVerifyHashMismatch);
  EXPECT_TRUE(Send(Flush(kBase, 8)).segments().empty());
  EXPECT_TRUE(Send(AtomicWrite(kBase, ~uint64_t{0})).segments().empty());
  EXPECT_EQ(Memory(kBase, 8), Bytes(8, 0));
}

// --- the Requester ---------------------------------------------------------------------------

struct CommitRequesterTest : ::testing::Test {
  Peer a{CommitConfig()};  // requester
  Peer b{CommitConfig()};  // responder
  void SetUp() override {
    b.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    a.r.Clear();
  }
  // Every segment `a` sent so far, fed to `b`; returns b's responses.
  std::vector<Bytes> Deliver() {
    std::vector<Bytes> requests(a.r.segments().begin(), a.r.segments().end());
    b.r.Clear();
    for (const Bytes& s : requests) b.ep.OnSegment(s, b.r);
    EXPECT_FALSE(b.ep.first_violation().has_value());
    return std::vector<Bytes>(b.r.segments().begin(), b.r.segments().end());
  }
};

// RCOMMIT-3.1-07 RCOMMIT-3.1.1.1-01 RCOMMIT-3.1.2.1-01 RCOMMIT-3.1.3.1-01 RCOMMIT-3.1.1.3-02
// RCOMMIT-3.1.2.3-02 (decisions D-C8,
// E): Atomic, Flush, Verify and Atomic Write Requests share QN1 MSNs 1-4; the
// four QN3 responses complete them in order with the right events.
TEST_F(CommitRequesterTest, ResponsesCompleteTheRequestsInOrder) {
  wire::AtomicRequestHeader atomic;
  atomic.atomic_opcode = 0;
  atomic.request_identifier = 0x44;
  atomic.remote_stag = kStag;
  atomic.remote_tagged_offset = kBase;
  atomic.add_or_swap_data = 1;
  atomic.add_or_swap_mask = 0;
  ASSERT_EQ(a.ep.PostAtomicRequest(atomic, a.r), PostStatus::kOk);
  ASSERT_EQ(a.ep.PostFlushRequest(Flush(kBase, kLen), a.r), PostStatus::kOk);
  ASSERT_EQ(a.ep.PostVerifyRequest(Verify(kBase, 8), a.r), PostStatus::kOk);
  ASSERT_EQ(a.ep.PostAtomicWriteRequest(AtomicWrite(kBase + 8, 5), a.r), PostStatus::kOk);
  ASSERT_EQ(a.r.segments().size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(wire::LoadBe32(&a.r.segments()[i][10]), i + 1);
  const std::vector<Bytes> responses = Deliver();
  ASSERT_EQ(responses.size(), 4u);
  a.r.Clear();
  for (const Bytes& s : responses) a.ep.OnSegment(s, a.r);
  EXPECT_FALSE(a.ep.first_violation().has_value());
  ASSERT_EQ(a.r.events().size(), 4u);
  const auto ev = a.r.events();
  EXPECT_EQ(ev[0].kind, UlpEventKind::kAtomicCompleted);
  EXPECT_EQ(ev[0].request_id, 0x44u);
  EXPECT_EQ(ev[1].kind, UlpEventKind::kFlushCompleted);
  EXPECT_EQ(ev[1].msn, 2u);
  EXPECT_EQ(ev[2].kind, UlpEventKind::kVerifyCompleted);
  EXPECT_EQ(ev[2].msn, 3u);
  // The Verify ran after the FetchAdd: it hashes 01 00 00 00 00 00 00 00 (the
  // little-endian 1 the FetchAdd left), whose CRC-32C is 0xC514CFAD.
  EXPECT_EQ(ev[2].data, (Bytes{0xC5, 0x14, 0xCF, 0xAD}));
  EXPECT_EQ(ev[3].kind, UlpEventKind::kAtomicWriteCompleted);
  EXPECT_EQ(ev[3].msn, 4u);
  EXPECT_EQ(a.ep.outstanding_responses(), 0u);
}

// RCOMMIT-3.1.2.2-02: a Verify Response's hash is delivered whatever its length.
TEST_F(CommitRequesterTest, VerifyResponseOfAnyHashLengthIsDelivered) {
  ASSERT_EQ(a.ep.PostVerifyRequest(Verify(kBase, 8), a.r), PostStatus::kOk);
  const Bytes hash = Pattern(20);
  const auto& r = a.Feed(wire::MakeVerifyResponse(1, hash));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].data, hash);
}

// RCOMMIT-3.1.1.2-02 RCOMMIT-3.1.3.2-02 RCOMMIT-5.1-C2: a Flush or Atomic Write
// Response carrying octets is a length error: 0/2/0xFF, no completion.
TEST_F(CommitRequesterTest, ResponsesWithPayloadTerminate) {
  for (bool flush : {true, false}) {
    Peer req{CommitConfig()};
    req.r.Clear();
    if (flush) {
      ASSERT_EQ(req.ep.PostFlushRequest(Flush(kBase, 8), req.r), PostStatus::kOk);
    } else {
      ASSERT_EQ(req.ep.PostAtomicWriteRequest(AtomicWrite(kBase, 1), req.r), PostStatus::kOk);
    }
    const Bytes octets(4, 0);
    wire::RdmapSegment s = flush ? wire::MakeFlushResponse(1) : wire::MakeAtomicWriteResponse(1);
    s.ulp_payload = octets;
    const Bytes seg = Encode(s);
    const auto& r = req.Feed(seg);
    RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0xFF);
    ExpectEcho(t, seg, false);
    EXPECT_EQ(FirstKind(r), ViolationKind::kRdmapHeaderLength);
    EXPECT_EQ(r.events().size(), 1u);  // the error only
  }
}

// Fault skip-header-length-check: the octets after the (empty) header of a
// Flush Response are ignored and the Flush completes.
TEST_F(CommitRequesterTest, FaultSkipHeaderLengthCheckIgnoresResponsePayload) {
  EndpointConfig c = CommitConfig();
  c.faults.Add(Fault::kSkipHeaderLengthCheck);
  Peer req{c};
  req.r.Clear();
  ASSERT_EQ(req.ep.PostFlushRequest(Flush(kBase, 8), req.r), PostStatus::kOk);
  const Bytes octets(4, 0);
  wire::RdmapSegment s = wire::MakeFlushResponse(1);
  s.ulp_payload = octets;
  const auto& r = req.Feed(s);
  EXPECT_TRUE(r.violations().empty());
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events()[0].kind, UlpEventKind::kFlushCompleted);
}

// RCOMMIT-3.1-07 (decisions D-C8): a response of another type than the oldest
// outstanding request's is 0/2/0x06; a response with nothing outstanding is
// 1/2/0x02.
TEST_F(CommitRequesterTest, WrongOrUnexpectedResponseTerminates) {
  ASSERT_EQ(a.ep.PostFlushRequest(Flush(kBase, 8), a.r), PostStatus::kOk);
  const Bytes wrong = Encode(wire::MakeAtomicWriteResponse(1));
  ExpectEcho(ExpectSingleTerminate(a.Feed(wrong), 0, 2, 0x06), wrong, false);
  EXPECT_EQ(FirstKind(a.ep.first_violation()), ViolationKind::kResponseOpcodeMismatch);
  Peer idle{CommitConfig()};
  const Bytes unexpected = Encode(wire::MakeVerifyResponse(1, Bytes(4, 0)));
  ExpectEcho(ExpectSingleTerminate(idle.Feed(unexpected), 1, 2, 0x02), unexpected, false);
  EXPECT_EQ(FirstKind(idle.ep.first_violation()), ViolationKind::kUnexpectedResponse);
}

}  // namespace
}  // namespace rdmapct::model
