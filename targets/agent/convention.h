// The device-independent half of rdmapct-agent: what a verbs test ULP
// advertises and how its completions become Event Records, following the
// test-ULP convention 1.0 (docs/target-convention.md). No verbs types here,
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
  // The LLP closed, or a Terminate went either way: no records after this.
  void Stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  uint32_t events_sent() const { return next_sequence_ - 1; }
  uint32_t completion_errors() const { return completion_errors_; }

 private:
  wire::Bytes Emit(wire::EventRecord ev);
  uint32_t next_sequence_ = 1;
  uint32_t completion_errors_ = 0;
  bool stopped_ = false;
};

// The largest Event Record payload (36 octets + 64-octet prefix).
inline constexpr std::size_t kMaxEventRecordLength = wire::kEventRecordHeaderLength + wire::kEventPrefixMax;

}  // namespace rdmapct::agent
