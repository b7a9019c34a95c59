// The case driver's expectations (case_driver.h): resolve what the case
// refers to, wait (bounded) until the matcher decides, read memory back.
#include <algorithm>

#include "conformance/case_driver_internal.h"
#include "conformance/frame_text.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::conformance {
namespace {

std::string ExpectKind(const proto::Expect& e) {
  switch (e.what_case()) {
    case proto::Expect::kFrame:
      return "expect frame";
    case proto::Expect::kTerminate:
      return "expect terminate";
    case proto::Expect::kEvent:
      return "expect event";
    case proto::Expect::kMemory:
      return "expect memory";
    case proto::Expect::kClosed:
      return "expect closed";
    case proto::Expect::kNothing:
      return "expect nothing";
    case proto::Expect::kReadResponses:
      return "expect read_responses";
    case proto::Expect::kMpaReply:
      return "expect mpa_reply";
    case proto::Expect::kAnyOf:
      return "expect any_of";
    case proto::Expect::kMpaRequest:
      return "expect mpa_request";
    case proto::Expect::kCommands:
      return "expect commands";
    case proto::Expect::kPreviousCommands:
      return "expect previous_commands";
    case proto::Expect::kAtomicResponses:
      return "expect atomic_responses";
    case proto::Expect::kSerialAtomics:
      return "expect serial_atomics";
    default:
      return "expect";
  }
}

// No alternative of an any_of matched: the least severe miss, every reason.
Evaluation CombineMisses(const std::vector<Evaluation>& results) {
  Evaluation e;
  e.decided = true;
  e.outcome.verdict = Verdict::kError;
  e.outcome.reason = "no alternative matched:";
  e.outcome.expected = "any of:";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const MatchOutcome& o = results[i].outcome;
    e.outcome.verdict = MilderMiss(e.outcome.verdict, o.verdict);
    const std::string n = std::to_string(i + 1) + ") ";
    e.outcome.reason += " " + n + o.reason + (i + 1 < results.size() ? ";" : "");
    e.outcome.expected += "\n  " + n + o.expected;
    e.outcome.actual += (i ? "\n" : "") + n + o.actual;
    e.outcome.frames.insert(e.outcome.frames.end(), o.frames.begin(), o.frames.end());
    e.frames_used = std::max(e.frames_used, results[i].frames_used);
    e.events_used = std::max(e.events_used, results[i].events_used);
  }
  std::sort(e.outcome.frames.begin(), e.outcome.frames.end());
  e.outcome.frames.erase(std::unique(e.outcome.frames.begin(), e.outcome.frames.end()), e.outcome.frames.end());
  return e;
}

// An 8-octet word in the target's atomic byte order (convention §3.1 flag 0x0001).
wire::Bytes Word(uint64_t v, bool little_endian) {
  wire::Bytes b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (little_endian ? 8 * i : 56 - 8 * i));
  return b;
}

}  // namespace

MatchContext CaseDriver::ContextFor(const proto::Expect& e, std::string& error) const {
  MatchContext ctx;
  ctx.profile = options_.profile;
  ctx.severity = Level(e.severity());
  ctx.timeout = e.timeout_ms() ? std::chrono::milliseconds(e.timeout_ms()) : options_.expect_timeout;
  auto label = [&](const std::string& name) -> const SentMessage* {
    auto it = labels_.find(name);
    if (it == labels_.end()) error = "no earlier send labelled '" + name + "'";
    return it == labels_.end() ? nullptr : &it->second;
  };
  if (e.has_terminate()) {
    ctx.offending =
        e.terminate().offending().empty() ? (last_send_ ? &*last_send_ : nullptr) : label(e.terminate().offending());
  }
  if (e.has_frame() && e.frame().has_payload()) {
    std::optional<wire::Bytes> p = BuildPayload(e.frame().payload(), nullptr, error);
    if (p) ctx.expected_data = *p;
  }
  if (e.has_event()) {
    const proto::EventMatcher& m = e.event();
    if (!m.data_of().empty()) {
      if (const SentMessage* s = label(m.data_of())) ctx.expected_data = s->ulp_payload;
    } else if (m.has_data()) {
      std::optional<wire::Bytes> p = BuildPayload(m.data(), nullptr, error);
      if (p) ctx.expected_data = *p;
    }
    if (m.has_invalidated_stag()) {
      if (auto ref = ResolveRef(m.invalidated_stag(), regions_, error)) ctx.invalidated_stag = ref->stag;
    }
  }
  return ctx;
}

Evaluation CaseDriver::WaitFor(const Evaluator& eval, Clock::time_point deadline) {
  bool over = false;
  while (true) {
    const Observation obs = conn_->Observe();
    const bool passed = over || Clock::now() >= deadline;
    Evaluation e = eval(obs, passed);
    if (e.decided) {
      conn_->Consume(e.frames_used, e.events_used);
      return e;
    }
    if (passed) {
      e.decided = true;
      e.outcome = MakeOutcome(Verdict::kError, "internal error: an expectation did not decide at its deadline", "", "");
      return e;
    }
    if (!conn_->Pump(deadline)) over = true;
  }
}

std::optional<CaseDriver::Evaluator> CaseDriver::EvaluatorFor(const proto::Expect& e, Clock::time_point start,
                                                              Clock::time_point& deadline, std::string& error) {
  auto ctx = std::make_shared<MatchContext>(ContextFor(e, error));
  if (!error.empty()) return std::nullopt;
  const Clock::time_point mine = std::min(start + ctx->timeout, case_deadline_);
  deadline = mine;
  auto wrap = [ctx, mine](auto fn) {
    return Evaluator([ctx, mine, fn](const Observation& obs, bool passed) {
      Observation o = obs;
      o.deadline_passed = passed || Clock::now() >= mine;
      return fn(o, *ctx);
    });
  };
  switch (e.what_case()) {
    case proto::Expect::kFrame:
      return wrap([&m = e.frame()](const Observation& o, const MatchContext& c) { return EvaluateFrame(m, o, c); });
    case proto::Expect::kTerminate:
      return wrap(
          [&m = e.terminate()](const Observation& o, const MatchContext& c) { return EvaluateTerminate(m, o, c); });
    case proto::Expect::kEvent:
      return wrap([&m = e.event()](const Observation& o, const MatchContext& c) { return EvaluateEvent(m, o, c); });
    case proto::Expect::kClosed:
      return wrap([&m = e.closed()](const Observation& o, const MatchContext& c) { return EvaluateClosed(m, o, c); });
    case proto::Expect::kNothing:
      return wrap([&m = e.nothing()](const Observation& o, const MatchContext& c) { return EvaluateNothing(m, o, c); });
    case proto::Expect::kMpaReply:
      // The Reply is already in (the handshake); any_of may offer several.
      if (!request_) {
        error = "no MPA Request was sent";
        return std::nullopt;
      }
      return wrap([this, &m = e.mpa_reply()](const Observation&, const MatchContext& c) {
        Evaluation r;
        r.decided = true;
        r.outcome = MatchMpaReply(m, handshake_, request_->frame, c);
        return r;
      });
    case proto::Expect::kAnyOf:
      break;
    default:
      error = ExpectKind(e) + " is not supported inside any_of";
      return std::nullopt;
  }
  // Each alternative is judged strictly (MUST unless it says otherwise), so
  // that in a SHOULD-level case an alternative that misses is no match; a
  // miss of them all is graded at the any_of's own level.
  auto strict =
      std::make_shared<std::vector<proto::Expect>>(e.any_of().alternative().begin(), e.any_of().alternative().end());
  for (proto::Expect& alt : *strict) {
    if (alt.severity() == proto::LEVEL_UNSPECIFIED) alt.set_severity(proto::MUST);
  }
  std::vector<Evaluator> alternatives;
  for (const proto::Expect& alt : *strict) {
    Clock::time_point d;
    std::optional<Evaluator> ev = EvaluatorFor(alt, start, d, error);
    if (!ev) return std::nullopt;
    alternatives.push_back(std::move(*ev));
    deadline = std::max(deadline, d);
  }
  const Verdict miss = VerdictForMiss(ctx->severity);
  // The first alternative that matches (pass or warn) decides.
  return Evaluator([alternatives, strict, miss](const Observation& obs, bool passed) {
    std::vector<Evaluation> results;
    bool all_decided = true;
    for (std::size_t i = 0; i < alternatives.size(); ++i) {
      Evaluation r = alternatives[i](obs, passed);
      if (r.decided && (r.outcome.verdict == Verdict::kPass || r.outcome.verdict == Verdict::kWarn)) {
        r.outcome.notes.push_back("alternative " + std::to_string(i + 1) + " of " +
                                  std::to_string(alternatives.size()) + " matched");
        return r;
      }
      all_decided = all_decided && r.decided;
      results.push_back(std::move(r));
    }
    if (!all_decided) return Evaluation{};
    Evaluation combined = CombineMisses(results);
    if (combined.outcome.verdict == Verdict::kFail) combined.outcome.verdict = miss;
    return combined;
  });
}

StepResult CaseDriver::DoExpect(const proto::Expect& e, int index) {
  StepResult sr;
  sr.action = ExpectKind(e);
  sr.severity = Level(e.severity());
  if (!e.requirement().empty()) sr.requirements.assign(e.requirement().begin(), e.requirement().end());
  std::string error;
  const MatchContext ctx = ContextFor(e, error);
  Evaluation ev;
  const Clock::time_point start = Clock::now();
  Clock::time_point deadline = std::min(start + ctx.timeout, case_deadline_);
  if (!error.empty()) {
    ev.outcome = MakeOutcome(Verdict::kError, "case error: " + error, "", "");
  } else if (e.has_mpa_reply()) {
    ev.outcome = request_ ? MatchMpaReply(e.mpa_reply(), handshake_, request_->frame, ctx)
                          : MakeOutcome(Verdict::kError, "no MPA Request was sent", "", "");
  } else if (e.has_mpa_request()) {
    if (conn_ && !request_)
      ev.outcome = MatchMpaRequest(e.mpa_request(), listen_, ctx);
    else
      ev.outcome = MakeOutcome(Verdict::kError, "case error: no listen step before expect mpa_request", "", "");
  } else if (!conn_) {
    ev.outcome = MakeOutcome(Verdict::kError, "no connection", "", "");
  } else if (e.has_memory()) {
    ev = Memory(e.memory(), ctx, deadline, error);
  } else if (e.has_read_responses()) {
    ev = ReadResponses(e.read_responses(), ctx, deadline, error);
  } else if (e.has_commands()) {
    ev = Commands(e.commands(), ctx, deadline);
  } else if (e.has_previous_commands()) {
    ev = PreviousCommands(e.previous_commands(), ctx);
  } else if (e.has_atomic_responses() || e.has_serial_atomics()) {
    ev = Atomics(e, ctx, deadline, error);
  } else if (e.has_nothing()) {
    ev = Nothing(e.nothing(), index, ctx, start, sr.notes);
  } else if (std::optional<Evaluator> eval = EvaluatorFor(e, start, deadline, error)) {
    ev = WaitFor(*eval, deadline);
  }
  if (!error.empty() && ev.outcome.verdict == Verdict::kPass) {
    ev.outcome = MakeOutcome(Verdict::kError, "case error: " + error, "", "");
  }
  if (ev.outcome.verdict != Verdict::kPass && ev.outcome.verdict != Verdict::kSkip && Clock::now() >= case_deadline_) {
    ev.outcome.verdict = Verdict::kError;
    ev.outcome.reason = "the case exceeded its time budget of " + std::to_string(options_.case_timeout.count()) +
                        " ms (" + ev.outcome.reason + ")";
  }
  // A wait that ran out while the target had started an FPDU and stalled:
  // that is what the target did, so the reason says it.
  if ((ev.outcome.verdict == Verdict::kFail || ev.outcome.verdict == Verdict::kError) && conn_ &&
      Clock::now() >= deadline) {
    if (const std::string partial = conn_->IncompleteFpdu(); !partial.empty()) ev.outcome.reason += "; " + partial;
  }
  MatchOutcome& o = ev.outcome;
  sr.verdict = o.verdict;
  sr.reason = std::move(o.reason);
  sr.expected = std::move(o.expected);
  sr.actual = std::move(o.actual);
  sr.notes.insert(sr.notes.end(), o.notes.begin(), o.notes.end());
  sr.choices = std::move(o.choices);
  sr.frames = std::move(o.frames);
  return sr;
}

Evaluation CaseDriver::Memory(const proto::MemoryExpectation& m, const MatchContext& ctx, Clock::time_point deadline,
                              std::string& error) {
  Evaluation ev;
  ev.decided = true;
  std::optional<ResolvedRef> at = ResolveRef(m.at(), regions_, error);
  if (!at) return ev;
  if (!at->region) {
    error = "a memory expectation names its place by region";
    return ev;
  }
  const wire::AdvertisedRegion& r = *at->region;
  const uint64_t object_offset = r.ObjectOffsetOf(at->tagged_offset);
  const wire::AdvertisedRegion* view = m.read_via() != proto::REGION_UNSPECIFIED
                                           ? regions_.Find(m.read_via())
                                           : wire::FindReadableView(adv_, r.memory_object, object_offset, m.length());
  const std::string what = "memory at " + proto::Region_Name(m.at().region()) + " TO " + Hex64(at->tagged_offset) +
                           " (" + std::to_string(m.length()) + " octets)";
  if (!view) {
    ev.outcome = MakeOutcome(Verdict::kSkip, "no plain readable region covers the " + what, "", "");
    return ev;
  }
  const uint64_t read_to = view->base_tagged_offset + (object_offset - view->object_offset);
  std::optional<wire::Bytes> expected;
  std::string expected_text;
  switch (m.content_case()) {
    case proto::MemoryExpectation::kUnchanged:
      expected = wire::RegionPattern(*view, read_to, m.length());
      expected_text = "unchanged from the convention's pattern";
      break;
    case proto::MemoryExpectation::kHex:
      expected = ParseHexString(m.hex());
      break;
    case proto::MemoryExpectation::kData:
      expected = BuildPayload(m.data(), &*at, error);
      break;
    case proto::MemoryExpectation::kDataOf:
      if (auto it = labels_.find(m.data_of()); it != labels_.end()) expected = it->second.ulp_payload;
      expected_text = "what send '" + m.data_of() + "' wrote";
      break;
    case proto::MemoryExpectation::kWord:
      expected = Word(m.word(), adv_.flags & wire::kFlagLittleEndianAtomics);
      break;
    case proto::MemoryExpectation::kAsRecorded:
      expected = memory_.Expected(r, at->tagged_offset, m.length());
      expected_text = "what the suite's record says: the pattern, the case's Writes and the Read Responses it answered";
      break;
    default:
      break;
  }
  if (!expected) {
    if (error.empty()) error = "the memory expectation has no usable content";
    return ev;
  }
  // The suite's own Read Request: any Sink STag/TO, the responses are parsed here.
  ReadRequestSent req{kSuiteSinkStag, send_state_.next_sink_to, m.length(), *expected, what};
  send_state_.next_sink_to += std::max<uint32_t>(m.length(), 1);
  const wire::Bytes ulpdu = wire::EncodeSegment(wire::MakeReadRequest(
      send_state_.next_msn[1]++, {req.sink_stag, req.sink_tagged_offset, req.size, view->stag, read_to}));
  const wire::Bytes octets =
      conn_->FrameUlpdu(ulpdu, nullptr, "memory read-back: " + SummarizeUlpdu(ulpdu, options_.profile));
  conn_->Write(octets, deadline);
  ev = WaitFor(
      [&](const Observation& obs, bool passed) {
        Observation o = obs;
        o.deadline_passed = passed;
        return EvaluateReadResponses({&req, 1}, o, ctx);
      },
      deadline);
  ev.outcome.expected = what + ": " + (expected_text.empty() ? HexString(*expected, 64) : expected_text) +
                        "\nread back through STag " + Hex32(view->stag) + " TO " + Hex64(read_to) + "\n" +
                        ev.outcome.expected;
  return ev;
}

Evaluation CaseDriver::ReadResponses(const proto::ReadResponses& m, const MatchContext& ctx, Clock::time_point deadline,
                                     std::string& error) {
  Evaluation ev;
  ev.decided = true;
  if (m.last_request() > reads_.size() || m.first_request() == 0) {
    error = "read_responses names Read Requests " + std::to_string(m.first_request()) + ".." +
            std::to_string(m.last_request()) + ", " + std::to_string(reads_.size()) + " were sent on this connection";
    return ev;
  }
  std::vector<ReadRequestSent> requests;
  for (uint32_t i = m.first_request() - 1; i < m.last_request(); ++i) {
    ReadRequestSent r = reads_[i].request;
    if (!m.skip_data_check() && reads_[i].source) {
      r.expected = memory_.Expected(*reads_[i].source, reads_[i].source_tagged_offset, r.size);
    }
    requests.push_back(std::move(r));
  }
  return WaitFor(
      [&](const Observation& obs, bool passed) {
        Observation o = obs;
        o.deadline_passed = passed;
        return EvaluateReadResponses(requests, o, ctx);
      },
      deadline);
}

}  // namespace rdmapct::conformance
