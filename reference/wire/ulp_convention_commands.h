// The test-ULP convention 1.1 additions (docs/target-convention.md §7):
// the suite asks the target's ULP to act as requester and Data Source.
//  - a Command Record, the payload of a Send from the suite, names one or
//    more operations for the target to post back to back (RDMA Write, RDMA
//    Read, the four Sends, Immediate Data, Atomics, Flush, Verify, Atomic
//    Write), each with a Command Id;
//  - the target reports each completion in an Event Record of type 4
//    (Command Completed), whose fields are laid out by this file's helpers;
//  - the Suite Request extension (MPA Request Private Data, after the 12
//    octets of 1.0) tells the target the suite's IRD (its ORD limit) and the
//    suite's own regions (STags, TOs, lengths, rights);
//  - the Commands block of the Advertisement (flag 0x0020) says which
//    Command Types the target executes and what happened to the commands of
//    its previous connection (failed, flushed).
//
// Pure codecs like ulp_convention.h: big-endian, no state, errors name the
// convention's field and the octet offset (plus base_offset).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

struct AdvertisedRegion;

// The newest minor version the decoders of this codec know (1.3: 1.2 added
// Advertisement flag 0x0040, 1.3 region attribute 0x08, docs §11, §12).
// Encoders of 1.0 layouts keep writing minor 0 (kUlpConventionMinorVersion);
// a block that uses a 1.1 feature carries minor 1.
inline constexpr uint8_t kUlpConventionKnownMinorVersion = 3;
inline constexpr uint8_t kUlpConventionCommandsMinorVersion = 1;

// "RPCC": starts a Command Record.
inline constexpr std::array<uint8_t, 4> kCommandRecordMagic = {0x52, 0x50, 0x43, 0x43};

// Advertisement flag (1.1): the target executes Command Records; the
// Commands block follows the regions and the outcome block.
inline constexpr uint16_t kFlagCommands = 0x0020;

// ---------------------------------------------------------------------------
// Command Records (docs §7.2)

enum class CommandType : uint8_t {
  kRdmaWrite = 1,
  kRdmaRead = 2,
  kSend = 3,
  kSendWithSe = 4,
  kSendWithInvalidate = 5,
  kSendWithSeAndInvalidate = 6,
  kImmediateData = 7,
  kImmediateDataWithSe = 8,
  kAtomicFetchAdd = 9,
  kAtomicCmpSwap = 10,
  kFlush = 11,
  kVerify = 12,
  kAtomicWrite = 13,
};
inline constexpr uint8_t kMaxCommandType = 13;
std::string_view CommandTypeName(CommandType t);  // "RDMA Write", "Send with SE", ...

inline constexpr std::size_t kCommandRecordHeaderLength = 8;
inline constexpr std::size_t kCommandEntryLength = 72;  // 1.1 entries

// One operation. Which fields a type uses is in docs §7.2 (CommandFieldsUsed):
// the others are zero.
struct Command {
  CommandType type = CommandType::kRdmaWrite;
  uint8_t flags = 0;        // none defined in 1.1
  uint32_t command_id = 0;  // echoed by the completion
  uint32_t local_stag = 0;  // the target's own region (an advertised STag)
  uint32_t length = 0;      // octets; Flush / Verify: Data Sink Length
  uint64_t local_tagged_offset = 0;
  uint32_t remote_stag = 0;  // the suite's STag; Send with Invalidate: the STag to invalidate
  uint32_t modifier = 0;     // Flush: Disposition Flags; Verify: hash octets
  uint64_t remote_tagged_offset = 0;
  std::array<uint64_t, 4> operand{};  // Immediate Data, atomic data / masks, Atomic Write data
  friend bool operator==(const Command&, const Command&) = default;
};

struct CommandRecord {
  uint8_t major_version = 1;
  uint8_t minor_version = kUlpConventionCommandsMinorVersion;
  uint8_t entry_length = kCommandEntryLength;  // >= 72; 72 in 1.1
  std::vector<Command> commands;               // 1..255, posted in this order
  friend bool operator==(const CommandRecord&, const CommandRecord&) = default;
};

// Field-use bits of CommandFieldsUsed.
inline constexpr uint16_t kUsesLocal = 0x01;  // Local STag + Local Tagged Offset
inline constexpr uint16_t kUsesLength = 0x02;
inline constexpr uint16_t kUsesRemoteStag = 0x04;
inline constexpr uint16_t kUsesRemoteTo = 0x08;
inline constexpr uint16_t kUsesModifier = 0x10;
inline constexpr uint16_t kUsesOperand1 = 0x20;  // operand k: 0x20 << (k - 1)
uint16_t CommandFieldsUsed(CommandType t);

// What a command makes the target's ULP post (docs §7.2, §7.5), a column of
// the same table: the suite checks and answers those messages, the
// reference target posts them, and both read it here.
enum class CommandKind : uint8_t {
  kUnknown,        // not a Command Type this codec knows
  kRdmaWrite,      // tagged segments to Remote STag / TO carrying Local data
  kRdmaRead,       // one Read Request on QN 1, answered by Read Responses
  kSend,           // a Send variant on QN 0 carrying Local data
  kImmediateData,  // one Immediate Data message (RFC 7306) on QN 0
  kAtomic,         // one Atomic Request (RFC 7306) on QN 1
  kCommit,         // one Flush, Verify or Atomic Write Request (COMMIT) on QN 1
};
CommandKind CommandKindOf(CommandType t);
// The opcode of the message the command posts (an RDMA Read: its Read
// Request); nullopt for an unknown type.
std::optional<Opcode> CommandOpcode(CommandType t);
// A Send with Invalidate (with or without SE): its Remote STag is the STag
// the Send invalidates.
bool CommandInvalidates(CommandType t);

// Appends the record. Fails (kInvalidValue) on an empty or > 255 command
// list, an entry length < 72, or an unknown type.
Status EncodeCommandRecord(const CommandRecord& rec, Bytes& out);
// Decodes a record occupying all of `data` (a Send's whole payload).
Result<CommandRecord> DecodeCommandRecord(ByteSpan data, std::size_t base_offset = 0);
bool HasCommandRecordMagic(ByteSpan data);

// ---------------------------------------------------------------------------
// Command Completed events (Event Record type 4, docs §7.3). The record's
// common fields are reused: Invalidated STag holds the Command Id, Value
// the status word, Delivered Length / Digest / Data Prefix the octets the
// command moved (an atomic's Original Remote Data Value).

inline constexpr uint8_t kEventTypeCommandCompleted = 4;

enum class CompletionStatus : uint8_t {
  kSuccess = 0,
  kLocalError = 1,    // the target's ULP or RNIC refused the command itself
  kRemoteError = 2,   // the peer's answer or Terminate failed it
  kFlushed = 3,       // the stream ended before it completed
  kNotSupported = 4,  // the target cannot execute this Command Type
};
inline constexpr uint8_t kMaxCompletionStatus = 4;
std::string_view CompletionStatusName(CompletionStatus s);

struct Completion {
  uint32_t command_id = 0;
  CommandType type = CommandType::kRdmaWrite;
  CompletionStatus status = CompletionStatus::kSuccess;
  uint32_t native_status = 0;  // e.g. an ibv_wc_status
  friend bool operator==(const Completion&, const Completion&) = default;
};

// The Value word of a type 4 record: status << 56 | type << 48 | native.
uint64_t CompletionValue(const Completion& c);
// nullopt when bits 47-32 are set, or the status or type is unknown.
std::optional<Completion> CompletionFromValue(uint32_t command_id, uint64_t value);

// ---------------------------------------------------------------------------
// Suite Request extension (docs §2.4, minor >= 1): right after the 12
// octets of the 1.0 Suite Request.

inline constexpr std::size_t kSuiteRequestExtensionHeaderLength = 4;
inline constexpr std::size_t kSuiteRegionEntryLength = 24;  // the Advertisement's region layout

struct SuiteRegion {
  uint32_t stag = 0;
  uint64_t base_tagged_offset = 0;
  uint32_t length = 0;
  uint8_t access = 0;  // kAccess* bits: what the suite lets the target do
  friend bool operator==(const SuiteRegion&, const SuiteRegion&) = default;
};

struct SuiteRequestExtension {
  uint16_t suite_ird = 0;  // requests the suite accepts outstanding: the target's ORD limit
  std::vector<SuiteRegion> regions;
  friend bool operator==(const SuiteRequestExtension&, const SuiteRequestExtension&) = default;
};

void EncodeSuiteRequestExtension(const SuiteRequestExtension& ext, Bytes& out);
// `data` starts right after the 12-octet Suite Request; octets after the
// regions belong to later minor versions and are ignored.
Result<SuiteRequestExtension> DecodeSuiteRequestExtension(ByteSpan data, std::size_t base_offset = 0);

// ---------------------------------------------------------------------------
// Commands block of the Advertisement (flag 0x0020, 16 octets, after the
// outcome block).

inline constexpr std::size_t kCommandsBlockLength = 16;

struct CommandCapabilities {
  uint32_t supported = 0;  // bit (1 << type) per Command Type executed
  // The previous connection's commands (docs §7.4), 0 on the first one.
  uint32_t failed_command_id = 0;  // the first command that completed in error
  uint16_t completed = 0;          // completed successfully
  uint16_t failed = 0;             // completed in error
  uint16_t flushed = 0;            // never completed: the stream ended
  bool Supports(CommandType t) const { return (supported >> static_cast<uint8_t>(t)) & 1; }
  friend bool operator==(const CommandCapabilities&, const CommandCapabilities&) = default;
};

void EncodeCommandsBlock(const CommandCapabilities& caps, Bytes& out);
// `newer`: the Advertisement is of a newer minor version than 1.1, whose
// Command Types and reserved octets this decoder ignores.
Result<CommandCapabilities> DecodeCommandsBlock(ByteSpan data, std::size_t base_offset = 0, bool newer = false);

}  // namespace rdmapct::wire
