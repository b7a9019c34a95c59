#include "conformance/matchers.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <algorithm>
#include <map>
#include <variant>

#include "conformance/frame_text.h"
#include "proto/message_type.h"
#include "reference/wire/opcodes.h"

namespace rdmapct::conformance {
namespace {

namespace pb = google::protobuf;

MatchOutcome Missed(proto::Level level, std::string reason, std::string expected, std::string actual = {}) {
  MatchOutcome o;
  o.verdict = VerdictForMiss(level);
  if (o.verdict == Verdict::kPass) {
    o.notes.push_back("MAY: " + reason);
  } else {
    o.reason = std::move(reason);
  }
  o.expected = std::move(expected);
  o.actual = std::move(actual);
  return o;
}

Evaluation Decided(MatchOutcome o, std::size_t frames = 0, std::size_t events = 0) {
  Evaluation e;
  e.decided = true;
  e.outcome = std::move(o);
  e.frames_used = frames;
  e.events_used = events;
  return e;
}

std::string FrameText(const ReceivedFrame& f, wire::Profile p) {
  return SummarizeUlpdu(f.ulpdu, p) + "\nraw ULPDU: " + HexString(f.ulpdu, 96);
}

// Why no input decided an expectation that waits for one; nullopt: keep waiting.
std::optional<std::string> NoInputReason(const Observation& obs, const MatchContext& ctx, const char* what,
                                         Verdict* verdict) {
  *verdict = VerdictForMiss(ctx.severity);
  if (obs.problem) {
    if (obs.problem->verdict == Verdict::kError) *verdict = Verdict::kError;
    return std::string("no ") + what + ": " + obs.problem->reason;
  }
  if (obs.link != LinkState::kOpen) {
    return std::string("no ") + what + ": the connection ended (" + std::string(LinkStateName(obs.link)) + ")";
  }
  if (obs.deadline_passed) return std::string("no ") + what + " within " + std::to_string(ctx.timeout.count()) + " ms";
  return std::nullopt;
}

// Header fields of a decoded segment by their case.proto Fields names.
std::map<std::string, uint64_t> ActualFields(const wire::RdmapMessageView& v) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  std::map<std::string, uint64_t> f{{"t", h.tagged},
                                    {"l", h.last},
                                    {"rsvd", h.rsvd},
                                    {"dv", h.ddp_version},
                                    {"rv", v.ctrl.rdma_version},
                                    {"rsv", v.ctrl.rsv},
                                    {"opcode", v.ctrl.opcode},
                                    {"payload_length", v.ulp_payload.size()}};
  if (h.tagged) {
    f["stag"] = h.stag;
    f["tagged_offset"] = h.tagged_offset;
  } else {
    f["invalidate_stag"] = h.invalidate_stag;
    f["queue_number"] = h.queue_number;
    f["msn"] = h.msn;
    f["message_offset"] = h.message_offset;
  }
  if (const auto* r = std::get_if<wire::ReadRequestHeader>(&v.header)) {
    f.insert({{"sink_stag", r->sink_stag},
              {"sink_tagged_offset", r->sink_tagged_offset},
              {"read_message_size", r->read_message_size},
              {"source_stag", r->source_stag},
              {"source_tagged_offset", r->source_tagged_offset}});
  } else if (const auto* t = std::get_if<wire::TerminateHeader>(&v.header)) {
    f.insert({{"terminate_layer", t->code.layer},
              {"terminate_etype", t->code.error_type},
              {"terminate_error_code", t->code.error_code},
              {"terminate_m", t->m},
              {"terminate_d", t->d},
              {"terminate_r", t->r},
              {"terminate_reserved", t->reserved}});
    if (t->has_segment_length) f["ddp_segment_length"] = t->ddp_segment_length;
  } else if (const auto* i = std::get_if<wire::ImmediateDataHeader>(&v.header)) {
    f["immediate_data"] = i->immediate_data;
  } else if (const auto* a = std::get_if<wire::AtomicResponseHeader>(&v.header)) {
    f.insert({{"original_request_identifier", a->original_request_identifier},
              {"original_remote_data_value", a->original_remote_data_value}});
  } else if (const auto* q = std::get_if<wire::AtomicRequestHeader>(&v.header)) {
    f.insert({{"atomic_reserved", q->reserved},
              {"atomic_opcode", q->atomic_opcode},
              {"request_identifier", q->request_identifier},
              {"remote_stag", q->remote_stag},
              {"remote_tagged_offset", q->remote_tagged_offset},
              {"add_or_swap_data", q->add_or_swap_data},
              {"add_or_swap_mask", q->add_or_swap_mask},
              {"compare_data", q->compare_data},
              {"compare_mask", q->compare_mask}});
  }
  return f;
}

// Every set Fields entry that the frame does not carry with that value.
std::vector<std::string> FieldMismatches(const proto::Fields& want, const wire::RdmapMessageView& v) {
  std::vector<std::string> out;
  const std::map<std::string, uint64_t> actual = ActualFields(v);
  const pb::Reflection* refl = want.GetReflection();
  std::vector<const pb::FieldDescriptor*> set;
  refl->ListFields(want, &set);
  for (const pb::FieldDescriptor* f : set) {
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING || f->name() == "msn_delta") {
      out.push_back(f->name() + ": not supported in a frame matcher");
      continue;
    }
    uint64_t w = 0;
    switch (f->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_UINT32:
        w = refl->GetUInt32(want, f);
        break;
      case pb::FieldDescriptor::CPPTYPE_UINT64:
        w = refl->GetUInt64(want, f);
        break;
      default:
        w = static_cast<uint64_t>(refl->GetInt64(want, f));
        break;
    }
    auto it = actual.find(f->name());
    if (it == actual.end()) {
      out.push_back(f->name() + ": expected " + std::to_string(w) + ", the frame has no such field");
    } else if (it->second != w) {
      out.push_back(f->name() + ": expected " + std::to_string(w) + ", got " + std::to_string(it->second));
    }
  }
  return out;
}

// One frame against a FrameMatcher; "" when it matches.
std::string FrameMismatch(const proto::FrameMatcher& m, const ReceivedFrame& frame, const MatchContext& ctx) {
  auto view = wire::DecodeRdmapSegment(frame.ulpdu, ctx.profile);
  if (!view.ok()) return "undecodable frame: " + view.error().Describe();
  if (m.type() != proto::Message::TYPE_UNSPECIFIED) {
    const wire::Opcode want = proto::OpcodeOf(m.type());
    if (!view->opcode_known || view->opcode() != want) {
      return std::string("expected ") + wire::OpcodeName(want) + ", got " + SummarizeUlpdu(frame.ulpdu, ctx.profile);
    }
  }
  std::vector<std::string> bad = FieldMismatches(m.fields(), *view);
  if (ctx.expected_data) {
    const wire::ByteSpan got = view->ulp_payload;
    const std::string diff = MemoryDifference(*ctx.expected_data, got);
    if (!diff.empty()) bad.push_back("payload: " + diff);
  }
  return bad.empty() ? "" : JoinLines(bad);
}

std::string FrameExpectation(const proto::FrameMatcher& m) {
  std::string s = m.type() != proto::Message::TYPE_UNSPECIFIED ? wire::OpcodeName(proto::OpcodeOf(m.type()))
                                                               : std::string("a frame");
  if (m.fields().ByteSizeLong() > 0) s += " with " + m.fields().ShortDebugString();
  if (m.count() > 1) s += " (" + std::to_string(m.count()) + " in a row)";
  return s;
}

// The event checks that need the record; the outcome is a pass when none fails.
MatchOutcome MatchEventRecord(const proto::EventMatcher& m, const ReceivedEvent& got, const MatchContext& ctx) {
  const std::string expected = m.ShortDebugString();
  if (!got.event)
    return MakeOutcome(Verdict::kError, "target broke the test-ULP convention: " + got.error, expected, "");
  const wire::EventRecord& ev = *got.event;
  const std::string actual = SummarizeEvent(ev);
  std::vector<std::string> bad;
  // REQ R5041-4.3-07: the target's Sends carry consecutive QN 0 MSNs; the
  // convention makes the Sequence Number equal to that MSN (§6.3).
  if (ev.sequence != got.msn) {
    bad.push_back("Sequence Number " + std::to_string(ev.sequence) + " differs from the Send's MSN " +
                  std::to_string(got.msn));
  }
  if (m.type() != proto::EventMatcher::TYPE_UNSPECIFIED && static_cast<int>(ev.type) != m.type()) {
    bad.push_back("Event Type " + std::to_string(static_cast<int>(ev.type)) + ", expected " + std::to_string(m.type()));
  }
  if (m.has_length() && ev.length != m.length()) {
    bad.push_back("Delivered Length " + std::to_string(ev.length) + ", expected " + std::to_string(m.length()));
  }
  if (m.has_solicited()) {
    if (!(ev.flags & wire::kEventSolicitedKnown)) {
      return MakeOutcome(Verdict::kSkip, "the target cannot report SE (Event Flags 0x01 clear)", expected, actual);
    }
    const bool se = ev.flags & wire::kEventSolicited;
    if (se != m.solicited()) bad.push_back(std::string("SE ") + (se ? "set" : "clear") + ", expected the opposite");
  }
  const bool invalidated = ev.flags & wire::kEventInvalidated;
  if (m.has_invalidated() && invalidated != m.invalidated()) {
    bad.push_back(invalidated ? "an STag was invalidated (" + Hex32(ev.invalidated_stag) + ")"
                              : "no STag was invalidated");
  }
  if (ctx.invalidated_stag && (!invalidated || ev.invalidated_stag != *ctx.invalidated_stag)) {
    bad.push_back("invalidated STag " + (invalidated ? Hex32(ev.invalidated_stag) : std::string("none")) +
                  ", expected " + Hex32(*ctx.invalidated_stag));
  }
  if (m.has_immediate_data() && ev.value != m.immediate_data()) {
    bad.push_back("Immediate Data " + Hex64(ev.value) + ", expected " + Hex64(m.immediate_data()));
  }
  if (m.has_sequence() && ev.sequence != m.sequence()) {
    bad.push_back("Sequence Number " + std::to_string(ev.sequence) + ", expected " + std::to_string(m.sequence()));
  }
  if (ctx.expected_data) {
    const wire::EventRecord want = wire::MakeSendEvent(ev.sequence, *ctx.expected_data, std::nullopt, std::nullopt);
    if (ev.length != want.length || ev.digest != want.digest || ev.prefix != want.prefix) {
      bad.push_back("delivered data differs (length " + std::to_string(ev.length) + " digest " + Hex32(ev.digest) +
                    ", expected length " + std::to_string(want.length) + " digest " + Hex32(want.digest) + ")");
    }
  }
  if (bad.empty()) return MakeOutcome(Verdict::kPass, "", expected, actual);
  MatchOutcome o = Missed(ctx.severity, "Event Record: " + bad.front(), expected, actual + "\n" + JoinLines(bad));
  return o;
}

}  // namespace

std::string_view LinkStateName(LinkState s) {
  switch (s) {
    case LinkState::kOpen:
      return "open";
    case LinkState::kFin:
      return "FIN";
    case LinkState::kReset:
      return "RST";
    case LinkState::kError:
      return "transport error";
  }
  return "?";
}

std::string MemoryDifference(wire::ByteSpan expected, wire::ByteSpan actual) {
  std::string s;
  if (expected.size() != actual.size()) {
    s = std::to_string(actual.size()) + " octets, expected " + std::to_string(expected.size()) + "; ";
  }
  const std::size_t n = std::min(expected.size(), actual.size());
  std::size_t differ = 0, first = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (expected[i] != actual[i]) {
      if (differ++ == 0) first = i;
    }
  }
  if (differ == 0) return expected.size() == actual.size() ? "" : s.substr(0, s.size() - 2);
  const std::size_t from = first >= 4 ? first - 4 : 0;
  const std::size_t len = std::min<std::size_t>(16, n - from);
  return s + std::to_string(differ) + " octets differ, the first at offset " + std::to_string(first) +
         "\n  expected at " + std::to_string(from) + ": " + HexString(expected.subspan(from, len)) +
         "\n  actual   at " + std::to_string(from) + ": " + HexString(actual.subspan(from, len));
}

Evaluation EvaluateFrame(const proto::FrameMatcher& m, const Observation& obs, const MatchContext& ctx) {
  const std::size_t count = std::max<uint32_t>(1, m.count());
  const std::string expected = FrameExpectation(m);
  for (std::size_t i = 0; i < std::min(count, obs.frames.size()); ++i) {
    if (std::string bad = FrameMismatch(m, obs.frames[i], ctx); !bad.empty()) {
      MatchOutcome o = Missed(ctx.severity, "frame " + std::to_string(i + 1) + ": " + bad.substr(0, bad.find('\n')),
                              expected, FrameText(obs.frames[i], ctx.profile) + "\n" + bad);
      o.frames = {obs.frames[i].record};
      return Decided(std::move(o), i + 1);
    }
  }
  if (obs.frames.size() >= count) {
    MatchOutcome o;
    o.expected = expected;
    for (std::size_t i = 0; i < count; ++i) {
      o.frames.push_back(obs.frames[i].record);
      o.actual += (i ? "\n" : "") + SummarizeUlpdu(obs.frames[i].ulpdu, ctx.profile);
    }
    return Decided(std::move(o), count);
  }
  Verdict v;
  if (std::optional<std::string> why = NoInputReason(obs, ctx, "matching frame", &v)) {
    MatchOutcome o = Missed(ctx.severity,
                            *why + " (" + std::to_string(obs.frames.size()) + " of " + std::to_string(count) + " seen)",
                            expected, *why);
    if (v == Verdict::kError) o.verdict = v;
    return Decided(std::move(o), obs.frames.size());
  }
  return {};
}

Evaluation EvaluateEvent(const proto::EventMatcher& m, const Observation& obs, const MatchContext& ctx) {
  if (!obs.events.empty()) {
    MatchOutcome o = MatchEventRecord(m, obs.events.front(), ctx);
    o.frames = {obs.events.front().record};
    return Decided(std::move(o), 0, 1);
  }
  Verdict v;
  if (std::optional<std::string> why = NoInputReason(obs, ctx, "Event Record", &v)) {
    MatchOutcome o = Missed(ctx.severity, *why, m.ShortDebugString(), *why);
    if (v == Verdict::kError) o.verdict = v;
    return Decided(std::move(o));
  }
  return {};
}

Evaluation EvaluateClosed(const proto::ConnectionClosed& m, const Observation& obs, const MatchContext& ctx) {
  const bool fin_ok = m.accept().empty() || std::count(m.accept().begin(), m.accept().end(), proto::Close::FIN);
  const bool rst_ok = m.accept().empty() || std::count(m.accept().begin(), m.accept().end(), proto::Close::RST);
  const std::string expected = std::string("the target closes the connection (") +
                               (fin_ok && rst_ok ? "FIN or RST"
                                : fin_ok         ? "FIN"
                                                 : "RST") +
                               ")";
  if (!obs.frames.empty()) {
    MatchOutcome o = Missed(
        ctx.severity, "the target sent " + SummarizeUlpdu(obs.frames[0].ulpdu, ctx.profile) + " instead of closing",
        expected, FrameText(obs.frames[0], ctx.profile));
    o.frames = {obs.frames[0].record};
    return Decided(std::move(o), 1);
  }
  if (obs.problem) {
    MatchOutcome o = Missed(ctx.severity, obs.problem->reason, expected, obs.problem->reason);
    if (obs.problem->verdict == Verdict::kError) o.verdict = Verdict::kError;
    return Decided(std::move(o));
  }
  if (obs.link == LinkState::kError) {
    return Decided(MakeOutcome(Verdict::kError, "transport error while waiting for the close", expected, ""));
  }
  if (obs.link == LinkState::kFin || obs.link == LinkState::kReset) {
    const bool fin = obs.link == LinkState::kFin;
    MatchOutcome o = MakeOutcome(Verdict::kPass, "", expected, fin ? "FIN" : "RST");
    o.choices.push_back({"close", fin ? "FIN" : "RST", fin, fin ? fin_ok : rst_ok, ""});
    if (fin && !fin_ok) return Decided(Missed(ctx.severity, "graceful close (FIN), expected a reset", expected, "FIN"));
    if (!fin && !rst_ok)
      return Decided(Missed(ctx.severity, "reset (RST), expected a graceful close (FIN)", expected, "RST"));
    if (!fin && fin_ok) {
      // REQ R5040-6.2.1-05: a graceful close is what the RFC recommends.
      if (m.rst_severity() != proto::LEVEL_UNSPECIFIED) {
        MatchOutcome miss = Missed(m.rst_severity(), "reset (RST) instead of a graceful close (FIN)", expected, "RST");
        miss.choices = o.choices;
        return Decided(std::move(miss));
      }
      o.notes.push_back("the target reset the connection (RST) instead of closing it gracefully");
    }
    return Decided(std::move(o));
  }
  if (obs.deadline_passed) {
    return Decided(Missed(ctx.severity,
                          "the connection is still open after " + std::to_string(ctx.timeout.count()) + " ms", expected,
                          "open"));
  }
  return {};
}

Evaluation EvaluateNothing(const proto::Nothing& m, const Observation& obs, const MatchContext& ctx) {
  const std::string expected = "nothing from the target for " + std::to_string(ctx.timeout.count()) + " ms" +
                               (m.allow_events() ? " (Event Records allowed)" : "");
  if (!obs.frames.empty()) {
    MatchOutcome o = Missed(ctx.severity, "the target sent " + SummarizeUlpdu(obs.frames[0].ulpdu, ctx.profile),
                            expected, FrameText(obs.frames[0], ctx.profile));
    o.frames = {obs.frames[0].record};
    return Decided(std::move(o), 1);
  }
  if (!m.allow_events() && !obs.events.empty()) {
    const ReceivedEvent& ev = obs.events.front();
    MatchOutcome o = Missed(ctx.severity, "the target sent " + (ev.event ? SummarizeEvent(*ev.event) : "an Event Send"),
                            expected, ev.event ? SummarizeEvent(*ev.event) : ev.error);
    o.frames = {ev.record};
    return Decided(std::move(o), 0, 1);
  }
  if (obs.problem) {
    MatchOutcome o = Missed(ctx.severity, obs.problem->reason, expected, obs.problem->reason);
    if (obs.problem->verdict == Verdict::kError) o.verdict = Verdict::kError;
    return Decided(std::move(o));
  }
  if (m.stay_open() && obs.link != LinkState::kOpen) {
    const std::string what = "the connection ended (" + std::string(LinkStateName(obs.link)) + ") during the wait";
    return Decided(Missed(ctx.severity, what, expected + " with the connection open", what));
  }
  if (obs.link != LinkState::kOpen || obs.deadline_passed) {
    MatchOutcome o = MakeOutcome(Verdict::kPass, "", expected, "nothing");
    if (obs.link != LinkState::kOpen) {
      o.notes.push_back("the connection ended (" + std::string(LinkStateName(obs.link)) + ") during the wait");
    }
    return Decided(std::move(o));
  }
  return {};
}

}  // namespace rdmapct::conformance
