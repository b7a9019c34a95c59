// The rule checks in isolation: boundaries and the kind each one reports.
#include <gtest/gtest.h>

#include "reference/model/checks.h"
#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

ViolationKind KindOf(const CheckResult& r) { return r ? r->kind : ViolationKind::kCount; }

// R5041-4.3-09: MSN arithmetic is modulo 2^32 (0xFFFFFFFF is followed by 0).
TEST(CheckMsn, WindowAndWrap) {
  EXPECT_FALSE(CheckMsn(5, 5, 1, 0, {}));
  EXPECT_EQ(KindOf(CheckMsn(5, 5, 0, 0, {})), ViolationKind::kMsnNoBufferAvailable);
  EXPECT_EQ(KindOf(CheckMsn(6, 5, 1, 0, {})), ViolationKind::kMsnRangeNotValid);
  EXPECT_EQ(KindOf(CheckMsn(4, 5, 3, 0, {})), ViolationKind::kMsnRangeNotValid);
  EXPECT_FALSE(CheckMsn(0, 0xFFFFFFFF, 2, 0, {}));
  EXPECT_FALSE(CheckMsn(1, 0xFFFFFFFF, 3, 0, {}));
  EXPECT_EQ(KindOf(CheckMsn(1, 0xFFFFFFFF, 2, 0, {})), ViolationKind::kMsnRangeNotValid);
}

// R5041-7.1-U3 R5041-7.1-U4.
TEST(CheckMessageOffset, Boundaries) {
  EXPECT_FALSE(CheckMessageOffset(0, 16, 16, {}));
  EXPECT_FALSE(CheckMessageOffset(16, 0, 16, {}));
  EXPECT_EQ(KindOf(CheckMessageOffset(8, 9, 16, {})), ViolationKind::kMessageTooLong);
  EXPECT_EQ(KindOf(CheckMessageOffset(17, 0, 16, {})), ViolationKind::kInvalidMo);
  EXPECT_EQ(KindOf(CheckMessageOffset(0xFFFFFFFF, 1, 16, {})), ViolationKind::kInvalidMo);
}

// R5041-7.1-G3 R5041-7.1-G4 R5041-7.1-G5.
TEST(CheckTagged, BoundsAndWrap) {
  MemoryRegion r;
  r.stag = 1;
  r.base_tagged_offset = 100;
  r.length = 50;
  const auto& k = kDdpPlacementErrors;
  EXPECT_FALSE(CheckTaggedBounds(r, 100, 50, k, {}));
  EXPECT_FALSE(CheckTaggedBounds(r, 149, 1, k, {}));
  EXPECT_FALSE(CheckTaggedBounds(r, 150, 0, k, {}));
  EXPECT_TRUE(CheckTaggedBounds(r, 99, 1, k, {}));
  EXPECT_TRUE(CheckTaggedBounds(r, 149, 2, k, {}));
  EXPECT_TRUE(CheckTaggedBounds(r, ~uint64_t{0}, 2, k, {}));  // no overflow in the check
  EXPECT_FALSE(CheckToWrap(~uint64_t{0}, 0, k, {}));
  EXPECT_FALSE(CheckToWrap(~uint64_t{0} - 7, 7, k, {}));
  EXPECT_EQ(KindOf(CheckToWrap(~uint64_t{0} - 7, 8, k, {})), ViolationKind::kTaggedToWrap);
}

// The access families report their own kinds (Read source vs DDP placement).
TEST(CheckTagged, FamiliesAndOrder) {
  Resources res;
  res.AddRegion(1, 0, 64, kRemoteRead, kStream);
  res.AddRegion(2, 0, 64, kAllAccess, kOtherStream);
  EXPECT_EQ(KindOf(CheckTaggedAccess(res, kStream, 9, 0, 1, 0, kReadSourceErrors, true, {})),
            ViolationKind::kReadSourceInvalidStag);
  EXPECT_EQ(KindOf(CheckTaggedAccess(res, kStream, 2, 0, 1, 0, kReadSourceErrors, true, {})),
            ViolationKind::kReadSourceNotAssociated);
  EXPECT_EQ(KindOf(CheckTaggedAccess(res, kStream, 1, 0, 1, kRemoteWrite, kDdpPlacementErrors, true, {})),
            ViolationKind::kTaggedAccessRights);
  EXPECT_EQ(KindOf(CheckTaggedAccess(res, kStream, 1, 0, 1, kRemoteAtomic, kAtomicTargetErrors, true, {})),
            ViolationKind::kAtomicAccessRights);
  EXPECT_EQ(KindOf(CheckTaggedAccess(res, kStream, 1, ~uint64_t{0}, 2, 0, kCommitTargetErrors, true, {})),
            ViolationKind::kCommitToWrap);
  EXPECT_EQ(KindOf(CheckTaggedAccess(res, kStream, 1, ~uint64_t{0}, 2, 0, kCommitTargetErrors, false, {})),
            ViolationKind::kCommitBaseOrBounds);
}

// R7306-5.2.1-08: alignment of the ULP buffer address, not of the TO itself.
TEST(CheckAtomicAlignment, UsesTheBufferAddress) {
  MemoryRegion r;
  r.base_tagged_offset = 0x1003;  // odd-looking TOs...
  r.object_offset = 5;            // ...land on 8-aligned addresses
  r.length = 64;
  EXPECT_FALSE(CheckAtomicAlignment(r, 0x1006, ViolationKind::kAtomicMisaligned, "x"));
  EXPECT_EQ(KindOf(CheckAtomicAlignment(r, 0x1003, ViolationKind::kAtomicMisaligned, "x")),
            ViolationKind::kAtomicMisaligned);
}

// RCOMMIT-3.1.1.1-02/03 (decisions D-D7): P, G or both; no bit or unknown bits rejected.
TEST(CheckFlushFlags, Values) {
  EXPECT_FALSE(CheckFlushFlags(1, true, {}));
  EXPECT_FALSE(CheckFlushFlags(2, true, {}));
  EXPECT_FALSE(CheckFlushFlags(3, true, {}));
  EXPECT_TRUE(CheckFlushFlags(0, true, {}));
  EXPECT_TRUE(CheckFlushFlags(5, true, {}));
  EXPECT_FALSE(CheckFlushFlags(5, false, {}));
  EXPECT_FALSE(CheckAtomicWriteLength(8, {}));
  EXPECT_EQ(KindOf(CheckAtomicWriteLength(16, {})), ViolationKind::kAtomicWriteLength);
}

// R5040-4.2-T02 R7306-6.3-07.
TEST(CheckRdmapHeaderLength, FixedHeaders) {
  EXPECT_FALSE(CheckRdmapHeaderLength(wire::InfoFor(Opcode::kRdmaReadRequest), 28));
  EXPECT_EQ(KindOf(CheckRdmapHeaderLength(wire::InfoFor(Opcode::kRdmaReadRequest), 29)),
            ViolationKind::kRdmapHeaderLength);
  EXPECT_EQ(KindOf(CheckRdmapHeaderLength(wire::InfoFor(Opcode::kImmediateData), 9)),
            ViolationKind::kImmediateDataLength);
  EXPECT_FALSE(CheckRdmapHeaderLength(wire::InfoFor(Opcode::kSend), 1000));
  EXPECT_FALSE(CheckRdmapHeaderLength(wire::InfoFor(Opcode::kVerifyRequest), 48));
}

// R5041-4.1-05 R5041-4.1-07 (decisions D-F4).
TEST(CheckMessageStructure, LastSegmentRules) {
  ReceiveBuffer b;
  b.received.Insert(0, 100);
  EXPECT_EQ(KindOf(CheckMessageStructure(b, 0, 50, true)), ViolationKind::kBrokenMessageStructure);
  EXPECT_FALSE(CheckMessageStructure(b, 100, 20, true));
  b.message_length = 120;
  b.received.Insert(100, 120);
  EXPECT_FALSE(CheckMessageStructure(b, 10, 10, false));  // a repeat is legal (R5041-5.3-04)
  EXPECT_EQ(KindOf(CheckMessageStructure(b, 110, 20, false)), ViolationKind::kBrokenMessageStructure);
  EXPECT_EQ(KindOf(CheckMessageStructure(b, 0, 10, true)), ViolationKind::kBrokenMessageStructure);
}

// R5041-5.3-03 R5041-5.3-04: any order, repeats counted once.
TEST(ByteRangeSet, MergesAndCountsNewOctetsOnly) {
  ByteRangeSet s;
  EXPECT_EQ(s.Insert(100, 200), 100u);
  EXPECT_EQ(s.Insert(0, 50), 50u);
  EXPECT_FALSE(s.CoversPrefix(200));
  EXPECT_EQ(s.Insert(40, 120), 50u);
  EXPECT_TRUE(s.CoversPrefix(200));
  EXPECT_EQ(s.Insert(10, 20), 0u);
  EXPECT_EQ(s.covered(), 200u);
  EXPECT_EQ(s.end(), 200u);
}

TEST(Resources, RegionBytesAreClippedToTheObject) {
  Resources res;
  MemoryRegion& r = res.AddRegion(1, 1000, 16, kAllAccess, kStream);
  EXPECT_EQ(res.RegionBytes(r, 1000, 16).size(), 16u);
  EXPECT_EQ(res.RegionBytes(r, 1010, 16).size(), 6u);
  EXPECT_EQ(res.RegionBytes(r, 999, 4).size(), 0u);
  EXPECT_EQ(res.RegionBytes(r, ~uint64_t{0}, 4).size(), 0u);
  // Aliases: two regions over one memory object see each other's writes.
  MemoryRegion alias = r;
  alias.stag = 2;
  alias.base_tagged_offset = 0;
  alias.object_offset = 8;
  alias.length = 8;
  ASSERT_TRUE(res.RegisterRegion(alias));
  res.RegionBytes(*res.FindRegion(2), 0, 1)[0] = 0x5A;
  EXPECT_EQ(res.RegionBytes(r, 1008, 1)[0], 0x5A);
  alias.length = 9;
  EXPECT_FALSE(res.RegisterRegion(alias));
}

TEST(Resources, RegionFromAdvertisement) {
  wire::AdvertisedRegion a;
  a.stag = 0x1234;
  a.base_tagged_offset = 0x7000;
  a.length = 96;
  a.access = wire::kAccessRemoteRead | wire::kAccessFlush;
  a.attributes = wire::kAttrInvalidatable;
  a.memory_object = 9;  // the advertised id; the model object is the caller's
  a.object_offset = 32;
  MemoryRegion m = RegionFromAdvertisement(a, 5, 2);
  EXPECT_EQ(m.stag, 0x1234u);
  EXPECT_EQ(m.base_tagged_offset, 0x7000u);
  EXPECT_EQ(m.length, 96u);
  EXPECT_EQ(m.access, kRemoteRead | kRemoteFlush);
  EXPECT_EQ(m.stream_id, 5u);
  EXPECT_TRUE(m.valid);
  EXPECT_TRUE(m.remote_invalidatable);
  EXPECT_EQ(m.memory_object, 2u);
  EXPECT_EQ(m.object_offset, 32u);
  // A foreign region belongs to another stream; without the attribute a
  // Send with Invalidate may not invalidate it.
  a.attributes = wire::kAttrForeign;
  m = RegionFromAdvertisement(a, 5, 2);
  EXPECT_EQ(m.stream_id, 6u);
  EXPECT_FALSE(m.remote_invalidatable);
}

}  // namespace
}  // namespace rdmapct::model
