#include "targets/agent/convention.h"

#include <algorithm>

namespace rdmapct::agent {

using wire::kAccessRemoteAtomic;
using wire::kAccessRemoteRead;
using wire::kAccessRemoteWrite;

std::vector<RegionSpec> DefaultLayout(const AgentOptions& opts) {
  const uint8_t rw = kAccessRemoteRead | kAccessRemoteWrite;
  std::vector<RegionSpec> out = {
      {"rw", kMainObject, 0x0000, 0x6000, rw, 0, false, RegionKind::kNormal},
      {"ro", kMainObject, 0x2000, 0x1000, kAccessRemoteRead, 0, false, RegionKind::kNormal},
      {"wo", kMainObject, 0x3000, 0x1000, kAccessRemoteWrite, 0, opts.zero_based_regions, RegionKind::kNormal},
  };
  if (opts.claim_rfc7306) {
    out.push_back({"atomic", kMainObject, 0x4000, 0x40, static_cast<uint8_t>(rw | kAccessRemoteAtomic), 0, false,
                   RegionKind::kNormal});
  }
  out.push_back(
      {"invalidatable", kInvalidatableObject, 0, 0x1000, rw, wire::kAttrInvalidatable, false, RegionKind::kNormal});
  out.push_back(
      {"alias", kInvalidatableObject, 0, 0x1000, kAccessRemoteRead, 0, opts.zero_based_regions, RegionKind::kNormal});
  out.push_back({"foreign", kMainObject, 0x5000, 0x800, rw, wire::kAttrForeign, false, RegionKind::kForeignPd});
  out.push_back(
      {"deregistered", kMainObject, 0x5800, 0x800, rw, wire::kAttrDeregistered, false, RegionKind::kDeregistered});
  return out;
}

std::vector<uint32_t> MemoryObjectSizes(const std::vector<RegionSpec>& layout) {
  std::vector<uint32_t> sizes;
  for (const RegionSpec& r : layout) {
    if (sizes.size() <= r.memory_object) sizes.resize(r.memory_object + 1, 0);
    sizes[r.memory_object] = std::max(sizes[r.memory_object], r.object_offset + r.length);
  }
  return sizes;
}

void FillPattern(uint16_t object, std::span<uint8_t> memory) {
  for (std::size_t x = 0; x < memory.size(); ++x) memory[x] = wire::PatternByte(object, x);
}

wire::Result<wire::Bytes> BuildAdvertisement(const AgentOptions& opts, const std::vector<RegionSpec>& layout,
                                             const std::vector<Registered>& registered,
                                             const ConnectionParams& params) {
  wire::Advertisement adv;
  if (opts.little_endian_atomics) adv.flags |= wire::kFlagLittleEndianAtomics;
  if (opts.claim_rfc7306) adv.flags |= wire::kFlagRfc7306;
  if (params.keep_memory_supported) adv.flags |= wire::kFlagKeepMemory;
  adv.ird = params.ird;
  adv.ord = params.ord;
  adv.receive_buffer_count = opts.receive_buffer_count;
  adv.receive_buffer_size = opts.receive_buffer_size;
  adv.connection_serial = params.connection_serial;
  adv.commands = params.commands;
  if (params.commands) adv.minor_version = wire::kUlpConventionCommandsMinorVersion;
  if (opts.pd_per_connection) {
    // §11: a PD and memory of its own per connection (flag 0x0040 needs
    // Minor Version 2).
    adv.flags |= wire::kFlagConcurrentConnections;
    adv.minor_version = wire::kConcurrentMinorVersion;
  }
  for (std::size_t i = 0; i < layout.size() && i < registered.size(); ++i) {
    const RegionSpec& s = layout[i];
    adv.regions.push_back(wire::AdvertisedRegion{registered[i].stag, registered[i].base_tagged_offset, s.length,
                                                 s.access, s.attributes, s.memory_object, s.object_offset});
  }
  adv.previous = params.previous;
  wire::Bytes out;
  wire::Status st = wire::EncodeAdvertisement(adv, out);
  if (!st.ok()) return st.error();
  return out;
}

std::optional<wire::SuiteRequest> FindSuiteRequest(wire::ByteSpan private_data) {
  for (std::size_t at : {std::size_t{0}, wire::kRfc6581WordLength}) {
    if (private_data.size() < at + wire::kSuiteRequestLength) continue;
    wire::Result<wire::SuiteRequest> req = wire::DecodeSuiteRequest(private_data.subspan(at));
    if (req.ok()) return *req;
  }
  return std::nullopt;
}

std::optional<uint16_t> FindSuiteIrd(wire::ByteSpan private_data) {
  for (std::size_t at : {std::size_t{0}, wire::kRfc6581WordLength}) {
    if (private_data.size() < at + wire::kSuiteRequestLength) continue;
    wire::Result<wire::SuiteRequest> req = wire::DecodeSuiteRequest(private_data.subspan(at));
    if (!req.ok()) continue;
    if (req->minor_version < wire::kUlpConventionCommandsMinorVersion) return std::nullopt;
    auto ext = wire::DecodeSuiteRequestExtension(private_data.subspan(at + wire::kSuiteRequestLength));
    if (!ext.ok()) return std::nullopt;
    return ext->suite_ird;
  }
  return std::nullopt;
}

std::optional<wire::ConnectDirective> FindConnectDirective(wire::ByteSpan private_data) {
  for (std::size_t at : {std::size_t{0}, wire::kRfc6581WordLength}) {
    if (private_data.size() < at + wire::kDirectiveLength) continue;
    auto d = wire::DecodeConnectDirective(private_data.subspan(at));
    if (d.ok()) return *d;
  }
  if (private_data.size() + wire::kRfc6581WordLength == wire::kDirectiveLength) {
    wire::Bytes whole(wire::kDirectiveMagic.begin(), wire::kDirectiveMagic.end());
    whole.insert(whole.end(), private_data.begin(), private_data.end());
    auto d = wire::DecodeConnectDirective(whole);
    if (d.ok()) return *d;
  }
  return std::nullopt;
}

ConnectPlan PlanConnect(const std::optional<wire::ConnectDirective>& directive, uint32_t device_max_ird,
                        uint32_t device_max_ord, uint32_t min_ird) {
  ConnectPlan p;
  uint32_t ird = min_ird;
  uint32_t ord = 16;
  if (directive) {
    const wire::ConnectDirective& d = *directive;
    p.keep_memory = d.Has(wire::kDirectiveKeepMemory);
    if (d.Has(wire::kDirectiveEnhanced)) {
      ird = d.ird;
      ord = d.ord;
    }
    const std::pair<uint16_t, const char*> fixed[] = {
        {wire::kDirectiveCrc, "C=1"},           {wire::kDirectiveMarkers, "M=1"},
        {wire::kDirectiveEnhanced, "RFC 6581"}, {wire::kDirectivePeerToPeer, "peer-to-peer"},
        {wire::kDirectiveSendRtr, "Send RTR"},  {wire::kDirectiveWriteRtr, "Write RTR"},
        {wire::kDirectiveReadRtr, "Read RTR"},
    };
    for (const auto& [flag, name] : fixed) {
      if (d.Has(flag)) p.cannot.push_back(name);
    }
  }
  p.offer.ird = static_cast<uint16_t>(std::min(ird, device_max_ird));
  p.offer.ord = static_cast<uint16_t>(std::min(ord, device_max_ord));
  return p;
}

std::optional<wire::CommandRecord> AsCommandRecord(wire::ByteSpan payload) {
  if (!wire::HasCommandRecordMagic(payload)) return std::nullopt;
  wire::Result<wire::CommandRecord> rec = wire::DecodeCommandRecord(payload);
  if (!rec.ok()) return std::nullopt;
  return *std::move(rec);
}

uint32_t SupportedCommandMask(bool device_atomics) {
  using T = wire::CommandType;
  uint32_t mask = 0;
  for (T t :
       {T::kRdmaWrite, T::kRdmaRead, T::kSend, T::kSendWithSe, T::kSendWithInvalidate, T::kSendWithSeAndInvalidate}) {
    mask |= 1u << static_cast<uint8_t>(t);
  }
  if (device_atomics)
    mask |= (1u << static_cast<uint8_t>(T::kAtomicFetchAdd)) | (1u << static_cast<uint8_t>(T::kAtomicCmpSwap));
  return mask;
}

namespace {

// The usable region of this connection that holds [to, to + length).
std::optional<std::size_t> LocalRegion(uint32_t stag, uint64_t to, uint32_t length,
                                       const std::vector<RegionSpec>& layout,
                                       const std::vector<Registered>& registered) {
  for (std::size_t i = 0; i < layout.size() && i < registered.size(); ++i) {
    if (layout[i].kind != RegionKind::kNormal || registered[i].stag != stag) continue;
    const uint64_t base = registered[i].base_tagged_offset;
    if (to < base || to - base > layout[i].length || length > layout[i].length - (to - base)) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

}  // namespace

CommandPlan PlanCommand(const wire::Command& cmd, uint32_t supported, const std::vector<RegionSpec>& layout,
                        const std::vector<Registered>& registered) {
  using T = wire::CommandType;
  CommandPlan p;
  if (!((supported >> static_cast<uint8_t>(cmd.type)) & 1)) {
    p.refuse = wire::CompletionStatus::kNotSupported;
    return p;
  }
  switch (cmd.type) {
    case T::kAtomicFetchAdd:
      p.op = VerbsOp::kFetchAdd;
      // Verbs adds all 64 bits: an Add Mask (carry boundaries) has no verbs form.
      if (cmd.operand[1] != 0) p.refuse = wire::CompletionStatus::kNotSupported;
      return p;
    case T::kAtomicCmpSwap:
      p.op = VerbsOp::kCmpSwap;
      // Verbs compares and swaps all 64 bits: only all-ones masks.
      if (cmd.operand[1] != ~uint64_t{0} || cmd.operand[3] != ~uint64_t{0}) {
        p.refuse = wire::CompletionStatus::kNotSupported;
      }
      return p;
    case T::kRdmaWrite:
      p.op = VerbsOp::kRdmaWrite;
      break;
    case T::kRdmaRead:
      p.op = VerbsOp::kRdmaRead;
      break;
    case T::kSend:
    case T::kSendWithSe:
      p.op = VerbsOp::kSend;
      break;
    case T::kSendWithInvalidate:
    case T::kSendWithSeAndInvalidate:
      p.op = VerbsOp::kSendWithInvalidate;
      break;
    default:
      p.refuse = wire::CompletionStatus::kNotSupported;
      return p;
  }
  p.solicited = cmd.type == T::kSendWithSe || cmd.type == T::kSendWithSeAndInvalidate;
  p.takes_msn = p.op == VerbsOp::kSend || p.op == VerbsOp::kSendWithInvalidate;
  if (cmd.length == 0) return p;  // no local memory touched
  p.region = LocalRegion(cmd.local_stag, cmd.local_tagged_offset, cmd.length, layout, registered);
  if (!p.region) {
    p.refuse = wire::CompletionStatus::kLocalError;
    return p;
  }
  p.offset = cmd.local_tagged_offset - registered[*p.region].base_tagged_offset;
  return p;
}

wire::Bytes AtomicOriginalOnWire(uint64_t host_value) {
  wire::Bytes out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(host_value >> (56 - 8 * i));
  return out;
}

wire::CompletionStatus StatusFor(WcClass c) {
  switch (c) {
    case WcClass::kSuccess:
      return wire::CompletionStatus::kSuccess;
    case WcClass::kFlushed:
      return wire::CompletionStatus::kFlushed;
    case WcClass::kLocal:
      return wire::CompletionStatus::kLocalError;
    case WcClass::kRemote:
      return wire::CompletionStatus::kRemoteError;
  }
  return wire::CompletionStatus::kRemoteError;
}

uint64_t CommandTracker::Add(const wire::Command& cmd) {
  pending_.push_back(Entry{next_slot_, cmd, false, {}});
  return next_slot_++;
}

const wire::Command* CommandTracker::Find(uint64_t slot) const {
  for (const Entry& e : pending_) {
    if (e.slot == slot) return &e.cmd;
  }
  return nullptr;
}

void CommandTracker::Finish(uint64_t slot, wire::CompletionStatus status, uint32_t native, wire::Bytes moved) {
  for (Entry& e : pending_) {
    if (e.slot != slot || e.done) continue;
    e.done = true;
    e.result.completion = wire::Completion{e.cmd.command_id, e.cmd.type, status, native};
    if (status == wire::CompletionStatus::kSuccess) e.result.moved = std::move(moved);
    return;
  }
}

void CommandTracker::Count(const wire::Completion& c) {
  if (c.status == wire::CompletionStatus::kSuccess) {
    ++counts_.completed;
  } else if (c.status == wire::CompletionStatus::kFlushed) {
    ++counts_.flushed;
  } else {
    ++counts_.failed;
    if (counts_.failed_command_id == 0) counts_.failed_command_id = c.command_id;
  }
}

std::vector<CommandTracker::Done> CommandTracker::TakeReady() {
  std::vector<Done> out;
  std::size_t n = 0;
  while (n < pending_.size() && pending_[n].done) {
    Count(pending_[n].result.completion);
    out.push_back(std::move(pending_[n].result));
    ++n;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

void CommandTracker::Settle() {
  for (Entry& e : pending_) {
    Count(e.done ? e.result.completion
                 : wire::Completion{e.cmd.command_id, e.cmd.type, wire::CompletionStatus::kFlushed, 0});
  }
  pending_.clear();
}

IrdOrd ChooseIrdOrd(uint32_t peer_ord, uint32_t peer_ird, uint32_t device_max_ird, uint32_t device_max_ord,
                    uint32_t min_ird) {
  constexpr uint32_t kMask = 0x3FFF;  // RFC 6581 field width; 0x3FFF = no automatic negotiation
  IrdOrd r;
  uint32_t ird = std::max(std::min(peer_ord, kMask), min_ird);
  r.ird = static_cast<uint16_t>(std::min(ird, device_max_ird));
  r.ord = static_cast<uint16_t>(std::min({peer_ird, device_max_ord, uint32_t{16}}));
  return r;
}

wire::Bytes ConnectionEvents::Emit(wire::EventRecord ev) {
  ++next_msn_;
  ++events_sent_;
  wire::Bytes out;
  wire::EncodeEventRecord(ev, out);
  return out;
}

std::optional<wire::Bytes> ConnectionEvents::OnCommandDone(const CommandTracker::Done& done) {
  if (stopped_) return std::nullopt;
  return Emit(wire::MakeCommandCompletedEvent(next_msn_, done.completion, done.moved));
}

std::optional<wire::Bytes> ConnectionEvents::OnCompletion(const Completion& c) {
  using K = Completion::Kind;
  if (c.kind == K::kAsyncError) stack_error_ = true;
  if (stopped_) {
    if (c.kind != K::kSendComplete && c.kind != K::kReceive && c.kind != K::kReceiveImm) ++completion_errors_;
    return std::nullopt;
  }
  switch (c.kind) {
    case K::kSendComplete:
      return std::nullopt;
    case K::kReceive:
      // Verbs completions do not say whether the message carried SE.
      return Emit(wire::MakeSendEvent(next_msn_, c.data, std::nullopt, c.invalidated_stag));
    case K::kReceiveImm:
      return Emit(wire::MakeImmediateDataEvent(next_msn_, c.immediate, std::nullopt));
    case K::kReceiveError:
    case K::kSendError:
    case K::kAsyncError: {
      ++completion_errors_;
      // A flushed work request means the QP already left Full Operation:
      // the error that caused it (a Terminate) cannot be reported in-band.
      stopped_ = true;
      if (c.flushed) return std::nullopt;
      const wire::ErrorSource src = c.kind == K::kReceiveError ? wire::ErrorSource::kReceiveQueue
                                    : c.kind == K::kSendError  ? wire::ErrorSource::kSendQueue
                                                               : wire::ErrorSource::kAsyncEvent;
      return Emit(wire::MakeCompletionErrorEvent(next_msn_, src, c.status));
    }
  }
  return std::nullopt;
}

wire::PreviousOutcome OutcomeOf(uint32_t connection_serial, const ConnectionEvents& events) {
  wire::PreviousOutcome o;
  o.connection_serial = connection_serial;
  o.outcome = events.stack_error() ? wire::ConnectionOutcome::kTerminateSent : wire::ConnectionOutcome::kClosed;
  o.events_sent = static_cast<uint16_t>(std::min<uint32_t>(events.events_sent(), 0xFFFF));
  o.completion_errors = static_cast<uint16_t>(std::min<uint32_t>(events.completion_errors(), 0xFFFF));
  return o;
}

}  // namespace rdmapct::agent
