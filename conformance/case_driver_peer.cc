// The case driver as the peer of the target's own operations (test-ULP
// convention 1.1, docs/target-convention.md §7): the `target` step sends a
// Command Record; `expect { commands {} }` checks every message the target
// sends for the commands against the RFCs and against what each command
// named, answers the target's RDMA Read Requests from the suite's own memory
// (or breaks an answer on purpose), and reads the Command Completed records;
// `expect { previous_commands {} }` reads the Commands block.
//
// The suite's answers and memory come from its own record of the suite
// region (the convention's pattern, Memory Object 0xFFFF, plus what the
// target wrote there), never from the reference model.
#include <algorithm>

#include "conformance/case_driver_internal.h"
#include "conformance/frame_text.h"
#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::conformance {
namespace {

using wire::CommandType;

// The requirement ids that put a COMMIT request on QN 1.
const char* CommitQueueIds(CommandType t) {
  switch (t) {
    case CommandType::kFlush:
      return "RCOMMIT-3.1.1.1-01, RCOMMIT-3.1.1.3-02";
    case CommandType::kVerify:
      return "RCOMMIT-3.1.2.1-01, RCOMMIT-3.1.2.3-02";
    default:
      return "RCOMMIT-3.1.3.1-01";
  }
}

}  // namespace

std::string CommandText(const PeerCommand& p) {
  return "command " + std::to_string(p.command.command_id) + " (" + std::string(wire::CommandTypeName(p.command.type)) +
         ", " + std::to_string(p.command.length) + " octets)";
}

namespace {

// The header rules every message of the target obeys.
std::string CommonHeaderProblem(const wire::RdmapMessageView& v) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  if (h.ddp_version != wire::kDdpVersion) return "DV " + std::to_string(h.ddp_version) + ", not 1 (R5041-4.1-09)";
  if (h.rsvd != 0) return "DDP Rsvd " + std::to_string(h.rsvd) + ", not zero (R5041-4.1-11)";
  if (v.ctrl.rdma_version != wire::kRdmaVersionIetf) {
    return "RV " + std::to_string(v.ctrl.rdma_version) + ", not 1 (R5040-4.1-08)";
  }
  if (v.ctrl.rsv != 0) return "RDMAP Rsv " + std::to_string(v.ctrl.rsv) + ", not zero (R5040-4.1-12)";
  return {};
}

// The rules the target's single-segment untagged messages share (Read
// Request, Immediate Data, Atomic and COMMIT requests): T = 0, their queue,
// one segment with MO 0 and L = 1. Each message cites its own requirements.
struct UntaggedRules {
  const char* tagged_ids;   // cited when T = 1
  uint32_t queue;           // the QN it must use
  std::string queue_ids;    // follows "on QN <n>"
  const char* segment_ids;  // cited when not MO 0 and L = 1
};

std::string UntaggedMessageProblem(const wire::DdpSegmentHeader& h, const std::string& who, const UntaggedRules& r) {
  if (h.tagged) return who + "with T = 1 (" + r.tagged_ids + ")";
  if (h.queue_number != r.queue) return who + "on QN " + std::to_string(h.queue_number) + r.queue_ids;
  if (!h.last || h.message_offset != 0) return who + "not one segment with MO 0 and L = 1 (" + r.segment_ids + ")";
  return {};
}

// A QN 1 request whose MSN is not the next one the suite expects.
std::string Qn1MsnProblem(uint32_t msn, uint32_t want, const std::string& who, const char* ids) {
  if (msn == want) return {};
  return who + "with MSN " + std::to_string(msn) + ", not " + std::to_string(want) + " (" + ids + ")";
}

}  // namespace

// ---------------------------------------------------------------------------
// The `target` step: one Command Record in a Send.

bool CaseDriver::UsesCommands() const {
  for (const proto::Step& s : case_.proto.step()) {
    if (s.has_target()) return true;
  }
  return false;
}

wire::SuiteRequestExtension CaseDriver::SuiteExtension(const proto::Connect& c) const {
  wire::SuiteRequestExtension ext{static_cast<uint16_t>(c.has_suite_ird() ? c.suite_ird() : kDefaultSuiteIrd),
                                  {{kSuitePeerStag, kSuitePeerBase, kSuitePeerLength, 0x1F}}};
  for (uint32_t i = 0; i < kSuiteInvalidateStags; ++i) {
    ext.regions.push_back({kSuiteInvalidateStag + i, kSuitePeerBase, 4096, 0x03});
  }
  return ext;
}

// Convention §7.1: a 1.0 target, or one without a Command Type the case uses.
std::vector<std::string> CaseDriver::MissingCommands() const {
  if (!UsesCommands()) return {};
  if (!adv_.commands) return {"test-ULP 1.1 command records (Advertisement flag 0x0020)"};
  std::vector<std::string> out;
  for (const proto::Step& s : case_.proto.step()) {
    for (const proto::Command& c : s.target().command()) {
      const auto t = static_cast<CommandType>(c.type());
      const std::string name = "command " + std::string(wire::CommandTypeName(t));
      if (!adv_.commands->Supports(t) && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
  }
  return out;
}

void CaseDriver::ResetPeer() {
  peer_ = PeerState{};
  peer_.memory.resize(kSuitePeerLength);
  for (std::size_t x = 0; x < peer_.memory.size(); ++x) peer_.memory[x] = wire::PatternByte(kSuitePeerObject, x);
}

std::optional<PeerCommand> CaseDriver::MakePeerCommand(const proto::Command& pc, std::string& error) const {
  PeerCommand p;
  wire::Command& c = p.command;
  c.type = static_cast<CommandType>(pc.type());
  c.command_id = static_cast<uint32_t>(peer_.commands.size() + 1);
  const uint16_t uses = wire::CommandFieldsUsed(c.type);
  if (uses & wire::kUsesLocal) {
    proto::RegionRef local = pc.local();
    if (local.stag_source_case() == proto::RegionRef::STAG_SOURCE_NOT_SET) local.set_region(proto::RW);
    std::optional<ResolvedRef> ref = ResolveRef(local, regions_, error);
    if (!ref) return std::nullopt;
    c.local_stag = ref->stag;
    c.local_tagged_offset = ref->tagged_offset;
    if (ref->region) p.local = *ref->region;
  }
  if (uses & wire::kUsesLength) c.length = pc.length();
  if (uses & wire::kUsesRemoteStag) c.remote_stag = pc.has_remote_stag() ? pc.remote_stag() : kSuitePeerStag;
  if (wire::CommandInvalidates(c.type) && !pc.has_remote_stag()) {
    // Each Send with Invalidate names a suite STag not invalidated yet.
    const auto named = std::count_if(peer_.commands.begin(), peer_.commands.end(),
                                     [](const PeerCommand& q) { return wire::CommandInvalidates(q.command.type); });
    if (static_cast<uint32_t>(named) >= kSuiteInvalidateStags) {
      error = "more than " + std::to_string(kSuiteInvalidateStags) + " Sends with Invalidate on one connection";
      return std::nullopt;
    }
    c.remote_stag = kSuiteInvalidateStag + static_cast<uint32_t>(named);
  }
  if (uses & wire::kUsesRemoteTo) c.remote_tagged_offset = kSuitePeerBase + pc.remote_offset();
  if (uses & wire::kUsesModifier) c.modifier = pc.modifier();
  c.operand = {pc.data(), pc.has_mask() ? pc.mask() : ~uint64_t{0}, pc.compare_data(),
               pc.has_compare_mask() ? pc.compare_mask() : ~uint64_t{0}};
  for (int k = 0; k < 4; ++k) {
    if (!(uses & (wire::kUsesOperand1 << k))) c.operand[k] = 0;
  }
  // What a Write or Send must carry: the target's memory as the suite records it.
  const wire::CommandKind kind = wire::CommandKindOf(c.type);
  if ((kind == wire::CommandKind::kRdmaWrite || kind == wire::CommandKind::kSend) && p.local) {
    p.expected = memory_.Expected(*p.local, c.local_tagged_offset, c.length);
  }
  return p;
}

StepResult CaseDriver::DoTarget(const proto::TargetAction& t, int index) {
  StepResult sr;
  sr.action = "target";
  if (!conn_) {
    sr.verdict = Verdict::kError;
    sr.reason = "no connection to send the Command Record on";
    return sr;
  }
  std::string error;
  wire::CommandRecord rec;
  for (const proto::Command& pc : t.command()) {
    std::optional<PeerCommand> p = MakePeerCommand(pc, error);
    if (!p) {
      sr.verdict = Verdict::kError;
      sr.reason = "case error: " + error;
      return sr;
    }
    rec.commands.push_back(p->command);
    peer_.commands.push_back(std::move(*p));
  }
  wire::Bytes payload;
  const std::size_t room = wire::Mulpdu(options_.emss, conn_->markers_to_target()) - wire::kDdpUntaggedHeaderLength;
  if (!wire::EncodeCommandRecord(rec, payload).ok() || payload.size() > room) {
    sr.verdict = Verdict::kError;
    sr.reason =
        "case error: the Command Record does not fit one Send segment (" + std::to_string(payload.size()) + " octets)";
    return sr;
  }
  const std::size_t first_record = run_.result.frames.size();
  const wire::Bytes ulpdu =
      wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, send_state_.next_msn[0]++, payload));
  std::string what = "Command Record:";
  for (const wire::Command& c : rec.commands) {
    what += " " + std::to_string(c.command_id) + " " + std::string(wire::CommandTypeName(c.type));
  }
  const wire::Bytes octets =
      conn_->FrameUlpdu(ulpdu, nullptr, what + " (" + SummarizeUlpdu(ulpdu, options_.profile) + ")");
  for (std::size_t i = first_record; i < run_.result.frames.size(); ++i) sr.frames.push_back(i);
  sr.actual = what;
  Transmit(octets, proto::TcpWrites(), sr);
  return sr;
}

// ---------------------------------------------------------------------------
// Checking what the target sends for its commands (convention §7.5).

// The command whose message comes next, in posting order (R5040-5.5-R14).
PeerCommand* CaseDriver::NextMessageCommand() {
  while (peer_.next_message < peer_.commands.size()) {
    PeerCommand& p = peer_.commands[peer_.next_message];
    if (!p.message_done) return &p;
    ++peer_.next_message;
  }
  return nullptr;
}

std::string CaseDriver::CheckTargetFrame(const ReceivedFrame& f) {
  auto view = wire::DecodeRdmapSegment(f.ulpdu, options_.profile);
  if (!view.ok()) return "a frame that does not decode: " + view.error().Describe();
  if (!view->opcode_known) return "an unknown opcode " + std::to_string(view->ctrl.opcode);
  if (view->opcode() == wire::Opcode::kTerminate) return "a Terminate while carrying out its commands";
  PeerCommand* p = NextMessageCommand();
  if (!p) return "a " + std::string(wire::OpcodeName(view->opcode())) + " no command asked for";
  if (view->opcode() != wire::CommandOpcode(p->command.type)) {
    return "a " + std::string(wire::OpcodeName(view->opcode())) + " where " + CommandText(*p) +
           " comes next in posting order (R5040-5.5-R14, R5040-5.1-07, R5040-5.2.1-07)";
  }
  if (std::string bad = CommonHeaderProblem(*view); !bad.empty()) return CommandText(*p) + ": " + bad;
  const std::size_t mulpdu = wire::Mulpdu(options_.emss, conn_->markers_from_target());
  if (f.ulpdu.size() > mulpdu) {
    return CommandText(*p) + ": a segment of " + std::to_string(f.ulpdu.size()) + " octets, over the suite's MULPDU " +
           std::to_string(mulpdu) + " (R5041-5.2-02)";
  }
  switch (wire::CommandKindOf(p->command.type)) {
    case wire::CommandKind::kRdmaWrite:
      return CheckWriteSegment(*view, *p);
    case wire::CommandKind::kRdmaRead:
      return CheckReadRequest(*view, *p);
    case wire::CommandKind::kSend:
      return CheckSendSegment(*view, f.ulpdu, *p);
    case wire::CommandKind::kImmediateData:
      return CheckImmediateData(*view, *p);
    case wire::CommandKind::kAtomic:
      return CheckAtomicRequest(*view, *p);
    case wire::CommandKind::kCommit:
      return CheckCommitRequest(*view, *p);
    case wire::CommandKind::kUnknown:
      break;
  }
  return CommandText(*p) + ": the runner cannot check this Command Type yet (docs/target-convention.md §7.5)";
}

// REQ R5040-5.1-09 R5041-5.2-09 R5041-4.1-05 R5041-5.2-04
std::string CaseDriver::CheckWriteSegment(const wire::RdmapMessageView& v, PeerCommand& p) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const wire::Command& c = p.command;
  const std::string who = CommandText(p) + ": RDMA Write segment ";
  if (!h.tagged) return who + "with T = 0 (R5040-4.1-04)";
  if (h.stag != c.remote_stag) {
    return who + "to STag " + Hex32(h.stag) + ", not the " + Hex32(c.remote_stag) + " it named (R5040-5.1-09)";
  }
  if (h.tagged_offset != c.remote_tagged_offset + p.progress) {
    return who + "at TO " + Hex64(h.tagged_offset) + ", not " + Hex64(c.remote_tagged_offset + p.progress) +
           " (TOs contiguous from the named TO, R5041-5.2-09)";
  }
  const wire::ByteSpan data = v.ddp.payload;
  if (p.progress + data.size() > c.length)
    return who + "beyond the " + std::to_string(c.length) + " octets named (R5041-5.2-04)";
  const bool ends = p.progress + data.size() == c.length;
  if (h.last != ends)
    return who + (h.last ? "with L = 1 before the end (R5041-4.1-05)" : "ending the message with L = 0 (R5041-4.1-04)");
  if (!p.expected.empty() && !std::equal(data.begin(), data.end(), p.expected.begin() + p.progress)) {
    return who + "carries octets that are not the target's memory at Local TO + " + std::to_string(p.progress) +
           " (R5041-5.2-04)";
  }
  std::copy(data.begin(), data.end(), peer_.memory.begin() + (c.remote_tagged_offset - kSuitePeerBase + p.progress));
  p.progress += data.size();
  p.message_done = h.last;
  return {};
}

// REQ R5041-4.3-04 R5041-4.3-10 R5041-5.2-07 R5041-4.1-07 R5040-4.1-03 R5040-5.3-13 R5041-4.3-07
std::string CaseDriver::CheckSendSegment(const wire::RdmapMessageView& v, wire::ByteSpan ulpdu, PeerCommand& p) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const std::string who = CommandText(p) + ": " + wire::OpcodeName(v.opcode()) + " segment ";
  if (h.tagged || h.queue_number != 0) return who + "not untagged on QN 0 (R5041-4.3-06)";
  if (p.progress == 0) {
    if (std::string bad = TakeQn0Message(h, who); !bad.empty()) return bad;
    p.rsvd_ulp.assign(ulpdu.begin() + 1, ulpdu.begin() + 6);  // RsvdULP: DDP header octets 1-5
    p.msn = h.msn;
  } else {
    if (h.msn != p.msn)
      return who + "with MSN " + std::to_string(h.msn) + ", not its message's " + std::to_string(p.msn) +
             " (R5041-4.3-10)";
    if (!std::equal(p.rsvd_ulp.begin(), p.rsvd_ulp.end(), ulpdu.begin() + 1)) {
      return who + "whose RsvdULP differs from the first segment's (R5041-4.3-04)";
    }
  }
  if (wire::CommandInvalidates(p.command.type) && h.invalidate_stag != p.command.remote_stag) {
    return who + "with Invalidate STag " + Hex32(h.invalidate_stag) + ", not the " + Hex32(p.command.remote_stag) +
           " it named (R5040-4.1-03, R5040-5.3-13)";
  }
  if (h.message_offset != p.progress) {
    return who + "with MO " + std::to_string(h.message_offset) + ", not " + std::to_string(p.progress) +
           " (R5041-5.2-07)";
  }
  const wire::ByteSpan data = v.ddp.payload;
  if (p.progress + data.size() > p.command.length)
    return who + "beyond the " + std::to_string(p.command.length) + " octets named (R5041-5.2-04)";
  const bool ends = p.progress + data.size() == p.command.length;
  if (h.last != ends)
    return who + (h.last ? "with L = 1 before the highest MO (R5041-4.1-07)"
                         : "ending the message with L = 0 (R5041-4.1-07)");
  if (!p.expected.empty() && !std::equal(data.begin(), data.end(), p.expected.begin() + p.progress)) {
    return who + "carries octets that are not the target's memory at Local TO + " + std::to_string(p.progress) +
           " (R5041-5.2-04)";
  }
  p.progress += data.size();
  p.message_done = h.last;
  return {};
}

// REQ R5040-4.4-01 R5040-5.2.1-01 R5040-5.2.1-09 R5040-6.1-07 R5040-6.1-09 R5040-5.2.1-02
std::string CaseDriver::CheckReadRequest(const wire::RdmapMessageView& v, PeerCommand& p) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const std::string who = CommandText(p) + ": RDMA Read Request ";
  if (std::string bad = UntaggedMessageProblem(h, who, {"R5040-5.2.1-01", 1, " (R5040-5.2.1-02)", "R5040-4.4-01"});
      !bad.empty()) {
    return bad;
  }
  if (std::string bad = Qn1MsnProblem(h.msn, peer_.next_qn1_msn, who, "R5041-4.3-07, R5041-4.3-08"); !bad.empty()) {
    return bad;
  }
  const auto* r = std::get_if<wire::ReadRequestHeader>(&v.header);
  if (!r || !v.ulp_payload.empty()) {
    return who + "whose payload is not exactly the 28-octet Read Request Header (" +
           std::to_string(v.ddp.payload.size()) + " octets, R5040-4.4-01)";
  }
  const wire::Command& c = p.command;
  const wire::ReadRequestHeader want{c.local_stag, c.local_tagged_offset, c.length, c.remote_stag,
                                     c.remote_tagged_offset};
  if (!(*r == want)) {
    return who + ReadRequestHeaderText(*r) + ", not the " + ReadRequestHeaderText(want) +
           " it named (R5040-4.4-01, R5040-5.2.1-09)";
  }
  return HoldQn1Request(p, who, "Reads");
}

// REQ R7306-6.3-01 R7306-6.3-04 R7306-6.3-05 R7306-6.3-06 R5041-4.3-07
// One segment on QN 0 with a new MSN and exactly the 8 octets the ULP posted.
std::string CaseDriver::CheckImmediateData(const wire::RdmapMessageView& v, PeerCommand& p) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const std::string who = CommandText(p) + ": " + wire::OpcodeName(v.opcode()) + " ";
  if (std::string bad = UntaggedMessageProblem(h, who, {"R7306-6.3-01", 0, " (R7306-6.3-04)", "R7306-6.3-05"});
      !bad.empty()) {
    return bad;
  }
  const auto* imm = std::get_if<wire::ImmediateDataHeader>(&v.header);
  if (!imm || !v.ulp_payload.empty()) {
    return who + "of " + std::to_string(v.ddp.payload.size()) + " octets, not exactly 8 (R7306-6.3-05)";
  }
  if (imm->immediate_data != p.command.operand[0]) {
    return who + "carrying " + Hex64(imm->immediate_data) + ", not the " + Hex64(p.command.operand[0]) +
           " the ULP posted (R7306-6.3-05)";
  }
  if (std::string bad = TakeQn0Message(h, who); !bad.empty()) return bad;
  p.message_done = true;
  return {};
}

// REQ R5041-4.3-07
// A new QN 0 message (a Send's first segment, Immediate Data): its MSN
// follows the target's earlier QN 0 MSNs, and is recorded.
std::string CaseDriver::TakeQn0Message(const wire::DdpSegmentHeader& h, const std::string& who) {
  if (std::count(peer_.qn0_msns.begin(), peer_.qn0_msns.end(), h.msn) || h.msn == 0 ||
      h.msn <= peer_.last_message_msn) {
    return who + "with MSN " + std::to_string(h.msn) +
           ", which does not follow the target's earlier QN 0 MSNs (R5041-4.3-07)";
  }
  peer_.qn0_msns.push_back(h.msn);
  peer_.last_message_msn = h.msn;
  return {};
}

// REQ R7306-5.2-02 R7306-5.2.1-S1 R7306-5.2.1-S5 R7306-5.2.1-S6 R7306-5.1.1-02 R7306-5.1.2-03
// One segment on QN 1 (the Read Request queue, shared MSNs) carrying exactly
// the Atomic Request Header with what the ULP posted, 64-bit aligned.
std::string CaseDriver::CheckAtomicRequest(const wire::RdmapMessageView& v, PeerCommand& p) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const wire::Command& c = p.command;
  const std::string who = CommandText(p) + ": Atomic Request ";
  if (std::string bad =
          UntaggedMessageProblem(h, who, {"R7306-5.2.1-S1", 1, " (R7306-5.2-02, R7306-5.2.1-S5)", "R7306-5.2-02"});
      !bad.empty()) {
    return bad;
  }
  const auto* a = std::get_if<wire::AtomicRequestHeader>(&v.header);
  if (!a || !v.ulp_payload.empty()) {
    return who + "whose payload is not exactly the Atomic Request Header (" + std::to_string(v.ddp.payload.size()) +
           " octets, R7306-5.2-02)";
  }
  const bool fetch_add = c.type == CommandType::kAtomicFetchAdd;
  const uint8_t aopcode =
      static_cast<uint8_t>(fetch_add ? wire::AtomicOpcode::kFetchAdd : wire::AtomicOpcode::kCmpSwap);
  if (a->atomic_opcode != aopcode || a->reserved != 0) {
    return who + "with AOpCode " + std::to_string(a->atomic_opcode) + " and Reserved " + Hex32(a->reserved) + ", not " +
           std::to_string(aopcode) + " and 0 (RFC 7306 §5.2.1)";
  }
  if (a->remote_tagged_offset % 8 != 0)
    return who + "to an address that is not 64-bit aligned (R7306-5.1.1-02, R7306-5.1.2-03)";
  const bool same = a->remote_stag == c.remote_stag && a->remote_tagged_offset == c.remote_tagged_offset &&
                    a->add_or_swap_data == c.operand[0] && a->add_or_swap_mask == c.operand[1] &&
                    (fetch_add || (a->compare_data == c.operand[2] && a->compare_mask == c.operand[3]));
  if (!same) return who + "whose STag, TO, data or masks are not the ones the ULP posted (R7306-5.2.1-S6)";
  p.request_id = a->request_identifier;
  return TakeQn1Request(h, p, who);
}

// REQ R5041-4.3-07 R5040-6.1-09 RCOMMIT-3.1-07
// A checked QN 1 request (Atomic or COMMIT): the next QN 1 MSN (shared with
// Read Requests), then held for the suite's answer within the Suite IRD.
std::string CaseDriver::TakeQn1Request(const wire::DdpSegmentHeader& h, PeerCommand& p, const std::string& who) {
  if (std::string bad =
          Qn1MsnProblem(h.msn, peer_.next_qn1_msn, who, "R5041-4.3-07: QN 1 is shared with Read Requests");
      !bad.empty()) {
    return bad;
  }
  return HoldQn1Request(p, who, "requests");
}

// REQ R5040-6.1-09
// A QN 1 request (Read, Atomic or COMMIT) whose MSN was the next one: held
// for the suite's answer; more `held` outstanding than the Suite IRD breaks
// the requester's ORD limit.
std::string CaseDriver::HoldQn1Request(PeerCommand& p, const std::string& who, const char* held) {
  ++peer_.next_qn1_msn;
  p.read_request = ++peer_.read_requests;
  p.message_done = true;
  peer_.unanswered.push_back(static_cast<std::size_t>(&p - peer_.commands.data()));
  if (peer_.unanswered.size() > peer_.suite_ird) {
    return who + "while " + std::to_string(peer_.unanswered.size() - 1) + " " + held +
           " were outstanding: more than the Suite IRD " + std::to_string(peer_.suite_ird) + " (R5040-6.1-09)";
  }
  return {};
}

// REQ RCOMMIT-3.1.1.1-01 RCOMMIT-3.1.1.3-02 RCOMMIT-3.1.2.1-01 RCOMMIT-3.1.2.3-02 RCOMMIT-3.1.3.1-01
// REQ RCOMMIT-3.1-03 RCOMMIT-3.1-T01 RCOMMIT-3.1-T03 RCOMMIT-3.1-T05
// A Flush, Verify or Atomic Write Request: T = 0, one segment on QN 1, with
// exactly the fields the command named.
std::string CaseDriver::CheckCommitRequest(const wire::RdmapMessageView& v, PeerCommand& p) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const std::string who = CommandText(p) + ": " + wire::OpcodeName(v.opcode()) + " ";
  const UntaggedRules rules{"RCOMMIT-3.1-T01, T03, T05", 1,
                            std::string(", not 1 (") + CommitQueueIds(p.command.type) + ")", "RCOMMIT-3.1-08"};
  if (std::string bad = UntaggedMessageProblem(h, who, rules); !bad.empty()) return bad;
  if (std::string bad = CommitFieldsProblem(v, p); !bad.empty()) return who + bad;
  return TakeQn1Request(h, p, who);
}

// REQ RCOMMIT-3.1.1.1-02 RCOMMIT-3.1.2.1-02 RCOMMIT-3.1.3.1-02 RCOMMIT-3.1.3.1-03 RCOMMIT-3.1.3.1-04
// The request's payload against the command: Flush 20 octets, Verify 16 plus
// the Hash Value read from the target's memory, Atomic Write 24 with Length 8.
std::string CaseDriver::CommitFieldsProblem(const wire::RdmapMessageView& v, const PeerCommand& p) const {
  const wire::Command& c = p.command;
  if (!v.ulp_payload.empty())
    return "carrying " + std::to_string(v.ulp_payload.size()) + " octets after its fields (RCOMMIT-3.1-T07)";
  if (const auto* f = std::get_if<wire::FlushRequestHeader>(&v.header)) {
    const wire::FlushRequestHeader want{c.remote_stag, c.length, c.remote_tagged_offset, c.modifier};
    if (*f == want) return {};
    return "whose Data Sink STag, Length, TO or Disposition Flags are not the ones the ULP posted (RCOMMIT-3.1.1.1-02)";
  }
  if (const auto* r = std::get_if<wire::VerifyRequestHeader>(&v.header)) {
    const wire::Bytes hash =
        p.local && c.modifier ? memory_.Expected(*p.local, c.local_tagged_offset, c.modifier) : wire::Bytes{};
    const bool same = r->data_sink_stag == c.remote_stag && r->data_sink_length == c.length &&
                      r->data_sink_tagged_offset == c.remote_tagged_offset &&
                      std::equal(r->hash_value.begin(), r->hash_value.end(), hash.begin(), hash.end());
    if (same) return {};
    return "whose Data Sink STag, Length, TO or Hash Value are not the ones the ULP posted (RCOMMIT-3.1.2.1-02)";
  }
  if (const auto* w = std::get_if<wire::AtomicWriteRequestHeader>(&v.header)) {
    if (w->data_sink_length != 8)
      return "with Data Sink Length " + std::to_string(w->data_sink_length) + ", not 8 (RCOMMIT-3.1.3.1-03)";
    if (w->data_sink_tagged_offset % 8 != 0) return "to an address that is not 64-bit aligned (RCOMMIT-3.1.3.1-04)";
    if (w->data_sink_stag == c.remote_stag && w->data_sink_tagged_offset == c.remote_tagged_offset &&
        w->data == c.operand[0]) {
      return {};
    }
    return "whose Data Sink STag, TO or Data are not the ones the ULP posted (RCOMMIT-3.1.3.1-02)";
  }
  return "whose payload does not decode as its request fields (" + std::to_string(v.ddp.payload.size()) + " octets)";
}

}  // namespace rdmapct::conformance
