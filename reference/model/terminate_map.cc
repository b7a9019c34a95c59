#include "reference/model/terminate_map.h"

#include <algorithm>

namespace rdmapct::model {

namespace {

using wire::TerminateCode;
using VK = ViolationKind;
using E = RdmaHeaderEcho;

constexpr TerminateCode T(uint8_t layer, uint8_t etype, uint8_t code) { return TerminateCode{layer, etype, code}; }
constexpr TerminateCode kNone{};

// Builds a row; `accept` lists the RFC-allowed codes, the chosen one first.
template <std::size_t N>
constexpr TerminateRule Row(VK kind, const char* name, bool emits, const TerminateCode (&accept)[N], bool ddp, E rdma,
                            const char* ids, const char* decision) {
  static_assert(N <= kMaxAcceptSet);
  TerminateRule r{kind, name, emits, accept[0], {}, static_cast<uint8_t>(N), ddp, rdma, ids, decision};
  for (std::size_t i = 0; i < N; ++i) r.accept[i] = accept[i];
  return r;
}

// Kinds that never produce a Terminate have no accept-set.
constexpr TerminateRule Silent(VK kind, const char* name, const char* ids, const char* decision) {
  return TerminateRule{kind, name, false, kNone, {}, 0, false, E::kNever, ids, decision};
}

// REQ R5040-4.8-05 R5040-4.8-06 R5040-4.8-07 R5040-4.8-T17 R5040-4.8-T18 R5040-4.8-T19
// REQ R5040-4.8-T20 R5040-4.8-T21 R5041-7.2-01
// Figure 10: RDMAP Remote Protection errors echo the RDMA header (only Read
// Requests have one, §4.8); Remote Operation and DDP errors echo the DDP
// header and length; LLP errors echo nothing.
constexpr TerminateRule kRules[] = {
    // --- DDP ---------------------------------------------------------------
    Row(VK::kDdpHeaderTruncated, "ddp-header-truncated", true,
        {T(1, 0, 0x00), T(1, 1, 0x01), T(1, 2, 0x04), T(1, 2, 0x05), T(0, 2, 0xFF), T(0, 2, 0x07)}, false, E::kNever,
        "R5041-4.1-01 R5041-7.1-01 R5041-6.2.2-01", "decisions D-F4"),
    Row(VK::kInvalidDdpVersionTagged, "invalid-ddp-version-tagged", true, {T(1, 1, 0x04), T(1, 2, 0x06)}, true,
        E::kNever, "R5041-4.1-11 R5041-4.1-12 R5041-7.2-T06", "decisions D-F2, D-A5"),
    Row(VK::kInvalidDdpVersionUntagged, "invalid-ddp-version-untagged", true, {T(1, 2, 0x06), T(1, 1, 0x04)}, true,
        E::kNever, "R5041-4.1-11 R5041-4.1-12 R5041-7.2-T12", "decisions D-F2, D-A5"),
    Row(VK::kInvalidQn, "invalid-qn", true, {T(1, 2, 0x01)}, true, E::kNever,
        "R5041-7.1-U1 R5041-7.2-T07 R7306-10.2-01", "decisions D-F3"),
    Row(VK::kMsnNoBufferAvailable, "msn-no-buffer-available", true, {T(1, 2, 0x02), T(1, 2, 0x03)}, true, E::kNever,
        "R5041-7.1-U2 R5041-7.2-T08 R5040-5.3-02 R5041-7.1-N4", "decisions D-F1"),
    Row(VK::kMsnRangeNotValid, "msn-range-not-valid", true, {T(1, 2, 0x03), T(1, 2, 0x02)}, true, E::kNever,
        "R5041-7.1-U5 R5041-7.2-T09 R5041-4.3-07 R5041-4.3-08 R5040-5.2.1-02", "decisions D-F1, D-F7"),
    Row(VK::kInvalidMo, "invalid-mo", true, {T(1, 2, 0x04), T(1, 2, 0x05)}, true, E::kNever,
        "R5041-7.1-U3 R5041-7.2-T10", "decisions D-F1"),
    Row(VK::kMessageTooLong, "message-too-long", true, {T(1, 2, 0x05), T(1, 2, 0x04)}, true, E::kNever,
        "R5041-7.1-U4 R5041-7.2-T11 R5040-5.3-04", "decisions D-A7, D-F1"),
    Row(VK::kBrokenMessageStructure, "broken-message-structure", true,
        {T(1, 2, 0x04), T(1, 2, 0x05), T(1, 2, 0x03), T(1, 0, 0x00), T(0, 2, 0x07), T(0, 2, 0xFF)}, true, E::kNever,
        "R5041-4.1-05 R5041-4.1-07 R5041-4.3-06", "decisions D-F4"),
    Row(VK::kTaggedInvalidStag, "tagged-invalid-stag", true, {T(1, 1, 0x00)}, true, E::kNever,
        "R5041-7.1-G1 R5041-7.1-G2 R5041-7.2-T02 R5040-7.2-01 R5040-5.2.2-05", ""),
    Row(VK::kTaggedStagNotAssociated, "tagged-stag-not-associated", true, {T(1, 1, 0x02), T(1, 1, 0x00)}, true,
        E::kNever, "R5041-7.1-G1 R5041-7.2-T04 R5041-4.2-05", "decisions D-F1"),
    Row(VK::kTaggedAccessRights, "tagged-access-rights", true, {T(1, 1, 0x00), T(0, 1, 0x02)}, true, E::kNever,
        "R5041-7.1-G2 R5040-8.1.1-05", "decisions D-A3"),
    Row(VK::kTaggedBaseOrBounds, "tagged-base-or-bounds", true, {T(1, 1, 0x01)}, true, E::kNever,
        "R5041-7.1-G3 R5041-7.1-G4 R5041-7.2-T03 R5040-5.1-04", ""),
    Row(VK::kTaggedToWrap, "tagged-to-wrap", true, {T(1, 1, 0x03), T(1, 1, 0x01)}, true, E::kNever,
        "R5041-7.1-G5 R5041-7.2-T05 R5040-4.4-05", "decisions D-A7, D-F1"),
    // --- RDMAP common ---------------------------------------------------------
    Row(VK::kInvalidRdmapVersion, "invalid-rdmap-version", true, {T(0, 2, 0x05)}, true, E::kNever,
        "R5040-7.2-03 R5040-7.2-08 R5040-4.1-08 R7306-8.2-03 R7306-4.1-01", "decisions D-A5"),
    Row(VK::kUnexpectedOpcode, "unexpected-opcode", true, {T(0, 2, 0x06)}, true, E::kNever,
        "R5040-7.2-02 R5040-7.2-07 R5040-4.1-T09 R7306-1.1-05 RCOMMIT-3.1.4-04", "decisions D-D1"),
    Row(VK::kOpcodeQueueMismatch, "opcode-queue-mismatch", true, {T(0, 2, 0x06), T(1, 2, 0x01)}, true, E::kNever,
        "R5040-5.2.1-06 R5040-5.3-09 R5040-5.4-03 R7306-8.2-02 R7306-5.2.1-S5", "decisions D-A6"),
    Row(VK::kOpcodeTaggedMismatch, "opcode-tagged-mismatch", true, {T(0, 2, 0x06), T(1, 2, 0x01), T(1, 1, 0x00)}, true,
        E::kNever, "R5040-4.1-05 R5040-4.1-T01 R5040-7.2-02", "decisions D-A6"),
    Row(VK::kRdmapHeaderLength, "rdmap-header-length", true,
        {T(0, 2, 0xFF), T(0, 2, 0x06), T(0, 2, 0x07), T(1, 2, 0x05)}, true, E::kNever,
        "R5040-4.2-01 R5040-4.2-T02 R5040-4.4-01 R7306-4.2-T03", "decisions D-C6 (by analogy)"),
    // --- Send with Invalidate -----------------------------------------------------
    Row(VK::kInvalidateStagInvalid, "invalidate-stag-invalid", true,
        {T(0, 1, 0x09), T(0, 2, 0x09), T(0, 1, 0x00), T(0, 1, 0x03)}, true, E::kNever, "R5040-7.2-04 R5040-5.3-16",
        "decisions D-A1, D-A2"),
    Row(VK::kInvalidateStagNotAssociated, "invalidate-stag-not-associated", true,
        {T(0, 1, 0x09), T(0, 2, 0x09), T(0, 1, 0x03), T(0, 1, 0x00)}, true, E::kNever,
        "R5040-7.2-05 R5040-5.3-14 R5040-5.3-16", "decisions D-A1, D-A2"),
    Row(VK::kInvalidateStagNotInvalidatable, "invalidate-stag-not-invalidatable", true,
        {T(0, 1, 0x09), T(0, 2, 0x09), T(0, 1, 0x00), T(0, 1, 0x03)}, true, E::kNever, "R5040-5.3-16",
        "decisions D-A1, D-A2"),
    // --- Read Request (responder) -------------------------------------------------------
    Row(VK::kReadSourceInvalidStag, "read-source-invalid-stag", true, {T(0, 1, 0x00)}, true, E::kIfReadRequest,
        "R5040-7.2-09a R5040-5.2.1-13 R5040-7.1-02c3 R5040-4.8-14", ""),
    Row(VK::kReadSourceNotAssociated, "read-source-not-associated", true, {T(0, 1, 0x03), T(0, 1, 0x00)}, true,
        E::kIfReadRequest, "R5040-7.2-09b R5040-7.1-02c3", ""),
    Row(VK::kReadSourceAccessRights, "read-source-access-rights", true, {T(0, 1, 0x02), T(0, 1, 0x00)}, true,
        E::kIfReadRequest, "R5040-8.1.1-05 R5040-7.1-02c3", "decisions D-A3"),
    Row(VK::kReadSourceBaseOrBounds, "read-source-base-or-bounds", true, {T(0, 1, 0x01)}, true, E::kIfReadRequest,
        "R5040-7.2-09c R5040-7.2-09d R5040-7.1-02c3", ""),
    Row(VK::kReadSourceToWrap, "read-source-to-wrap", true, {T(0, 1, 0x04), T(0, 1, 0x01)}, true, E::kIfReadRequest,
        "R5040-7.2-09e R5040-7.1-02c3", "decisions D-A7"),
    Row(VK::kIrdExceeded, "ird-exceeded", true, {T(1, 2, 0x02), T(0, 2, 0x07)}, true, E::kNever,
        "R5040-6.1-10 R5040-5.2.2-03 R7306-5.2.2-S4", "decisions D-A7, D-C7"),
    // --- Read Response (requester) ---------------------------------------------------
    Row(VK::kReadResponseUnexpected, "read-response-unexpected", true,
        {T(0, 2, 0x06), T(1, 1, 0x00), T(1, 1, 0x01), T(0, 2, 0x07)}, true, E::kNever,
        "R5040-5.2.2-05 R5040-5.2.2-08 R5040-5.2-01", "decisions D-A7"),
    Row(VK::kReadResponseMismatch, "read-response-mismatch", true,
        {T(1, 1, 0x01), T(1, 1, 0x00), T(0, 2, 0x06), T(0, 2, 0x07)}, true, E::kNever,
        "R5040-5.2.2-08 R5040-5.2.2-09 R5040-4.4-03", "decisions D-A7"),
    // --- Terminate received ------------------------------------------------------------
    Row(VK::kMalformedTerminate, "malformed-terminate", false, {T(0, 2, 0xFF), T(0, 2, 0x06), T(0, 2, 0x07)}, true,
        E::kNever, "R5040-5.4-08 R5040-4.8-01", "decisions D-A9"),
    Silent(VK::kMessageAfterTerminate, "message-after-terminate", "R5040-5.4-10 R5040-5.4-01", "decisions D-E, D-F8"),
    // --- RFC 7306 ---------------------------------------------------------------------------
    Row(VK::kImmediateDataLength, "immediate-data-length", true,
        {T(0, 2, 0xFF), T(0, 2, 0x06), T(0, 2, 0x07), T(1, 2, 0x05)}, true, E::kNever,
        "R7306-6.3-07 R7306-6.3-05 R7306-4.2-T01", "decisions D-C6"),
    Row(VK::kAtomicUnsupportedOpcode, "atomic-unsupported-opcode", true, {T(0, 2, 0x06), T(0, 2, 0xFF), T(0, 2, 0x07)},
        true, E::kNever, "R7306-5.2.1-S4 R7306-5.2.1-T03 R7306-5.2.1-04", "decisions D-C3"),
    Row(VK::kAtomicMisaligned, "atomic-misaligned", true, {T(0, 2, 0x07)}, true, E::kNever,
        "R7306-8.2-04 R7306-8.2-05 R7306-5.1.1-03 R7306-5.1.1-05 R7306-5.1.2-07 R7306-5.2.1-08", "decisions D-C5"),
    Row(VK::kAtomicInvalidStag, "atomic-invalid-stag", true, {T(0, 1, 0x00), T(0, 2, 0x07), T(0, 2, 0xFF)}, true,
        E::kNever, "R7306-9-01 R7306-5-06", "decisions D-C4, D-C5"),
    Row(VK::kAtomicStagNotAssociated, "atomic-stag-not-associated", true,
        {T(0, 1, 0x03), T(0, 1, 0x00), T(0, 2, 0x07), T(0, 2, 0xFF)}, true, E::kNever, "R7306-9-01 R7306-5-06",
        "decisions D-C4, D-C5"),
    Row(VK::kAtomicAccessRights, "atomic-access-rights", true,
        {T(0, 1, 0x02), T(0, 1, 0x00), T(0, 2, 0x07), T(0, 2, 0xFF)}, true, E::kNever, "R7306-9-01 R7306-5-06",
        "decisions D-C4, D-C5"),
    Row(VK::kAtomicBaseOrBounds, "atomic-base-or-bounds", true, {T(0, 1, 0x01), T(0, 2, 0x07), T(0, 2, 0xFF)}, true,
        E::kNever, "R7306-9-01 R7306-5-06", "decisions D-C4, D-C5"),
    Row(VK::kAtomicToWrap, "atomic-to-wrap", true, {T(0, 1, 0x04), T(0, 1, 0x01), T(0, 2, 0x07), T(0, 2, 0xFF)}, true,
        E::kNever, "R7306-9-01 R7306-5-06", "decisions D-C4, D-C5"),
    Row(VK::kUnexpectedResponse, "unexpected-response", true, {T(1, 2, 0x02), T(1, 2, 0x03), T(0, 2, 0x06)}, true,
        E::kNever, "R7306-5.2.2-S7 R7306-5-08 R7306-5.2.2-S5", "decisions D-C8"),
    Row(VK::kResponseOpcodeMismatch, "response-opcode-mismatch", true, {T(0, 2, 0x06), T(0, 2, 0xFF)}, true, E::kNever,
        "R7306-5.2.2-S7 R7306-5.4-R8b RCOMMIT-3.1-07", "decisions D-C8, D-E"),
    Row(VK::kAtomicResponseIdMismatch, "atomic-response-id-mismatch", true,
        {T(0, 2, 0xFF), T(0, 2, 0x06), T(0, 2, 0x07)}, true, E::kNever, "R7306-5.2.2-02 R7306-5.2.2-S7",
        "decisions D-C8"),
    // --- COMMIT -------------------------------------------------------------------------------
    Row(VK::kCommitInvalidStag, "commit-invalid-stag", true, {T(0, 1, 0x00), T(0, 2, 0x07), T(0, 2, 0xFF)}, true,
        E::kNever, "RCOMMIT-3.1.1-02 RCOMMIT-3.1.2-02 RCOMMIT-3.1.3-02 RCOMMIT-5.2-02 RCOMMIT-7-01", "decisions D-D5"),
    Row(VK::kCommitStagNotAssociated, "commit-stag-not-associated", true,
        {T(0, 1, 0x03), T(0, 1, 0x00), T(0, 2, 0x07), T(0, 2, 0xFF)}, true, E::kNever, "RCOMMIT-5.2-02 RCOMMIT-7-01",
        "decisions D-D5"),
    Row(VK::kCommitAccessRights, "commit-access-rights", true,
        {T(0, 1, 0x02), T(0, 1, 0x00), T(0, 2, 0x07), T(0, 2, 0xFF)}, true, E::kNever,
        "RCOMMIT-2.4-01 RCOMMIT-2.1-03 RCOMMIT-5.2-02", "decisions D-D5, D-D7"),
    Row(VK::kCommitBaseOrBounds, "commit-base-or-bounds", true, {T(0, 1, 0x01), T(0, 2, 0x07), T(0, 2, 0xFF)}, true,
        E::kNever, "RCOMMIT-3.1.1-02 RCOMMIT-5.2-02 RCOMMIT-7-01", "decisions D-D5"),
    Row(VK::kCommitToWrap, "commit-to-wrap", true, {T(0, 1, 0x04), T(0, 1, 0x01), T(0, 2, 0x07), T(0, 2, 0xFF)}, true,
        E::kNever, "RCOMMIT-5.2-02 RCOMMIT-7-01", "decisions D-D5"),
    Row(VK::kFlushInvalidFlags, "flush-invalid-flags", true, {T(0, 2, 0xFF), T(0, 2, 0x07), T(0, 2, 0x06)}, true,
        E::kNever, "RCOMMIT-3.1.1-02 RCOMMIT-3.1.1.1-03", "decisions D-D7"),
    Row(VK::kVerifyHashMismatch, "verify-hash-mismatch", true, {T(0, 2, 0xFF), T(0, 2, 0x07)}, true, E::kNever,
        "RCOMMIT-3.1.2-02 RCOMMIT-3.1.2.1-03 RCOMMIT-5.1-C3", "decisions D-D6"),
    Row(VK::kAtomicWriteLength, "atomic-write-length", true, {T(0, 2, 0x07), T(0, 2, 0xFF)}, true, E::kNever,
        "RCOMMIT-3.1.3.1-03 RCOMMIT-3.1.3-02", "decisions D-D10"),
    Row(VK::kAtomicWriteMisaligned, "atomic-write-misaligned", true, {T(0, 2, 0x07)}, true, E::kNever,
        "RCOMMIT-3.1.3.1-04 RCOMMIT-3.1.3.1-11 RCOMMIT-3.1.3.1-09", "decisions D-D5"),
    // --- LLP ------------------------------------------------------------------------------------
    Row(VK::kLlpCrcError, "llp-crc-error", true, {T(2, 0, 0x02)}, false, E::kNever,
        "R5044-8-T02 R5044-8-02 R5041-7-01 R5040-6.2.1-01 R5040-4.8-T21", "decisions D-G10"),
    Row(VK::kLlpMarkerMismatch, "llp-marker-mismatch", true, {T(2, 0, 0x03)}, false, E::kNever,
        "R5044-8-T03 R5044-8-03 R5041-7-01 R5040-4.8-T21", ""),
    Silent(VK::kLlpOtherError, "llp-other-error", "R5041-6.2.2-01 R5040-7.1-01 R5044-8-07", "decisions D-G6, D-G11"),
    // --- the observed endpoint's own transmissions: reported, never answered ---
    Silent(VK::kOutboundMalformed, "outbound-malformed",
           "R5040-4.1-01 R5040-4.1-05 R5040-4.1-08 R5040-4.1-09 R5041-4.1-09 R5041-4.1-11", ""),
    Silent(VK::kOutboundMsnSequence, "outbound-msn-sequence", "R5041-4.3-07 R5041-4.3-08 R5040-5.3-10 R5040-5.2.1-07",
           ""),
    Silent(VK::kOutboundOverMulpdu, "outbound-over-mulpdu", "R5041-5.2-01", "decisions D-E"),
    Silent(VK::kOutboundOrdExceeded, "outbound-ord-exceeded", "R5040-6.1-09 R7306-5.2.2-S5", "decisions D-C7"),
    Silent(VK::kOutboundUnsolicitedResponse, "outbound-unsolicited-response", "R5040-5.2-01 R7306-5.2.1-S8", ""),
    Silent(VK::kOutboundResponseMismatch, "outbound-response-mismatch",
           "R5040-4.4-02 R5040-4.4-03 R5040-5.2.2-07 R5040-5.2.2-09 R7306-5.2.2-02 "
           "R7306-5.2.2-S8",
           "decisions D-C8"),
    Silent(VK::kOutboundAfterTerminate, "outbound-after-terminate", "R5040-5.4-10", ""),
};

static_assert(std::size(kRules) == kViolationKindCount, "one TerminateRule per ViolationKind");

constexpr bool RowsInOrder() {
  for (std::size_t i = 0; i < std::size(kRules); ++i) {
    if (static_cast<std::size_t>(kRules[i].kind) != i) return false;
  }
  return true;
}
static_assert(RowsInOrder(), "kRules rows must follow ViolationKind order");

}  // namespace

std::span<const TerminateRule> TerminateRules() { return kRules; }

const TerminateRule& RuleFor(ViolationKind kind) {
  return kRules[static_cast<std::size_t>(kind) % kViolationKindCount];
}

const char* ViolationKindName(ViolationKind kind) {
  if (kind == ViolationKind::kCount) return "none";
  return RuleFor(kind).name;
}

// REQ R5040-4.8-03
// Each DecisionOptions switch picks the other member of the accept-set.
wire::TerminateCode ChosenCode(ViolationKind kind, const DecisionOptions& o) {
  switch (kind) {
    case VK::kTaggedAccessRights:
      if (o.write_access_error_as_rdmap) return T(0, 1, 0x02);
      break;
    case VK::kOpcodeQueueMismatch:
    case VK::kOpcodeTaggedMismatch:
      if (o.opcode_queue_mismatch_as_ddp) return T(1, 2, 0x01);
      break;
    case VK::kIrdExceeded:
      if (o.ird_overrun_as_rdmap) return T(0, 2, 0x07);
      break;
    case VK::kInvalidateStagInvalid:
    case VK::kInvalidateStagNotAssociated:
    case VK::kInvalidateStagNotInvalidatable:
      if (o.invalidate_error_as_remote_operation) return T(0, 2, 0x09);
      break;
    default:
      break;
  }
  return RuleFor(kind).chosen;
}

bool IsAccepted(ViolationKind kind, wire::TerminateCode code) {
  const auto set = RuleFor(kind).accept_set();
  return std::find(set.begin(), set.end(), code) != set.end();
}

}  // namespace rdmapct::model
