// Fault switches: the catalogue, and for each fault an input on which the
// faulty endpoint behaves differently from the correct one.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>

#include "reference/model/terminate_map.h"
#include "tests/reference/model/model_test_util.h"

namespace rdmapct::model {
namespace {

using namespace testing;  // NOLINT

TEST(FaultCatalogue, NamesDescriptionsAndIds) {
  ASSERT_EQ(AllFaults().size(), kFaultCount);
  std::set<std::string> names;
  for (std::size_t i = 0; i < kFaultCount; ++i) {
    const FaultInfo& f = AllFaults()[i];
    EXPECT_EQ(static_cast<std::size_t>(f.fault), i);
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    for (char c : std::string(f.name))
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') << f.name;
    EXPECT_STRNE(f.description, "");
    EXPECT_STRNE(f.requirement_ids, "");
    EXPECT_EQ(FindFault(f.name), f.fault);
    EXPECT_EQ(&InfoFor(f.fault), &f);
  }
  EXPECT_FALSE(FindFault("no-such-fault"));
}

TEST(FaultCatalogue, WhatEachFaultNeedsBeforeItShows) {
  EXPECT_EQ(NeedsOf(Fault::kSkipBoundsCheck), FaultNeeds::kNothing);
  EXPECT_EQ(NeedsOf(Fault::kSendsBeforeReply), FaultNeeds::kInitiatorRole);
  EXPECT_EQ(NeedsOf(Fault::kNoRtrTerminate), FaultNeeds::kInitiatorRole);
  EXPECT_EQ(NeedsOf(Fault::kIgnoreOrd), FaultNeeds::kCommands);
  EXPECT_EQ(NeedsOf(Fault::kAtomicWriteLength16), FaultNeeds::kCommands);
  EXPECT_EQ(NeedsOf(Fault::kStagAcrossConnections), FaultNeeds::kConcurrentConnections);
  // The requester faults a Responder-side session can still trigger (a Read
  // Response or an MPA exchange from the suite shows them).
  EXPECT_EQ(NeedsOf(Fault::kReadResponseSkipBounds), FaultNeeds::kNothing);
  EXPECT_EQ(NeedsOf(Fault::kReplyEchoesRequestRes), FaultNeeds::kNothing);
}

TEST(FaultCatalogue, AddByNames) {
  FaultSet s;
  EXPECT_FALSE(s.AddByNames("skip-bounds-check,ignore-ird"));
  EXPECT_TRUE(s.Has(Fault::kSkipBoundsCheck));
  EXPECT_TRUE(s.Has(Fault::kIgnoreIrd));
  EXPECT_FALSE(s.Has(Fault::kSkipMsnCheck));
  EXPECT_EQ(s.AddByNames("skip-msn-check,bogus"), std::optional<std::string_view>("bogus"));
}

// What an endpoint did with an input: everything a tester could observe.
struct Outcome {
  std::vector<Bytes> segments;
  std::vector<UlpEventKind> events;
  std::vector<ViolationKind> violations;
  Bytes memory;  // region 0x10, 64 octets
  bool operator==(const Outcome&) const = default;
};

constexpr uint32_t kMem = 0x10;

struct Scenario {
  Peer p;
  Outcome o;
  Scenario(FaultSet faults, EndpointConfig c)
      : p([&] {
          c.faults = faults;
          return c;
        }()) {
    p.ep.resources().AddRegion(kMem, 0, 64, kAllAccess, kStream);
  }
  void Feed(const wire::RdmapSegment& s) { Feed(Encode(s)); }
  void Feed(const Bytes& b) {
    p.Feed(b);
    Collect();
  }
  void Collect() {
    for (const Bytes& s : p.r.segments()) o.segments.push_back(s);
    for (const UlpEvent& e : p.r.events()) o.events.push_back(e.kind);
    for (const Violation& v : p.r.violations()) o.violations.push_back(v.kind);
    p.r.Clear();
  }
  Outcome Done() {
    auto m = p.ep.PeekRegion(kMem, 0, 64);
    o.memory.assign(m.begin(), m.end());
    return o;
  }
};

using Run = std::function<Outcome(FaultSet)>;

Run Simple(std::function<void(Scenario&)> body, EndpointConfig c = Config()) {
  return [body, c](FaultSet f) {
    Scenario s(f, c);
    body(s);
    return s.Done();
  };
}

wire::RdmapSegment SendWith(uint8_t ddp_version, uint8_t rv, uint32_t msn, std::size_t n) {
  auto s = wire::MakeSend(Opcode::kSend, msn, {});
  static Bytes data;
  data = Pattern(n);
  s.ulp_payload = data;
  s.ddp.ddp_version = ddp_version;
  s.ddp.rsvd_ulp0 = static_cast<uint8_t>(rv << 6 | 0x3);
  return s;
}

EndpointConfig Deferred(uint32_t ird = 4, std::size_t mulpdu = 128) {
  EndpointConfig c = Config();
  c.auto_respond = false;
  c.ird = ird;
  c.mulpdu = mulpdu;
  return c;
}

const std::map<Fault, Run>& Scenarios() {
  static const std::map<Fault, Run> m = {
      {Fault::kAcceptInvalidDdpVersion, Simple([](Scenario& s) {
         s.p.ep.PostReceive(64);
         s.Feed(SendWith(0, 1, 1, 4));
       })},
      {Fault::kSkipMsnCheck, Simple([](Scenario& s) {
         s.p.ep.PostReceive(64);
         s.Feed(SendWith(1, 1, 5, 4));
       })},
      {Fault::kAcceptSendWithoutBuffer, Simple([](Scenario& s) { s.Feed(SendWith(1, 1, 1, 4)); })},
      {Fault::kDeliverSendIntoSmallBuffer, Simple([](Scenario& s) {
         s.p.ep.PostReceive(16);
         s.Feed(SendWith(1, 1, 1, 17));
       })},
      {Fault::kSkipBoundsCheck, Simple([](Scenario& s) { s.Feed(wire::MakeRdmaWrite(kMem, 60, Pattern(8))); })},
      {Fault::kSkipToWrapCheck,
       Simple([](Scenario& s) { s.Feed(wire::MakeRdmaWrite(kMem, ~uint64_t{0} - 3, Pattern(8))); })},
      {Fault::kSkipAccessRightsCheck, Simple([](Scenario& s) {
         s.p.ep.resources().FindRegion(kMem)->access = kRemoteRead;
         s.Feed(wire::MakeRdmaWrite(kMem, 0, Pattern(8)));
       })},
      {Fault::kSkipStreamAssociationCheck, Simple([](Scenario& s) {
         s.p.ep.resources().FindRegion(kMem)->stream_id = kOtherStream;
         s.Feed(wire::MakeRdmaWrite(kMem, 0, Pattern(8)));
       })},
      {Fault::kAcceptInvalidatedStag, Simple([](Scenario& s) {
         s.p.ep.resources().Invalidate(kMem);
         s.Feed(wire::MakeRdmaWrite(kMem, 0, Pattern(8)));
       })},
      {Fault::kAcceptRdmapVersion2, Simple([](Scenario& s) {
         s.p.ep.PostReceive(64);
         s.Feed(SendWith(1, 2, 1, 4));
       })},
      {Fault::kAcceptUnexpectedOpcode, Simple([](Scenario& s) {
         s.p.ep.PostReceive(64);
         s.Feed(wire::MakeImmediateData(1, 7));  // 0x8 under rfc5040
       })},
      {Fault::kInvalidateNonInvalidatableStag, Simple([](Scenario& s) {
         s.p.ep.PostReceive(64);
         s.p.ep.resources().FindRegion(kMem)->remote_invalidatable = false;
         s.Feed(wire::MakeSend(Opcode::kSendWithInvalidate, 1, {}, kMem));
         s.Feed(wire::MakeRdmaWrite(kMem, 0, Pattern(8)));
       })},
      {Fault::kIgnoreIrd, Simple(
                              [](Scenario& s) {
                                s.Feed(wire::MakeReadRequest(1, {1, 0, 8, kMem, 0}));
                                s.Feed(wire::MakeReadRequest(2, {1, 0, 8, kMem, 0}));
                              },
                              Deferred(1))},
      {Fault::kReadResponsesOutOfOrder, Simple(
                                            [](Scenario& s) {
                                              s.Feed(wire::MakeReadRequest(1, {1, 0, 8, kMem, 0}));
                                              s.Feed(wire::MakeReadRequest(2, {2, 0, 8, kMem, 0}));
                                              s.p.ep.EmitPendingResponses(10, s.p.r);
                                              s.Collect();
                                            },
                                            Deferred())},
      {Fault::kWrongReadResponseTo, Simple([](Scenario& s) {
         s.Feed(wire::MakeReadRequest(1, {1, 0x100, 8, kMem, 0}));
       })},
      {Fault::kSplitReadResponseOverMulpdu, Simple(
                                                [](Scenario& s) {
                                                  s.Feed(wire::MakeReadRequest(1, {1, 0, 64, kMem, 0}));
                                                  s.p.ep.EmitPendingResponses(10, s.p.r);
                                                  s.Collect();
                                                },
                                                Deferred(4, 64))},
      {Fault::kWrongTerminateCode, Simple([](Scenario& s) { s.Feed(wire::MakeRdmaWrite(0x999, 0, Pattern(8))); })},
      {Fault::kTerminateWithoutTerminatedHeader,
       Simple([](Scenario& s) { s.Feed(wire::MakeRdmaWrite(0x999, 0, Pattern(8))); })},
      {Fault::kKeepPlacingAfterTerminate, Simple([](Scenario& s) {
         s.Feed(wire::MakeRdmaWrite(0x999, 0, Pattern(8)));
         s.Feed(wire::MakeRdmaWrite(kMem, 0, Pattern(8)));
       })},
      {Fault::kSkipQnCheck, Simple([](Scenario& s) {
         s.p.ep.PostReceive(64);
         auto send = SendWith(1, 1, 1, 4);
         send.ddp.queue_number = 7;
         s.Feed(send);
       })},
      {Fault::kSkipHeaderLengthCheck, Simple([](Scenario& s) {
         Bytes req = Encode(wire::MakeReadRequest(1, {1, 0, 8, kMem, 0}));
         req.push_back(0xEE);  // 29 octets
         s.Feed(req);
       })},
      {Fault::kAcceptUnexpectedResponses,
       Simple([](Scenario& s) { s.Feed(wire::MakeReadResponse(kMem, 0, Pattern(8))); })},
      {Fault::kAnswerAfterTerminate, Simple([](Scenario& s) {
         s.Feed(wire::MakeRdmaWrite(0x999, 0, Pattern(8)));
         s.Feed(wire::MakeReadRequest(1, {1, 0, 8, kMem, 0}));
       })},
  };
  return m;
}

// Every fault with an RFC 5040 scenario behaves differently from the correct model.
TEST(FaultBehaviour, EachFaultChangesTheOutcome) {
  for (const auto& [fault, run] : Scenarios()) {
    const Outcome good = run({});
    const Outcome bad = run({fault});
    EXPECT_FALSE(good == bad) << InfoFor(fault).name;
  }
}

// Spot checks that the difference is the one the fault names.
TEST(FaultBehaviour, SpecificDifferences) {
  const Outcome wrong = Scenarios().at(Fault::kWrongTerminateCode)({Fault::kWrongTerminateCode});
  ASSERT_EQ(wrong.segments.size(), 1u);
  RawTerminate t = ParseRawTerminate(wrong.segments[0]);
  EXPECT_FALSE(IsAccepted(ViolationKind::kTaggedInvalidStag, {t.layer, t.etype, t.code}));
  EXPECT_TRUE(wire::IsRegistered({t.layer, t.etype, t.code}));

  const Outcome bare =
      Scenarios().at(Fault::kTerminateWithoutTerminatedHeader)({Fault::kTerminateWithoutTerminatedHeader});
  t = ParseRawTerminate(bare.segments[0]);
  EXPECT_FALSE(t.m || t.d || t.r);

  const Outcome wrap = Scenarios().at(Fault::kSkipToWrapCheck)({Fault::kSkipToWrapCheck});
  // R5041-7.1-G5: with the end computed as TO + length in 64 bits, a Write
  // at 2^64 - 4 of 8 octets "ends" at 4, inside the region: no violation, no
  // Terminate (the correct endpoint reports TO wrap).
  EXPECT_TRUE(wrap.violations.empty());
  EXPECT_TRUE(wrap.segments.empty());

  const Outcome split = Scenarios().at(Fault::kSplitReadResponseOverMulpdu)({Fault::kSplitReadResponseOverMulpdu});
  EXPECT_GT(split.segments[0].size(), 64u);  // MULPDU 64

  const Outcome to = Scenarios().at(Fault::kWrongReadResponseTo)({Fault::kWrongReadResponseTo});
  EXPECT_EQ(wire::LoadBe64(&to.segments[0][6]), 0x104u);

  const Outcome order = Scenarios().at(Fault::kReadResponsesOutOfOrder)({Fault::kReadResponsesOutOfOrder});
  ASSERT_EQ(order.segments.size(), 2u);
  EXPECT_EQ(wire::LoadBe32(&order.segments[0][2]), 2u);  // the second Read answered first

  const Outcome small = Scenarios().at(Fault::kDeliverSendIntoSmallBuffer)({Fault::kDeliverSendIntoSmallBuffer});
  EXPECT_EQ(small.events, std::vector<UlpEventKind>{UlpEventKind::kSendReceived});
}

// skip-qn-check: the segment is caught later with a code outside U1's accept-set.
TEST(FaultBehaviour, SkipQnCheckGivesAnotherCode) {
  const Outcome o = Scenarios().at(Fault::kSkipQnCheck)({Fault::kSkipQnCheck});
  EXPECT_EQ(o.violations, std::vector<ViolationKind>{ViolationKind::kOpcodeQueueMismatch});
}

// The RFC 7306 faults are exercised in rx_atomic_test.cc; here only that a QN3
// response matching nothing is dropped instead of Terminated.
TEST(FaultBehaviour, AcceptUnexpectedQn3Response) {
  for (FaultSet f : {FaultSet{}, FaultSet{Fault::kAcceptUnexpectedResponses}}) {
    EndpointConfig c = Config(wire::Profile::kRfc7306);
    c.faults = f;
    Peer q(c);
    const auto& r = q.Feed(wire::MakeAtomicResponse(1, {1, 2}));
    EXPECT_EQ(r.segments().size(), f.empty() ? 1u : 0u);
  }
}

// The COMMIT faults live in checks the extension handlers call.
TEST(FaultBehaviour, CommitChecks) {
  EXPECT_TRUE(CheckAtomicWriteLength(4, {}));
  EXPECT_FALSE(CheckAtomicWriteLength(4, {Fault::kAtomicWriteWrongLengthAccepted}));
  EXPECT_TRUE(CheckFlushFlags(0, true, {}));
  EXPECT_FALSE(CheckFlushFlags(0, true, {Fault::kFlushIgnoreFlags}));
}

}  // namespace
}  // namespace rdmapct::model
