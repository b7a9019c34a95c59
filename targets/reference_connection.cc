// One connection of the reference target: MPA Responder startup, Full
// Operation around the RdmapEndpoint, Event Records and teardown.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>
#include <variant>

#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "targets/reference_target.h"

namespace rdmapct::targets {

namespace {

// stag-across-connections: how many other slots' STags a connection also
// accepts (a case opens at most two connections at once).
constexpr uint32_t kFaultSlots = 4;

using model::StreamState;
using wire::Opcode;

bool Live(StreamState s) { return s == StreamState::kStreaming || s == StreamState::kClosing; }

// The Terminate among the segments the endpoint just sent, if any.
std::optional<wire::TerminateCode> SentTerminateCode(const model::Reactions& r, wire::Profile profile) {
  for (const wire::Bytes& seg : r.segments()) {
    auto view = wire::DecodeRdmapSegment(seg, profile);
    if (!view.ok() || !view->header_present) continue;
    if (const auto* t = std::get_if<wire::TerminateHeader>(&view->header)) return t->code;
  }
  return std::nullopt;
}

// Model ULP events that count as "local completion or async errors" in the
// outcome block (§3.4): the errors the endpoint surfaced to its ULP.
bool IsCompletionError(const model::UlpEvent& e) {
  return e.kind == model::UlpEventKind::kError && e.violation != model::ViolationKind::kMessageAfterTerminate;
}

}  // namespace

ReferenceTargetConnection::ReferenceTargetConnection(ReferenceTarget& target, uint32_t serial, bool initiator)
    : target_(target), config_(target.config()), serial_(serial), initiator_(initiator) {}

ReferenceTargetConnection::~ReferenceTargetConnection() {
  if (phase_ != ConnectionPhase::kClosed) {
    Close(CloseReason::kPeerReset);
  } else if (!peer_closed_) {
    // Closed by the target: a faulty one may have placed since (keep-placing-
    // after-terminate). After the peer's FIN nothing more arrives, and
    // OnPeerClosed/OnPeerReset stored the final contents already.
    Finish(/*release=*/true);
  }
  ReleaseSlot();
}

// The connection is over once the peer closed or reset it: its slot (and
// so its STags) may go to the next connection, even while this object lives.
void ReferenceTargetConnection::ReleaseSlot() {
  if (holds_slot_) target_.ReleaseSlot(serial_);
  holds_slot_ = false;
}

// ---------------------------------------------------------------------------
// Input.

void ReferenceTargetConnection::OnBytes(wire::ByteSpan in, wire::Bytes& out) {
  octets_in_ += in.size();
  // terminate-tears-down-others ended this connection from another one.
  if (phase_ != ConnectionPhase::kClosed && target_.TornDown(serial_)) {
    detail_ = "torn down by another connection's Terminate";
    Close(CloseReason::kStreamError);
  }
  const bool request_pending = phase_ == ConnectionPhase::kAwaitingRequest && !initiator_;
  if (request_pending) FeedStartup(in, out);
  if (phase_ == ConnectionPhase::kAwaitingReply) FeedReply(in, out);
  // Closed during startup (no deframer) or a reset connection: discard.
  if (!deframer_ || peer_closed_) return;
  const std::size_t skip = std::min(skip_octets_, in.size());
  skip_octets_ -= skip;
  in = in.subspan(skip);
  // Octets behind the Request in the same write arrived before the Reply.
  if (!request_pending && !initiator_ && HeldUntilHandOff(in, out)) return;
  SyncSharedInvalidations();
  FeedFpdus(in, out);
  SyncSharedInvalidations();
}

// Fault invalidate-shared-stag (convention §12): a shared STag that one
// connection let a peer invalidate is invalid on every connection sharing it.
void ReferenceTargetConnection::SyncSharedInvalidations() {
  if (!endpoint_ || !config_.faults.Has(model::Fault::kInvalidateSharedStag)) return;
  model::Resources& res = endpoint_->resources();
  for (const wire::AdvertisedRegion& r : target_.layout().regions) {
    const model::MemoryRegion* m = (r.attributes & wire::kAttrShared) ? res.FindRegion(r.stag) : nullptr;
    if (m && target_.ShareInvalidation(case_hash_, r.stag, !m->valid)) res.Invalidate(r.stag);
  }
}

// late-fpdu-hand-off (R5044-7.1.2-R02h, the Responder interprets all data
// after its Reply as FPDUs): Linux siw 6.1 hands the socket from its
// connection manager to the QP only after sending the Reply, and octets that
// arrive in between wake nobody; they are read when more octets, or the FIN,
// come after the hand-off. True if `in` was taken (held, or fed with what
// was held).
bool ReferenceTargetConnection::HeldUntilHandOff(wire::ByteSpan in, wire::Bytes& out) {
  if (!config_.faults.Has(model::Fault::kLateFpduHandOff) || in.empty()) return false;
  // Bounded like a socket's receive buffer: past it the hand-off is forced.
  constexpr std::size_t kMaxHeld = 256 * 1024;
  if (std::chrono::steady_clock::now() < hand_off_at_ && held_.size() + in.size() <= kMaxHeld) {
    held_.insert(held_.end(), in.begin(), in.end());
    return true;
  }
  if (held_.empty()) return false;
  held_.insert(held_.end(), in.begin(), in.end());
  FeedFpdus(std::exchange(held_, {}), out);
  return true;
}

// REQ R5044-7.1.2-R02a R5044-7.1.2-R02b R5044-7.1.1-03 R5044-7.1.1-22 R5044-7.1.2-R09c
// R5044-8-06
// Takes exactly the Request's octets (at most 20 + 512): what follows is the
// first FPDU. A wrong Key is seen on any prefix and a PD_Length above the
// limit as soon as the header is in, so a bad Request never grows the buffer.
void ReferenceTargetConnection::FeedStartup(wire::ByteSpan& in, wire::Bytes& out) {
  const wire::MpaFrameDecodeOptions options{wire::MpaFrameKind::kRequest, config_.mpa.max_private_data};
  while (!in.empty()) {
    const std::size_t need = wire::MpaStartupFrameLength(startup_);
    const std::size_t take = std::min(need - startup_.size(), in.size());
    startup_.insert(startup_.end(), in.begin(), in.begin() + take);
    in = in.subspan(take);
    if (config_.faults.Has(model::Fault::kReplyBeforeRequestComplete) &&
        startup_.size() == wire::kMpaStartupHeaderSize &&
        wire::MpaStartupFrameLength(startup_) > wire::kMpaStartupHeaderSize) {
      AcceptHeaderOnly(wire::MpaStartupFrameLength(startup_) - wire::kMpaStartupHeaderSize, out);
      return;
    }
    auto frame = wire::DecodeMpaStartupFrame(startup_, options);
    if (frame.ok()) {
      wire::Bytes().swap(startup_);
      Accept(frame.value(), out);
      return;
    }
    if (frame.error().kind != wire::DecodeErrorKind::kTruncated) {
      detail_ = frame.error().Describe();
      wire::Bytes().swap(startup_);
      Close(CloseReason::kBadRequest);
      in = {};
      return;
    }
  }
}

// reply-before-request-complete: the header is taken as a Request with
// PD_Length 0 and answered; the Private Data still to come is dropped.
void ReferenceTargetConnection::AcceptHeaderOnly(std::size_t private_data_to_come, wire::Bytes& out) {
  wire::StoreBe16(&startup_[wire::kMpaStartupHeaderSize - 2], 0);
  auto frame = wire::DecodeMpaStartupFrame(startup_, {wire::MpaFrameKind::kRequest});
  wire::Bytes().swap(startup_);
  if (!frame.ok()) {
    Close(CloseReason::kBadRequest);
    return;
  }
  skip_octets_ = private_data_to_come;
  Accept(frame.value(), out);
}

// REQ R5044-7.1.1-19 R6581-6-06 R6581-10-01 R6581-10-03 R6581-10-08 R5044-7.1.2-R02f
// R5044-7.1.1-06 R5044-7.1.1-09 R5044-7.1.1-11 R5044-7.1.1-12
bool ReferenceTargetConnection::Accept(const wire::MpaStartupFrame& request, wire::Bytes& out) {
  request_ = request;
  const auto& revs = config_.mpa.accepted_revisions;
  const bool plain_rev0 = request.revision == 0 && config_.faults.Has(model::Fault::kRev0ReplyWithoutMarkers);
  if (!plain_rev0 && std::find(revs.begin(), revs.end(), request.revision) == revs.end()) {
    detail_ = "Rev " + std::to_string(request.revision);
    Close(CloseReason::kRevisionRejected);
    return false;
  }
  // enhanced_data is decoded only for Rev >= 2 with S = 1 (decisions D-H3): a
  // Rev 1 Request with S = 1 is an RFC 5044 Request whose Private Data
  // happens to start with 4 more octets.
  const bool enhanced = request.enhanced_data.has_value();
  if (enhanced && !config_.mpa.rfc6581) {
    Close(CloseReason::kEnhancedRejected);
    return false;
  }
  if (!target_.config_error().empty()) {
    detail_ = target_.config_error();
    Close(CloseReason::kConfigError);
    return false;
  }
  // REQ R5044-7.1.1-12 R5044-7.1.1-14
  if (request.crc_required && !config_.mpa.crc_supported) return RejectForCrc(request, out);
  // Suite Request (§2.4): acted on only when it decodes cleanly.
  if (auto sr = wire::DecodeSuiteRequest(request.private_data); sr.ok()) {
    case_hash_ = sr->case_hash;
    keep_memory_ = config_.keep_memory && (sr->flags & wire::kRequestKeepMemory) != 0;
    // 1.1: the suite's IRD bounds the ORD of the target's commands (§2.4).
    auto ext =
        wire::DecodeSuiteRequestExtension(wire::ByteSpan(request.private_data).subspan(wire::kSuiteRequestLength));
    if (sr->minor_version >= 1 && ext.ok()) suite_ird_ = ext->suite_ird;
  }
  wire::MpaStartupFrame reply;
  reply.is_reply = true;
  reply.marker_required = config_.mpa.request_markers;
  // check-crc-when-off turns CRCs off whenever the Request allows it.
  const bool crc_off_fault = config_.faults.Has(model::Fault::kCheckCrcWhenOff) && !request.crc_required;
  reply.crc_required = config_.mpa.crc && !crc_off_fault;
  reply.revision = request.revision;
  reply.enhanced = enhanced;
  // REQ R5044-C.2-01: a permissive Responder answers an RDMAC Rev 0 Request
  // with M=1 and C=1 (RFC 5044 Appendix C.2.4, docs/decisions.md 41).
  if (request.revision == 0) reply.marker_required = reply.crc_required = !plain_rev0;
  if (config_.faults.Has(model::Fault::kReplyResBitsSet)) reply.res = 0x08;
  if (config_.faults.Has(model::Fault::kReplyEchoesRequestRes)) reply.res = request.res;
  ird_ = config_.ird;
  ord_ = config_.ord;
  if (enhanced) reply.enhanced_data = NegotiateEnhanced(*request.enhanced_data);
  // REQ R5040-6.1-07 R5040-6.1-09
  if (config_.commands && suite_ird_) ord_ = std::min(ord_, *suite_ird_);
  crc_ = request.crc_required || reply.crc_required;
  markers_out_ = request.marker_required;
  markers_in_ = reply.marker_required;
  SetUpEndpoint(request.revision == 0 ? 0 : 1);
  wire::Advertisement adv;
  if (!BuildAdvertisement(adv) || !wire::EncodeAdvertisement(adv, reply.private_data).ok()) {
    detail_ = "the Advertisement cannot be encoded";
    endpoint_.reset();
    Close(CloseReason::kConfigError);
    return false;
  }
  advertisement_ = std::move(adv);
  const std::size_t before = out.size();
  wire::AppendMpaStartupFrame(out, reply);
  octets_out_ += out.size() - before;
  reply_ = std::move(reply);
  hand_off_at_ = std::chrono::steady_clock::now() + config_.late_hand_off;
  PrepareFraming();
  phase_ = ConnectionPhase::kAwaitingFirstFpdu;
  return true;
}

// A target without CRCs cannot accept C = 1: it rejects (R = 1) and closes
// (the RFC 5044 §7.1.4.2 reading of a reject, decisions D-G5).
bool ReferenceTargetConnection::RejectForCrc(const wire::MpaStartupFrame& request, wire::Bytes& out) {
  wire::MpaStartupFrame reject;
  reject.is_reply = true;
  reject.reject = true;
  reject.crc_required = false;
  reject.revision = request.revision;
  const std::size_t before = out.size();
  wire::AppendMpaStartupFrame(out, reject);
  octets_out_ += out.size() - before;
  detail_ = "the Request has C=1";
  Close(CloseReason::kCrcRejected);
  return false;
}

// Each direction's Marker space starts with its first FPDU (R5044-4.3-10):
// position 0 is the suite's first FPDU octet, resp. the target's.
void ReferenceTargetConnection::PrepareFraming() {
  wire::MpaDeframerConfig dc;
  // check-crc-when-off: the fault keeps checking what both sides turned off.
  dc.crc_enabled = crc_ || config_.faults.Has(model::Fault::kCheckCrcWhenOff);
  dc.markers_enabled = markers_in_;
  dc.first_position = 0;
  dc.max_ulpdu_length = config_.max_inbound_ulpdu;
  deframer_.emplace(dc);
  if (markers_out_) {
    wire::MarkerInserterOptions mo;
    if (config_.faults.Has(model::Fault::kMarkerReservedSet)) mo.reserved = 0x0100;
    if (config_.faults.Has(model::Fault::kFpduptrLowBitsSet)) mo.fpduptr_xor = 0x0003;
    inserter_.emplace(0, mo);
  }
}

// REQ R6581-9.1-04 R6581-9.1-05 R6581-9.1-06 R6581-9.1-14 R6581-9.1-16 R6581-9.2-05
// R6581-9.2-06 R6581-9.2-08 R6581-9.2-10 R6581-9.2-15 R6581-9.2-17
// The target's IRD is a fixed resource: it answers with it (raised to 1 when
// a Read RTR may come). Its ORD is at most the initiator's IRD.
std::optional<wire::EnhancedIrdOrd> ReferenceTargetConnection::NegotiateEnhanced(const wire::EnhancedIrdOrd& req) {
  const MpaPolicy& p = config_.mpa;
  wire::EnhancedIrdOrd rep;
  rep.peer_to_peer = req.peer_to_peer;
  if (req.peer_to_peer) {
    rep.send_rtr = req.send_rtr && p.rtr_send;
    rep.write_rtr = req.write_rtr && p.rtr_write;
    rep.read_rtr = req.read_rtr && p.rtr_read;
    if (!rep.send_rtr && !rep.write_rtr && !rep.read_rtr) {
      rep.send_rtr = p.rtr_send;
      rep.write_rtr = p.rtr_write;
      rep.read_rtr = p.rtr_read;
    }
    send_rtr_offered_ = rep.send_rtr;
    if (rep.read_rtr && ird_ == 0) ird_ = 1;
  }
  rep.ird = req.ord == wire::kIrdOrdNotNegotiated ? wire::kIrdOrdNotNegotiated : ird_;
  if (req.ird != wire::kIrdOrdNotNegotiated) ord_ = std::min(ord_, req.ird);
  rep.ord = req.ird == wire::kIrdOrdNotNegotiated ? wire::kIrdOrdNotNegotiated : ord_;
  return rep;
}

// Fresh state for every connection (§2.1): memory (patterned unless kept),
// regions with their access rights, Receive Buffer Count buffers on QN 0.
void ReferenceTargetConnection::SetUpEndpoint(uint8_t version) {
  model::EndpointConfig ec;
  ec.profile = config_.profile;
  ec.stream_id = 1;
  ec.ird = ird_;
  ec.ord = ord_;
  // REQ R5044-4.5-03
  const std::size_t emss = effective_mss_ != 0 ? std::min(config_.emss, effective_mss_) : config_.emss;
  ec.mulpdu = config_.mulpdu != 0 ? config_.mulpdu : wire::Mulpdu(emss, markers_out_);
  ec.ddp_version = version;
  ec.rdmap_version = version;
  // Responses wait for the end of each TCP write (FeedFpdus), as an RNIC
  // that drains its receive queue before its transmit queue: requests that
  // arrive together are outstanding together, so IRD and response order are
  // observable on the wire.
  ec.auto_respond = false;
  ec.answer_before_terminate = true;
  ec.faults = config_.faults;
  ec.decisions = config_.decisions;
  endpoint_.emplace(ec);
  model::Resources& res = endpoint_->resources();
  const TargetLayout& layout = target_.layout();
  if (!holds_slot_) {
    slot_ = target_.AcquireSlot(serial_, case_hash_);
    holds_slot_ = true;
  }
  std::vector<std::shared_ptr<const wire::Bytes>> memory = target_.LoadMemory(serial_, keep_memory_);
  std::vector<uint32_t> model_object(layout.memory_objects.size());
  for (std::size_t i = 0; i < layout.memory_objects.size(); ++i) {
    // REQ R7306-5.3-01: one word that atomics of concurrent connections reach (§12).
    if (auto shared = target_.SharedMemory(serial_, case_hash_, i, memory[i])) {
      model_object[i] = res.CreateSharedMemoryObject(std::move(shared));
    } else {
      model_object[i] = res.CreateMemoryObject(std::move(memory[i]));
    }
  }
  for (const wire::AdvertisedRegion& r : layout.regions) {
    // A deregistered STag is not known to the endpoint at all.
    if (r.attributes & wire::kAttrDeregistered) continue;
    const std::size_t index =
        static_cast<std::size_t>(std::find_if(layout.memory_objects.begin(), layout.memory_objects.end(),
                                              [&](const TargetMemoryObject& m) { return m.id == r.memory_object; }) -
                                 layout.memory_objects.begin());
    wire::AdvertisedRegion mine = r;
    mine.stag = SlotStag(r, slot_);
    res.RegisterRegion(model::RegionFromAdvertisement(mine, ec.stream_id, model_object[index]));
    // REQ R5040-8.1.1-01 R5040-8.1.1-02: each connection is a protection
    // domain of its own; the fault also registers the STags the other open
    // connections got (one PD for all), over this connection's memory.
    if (!config_.faults.Has(model::Fault::kStagAcrossConnections)) continue;
    for (uint32_t other = 0; other < kFaultSlots; ++other) {
      if (other == slot_) continue;
      mine.stag = StagForSlot(r.stag, other);
      res.RegisterRegion(model::RegionFromAdvertisement(mine, ec.stream_id, model_object[index]));
    }
  }
  for (uint16_t i = 0; i < config_.receive_buffer_count; ++i) {
    endpoint_->PostReceive(config_.receive_buffer_size);
  }
}

bool ReferenceTargetConnection::BuildAdvertisement(wire::Advertisement& adv) const {
  const bool rfc7306 = wire::ProfileIncludes(config_.profile, wire::Profile::kRfc7306);
  adv.flags = (config_.decisions.atomic_memory_little_endian ? wire::kFlagLittleEndianAtomics : 0) |
              (rfc7306 ? wire::kFlagRfc7306 : 0) | (config_.profile == wire::Profile::kCommit ? wire::kFlagCommit : 0) |
              (config_.keep_memory ? wire::kFlagKeepMemory : 0);
  adv.ird = ird_;
  adv.ord = ord_;
  adv.receive_buffer_count = config_.receive_buffer_count;
  adv.receive_buffer_size = config_.receive_buffer_size;
  adv.connection_serial = serial_;
  adv.regions = target_.layout().regions;
  bool shared = false;
  for (wire::AdvertisedRegion& r : adv.regions) {
    r.stag = SlotStag(r, slot_);
    shared = shared || (r.attributes & wire::kAttrShared);
  }
  if (config_.concurrent_connections) {
    adv.flags |= wire::kFlagConcurrentConnections;
    adv.minor_version =
        std::max(adv.minor_version, shared ? wire::kSharedRegionsMinorVersion : wire::kConcurrentMinorVersion);
  }
  if (config_.report_outcome) adv.previous = target_.previous_outcome();
  if (config_.commands) {
    adv.minor_version = std::max(adv.minor_version, wire::kUlpConventionCommandsMinorVersion);
    adv.commands = target_.previous_commands();
    adv.commands->supported = SupportedCommands();
  }
  return true;
}

// ---------------------------------------------------------------------------
// Full Operation.

// REQ R5044-8-02 R5044-8-09 R5044-8-10 R5041-7-01
// CRC and Marker errors go to the endpoint as LLP errors (Terminate 2/0/0x02
// or 2/0/0x03). The deframer latches its first error, so no FPDU after it is
// delivered. Other framing errors (a ULPDU_Length above the limit) fail the
// stream without a Terminate.
void ReferenceTargetConnection::FeedFpdus(wire::ByteSpan in, wire::Bytes& out) {
  wire::Status st = deframer_->Feed(in, [&](const wire::MpaFpdu& f) { OnUlpdu(f.ulpdu, out); });
  SendPendingResponses(out);
  if (st.ok()) return;
  // Latched: nothing more will ever be delivered (R5044-8-09), so the
  // octets it holds and every later one can go.
  llp_error_ = st.error();
  deframer_.reset();
  if (!endpoint_ || !Live(endpoint_->state())) return;
  wire::TerminateCode code = wire::term::kMpaLocalCatastrophic;
  if (st.error().kind == wire::DecodeErrorKind::kCrcMismatch) code = wire::term::kMpaCrcError;
  if (st.error().kind == wire::DecodeErrorKind::kMarkerMismatch) code = wire::term::kMpaMarkerMismatch;
  if (phase_ == ConnectionPhase::kAwaitingFirstFpdu) phase_ = ConnectionPhase::kFullOperation;
  detail_ = st.error().Describe();
  // close-on-crc-error: MPA itself closes instead of reporting (R5044-8-10).
  if (code != wire::term::kMpaLocalCatastrophic && config_.faults.Has(model::Fault::kCloseOnCrcError)) {
    Close(CloseReason::kStreamError);
    return;
  }
  reactions_.Clear();
  endpoint_->OnLlpError(code, reactions_);
  Drain(out);
}

// REQ R5040-5.5-R20a R5040-5.2.2-07
// Everything the requests of one TCP write earned, in request order.
void ReferenceTargetConnection::SendPendingResponses(wire::Bytes& out) {
  if (!endpoint_ || phase_ == ConnectionPhase::kClosed) return;
  reactions_.Clear();
  endpoint_->EmitPendingResponses(std::numeric_limits<std::size_t>::max(), reactions_);
  if (reactions_.segments().empty() && reactions_.events().empty()) return;
  Drain(out);
}

// REQ R5044-7.1.2-R04
// The first FPDU from the suite (valid or not: it proves the suite is in
// Full Operation, decisions D-G4) releases the target's side.
void ReferenceTargetConnection::OnUlpdu(wire::ByteSpan ulpdu, wire::Bytes& out) {
  ++fpdus_in_;
  reactions_.Clear();
  if (phase_ == ConnectionPhase::kAwaitingFirstFpdu) {
    phase_ = ConnectionPhase::kFullOperation;
    if (!config_.faults.Has(model::Fault::kAcceptAnyFirstFpduAsRtr) && !IsRtrOrNoneOwed(ulpdu)) {
      detail_ = "the first FPDU after a peer-to-peer setup is none of the negotiated RTRs";
      endpoint_->OnLlpError(wire::term::kMpaNoMatchingRtrOption, reactions_);
      Drain(out);
      return;
    }
  }
  endpoint_->OnSegment(ulpdu, reactions_);
  Drain(out);
}

// REQ R6581-12-01 R6581-5-02
// After a peer-to-peer setup (A=1) the Initiator's first FPDU is one of the
// RTR indications the Reply offered (RFC 6581 §9.2): a zero-length Send
// (B), RDMA Write (C) or Read Request with RDMARDSZ 0 (D); or a Terminate
// when it can generate none of them (R6581-9.2-12). Anything else is
// refused with 2/0/0x07 "No matching RTR option" (docs/decisions.md 46).
bool ReferenceTargetConnection::IsRtrOrNoneOwed(wire::ByteSpan ulpdu) const {
  if (!reply_ || !reply_->enhanced_data || !reply_->enhanced_data->peer_to_peer) return true;
  const wire::EnhancedIrdOrd& e = *reply_->enhanced_data;
  auto v = wire::DecodeRdmapSegment(ulpdu, config_.profile);
  if (!v.ok() || !v->opcode_known || !v->tagged_flag_matches || !v->ddp.header.last) return false;
  switch (v->opcode()) {
    case wire::Opcode::kTerminate:
      return true;
    case wire::Opcode::kSend:
      return e.send_rtr && v->ddp.payload.empty();
    case wire::Opcode::kRdmaWrite:
      return e.write_rtr && v->ddp.payload.empty();
    case wire::Opcode::kRdmaReadRequest: {
      const auto* r = std::get_if<wire::ReadRequestHeader>(&v->header);
      return e.read_rtr && r && r->read_message_size == 0;
    }
    default:
      return false;
  }
}

// REQ R5040-6.2.1-05 R5040-5.4-01
// Sends what the endpoint produced, reports the ULP events, and closes after
// a Terminate, sent or received, or a failed stream. Under the fault
// answer-after-terminate the faulty target keeps its side open, so the
// suite can see it answer; under keep-placing-after-terminate it closes but
// still consumes input (OnBytes), so the placement shows on the next Keep
// Memory connection.
void ReferenceTargetConnection::Drain(wire::Bytes& out) {
  for (const model::UlpEvent& e : reactions_.events()) completion_errors_ += IsCompletionError(e);
  NoteOutcome();
  if (phase_ == ConnectionPhase::kClosed) return;
  FrameSegments(reactions_, out);
  ReportEvents(out);
  const StreamState s = endpoint_->state();
  if (Live(s)) return;
  const bool keep_going = s != StreamState::kError && config_.faults.Has(model::Fault::kAnswerAfterTerminate);
  if (keep_going) return;
  const bool terminate = s == StreamState::kTerminateSent || s == StreamState::kTerminateReceived;
  if (terminate && config_.faults.Has(model::Fault::kTerminateTearsDownOthers)) target_.TearDownOthers(serial_);
  Close(s == StreamState::kTerminateSent       ? CloseReason::kTerminateSent
        : s == StreamState::kTerminateReceived ? CloseReason::kTerminateReceived
                                               : CloseReason::kStreamError);
}

// REQ R5044-4.3-10 R5044-7.1.2-R07 R5044-7.1.1-06 R5044-7.1.1-09 R5044-7.1.1-12
void ReferenceTargetConnection::FrameSegments(const model::Reactions& r, wire::Bytes& out) {
  const wire::FpduEncodeOptions options{.crc_enabled = crc_,
                                        .pad_octet = uint8_t(config_.faults.Has(model::Fault::kNonzeroPad) ? 0xA5 : 0)};
  for (const wire::Bytes& seg : r.segments()) {
    const std::size_t before = out.size();
    if (inserter_) {
      inserter_->AppendUlpdu(out, seg, options);
    } else {
      wire::AppendFpdu(out, seg, options);
    }
    octets_out_ += out.size() - before;
    ++fpdus_out_;
  }
}

// REQ R5041-4.3-07 R5041-4.3-08
// One Event Record Send per delivered message (§6.1), posted through the
// endpoint so its QN 0 MSN is the record's Sequence Number (§6.3). Never
// after a Terminate: PostSend refuses once the stream left Streaming, and
// events that arrived with the Terminate are dropped (§6.4 "MAY be lost").
void ReferenceTargetConnection::ReportEvents(wire::Bytes& out) {
  for (const model::UlpEvent& e : reactions_.events()) {
    if (endpoint_->state() != StreamState::kStreaming) return;
    if (IsRequesterCompletion(e.kind)) {
      CompleteRequest(e);
      continue;
    }
    if (e.kind == model::UlpEventKind::kSendReceived && TakeCommandRecord(e)) continue;
    const uint32_t sequence = endpoint_->next_msn(0);
    std::optional<bool> solicited;
    if (config_.report_solicited) solicited = e.solicited_event;
    wire::EventRecord rec;
    if (e.kind == model::UlpEventKind::kSendReceived) {
      // A zero-length Send RTR (RFC 6581, decisions D-H6) is hidden from the ULP.
      if (send_rtr_offered_ && !config_.report_send_rtr && e.opcode == Opcode::kSend && e.msn == 1 && e.length == 0) {
        continue;
      }
      std::optional<uint32_t> invalidated;
      if (wire::InfoFor(e.opcode).invalidate_stag == wire::InvalidateStagUse::kValid) {
        invalidated = e.invalidated_stag;
      }
      rec = wire::MakeSendEvent(sequence, e.data, solicited, invalidated);
    } else if (e.kind == model::UlpEventKind::kImmediateDataReceived) {
      rec = wire::MakeImmediateDataEvent(sequence, e.value, solicited);
    } else {
      continue;
    }
    record_.clear();
    wire::EncodeEventRecord(rec, record_);
    posted_.Clear();
    if (endpoint_->PostSend(Opcode::kSend, record_, 0, posted_) != model::PostStatus::kOk) return;
    FrameSegments(posted_, out);
    ++events_sent_;
  }
  if (config_.commands) PumpCommands(out);
}

// The first thing that ended Full Operation (§3.4).
void ReferenceTargetConnection::NoteOutcome() {
  if (outcome_ || !endpoint_ || Live(endpoint_->state())) return;
  wire::PreviousOutcome o;
  o.connection_serial = serial_;
  std::optional<wire::TerminateCode> code;
  switch (endpoint_->state()) {
    case StreamState::kTerminateSent:
      o.outcome = wire::ConnectionOutcome::kTerminateSent;
      code = SentTerminateCode(reactions_, config_.profile);
      break;
    case StreamState::kTerminateReceived:
      o.outcome = wire::ConnectionOutcome::kTerminateReceived;
      for (const model::UlpEvent& e : reactions_.events()) {
        if (e.kind == model::UlpEventKind::kTerminateReceived) code = e.terminate.code;
      }
      break;
    default: {
      // A malformed Terminate is still a Terminate the ULP was told about.
      const auto& v = endpoint_->first_violation();
      const bool terminate = v && v->kind == model::ViolationKind::kMalformedTerminate;
      o.outcome = terminate ? wire::ConnectionOutcome::kTerminateReceived : wire::ConnectionOutcome::kLocalError;
    }
  }
  if (code) {
    o.flags = wire::kOutcomeCodeKnown;
    o.layer = code->layer & 0x0F;
    o.error_type = code->error_type & 0x0F;
    o.error_code = code->error_code;
  }
  outcome_ = o;
}

// ---------------------------------------------------------------------------
// Teardown.

void ReferenceTargetConnection::OnPeerClosed(wire::Bytes& out) {
  // late-fpdu-hand-off: the FIN wakes the reader, but what the held octets
  // earn is flushed with the closing QP, as siw flushes the Read Response
  // (docs/reports/siw/race): placed, never answered.
  if (!held_.empty() && deframer_) {
    wire::Bytes flushed;
    FeedFpdus(std::exchange(held_, {}), flushed);
  }
  peer_closed_ = true;
  if (phase_ != ConnectionPhase::kClosed)
    Close(CloseReason::kPeerClosed);
  else
    Finish();
  ReleaseSlot();
}

void ReferenceTargetConnection::OnPeerReset() {
  peer_closed_ = true;
  if (phase_ != ConnectionPhase::kClosed)
    Close(CloseReason::kPeerReset);
  else
    Finish();
  ReleaseSlot();
}

// The target's side closes: the outcome is final and the memory goes back
// to the target at once, so a connection opened right after the FIN sees
// both (a suite opens the Keep Memory connection as soon as it sees the FIN).
void ReferenceTargetConnection::Close(CloseReason reason) {
  if (phase_ == ConnectionPhase::kClosed) return;
  phase_ = ConnectionPhase::kClosed;
  close_reason_ = reason;
  wire::PreviousOutcome o = outcome_.value_or(wire::PreviousOutcome{});
  if (!outcome_) {
    o.connection_serial = serial_;
    o.outcome = wire::ConnectionOutcome::kClosed;
  }
  o.events_sent = static_cast<uint16_t>(std::min<uint32_t>(events_sent_, 0xFFFF));
  o.completion_errors = static_cast<uint16_t>(std::min<uint32_t>(completion_errors_, 0xFFFF));
  outcome_ = o;
  target_.RecordOutcome(o);
  SettleCommands();
  Finish();
}

// Hands the memory back (again at the very end, for what a faulty target
// placed after its FIN). `release`: the connection is going away, so the
// octets are moved, not copied. Only the connection that loaded memory last
// stores it (StoreMemory would drop it anyway).
void ReferenceTargetConnection::Finish(bool release) {
  if (!endpoint_ || !config_.hand_back_memory || !target_.OwnsMemory(serial_)) return;
  model::Resources& res = endpoint_->resources();
  const std::size_t n = target_.layout().memory_objects.size();
  std::vector<wire::Bytes> objects;
  objects.reserve(n);
  // SetUpEndpoint created the objects first, in layout order: ids 0..n-1.
  for (uint32_t i = 0; i < n; ++i) {
    if (release) {
      objects.push_back(res.ReleaseObjectBytes(i));
    } else {
      auto bytes = std::as_const(res).ObjectBytes(i);  // read only: no copy-on-write
      objects.emplace_back(bytes.begin(), bytes.end());
    }
  }
  target_.StoreMemory(serial_, std::move(objects));
}

std::size_t ReferenceTargetConnection::buffered() const {
  return startup_.size() + held_.size() + (deframer_ ? deframer_->buffered() : 0);
}

std::span<const uint8_t> ReferenceTargetConnection::PeekMemory(uint32_t stag, uint64_t tagged_offset,
                                                               std::size_t length) const {
  if (!endpoint_) return {};
  return endpoint_->PeekRegion(stag, tagged_offset, length);
}

std::string ReferenceTargetConnection::log_line() const {
  std::string s = "conn " + std::to_string(serial_);
  if (initiator_) s += " initiator";
  if (request_) s += " rev " + std::to_string(request_->revision);
  if (reply_) {
    if (request_->enhanced_data) s += " rfc6581";
    s += crc_ ? " crc" : " no-crc";
    if (markers_out_) s += " markers-out";
    if (markers_in_) s += " markers-in";
    if (keep_memory_) s += " keep-memory";
    if (case_hash_ != 0) {
      char hash[16];
      std::snprintf(hash, sizeof hash, "%08x", case_hash_);
      s += std::string(" case ") + hash;
    }
  }
  s += ": " + std::to_string(octets_in_) + " octets in (" + std::to_string(fpdus_in_) + " FPDUs), " +
       std::to_string(octets_out_) + " out (" + std::to_string(fpdus_out_) + " FPDUs), " +
       std::to_string(events_sent_) + " events; ";
  s += phase_ == ConnectionPhase::kClosed ? CloseReasonName(close_reason_) : ConnectionPhaseName(phase_);
  if (outcome_ && (outcome_->flags & wire::kOutcomeCodeKnown)) {
    char code[24];
    std::snprintf(code, sizeof code, " %u/%u/0x%02x", outcome_->layer, outcome_->error_type, outcome_->error_code);
    s += code;
  }
  if (endpoint_ && endpoint_->first_violation()) {
    s += std::string(" (") + model::ViolationKindName(endpoint_->first_violation()->kind) + ")";
  }
  if (!detail_.empty()) s += " [" + detail_ + "]";
  return s;
}

}  // namespace rdmapct::targets
