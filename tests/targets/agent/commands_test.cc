// rdmapct-agent's 1.1 and 1.2 convention handling without a device: the
// flags and versions it advertises (concurrent connections only with a PD
// per connection), how it plans the suite's commands for verbs, the order
// and counts of their completions, and the MSNs their Sends take.
#include <gtest/gtest.h>

#include "reference/wire/ulp_convention.h"
#include "targets/agent/convention.h"
#include "tests/targets/agent/agent_test_util.h"

namespace rdmapct::agent {
namespace {

using wire::CommandType;
using wire::CompletionStatus;

std::vector<Registered> FakeRegister(const std::vector<RegionSpec>& layout) {
  std::vector<Registered> out;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const RegionSpec& s = layout[i];
    out.push_back(
        {static_cast<uint32_t>(0x100 + i), 0x7f0000000000ull + (uint64_t{s.memory_object} << 20) + s.object_offset});
  }
  return out;
}

wire::Advertisement Decode(const AgentOptions& o, std::optional<wire::CommandCapabilities> commands) {
  auto layout = DefaultLayout(o);
  ConnectionParams p{16, 4, 7, true, commands, std::nullopt};
  return DecodedAdvertisement(o, layout, FakeRegister(layout), p);
}

TEST(AgentCommands, ConcurrentConnectionsOnlyWithAPdPerConnection) {
  AgentOptions o;
  wire::Advertisement per = Decode(o, std::nullopt);
  EXPECT_TRUE(per.flags & wire::kFlagConcurrentConnections);
  EXPECT_EQ(per.minor_version, wire::kConcurrentMinorVersion);
  o.pd_per_connection = false;  // --shared-pd: STags valid everywhere, no §11 promise
  wire::Advertisement shared = Decode(o, std::nullopt);
  EXPECT_FALSE(shared.flags & wire::kFlagConcurrentConnections);
  EXPECT_EQ(shared.minor_version, 0);
  EXPECT_EQ(Decode(o, wire::CommandCapabilities{}).minor_version, wire::kUlpConventionCommandsMinorVersion);
}

TEST(AgentCommands, CommandsBlockNamesWhatVerbsCanPost) {
  AgentOptions o;
  wire::CommandCapabilities caps;
  caps.supported = SupportedCommandMask(false);
  caps.completed = 3;
  caps.failed = 1;
  caps.failed_command_id = 4;
  caps.flushed = 2;
  for (bool shared : {false, true}) {
    o.pd_per_connection = !shared;
    wire::Advertisement adv = Decode(o, caps);
    ASSERT_TRUE(adv.commands);
    EXPECT_EQ(*adv.commands, caps);
  }
  for (CommandType t : {CommandType::kRdmaWrite, CommandType::kRdmaRead, CommandType::kSend, CommandType::kSendWithSe,
                        CommandType::kSendWithInvalidate, CommandType::kSendWithSeAndInvalidate}) {
    EXPECT_TRUE(caps.Supports(t)) << wire::CommandTypeName(t);
  }
  // No verbs work request for these on iWARP: advertised as missing so the
  // suite skips their cases naming the command.
  for (CommandType t :
       {CommandType::kImmediateData, CommandType::kImmediateDataWithSe, CommandType::kAtomicFetchAdd,
        CommandType::kAtomicCmpSwap, CommandType::kFlush, CommandType::kVerify, CommandType::kAtomicWrite}) {
    EXPECT_FALSE(caps.Supports(t)) << wire::CommandTypeName(t);
  }
  wire::CommandCapabilities atomics{SupportedCommandMask(true)};
  EXPECT_TRUE(atomics.Supports(CommandType::kAtomicFetchAdd));
  EXPECT_TRUE(atomics.Supports(CommandType::kAtomicCmpSwap));
  EXPECT_FALSE(atomics.Supports(CommandType::kAtomicWrite));
}

TEST(AgentCommands, SuiteIrdFromTheRequestExtension) {
  wire::Bytes req;
  wire::EncodeSuiteRequest({1, 1, 0, 0x1234}, req);
  wire::EncodeSuiteRequestExtension({3, {{0x5157e100, 0x530000000000ull, 65536, 0x1F}}}, req);
  EXPECT_EQ(FindSuiteIrd(req), std::optional<uint16_t>(3));
  wire::Bytes with_word = {0x80, 0x04, 0x00, 0x04};
  with_word.insert(with_word.end(), req.begin(), req.end());
  EXPECT_EQ(FindSuiteIrd(with_word), std::optional<uint16_t>(3));
  wire::Bytes v10;
  wire::EncodeSuiteRequest({1, 0, 0, 0x1234}, v10);
  EXPECT_FALSE(FindSuiteIrd(v10));
}

struct Planner {
  AgentOptions o;
  std::vector<RegionSpec> layout = DefaultLayout(o);
  std::vector<Registered> reg = FakeRegister(layout);
  uint32_t supported = SupportedCommandMask(false);
  std::size_t Index(const std::string& role) const {
    for (std::size_t i = 0; i < layout.size(); ++i) {
      if (layout[i].role == role) return i;
    }
    return layout.size();
  }
  CommandPlan Plan(CommandType t, const std::string& role, uint64_t offset, uint32_t length) const {
    wire::Command c;
    c.type = t;
    c.command_id = 1;
    c.length = length;
    if (std::size_t i = Index(role); i < layout.size()) {
      c.local_stag = reg[i].stag;
      c.local_tagged_offset = reg[i].base_tagged_offset + offset;
    }
    c.remote_stag = 0x5157e100;
    return PlanCommand(c, supported, layout, reg);
  }
};

TEST(AgentCommands, PlansNameTheConnectionsOwnMemory) {
  Planner p;
  CommandPlan w = p.Plan(CommandType::kRdmaWrite, "rw", 0x100, 0x200);
  EXPECT_EQ(w.refuse, CompletionStatus::kSuccess);
  EXPECT_EQ(w.op, VerbsOp::kRdmaWrite);
  EXPECT_EQ(w.region, p.Index("rw"));
  EXPECT_EQ(w.offset, 0x100u);
  EXPECT_FALSE(w.takes_msn);
  EXPECT_EQ(p.Plan(CommandType::kRdmaRead, "rw", 0x6000 - 16, 16).op, VerbsOp::kRdmaRead);
  // Past the region's end, another PD's STag, a deregistered one: local
  // error, nothing posted (§7.2).
  EXPECT_EQ(p.Plan(CommandType::kRdmaRead, "rw", 0x6000 - 16, 17).refuse, CompletionStatus::kLocalError);
  EXPECT_EQ(p.Plan(CommandType::kRdmaWrite, "foreign", 0, 16).refuse, CompletionStatus::kLocalError);
  EXPECT_EQ(p.Plan(CommandType::kSend, "deregistered", 0, 16).refuse, CompletionStatus::kLocalError);
  EXPECT_EQ(p.Plan(CommandType::kSend, "none", 0, 16).refuse, CompletionStatus::kLocalError);
  // A zero-length Send touches no memory.
  CommandPlan empty = p.Plan(CommandType::kSend, "none", 0, 0);
  EXPECT_EQ(empty.refuse, CompletionStatus::kSuccess);
  EXPECT_FALSE(empty.region);
}

TEST(AgentCommands, SendsTakeAnMsnAndCarrySeAndInvalidate) {
  Planner p;
  CommandPlan s = p.Plan(CommandType::kSend, "ro", 0, 8);
  EXPECT_TRUE(s.takes_msn);
  EXPECT_FALSE(s.solicited);
  CommandPlan se = p.Plan(CommandType::kSendWithSe, "ro", 0, 8);
  EXPECT_EQ(se.op, VerbsOp::kSend);
  EXPECT_TRUE(se.solicited);
  CommandPlan inv = p.Plan(CommandType::kSendWithSeAndInvalidate, "ro", 0, 8);
  EXPECT_EQ(inv.op, VerbsOp::kSendWithInvalidate);
  EXPECT_TRUE(inv.solicited);
  EXPECT_TRUE(inv.takes_msn);
}

TEST(AgentCommands, WhatVerbsCannotExpressIsNotSupported) {
  Planner p;
  EXPECT_EQ(p.Plan(CommandType::kImmediateData, "none", 0, 0).refuse, CompletionStatus::kNotSupported);
  EXPECT_EQ(p.Plan(CommandType::kFlush, "none", 0, 0).refuse, CompletionStatus::kNotSupported);
  EXPECT_EQ(p.Plan(CommandType::kAtomicFetchAdd, "none", 0, 0).refuse, CompletionStatus::kNotSupported);
  p.supported = SupportedCommandMask(true);
  wire::Command fa;
  fa.type = CommandType::kAtomicFetchAdd;
  fa.operand = {5, 0, 0, 0};
  EXPECT_EQ(PlanCommand(fa, p.supported, p.layout, p.reg).refuse, CompletionStatus::kSuccess);
  EXPECT_EQ(PlanCommand(fa, p.supported, p.layout, p.reg).op, VerbsOp::kFetchAdd);
  fa.operand[1] = 0x80000000;  // an Add Mask: carry boundaries verbs lacks
  EXPECT_EQ(PlanCommand(fa, p.supported, p.layout, p.reg).refuse, CompletionStatus::kNotSupported);
  wire::Command cs;
  cs.type = CommandType::kAtomicCmpSwap;
  cs.operand = {1, ~uint64_t{0}, 2, ~uint64_t{0}};
  EXPECT_EQ(PlanCommand(cs, p.supported, p.layout, p.reg).refuse, CompletionStatus::kSuccess);
  cs.operand[3] = 0xFFFF;
  EXPECT_EQ(PlanCommand(cs, p.supported, p.layout, p.reg).refuse, CompletionStatus::kNotSupported);
  EXPECT_EQ(AtomicOriginalOnWire(0x0102030405060708ull), (wire::Bytes{1, 2, 3, 4, 5, 6, 7, 8}));
}

wire::Command Cmd(uint32_t id, CommandType t) {
  wire::Command c;
  c.command_id = id;
  c.type = t;
  return c;
}

TEST(AgentCommands, CompletionsReportInCommandIdOrder) {
  CommandTracker t;
  uint64_t a = t.Add(Cmd(1, CommandType::kRdmaRead));
  uint64_t b = t.Add(Cmd(2, CommandType::kFlush));
  uint64_t c = t.Add(Cmd(3, CommandType::kSend));
  t.Finish(b, CompletionStatus::kNotSupported, 0, {});  // refused at once, but after command 1
  t.Finish(c, CompletionStatus::kSuccess, 0, {1, 2});
  EXPECT_TRUE(t.TakeReady().empty());
  t.Finish(a, CompletionStatus::kSuccess, 0, {9, 9, 9});
  auto done = t.TakeReady();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].completion.command_id, 1u);
  EXPECT_EQ(done[0].moved, (wire::Bytes{9, 9, 9}));
  EXPECT_EQ(done[1].completion.status, CompletionStatus::kNotSupported);
  EXPECT_EQ(done[2].completion.command_id, 3u);
  EXPECT_EQ(t.outstanding(), 0u);
  EXPECT_EQ(t.counts().completed, 2);
  EXPECT_EQ(t.counts().failed, 1);
  EXPECT_EQ(t.counts().failed_command_id, 2u);
}

TEST(AgentCommands, TheStreamEndingFlushesWhatNeverCompleted) {
  CommandTracker t;
  uint64_t a = t.Add(Cmd(1, CommandType::kRdmaWrite));
  uint64_t b = t.Add(Cmd(2, CommandType::kRdmaRead));
  t.Add(Cmd(3, CommandType::kRdmaRead));
  t.Finish(a, CompletionStatus::kSuccess, 0, {});
  t.Finish(b, CompletionStatus::kRemoteError, 12, {});  // e.g. the Read's Terminate
  t.Settle();
  EXPECT_EQ(t.counts().completed, 1);
  EXPECT_EQ(t.counts().failed, 1);
  EXPECT_EQ(t.counts().failed_command_id, 2u);
  EXPECT_EQ(t.counts().flushed, 1);
  EXPECT_EQ(StatusFor(WcClass::kFlushed), CompletionStatus::kFlushed);
  EXPECT_EQ(StatusFor(WcClass::kRemote), CompletionStatus::kRemoteError);
}

TEST(AgentCommands, EventSequenceSkipsTheMsnsOfCommandedSends) {
  ConnectionEvents ev;
  ev.TakeMsn();  // a commanded Send went out with MSN 1
  CommandTracker t;
  const wire::Bytes moved = {'h', 'e', 'l', 'l', 'o'};
  t.Finish(t.Add(Cmd(7, CommandType::kRdmaRead)), CompletionStatus::kSuccess, 0, moved);
  auto done = t.TakeReady();
  ASSERT_EQ(done.size(), 1u);
  auto rec = ev.OnCommandDone(done[0]);
  ASSERT_TRUE(rec);
  auto d = wire::DecodeEventRecord(*rec);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->sequence, 2u);
  EXPECT_EQ(*d, wire::MakeCommandCompletedEvent(2, done[0].completion, moved));
  EXPECT_EQ(ev.events_sent(), 1u);
  ev.Stop();
  EXPECT_FALSE(ev.OnCommandDone(done[0]));
  // A Command Record is recognised by its magic and a clean decode only.
  wire::Bytes record;
  ASSERT_TRUE(wire::EncodeCommandRecord({1, 1, 72, {Cmd(1, CommandType::kSend)}}, record).ok());
  EXPECT_TRUE(AsCommandRecord(record));
  record.push_back(0);
  EXPECT_FALSE(AsCommandRecord(record));
}

}  // namespace
}  // namespace rdmapct::agent

namespace rdmapct::agent {
namespace {

TEST(AgentConnect, DirectiveFoundWhereverTheStackLeavesIt) {
  wire::ConnectDirective d;
  d.flags = wire::kDirectiveEnhanced | wire::kDirectiveKeepMemory;
  d.ird = 4;
  d.ord = 2;
  d.case_hash = 0xfeedf00d;
  wire::Bytes pd;
  wire::EncodeConnectDirective(d, pd);
  EXPECT_EQ(FindConnectDirective(pd), d);
  wire::Bytes with_word = {0x80, 0x04, 0x00, 0x04};
  with_word.insert(with_word.end(), pd.begin(), pd.end());
  EXPECT_EQ(FindConnectDirective(with_word), d);
  // A stack that took the first 4 octets for an RFC 6581 word.
  EXPECT_EQ(FindConnectDirective(wire::ByteSpan(pd).subspan(4)), d);
  // An ordinary reject.
  EXPECT_FALSE(FindConnectDirective(wire::Bytes{}));
  EXPECT_FALSE(FindConnectDirective(wire::Bytes(16, 0x41)));
  EXPECT_FALSE(FindConnectDirective(wire::Bytes(12, 0x41)));
}

TEST(AgentConnect, DirectiveSetsIrdOrdAndKeepMemoryAndNamesTheRest) {
  ConnectPlan none = PlanConnect(std::nullopt, 128, 128);
  EXPECT_EQ(none.offer.ird, 16);
  EXPECT_EQ(none.offer.ord, 16);
  EXPECT_FALSE(none.keep_memory);
  EXPECT_TRUE(none.cannot.empty());
  EXPECT_EQ(PlanConnect(std::nullopt, 8, 4).offer.ord, 4);  // the device caps both

  wire::ConnectDirective d;
  d.flags = wire::kDirectiveEnhanced | wire::kDirectiveKeepMemory | wire::kDirectivePeerToPeer |
            wire::kDirectiveReadRtr | wire::kDirectiveCrc;
  d.ird = 3;
  d.ord = 1;
  ConnectPlan p = PlanConnect(d, 128, 128);
  EXPECT_EQ(p.offer.ird, 3);
  EXPECT_EQ(p.offer.ord, 1);
  EXPECT_TRUE(p.keep_memory);
  EXPECT_EQ(p.cannot, (std::vector<std::string>{"C=1", "RFC 6581", "peer-to-peer", "Read RTR"}));
  d.flags = wire::kDirectiveKeepMemory;  // IRD/ORD only with the enhanced flag
  EXPECT_EQ(PlanConnect(d, 128, 128).offer.ird, 16);
}

}  // namespace
}  // namespace rdmapct::agent
