// The rdmapct test-ULP convention (docs/target-convention.md), version 1.0.
//
// A target under test runs a small documented ULP so that a suite with
// nothing but the wire can certify it:
//  - the Advertisement, in the MPA Reply Private Data (after the RFC 6581
//    IRD/ORD word when present), tells the suite the target's IRD/ORD, its
//    QN 0 receive buffers and the STags of its memory regions;
//  - memory starts with a deterministic pattern (PatternByte), so the suite
//    can read it back with RDMA Read and see whether anything changed;
//  - Event Records, carried by the only Sends the target originates, report
//    what the target's ULP saw (Sends delivered, Immediate Data, errors).
//  - an optional Suite Request in the MPA Request Private Data asks the
//    target to keep memory across connections (checks after an error).
//
// Pure codecs (no I/O, no state), byte layouts big-endian, offsets in the
// tables of docs/target-convention.md. Decoders return a DecodeError naming
// the convention's field and the octet offset from the start of the buffer
// passed in (plus base_offset).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/result.h"
#include "reference/wire/ulp_convention_commands.h"

namespace rdmapct::wire {

// ---------------------------------------------------------------------------
// Versioning. A decoder refuses an unknown major version. A newer minor
// version may append octets and define bits that were reserved; a decoder
// ignores those only when the minor version is newer than its own, and
// rejects them otherwise (they would be a target bug).
inline constexpr uint8_t kUlpConventionMajorVersion = 1;
inline constexpr uint8_t kUlpConventionMinorVersion = 0;
// (The decoders know 1.1, kUlpConventionKnownMinorVersion in ulp_convention_commands.h:
// "newer" means newer than that.)

// "RPCA", "RPCE", "RPCR": printable, so a hexdump or a capture shows them.
inline constexpr std::array<uint8_t, 4> kAdvertisementMagic = {0x52, 0x50, 0x43, 0x41};
inline constexpr std::array<uint8_t, 4> kEventRecordMagic = {0x52, 0x50, 0x43, 0x45};
inline constexpr std::array<uint8_t, 4> kSuiteRequestMagic = {0x52, 0x50, 0x43, 0x52};

// ---------------------------------------------------------------------------
// Suite Request (docs/target-convention.md §2.4): optional, in the MPA
// Request Private Data after the RFC 6581 word. A target acts on it only
// when it decodes cleanly; anything else in the Request is ignored.

inline constexpr std::size_t kSuiteRequestLength = 12;
// Request Flags: do not re-pattern memory; keep what the previous
// connection left (so a failed access can be checked after the Terminate
// that ended its stream).
inline constexpr uint16_t kRequestKeepMemory = 0x0001;
inline constexpr uint16_t kKnownRequestFlags = 0x0001;

struct SuiteRequest {
  uint8_t major_version = 1;
  uint8_t minor_version = 0;
  uint16_t flags = 0;      // kRequest*
  uint32_t case_hash = 0;  // CRC-32C of the case id, for the target's logs
  friend bool operator==(const SuiteRequest&, const SuiteRequest&) = default;
};

void EncodeSuiteRequest(const SuiteRequest& req, Bytes& out);
// Decodes a request at the start of `data`; octets after the 12 are not
// part of it (a newer minor version may define them).
Result<SuiteRequest> DecodeSuiteRequest(ByteSpan data, std::size_t base_offset = 0);
// CRC-32C of the case id ("rfc5040/7.2/read-req-invalid-src-stag").
uint32_t CaseHash(std::string_view case_id);

// ---------------------------------------------------------------------------
// Advertisement (docs/target-convention.md §3).

// Some stacks cap MPA Private Data at 256 octets and RFC 6581 takes 4.
inline constexpr std::size_t kAdvertisementMaxLength = 248;
inline constexpr std::size_t kAdvertisementHeaderLength = 24;
inline constexpr std::size_t kRegionEntryLength = 24;  // version 1.0 entries
inline constexpr std::size_t kPreviousOutcomeLength = 12;
inline constexpr std::size_t kRfc6581WordLength = 4;
// (248 - 24) / 24 = 9 regions; 8 when the previous-outcome block is present.
inline constexpr std::size_t kMaxRegions = 9;
inline constexpr std::size_t kMaxRegionsWithOutcome = 8;

// Advertisement Flags (octets 6-7).
inline constexpr uint16_t kFlagLittleEndianAtomics = 0x0001;    // atomics see host little-endian words
inline constexpr uint16_t kFlagPreviousOutcome = 0x0002;        // the outcome block follows the regions
inline constexpr uint16_t kFlagRfc7306 = 0x0004;                // target implements RFC 7306
inline constexpr uint16_t kFlagCommit = 0x0008;                 // target implements the COMMIT draft
inline constexpr uint16_t kFlagKeepMemory = 0x0010;             // honours kRequestKeepMemory
inline constexpr uint16_t kKnownAdvertisementFlags = 0x001F;    // in 1.0
inline constexpr uint16_t kKnownAdvertisementFlags11 = 0x003F;  // in 1.1 (kFlagCommands)
// Convention 1.2 (docs/target-convention.md §10): the target serves
// concurrent connections, each in a protection domain of its own; STags of
// one connection are not valid on another. Set only with Minor Version >= 2.
inline constexpr uint16_t kFlagConcurrentConnections = 0x0040;
inline constexpr uint16_t kKnownAdvertisementFlags12 = kKnownAdvertisementFlags11 | kFlagConcurrentConnections;
inline constexpr uint8_t kConcurrentMinorVersion = 2;  // the minor that defines the bit
// Convention 1.3 (docs/target-convention.md §12): region attribute
// kAttrShared, only with kFlagConcurrentConnections and Minor Version >= 3.
inline constexpr uint8_t kSharedRegionsMinorVersion = 3;

// Region Access (entry octet 16): the remote access rights the STag grants.
inline constexpr uint8_t kAccessRemoteRead = 0x01;
inline constexpr uint8_t kAccessRemoteWrite = 0x02;
inline constexpr uint8_t kAccessRemoteAtomic = 0x04;
inline constexpr uint8_t kAccessFlush = 0x08;
inline constexpr uint8_t kAccessVerify = 0x10;
inline constexpr uint8_t kKnownAccessBits = 0x1F;

// Region Attributes (entry octet 17).
inline constexpr uint8_t kAttrInvalidatable = 0x01;  // a remote Send with Invalidate may invalidate it
inline constexpr uint8_t kAttrForeign = 0x02;        // registered in another PD / for another stream
inline constexpr uint8_t kAttrDeregistered = 0x04;   // invalid: registered, then deregistered
inline constexpr uint8_t kKnownAttributeBits = 0x07;
// 1.3 (§12): the STag and its memory are deliberately shared by every
// concurrent connection that advertises this entry (same STag, same Memory
// Object): usable from A and B, and not invalidatable by a remote peer.
inline constexpr uint8_t kAttrShared = 0x08;
inline constexpr uint8_t kKnownAttributeBits13 = kKnownAttributeBits | kAttrShared;

struct AdvertisedRegion {
  uint32_t stag = 0;                // STag as the RNIC assigned it
  uint64_t base_tagged_offset = 0;  // TO of the first octet (VA or 0-based)
  uint32_t length = 0;              // octets
  uint8_t access = 0;               // kAccess* bits
  uint8_t attributes = 0;           // kAttr* bits
  uint16_t memory_object = 0;       // regions with equal ids share memory
  uint32_t object_offset = 0;       // offset of the first octet in the memory object

  bool usable() const { return (attributes & (kAttrForeign | kAttrDeregistered)) == 0; }
  bool Has(uint8_t access_bits) const { return (access & access_bits) == access_bits; }
  // The memory object offset of tagged offset `to` (caller checks bounds).
  uint64_t ObjectOffsetOf(uint64_t to) const { return object_offset + (to - base_tagged_offset); }
  friend bool operator==(const AdvertisedRegion&, const AdvertisedRegion&) = default;
};

// How the target's previous connection ended (docs §3.4), so a case can
// check what the target's ULP saw after the stream was gone, e.g. that it
// was told about a Terminate the suite sent.
enum class ConnectionOutcome : uint8_t {
  kNone = 0,               // no previous connection since the target started
  kClosed = 1,             // LLP closed or reset without any Terminate
  kTerminateSent = 2,      // the target sent a Terminate
  kTerminateReceived = 3,  // the target received a Terminate
  kLocalError = 4,         // the stream failed with no Terminate either way
};
inline constexpr uint8_t kMaxConnectionOutcome = 4;
inline constexpr uint8_t kOutcomeCodeKnown = 0x01;  // Outcome Flags: triple is valid

struct PreviousOutcome {
  uint32_t connection_serial = 0;  // serial of the connection it describes
  ConnectionOutcome outcome = ConnectionOutcome::kNone;
  uint8_t flags = 0;               // kOutcomeCodeKnown
  uint8_t layer = 0;               // Terminate Layer (4 bits)
  uint8_t error_type = 0;          // Terminate EType (4 bits)
  uint8_t error_code = 0;          // Terminate Error Code
  uint16_t events_sent = 0;        // Event Records sent on that connection
  uint16_t completion_errors = 0;  // local completion errors seen on it
  friend bool operator==(const PreviousOutcome&, const PreviousOutcome&) = default;
};

struct Advertisement {
  uint8_t major_version = kUlpConventionMajorVersion;
  uint8_t minor_version = kUlpConventionMinorVersion;
  uint16_t flags = 0;                                // kFlag*; the encoder derives kFlagPreviousOutcome from `previous`
  uint16_t ird = 0;                                  // inbound RDMA Read Requests the target accepts at once
  uint16_t ord = 0;                                  // outbound RDMA Read Requests (informational in 1.0)
  uint16_t receive_buffer_count = 0;                 // buffers posted once on QN 0, never reposted
  uint8_t region_entry_length = kRegionEntryLength;  // >= 24; 24 in 1.0
  uint32_t receive_buffer_size = 0;                  // octets, each buffer
  uint32_t connection_serial = 0;                    // 1 for the first connection after target start
  std::vector<AdvertisedRegion> regions;
  std::optional<PreviousOutcome> previous;
  // 1.1 (minor >= 1): the Commands block; the encoder derives kFlagCommands
  // from it.
  std::optional<CommandCapabilities> commands;
  friend bool operator==(const Advertisement&, const Advertisement&) = default;
};

// Appends the advertisement. Fails (kTooLong) when it would exceed 248
// octets, and (kInvalidValue) on a wrong version, an entry length other than
// 24 or a region whose TO range wraps: an encoder only writes 1.0 layouts.
Status EncodeAdvertisement(const Advertisement& adv, Bytes& out);

// Decodes an advertisement occupying all of `data`.
Result<Advertisement> DecodeAdvertisement(ByteSpan data, std::size_t base_offset = 0);

// Decodes the advertisement in MPA Reply Private Data; `rfc6581_word` says
// whether the first 4 octets are the RFC 6581 IRD/ORD word (Reply S=1).
// Offsets are relative to the start of the Private Data.
Result<Advertisement> DecodeAdvertisementFromPrivateData(ByteSpan private_data, bool rfc6581_word);

// True when `data` begins with the advertisement magic (a cheap probe for a
// target that does not run the convention).
bool HasAdvertisementMagic(ByteSpan data);

// ---------------------------------------------------------------------------
// Memory pattern (docs §4): every octet of memory object m at object offset x
// holds PatternByte(m, x) when a connection starts.
inline constexpr uint8_t PatternByte(uint16_t memory_object, uint64_t object_offset) {
  return static_cast<uint8_t>(0x9D * object_offset + 0x3B * (object_offset >> 8) + 0x65 * uint64_t{memory_object} +
                              0x11);
}

// The pattern of `length` octets of `region` starting at tagged offset `to`.
Bytes RegionPattern(const AdvertisedRegion& region, uint64_t to, std::size_t length);

// ---------------------------------------------------------------------------
// Region roles (docs §3.3): the deterministic rule by which the suite picks
// the region a case names ("rw", "ro", ...) out of the advertisement.
enum class RegionRole : uint8_t {
  kReadWrite,
  kReadOnly,
  kWriteOnly,
  kAtomic,
  kInvalidatable,
  kAlias,
  kForeign,
  kDeregistered,
  kFlush,
  kVerify,
  kShared,        // 1.3 (§12): plain, shared, read and write
  kSharedAtomic,  // 1.3 (§12): a shared region that also fills `atomic`
};
inline constexpr std::size_t kRegionRoleCount = 12;

std::string_view RegionRoleName(RegionRole role);  // "rw", "ro", "wo", "atomic", ...
std::optional<RegionRole> ParseRegionRole(std::string_view name);

// The first region (in advertisement order) that fills `role` and is at
// least `min_length` octets long; nullptr if none.
const AdvertisedRegion* SelectRegion(const Advertisement& adv, RegionRole role, uint32_t min_length = 0);

// A usable, remotely readable region whose memory covers `length` octets
// of `memory_object` from `object_offset` (to read back what another STag
// wrote or failed to write); nullptr if none.
const AdvertisedRegion* FindReadableView(const Advertisement& adv, uint16_t memory_object, uint64_t object_offset,
                                         uint64_t length);

// What a conforming target provides for the full suite (docs §3.5).
inline constexpr uint32_t kFullSuiteMinReadWriteLength = 4096;
inline constexpr uint32_t kFullSuiteMinRegionLength = 1024;  // ro, wo, invalidatable, flush, verify
inline constexpr uint32_t kFullSuiteMinAtomicLength = 64;
inline constexpr uint16_t kFullSuiteMinReceiveBuffers = 4;
inline constexpr uint16_t kFullSuiteMaxReceiveBuffers = 64;  // exhaustion stays quick
inline constexpr uint32_t kFullSuiteMinReceiveBufferSize = 1024;
inline constexpr uint16_t kFullSuiteMinIrd = 4;

// What a target lacks for the full suite under a profile, one short line per
// missing item; empty means no case will be skipped for lack of resources.
std::vector<std::string> MissingForFullSuite(const Advertisement& adv, bool rfc7306, bool commit);

// ---------------------------------------------------------------------------
// Event Records (docs §6): the payload of every Send the target originates.

inline constexpr std::size_t kEventRecordHeaderLength = 36;
inline constexpr std::size_t kEventPrefixMax = 64;  // delivered octets echoed

enum class EventType : uint8_t {
  kSendDelivered = 1,           // Send / Send with SE / ... with Invalidate
  kImmediateDataDelivered = 2,  // RFC 7306 Immediate Data (with SE)
  kCompletionError = 3,         // a local completion or async error
  kCommandCompleted = 4,        // 1.1: a command of a Command Record completed
};
inline constexpr uint8_t kMaxEventType = 3;    // in 1.0
inline constexpr uint8_t kMaxEventType11 = 4;  // in 1.1

// Event Flags (octet 7).
inline constexpr uint8_t kEventSolicitedKnown = 0x01;  // the target can tell SE
inline constexpr uint8_t kEventSolicited = 0x02;       // message carried SE (needs Known)
inline constexpr uint8_t kEventInvalidated = 0x04;     // Send with Invalidate: STag field valid
inline constexpr uint8_t kKnownEventFlags = 0x07;

// Completion Error value (octets 20-27): source in bits 63-56, the native
// status (e.g. an ibv_wc_status or ibv_event_type) in bits 31-0.
enum class ErrorSource : uint8_t { kReceiveQueue = 1, kSendQueue = 2, kAsyncEvent = 3 };

struct EventRecord {
  uint8_t major_version = kUlpConventionMajorVersion;
  uint8_t minor_version = kUlpConventionMinorVersion;
  EventType type = EventType::kSendDelivered;
  uint8_t flags = 0;
  uint32_t sequence = 0;          // 1, 2, ... per connection = the Send's QN 0 MSN
  uint32_t length = 0;            // delivered message length (Send types)
  uint32_t invalidated_stag = 0;  // with kEventInvalidated
  uint64_t value = 0;             // Immediate Data, or the completion error value
  uint32_t digest = 0;            // CRC-32C of all delivered octets (0 for none)
  Bytes prefix;                   // first min(length, 64) delivered octets
  friend bool operator==(const EventRecord&, const EventRecord&) = default;
};

// Builders used by targets (and by the suite to predict a record).
// `solicited` is nullopt when the target cannot tell the SE flag.
EventRecord MakeSendEvent(uint32_t sequence, ByteSpan payload, std::optional<bool> solicited,
                          std::optional<uint32_t> invalidated_stag);
EventRecord MakeImmediateDataEvent(uint32_t sequence, uint64_t immediate_data, std::optional<bool> solicited);
EventRecord MakeCompletionErrorEvent(uint32_t sequence, ErrorSource source, uint32_t status);
// 1.1: a command completed; `moved` holds the octets it transferred (Read:
// placed in the local sink; Write / Send: sent; Atomic: the Original Remote
// Data Value as on the wire), empty on error.
EventRecord MakeCommandCompletedEvent(uint32_t sequence, const Completion& c, ByteSpan moved);

// Appends the record (36 octets + prefix). Byte-exact: writes the fields as
// given, including inconsistent ones, so tests can build bad records.
void EncodeEventRecord(const EventRecord& ev, Bytes& out);

// Decodes a record occupying all of `data` (the Send's whole payload).
Result<EventRecord> DecodeEventRecord(ByteSpan data, std::size_t base_offset = 0);

bool HasEventRecordMagic(ByteSpan data);

}  // namespace rdmapct::wire
