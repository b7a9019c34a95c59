// The Terminate expectation (matchers.h): accept-set grading of the
// Layer/EType/Error Code (decisions D-S1), the M/D/R header-control bits,
// the DDP Segment Length accept-set (decisions D-E) and the echoed headers
// compared field by field with what the suite sent.
#include <algorithm>
#include <variant>

#include "conformance/frame_text.h"
#include "conformance/matchers.h"
#include "reference/wire/ddp.h"
#include "reference/wire/terminate_codes.h"

namespace rdmapct::conformance {
namespace {

// The checks of one Terminate, in the order they are made.
class Grader {
 public:
  void Pass(std::string expected) { expected_.push_back(std::move(expected)); }
  void Expect(std::string expected) { expected_.push_back(std::move(expected)); }
  void Miss(proto::Level level, std::string reason) {
    const Verdict v = VerdictForMiss(level);
    if (v == Verdict::kPass) {
      notes_.push_back("MAY: " + reason);
      return;
    }
    Record(v, std::move(reason));
  }
  void Record(Verdict v, std::string reason) {
    if (v != Verdict::kPass && Worse(verdict_, v) != verdict_) {
      verdict_ = v;
      reason_ = reason;
    }
    if (v != Verdict::kPass) problems_.push_back(std::string(VerdictName(v)) + ": " + reason);
  }
  void Note(std::string n) { notes_.push_back(std::move(n)); }
  void Choice(AcceptChoice c) { choices_.push_back(std::move(c)); }

  MatchOutcome Finish(std::string actual) && {
    MatchOutcome o;
    o.verdict = verdict_;
    o.reason = reason_;
    if (problems_.size() > 1) o.reason += " (and " + std::to_string(problems_.size() - 1) + " more)";
    o.expected = JoinLines(expected_);
    o.actual = std::move(actual);
    if (!problems_.empty()) o.actual += "\nproblems:\n  " + JoinLines(problems_);
    o.notes = std::move(notes_);
    o.choices = std::move(choices_);
    return o;
  }

 private:
  Verdict verdict_ = Verdict::kPass;
  std::string reason_;
  std::vector<std::string> expected_, problems_, notes_;
  std::vector<AcceptChoice> choices_;
};

proto::Level Or(proto::Level level, proto::Level fallback) {
  return level == proto::LEVEL_UNSPECIFIED ? fallback : level;
}

std::string MemberText(const proto::TerminateCode& a) {
  const wire::TerminateCode code{static_cast<uint8_t>(a.layer()), static_cast<uint8_t>(a.etype()),
                                 static_cast<uint8_t>(a.any_code() ? 0 : a.code())};
  std::string s = TerminateCodeText(code);
  if (a.any_code()) s += " with any Error Code";
  if (!a.note().empty()) s += " [" + a.note() + "]";
  return s;
}

// The preferred member of an accept-set, as text.
std::string PreferredText(const proto::TerminateMatcher& m) {
  for (const proto::TerminateCode& a : m.accept()) {
    if (a.preferred() || m.accept_size() == 1) return MemberText(a);
  }
  return "another code";
}

// REQ R5040-4.8-03: the code must be one RFC 6580 registers; which one is
// the case's accept-set (decisions D-S1).
void GradeCode(const proto::TerminateMatcher& m, const wire::TerminateCode& code, const MatchContext& ctx, Grader& g) {
  std::string expected = "Layer/EType/Error Code one of:";
  const proto::TerminateCode* hit = nullptr;
  bool hit_preferred = false;
  for (const proto::TerminateCode& a : m.accept()) {
    const bool preferred = a.preferred() || m.accept_size() == 1;
    expected += "\n    " + MemberText(a) + (preferred ? " (preferred)" : a.tolerated() ? " (tolerated: warns)" : "");
    const bool match =
        a.layer() == code.layer && a.etype() == code.error_type && (a.any_code() || a.code() == code.error_code);
    if (match && !hit) {
      hit = &a;
      hit_preferred = preferred;
    }
  }
  g.Expect(expected);
  AcceptChoice c{"Terminate code", TerminateCodeText(code), hit_preferred, hit != nullptr, hit ? hit->note() : ""};
  if (hit && hit->tolerated() && !hit_preferred) {
    c.tolerated = true;
    g.Record(Verdict::kWarn, "Terminate code " + c.chosen + " is tolerated, but the RFC names " + PreferredText(m) +
                                 (hit->note().empty() ? "" : " [" + hit->note() + "]"));
  } else if (hit) {
    if (!hit_preferred) g.Note("the target chose the accepted alternative " + c.chosen);
  } else if (wire::IsRegistered(code)) {
    g.Miss(Or(m.other_registered(), proto::SHOULD),
           "Terminate code " + c.chosen + " is registered but not in the accept-set");
  } else {
    g.Miss(ctx.severity, "Terminate code " + c.chosen + " is not registered (RFC 6580)");
  }
  g.Choice(std::move(c));
}

void GradeBit(const char* name, const proto::HeaderBit& want, bool actual, Grader& g) {
  g.Expect(std::string(name) + "=" + (want.value() ? "1" : "0"));
  if (want.value() != actual) {
    g.Miss(Or(want.severity(), proto::SHOULD),
           std::string(name) + " bit is " + (actual ? "1" : "0") + ", expected " + (want.value() ? "1" : "0"));
  }
}

// REQ R5040-4.8-11: the DDP Segment Length of the offending segment
// (decisions D-E: ULPDU_Length preferred, the payload length with a warning).
void GradeSegmentLength(const proto::TerminateMatcher& m, const wire::TerminateHeader& t, const MatchContext& ctx,
                        Grader& g) {
  if (m.ddp_segment_length().empty()) return;
  std::string expected = "DDP Segment Length one of:";
  std::optional<std::pair<const proto::SegmentLength*, bool>> hit;
  for (const proto::SegmentLength& s : m.ddp_segment_length()) {
    const bool preferred = s.preferred() || m.ddp_segment_length_size() == 1;
    uint32_t value = s.value();
    std::string name = std::to_string(value);
    if (s.has_form()) {
      if (!ctx.offending) {
        g.Record(Verdict::kError, "case error: a DDP Segment Length form needs an offending send");
        return;
      }
      const bool ulpdu = s.form() == proto::SegmentLength::ULPDU_LENGTH;
      value = ulpdu ? ctx.offending->ulpdu_length : ctx.offending->payload_length;
      name = std::to_string(value) + (ulpdu ? " (ULPDU_Length)" : " (DDP payload length)");
    }
    expected += "\n    " + name + (preferred ? " (preferred)" : "");
    if (t.has_segment_length && t.ddp_segment_length == value && !hit) hit = {{&s, preferred}};
  }
  g.Expect(expected);
  if (!t.has_segment_length) {
    g.Miss(proto::SHOULD, "no DDP Segment Length in the Terminate");
    return;
  }
  const std::string got = std::to_string(t.ddp_segment_length);
  g.Choice({"DDP Segment Length", got, hit && hit->second, hit.has_value(), ""});
  if (!hit) {
    g.Miss(ctx.severity, "DDP Segment Length " + got + " is not an accepted value");
  } else if (!hit->second) {
    g.Record(Verdict::kWarn, "DDP Segment Length " + got + " is the accepted alternative, not the preferred value");
  }
}

bool AllZero(const wire::DdpSegmentHeader& h, uint32_t tail) {
  return h == wire::DdpSegmentHeader{.tagged = false, .last = false, .ddp_version = 0} && tail == 0;
}

// REQ R5040-4.8-12: the Terminated DDP Header.
void GradeDdpEcho(const proto::Echo& e, const wire::TerminateHeader& t, const MatchContext& ctx, Grader& g) {
  if (e.kind() == proto::Echo::UNCHECKED) return;
  const proto::Level level = Or(e.severity(), proto::MUST);
  const bool zero = AllZero(t.terminated_ddp_header, t.fixed_ddp_area_tail);
  const bool present = t.has_ddp_header && !(t.form == wire::TerminateForm::kFixed && !t.d && zero);
  const std::string actual = present ? DdpHeaderText(t.terminated_ddp_header) : "absent";
  switch (e.kind()) {
    case proto::Echo::ABSENT:
      g.Expect("Terminated DDP Header absent");
      if (present) g.Miss(level, "Terminated DDP Header present (" + actual + "), expected absent");
      return;
    case proto::Echo::ZERO:
      g.Expect("Terminated DDP Header present and all zero");
      if (!t.has_ddp_header || !zero) g.Miss(level, "Terminated DDP Header is " + actual + ", expected all zero");
      return;
    case proto::Echo::EXACT: {
      std::optional<wire::Bytes> want = ParseHexString(e.hex());
      wire::Bytes got;
      wire::EncodeDdpHeader(t.terminated_ddp_header, got);
      g.Expect("Terminated DDP Header " + e.hex());
      if (!want)
        g.Record(Verdict::kError, "case error: ddp_header hex does not parse");
      else if (!present || got != *want)
        g.Miss(level, "Terminated DDP Header is " + (present ? HexString(got) : actual));
      return;
    }
    default:
      break;  // OFFENDING, UPDATED: the offending segment's header
  }
  if (!ctx.offending) {
    g.Record(Verdict::kError, "case error: an OFFENDING echo needs an earlier send");
    return;
  }
  g.Expect("Terminated DDP Header = the offending segment's: " + DdpHeaderText(ctx.offending->ddp_header));
  if (!present) {
    g.Miss(level, "no Terminated DDP Header (D=0)");
    return;
  }
  const std::vector<std::string> diff = DiffDdpHeaders(ctx.offending->ddp_header, t.terminated_ddp_header);
  if (!diff.empty())
    g.Miss(level, "Terminated DDP Header differs from the offending segment's: " + diff.front() +
                      (diff.size() > 1 ? "; " + JoinLines({diff.begin() + 1, diff.end()}) : ""));
}

bool AllZero(const wire::ReadRequestHeader& h) { return h == wire::ReadRequestHeader{}; }

// REQ R5040-4.8-13 R5040-4.8-15: the Terminated RDMA Header (Read Requests;
// UPDATED: advanced by the Read Response octets already sent).
void GradeRdmaEcho(const proto::Echo& e, const wire::TerminateHeader& t, const MatchContext& ctx, Grader& g) {
  if (e.kind() == proto::Echo::UNCHECKED) return;
  const proto::Level level = Or(e.severity(), proto::MUST);
  const bool zero = AllZero(t.terminated_rdma_header);
  const bool present = t.has_rdma_header && !(t.form == wire::TerminateForm::kFixed && !t.r && zero);
  const std::string actual = present ? ReadRequestHeaderText(t.terminated_rdma_header) : "absent";
  if (e.kind() == proto::Echo::ABSENT) {
    g.Expect("Terminated RDMA Header absent");
    if (present) g.Miss(level, "Terminated RDMA Header present (" + actual + "), expected absent");
    return;
  }
  if (e.kind() == proto::Echo::ZERO) {
    g.Expect("Terminated RDMA Header present and all zero");
    if (!t.has_rdma_header || !zero) g.Miss(level, "Terminated RDMA Header is " + actual + ", expected all zero");
    return;
  }
  wire::ReadRequestHeader want;
  if (e.kind() == proto::Echo::EXACT) {
    std::optional<wire::Bytes> bytes = ParseHexString(e.hex());
    auto decoded =
        bytes ? wire::DecodeReadRequestHeader(*bytes)
              : wire::Result<wire::ReadRequestHeader>(wire::DecodeError{wire::DecodeErrorKind::kTruncated, "hex", 0});
    if (!decoded.ok()) {
      g.Record(Verdict::kError, "case error: rdma_header hex is not a 28-octet Read Request header");
      return;
    }
    want = *decoded;
  } else if (!ctx.offending || !ctx.offending->read_request) {
    g.Record(Verdict::kError, "case error: an OFFENDING/UPDATED RDMA header echo needs an earlier Read Request");
    return;
  } else {
    want = *ctx.offending->read_request;
    if (e.kind() == proto::Echo::UPDATED) {
      const uint64_t n = ctx.offending->response_octets;
      want.sink_tagged_offset += n;
      want.source_tagged_offset += n;
      want.read_message_size -= static_cast<uint32_t>(n);
    }
  }
  g.Expect("Terminated RDMA Header " + ReadRequestHeaderText(want));
  if (!present) {
    g.Miss(level, "no Terminated RDMA Header (R=0)");
    return;
  }
  const std::vector<std::string> diff = DiffReadRequestHeaders(want, t.terminated_rdma_header);
  if (!diff.empty())
    g.Miss(level, "Terminated RDMA Header differs: " + diff.front() +
                      (diff.size() > 1 ? "; " + JoinLines({diff.begin() + 1, diff.end()}) : ""));
}

// What makes a frame not a well-formed Terminate at all; "" if it is one.
std::string Malformation(const wire::DdpSegmentView& ddp, const wire::RdmapControl& ctrl) {
  const wire::DdpSegmentHeader& h = ddp.header;
  if (h.tagged) return "Terminate with T=1 (it is an untagged message)";
  if (h.queue_number != 2) return "Terminate on QN " + std::to_string(h.queue_number) + " (must be 2)";
  if (h.message_offset != 0) return "Terminate with MO " + std::to_string(h.message_offset) + " (must be 0)";
  if (!h.last) return "Terminate with L=0 (it is a single-segment message)";
  if (h.ddp_version != wire::kDdpVersion) return "Terminate with DV " + std::to_string(h.ddp_version);
  if (ctrl.rdma_version != wire::kRdmaVersionIetf) return "Terminate with RV " + std::to_string(ctrl.rdma_version);
  return {};
}

}  // namespace

MatchOutcome MatchTerminateFrame(const proto::TerminateMatcher& m, const ReceivedFrame& frame,
                                 const MatchContext& ctx) {
  Grader g;
  const std::string summary = SummarizeUlpdu(frame.ulpdu, ctx.profile);
  const std::string actual = summary + "\nraw ULPDU: " + HexString(frame.ulpdu, 96);
  auto fail = [&](std::string reason) {
    g.Expect("a Terminate");
    g.Miss(ctx.severity, std::move(reason));
    MatchOutcome o = std::move(g).Finish(actual);
    o.frames = {frame.record};
    return o;
  };
  auto ddp = wire::DecodeDdpSegment(frame.ulpdu);
  if (!ddp.ok()) return fail("expected a Terminate, got an undecodable DDP segment: " + ddp.error().Describe());
  const wire::RdmapControl ctrl = wire::DecodeRdmapControl(ddp->header.rsvd_ulp0, ctx.profile);
  if (ctrl.opcode != static_cast<uint8_t>(wire::Opcode::kTerminate))
    return fail("expected a Terminate, got " + summary);
  if (std::string bad = Malformation(*ddp, ctrl); !bad.empty()) return fail("malformed Terminate: " + bad);
  auto term = wire::DecodeTerminateHeader(ddp->payload, ddp->payload_offset);
  if (!term.ok()) return fail("malformed Terminate: " + term.error().Describe());

  GradeCode(m, term->code, ctx, g);
  if (m.has_m()) GradeBit("M", m.m(), term->m, g);
  if (m.has_d()) GradeBit("D", m.d(), term->d, g);
  if (m.has_r()) GradeBit("R", m.r(), term->r, g);
  GradeSegmentLength(m, *term, ctx, g);
  GradeDdpEcho(m.ddp_header(), *term, ctx, g);
  GradeRdmaEcho(m.rdma_header(), *term, ctx, g);
  MatchOutcome o = std::move(g).Finish(actual);
  o.frames = {frame.record};
  return o;
}

namespace {

// No Terminate among the frames: decided once the stream broke, closed or
// the deadline passed. `actual` is what the target did instead, built from
// the observation itself (the Read Response segments it sent first, then
// what ended the wait), never cut out of the one-line reason.
Evaluation MissingTerminate(const Observation& obs, const MatchContext& ctx, std::size_t read_responses) {
  Evaluation e;
  const Verdict miss = VerdictForMiss(ctx.severity);
  std::string ended;
  if (obs.problem) {
    e.outcome.verdict = obs.problem->verdict == Verdict::kError ? Verdict::kError : miss;
    ended = obs.problem->reason;
    e.outcome.reason = "no Terminate: " + ended;
  } else if (obs.link != LinkState::kOpen) {
    const std::string link(LinkStateName(obs.link));
    e.outcome.verdict = miss;
    ended = "the connection ended (" + link + ") without a Terminate";
    e.outcome.reason = "no Terminate: the connection ended (" + link + ") without one";
  } else if (obs.deadline_passed) {
    e.outcome.verdict = miss;
    ended = "no Terminate within " + std::to_string(ctx.timeout.count()) + " ms";
    e.outcome.reason = ended;
  } else {
    return e;  // wait for more
  }
  e.decided = true;
  e.outcome.expected = "a Terminate";
  for (std::size_t i = 0; i < read_responses; ++i) {
    e.outcome.actual += SummarizeUlpdu(obs.frames[i].ulpdu, ctx.profile) + "\n";
  }
  e.outcome.actual += ended;
  return e;
}

}  // namespace

Evaluation EvaluateTerminate(const proto::TerminateMatcher& m, const Observation& obs, const MatchContext& ctx) {
  Evaluation e;
  // An UPDATED echo follows a Read whose Responses were partly sent: those
  // Read Response segments precede the Terminate and advance the header.
  std::size_t skip = 0;
  SentMessage updated;
  MatchContext local = ctx;
  if (m.rdma_header().kind() == proto::Echo::UPDATED && ctx.offending && ctx.offending->read_request) {
    updated = *ctx.offending;
    for (; skip < obs.frames.size(); ++skip) {
      auto v = wire::DecodeRdmapSegment(obs.frames[skip].ulpdu, ctx.profile);
      if (!v.ok() || !v->opcode_known || v->opcode() != wire::Opcode::kRdmaReadResponse ||
          v->ddp.header.stag != updated.read_request->sink_stag) {
        break;
      }
      updated.response_octets += v->ddp.payload.size();
    }
    local.offending = &updated;
  }
  if (skip < obs.frames.size()) {
    e.decided = true;
    e.frames_used = skip + 1;
    e.outcome = MatchTerminateFrame(m, obs.frames[skip], local);
    if (skip > 0) {
      e.outcome.notes.push_back(std::to_string(skip) + " Read Response segment(s) (" +
                                std::to_string(updated.response_octets - ctx.offending->response_octets) +
                                " octets) preceded the Terminate");
    }
    return e;
  }
  return MissingTerminate(obs, ctx, skip);
}

}  // namespace rdmapct::conformance
