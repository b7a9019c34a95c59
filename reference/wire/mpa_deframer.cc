#include "reference/wire/mpa_deframer.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"

namespace rdmapct::wire {
namespace {

constexpr std::size_t kNoMarker = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kOctetsBetweenMarkers = kMarkerInterval - kMarkerSize;  // 508

}  // namespace

// Where one FPDU's Markers sit. "Logical" octets are the FPDU without
// Markers (ULPDU_Length is logical 0, the last CRC octet fpdu_length - 1);
// the first inner Marker sits just before logical octet `first`, the next
// ones every 508 logical octets. Wire(i) maps a logical octet to its index
// on the wire, counted from the FPDU's first octet (its leading Marker, if any).
struct MpaDeframer::Layout {
  std::size_t lead = 0;           // kMarkerSize when a Marker precedes ULPDU_Length
  std::size_t first = kNoMarker;  // no inner Marker at all without Markers
  std::size_t ulpdu_length = 0;
  std::size_t fpdu_length = 0;
  std::size_t inner = 0;
  std::size_t wire_length = 0;

  std::size_t Before(std::size_t i) const { return i >= first ? 1 + (i - first) / kOctetsBetweenMarkers : 0; }
  std::size_t Wire(std::size_t i) const { return lead + i + kMarkerSize * Before(i); }
};

MpaDeframer::MpaDeframer(const MpaDeframerConfig& config)
    : config_(config),
      phase_(config.expect_startup_frame ? Phase::kStartup : Phase::kFpdus),
      full_operation_configured_(!config.wait_for_full_operation),
      position_(config.first_position) {
  if (phase_ == Phase::kStartup) pending_need_ = 1;
}

void MpaDeframer::StartFullOperation(bool crc_enabled, bool markers_enabled) {
  config_.crc_enabled = crc_enabled;
  config_.markers_enabled = markers_enabled;
  full_operation_configured_ = true;
  if (phase_ == Phase::kHeld) phase_ = Phase::kFpdus;
}

Status MpaDeframer::Finish() const {
  if (error_) return *error_;
  if (phase_ == Phase::kStartup) {
    return DecodeError{DecodeErrorKind::kTruncated, "MPA Request/Reply Frame", consumed_, pending_.size()};
  }
  if (!pending_.empty()) {
    return DecodeError{DecodeErrorKind::kTruncated, "FPDU", consumed_, pending_.size()};
  }
  return Ok{};
}

bool MpaDeframer::Fail(DecodeError e) {
  error_ = e;
  phase_ = Phase::kFailed;
  return false;
}

Status MpaDeframer::FeedImpl(ByteSpan chunk, const Sink& sink) {
  if (error_) return *error_;  // REQ R5044-8-09: nothing more after an error
  fed_ += chunk.size();
  if (phase_ == Phase::kStartup) {
    if (!DrainPending(chunk, sink)) return *error_;
    if (phase_ == Phase::kStartup) return Ok{};
  }
  if (phase_ == Phase::kHeld) {
    held_.insert(held_.end(), chunk.begin(), chunk.end());
    return Ok{};
  }
  if (!held_.empty()) {
    const Bytes held = std::move(held_);
    held_.clear();
    if (!FeedFpdus(held, sink)) return *error_;
  }
  if (!FeedFpdus(chunk, sink)) return *error_;
  return Ok{};
}

// Fast path: parse FPDUs in place inside `chunk`; an incomplete tail goes
// to pending_ and is completed by later chunks (DrainPending).
bool MpaDeframer::FeedFpdus(ByteSpan chunk, const Sink& sink) {
  if (!pending_.empty()) {
    if (!DrainPending(chunk, sink)) return false;
    if (!pending_.empty()) return true;  // chunk used up, unit still incomplete
  }
  const uint8_t* p = chunk.data();
  std::size_t n = chunk.size();
  while (n > 0) {
    const Step s = ParseFpdu(p, n, /*in_chunk=*/true, sink);
    if (s.failed) return false;
    if (s.consumed == 0) {
      pending_.assign(p, p + n);
      pending_need_ = s.need;
      return true;
    }
    p += s.consumed;
    n -= s.consumed;
  }
  return true;
}

// Tops pending_ up to pending_need_ from `chunk` and parses once it is
// there. pending_ never holds more than one unit (startup frame or FPDU):
// it is only filled to the size the unit was found to need, so a completed
// parse consumes all of it.
bool MpaDeframer::DrainPending(ByteSpan& chunk, const Sink& sink) {
  for (;;) {
    if (pending_.size() < pending_need_) {
      const std::size_t take = std::min(pending_need_ - pending_.size(), chunk.size());
      pending_.insert(pending_.end(), chunk.begin(), chunk.begin() + take);
      chunk = chunk.subspan(take);
      if (pending_.size() < pending_need_) return true;
    }
    const Step s = phase_ == Phase::kStartup ? ParseStartupFrame(pending_)
                                             : ParseFpdu(pending_.data(), pending_.size(), false, sink);
    if (s.failed) return false;
    if (s.consumed == 0) {
      pending_need_ = s.need;
      continue;
    }
    pending_.clear();
    pending_need_ = 0;
    return true;
  }
}

MpaDeframer::Step MpaDeframer::ParseStartupFrame(ByteSpan data) {
  auto r = DecodeMpaStartupFrame(data, {.expect = config_.startup_kind});
  if (!r.ok()) {
    if (r.error().kind != DecodeErrorKind::kTruncated) return {0, 0, !Fail(r.error().At(consumed_))};
    // Re-check octet by octet while the key arrives, so a bad key is seen at once.
    const std::size_t need = data.size() < kMpaStartupHeaderSize ? data.size() + 1 : MpaStartupFrameLength(data);
    return {0, need, false};
  }
  startup_frame_ = std::move(*r);
  const std::size_t length = MpaStartupFrameLength(data);
  consumed_ += length;
  // REQ R5044-4.3-10, R5044-7.1.2-R07: SeqStart is the first octet after the
  // frame; Markers never appear in the Request/Reply (R5044-7.1-05).
  position_ = 0;
  phase_ = full_operation_configured_ ? Phase::kFpdus : Phase::kHeld;
  return {length, 0, false};
}

bool MpaDeframer::CheckHeader(uint16_t ulpdu_length, uint64_t header_offset) {
  if (ulpdu_length > config_.max_ulpdu_length) {
    return Fail({DecodeErrorKind::kTooLong, "ULPDU_Length", header_offset, ulpdu_length});
  }
  if (config_.reject_shorter_than_ddp_header && ulpdu_length < MpaDeframerConfig::kSmallestDdpHeader) {
    return Fail({DecodeErrorKind::kInvalidValue, "ULPDU_Length", header_offset, ulpdu_length});
  }
  return true;
}

MpaDeframer::Step MpaDeframer::ParseFpdu(const uint8_t* p, std::size_t n, bool in_chunk, const Sink& sink) {
  Layout l;
  if (config_.markers_enabled) {
    // REQ R5044-4.3-07, R5044-4.3-10: a Marker due at the FPDU's start precedes it.
    l.lead = IsMarkerPosition(position_) ? kMarkerSize : 0;
    l.first = kMarkerInterval - (position_ + l.lead) % kMarkerInterval;
  }
  // REQ R5044-6-04: ULPDU_Length tells whether the whole FPDU is present.
  const std::size_t header_need = l.Wire(1) + 1;
  if (n < header_need) return {0, header_need, false};
  const uint16_t ulpdu_length = static_cast<uint16_t>(p[l.Wire(0)] << 8 | p[l.Wire(1)]);
  MpaFpdu f;
  f.offset = consumed_;
  f.header_offset = consumed_ + l.lead;
  if (!CheckHeader(ulpdu_length, f.header_offset)) return {0, 0, true};
  l.ulpdu_length = ulpdu_length;
  l.fpdu_length = FpduLength(ulpdu_length);
  if (l.fpdu_length > l.first) l.inner = 1 + (l.fpdu_length - l.first - 1) / kOctetsBetweenMarkers;
  l.wire_length = l.lead + l.fpdu_length + kMarkerSize * l.inner;
  if (n < l.wire_length) return {0, l.wire_length, false};

  f.wire_length = static_cast<uint32_t>(l.wire_length);
  f.ulpdu_length = ulpdu_length;
  f.markers = static_cast<uint16_t>(l.inner + (l.lead ? 1 : 0));
  f.shorter_than_ddp_header = ulpdu_length < MpaDeframerConfig::kSmallestDdpHeader;
  const std::size_t crc_logical = l.fpdu_length - kCrc32cSize;
  const std::size_t crc_wire = l.Wire(crc_logical);
  uint8_t crc_field[kCrc32cSize];
  for (std::size_t k = 0; k < kCrc32cSize; ++k) crc_field[k] = p[l.Wire(crc_logical + k)];
  f.received_crc = LoadCrc32c(crc_field);
  // REQ R5044-4.4-14, R5044-6-02: the CRC covers every wire octet before the
  // CRC field that belongs to this FPDU - leading Marker (R5044-4.4-12),
  // inner Markers (R5044-4.3-02) and one between PAD and CRC (R5044-4.4-11).
  // REQ R5044-4.1-07, R5044-7.1.1-13: not checked with CRCs off.
  f.crc_checked = config_.crc_enabled;
  if (config_.crc_enabled || config_.compute_crc_when_disabled) f.computed_crc = Crc32c(ByteSpan(p, crc_wire));
  if (config_.markers_enabled && config_.check_markers) CheckMarkers(p, l, f);
  const uint16_t bad_fpduptr = f.marker_ok ? 0 : LoadMarker(p + (f.bad_marker_offset - consumed_)).fpduptr;
  if (!Judge(f, consumed_ + crc_wire, bad_fpduptr)) return {0, 0, true};
  bool contiguous = false;
  f.ulpdu = Ulpdu(p, l, contiguous);
  f.zero_copy = in_chunk && contiguous;
  // REQ R5044-3-07, R5044-4.3-14, R5044-4.3-15: one ULPDU and its length per FPDU.
  sink.fn(sink.ctx, f);
  consumed_ += l.wire_length;
  position_ += static_cast<uint32_t>(l.wire_length);
  ++fpdus_;
  return {l.wire_length, 0, false};
}

// REQ R5044-5.2-02, R5044-8-03: compares each FPDUPTR with the FPDU chain;
// REQ R5044-4.3-09: low two bits treated as zero; REQ R5044-4.2-03: RESERVED
// ignored. Records the first mismatch in f.
void MpaDeframer::CheckMarkers(const uint8_t* p, const Layout& l, MpaFpdu& f) {
  auto check = [&](std::size_t wire_index, std::size_t expected) {
    const uint16_t got = LoadMarker(p + wire_index).fpduptr;
    if (FpduPtrForCompare(got) == FpduPtrForCompare(static_cast<uint16_t>(expected))) return true;
    f.marker_ok = false;
    f.bad_marker_offset = consumed_ + wire_index;
    return false;
  };
  // REQ R5044-4.3-07, R5044-4.3-13: a Marker between FPDUs holds 0.
  if (l.lead != 0 && !check(0, 0)) return;
  // REQ R5044-4.3-05, R5044-4.3-11: inner Markers point back to ULPDU_Length.
  for (std::size_t k = 0; k < l.inner; ++k) {
    const std::size_t wire_index = l.lead + l.first + k * kMarkerInterval;
    if (!check(wire_index, wire_index - l.lead)) return;
  }
}

// Decides whether the FPDU may be delivered. REQ R5044-4.4-15: a CRC
// mismatch makes it invalid; REQ R5044-8-T03: a Marker mismatch counts only
// when the CRC is valid (or not checked).
bool MpaDeframer::Judge(MpaFpdu& f, uint64_t crc_offset, uint16_t bad_fpduptr) {
  if (f.crc_checked && f.computed_crc != f.received_crc) {
    f.crc_ok = false;
    if (!config_.continue_after_crc_error) {
      return Fail({DecodeErrorKind::kCrcMismatch, "CRC", crc_offset, uint64_t{f.received_crc} << 32 | f.computed_crc});
    }
  }
  if (!f.marker_ok && f.crc_ok && !config_.continue_after_marker_mismatch) {
    return Fail({DecodeErrorKind::kMarkerMismatch, "FPDUPTR", f.bad_marker_offset, bad_fpduptr});
  }
  return true;
}

// The ULPDU without Markers: a view of the wire octets when no Marker
// splits it, else gathered into ulpdu_buf_ (which only ever grows).
ByteSpan MpaDeframer::Ulpdu(const uint8_t* p, const Layout& l, bool& contiguous) {
  const std::size_t begin = kUlpduLengthSize;
  const std::size_t length = l.ulpdu_length;
  const std::size_t end = begin + length;
  contiguous = length == 0 || l.Before(begin) == l.Before(end - 1);
  if (contiguous) return ByteSpan(p + l.Wire(begin), length);
  if (ulpdu_buf_.size() < length) ulpdu_buf_.resize(length);
  uint8_t* dst = ulpdu_buf_.data();
  for (std::size_t i = begin; i < end;) {
    const std::size_t before = l.Before(i);
    const std::size_t segment_end = std::min(end, l.first + before * kOctetsBetweenMarkers);
    std::memcpy(dst, p + l.lead + i + kMarkerSize * before, segment_end - i);
    dst += segment_end - i;
    i = segment_end;
  }
  return ByteSpan(ulpdu_buf_.data(), length);
}

}  // namespace rdmapct::wire
