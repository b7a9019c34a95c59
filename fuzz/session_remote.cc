#include "fuzz/session_remote.h"

#include <algorithm>
#include <optional>
#include <set>
#include <thread>

#include "fuzz/session_builder.h"
#include "fuzz/session_twin.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"
#include "targets/reaction_clock.h"

namespace rdmapct::fuzz {

using wire::Bytes;
using wire::ByteSpan;
using Clock = std::chrono::steady_clock;

namespace {

class Link {
 public:
  Link(targets::Transport& t, const RemoteOptions& o) : t_(t), o_(o) {}

  // Reads until `quiet` passes with nothing new, or `limit`; the octets
  // since the last call.
  Bytes Drain(std::chrono::milliseconds quiet, std::chrono::milliseconds limit) {
    Bytes got;
    const auto end = Clock::now() + limit;
    while (!ended_ && Clock::now() < end) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      const targets::IoStatus st = t_.Read(got, 65536, std::min(quiet, left));
      if (st == targets::IoStatus::kTimeout) break;
      if (st != targets::IoStatus::kOk) ended_ = st;
      if (got.size() > o_.max_octets) break;
    }
    return got;
  }

  // Until `pred(all octets so far)` or the deadline.
  Bytes ReadUntil(std::chrono::milliseconds limit, const std::function<bool(const Bytes&)>& pred) {
    Bytes got;
    const auto end = Clock::now() + limit;
    while (!ended_ && !pred(got) && Clock::now() < end) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      const targets::IoStatus st = t_.Read(got, 65536, left);
      if (st == targets::IoStatus::kTimeout) break;
      if (st != targets::IoStatus::kOk) ended_ = st;
    }
    return got;
  }

  bool Write(ByteSpan b) {
    if (ended_) return false;
    const targets::IoStatus st = t_.Write(b);
    if (st != targets::IoStatus::kOk) ended_ = st;
    return st == targets::IoStatus::kOk;
  }

  std::optional<targets::IoStatus> ended() const { return ended_; }

 private:
  targets::Transport& t_;
  const RemoteOptions& o_;
  std::optional<targets::IoStatus> ended_;
};

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "nothing" : s;
}

proto::SessionAction FenceAction(uint32_t k) {
  proto::SessionAction a;
  proto::SessionMessage& m = *a.mutable_message();
  m.set_type(proto::READ_REQUEST);
  proto::SessionOverrides& o = *m.mutable_overrides();
  o.set_read_message_size(0);
  o.set_sink_stag(kFenceSinkStag);
  o.set_sink_tagged_offset(k);
  return a;
}

// Deframes one direction's octets from the target (the live one, or the
// twin's) and notes fence answers and Terminates.
class FenceWatch {
 public:
  FenceWatch(wire::Profile profile, bool crc, bool markers)
      : profile_(profile), deframer_(wire::MpaDeframerConfig{.crc_enabled = crc, .markers_enabled = markers}) {}

  void Feed(ByteSpan octets) {
    if (broken_ || octets.empty()) return;
    auto st = deframer_.Feed(octets, [&](const wire::MpaFpdu& f) {
      auto d = wire::DecodeRdmapSegment(f.ulpdu, profile_);
      if (!d.ok() || !d.value().opcode_known) return;
      const wire::RdmapMessageView& v = d.value();
      if (v.opcode() == wire::Opcode::kTerminate) terminated_ = true;
      const wire::DdpSegmentHeader& h = v.ddp.header;
      if (v.opcode() == wire::Opcode::kRdmaReadResponse && h.tagged && h.last && h.stag == kFenceSinkStag) {
        answered_.insert(h.tagged_offset);
      }
    });
    if (!st.ok()) broken_ = true;
  }
  bool Answered(uint64_t fence) const { return answered_.count(fence) != 0; }
  // Nothing more will answer a fence: a Terminate, or octets that no longer deframe.
  bool Over() const { return terminated_ || broken_; }
  // A fence answered `took` after its write: how long the target takes to react.
  void Timed(Clock::duration took) { reactions_.Observe(took); }
  // The quiet that ends an answer no fence can end (a write that stops
  // inside an FPDU): four times the session's slowest reaction (its MPA
  // Reply, its fence answers), 1 ms at least, `settle` at most. A target
  // that reacts to octets at all does so within its own reaction time, so
  // a slow target waits longer and a fast one is not held for 30 ms.
  std::chrono::milliseconds Quiet(std::chrono::milliseconds settle) const { return reactions_.Quiet(settle); }

 private:
  wire::Profile profile_;
  wire::MpaDeframer deframer_;
  std::set<uint64_t> answered_;
  bool terminated_ = false;
  bool broken_ = false;
  targets::ReactionClock reactions_{4, std::chrono::milliseconds(1)};
};

// Whether the target replies to the session's profile with default
// connection options (Rev 1, CRCs, no Markers).
bool AnswersPlainRequest(const proto::FuzzSession& s, targets::TargetConnector& connector,
                         const RemoteOptions& options) {
  std::string error;
  std::unique_ptr<targets::Transport> t = connector.Connect(options.connect_timeout, error);
  if (!t) return false;
  Link link(*t, options);
  proto::FuzzSession plain;
  plain.mutable_connection()->set_profile(s.connection().profile());
  link.Write(wire::EncodeMpaStartupFrame(BuildRequest(plain)));
  const Bytes got = link.ReadUntil(options.reply_timeout, [](const Bytes& b) {
    return wire::DecodeMpaStartupFrame(b, {wire::MpaFrameKind::kReply}).ok();
  });
  t->Abort();
  return wire::DecodeMpaStartupFrame(got, {wire::MpaFrameKind::kReply}).ok();
}

// The fence index a write ends with, if it ends with one.
std::optional<uint64_t> FenceOf(const proto::FuzzSession& s, const SessionWrite& w) {
  if (w.action >= static_cast<std::size_t>(s.action_size())) return std::nullopt;
  const proto::SessionAction& a = s.action(static_cast<int>(w.action));
  if (!a.has_message() || !a.message().has_overrides() || a.message().overrides().sink_stag() != kFenceSinkStag) {
    return std::nullopt;
  }
  return a.message().overrides().sink_tagged_offset();
}

// What ends the wait after write k: the fence's answer (when the twin got
// one), the close (when the twin closed), nothing (the twin said nothing),
// or a quiet `settle`.
struct StepPlan {
  std::optional<uint64_t> fence;
  bool close = false;
  bool quiet = false;  // no wait at all
};

StepPlan PlanStep(const proto::FuzzSession& fenced, const SessionWrite& w, const TwinRun& twin, std::size_t k,
                  FenceWatch& twin_watch) {
  StepPlan plan;
  if (k >= twin.writes.size()) return plan;  // the twin had closed: settle
  const TwinWrite& tw = twin.writes[k];
  twin_watch.Feed(tw.out);
  const std::optional<uint64_t> fence = FenceOf(fenced, w);
  if (fence && twin_watch.Answered(*fence))
    plan.fence = fence;
  else if (tw.closed)
    plan.close = true;
  else if (tw.out.empty())
    plan.quiet = true;
  return plan;
}

}  // namespace

proto::FuzzSession FencedSession(const proto::FuzzSession& s) {
  proto::FuzzSession out = s;
  out.clear_action();
  uint32_t k = 0;
  for (int i = 0; i < s.action_size(); ++i) {
    *out.add_action() = s.action(i);
    if (s.action(i).delivery().hold() && i + 1 < s.action_size()) continue;
    out.mutable_action(out.action_size() - 1)->mutable_delivery()->set_hold(true);
    *out.add_action() = FenceAction(k++);
  }
  return out;
}

// The run's deadline (the session is cut) or the session's time cap (a
// resource finding) passed.
bool OverCaps(const RemoteOptions& options, Clock::time_point session_end, std::size_t step, RemoteResult& result) {
  if (options.run_deadline && Clock::now() >= *options.run_deadline) {
    result.cut = true;
    return true;
  }
  if (options.session_time.count() == 0 || Clock::now() < session_end) return false;
  result.oracles.findings.push_back(
      {"resource", step, "session ran over " + std::to_string(options.session_time.count()) + " ms"});
  return true;
}

// No MPA Reply to the session's Request: down, or a divergence.
RemoteResult& NoReply(Link& link, targets::Transport& transport, const proto::FuzzSession& s,
                      targets::TargetConnector& connector, const RemoteOptions& options, const TwinRun& twin,
                      bool silent, RemoteResult& result) {
  std::vector<Finding>& findings = result.oracles.findings;
  if (!link.ended()) {
    // Silence: the target may be down or restarting.
    result.connect_failed = silent;
    findings.push_back(
        {"no-answer", 0, "no MPA Reply within " + std::to_string(options.reply_timeout.count()) + " ms"});
  } else if (twin.connected) {
    // A close is an answer (a Responder may refuse a Request it does not
    // accept, RFC 5044 §7.1.2) and, as the reference accepted the Request,
    // a divergence - unless the target closes whatever it is sent (a port
    // forwarder in front of a dead VM accepts and resets): then it is down.
    transport.Abort();
    if (AnswersPlainRequest(s, connector, options)) {
      findings.push_back({"differential", 0, "target closed without an MPA Reply; fault-free reference: accepted"});
    } else {
      findings.push_back({"no-answer", 0, "closed without an MPA Reply, also for a plain Request"});
    }
  }
  return result;
}

// One write's answer: to its fence (or the close), else to settle ms of quiet.
Bytes ReadAnswer(Link& link, const StepPlan& plan, FenceWatch& watch, const RemoteOptions& options,
                 RemoteResult& result) {
  Bytes out;
  if (plan.fence || plan.close) {
    ++result.fenced_steps;
    const auto written = Clock::now();
    std::size_t fed = 0;
    out = link.ReadUntil(options.answer_timeout, [&](const Bytes& got) {
      watch.Feed(ByteSpan(got).subspan(fed));
      fed = got.size();
      return got.size() > options.max_octets || (plan.fence && (watch.Answered(*plan.fence) || watch.Over()));
    });
    if (plan.fence && watch.Answered(*plan.fence)) watch.Timed(Clock::now() - written);
  } else if (!plan.quiet) {
    ++result.settled_steps;
    out = link.Drain(watch.Quiet(options.settle), options.answer_timeout);
    watch.Feed(out);
  }
  return out;
}

// The session's verdict against the fault-free twin: crash, hang or differential.
void Judge(const TwinRun& twin, const Bytes& target_octets, bool markers,
           std::optional<targets::IoStatus> ended_before_fin, std::size_t step, const RemoteOptions& options,
           const SessionContext& ctx, RemoteResult& result) {
  std::vector<Finding>& findings = result.oracles.findings;
  result.target_reaction = ReactionSummary(target_octets, ctx.profile, ctx.crc, markers);
  if (!options.differential || !twin.connected) return;
  Bytes ref_octets;
  for (const TwinWrite& w : twin.writes) ref_octets.insert(ref_octets.end(), w.out.begin(), w.out.end());
  ref_octets.insert(ref_octets.end(), twin.after_fin.begin(), twin.after_fin.end());
  result.reference_reaction = ReactionSummary(ref_octets, twin.ctx.profile, twin.ctx.crc, markers);
  const bool terminated = std::any_of(result.target_reaction.begin(), result.target_reaction.end(),
                                      [](const std::string& l) { return l.rfind("Terminate", 0) == 0; });
  const bool ended_early = ended_before_fin && !twin.closed() && !terminated;
  if (ended_early && *ended_before_fin != targets::IoStatus::kClosed) {
    findings.push_back({"crash", step,
                        std::string("connection ") + targets::IoStatusName(*ended_before_fin) +
                            " without a Terminate; the reference stays open"});
  } else if (ended_early) {
    findings.push_back(
        {"crash", step, "connection closed without a Terminate before the suite's FIN; the reference stays open"});
  } else if (target_octets.empty() && !ref_octets.empty() && !ended_before_fin) {
    findings.push_back(
        {"hang", step,
         "no octets at all from the target; the reference answered " + Joined(result.reference_reaction)});
  } else if (result.target_reaction != result.reference_reaction) {
    findings.push_back(
        {"differential", step,
         "target: " + Joined(result.target_reaction) + "; fault-free reference: " + Joined(result.reference_reaction)});
  }
}

// The session's MPA Request and what the target answered, timed.
struct Startup {
  Bytes octets;
  Clock::duration took;
};

Startup ExchangeStartup(Link& link, const wire::MpaStartupFrame& request, const RemoteOptions& options) {
  const auto asked = Clock::now();
  link.Write(wire::EncodeMpaStartupFrame(request));
  Bytes octets = link.ReadUntil(options.reply_timeout, [](const Bytes& b) {
    return wire::DecodeMpaStartupFrame(b, {wire::MpaFrameKind::kReply}).ok();
  });
  return {std::move(octets), Clock::now() - asked};
}

// Refused or unreachable: the target may be down or restarting.
RemoteResult& ConnectFailed(const std::string& error, RemoteResult& result) {
  result.connect_failed = true;
  result.oracles.findings.push_back({"no-answer", 0, "connection refused or unreachable: " + error});
  return result;
}

RemoteResult RunSessionRemote(const proto::FuzzSession& session, targets::TargetConnector& connector,
                              const RemoteOptions& options) {
  RemoteResult result;
  std::vector<Finding>& findings = result.oracles.findings;
  std::string error;
  std::unique_ptr<targets::Transport> t = connector.Connect(options.connect_timeout, error);
  if (!t) return ConnectFailed(error, result);
  Link link(*t, options);
  const proto::FuzzSession s = options.fence ? FencedSession(session) : session;
  const wire::MpaStartupFrame request = BuildRequest(s);
  const Startup startup = ExchangeStartup(link, request, options);
  const Bytes& reply_octets = startup.octets;
  auto reply = wire::DecodeMpaStartupFrame(reply_octets, {wire::MpaFrameKind::kReply});
  // The fence needs the twin even without the differential oracle.
  const TwinRun twin = options.differential || options.fence ? RunTwin(s, options.target) : TwinRun{};
  if (!reply.ok()) return NoReply(link, *t, s, connector, options, twin, reply_octets.empty(), result);
  result.replied = true;
  auto adv = wire::DecodeAdvertisementFromPrivateData(reply.value().private_data, false);
  if (reply.value().reject || !adv.ok()) {
    // Not a convention target for this Request: nothing to fuzz (the
    // conformance suite reports setup errors).
    t->Abort();
    return result;
  }
  const SessionContext ctx = MakeSessionContext(s, request, reply.value(), adv.value());
  InvariantChecker checker(ctx.profile, ctx.crc, request.marker_required, ctx.markers_to_target);
  Bytes target_octets(
      reply_octets.begin() + static_cast<std::ptrdiff_t>(std::min(reply_octets.size(), reply.value().EncodedSize())),
      reply_octets.end());
  checker.Received(target_octets, 0, findings);

  if (options.pause_after_reply.count() > 0) std::this_thread::sleep_for(options.pause_after_reply);
  FenceWatch watch(ctx.profile, ctx.crc, request.marker_required);
  watch.Timed(startup.took);  // the Reply: the target's first reaction time
  FenceWatch twin_watch(ctx.profile, ctx.crc, request.marker_required);
  std::size_t step = 1;
  const auto session_end = Clock::now() + options.session_time;
  bool complete = false;  // the last write's answer is known to be complete
  for (const SessionWrite& w : BuildSessionWrites(s, ctx)) {
    if (OverCaps(options, session_end, step, result)) {
      t->Abort();
      return result;
    }
    checker.Sent(w.octets);
    if (!link.Write(w.octets)) break;
    const StepPlan plan = options.fence ? PlanStep(s, w, twin, step - 1, twin_watch) : StepPlan{};
    const Bytes out = ReadAnswer(link, plan, watch, options, result);
    complete = plan.fence || plan.close || link.ended();
    checker.Received(out, step++, findings);
    target_octets.insert(target_octets.end(), out.begin(), out.end());
  }
  // The rest of the answers, unless a fence or the close showed that the
  // last write's answer is complete, then the suite's FIN and the target's
  // close. Fenced, this quiet wait is left only for a last write whose
  // fence the twin could not answer (an FPDU left incomplete): once per
  // session, so that a target that closes on its own (a crash) is seen to.
  if (!complete) ++result.settled_steps;
  const auto final_quiet = options.fence ? watch.Quiet(options.settle) : options.settle * 4;
  Bytes out = complete ? Bytes{} : link.Drain(final_quiet, options.answer_timeout);
  const std::optional<targets::IoStatus> ended_before_fin = link.ended();
  if (!ended_before_fin) {
    t->ShutdownWrite();
    const Bytes tail = link.ReadUntil(options.answer_timeout, [](const Bytes&) { return false; });
    out.insert(out.end(), tail.begin(), tail.end());
  }
  checker.Received(out, step, findings);
  target_octets.insert(target_octets.end(), out.begin(), out.end());
  result.oracles.steps = step + 1;
  t->Abort();

  Judge(twin, target_octets, request.marker_required, ended_before_fin, step, options, ctx, result);
  return result;
}

}  // namespace rdmapct::fuzz
