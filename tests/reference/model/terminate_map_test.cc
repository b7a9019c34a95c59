// The ViolationKind -> Terminate table: structure, accept-sets, Figure 10 shape,
// decision options, and the Terminate builder.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "reference/model/emit_terminate.h"
#include "reference/model/terminate_map.h"
#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

TEST(TerminateMap, OneRowPerKindInOrderWithUniqueNames) {
  std::set<std::string> names;
  ASSERT_EQ(TerminateRules().size(), kViolationKindCount);
  for (std::size_t i = 0; i < kViolationKindCount; ++i) {
    const TerminateRule& r = TerminateRules()[i];
    EXPECT_EQ(static_cast<std::size_t>(r.kind), i);
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_STRNE(r.requirement_ids, "") << r.name;
    EXPECT_STREQ(ViolationKindName(r.kind), r.name);
  }
}

// R5040-4.8-03 R5041-7.2-01 (decisions D-S1): the chosen code and every alternative are
// registered (RFC 6580); the chosen code is in its own accept-set.
TEST(TerminateMap, ChosenCodesAreRegisteredAndAccepted) {
  for (const TerminateRule& r : TerminateRules()) {
    if (!r.emits_terminate && r.accept_count == 0) continue;
    EXPECT_TRUE(wire::IsRegistered(r.chosen)) << r.name;
    EXPECT_TRUE(IsAccepted(r.kind, r.chosen)) << r.name;
    for (const auto& c : r.accept_set()) EXPECT_TRUE(wire::IsRegistered(c)) << r.name;
  }
}

// R5040-4.8-T18..T21 (Figure 10) and R5040-4.8-13: only Remote Protection errors
// about a Read Request carry the RDMA header; LLP errors carry nothing; every
// error caused by an incoming segment echoes its DDP header.
TEST(TerminateMap, Figure10Shape) {
  for (const TerminateRule& r : TerminateRules()) {
    if (r.rdma_header == RdmaHeaderEcho::kIfReadRequest) {
      EXPECT_EQ(r.chosen.layer, 0) << r.name;
      EXPECT_EQ(r.chosen.error_type, 1) << r.name;
    }
    if (r.chosen.layer == 2) {
      EXPECT_FALSE(r.ddp_header) << r.name;
      EXPECT_EQ(r.rdma_header, RdmaHeaderEcho::kNever) << r.name;
    }
    if (r.chosen.layer == 1 && r.kind != ViolationKind::kDdpHeaderTruncated) {
      EXPECT_TRUE(r.ddp_header) << r.name;  // R5040-4.8-T20
    }
  }
}

// The RFC-explicit cases (no decision involved).
TEST(TerminateMap, RfcExplicitCodes) {
  EXPECT_EQ(RuleFor(ViolationKind::kReadSourceInvalidStag).chosen, wire::term::kRdmapInvalidStag);
  EXPECT_EQ(RuleFor(ViolationKind::kReadSourceToWrap).chosen, wire::term::kRdmapToWrap);
  EXPECT_EQ(RuleFor(ViolationKind::kTaggedInvalidStag).chosen, wire::term::kDdpTaggedInvalidStag);
  EXPECT_EQ(RuleFor(ViolationKind::kInvalidQn).chosen, wire::term::kDdpUntaggedInvalidQn);
  EXPECT_EQ(RuleFor(ViolationKind::kAtomicMisaligned).chosen,
            wire::term::kRdmapCatastrophicLocalizedToStream);  // R7306-8.2-05
  EXPECT_EQ(RuleFor(ViolationKind::kLlpCrcError).chosen, wire::term::kMpaCrcError);
  EXPECT_FALSE(RuleFor(ViolationKind::kMessageAfterTerminate).emits_terminate);
}

// decisions D-S1 accept-sets quoted in the brief.
TEST(TerminateMap, AcceptSetsFromNotes) {
  auto set = [](ViolationKind k) {
    std::set<std::tuple<int, int, int>> out;
    for (auto c : RuleFor(k).accept_set()) out.insert({c.layer, c.error_type, c.error_code});
    return out;
  };
  using T3 = std::set<std::tuple<int, int, int>>;
  EXPECT_EQ(set(ViolationKind::kTaggedAccessRights), (T3{{1, 1, 0x00}, {0, 1, 0x02}}));
  EXPECT_EQ(set(ViolationKind::kOpcodeQueueMismatch), (T3{{0, 2, 0x06}, {1, 2, 0x01}}));
  EXPECT_EQ(set(ViolationKind::kIrdExceeded), (T3{{1, 2, 0x02}, {0, 2, 0x07}}));
  EXPECT_EQ(set(ViolationKind::kInvalidateStagInvalid), (T3{{0, 1, 0x00}, {0, 1, 0x03}, {0, 1, 0x09}, {0, 2, 0x09}}));
}

// Each DecisionOptions switch selects another member of the accept-set.
TEST(TerminateMap, OptionsStayInsideTheAcceptSet) {
  DecisionOptions o;
  o.write_access_error_as_rdmap = true;
  o.opcode_queue_mismatch_as_ddp = true;
  o.ird_overrun_as_rdmap = true;
  o.invalidate_error_as_remote_operation = true;
  for (const TerminateRule& r : TerminateRules()) {
    if (r.accept_count == 0) continue;
    EXPECT_TRUE(IsAccepted(r.kind, ChosenCode(r.kind, o))) << r.name;
  }
  EXPECT_EQ(ChosenCode(ViolationKind::kIrdExceeded, o), wire::term::kRdmapCatastrophicLocalizedToStream);
  EXPECT_EQ(ChosenCode(ViolationKind::kIrdExceeded, {}), wire::term::kDdpUntaggedInvalidMsnNoBufferAvailable);
}

// BuildTerminateHeader for a Read Request: M=1 D=1 R=1, length = ULPDU_Length,
// headers copied (R5040-7.1-02c3).
TEST(BuildTerminate, ReadRequestEcho) {
  Violation v = MakeViolation(ViolationKind::kReadSourceBaseOrBounds, "R5040-7.2-09c", "x");
  const wire::ReadRequestHeader rr{1, 2, 3, 4, 5};
  v.offending.has_ddp_header = true;
  v.offending.ddp_header = wire::MakeReadRequest(7, rr).ddp;
  v.offending.ulpdu_length = 46;
  v.offending.has_read_request = true;
  v.offending.read_request = rr;
  wire::TerminateHeader h = BuildTerminateHeader(v, {}, {});
  EXPECT_EQ(h.code, wire::term::kRdmapBaseOrBoundsViolation);
  EXPECT_TRUE(h.m && h.d && h.r);
  EXPECT_EQ(h.ddp_segment_length, 46);
  EXPECT_EQ(h.terminated_ddp_header, v.offending.ddp_header);
  EXPECT_EQ(h.terminated_rdma_header, rr);
  // The same kind about a segment that is not a Read Request: no RDMA header.
  v.offending.has_read_request = false;
  EXPECT_FALSE(BuildTerminateHeader(v, {}, {}).r);
}

// Exact octets of a complete Terminate (RFC 5040 Figures 3, 7, 8).
TEST(BuildTerminate, ExactBytesForDdpError) {
  Violation v = MakeViolation(ViolationKind::kInvalidQn, "R5041-7.1-U1", "x");
  v.offending.has_ddp_header = true;
  v.offending.ddp_header = wire::MakeSend(Opcode::kSend, 9, {}).ddp;
  v.offending.ddp_header.queue_number = 5;
  v.offending.ulpdu_length = 18 + 4;
  Bytes out;
  EmitTerminate(v, 1, wire::Profile::kRfc5040, 1, 1, {}, {}, out);
  const Bytes expect = {0x41, 0x47, 0,    0,    0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0,   // DDP: QN2 MSN1 MO0
                        0x12, 0x01, 0xC0, 0x00,                                             // 1/2/0x01, M=1 D=1
                        0x00, 22,                                                           // DDP Segment Length
                        0x41, 0x43, 0,    0,    0, 0, 0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0, 0};  // terminated header
  EXPECT_EQ(out, expect);
}

}  // namespace
}  // namespace rdmapct::model
