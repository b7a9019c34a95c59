#include "reference/wire/ulp_convention_commands.h"

#include <algorithm>

#include "reference/wire/ulp_convention.h"

namespace rdmapct::wire {
namespace {

// One field of a fixed layout; names and offsets are those of the tables in
// docs/target-convention.md §7.
struct Field {
  const char* name;
  std::size_t offset;
  std::size_t width;  // 1, 2, 4 or 8
};

// Command Record header (§7.2).
constexpr Field kCmdMagic{"Command Magic", 0, 4};
constexpr Field kCmdMajor{"Major Version", 4, 1};
constexpr Field kCmdMinor{"Minor Version", 5, 1};
constexpr Field kCmdCount{"Command Count", 6, 1};
constexpr Field kCmdEntryLength{"Command Entry Length", 7, 1};
constexpr std::array<Field, 5> kCmdHeaderFields{kCmdMagic, kCmdMajor, kCmdMinor, kCmdCount, kCmdEntryLength};

// Command entry (§7.2).
constexpr Field kEntType{"Command Type", 0, 1};
constexpr Field kEntFlags{"Command Flags", 1, 1};
constexpr Field kEntReserved{"Reserved", 2, 2};
constexpr Field kEntId{"Command Id", 4, 4};
constexpr Field kEntLocalStag{"Local STag", 8, 4};
constexpr Field kEntLength{"Length", 12, 4};
constexpr Field kEntLocalTo{"Local Tagged Offset", 16, 8};
constexpr Field kEntRemoteStag{"Remote STag", 24, 4};
constexpr Field kEntModifier{"Modifier", 28, 4};
constexpr Field kEntRemoteTo{"Remote Tagged Offset", 32, 8};
constexpr Field kEntOperand[4] = {
    {"Operand 1", 40, 8}, {"Operand 2", 48, 8}, {"Operand 3", 56, 8}, {"Operand 4", 64, 8}};

// Suite Request extension (§2.4) and its region entries (the layout of §3.2).
constexpr Field kExtIrd{"Suite IRD", 0, 2};
constexpr Field kExtCount{"Suite Region Count", 2, 1};
constexpr Field kExtEntryLength{"Suite Region Entry Length", 3, 1};
constexpr Field kSrStag{"STag", 0, 4};
constexpr Field kSrBaseTo{"Base Tagged Offset", 4, 8};
constexpr Field kSrLength{"Length", 12, 4};
constexpr Field kSrAccess{"Access", 16, 1};
constexpr Field kSrRest{"Reserved", 17, 7};

// Commands block (§7.4).
constexpr Field kCbSupported{"Supported Commands", 0, 4};
constexpr Field kCbFailedId{"Failed Command Id", 4, 4};
constexpr Field kCbCompleted{"Commands Completed", 8, 2};
constexpr Field kCbFailed{"Commands Failed", 10, 2};
constexpr Field kCbFlushed{"Commands Flushed", 12, 2};
constexpr Field kCbReserved{"Reserved", 14, 2};

uint64_t Get(ByteSpan data, std::size_t start, const Field& f) {
  const uint8_t* p = data.data() + start + f.offset;
  switch (f.width) {
    case 1:
      return p[0];
    case 2:
      return LoadBe16(p);
    case 4:
      return LoadBe32(p);
    case 7:
      return uint64_t{p[0]} << 48 | uint64_t{LoadBe16(p + 1)} << 32 | LoadBe32(p + 3);
    default:
      return LoadBe64(p);
  }
}

void Put(Bytes& out, std::size_t start, const Field& f, uint64_t v) {
  uint8_t* p = out.data() + start + f.offset;
  switch (f.width) {
    case 1:
      p[0] = static_cast<uint8_t>(v);
      break;
    case 2:
      StoreBe16(p, static_cast<uint16_t>(v));
      break;
    case 4:
      StoreBe32(p, static_cast<uint32_t>(v));
      break;
    default:
      StoreBe64(p, v);
      break;
  }
}

DecodeError Err(DecodeErrorKind kind, const Field& f, std::size_t start, std::size_t base, uint64_t v) {
  return DecodeError{kind, f.name, base + start + f.offset, v};
}

// A field the data cannot hold is reported where the data ends when it would
// start beyond it (an entry stride larger than the data): an error offset
// always points into the decoded octets or just after them.
DecodeError Truncated(const Field& f, std::size_t start, std::size_t base, std::size_t size) {
  const std::size_t at = start + f.offset;
  return DecodeError{DecodeErrorKind::kTruncated, f.name, base + std::min(at, size), size > at ? size - at : 0};
}

template <std::size_t N>
std::optional<DecodeError> FirstTruncated(ByteSpan data, std::size_t start, std::size_t base,
                                          const std::array<Field, N>& fields) {
  for (const Field& f : fields) {
    if (start + f.offset + f.width > data.size()) return Truncated(f, start, base, data.size());
  }
  return std::nullopt;
}

bool MagicMatches(ByteSpan data, const std::array<uint8_t, 4>& magic) {
  return data.size() >= magic.size() && std::equal(magic.begin(), magic.end(), data.begin());
}

struct TypeRow {
  CommandType type;
  const char* name;
  uint16_t uses;
};

constexpr uint16_t kLocalData = kUsesLocal | kUsesLength;
constexpr uint16_t kRemote = kUsesRemoteStag | kUsesRemoteTo;
constexpr TypeRow kTypes[kMaxCommandType] = {
    {CommandType::kRdmaWrite, "RDMA Write", kLocalData | kRemote},
    {CommandType::kRdmaRead, "RDMA Read", kLocalData | kRemote},
    {CommandType::kSend, "Send", kLocalData},
    {CommandType::kSendWithSe, "Send with SE", kLocalData},
    {CommandType::kSendWithInvalidate, "Send with Invalidate", kLocalData | kUsesRemoteStag},
    {CommandType::kSendWithSeAndInvalidate, "Send with SE and Invalidate", kLocalData | kUsesRemoteStag},
    {CommandType::kImmediateData, "Immediate Data", kUsesOperand1},
    {CommandType::kImmediateDataWithSe, "Immediate Data with SE", kUsesOperand1},
    {CommandType::kAtomicFetchAdd, "Atomic FetchAdd", kRemote | kUsesOperand1 | kUsesOperand1 << 1},
    {CommandType::kAtomicCmpSwap, "Atomic CmpSwap",
     kRemote | kUsesOperand1 | kUsesOperand1 << 1 | kUsesOperand1 << 2 | kUsesOperand1 << 3},
    {CommandType::kFlush, "Flush", kRemote | kUsesLength | kUsesModifier},
    {CommandType::kVerify, "Verify", kRemote | kUsesLength | kUsesLocal | kUsesModifier},
    {CommandType::kAtomicWrite, "Atomic Write", kRemote | kUsesOperand1},
};

bool KnownType(uint64_t t) { return t >= 1 && t <= kMaxCommandType; }

// The entry at `start`; fields its type does not use must be zero (a suite
// bug otherwise), unless a newer minor version may have defined them.
Result<Command> DecodeEntry(ByteSpan data, std::size_t start, std::size_t base, bool newer) {
  Command c;
  const uint64_t type = Get(data, start, kEntType);
  if (type == 0 || (!newer && !KnownType(type)))
    return Err(DecodeErrorKind::kInvalidValue, kEntType, start, base, type);
  c.type = static_cast<CommandType>(type);
  c.flags = static_cast<uint8_t>(Get(data, start, kEntFlags));
  if (!newer && c.flags != 0) return Err(DecodeErrorKind::kReservedNonZero, kEntFlags, start, base, c.flags);
  if (uint64_t r = Get(data, start, kEntReserved); r != 0 && !newer) {
    return Err(DecodeErrorKind::kReservedNonZero, kEntReserved, start, base, r);
  }
  c.command_id = static_cast<uint32_t>(Get(data, start, kEntId));
  c.local_stag = static_cast<uint32_t>(Get(data, start, kEntLocalStag));
  c.length = static_cast<uint32_t>(Get(data, start, kEntLength));
  c.local_tagged_offset = Get(data, start, kEntLocalTo);
  c.remote_stag = static_cast<uint32_t>(Get(data, start, kEntRemoteStag));
  c.modifier = static_cast<uint32_t>(Get(data, start, kEntModifier));
  c.remote_tagged_offset = Get(data, start, kEntRemoteTo);
  for (int k = 0; k < 4; ++k) c.operand[k] = Get(data, start, kEntOperand[k]);
  if (newer || !KnownType(type)) return c;
  const uint16_t uses = CommandFieldsUsed(c.type);
  struct Unused {
    uint16_t bit;
    const Field* field;
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
    if (!(uses & u.bit) && u.value != 0) return Err(DecodeErrorKind::kInvalidValue, *u.field, start, base, u.value);
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
  Put(out, start, kCmdMajor, rec.major_version);
  Put(out, start, kCmdMinor, rec.minor_version);
  Put(out, start, kCmdCount, rec.commands.size());
  Put(out, start, kCmdEntryLength, rec.entry_length);
  std::size_t at = start + kCommandRecordHeaderLength;
  for (const Command& c : rec.commands) {
    Put(out, at, kEntType, static_cast<uint8_t>(c.type));
    Put(out, at, kEntFlags, c.flags);
    Put(out, at, kEntId, c.command_id);
    Put(out, at, kEntLocalStag, c.local_stag);
    Put(out, at, kEntLength, c.length);
    Put(out, at, kEntLocalTo, c.local_tagged_offset);
    Put(out, at, kEntRemoteStag, c.remote_stag);
    Put(out, at, kEntModifier, c.modifier);
    Put(out, at, kEntRemoteTo, c.remote_tagged_offset);
    for (int k = 0; k < 4; ++k) Put(out, at, kEntOperand[k], c.operand[k]);
    at += rec.entry_length;  // octets beyond 72 stay zero
  }
  return Ok{};
}

Result<CommandRecord> DecodeCommandRecord(ByteSpan data, std::size_t base) {
  if (!MagicMatches(data, kCommandRecordMagic)) {
    if (data.size() < kCmdMagic.width) return Truncated(kCmdMagic, 0, base, data.size());
    return Err(DecodeErrorKind::kInvalidValue, kCmdMagic, 0, base, LoadBe32(data.data()));
  }
  if (auto t = FirstTruncated(data, 0, base, kCmdHeaderFields)) return *t;
  CommandRecord rec;
  rec.major_version = static_cast<uint8_t>(Get(data, 0, kCmdMajor));
  if (rec.major_version != kUlpConventionMajorVersion) {
    return Err(DecodeErrorKind::kInvalidValue, kCmdMajor, 0, base, rec.major_version);
  }
  rec.minor_version = static_cast<uint8_t>(Get(data, 0, kCmdMinor));
  if (rec.minor_version < kUlpConventionCommandsMinorVersion) {  // records exist since 1.1
    return Err(DecodeErrorKind::kInvalidValue, kCmdMinor, 0, base, rec.minor_version);
  }
  const bool newer = rec.minor_version > kUlpConventionKnownMinorVersion;
  const std::size_t count = Get(data, 0, kCmdCount);
  if (count == 0) return Err(DecodeErrorKind::kInvalidValue, kCmdCount, 0, base, 0);
  rec.entry_length = static_cast<uint8_t>(Get(data, 0, kCmdEntryLength));
  if (rec.entry_length < kCommandEntryLength || (!newer && rec.entry_length != kCommandEntryLength)) {
    return Err(DecodeErrorKind::kInvalidValue, kCmdEntryLength, 0, base, rec.entry_length);
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
  Put(out, start, kExtIrd, ext.suite_ird);
  Put(out, start, kExtCount, std::min<std::size_t>(ext.regions.size(), 0xFF));
  Put(out, start, kExtEntryLength, kSuiteRegionEntryLength);
  std::size_t at = start + kSuiteRequestExtensionHeaderLength;
  for (const SuiteRegion& r : ext.regions) {
    Put(out, at, kSrStag, r.stag);
    Put(out, at, kSrBaseTo, r.base_tagged_offset);
    Put(out, at, kSrLength, r.length);
    Put(out, at, kSrAccess, r.access);
    at += kSuiteRegionEntryLength;
  }
}

Result<SuiteRequestExtension> DecodeSuiteRequestExtension(ByteSpan data, std::size_t base) {
  constexpr std::array<Field, 3> kHeader{kExtIrd, kExtCount, kExtEntryLength};
  if (auto t = FirstTruncated(data, 0, base, kHeader)) return *t;
  SuiteRequestExtension ext;
  ext.suite_ird = static_cast<uint16_t>(Get(data, 0, kExtIrd));
  const std::size_t count = Get(data, 0, kExtCount);
  const std::size_t entry = Get(data, 0, kExtEntryLength);
  if (entry < kSuiteRegionEntryLength) return Err(DecodeErrorKind::kInvalidValue, kExtEntryLength, 0, base, entry);
  constexpr std::array<Field, 5> kEntry{kSrStag, kSrBaseTo, kSrLength, kSrAccess, kSrRest};
  std::size_t at = kSuiteRequestExtensionHeaderLength;
  for (std::size_t i = 0; i < count; ++i, at += entry) {
    if (auto t = FirstTruncated(data, at, base, kEntry)) return *t;
    SuiteRegion r;
    r.stag = static_cast<uint32_t>(Get(data, at, kSrStag));
    r.base_tagged_offset = Get(data, at, kSrBaseTo);
    r.length = static_cast<uint32_t>(Get(data, at, kSrLength));
    r.access = static_cast<uint8_t>(Get(data, at, kSrAccess));
    if (r.length != 0 && r.base_tagged_offset > ~uint64_t{0} - (r.length - 1)) {
      return Err(DecodeErrorKind::kInvalidValue, kSrLength, at, base, r.length);
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
  Put(out, start, kCbSupported, caps.supported);
  Put(out, start, kCbFailedId, caps.failed_command_id);
  Put(out, start, kCbCompleted, caps.completed);
  Put(out, start, kCbFailed, caps.failed);
  Put(out, start, kCbFlushed, caps.flushed);
}

Result<CommandCapabilities> DecodeCommandsBlock(ByteSpan data, std::size_t base, bool newer) {
  constexpr std::array<Field, 6> kFields{kCbSupported, kCbFailedId, kCbCompleted, kCbFailed, kCbFlushed, kCbReserved};
  if (auto t = FirstTruncated(data, 0, base, kFields)) return *t;
  CommandCapabilities c;
  c.supported = static_cast<uint32_t>(Get(data, 0, kCbSupported));
  // Bit 0 and the bits above the last type name no Command Type.
  constexpr uint32_t kKnown = ((uint32_t{1} << (kMaxCommandType + 1)) - 1) & ~uint32_t{1};
  if (newer) c.supported &= kKnown;
  if (c.supported & ~kKnown) return Err(DecodeErrorKind::kReservedNonZero, kCbSupported, 0, base, c.supported);
  c.failed_command_id = static_cast<uint32_t>(Get(data, 0, kCbFailedId));
  c.completed = static_cast<uint16_t>(Get(data, 0, kCbCompleted));
  c.failed = static_cast<uint16_t>(Get(data, 0, kCbFailed));
  c.flushed = static_cast<uint16_t>(Get(data, 0, kCbFlushed));
  if (uint64_t r = Get(data, 0, kCbReserved); r != 0 && !newer) {
    return Err(DecodeErrorKind::kReservedNonZero, kCbReserved, 0, base, r);
  }
  return c;
}

}  // namespace rdmapct::wire
