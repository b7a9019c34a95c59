// Tests of the test-ULP convention 1.1 codec (docs/target-convention.md §7):
// Command Records, Command Completed events, the Suite Request extension and
// the Advertisement's Commands block. Known-answer octets are written by hand
// from the layout tables of the document.
#include "reference/wire/ulp_convention_commands.h"

#include <gtest/gtest.h>

#include "reference/wire/crc32c.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::wire {
namespace {

// docs §7.2 example: an RDMA Read of 256 octets from the suite's region into
// the target's rw region, then a Send with Invalidate of 16 octets.
CommandRecord ExampleRecord() {
  CommandRecord rec;
  Command read;
  read.type = CommandType::kRdmaRead;
  read.command_id = 1;
  read.local_stag = 0x00001a01;
  read.length = 256;
  read.local_tagged_offset = 0x00007f3a12340000;
  read.remote_stag = 0x5157e100;
  read.remote_tagged_offset = 0x0000530000000000;
  Command send;
  send.type = CommandType::kSendWithInvalidate;
  send.command_id = 2;
  send.local_stag = 0x00001a01;
  send.length = 16;
  send.local_tagged_offset = 0x00007f3a12340100;
  send.remote_stag = 0x5157e100;
  rec.commands = {read, send};
  return rec;
}

Bytes ExampleBytes() {
  Bytes b = {0x52, 0x50, 0x43, 0x43, 0x01, 0x01, 0x02, 0x48};         // "RPCC" 1.1, 2 commands of 72
  const Bytes e1 = {0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,   // RDMA Read, id 1
                    0x00, 0x00, 0x1a, 0x01, 0x00, 0x00, 0x01, 0x00,   // Local STag, Length 256
                    0x00, 0x00, 0x7f, 0x3a, 0x12, 0x34, 0x00, 0x00,   // Local TO
                    0x51, 0x57, 0xe1, 0x00, 0x00, 0x00, 0x00, 0x00,   // Remote STag, Modifier
                    0x00, 0x00, 0x53, 0x00, 0x00, 0x00, 0x00, 0x00};  // Remote TO
  const Bytes e2 = {0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,   // Send with Invalidate, id 2
                    0x00, 0x00, 0x1a, 0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x7f, 0x3a,
                    0x12, 0x34, 0x01, 0x00, 0x51, 0x57, 0xe1, 0x00, 0x00, 0x00, 0x00, 0x00,  // STag to invalidate
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  for (const Bytes* e : {&e1, &e2}) {
    b.insert(b.end(), e->begin(), e->end());
    b.insert(b.end(), 32, 0x00);  // Operands 1-4
  }
  return b;
}

void ExpectError(const DecodeError& e, DecodeErrorKind kind, const std::string& field, std::size_t offset) {
  EXPECT_EQ(e.kind, kind) << e.Describe();
  EXPECT_EQ(std::string(e.field), field) << e.Describe();
  EXPECT_EQ(e.offset, offset) << e.Describe();
}

TEST(UlpConventionCommandRecord, ExampleEncodesToKnownBytes) {
  Bytes out;
  ASSERT_TRUE(EncodeCommandRecord(ExampleRecord(), out).ok());
  EXPECT_EQ(out, ExampleBytes());
  Result<CommandRecord> r = DecodeCommandRecord(out);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, ExampleRecord());
  EXPECT_TRUE(HasCommandRecordMagic(out));
}

TEST(UlpConventionCommandRecord, EveryTypeRoundTrips) {
  for (uint8_t t = 1; t <= kMaxCommandType; ++t) {
    CommandRecord rec;
    Command c;
    c.type = static_cast<CommandType>(t);
    c.command_id = t;
    const uint16_t uses = CommandFieldsUsed(c.type);
    if (uses & kUsesLocal) c.local_stag = 0x1a01, c.local_tagged_offset = 0x40;
    if (uses & kUsesLength) c.length = 8;
    if (uses & kUsesRemoteStag) c.remote_stag = 0x5157e100;
    if (uses & kUsesRemoteTo) c.remote_tagged_offset = 0x5300;
    if (uses & kUsesModifier) c.modifier = 1;
    for (int k = 0; k < 4; ++k) {
      if (uses & (kUsesOperand1 << k)) c.operand[k] = 0x0102030405060708ull + k;
    }
    rec.commands = {c};
    Bytes b;
    ASSERT_TRUE(EncodeCommandRecord(rec, b).ok());
    Result<CommandRecord> r = DecodeCommandRecord(b);
    ASSERT_TRUE(r.ok()) << CommandTypeName(c.type) << ": " << r.error().Describe();
    EXPECT_EQ(*r, rec);
    EXPECT_NE(CommandTypeName(c.type), "unknown command");
  }
}

// docs §7.2 / §7.5: the message each Command Type makes the target post,
// written from the document's table (not from the codec's).
TEST(UlpConventionCommandRecord, EveryTypeNamesTheMessageItPosts) {
  struct Row {
    CommandType type;
    CommandKind kind;
    Opcode opcode;
    bool invalidates;
  };
  const Row rows[] = {
      {CommandType::kRdmaWrite, CommandKind::kRdmaWrite, Opcode::kRdmaWrite, false},
      {CommandType::kRdmaRead, CommandKind::kRdmaRead, Opcode::kRdmaReadRequest, false},
      {CommandType::kSend, CommandKind::kSend, Opcode::kSend, false},
      {CommandType::kSendWithSe, CommandKind::kSend, Opcode::kSendWithSe, false},
      {CommandType::kSendWithInvalidate, CommandKind::kSend, Opcode::kSendWithInvalidate, true},
      {CommandType::kSendWithSeAndInvalidate, CommandKind::kSend, Opcode::kSendWithSeAndInvalidate, true},
      {CommandType::kImmediateData, CommandKind::kImmediateData, Opcode::kImmediateData, false},
      {CommandType::kImmediateDataWithSe, CommandKind::kImmediateData, Opcode::kImmediateDataWithSe, false},
      {CommandType::kAtomicFetchAdd, CommandKind::kAtomic, Opcode::kAtomicRequest, false},
      {CommandType::kAtomicCmpSwap, CommandKind::kAtomic, Opcode::kAtomicRequest, false},
      {CommandType::kFlush, CommandKind::kCommit, Opcode::kFlushRequest, false},
      {CommandType::kVerify, CommandKind::kCommit, Opcode::kVerifyRequest, false},
      {CommandType::kAtomicWrite, CommandKind::kCommit, Opcode::kAtomicWriteRequest, false},
  };
  static_assert(std::size(rows) == kMaxCommandType);
  for (const Row& r : rows) {
    SCOPED_TRACE(std::string(CommandTypeName(r.type)));
    EXPECT_EQ(CommandKindOf(r.type), r.kind);
    EXPECT_EQ(CommandOpcode(r.type), r.opcode);
    EXPECT_EQ(CommandInvalidates(r.type), r.invalidates);
  }
  for (uint8_t unknown : {uint8_t{0}, uint8_t{kMaxCommandType + 1}}) {
    EXPECT_EQ(CommandKindOf(static_cast<CommandType>(unknown)), CommandKind::kUnknown);
    EXPECT_EQ(CommandOpcode(static_cast<CommandType>(unknown)), std::nullopt);
    EXPECT_FALSE(CommandInvalidates(static_cast<CommandType>(unknown)));
  }
}

TEST(UlpConventionCommandRecord, Malformed) {
  Bytes b = ExampleBytes();
  b[0] = 0x51;
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kInvalidValue, "Command Magic", 0);
  b = ExampleBytes();
  b[4] = 2;
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kInvalidValue, "Major Version", 4);
  b = ExampleBytes();
  b[5] = 0;  // records exist since 1.1
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kInvalidValue, "Minor Version", 5);
  b = ExampleBytes();
  b[6] = 0;
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kInvalidValue, "Command Count", 6);
  b[6] = 3;
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kTruncated, "Command Entry", 8 + 2 * 72);
  b = ExampleBytes();
  b[7] = 0x50;  // longer entries only from a newer minor
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kInvalidValue, "Command Entry Length", 7);
  b = ExampleBytes();
  b[8] = 14;
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kInvalidValue, "Command Type", 8);
  b = ExampleBytes();
  b[9] = 0x01;
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kReservedNonZero, "Command Flags", 9);
  b = ExampleBytes();
  b[11] = 0x01;
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kReservedNonZero, "Reserved", 10);
  b = ExampleBytes();
  b[8 + 72 + 40] = 0x01;  // a Send uses no Operand 1
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kInvalidValue, "Operand 1", 8 + 72 + 40);
  b = ExampleBytes();
  b[8 + 72 + 31] = 0x01;  // nor a Modifier
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kInvalidValue, "Modifier", 8 + 72 + 28);
  b = ExampleBytes();
  b.push_back(0);
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kLengthMismatch, "Command Record", 8 + 2 * 72);
  b = ExampleBytes();
  b.resize(7);
  ExpectError(DecodeCommandRecord(b).error(), DecodeErrorKind::kTruncated, "Command Entry Length", 7);
  // Offsets are reported against the caller's buffer.
  b = ExampleBytes();
  b[8] = 0;
  ExpectError(DecodeCommandRecord(b, 100).error(), DecodeErrorKind::kInvalidValue, "Command Type", 108);
}

TEST(UlpConventionCommandRecord, NewerMinorMayExtend) {
  Bytes b = ExampleBytes();
  b[5] = kUlpConventionKnownMinorVersion + 1;
  b[9] = 0x80;            // a flag a newer minor may define
  b[8 + 72 + 40] = 0x5A;  // a field 1.2 may use
  b.push_back(0xEE);
  Result<CommandRecord> r = DecodeCommandRecord(b);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->commands.size(), 2u);
  EXPECT_EQ(r->commands[0].flags, 0x80);
}

TEST(UlpConventionCommandRecord, EncoderRefusesWhatNoTargetCouldRead) {
  Bytes b;
  EXPECT_FALSE(EncodeCommandRecord(CommandRecord{}, b).ok());
  CommandRecord rec = ExampleRecord();
  rec.entry_length = 70;
  EXPECT_FALSE(EncodeCommandRecord(rec, b).ok());
}

// ---------------------------------------------------------------------------
// Command Completed events (docs §7.3)

TEST(UlpConventionCompletion, KnownBytesAndRoundTrip) {
  const Bytes moved = {'h', 'e', 'l', 'l', 'o'};
  const EventRecord ev =
      MakeCommandCompletedEvent(3, Completion{7, CommandType::kRdmaRead, CompletionStatus::kSuccess, 0}, moved);
  Bytes b;
  EncodeEventRecord(ev, b);
  const Bytes want = {0x52, 0x50, 0x43, 0x45, 0x01, 0x01, 0x04, 0x00,  // "RPCE" 1.1 type 4
                      0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x05,  // sequence 3, length 5
                      0x00, 0x00, 0x00, 0x07,                          // Command Id 7
                      0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // success, RDMA Read
                      0x9a, 0x71, 0xbb, 0x4c, 0x00, 0x05, 0x00, 0x00,  // CRC-32C("hello"), prefix 5
                      'h',  'e',  'l',  'l',  'o'};
  EXPECT_EQ(b, want);
  Result<EventRecord> r = DecodeEventRecord(b);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, ev);
  const auto c = CompletionFromValue(r->invalidated_stag, r->value);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->command_id, 7u);
  EXPECT_EQ(c->type, CommandType::kRdmaRead);
}

TEST(UlpConventionCompletion, FieldRules) {
  const Completion failed{9, CommandType::kRdmaWrite, CompletionStatus::kRemoteError, 10};
  Bytes b;
  EncodeEventRecord(MakeCommandCompletedEvent(1, failed, {}), b);
  ASSERT_TRUE(DecodeEventRecord(b).ok());
  Bytes bad = b;
  bad[5] = 0;  // type 4 needs 1.1
  ExpectError(DecodeEventRecord(bad).error(), DecodeErrorKind::kInvalidValue, "Event Type", 6);
  bad = b;
  bad[7] = 0x01;
  ExpectError(DecodeEventRecord(bad).error(), DecodeErrorKind::kInvalidValue, "Event Flags", 7);
  bad = b;
  bad[20] = 5;  // status 5
  ExpectError(DecodeEventRecord(bad).error(), DecodeErrorKind::kInvalidValue, "Value", 20);
  bad = b;
  bad[21] = 14;  // no Command Type 14
  ExpectError(DecodeEventRecord(bad).error(), DecodeErrorKind::kInvalidValue, "Value", 20);
  bad = b;
  bad[23] = 1;  // bits 47-32
  ExpectError(DecodeEventRecord(bad).error(), DecodeErrorKind::kInvalidValue, "Value", 20);
  // A failed command moved nothing.
  Bytes with_data;
  EventRecord ev = MakeCommandCompletedEvent(1, failed, Bytes{1, 2});
  EncodeEventRecord(ev, with_data);
  ExpectError(DecodeEventRecord(with_data).error(), DecodeErrorKind::kInvalidValue, "Delivered Length", 12);
  // The digest of a complete prefix is checked.
  Bytes ok;
  EncodeEventRecord(
      MakeCommandCompletedEvent(1, Completion{1, CommandType::kSend, CompletionStatus::kSuccess, 0}, Bytes{1, 2}), ok);
  ok[31] ^= 1;
  ExpectError(DecodeEventRecord(ok).error(), DecodeErrorKind::kCrcMismatch, "Digest", 28);
}

// ---------------------------------------------------------------------------
// Suite Request extension (docs §2.4) and Commands block (docs §7.4)

TEST(UlpConventionSuiteRequestExtension, KnownBytesAndRoundTrip) {
  SuiteRequestExtension ext;
  ext.suite_ird = 4;
  ext.regions = {{0x5157e100, 0x0000530000000000, 0x10000, 0x1F}};
  Bytes b;
  EncodeSuiteRequestExtension(ext, b);
  const Bytes want = {0x00, 0x04, 0x01, 0x18,                           // IRD 4, 1 region of 24
                      0x51, 0x57, 0xe1, 0x00, 0x00, 0x00, 0x53, 0x00,   // STag, Base TO
                      0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,   // Length 64 KiB
                      0x1F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};  // Access; 7 reserved
  EXPECT_EQ(b, want);
  Result<SuiteRequestExtension> r = DecodeSuiteRequestExtension(b);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, ext);
  b.resize(20);
  ExpectError(DecodeSuiteRequestExtension(b, 12).error(), DecodeErrorKind::kTruncated, "Access", 12 + 4 + 16);
  b = want;
  b[3] = 20;
  ExpectError(DecodeSuiteRequestExtension(b).error(), DecodeErrorKind::kInvalidValue, "Suite Region Entry Length", 3);
  b = want;
  for (int i = 8; i < 16; ++i) b[i] = 0xFF;  // TO range wraps 2^64
  ExpectError(DecodeSuiteRequestExtension(b).error(), DecodeErrorKind::kInvalidValue, "Length", 16);
  // Two regions with an entry stride of 255: the second would start past the
  // end, so the truncation is reported where the data ends (the campaign's
  // fuzz_ulp_convention finding, corpus/regressions/fuzz_ulp_convention).
  b = want;
  b[2] = 2;
  b[3] = 255;
  ExpectError(DecodeSuiteRequestExtension(b, 12).error(), DecodeErrorKind::kTruncated, "STag", 12 + want.size());
}

TEST(UlpConventionCommandsBlock, AdvertisementCarriesIt) {
  Advertisement adv;
  adv.minor_version = 1;
  adv.ird = 4;
  adv.regions = {{0x1a01, 0x1000, 0x1000, 0x03, 0x00, 1, 0}};
  adv.commands = CommandCapabilities{0x0000007E, 5, 2, 1, 3};
  Bytes b;
  ASSERT_TRUE(EncodeAdvertisement(adv, b).ok());
  ASSERT_EQ(b.size(), 24u + 24 + 16);
  EXPECT_EQ(b[7], 0x20);  // flag 0x0020
  const Bytes block = {0x00, 0x00, 0x00, 0x7E, 0x00, 0x00, 0x00, 0x05, 0x00, 0x02, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00};
  EXPECT_EQ(Bytes(b.end() - 16, b.end()), block);
  Result<Advertisement> r = DecodeAdvertisement(b);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, adv);
  EXPECT_TRUE(r->commands->Supports(CommandType::kRdmaRead));
  EXPECT_FALSE(r->commands->Supports(CommandType::kImmediateData));

  Bytes bad = b;
  bad[5] = 0;  // 1.0 reserves flag 0x0020
  ExpectError(DecodeAdvertisement(bad).error(), DecodeErrorKind::kReservedNonZero, "Flags", 6);
  bad = b;
  bad[24 + 24 + 3] = 0x01;  // bit 0 names no Command Type
  ExpectError(DecodeAdvertisement(bad).error(), DecodeErrorKind::kReservedNonZero, "Supported Commands", 48);
  bad = b;
  bad.pop_back();
  ExpectError(DecodeAdvertisement(bad).error(), DecodeErrorKind::kTruncated, "Reserved", 48 + 14);
  adv.minor_version = 0;  // a 1.0 Advertisement cannot carry the block
  Bytes refused;
  EXPECT_FALSE(EncodeAdvertisement(adv, refused).ok());
}

}  // namespace
}  // namespace rdmapct::wire
