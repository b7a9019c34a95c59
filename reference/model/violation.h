// What the model found wrong with traffic it received (or with its own
// configuration of an exchange): one ViolationKind per distinguishable rule
// break, for every profile. terminate_map.h maps each kind to the Terminate
// the model sends, the RFC-allowed accept-set and the requirement ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "reference/wire/ddp.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::model {

enum class ViolationKind : uint8_t {
  // --- DDP (RFC 5041 §4, §7.1) -------------------------------------------
  kDdpHeaderTruncated,         // ULPDU shorter than its DDP header (decisions D-F4)
  kInvalidDdpVersionTagged,    // DV != negotiated, T=1
  kInvalidDdpVersionUntagged,  // DV != negotiated, T=0
  kInvalidQn,                  // U1: QN not defined for this stream/profile
  kMsnNoBufferAvailable,       // U2: next MSN but no buffer (QN0 receive / QN1 slot / QN3 response)
  kMsnRangeNotValid,           // U5: MSN outside [first, last] available buffer
  kInvalidMo,                  // U3: MO outside the Untagged Buffer
  kMessageTooLong,             // U4: MO + length beyond the Untagged Buffer (Send > receive)
  kBrokenMessageStructure,     // F.4: L=1 disagreements inside one untagged message
  kTaggedInvalidStag,          // G1/G2: STag unknown or invalidated
  kTaggedStagNotAssociated,    // G1: STag of another stream / protection domain
  kTaggedAccessRights,         // A.3: Write to a region without Remote Write
  kTaggedBaseOrBounds,         // G3/G4
  kTaggedToWrap,               // G5
  // --- RDMAP common (RFC 5040 §4.1, §7.2) ---------------------------------
  kInvalidRdmapVersion,   // RV != negotiated
  kUnexpectedOpcode,      // opcode not defined by the profile
  kOpcodeQueueMismatch,   // valid opcode on the wrong QN (A.6)
  kOpcodeTaggedMismatch,  // valid opcode with the wrong DDP T flag (A.6)
  kRdmapHeaderLength,     // DDP message length != RDMAP header (+payload) length
  // --- Send with Invalidate (RFC 5040 §5.3, §7.2; decisions D-A1/D-A2) ----------
  kInvalidateStagInvalid,           // unknown or already invalid STag
  kInvalidateStagNotAssociated,     // STag of another stream
  kInvalidateStagNotInvalidatable,  // region may not be invalidated remotely
  // --- RDMA Read Request at the responder (RFC 5040 §5.2.1, §6.1, §7.2) --
  kReadSourceInvalidStag,
  kReadSourceNotAssociated,
  kReadSourceAccessRights,
  kReadSourceBaseOrBounds,
  kReadSourceToWrap,
  kIrdExceeded,  // §6.1 MUST NOT exceed IRD (decisions D-A7)
  // --- RDMA Read Response at the requester (RFC 5040 §5.2.2) -------------
  kReadResponseUnexpected,  // no outstanding Read Request
  kReadResponseMismatch,    // STag / TO / length differ from the request (5.2.2 MAY)
  // --- Terminate received (RFC 5040 §5.4) ---------------------------------
  kMalformedTerminate,     // a Terminate that is not a valid Terminate (A.9)
  kMessageAfterTerminate,  // peer sent more after its own Terminate (5.4-10)
  // --- RFC 7306 -----------------------------------------------------------
  kImmediateDataLength,      // Immediate Data payload != 8 (C.6)
  kAtomicUnsupportedOpcode,  // AOpCode not FetchAdd/CmpSwap (C.3)
  kAtomicMisaligned,         // target not 64-bit aligned (R7306-8.2-05)
  kAtomicInvalidStag,        // C.4
  kAtomicStagNotAssociated,
  kAtomicAccessRights,
  kAtomicBaseOrBounds,
  kAtomicToWrap,
  kUnexpectedResponse,        // QN3 response with no outstanding request (R7306-5.2.2-S7)
  kResponseOpcodeMismatch,    // QN3 response type differs from the matching request
  kAtomicResponseIdMismatch,  // Original Request Identifier echo wrong (C.8)
  // --- draft-talpey-rdma-commit-01 ---------------------------------------
  kCommitInvalidStag,  // D.5 (Flush / Verify / Atomic Write target)
  kCommitStagNotAssociated,
  kCommitAccessRights,  // not Flushable / Verifiable / Remote Write (D.7)
  kCommitBaseOrBounds,
  kCommitToWrap,
  kFlushInvalidFlags,      // D.7: no known disposition bit / unknown bits
  kVerifyHashMismatch,     // RCOMMIT-3.1.2-02
  kAtomicWriteLength,      // Data Sink Length != 8 (RCOMMIT-3.1.3.1-03)
  kAtomicWriteMisaligned,  // RCOMMIT-3.1.3.1-04
  // --- LLP (RFC 5044 §8) reported by the deframer -------------------------
  kLlpCrcError,
  kLlpMarkerMismatch,
  kLlpOtherError,
  // --- what this endpoint's own side sent (ObserveTransmitted, passive audit)
  kOutboundMalformed,            // undecodable, or a header field a sender MUST set otherwise
  kOutboundMsnSequence,          // MSN not the next one on its queue (R5041-4.3-07/08)
  kOutboundOverMulpdu,           // ULPDU longer than MULPDU (R5041-5.2-01)
  kOutboundOrdExceeded,          // more requests outstanding than ORD (R5040-6.1-09)
  kOutboundUnsolicitedResponse,  // a response with no inbound request waiting for it
  kOutboundResponseMismatch,     // response to the wrong request / STag / TO / length / ReqID
  kOutboundAfterTerminate,       // anything sent after its own Terminate (R5040-5.4-10)
  kCount
};

inline constexpr std::size_t kViolationKindCount = static_cast<std::size_t>(ViolationKind::kCount);

// The first offending inbound segment, as the Terminate must echo it.
struct OffendingSegment {
  bool has_ddp_header = false;        // false for LLP errors / truncated headers
  wire::DdpSegmentHeader ddp_header;  // exactly as received
  uint32_t ulpdu_length = 0;          // DDP header + payload octets handed up
  bool has_read_request = false;      // the segment is an RDMA Read Request
  // Read Request header, updated by the octets already returned (RFC 5040 §4.8).
  wire::ReadRequestHeader read_request;
};

struct Violation {
  ViolationKind kind = ViolationKind::kCount;
  const char* requirement_id = "";  // the most specific id (the table lists all)
  std::string detail;               // one line for humans
  OffendingSegment offending;       // filled by the endpoint
  uint64_t segment_index = 0;       // 0-based count of inbound segments
};

// Short name, e.g. "tagged-base-or-bounds".
const char* ViolationKindName(ViolationKind kind);

}  // namespace rdmapct::model
