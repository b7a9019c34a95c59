// What one call into the endpoint produced: ULPDUs to send (in order), events
// for the ULP, violations found, stream state changes. The caller owns one
// Reactions and reuses it: Clear() keeps every buffer's capacity, so the
// steady-state receive path does not allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "reference/model/violation.h"
#include "reference/wire/bytes.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::model {

enum class StreamState : uint8_t {
  kStreaming,          // RDMA mode, no error
  kTerminateSent,      // we detected an error and sent (or tried to send) a Terminate
  kTerminateReceived,  // the peer's Terminate arrived
  kClosing,            // the ULP asked for a graceful close
  kError,              // failed without a Terminate on the wire (LLP lost, malformed Terminate)
};
const char* StreamStateName(StreamState s);

enum class UlpEventKind : uint8_t {
  kSendReceived,           // Send variants: receive_id, msn, length, SE, invalidated STag, data
  kImmediateDataReceived,  // receive_id, msn, value (the 8 octets, big-endian), SE
  kReadCompleted,          // requester: stag/tagged_offset (sink), length
  kAtomicCompleted,        // requester: request_id, value (Original Remote Data Value), msn (QN3)
  kFlushCompleted,         // requester: msn (QN3)
  kVerifyCompleted,        // requester: msn (QN3), data (hash)
  kAtomicWriteCompleted,   // requester: msn (QN3)
  kTerminateReceived,      // terminate = the peer's Terminate header
  kError,                  // an error surfaced to the ULP (violation = its kind)
};
const char* UlpEventKindName(UlpEventKind k);

struct UlpEvent {
  UlpEventKind kind = UlpEventKind::kError;
  wire::Opcode opcode = wire::Opcode::kSend;  // the message that caused it
  uint64_t receive_id = 0;
  uint32_t msn = 0;
  uint32_t length = 0;
  bool solicited_event = false;
  bool invalidated = false;  // Send with Invalidate: invalidated_stag was invalidated
  uint32_t invalidated_stag = 0;
  uint64_t value = 0;          // Immediate Data / Original Remote Data Value
  uint32_t request_id = 0;     // Atomic: Original Request Identifier
  uint32_t stag = 0;           // Read: Data Sink STag
  uint64_t tagged_offset = 0;  // Read: Data Sink Tagged Offset
  wire::Bytes data;            // Send payload / Verify hash (capacity reused)
  wire::TerminateHeader terminate;
  ViolationKind violation = ViolationKind::kCount;

  // Back to defaults; keeps data's capacity.
  void Reset();
};

struct StateChange {
  StreamState from;
  StreamState to;
};

class Reactions {
 public:
  void Clear();

  std::span<const wire::Bytes> segments() const { return {segments_.data(), segment_count_}; }
  std::span<const UlpEvent> events() const { return {events_.data(), event_count_}; }
  std::span<const Violation> violations() const { return violations_; }
  std::span<const StateChange> state_changes() const { return state_changes_; }

  // A cleared buffer for the next ULPDU to send (capacity reused).
  wire::Bytes& AddSegment();
  // A reset event of `kind` (capacity reused).
  UlpEvent& AddEvent(UlpEventKind kind);
  void AddViolation(const Violation& v) { violations_.push_back(v); }
  void AddStateChange(StreamState from, StreamState to) { state_changes_.push_back({from, to}); }

 private:
  std::vector<wire::Bytes> segments_;
  std::size_t segment_count_ = 0;
  std::vector<UlpEvent> events_;
  std::size_t event_count_ = 0;
  std::vector<Violation> violations_;
  std::vector<StateChange> state_changes_;
};

}  // namespace rdmapct::model
