#include "replay/audit.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <memory>

#include "capture/capture_stream.h"
#include "reference/model/endpoint.h"
#include "reference/model/terminate_map.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::replay {
namespace {

using capture::CapturedUnit;
using model::RdmapEndpoint;
using model::TerminateRule;
using model::Violation;
using wire::TerminateCode;
using wire::TerminateHeader;

std::string Crc(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// "1/1/0x00 (DDP / Tagged Buffer Error / Invalid STag)"
std::string CodeText(TerminateCode c) {
  char b[16];
  std::snprintf(b, sizeof b, "%u/%u/0x%02x", c.layer, c.error_type, c.error_code);
  return std::string(b) + " (" + wire::Describe(c) + ")";
}

// What one direction's decoder handed up, kept until the connection's
// framing is known (OnConnection) and both directions can be interleaved.
struct Unit {
  CapturedUnit::Kind kind = CapturedUnit::Kind::kSegment;
  uint64_t offset = 0, length = 0, frame = 0, last_frame = 0;
  wire::ByteSpan octets;  // the ULPDU (the decoder's octets, or `owned` once it waits)
  wire::Bytes owned;
  bool crc_bad = false, marker_bad = false;
  uint32_t received_crc = 0, computed_crc = 0;
  std::optional<TerminateHeader> terminate;  // the ULPDU is a decoded Terminate
  // Sender rules of RFC 5044 the receiver ignores (so the decoder accepts them).
  uint8_t pad_nonzero = 0;                                       // the first non-zero PAD octet (0: all zero)
  uint16_t marker_reserved = 0;                                  // a Marker's non-zero RESERVED field
  std::optional<std::pair<uint16_t, uint16_t>> fpduptr_inexact;  // (received, expected)
  uint8_t startup_res = 0;                                       // kStartupFrame: Res bits
};

// The Terminate one side owes, from the first violation its peer committed.
struct Owed {
  Violation violation;
  std::optional<TerminateHeader> model;  // the Terminate the reference model sends for it
  uint64_t frame = 0;                    // where the offending octets were
};

// One connection's two passive models. Units arrive per direction in
// stream order as they are decoded; they are audited in capture order (a
// unit counts when its last octet was captured: the receiver could not act
// on it before), so a unit waits until the other direction can have no
// earlier one (OnProgress), at most `cap` octets of them per connection.
class ConnectionAuditor {
 public:
  ConnectionAuditor(const capture::ReassembledConnection& c, const capture::ConnectionFraming& cf,
                    const AuditOptions& options)
      : cf_(cf), options_(options), index_(c.index) {
    for (int d = 0; d < 2; ++d)
      flow_[d] = c.directions[d].source.ToString() + " -> " + c.directions[d].destination.ToString();
    summary_.index = c.index;
    summary_.client = c.client.ToString();
    summary_.server = c.server.ToString();
  }

  void Push(int d, Unit u);
  void Progress(const std::array<uint64_t, 2>& lowest) {
    lowest_ = lowest;
    Drain();
  }
  // No more units: audits what waits and judges the ends of the streams.
  void End(const capture::ReassembledConnection& c, AuditReport& report);
  std::size_t waiting() const { return waiting_; }
  bool iwarp() const { return cf_.iwarp; }

 private:
  void Setup();
  void ApplyAdvertisement(int side, const wire::Advertisement& adv);
  bool Ready(int d, uint64_t last_frame) const;
  void Drain();
  void Process(int s, const Unit& u);
  void Segment(int s, const Unit& u);
  void StartupFrame(int s, const Unit& u);
  void MpaSenderRules(int s, const Unit& u);
  void BadFpdu(int s, const Unit& u);
  void OweTerminate(int side, const model::Reactions& r, uint64_t frame);
  void CheckTerminate(int s, const Unit& u, const TerminateHeader& t);
  void CheckTerminateShape(int s, const Unit& u, const TerminateHeader& t, const Owed& e);
  void Finish(const capture::ReassembledConnection& c);
  void Add(int d, uint64_t frame, uint64_t offset, std::string requirement, std::string check, std::string detail);
  std::string DirectionName(int d) const {
    if (!cf_.initiator) return d == 0 ? "client -> server" : "server -> client";
    return d == *cf_.initiator ? "Initiator -> Responder" : "Responder -> Initiator";
  }

  const capture::ConnectionFraming& cf_;
  const AuditOptions& options_;
  const std::size_t index_;
  std::array<std::string, 2> flow_;
  ConnectionAudit summary_;
  std::vector<AuditFinding> findings_;
  std::array<std::deque<Unit>, 2> queue_;
  std::array<uint64_t, 2> lowest_{};                     // no later unit of direction d ends before frame lowest_[d]
  std::array<std::optional<uint64_t>, 2> startup_last_;  // last frame of direction d's startup frame
  std::size_t waiting_ = 0;                              // octets in queue_
  bool forced_ = false;                                  // the cap made a unit go before its turn
  bool set_up_ = false;
  bool first_fpdu_ = true;
  std::array<std::unique_ptr<RdmapEndpoint>, 2> ep_;  // ep_[d] models the endpoint that sends direction d
  std::array<std::optional<Owed>, 2> owed_;           // the Terminate the sender of direction d owes
  std::array<bool, 2> terminated_{};                  // direction d carried a Terminate
  std::array<bool, 2> spoke_after_owed_{};            // direction d sent a ULPDU while it owed a Terminate
  model::Reactions rx_, tx_;
};

void ConnectionAuditor::Add(int d, uint64_t frame, uint64_t offset, std::string requirement, std::string check,
                            std::string detail) {
  AuditFinding f;
  f.connection = index_;
  f.direction = d;
  f.direction_name = DirectionName(d);
  f.flow = flow_[d];
  f.capture_frame = frame;
  f.offset = offset;
  f.requirement = std::move(requirement);
  f.check = std::move(check);
  f.detail = std::move(detail);
  findings_.push_back(std::move(f));
  ++summary_.findings;
}

void ConnectionAuditor::Setup() {
  set_up_ = true;
  for (int d = 0; d < 2; ++d) {
    model::EndpointConfig ec;
    ec.profile = options_.profile;
    ec.passive = true;
    // Unknown unless announced: a capture does not show IRD/ORD or MULPDU,
    // so nothing is assumed about them (no false IRD/ORD/MULPDU findings).
    ec.ird = std::numeric_limits<uint32_t>::max();
    ec.ord = std::numeric_limits<uint32_t>::max();
    ec.mulpdu = std::numeric_limits<std::size_t>::max();
    ep_[d] = std::make_unique<RdmapEndpoint>(ec);
  }
  if (!cf_.initiator) return;
  const int responder = 1 - *cf_.initiator;
  const capture::StartupFrameSeen& reply = cf_.startup[responder];
  if (!reply.frame || !reply.is_reply) return;
  wire::ByteSpan pd(reply.frame->private_data);
  if (!wire::HasAdvertisementMagic(pd) && pd.size() > 4 && wire::HasAdvertisementMagic(pd.subspan(4)))
    pd = pd.subspan(4);
  if (!wire::HasAdvertisementMagic(pd)) return;
  auto adv = wire::DecodeAdvertisement(pd);
  if (adv.ok()) ApplyAdvertisement(responder, adv.value());
}

// The Responder's regions, receive buffers and IRD as its Advertisement
// announces them (docs/target-convention.md §3), so that DDP bounds,
// access rights, receive buffer sizes and IRD are checked.
void ConnectionAuditor::ApplyAdvertisement(int side, const wire::Advertisement& adv) {
  model::EndpointConfig ec = ep_[side]->config();
  if (adv.ird != 0) ec.ird = adv.ird;
  ec.passive_assume_receives = false;  // the convention's buffers are posted once, never reposted
  ep_[side] = std::make_unique<RdmapEndpoint>(ec);
  model::Resources& res = ep_[side]->resources();
  std::vector<std::pair<uint16_t, uint32_t>> objects;  // memory object id -> model object
  for (const wire::AdvertisedRegion& r : adv.regions) {
    if (r.attributes & wire::kAttrDeregistered) continue;  // not known to the endpoint at all
    auto it = std::find_if(objects.begin(), objects.end(), [&](const auto& o) { return o.first == r.memory_object; });
    if (it == objects.end()) {
      uint64_t size = 0;
      for (const wire::AdvertisedRegion& o : adv.regions) {
        if (o.memory_object == r.memory_object) size = std::max<uint64_t>(size, uint64_t{o.object_offset} + o.length);
      }
      const uint32_t m = res.CreateMemoryObject(size);
      std::span<uint8_t> bytes = res.ObjectBytes(m);
      for (std::size_t x = 0; x < bytes.size(); ++x) bytes[x] = wire::PatternByte(r.memory_object, x);
      it = objects.insert(objects.end(), {r.memory_object, m});
    }
    res.RegisterRegion(model::RegionFromAdvertisement(r, ec.stream_id, it->second));
  }
  for (uint16_t i = 0; i < adv.receive_buffer_count; ++i) ep_[side]->PostReceive(adv.receive_buffer_size);
  summary_.advertisement = true;
}

void ConnectionAuditor::Push(int d, Unit u) {
  if (u.kind == CapturedUnit::Kind::kStartupFrame && !startup_last_[d]) startup_last_[d] = u.last_frame;
  if (queue_[0].empty() && queue_[1].empty() && Ready(d, u.last_frame)) {
    Process(d, u);  // its turn already: audited from the decoder's octets, no copy
    return;
  }
  if (u.octets.data() != u.owned.data()) {
    u.owned.assign(u.octets.begin(), u.octets.end());
    u.octets = u.owned;
  }
  waiting_ += u.owned.size();
  queue_[d].push_back(std::move(u));
  Drain();
}

// A unit of d ending in `last_frame` goes first when the other direction
// has no unit ending before it (ties: direction 0 first, as ever).
bool ConnectionAuditor::Ready(int d, uint64_t last_frame) const {
  const int o = 1 - d;
  if (!queue_[o].empty()) {
    const uint64_t other = queue_[o].front().last_frame;
    return d == 0 ? other >= last_frame : other > last_frame;
  }
  return d == 0 ? lowest_[o] >= last_frame : lowest_[o] > last_frame;
}

void ConnectionAuditor::Drain() {
  for (;;) {
    int s = -1;
    for (int d = 0; d < 2 && s < 0; ++d) {
      if (!queue_[d].empty() && Ready(d, queue_[d].front().last_frame)) s = d;
    }
    if (s < 0 && waiting_ > options_.reassembly.max_out_of_order) {
      forced_ = true;  // the other direction holds back too long: audit in decoding order
      s = queue_[0].empty() ? 1 : 0;
    }
    if (s < 0) return;
    Unit u = std::move(queue_[s].front());
    queue_[s].pop_front();
    waiting_ -= u.owned.size();
    Process(s, u);
  }
}

void ConnectionAuditor::End(const capture::ReassembledConnection& c, AuditReport& report) {
  lowest_ = {std::numeric_limits<uint64_t>::max(), std::numeric_limits<uint64_t>::max()};
  Drain();
  if (!set_up_) Setup();
  summary_.iwarp = cf_.iwarp;
  summary_.initiator = cf_.initiator;
  summary_.octets = {c.directions[0].octets_out, c.directions[1].octets_out};
  Finish(c);
  for (AuditFinding& f : findings_) report.findings.push_back(std::move(f));
  report.connections.push_back(summary_);
  if (forced_) {
    capture::CaptureIssue w;
    w.message = "connection " + std::to_string(index_) + ": more than " +
                std::to_string(options_.reassembly.max_out_of_order) +
                " octets of ULPDUs waited for the other direction; part of it was audited in decoding order";
    w.connection = index_;
    report.issues.push_back(std::move(w));
  }
}

void ConnectionAuditor::Process(int s, const Unit& u) {
  if (!set_up_) Setup();
  if (u.kind == CapturedUnit::Kind::kStartupFrame) {
    StartupFrame(s, u);
    return;
  }
  if (u.kind != CapturedUnit::Kind::kSegment) return;
  MpaSenderRules(s, u);
  // REQ R5044-7.1.2-R04
  // The Initiator sends the first FPDU; RFC 6581 (Rev 2, S) lets the
  // Responder go first only with the enhanced negotiation.
  if (first_fpdu_ && cf_.initiator && s != *cf_.initiator && cf_.startup[s].frame &&
      !cf_.startup[s].frame->enhanced_data) {
    Add(s, u.frame, u.offset, "R5044-7.1.2-R04", "responder-sent-first-fpdu",
        "the Responder's FPDU came before any FPDU of the Initiator; expected the Initiator's first FPDU first");
  }
  first_fpdu_ = false;
  if (u.crc_bad || u.marker_bad) {
    BadFpdu(s, u);
  } else {
    Segment(s, u);
  }
}

// REQ R5044-7.1.1-15
// Res is zero on send (the RFC 6581 S bit, 0x10, is not part of it).
void ConnectionAuditor::StartupFrame(int s, const Unit& u) {
  // REQ R5044-7.1.2-R02a
  // The Responder answers only a complete (and validated) Request.
  // Both startup frames are decoded when the framing is decided, before
  // any unit is audited: the Request's last frame is known here.
  const std::optional<uint64_t>& request = cf_.initiator ? startup_last_[*cf_.initiator] : std::nullopt;
  if (cf_.initiator && s != *cf_.initiator && cf_.startup[s].is_reply && request && u.frame < *request) {
    Add(s, u.frame, u.offset, "R5044-7.1.2-R02a", "mpa-reply-before-request",
        "the MPA Reply starts in frame " + std::to_string(u.frame) + ", before the Request was complete (frame " +
            std::to_string(*request) + "); expected the whole Request first");
  }
  if (u.startup_res == 0) return;
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", u.startup_res);
  Add(s, u.frame, u.offset, "R5044-7.1.1-15", "mpa-res-bits",
      std::string("MPA ") + (u.offset == 0 && cf_.startup[s].is_reply ? "Reply" : "Request") + " Res bits " + b +
          "; expected 0");
}

// REQ R5044-4.1-03 R5044-4.2-02 R5044-4.3-05
// What an MPA sender must set although the receiver ignores it: PAD octets
// zero, Marker RESERVED zero, FPDUPTR exactly the distance to ULPDU_Length
// (its two low bits are ignored on receive, R5044-4.3-09, but not free).
void ConnectionAuditor::MpaSenderRules(int s, const Unit& u) {
  char b[64];
  if (u.pad_nonzero != 0) {
    std::snprintf(b, sizeof b, "PAD octet 0x%02x", u.pad_nonzero);
    Add(s, u.frame, u.offset, "R5044-4.1-03", "mpa-pad", std::string(b) + "; expected 0");
  }
  if (u.marker_reserved != 0) {
    std::snprintf(b, sizeof b, "Marker RESERVED 0x%04x", u.marker_reserved);
    Add(s, u.frame, u.offset, "R5044-4.2-02", "mpa-marker-reserved", std::string(b) + "; expected 0");
  }
  if (u.fpduptr_inexact) {
    std::snprintf(b, sizeof b, "FPDUPTR 0x%04x; expected 0x%04x", u.fpduptr_inexact->first, u.fpduptr_inexact->second);
    Add(s, u.frame, u.offset, "R5044-4.3-05", "mpa-fpduptr", b);
  }
}

void ConnectionAuditor::OweTerminate(int side, const model::Reactions& r, uint64_t frame) {
  if (r.segments().empty() || owed_[side] || terminated_[side] || r.violations().empty()) return;
  Owed o{r.violations().front(), std::nullopt, frame};
  auto dec = wire::DecodeRdmapSegment(r.segments().front(), options_.profile);
  if (dec.ok()) {
    if (const auto* t = std::get_if<TerminateHeader>(&dec.value().header)) o.model = *t;
  }
  owed_[side] = std::move(o);
}

// REQ R5040-5.2.2-08
// Checks of responses at the requester that the RFCs leave optional (a
// requester MAY check Read Responses; RFC 7306 describes the QN 3 checks):
// what counts is the responder's own rule (ObserveTransmitted), and a
// requester that does not check them owes no Terminate.
bool OptionalRequesterCheck(model::ViolationKind k) {
  using VK = model::ViolationKind;
  return k == VK::kReadResponseUnexpected || k == VK::kReadResponseMismatch || k == VK::kUnexpectedResponse ||
         k == VK::kResponseOpcodeMismatch || k == VK::kAtomicResponseIdMismatch;
}

// One ULPDU sent by s: the receiver's model checks it, the sender's model
// checks that s may send it.
void ConnectionAuditor::Segment(int s, const Unit& u) {
  const int r = 1 - s;
  ++summary_.segments[s];
  if (owed_[s] && !u.terminate) spoke_after_owed_[s] = true;
  rx_.Clear();
  ep_[r]->OnSegment(u.octets, rx_);
  tx_.Clear();
  ep_[s]->ObserveTransmitted(u.octets, tx_);
  const bool sender_rule = !tx_.violations().empty();
  bool receiver_rule = false;
  for (const Violation& v : rx_.violations()) {
    const bool optional = OptionalRequesterCheck(v.kind);
    if (optional && sender_rule) continue;  // the sender's own rule says it better
    receiver_rule = receiver_rule || !optional;
    std::string detail = v.detail;
    if (!rx_.segments().empty() && !owed_[r] && !terminated_[r]) {
      detail += std::string(optional ? "; a receiver that checks this answers with a Terminate "
                                     : "; the receiver must answer with a Terminate ") +
                CodeText(model::ChosenCode(v.kind, {}));
    }
    Add(s, u.frame, u.offset, v.requirement_id, model::ViolationKindName(v.kind), detail);
  }
  OweTerminate(r, rx_, u.frame);
  // The sender's own rules; where the receiver already found this segment
  // wrong (the same MSN, the same header field), once is enough.
  if (!receiver_rule) {
    for (const Violation& v : tx_.violations()) {
      Add(s, u.frame, u.offset, v.requirement_id, model::ViolationKindName(v.kind), v.detail);
    }
  }
  if (u.terminate) CheckTerminate(s, u, *u.terminate);
}

// REQ R5044-4.4-10 R5044-4.4-15 R5044-4.3-05 R5044-4.3-11
// An FPDU whose CRC or Marker is wrong: its sender broke RFC 5044; the
// receiver must not hand it to DDP and owes a Terminate (LLP error).
void ConnectionAuditor::BadFpdu(int s, const Unit& u) {
  const int r = 1 - s;
  ++summary_.segments[s];
  if (u.crc_bad) {
    Add(s, u.frame, u.offset, "R5044-4.4-10", "llp-crc-error",
        "FPDU CRC " + Crc(u.received_crc) + ", expected " + Crc(u.computed_crc) + " (CRC32c of the FPDU)");
  } else {
    Add(s, u.frame, u.offset, "R5044-4.3-05", "llp-marker-mismatch",
        "a Marker's FPDUPTR does not point to the ULPDU_Length of its FPDU");
  }
  rx_.Clear();
  ep_[r]->OnLlpError(u.crc_bad ? TerminateCode{2, 0, 0x02} : TerminateCode{2, 0, 0x03}, rx_);
  OweTerminate(r, rx_, u.frame);
}

// REQ R5040-7.1-03 R5040-4.8-03
// A Terminate sent by s: if s owed one, its code must be in the accept-set
// of the first violation it received, with the M/D/R shape of Figure 10.
void ConnectionAuditor::CheckTerminate(int s, const Unit& u, const TerminateHeader& t) {
  terminated_[s] = true;
  if (!owed_[s]) return;  // a ULP abort, or an error this audit cannot see: nothing to compare
  const Owed e = std::move(*owed_[s]);
  owed_[s].reset();
  const TerminateRule& rule = model::RuleFor(e.violation.kind);
  if (!model::IsAccepted(e.violation.kind, t.code)) {
    std::string accept;
    for (const TerminateCode& c : rule.accept_set()) accept += (accept.empty() ? "" : ", ") + CodeText(c);
    std::string id = rule.requirement_ids;
    id = id.substr(0, id.find(' '));
    Add(s, u.frame, u.offset, id, "terminate-code",
        "Terminate " + CodeText(t.code) + " for " + rule.name + " in frame " + std::to_string(e.frame) + "; expected " +
            accept);
  }
  CheckTerminateShape(s, u, t, e);
}

// REQ R5040-4.8-05 R5040-4.8-06 R5040-4.8-07 R5040-4.8-10 R5040-4.8-12 R5040-4.8-13
void ConnectionAuditor::CheckTerminateShape(int s, const Unit& u, const TerminateHeader& t, const Owed& e) {
  const TerminateRule& rule = model::RuleFor(e.violation.kind);
  const model::OffendingSegment& o = e.violation.offending;
  const std::string of = " (frame " + std::to_string(e.frame) + ")";
  if (rule.ddp_header && o.has_ddp_header) {
    if (!t.d || !t.has_ddp_header) {
      Add(s, u.frame, u.offset, "R5040-4.8-06", "terminate-shape",
          "Terminate with D = 0; expected D = 1 and the Terminated DDP Header of the offending segment" + of);
    } else if (!(t.terminated_ddp_header == o.ddp_header)) {
      Add(s, u.frame, u.offset, "R5040-4.8-12", "terminate-shape",
          "Terminated DDP Header differs from the offending segment's DDP header" + of);
    }
    if (!t.m) {
      Add(s, u.frame, u.offset, "R5040-4.8-05", "terminate-shape",
          "Terminate with M = 0; expected M = 1 and the DDP Segment Length of the offending segment" + of);
    } else if (t.ddp_segment_length != o.ulpdu_length &&
               t.ddp_segment_length != o.ulpdu_length - o.ddp_header.HeaderLength()) {
      Add(s, u.frame, u.offset, "R5040-4.8-10", "terminate-shape",
          "DDP Segment Length " + std::to_string(t.ddp_segment_length) + "; expected " +
              std::to_string(o.ulpdu_length) + " (the ULPDU_Length of the offending segment" + of + ")");
    }
  }
  const bool want_r = rule.rdma_header == model::RdmaHeaderEcho::kIfReadRequest && o.has_read_request;
  if (want_r && !t.r) {
    Add(s, u.frame, u.offset, "R5040-4.8-07", "terminate-shape",
        "Terminate with R = 0; expected R = 1 and the Terminated RDMA Header of the Read Request" + of);
  } else if (t.r && !o.has_read_request && o.has_ddp_header) {
    Add(s, u.frame, u.offset, "R5040-4.8-13", "terminate-shape",
        "Terminate with R = 1 for a segment that is not an RDMA Read Request" + of);
  }
}

// REQ R5040-7.1-02 R5040-7.1-02c2 R5040-7.1-02c3
// A Terminate owed and never sent, although the side went on sending or
// closed its stream.
void ConnectionAuditor::Finish(const capture::ReassembledConnection& c) {
  for (int d = 0; d < 2; ++d) {
    if (!owed_[d] || OptionalRequesterCheck(owed_[d]->violation.kind)) continue;
    // Judged only when the side had its chance: it sent something else
    // after the error, or closed its stream; a capture that simply ends
    // may have missed the Terminate.
    const capture::DirectionStream& ds = c.directions[d];
    if (!spoke_after_owed_[d] && !ds.fin_offset && ds.rst_frame == 0) continue;
    const Owed& e = *owed_[d];
    const TerminateRule& rule = model::RuleFor(e.violation.kind);
    const TerminateCode code = e.model ? e.model->code : model::ChosenCode(e.violation.kind, {});
    Add(d, 0, c.directions[d].end(), "R5040-7.1-02", "terminate-missing",
        "no Terminate sent after the peer's " + std::string(rule.name) + " in frame " + std::to_string(e.frame) + " (" +
            e.violation.detail + "); expected a Terminate " + CodeText(code));
  }
}

// What the auditor needs of a decoded unit (the octets still point into the decoder).
Unit FromCaptured(const CapturedUnit& cu) {
  Unit u;
  u.kind = cu.kind;
  u.offset = cu.offset;
  u.length = cu.length;
  u.frame = cu.capture_frame;
  u.last_frame = cu.last_capture_frame;
  if (cu.kind == CapturedUnit::Kind::kStartupFrame && cu.octets.size() > 16) {
    u.startup_res = cu.octets[16] & wire::kMpaResMask;
  }
  if (cu.kind != CapturedUnit::Kind::kSegment || cu.segment == nullptr) return u;
  const wire::DecodedSegment& s = *cu.segment;
  if (s.fpdu != nullptr) {
    u.crc_bad = !s.fpdu->crc_ok;
    u.marker_bad = !s.fpdu->marker_ok;
    u.received_crc = s.fpdu->received_crc;
    u.computed_crc = s.fpdu->computed_crc;
    for (uint8_t i = 0; i < s.fpdu->pad_length; ++i) {
      if (s.fpdu->pad[i] != 0 && u.pad_nonzero == 0) u.pad_nonzero = s.fpdu->pad[i];
    }
    for (const wire::MarkerSeen& m : s.fpdu->markers) {
      if (m.reserved != 0) u.marker_reserved = m.reserved;
      if (m.ok() && m.fpduptr != m.expected_fpduptr) u.fpduptr_inexact = {m.fpduptr, m.expected_fpduptr};
    }
  }
  if (s.rdmap && s.rdmap->header_present) {
    if (const auto* t = std::get_if<TerminateHeader>(&s.rdmap->header)) u.terminate = *t;
  }
  u.octets = cu.octets;
  return u;
}

// Hands each connection's units to its auditor as the capture layer
// decodes them; a connection's findings join the report, in connection
// order, when it ends.
class AuditSink : public capture::CaptureStreamSink {
 public:
  AuditSink(const AuditOptions& options, AuditReport& report) : options_(options), report_(report) {}

  void OnFraming(const capture::ReassembledConnection& c, const capture::ConnectionFraming& cf) override {
    if (auditors_.size() <= c.index) auditors_.resize(c.index + 1);
    auditors_[c.index] = std::make_unique<ConnectionAuditor>(c, cf, options_);
  }
  void OnUnit(const CapturedUnit& cu) override {
    if (cu.kind == CapturedUnit::Kind::kError) return;  // CRC/Marker: seen on the segment itself
    if (cu.connection >= auditors_.size() || !auditors_[cu.connection]) return;  // none come after the close
    ConnectionAuditor& a = *auditors_[cu.connection];
    waiting_ -= a.waiting();
    a.Push(cu.direction, FromCaptured(cu));
    Count(a);
  }
  void OnProgress(std::size_t c, const std::array<uint64_t, 2>& lowest) override {
    if (c >= auditors_.size() || !auditors_[c]) return;  // closed already
    ConnectionAuditor& a = *auditors_[c];
    waiting_ -= a.waiting();
    a.Progress(lowest);
    Count(a);
  }
  // Audits what is left and keeps only the result, until its turn comes.
  void OnConnectionClosed(const capture::ReassembledConnection& c) override {
    if (c.index >= auditors_.size() || !auditors_[c.index]) return;
    waiting_ -= auditors_[c.index]->waiting();
    if (auditors_[c.index]->iwarp()) auditors_[c.index]->End(c, done_[c.index]);
    auditors_[c.index].reset();
  }
  void OnConnectionEnd(const capture::ConnectionDecode& cd) override {
    const std::size_t c = cd.connection->index;
    if (auto it = done_.find(c); it != done_.end()) {
      Take(std::move(it->second));
      done_.erase(it);
      return;
    }
    if (c >= auditors_.size() || !auditors_[c]) return;
    waiting_ -= auditors_[c]->waiting();
    if (cd.framing->iwarp) {
      AuditReport one;
      auditors_[c]->End(*cd.connection, one);
      Take(std::move(one));
    }
    auditors_[c].reset();
  }
  void OnIssue(const capture::CaptureIssue& issue) override { report_.issues.push_back(issue); }

  std::size_t peak_waiting() const { return peak_waiting_; }

 private:
  // One connection's audit joins the report.
  void Take(AuditReport one) {
    for (ConnectionAudit& a : one.connections) {
      report_.octets += a.octets[0] + a.octets[1];
      report_.segments += a.segments[0] + a.segments[1];
      report_.connections.push_back(std::move(a));
    }
    for (AuditFinding& f : one.findings) report_.findings.push_back(std::move(f));
    for (capture::CaptureIssue& i : one.issues) report_.issues.push_back(std::move(i));
  }
  void Count(const ConnectionAuditor& a) {
    waiting_ += a.waiting();
    peak_waiting_ = std::max(peak_waiting_, waiting_);
  }

  const AuditOptions& options_;
  AuditReport& report_;
  std::vector<std::unique_ptr<ConnectionAuditor>> auditors_;
  std::map<std::size_t, AuditReport> done_;     // closed connections' results, until OnConnectionEnd
  std::size_t waiting_ = 0, peak_waiting_ = 0;  // ULPDU octets waiting for their turn, all connections
};

capture::CaptureStreamOptions StreamOptions(const AuditOptions& options) {
  capture::CaptureStreamOptions o;
  o.profile = options.profile;
  o.connection = options.connection;
  o.reassembly = options.reassembly;
  o.stop = options.stop;
  return o;
}

void TakeSummary(const capture::CaptureDecodeSummary& summary, std::size_t peak_waiting, AuditReport& report) {
  report.read = summary.read;
  report.link_type_supported = summary.read.link_type >= 0 && capture::SupportedLinkType(summary.read.link_type);
  report.tcp_connections = summary.connections;
  report.connection_missing = summary.connection_missing;
  report.interrupted = summary.interrupted;
  report.peak_buffered_octets = summary.peak_buffered_octets;
  report.peak_waiting_octets = peak_waiting;
}

}  // namespace

struct SegmentAudit::Impl {
  explicit Impl(const AuditOptions& o) : options(o), sink(options, report), decoder(StreamOptions(options), sink) {}
  const AuditOptions options;
  AuditReport report;
  AuditSink sink;
  capture::CaptureStreamDecoder decoder;
};

SegmentAudit::SegmentAudit(const AuditOptions& options) : impl_(std::make_unique<Impl>(options)) {}
SegmentAudit::~SegmentAudit() = default;

void SegmentAudit::Add(const capture::TcpSegment& segment) { impl_->decoder.Add(segment); }

std::size_t SegmentAudit::buffered_octets() const { return impl_->decoder.buffered_octets(); }

AuditReport SegmentAudit::Finish() {
  capture::CaptureReadSummary read;
  read.opened = true;
  read.link_type = 1;  // DLT_EN10MB: the segments were handed in
  const capture::CaptureDecodeSummary summary = impl_->decoder.Finish(read);
  TakeSummary(summary, impl_->sink.peak_waiting(), impl_->report);
  return std::move(impl_->report);
}

AuditReport AuditCaptureFile(const std::string& path, const AuditOptions& options) {
  AuditReport report;
  AuditSink sink(options, report);
  const capture::CaptureDecodeSummary summary = capture::StreamCaptureFile(path, StreamOptions(options), sink);
  TakeSummary(summary, sink.peak_waiting(), report);
  return report;
}

}  // namespace rdmapct::replay
