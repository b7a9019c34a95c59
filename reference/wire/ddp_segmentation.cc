#include "reference/wire/ddp_segmentation.h"

#include <algorithm>
#include <iterator>

namespace rdmapct::wire {

// REQ R5041-5.2-01 R5041-5.2-03 R5041-5.2-04 R5041-5.2-11 R5041-4.1-04 R5041-4.1-05
Result<std::vector<PlannedDdpSegment>> SegmentDdpMessage(const DdpSegmentHeader& first, ByteSpan message,
                                                         std::size_t mulpdu) {
  if (message.size() > 0xFFFFFFFFu) {
    return DecodeError{DecodeErrorKind::kTooLong, "ULP Message Length", 0, message.size()};
  }
  const std::size_t hlen = first.HeaderLength();
  // A zero-length message still needs its one header-only segment.
  if (mulpdu < hlen || (mulpdu == hlen && !message.empty())) {
    return DecodeError{DecodeErrorKind::kInvalidValue, "MULPDU", 0, mulpdu};
  }
  const std::size_t per_segment = mulpdu - hlen;
  std::vector<PlannedDdpSegment> out;
  out.reserve(message.empty() ? 1 : (message.size() + per_segment - 1) / per_segment);
  std::size_t offset = 0;
  do {
    const std::size_t n = std::min(per_segment, message.size() - offset);
    PlannedDdpSegment seg{first, message.subspan(offset, n)};
    if (first.tagged) {
      seg.header.tagged_offset = first.tagged_offset + offset;  // modulo 2^64 on purpose
    } else {
      seg.header.message_offset = static_cast<uint32_t>(first.message_offset + offset);
    }
    offset += n;
    seg.header.last = offset == message.size();
    out.push_back(seg);
  } while (offset < message.size());
  return out;
}

std::vector<Bytes> EncodeDdpSegments(std::span<const PlannedDdpSegment> segments) {
  std::vector<Bytes> out;
  out.reserve(segments.size());
  for (const PlannedDdpSegment& s : segments) out.push_back(EncodeDdpSegment(s.header, s.payload));
  return out;
}

const char* ReassemblyStatusName(ReassemblyStatus s) {
  switch (s) {
    case ReassemblyStatus::kAccepted:
      return "accepted";
    case ReassemblyStatus::kComplete:
      return "complete";
    case ReassemblyStatus::kNotUntagged:
      return "not untagged";
    case ReassemblyStatus::kQueueMismatch:
      return "QN mismatch";
    case ReassemblyStatus::kMsnMismatch:
      return "MSN mismatch";
    case ReassemblyStatus::kBeyondLast:
      return "beyond the last segment";
    case ReassemblyStatus::kSecondLast:
      return "second last segment";
    case ReassemblyStatus::kTooLong:
      return "DDP Message too long";
    case ReassemblyStatus::kAlreadyComplete:
      return "already complete";
  }
  return "?";
}

// REQ R5041-5.3-03 (out-of-order MO accepted, decisions D-F5)
ReassemblyStatus UntaggedMessageAssembler::Add(const DdpSegmentHeader& h, ByteSpan payload) {
  if (h.tagged) return ReassemblyStatus::kNotUntagged;
  if (complete_) return ReassemblyStatus::kAlreadyComplete;
  if (started_ && h.queue_number != queue_number_) return ReassemblyStatus::kQueueMismatch;
  if (started_ && h.msn != msn_) return ReassemblyStatus::kMsnMismatch;
  const uint64_t begin = h.message_offset;
  const uint64_t end = begin + payload.size();
  if (end > capacity_) return ReassemblyStatus::kTooLong;
  if (message_length_ && end > *message_length_) return ReassemblyStatus::kBeyondLast;
  if (h.last) {
    // REQ R5041-4.1-07: the L=1 segment carries the highest MO; nothing received may end after it.
    if (message_length_ && end != *message_length_) return ReassemblyStatus::kSecondLast;
    if (highest_end_ > end) return ReassemblyStatus::kBeyondLast;
  }
  if (!started_) {
    started_ = true;
    queue_number_ = h.queue_number;
    msn_ = h.msn;
  }
  if (begin == 0) first_header_ = h;
  if (h.last) message_length_ = static_cast<uint32_t>(end);
  if (end > data_.size()) data_.resize(end);
  std::copy(payload.begin(), payload.end(), data_.begin() + static_cast<std::ptrdiff_t>(begin));
  const uint64_t fresh = Insert(begin, end);
  octets_received_ += fresh;
  duplicate_octets_ += payload.size() - fresh;
  highest_end_ = std::max(highest_end_, end);

  complete_ = message_length_.has_value() && octets_received_ == *message_length_;
  return complete_ ? ReassemblyStatus::kComplete : ReassemblyStatus::kAccepted;
}

// Records [begin, end), merging every range it overlaps or touches (the
// stored ranges stay disjoint and non-adjacent), and returns how many of its
// octets were not covered before.
uint64_t UntaggedMessageAssembler::Insert(uint64_t begin, uint64_t end) {
  if (begin == end) return 0;
  uint64_t covered = 0;
  uint64_t merged_begin = begin;
  uint64_t merged_end = end;
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second >= begin) --it;
  while (it != ranges_.end() && it->first <= end) {
    const uint64_t lo = std::max(begin, it->first);
    const uint64_t hi = std::min(end, it->second);
    if (hi > lo) covered += hi - lo;
    merged_begin = std::min(merged_begin, it->first);
    merged_end = std::max(merged_end, it->second);
    it = ranges_.erase(it);
  }
  ranges_[merged_begin] = merged_end;
  return (end - begin) - covered;
}

Bytes UntaggedMessageAssembler::TakeMessage() {
  Bytes out = std::move(data_);
  out.resize(message_length_.value_or(0));
  Reset();
  return out;
}

void UntaggedMessageAssembler::Reset() {
  started_ = complete_ = false;
  queue_number_ = msn_ = 0;
  message_length_.reset();
  first_header_.reset();
  octets_received_ = duplicate_octets_ = highest_end_ = 0;
  ranges_.clear();
  data_.clear();
}

}  // namespace rdmapct::wire
