// One direction of a connection decoded as its octets arrive (the
// streaming counterpart of capture_decode.cc's DirectionDecoder, with the
// same decisions and the same texts, decode_text.h): the octets wait only
// until they can be decoded, so a direction holds at most an incomplete
// frame, or, to find FPDU boundaries again, kStreamLookahead octets.
// Internal to capture_stream.cc.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "capture/capture_decode.h"
#include "capture/mpa_framing.h"
#include "capture/tcp_reassembly.h"
#include "reference/wire/stream_decode.h"

namespace rdmapct::capture {

class CaptureStreamSink;

// Octets a resynchronisation (FindFpduBoundary) or a framing probe looks
// at beyond its start: with that many in hand, the answer is the one the
// whole stream would give.
inline constexpr std::size_t kStreamLookahead = 5 * kResyncWindow;

// Where the frames carrying errors of one connection fall in the old
// order (all frames of both directions stably sorted by capture frame and
// stream offset), without keeping every frame: counts per capture frame
// are kept only where a later frame may still land.
class RecordRanks {
 public:
  // A frame decoded, in its direction's stream order.
  void Add(uint64_t capture_frame);
  // An error of the frame added last.
  void AttachError(CaptureIssue issue);
  // No frame decoded from now on starts in a capture frame below `lowest`.
  void Settle(uint64_t lowest);
  uint64_t total() const { return total_; }
  struct Carrier {
    uint64_t capture_frame = 0, same_before = 0, rank = 0;  // rank: 0-based, in the old order
    bool settled = false;
    std::vector<CaptureIssue> errors;
  };
  // After Settle(UINT64_MAX): the frames with errors, by rank.
  std::vector<Carrier> TakeErrors();

 private:
  std::map<uint64_t, uint64_t> counts_;  // capture frame -> frames starting there (not yet folded)
  uint64_t folded_ = 0;                  // frames folded out of counts_ (all below every open carrier)
  uint64_t total_ = 0;
  uint64_t last_frame_ = 0, last_same_before_ = 0;
  bool last_carries_ = false;
  std::vector<Carrier> carriers_;
  std::vector<std::size_t> open_;  // indices of the carriers not settled yet
};

// A warning held until the end: whether it goes out depends on whether the
// connection turned out iWARP (DecodeConnection's `unsynced`).
struct HeldIssue {
  CaptureIssue issue;
  bool conditional = false;    // a failed resynchronisation
  bool synced_before = false;  // this direction had found an FPDU boundary before it
};

class DirectionStreamDecoder : public wire::StreamDecodeSink {
 public:
  DirectionStreamDecoder(const std::vector<ReassembledConnection>& connections, std::size_t c, int d,
                         ConnectionFraming& cf, wire::Profile profile, CaptureStreamSink& sink, RecordRanks& ranks);

  // Octets in stream order; a jump in the offset starts a new piece (a gap).
  void Append(uint64_t offset, wire::ByteSpan octets, uint64_t frame);
  // Decodes what can be decoded (the framing is known). `final`: no octets will follow.
  void Decode(bool final);
  // After Decode(true): frees the buffers (the counts and issues stay).
  void Release() {
    std::deque<StreamPiece>().swap(pieces_);
    std::vector<FrameMark>().swap(marks_);
    buffered_ = 0;
  }

  // The octets from stream offset 0, for DetermineFraming (nullptr: none).
  StreamPiece* head();
  std::size_t buffered() const { return buffered_; }
  // The smallest capture frame of the octets not decoded yet (0: none).
  uint64_t LowestFrame() const;
  uint64_t frames() const { return frames_; }
  bool ever_synced() const { return ever_synced_; }
  std::vector<HeldIssue>& issues() { return issues_; }

 private:
  void OnStartupFrame(const wire::DecodedStartupFrame& f) override;
  void OnSegment(const wire::DecodedSegment& s) override;
  void OnError(const wire::StreamError& e) override;
  void Unit(CapturedUnit::Kind kind, uint64_t offset, uint64_t length, wire::ByteSpan octets,
            const wire::DecodedSegment* s, std::optional<wire::DecodeError> error);
  void Record(uint64_t offset, uint64_t length);
  CaptureIssue Issue(IssueSeverity severity, const std::string& what, uint64_t capture_frame) const;
  const ReassembledConnection& conn() const { return connections_[c_]; }
  uint64_t FrameAt(uint64_t offset) const { return FrameAtMarks(marks_, offset); }

  bool Step(bool complete);
  bool Resync();
  bool Waiting(bool complete) const;
  bool DecodeRun(bool complete);
  void EndPiece();
  void StartPiece();
  void Compact();

  const std::vector<ReassembledConnection>& connections_;
  const std::size_t c_;
  const int d_;
  ConnectionFraming& cf_;
  const wire::Profile profile_;
  CaptureStreamSink& sink_;
  RecordRanks& ranks_;

  std::deque<StreamPiece> pieces_;  // the front one is being decoded; the others follow gaps
  std::vector<FrameMark> marks_;    // frames of the octets held
  std::size_t pos_ = 0;             // next octet of pieces_.front() to decode
  std::size_t buffered_ = 0;
  uint64_t piece_index_ = 0, piece_start_ = 0;  // the front piece: its number and first offset
  bool piece_started_ = false;
  bool handshake_ = false;  // the front piece starts with this direction's startup frame
  bool need_sync_ = false, after_error_ = false, skipping_ = false;
  uint64_t skip_from_ = 0, skip_frame_ = 0;  // a failed resynchronisation
  bool ever_synced_ = false;
  uint64_t frames_ = 0;
  uint64_t call_records_ = 0;  // frames delivered by the current DecodeMpaStream
  uint64_t last_offset_ = 0, last_length_ = 0;
  std::vector<HeldIssue> issues_;
};

}  // namespace rdmapct::capture
