// RFC 7306 Atomic Operations: the Atomic Request at the Responder (validate,
// execute FetchAdd / CmpSwap on the target memory, answer on QN 3) and the
// Atomic Response at the Requester.
//
// Decisions this file follows (decision_options.h, terminate_map.cc):
//  - check order: AOpCode, then the Remote STag like a Read Request source
//    (valid, associated with the stream, Remote Atomic right, TO wrap /
//    bounds over the 8 target octets), then 64-bit alignment of the ULP
//    Buffer address. Alignment needs a resolved region (the address is the
//    octet's position in its memory object), so it comes last (decisions D-C4/D-C5).
//  - the target memory's byte order is DecisionOptions::atomic_memory_little_endian
//    (decisions D-C9); the wire is big-endian either way.
//  - the operation runs when the request is Delivered (this synchronous model
//    has then Placed everything that arrived before it); its response waits in
//    the one response queue behind earlier Read / QN3 responses.
#include <algorithm>
#include <cstring>
#include <string>

#include "reference/model/endpoint.h"
#include "reference/wire/hex.h"

namespace rdmapct::model {

namespace {

// The operand of every Atomic Operation is one 64-bit word (RFC 7306 §5).
constexpr uint64_t kAtomicOperandLength = 8;

using wire::HexValue;

// REQ R7306-5-03 R7306-5.2.1-04 R7306-5.2.1-S4 R7306-5.2.1-T01 R7306-5.2.1-T02
// R7306-5.2.1-T03
// Figure 5 defines FetchAdd (0000b) and CmpSwap (0010b); 0001b is Reserved
// and every other value Unassigned (RFC 7306 §10.1). Both are errors "surfaced"
// with the code decided for decisions D-C3 (terminate_map.cc).
CheckResult CheckAtomicOpcode(uint8_t aopcode) {
  if (aopcode == static_cast<uint8_t>(wire::AtomicOpcode::kFetchAdd) ||
      aopcode == static_cast<uint8_t>(wire::AtomicOpcode::kCmpSwap)) {
    return {};
  }
  return MakeViolation(ViolationKind::kAtomicUnsupportedOpcode, "R7306-5.2.1-S4",
                       "AOpCode " + HexValue(aopcode) + (aopcode == 1 ? " is Reserved" : " is Unassigned"));
}

// REQ R7306-5.1.1-01 R7306-5.1.1-06 R7306-5.2.1-T01
// RFC 7306 §5.1.1: a bit-serial add in which each set Add Mask bit is the most
// significant bit of a field, so the carry out of it is dropped and the
// fields add independently. Add Mask 0 is one plain 64-bit add. Written as
// the ripple the RFC describes rather than a closed form, so that it can be
// read against the text; the tests check it against a closed form.
uint64_t MaskedFetchAdd(uint64_t original, uint64_t add_data, uint64_t add_mask) {
  uint64_t result = 0;
  unsigned carry = 0;
  for (unsigned bit = 0; bit < 64; ++bit) {
    const uint64_t position = uint64_t{1} << bit;
    const unsigned sum =
        carry + static_cast<unsigned>((original >> bit) & 1) + static_cast<unsigned>((add_data >> bit) & 1);
    if ((sum & 1) != 0) result |= position;
    carry = (add_mask & position) != 0 ? 0 : sum >> 1;
  }
  return result;
}

// REQ R7306-5.1.2-01 R7306-5.1.2-02 R7306-5.2.1-T02
// RFC 7306 §5.1.2: the masked compare decides; a match merges the masked Swap
// Data into the word, a mismatch leaves memory as it was.
// write-memory-on-failed-cmpswap merges even on a mismatch.
uint64_t MaskedCmpSwap(uint64_t original, const wire::AtomicRequestHeader& req, const FaultSet& faults) {
  const bool match = ((req.compare_data ^ original) & req.compare_mask) == 0;
  if (!match && !faults.Has(Fault::kWriteMemoryOnFailedCmpSwap)) return original;
  return (original & ~req.add_or_swap_mask) | (req.add_or_swap_data & req.add_or_swap_mask);
}

// REQ R7306-5.1.1-07
// The 64-bit word in the target memory's byte order (decisions D-C9).
uint64_t LoadWord(const uint8_t* p, bool little_endian) {
  if (!little_endian) return wire::LoadBe64(p);
  return uint64_t{wire::LoadLe32(p + 4)} << 32 | wire::LoadLe32(p);
}

void StoreWord(uint8_t* p, uint64_t v, bool little_endian) {
  if (!little_endian) {
    wire::StoreBe64(p, v);
    return;
  }
  wire::StoreLe32(p, static_cast<uint32_t>(v));
  wire::StoreLe32(p + 4, static_cast<uint32_t>(v >> 32));
}

// REQ R7306-5-01 R7306-5.3-01 R7306-5.4-R2 R7306-5.2.2-03
// Read-modify-write of the target word; returns the Original Remote Data
// Value. One call runs to completion before the endpoint looks at anything
// else, which is the atomicity RFC 7306 §5.3 asks for in this model. The
// target is shorter than 8 octets only with skip-bounds-check (clipped to the
// memory object): the missing octets read as zero and are not written.
uint64_t ExecuteAtomic(std::span<uint8_t> target, const wire::AtomicRequestHeader& req, bool little_endian,
                       const FaultSet& faults) {
  uint8_t word[kAtomicOperandLength] = {};
  const std::size_t n = std::min<std::size_t>(target.size(), sizeof word);
  if (n > 0) std::memcpy(word, target.data(), n);
  const uint64_t original = LoadWord(word, little_endian);
  const uint64_t result = req.atomic_opcode == static_cast<uint8_t>(wire::AtomicOpcode::kFetchAdd)
                              ? MaskedFetchAdd(original, req.add_or_swap_data, req.add_or_swap_mask)
                              : MaskedCmpSwap(original, req, faults);
  StoreWord(word, result, little_endian);
  if (n > 0) std::memcpy(target.data(), word, n);
  return original;
}

}  // namespace

// REQ R7306-5.2.1-S2 R7306-5.2.1-S3a R7306-5.2.1-S3b R7306-5.2.1-S7 R7306-5.2.1-S8
// REQ R7306-5.2.1-03 R7306-5.2.1-05 R7306-5.2.1-07 R7306-5.2.1-08 R7306-5.2.1-11
// REQ R7306-5.2.1-12 R7306-4.1-04 R7306-5-06 R7306-9-01 R7306-8.2-04 R7306-8.2-05
// REQ R7306-5.1.1-03 R7306-5.1.1-04 R7306-5.1.1-05 R7306-5.1.2-04 R7306-5.1.2-05
// REQ R7306-5.1.2-06 R7306-5.1.2-07 R7306-5.4-R3 R7306-5.4-R5 R7306-5.4-R8a R7306-5.4-R8b
// REQ R7306-5.2.2-01 R7306-5.2.2-02 R7306-5.2.2-S1 R7306-8.1-C2
// CheckUntaggedRequest already took the QN1 MSN and an IRD slot (shared with
// Read Requests, decisions D-C7) and checked the 52-octet header. The Reserved
// bits, the Invalidate STag and the fields the AOpCode does not use are
// ignored. Every check runs before memory is touched, so a rejected request
// (misaligned ones included) leaves memory unchanged and earns no response.
void RdmapEndpoint::OnAtomicRequest(const RxSegment& rx, Reactions& out) {
  const auto* req = std::get_if<wire::AtomicRequestHeader>(&rx.view.header);
  if (req == nullptr) {  // unreachable: CheckSingleSegment guarantees MO 0
    ++segments_dropped_;
    return;
  }
  const FaultSet& f = config_.faults;
  if (RaiseIf(rx, CheckAtomicOpcode(req->atomic_opcode), out)) return;
  const uint64_t to = req->remote_tagged_offset;
  if (RaiseIf(rx,
              CheckTaggedAccess(resources_, config_.stream_id, req->remote_stag, to, kAtomicOperandLength,
                                kRemoteAtomic, kAtomicTargetErrors, config_.decisions.wrap_before_bounds, f),
              out)) {
    return;
  }
  const MemoryRegion& region = *resources_.FindRegion(req->remote_stag);
  // execute-misaligned-atomic: the alignment rule is skipped.
  if (!f.Has(Fault::kExecuteMisalignedAtomic) &&
      RaiseIf(rx, CheckAtomicAlignment(region, to, ViolationKind::kAtomicMisaligned, "R7306-8.2-05"), out)) {
    return;
  }
  const bool little_endian = config_.decisions.atomic_memory_little_endian;
  std::span<uint8_t> target = resources_.RegionBytes(region, to, kAtomicOperandLength);
  // non-atomic-fetchadd: read now, write the sum only when the next segment
  // comes, so a FetchAdd of another connection in between is lost.
  const bool defer = f.Has(Fault::kNonAtomicFetchAdd) && target.size() == kAtomicOperandLength &&
                     req->atomic_opcode == static_cast<uint8_t>(wire::AtomicOpcode::kFetchAdd);
  const uint64_t original =
      defer ? LoadWord(target.data(), little_endian) : ExecuteAtomic(target, *req, little_endian, f);
  if (defer) {
    deferred_store_ =
        DeferredStore{req->remote_stag, to, MaskedFetchAdd(original, req->add_or_swap_data, req->add_or_swap_mask)};
  }
  wire::AtomicResponseHeader response{req->request_identifier, original};
  // mis-echo-request-identifier: the echo is off by one.
  if (f.Has(Fault::kMisEchoRequestIdentifier)) ++response.original_request_identifier;
  QueueResponse(MakeQn3Response(rx, wire::Opcode::kAtomicResponse, response, {}), out);
}

void RdmapEndpoint::ApplyDeferredStore() {
  const DeferredStore d = *std::exchange(deferred_store_, std::nullopt);
  const MemoryRegion* region = resources_.FindRegion(d.stag);
  if (region == nullptr) return;
  std::span<uint8_t> target = resources_.RegionBytes(*region, d.tagged_offset, kAtomicOperandLength);
  if (target.size() == kAtomicOperandLength)
    StoreWord(target.data(), d.value, config_.decisions.atomic_memory_little_endian);
}

// REQ R7306-5-08 R7306-5.2.2-02 R7306-5.2.2-S6 R7306-5.2.2-S7 R7306-5.4-R7
// CheckUntaggedResponse matched the response to the oldest outstanding QN1
// request by QN3 MSN order and checked it is that request's response type
// (decisions D-C8). What is left is the Original Request Identifier echo (checked
// by default, DecisionOptions::check_atomic_response_id), then the atomic
// completes with the Original Remote Data Value.
void RdmapEndpoint::OnAtomicResponse(const RxSegment& rx, Reactions& out) {
  const auto* resp = std::get_if<wire::AtomicResponseHeader>(&rx.view.header);
  if (resp == nullptr) {  // unreachable: CheckSingleSegment guarantees MO 0
    ++segments_dropped_;
    return;
  }
  const OutstandingResponse request = PopOutstandingResponse();
  if (config_.decisions.check_atomic_response_id && !config_.faults.Has(Fault::kIgnoreAtomicResponseId) &&
      resp->original_request_identifier != request.request_id) {
    Raise(rx,
          MakeViolation(ViolationKind::kAtomicResponseIdMismatch, "R7306-5.2.2-02",
                        "Original Request Identifier " + HexValue(resp->original_request_identifier) +
                            " answers request " + HexValue(request.request_id) + " (QN1 MSN " +
                            std::to_string(request.request_msn) + ")"),
          out);
    return;
  }
  UlpEvent& e = out.AddEvent(UlpEventKind::kAtomicCompleted);
  e.opcode = wire::Opcode::kAtomicResponse;
  e.msn = rx.ddp().msn;
  e.request_id = resp->original_request_identifier;
  e.value = resp->original_remote_data_value;
}

}  // namespace rdmapct::model
