// RFC 7306 Atomic Operations through the reference endpoint: the Atomic
// Request at the Responder (FetchAdd / CmpSwap semantics, byte order,
// alignment, STag validation, ordering) and the Atomic Response at the
// Requester. Expected values are worked out by hand from RFC 7306 §5.1 and
// §5.2; responses are checked octet by octet (Figure 6 after the untagged
// DDP header of RFC 5041 Figure 4) and through wire::DecodeRdmapSegment.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

// The first violation's kind, kCount when there is none (never indexes past the end).
ViolationKind FirstKind(const Reactions& r) {
  return r.violations().empty() ? ViolationKind::kCount : r.violations()[0].kind;
}

constexpr uint32_t kStag = 0x5A01;
constexpr uint64_t kBase = 0x7000;  // 64-bit aligned; object offset 0
constexpr uint64_t kLen = 64;
constexpr uint8_t kFetchAdd = 0x0;
constexpr uint8_t kCmpSwap = 0x2;

wire::AtomicRequestHeader FetchAdd(uint32_t id, uint64_t to, uint64_t add, uint64_t add_mask) {
  wire::AtomicRequestHeader h;
  h.atomic_opcode = kFetchAdd;
  h.request_identifier = id;
  h.remote_stag = kStag;
  h.remote_tagged_offset = to;
  h.add_or_swap_data = add;
  h.add_or_swap_mask = add_mask;
  return h;  // Compare Data 0, Compare Mask all-ones (RFC 7306 §5.2.1)
}

wire::AtomicRequestHeader CmpSwap(uint32_t id, uint64_t to, uint64_t compare, uint64_t compare_mask, uint64_t swap,
                                  uint64_t swap_mask) {
  wire::AtomicRequestHeader h = FetchAdd(id, to, swap, swap_mask);
  h.atomic_opcode = kCmpSwap;
  h.compare_data = compare;
  h.compare_mask = compare_mask;
  return h;
}

// The 8 memory octets of a little-endian word, and back (decisions D-C9).
Bytes LeOctets(uint64_t v) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  return b;
}

// The Atomic Response the endpoint sent: an untagged DDP segment on QN 3
// (RFC 7306 §5.2.2 items 2-3) carrying Figure 6 and nothing else: T=0 and
// opcode 1011b (R7306-5.2-01 R7306-5.2-05 R7306-4.1-T04 R7306-4.2-T04), RV=01b
// (R7306-4.1-01), Invalidate STag zero (R7306-4.1-03).
struct AtomicReply {
  uint32_t id = 0;
  uint64_t original = 0;
};

AtomicReply ExpectAtomicResponse(const Bytes& seg, uint32_t qn3_msn) {
  AtomicReply a;
  EXPECT_EQ(seg.size(), 18u + 12u) << "untagged DDP header + 12-octet Figure 6 (decisions D-C1)";
  if (seg.size() != 30) return a;
  EXPECT_EQ(seg[0], 0x41);                 // T=0 L=1 DV=1
  EXPECT_EQ(seg[1], 0x4B);                 // RV=01b opcode 1011b
  EXPECT_EQ(wire::LoadBe32(&seg[2]), 0u);  // Invalidate STag zero (R7306-4.1-03)
  EXPECT_EQ(wire::LoadBe32(&seg[6]), 3u);
  EXPECT_EQ(wire::LoadBe32(&seg[10]), qn3_msn);
  EXPECT_EQ(wire::LoadBe32(&seg[14]), 0u);
  auto v = wire::DecodeRdmapSegment(seg, wire::Profile::kRfc7306);
  EXPECT_TRUE(v.ok());
  if (!v.ok()) return a;
  EXPECT_EQ(v->opcode(), Opcode::kAtomicResponse);
  EXPECT_TRUE(v->header_present);
  const auto* h = std::get_if<wire::AtomicResponseHeader>(&v->header);
  EXPECT_NE(h, nullptr);
  if (h == nullptr) return a;
  a.id = h->original_request_identifier;
  a.original = h->original_remote_data_value;
  EXPECT_EQ(wire::LoadBe32(&seg[18]), a.id);
  EXPECT_EQ(wire::LoadBe64(&seg[22]), a.original);
  return a;
}

EndpointConfig AtomicConfig() { return Config(wire::Profile::kRfc7306); }

struct AtomicTest : ::testing::Test {
  Peer p{AtomicConfig()};
  uint32_t msn = 1;
  void SetUp() override { Init(); }
  void Init() { p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream); }
  void SetMemory(uint64_t to, const Bytes& b) {
    auto dst = p.ep.resources().RegionBytes(*p.ep.resources().FindRegion(kStag), to, b.size());
    ASSERT_EQ(dst.size(), b.size());
    std::copy(b.begin(), b.end(), dst.begin());
  }
  Bytes Memory(uint64_t to = kBase, std::size_t n = kLen) {
    auto s = p.ep.PeekRegion(kStag, to, n);
    return Bytes(s.begin(), s.end());
  }
  const Reactions& Send(const wire::AtomicRequestHeader& h) { return p.Feed(wire::MakeAtomicRequest(msn++, h)); }
  // Sends `h` and expects exactly one Atomic Response (QN3 MSN `qn3`).
  AtomicReply Exchange(const wire::AtomicRequestHeader& h, uint32_t qn3 = 1) {
    const Reactions& r = Send(h);
    EXPECT_TRUE(r.violations().empty());
    EXPECT_EQ(r.segments().size(), 1u);
    if (r.segments().size() != 1) return {};
    return ExpectAtomicResponse(r.segments()[0], qn3);
  }
};

// --- FetchAdd (RFC 7306 §5.1.1) -------------------------------------------------

// R7306-5.1.1-01 R7306-5.2.1-S8 R7306-5.2.2-01 R7306-5.2.2-02 R7306-5.2.2-03 R7306-5-07
// R7306-5.2-04 R7306-5.2.2-S2 R7306-5.2.2-S3 R7306-5.2.1-05 R7306-5.2.1-01 R7306-5.2.1-09
// R7306-5.2.1-T01 R7306-5.1.1-08: the response echoes the Request
// Identifier and returns the value before the add; memory holds the sum.
TEST_F(AtomicTest, FetchAddReturnsOriginalAndStoresSum) {
  SetMemory(kBase + 8, LeOctets(0x10));
  const AtomicReply a = Exchange(FetchAdd(0x12345678, kBase + 8, 5, 0));
  EXPECT_EQ(a.id, 0x12345678u);
  EXPECT_EQ(a.original, 0x10u);
  EXPECT_EQ(Memory(kBase + 8, 8), LeOctets(0x15));
  EXPECT_EQ(Memory(kBase, 8), Bytes(8, 0));  // neighbours untouched
  EXPECT_EQ(Memory(kBase + 16, 8), Bytes(8, 0));
}

// R7306-5.1.1-06: Add Mask 0 is a plain 64-bit add; the carry out of bit 63 is lost.
TEST_F(AtomicTest, FetchAddMaskZeroIsPlain64BitAddThatWraps) {
  SetMemory(kBase, LeOctets(~uint64_t{0}));
  EXPECT_EQ(Exchange(FetchAdd(1, kBase, 1, 0)).original, ~uint64_t{0});
  EXPECT_EQ(Memory(kBase, 8), LeOctets(0));
  SetMemory(kBase, LeOctets(0x00000000FFFFFFFF));
  Exchange(FetchAdd(2, kBase, 1, 0), 2);
  EXPECT_EQ(Memory(kBase, 8), LeOctets(0x0000000100000000));  // carry crosses bit 31
}

// R7306-5.1.1-01 R7306-5.2.1-10: a set Add Mask bit is the top bit of a field;
// its carry is dropped.
TEST_F(AtomicTest, FetchAddMaskSplitsIntoIndependentFields) {
  struct Case {
    uint64_t original, add, mask, expect;
  };
  const Case cases[] = {
      // Two 32-bit fields: the low one wraps to 0 without touching the high one.
      {0x00000001FFFFFFFF, 0x0000000100000001, 0x8000000080000000, 0x0000000200000000},
      // Eight octet fields.
      {0xFF01FF01FF01FF01, 0x0101010101010101, 0x8080808080808080, 0x0002000200020002},
      // Bit 0 is a 1-bit field, bits 1-63 another: 1 + 1 gives 0, not 2.
      {0x0000000000000001, 0x0000000000000001, 0x0000000000000001, 0x0000000000000000},
      // All-ones mask: 64 one-bit fields, i.e. XOR.
      {0xF0F0F0F0F0F0F0F0, 0xFF00FF00FF00FF00, ~uint64_t{0}, 0x0FF00FF00FF00FF0},
      // A 4-bit field at bits 0-3 and a 60-bit one above it.
      {0x000000000000001F, 0x0000000000000011, 0x0000000000000008, 0x0000000000000020},
  };
  uint32_t qn3 = 1;
  for (const Case& c : cases) {
    SetMemory(kBase + 24, LeOctets(c.original));
    EXPECT_EQ(Exchange(FetchAdd(qn3, kBase + 24, c.add, c.mask), qn3).original, c.original);
    EXPECT_EQ(Memory(kBase + 24, 8), LeOctets(c.expect)) << std::hex << c.mask;
    ++qn3;
  }
}

// R7306-5.1.1-01: the model's ripple add agrees with an independent closed form
// (add with the field-top bits cleared, then XOR them back in) on many inputs.
TEST_F(AtomicTest, FetchAddMatchesClosedFormOnPseudoRandomInputs) {
  uint64_t s = 0x9E3779B97F4A7C15;
  auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  for (uint32_t i = 1; i <= 300; ++i) {
    const uint64_t x = next(), y = next();
    const uint64_t m = i % 3 == 0 ? next() : (i % 3 == 1 ? next() & next() & next() : 0);
    const uint64_t expect = ((x & ~m) + (y & ~m)) ^ ((x ^ y) & m);
    SetMemory(kBase + 32, LeOctets(x));
    EXPECT_EQ(Exchange(FetchAdd(i, kBase + 32, y, m), i).original, x);
    ASSERT_EQ(Memory(kBase + 32, 8), LeOctets(expect)) << i;
  }
}

// R7306-5.2.1-03 R7306-5.2.1-11 R7306-5.2.1-12: Reserved bits, Compare Data and
// Compare Mask are ignored by FetchAdd.
TEST_F(AtomicTest, FetchAddIgnoresReservedAndCompareFields) {
  wire::AtomicRequestHeader h = FetchAdd(7, kBase, 3, 0);
  h.reserved = 0x0FFFFFFF;
  h.compare_data = ~uint64_t{0};
  h.compare_mask = 0;
  SetMemory(kBase, LeOctets(40));
  EXPECT_EQ(Exchange(h).original, 40u);
  EXPECT_EQ(Memory(kBase, 8), LeOctets(43));
}

// --- CmpSwap (RFC 7306 §5.1.2) -----------------------------------------------------

// R7306-5.1.2-01 R7306-5.1.2-02 R7306-5.2.1-T02 R7306-5.2.1-09: full-mask match swaps
// in the Swap Data.
TEST_F(AtomicTest, CmpSwapMatchSwaps) {
  SetMemory(kBase + 8, LeOctets(0x1111222233334444));
  const AtomicReply a =
      Exchange(CmpSwap(9, kBase + 8, 0x1111222233334444, ~uint64_t{0}, 0xAAAABBBBCCCCDDDD, ~uint64_t{0}));
  EXPECT_EQ(a.id, 9u);
  EXPECT_EQ(a.original, 0x1111222233334444u);
  EXPECT_EQ(Memory(kBase + 8, 8), LeOctets(0xAAAABBBBCCCCDDDD));
}

// R7306-5.1.2-01 R7306-5.2.1-10: only the Compare Mask bits are compared; only
// the Swap Mask bits are replaced.
TEST_F(AtomicTest, CmpSwapMaskedCompareAndMaskedSwap) {
  SetMemory(kBase, LeOctets(0x1111222233334444));
  const AtomicReply a =
      Exchange(CmpSwap(1, kBase, 0x1111999999999999, 0xFFFF000000000000, 0xDEADBEEFCAFEF00D, 0x00000000FFFFFFFF));
  EXPECT_EQ(a.original, 0x1111222233334444u);
  EXPECT_EQ(Memory(kBase, 8), LeOctets(0x11112222CAFEF00D));
}

// R7306-5.1.2-02: a failed compare leaves memory exactly as it was and still
// returns the original value.
TEST_F(AtomicTest, CmpSwapMismatchLeavesMemoryUnchanged) {
  SetMemory(kBase, LeOctets(0x1111222233334444));
  const Bytes before = Memory();
  const AtomicReply a = Exchange(CmpSwap(2, kBase, 0x1111222233334445, ~uint64_t{0}, 0xAAAAAAAAAAAAAAAA, ~uint64_t{0}));
  EXPECT_EQ(a.original, 0x1111222233334444u);
  EXPECT_EQ(Memory(), before);
}

// Fault write-memory-on-failed-cmpswap (R7306-5.1.2-02): the mismatch now writes.
TEST(AtomicFaultTest, WriteMemoryOnFailedCmpSwapChangesMemory) {
  EndpointConfig c = AtomicConfig();
  c.faults.Add(Fault::kWriteMemoryOnFailedCmpSwap);
  Peer p{c};
  auto& region = p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  wire::StoreBe64(p.ep.resources().RegionBytes(region, kBase, 8).data(), 0x0102030405060708);
  p.Feed(wire::MakeAtomicRequest(1, CmpSwap(2, kBase, 0, ~uint64_t{0}, 0xAAAAAAAAAAAAAAAA, 0x00000000FFFFFFFF)));
  auto m = p.ep.PeekRegion(kStag, kBase, 8);
  // Little-endian word 0x0807060504030201 with its low half replaced.
  EXPECT_EQ(Bytes(m.begin(), m.end()), LeOctets(0x08070605AAAAAAAA));
}

// --- byte order (decisions D-C9) -----------------------------------------------------------

// R7306-5.1.1-07: octets 01..08 in memory, FetchAdd(+1). A little-endian
// target reads 0x0807060504030201, so the wire carries 08 07 .. 01 and memory
// becomes 02 02 03 .. 08; a big-endian target returns 01 .. 08 and ends in 09.
TEST(AtomicByteOrderTest, LittleAndBigEndianTargetMemory) {
  for (bool little : {true, false}) {
    EndpointConfig c = AtomicConfig();
    c.decisions.atomic_memory_little_endian = little;
    Peer p{c};
    auto& region = p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    const Bytes init = {1, 2, 3, 4, 5, 6, 7, 8};
    std::copy(init.begin(), init.end(), p.ep.resources().RegionBytes(region, kBase, 8).begin());
    const auto& r = p.Feed(wire::MakeAtomicRequest(1, FetchAdd(1, kBase, 1, 0)));
    ASSERT_EQ(r.segments().size(), 1u);
    const Bytes& seg = r.segments()[0];
    const Bytes wire_original(seg.begin() + 22, seg.end());
    auto m = p.ep.PeekRegion(kStag, kBase, 8);
    if (little) {
      EXPECT_EQ(wire_original, (Bytes{8, 7, 6, 5, 4, 3, 2, 1}));
      EXPECT_EQ(Bytes(m.begin(), m.end()), (Bytes{2, 2, 3, 4, 5, 6, 7, 8}));
    } else {
      EXPECT_EQ(wire_original, (Bytes{1, 2, 3, 4, 5, 6, 7, 8}));
      EXPECT_EQ(Bytes(m.begin(), m.end()), (Bytes{1, 2, 3, 4, 5, 6, 7, 9}));
    }
  }
}

// --- alignment (RFC 7306 §5.1, §8.2) ---------------------------------------------------

// R7306-8.2-04 R7306-8.2-05 R7306-5.1.1-03 R7306-5.1.1-04 R7306-5.1.1-05 R7306-5.1.2-04
// R7306-5.1.2-05 R7306-5.1.2-06 R7306-5.1.2-07 R7306-5.2.1-08 R7306-8.1-C2
// R7306-8.1-00 R7306-8-01: every
// misalignment 1..7 of either AOpCode: Terminate 0/2/0x07 with M=1 D=1 R=0
// (§8.1 case 2: the RDMA header is NOT echoed), DDP Segment Length 18+52,
// memory untouched, no Atomic Response.
TEST(AtomicAlignmentTest, EveryMisalignmentTerminatesWithoutTouchingMemory) {
  for (uint8_t aop : {kFetchAdd, kCmpSwap}) {
    for (uint64_t k = 1; k <= 7; ++k) {
      Peer p{AtomicConfig()};
      auto& region = p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
      auto mem = p.ep.resources().RegionBytes(region, kBase, kLen);
      for (std::size_t i = 0; i < kLen; ++i) mem[i] = static_cast<uint8_t>(0xC0 + i);
      const Bytes before(mem.begin(), mem.end());
      wire::AtomicRequestHeader h =
          CmpSwap(k, kBase + 16 + k, 0, 0, ~uint64_t{0}, ~uint64_t{0});  // compare always matches
      h.atomic_opcode = aop;
      const Bytes seg = Encode(wire::MakeAtomicRequest(1, h));
      const auto& r = p.Feed(seg);
      RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0x07);
      ExpectEcho(t, seg, false);
      EXPECT_EQ(*t.ddp_segment_length, 70u);
      EXPECT_EQ(t.terminated_ddp_header.size(), 18u);
      ASSERT_EQ(r.violations().size(), 1u);
      EXPECT_EQ(FirstKind(r), ViolationKind::kAtomicMisaligned);
      auto after = p.ep.PeekRegion(kStag, kBase, kLen);
      EXPECT_EQ(Bytes(after.begin(), after.end()), before) << "aop " << int(aop) << " +" << k;
      EXPECT_EQ(p.ep.state(), StreamState::kTerminateSent);
    }
  }
}

// Fault execute-misaligned-atomic (R7306-5.1.1-03/-04): executed and answered.
TEST(AtomicFaultTest, ExecuteMisalignedAtomicModifiesMemory) {
  EndpointConfig c = AtomicConfig();
  c.faults.Add(Fault::kExecuteMisalignedAtomic);
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  const auto& r = p.Feed(wire::MakeAtomicRequest(1, FetchAdd(3, kBase + 4, 0x0101, 0)));
  EXPECT_TRUE(r.violations().empty());
  ASSERT_EQ(r.segments().size(), 1u);
  EXPECT_EQ(ExpectAtomicResponse(r.segments()[0], 1).original, 0u);
  auto m = p.ep.PeekRegion(kStag, kBase, 16);
  EXPECT_EQ(Bytes(m.begin(), m.end()), (Bytes{0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

// Fault skip-bounds-check (R5041-7.1-G4 by analogy, decisions D-C4): an atomic whose
// word runs 4 octets past the region is executed on the octets the memory
// object has instead of being refused with 0/1/0x01.
TEST(AtomicFaultTest, SkipBoundsCheckExecutesOnTheClippedWord) {
  for (bool faulty : {false, true}) {
    EndpointConfig c = AtomicConfig();
    if (faulty) c.faults.Add(Fault::kSkipBoundsCheck);
    Peer p{c};
    p.ep.resources().AddRegion(kStag, kBase, 68, kAllAccess, kStream);  // object of 68 octets
    const auto& r = p.Feed(wire::MakeAtomicRequest(1, FetchAdd(1, kBase + 64, 0x01010101, 0)));
    auto tail = p.ep.PeekRegion(kStag, kBase + 64, 4);
    if (!faulty) {
      ExpectSingleTerminate(r, 0, 1, 0x01);
      EXPECT_EQ(Bytes(tail.begin(), tail.end()), Bytes(4, 0));
      continue;
    }
    ASSERT_EQ(r.segments().size(), 1u);
    EXPECT_EQ(ExpectAtomicResponse(r.segments()[0], 1).original, 0u);
    EXPECT_EQ(Bytes(tail.begin(), tail.end()), Bytes(4, 1));
  }
}

// R7306-5.2.1-07 R7306-5.2.1-08: alignment is that of the ULP Buffer address,
// not of the TO. A region whose base TO 0x1003 lies at object offset 5: TO
// 0x1006 is address 8 (aligned, accepted), TO 0x1008 is address 10 (rejected).
TEST(AtomicAlignmentTest, AlignmentIsOfTheBufferAddressNotTheTaggedOffset) {
  Peer p{AtomicConfig()};
  Resources& res = p.ep.resources();
  MemoryRegion region;
  region.stag = kStag;
  region.base_tagged_offset = 0x1003;
  region.length = 40;
  region.access = kAllAccess;
  region.stream_id = kStream;
  region.memory_object = res.CreateMemoryObject(64);
  region.object_offset = 5;
  ASSERT_TRUE(res.RegisterRegion(region));
  const auto& ok = p.Feed(wire::MakeAtomicRequest(1, FetchAdd(1, 0x1006, 9, 0)));
  ASSERT_EQ(ok.segments().size(), 1u);
  EXPECT_EQ(res.ObjectBytes(region.memory_object)[8], 9);
  const auto& bad = p.Feed(wire::MakeAtomicRequest(2, FetchAdd(2, 0x1008, 9, 0)));
  ExpectSingleTerminate(bad, 0, 2, 0x07);
  EXPECT_EQ(res.ObjectBytes(region.memory_object)[10], 0);
}

// --- AOpCode (RFC 7306 §5.2.1 item 4, decisions D-C3) ------------------------------------

// R7306-5.2.1-S4 R7306-5.2.1-T03: 0001b (Reserved) and every Unassigned code
// surface an error: Terminate 0/2/0x06 (decision for C.3), M=1 D=1 R=0, no
// execution. FetchAdd / CmpSwap are both implemented (R7306-5-03 R7306-5.2.1-04
// R7306-5.2.1-T01 R7306-5.2.1-T02).
TEST(AtomicOpcodeTest, UnsupportedAtomicOpcodesTerminate) {
  for (uint8_t aop = 0; aop < 16; ++aop) {
    Peer p{AtomicConfig()};
    p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
    wire::AtomicRequestHeader h = CmpSwap(1, kBase, 0, 0, 0x55, ~uint64_t{0});
    h.atomic_opcode = aop;
    const Bytes seg = Encode(wire::MakeAtomicRequest(1, h));
    const auto& r = p.Feed(seg);
    auto m = p.ep.PeekRegion(kStag, kBase, 8);
    if (aop == kFetchAdd || aop == kCmpSwap) {
      ASSERT_EQ(r.segments().size(), 1u);
      EXPECT_EQ(ExpectAtomicResponse(r.segments()[0], 1).id, 1u);
      EXPECT_EQ(m[0], 0x55);
      continue;
    }
    RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0x06);
    ExpectEcho(t, seg, false);
    ASSERT_EQ(r.violations().size(), 1u);
    EXPECT_EQ(FirstKind(r), ViolationKind::kAtomicUnsupportedOpcode);
    EXPECT_EQ(Bytes(m.begin(), m.end()), Bytes(8, 0)) << int(aop);
  }
}

// --- Remote STag validation (decisions D-C4: RFC 5040 §7.2 by analogy) ---------------------

// R7306-9-01 R7306-5-06: each target error gives the chosen RDMAP Remote
// Protection code, M=1 D=1 R=0 (§8.1 case 2), and nothing is executed.
TEST(AtomicTargetTest, TargetErrorsTerminateWithRemoteProtectionCodes) {
  struct Case {
    const char* what;
    uint32_t stag;
    uint64_t to;
    uint8_t access;
    uint32_t stream;
    bool invalidated;
    ViolationKind kind;
    uint8_t code;
  };
  const Case cases[] = {
      {"unknown STag", 0x9999, kBase, kAllAccess, kStream, false, ViolationKind::kAtomicInvalidStag, 0x00},
      {"invalidated STag", kStag, kBase, kAllAccess, kStream, true, ViolationKind::kAtomicInvalidStag, 0x00},
      {"other stream", kStag, kBase, kAllAccess, kOtherStream, false, ViolationKind::kAtomicStagNotAssociated, 0x03},
      {"no Remote Atomic right", kStag, kBase, kAllAccess & ~kRemoteAtomic, kStream, false,
       ViolationKind::kAtomicAccessRights, 0x02},
      {"last word crosses the end", kStag, kBase + kLen - 4, kAllAccess, kStream, false,
       ViolationKind::kAtomicBaseOrBounds, 0x01},
      {"below the base", kStag, kBase - 8, kAllAccess, kStream, false, ViolationKind::kAtomicBaseOrBounds, 0x01},
      {"TO + 8 wraps 2^64", kStag, ~uint64_t{0} - 3, kAllAccess, kStream, false, ViolationKind::kAtomicToWrap, 0x04},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Peer p{AtomicConfig()};
    p.ep.resources().AddRegion(kStag, kBase, kLen, c.access, c.stream);
    if (c.invalidated) p.ep.resources().Invalidate(kStag);
    wire::AtomicRequestHeader h = FetchAdd(1, c.to, 1, 0);
    h.remote_stag = c.stag;
    const Bytes seg = Encode(wire::MakeAtomicRequest(1, h));
    const auto& r = p.Feed(seg);
    RawTerminate t = ExpectSingleTerminate(r, 0, 1, c.code);
    ExpectEcho(t, seg, false);
    ASSERT_EQ(r.violations().size(), 1u);
    EXPECT_EQ(FirstKind(r), c.kind);
    auto m = p.ep.resources().ObjectBytes(0);
    EXPECT_EQ(Bytes(m.begin(), m.end()), Bytes(kLen, 0));
  }
}

// R7306-4.1-04: the Invalidate STag of an Atomic Request is ignored, even when
// it names a valid invalidatable STag.
TEST_F(AtomicTest, InvalidateStagFieldIsIgnored) {
  wire::RdmapSegment s = wire::MakeAtomicRequest(msn++, FetchAdd(1, kBase, 1, 0));
  s.ddp.invalidate_stag = kStag;
  const auto& r = p.Feed(s);
  ASSERT_EQ(r.segments().size(), 1u);
  ASSERT_NE(p.ep.resources().FindRegion(kStag), nullptr);
  EXPECT_TRUE(p.ep.resources().FindRegion(kStag)->valid);
  EXPECT_EQ(Exchange(FetchAdd(2, kBase, 1, 0), 2).original, 1u);
}

// R7306-5.2.1-S3a R7306-5.2.1-S3b: processed by RDMAP, never Delivered to the
// ULP: no event, no QN0 receive consumed.
TEST_F(AtomicTest, ValidRequestIsNotDeliveredToTheUlp) {
  p.ep.PostReceive(64);
  const auto& r = Send(FetchAdd(1, kBase, 1, 0));
  EXPECT_EQ(r.segments().size(), 1u);
  EXPECT_TRUE(r.events().empty());
  EXPECT_EQ(p.ep.resources().posted_receives(), 1u);
  EXPECT_EQ(p.ep.expected_msn(0), 1u);
  EXPECT_EQ(p.ep.expected_msn(1), 2u);
}

// Fault mis-echo-request-identifier (R7306-5.2.2-02): the echo is off by one.
TEST(AtomicFaultTest, MisEchoRequestIdentifier) {
  EndpointConfig c = AtomicConfig();
  c.faults.Add(Fault::kMisEchoRequestIdentifier);
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  const auto& r = p.Feed(wire::MakeAtomicRequest(1, FetchAdd(0xABCD0000, kBase, 1, 0)));
  ASSERT_EQ(r.segments().size(), 1u);
  EXPECT_EQ(ExpectAtomicResponse(r.segments()[0], 1).id, 0xABCD0001u);
}

// RFC 5040 §4.2 / R7306-4.2-T03: an Atomic Request that is not exactly 52
// octets is a header length error (the core's check) and is not executed.
TEST_F(AtomicTest, RequestLongerThan52OctetsIsNotExecuted) {
  const Bytes extra(4, 0xEE);
  wire::RdmapSegment s = wire::MakeAtomicRequest(msn++, FetchAdd(1, kBase, 1, 0));
  s.ulp_payload = extra;
  const auto& r = p.Feed(s);
  ExpectSingleTerminate(r, 0, 2, 0xFF);
  EXPECT_EQ(Memory(kBase, 8), Bytes(8, 0));
}

// --- QN1 sharing, IRD and ordering (RFC 7306 §5.2, §5.4, §7) ---------------------------

// R7306-5.2-02 R7306-5.2.1-S2 R7306-5.2-03: Read and Atomic Requests share the
// QN1 MSN sequence; a stale MSN is out of range (1/2/0x03).
TEST_F(AtomicTest, ReadAndAtomicRequestsShareTheQn1MsnSpace) {
  wire::ReadRequestHeader rr{
      kStag, kBase + 32, 8, kStag, kBase,
  };
  EXPECT_EQ(p.Feed(wire::MakeReadRequest(1, rr)).segments().size(), 1u);
  EXPECT_EQ(p.Feed(wire::MakeAtomicRequest(2, FetchAdd(1, kBase, 1, 0))).segments().size(), 1u);
  EXPECT_EQ(p.Feed(wire::MakeReadRequest(3, rr)).segments().size(), 1u);
  EXPECT_EQ(p.ep.expected_msn(1), 4u);
  const auto& r = p.Feed(wire::MakeAtomicRequest(3, FetchAdd(2, kBase, 1, 0)));
  ExpectSingleTerminate(r, 1, 2, 0x03);
  EXPECT_EQ(Memory(kBase, 8), LeOctets(1));
}

// R7306-5.2.2-S4 R5040-6.1-10 (decisions D-C7, shared accounting): Atomics take the
// IRD slots Read Requests use; one more than IRD outstanding is 1/2/0x02.
TEST(AtomicIrdTest, AtomicsAndReadsShareIrd) {
  EndpointConfig c = AtomicConfig();
  c.ird = 2;
  c.auto_respond = false;
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  EXPECT_TRUE(p.Feed(wire::MakeReadRequest(1, {kStag, kBase, 8, kStag, kBase + 8})).violations().empty());
  EXPECT_TRUE(p.Feed(wire::MakeAtomicRequest(2, FetchAdd(1, kBase, 1, 0))).violations().empty());
  EXPECT_EQ(p.ep.pending_responses(), 2u);
  const auto& r = p.Feed(wire::MakeAtomicRequest(3, FetchAdd(2, kBase, 1, 0)));
  ExpectSingleTerminate(r, 1, 2, 0x02);
  ASSERT_EQ(r.violations().size(), 1u);
  EXPECT_EQ(FirstKind(r), ViolationKind::kIrdExceeded);
}

// R7306-7-T11 R7306-7-T15 R7306-5.2.2-S8 R7306-5.4-R8b: responses leave in
// request order whatever their kind: Atomic, Read, Atomic.
TEST(AtomicOrderTest, ResponsesFollowRequestOrderAcrossReadsAndAtomics) {
  EndpointConfig c = AtomicConfig();
  c.auto_respond = false;
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  p.Feed(wire::MakeAtomicRequest(1, FetchAdd(0xA1, kBase, 1, 0)));
  p.Feed(wire::MakeReadRequest(2, {0x77, 0, 8, kStag, kBase + 8}));
  p.Feed(wire::MakeAtomicRequest(3, FetchAdd(0xA2, kBase, 1, 0)));
  p.r.Clear();
  EXPECT_EQ(p.ep.EmitPendingResponses(100, p.r), 3u);
  ASSERT_EQ(p.r.segments().size(), 3u);
  EXPECT_EQ(ExpectAtomicResponse(p.r.segments()[0], 1).id, 0xA1u);
  EXPECT_EQ(p.r.segments()[1][0] & 0x80, 0x80);  // tagged: the Read Response
  EXPECT_EQ(p.r.segments()[1][1] & 0x0F, 0x2);
  const AtomicReply second = ExpectAtomicResponse(p.r.segments()[2], 2);
  EXPECT_EQ(second.id, 0xA2u);
  EXPECT_EQ(second.original, 1u);
}

// R7306-5.2.1-S7 R7306-5.4-R8a R7306-7-T12: pipelined FetchAdd(+1) return
// consecutive originals (no lost update: each read-modify-write completes
// before the next request is looked at, R7306-5-01 R7306-5.3-01 R7306-5.4-R2); a CmpSwap chain where each expects the
// previous swap value succeeds all the way.
TEST_F(AtomicTest, PipelinedRequestsExecuteInOrder) {
  uint32_t qn3 = 1;
  for (uint64_t i = 0; i < 5; ++i, ++qn3) {
    EXPECT_EQ(Exchange(FetchAdd(qn3, kBase, 1, 0), qn3).original, i);
  }
  uint64_t expected = 5;
  for (uint64_t next = 100; next < 105; ++next, ++qn3) {
    const AtomicReply a = Exchange(CmpSwap(qn3, kBase, expected, ~uint64_t{0}, next, ~uint64_t{0}), qn3);
    EXPECT_EQ(a.id, qn3);
    EXPECT_EQ(a.original, expected);
    expected = next;
  }
  EXPECT_EQ(Memory(kBase, 8), LeOctets(104));
}

// R7306-7-T14 R7306-5.4-R3 R7306-5.4-R5: a Write Placed before the Atomic
// Request is what the atomic reads.
TEST_F(AtomicTest, WriteBeforeAtomicIsSeenByTheAtomic) {
  const Bytes data = LeOctets(0x4242);
  EXPECT_TRUE(p.Feed(wire::MakeRdmaWrite(kStag, kBase + 40, data)).violations().empty());
  EXPECT_EQ(Exchange(FetchAdd(1, kBase + 40, 2, 0)).original, 0x4242u);
  EXPECT_EQ(Memory(kBase + 40, 8), LeOctets(0x4244));
}

// R7306-5.4-R4 R7306-7-T10 R7306-7-T09 (MAY, decisions D-S11): a Write that follows
// an Atomic Request may be Placed before the Atomic Response is generated. The
// model executes the atomic when it is Delivered, so the response still
// carries the value from before the Write, while the Write is Placed at once.
TEST(AtomicOrderTest, LaterWriteIsPlacedWhileTheAtomicResponseWaits) {
  EndpointConfig c = AtomicConfig();
  c.auto_respond = false;
  Peer p{c};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  p.Feed(wire::MakeAtomicRequest(1, FetchAdd(1, kBase, 1, 0)));
  const Bytes later = LeOctets(0x77);
  EXPECT_TRUE(p.Feed(wire::MakeRdmaWrite(kStag, kBase, later)).violations().empty());
  auto m = p.ep.PeekRegion(kStag, kBase, 8);
  EXPECT_EQ(Bytes(m.begin(), m.end()), later);
  p.r.Clear();
  ASSERT_EQ(p.ep.EmitPendingResponses(10, p.r), 1u);
  EXPECT_EQ(ExpectAtomicResponse(p.r.segments()[0], 1).original, 0u);
}

// R5040-5.4-10 R5041-7.1-03: after the Terminate nothing is executed or answered.
TEST_F(AtomicTest, NothingExecutedOrAnsweredAfterTerminate) {
  ExpectSingleTerminate(Send(FetchAdd(1, kBase + 1, 1, 0)), 0, 2, 0x07);
  const auto& r = Send(FetchAdd(2, kBase, 1, 0));
  EXPECT_TRUE(r.segments().empty());
  EXPECT_EQ(Memory(), Bytes(kLen, 0));
}

// R5040-7.2-02 R7306-1.1-05 (decisions D-D1): under rfc5040 opcode 0xA is undefined:
// Unexpected OpCode, and the handler never runs.
TEST(AtomicProfileTest, Rfc5040ProfileAnswersUnexpectedOpcode) {
  Peer p{Config(wire::Profile::kRfc5040)};
  p.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  const Bytes seg = Encode(wire::MakeAtomicRequest(1, FetchAdd(1, kBase, 1, 0)));
  const auto& r = p.Feed(seg);
  RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0x06);
  ExpectEcho(t, seg, false);
  EXPECT_EQ(FirstKind(r), ViolationKind::kUnexpectedOpcode);
  auto m = p.ep.PeekRegion(kStag, kBase, 8);
  EXPECT_EQ(Bytes(m.begin(), m.end()), Bytes(8, 0));
}

// --- the Requester (RFC 7306 §5.2.2 items 5-7) -----------------------------------------

struct AtomicRequesterTest : ::testing::Test {
  Peer a{AtomicConfig()};  // requester
  Peer b{AtomicConfig()};  // responder
  void SetUp() override { b.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream); }
  Bytes Post(const wire::AtomicRequestHeader& h) {
    a.r.Clear();
    EXPECT_EQ(a.ep.PostAtomicRequest(h, a.r), PostStatus::kOk);
    EXPECT_EQ(a.r.segments().size(), 1u);
    return a.r.segments()[0];
  }
  Bytes Answer(const Bytes& request) {
    const auto& r = b.Feed(request);
    EXPECT_EQ(r.segments().size(), 1u);
    return r.segments().empty() ? Bytes{} : r.segments()[0];
  }
};

// R7306-5.2.2-S6 R7306-5.4-R7 R7306-5-08 R7306-5.2.1-S6 R7306-5.2.2-S1: each
// response (travelling back from the responder) completes
// the request it answers, in order, with the Original Remote Data Value.
TEST_F(AtomicRequesterTest, ResponsesCompleteOutstandingAtomicsInOrder) {
  const Bytes q1 = Post(FetchAdd(0x11, kBase, 5, 0));
  const Bytes q2 = Post(CmpSwap(0x22, kBase, 5, ~uint64_t{0}, 9, ~uint64_t{0}));
  EXPECT_EQ(wire::LoadBe32(&q2[10]), 2u);  // QN1 MSN 2
  EXPECT_EQ(a.ep.outstanding_responses(), 2u);
  const Bytes r1 = Answer(q1), r2 = Answer(q2);
  const auto& e1 = a.Feed(r1);
  ASSERT_EQ(e1.events().size(), 1u);
  EXPECT_EQ(e1.events()[0].kind, UlpEventKind::kAtomicCompleted);
  EXPECT_EQ(e1.events()[0].request_id, 0x11u);
  EXPECT_EQ(e1.events()[0].value, 0u);
  EXPECT_EQ(e1.events()[0].msn, 1u);
  const auto& e2 = a.Feed(r2);
  ASSERT_EQ(e2.events().size(), 1u);
  EXPECT_EQ(e2.events()[0].request_id, 0x22u);
  EXPECT_EQ(e2.events()[0].value, 5u);
  EXPECT_EQ(e2.events()[0].msn, 2u);
  EXPECT_EQ(a.ep.outstanding_responses(), 0u);
  EXPECT_FALSE(a.ep.first_violation().has_value());
}

// R7306-5.2.2-S7 R7306-5-08: an Atomic Response with nothing outstanding.
TEST_F(AtomicRequesterTest, UnexpectedResponseTerminates) {
  const Bytes seg = Encode(wire::MakeAtomicResponse(1, {1, 2}));
  const auto& r = a.Feed(seg);
  RawTerminate t = ExpectSingleTerminate(r, 1, 2, 0x02);
  ExpectEcho(t, seg, false);
  EXPECT_EQ(FirstKind(r), ViolationKind::kUnexpectedResponse);
  EXPECT_TRUE(std::none_of(r.events().begin(), r.events().end(),
                           [](const UlpEvent& e) { return e.kind == UlpEventKind::kAtomicCompleted; }));
}

// R7306-5-08 (decisions D-C8): responses are located by QN3 MSN; a skipped MSN is out of range.
TEST_F(AtomicRequesterTest, ResponseWithWrongQn3MsnTerminates) {
  Post(FetchAdd(1, kBase, 1, 0));
  Post(FetchAdd(2, kBase, 1, 0));
  ExpectSingleTerminate(a.Feed(wire::MakeAtomicResponse(2, {2, 0})), 1, 2, 0x03);
}

// R7306-5.2.2-02 R7306-5.2.2-S7 (decisions D-C8): a wrong Original Request
// Identifier is an error (0/2/0xFF) by default; the check can be switched off.
TEST_F(AtomicRequesterTest, WrongRequestIdentifierEcho) {
  Post(FetchAdd(0x100, kBase, 1, 0));
  const Bytes seg = Encode(wire::MakeAtomicResponse(1, {0x101, 0}));
  const auto& r = a.Feed(seg);
  RawTerminate t = ExpectSingleTerminate(r, 0, 2, 0xFF);
  ExpectEcho(t, seg, false);
  EXPECT_EQ(FirstKind(r), ViolationKind::kAtomicResponseIdMismatch);

  EndpointConfig lax = AtomicConfig();
  lax.decisions.check_atomic_response_id = false;
  Peer c{lax};
  c.r.Clear();
  ASSERT_EQ(c.ep.PostAtomicRequest(FetchAdd(0x100, kBase, 1, 0), c.r), PostStatus::kOk);
  const auto& ok = c.Feed(seg);
  ASSERT_EQ(ok.events().size(), 1u);
  EXPECT_EQ(ok.events()[0].kind, UlpEventKind::kAtomicCompleted);
  EXPECT_EQ(ok.events()[0].request_id, 0x101u);
}

// R7306-5.2.2-S7 R7306-8.2-02, faults ignore-atomic-response-id and
// accept-atomic-response-on-any-queue: an Atomic Response with another
// identifier, or on QN 1, completes the atomic instead of a Terminate.
TEST(AtomicRequesterFaults, WrongIdentifierOrQueueCompletesTheAtomic) {
  for (Fault f : {Fault::kIgnoreAtomicResponseId, Fault::kAcceptAtomicResponseOnAnyQueue}) {
    for (bool faulty : {false, true}) {
      EndpointConfig c = AtomicConfig();
      if (faulty) c.faults.Add(f);
      Peer a{c};
      ASSERT_EQ(a.ep.PostAtomicRequest(FetchAdd(0x100, kBase, 1, 0), a.r), PostStatus::kOk);
      const bool wrong_id = f == Fault::kIgnoreAtomicResponseId;
      wire::RdmapSegment seg = wire::MakeAtomicResponse(1, {wrong_id ? 0x101u : 0x100u, 0});
      if (!wrong_id) seg.ddp.queue_number = 1;
      const auto& r = a.Feed(seg);
      EXPECT_EQ(r.segments().empty(), faulty) << InfoFor(f).name;
      const bool completed = r.events().size() == 1 && r.events()[0].kind == UlpEventKind::kAtomicCompleted;
      EXPECT_EQ(completed, faulty) << InfoFor(f).name;
    }
  }
}

// Fault mis-echo-request-identifier seen from the other side: the requester
// catches the faulty responder.
TEST_F(AtomicRequesterTest, RequesterCatchesMisEchoingResponder) {
  EndpointConfig c = AtomicConfig();
  c.faults.Add(Fault::kMisEchoRequestIdentifier);
  Peer faulty{c};
  faulty.ep.resources().AddRegion(kStag, kBase, kLen, kAllAccess, kStream);
  const Bytes q = Post(FetchAdd(5, kBase, 1, 0));
  const Reactions& fr = faulty.Feed(q);
  ASSERT_EQ(fr.segments().size(), 1u);
  const Bytes response = fr.segments()[0];
  ExpectSingleTerminate(a.Feed(response), 0, 2, 0xFF);
  // The correct responder's answer is accepted.
  Peer a2{AtomicConfig()};
  a2.r.Clear();
  ASSERT_EQ(a2.ep.PostAtomicRequest(FetchAdd(5, kBase, 1, 0), a2.r), PostStatus::kOk);
  const auto& done = a2.Feed(Answer(q));
  ASSERT_EQ(done.events().size(), 1u);
  EXPECT_EQ(done.events()[0].kind, UlpEventKind::kAtomicCompleted);
}

}  // namespace
}  // namespace rdmapct::model
