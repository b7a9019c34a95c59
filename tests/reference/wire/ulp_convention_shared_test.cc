// Convention 1.3 (docs/target-convention.md §12): the shared region
// attribute of the test-ULP codec, and the roles that select it.
#include <gtest/gtest.h>

#include <string>

#include "reference/wire/ulp_convention.h"

namespace rdmapct::wire {
namespace {

// Four regions of the §3.6 example: rw, ro, wo and atomic (0x1d04).
Advertisement ExampleAdvertisement() {
  Advertisement adv;
  adv.flags = kFlagRfc7306;
  adv.ird = 8;
  adv.receive_buffer_count = 8;
  adv.receive_buffer_size = 4096;
  adv.regions = {
      {0x00001a01, 0x00007f3a12340000, 0x6000, 0x03, 0x00, 1, 0x0000},  // rw
      {0x00001b02, 0x00007f3a12342000, 0x1000, 0x01, 0x00, 1, 0x2000},  // ro
      {0x00001c03, 0x0000000000000000, 0x1000, 0x02, 0x00, 1, 0x3000},  // wo
      {0x00001d04, 0x00007f3a12344000, 0x0040, 0x07, 0x00, 3, 0x0000},  // atomic
  };
  return adv;
}

Bytes Encode(const Advertisement& adv) {
  Bytes out;
  EXPECT_TRUE(EncodeAdvertisement(adv, out).ok());
  return out;
}

void ExpectError(const DecodeError& e, DecodeErrorKind kind, const std::string& field, std::size_t offset) {
  EXPECT_EQ(e.kind, kind) << e.Describe();
  EXPECT_EQ(std::string(e.field), field) << e.Describe();
  EXPECT_EQ(e.offset, offset) << e.Describe();
}

// Convention §12 (1.3): the shared attribute (0x08) of a region entry. Only
// in a Minor Version >= 3 Advertisement that also sets the concurrency flag;
// a shared STag is usable and never invalidatable (REQ R5040-8.1.1-07).
Advertisement SharedAdvertisement() {
  Advertisement adv = ExampleAdvertisement();
  adv.flags |= kFlagConcurrentConnections;
  adv.minor_version = kSharedRegionsMinorVersion;
  adv.regions[3].attributes = kAttrShared;  // the atomic region, 0x1d04
  return adv;
}

TEST(UlpConventionAdvertisement, SharedAttributeRoundTrips) {
  const Advertisement adv = SharedAdvertisement();
  Result<Advertisement> r = DecodeAdvertisement(Encode(adv));
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, adv);
  EXPECT_EQ(r->regions[3].attributes, kAttrShared);
  EXPECT_EQ(SelectRegion(*r, RegionRole::kShared)->stag, 0x1d04u);
  EXPECT_EQ(SelectRegion(*r, RegionRole::kSharedAtomic)->stag, 0x1d04u);
  // A shared region is still plain: it keeps filling `atomic`.
  EXPECT_EQ(SelectRegion(*r, RegionRole::kAtomic)->stag, 0x1d04u);
}

TEST(UlpConventionAdvertisement, SharedAttributeNeedsMinorThreeAndConcurrency) {
  const std::size_t at = 24 + 3 * 24 + 17;  // region 4's Attributes
  Advertisement adv = SharedAdvertisement();
  adv.minor_version = kConcurrentMinorVersion;  // 1.2 does not define the bit
  Result<Advertisement> r = DecodeAdvertisement(Encode(adv));
  ASSERT_FALSE(r.ok());
  ExpectError(r.error(), DecodeErrorKind::kReservedNonZero, "Attributes", at);

  adv = SharedAdvertisement();
  adv.flags &= ~kFlagConcurrentConnections;  // nothing to share with
  r = DecodeAdvertisement(Encode(adv));
  ASSERT_FALSE(r.ok());
  ExpectError(r.error(), DecodeErrorKind::kReservedNonZero, "Attributes", at);
}

TEST(UlpConventionAdvertisement, SharedAttributeExcludesForeignDeregisteredInvalidatable) {
  const std::size_t at = 24 + 3 * 24 + 17;
  for (uint8_t other : {kAttrForeign, kAttrDeregistered, kAttrInvalidatable}) {
    Advertisement adv = SharedAdvertisement();
    adv.regions[3].attributes = kAttrShared | other;
    Result<Advertisement> r = DecodeAdvertisement(Encode(adv));
    ASSERT_FALSE(r.ok()) << int{other};
    ExpectError(r.error(), DecodeErrorKind::kInvalidValue, "Attributes", at);
  }
}

TEST(UlpConventionRoles, SharedRolesNeedTheAttribute) {
  const Advertisement adv = ExampleAdvertisement();
  EXPECT_EQ(SelectRegion(adv, RegionRole::kShared), nullptr);
  EXPECT_EQ(SelectRegion(adv, RegionRole::kSharedAtomic), nullptr);
  Advertisement shared = SharedAdvertisement();
  shared.regions[3].access = kAccessRemoteRead | kAccessRemoteWrite;  // no atomics
  EXPECT_EQ(SelectRegion(shared, RegionRole::kShared)->stag, 0x1d04u);
  EXPECT_EQ(SelectRegion(shared, RegionRole::kSharedAtomic), nullptr);
  EXPECT_EQ(RegionRoleName(RegionRole::kSharedAtomic), "shared-atomic");
}

}  // namespace
}  // namespace rdmapct::wire
