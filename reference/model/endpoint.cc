// Receive dispatch: decode, the checks every segment gets, the opcode table,
// and the error path (Raise) every handler shares.
#include "reference/model/endpoint.h"

#include <limits>

#include "reference/model/emit_terminate.h"
#include "reference/model/terminate_map.h"

namespace rdmapct::model {

using wire::Opcode;

// REQ R5040-4.1-T01 R7306-4.1-T01 RCOMMIT-3.1-T01
// ONE table: opcode -> handler. Which opcodes exist is the profile's business
// (CheckOpcode runs first), so every row is always filled.
const std::array<RdmapEndpoint::RxHandler, wire::kOpcodeCount> RdmapEndpoint::kRxHandlers = {
    &RdmapEndpoint::OnRdmaWrite,            // 0x0 RDMA Write
    &RdmapEndpoint::OnReadRequest,          // 0x1 RDMA Read Request
    &RdmapEndpoint::OnReadResponse,         // 0x2 RDMA Read Response
    &RdmapEndpoint::OnSend,                 // 0x3 Send
    &RdmapEndpoint::OnSend,                 // 0x4 Send with Invalidate
    &RdmapEndpoint::OnSend,                 // 0x5 Send with SE
    &RdmapEndpoint::OnSend,                 // 0x6 Send with SE and Invalidate
    &RdmapEndpoint::OnTerminate,            // 0x7 Terminate
    &RdmapEndpoint::OnImmediateData,        // 0x8 Immediate Data
    &RdmapEndpoint::OnImmediateData,        // 0x9 Immediate Data with SE
    &RdmapEndpoint::OnAtomicRequest,        // 0xA Atomic Request
    &RdmapEndpoint::OnAtomicResponse,       // 0xB Atomic Response
    &RdmapEndpoint::OnFlushRequest,         // 0xC RDMA Flush Request
    &RdmapEndpoint::OnFlushResponse,        // 0xD RDMA Flush Response
    &RdmapEndpoint::OnVerifyRequest,        // 0xE RDMA Verify Request
    &RdmapEndpoint::OnVerifyResponse,       // 0xF RDMA Verify Response
    &RdmapEndpoint::OnAtomicWriteRequest,   // 0x10 Atomic Write Request
    &RdmapEndpoint::OnAtomicWriteResponse,  // 0x11 Atomic Write Response
};

RdmapEndpoint::RdmapEndpoint(EndpointConfig config) : config_(std::move(config)) {}

void RdmapEndpoint::OnSegment(wire::ByteSpan ulpdu, Reactions& out) {
  ++segments_received_;
  if (deferred_store_) ApplyDeferredStore();
  if (!AcceptInState(ulpdu, out)) return;
  auto decoded = wire::DecodeRdmapSegment(ulpdu, config_.profile);
  if (!decoded.ok()) {
    OnUndecodable(ulpdu, out);
    return;
  }
  const wire::RdmapMessageView& view = decoded.value();
  Dispatch(RxSegment{view, ulpdu, view.opcode_info}, false, out);
}

// REQ R5041-7.1-03 R5040-5.4-10 R5040-5.4-01
// After a Terminate (sent or received) DDP silently drops every later segment
// (decisions D-E, D-F8); a peer that keeps sending after its own Terminate breaks
// R5040-5.4-10, which the auditor wants to know.
bool RdmapEndpoint::AcceptInState(wire::ByteSpan ulpdu, Reactions& out) {
  if (state_ == StreamState::kStreaming || state_ == StreamState::kClosing) return true;
  const FaultSet& f = config_.faults;
  if (state_ != StreamState::kError &&
      (f.Has(Fault::kKeepPlacingAfterTerminate) || f.Has(Fault::kAnswerAfterTerminate))) {
    return true;
  }
  ++segments_dropped_;
  if (state_ == StreamState::kTerminateReceived) {
    Violation v =
        MakeViolation(ViolationKind::kMessageAfterTerminate, "R5040-5.4-10", "segment after the peer's Terminate");
    auto ddp = wire::DecodeDdpSegment(ulpdu);
    if (ddp.ok()) {
      v.offending.has_ddp_header = true;
      v.offending.ddp_header = ddp->header;
    }
    v.offending.ulpdu_length = static_cast<uint32_t>(ulpdu.size());
    RaiseViolation(std::move(v), out);
  }
  return false;
}

// DecodeRdmapSegment fails only on truncation. A short DDP header cannot be
// echoed (decisions D-F4); a short RDMAP header is checked like any other segment
// first (DV, QN, RV, opcode), then reported as a length error.
void RdmapEndpoint::OnUndecodable(wire::ByteSpan ulpdu, Reactions& out) {
  auto ddp = wire::DecodeDdpSegment(ulpdu);
  if (!ddp.ok()) {
    Violation v = MakeViolation(ViolationKind::kDdpHeaderTruncated, "R5041-4.1-01", ddp.error().Describe());
    v.offending.ulpdu_length = static_cast<uint32_t>(ulpdu.size());
    RaiseViolation(std::move(v), out);
    return;
  }
  wire::RdmapMessageView view;
  view.ddp = ddp.value();
  view.ctrl = wire::DecodeRdmapControl(view.ddp.header.rsvd_ulp0, config_.profile);
  view.opcode_info = wire::FindOpcode(view.ctrl.opcode, config_.profile);
  view.opcode_known = view.opcode_info != nullptr;
  view.tagged_flag_matches = view.opcode_known && view.opcode_info->tagged == view.ddp.header.tagged;
  view.ulp_payload = view.ddp.payload;
  Dispatch(RxSegment{view, ulpdu, view.opcode_info}, true, out);
}

void RdmapEndpoint::Dispatch(const RxSegment& rx, bool header_truncated, Reactions& out) {
  if (!CheckCommon(rx, out)) return;
  const wire::OpcodeInfo& info = *rx.info;
  if (header_truncated) {
    const bool terminate = info.opcode == Opcode::kTerminate;
    CheckResult r = CheckRdmapHeaderLength(info, rx.payload().size());
    if (terminate || !r) {
      r = MakeViolation(terminate ? ViolationKind::kMalformedTerminate : ViolationKind::kRdmapHeaderLength,
                        terminate ? "R5040-4.8-01" : "R5040-4.2-01", std::string(info.name) + " header truncated");
    }
    Raise(rx, std::move(*r), out);
    return;
  }
  if (info.queue_number == 1 && !CheckUntaggedRequest(rx, out)) return;
  if (info.queue_number == 3 && !CheckUntaggedResponse(rx, out)) return;
  if (config_.passive && info.queue_number == 1 && info.opcode != Opcode::kRdmaReadRequest &&
      !PassiveTargetKnown(rx.view)) {
    ExpectResponse(rx, out);  // the target memory is unknown: nothing to execute
    return;
  }
  (this->*kRxHandlers[static_cast<std::size_t>(info.opcode)])(rx, out);
}

// REQ R5040-7.2-01 R5040-7.2-06 R7306-8.2-01 RCOMMIT-5.2-01 R5041-4.1-10 R5040-4.1-10
// The order (DV, QN, RV, opcode) is decisions.md "check order": the DDP
// fields the RDMAP layer needs to interpret anything come first. DDP Rsvd and
// RDMAP Rsv are never looked at.
bool RdmapEndpoint::CheckCommon(const RxSegment& rx, Reactions& out) {
  const FaultSet& f = config_.faults;
  if (RaiseIf(rx, CheckDdpVersion(rx.ddp(), config_.ddp_version, f), out)) return false;
  if (RaiseIf(rx, CheckQueueNumber(rx.ddp(), config_.profile, f), out)) return false;
  if (RaiseIf(rx, CheckRdmapVersion(rx.view.ctrl, config_.rdmap_version, f), out)) return false;
  CheckResult op = CheckOpcode(rx.view, f);
  if (op) {
    Raise(rx, std::move(*op), out);
    return false;
  }
  // accept-unexpected-opcode: what cannot be dispatched is dropped
  // (accept-atomic-response-on-any-queue: an Atomic Response is dispatched).
  const bool any_queue =
      f.Has(Fault::kAcceptAtomicResponseOnAnyQueue) && rx.info != nullptr && rx.info->opcode == Opcode::kAtomicResponse;
  if (rx.info == nullptr || rx.info->tagged != rx.ddp().tagged ||
      (!rx.ddp().tagged && rx.ddp().queue_number != rx.info->queue_number && !any_queue)) {
    ++segments_dropped_;
    return false;
  }
  return true;
}

bool RdmapEndpoint::CheckSingleSegment(const RxSegment& rx, Reactions& out) {
  const wire::DdpSegmentHeader& h = rx.ddp();
  if (h.message_offset != 0) {
    Raise(rx,
          MakeViolation(ViolationKind::kInvalidMo, "R5041-7.1-U3",
                        std::string(rx.info->name) + " segment with MO " + std::to_string(h.message_offset)),
          out);
    return false;
  }
  if (!h.last) {
    Raise(rx,
          MakeViolation(ViolationKind::kMessageTooLong, "R5041-7.1-U4",
                        std::string(rx.info->name) + " continues past its header (L=0)"),
          out);
    return false;
  }
  return !RaiseIf(rx, CheckRdmapHeaderLength(*rx.info, rx.payload().size(), config_.faults), out);
}

uint32_t RdmapEndpoint::PendingCount(bool extension) const {
  if (config_.decisions.ird_accounting == IrdAccounting::kShared) {
    return static_cast<uint32_t>(pending_.size());
  }
  uint32_t n = 0;
  for (const PendingResponse& p : pending_) n += p.extension == extension ? 1 : 0;
  return n;
}

// REQ R5040-5.2.1-02 R5040-6.1-10 R5040-5.2.2-03 R7306-5.2.1-S2 R7306-5.2.2-S4
// QN1: the next MSN only (requests are single-segment and arrive in order,
// decisions D-F7), one IRD slot per request still being answered.
bool RdmapEndpoint::CheckUntaggedRequest(const RxSegment& rx, Reactions& out) {
  const FaultSet& f = config_.faults;
  if (RaiseIf(rx, CheckMsn(rx.ddp().msn, expected_msn_[1], 1, 1, f), out)) return false;
  const bool extension = rx.info->opcode != Opcode::kRdmaReadRequest;
  const bool additive = config_.decisions.ird_accounting == IrdAccounting::kAdditive;
  const uint32_t limit = additive && extension ? config_.decisions.extension_ird : config_.ird;
  if (!f.Has(Fault::kIgnoreIrd) && PendingCount(extension) >= limit) {
    Raise(rx,
          MakeViolation(
              ViolationKind::kIrdExceeded, "R5040-6.1-10",
              std::to_string(PendingCount(extension)) + " inbound requests outstanding, IRD " + std::to_string(limit)),
          out);
    return false;
  }
  if (!CheckSingleSegment(rx, out)) return false;
  ++expected_msn_[1];
  return true;
}

// REQ R7306-5-08 R7306-5.2.2-S7 R7306-5.4-R8b RCOMMIT-3.1-07
// QN3: a response is legal only as the next MSN while a request that earns
// a QN3 response is outstanding, and must be that request's response type
// (decisions D-C8: correlation by QN3 MSN order).
bool RdmapEndpoint::CheckUntaggedResponse(const RxSegment& rx, Reactions& out) {
  // accept-unexpected-responses: what matches no request is dropped unchecked.
  if (config_.faults.Has(Fault::kAcceptUnexpectedResponses) &&
      (outstanding_responses_.empty() || outstanding_responses_.front().response != rx.info->opcode)) {
    ++segments_dropped_;
    return false;
  }
  const uint32_t available = outstanding_responses_.empty() ? 0 : 1;
  CheckResult r = CheckMsn(rx.ddp().msn, expected_msn_[3], available, 3, config_.faults);
  if (r && r->kind == ViolationKind::kMsnNoBufferAvailable) {
    r = MakeViolation(ViolationKind::kUnexpectedResponse, "R7306-5.2.2-S7",
                      std::string(rx.info->name) + " with no request outstanding");
  }
  if (RaiseIf(rx, std::move(r), out)) return false;
  if (!CheckSingleSegment(rx, out)) return false;
  if (outstanding_responses_.empty()) return false;  // skip-msn-check: nothing to match
  const OutstandingResponse& front = outstanding_responses_.front();
  if (front.response != rx.info->opcode) {
    Raise(rx,
          MakeViolation(ViolationKind::kResponseOpcodeMismatch, "R7306-5.2.2-S7",
                        std::string(rx.info->name) + " answers a " + wire::OpcodeName(front.request)),
          out);
    return false;
  }
  ++expected_msn_[3];
  return true;
}

OutstandingResponse RdmapEndpoint::PopOutstandingResponse() {
  OutstandingResponse r = outstanding_responses_.front();
  outstanding_responses_.pop_front();
  return r;
}

OffendingSegment RdmapEndpoint::SegmentOf(const RxSegment& rx) const {
  OffendingSegment s;
  s.has_ddp_header = true;
  s.ddp_header = rx.ddp();
  s.ulpdu_length = static_cast<uint32_t>(rx.ulpdu.size());
  if (rx.view.header_present) {
    if (const auto* rr = std::get_if<wire::ReadRequestHeader>(&rx.view.header)) {
      s.has_read_request = true;
      s.read_request = *rr;
    }
  }
  return s;
}

void RdmapEndpoint::Raise(const RxSegment& rx, Violation v, Reactions& out) {
  v.offending = SegmentOf(rx);
  RaiseViolation(std::move(v), out);
}

bool RdmapEndpoint::RaiseIf(const RxSegment& rx, CheckResult r, Reactions& out) {
  if (!r) return false;
  Raise(rx, std::move(*r), out);
  return true;
}

// REQ R5040-7.1-01 R5040-7.1-02 R5040-7.1-03 R5040-5.4-10 R5041-7.1-01 R5041-7.1-04
// R5040-6.2.1-01
// The first violation is the one the Terminate describes (7.1-03): once a
// Terminate is out, nothing else is sent.
void RdmapEndpoint::RaiseViolation(Violation v, Reactions& out) {
  v.segment_index = segments_received_ == 0 ? 0 : segments_received_ - 1;
  UlpEvent& e = out.AddEvent(UlpEventKind::kError);
  e.violation = v.kind;
  const TerminateRule& rule = RuleFor(v.kind);
  const bool answer = rule.emits_terminate ||
                      (v.kind == ViolationKind::kMalformedTerminate && config_.decisions.answer_malformed_terminate);
  const auto is_live = [&] { return state_ == StreamState::kStreaming || state_ == StreamState::kClosing; };
  // Not while a response is being sent: its own failure is this violation,
  // and flushing again would serve the same failing response forever.
  if (is_live() && answer && !terminate_sent_ && config_.answer_before_terminate && !emitting_responses_) {
    EmitPendingResponses(std::numeric_limits<std::size_t>::max(), out);
  }
  // REQ R5040-5.4-10
  // A response served by that flush may fail on its own (a Read whose Data
  // Source an earlier Send with Invalidate invalidated) and send the one
  // Terminate; then this violation is not reported on the wire, and the
  // Terminate's violation is the first one.
  if (!first_violation_) first_violation_ = v;
  const bool live = is_live();
  if (live && answer && !terminate_sent_) {
    // Passive audit: this Terminate is what the audited side owes, not one it
    // sent; its real Terminate (ObserveTransmitted) takes the QN 2 MSN.
    EmitTerminate(v, config_.passive ? next_msn_[2] : next_msn_[2]++, config_.profile, config_.rdmap_version,
                  config_.ddp_version, config_.decisions, config_.faults, out.AddSegment());
    terminate_sent_ = true;
    SetState(StreamState::kTerminateSent, out);
  } else if (live) {
    SetState(StreamState::kError, out);
  }
  // Passive audit: responses earned before the error may still go out ahead
  // of the audited side's Terminate (decisions.md #17), so they stay expected.
  if (!config_.faults.Has(Fault::kAnswerAfterTerminate) && !config_.passive) pending_.clear();
  out.AddViolation(v);
}

void RdmapEndpoint::RecordViolation(Violation v, Reactions& out) {
  v.segment_index = segments_received_ == 0 ? 0 : segments_received_ - 1;
  if (!first_violation_) first_violation_ = v;
  out.AddViolation(v);
}

// Passive audit: an Atomic, Flush or Atomic Write Request whose target region
// is registered (known from an Advertisement) runs through its handler, so
// its checks (alignment, length, flags, bounds, access) apply. Verify is
// left out: its hash depends on memory the audit cannot follow across
// connections.
bool RdmapEndpoint::PassiveTargetKnown(const wire::RdmapMessageView& v) const {
  uint32_t stag = 0;
  if (const auto* a = std::get_if<wire::AtomicRequestHeader>(&v.header))
    stag = a->remote_stag;
  else if (const auto* f = std::get_if<wire::FlushRequestHeader>(&v.header))
    stag = f->data_sink_stag;
  else if (const auto* w = std::get_if<wire::AtomicWriteRequestHeader>(&v.header))
    stag = w->data_sink_stag;
  else
    return false;
  return resources_.FindRegion(stag) != nullptr;
}

void RdmapEndpoint::ExpectResponse(const RxSegment& rx, Reactions& out) {
  PendingResponse p;
  p.response = rx.info->response.value_or(Opcode::kAtomicWriteResponse);
  p.extension = true;
  p.request_segment = SegmentOf(rx);
  if (const auto* a = std::get_if<wire::AtomicRequestHeader>(&rx.view.header)) {
    p.request_id = a->request_identifier;
  }
  QueueResponse(std::move(p), out);
}

// REQ R5041-7-01 R5044-8-02 R5040-6.2.1-01 R5040-4.8-T21
void RdmapEndpoint::OnLlpError(wire::TerminateCode code, Reactions& out) {
  if (state_ != StreamState::kStreaming && state_ != StreamState::kClosing) return;
  ViolationKind kind = ViolationKind::kLlpOtherError;
  if (code == wire::term::kMpaCrcError) kind = ViolationKind::kLlpCrcError;
  if (code == wire::term::kMpaMarkerMismatch) kind = ViolationKind::kLlpMarkerMismatch;
  const char* id = kind == ViolationKind::kLlpCrcError         ? "R5044-8-T02"
                   : kind == ViolationKind::kLlpMarkerMismatch ? "R5044-8-T03"
                                                               : "R5041-6.2.2-01";
  RaiseViolation(MakeViolation(kind, id, wire::Describe(code)), out);
}

void RdmapEndpoint::SetState(StreamState s, Reactions& out) {
  if (s == state_) return;
  out.AddStateChange(state_, s);
  state_ = s;
}

bool RdmapEndpoint::CanTransmit() const {
  if (state_ == StreamState::kStreaming || state_ == StreamState::kClosing) return true;
  return config_.faults.Has(Fault::kAnswerAfterTerminate) && state_ != StreamState::kError;
}

std::span<const uint8_t> RdmapEndpoint::PeekRegion(uint32_t stag, uint64_t tagged_offset, std::size_t length) const {
  const MemoryRegion* r = resources_.FindRegion(stag);
  if (r == nullptr) return {};
  auto bytes = resources_.RegionBytes(*r, tagged_offset, length);
  return bytes.size() == length ? bytes : std::span<const uint8_t>{};
}

}  // namespace rdmapct::model
