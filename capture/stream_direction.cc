#include "capture/stream_direction.h"

#include <algorithm>
#include <limits>

#include "capture/capture_stream.h"
#include "capture/decode_text.h"
#include "reference/wire/bytes.h"
#include "reference/wire/mpa_fpdu.h"

namespace rdmapct::capture {
namespace {

using wire::ByteSpan;

// Compacting moves what is left of an incomplete frame to the front: done
// once all is decoded (cheap) or when this much is decoded before it.
constexpr std::size_t kCompactAt = std::size_t{256} << 10;

// Drops the marks before the one that covers `from`.
void PruneMarks(std::vector<FrameMark>& marks, uint64_t from) {
  auto keep =
      std::upper_bound(marks.begin(), marks.end(), from, [](uint64_t o, const FrameMark& m) { return o < m.offset; });
  if (keep != marks.begin()) --keep;
  marks.erase(marks.begin(), keep);
}

}  // namespace

void RecordRanks::Add(uint64_t capture_frame) {
  ++total_;
  uint64_t& n = counts_[capture_frame];
  last_frame_ = capture_frame;
  last_same_before_ = n++;
  last_carries_ = false;
}

void RecordRanks::AttachError(CaptureIssue issue) {
  if (!last_carries_) {
    open_.push_back(carriers_.size());
    carriers_.push_back(Carrier{last_frame_, last_same_before_, 0, false, {}});
    last_carries_ = true;
  }
  carriers_.back().errors.push_back(std::move(issue));
}

// The rank of a frame: the frames starting in an earlier capture frame,
// and those of its own capture frame decoded before it (the same
// direction, lower offsets: what the stable sort kept before it).
void RecordRanks::Settle(uint64_t lowest) {
  std::erase_if(open_, [&](std::size_t i) {
    Carrier& k = carriers_[i];
    if (k.capture_frame >= lowest) return false;
    uint64_t before = folded_;
    for (auto it = counts_.begin(); it != counts_.end() && it->first < k.capture_frame; ++it) before += it->second;
    k.rank = before + k.same_before;
    k.settled = true;
    return true;
  });
  const auto end = counts_.lower_bound(lowest);
  for (auto it = counts_.begin(); it != end; ++it) folded_ += it->second;
  counts_.erase(counts_.begin(), end);
}

std::vector<RecordRanks::Carrier> RecordRanks::TakeErrors() {
  std::vector<Carrier> out = std::move(carriers_);
  carriers_.clear();
  open_.clear();
  std::sort(out.begin(), out.end(), [](const Carrier& a, const Carrier& b) { return a.rank < b.rank; });
  return out;
}

DirectionStreamDecoder::DirectionStreamDecoder(const std::vector<ReassembledConnection>& connections, std::size_t c,
                                               int d, ConnectionFraming& cf, wire::Profile profile,
                                               CaptureStreamSink& sink, RecordRanks& ranks)
    : connections_(connections), c_(c), d_(d), cf_(cf), profile_(profile), sink_(sink), ranks_(ranks) {}

void DirectionStreamDecoder::Append(uint64_t offset, ByteSpan octets, uint64_t frame) {
  const bool jump = pieces_.empty() || pieces_.back().end() != offset;
  if (jump) pieces_.push_back(StreamPiece{offset, {}});
  pieces_.back().octets.insert(pieces_.back().octets.end(), octets.begin(), octets.end());
  buffered_ += octets.size();
  if (jump || marks_.empty() || marks_.back().frame != frame) marks_.push_back(FrameMark{offset, frame});
}

StreamPiece* DirectionStreamDecoder::head() {
  return pieces_.empty() || pieces_.front().offset != 0 || piece_index_ != 0 ? nullptr : &pieces_.front();
}

uint64_t DirectionStreamDecoder::LowestFrame() const {
  if (pieces_.empty() || (pieces_.size() == 1 && pos_ >= pieces_.front().octets.size())) return 0;
  const uint64_t from = pieces_.front().offset + pos_;
  auto it =
      std::upper_bound(marks_.begin(), marks_.end(), from, [](uint64_t o, const FrameMark& m) { return o < m.offset; });
  if (it != marks_.begin()) --it;
  uint64_t lowest = std::numeric_limits<uint64_t>::max();
  for (; it != marks_.end(); ++it) lowest = std::min(lowest, it->frame);
  return lowest == std::numeric_limits<uint64_t>::max() ? 0 : lowest;
}

void DirectionStreamDecoder::Decode(bool final) {
  while (!pieces_.empty() && Step(pieces_.size() > 1 || final)) {
  }
  Compact();
}

// Decodes the front piece as far as it can; true when the piece is done
// (and dropped), false when it waits for more octets.
bool DirectionStreamDecoder::Step(bool complete) {
  if (!piece_started_) StartPiece();
  for (;;) {
    const StreamPiece& p = pieces_.front();
    if (skipping_) pos_ = p.octets.size();
    if (pos_ >= p.octets.size()) {
      if (!complete) return false;
      EndPiece();
      return true;
    }
    if (need_sync_) {
      if (!complete && p.octets.size() - pos_ < kStreamLookahead) return false;
      if (!Resync()) continue;
    }
    if (!DecodeRun(complete)) return false;
  }
}

void DirectionStreamDecoder::StartPiece() {
  piece_started_ = true;
  piece_start_ = pieces_.front().offset;
  handshake_ = piece_index_ == 0 && piece_start_ == 0 && cf_.startup[d_].present;
  need_sync_ = !handshake_;
  after_error_ = false;
  skipping_ = false;
}

void DirectionStreamDecoder::EndPiece() {
  const StreamPiece& p = pieces_.front();
  if (skipping_) {
    const DirectionFraming& f = cf_.directions[d_];
    issues_.push_back(HeldIssue{Issue(IssueSeverity::kWarning, ResyncFailedText(f, skip_from_, p.end()), skip_frame_),
                                true, ever_synced_});
  }
  buffered_ -= p.octets.size();
  pieces_.pop_front();
  pos_ = 0;
  piece_started_ = false;
  ++piece_index_;
  if (!pieces_.empty()) PruneMarks(marks_, pieces_.front().offset);
}

void DirectionStreamDecoder::Compact() {
  if (pieces_.empty() || pos_ == 0) return;
  StreamPiece& p = pieces_.front();
  if (pos_ < p.octets.size() && pos_ < kCompactAt) return;
  p.octets.erase(p.octets.begin(), p.octets.begin() + static_cast<std::ptrdiff_t>(pos_));
  p.offset += pos_;
  buffered_ -= pos_;
  pos_ = 0;
  PruneMarks(marks_, p.offset);
}

// Moves pos_ to the next FPDU boundary; false (skipping the rest of the
// piece, reported when it ends) when there is none.
bool DirectionStreamDecoder::Resync() {
  const StreamPiece& p = pieces_.front();
  DirectionFraming& f = cf_.directions[d_];
  const uint64_t from = p.offset + pos_;
  const std::optional<std::size_t> at = FindFpduBoundary(p, pos_, f, profile_);
  if (!at) {
    skipping_ = true;
    skip_from_ = from;
    skip_frame_ = FrameAt(from);
    return false;
  }
  const uint64_t to = p.offset + *at;
  AdoptFoundFraming(cf_, f, to);
  const std::string what = ResyncFoundText(
      {from, to, FrameAt(to), after_error_, piece_index_ == 0, conn().directions[d_].syn, f.crc, piece_start_});
  if (!what.empty()) issues_.push_back(HeldIssue{Issue(IssueSeverity::kWarning, what, FrameAt(to)), false, false});
  ever_synced_ = true;
  need_sync_ = false;
  pos_ = *at;
  return true;
}

// True while the FPDU at pos_ is not all there (no Markers: its length is
// known), so that a long FPDU is parsed once, not once per TCP segment.
bool DirectionStreamDecoder::Waiting(bool complete) const {
  const StreamPiece& p = pieces_.front();
  if (complete || handshake_ || cf_.directions[d_].markers) return false;
  const std::size_t have = p.octets.size() - pos_;
  return have < 2 || have < wire::FpduLength(wire::LoadBe16(&p.octets[pos_]));
}

// One wire::DecodeMpaStream run from pos_; false when it waits for more octets.
bool DirectionStreamDecoder::DecodeRun(bool complete) {
  if (Waiting(complete)) return false;
  const StreamPiece& p = pieces_.front();
  const DirectionFraming& f = cf_.directions[d_];
  wire::StreamDecodeOptions o;
  o.profile = profile_;
  o.crc_enabled = f.crc;
  o.markers_enabled = f.markers;
  o.handshake = handshake_ ? wire::HandshakeMode::kPresent : wire::HandshakeMode::kAbsent;
  o.continue_after_errors = false;  // after an error the framing is found again (Resync)
  o.stream_offset = p.offset + pos_;
  if (f.markers && f.seq_start) o.first_position = static_cast<uint32_t>(o.stream_offset - *f.seq_start);
  call_records_ = 0;
  const wire::StreamDecodeSummary sum = wire::DecodeMpaStream(ByteSpan(p.octets).subspan(pos_), o, *this);
  if (call_records_ > 0) handshake_ = false;
  const uint64_t next = call_records_ > 0 ? last_offset_ + last_length_ : o.stream_offset;
  if (!sum.fatal) {
    pos_ = p.octets.size();
    return true;
  }
  if (sum.fatal->kind == wire::DecodeErrorKind::kTruncated) {
    if (!complete) {
      pos_ = static_cast<std::size_t>(next - p.offset);  // the incomplete frame waits
      return false;
    }
    const DirectionStream& ds = conn().directions[d_];
    // Not only the last gap: the stream may have found later ones already.
    const bool gap_follows = pieces_.size() > 1 || ds.GapAt(p.end());
    TruncatedText t = DescribeTruncated(ds, *sum.fatal, FrameAt(sum.fatal->offset), gap_follows);
    CaptureIssue issue = Issue(t.severity, t.message, FrameAt(sum.fatal->offset));
    if (t.severity == IssueSeverity::kError) issue.error = *sum.fatal;
    issues_.push_back(HeldIssue{std::move(issue), false, false});
    pos_ = p.octets.size();
    return true;
  }
  // Go on after the frame in error when it was delivered (its length is
  // known), else right after the error's offset.
  handshake_ = false;
  const uint64_t resume = call_records_ > 0 ? next : sum.fatal->offset + 1;
  pos_ = static_cast<std::size_t>(std::max<uint64_t>(resume, o.stream_offset + 1) - p.offset);
  pos_ = std::min(pos_, p.octets.size());
  need_sync_ = true;
  after_error_ = true;
  return true;
}

void DirectionStreamDecoder::OnStartupFrame(const wire::DecodedStartupFrame& f) {
  Unit(CapturedUnit::Kind::kStartupFrame, f.offset, f.octets.size(), f.octets, nullptr, std::nullopt);
  Record(f.offset, f.octets.size());
}

void DirectionStreamDecoder::OnSegment(const wire::DecodedSegment& s) {
  const uint64_t offset = s.fpdu != nullptr ? s.fpdu->offset : s.map.At(0);
  const uint64_t length = s.fpdu != nullptr ? s.fpdu->wire_length : s.ulpdu.size();
  Unit(CapturedUnit::Kind::kSegment, offset, length, s.ulpdu, &s, std::nullopt);
  Record(offset, length);
}

void DirectionStreamDecoder::OnError(const wire::StreamError& e) {
  if (e.error.kind == wire::DecodeErrorKind::kTruncated) return;  // DecodeRun looks at the summary
  Unit(CapturedUnit::Kind::kError, e.error.offset, 0, {}, nullptr, e.error);
  CaptureIssue issue = Issue(IssueSeverity::kError, wire::DescribeStreamError(e.error), FrameAt(e.error.offset));
  issue.error = e.error;
  if (e.frame_number != 0 && e.frame_number == call_records_) {
    ranks_.AttachError(std::move(issue));
  } else {
    issues_.push_back(HeldIssue{std::move(issue), false, false});
  }
}

void DirectionStreamDecoder::Unit(CapturedUnit::Kind kind, uint64_t offset, uint64_t length, ByteSpan octets,
                                  const wire::DecodedSegment* s, std::optional<wire::DecodeError> error) {
  CapturedUnit u;
  u.kind = kind;
  u.connection = c_;
  u.direction = d_;
  u.offset = offset;
  u.length = length;
  u.capture_frame = FrameAt(offset);
  u.last_capture_frame = length == 0 ? u.capture_frame : FrameAt(offset + length - 1);
  u.octets = octets;
  u.stable = false;  // the octets move on: a consumer keeps a copy
  u.segment = s;
  u.error = error;
  sink_.OnUnit(u);
}

void DirectionStreamDecoder::Record(uint64_t offset, uint64_t length) {
  ranks_.Add(FrameAt(offset));
  ++frames_;
  ++call_records_;
  last_offset_ = offset;
  last_length_ = length;
}

CaptureIssue DirectionStreamDecoder::Issue(IssueSeverity severity, const std::string& what,
                                           uint64_t capture_frame) const {
  CaptureIssue i;
  i.severity = severity;
  i.message = Who(conn(), cf_, d_) + ": " + what;
  i.connection = c_;
  i.direction = d_;
  i.capture_frame = capture_frame;
  return i;
}

}  // namespace rdmapct::capture
