// Read Responses (matchers.h EvaluateReadResponses) and the MPA Reply
// expectation (MatchMpaReply).
#include <algorithm>

#include "conformance/frame_text.h"
#include "conformance/matchers.h"
#include "reference/wire/opcodes.h"

namespace rdmapct::conformance {
namespace {

// Reassembly of the Read Response message answering one request.
struct Assembly {
  const ReadRequestSent* request = nullptr;
  wire::Bytes data;
  std::vector<bool> placed;
  uint64_t octets = 0;
};

// Adds one frame; "" when it fits, else why it does not. Sets `complete`.
std::string Place(Assembly& a, const ReceivedFrame& frame, const MatchContext& ctx, bool& complete) {
  const ReadRequestSent& req = *a.request;
  auto view = wire::DecodeRdmapSegment(frame.ulpdu, ctx.profile);
  if (!view.ok() || !view->opcode_known || view->opcode() != wire::Opcode::kRdmaReadResponse ||
      !view->ddp.header.tagged) {
    return "expected a Read Response for " + req.what + ", got " + SummarizeUlpdu(frame.ulpdu, ctx.profile);
  }
  const wire::DdpSegmentHeader& h = view->ddp.header;
  const wire::ByteSpan p = view->ddp.payload;
  // REQ R5040-4.5-01: a Read Response names the Data Sink STag and TO of its request.
  if (h.stag != req.sink_stag) {
    return "Read Response STag " + Hex32(h.stag) + " is not the SinkSTag " + Hex32(req.sink_stag) + " of " + req.what;
  }
  const uint64_t begin = req.sink_tagged_offset, end = begin + req.size;
  if (h.tagged_offset < begin || h.tagged_offset > end || p.size() > end - h.tagged_offset) {
    return "Read Response TO " + Hex64(h.tagged_offset) + " + " + std::to_string(p.size()) +
           " octets lies outside [SinkTO, SinkTO + RDMARDSZ) of " + req.what;
  }
  const std::size_t at = h.tagged_offset - begin;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (a.placed[at + i]) return "Read Response octet at TO " + Hex64(h.tagged_offset + i) + " sent twice";
    a.placed[at + i] = true;
    a.data[at + i] = p[i];
  }
  a.octets += p.size();
  if (h.last) {
    if (h.tagged_offset + p.size() != end) return "L=1 on a Read Response segment that does not end " + req.what;
    if (a.octets != req.size) {
      return "L=1 after " + std::to_string(a.octets) + " of " + std::to_string(req.size) + " octets of " + req.what;
    }
    complete = true;
  }
  return {};
}

std::string ReadExpectation(std::span<const ReadRequestSent> requests) {
  std::string s = "Read Responses, in order, for:";
  for (const ReadRequestSent& r : requests) {
    s += "\n    " + r.what + ": SinkSTag " + Hex32(r.sink_stag) + " SinkTO " + Hex64(r.sink_tagged_offset) +
         " RDMARDSZ " + std::to_string(r.size);
  }
  return s;
}

MatchOutcome Miss(const MatchContext& ctx, std::string reason, std::string expected, std::string actual) {
  MatchOutcome o;
  o.verdict = VerdictForMiss(ctx.severity);
  if (o.verdict == Verdict::kPass)
    o.notes.push_back("MAY: " + reason);
  else
    o.reason = std::move(reason);
  o.expected = std::move(expected);
  o.actual = std::move(actual);
  return o;
}

}  // namespace

Evaluation EvaluateReadResponses(std::span<const ReadRequestSent> requests, const Observation& obs,
                                 const MatchContext& ctx, std::vector<wire::Bytes>* data) {
  Evaluation e;
  const std::string expected = ReadExpectation(requests);
  std::vector<std::size_t> records;
  std::string actual;
  std::size_t r = 0;
  Assembly a;
  auto start = [&] {
    a = Assembly{&requests[r], wire::Bytes(requests[r].size), std::vector<bool>(requests[r].size), 0};
  };
  if (!requests.empty()) start();
  if (data) data->clear();
  for (std::size_t i = 0; i < obs.frames.size() && r < requests.size(); ++i) {
    records.push_back(obs.frames[i].record);
    actual += (actual.empty() ? "" : "\n") + SummarizeUlpdu(obs.frames[i].ulpdu, ctx.profile);
    bool complete = false;
    if (std::string bad = Place(a, obs.frames[i], ctx, complete); !bad.empty()) {
      e.outcome = Miss(ctx, bad, expected, actual + "\nraw ULPDU: " + HexString(obs.frames[i].ulpdu, 96));
      e.outcome.frames = records;
      e.decided = true;
      e.frames_used = i + 1;
      return e;
    }
    if (!complete) continue;
    if (requests[r].expected) {
      if (std::string diff = MemoryDifference(*requests[r].expected, a.data); !diff.empty()) {
        e.outcome =
            Miss(ctx, requests[r].what + ": " + diff.substr(0, diff.find('\n')), expected, actual + "\n" + diff);
        e.outcome.frames = records;
        e.decided = true;
        e.frames_used = i + 1;
        return e;
      }
    }
    if (data) data->push_back(std::move(a.data));
    if (++r < requests.size()) start();
    e.frames_used = i + 1;
  }
  e.outcome.expected = expected;
  e.outcome.actual = actual;
  e.outcome.frames = records;
  if (r == requests.size()) {
    e.decided = true;
    return e;
  }
  const std::string progress = requests[r].what + ": " + std::to_string(a.octets) + " of " +
                               std::to_string(requests[r].size) + " octets received";
  std::string why;
  Verdict verdict = VerdictForMiss(ctx.severity);
  if (obs.problem) {
    why = obs.problem->reason;
    if (obs.problem->verdict == Verdict::kError) verdict = Verdict::kError;
  } else if (obs.link != LinkState::kOpen) {
    why = "the connection ended (" + std::string(LinkStateName(obs.link)) + ")";
  } else if (obs.deadline_passed) {
    why = "timed out after " + std::to_string(ctx.timeout.count()) + " ms";
  } else {
    return Evaluation{};  // wait for more
  }
  e.outcome = Miss(ctx, "incomplete Read Response (" + progress + "): " + why, expected, actual);
  if (verdict == Verdict::kError) e.outcome.verdict = verdict;
  e.outcome.frames = records;
  e.decided = true;
  e.frames_used = obs.frames.size();
  return e;
}

namespace {

// The RFC 6581 IRD/ORD word of a Reply against what the case expects: IRD,
// ORD and the RTR choices the case accepts.
void CheckEnhancedReplyData(const proto::MpaReplyMatcher& m, const wire::MpaStartupFrame& r,
                            std::vector<std::string>& bad) {
  if ((m.has_ird() || m.has_ord() || !m.rtr().empty()) && !r.enhanced_data) {
    bad.push_back("no RFC 6581 IRD/ORD word in the Reply");
    return;
  }
  if (!r.enhanced_data) return;
  const wire::EnhancedIrdOrd& e = *r.enhanced_data;
  if (m.has_ird() && m.ird() != e.ird)
    bad.push_back("IRD is " + std::to_string(e.ird) + ", expected " + std::to_string(m.ird()));
  if (m.has_ord() && m.ord() != e.ord)
    bad.push_back("ORD is " + std::to_string(e.ord) + ", expected " + std::to_string(m.ord()));
  if (m.rtr().empty()) return;
  auto accepted = [&](proto::Rfc6581::Rtr t) { return std::count(m.rtr().begin(), m.rtr().end(), t) > 0; };
  const bool none = !e.send_rtr && !e.write_rtr && !e.read_rtr;
  if ((none && !accepted(proto::Rfc6581::RTR_NONE)) || (e.send_rtr && !accepted(proto::Rfc6581::RTR_SEND)) ||
      (e.write_rtr && !accepted(proto::Rfc6581::RTR_WRITE)) || (e.read_rtr && !accepted(proto::Rfc6581::RTR_READ))) {
    bad.push_back(std::string("RTR flags B=") + (e.send_rtr ? "1" : "0") + " C=" + (e.write_rtr ? "1" : "0") +
                  " D=" + (e.read_rtr ? "1" : "0") + " are not an accepted choice");
  }
}

}  // namespace

MatchOutcome MatchMpaReply(const proto::MpaReplyMatcher& m, const HandshakeOutcome& h,
                           const wire::MpaStartupFrame& request, const MatchContext& ctx) {
  const std::string expected = "MPA Reply " + m.ShortDebugString();
  if (!h.reply) {
    const std::string what = !h.reply_error.empty() ? "MPA Reply does not decode: " + h.reply_error
                             : h.timed_out
                                 ? "no MPA Reply before the deadline"
                                 : "the target closed (" + std::string(LinkStateName(h.link)) + ") without a Reply";
    if (m.or_closed() && h.reply_error.empty() && !h.timed_out) return MakeOutcome(Verdict::kPass, "", expected, what);
    return Miss(ctx, what, expected, what);
  }
  const wire::MpaStartupFrame& r = *h.reply;
  std::vector<std::string> bad;
  auto check = [&](bool set, uint64_t want, uint64_t got, const char* name) {
    if (set && want != got)
      bad.push_back(std::string(name) + " is " + std::to_string(got) + ", expected " + std::to_string(want));
  };
  check(m.has_accepted(), m.accepted(), !r.reject, "accepted (R=0)");
  // R = 1 on a Reply that otherwise accepts (it carries the Advertisement
  // that only an accepting test ULP sends, convention §3): say so, so the
  // report does not read as a plain refusal. Linux siw echoes the Request's
  // R bit this way (docs/reports/siw, S5).
  if (m.has_accepted() && m.accepted() && r.reject && h.advertisement) {
    bad.back() +=
        std::string(": R = 1 in a Reply that carries the target's Advertisement, as an accepting Reply does") +
        (request.reject ? " (the Request's R bit echoed?)" : "");
  }
  check(m.has_revision(), m.revision(), r.revision, "Rev");
  check(m.has_markers(), m.markers(), r.marker_required, "M");
  check(m.has_crc(), m.crc(), r.crc_required, "C");
  check(m.has_enhanced(), m.enhanced(), r.enhanced, "S");
  CheckEnhancedReplyData(m, r, bad);
  check(m.has_advertisement(), m.advertisement(), h.advertisement, "Advertisement present");
  if (h.early_octets > 0) {
    bad.push_back("the target sent " + std::to_string(h.early_octets) +
                  " octet(s) before the Request was complete (R5044-7.1.2-R02a)");
  }
  // REQ R5044-7.1.1-15 R6581-6-02
  if (m.res_zero()) {
    const unsigned res = r.res | (r.revision < 2 && r.enhanced ? 0x10u : 0u);
    if (res != 0) bad.push_back("Res is " + std::to_string(res) + ", expected 0 (sent as zero)");
  }
  const std::string actual = SummarizeStartupFrame(r);
  if (bad.empty()) {
    MatchOutcome o = MakeOutcome(Verdict::kPass, "", expected, actual);
    if (h.record) o.frames = {*h.record};
    return o;
  }
  MatchOutcome o = Miss(ctx, "MPA Reply: " + bad.front(), expected, actual + "\n" + JoinLines(bad));
  if (h.record) o.frames = {*h.record};
  return o;
}

}  // namespace rdmapct::conformance
