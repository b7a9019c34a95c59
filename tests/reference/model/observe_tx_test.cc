// Passive audit: a passive endpoint watches both directions of a stream whose
// one side (the "DUT", here another model, correct or with a fault) it does
// not control, and reports what that side did wrong.
#include <gtest/gtest.h>

#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

constexpr uint32_t kMem = 0x40;

EndpointConfig AuditorConfig(wire::Profile p = wire::Profile::kRfc7306) {
  EndpointConfig c = Config(p);
  c.passive = true;
  c.ird = 8;
  c.ord = 8;
  return c;
}

// The DUT, the peer talking to it, and the auditor watching the DUT's side.
struct Audit {
  explicit Audit(FaultSet dut_faults = {}, std::size_t mulpdu = 256) {
    EndpointConfig c = Config(wire::Profile::kRfc7306);
    c.faults = dut_faults;
    c.mulpdu = mulpdu;
    c.auto_respond = false;
    dut = std::make_unique<RdmapEndpoint>(c);
    dut->resources().AddRegion(kMem, 0, 4096, kAllAccess, kStream);
    for (int i = 0; i < 8; ++i) dut->PostReceive(1024);
    EndpointConfig a = AuditorConfig();
    a.mulpdu = 256;
    auditor = std::make_unique<RdmapEndpoint>(a);
  }
  // Peer -> DUT: the DUT receives, the auditor receives as the DUT would.
  void ToDut(const Bytes& seg) {
    Reactions r;
    dut->OnSegment(seg, r);
    auditor->OnSegment(seg, seen);
    for (const Bytes& s : r.segments()) FromDut(s);
  }
  void ToDut(const wire::RdmapSegment& s) { ToDut(Encode(s)); }
  // DUT -> peer: the auditor observes it.
  void FromDut(const Bytes& seg) { auditor->ObserveTransmitted(seg, seen); }
  void Flush() {
    Reactions r;
    dut->EmitPendingResponses(1000, r);
    for (const Bytes& s : r.segments()) FromDut(s);
  }
  std::vector<ViolationKind> Kinds() const {
    std::vector<ViolationKind> k;
    for (const Violation& v : seen.violations()) k.push_back(v.kind);
    return k;
  }
  std::unique_ptr<RdmapEndpoint> dut;
  std::unique_ptr<RdmapEndpoint> auditor;
  Reactions seen;

  void Traffic() {
    ToDut(wire::MakeRdmaWrite(kMem, 0, Pattern(300)));
    ToDut(wire::MakeReadRequest(1, {0x700, 0x10, 600, kMem, 0}));
    ToDut(wire::MakeReadRequest(2, {0x701, 0x20, 100, kMem, 8}));
    wire::AtomicRequestHeader a;
    a.request_identifier = 0xABC;
    a.remote_stag = kMem;
    a.remote_tagged_offset = 64;
    ToDut(wire::MakeAtomicRequest(3, a));
    ToDut(wire::MakeSend(Opcode::kSend, 1, Pattern(10)));
    Flush();
  }
};

// A correct DUT: nothing to report; memory the auditor does not know is fine.
TEST(PassiveAudit, CorrectEndpointIsClean) {
  Audit a;
  a.Traffic();
  EXPECT_TRUE(a.Kinds().empty());
  EXPECT_EQ(a.auditor->pending_responses(), 0u);
  EXPECT_EQ(a.auditor->state(), StreamState::kStreaming);
  // The auditor saw the Send delivered (receive of unknown size).
  EXPECT_EQ(a.auditor->expected_msn(0), 2u);
}

// R5040-5.2.2-07 R5040-5.5-R20a: responses out of order are reported.
TEST(PassiveAudit, DetectsReadResponsesOutOfOrder) {
  Audit a({Fault::kReadResponsesOutOfOrder});
  a.Traffic();
  ASSERT_FALSE(a.Kinds().empty());
  EXPECT_EQ(a.Kinds()[0], ViolationKind::kOutboundUnsolicitedResponse);
}

// R5040-4.4-03: a Read Response at the wrong Tagged Offset.
TEST(PassiveAudit, DetectsWrongReadResponseTo) {
  Audit a({Fault::kWrongReadResponseTo});
  a.Traffic();
  ASSERT_FALSE(a.Kinds().empty());
  EXPECT_EQ(a.Kinds()[0], ViolationKind::kOutboundResponseMismatch);
}

// R5041-5.2-01: segments larger than MULPDU.
TEST(PassiveAudit, DetectsSegmentsOverMulpdu) {
  Audit a({Fault::kSplitReadResponseOverMulpdu});
  a.Traffic();
  ASSERT_FALSE(a.Kinds().empty());
  EXPECT_EQ(a.Kinds()[0], ViolationKind::kOutboundOverMulpdu);
}

// R7306-5.2.2-02: an Atomic Response that does not echo the Request Identifier.
TEST(PassiveAudit, DetectsMisEchoedRequestIdentifier) {
  Audit a({Fault::kMisEchoRequestIdentifier});
  a.Traffic();
  EXPECT_EQ(a.Kinds(), std::vector<ViolationKind>{ViolationKind::kOutboundResponseMismatch});
}

// R5040-5.4-10: the DUT keeps answering after its own Terminate.
TEST(PassiveAudit, DetectsAnswerAfterTerminate) {
  Audit a({Fault::kAnswerAfterTerminate});
  // The DUT Terminates (the auditor, not knowing the DUT's STags, accepts the
  // Write and learns of the Terminate by observing it).
  a.ToDut(wire::MakeRdmaWrite(0x999, 0, Pattern(4)));
  EXPECT_EQ(a.auditor->state(), StreamState::kTerminateSent);
  EXPECT_TRUE(a.Kinds().empty());
  a.ToDut(wire::MakeReadRequest(1, {0x700, 0, 8, kMem, 0}));
  a.Flush();
  EXPECT_EQ(a.Kinds(), std::vector<ViolationKind>{ViolationKind::kOutboundAfterTerminate});
}

// The auditor checks the peer as the DUT would: IRD overrun gets the expected Terminate.
TEST(PassiveAudit, PeerIrdOverrunProducesTheExpectedTerminate) {
  Audit a;
  for (uint32_t i = 1; i <= 9; ++i) {
    a.auditor->OnSegment(Encode(wire::MakeReadRequest(i, {1, 0, 8, 0x1234, 0})), a.seen);
  }
  ASSERT_FALSE(a.Kinds().empty());
  EXPECT_EQ(a.Kinds()[0], ViolationKind::kIrdExceeded);
  ASSERT_EQ(a.seen.segments().size(), 1u);
  EXPECT_EQ(ParseRawTerminate(a.seen.segments()[0]).code, 0x02);
}

// R5041-4.3-07 R5040-4.1-09 R5040-6.1-09: sender-side header rules.
TEST(PassiveAudit, SenderRules) {
  EndpointConfig c = AuditorConfig();
  c.ord = 1;
  RdmapEndpoint aud(c);
  Reactions r;
  aud.ObserveTransmitted(Encode(wire::MakeSend(Opcode::kSend, 2, Pattern(4))), r);
  const Bytes four = Pattern(4);  // the segment's payload span points here
  auto s = wire::MakeSend(Opcode::kSend, 3, four);
  s.ddp.rsvd_ulp0 |= 0x30;  // Rsv bits set
  aud.ObserveTransmitted(Encode(s), r);
  aud.ObserveTransmitted(Encode(wire::MakeReadRequest(1, {1, 0, 4, 2, 0})), r);
  aud.ObserveTransmitted(Encode(wire::MakeReadRequest(2, {1, 0, 4, 2, 0})), r);
  ASSERT_EQ(r.violations().size(), 3u);
  EXPECT_EQ(r.violations()[0].kind, ViolationKind::kOutboundMsnSequence);
  EXPECT_EQ(r.violations()[1].kind, ViolationKind::kOutboundMalformed);
  EXPECT_EQ(r.violations()[2].kind, ViolationKind::kOutboundOrdExceeded);
  EXPECT_TRUE(r.segments().empty());  // never answered
  EXPECT_EQ(aud.state(), StreamState::kStreaming);
  // The learned Read is now checked on the inbound side.
  r.Clear();
  aud.OnSegment(Encode(wire::MakeReadResponse(1, 0, Pattern(4))), r);
  EXPECT_TRUE(r.violations().empty());
  EXPECT_EQ(r.events()[0].kind, UlpEventKind::kReadCompleted);
}

}  // namespace
}  // namespace rdmapct::model
