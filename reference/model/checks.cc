#include "reference/model/checks.h"

#include <string>

#include "reference/wire/hex.h"

namespace rdmapct::model {

namespace {

using wire::HexValue;

}  // namespace

Violation MakeViolation(ViolationKind kind, const char* requirement_id, std::string detail) {
  Violation v;
  v.kind = kind;
  v.requirement_id = requirement_id;
  v.detail = std::move(detail);
  return v;
}

// REQ R5041-4.1-11 R5041-4.1-12 R5041-7.2-T06 R5041-7.2-T12
CheckResult CheckDdpVersion(const wire::DdpSegmentHeader& h, uint8_t expected, const FaultSet& faults) {
  if (h.ddp_version == expected || faults.Has(Fault::kAcceptInvalidDdpVersion)) return {};
  return MakeViolation(h.tagged ? ViolationKind::kInvalidDdpVersionTagged : ViolationKind::kInvalidDdpVersionUntagged,
                       "R5041-4.1-12",
                       "DV " + std::to_string(h.ddp_version) + " on a DV " + std::to_string(expected) + " stream");
}

// REQ R5041-7.1-U1 R7306-10.2-01
CheckResult CheckQueueNumber(const wire::DdpSegmentHeader& h, wire::Profile profile, const FaultSet& faults) {
  if (h.tagged || faults.Has(Fault::kSkipQnCheck)) return {};
  const uint32_t last = wire::ProfileIncludes(profile, wire::Profile::kRfc7306) ? 3 : 2;
  if (h.queue_number <= last) return {};
  return MakeViolation(
      ViolationKind::kInvalidQn, "R5041-7.1-U1",
      "QN " + std::to_string(h.queue_number) + " is not defined under " + std::string(wire::ProfileName(profile)));
}

// REQ R5040-7.2-03 R5040-7.2-08 R5040-4.1-08 R7306-8.2-03
CheckResult CheckRdmapVersion(const wire::RdmapControl& c, uint8_t expected, const FaultSet& faults) {
  if (c.rdma_version == expected || faults.Has(Fault::kAcceptRdmapVersion2)) return {};
  return MakeViolation(ViolationKind::kInvalidRdmapVersion, "R5040-7.2-03",
                       "RV " + std::to_string(c.rdma_version) + " on an RV " + std::to_string(expected) + " stream");
}

// REQ R5040-7.2-02 R5040-7.2-07 R5040-4.1-T09 R5040-5.2.1-06 R5040-5.3-09 R7306-8.2-02
// The Rsv bits are ignored (R5040-4.1-10): only the opcode bits are looked at.
CheckResult CheckOpcode(const wire::RdmapMessageView& v, const FaultSet& faults) {
  if (faults.Has(Fault::kAcceptUnexpectedOpcode)) return {};
  const wire::DdpSegmentHeader& h = v.ddp.header;
  if (!v.opcode_known) {
    return MakeViolation(ViolationKind::kUnexpectedOpcode, "R5040-7.2-02",
                         "opcode " + HexValue(v.ctrl.opcode) + " is not defined by the profile");
  }
  const wire::OpcodeInfo& info = *v.opcode_info;
  if (h.tagged != info.tagged) {
    return MakeViolation(ViolationKind::kOpcodeTaggedMismatch, "R5040-4.1-05",
                         std::string(info.name) + " with T=" + (h.tagged ? "1" : "0"));
  }
  // accept-atomic-response-on-any-queue: QN 1 passes as the Atomic Response's queue.
  const bool any_queue = faults.Has(Fault::kAcceptAtomicResponseOnAnyQueue) &&
                         info.opcode == wire::Opcode::kAtomicResponse && h.queue_number == 1;
  if (!h.tagged && h.queue_number != info.queue_number && !any_queue) {
    return MakeViolation(ViolationKind::kOpcodeQueueMismatch,
                         info.queue_number == 0 ? "R5040-5.3-09" : "R5040-5.2.1-06",
                         std::string(info.name) + " on QN " + std::to_string(h.queue_number));
  }
  return {};
}

// REQ R5041-7.1-U2 R5041-7.1-U5 R5041-4.3-07 R5041-4.3-08
CheckResult CheckMsn(uint32_t msn, uint32_t expected, uint32_t available, uint32_t qn, const FaultSet& faults) {
  if (faults.Has(Fault::kSkipMsnCheck)) return {};
  const uint32_t distance = msn - expected;  // modulo 2^32 (R5041-4.3-09)
  if (distance < available) return {};
  const std::string where = " on QN " + std::to_string(qn) + " (expected " + std::to_string(expected) + ", " +
                            std::to_string(available) + " buffer(s) available)";
  if (distance == 0) {
    if (faults.Has(Fault::kAcceptSendWithoutBuffer) && qn == 0) return {};
    return MakeViolation(ViolationKind::kMsnNoBufferAvailable, "R5041-7.1-U2", "MSN " + std::to_string(msn) + where);
  }
  return MakeViolation(ViolationKind::kMsnRangeNotValid, "R5041-7.1-U5", "MSN " + std::to_string(msn) + where);
}

// REQ R5041-7.1-U3 R5041-7.1-U4 R5040-5.3-04
CheckResult CheckMessageOffset(uint32_t mo, std::size_t length, uint64_t capacity, const FaultSet& faults) {
  if (faults.Has(Fault::kDeliverSendIntoSmallBuffer)) return {};
  if (mo > capacity) {
    return MakeViolation(ViolationKind::kInvalidMo, "R5041-7.1-U3",
                         "MO " + std::to_string(mo) + " beyond a " + std::to_string(capacity) + "-octet buffer");
  }
  if (uint64_t{mo} + length > capacity) {
    return MakeViolation(ViolationKind::kMessageTooLong, "R5041-7.1-U4",
                         "MO " + std::to_string(mo) + " + " + std::to_string(length) + " octets exceed a " +
                             std::to_string(capacity) + "-octet buffer");
  }
  return {};
}

// REQ R5041-4.1-05 R5041-4.1-07
CheckResult CheckMessageStructure(const ReceiveBuffer& buffer, uint32_t mo, std::size_t length, bool last) {
  const uint64_t end = uint64_t{mo} + length;
  if (buffer.message_length) {
    const uint64_t message_end = *buffer.message_length;
    if (end > message_end) {
      return MakeViolation(
          ViolationKind::kBrokenMessageStructure, "R5041-4.1-07",
          "segment ends at " + std::to_string(end) + ", past the L=1 segment's end " + std::to_string(message_end));
    }
    if (last && end != message_end) {
      return MakeViolation(
          ViolationKind::kBrokenMessageStructure, "R5041-4.1-05",
          "second L=1 segment ends at " + std::to_string(end) + ", first at " + std::to_string(message_end));
    }
    return {};
  }
  if (last && end < buffer.received.end()) {
    return MakeViolation(ViolationKind::kBrokenMessageStructure, "R5041-4.1-07",
                         "L=1 segment ends at " + std::to_string(end) + " before octets already received (" +
                             std::to_string(buffer.received.end()) + ")");
  }
  return {};
}

const TaggedErrorKinds kDdpPlacementErrors = {ViolationKind::kTaggedInvalidStag,
                                              ViolationKind::kTaggedStagNotAssociated,
                                              ViolationKind::kTaggedAccessRights,
                                              ViolationKind::kTaggedBaseOrBounds,
                                              ViolationKind::kTaggedToWrap,
                                              "R5041-7.1-G1",
                                              "R5041-7.1-G1",
                                              "R5041-7.1-G2",
                                              "R5041-7.1-G4",
                                              "R5041-7.1-G5"};
const TaggedErrorKinds kReadSourceErrors = {ViolationKind::kReadSourceInvalidStag,
                                            ViolationKind::kReadSourceNotAssociated,
                                            ViolationKind::kReadSourceAccessRights,
                                            ViolationKind::kReadSourceBaseOrBounds,
                                            ViolationKind::kReadSourceToWrap,
                                            "R5040-7.2-09a",
                                            "R5040-7.2-09b",
                                            "R5040-8.1.1-05",
                                            "R5040-7.2-09d",
                                            "R5040-7.2-09e"};
const TaggedErrorKinds kAtomicTargetErrors = {ViolationKind::kAtomicInvalidStag,
                                              ViolationKind::kAtomicStagNotAssociated,
                                              ViolationKind::kAtomicAccessRights,
                                              ViolationKind::kAtomicBaseOrBounds,
                                              ViolationKind::kAtomicToWrap,
                                              "R7306-9-01",
                                              "R7306-9-01",
                                              "R7306-9-01",
                                              "R7306-9-01",
                                              "R7306-9-01"};
const TaggedErrorKinds kCommitTargetErrors = {ViolationKind::kCommitInvalidStag,
                                              ViolationKind::kCommitStagNotAssociated,
                                              ViolationKind::kCommitAccessRights,
                                              ViolationKind::kCommitBaseOrBounds,
                                              ViolationKind::kCommitToWrap,
                                              "RCOMMIT-5.2-02",
                                              "RCOMMIT-5.2-02",
                                              "RCOMMIT-2.4-01",
                                              "RCOMMIT-5.2-02",
                                              "RCOMMIT-5.2-02"};

// REQ R5041-7.1-G1 R5041-7.1-G2 R5040-7.2-09a R5040-5.3-15
CheckResult CheckTaggedStag(const MemoryRegion* region, uint32_t stag, const TaggedErrorKinds& kinds,
                            const FaultSet& faults) {
  if (region == nullptr) {
    return MakeViolation(kinds.invalid_stag, kinds.invalid_stag_id, "STag " + HexValue(stag) + " is not registered");
  }
  if (!region->valid && !faults.Has(Fault::kAcceptInvalidatedStag)) {
    return MakeViolation(kinds.invalid_stag, kinds.invalid_stag_id, "STag " + HexValue(stag) + " has been invalidated");
  }
  return {};
}

// REQ R5041-7.1-G1 R5041-4.2-05 R5040-7.2-09b
CheckResult CheckStreamAssociation(const MemoryRegion& region, uint32_t stream_id, const TaggedErrorKinds& kinds,
                                   const FaultSet& faults) {
  if (region.stream_id == stream_id || faults.Has(Fault::kSkipStreamAssociationCheck)) return {};
  return MakeViolation(kinds.not_associated, kinds.not_associated_id,
                       "STag " + HexValue(region.stag) + " belongs to stream " + std::to_string(region.stream_id));
}

// REQ R5041-7.1-G2 R5040-8.1.1-05 RCOMMIT-2.4-01
CheckResult CheckAccessRights(const MemoryRegion& region, uint8_t required, const TaggedErrorKinds& kinds,
                              const FaultSet& faults) {
  if ((region.access & required) == required || faults.Has(Fault::kSkipAccessRightsCheck)) {
    return {};
  }
  return MakeViolation(
      kinds.access_rights, kinds.access_rights_id,
      "STag " + HexValue(region.stag) + " grants access " + HexValue(region.access) + ", needs " + HexValue(required));
}

// REQ R5041-7.1-G5 R5040-7.2-09e
CheckResult CheckToWrap(uint64_t to, uint64_t length, const TaggedErrorKinds& kinds, const FaultSet& faults) {
  if (faults.Has(Fault::kSkipToWrapCheck)) return {};
  if (to + length >= to) return {};  // the 64-bit sum itself must not wrap
  return MakeViolation(kinds.to_wrap, kinds.to_wrap_id,
                       "TO " + HexValue(to) + " + " + std::to_string(length) + " wraps 2^64");
}

// REQ R5041-7.1-G3 R5041-7.1-G4 R5040-7.2-09c R5040-7.2-09d
// Computed without overflow: a wrapping range is simply out of bounds here.
CheckResult CheckTaggedBounds(const MemoryRegion& region, uint64_t to, uint64_t length, const TaggedErrorKinds& kinds,
                              const FaultSet& faults) {
  if (faults.Has(Fault::kSkipBoundsCheck)) return {};
  const uint64_t base = region.base_tagged_offset;
  bool start_ok = to >= base && to - base <= region.length;
  bool end_ok = start_ok && length <= region.length - (to - base);
  if (faults.Has(Fault::kSkipToWrapCheck)) {
    // skip-to-wrap-check: the classic bug the wrap check exists for, an end
    // computed as TO + length in 64 bits, so a range that wraps 2^64 ends
    // "inside" the region.
    start_ok = to >= base;
    end_ok = to + length <= base + region.length;
  }
  if (start_ok && end_ok) return {};
  return MakeViolation(kinds.base_or_bounds, kinds.base_or_bounds_id,
                       "[" + HexValue(to) + ", +" + std::to_string(length) + ") outside STag " + HexValue(region.stag) +
                           " [" + HexValue(base) + ", +" + std::to_string(region.length) + ")");
}

CheckResult CheckTaggedAccess(const Resources& resources, uint32_t stream_id, uint32_t stag, uint64_t to,
                              uint64_t length, uint8_t required_access, const TaggedErrorKinds& kinds,
                              bool wrap_before_bounds, const FaultSet& faults) {
  const MemoryRegion* region = resources.FindRegion(stag);
  if (auto r = CheckTaggedStag(region, stag, kinds, faults)) return r;
  if (auto r = CheckStreamAssociation(*region, stream_id, kinds, faults)) return r;
  if (auto r = CheckAccessRights(*region, required_access, kinds, faults)) return r;
  if (wrap_before_bounds) {
    if (auto r = CheckToWrap(to, length, kinds, faults)) return r;
    return CheckTaggedBounds(*region, to, length, kinds, faults);
  }
  if (auto r = CheckTaggedBounds(*region, to, length, kinds, faults)) return r;
  return CheckToWrap(to, length, kinds, faults);
}

// REQ R5040-4.2-01 R5040-4.2-T02 R7306-6.3-07 R7306-4.2-T03 R7306-4.2-T04
CheckResult CheckRdmapHeaderLength(const wire::OpcodeInfo& info, std::size_t payload_length, const FaultSet& faults) {
  if (info.header == wire::HeaderKind::kNone || info.header_variable) return {};
  if (info.ulp_payload_allowed || payload_length == info.header_length) return {};
  // skip-header-length-check: longer messages pass (a short one has no header to use).
  if (faults.Has(Fault::kSkipHeaderLengthCheck) && payload_length > info.header_length) return {};
  const bool immediate = info.header == wire::HeaderKind::kImmediateData;
  return MakeViolation(immediate ? ViolationKind::kImmediateDataLength : ViolationKind::kRdmapHeaderLength,
                       immediate ? "R7306-6.3-07" : "R5040-4.2-01",
                       std::string(info.name) + " carries " + std::to_string(payload_length) + " octets, expected " +
                           std::to_string(info.header_length));
}

// REQ R5040-5.3-14 R5040-5.3-16 R5040-7.2-04 R5040-7.2-05
CheckResult CheckInvalidateStag(const Resources& resources, uint32_t stream_id, uint32_t stag, const FaultSet& faults) {
  if (faults.Has(Fault::kInvalidateNonInvalidatableStag)) return {};
  const MemoryRegion* region = resources.FindRegion(stag);
  if (region == nullptr || !region->valid) {
    return MakeViolation(ViolationKind::kInvalidateStagInvalid, "R5040-7.2-04",
                         "Invalidate STag " + HexValue(stag) + " is not a valid STag");
  }
  if (region->stream_id != stream_id) {
    return MakeViolation(
        ViolationKind::kInvalidateStagNotAssociated, "R5040-5.3-16",
        "Invalidate STag " + HexValue(stag) + " belongs to stream " + std::to_string(region->stream_id));
  }
  // REQ R5040-8.1.1-07: a shared STag is never remotely invalidatable;
  // invalidate-shared-stag lets a peer invalidate it anyway.
  if (region->shared && faults.Has(Fault::kInvalidateSharedStag)) return {};
  if (!region->remote_invalidatable) {
    return MakeViolation(ViolationKind::kInvalidateStagNotInvalidatable, "R5040-5.3-16",
                         "STag " + HexValue(stag) + " may not be invalidated remotely");
  }
  return {};
}

// REQ R7306-5.2.1-08 R7306-8.2-04 RCOMMIT-3.1.3.1-04
// The ULP buffer address is the octet's position in its memory object.
CheckResult CheckAtomicAlignment(const MemoryRegion& region, uint64_t to, ViolationKind kind,
                                 const char* requirement_id) {
  const uint64_t address = region.object_offset + (to - region.base_tagged_offset);
  if (address % 8 == 0) return {};
  return MakeViolation(kind, requirement_id,
                       "TO " + HexValue(to) + " maps to buffer address " + HexValue(address) + ", not 64-bit aligned");
}

// REQ RCOMMIT-3.1.3.1-03
CheckResult CheckAtomicWriteLength(uint32_t data_sink_length, const FaultSet& faults) {
  if (data_sink_length == 8 || faults.Has(Fault::kAtomicWriteWrongLengthAccepted)) return {};
  return MakeViolation(ViolationKind::kAtomicWriteLength, "RCOMMIT-3.1.3.1-03",
                       "Data Sink Length " + std::to_string(data_sink_length) + ", must be 8");
}

// REQ RCOMMIT-3.1.1.1-02 RCOMMIT-3.1.1.1-03
CheckResult CheckFlushFlags(uint32_t flags, bool reject_unknown, const FaultSet& faults) {
  if (faults.Has(Fault::kFlushIgnoreFlags)) return {};
  const uint32_t known = wire::kFlushToPersistence | wire::kFlushToGlobalVisibility;
  const bool none = (flags & known) == 0;
  const bool unknown = (flags & ~known) != 0;
  if (!none && !(reject_unknown && unknown)) return {};
  return MakeViolation(ViolationKind::kFlushInvalidFlags, "RCOMMIT-3.1.1.1-03",
                       "Flush Disposition Flags " + HexValue(flags));
}

}  // namespace rdmapct::model
