#include "replay/audit.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <limits>
#include <memory>

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
  wire::ByteSpan octets;            // the ULPDU (points into the stream or into `owned`)
  bool crc_bad = false, marker_bad = false;
  uint32_t received_crc = 0, computed_crc = 0;
  std::optional<TerminateHeader> terminate;   // the ULPDU is a decoded Terminate
  // Sender rules of RFC 5044 the receiver ignores (so the decoder accepts them).
  uint8_t pad_nonzero = 0;          // the first non-zero PAD octet (0: all zero)
  uint16_t marker_reserved = 0;     // a Marker's non-zero RESERVED field
  std::optional<std::pair<uint16_t, uint16_t>> fpduptr_inexact;   // (received, expected)
  uint8_t startup_res = 0;          // kStartupFrame: Res bits
};

// The Terminate one side owes, from the first violation its peer committed.
struct Owed {
  Violation violation;
  std::optional<TerminateHeader> model;   // the Terminate the reference model sends for it
  uint64_t frame = 0;                     // where the offending octets were
};

class ConnectionAuditor {
 public:
  ConnectionAuditor(const capture::ConnectionDecode& cd, const AuditOptions& options,
                    const std::array<std::vector<Unit>, 2>& units, AuditReport& report)
      : c_(*cd.connection), cf_(*cd.framing), options_(options), units_(units), report_(report) {}

  void Run();

 private:
  void Setup();
  void ApplyAdvertisement(int side, const wire::Advertisement& adv);
  void Segment(int s, const Unit& u);
  void StartupFrame(int s, const Unit& u);
  void MpaSenderRules(int s, const Unit& u);
  void BadFpdu(int s, const Unit& u);
  void OweTerminate(int side, const model::Reactions& r, uint64_t frame);
  void CheckTerminate(int s, const Unit& u, const TerminateHeader& t);
  void CheckTerminateShape(int s, const Unit& u, const TerminateHeader& t, const Owed& e);
  void Finish();
  void Add(int d, uint64_t frame, uint64_t offset, std::string requirement, std::string check, std::string detail);
  std::string DirectionName(int d) const {
    if (!cf_.initiator) return d == 0 ? "client -> server" : "server -> client";
    return d == *cf_.initiator ? "Initiator -> Responder" : "Responder -> Initiator";
  }

  const capture::ReassembledConnection& c_;
  const capture::ConnectionFraming& cf_;
  const AuditOptions& options_;
  const std::array<std::vector<Unit>, 2>& units_;
  AuditReport& report_;
  ConnectionAudit summary_;
  std::array<std::unique_ptr<RdmapEndpoint>, 2> ep_;   // ep_[d] models the endpoint that sends direction d
  std::array<std::optional<Owed>, 2> owed_;            // the Terminate the sender of direction d owes
  std::array<bool, 2> terminated_{};                   // direction d carried a Terminate
  std::array<bool, 2> spoke_after_owed_{};             // direction d sent a ULPDU while it owed a Terminate
  model::Reactions rx_, tx_;
};

void ConnectionAuditor::Add(int d, uint64_t frame, uint64_t offset, std::string requirement, std::string check,
                            std::string detail) {
  AuditFinding f;
  f.connection = c_.index;
  f.direction = d;
  f.direction_name = DirectionName(d);
  f.flow = c_.directions[d].source.ToString() + " -> " + c_.directions[d].destination.ToString();
  f.capture_frame = frame;
  f.offset = offset;
  f.requirement = std::move(requirement);
  f.check = std::move(check);
  f.detail = std::move(detail);
  report_.findings.push_back(std::move(f));
  ++summary_.findings;
}

void ConnectionAuditor::Setup() {
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
  if (!wire::HasAdvertisementMagic(pd) && pd.size() > 4 && wire::HasAdvertisementMagic(pd.subspan(4))) pd = pd.subspan(4);
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
  ec.passive_assume_receives = false;   // the convention's buffers are posted once, never reposted
  ep_[side] = std::make_unique<RdmapEndpoint>(ec);
  model::Resources& res = ep_[side]->resources();
  std::vector<std::pair<uint16_t, uint32_t>> objects;   // memory object id -> model object
  for (const wire::AdvertisedRegion& r : adv.regions) {
    if (r.attributes & wire::kAttrDeregistered) continue;   // not known to the endpoint at all
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

void ConnectionAuditor::Run() {
  summary_.index = c_.index;
  summary_.client = c_.client.ToString();
  summary_.server = c_.server.ToString();
  summary_.iwarp = cf_.iwarp;
  summary_.initiator = cf_.initiator;
  summary_.octets = {c_.directions[0].octets_out, c_.directions[1].octets_out};
  Setup();
  // Both directions in capture order: a unit counts when its last octet was
  // captured (the receiver could not act on it before).
  std::array<std::size_t, 2> next{};
  bool first_fpdu = true;
  while (next[0] < units_[0].size() || next[1] < units_[1].size()) {
    int s = 0;
    if (next[0] == units_[0].size()) {
      s = 1;
    } else if (next[1] < units_[1].size() && units_[1][next[1]].last_frame < units_[0][next[0]].last_frame) {
      s = 1;
    }
    const Unit& u = units_[s][next[s]++];
    if (u.kind == CapturedUnit::Kind::kStartupFrame) {
      StartupFrame(s, u);
      continue;
    }
    if (u.kind != CapturedUnit::Kind::kSegment) continue;
    MpaSenderRules(s, u);
    // REQ R5044-7.1.2-R04
    // The Initiator sends the first FPDU; RFC 6581 (Rev 2, S) lets the
    // Responder go first only with the enhanced negotiation.
    if (first_fpdu && cf_.initiator && s != *cf_.initiator && cf_.startup[s].frame &&
        !cf_.startup[s].frame->enhanced_data) {
      Add(s, u.frame, u.offset, "R5044-7.1.2-R04", "responder-sent-first-fpdu",
          "the Responder's FPDU came before any FPDU of the Initiator; expected the Initiator's first FPDU first");
    }
    first_fpdu = false;
    if (u.crc_bad || u.marker_bad) {
      BadFpdu(s, u);
    } else {
      Segment(s, u);
    }
  }
  Finish();
  report_.connections.push_back(summary_);
}

// REQ R5044-7.1.1-15
// Res is zero on send (the RFC 6581 S bit, 0x10, is not part of it).
void ConnectionAuditor::StartupFrame(int s, const Unit& u) {
  // REQ R5044-7.1.2-R02a
  // The Responder answers only a complete (and validated) Request.
  if (cf_.initiator && s != *cf_.initiator && cf_.startup[s].is_reply) {
    for (const Unit& q : units_[*cf_.initiator]) {
      if (q.kind != CapturedUnit::Kind::kStartupFrame) continue;
      if (u.frame < q.last_frame) {
        Add(s, u.frame, u.offset, "R5044-7.1.2-R02a", "mpa-reply-before-request",
            "the MPA Reply starts in frame " + std::to_string(u.frame) + ", before the Request was complete (frame " +
                std::to_string(q.last_frame) + "); expected the whole Request first");
      }
      break;
    }
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
    std::snprintf(b, sizeof b, "FPDUPTR 0x%04x; expected 0x%04x", u.fpduptr_inexact->first,
                  u.fpduptr_inexact->second);
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
    if (optional && sender_rule) continue;   // the sender's own rule says it better
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
  if (!owed_[s]) return;   // a ULP abort, or an error this audit cannot see: nothing to compare
  const Owed e = std::move(*owed_[s]);
  owed_[s].reset();
  const TerminateRule& rule = model::RuleFor(e.violation.kind);
  if (!model::IsAccepted(e.violation.kind, t.code)) {
    std::string accept;
    for (const TerminateCode& c : rule.accept_set()) accept += (accept.empty() ? "" : ", ") + CodeText(c);
    std::string id = rule.requirement_ids;
    id = id.substr(0, id.find(' '));
    Add(s, u.frame, u.offset, id, "terminate-code",
        "Terminate " + CodeText(t.code) + " for " + rule.name + " in frame " + std::to_string(e.frame) +
            "; expected " + accept);
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
void ConnectionAuditor::Finish() {
  for (int d = 0; d < 2; ++d) {
    if (!owed_[d] || OptionalRequesterCheck(owed_[d]->violation.kind)) continue;
    // Judged only when the side had its chance: it sent something else
    // after the error, or closed its stream; a capture that simply ends
    // may have missed the Terminate.
    const capture::DirectionStream& ds = c_.directions[d];
    if (!spoke_after_owed_[d] && !ds.fin_offset && ds.rst_frame == 0) continue;
    const Owed& e = *owed_[d];
    const TerminateRule& rule = model::RuleFor(e.violation.kind);
    const TerminateCode code = e.model ? e.model->code : model::ChosenCode(e.violation.kind, {});
    Add(d, 0, c_.directions[d].end(), "R5040-7.1-02", "terminate-missing",
        "no Terminate sent after the peer's " + std::string(rule.name) + " in frame " + std::to_string(e.frame) +
            " (" + e.violation.detail + "); expected a Terminate " + CodeText(code));
  }
}

// Collects the units of the connection being decoded; audits it when its
// framing is known.
class AuditSink : public capture::CaptureDecodeSink {
 public:
  AuditSink(const AuditOptions& options, AuditReport& report) : options_(options), report_(report) {}

  void OnUnit(const CapturedUnit& cu) override {
    if (cu.kind == CapturedUnit::Kind::kError) return;   // CRC/Marker: seen on the segment itself
    Unit u;
    u.kind = cu.kind;
    u.offset = cu.offset;
    u.length = cu.length;
    u.frame = cu.capture_frame;
    u.last_frame = cu.last_capture_frame;
    if (cu.kind == CapturedUnit::Kind::kSegment && cu.segment != nullptr) {
      const wire::DecodedSegment& s = *cu.segment;
      if (s.fpdu != nullptr) {
        u.crc_bad = !s.fpdu->crc_ok;
        u.marker_bad = !s.fpdu->marker_ok;
        u.received_crc = s.fpdu->received_crc;
        u.computed_crc = s.fpdu->computed_crc;
      }
      if (s.fpdu != nullptr) {
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
      if (cu.stable) {
        u.octets = cu.octets;
      } else {
        owned_.emplace_back(cu.octets.begin(), cu.octets.end());
        u.octets = owned_.back();
      }
    }
    if (cu.kind == CapturedUnit::Kind::kStartupFrame && cu.octets.size() > 16) {
      u.startup_res = cu.octets[16] & wire::kMpaResMask;
    }
    units_[cu.direction].push_back(u);
  }
  void OnConnection(const capture::ConnectionDecode& cd) override {
    if (cd.framing->iwarp) {
      ConnectionAuditor(cd, options_, units_, report_).Run();
      const ConnectionAudit& a = report_.connections.back();
      report_.octets += a.octets[0] + a.octets[1];
      report_.segments += a.segments[0] + a.segments[1];
    }
    units_[0].clear();
    units_[1].clear();
    owned_.clear();
  }
  void OnFrame(const capture::CaptureFrame&) override {}
  void OnIssue(const capture::CaptureIssue& issue) override { report_.issues.push_back(issue); }

 private:
  const AuditOptions& options_;
  AuditReport& report_;
  std::array<std::vector<Unit>, 2> units_;
  std::deque<wire::Bytes> owned_;   // ULPDUs with Markers removed (not in the stream as they are)
};

capture::CaptureDecodeOptions DecodeOptions(const AuditOptions& options) {
  capture::CaptureDecodeOptions o;
  o.profile = options.profile;
  o.connection = options.connection;
  o.reassembly = options.reassembly;
  o.describe = false;
  o.stop = options.stop;
  return o;
}

}  // namespace

void AuditConnections(const capture::TcpReassembler& reassembler, const AuditOptions& options, AuditReport& report) {
  AuditSink sink(options, report);
  capture::CaptureDecodeSummary summary;
  capture::DecodeConnections(reassembler, DecodeOptions(options), sink, summary);
  report.tcp_connections = summary.connections;
  report.connection_missing = summary.connection_missing;
}

AuditReport AuditCaptureFile(const std::string& path, const AuditOptions& options) {
  AuditReport report;
  AuditSink sink(options, report);
  const capture::CaptureDecodeSummary summary = capture::DecodeCaptureFile(path, DecodeOptions(options), sink);
  report.read = summary.read;
  report.link_type_supported = summary.read.link_type >= 0 && capture::SupportedLinkType(summary.read.link_type);
  report.tcp_connections = summary.connections;
  report.connection_missing = summary.connection_missing;
  report.interrupted = summary.interrupted;
  return report;
}

}  // namespace rdmapct::replay
