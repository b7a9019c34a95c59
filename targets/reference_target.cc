// ReferenceTarget: the configuration, the default region layout and the
// state that outlives connections. The per-connection engine is
// reference_connection.cc.
#include "targets/reference_target.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "reference/wire/mpa_fpdu.h"

namespace rdmapct::targets {

namespace {

using wire::AdvertisedRegion;

constexpr uint16_t kMainObject = 1;        // rw, ro, wo, atomic, foreign, deregistered
constexpr uint16_t kInvalidateObject = 2;  // invalidatable and its alias
constexpr uint16_t kSharedObject = 3;      // the shared region (convention §12)
constexpr uint32_t kSharedObjectSize = 0x40;
constexpr uint32_t kSharedStag = 0x00001d04;  // the `atomic` region's STag
constexpr uint32_t kMainObjectSize = 0x6000;
constexpr uint32_t kInvalidateObjectSize = 0x1000;
constexpr uint64_t kMainBase = 0x00007f3a12340000;
constexpr uint64_t kInvalidateBase = 0x00007f3a12350000;
// Bounds that keep a misconfigured target from allocating without limit.
constexpr uint64_t kMaxTotalMemory = 64u << 20;
constexpr uint32_t kMaxReceiveBuffers = 4096;
constexpr uint32_t kMaxReceiveBufferSize = 1u << 20;

AdvertisedRegion Region(uint32_t stag, uint64_t base, uint32_t length, uint8_t access, uint8_t attributes,
                        uint16_t object, uint32_t offset) {
  return AdvertisedRegion{stag, base, length, access, attributes, object, offset};
}

// The pattern of a memory object (convention §4), computed once per
// (object id, size) and shared: filling 28 KiB octet by octet for every
// connection was most of a fuzz connection's cost.
std::shared_ptr<const wire::Bytes> PatternOf(uint16_t memory_object, uint32_t size) {
  static std::mutex mu;
  static std::map<std::pair<uint16_t, uint32_t>, std::shared_ptr<const wire::Bytes>> cache;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<const wire::Bytes>& p = cache[{memory_object, size}];
  if (!p) {
    auto bytes = std::make_shared<wire::Bytes>(size);
    for (std::size_t x = 0; x < size; ++x) (*bytes)[x] = wire::PatternByte(memory_object, x);
    p = std::move(bytes);
  }
  return p;
}

std::string CheckRegions(const ReferenceTargetConfig& c, const TargetLayout& layout) {
  std::set<uint32_t> stags;
  for (const AdvertisedRegion& r : layout.regions) {
    const std::string name = "region STag " + std::to_string(r.stag);
    auto obj = std::find_if(layout.memory_objects.begin(), layout.memory_objects.end(),
                            [&](const TargetMemoryObject& m) { return m.id == r.memory_object; });
    if (obj == layout.memory_objects.end()) return name + ": unknown memory object";
    if (uint64_t{r.object_offset} + r.length > obj->size) {
      return name + ": lies outside memory object " + std::to_string(obj->id);
    }
    if (r.base_tagged_offset + r.length < r.base_tagged_offset) return name + ": TO range wraps";
    if ((r.attributes & wire::kAttrForeign) && (r.attributes & wire::kAttrDeregistered)) {
      return name + ": foreign and deregistered at once";
    }
    if ((r.access & ~wire::kKnownAccessBits) || (r.attributes & ~wire::kKnownAttributeBits13)) {
      return name + ": unknown access or attribute bits";
    }
    if ((r.attributes & wire::kAttrShared) && !c.concurrent_connections) {
      return name + ": shared without concurrent connections";
    }
    if (!stags.insert(r.stag).second) return name + ": advertised twice";
  }
  // The outcome block and the 1.1 Commands block share the 248 octets.
  const std::size_t room = wire::kAdvertisementMaxLength - wire::kAdvertisementHeaderLength -
                           (c.report_outcome ? wire::kPreviousOutcomeLength : 0) -
                           (c.commands ? wire::kCommandsBlockLength : 0);
  const std::size_t max = room / wire::kRegionEntryLength;
  if (layout.regions.size() > max) {
    return std::to_string(layout.regions.size()) + " regions do not fit the Advertisement (max " + std::to_string(max) +
           ")";
  }
  return "";
}

}  // namespace

// The default layout follows the convention's §3.6 example, so its octets
// can be compared with the document by eye.
TargetLayout DefaultTargetLayout(wire::Profile profile) {
  using namespace wire;
  const bool atomics = ProfileIncludes(profile, Profile::kRfc7306);
  const bool commit = profile == Profile::kCommit;
  TargetLayout l;
  l.memory_objects = {{kMainObject, kMainObjectSize}, {kInvalidateObject, kInvalidateObjectSize}};
  const uint8_t rw = kAccessRemoteRead | kAccessRemoteWrite | (commit ? kAccessFlush | kAccessVerify : 0);
  l.regions.push_back(Region(0x00001a01, kMainBase, 0x6000, rw, 0, kMainObject, 0));
  l.regions.push_back(Region(0x00001b02, kMainBase + 0x2000, 0x1000, kAccessRemoteRead, 0, kMainObject, 0x2000));
  l.regions.push_back(Region(0x00001c03, 0, 0x1000, kAccessRemoteWrite, 0, kMainObject, 0x3000));
  if (atomics) {
    l.regions.push_back(Region(0x00001d04, kMainBase + 0x4000, 0x40,
                               kAccessRemoteRead | kAccessRemoteWrite | kAccessRemoteAtomic, 0, kMainObject, 0x4000));
  }
  l.regions.push_back(Region(0x00002e05, kInvalidateBase, 0x1000, kAccessRemoteRead | kAccessRemoteWrite,
                             kAttrInvalidatable, kInvalidateObject, 0));
  l.regions.push_back(Region(0x00002f06, 0, 0x1000, kAccessRemoteRead, 0, kInvalidateObject, 0));
  // Foreign and deregistered STags over memory that `rw` covers, so the
  // suite can read back that a rejected access changed nothing (§3.2).
  l.regions.push_back(Region(0x00003007, kMainBase + 0x5000, 0x800, kAccessRemoteRead | kAccessRemoteWrite,
                             kAttrForeign, kMainObject, 0x5000));
  l.regions.push_back(Region(0x00003108, kMainBase + 0x5800, 0x800, kAccessRemoteRead | kAccessRemoteWrite,
                             kAttrDeregistered, kMainObject, 0x5800));
  return l;
}

// REQ R7306-5.3-01 R5040-8.1.1-07
TargetLayout ConfiguredLayout(const ReferenceTargetConfig& c) {
  if (c.layout) return *c.layout;
  TargetLayout l = DefaultTargetLayout(c.profile);
  if (!c.shared_regions || !c.concurrent_connections) return l;
  l.memory_objects.push_back({kSharedObject, kSharedObjectSize});
  auto atomic =
      std::find_if(l.regions.begin(), l.regions.end(), [](const AdvertisedRegion& r) { return r.stag == kSharedStag; });
  if (atomic == l.regions.end()) {
    // rfc5040: no atomic region; a shared read/write one takes its place.
    atomic = l.regions.insert(l.regions.begin() + 3,
                              Region(kSharedStag, kMainBase + 0x4000, kSharedObjectSize,
                                     wire::kAccessRemoteRead | wire::kAccessRemoteWrite, 0, kSharedObject, 0));
  }
  atomic->attributes = wire::kAttrShared;
  atomic->memory_object = kSharedObject;
  atomic->object_offset = 0;
  return l;
}

std::string ValidateReferenceTargetConfig(const ReferenceTargetConfig& c) {
  const TargetLayout layout = ConfiguredLayout(c);
  std::set<uint16_t> ids;
  uint64_t total = 0;
  for (const TargetMemoryObject& m : layout.memory_objects) {
    if (!ids.insert(m.id).second) return "memory object " + std::to_string(m.id) + " twice";
    total += m.size;
  }
  if (total > kMaxTotalMemory) return "memory objects exceed 64 MiB";
  if (std::string e = CheckRegions(c, layout); !e.empty()) return e;
  if (c.receive_buffer_count > kMaxReceiveBuffers) return "more than 4096 receive buffers";
  if (c.receive_buffer_size > kMaxReceiveBufferSize) return "receive buffers above 1 MiB";
  if (c.ird > wire::kIrdOrdMask - 1 || c.ord > wire::kIrdOrdMask - 1) {
    return "IRD/ORD above 0x3FFE (RFC 6581 14-bit fields, 0x3FFF is reserved)";
  }
  if (c.mpa.max_private_data > wire::kMpaMaxPrivateDataLength) {
    return "max Private Data above 512 (RFC 5044 §7.1.1)";
  }
  // REQ R6581-9.2-04
  if (c.mpa.rfc6581 && !c.mpa.rtr_send && !c.mpa.rtr_write && !c.mpa.rtr_read) {
    return "RFC 6581 needs at least one RTR type";
  }
  if (!c.mpa.crc_supported && c.mpa.crc) return "a target without CRC support cannot set C in its Reply";
  if (c.mulpdu != 0 && (c.mulpdu < wire::kMinMulpdu || c.mulpdu > wire::kMaxMulpdu)) {
    return "MULPDU outside [128, 64768] (RFC 5044 §3)";
  }
  if (c.mulpdu == 0 && c.emss < wire::kMinMulpdu) return "EMSS below 128";
  if (c.max_inbound_ulpdu < wire::MpaDeframerConfig::kSmallestDdpHeader) {
    return "max inbound ULPDU below the smallest DDP header";
  }
  return "";
}

const char* CloseReasonName(CloseReason r) {
  switch (r) {
    case CloseReason::kNone:
      return "open";
    case CloseReason::kBadRequest:
      return "bad-mpa-request";
    case CloseReason::kRevisionRejected:
      return "mpa-revision-rejected";
    case CloseReason::kEnhancedRejected:
      return "rfc6581-not-supported";
    case CloseReason::kCrcRejected:
      return "crc-not-supported";
    case CloseReason::kConfigError:
      return "config-error";
    case CloseReason::kTerminateSent:
      return "terminate-sent";
    case CloseReason::kTerminateReceived:
      return "terminate-received";
    case CloseReason::kStreamError:
      return "stream-error";
    case CloseReason::kPeerClosed:
      return "peer-closed";
    case CloseReason::kPeerReset:
      return "peer-reset";
    case CloseReason::kBadReply:
      return "bad-mpa-reply";
    case CloseReason::kReplyRejected:
      return "mpa-reply-rejected";
    case CloseReason::kReplyTimeout:
      return "mpa-reply-timeout";
  }
  return "?";
}

const char* ConnectionPhaseName(ConnectionPhase p) {
  switch (p) {
    case ConnectionPhase::kAwaitingRequest:
      return "awaiting-request";
    case ConnectionPhase::kAwaitingFirstFpdu:
      return "awaiting-first-fpdu";
    case ConnectionPhase::kFullOperation:
      return "full-operation";
    case ConnectionPhase::kClosed:
      return "closed";
    case ConnectionPhase::kAwaitingReply:
      return "awaiting-reply";
  }
  return "?";
}

// ---------------------------------------------------------------------------

ReferenceTarget::ReferenceTarget(ReferenceTargetConfig config)
    : config_(std::move(config)),
      layout_(ConfiguredLayout(config_)),
      config_error_(ValidateReferenceTargetConfig(config_)) {
  // The first connection after start is always patterned (§2.4), so the
  // kept memory starts as the pattern (memory_ empty).
  if (!config_error_.empty()) return;
  pattern_.reserve(layout_.memory_objects.size());
  for (const TargetMemoryObject& m : layout_.memory_objects) {
    pattern_.push_back(PatternOf(m.id, m.size));
    shared_objects_.push_back(std::any_of(
        layout_.regions.begin(), layout_.regions.end(),
        [&](const AdvertisedRegion& r) { return r.memory_object == m.id && (r.attributes & wire::kAttrShared); }));
  }
}

void ReferenceTarget::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  serial_ = 0;
  memory_owner_ = 0;
  memory_.clear();
  previous_ = {};
  directive_.reset();
  previous_commands_ = {};
  slots_.clear();
  torn_down_.clear();
  any_torn_down_.store(false, std::memory_order_release);
  shared_memory_.clear();
  shared_invalidated_.clear();
}

std::unique_ptr<ReferenceTargetConnection> ReferenceTarget::Accept() {
  uint32_t serial;
  {
    std::lock_guard<std::mutex> lock(mu_);
    serial = ++serial_;
  }
  return std::make_unique<ReferenceTargetConnection>(*this, serial);
}

std::unique_ptr<ReferenceTargetConnection> ReferenceTarget::Connect() {
  uint32_t serial;
  {
    std::lock_guard<std::mutex> lock(mu_);
    serial = ++serial_;
  }
  return std::make_unique<ReferenceTargetConnection>(*this, serial, true);
}

void ReferenceTarget::SetDirective(const wire::ConnectDirective& d) {
  std::lock_guard<std::mutex> lock(mu_);
  directive_ = d;
}

std::optional<wire::ConnectDirective> ReferenceTarget::TakeDirective() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(directive_, std::nullopt);
}

uint32_t ReferenceTarget::connections_accepted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return serial_;
}

wire::PreviousOutcome ReferenceTarget::previous_outcome() const {
  std::lock_guard<std::mutex> lock(mu_);
  return previous_;
}

wire::Bytes ReferenceTarget::MemorySnapshot(uint16_t memory_object) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (std::size_t i = 0; i < layout_.memory_objects.size() && i < pattern_.size(); ++i) {
    if (layout_.memory_objects[i].id != memory_object) continue;
    return memory_.empty() ? *pattern_[i] : memory_[i];
  }
  return {};
}

std::vector<std::shared_ptr<const wire::Bytes>> ReferenceTarget::LoadMemory(uint32_t serial, bool keep) {
  std::lock_guard<std::mutex> lock(mu_);
  memory_owner_ = serial;
  if (!keep || memory_.empty()) return pattern_;
  std::vector<std::shared_ptr<const wire::Bytes>> out;
  out.reserve(memory_.size());
  for (const wire::Bytes& m : memory_) out.push_back(std::make_shared<const wire::Bytes>(m));
  return out;
}

bool ReferenceTarget::OwnsMemory(uint32_t serial) const {
  std::lock_guard<std::mutex> lock(mu_);
  return serial == memory_owner_;
}

void ReferenceTarget::StoreMemory(uint32_t serial, std::vector<wire::Bytes> objects) {
  std::lock_guard<std::mutex> lock(mu_);
  if (serial != memory_owner_ || objects.size() != pattern_.size()) return;
  memory_ = std::move(objects);
}

void ReferenceTarget::RecordOutcome(const wire::PreviousOutcome& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  previous_ = outcome;
}

wire::CommandCapabilities ReferenceTarget::previous_commands() const {
  std::lock_guard<std::mutex> lock(mu_);
  return previous_commands_;
}

void ReferenceTarget::RecordCommands(const wire::CommandCapabilities& commands) {
  std::lock_guard<std::mutex> lock(mu_);
  previous_commands_ = commands;
}

uint32_t ReferenceTarget::AcquireSlot(uint32_t serial, uint32_t peer) {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<uint32_t> used;
  for (const auto& [s, open] : slots_) used.insert(open.slot);
  uint32_t slot = 0;
  while (used.count(slot)) ++slot;
  slots_[serial] = OpenConnection{slot, peer};
  return slot;
}

void ReferenceTarget::ReleaseSlot(uint32_t serial) {
  std::lock_guard<std::mutex> lock(mu_);
  slots_.erase(serial);
  torn_down_.erase(serial);
}

void ReferenceTarget::TearDownOthers(uint32_t serial) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto self = slots_.find(serial);
  // Case Hash 0: a connection without a Suite Request (a case that writes
  // its own Request) names no peer, so it shares one with nobody; else
  // parallel cases of that kind would tear each other down by timing.
  if (self == slots_.end() || self->second.peer == 0) return;
  for (const auto& [s, open] : slots_) {
    if (s != serial && open.peer == self->second.peer) {
      torn_down_.insert(s);
      any_torn_down_.store(true, std::memory_order_release);
    }
  }
}

std::shared_ptr<wire::Bytes> ReferenceTarget::SharedMemory(uint32_t serial, uint32_t peer, std::size_t index,
                                                           const std::shared_ptr<const wire::Bytes>& initial) {
  std::lock_guard<std::mutex> lock(mu_);
  if (peer == 0 || index >= shared_objects_.size() || !shared_objects_[index] || !initial) return nullptr;
  std::weak_ptr<wire::Bytes>& slot = shared_memory_[{peer, index}];
  std::shared_ptr<wire::Bytes> memory = slot.lock();
  // Only a connection that is still open shares its memory: a finished one
  // (slot released) may linger, but a later connection starts afresh (§2.1).
  const bool other_open = std::any_of(slots_.begin(), slots_.end(),
                                      [&](const auto& e) { return e.first != serial && e.second.peer == peer; });
  if (!memory || !other_open) {
    memory = std::make_shared<wire::Bytes>(*initial);
    slot = memory;
  }
  // Entries of peers whose connections are all gone.
  std::erase_if(shared_memory_, [](const auto& e) { return e.second.expired(); });
  return memory;
}

bool ReferenceTarget::ShareInvalidation(uint32_t peer, uint32_t stag, bool invalidated) {
  std::lock_guard<std::mutex> lock(mu_);
  if (peer == 0) return false;
  if (invalidated) shared_invalidated_.insert({peer, stag});
  return shared_invalidated_.count({peer, stag}) != 0;
}

bool ReferenceTarget::TornDown(uint32_t serial) const {
  // Every octet a connection takes asks this: without the fault nothing is
  // ever torn down, and the answer needs no lock.
  if (!any_torn_down_.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return torn_down_.count(serial) != 0;
}

}  // namespace rdmapct::targets
