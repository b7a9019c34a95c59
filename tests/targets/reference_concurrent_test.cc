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
  ReferenceTarget target;
  Initiator a(target);
  ASSERT_TRUE(a.Start());
  EXPECT_TRUE(a.advertisement().flags & wire::kFlagConcurrentConnections);
  EXPECT_EQ(a.advertisement().minor_version, wire::kConcurrentMinorVersion);

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
  for (uint32_t s : Stags(b.advertisement())) EXPECT_EQ(sa.count(s), 0u) << s;
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

}  // namespace
}  // namespace rdmapct::targets
