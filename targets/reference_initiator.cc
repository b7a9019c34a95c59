// The reference target as MPA Initiator (docs/target-convention.md §10):
// its Request with the Advertisement, the Reply checks of RFC 5044 §7.1.2
// rule 3 and the RFC 6581 §9 negotiation, and its first FPDU (the RTR, or
// the convention's hello). Full Operation is the Responder's
// (reference_connection.cc); only who sends the first FPDU differs.
#include <algorithm>

#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "targets/reference_target.h"

namespace rdmapct::targets {

namespace {

using model::Fault;

// The options of this connection: a Connect Directive, else the policy.
wire::ConnectDirective EffectiveOptions(const std::optional<wire::ConnectDirective>& d,
                                        const ReferenceTargetConfig& c) {
  if (d) return *d;
  wire::ConnectDirective o;
  const InitiatorPolicy& p = c.initiator;
  o.flags = (p.crc ? wire::kDirectiveCrc : 0) | (p.markers ? wire::kDirectiveMarkers : 0) |
            (p.rfc6581 ? wire::kDirectiveEnhanced : 0) | (p.peer_to_peer ? wire::kDirectivePeerToPeer : 0) |
            wire::kDirectiveSendRtr | wire::kDirectiveWriteRtr | wire::kDirectiveReadRtr;
  o.ird = c.ird;
  o.ord = c.ord;
  return o;
}

}  // namespace

// REQ R5044-7.1.1-02 R5044-7.1.2-R01a R5044-7.1.1-15 R5044-7.1.1-17 R6581-10-04 R6581-9.2-02
// R6581-9.2-03 R6581-9.2-14 R6581-9.2-16
wire::MpaStartupFrame ReferenceTargetConnection::BuildRequest() {
  const wire::ConnectDirective o = EffectiveOptions(directive_, config_);
  const bool fault_p2p = config_.faults.Has(Fault::kPeerToPeerAlways);
  wire::MpaStartupFrame r;
  r.is_reply = false;
  r.crc_required = o.Has(wire::kDirectiveCrc);
  r.marker_required = o.Has(wire::kDirectiveMarkers);
  r.enhanced =
      (o.Has(wire::kDirectiveEnhanced) && config_.mpa.rfc6581) || config_.faults.Has(Fault::kEnhancedRequestAlways);
  r.revision = r.enhanced ? 2 : 1;
  if (config_.faults.Has(Fault::kRequestResBitsSet)) r.res = 0x08;
  ird_ = config_.ird;
  ord_ = config_.ord;
  if (r.enhanced) {
    wire::EnhancedIrdOrd e;
    if (directive_) {
      ird_ = o.ird;
      ord_ = o.ord;
    }
    e.ird = ird_;
    e.ord = ord_;
    e.peer_to_peer = o.Has(wire::kDirectivePeerToPeer) || fault_p2p;
    if (e.peer_to_peer && !fault_p2p) {
      e.send_rtr = o.Has(wire::kDirectiveSendRtr) && config_.mpa.rtr_send;
      e.write_rtr = o.Has(wire::kDirectiveWriteRtr) && config_.mpa.rtr_write;
      e.read_rtr = o.Has(wire::kDirectiveReadRtr) && config_.mpa.rtr_read;
    }
    r.enhanced_data = e;
  }
  keep_memory_ = config_.keep_memory && o.Has(wire::kDirectiveKeepMemory);
  case_hash_ = o.case_hash;
  return r;
}

// The Request, with the Advertisement as its Private Data (§10.1).
void ReferenceTargetConnection::Start(wire::Bytes& out) {
  if (!initiator_ || phase_ != ConnectionPhase::kAwaitingRequest) return;
  directive_ = target_.TakeDirective();
  wire::MpaStartupFrame request = BuildRequest();
  if (!target_.config_error().empty()) {
    detail_ = target_.config_error();
    Close(CloseReason::kConfigError);
    return;
  }
  wire::Advertisement adv;
  if (!BuildAdvertisement(adv) || !wire::EncodeAdvertisement(adv, request.private_data).ok()) {
    detail_ = "the Advertisement cannot be encoded";
    Close(CloseReason::kConfigError);
    return;
  }
  advertisement_ = std::move(adv);
  const std::size_t before = out.size();
  wire::AppendMpaStartupFrame(out, request);
  // sends-before-reply: the client-server hello goes out before any Reply.
  if (config_.faults.Has(Fault::kSendsBeforeReply)) {
    const wire::Bytes hello = wire::EncodeSegment(wire::MakeRdmaWrite(0, 0, {}));
    wire::AppendFpdu(out, hello, {.crc_enabled = request.crc_required});
  }
  octets_out_ += out.size() - before;
  request_ = std::move(request);
  reply_deadline_ = std::chrono::steady_clock::now() + config_.initiator.reply_timeout;
  phase_ = ConnectionPhase::kAwaitingReply;
}

std::optional<std::chrono::steady_clock::time_point> ReferenceTargetConnection::timer() const {
  if (phase_ != ConnectionPhase::kAwaitingReply) return std::nullopt;
  return reply_deadline_;
}

// REQ R5044-7.1.2-R10a
void ReferenceTargetConnection::OnTimer(std::chrono::steady_clock::time_point now, wire::Bytes& /*out*/) {
  if (phase_ != ConnectionPhase::kAwaitingReply || now < reply_deadline_) return;
  detail_ = "no MPA Reply within " + std::to_string(config_.initiator.reply_timeout.count()) + " ms";
  Close(CloseReason::kReplyTimeout);
}

// REQ R5044-7.1.2-R03a R5044-7.1.2-R03b R5044-7.1.1-05 R5044-7.1.2-R08a R5044-7.1.2-R09c
// Takes exactly the Reply's octets (at most 20 + 512): what follows is FPDUs.
void ReferenceTargetConnection::FeedReply(wire::ByteSpan& in, wire::Bytes& out) {
  const wire::MpaFrameDecodeOptions options{wire::MpaFrameKind::kReply, wire::kMpaMaxPrivateDataLength};
  const bool skip_key = config_.faults.Has(Fault::kAcceptReplyBadKey);
  while (!in.empty()) {
    const std::size_t need = wire::MpaStartupFrameLength(startup_);
    const std::size_t take = std::min(need - startup_.size(), in.size());
    startup_.insert(startup_.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(take));
    in = in.subspan(take);
    if (skip_key && startup_.size() >= wire::kMpaKeySize) {
      std::copy(wire::kMpaReplyKey.begin(), wire::kMpaReplyKey.end(), startup_.begin());
    }
    if (skip_key && startup_.size() < wire::kMpaKeySize) continue;
    auto frame = wire::DecodeMpaStartupFrame(startup_, options);
    if (frame.ok()) {
      wire::Bytes().swap(startup_);
      OnReply(frame.value(), out);
      return;
    }
    if (frame.error().kind != wire::DecodeErrorKind::kTruncated) {
      detail_ = frame.error().Describe();
      wire::Bytes().swap(startup_);
      Close(CloseReason::kBadReply);
      in = {};
      return;
    }
  }
}

// REQ R5044-7.1.2-R03c R5044-7.1.2-R03d R5044-7.1.1-19 R5044-7.1.1-07 R5044-7.1.1-12 R6581-9.1-09
// R6581-9.1-10 R6581-9.1-15 R6581-9.1-17
bool ReferenceTargetConnection::OnReply(const wire::MpaStartupFrame& reply, wire::Bytes& out) {
  reply_ = reply;
  const auto& revs = config_.mpa.accepted_revisions;
  if (std::find(revs.begin(), revs.end(), reply.revision) == revs.end() || reply.revision > request_->revision) {
    detail_ = "Reply Rev " + std::to_string(reply.revision);
    Close(CloseReason::kBadReply);
    return false;
  }
  const bool proceed_anyway = config_.faults.Has(Fault::kProceedAfterReject);
  if (reply.reject && !proceed_anyway) {
    // The test ULP closes at once; a Connect Directive shapes its next Request.
    if (auto d = wire::DecodeConnectDirective(reply.private_data); d.ok()) target_.SetDirective(*d);
    detail_ = "the Reply has R=1";
    Close(CloseReason::kReplyRejected);
    return false;
  }
  crc_ = request_->crc_required || (reply.crc_required && !config_.faults.Has(Fault::kIgnoreReplyCrc));
  markers_in_ = request_->marker_required;
  markers_out_ = reply.marker_required && !config_.faults.Has(Fault::kIgnoreReplyMarkers);
  const wire::IrdOrdOutcome o = wire::NegotiateIrdOrd(*request_, reply);
  const bool ird_shortfall =
      o.applies && o.initiator_ird > config_.initiator.max_ird && !config_.faults.Has(Fault::kIgnoreIrdShortfall);
  if (o.applies) {
    ird_ = std::min<uint16_t>(o.initiator_ird, config_.initiator.max_ird);
    ord_ = o.initiator_ord;
  }
  SetUpEndpoint(request_->revision == 0 ? 0 : 1);
  PrepareFraming();
  phase_ = ConnectionPhase::kFullOperation;
  if (ird_shortfall) {
    detail_ = "the Reply's ORD " + std::to_string(o.responder_ord) + " exceeds the IRD it can provide";
    AbortSetup(wire::MakeTerminateCode(wire::MpaErrorCode::kInsufficientIrdResources), out);
    return false;
  }
  SendFirstFpdu(o, out);
  return true;
}

// REQ R6581-9.2-11 R6581-5-02 R6581-9.2-12 R6581-9.2-13 R5044-7.1.2-R04
// Peer-to-peer: one negotiated RTR (Write, Send, Read in that order of
// preference), or TERM 2/0/0x07 when it can send none. Client-server: the
// convention's hello, a zero-length RDMA Write with STag 0 (§10.3).
void ReferenceTargetConnection::SendFirstFpdu(const wire::IrdOrdOutcome& o, wire::Bytes& out) {
  posted_.Clear();
  const bool p2p = o.applies && o.peer_to_peer;
  bool write = !p2p, send = false;
  if (p2p && config_.faults.Has(Fault::kSkipRtr)) return;
  if (p2p && config_.faults.Has(Fault::kWrongRtrType)) {
    send = !o.rtr_send;
    write = o.rtr_send;
  } else if (p2p) {
    write = o.rtr_write && config_.mpa.rtr_write;
    send = !write && o.rtr_send && config_.mpa.rtr_send;
    const bool read = !write && !send && o.rtr_read && config_.mpa.rtr_read;
    if (read && SendReadRtr(out)) return;
    if (!write && !send) {
      if (!config_.faults.Has(Fault::kNoRtrTerminate)) {
        detail_ = "no RTR type of the Reply can be sent";
        AbortSetup(wire::MakeTerminateCode(wire::MpaErrorCode::kNoMatchingRtrOption), out);
        return;
      }
      write = true;
    }
  }
  if (send)
    endpoint_->PostSend(wire::Opcode::kSend, {}, 0, posted_);
  else
    endpoint_->PostRdmaWrite(0, 0, {}, posted_);
  FrameSegments(posted_, out);
}

// A zero-length Read Request into the first readable region; false when its
// ORD is 0 (R6581-9.1-09: at most the responder's IRD outstanding).
bool ReferenceTargetConnection::SendReadRtr(wire::Bytes& out) {
  const auto& regions = target_.layout().regions;
  const wire::AdvertisedRegion* sink = regions.empty() ? nullptr : &regions.front();
  wire::ReadRequestHeader h{sink ? sink->stag : 0, sink ? sink->base_tagged_offset : 0, 0, 0, 0};
  if (ord_ >= 1 && endpoint_->PostReadRequest(h, posted_) == model::PostStatus::kOk) {
    FrameSegments(posted_, out);
    return true;
  }
  if (!config_.faults.Has(Fault::kExceedGrantedOrd)) return false;
  posted_.Clear();
  model::Reactions raw;
  raw.AddSegment() = wire::EncodeSegment(wire::MakeReadRequest(1, h));
  FrameSegments(raw, out);
  return true;
}

// A setup failure after an accepting Reply: the Terminate (M = D = R = 0) is
// the first FPDU, then the close (RFC 6581 §9.3).
void ReferenceTargetConnection::AbortSetup(wire::TerminateCode code, wire::Bytes& out) {
  reactions_.Clear();
  endpoint_->Abort(code, reactions_);
  Drain(out);
  Close(CloseReason::kTerminateSent);
}

}  // namespace rdmapct::targets
