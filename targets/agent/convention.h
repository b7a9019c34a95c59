// The device-independent half of rdmapct-agent: what a verbs test ULP
// advertises, how its completions become Event Records and how it plans the
// suite's commands, following the test-ULP convention 1.2
// (docs/target-convention.md: §7 commands, §11 concurrent connections).
// No verbs types here,
// so tests/targets/agent proves the convention handling without a device;
// agent_main.cc is the thin libibverbs/librdmacm layer on top.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/ulp_convention.h"
#include "reference/wire/ulp_convention_directive.h"

namespace rdmapct::agent {

// Memory objects (docs §4). Object 1 holds rw, ro, wo, atomic and the
// memory behind the foreign and deregistered STags; object 2 holds the
// invalidatable region and its alias (the layout of the example in §3.6).
inline constexpr uint16_t kMainObject = 1;
inline constexpr uint16_t kInvalidatableObject = 2;
inline constexpr uint32_t kMainObjectSize = 0x6000;
inline constexpr uint32_t kInvalidatableObjectSize = 0x1000;

// Which protection domain the verbs layer registers a region in, and
// whether it deregisters it again before advertising it.
enum class RegionKind : uint8_t {
  kNormal,        // the connection's PD
  kForeignPd,     // a second PD: valid, but not for this stream
  kDeregistered,  // the connection's PD, registered last, then deregistered
};

struct RegionSpec {
  std::string role;  // "rw", "ro", ... for logs (docs §3.3)
  uint16_t memory_object = 0;
  uint32_t object_offset = 0;
  uint32_t length = 0;
  uint8_t access = 0;       // wire::kAccess* (what the STag grants remotely)
  uint8_t attributes = 0;   // wire::kAttr*
  bool zero_based = false;  // ask for Base Tagged Offset 0 (verbs: iova 0)
  RegionKind kind = RegionKind::kNormal;
};

struct AgentOptions {
  uint16_t receive_buffer_count = 8;    // 4..64 for the full suite, <= 16 recommended
  uint32_t receive_buffer_size = 4096;  // >= 1024 for the full suite
  // Advertise RFC 7306 (flag 0x0004 and an atomic region) even when the
  // device reports no atomics, so the rfc7306 profile runs its cases and
  // shows how the stack rejects opcodes it does not implement.
  bool claim_rfc7306 = false;
  bool little_endian_atomics = true;  // the host's byte order (docs §3.1 flag 0x0001)
  // Register `wo` and `alias` zero-based (ibv_reg_mr_iova with iova 0).
  // Off by default: Linux siw 6.1 ignores the iova of a user MR and keeps
  // it VA-based, so a zero-based advertisement would be false there.
  bool zero_based_regions = false;
  // Every connection has a protection domain and memory objects of its own,
  // so the agent claims concurrent connections (flag 0x0040, §11). False
  // with --shared-pd: one PD and one set of memory objects for all
  // connections, whose STags are then valid on every connection, so 0x0040
  // would be a false promise.
  bool pd_per_connection = true;
  // Execute Command Records (flag 0x0020, §7); the Command Types are the
  // verbs layer's to say (SupportedCommandMask).
  bool commands = true;
};

// The regions to register, in advertisement order. Registering the
// deregistered STag last (so no later registration reuses its key) is the
// verbs layer's job: it processes kDeregistered entries after the others.
std::vector<RegionSpec> DefaultLayout(const AgentOptions& opts);

// The size of each memory object the layout uses, indexed by object id
// (index 0 unused).
std::vector<uint32_t> MemoryObjectSizes(const std::vector<RegionSpec>& layout);

// Fills `memory`, which is memory object `object` from offset 0, with the
// pattern (docs §4).
void FillPattern(uint16_t object, std::span<uint8_t> memory);

// What the device assigned to one RegionSpec.
struct Registered {
  uint32_t stag = 0;                // rkey
  uint64_t base_tagged_offset = 0;  // the VA, or 0 for a zero-based MR
};

struct ConnectionParams {
  uint16_t ird = 0;
  uint16_t ord = 0;
  uint32_t connection_serial = 0;
  bool keep_memory_supported = true;
  // The Commands block (flag 0x0020) when the agent executes commands.
  std::optional<wire::CommandCapabilities> commands;
  // The previous-connection outcome block (flag 0x0002, §3.4).
  std::optional<wire::PreviousOutcome> previous;
};

// The Advertisement for one connection; `registered` is parallel to
// `layout`. Fails when the result would not encode (more than 248 octets).
wire::Result<wire::Bytes> BuildAdvertisement(const AgentOptions& opts, const std::vector<RegionSpec>& layout,
                                             const std::vector<Registered>& registered, const ConnectionParams& params);

// The Suite Request in the MPA Request Private Data, if one decodes cleanly
// (docs §2.4). Linux iWARP strips the RFC 6581 word before the application
// sees the Private Data, other stacks may not: the request is looked for at
// offset 0, then after a 4-octet RFC 6581 word. Anything else is ignored.
std::optional<wire::SuiteRequest> FindSuiteRequest(wire::ByteSpan private_data);

// The Suite IRD of the Suite Request extension (1.1, §2.4) behind a Suite
// Request of Minor Version >= 1, found the same way; nothing without one.
std::optional<uint16_t> FindSuiteIrd(wire::ByteSpan private_data);

// The Command Record a Send delivered, when its whole payload decodes as one
// (§7.2); anything else is an ordinary Send and reported as delivered.
std::optional<wire::CommandRecord> AsCommandRecord(wire::ByteSpan payload);

// The Command Types (bit 1 << type) a verbs program can post: RDMA Write,
// RDMA Read and the four Sends always; FetchAdd and CmpSwap when the device
// has atomics. Immediate Data (RFC 7306, 8 octets: verbs immediates are 4),
// Flush, Verify and Atomic Write have no verbs work request on iWARP.
uint32_t SupportedCommandMask(bool device_atomics);

// How one command is posted, or why it is not (docs §7.2, §7.6).
enum class VerbsOp : uint8_t { kRdmaWrite, kRdmaRead, kSend, kSendWithInvalidate, kFetchAdd, kCmpSwap };
struct CommandPlan {
  // Not kSuccess: post nothing, complete with this status (1: the Local
  // STag / TO / Length is not this connection's memory; 4: a type or an
  // atomic mask verbs cannot express).
  wire::CompletionStatus refuse = wire::CompletionStatus::kSuccess;
  VerbsOp op = VerbsOp::kRdmaWrite;
  bool solicited = false;             // IBV_SEND_SOLICITED
  std::optional<std::size_t> region;  // layout index of the local memory (none for length 0 or atomics)
  uint64_t offset = 0;                // octet offset in that region
  bool takes_msn = false;             // a Send: consumes a QN 0 MSN of the target
};
CommandPlan PlanCommand(const wire::Command& cmd, uint32_t supported, const std::vector<RegionSpec>& layout,
                        const std::vector<Registered>& registered);

// The 8 octets an atomic's Original Remote Data Value has on the wire
// (big-endian), from the value verbs returns in host order.
wire::Bytes AtomicOriginalOnWire(uint64_t host_value);

// What a work-request completion status means for a command (the verbs
// layer classifies its ibv_wc_status).
enum class WcClass : uint8_t { kSuccess, kFlushed, kLocal, kRemote };
wire::CompletionStatus StatusFor(WcClass c);

// The commands of one connection in Command Id order: completions are
// reported from the head, so a command refused at once still waits for
// the ones posted before it (§7.3, R5040-5.5-R15b). Counts what happened
// for the next Advertisement's Commands block (§7.4).
class CommandTracker {
 public:
  struct Done {
    wire::Completion completion;
    wire::Bytes moved;  // empty unless successful
  };
  // Returns the command's slot number (for the work request id).
  uint64_t Add(const wire::Command& cmd);
  // The command in `slot` completed (or was refused).
  void Finish(uint64_t slot, wire::CompletionStatus status, uint32_t native, wire::Bytes moved);
  // Completed commands at the head, in order, removed from the tracker.
  std::vector<Done> TakeReady();
  // The stream ended: whatever never completed is flushed.
  void Settle();
  const wire::Command* Find(uint64_t slot) const;
  std::size_t outstanding() const { return pending_.size(); }
  // The counts for the Commands block (supported filled in by the caller).
  const wire::CommandCapabilities& counts() const { return counts_; }

 private:
  struct Entry {
    uint64_t slot = 0;
    wire::Command cmd;
    bool done = false;
    Done result;
  };
  void Count(const wire::Completion& c);
  std::vector<Entry> pending_;
  uint64_t next_slot_ = 0;
  wire::CommandCapabilities counts_;
};

// IRD and ORD to accept with (docs §9, RFC 6581). `peer_ord` is how many
// Reads the initiator wants to have outstanding at us, `peer_ird` how many
// it accepts from us; `device_max_*` are the device's limits. The IRD covers
// the peer's ORD (siw refuses an IRD below it) and is at least `min_ird`;
// the ORD does not exceed the peer's IRD (the target never issues Reads).
struct IrdOrd {
  uint16_t ird = 0;
  uint16_t ord = 0;
};
IrdOrd ChooseIrdOrd(uint32_t peer_ord, uint32_t peer_ird, uint32_t device_max_ird, uint32_t device_max_ord,
                    uint32_t min_ird = 16);

// The target as MPA Initiator (docs §10). The Connect Directive in a
// rejecting Reply's Private Data: at offset 0, after an RFC 6581 word, or
// with its first 4 octets gone (a stack that sent an enhanced Request may
// strip 4 octets of the Reply's Private Data as the RFC 6581 word even when
// the Reply has none: Linux siw does). Anything else is an ordinary reject.
std::optional<wire::ConnectDirective> FindConnectDirective(wire::ByteSpan private_data);

// What the agent's next Request asks for, from the Directive (or none: the
// defaults, §10.1). Verbs and rdma_cm let a ULP choose only the IRD and ORD
// it offers and whether memory is kept; CRC, Markers, the MPA revision,
// peer-to-peer and the RTR type are the stack's (Linux siw: module
// parameters), so those are listed in `cannot` for the log and the suite
// skips the cases that need them.
struct ConnectPlan {
  IrdOrd offer;  // responder_resources / initiator_depth of rdma_connect
  bool keep_memory = false;
  std::vector<std::string> cannot;
};
ConnectPlan PlanConnect(const std::optional<wire::ConnectDirective>& directive, uint32_t device_max_ird,
                        uint32_t device_max_ord, uint32_t min_ird = 16);

// A completion or asynchronous event as the ULP sees it, independent of the
// verbs structures.
struct Completion {
  enum class Kind : uint8_t {
    kReceive,       // a Send-type message was delivered into a receive buffer
    kReceiveImm,    // delivered with immediate data
    kSendComplete,  // one of our Event Sends completed
    kReceiveError,  // a receive completed with an error status
    kSendError,     // a send completed with an error status
    kAsyncError,    // an asynchronous error event (e.g. QP fatal)
  };
  Kind kind = Kind::kReceive;
  bool flushed = false;                      // error status is "work request flushed"
  uint32_t status = 0;                       // native status (ibv_wc_status / ibv_event_type)
  wire::ByteSpan data;                       // delivered octets (kReceive)
  std::optional<uint32_t> invalidated_stag;  // Send with Invalidate
  uint64_t immediate = 0;                    // kReceiveImm
};

// Per-connection convention state: numbers the Event Records and decides
// when the stream has left Full Operation (no Event Send after that, docs
// §6.4). One instance per accepted connection.
class ConnectionEvents {
 public:
  // The Event Record payload to send for `c`, or nothing. A flushed
  // completion means the stream is already gone: no record, and none
  // after it. Any other error is reported once, then the connection stops.
  std::optional<wire::Bytes> OnCompletion(const Completion& c);
  // The Command Completed record (Event Type 4, §7.3) for `done`.
  std::optional<wire::Bytes> OnCommandDone(const CommandTracker::Done& done);
  // A commanded Send was posted: it took the next QN 0 MSN, which Event
  // Records skip (their Sequence Number is their Send's MSN, §6.3).
  void TakeMsn() { ++next_msn_; }
  // The LLP closed, or a Terminate went either way: no records after this.
  void Stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  uint32_t events_sent() const { return events_sent_; }
  uint32_t completion_errors() const { return completion_errors_; }
  // The stack raised an asynchronous QP error on the connection.
  bool stack_error() const { return stack_error_; }

 private:
  wire::Bytes Emit(wire::EventRecord ev);
  uint32_t next_msn_ = 1;  // the QN 0 MSN of the next Send the agent posts
  uint32_t events_sent_ = 0;
  uint32_t completion_errors_ = 0;
  bool stack_error_ = false;
  bool stopped_ = false;
};

// The previous-connection outcome block (§3.4) of a finished connection,
// as far as verbs tells its ULP: Outcome 2 (a Terminate sent, code
// unknown) when the stack raised an asynchronous QP error (the RNIC
// detected an error, which iWARP reports with a Terminate, RFC 5040 §7),
// else Outcome 1 (closed). rdma_cm reports a Terminate the stack received
// as a plain disconnect, so Outcome 3 is never reported. The counts
// saturate at 65535.
wire::PreviousOutcome OutcomeOf(uint32_t connection_serial, const ConnectionEvents& events);

// The largest Event Record payload (36 octets + 64-octet prefix).
inline constexpr std::size_t kMaxEventRecordLength = wire::kEventRecordHeaderLength + wire::kEventPrefixMax;

}  // namespace rdmapct::agent
