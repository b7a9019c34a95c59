// The case driver's fence (docs/target-convention.md §2.5, fence.h): over a
// transport that waits in wall time, an `expect nothing` ends as soon as
// RDMAP ordering proves that every reaction to what the suite sent has
// arrived, instead of after its whole quiet window.
//
// What is sent, in one TCP write after the case's messages:
//   - when the step does not allow Event Records: a fence Send (QN 0, the
//     next MSN, 4 octets). A Send is Delivered only after every earlier
//     message (R5040-5.5-R10) and the test ULP posts Event Records in
//     completion order (convention §6.1), so its record comes after every
//     record the earlier messages caused. A fence Read Response does not
//     order Event Records: a stack answers the Read at once and its ULP
//     posts records later (Linux siw). The fence Send takes a receive
//     buffer, a QN 0 MSN and an event sequence number, so it is sent only
//     when none of the connection's later steps sends on QN 0 or checks an
//     event.
//   - a zero-length RDMA Read Request (QN 1, the next MSN, Sink STag
//     kFenceSinkStag, Sink TO the fence's number): its zero-length Read
//     Response (R5040-5.2.1-15) comes after every Terminate and response
//     that earlier messages caused (R5040-5.5-R12, R5040-5.2.2-07). It is
//     not one of the case's Read Requests (`read_responses` numbering).
// The wait ends, as before, on any frame or Event Record (a miss), a close
// or the deadline; it also ends, as a pass, when every fence has answered.
// A wait no fence can end is cut to the target's reaction time (Nothing).
#include <algorithm>

#include "conformance/case_driver_internal.h"
#include "conformance/frame_text.h"
#include "conformance/report_common.h"
#include "proto/message_type.h"
#include "reference/wire/opcodes.h"

namespace rdmapct::conformance {
namespace {

bool SendsOnQn0(const proto::Send& s) {
  if (!s.has_message()) return true;  // raw octets: anything
  if (s.message().type() == proto::Message::TYPE_UNSPECIFIED) return true;
  const wire::OpcodeInfo& info = wire::InfoFor(proto::OpcodeOf(s.message().type()));
  return !info.tagged && info.queue_number == 0;
}

bool UsesEvents(const proto::Expect& e) {
  switch (e.what_case()) {
    case proto::Expect::kEvent:
    case proto::Expect::kCommands:
    case proto::Expect::kPreviousCommands:
    case proto::Expect::kAnyOf:
    case proto::Expect::kAtomicResponses:
    case proto::Expect::kSerialAtomics:
      return true;
    default:
      return false;
  }
}

}  // namespace

// True when no step after `index` on this connection sends on QN 0 or
// looks at Event Records: a fence Send then shifts nothing the case checks.
bool CaseDriver::LaterStepsLeaveQn0Alone(int index) const {
  for (int i = index + 1; i < case_.proto.step_size(); ++i) {
    const proto::Step& s = case_.proto.step(i);
    if (s.has_connect() || s.has_listen()) return true;
    if (s.has_target() || s.has_reply()) return false;
    if (s.has_send() && SendsOnQn0(s.send())) return false;
    if (s.has_expect() && UsesEvents(s.expect())) return false;
  }
  return true;
}

// "" when this connection's stream and the case let a fence be answered.
std::string CaseDriver::FenceBlocked(const proto::Nothing& m) const {
  if (m.stay_open()) return "the step checks that the connection stays open for the whole wait";
  if (conn_->link() != LinkState::kOpen || conn_->fin_sent()) return "the connection is closing";
  if (!have_advertisement_ || !request_ || !handshake_.reply)
    return "the suite is not the MPA Initiator in Full Operation";
  if (!held_.empty()) return "a held send has not gone out";
  if (UsesCommands()) return "the case commands the target (convention §7)";
  for (const proto::Step& s : case_.proto.step()) {
    if (s.connection() != 0) return "the case has concurrent connections";
  }
  if (std::string why = conn_->fence().Blocked(); !why.empty()) return why;
  // A fence Read takes one of the target's IRD credits (R5040-6.1-05): the
  // Advertisement's IRD, or the responder IRD of an RFC 6581 Reply when it
  // is lower (0x3FFF: not negotiated), with the suite's ORD from its Request.
  uint32_t ird = adv_.ird;
  const wire::IrdOrdOutcome o = wire::NegotiateIrdOrd(request_->frame, *handshake_.reply);
  if (o.applies) {
    if (o.responder_ird != wire::kIrdOrdNotNegotiated) ird = std::min<uint32_t>(ird, o.responder_ird);
    if (o.initiator_ord != wire::kIrdOrdNotNegotiated) ird = std::min<uint32_t>(ird, o.initiator_ord);
  }
  if (conn_->fence().RequestsOutstanding() + 1 > ird) return "a fence Read would exceed the target's IRD";
  return {};
}

// "" when a fence Send may go out now (step `index` checks Event Records).
std::string CaseDriver::SendFenceBlocked(int index) const {
  const std::optional<uint32_t> msn = conn_->fence().NextQn0Msn();
  if (!msn || *msn != send_state_.next_msn[0]) return "the QN 0 messages so far are not all whole and in MSN order";
  if (*msn > adv_.receive_buffer_count || adv_.receive_buffer_size < sizeof(kFenceSendPayload)) {
    return "no receive buffer is left for a fence Send";
  }
  if (!LaterStepsLeaveQn0Alone(index)) return "a later step sends on QN 0 or checks Event Records";
  return {};
}

// Sends the fences of an `expect nothing` step; nullopt (with a note why
// not, over a wall-time transport) when the step waits its whole window.
std::optional<CaseDriver::FenceWait> CaseDriver::SendFences(const proto::Nothing& m, int index,
                                                            std::vector<std::string>& notes) {
  if (!options_.fence || !conn_ || !conn_->WaitsInWallTime()) return std::nullopt;
  std::string why = FenceBlocked(m);
  if (why.empty() && !m.allow_events()) why = SendFenceBlocked(index);
  if (!why.empty()) {
    notes.push_back("not fenced (" + why + "): the step waits its whole window");
    return std::nullopt;
  }
  FenceTracker& fence = conn_->fence();
  FenceWait w{fence.reads_sent() + 1, fence.sends_answered(), {}};
  const std::size_t first_record = run_.result.frames.size();
  wire::Bytes octets;
  if (!m.allow_events()) {
    const uint32_t msn = send_state_.next_msn[0]++;
    const wire::Bytes ulpdu = wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, msn, kFenceSendPayload));
    fence.ExpectSendFence();
    ++w.sends;
    octets = conn_->FrameUlpdu(ulpdu, nullptr, "fence Send: " + SummarizeUlpdu(ulpdu, options_.profile));
    notes.push_back("fence: a 4-octet Send (QN 0 MSN " + std::to_string(msn) +
                    ") orders the target's Event Records; its record is the suite's");
  }
  // A zero-length Read's Source STag and TO are never validated
  // (R5040-5.2.1-14); a readable region's are named all the same.
  const wire::AdvertisedRegion* any = adv_.regions.empty() ? nullptr : &adv_.regions.front();
  for (const wire::AdvertisedRegion& r : adv_.regions) {
    if (r.access & wire::kAccessRemoteRead) {
      any = &r;
      break;
    }
  }
  const uint64_t to = fence.NextReadFence();
  const uint32_t msn = send_state_.next_msn[1]++;
  const wire::Bytes ulpdu = wire::EncodeSegment(
      wire::MakeReadRequest(msn, {kFenceSinkStag, to, 0, any ? any->stag : 0, any ? any->base_tagged_offset : 0}));
  const wire::Bytes read = conn_->FrameUlpdu(ulpdu, nullptr, "fence: " + SummarizeUlpdu(ulpdu, options_.profile));
  octets.insert(octets.end(), read.begin(), read.end());
  notes.push_back("fence: a zero-length RDMA Read Request (QN 1 MSN " + std::to_string(msn) + ", Sink STag " +
                  Hex32(kFenceSinkStag) + " TO " + std::to_string(to) +
                  ") orders the target's frames; its Read Response is the suite's, not one of the case's");
  conn_->Write(octets, Deadline(options_.expect_timeout));
  for (std::size_t i = first_record; i < run_.result.frames.size(); ++i) w.records.push_back(i);
  return w;
}

Evaluation CaseDriver::FencedNothing(const proto::Nothing& m, const MatchContext& ctx, const FenceWait& w,
                                     Clock::time_point deadline) {
  const FenceTracker& fence = conn_->fence();
  Evaluation ev = WaitFor(
      [&](const Observation& obs, bool passed) {
        Observation o = obs;
        o.deadline_passed = passed;
        Evaluation r = EvaluateNothing(m, o, ctx);
        const bool answered = fence.reads_answered() >= w.reads && fence.sends_answered() >= w.sends;
        if (r.decided && o.deadline_passed && r.outcome.verdict == Verdict::kPass) {
          // A late answer is still taken out of the queues when it comes;
          // until then the fence Read holds one of the target's IRD credits.
          if (!answered) r.outcome.notes.push_back("the fence was not answered within the step's window");
          // A wrong answer orders nothing: the step waited its window.
          if (!fence.broken().empty()) r.outcome.notes.push_back("the fence was answered wrongly: " + fence.broken());
        }
        if (!fence.broken().empty()) return r;
        if (r.decided || !answered) return r;
        r.decided = true;
        r.outcome = MakeOutcome(Verdict::kPass, "", "nothing from the target before the fence's answer", "nothing");
        r.outcome.notes.push_back("the fence answered: every reaction to the earlier messages has arrived");
        return r;
      },
      deadline);
  // The report and the capture show the fence's FPDUs with the step.
  ev.outcome.frames.insert(ev.outcome.frames.begin(), w.records.begin(), w.records.end());
  return ev;
}

// An `expect nothing`: ended at its fences' answer where RDMAP ordering
// allows one; else, over a transport that waits in wall time, it waits its
// window cut to the target's reaction time (reaction_clock.h), except a
// step that checks the connection stays open: a close comes on the target's
// own timers, not as a reaction.
Evaluation CaseDriver::Nothing(const proto::Nothing& m, int index, MatchContext ctx, Clock::time_point start,
                               std::vector<std::string>& notes) {
  if (std::optional<FenceWait> w = SendFences(m, index, notes)) {
    return FencedNothing(m, ctx, *w, std::min(start + ctx.timeout, case_deadline_));
  }
  if (options_.adaptive_quiet && conn_->WaitsInWallTime() && !m.stay_open()) {
    const std::chrono::milliseconds quiet = reactions_->Quiet(ctx.timeout);
    if (quiet < ctx.timeout) {
      notes.push_back("quiet: " + std::to_string(quiet.count()) + " ms of the step's " +
                      std::to_string(ctx.timeout.count()) + " ms, " + std::to_string(reactions_->multiple()) +
                      " times the target's slowest reaction in this run (" +
                      DurationText(std::chrono::duration_cast<std::chrono::microseconds>(reactions_->Slowest())) +
                      ") and at least " + std::to_string(reactions_->floor().count()) +
                      " ms (--quiet fixed waits the whole window)");
      ctx.timeout = quiet;
    }
  }
  const Clock::time_point deadline = std::min(start + ctx.timeout, case_deadline_);
  return WaitFor(
      [&](const Observation& obs, bool passed) {
        Observation o = obs;
        o.deadline_passed = passed || Clock::now() >= deadline;
        return EvaluateNothing(m, o, ctx);
      },
      deadline);
}

}  // namespace rdmapct::conformance
