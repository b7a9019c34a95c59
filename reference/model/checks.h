// One small check per rule family of the receive path. Each returns the
// violation it finds (kind, requirement id, detail) or nothing; the endpoint
// fills in the offending segment and latches the first one. Checks are pure
// functions of their inputs, so the extension handlers (rx_atomic.cc,
// rx_commit.cc) reuse them, and each fault switch sits inside the check it
// disables.
#pragma once

#include <cstdint>
#include <optional>

#include "reference/model/faults.h"
#include "reference/model/resources.h"
#include "reference/model/violation.h"
#include "reference/wire/ddp.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/profile.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::model {

using CheckResult = std::optional<Violation>;

// Builds a violation (no offending segment yet).
Violation MakeViolation(ViolationKind kind, const char* requirement_id, std::string detail);

// --- DDP ---------------------------------------------------------------------
CheckResult CheckDdpVersion(const wire::DdpSegmentHeader& h, uint8_t expected, const FaultSet& faults);
// U1: QN 0-2 always, QN 3 with RFC 7306 / COMMIT.
CheckResult CheckQueueNumber(const wire::DdpSegmentHeader& h, wire::Profile profile, const FaultSet& faults);

// --- RDMAP control field -------------------------------------------------------
CheckResult CheckRdmapVersion(const wire::RdmapControl& c, uint8_t expected, const FaultSet& faults);
// The opcode is defined by the profile, and the T flag / QN match Figure 4.
CheckResult CheckOpcode(const wire::RdmapMessageView& v, const FaultSet& faults);

// --- Untagged buffers ------------------------------------------------------------
// U2/U5 for a queue whose legal MSNs are [expected, expected + available).
// `available` == 0 with msn == expected is "no buffer available".
CheckResult CheckMsn(uint32_t msn, uint32_t expected, uint32_t available, uint32_t queue_number,
                     const FaultSet& faults);
// U3/U4: MO and MO + length inside a buffer of `capacity` octets.
CheckResult CheckMessageOffset(uint32_t message_offset, std::size_t length, uint64_t capacity, const FaultSet& faults);

// F.4: a segment of an untagged message agrees with the L=1 segment (ends
// inside the message; a second L=1 ends at the same place; an L=1 segment
// does not end before octets already received).
CheckResult CheckMessageStructure(const ReceiveBuffer& buffer, uint32_t message_offset, std::size_t length, bool last);

// --- Tagged buffers ---------------------------------------------------------------
// The kinds one family of tagged-access errors reports (DDP placement, Read
// Request source, Atomic target, COMMIT target).
struct TaggedErrorKinds {
  ViolationKind invalid_stag;
  ViolationKind not_associated;
  ViolationKind access_rights;
  ViolationKind base_or_bounds;
  ViolationKind to_wrap;
  const char* invalid_stag_id;
  const char* not_associated_id;
  const char* access_rights_id;
  const char* base_or_bounds_id;
  const char* to_wrap_id;
};
extern const TaggedErrorKinds kDdpPlacementErrors;  // Write / Read Response (RFC 5041 §7.1)
extern const TaggedErrorKinds kReadSourceErrors;    // Read Request (RFC 5040 §7.2)
extern const TaggedErrorKinds kAtomicTargetErrors;  // Atomic Request (decisions D-C4)
extern const TaggedErrorKinds kCommitTargetErrors;  // Flush / Verify / Atomic Write (D.5)

CheckResult CheckTaggedStag(const MemoryRegion* region, uint32_t stag, const TaggedErrorKinds& kinds,
                            const FaultSet& faults);
CheckResult CheckStreamAssociation(const MemoryRegion& region, uint32_t stream_id, const TaggedErrorKinds& kinds,
                                   const FaultSet& faults);
CheckResult CheckAccessRights(const MemoryRegion& region, uint8_t required, const TaggedErrorKinds& kinds,
                              const FaultSet& faults);
CheckResult CheckToWrap(uint64_t tagged_offset, uint64_t length, const TaggedErrorKinds& kinds, const FaultSet& faults);
CheckResult CheckTaggedBounds(const MemoryRegion& region, uint64_t tagged_offset, uint64_t length,
                              const TaggedErrorKinds& kinds, const FaultSet& faults);

// All of the above in the model's order: STag valid, associated, access,
// then wrap/bounds (order chosen by wrap_before_bounds). `length` 0 is
// checked too; callers skip the call where the RFC forbids checking
// (zero-length tagged messages, zero-length Read Requests).
CheckResult CheckTaggedAccess(const Resources& resources, uint32_t stream_id, uint32_t stag, uint64_t tagged_offset,
                              uint64_t length, uint8_t required_access, const TaggedErrorKinds& kinds,
                              bool wrap_before_bounds, const FaultSet& faults);

// --- Message-specific -------------------------------------------------------------
// DDP message length of a single-segment request/response equals its RDMAP
// header length (Read Request 28, Atomic Request 52, ...). Immediate Data
// reports kImmediateDataLength.
CheckResult CheckRdmapHeaderLength(const wire::OpcodeInfo& info, std::size_t ddp_payload_length,
                                   const FaultSet& faults = {});
// RFC 5040 §5.3 / §7.2: the Invalidate STag of a Send with Invalidate.
CheckResult CheckInvalidateStag(const Resources& resources, uint32_t stream_id, uint32_t stag, const FaultSet& faults);
// RFC 7306 §5.1 / §8.2: the ULP buffer address (memory object offset) of TO
// is 64-bit aligned. `kind` selects Atomic or Atomic Write.
CheckResult CheckAtomicAlignment(const MemoryRegion& region, uint64_t tagged_offset, ViolationKind kind,
                                 const char* requirement_id);
// COMMIT §3.1.3.1: Data Sink Length is 8.
CheckResult CheckAtomicWriteLength(uint32_t data_sink_length, const FaultSet& faults);
// COMMIT §3.1.1.1 / decisions D-D7: Flush Disposition Flags.
CheckResult CheckFlushFlags(uint32_t flags, bool reject_unknown, const FaultSet& faults);

}  // namespace rdmapct::model
