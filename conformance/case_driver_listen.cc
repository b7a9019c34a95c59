// The case driver's listen and reply steps (case_driver.h): the target is the
// MPA Initiator and the suite the Responder (docs/target-convention.md §10).
// The suite accepts the target's connection, reads its Request, asks for
// other options with a Connect Directive when the case wants them, sends
// the case's Reply and, as RFC 5044 rule 4 has a Responder do, waits for
// the Initiator's first FPDU before it sends anything itself.
#include <algorithm>

#include "conformance/case_driver_internal.h"
#include "conformance/frame_text.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention_directive.h"

namespace rdmapct::conformance {
namespace {

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// What a Request lacks of an Ask (the target may not support it: the case
// is skipped) and what it carries unasked (the case grades that).
struct AskMismatch {
  std::vector<std::string> lacks;
  std::vector<std::string> adds;
};

AskMismatch Compare(const proto::Ask& a, const wire::MpaStartupFrame& r) {
  AskMismatch m;
  if (a.has_crc() && a.crc() != r.crc_required) m.lacks.push_back(a.crc() ? "C=1" : "C=0");
  if (a.markers() != r.marker_required) m.lacks.push_back(a.markers() ? "M=1" : "M=0");
  const bool enhanced = r.enhanced_data.has_value();
  if (a.has_rfc6581() != enhanced) (enhanced ? m.adds : m.lacks).push_back("RFC 6581 enhanced setup");
  if (!a.has_rfc6581() || !enhanced) return m;
  const proto::Rfc6581& want = a.rfc6581();
  const wire::EnhancedIrdOrd& e = *r.enhanced_data;
  if (want.peer_to_peer() != e.peer_to_peer) {
    (e.peer_to_peer ? m.adds : m.lacks).push_back(e.peer_to_peer ? "A=1" : "peer-to-peer (A=1)");
  }
  if (want.has_ird() && want.ird() != e.ird) m.lacks.push_back("IRD " + std::to_string(want.ird()));
  if (want.has_ord() && want.ord() != e.ord) m.lacks.push_back("ORD " + std::to_string(want.ord()));
  if (want.peer_to_peer() && e.peer_to_peer) {
    for (int t : a.rtr()) {
      const bool has = t == proto::Rfc6581::RTR_SEND    ? e.send_rtr
                       : t == proto::Rfc6581::RTR_WRITE ? e.write_rtr
                                                        : e.read_rtr;
      if (!has) m.lacks.push_back(proto::Rfc6581::Rtr_Name(static_cast<proto::Rfc6581::Rtr>(t)));
    }
  }
  return m;
}

wire::ConnectDirective DirectiveFor(const proto::Ask& a, const std::string& case_id) {
  wire::ConnectDirective d;
  uint16_t f = (!a.has_crc() || a.crc()) ? wire::kDirectiveCrc : 0;
  if (a.markers()) f |= wire::kDirectiveMarkers;
  if (a.keep_memory()) f |= wire::kDirectiveKeepMemory;
  if (a.has_rfc6581()) {
    f |= wire::kDirectiveEnhanced;
    if (a.rfc6581().peer_to_peer()) f |= wire::kDirectivePeerToPeer;
    d.ird = static_cast<uint16_t>(a.rfc6581().has_ird() ? a.rfc6581().ird() : 8);
    d.ord = static_cast<uint16_t>(a.rfc6581().has_ord() ? a.rfc6581().ord() : 8);
  }
  if (a.rtr().empty()) f |= wire::kDirectiveSendRtr | wire::kDirectiveWriteRtr | wire::kDirectiveReadRtr;
  for (int t : a.rtr()) {
    f |= t == proto::Rfc6581::RTR_SEND    ? wire::kDirectiveSendRtr
         : t == proto::Rfc6581::RTR_WRITE ? wire::kDirectiveWriteRtr
                                          : wire::kDirectiveReadRtr;
  }
  d.flags = f;
  d.case_hash = wire::CaseHash(case_id);
  return d;
}

// The RFC 6581 word of the suite's Reply: it grants what the Request asks
// (responder IRD = initiator ORD, responder ORD = initiator IRD up to 8) and
// picks one offered RTR type, unless the case says otherwise.
wire::EnhancedIrdOrd ReplyWord(const proto::Reply& r, const wire::EnhancedIrdOrd& q) {
  wire::EnhancedIrdOrd e;
  e.peer_to_peer = q.peer_to_peer;
  e.ird = static_cast<uint16_t>(r.has_ird() ? r.ird() : q.ord);
  e.ord = static_cast<uint16_t>(r.has_ord()                           ? r.ord()
                                : q.ird == wire::kIrdOrdNotNegotiated ? q.ird
                                                                      : std::min<uint16_t>(q.ird, 8));
  if (!q.peer_to_peer) return e;
  for (int t : r.rtr()) {
    e.send_rtr |= t == proto::Rfc6581::RTR_SEND;
    e.write_rtr |= t == proto::Rfc6581::RTR_WRITE;
    e.read_rtr |= t == proto::Rfc6581::RTR_READ;
  }
  if (r.rtr().empty()) {
    e.write_rtr = q.write_rtr;
    e.send_rtr = !q.write_rtr && q.send_rtr;
    e.read_rtr = !q.write_rtr && !q.send_rtr && q.read_rtr;
  }
  // REQ R6581-9.1-05: a Read RTR needs one inbound Read at the responder.
  if (e.read_rtr && e.ird == 0 && !r.has_ird()) e.ird = 1;
  return e;
}

}  // namespace

std::optional<wire::Bytes> BuildMpaReply(const proto::Reply& r, const wire::MpaStartupFrame& request,
                                         std::string& error) {
  if (r.has_reply_hex()) {
    std::optional<wire::Bytes> octets = ParseHexString(r.reply_hex());
    if (!octets) error = "reply_hex does not parse";
    return octets;
  }
  wire::MpaStartupFrame f;
  f.is_reply = true;
  f.reject = r.reject();
  f.crc_required = r.has_crc() ? r.crc() : request.crc_required;
  f.marker_required = r.markers();
  f.revision = static_cast<uint8_t>(r.has_revision() ? r.revision() : request.revision);
  if (request.enhanced_data && !r.no_enhanced()) {
    f.enhanced = true;
    f.enhanced_data = ReplyWord(r, *request.enhanced_data);
  }
  if (r.has_private_data_hex()) {
    std::optional<wire::Bytes> pd = ParseHexString(r.private_data_hex());
    if (!pd) {
      error = "private_data_hex does not parse";
      return std::nullopt;
    }
    f.private_data = *pd;
  }
  wire::Bytes out = wire::EncodeMpaStartupFrame(f);
  if (r.key() == proto::Reply::REQUEST_KEY)
    std::copy(wire::kMpaRequestKey.begin(), wire::kMpaRequestKey.end(), out.begin());
  if (r.key() == proto::Reply::BAD_KEY) out[wire::kMpaKeySize - 1] ^= 0x20;  // "Frame" -> "FramE"
  return out;
}

StepResult CaseDriver::DoListen(const proto::Listen& l, int index) {
  StepResult sr;
  sr.action = "listen";
  if (conn_) {
    conn_->CloseGracefully(std::min(Clock::now() + options_.close_timeout, case_deadline_));
    conn_.reset();
  }
  if (!connector_.CanAccept()) {
    sr.verdict = Verdict::kSkip;
    sr.reason =
        "the case needs the target as MPA Initiator, and this target does not connect to the suite "
        "(rdmapct conform --listen HOST:PORT)";
    return sr;
  }
  const std::chrono::milliseconds timeout =
      l.accept_timeout_ms() ? std::chrono::milliseconds(l.accept_timeout_ms()) : options_.connect_timeout;
  if (!AcceptTarget(timeout, l.ask().keep_memory(), sr)) return sr;
  if (l.has_ask() && listen_.request) {
    AskMismatch m = Compare(l.ask(), *listen_.request);
    if (!m.lacks.empty() || !m.adds.empty()) {
      SendDirective(DirectiveFor(l.ask(), case_.id()), sr);
      if (!AcceptTarget(timeout, l.ask().keep_memory(), sr)) return sr;
      if (listen_.request) m = Compare(l.ask(), *listen_.request);
      if (listen_.request && !m.lacks.empty()) {
        sr.verdict = Verdict::kSkip;
        sr.reason = "the target does not ask for " + Joined(m.lacks) + " when directed to (convention §10.2)";
        return sr;
      }
    }
  }
  const proto::Step* next = index + 1 < case_.proto.step_size() ? &case_.proto.step(index + 1) : nullptr;
  const bool graded = next && next->has_expect() && next->expect().has_mpa_request();
  if (!listen_.request) {
    if (graded) return sr;  // the expectation judges what came
    sr.verdict = Verdict::kError;
    sr.reason = !listen_.error.empty() ? "the target's MPA Request does not decode: " + listen_.error
                : listen_.timed_out ? "no MPA Request within " + std::to_string(options_.reply_timeout.count()) + " ms"
                                    : "the target closed the connection without an MPA Request";
    return sr;
  }
  if (!TakeAdvertisement(*listen_.request, sr)) return sr;
  reply_pending_ = true;
  if (!needs_checked_) {
    needs_checked_ = true;
    if (std::vector<std::string> missing = MissingNeeds(); !missing.empty()) {
      sr.verdict = Verdict::kSkip;
      sr.reason = "the target lacks: " + Joined(missing);
      return sr;
    }
  }
  if (!l.defer_reply()) SendReply(l.reply(), sr);
  return sr;
}

bool CaseDriver::AcceptTarget(std::chrono::milliseconds timeout, bool keep_memory, StepResult& sr) {
  std::string error;
  std::unique_ptr<targets::Transport> transport = connector_.Accept(timeout, error);
  if (!transport) {
    sr.verdict = Verdict::kError;
    sr.reason = "the target did not connect to the suite: " + error;
    if (connections_ == 0) run_.connect_failed = true;
    return false;
  }
  const std::size_t first_record = run_.result.frames.size();
  conn_ = NewConnection(std::move(transport));
  listen_ = conn_->ReadRequest(Deadline(options_.reply_timeout));
  request_.reset();
  reply_pending_ = false;
  send_state_ = SendState{};
  reads_.clear();
  ResetPeer();  // no Suite Request extension here: the default Suite IRD
  send_rtr_used_ = false;
  if (!keep_memory) memory_.Reset();
  for (std::size_t i = first_record; i < run_.result.frames.size(); ++i) {
    sr.frames.push_back(i);
    sr.actual += (sr.actual.empty() ? "" : "\n") + run_.result.frames[i].summary;
  }
  return true;
}

// A rejecting Reply whose Private Data is the Directive; the target closes
// and connects again with the options (convention §10.2).
void CaseDriver::SendDirective(const wire::ConnectDirective& d, StepResult& sr) {
  wire::MpaStartupFrame f;
  f.is_reply = true;
  f.reject = true;
  f.crc_required = listen_.request->crc_required;
  f.revision = listen_.request->revision;
  wire::EncodeConnectDirective(d, f.private_data);
  const std::size_t first_record = run_.result.frames.size();
  const wire::Bytes octets = conn_->RecordReply(wire::EncodeMpaStartupFrame(f));
  conn_->Write(octets, Deadline(options_.expect_timeout));
  conn_->CloseGracefully(std::min(Clock::now() + options_.close_timeout, case_deadline_));
  conn_.reset();
  for (std::size_t i = first_record; i < run_.result.frames.size(); ++i) {
    sr.frames.push_back(i);
    sr.actual += (sr.actual.empty() ? "" : "\n") + run_.result.frames[i].summary;
  }
  sr.notes.push_back("asked the target for other Request options with a Connect Directive (flags " + Hex32(d.flags) +
                     ")");
}

StepResult CaseDriver::DoReply(const proto::Reply& r, int index) {
  StepResult sr;
  sr.action = "reply";
  if (!conn_ || !reply_pending_) {
    sr.verdict = Verdict::kError;
    sr.reason = "case error: no Request to answer (a reply step follows a listen step with defer_reply)";
    return sr;
  }
  SendReply(r, sr);
  return sr;
}

void CaseDriver::SendReply(const proto::Reply& r, StepResult& sr) {
  reply_pending_ = false;
  if (r.silent()) {
    sr.notes.push_back("no MPA Reply: the suite stays silent");
    return;
  }
  std::string error;
  std::optional<wire::Bytes> octets = BuildMpaReply(r, *listen_.request, error);
  if (!octets) {
    sr.verdict = Verdict::kError;
    sr.reason = "case error: " + error;
    return;
  }
  const std::size_t first_record = run_.result.frames.size();
  auto reply = wire::DecodeMpaStartupFrame(*octets, {.expect = wire::MpaFrameKind::kReply});
  const bool accepted = reply.ok() && !reply->reject;
  const wire::Bytes recorded = conn_->RecordReply(*octets);
  if (accepted) {
    // REQ R5044-7.1.1-06 R5044-7.1.1-07 R5044-7.1.1-12: Markers toward the
    // Initiator iff its Request had M=1, toward the suite iff the Reply had.
    const wire::MpaNegotiation n = wire::NegotiateMpa(*listen_.request, *reply);
    conn_->StartFullOperation(n.crc, n.markers_initiator_to_responder, n.markers_responder_to_initiator);
  }
  proto::TcpWrites tcp;
  for (std::size_t at = 0; r.write_size() > 0 && at < recorded.size(); at += r.write_size())
    tcp.add_write_size(r.write_size());
  tcp.set_delay_ms(r.delay_ms());
  tcp.set_hold(r.hold());
  Transmit(recorded, tcp, sr);
  for (std::size_t i = first_record; i < run_.result.frames.size(); ++i) {
    sr.frames.push_back(i);
    sr.actual += (sr.actual.empty() ? "" : "\n") + run_.result.frames[i].summary;
  }
  if (accepted && !r.no_wait_first_fpdu() && !r.hold()) AwaitFirstFpdu(*reply, sr);
}

// REQ R5044-7.1.2-R04 R6581-9.2-11 R6581-5-02
// The Initiator's first FPDU: in peer-to-peer mode one of the negotiated
// RTRs (a Read RTR is answered with its zero-length Read Response); in
// client-server mode anything, and the convention's hello (a zero-length
// RDMA Write) is taken off the frame queue.
void CaseDriver::AwaitFirstFpdu(const wire::MpaStartupFrame& reply, StepResult& sr) {
  const Clock::time_point deadline = Deadline(options_.expect_timeout);
  while (conn_->received_frames() == 0 && !conn_->Observe().problem && conn_->Pump(deadline)) {
  }
  const Observation o = conn_->Observe();
  const wire::IrdOrdOutcome n = wire::NegotiateIrdOrd(*listen_.request, reply);
  const bool p2p = n.applies && n.peer_to_peer;
  const std::string rtr =
      std::string(n.rtr_write ? " Write" : "") + (n.rtr_send ? " Send" : "") + (n.rtr_read ? " Read" : "");
  auto fail = [&](Verdict v, std::string why) {
    sr.verdict = v;
    sr.reason = std::move(why);
    if (p2p && v == Verdict::kFail) sr.requirements = {"R6581-9.2-11", "R6581-5-02"};
  };
  if (o.problem) return fail(o.problem->verdict, "the target's first FPDU after the Reply: " + o.problem->reason);
  if (o.frames.empty() && o.events.empty()) {
    const std::string what = conn_->link() == LinkState::kOpen
                                 ? "sent no FPDU within " + std::to_string(options_.expect_timeout.count()) + " ms"
                                 : "closed (" + std::string(LinkStateName(conn_->link())) + ") without an FPDU";
    if (p2p)
      return fail(VerdictForMiss(proto::MUST),
                  "after a peer-to-peer Reply the target " + what + ", expected an RTR (" + rtr + " )");
    return fail(Verdict::kError, "the target broke the test-ULP convention: after the Reply it " + what +
                                     " (its hello, convention §10.3)");
  }
  if (o.frames.empty()) {
    if (p2p)
      fail(VerdictForMiss(proto::MUST),
           "the target's first FPDU after a peer-to-peer Reply is an Event Send, not an RTR");
    return;
  }
  auto view = wire::DecodeRdmapSegment(o.frames[0].ulpdu, options_.profile);
  const bool known = view.ok() && view->opcode_known;
  const wire::Opcode op = known ? view->opcode() : wire::Opcode::kTerminate;
  const bool empty = known && view->ulp_payload.empty();
  const auto* read = known ? std::get_if<wire::ReadRequestHeader>(&view->header) : nullptr;
  const bool write_rtr = empty && op == wire::Opcode::kRdmaWrite;
  const bool send_rtr = empty && op == wire::Opcode::kSend && view->ddp.header.queue_number == 0;
  const bool read_rtr = read && op == wire::Opcode::kRdmaReadRequest && read->read_message_size == 0;
  const std::string summary = SummarizeUlpdu(o.frames[0].ulpdu, options_.profile);
  sr.frames.push_back(o.frames[0].record);
  if (p2p && !((write_rtr && n.rtr_write) || (send_rtr && n.rtr_send) || (read_rtr && n.rtr_read))) {
    return fail(VerdictForMiss(proto::MUST), "the target's first FPDU after a peer-to-peer Reply is " + summary +
                                                 ", not a negotiated RTR (" + rtr + " )");
  }
  sr.notes.push_back("the target's first FPDU: " + summary);
  if (!(write_rtr || send_rtr || read_rtr)) return;
  conn_->Consume(1, 0);
  if (!read_rtr) return;
  const wire::Bytes ulpdu = wire::EncodeSegment(wire::MakeReadResponse(read->sink_stag, read->sink_tagged_offset, {}));
  const wire::Bytes octets =
      conn_->FrameUlpdu(ulpdu, nullptr, "answer to the Read RTR: " + SummarizeUlpdu(ulpdu, options_.profile));
  conn_->Write(octets, Deadline(options_.expect_timeout));
}

}  // namespace rdmapct::conformance
