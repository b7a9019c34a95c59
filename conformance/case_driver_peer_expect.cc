// The suite as the peer of the target's commands, part 2 (convention §7.5):
// answering the target's RDMA Read Requests, reading the Command Completed
// records, and the `commands` and `previous_commands` expectations. Part 1
// (the Command Record and the message checks) is case_driver_peer.cc.
#include <algorithm>

#include "conformance/case_driver_internal.h"
#include "conformance/frame_text.h"
#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::conformance {
namespace {

using wire::CommandType;

proto::BrokenAnswer::Kind BrokenKind(const proto::CommandsExpectation& m, uint32_t request) {
  for (const proto::BrokenAnswer& b : m.answer()) {
    if (b.request() == request) return b.kind();
  }
  return proto::BrokenAnswer::KIND_UNSPECIFIED;
}

std::string BrokenName(proto::BrokenAnswer::Kind k) { return proto::BrokenAnswer::Kind_Name(k); }

// What an answer's frames are called: "answer to <command>", or, unless
// `plain`, "broken answer (<kind>) to <command>".
std::string AnswerName(bool plain, proto::BrokenAnswer::Kind broken, const PeerCommand& p) {
  return (plain ? std::string("answer to ") : "broken answer (" + BrokenName(broken) + ") to ") + CommandText(p);
}

bool IsAtomic(CommandType t) { return wire::CommandKindOf(t) == wire::CommandKind::kAtomic; }
bool IsCommit(CommandType t) { return wire::CommandKindOf(t) == wire::CommandKind::kCommit; }

// What a Read of the suite's region returns: its memory at the Data Source.
wire::Bytes SourceOctets(const wire::Command& c, const wire::Bytes& memory) {
  const uint64_t from = c.remote_tagged_offset - kSuitePeerBase;
  wire::Bytes data(c.length, 0);
  for (uint32_t i = 0; i < c.length && from + i < memory.size(); ++i) data[i] = memory[from + i];
  return data;
}

}  // namespace

// One segment of an answer to the target's request, framed for the target;
// its frame is named `what` and summarized (every answer path builds its
// octets here).
wire::Bytes CaseDriver::FrameAnswer(const wire::RdmapSegment& seg, const std::string& what) {
  const wire::Bytes ulpdu = wire::EncodeSegment(seg);
  return conn_->FrameUlpdu(ulpdu, nullptr, what + ": " + SummarizeUlpdu(ulpdu, options_.profile));
}

// REQ R5041-5.2-02 R5041-5.2-09 R5040-5.2.2-02 R5040-5.2.2-09
// One Read Response: `data` to STag / TO, segmented at the suite's MULPDU.
wire::Bytes CaseDriver::FrameReadResponse(uint32_t stag, uint64_t to, wire::ByteSpan data, const std::string& what) {
  const std::size_t room = wire::Mulpdu(options_.emss, conn_->markers_to_target()) - wire::kDdpTaggedHeaderLength;
  wire::Bytes octets;
  std::size_t off = 0;
  do {
    const std::size_t n = std::min(room, data.size() - off);
    wire::RdmapSegment seg = wire::MakeReadResponse(stag, to + off, data.subspan(off, n));
    seg.ddp.last = off + n == data.size();
    const wire::Bytes b = FrameAnswer(seg, what);
    octets.insert(octets.end(), b.begin(), b.end());
    off += n;
  } while (off < data.size());
  return octets;
}

// The Read Response to one Read Request: the suite's memory at the Data
// Source, to the Data Sink; or the broken answer the case asks for.
wire::Bytes CaseDriver::ReadResponseOctets(PeerCommand& p, proto::BrokenAnswer::Kind broken) {
  const wire::Command& c = p.command;
  wire::Bytes data = SourceOctets(c, peer_.memory);
  p.expected = data;
  uint32_t stag = c.local_stag;
  uint64_t to = c.local_tagged_offset;
  switch (broken) {
    case proto::BrokenAnswer::WRONG_STAG:
      stag ^= 0x5A5A0000;
      break;  // never a STag the target advertised
    case proto::BrokenAnswer::TO_OUTSIDE_SINK:
      to += std::max<uint32_t>(c.length, 1);
      break;
    case proto::BrokenAnswer::TOO_MANY_OCTETS:
      data.resize(data.size() + 16, 0xA5);
      break;
    case proto::BrokenAnswer::TOO_FEW_OCTETS:
      data.resize(data.size() > 16 ? data.size() - 16 : 0);
      break;
    default:
      break;
  }
  const bool plain =
      broken == proto::BrokenAnswer::KIND_UNSPECIFIED || broken == proto::BrokenAnswer::UNSOLICITED_AFTER;
  return FrameReadResponse(stag, to, data, AnswerName(plain, broken, p));
}

// REQ R7306-5.2.2-S2 R7306-5.2.2-S3 R7306-5.2.2-02 R7306-5.2.2-03
// The Atomic Response: QN 3, the Request Identifier echoed, the suite's word
// before the operation (its region's atomics see big-endian words,
// convention §2.4), which the operation then changes. WRONG_REQUEST_ID and
// WRONG_QUEUE break the echo or the queue.
wire::Bytes CaseDriver::AtomicResponseOctets(PeerCommand& p, proto::BrokenAnswer::Kind broken) {
  const wire::Command& c = p.command;
  const uint64_t at = c.remote_tagged_offset - kSuitePeerBase;
  uint64_t old = 0;
  if (at + 8 <= peer_.memory.size()) old = wire::LoadBe64(peer_.memory.data() + at);
  uint64_t now = old;
  if (c.type == CommandType::kAtomicFetchAdd) {
    if (c.operand[1] == ~uint64_t{0}) now = old + c.operand[0];  // masked adds: not modelled (cases use no mask)
  } else if (((old ^ c.operand[2]) & c.operand[3]) == 0) {
    now = (old & ~c.operand[1]) | (c.operand[0] & c.operand[1]);
  }
  if (at + 8 <= peer_.memory.size()) wire::StoreBe64(peer_.memory.data() + at, now);
  p.expected.resize(8);
  wire::StoreBe64(p.expected.data(), old);
  const bool wrong_queue = broken == proto::BrokenAnswer::WRONG_QUEUE;
  const uint32_t id = broken == proto::BrokenAnswer::WRONG_REQUEST_ID ? ~p.request_id : p.request_id;
  wire::RdmapSegment seg =
      wire::MakeAtomicResponse(wrong_queue ? send_state_.next_msn[1] : send_state_.next_msn[3]++, {id, old});
  if (wrong_queue) seg.ddp.queue_number = 1;
  return FrameAnswer(seg, AnswerName(broken == proto::BrokenAnswer::KIND_UNSPECIFIED, broken, p));
}

// REQ RCOMMIT-3.1.1.2-01 RCOMMIT-3.1.2.2-01 RCOMMIT-3.1.3.2-01 RCOMMIT-3.1.2.2-02
// The COMMIT response on QN 3: Flush and Atomic Write Responses carry
// nothing, a Verify Response the CRC-32C of the suite's Data Sink range,
// most significant octet first (decisions D-D6). An Atomic Write stores its
// Data big-endian (the suite's region sees big-endian words, convention §2.4).
// WRONG_RESPONSE_TYPE answers with another COMMIT type's response.
wire::Bytes CaseDriver::CommitResponseOctets(PeerCommand& p, proto::BrokenAnswer::Kind broken) {
  const wire::Command& c = p.command;
  const uint32_t msn = send_state_.next_msn[3]++;
  p.expected.clear();
  wire::RdmapSegment seg = wire::MakeFlushResponse(msn);
  if (broken == proto::BrokenAnswer::WRONG_RESPONSE_TYPE) {
    if (c.type == CommandType::kFlush) seg = wire::MakeAtomicWriteResponse(msn);
  } else if (c.type == CommandType::kVerify) {
    p.expected.resize(4);
    wire::StoreBe32(p.expected.data(), wire::Crc32c(SourceOctets(c, peer_.memory)));
    seg = wire::MakeVerifyResponse(msn, p.expected);
  } else if (c.type == CommandType::kAtomicWrite) {
    const uint64_t at = c.remote_tagged_offset - kSuitePeerBase;
    if (at + 8 <= peer_.memory.size()) wire::StoreBe64(peer_.memory.data() + at, c.operand[0]);
    seg = wire::MakeAtomicWriteResponse(msn);
  }
  return FrameAnswer(seg, AnswerName(broken == proto::BrokenAnswer::KIND_UNSPECIFIED, broken, p));
}

// The answer to one request as the case asks for it; "" in peer_.case_error
// unless the kind does not fit the request.
wire::Bytes CaseDriver::AnswerOctets(PeerCommand& p, proto::BrokenAnswer::Kind broken) {
  using K = proto::BrokenAnswer;
  const bool atomic = IsAtomic(p.command.type);
  const bool commit = IsCommit(p.command.type);
  const bool fits = broken == K::KIND_UNSPECIFIED || (!commit && broken == K::UNSOLICITED_AFTER) ||
                    (commit && broken == K::WRONG_RESPONSE_TYPE) ||
                    (!commit && broken != K::WRONG_RESPONSE_TYPE &&
                     atomic == (broken == K::WRONG_REQUEST_ID || broken == K::WRONG_QUEUE));
  if (!fits) {
    peer_.case_error = "case error: answer kind " + BrokenName(broken) + " does not fit " + CommandText(p);
    return {};
  }
  if (commit) return CommitResponseOctets(p, broken);
  if (broken == K::ATOMIC_RESPONSE_INSTEAD) {
    // REQ R7306-5.2.2-S7: a response to a request never made (decisions D-C8).
    p.expected = SourceOctets(p.command, peer_.memory);
    return FrameAnswer(wire::MakeAtomicResponse(send_state_.next_msn[3]++, {0x13, 0}), AnswerName(false, broken, p));
  }
  wire::Bytes octets = atomic ? AtomicResponseOctets(p, broken) : ReadResponseOctets(p, broken);
  if (broken != K::UNSOLICITED_AFTER) return octets;
  // REQ R5040-5.2.2-08 R7306-5.2.2-S7: the same answer again, nothing outstanding.
  wire::Bytes again;
  if (atomic) {
    again = FrameAnswer(
        wire::MakeAtomicResponse(send_state_.next_msn[3]++, {p.request_id, wire::LoadBe64(p.expected.data())}),
        "unsolicited repeat of the answer to " + CommandText(p));
  } else {
    wire::Bytes flipped = p.expected;
    for (uint8_t& b : flipped) b = static_cast<uint8_t>(~b);
    again = FrameReadResponse(p.command.local_stag, p.command.local_tagged_offset, flipped,
                              "unsolicited repeat (data complemented) of the answer to " + CommandText(p));
  }
  octets.insert(octets.end(), again.begin(), again.end());
  return octets;
}

// REQ R5040-5.2.2-08 R5040-5.5-R11
// The Read Responses of the held Reads at `at` and `at + 1` swapped: the
// later Read's first (it matches no outstanding Read's turn), then this one's.
wire::Bytes CaseDriver::OutOfOrderOctets(std::size_t at) {
  const auto is_read = [&](std::size_t i) {
    return i < peer_.unanswered.size() && peer_.commands[peer_.unanswered[i]].command.type == CommandType::kRdmaRead;
  };
  if (!is_read(at) || !is_read(at + 1)) {
    peer_.case_error = "case error: OUT_OF_ORDER needs this Read Request and a later one held together";
    return {};
  }
  PeerCommand& first = peer_.commands[peer_.unanswered[at]];
  PeerCommand& second = peer_.commands[peer_.unanswered[at + 1]];
  wire::Bytes octets = ReadResponseOctets(second, proto::BrokenAnswer::OUT_OF_ORDER);
  const wire::Bytes then = ReadResponseOctets(first, proto::BrokenAnswer::KIND_UNSPECIFIED);
  octets.insert(octets.end(), then.begin(), then.end());
  second.answered = true;
  return octets;
}

// Answers every Read Request held, in request order (R5040-5.2.2-07 asks the
// same of a responder). A correct answer is recorded as what the target's
// Data Sink now holds (convention §4: the suite's own record of its memory).
void CaseDriver::AnswerReads(const proto::CommandsExpectation& m, Clock::time_point deadline) {
  wire::Bytes octets;
  for (std::size_t at = 0; at < peer_.unanswered.size(); ++at) {
    PeerCommand& p = peer_.commands[peer_.unanswered[at]];
    const proto::BrokenAnswer::Kind broken = BrokenKind(m, p.read_request);
    if (broken != proto::BrokenAnswer::KIND_UNSPECIFIED) peer_.broken_sent = true;
    if (broken == proto::BrokenAnswer::NO_ANSWER) break;
    const wire::Bytes b = broken == proto::BrokenAnswer::OUT_OF_ORDER ? OutOfOrderOctets(at) : AnswerOctets(p, broken);
    if (!peer_.case_error.empty()) return;
    octets.insert(octets.end(), b.begin(), b.end());
    p.answered = true;
    const bool placed =
        broken == proto::BrokenAnswer::KIND_UNSPECIFIED || broken == proto::BrokenAnswer::UNSOLICITED_AFTER;
    if (p.local && p.command.type == CommandType::kRdmaRead && placed) {
      memory_.Write(
          MemoryWrite{p.local->memory_object, p.local->ObjectOffsetOf(p.command.local_tagged_offset), p.expected});
    }
    if (broken != proto::BrokenAnswer::KIND_UNSPECIFIED) break;
  }
  peer_.unanswered.erase(std::remove_if(peer_.unanswered.begin(), peer_.unanswered.end(),
                                        [&](std::size_t i) { return peer_.commands[i].answered; }),
                         peer_.unanswered.end());
  if (!octets.empty()) conn_->Write(octets, deadline);
}

// REQ R5040-5.5-R15b R5040-5.5-R19 R5040-5.2.2-04 R5041-4.3-07 R7306-5.4-R7
// The next Command Completed record: the next command in Command Id order,
// success, the octets it moved; a Read only after the suite answered it.
std::string CaseDriver::CheckCompletion(const ReceivedEvent& got) {
  if (!got.event) return "target broke the test-ULP convention: " + got.error;
  const wire::EventRecord& ev = *got.event;
  if (ev.type != wire::EventType::kCommandCompleted) {
    return "an Event Record of type " + std::to_string(static_cast<int>(ev.type)) + " (" + SummarizeEvent(ev) +
           ") where a Command Completed record was due";
  }
  if (ev.sequence != got.msn) {
    return "Sequence Number " + std::to_string(ev.sequence) + " differs from the Send's MSN " +
           std::to_string(got.msn) + " (R5041-4.3-07)";
  }
  if (std::count(peer_.qn0_msns.begin(), peer_.qn0_msns.end(), got.msn)) {
    return "the record's Send reuses QN 0 MSN " + std::to_string(got.msn) + " (R5041-4.3-07)";
  }
  peer_.qn0_msns.push_back(got.msn);
  std::sort(peer_.qn0_msns.begin(), peer_.qn0_msns.end());
  const std::optional<wire::Completion> c = wire::CompletionFromValue(ev.invalidated_stag, ev.value);
  PeerCommand& p = peer_.commands[peer_.next_completion];
  if (!c || c->command_id != p.command.command_id) {
    return "a completion of command " + std::to_string(ev.invalidated_stag) + " where " + CommandText(p) +
           " completes next (R5040-5.5-R15b)";
  }
  if (c->type != p.command.type)
    return "the completion of " + CommandText(p) + " names " + std::string(wire::CommandTypeName(c->type));
  if (c->status != wire::CompletionStatus::kSuccess) {
    return CommandText(p) + " completed with status " + std::string(wire::CompletionStatusName(c->status)) +
           " (native " + std::to_string(c->native_status) + ")";
  }
  if (p.command.type == CommandType::kRdmaRead && !p.answered) {
    return CommandText(p) + " completed before the suite sent its Read Response (R5040-5.5-R19)";
  }
  if (IsAtomic(p.command.type) && !p.answered) {
    return CommandText(p) + " completed before the suite sent its Atomic Response (R7306-5.4-R7)";
  }
  if (IsCommit(p.command.type) && !p.answered) {
    return CommandText(p) + " completed before the suite sent its response (RCOMMIT-3.1.1.3-01, RCOMMIT-3.1.2.3-01)";
  }
  if (ev.length != p.expected.size() || ev.digest != wire::Crc32c(p.expected)) {
    return "the completion of " + CommandText(p) + " reports " + std::to_string(ev.length) + " octets with digest " +
           Hex32(ev.digest) + ", not the " + std::to_string(p.expected.size()) + " octets it moved (digest " +
           Hex32(wire::Crc32c(p.expected)) + ")";
  }
  ++peer_.next_completion;
  return {};
}

// Frames and records the target sent so far for the commands; "" or the first problem.
std::string CaseDriver::TakePeerInput(MatchOutcome& o) {
  const Observation obs = conn_->Observe();
  std::size_t frames = 0;
  std::string problem;
  for (const ReceivedFrame& f : obs.frames) {
    if (!NextMessageCommand()) break;  // later frames belong to later steps
    ++frames;
    o.frames.push_back(f.record);
    if (problem = CheckTargetFrame(f); !problem.empty()) break;
  }
  std::size_t events = 0;
  for (const ReceivedEvent& e : obs.events) {
    if (!problem.empty() || peer_.next_completion >= peer_.commands.size()) break;
    ++events;
    o.frames.push_back(e.record);
    problem = CheckCompletion(e);
  }
  conn_->Consume(frames, events);
  if (problem.empty() && obs.problem) problem = obs.problem->reason;
  if (problem.empty() && obs.link != LinkState::kOpen && !peer_.broken_sent) {
    problem =
        "the target closed the connection (" + std::string(LinkStateName(obs.link)) + ") with commands unfinished";
  }
  return problem;
}

Evaluation CaseDriver::Commands(const proto::CommandsExpectation& m, const MatchContext& ctx,
                                Clock::time_point deadline) {
  Evaluation ev;
  ev.decided = true;
  MatchOutcome& o = ev.outcome;
  o.expected = "the target carries out commands " + std::to_string(peer_.next_completion + 1) + ".." +
               std::to_string(peer_.commands.size()) + " as the RFCs require and reports each completion";
  auto fail = [&](const std::string& why) {
    o.verdict = VerdictForMiss(ctx.severity);
    const bool sent = why.rfind("a ", 0) == 0 || why.rfind("an ", 0) == 0 || why.rfind("command ", 0) == 0;
    o.reason = (sent ? "the target sent " : "") + why;
    return ev;
  };
  while (true) {
    if (!peer_.case_error.empty()) {
      o.verdict = Verdict::kError;
      o.reason = peer_.case_error;
      return ev;
    }
    if (std::string problem = TakePeerInput(o); !problem.empty()) return fail(problem);
    if (peer_.next_completion >= peer_.commands.size() || peer_.broken_sent) {
      if (peer_.broken_sent)
        o.notes.push_back("the suite's broken answer is sent; the next step judges the target's reaction");
      return ev;
    }
    if (Clock::now() >= deadline) {
      PeerCommand* next = NextMessageCommand();
      return fail(next ? "no message for " + CommandText(*next) + " within the time allowed"
                       : "no completion for " + CommandText(peer_.commands[peer_.next_completion]) +
                             " within the time allowed");
    }
    // Answer the Reads held once the target falls quiet (so a target that
    // would exceed the Suite IRD shows it first).
    if (conn_->Pump(std::min(Clock::now() + std::chrono::milliseconds(20), deadline))) continue;
    if (!peer_.unanswered.empty()) {
      AnswerReads(m, deadline);
      continue;
    }
    if (!conn_->Pump(deadline)) {
      TakePeerInput(o);
      if (peer_.next_completion >= peer_.commands.size()) return ev;
      PeerCommand* next = NextMessageCommand();
      return fail(next ? "no message for " + CommandText(*next) + " (the target fell silent)"
                       : "no completion for " + CommandText(peer_.commands[peer_.next_completion]) +
                             " (the target fell silent)");
    }
  }
}

// REQ R5040-6.2.1-03 R5040-7.1-01
Evaluation CaseDriver::PreviousCommands(const proto::PreviousCommands& m, const MatchContext& ctx) {
  Evaluation ev;
  ev.decided = true;
  MatchOutcome& o = ev.outcome;
  o.expected = "Commands block " + m.ShortDebugString();
  if (!have_advertisement_ || !adv_.commands) {
    o.verdict = Verdict::kSkip;
    o.reason = "the target lacks test-ULP 1.1 command records (Advertisement flag 0x0020)";
    return ev;
  }
  const wire::CommandCapabilities& c = *adv_.commands;
  o.actual = "completed " + std::to_string(c.completed) + ", failed " + std::to_string(c.failed) + " (first: command " +
             std::to_string(c.failed_command_id) + "), flushed " + std::to_string(c.flushed);
  std::vector<std::string> bad;
  if (m.has_completed() && c.completed != m.completed()) bad.push_back("completed " + std::to_string(c.completed));
  if (m.has_failed() && c.failed != m.failed()) bad.push_back("failed " + std::to_string(c.failed));
  if (m.has_flushed() && c.flushed != m.flushed()) bad.push_back("flushed " + std::to_string(c.flushed));
  if (m.has_incomplete() && uint32_t{c.failed} + c.flushed != m.incomplete()) {
    bad.push_back(std::to_string(c.failed + c.flushed) + " incomplete (failed + flushed)");
  }
  if (!bad.empty()) {
    o.verdict = VerdictForMiss(ctx.severity);
    o.reason = "the previous connection's commands: " + JoinLines(bad);
  }
  return ev;
}

}  // namespace rdmapct::conformance
