// The reference target's test-ULP 1.1 command records (docs/target-convention.md
// §7), driven octet by octet: the ORD limit from the Suite IRD, completions in
// Command Id order and only after the Read Response, the Commands block after
// a Terminate, and a 1.0 target that treats a Command Record as a plain Send.
#include <gtest/gtest.h>

#include "reference/wire/crc32c.h"
#include "targets/reference_target.h"
#include "tests/targets/target_test_util.h"

namespace rdmapct::targets {
namespace {

using testing::Initiator;
using testing::InitiatorOptions;
using wire::Bytes;
using wire::Opcode;

constexpr uint32_t kSuiteStag = 0x5157e100;
constexpr uint64_t kSuiteBase = 0x0000530000000000;

InitiatorOptions WithSuiteIrd(uint16_t ird) {
  InitiatorOptions o;
  o.suite_request = wire::SuiteRequest{1, 1, 0, 0};
  o.extension = wire::SuiteRequestExtension{ird, {{kSuiteStag, kSuiteBase, 65536, 0x1F}}};
  return o;
}

Bytes Record(const std::vector<wire::Command>& commands) {
  wire::CommandRecord rec;
  rec.commands = commands;
  Bytes b;
  EXPECT_TRUE(wire::EncodeCommandRecord(rec, b).ok());
  return b;
}

wire::Command Read(uint32_t id, const wire::AdvertisedRegion& sink, uint64_t offset, uint32_t length) {
  wire::Command c;
  c.type = wire::CommandType::kRdmaRead;
  c.command_id = id;
  c.local_stag = sink.stag;
  c.local_tagged_offset = sink.base_tagged_offset + offset;
  c.length = length;
  c.remote_stag = kSuiteStag;
  c.remote_tagged_offset = kSuiteBase + offset;
  return c;
}

// REQ R5040-6.1-09 R5040-5.5-R19 R5040-5.5-R15b
TEST(ReferenceTargetCommands, ReadsStayWithinTheSuiteIrdAndCompleteAfterTheirResponse) {
  ReferenceTarget target;
  Initiator init(target, WithSuiteIrd(1));
  ASSERT_TRUE(init.Start());
  ASSERT_TRUE(init.advertisement().commands.has_value());
  EXPECT_EQ(init.advertisement().ord, 1);
  EXPECT_TRUE(init.advertisement().commands->Supports(wire::CommandType::kRdmaRead));
  const wire::AdvertisedRegion& rw = init.Region(wire::RegionRole::kReadWrite);
  init.Send(wire::MakeSend(Opcode::kSend, 1, Record({Read(1, rw, 0, 8), Read(2, rw, 64, 8)})));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 1u) << "one Read Request: the second waits for ORD";
  EXPECT_EQ(v[0].opcode(), Opcode::kRdmaReadRequest);
  EXPECT_EQ(v[0].ddp.header.msn, 1u);

  const Bytes data = {1, 2, 3, 4, 5, 6, 7, 8};
  init.Send(wire::MakeReadResponse(rw.stag, rw.base_tagged_offset, data));
  v = init.Decoded();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[1].opcode(), Opcode::kRdmaReadRequest);
  EXPECT_EQ(v[1].ddp.header.msn, 2u);
  auto done = wire::DecodeEventRecord(v[2].ulp_payload);
  ASSERT_TRUE(done.ok()) << done.error().Describe();
  EXPECT_EQ(done->type, wire::EventType::kCommandCompleted);
  EXPECT_EQ(done->invalidated_stag, 1u);  // the Command Id
  EXPECT_EQ(done->digest, wire::Crc32c(data));
  EXPECT_EQ(done->sequence, v[2].ddp.header.msn);
  EXPECT_EQ(Bytes(init.reference().PeekMemory(rw.stag, rw.base_tagged_offset, 8).begin(),
                  init.reference().PeekMemory(rw.stag, rw.base_tagged_offset, 8).end()),
            data);
}

// REQ R5040-6.2.1-03
TEST(ReferenceTargetCommands, ATerminateWithAReadOutstandingIsReportedInTheNextCommandsBlock) {
  ReferenceTarget target;
  {
    Initiator init(target, WithSuiteIrd(4));
    ASSERT_TRUE(init.Start());
    const wire::AdvertisedRegion& rw = init.Region(wire::RegionRole::kReadWrite);
    init.Send(wire::MakeSend(Opcode::kSend, 1, Record({Read(7, rw, 0, 8)})));
    wire::TerminateHeader t;
    t.code = {0, 2, 0xFF};
    init.Send(wire::MakeTerminate(1, t));
    EXPECT_TRUE(init.reference().wants_close());
  }
  Initiator next(target, WithSuiteIrd(4));
  ASSERT_TRUE(next.Start());
  ASSERT_TRUE(next.advertisement().commands.has_value());
  const wire::CommandCapabilities& c = *next.advertisement().commands;
  EXPECT_EQ(c.failed, 1u);
  EXPECT_EQ(c.failed_command_id, 7u);
  EXPECT_EQ(c.completed, 0u);
  EXPECT_EQ(c.flushed, 0u);
}

TEST(ReferenceTargetCommands, UnsupportedAndLocallyInvalidCommandsCompleteWithoutTraffic) {
  ReferenceTarget target;  // rfc5040: no Immediate Data
  Initiator init(target, WithSuiteIrd(4));
  ASSERT_TRUE(init.Start());
  wire::Command imm;
  imm.type = wire::CommandType::kImmediateData;
  imm.command_id = 1;
  wire::Command bad_local = Read(2, init.Region(wire::RegionRole::kReadWrite), 0, 8);
  bad_local.local_stag = 0xdead0000;
  init.Send(wire::MakeSend(Opcode::kSend, 1, Record({imm, bad_local})));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    auto rec = wire::DecodeEventRecord(v[i].ulp_payload);
    ASSERT_TRUE(rec.ok());
    auto c = wire::CompletionFromValue(rec->invalidated_stag, rec->value);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->command_id, uint32_t(i + 1));
    EXPECT_EQ(c->status, i == 0 ? wire::CompletionStatus::kNotSupported : wire::CompletionStatus::kLocalError);
  }
}

TEST(ReferenceTargetCommands, AVersion10TargetDeliversACommandRecordAsAPlainSend) {
  ReferenceTarget target(ReferenceTargetConfig{.commands = false, .concurrent_connections = false});
  Initiator init(target, WithSuiteIrd(4));
  ASSERT_TRUE(init.Start());
  EXPECT_FALSE(init.advertisement().commands.has_value());
  EXPECT_EQ(init.advertisement().minor_version, 0);
  const Bytes record = Record({Read(1, init.Region(wire::RegionRole::kReadWrite), 0, 8)});
  init.Send(wire::MakeSend(Opcode::kSend, 1, record));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 1u);
  auto rec = wire::DecodeEventRecord(v[0].ulp_payload);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->type, wire::EventType::kSendDelivered);
  EXPECT_EQ(rec->length, record.size());
}

}  // namespace
}  // namespace rdmapct::targets
