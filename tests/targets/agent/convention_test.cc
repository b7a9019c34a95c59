// rdmapct-agent's convention handling, without a device: what it
// advertises satisfies the suite's full-suite checks, and its completions
// become exactly the Event Records the suite predicts.
#include "targets/agent/convention.h"

#include <gtest/gtest.h>

#include <string>

#include "reference/wire/ulp_convention.h"
#include "tests/targets/agent/agent_test_util.h"

namespace rdmapct::agent {
namespace {

// Pretend registration: STags 0x100+i, VA-based at a fake address per object.
std::vector<Registered> FakeRegister(const std::vector<RegionSpec>& layout) {
  std::vector<Registered> out;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const RegionSpec& s = layout[i];
    uint64_t base = s.zero_based ? 0 : 0x7f0000000000ull + (uint64_t{s.memory_object} << 20) + s.object_offset;
    out.push_back({static_cast<uint32_t>(0x100 + i), base});
  }
  return out;
}

wire::Advertisement Decoded(const AgentOptions& o, uint32_t serial = 1) {
  auto layout = DefaultLayout(o);
  ConnectionParams p{16, 8, serial, true, std::nullopt, wire::PreviousOutcome{}};  // first connection: Outcome 0
  return DecodedAdvertisement(o, layout, FakeRegister(layout), p);
}

TEST(AgentConvention, AdvertisementHasEveryRoleAndTheOutcomeBlock) {
  for (bool rfc7306 : {false, true}) {
    AgentOptions o;
    o.claim_rfc7306 = rfc7306;
    wire::Advertisement adv = Decoded(o, 3);
    EXPECT_EQ(adv.connection_serial, 3u);
    EXPECT_EQ(adv.ird, 16);
    EXPECT_EQ(adv.receive_buffer_count, 8);
    EXPECT_EQ(adv.receive_buffer_size, 4096u);
    EXPECT_TRUE(adv.flags & wire::kFlagKeepMemory);
    EXPECT_EQ(bool(adv.flags & wire::kFlagRfc7306), rfc7306);
    auto missing = wire::MissingForFullSuite(adv, rfc7306, false);
    EXPECT_TRUE(missing.empty()) << missing[0];
    ASSERT_TRUE(adv.previous);
    EXPECT_EQ(adv.previous->outcome, wire::ConnectionOutcome::kNone);
    for (auto role : {wire::RegionRole::kReadWrite, wire::RegionRole::kReadOnly, wire::RegionRole::kWriteOnly,
                      wire::RegionRole::kInvalidatable, wire::RegionRole::kAlias, wire::RegionRole::kForeign,
                      wire::RegionRole::kDeregistered}) {
      EXPECT_NE(wire::SelectRegion(
                    adv, role,
                    1024 * (role == wire::RegionRole::kReadWrite ? 4 : 1) *
                        (role == wire::RegionRole::kForeign || role == wire::RegionRole::kDeregistered ? 0 : 1)),
                nullptr)
          << wire::RegionRoleName(role);
    }
    EXPECT_EQ(wire::SelectRegion(adv, wire::RegionRole::kAtomic) != nullptr, rfc7306);
  }
}

TEST(AgentConvention, MemoryBehindEveryStagCanBeReadBack) {
  wire::Advertisement adv = Decoded(AgentOptions{});
  for (auto role : {wire::RegionRole::kWriteOnly, wire::RegionRole::kForeign, wire::RegionRole::kDeregistered,
                    wire::RegionRole::kInvalidatable}) {
    const wire::AdvertisedRegion* r = wire::SelectRegion(adv, role);
    ASSERT_NE(r, nullptr);
    const wire::AdvertisedRegion* view = wire::FindReadableView(adv, r->memory_object, r->object_offset, r->length);
    ASSERT_NE(view, nullptr) << wire::RegionRoleName(role);
    EXPECT_FALSE(view->attributes & wire::kAttrInvalidatable);
  }
}

TEST(AgentConvention, ZeroBasedOnlyWhenAsked) {
  AgentOptions o;
  for (const RegionSpec& s : DefaultLayout(o)) EXPECT_FALSE(s.zero_based) << s.role;
  o.zero_based_regions = true;
  wire::Advertisement adv = Decoded(o);
  EXPECT_EQ(wire::SelectRegion(adv, wire::RegionRole::kWriteOnly)->base_tagged_offset, 0u);
  EXPECT_EQ(wire::SelectRegion(adv, wire::RegionRole::kAlias)->base_tagged_offset, 0u);
}

TEST(AgentConvention, PatternMatchesTheSuitesExpectation) {
  auto layout = DefaultLayout(AgentOptions{});
  auto sizes = MemoryObjectSizes(layout);
  ASSERT_EQ(sizes.size(), 3u);
  EXPECT_EQ(sizes[kMainObject], kMainObjectSize);
  EXPECT_EQ(sizes[kInvalidatableObject], kInvalidatableObjectSize);
  std::vector<uint8_t> mem(sizes[kMainObject]);
  FillPattern(kMainObject, mem);
  wire::Advertisement adv = Decoded(AgentOptions{});
  const wire::AdvertisedRegion* ro = wire::SelectRegion(adv, wire::RegionRole::kReadOnly);
  wire::Bytes expect = wire::RegionPattern(*ro, ro->base_tagged_offset + 10, 300);
  EXPECT_TRUE(std::equal(expect.begin(), expect.end(), mem.begin() + ro->object_offset + 10));
  EXPECT_EQ(mem[0], wire::PatternByte(1, 0));
}

TEST(AgentConvention, SuiteRequestFoundWithOrWithoutRfc6581Word) {
  wire::Bytes req;
  wire::EncodeSuiteRequest({1, 0, wire::kRequestKeepMemory, 0xdeadbeef}, req);
  auto at0 = FindSuiteRequest(req);
  ASSERT_TRUE(at0);
  EXPECT_EQ(at0->flags, wire::kRequestKeepMemory);
  wire::Bytes with_word = {0x80, 0x04, 0x00, 0x04};
  with_word.insert(with_word.end(), req.begin(), req.end());
  auto at4 = FindSuiteRequest(with_word);
  ASSERT_TRUE(at4);
  EXPECT_EQ(at4->case_hash, 0xdeadbeefu);
  // Malformed private data is ignored, never acted on.
  EXPECT_FALSE(FindSuiteRequest(wire::Bytes{}));
  wire::Bytes bad = req;
  bad[6] = 0x80;  // a reserved flag at minor 0
  EXPECT_FALSE(FindSuiteRequest(bad));
  EXPECT_FALSE(FindSuiteRequest(wire::Bytes(40, 0x52)));
}

TEST(AgentConvention, IrdCoversThePeersOrd) {
  EXPECT_EQ(ChooseIrdOrd(4, 4, 128, 128).ird, 16);
  EXPECT_EQ(ChooseIrdOrd(4, 4, 128, 128).ord, 4);
  EXPECT_EQ(ChooseIrdOrd(64, 8, 128, 128).ird, 64);
  EXPECT_EQ(ChooseIrdOrd(0x3FFF, 0x3FFF, 128, 128).ird, 128);  // no automatic negotiation: device max
  EXPECT_EQ(ChooseIrdOrd(0x3FFF, 0x3FFF, 128, 128).ord, 16);
  EXPECT_EQ(ChooseIrdOrd(0, 0, 8, 8).ird, 8);
}

TEST(AgentConvention, CompletionsBecomeTheRecordsTheSuitePredicts) {
  ConnectionEvents ev;
  const wire::Bytes hello = {'h', 'e', 'l', 'l', 'o'};
  Completion c;
  c.kind = Completion::Kind::kReceive;
  c.data = hello;
  auto r1 = ev.OnCompletion(c);
  ASSERT_TRUE(r1);
  // docs/target-convention.md §6.2's example, octet for octet.
  const wire::Bytes example = {0x52, 0x50, 0x43, 0x45, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
                               0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                               0x9a, 0x71, 0xbb, 0x4c, 0x00, 0x05, 0x00, 0x00, 'h',  'e',  'l',  'l',  'o'};
  EXPECT_EQ(*r1, example);

  Completion sent;
  sent.kind = Completion::Kind::kSendComplete;
  EXPECT_FALSE(ev.OnCompletion(sent));

  wire::Bytes big(200);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7);
  Completion inv;
  inv.kind = Completion::Kind::kReceive;
  inv.data = big;
  inv.invalidated_stag = 0x2e05;
  auto r2 = ev.OnCompletion(inv);
  ASSERT_TRUE(r2);
  auto d2 = wire::DecodeEventRecord(*r2);
  ASSERT_TRUE(d2.ok());
  EXPECT_EQ(*d2, wire::MakeSendEvent(2, big, std::nullopt, 0x2e05u));
  EXPECT_EQ(d2->prefix.size(), 64u);
  EXPECT_EQ(d2->flags, wire::kEventInvalidated);  // SE unknown: flag 0x01 clear

  Completion empty;
  empty.kind = Completion::Kind::kReceive;
  auto r3 = wire::DecodeEventRecord(*ev.OnCompletion(empty));
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ(r3->sequence, 3u);
  EXPECT_EQ(r3->length, 0u);

  Completion imm;
  imm.kind = Completion::Kind::kReceiveImm;
  imm.immediate = 0x1234;
  auto r4 = wire::DecodeEventRecord(*ev.OnCompletion(imm));
  ASSERT_TRUE(r4.ok());
  EXPECT_EQ(*r4, wire::MakeImmediateDataEvent(4, 0x1234, std::nullopt));
  EXPECT_EQ(ev.events_sent(), 4u);
}

TEST(AgentConvention, AnErrorIsReportedOnceThenNothing) {
  ConnectionEvents ev;
  Completion err;
  err.kind = Completion::Kind::kReceiveError;
  err.status = 6;  // e.g. IBV_WC_LOC_PROT_ERR
  auto r = wire::DecodeEventRecord(*ev.OnCompletion(err));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, wire::MakeCompletionErrorEvent(1, wire::ErrorSource::kReceiveQueue, 6));
  EXPECT_TRUE(ev.stopped());
  Completion late;
  late.kind = Completion::Kind::kReceive;
  EXPECT_FALSE(ev.OnCompletion(late));
  EXPECT_EQ(ev.completion_errors(), 1u);
}

// A delivered Send, and the flushed receive completion that follows one when
// the stream is gone (`status` as the stack reports it).
Completion Delivered() { return Completion{.kind = Completion::Kind::kReceive}; }
Completion FlushedReceive(uint32_t status) {
  return Completion{.kind = Completion::Kind::kReceiveError, .flushed = true, .status = status};
}

TEST(AgentConvention, FlushedOrAfterTerminateSendsNothing) {
  ConnectionEvents ev;
  const Completion ok = Delivered();
  ASSERT_TRUE(ev.OnCompletion(ok));
  const Completion flushed = FlushedReceive(5);
  EXPECT_FALSE(ev.OnCompletion(flushed));
  EXPECT_FALSE(ev.OnCompletion(flushed));
  EXPECT_FALSE(ev.OnCompletion(ok));
  EXPECT_EQ(ev.events_sent(), 1u);
  EXPECT_EQ(ev.completion_errors(), 2u);

  ConnectionEvents closed;
  closed.Stop();
  EXPECT_FALSE(closed.OnCompletion(ok));
  EXPECT_EQ(closed.events_sent(), 0u);
}

// §3.4 as verbs tells it: a QP error event means the stack detected an
// error and sent a Terminate (code unknown); anything else is a close.
TEST(AgentConvention, OutcomeBlockSaysWhatVerbsTells) {
  ConnectionEvents closed;
  ASSERT_TRUE(closed.OnCompletion(Delivered()));
  const Completion flushed = FlushedReceive(0);
  closed.OnCompletion(flushed);
  wire::PreviousOutcome o = OutcomeOf(7, closed);
  EXPECT_EQ(o.connection_serial, 7u);
  EXPECT_EQ(o.outcome, wire::ConnectionOutcome::kClosed);
  EXPECT_EQ(o.flags, 0);
  EXPECT_EQ(o.events_sent, 1);
  EXPECT_EQ(o.completion_errors, 1);

  ConnectionEvents fatal;
  fatal.OnCompletion(flushed);  // the flush comes first; the QP event still counts
  Completion qp;
  qp.kind = Completion::Kind::kAsyncError;
  qp.flushed = true;
  qp.status = 1;  // IBV_EVENT_QP_FATAL
  fatal.OnCompletion(qp);
  o = OutcomeOf(8, fatal);
  EXPECT_EQ(o.outcome, wire::ConnectionOutcome::kTerminateSent);
  EXPECT_EQ(o.flags, 0);  // the code is not known
  EXPECT_EQ(o.layer, 0);
  EXPECT_EQ(o.completion_errors, 2);

  // It round-trips in the Advertisement, before the Commands block.
  AgentOptions opts;
  auto layout = DefaultLayout(opts);
  ConnectionParams p{16, 8, 9, true, wire::CommandCapabilities{}, o};
  auto bytes = BuildAdvertisement(opts, layout, FakeRegister(layout), p);
  ASSERT_TRUE(bytes.ok());
  auto adv = wire::DecodeAdvertisement(*bytes);
  ASSERT_TRUE(adv.ok());
  ASSERT_TRUE(adv->previous);
  EXPECT_EQ(*adv->previous, o);
}

}  // namespace
}  // namespace rdmapct::agent
