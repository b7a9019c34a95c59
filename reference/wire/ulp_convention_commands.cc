#include "reference/wire/ulp_convention_commands.h"

#include <algorithm>

#include "reference/wire/field_table.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::wire {
namespace {

// Fixed layouts (field_table.h): names and offsets are those of the tables
// in docs/target-convention.md §7.

// Command Record header (§7.2).
constexpr LayoutField kCmdMagic{"Command Magic", 0, 4};
constexpr LayoutField kCmdMajor{"Major Version", 4, 1};
constexpr LayoutField kCmdMinor{"Minor Version", 5, 1};
constexpr LayoutField kCmdCount{"Command Count", 6, 1};
constexpr LayoutField kCmdEntryLength{"Command Entry Length", 7, 1};
constexpr std::array<LayoutField, 5> kCmdHeaderFields{kCmdMagic, kCmdMajor, kCmdMinor, kCmdCount, kCmdEntryLength};

// Command entry (§7.2).
constexpr LayoutField kEntType{"Command Type", 0, 1};
constexpr LayoutField kEntFlags{"Command Flags", 1, 1};
constexpr LayoutField kEntReserved{"Reserved", 2, 2};
constexpr LayoutField kEntId{"Command Id", 4, 4};
constexpr LayoutField kEntLocalStag{"Local STag", 8, 4};
constexpr LayoutField kEntLength{"Length", 12, 4};
constexpr LayoutField kEntLocalTo{"Local Tagged Offset", 16, 8};
constexpr LayoutField kEntRemoteStag{"Remote STag", 24, 4};
constexpr LayoutField kEntModifier{"Modifier", 28, 4};
constexpr LayoutField kEntRemoteTo{"Remote Tagged Offset", 32, 8};
constexpr LayoutField kEntOperand[4] = {
    {"Operand 1", 40, 8}, {"Operand 2", 48, 8}, {"Operand 3", 56, 8}, {"Operand 4", 64, 8}};

// Suite Request extension (§2.4) and its region entries (the layout of §3.2).
constexpr LayoutField kExtIrd{"Suite IRD", 0, 2};
constexpr LayoutField kExtCount{"Suite Region Count", 2, 1};
constexpr LayoutField kExtEntryLength{"Suite Region Entry Length", 3, 1};
constexpr LayoutField kSrStag{"STag", 0, 4};
constexpr LayoutField kSrBaseTo{"Base Tagged Offset", 4, 8};
constexpr LayoutField kSrLength{"Length", 12, 4};
constexpr LayoutField kSrAccess{"Access", 16, 1};
constexpr LayoutField kSrRest{"Reserved", 17, 7};

// Commands block (§7.4).
constexpr LayoutField kCbSupported{"Supported Commands", 0, 4};
constexpr LayoutField kCbFailedId{"Failed Command Id", 4, 4};
constexpr LayoutField kCbCompleted{"Commands Completed", 8, 2};
constexpr LayoutField kCbFailed{"Commands Failed", 10, 2};
constexpr LayoutField kCbFlushed{"Commands Flushed", 12, 2};
constexpr LayoutField kCbReserved{"Reserved", 14, 2};

// The Command Type table (docs §7.2): one row per type, in type order.
struct TypeRow {
  CommandType type;
  const char* name;
  uint16_t uses;
  CommandKind kind;
  Opcode opcode;  // the message the command posts
};

constexpr uint16_t kLocalData = kUsesLocal | kUsesLength;
constexpr uint16_t kRemote = kUsesRemoteStag | kUsesRemoteTo;
constexpr uint16_t kOperands2 = kUsesOperand1 | kUsesOperand1 << 1;
constexpr uint16_t kOperands4 = kOperands2 | kUsesOperand1 << 2 | kUsesOperand1 << 3;
using K = CommandKind;
constexpr TypeRow kTypes[kMaxCommandType] = {
    {CommandType::kRdmaWrite, "RDMA Write", kLocalData | kRemote, K::kRdmaWrite, Opcode::kRdmaWrite},
    {CommandType::kRdmaRead, "RDMA Read", kLocalData | kRemote, K::kRdmaRead, Opcode::kRdmaReadRequest},
    {CommandType::kSend, "Send", kLocalData, K::kSend, Opcode::kSend},
    {CommandType::kSendWithSe, "Send with SE", kLocalData, K::kSend, Opcode::kSendWithSe},
    {CommandType::kSendWithInvalidate, "Send with Invalidate", kLocalData | kUsesRemoteStag, K::kSend,
     Opcode::kSendWithInvalidate},
    {CommandType::kSendWithSeAndInvalidate, "Send with SE and Invalidate", kLocalData | kUsesRemoteStag, K::kSend,
     Opcode::kSendWithSeAndInvalidate},
    {CommandType::kImmediateData, "Immediate Data", kUsesOperand1, K::kImmediateData, Opcode::kImmediateData},
    {CommandType::kImmediateDataWithSe, "Immediate Data with SE", kUsesOperand1, K::kImmediateData,
     Opcode::kImmediateDataWithSe},
    {CommandType::kAtomicFetchAdd, "Atomic FetchAdd", kRemote | kOperands2, K::kAtomic, Opcode::kAtomicRequest},
    {CommandType::kAtomicCmpSwap, "Atomic CmpSwap", kRemote | kOperands4, K::kAtomic, Opcode::kAtomicRequest},
    {CommandType::kFlush, "Flush", kRemote | kUsesLength | kUsesModifier, K::kCommit, Opcode::kFlushRequest},
    {CommandType::kVerify, "Verify", kRemote | kUsesLength | kUsesLocal | kUsesModifier, K::kCommit,
     Opcode::kVerifyRequest},
    {CommandType::kAtomicWrite, "Atomic Write", kRemote | kUsesOperand1, K::kCommit, Opcode::kAtomicWriteRequest},
};

constexpr bool RowsInTypeOrder() {
  for (std::size_t i = 0; i < kMaxCommandType; ++i) {
    if (static_cast<std::size_t>(kTypes[i].type) != i + 1) return false;
  }
  return true;
}
static_assert(RowsInTypeOrder(), "kTypes row i describes Command Type i + 1");

bool KnownType(uint64_t t) { return t >= 1 && t <= kMaxCommandType; }

// The entry at `start`; fields its type does not use must be zero (a suite
// bug otherwise), unless a newer minor version may have defined them.
Result<Command> DecodeEntry(ByteSpan data, std::size_t start, std::size_t base, bool newer) {
  Command c;
  const uint64_t type = LoadField(data, start, kEntType);
  if (type == 0 || (!newer && !KnownType(type)))
    return FieldError(DecodeErrorKind::kInvalidValue, kEntType, start, base, type);
  c.type = static_cast<CommandType>(type);
  c.flags = static_cast<uint8_t>(LoadField(data, start, kEntFlags));
  if (!newer && c.flags != 0) return FieldError(DecodeErrorKind::kReservedNonZero, kEntFlags, start, base, c.flags);
  if (uint64_t r = LoadField(data, start, kEntReserved); r != 0 && !newer) {
    return FieldError(DecodeErrorKind::kReservedNonZero, kEntReserved, start, base, r);
  }
  c.command_id = static_cast<uint32_t>(LoadField(data, start, kEntId));
  c.local_stag = static_cast<uint32_t>(LoadField(data, start, kEntLocalStag));
  c.length = static_cast<uint32_t>(LoadField(data, start, kEntLength));
  c.local_tagged_offset = LoadField(data, start, kEntLocalTo);
  c.remote_stag = static_cast<uint32_t>(LoadField(data, start, kEntRemoteStag));
  c.modifier = static_cast<uint32_t>(LoadField(data, start, kEntModifier));
  c.remote_tagged_offset = LoadField(data, start, kEntRemoteTo);
  for (int k = 0; k < 4; ++k) c.operand[k] = LoadField(data, start, kEntOperand[k]);
  if (newer || !KnownType(type)) return c;
  const uint16_t uses = CommandFieldsUsed(c.type);
  struct Unused {
    uint16_t bit;
    const LayoutField* field;
    uint64_t value;
  };
  const Unused checks[] = {
      {kUsesLocal, &kEntLocalStag, c.local_stag},          {kUsesLength, &kEntLength, c.length},
      {kUsesLocal, &kEntLocalTo, c.local_tagged_offset},   {kUsesRemoteStag, &kEntRemoteStag, c.remote_stag},
      {kUsesModifier, &kEntModifier, c.modifier},          {kUsesRemoteTo, &kEntRemoteTo, c.remote_tagged_offset},
      {kUsesOperand1, &kEntOperand[0], c.operand[0]},      {kUsesOperand1 << 1, &kEntOperand[1], c.operand[1]},
      {kUsesOperand1 << 2, &kEntOperand[2], c.operand[2]}, {kUsesOperand1 << 3, &kEntOperand[3], c.operand[3]},
  };
  for (const Unused& u : checks) {
    if (!(uses & u.bit) && u.value != 0)
      return FieldError(DecodeErrorKind::kInvalidValue, *u.field, start, base, u.value);
  }
  return c;
}

}  // namespace

std::string_view CommandTypeName(CommandType t) {
  const auto i = static_cast<uint8_t>(t);
  return KnownType(i) ? kTypes[i - 1].name : "unknown command";
}

uint16_t CommandFieldsUsed(CommandType t) {
  const auto i = static_cast<uint8_t>(t);
  return KnownType(i) ? kTypes[i - 1].uses : 0;
}

CommandKind CommandKindOf(CommandType t) {
  const auto i = static_cast<uint8_t>(t);
  return KnownType(i) ? kTypes[i - 1].kind : CommandKind::kUnknown;
}

std::optional<Opcode> CommandOpcode(CommandType t) {
  const auto i = static_cast<uint8_t>(t);
  if (!KnownType(i)) return std::nullopt;
  return kTypes[i - 1].opcode;
}

bool CommandInvalidates(CommandType t) {
  return CommandKindOf(t) == CommandKind::kSend && (CommandFieldsUsed(t) & kUsesRemoteStag) != 0;
}

Status EncodeCommandRecord(const CommandRecord& rec, Bytes& out) {
  if (rec.commands.empty() || rec.commands.size() > 0xFF) {
    return DecodeError{DecodeErrorKind::kInvalidValue, kCmdCount.name, kCmdCount.offset, rec.commands.size()};
  }
  if (rec.entry_length < kCommandEntryLength) {
    return DecodeError{DecodeErrorKind::kInvalidValue, kCmdEntryLength.name, kCmdEntryLength.offset, rec.entry_length};
  }
  const std::size_t start = out.size();
  out.resize(start + kCommandRecordHeaderLength + rec.commands.size() * rec.entry_length, 0);
  std::copy(kCommandRecordMagic.begin(), kCommandRecordMagic.end(), out.begin() + start);
  StoreField(out, start, kCmdMajor, rec.major_version);
  StoreField(out, start, kCmdMinor, rec.minor_version);
  StoreField(out, start, kCmdCount, rec.commands.size());
  StoreField(out, start, kCmdEntryLength, rec.entry_length);
  std::size_t at = start + kCommandRecordHeaderLength;
  for (const Command& c : rec.commands) {
    StoreField(out, at, kEntType, static_cast<uint8_t>(c.type));
    StoreField(out, at, kEntFlags, c.flags);
    StoreField(out, at, kEntId, c.command_id);
    StoreField(out, at, kEntLocalStag, c.local_stag);
    StoreField(out, at, kEntLength, c.length);
    StoreField(out, at, kEntLocalTo, c.local_tagged_offset);
    StoreField(out, at, kEntRemoteStag, c.remote_stag);
    StoreField(out, at, kEntModifier, c.modifier);
    StoreField(out, at, kEntRemoteTo, c.remote_tagged_offset);
    for (int k = 0; k < 4; ++k) StoreField(out, at, kEntOperand[k], c.operand[k]);
    at += rec.entry_length;  // octets beyond 72 stay zero
  }
  return Ok{};
}

Result<CommandRecord> DecodeCommandRecord(ByteSpan data, std::size_t base) {
  if (!MagicMatches(data, kCommandRecordMagic)) {
    if (data.size() < kCmdMagic.width) return TruncatedField(kCmdMagic, 0, base, data.size());
    return FieldError(DecodeErrorKind::kInvalidValue, kCmdMagic, 0, base, LoadBe32(data.data()));
  }
  if (auto t = FirstTruncated(data, 0, base, kCmdHeaderFields)) return *t;
  CommandRecord rec;
  rec.major_version = static_cast<uint8_t>(LoadField(data, 0, kCmdMajor));
  if (rec.major_version != kUlpConventionMajorVersion) {
    return FieldError(DecodeErrorKind::kInvalidValue, kCmdMajor, 0, base, rec.major_version);
  }
  rec.minor_version = static_cast<uint8_t>(LoadField(data, 0, kCmdMinor));
  if (rec.minor_version < kUlpConventionCommandsMinorVersion) {  // records exist since 1.1
    return FieldError(DecodeErrorKind::kInvalidValue, kCmdMinor, 0, base, rec.minor_version);
  }
  const bool newer = rec.minor_version > kUlpConventionKnownMinorVersion;
  const std::size_t count = LoadField(data, 0, kCmdCount);
  if (count == 0) return FieldError(DecodeErrorKind::kInvalidValue, kCmdCount, 0, base, 0);
  rec.entry_length = static_cast<uint8_t>(LoadField(data, 0, kCmdEntryLength));
  if (rec.entry_length < kCommandEntryLength || (!newer && rec.entry_length != kCommandEntryLength)) {
    return FieldError(DecodeErrorKind::kInvalidValue, kCmdEntryLength, 0, base, rec.entry_length);
  }
  std::size_t at = kCommandRecordHeaderLength;
  for (std::size_t i = 0; i < count; ++i, at += rec.entry_length) {
    if (at + rec.entry_length > data.size()) {
      return DecodeError{DecodeErrorKind::kTruncated, "Command Entry", base + at,
                         data.size() - std::min(at, data.size())};
    }
    Result<Command> c = DecodeEntry(data, at, base, newer);
    if (!c.ok()) return c.error();
    rec.commands.push_back(*c);
  }
  if (at < data.size() && !newer) {
    return DecodeError{DecodeErrorKind::kLengthMismatch, "Command Record", base + at, data.size() - at};
  }
  return rec;
}

bool HasCommandRecordMagic(ByteSpan data) { return MagicMatches(data, kCommandRecordMagic); }

// ---------------------------------------------------------------------------
// Completions

std::string_view CompletionStatusName(CompletionStatus s) {
  switch (s) {
    case CompletionStatus::kSuccess:
      return "success";
    case CompletionStatus::kLocalError:
      return "local error";
    case CompletionStatus::kRemoteError:
      return "remote error";
    case CompletionStatus::kFlushed:
      return "flushed";
    case CompletionStatus::kNotSupported:
      return "not supported";
  }
  return "unknown status";
}

uint64_t CompletionValue(const Completion& c) {
  return uint64_t{static_cast<uint8_t>(c.status)} << 56 | uint64_t{static_cast<uint8_t>(c.type)} << 48 |
         c.native_status;
}

std::optional<Completion> CompletionFromValue(uint32_t command_id, uint64_t value) {
  const uint64_t status = value >> 56;
  const uint64_t type = value >> 48 & 0xFF;
  if (status > kMaxCompletionStatus || !KnownType(type) || (value >> 32 & 0xFFFF) != 0) return std::nullopt;
  return Completion{command_id, static_cast<CommandType>(type), static_cast<CompletionStatus>(status),
                    static_cast<uint32_t>(value)};
}

// ---------------------------------------------------------------------------
// Suite Request extension

void EncodeSuiteRequestExtension(const SuiteRequestExtension& ext, Bytes& out) {
  const std::size_t start = out.size();
  out.resize(start + kSuiteRequestExtensionHeaderLength + ext.regions.size() * kSuiteRegionEntryLength, 0);
  StoreField(out, start, kExtIrd, ext.suite_ird);
  StoreField(out, start, kExtCount, std::min<std::size_t>(ext.regions.size(), 0xFF));
  StoreField(out, start, kExtEntryLength, kSuiteRegionEntryLength);
  std::size_t at = start + kSuiteRequestExtensionHeaderLength;
  for (const SuiteRegion& r : ext.regions) {
    StoreField(out, at, kSrStag, r.stag);
    StoreField(out, at, kSrBaseTo, r.base_tagged_offset);
    StoreField(out, at, kSrLength, r.length);
    StoreField(out, at, kSrAccess, r.access);
    at += kSuiteRegionEntryLength;
  }
}

Result<SuiteRequestExtension> DecodeSuiteRequestExtension(ByteSpan data, std::size_t base) {
  constexpr std::array<LayoutField, 3> kHeader{kExtIrd, kExtCount, kExtEntryLength};
  if (auto t = FirstTruncated(data, 0, base, kHeader)) return *t;
  SuiteRequestExtension ext;
  ext.suite_ird = static_cast<uint16_t>(LoadField(data, 0, kExtIrd));
  const std::size_t count = LoadField(data, 0, kExtCount);
  const std::size_t entry = LoadField(data, 0, kExtEntryLength);
  if (entry < kSuiteRegionEntryLength)
    return FieldError(DecodeErrorKind::kInvalidValue, kExtEntryLength, 0, base, entry);
  constexpr std::array<LayoutField, 5> kEntry{kSrStag, kSrBaseTo, kSrLength, kSrAccess, kSrRest};
  std::size_t at = kSuiteRequestExtensionHeaderLength;
  for (std::size_t i = 0; i < count; ++i, at += entry) {
    if (auto t = FirstTruncated(data, at, base, kEntry)) return *t;
    SuiteRegion r;
    r.stag = static_cast<uint32_t>(LoadField(data, at, kSrStag));
    r.base_tagged_offset = LoadField(data, at, kSrBaseTo);
    r.length = static_cast<uint32_t>(LoadField(data, at, kSrLength));
    r.access = static_cast<uint8_t>(LoadField(data, at, kSrAccess));
    if (r.length != 0 && r.base_tagged_offset > ~uint64_t{0} - (r.length - 1)) {
      return FieldError(DecodeErrorKind::kInvalidValue, kSrLength, at, base, r.length);
    }
    ext.regions.push_back(r);
  }
  return ext;
}

// ---------------------------------------------------------------------------
// Commands block

void EncodeCommandsBlock(const CommandCapabilities& caps, Bytes& out) {
  const std::size_t start = out.size();
  out.resize(start + kCommandsBlockLength, 0);
  StoreField(out, start, kCbSupported, caps.supported);
  StoreField(out, start, kCbFailedId, caps.failed_command_id);
  StoreField(out, start, kCbCompleted, caps.completed);
  StoreField(out, start, kCbFailed, caps.failed);
  StoreField(out, start, kCbFlushed, caps.flushed);
}

Result<CommandCapabilities> DecodeCommandsBlock(ByteSpan data, std::size_t base, bool newer) {
  constexpr std::array<LayoutField, 6> kFields{kCbSupported, kCbFailedId, kCbCompleted,
                                               kCbFailed,    kCbFlushed,  kCbReserved};
  if (auto t = FirstTruncated(data, 0, base, kFields)) return *t;
  CommandCapabilities c;
  c.supported = static_cast<uint32_t>(LoadField(data, 0, kCbSupported));
  // Bit 0 and the bits above the last type name no Command Type.
  constexpr uint32_t kKnown = ((uint32_t{1} << (kMaxCommandType + 1)) - 1) & ~uint32_t{1};
  if (newer) c.supported &= kKnown;
  if (c.supported & ~kKnown) return FieldError(DecodeErrorKind::kReservedNonZero, kCbSupported, 0, base, c.supported);
  c.failed_command_id = static_cast<uint32_t>(LoadField(data, 0, kCbFailedId));
  c.completed = static_cast<uint16_t>(LoadField(data, 0, kCbCompleted));
  c.failed = static_cast<uint16_t>(LoadField(data, 0, kCbFailed));
  c.flushed = static_cast<uint16_t>(LoadField(data, 0, kCbFlushed));
  if (uint64_t r = LoadField(data, 0, kCbReserved); r != 0 && !newer) {
    return FieldError(DecodeErrorKind::kReservedNonZero, kCbReserved, 0, base, r);
  }
  return c;
}

}  // namespace rdmapct::wire
