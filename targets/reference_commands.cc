// The reference target's test-ULP 1.1 command records (docs/target-convention.md
// §7): its ULP posts what a Command Record names through the RdmapEndpoint's
// requester API (the model stays I/O-free), keeps its requests within
// min(ORD, Suite IRD), and reports each completion, in Command Id order, in a
// Command Completed Event Record. What the stream's end left undone goes to
// the next Advertisement's Commands block.
#include <algorithm>

#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"
#include "targets/reference_target.h"

namespace rdmapct::targets {
namespace {

using model::UlpEventKind;
using wire::CommandType;
using wire::CompletionStatus;

// The requester completion that finishes a command of type `t` (none: the
// command completes when it is handed to the LLP).
std::optional<UlpEventKind> CompletionKind(CommandType t) {
  switch (t) {
    case CommandType::kRdmaRead:
      return UlpEventKind::kReadCompleted;
    case CommandType::kAtomicFetchAdd:
    case CommandType::kAtomicCmpSwap:
      return UlpEventKind::kAtomicCompleted;
    case CommandType::kFlush:
      return UlpEventKind::kFlushCompleted;
    case CommandType::kVerify:
      return UlpEventKind::kVerifyCompleted;
    case CommandType::kAtomicWrite:
      return UlpEventKind::kAtomicWriteCompleted;
    default:
      return std::nullopt;
  }
}

wire::Bytes BigEndian64(uint64_t v) {
  wire::Bytes b(8);
  wire::StoreBe64(b.data(), v);
  return b;
}

wire::AtomicRequestHeader AtomicHeaderFor(const wire::Command& c, uint32_t request_identifier) {
  wire::AtomicRequestHeader h;
  const bool fetch_add = c.type == CommandType::kAtomicFetchAdd;
  h.atomic_opcode = static_cast<uint8_t>(fetch_add ? wire::AtomicOpcode::kFetchAdd : wire::AtomicOpcode::kCmpSwap);
  h.request_identifier = request_identifier;
  h.remote_stag = c.remote_stag;
  h.remote_tagged_offset = c.remote_tagged_offset;
  h.add_or_swap_data = c.operand[0];
  h.add_or_swap_mask = c.operand[1];
  if (!fetch_add) {
    h.compare_data = c.operand[2];
    h.compare_mask = c.operand[3];
  }
  return h;
}

}  // namespace

bool IsRequesterCompletion(UlpEventKind k) {
  return k == UlpEventKind::kReadCompleted || k == UlpEventKind::kAtomicCompleted ||
         k == UlpEventKind::kFlushCompleted || k == UlpEventKind::kVerifyCompleted ||
         k == UlpEventKind::kAtomicWriteCompleted;
}

uint32_t ReferenceTargetConnection::SupportedCommands() const {
  auto bit = [](CommandType t) { return uint32_t{1} << static_cast<uint8_t>(t); };
  uint32_t s = bit(CommandType::kRdmaWrite) | bit(CommandType::kRdmaRead) | bit(CommandType::kSend) |
               bit(CommandType::kSendWithSe) | bit(CommandType::kSendWithInvalidate) |
               bit(CommandType::kSendWithSeAndInvalidate);
  if (wire::ProfileIncludes(config_.profile, wire::Profile::kRfc7306)) {
    s |= bit(CommandType::kImmediateData) | bit(CommandType::kImmediateDataWithSe) | bit(CommandType::kAtomicFetchAdd) |
         bit(CommandType::kAtomicCmpSwap);
  }
  if (config_.profile == wire::Profile::kCommit) {
    s |= bit(CommandType::kFlush) | bit(CommandType::kVerify) | bit(CommandType::kAtomicWrite);
  }
  return s;
}

// A Send whose whole payload is a Command Record is a command (§7.2): its
// commands join the send queue and no Send-delivered event is reported.
bool ReferenceTargetConnection::TakeCommandRecord(const model::UlpEvent& e) {
  if (!config_.commands || !wire::HasCommandRecordMagic(e.data) || e.length != e.data.size()) return false;
  auto rec = wire::DecodeCommandRecord(e.data);
  if (!rec.ok()) return false;
  for (const wire::Command& c : rec->commands) commands_.emplace_back().command = c;
  return true;
}

// REQ R5040-5.5-R11 R5040-5.5-R19 R5040-5.2.2-04
// A Read (or Atomic / COMMIT request) completes when the endpoint delivers
// its response: the oldest request of its kind in flight.
void ReferenceTargetConnection::CompleteRequest(const model::UlpEvent& e) {
  for (CommandSlot& s : commands_) {
    if (s.state != CommandSlot::kInFlight || CompletionKind(s.command.type) != e.kind) continue;
    s.state = CommandSlot::kDone;
    if (e.kind == UlpEventKind::kReadCompleted) {
      auto placed = endpoint_->PeekRegion(e.stag, e.tagged_offset, e.length);
      s.moved.assign(placed.begin(), placed.end());
    } else if (e.kind == UlpEventKind::kAtomicCompleted) {
      s.moved = BigEndian64(e.value);
    } else if (e.kind == UlpEventKind::kVerifyCompleted) {
      s.moved = e.data;  // the Hash Value (convention §7.3: Delivered Length is its length)
    }
    return;
  }
}

// The octets of the target's own memory a command names (a Verify: its Hash
// Value, Modifier octets); false when they are not its memory (the command
// then fails locally).
bool ReferenceTargetConnection::LocalOctets(const wire::Command& c, wire::Bytes& out) const {
  out.clear();
  const uint32_t length = c.type == CommandType::kVerify ? c.modifier : c.length;
  if (length == 0) return true;
  auto span = endpoint_->PeekRegion(c.local_stag, c.local_tagged_offset, length);
  if (span.size() != length) return false;
  out.assign(span.begin(), span.end());
  return true;
}

// REQ R5040-5.5-R14 R5040-5.1-07 R5040-5.2.1-07 R5040-6.1-09 R5040-4.1-03 R5040-5.3-13
// Posts one command. kOrdExceeded means "not yet": it and everything behind it wait.
model::PostStatus ReferenceTargetConnection::PostCommand(CommandSlot& s) {
  const wire::Command& c = s.command;
  posted_.Clear();
  model::PostStatus st = model::PostStatus::kInvalidArgument;
  if (!((SupportedCommands() >> static_cast<uint8_t>(c.type)) & 1)) {
    s.state = CommandSlot::kDone;
    s.status = CompletionStatus::kNotSupported;
    return model::PostStatus::kOk;
  }
  wire::Bytes local;
  const bool local_ok = !(wire::CommandFieldsUsed(c.type) & wire::kUsesLocal) || LocalOctets(c, local);
  if (!local_ok) {
    s.state = CommandSlot::kDone;
    s.status = CompletionStatus::kLocalError;
    return model::PostStatus::kOk;
  }
  if (wire::CommandKindOf(c.type) == wire::CommandKind::kSend) {
    uint32_t invalidate = c.remote_stag;
    if (config_.faults.Has(model::Fault::kSendInvalidateWrongStag)) invalidate += 1;
    st = endpoint_->PostSend(*wire::CommandOpcode(c.type), local, invalidate, posted_);
  } else if (c.type == CommandType::kRdmaWrite) {
    st = endpoint_->PostRdmaWrite(c.remote_stag, c.remote_tagged_offset, local, posted_);
  } else if (c.type == CommandType::kRdmaRead) {
    st = endpoint_->PostReadRequest(
        {c.local_stag, c.local_tagged_offset, c.length, c.remote_stag, c.remote_tagged_offset}, posted_);
  } else if (c.type == CommandType::kImmediateData || c.type == CommandType::kImmediateDataWithSe) {
    st = endpoint_->PostImmediateData(c.operand[0], c.type == CommandType::kImmediateDataWithSe, posted_);
  } else if (c.type == CommandType::kAtomicFetchAdd || c.type == CommandType::kAtomicCmpSwap) {
    st = endpoint_->PostAtomicRequest(AtomicHeaderFor(c, next_request_id_++), posted_);
  } else if (c.type == CommandType::kFlush) {
    st = endpoint_->PostFlushRequest({c.remote_stag, c.length, c.remote_tagged_offset, c.modifier}, posted_);
  } else if (c.type == CommandType::kVerify) {
    st = endpoint_->PostVerifyRequest({c.remote_stag, c.length, c.remote_tagged_offset, local}, posted_);
  } else if (c.type == CommandType::kAtomicWrite) {
    // REQ RCOMMIT-3.1.3.1-03: the Data Sink Length is 8 (atomic-write-length-16 breaks it).
    const uint32_t length = config_.faults.Has(model::Fault::kAtomicWriteLength16) ? 16 : 8;
    st = endpoint_->PostAtomicWriteRequest({c.remote_stag, length, c.remote_tagged_offset, c.operand[0]}, posted_);
  }
  if (st == model::PostStatus::kOrdExceeded) return st;
  if (st != model::PostStatus::kOk) {
    s.state = CommandSlot::kDone;
    s.status = CompletionStatus::kLocalError;
    return model::PostStatus::kOk;
  }
  s.state = CompletionKind(c.type) ? CommandSlot::kInFlight : CommandSlot::kDone;
  if (s.state == CommandSlot::kDone) s.moved = std::move(local);
  return st;
}

// REQ R5040-5.5-R15b R5040-7.1-01
// Posts what the queue and ORD allow, then reports finished commands from the
// head, so completions come in submission order.
void ReferenceTargetConnection::PumpCommands(wire::Bytes& out) {
  for (CommandSlot& s : commands_) {
    if (endpoint_->state() != model::StreamState::kStreaming) return;
    if (s.state != CommandSlot::kQueued) continue;
    if (PostCommand(s) == model::PostStatus::kOrdExceeded) break;
    FrameSegments(posted_, out);
  }
  while (!commands_.empty() && commands_.front().state == CommandSlot::kDone) {
    if (endpoint_->state() != model::StreamState::kStreaming) return;
    const CommandSlot& s = commands_.front();
    const wire::Completion c{s.command.command_id, s.command.type, s.status, 0};
    const wire::ByteSpan moved = s.status == CompletionStatus::kSuccess ? wire::ByteSpan(s.moved) : wire::ByteSpan();
    const wire::EventRecord rec = wire::MakeCommandCompletedEvent(endpoint_->next_msn(0), c, moved);
    record_.clear();
    wire::EncodeEventRecord(rec, record_);
    posted_.Clear();
    if (endpoint_->PostSend(wire::Opcode::kSend, record_, 0, posted_) != model::PostStatus::kOk) return;
    FrameSegments(posted_, out);
    ++events_sent_;
    (s.status == CompletionStatus::kSuccess ? command_counts_.completed : command_counts_.failed)++;
    if (s.status != CompletionStatus::kSuccess && command_counts_.failed_command_id == 0) {
      command_counts_.failed_command_id = s.command.command_id;
    }
    commands_.pop_front();
  }
}

// REQ R5040-6.2.1-03 R5040-5.4-09
// The stream ended: the oldest request in flight failed, everything else not
// reported was flushed (a command done but not reported did complete).
void ReferenceTargetConnection::SettleCommands() {
  if (!config_.commands) return;
  bool failed_one = false;
  const bool as_completed = config_.faults.Has(model::Fault::kSettleInFlightAsCompleted);
  for (const CommandSlot& s : commands_) {
    if ((s.state == CommandSlot::kDone && s.status == CompletionStatus::kSuccess) ||
        (s.state == CommandSlot::kInFlight && as_completed)) {
      ++command_counts_.completed;
    } else if (s.state == CommandSlot::kInFlight && !failed_one) {
      failed_one = true;
      ++command_counts_.failed;
      if (command_counts_.failed_command_id == 0) command_counts_.failed_command_id = s.command.command_id;
    } else if (s.state == CommandSlot::kDone) {
      ++command_counts_.failed;
    } else {
      ++command_counts_.flushed;
    }
  }
  commands_.clear();
  target_.RecordCommands(command_counts_);
}

}  // namespace rdmapct::targets
