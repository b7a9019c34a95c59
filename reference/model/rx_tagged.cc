// Tagged messages: RDMA Write (placed, never delivered) and RDMA Read
// Response (placed into the requester's sink buffer, completes the Read).
#include <algorithm>
#include <cstring>

#include "reference/model/endpoint.h"

namespace rdmapct::model {

// REQ R5040-5.1-02 R5040-5.1-04 R5040-5.1-05 R5040-5.1-10 R5041-4.1-02 R5041-4.2-09
// R5041-5.2-12 R5041-5.2-13 R5041-5.3-03 R5041-7.1-01
// A zero-length Write is never STag/TO-checked and places nothing.
void RdmapEndpoint::OnRdmaWrite(const RxSegment& rx, Reactions& out) {
  const wire::ByteSpan payload = rx.payload();
  if (payload.empty()) return;
  const wire::DdpSegmentHeader& h = rx.ddp();
  if (config_.passive && resources_.FindRegion(h.stag) == nullptr) return;  // unknown memory
  if (RaiseIf(rx,
              CheckTaggedAccess(resources_, config_.stream_id, h.stag, h.tagged_offset, payload.size(), kRemoteWrite,
                                kDdpPlacementErrors, config_.decisions.wrap_before_bounds, config_.faults),
              out)) {
    return;
  }
  // With skip-bounds-check the destination is clipped to the memory object.
  auto dst = resources_.RegionBytes(*resources_.FindRegion(h.stag), h.tagged_offset, payload.size());
  if (!dst.empty()) std::memcpy(dst.data(), payload.data(), dst.size());
}

namespace {

// The sink range of `seg` relative to SinkTO, if it lies inside the read.
bool InsideRead(const OutstandingRead& read, uint32_t stag, uint64_t to, uint64_t length, uint64_t& offset) {
  const wire::ReadRequestHeader& r = read.request;
  if (stag != r.sink_stag || to < r.sink_tagged_offset) return false;
  offset = to - r.sink_tagged_offset;
  return offset <= r.read_message_size && length <= r.read_message_size - offset;
}

// Copies `payload` to the region of `stag` (else of `fallback`), clipped to it.
void PlaceInto(Resources& resources, uint32_t stag, uint32_t fallback, uint64_t to, wire::ByteSpan payload) {
  const MemoryRegion* region = resources.FindRegion(stag);
  if (region == nullptr) region = resources.FindRegion(fallback);
  auto dst = region ? resources.RegionBytes(*region, to, payload.size()) : std::span<uint8_t>();
  if (!dst.empty()) std::memcpy(dst.data(), payload.data(), dst.size());
}

}  // namespace

// REQ R5040-5.2.2-02 R5040-5.2.2-04 R5040-5.2.2-05 R5040-5.2.2-08 R5040-5.5-R11
// R5040-5.5-R19 R5040-5.5-R20c R5041-7.1-G1 R5041-7.1-G3 R5041-7.1-G4 R5041-7.1-G5
// DDP checks the sink STag like any tagged placement (no remote access right
// is needed: the STag was advertised for this Read); then, by default
// (5.2.2 MAY), the response must belong to the oldest outstanding Read.
void RdmapEndpoint::OnReadResponse(const RxSegment& rx, Reactions& out) {
  const wire::DdpSegmentHeader& h = rx.ddp();
  const wire::ByteSpan payload = rx.payload();
  const bool unknown = config_.passive && resources_.FindRegion(h.stag) == nullptr;
  const bool skip = config_.faults.Has(Fault::kReadResponseSkipBounds);
  if (!payload.empty() && !unknown && !skip &&
      RaiseIf(rx,
              CheckTaggedAccess(resources_, config_.stream_id, h.stag, h.tagged_offset, payload.size(), 0,
                                kDdpPlacementErrors, config_.decisions.wrap_before_bounds, config_.faults),
              out)) {
    return;
  }
  // accept-unexpected-responses disables this MAY check like the option does.
  const bool check =
      config_.decisions.check_read_response_match && !config_.faults.Has(Fault::kAcceptUnexpectedResponses) && !skip;
  if (outstanding_reads_.empty()) {
    // accept-unsolicited-read-response: placed like an RDMA Write.
    if (config_.faults.Has(Fault::kAcceptUnsolicitedReadResponse) && !unknown) {
      PlaceInto(resources_, h.stag, h.stag, h.tagged_offset, payload);
      return;
    }
    if (check) {
      Raise(rx,
            MakeViolation(ViolationKind::kReadResponseUnexpected, "R5040-5.2.2-08",
                          "RDMA Read Response with no Read Request outstanding"),
            out);
    }
    return;
  }
  OutstandingRead& read = outstanding_reads_.front();
  uint64_t offset = read.received.end();
  if (!payload.empty() && !InsideRead(read, h.stag, h.tagged_offset, payload.size(), offset) && check) {
    Raise(rx,
          MakeViolation(ViolationKind::kReadResponseMismatch, "R5040-5.2.2-08",
                        "Read Response outside the oldest Read's sink range"),
          out);
    return;
  }
  // read-response-skip-bounds: an unknown STag lands in the Read's sink.
  if (!payload.empty() && !unknown) PlaceInto(resources_, h.stag, read.request.sink_stag, h.tagged_offset, payload);
  if (!payload.empty()) read.received.Insert(offset, offset + payload.size());
  if (!h.last) return;
  if (read.received.covered() != read.request.read_message_size && check &&
      !config_.faults.Has(Fault::kCompleteShortReadResponse)) {
    Raise(rx,
          MakeViolation(ViolationKind::kReadResponseMismatch, "R5040-5.2.2-08",
                        "Read Response ends with " + std::to_string(read.received.covered()) + " of " +
                            std::to_string(read.request.read_message_size) + " octets"),
          out);
    return;
  }
  UlpEvent& e = out.AddEvent(UlpEventKind::kReadCompleted);
  e.opcode = wire::Opcode::kRdmaReadResponse;
  e.msn = read.msn;
  e.stag = read.request.sink_stag;
  e.tagged_offset = read.request.sink_tagged_offset;
  e.length = read.request.read_message_size;
  outstanding_reads_.pop_front();
}

}  // namespace rdmapct::model
