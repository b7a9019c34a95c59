#include "reference/model/resources.h"

#include <algorithm>

namespace rdmapct::model {

// REQ R5041-5.3-03 R5041-5.3-04
// Out-of-order and repeated placement are both legal, so the set merges
// overlapping ranges and counts only new octets.
uint64_t ByteRangeSet::Insert(uint64_t begin, uint64_t end) {
  if (begin >= end) return 0;
  // Fast path: in-order arrival extends the last range.
  if (!ranges_.empty() && ranges_.back().second == begin && ranges_.back().first <= begin) {
    ranges_.back().second = end;
    covered_ += end - begin;
    return end - begin;
  }
  uint64_t before = covered_;
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  merged.reserve(ranges_.size() + 1);
  bool placed = false;
  for (const auto& r : ranges_) {
    if (r.second < begin) {
      merged.push_back(r);
    } else if (end < r.first) {
      if (!placed) {
        merged.emplace_back(begin, end);
        placed = true;
      }
      merged.push_back(r);
    } else {
      begin = std::min(begin, r.first);
      end = std::max(end, r.second);
    }
  }
  if (!placed) merged.emplace_back(begin, end);
  std::sort(merged.begin(), merged.end());
  ranges_ = std::move(merged);
  covered_ = 0;
  for (const auto& r : ranges_) covered_ += r.second - r.first;
  return covered_ - before;
}

bool ByteRangeSet::CoversPrefix(uint64_t end) const {
  if (end == 0) return true;
  return !ranges_.empty() && ranges_.front().first == 0 && ranges_.front().second >= end;
}

MemoryRegion RegionFromAdvertisement(const wire::AdvertisedRegion& region, uint32_t stream_id, uint32_t memory_object) {
  MemoryRegion m;
  m.stag = region.stag;
  m.base_tagged_offset = region.base_tagged_offset;
  m.length = region.length;
  m.access = region.access;
  m.stream_id = (region.attributes & wire::kAttrForeign) ? stream_id + 1 : stream_id;
  m.remote_invalidatable = (region.attributes & wire::kAttrInvalidatable) != 0;
  m.shared = (region.attributes & wire::kAttrShared) != 0;
  m.memory_object = memory_object;
  m.object_offset = region.object_offset;
  return m;
}

uint32_t Resources::CreateMemoryObject(std::size_t size) {
  objects_.push_back({wire::Bytes(size, 0), nullptr, nullptr});
  return static_cast<uint32_t>(objects_.size() - 1);
}

uint32_t Resources::CreateMemoryObject(wire::Bytes contents) {
  objects_.push_back({std::move(contents), nullptr, nullptr});
  return static_cast<uint32_t>(objects_.size() - 1);
}

uint32_t Resources::CreateMemoryObject(std::shared_ptr<const wire::Bytes> initial) {
  if (!initial) return CreateMemoryObject(std::size_t{0});
  objects_.push_back({{}, std::move(initial), nullptr});
  return static_cast<uint32_t>(objects_.size() - 1);
}

uint32_t Resources::CreateSharedMemoryObject(std::shared_ptr<wire::Bytes> memory) {
  if (!memory) return CreateMemoryObject(std::size_t{0});
  objects_.push_back({{}, nullptr, std::move(memory)});
  return static_cast<uint32_t>(objects_.size() - 1);
}

wire::Bytes Resources::ReleaseObjectBytes(uint32_t id) {
  if (id >= objects_.size()) return {};
  MemoryObject& o = objects_[id];
  if (o.common) return *o.common;
  if (o.shared) return *std::exchange(o.shared, nullptr);
  return std::exchange(o.own, {});
}

std::span<uint8_t> Resources::ObjectBytes(uint32_t id) {
  if (id >= objects_.size()) return {};
  MemoryObject& o = objects_[id];
  if (o.common) return *o.common;
  if (o.shared) o.own.assign(o.shared->begin(), o.shared->end()), o.shared.reset();
  return o.own;
}

std::span<const uint8_t> Resources::ObjectBytes(uint32_t id) const {
  if (id >= objects_.size()) return {};
  return objects_[id].view();
}

bool Resources::RegisterRegion(const MemoryRegion& region) {
  if (region.memory_object >= objects_.size()) return false;
  const uint64_t size = objects_[region.memory_object].view().size();
  if (region.object_offset > size || region.length > size - region.object_offset) return false;
  if (region.base_tagged_offset + region.length < region.base_tagged_offset) return false;
  regions_[region.stag] = region;
  return true;
}

MemoryRegion& Resources::AddRegion(uint32_t stag, uint64_t base_tagged_offset, uint64_t length, uint8_t access,
                                   uint32_t stream_id) {
  MemoryRegion r;
  r.stag = stag;
  r.base_tagged_offset = base_tagged_offset;
  r.length = length;
  r.access = access;
  r.stream_id = stream_id;
  r.memory_object = CreateMemoryObject(length);
  regions_[stag] = r;
  return regions_[stag];
}

const MemoryRegion* Resources::FindRegion(uint32_t stag) const {
  auto it = regions_.find(stag);
  return it == regions_.end() ? nullptr : &it->second;
}

MemoryRegion* Resources::FindRegion(uint32_t stag) {
  auto it = regions_.find(stag);
  return it == regions_.end() ? nullptr : &it->second;
}

bool Resources::Invalidate(uint32_t stag) {
  MemoryRegion* r = FindRegion(stag);
  if (r == nullptr) return false;
  r->valid = false;
  return true;
}

namespace {

// [begin, begin + length) of an object of `size` octets, clipped; a TO below
// the base or an offset past the object yields an empty range.
std::pair<std::size_t, std::size_t> Clip(const MemoryRegion& region, uint64_t to, std::size_t length,
                                         std::size_t size) {
  if (to < region.base_tagged_offset) return {0, 0};
  const uint64_t rel = to - region.base_tagged_offset;
  if (rel > size || region.object_offset > size - rel) return {0, 0};
  const uint64_t begin = region.object_offset + rel;
  return {static_cast<std::size_t>(begin), static_cast<std::size_t>(std::min<uint64_t>(length, size - begin))};
}

}  // namespace

std::span<uint8_t> Resources::RegionBytes(const MemoryRegion& region, uint64_t to, std::size_t length) {
  std::span<uint8_t> all = ObjectBytes(region.memory_object);
  auto [begin, n] = Clip(region, to, length, all.size());
  return all.subspan(begin, n);
}

std::span<const uint8_t> Resources::RegionBytes(const MemoryRegion& region, uint64_t to, std::size_t length) const {
  std::span<const uint8_t> all = ObjectBytes(region.memory_object);
  auto [begin, n] = Clip(region, to, length, all.size());
  return all.subspan(begin, n);
}

uint64_t Resources::PostReceive(uint32_t size) {
  ReceiveBuffer b;
  b.receive_id = next_receive_id_++;
  b.capacity = size;
  receives_.push_back(std::move(b));
  return receives_.back().receive_id;
}

uint64_t Resources::PostUnboundedReceive() {
  const uint64_t id = PostReceive(0);
  receives_.back().unbounded = true;
  return id;
}

ReceiveBuffer Resources::PopReceive() {
  ReceiveBuffer b = std::move(receives_.front());
  receives_.pop_front();
  return b;
}

}  // namespace rdmapct::model
