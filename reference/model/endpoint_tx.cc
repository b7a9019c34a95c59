// Transmit side: segmentation to MULPDU, the requester's Post* functions and
// the responder's queue of responses (sent strictly in request order).
#include "reference/model/endpoint.h"

#include <algorithm>
#include <limits>

#include "reference/model/emit_terminate.h"

namespace rdmapct::model {

using wire::Opcode;

const char* PostStatusName(PostStatus s) {
  switch (s) {
    case PostStatus::kOk:
      return "ok";
    case PostStatus::kNotStreaming:
      return "not-streaming";
    case PostStatus::kNotInProfile:
      return "not-in-profile";
    case PostStatus::kOrdExceeded:
      return "ord-exceeded";
    case PostStatus::kInvalidArgument:
      return "invalid-argument";
    case PostStatus::kMessageTooLong:
      return "message-too-long";
  }
  return "?";
}

// REQ R5040-4.1-01 R5040-4.1-04 R5040-4.1-05 R5040-4.1-08 R5040-4.1-09 R5041-4.1-09
// R5041-4.1-11 R5040-4.1-12 R7306-4.1-03
wire::DdpSegmentHeader RdmapEndpoint::UntaggedHeader(Opcode op, uint32_t qn) const {
  wire::DdpSegmentHeader h;
  h.tagged = false;
  h.ddp_version = config_.ddp_version;
  h.rsvd_ulp0 =
      wire::EncodeRdmapControl(wire::RdmapControl{config_.rdmap_version, 0, static_cast<uint8_t>(op)}, config_.profile);
  h.queue_number = qn;
  h.msn = next_msn_[qn];
  return h;
}

wire::DdpSegmentHeader RdmapEndpoint::TaggedHeader(Opcode op, uint32_t stag, uint64_t to) const {
  wire::DdpSegmentHeader h;
  h.tagged = true;
  h.ddp_version = config_.ddp_version;
  h.rsvd_ulp0 =
      wire::EncodeRdmapControl(wire::RdmapControl{config_.rdmap_version, 0, static_cast<uint8_t>(op)}, config_.profile);
  h.stag = stag;
  h.tagged_offset = to;
  return h;
}

// REQ R5041-5.2-01 R5041-5.2-07 R5041-5.2-09 R5041-5.2-11 R5041-4.1-04 R5041-4.1-05
// R5041-4.1-06 R5041-4.2-04 R5041-4.3-04 R5041-4.3-06
// Every segment but the last is full; MO/TO advance by the octets already
// sent; a zero-length message is one segment. Writes straight into the
// reused Reactions buffers (the receive path answers Read Requests here).
void RdmapEndpoint::TransmitMessage(const wire::DdpSegmentHeader& first, wire::ByteSpan body, Reactions& out,
                                    std::size_t extra_room) {
  const std::size_t hlen = first.HeaderLength();
  const std::size_t room = (config_.mulpdu > hlen ? config_.mulpdu - hlen : 1) + extra_room;
  std::size_t off = 0;
  do {
    const std::size_t n = std::min(room, body.size() - off);
    wire::DdpSegmentHeader h = first;
    h.last = off + n == body.size();
    if (h.tagged) {
      h.tagged_offset = first.tagged_offset + off;
    } else {
      h.message_offset = first.message_offset + static_cast<uint32_t>(off);
    }
    wire::Bytes& b = out.AddSegment();
    wire::EncodeDdpHeader(h, b);
    b.insert(b.end(), body.begin() + off, body.begin() + off + n);
    off += n;
  } while (off < body.size());
}

PostStatus RdmapEndpoint::CheckCanPost(Opcode op) const {
  if (state_ != StreamState::kStreaming) return PostStatus::kNotStreaming;
  if (!wire::ProfileIncludes(config_.profile, wire::InfoFor(op).min_profile)) {
    return PostStatus::kNotInProfile;
  }
  return PostStatus::kOk;
}

// REQ R5040-5.3-01 R5040-5.3-09 R5040-5.3-10 R5040-5.3-13 R5040-4.1-03 R5041-4.3-07
PostStatus RdmapEndpoint::PostSend(Opcode op, wire::ByteSpan payload, uint32_t invalidate_stag, Reactions& out) {
  const wire::OpcodeInfo& info = wire::InfoFor(op);
  if (info.tagged || info.queue_number != 0 || info.header != wire::HeaderKind::kNone) {
    return PostStatus::kInvalidArgument;
  }
  if (PostStatus s = CheckCanPost(op); s != PostStatus::kOk) return s;
  if (payload.size() > std::numeric_limits<uint32_t>::max()) return PostStatus::kMessageTooLong;
  wire::DdpSegmentHeader h = UntaggedHeader(op, 0);
  h.invalidate_stag = info.invalidate_stag == wire::InvalidateStagUse::kValid ? invalidate_stag : 0;
  if (config_.faults.Has(Fault::kReuseSendMsn) && info.solicited_event && next_msn_[0] > 1) {
    h.msn = next_msn_[0] - 1;  // the MSN of the Send before it, again
    TransmitMessage(h, payload, out);
    return PostStatus::kOk;
  }
  ++next_msn_[0];
  TransmitMessage(h, payload, out);
  return PostStatus::kOk;
}

// REQ R7306-6.3-01 R7306-6.3-04 R7306-6.3-05 R7306-6.3-06
PostStatus RdmapEndpoint::PostImmediateData(uint64_t immediate_data, bool solicited_event, Reactions& out) {
  const Opcode op = solicited_event ? Opcode::kImmediateDataWithSe : Opcode::kImmediateData;
  if (PostStatus s = CheckCanPost(op); s != PostStatus::kOk) return s;
  scratch_.clear();
  wire::EncodeImmediateDataHeader(wire::ImmediateDataHeader{immediate_data}, scratch_);
  wire::DdpSegmentHeader h = UntaggedHeader(op, 0);
  ++next_msn_[0];
  TransmitMessage(h, scratch_, out);
  return PostStatus::kOk;
}

// REQ R5040-5.1-01 R5040-5.1-07 R5040-5.1-09 R5041-4.2-06 R5041-4.2-08
PostStatus RdmapEndpoint::PostRdmaWrite(uint32_t stag, uint64_t tagged_offset, wire::ByteSpan payload, Reactions& out) {
  if (PostStatus s = CheckCanPost(Opcode::kRdmaWrite); s != PostStatus::kOk) return s;
  if (payload.size() > std::numeric_limits<uint32_t>::max()) return PostStatus::kMessageTooLong;
  const std::size_t extra = config_.faults.Has(Fault::kSplitWriteOverMulpdu) ? 16 : 0;
  TransmitMessage(TaggedHeader(Opcode::kRdmaWrite, stag, tagged_offset), payload, out, extra);
  return PostStatus::kOk;
}

// REQ R5040-6.1-09 R7306-5.2.2-S5
// Outbound requests outstanding against ORD (shared or additive, decisions D-C7).
static bool OrdAvailable(const EndpointConfig& c, std::size_t reads, std::size_t extensions, bool extension) {
  if (c.faults.Has(Fault::kIgnoreOrd)) return true;
  if (c.decisions.ird_accounting == IrdAccounting::kShared) return reads + extensions < c.ord;
  return extension ? extensions < c.decisions.extension_ord : reads < c.ord;
}

// REQ R5040-4.4-01 R5040-5.2.1-01 R5040-5.2.1-06 R5040-5.2.1-07 R5040-5.2-01
PostStatus RdmapEndpoint::PostReadRequest(const wire::ReadRequestHeader& h, Reactions& out) {
  if (PostStatus s = CheckCanPost(Opcode::kRdmaReadRequest); s != PostStatus::kOk) return s;
  if (!OrdAvailable(config_, outstanding_reads_.size(), outstanding_responses_.size(), false)) {
    return PostStatus::kOrdExceeded;
  }
  scratch_.clear();
  wire::EncodeReadRequestHeader(h, scratch_);
  wire::DdpSegmentHeader ddp = UntaggedHeader(Opcode::kRdmaReadRequest, 1);
  outstanding_reads_.push_back(OutstandingRead{ddp.msn, h, {}, false});
  ++next_msn_[1];
  TransmitMessage(ddp, scratch_, out);
  return PostStatus::kOk;
}

// REQ R7306-5.2-02 R7306-5.2.1-S1 R7306-5.2.1-S6 RCOMMIT-3.1.1.1-01 RCOMMIT-3.1.2.1-01
// RCOMMIT-3.1.3.1-01
// Every extension request goes on QN1 (shared MSN space with Read Requests)
// and earns one QN3 response, matched by order (decisions D-C8, D-E).
PostStatus RdmapEndpoint::PostQn1Request(Opcode request, const wire::RdmapHeader& header, uint32_t request_id,
                                         Reactions& out) {
  if (PostStatus s = CheckCanPost(request); s != PostStatus::kOk) return s;
  if (!OrdAvailable(config_, outstanding_reads_.size(), outstanding_responses_.size(), true)) {
    return PostStatus::kOrdExceeded;
  }
  const Opcode response = wire::InfoFor(request).response.value_or(Opcode::kAtomicResponse);
  scratch_.clear();
  wire::EncodeRdmapHeader(header, scratch_);
  wire::DdpSegmentHeader ddp = UntaggedHeader(request, 1);
  // flush-request-on-qn0 / verify-request-on-qn0 move the request to QN 0.
  if ((request == Opcode::kFlushRequest && config_.faults.Has(Fault::kFlushRequestOnQn0)) ||
      (request == Opcode::kVerifyRequest && config_.faults.Has(Fault::kVerifyRequestOnQn0))) {
    ddp.queue_number = 0;
  }
  outstanding_responses_.push_back(OutstandingResponse{ddp.msn, request, response, request_id});
  ++next_msn_[1];
  TransmitMessage(ddp, scratch_, out);
  return PostStatus::kOk;
}

PostStatus RdmapEndpoint::PostAtomicRequest(const wire::AtomicRequestHeader& h, Reactions& out) {
  return PostQn1Request(Opcode::kAtomicRequest, h, h.request_identifier, out);
}

PostStatus RdmapEndpoint::PostFlushRequest(const wire::FlushRequestHeader& h, Reactions& out) {
  return PostQn1Request(Opcode::kFlushRequest, h, 0, out);
}

PostStatus RdmapEndpoint::PostVerifyRequest(const wire::VerifyRequestHeader& h, Reactions& out) {
  return PostQn1Request(Opcode::kVerifyRequest, h, 0, out);
}

PostStatus RdmapEndpoint::PostAtomicWriteRequest(const wire::AtomicWriteRequestHeader& h, Reactions& out) {
  return PostQn1Request(Opcode::kAtomicWriteRequest, h, 0, out);
}

// REQ R5040-7.1-02c1 R5040-4.8-T17
PostStatus RdmapEndpoint::Abort(wire::TerminateCode code, Reactions& out) {
  if (state_ != StreamState::kStreaming && state_ != StreamState::kClosing) {
    return PostStatus::kNotStreaming;
  }
  EmitTerminate(wire::MakeTerminateHeader(code, nullptr, 0, nullptr, config_.decisions.terminate_form), next_msn_[2]++,
                config_.profile, config_.rdmap_version, config_.ddp_version, out.AddSegment());
  terminate_sent_ = true;
  pending_.clear();
  SetState(StreamState::kTerminateSent, out);
  return PostStatus::kOk;
}

void RdmapEndpoint::Close(Reactions& out) {
  if (state_ == StreamState::kStreaming) SetState(StreamState::kClosing, out);
}

// ---------------------------------------------------------------------------
// Responses.

PendingResponse RdmapEndpoint::MakeQn3Response(const RxSegment& rx, Opcode response, const wire::RdmapHeader& header,
                                               wire::ByteSpan payload) const {
  PendingResponse p;
  p.response = response;
  p.extension = true;
  p.request_segment = SegmentOf(rx);
  if (const auto* a = std::get_if<wire::AtomicRequestHeader>(&rx.view.header)) {
    p.request_id = a->request_identifier;  // what ObserveTransmitted checks the echo against
  }
  wire::EncodeRdmapHeader(header, p.body);
  p.body.insert(p.body.end(), payload.begin(), payload.end());
  return p;
}

void RdmapEndpoint::QueueResponse(PendingResponse response, Reactions& out) {
  if (!CanTransmit()) return;
  pending_.push_back(std::move(response));
  if (config_.auto_respond && !config_.passive) EmitPendingResponses(std::numeric_limits<std::size_t>::max(), out);
}

// REQ R5040-5.5-R20a R5040-5.2.2-07 R5040-5.2.1-08 R7306-5.2.2-S8 R7306-5.4-R8b
// One queue for every response kind, so Read Responses and QN3 responses
// leave in the order their requests arrived.
std::size_t RdmapEndpoint::EmitPendingResponses(std::size_t max_segments, Reactions& out) {
  const bool outer = emitting_responses_;
  emitting_responses_ = true;
  std::size_t sent = 0;
  while (sent < max_segments && !pending_.empty() && CanTransmit() && !config_.passive) {
    const std::size_t n = EmitFrontResponse(max_segments - sent, out);
    if (n == 0) break;
    sent += n;
  }
  emitting_responses_ = outer;
  return sent;
}

std::size_t RdmapEndpoint::EmitFrontResponse(std::size_t max_segments, Reactions& out) {
  // read-responses-out-of-order: the newest request is answered first.
  const bool reversed = config_.faults.Has(Fault::kReadResponsesOutOfOrder);
  PendingResponse& p = reversed ? pending_.back() : pending_.front();
  if (p.response == Opcode::kRdmaReadResponse) {
    const std::size_t before = pending_.size();
    const std::size_t n = EmitReadResponse(p, max_segments, out);
    // A failure while serving clears the queue (p is gone then).
    if (pending_.size() == before && p.read_sent == p.read.read_message_size && p.read_started) {
      reversed ? pending_.pop_back() : pending_.pop_front();
    }
    return n;
  }
  // REQ R7306-5-07 R7306-5.2-04 R7306-5.2.2-S3 RCOMMIT-3.1.1.2-01 RCOMMIT-3.1.2.2-01
  // RCOMMIT-3.1.3.2-01
  wire::DdpSegmentHeader h = UntaggedHeader(p.response, 3);
  ++next_msn_[3];
  const std::size_t before = out.segments().size();
  TransmitMessage(h, p.body, out);
  const std::size_t n = out.segments().size() - before;
  reversed ? pending_.pop_back() : pending_.pop_front();
  return n;
}

// The n octets at Tagged Offset `to` of `region` (zeros past its end, only
// with skip-bounds-check). short-read-crossing-page copies a payload of at
// most 24 octets whose source crosses a 4 KiB Tagged Offset boundary as Linux
// siw 6.1's siw_try_1seg does (docs/reports/siw S12): its first
// n - (4096 - offset in page) octets from the source, the rest from the
// start of the 4 KiB page holding the source plus that many octets.
void RdmapEndpoint::AppendSourceOctets(const MemoryRegion& region, uint64_t to, std::size_t n, wire::Bytes& out) const {
  constexpr uint64_t kPage = 4096;
  const uint64_t in_page = to % kPage;
  std::size_t first = n;
  uint64_t rest_from = 0;
  if (config_.faults.Has(Fault::kShortReadCrossingPage) && n <= 24 && in_page + n > kPage) {
    first = n - static_cast<std::size_t>(kPage - in_page);
    rest_from = (to + first) - (to + first) % kPage;
  }
  const std::size_t start = out.size();
  auto head = resources_.RegionBytes(region, to, first);
  out.insert(out.end(), head.begin(), head.end());
  out.resize(start + first, 0);
  if (first < n) {
    auto tail = resources_.RegionBytes(region, rest_from, n - first);
    out.insert(out.end(), tail.begin(), tail.end());
  }
  out.resize(start + n, 0);
}

// REQ R5040-4.4-02 R5040-4.4-03 R5040-5.2.1-11 R5040-5.2.1-15 R5040-5.2.2-02 R5040-5.2.2-09
// R5040-4.8-15 R5041-5.2-01 R5041-5.2-09
// The source is read (and re-validated) segment by segment, so a region
// invalidated while a response is being served ends it with a Terminate whose
// Terminated RDMA Header is advanced by the octets already sent.
std::size_t RdmapEndpoint::EmitReadResponse(PendingResponse& p, std::size_t max_segments, Reactions& out) {
  const wire::ReadRequestHeader& rr = p.read;
  const uint64_t size = rr.read_message_size;
  const FaultSet& f = config_.faults;
  std::size_t room = config_.mulpdu - wire::kDdpTaggedHeaderLength;
  if (f.Has(Fault::kSplitReadResponseOverMulpdu)) room += 16;
  const uint64_t to_error = f.Has(Fault::kWrongReadResponseTo) ? 4 : 0;
  std::size_t count = 0;
  do {
    if (count == max_segments) break;
    if (size > 0) {
      CheckResult r = CheckTaggedAccess(resources_, config_.stream_id, rr.source_stag,
                                        rr.source_tagged_offset + p.read_sent, size - p.read_sent, kRemoteRead,
                                        kReadSourceErrors, config_.decisions.wrap_before_bounds, f);
      if (r) {
        r->offending = p.request_segment;
        r->offending.read_request.sink_tagged_offset += p.read_sent;
        r->offending.read_request.source_tagged_offset += p.read_sent;
        r->offending.read_request.read_message_size -= static_cast<uint32_t>(p.read_sent);
        RaiseViolation(std::move(*r), out);
        return count;
      }
    }
    const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(room, size - p.read_sent));
    wire::DdpSegmentHeader h =
        TaggedHeader(Opcode::kRdmaReadResponse, rr.sink_stag, rr.sink_tagged_offset + p.read_sent + to_error);
    h.last = p.read_sent + n == size;
    wire::Bytes& b = out.AddSegment();
    wire::EncodeDdpHeader(h, b);
    if (n > 0) {
      const MemoryRegion* region = resources_.FindRegion(rr.source_stag);
      AppendSourceOctets(*region, rr.source_tagged_offset + p.read_sent, n, b);
    }
    p.read_sent += n;
    p.read_started = true;
    ++count;
  } while (p.read_sent < size);
  return count;
}

}  // namespace rdmapct::model
