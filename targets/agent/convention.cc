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
  for (std::size_t i = 0; i < layout.size() && i < registered.size(); ++i) {
    const RegionSpec& s = layout[i];
    adv.regions.push_back(wire::AdvertisedRegion{registered[i].stag, registered[i].base_tagged_offset, s.length,
                                                 s.access, s.attributes, s.memory_object, s.object_offset});
  }
  // No previous-connection outcome block: verbs does not tell a ULP whether
  // the stream ended with a Terminate it sent or one it received, and the
  // block must not guess (docs §3.4). Cases that need it are skipped.
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
  ++next_sequence_;
  wire::Bytes out;
  wire::EncodeEventRecord(ev, out);
  return out;
}

std::optional<wire::Bytes> ConnectionEvents::OnCompletion(const Completion& c) {
  using K = Completion::Kind;
  if (stopped_) {
    if (c.kind != K::kSendComplete && c.kind != K::kReceive && c.kind != K::kReceiveImm) ++completion_errors_;
    return std::nullopt;
  }
  switch (c.kind) {
    case K::kSendComplete:
      return std::nullopt;
    case K::kReceive:
      // Verbs completions do not say whether the message carried SE.
      return Emit(wire::MakeSendEvent(next_sequence_, c.data, std::nullopt, c.invalidated_stag));
    case K::kReceiveImm:
      return Emit(wire::MakeImmediateDataEvent(next_sequence_, c.immediate, std::nullopt));
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
      return Emit(wire::MakeCompletionErrorEvent(next_sequence_, src, c.status));
    }
  }
  return std::nullopt;
}

}  // namespace rdmapct::agent
