// Run-time switches for the places where the RFCs allow more than one
// reading. The defaults are the model's decisions (docs/decisions.md, one
// numbered entry each); every switch selects the other documented reading.
#pragma once

#include <cstdint>

#include "reference/wire/rdmap.h"

namespace rdmapct::model {

// decisions D-E: what a Terminate's DDP Segment Length holds.
enum class SegmentLengthConvention : uint8_t {
  kUlpduLength,    // DDP header + payload (decision 9)
  kPayloadLength,  // payload only (Linux siw)
};

// decisions D-C7 / D-E: how QN1 requests count against IRD (and ORD).
enum class IrdAccounting : uint8_t {
  kShared,    // Reads, Atomics and COMMIT requests share one IRD/ORD budget (decision 12)
  kAdditive,  // Atomics/COMMIT have their own budget (`extension_ird`), RFC 7306 §5.2.2 item 4
};

struct DecisionOptions {
  // D.2 / A.4: Terminate header shape.
  wire::TerminateForm terminate_form = wire::TerminateForm::kBitDriven;
  SegmentLengthConvention segment_length = SegmentLengthConvention::kUlpduLength;
  // A.3: a Write to a region without Remote Write: 1/1/0x00 (false) or 0/1/0x02 (true).
  bool write_access_error_as_rdmap = false;
  // A.6: valid opcode on the wrong QN / T flag: 0/2/0x06 (false) or 1/2/0x01 (true).
  bool opcode_queue_mismatch_as_ddp = false;
  // A.7: IRD overrun: 1/2/0x02 (false) or 0/2/0x07 (true).
  bool ird_overrun_as_rdmap = false;
  // A.1: SendInv failures use EType 0x1 (false) or 0x2 (true) for code 0x09.
  bool invalidate_error_as_remote_operation = false;
  // A.2: set R=1 (zero-filled RDMA header area) on SendInv protection errors.
  bool rdma_header_on_invalidate_error = false;
  // A.7 / F.1: when TO + length both wraps and leaves the region, report the
  // wrap (true) or the bounds violation (false).
  bool wrap_before_bounds = true;
  // RFC 5040 §5.2.2 (MAY): the requester checks that a Read Response matches
  // its outstanding Read Request (STag, TO range, length).
  bool check_read_response_match = true;
  // C.8: the requester checks the Original Request Identifier echo.
  bool check_atomic_response_id = true;
  // C.7 / E.
  IrdAccounting ird_accounting = IrdAccounting::kShared;
  uint32_t extension_ird = 0;  // kAdditive: inbound Atomic/COMMIT request slots
  uint32_t extension_ord = 0;  // kAdditive: outbound Atomic/COMMIT requests
  // C.9: byte order of the target memory for FetchAdd/CmpSwap (the wire is
  // big-endian; the operation runs in the memory's order).
  bool atomic_memory_little_endian = true;
  // D.10: Atomic Write stores the 8 Data octets as they are on the wire
  // (true) or converts them to the memory's byte order like RFC 7306 (false).
  bool atomic_write_stores_wire_order = true;
  // D.7: Flush Disposition Flags other than 0x1, 0x2, 0x3 are an error.
  bool reject_unknown_flush_flags = true;
  // D.4: a non-zero Invalidate STag on a COMMIT request invalidates that STag
  // after the operation (true) or is ignored (false).
  bool commit_request_invalidates_stag = false;
  // A.9: answer a malformed Terminate with our own Terminate.
  bool answer_malformed_terminate = false;
};

}  // namespace rdmapct::model
