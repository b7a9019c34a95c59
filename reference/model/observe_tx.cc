// Passive audit of what the endpoint's own side sent (captured traffic):
// the sender's rules of RFC 5040/5041/7306 checked on real transmissions,
// and the requests it sends learned so the peer's responses can be checked
// by OnSegment. Findings never produce a Terminate.
#include <string_view>

#include "reference/model/endpoint.h"

namespace rdmapct::model {

using wire::Opcode;

namespace {

Violation Outbound(ViolationKind kind, const char* id, std::string detail, const wire::DdpSegmentHeader* h,
                   std::size_t length) {
  Violation v = MakeViolation(kind, id, std::move(detail));
  if (h != nullptr) {
    v.offending.has_ddp_header = true;
    v.offending.ddp_header = *h;
  }
  v.offending.ulpdu_length = static_cast<uint32_t>(length);
  return v;
}

}  // namespace

void RdmapEndpoint::ObserveTransmitted(wire::ByteSpan ulpdu, Reactions& out) {
  if (terminate_observed_) {
    RecordViolation(Outbound(ViolationKind::kOutboundAfterTerminate, "R5040-5.4-10",
                             "segment sent after the endpoint's own Terminate", nullptr, ulpdu.size()),
                    out);
    return;
  }
  // REQ R5041-5.2-01
  if (ulpdu.size() > config_.mulpdu) {
    RecordViolation(Outbound(ViolationKind::kOutboundOverMulpdu, "R5041-5.2-01",
                             std::to_string(ulpdu.size()) + "-octet ULPDU, MULPDU " + std::to_string(config_.mulpdu),
                             nullptr, ulpdu.size()),
                    out);
  }
  auto decoded = wire::DecodeRdmapSegment(ulpdu, config_.profile);
  if (!decoded.ok()) {
    RecordViolation(
        Outbound(ViolationKind::kOutboundMalformed, "R5040-4.1-01", decoded.error().Describe(), nullptr, ulpdu.size()),
        out);
    return;
  }
  const wire::RdmapMessageView& v = decoded.value();
  if (!ObserveHeaderFields(v, out)) return;
  if (v.ddp.header.tagged) {
    if (v.opcode() == Opcode::kRdmaReadResponse) ObserveReadResponse(v, out);
    return;
  }
  ObserveUntagged(v, out);
}

// REQ R5040-4.1-01 R5040-4.1-05 R5040-4.1-08 R5040-4.1-09 R5041-4.1-09 R5041-4.1-11
// R5040-4.1-12 R7306-4.1-03
// The fields a sender MUST set: DV and RV as negotiated, Rsvd/Rsv zero, an
// opcode of the profile with its T flag and QN, Invalidate STag zero where
// the opcode has none.
bool RdmapEndpoint::ObserveHeaderFields(const wire::RdmapMessageView& v, Reactions& out) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const char* id = nullptr;
  std::string what;
  if (h.ddp_version != config_.ddp_version) {
    id = "R5041-4.1-11", what = "DV " + std::to_string(h.ddp_version);
  } else if (h.rsvd != 0) {
    id = "R5041-4.1-09", what = "DDP Rsvd " + std::to_string(h.rsvd);
  } else if (v.ctrl.rdma_version != config_.rdmap_version) {
    id = "R5040-4.1-08", what = "RV " + std::to_string(v.ctrl.rdma_version);
  } else if (v.ctrl.rsv != 0) {
    id = "R5040-4.1-09", what = "RDMAP Rsv " + std::to_string(v.ctrl.rsv);
  } else if (!v.opcode_known || !v.tagged_flag_matches ||
             (!h.tagged && h.queue_number != v.opcode_info->queue_number)) {
    id = "R5040-4.1-05", what = "opcode " + std::to_string(v.ctrl.opcode) + " with this T/QN";
  } else if (!h.tagged && h.invalidate_stag != 0 && v.opcode_info->invalidate_stag == wire::InvalidateStagUse::kZero) {
    id = "R5040-4.1-12", what = "non-zero Invalidate STag";
  }
  if (id == nullptr) return true;
  RecordViolation(Outbound(ViolationKind::kOutboundMalformed, id, what, &h, v.ddp.payload.size() + h.HeaderLength()),
                  out);
  // Fields the receiver ignores (Rsvd, Rsv, an Invalidate STag where the
  // opcode has none): the message still counts, e.g. as an outstanding
  // request whose response must follow.
  const bool ignored_on_receive = id == std::string_view("R5041-4.1-09") || id == std::string_view("R5040-4.1-09") ||
                                  id == std::string_view("R5040-4.1-12");
  return ignored_on_receive;
}

// REQ R5040-4.4-02 R5040-4.4-03 R5040-5.2.2-07 R5040-5.2.2-09 R5040-5.2-01
// The oldest inbound Read is answered first, at its Data Sink STag, inside
// [SinkTO, SinkTO + size), ending (L=1) exactly when every octet was sent.
void RdmapEndpoint::ObserveReadResponse(const wire::RdmapMessageView& v, Reactions& out) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const std::size_t length = h.HeaderLength() + v.ddp.payload.size();
  if (pending_.empty() || pending_.front().response != Opcode::kRdmaReadResponse) {
    RecordViolation(Outbound(ViolationKind::kOutboundUnsolicitedResponse, "R5040-5.2-01",
                             "Read Response while no Read Request is the oldest pending request", &h, length),
                    out);
    return;
  }
  PendingResponse& p = pending_.front();
  const wire::ReadRequestHeader& r = p.read;
  const uint64_t n = v.ddp.payload.size();
  const uint64_t off = h.tagged_offset - r.sink_tagged_offset;
  const bool inside =
      h.tagged_offset >= r.sink_tagged_offset && off <= r.read_message_size && n <= r.read_message_size - off;
  if (h.stag != r.sink_stag || (n > 0 && !inside)) {
    RecordViolation(Outbound(ViolationKind::kOutboundResponseMismatch, "R5040-4.4-02",
                             "Read Response outside the oldest Read's Data Sink STag/range", &h, length),
                    out);
  } else if (n > 0) {
    p.observed.Insert(off, off + n);
  }
  if (!h.last) return;
  if (p.observed.covered() != r.read_message_size) {
    RecordViolation(Outbound(ViolationKind::kOutboundResponseMismatch, "R5040-4.4-03",
                             "Read Response ends after " + std::to_string(p.observed.covered()) + " of " +
                                 std::to_string(r.read_message_size) + " octets",
                             &h, length),
                    out);
  }
  pending_.pop_front();
}

// REQ R5041-4.3-07 R5041-4.3-08 R5040-6.1-09 R7306-5.2.2-S5 R5040-5.4-10
void RdmapEndpoint::ObserveUntagged(const wire::RdmapMessageView& v, Reactions& out) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const std::size_t length = h.HeaderLength() + v.ddp.payload.size();
  const uint32_t qn = h.queue_number;
  if (h.msn != next_msn_[qn]) {
    RecordViolation(Outbound(ViolationKind::kOutboundMsnSequence, "R5041-4.3-07",
                             "MSN " + std::to_string(h.msn) + " on QN " + std::to_string(qn) + ", expected " +
                                 std::to_string(next_msn_[qn]),
                             &h, length),
                    out);
    next_msn_[qn] = h.msn;  // resynchronise on the sender's numbering
  }
  if (h.last) ++next_msn_[qn];
  const Opcode op = v.opcode();
  const bool request = qn == 1 && h.message_offset == 0;
  if (request) {
    const bool extension = op != Opcode::kRdmaReadRequest;
    const bool shared = config_.decisions.ird_accounting == IrdAccounting::kShared;
    const std::size_t in_use = shared      ? outstanding_reads_.size() + outstanding_responses_.size()
                               : extension ? outstanding_responses_.size()
                                           : outstanding_reads_.size();
    const uint32_t limit = !shared && extension ? config_.decisions.extension_ord : config_.ord;
    if (in_use >= limit) {
      RecordViolation(
          Outbound(ViolationKind::kOutboundOrdExceeded, "R5040-6.1-09",
                   std::to_string(in_use) + " requests outstanding, ORD " + std::to_string(limit), &h, length),
          out);
    }
    if (!extension && v.header_present) {
      outstanding_reads_.push_back(OutstandingRead{h.msn, std::get<wire::ReadRequestHeader>(v.header), {}, false});
    } else if (extension) {
      OutstandingResponse o{h.msn, op, wire::InfoFor(op).response.value_or(Opcode::kAtomicResponse), 0};
      if (const auto* a = std::get_if<wire::AtomicRequestHeader>(&v.header)) {
        o.request_id = a->request_identifier;
      }
      outstanding_responses_.push_back(o);
    }
  } else if (qn == 3) {
    ObserveQn3Response(v, out);
  } else if (qn == 2) {
    terminate_observed_ = true;
    if (state_ == StreamState::kStreaming || state_ == StreamState::kClosing) {
      SetState(StreamState::kTerminateSent, out);
    }
  }
}

// REQ R7306-5.2.2-S8 R7306-5.2.2-02 R7306-5.4-R8b RCOMMIT-3.1-07
// QN3 responses leave in the order of the requests they answer (one queue
// with the Read Responses), with the request's response type and, for
// atomics, its Request Identifier.
void RdmapEndpoint::ObserveQn3Response(const wire::RdmapMessageView& v, Reactions& out) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const std::size_t length = h.HeaderLength() + v.ddp.payload.size();
  if (pending_.empty() || !pending_.front().extension) {
    RecordViolation(
        Outbound(ViolationKind::kOutboundUnsolicitedResponse, "R7306-5.2.1-S8",
                 std::string(v.opcode_info->name) + " while no QN3 request is the oldest pending request", &h, length),
        out);
    return;
  }
  const PendingResponse p = std::move(pending_.front());
  pending_.pop_front();
  std::string problem;
  if (p.response != v.opcode()) {
    problem = std::string(v.opcode_info->name) + " answers a request owed a " + wire::OpcodeName(p.response);
  } else if (const auto* a = std::get_if<wire::AtomicResponseHeader>(&v.header);
             a != nullptr && a->original_request_identifier != p.request_id) {
    problem = "Original Request Identifier " + std::to_string(a->original_request_identifier) + ", request had " +
              std::to_string(p.request_id);
  }
  if (!problem.empty()) {
    RecordViolation(Outbound(ViolationKind::kOutboundResponseMismatch, "R7306-5.2.2-S8", problem, &h, length), out);
  }
}

}  // namespace rdmapct::model
