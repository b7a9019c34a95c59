// The reference target with connections open at once (convention 1.2 §11):
// a protection domain per connection, so no STag is valid on two open
// connections; slots are reused once a connection is gone.
#include <gtest/gtest.h>

#include <set>

#include "targets/reference_target.h"
#include "tests/targets/target_test_util.h"

namespace rdmapct::targets {
namespace {

using testing::Bytes;
using testing::Initiator;

std::set<uint32_t> Stags(const wire::Advertisement& adv) {
  std::set<uint32_t> s;
  for (const wire::AdvertisedRegion& r : adv.regions) s.insert(r.stag);
  return s;
}

TEST(ReferenceConcurrent, AdvertisesTheFlagWithMinorVersionTwo) {
  ReferenceTarget target(ReferenceTargetConfig{.shared_regions = false});
  Initiator a(target);
  ASSERT_TRUE(a.Start());
  EXPECT_TRUE(a.advertisement().flags & wire::kFlagConcurrentConnections);
  EXPECT_EQ(a.advertisement().minor_version, wire::kConcurrentMinorVersion);
  EXPECT_EQ(wire::SelectRegion(a.advertisement(), wire::RegionRole::kShared), nullptr);

  ReferenceTarget plain(ReferenceTargetConfig{.concurrent_connections = false});
  Initiator p(plain);
  ASSERT_TRUE(p.Start());
  EXPECT_FALSE(p.advertisement().flags & wire::kFlagConcurrentConnections);
  // Still a 1.1 target (commands), just without the 1.2 flag.
  EXPECT_EQ(p.advertisement().minor_version, wire::kUlpConventionCommandsMinorVersion);
}

// REQ R5040-8.1.1-02: B's STags and A's are disjoint while both are open;
// the first connection keeps the layout's STags.
TEST(ReferenceConcurrent, OpenConnectionsGetDisjointStags) {
  ReferenceTarget target;
  Initiator a(target);
  Initiator b(target);
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  EXPECT_EQ(a.reference().slot(), 0u);
  EXPECT_EQ(b.reference().slot(), 1u);
  const std::set<uint32_t> sa = Stags(a.advertisement());
  const uint32_t shared = a.Region(wire::RegionRole::kShared).stag;  // the one exception (§12)
  for (uint32_t s : Stags(b.advertisement())) EXPECT_EQ(sa.count(s), s == shared ? 1u : 0u) << s;
  for (const wire::AdvertisedRegion& r : target.layout().regions) EXPECT_EQ(sa.count(r.stag), 1u) << r.stag;
  // B's endpoint knows none of A's usable STags.
  const wire::AdvertisedRegion& rw = a.Region(wire::RegionRole::kReadWrite);
  EXPECT_TRUE(b.reference().PeekMemory(rw.stag, rw.base_tagged_offset, 1).empty());
}

TEST(ReferenceConcurrent, FaultRegistersTheOtherConnectionsStags) {
  ReferenceTarget target(ReferenceTargetConfig{.faults = model::FaultSet{model::Fault::kStagAcrossConnections}});
  Initiator a(target);
  Initiator b(target);
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  const wire::AdvertisedRegion& rw = a.Region(wire::RegionRole::kReadWrite);
  EXPECT_FALSE(b.reference().PeekMemory(rw.stag, rw.base_tagged_offset, 1).empty());
}

TEST(ReferenceConcurrent, SlotIsReusedAfterTheConnectionIsGone) {
  ReferenceTarget target;
  {
    Initiator a(target);
    ASSERT_TRUE(a.Start());
    Initiator b(target);
    ASSERT_TRUE(b.Start());
    EXPECT_EQ(b.reference().slot(), 1u);
  }
  Initiator c(target);
  ASSERT_TRUE(c.Start());
  EXPECT_EQ(c.reference().slot(), 0u);
}

TEST(ReferenceConcurrent, TearDownFaultEndsTheOtherConnection) {
  ReferenceTarget target(ReferenceTargetConfig{.faults = model::FaultSet{model::Fault::kTerminateTearsDownOthers}});
  // One peer: both connections carry the same Case Hash in their Suite Request.
  const wire::SuiteRequest one_case{1, 0, 0, wire::CaseHash("rfc5040/8.1.1/a-and-b")};
  Initiator a(target, {.suite_request = one_case});
  Initiator b(target, {.suite_request = one_case});
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  EXPECT_FALSE(b.reference().wants_close());
  a.Send(wire::MakeRdmaWrite(0, 0, Bytes(8, 0xEE)));  // STag 0: A terminates
  EXPECT_EQ(a.reference().close_reason(), CloseReason::kTerminateSent);
  EXPECT_TRUE(b.reference().wants_close());

  // Without a Suite Request (Case Hash 0) a connection names no peer: the
  // fault spares it, so parallel cases that write their own Request do not
  // end each other.
  ReferenceTarget same_fault(ReferenceTargetConfig{.faults = model::FaultSet{model::Fault::kTerminateTearsDownOthers}});
  Initiator e(same_fault);
  Initiator f(same_fault);
  ASSERT_TRUE(e.Start());
  ASSERT_TRUE(f.Start());
  e.Send(wire::MakeRdmaWrite(0, 0, Bytes(8, 0xEE)));
  EXPECT_EQ(e.reference().close_reason(), CloseReason::kTerminateSent);
  EXPECT_FALSE(f.reference().wants_close());

  // Without the fault B stays in Full Operation.
  ReferenceTarget good;
  Initiator c(good);
  Initiator d(good);
  ASSERT_TRUE(c.Start());
  ASSERT_TRUE(d.Start());
  c.Send(wire::MakeRdmaWrite(0, 0, Bytes(8, 0xEE)));
  EXPECT_EQ(c.reference().close_reason(), CloseReason::kTerminateSent);
  EXPECT_FALSE(d.reference().wants_close());
}

// Convention 1.3 §12: the shared region, same STag on A and B, one memory.
// REQ R7306-5.3-01 R5040-8.1.1-07
const wire::SuiteRequest kOneCase{1, 0, 0, wire::CaseHash("rfc7306/5.3/a-and-b")};

wire::AtomicRequestHeader FetchAdd(const wire::AdvertisedRegion& r, uint64_t add, uint32_t id) {
  wire::AtomicRequestHeader h;
  h.atomic_opcode = static_cast<uint8_t>(wire::AtomicOpcode::kFetchAdd);
  h.request_identifier = id;
  h.remote_stag = r.stag;
  h.remote_tagged_offset = r.base_tagged_offset + 8;
  h.add_or_swap_data = add;
  h.add_or_swap_mask = 0;
  return h;
}

// The Original Remote Data Value of the last Atomic Response `i` received.
uint64_t LastOriginal(const Initiator& i) {
  for (auto v = i.Decoded(wire::Profile::kRfc7306); !v.empty(); v.pop_back()) {
    if (const auto* r = std::get_if<wire::AtomicResponseHeader>(&v.back().header)) return r->original_remote_data_value;
  }
  ADD_FAILURE() << "no Atomic Response";
  return 0;
}

TEST(ReferenceConcurrent, SharedRegionIsOneStagAndOneMemory) {
  ReferenceTarget target(ReferenceTargetConfig{.profile = wire::Profile::kRfc7306});
  Initiator a(target, {.suite_request = kOneCase});
  Initiator b(target, {.suite_request = kOneCase});
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  EXPECT_EQ(a.advertisement().minor_version, wire::kSharedRegionsMinorVersion);
  const wire::AdvertisedRegion& ra = a.Region(wire::RegionRole::kSharedAtomic);
  const wire::AdvertisedRegion& rb = b.Region(wire::RegionRole::kSharedAtomic);
  EXPECT_EQ(ra, rb);
  a.Send(wire::MakeRdmaWrite(ra.stag, ra.base_tagged_offset + 16, Bytes(8, 0xA5)));
  const auto seen = b.reference().PeekMemory(rb.stag, rb.base_tagged_offset + 16, 8);
  EXPECT_EQ(Bytes(seen.begin(), seen.end()), Bytes(8, 0xA5));
  // FetchAdds from A and B on one word: each sees the other's sum.
  b.Send(wire::MakeAtomicRequest(1, FetchAdd(rb, 1, 1)));
  const uint64_t first = LastOriginal(b);
  a.Send(wire::MakeAtomicRequest(1, FetchAdd(ra, 1, 2)));
  EXPECT_EQ(LastOriginal(a), first + 1);
}

TEST(ReferenceConcurrent, SharedMemoryOnlyWithinOneCase) {
  ReferenceTarget target(ReferenceTargetConfig{.profile = wire::Profile::kRfc7306});
  Initiator a(target, {.suite_request = kOneCase});
  Initiator other(target, {.suite_request = wire::SuiteRequest{1, 0, 0, wire::CaseHash("another case")}});
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(other.Start());
  const wire::AdvertisedRegion& r = a.Region(wire::RegionRole::kShared);
  a.Send(wire::MakeRdmaWrite(r.stag, r.base_tagged_offset, Bytes(8, 0xA5)));
  const auto seen = other.reference().PeekMemory(r.stag, r.base_tagged_offset, 8);
  EXPECT_EQ(Bytes(seen.begin(), seen.end()), wire::RegionPattern(r, r.base_tagged_offset, 8));
}

TEST(ReferenceConcurrent, NonAtomicFetchAddFaultLosesTheOtherConnectionsUpdate) {
  ReferenceTarget target(ReferenceTargetConfig{.profile = wire::Profile::kRfc7306,
                                               .faults = model::FaultSet{model::Fault::kNonAtomicFetchAdd}});
  Initiator a(target, {.suite_request = kOneCase});
  Initiator b(target, {.suite_request = kOneCase});
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  const wire::AdvertisedRegion& r = a.Region(wire::RegionRole::kSharedAtomic);
  a.Send(wire::MakeAtomicRequest(1, FetchAdd(r, 1, 1)));
  b.Send(wire::MakeAtomicRequest(1, FetchAdd(r, 1, 2)));
  EXPECT_EQ(LastOriginal(a), LastOriginal(b));  // both read the word before either sum
  // One connection alone still sees its own sums.
  a.Send(wire::MakeAtomicRequest(2, FetchAdd(r, 1, 3)));
  a.Send(wire::MakeAtomicRequest(3, FetchAdd(r, 1, 4)));
  EXPECT_EQ(LastOriginal(a), LastOriginal(b) + 2);
}

TEST(ReferenceConcurrent, InvalidateSharedStagFaultReachesTheOtherConnection) {
  for (bool fault : {false, true}) {
    ReferenceTargetConfig c;
    if (fault) c.faults = model::FaultSet{model::Fault::kInvalidateSharedStag};
    ReferenceTarget target(c);
    Initiator a(target, {.suite_request = kOneCase});
    Initiator b(target, {.suite_request = kOneCase});
    ASSERT_TRUE(a.Start());
    ASSERT_TRUE(b.Start());
    const wire::AdvertisedRegion& r = a.Region(wire::RegionRole::kShared);
    b.Send(wire::MakeSend(wire::Opcode::kSendWithInvalidate, 1, Bytes(4, 0x11), r.stag));
    EXPECT_EQ(b.reference().close_reason(), fault ? CloseReason::kNone : CloseReason::kTerminateSent) << fault;
    a.Send(wire::MakeRdmaWrite(r.stag, r.base_tagged_offset, Bytes(8, 0xA5)));
    EXPECT_EQ(a.reference().close_reason(), fault ? CloseReason::kTerminateSent : CloseReason::kNone) << fault;
  }
}

}  // namespace
}  // namespace rdmapct::targets
