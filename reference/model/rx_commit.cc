// draft-talpey-rdma-commit-01: RDMA Flush, RDMA Verify and Atomic Write
// Requests at the Responder (validate, perform, answer on QN 3) and their
// responses at the Requester.
//
// Decisions this file follows (decision_options.h, terminate_map.cc):
//  - the target is checked like a Read Request source with the COMMIT error
//    kinds (decisions D-D5): STag valid, associated with the stream, the access
//    right of the operation (Flush: "Flushable", Verify: "Verifiable",
//    Atomic Write: Remote Write; COMMIT §2.4, decisions D-D7), then TO wrap /
//    bounds. A Data Sink Length of 0 is checked the same way (nothing in the
//    draft exempts it, unlike RFC 5040 zero-length Reads) and then answered.
//  - check order per request: the request's own fields (Flush Disposition
//    Flags, Atomic Write Length), the target, Atomic Write alignment, then
//    the Invalidate STag. Nothing is performed before every check passed.
//  - Invalidate STag (decisions D-D4): ignored by default; with
//    DecisionOptions::commit_request_invalidates_stag a non-zero value is
//    checked like a Send with Invalidate's before the operation and the STag
//    is invalidated after it.
//  - Verify hash (decisions D-D6): CRC-32C (the MPA CRC, wire/crc32c.h) of the
//    Data Sink range, sent as 4 octets, most significant first. A Hash Value
//    in the request is present when the request is longer than its 16 fixed
//    octets; any difference from the computed value (its length included) is
//    a mismatch: Terminate, no Verify Response.
//  - ordering (COMMIT §3.1.1.3, §3.1.2.3, §3.1.3.1, §4): this model Places
//    every segment when it arrives and performs each request when it is
//    Delivered, so a Flush runs after every earlier Write was Placed, a Verify
//    after every earlier Flush, and an Atomic Write after every earlier Flush
//    completed. A failed Flush ends the stream with a Terminate, after which
//    DDP drops the later Atomic Write unplaced. Responses leave through the
//    one response queue in request order.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "reference/model/endpoint.h"
#include "reference/wire/crc32c.h"

namespace rdmapct::model {

namespace {

constexpr std::size_t kAtomicWriteDataLength = 8;  // COMMIT §3.1.3.1: 64 bits
constexpr std::size_t kVerifyHashLength = 4;       // CRC-32C

// REQ RCOMMIT-5.2-02 RCOMMIT-7-01 RCOMMIT-2.4-01 RCOMMIT-2.1-03 RCOMMIT-3.1.1-02
// RCOMMIT-3.1.2-02 RCOMMIT-3.1.3-02
CheckResult CheckCommitTarget(const Resources& resources, const EndpointConfig& c, uint32_t stag,
                              uint64_t tagged_offset, uint64_t length, uint8_t access) {
  return CheckTaggedAccess(resources, c.stream_id, stag, tagged_offset, length, access, kCommitTargetErrors,
                           c.decisions.wrap_before_bounds, c.faults);
}

// REQ RCOMMIT-3.1-05 RCOMMIT-3.1-06
// decisions D-D4: "processed by the receiver". By default the field is ignored.
bool InvalidatesStag(const EndpointConfig& c, uint32_t invalidate_stag) {
  return c.decisions.commit_request_invalidates_stag && invalidate_stag != 0;
}

CheckResult CheckCommitInvalidate(const Resources& resources, const EndpointConfig& c, uint32_t invalidate_stag) {
  if (!InvalidatesStag(c, invalidate_stag)) return {};
  return CheckInvalidateStag(resources, c.stream_id, invalidate_stag, c.faults);
}

void ApplyCommitInvalidate(Resources& resources, const EndpointConfig& c, uint32_t invalidate_stag) {
  if (InvalidatesStag(c, invalidate_stag)) resources.Invalidate(invalidate_stag);
}

// REQ RCOMMIT-2.3-01 RCOMMIT-3.1.2-03
// The model's Verify hash: CRC-32C of the range, big-endian.
std::array<uint8_t, kVerifyHashLength> VerifyHash(std::span<const uint8_t> range) {
  std::array<uint8_t, kVerifyHashLength> hash{};
  wire::StoreBe32(hash.data(), wire::Crc32c(range));
  return hash;
}

// COMMIT §3.1.3.1 / decisions D-D10: the Data octets as they are on the wire, or
// converted to the target memory's byte order like an RFC 7306 atomic.
void StoreAtomicWriteData(uint8_t* p, uint64_t data, const DecisionOptions& d) {
  if (d.atomic_write_stores_wire_order || !d.atomic_memory_little_endian) {
    wire::StoreBe64(p, data);
    return;
  }
  wire::StoreLe32(p, static_cast<uint32_t>(data));
  wire::StoreLe32(p + 4, static_cast<uint32_t>(data >> 32));
}

}  // namespace

// REQ RCOMMIT-3.1.1-01 RCOMMIT-3.1.1-02 RCOMMIT-3.1.1-03 RCOMMIT-3.1.1.1-02
// REQ RCOMMIT-3.1.1.1-03 RCOMMIT-3.1.1.2-03 RCOMMIT-3.1.1.2-04 RCOMMIT-3.1.1.3-08
// REQ RCOMMIT-3.1.1.3-09 RCOMMIT-3.2.2-01 RCOMMIT-2.1-01 RCOMMIT-2.1-04 RCOMMIT-5.1-C2
// CheckUntaggedRequest already took the QN1 MSN and an IRD slot (shared,
// COMMIT §2.1). The model's memory is always "persistent and globally
// visible" once Placed, and every earlier segment was Placed before this one
// was Delivered, so the Flush itself has nothing left to wait for.
void RdmapEndpoint::OnFlushRequest(const RxSegment& rx, Reactions& out) {
  const auto* req = std::get_if<wire::FlushRequestHeader>(&rx.view.header);
  if (req == nullptr) {  // unreachable: CheckSingleSegment guarantees MO 0
    ++segments_dropped_;
    return;
  }
  const uint32_t invalidate = rx.view.invalidate_stag();
  if (RaiseIf(
          rx,
          CheckFlushFlags(req->flush_disposition_flags, config_.decisions.reject_unknown_flush_flags, config_.faults),
          out) ||
      RaiseIf(rx,
              CheckCommitTarget(resources_, config_, req->data_sink_stag, req->data_sink_tagged_offset,
                                req->data_sink_length, kRemoteFlush),
              out) ||
      RaiseIf(rx, CheckCommitInvalidate(resources_, config_, invalidate), out)) {
    return;
  }
  ApplyCommitInvalidate(resources_, config_, invalidate);
  QueueResponse(MakeQn3Response(rx, wire::Opcode::kFlushResponse, std::monostate{}, {}), out);
}

// REQ RCOMMIT-3.1.2-01 RCOMMIT-3.1.2-02 RCOMMIT-3.1.2-03 RCOMMIT-3.1.2.1-02
// REQ RCOMMIT-3.1.2.1-03 RCOMMIT-3.1.2.2-02 RCOMMIT-3.1.2.3-04 RCOMMIT-5.1-C3
// RCOMMIT-2.3-01
// The hash covers memory as it is when the request is Delivered: after every
// earlier Write and Flush (COMMIT §3.1.2.3).
void RdmapEndpoint::OnVerifyRequest(const RxSegment& rx, Reactions& out) {
  const auto* req = std::get_if<wire::VerifyRequestHeader>(&rx.view.header);
  if (req == nullptr) {  // unreachable: CheckSingleSegment guarantees MO 0
    ++segments_dropped_;
    return;
  }
  const uint32_t invalidate = rx.view.invalidate_stag();
  if (RaiseIf(rx,
              CheckCommitTarget(resources_, config_, req->data_sink_stag, req->data_sink_tagged_offset,
                                req->data_sink_length, kRemoteVerify),
              out) ||
      RaiseIf(rx, CheckCommitInvalidate(resources_, config_, invalidate), out)) {
    return;
  }
  // With skip-bounds-check the range is clipped to the memory object.
  const auto hash = VerifyHash(resources_.RegionBytes(*resources_.FindRegion(req->data_sink_stag),
                                                      req->data_sink_tagged_offset, req->data_sink_length));
  const wire::ByteSpan expected = req->hash_value;
  if (!expected.empty() && !std::equal(expected.begin(), expected.end(), hash.begin(), hash.end())) {
    Raise(rx,
          MakeViolation(ViolationKind::kVerifyHashMismatch, "RCOMMIT-3.1.2-02",
                        "Hash Value (" + std::to_string(expected.size()) +
                            " octets) differs from the CRC-32C of the Data Sink range"),
          out);
    return;
  }
  ApplyCommitInvalidate(resources_, config_, invalidate);
  QueueResponse(
      MakeQn3Response(rx, wire::Opcode::kVerifyResponse, wire::VerifyResponseHeader{wire::ByteSpan(hash)}, {}), out);
}

// REQ RCOMMIT-3.1.3-01 RCOMMIT-3.1.3-02 RCOMMIT-3.1.3-03 RCOMMIT-3.1.3.1-03
// REQ RCOMMIT-3.1.3.1-04 RCOMMIT-3.1.3.1-06 RCOMMIT-3.1.3.1-08 RCOMMIT-3.1.3.1-09
// REQ RCOMMIT-3.1.3.1-10 RCOMMIT-3.1.3.1-11 RCOMMIT-2.4-01 RCOMMIT-5.2-02
// The 8 Data octets are Placed in one step, after every earlier Flush
// completed (each one completed inside its own OnFlushRequest, and a failed
// one stopped the stream before this request could arrive).
void RdmapEndpoint::OnAtomicWriteRequest(const RxSegment& rx, Reactions& out) {
  const auto* req = std::get_if<wire::AtomicWriteRequestHeader>(&rx.view.header);
  if (req == nullptr) {  // unreachable: CheckSingleSegment guarantees MO 0
    ++segments_dropped_;
    return;
  }
  const uint32_t invalidate = rx.view.invalidate_stag();
  const uint64_t to = req->data_sink_tagged_offset;
  // atomic-write-wrong-length-accepted: the 8 Data octets are Placed whatever
  // the Data Sink Length says.
  if (RaiseIf(rx, CheckAtomicWriteLength(req->data_sink_length, config_.faults), out) ||
      RaiseIf(rx, CheckCommitTarget(resources_, config_, req->data_sink_stag, to, kAtomicWriteDataLength, kRemoteWrite),
              out)) {
    return;
  }
  const MemoryRegion& region = *resources_.FindRegion(req->data_sink_stag);
  if (RaiseIf(rx, CheckAtomicAlignment(region, to, ViolationKind::kAtomicWriteMisaligned, "RCOMMIT-3.1.3.1-04"), out) ||
      RaiseIf(rx, CheckCommitInvalidate(resources_, config_, invalidate), out)) {
    return;
  }
  uint8_t word[kAtomicWriteDataLength];
  StoreAtomicWriteData(word, req->data, config_.decisions);
  // Only short with skip-bounds-check (clipped to the memory object).
  auto dst = resources_.RegionBytes(region, to, kAtomicWriteDataLength);
  if (!dst.empty()) std::memcpy(dst.data(), word, dst.size());
  ApplyCommitInvalidate(resources_, config_, invalidate);
  QueueResponse(MakeQn3Response(rx, wire::Opcode::kAtomicWriteResponse, std::monostate{}, {}), out);
}

namespace {

// Flush and Atomic Write Responses have no header and carry no payload
// (COMMIT §3.1.1.2, §3.1.3.2). CheckRdmapHeaderLength lets header-less
// messages through, so the length is checked here; skip-header-length-check
// ignores the extra octets as it does after a fixed header.
CheckResult CheckEmptyResponse(const wire::OpcodeInfo& info, std::size_t payload_length, const char* requirement_id,
                               const FaultSet& faults) {
  if (payload_length == 0 || faults.Has(Fault::kSkipHeaderLengthCheck)) return {};
  return MakeViolation(
      ViolationKind::kRdmapHeaderLength, requirement_id,
      std::string(info.name) + " carries " + std::to_string(payload_length) + " octets, expected none");
}

}  // namespace

// REQ RCOMMIT-3.1.1.2-01 RCOMMIT-3.1.1.2-02 RCOMMIT-3.1-07 RCOMMIT-5.1-C2
// CheckUntaggedResponse matched it to the oldest outstanding QN1 request by
// QN3 MSN order and checked it is a Flush's response (decisions D-C8, D-E).
void RdmapEndpoint::OnFlushResponse(const RxSegment& rx, Reactions& out) {
  if (RaiseIf(rx, CheckEmptyResponse(*rx.info, rx.payload().size(), "RCOMMIT-3.1.1.2-02", config_.faults), out)) {
    return;
  }
  PopOutstandingResponse();
  UlpEvent& e = out.AddEvent(UlpEventKind::kFlushCompleted);
  e.opcode = wire::Opcode::kFlushResponse;
  e.msn = rx.ddp().msn;
}

// REQ RCOMMIT-3.1.2.2-01 RCOMMIT-3.1.2.2-02 RCOMMIT-3.1-07
// The Hash Value is the whole payload; its length depends on the algorithm
// the Responder's ULP chose, so any length is delivered.
void RdmapEndpoint::OnVerifyResponse(const RxSegment& rx, Reactions& out) {
  PopOutstandingResponse();
  UlpEvent& e = out.AddEvent(UlpEventKind::kVerifyCompleted);
  e.opcode = wire::Opcode::kVerifyResponse;
  e.msn = rx.ddp().msn;
  const wire::ByteSpan hash = rx.payload();
  e.data.assign(hash.begin(), hash.end());
  e.length = static_cast<uint32_t>(hash.size());
}

// REQ RCOMMIT-3.1.3.2-01 RCOMMIT-3.1.3.2-02 RCOMMIT-3.1-07
void RdmapEndpoint::OnAtomicWriteResponse(const RxSegment& rx, Reactions& out) {
  if (RaiseIf(rx, CheckEmptyResponse(*rx.info, rx.payload().size(), "RCOMMIT-3.1.3.2-02", config_.faults), out)) {
    return;
  }
  PopOutstandingResponse();
  UlpEvent& e = out.AddEvent(UlpEventKind::kAtomicWriteCompleted);
  e.opcode = wire::Opcode::kAtomicWriteResponse;
  e.msn = rx.ddp().msn;
}

}  // namespace rdmapct::model
