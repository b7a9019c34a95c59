// Streaming capture decoding, for the audit: the capture is read once,
// frame by frame; TCP reassembly (TcpReassembler in streaming mode) hands
// each direction's octets to its decoder as they become contiguous, and the
// decoder hands each startup frame, ULPDU and error to the sink as soon as
// it is complete. Memory is bounded per connection, not by the capture:
//
//   - TCP: at most ReassemblyOptions::max_out_of_order octets wait out of
//     order per direction (beyond: dropped and reported, as in
//     DecodeCaptureFile), plus ReassemblyOptions::history octets kept to
//     compare retransmissions with;
//   - MPA: a direction holds an incomplete frame, or kStreamLookahead octets
//     while it looks for an FPDU boundary;
//   - the framing (DetermineFraming) is decided as soon as both directions'
//     starts show it, and at the latest when a direction holds
//     CaptureStreamOptions::max_held octets (then from what has arrived: a
//     Reply that comes later than that is not used; reported);
//   - Warnings, errors and frame numbers need no frames kept: RecordRanks
//     (stream_direction.h) places the frames that carry errors.
//
// The warnings and errors, the frame numbers in them, and their order are
// those of DecodeCaptureFile with describe = false: they are given at the
// end (Finish), after the connections' units.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "capture/capture_decode.h"

namespace rdmapct::capture {

struct CaptureStreamOptions {
  wire::Profile profile = wire::Profile::kCommit;
  std::optional<std::size_t> connection;  // decode only this connection
  ReassemblyOptions reassembly;
  // Octets a direction may hold before the framing is decided from what
  // has arrived (see above; a warning then if the other direction's start
  // was incomplete and more of it came). Keep it above kStreamLookahead.
  std::size_t max_held = std::size_t{16} << 20;
  // Once non-zero, no more segments are read in; what was read is finished.
  const std::atomic<int>* stop = nullptr;
};

class CaptureStreamSink {
 public:
  virtual ~CaptureStreamSink() = default;
  // The connection's framing is known: before its first OnUnit. `framing`
  // stays valid until OnConnectionEnd (a resynchronisation may still find
  // that the connection is iWARP); `connection` only during the call.
  virtual void OnFraming(const ReassembledConnection& connection, const ConnectionFraming& framing) = 0;
  // A startup frame, ULPDU or stream error, per direction in stream order,
  // as soon as it is decoded (CapturedUnit::stable is false).
  virtual void OnUnit(const CapturedUnit& unit) = 0;
  // Every later unit of direction d of `connection` has its last octet in
  // capture frame lowest[d] or after it.
  virtual void OnProgress(std::size_t connection, const std::array<uint64_t, 2>& lowest) = 0;
  // Both sides closed their streams with a FIN and all of them was
  // decoded: no more units (the connection's state can be let go of; what
  // it found is still reported in connection order). Default: ignored.
  virtual void OnConnectionClosed(const ReassembledConnection&) {}
  // At the end, in connection order: the connection has no more units.
  virtual void OnConnectionEnd(const ConnectionDecode& connection) = 0;
  // At the end: warnings and errors, in DecodeCaptureFile's order.
  virtual void OnIssue(const CaptureIssue& issue) = 0;
};

class CaptureStreamDecoder {
 public:
  CaptureStreamDecoder(const CaptureStreamOptions& options, CaptureStreamSink& sink);
  ~CaptureStreamDecoder();
  CaptureStreamDecoder(const CaptureStreamDecoder&) = delete;
  CaptureStreamDecoder& operator=(const CaptureStreamDecoder&) = delete;

  // Segments in capture order.
  void Add(const TcpSegment& segment);
  // Decodes what is left and reports the issues; `read`: the reader's
  // summary (its warnings come first). Call once.
  CaptureDecodeSummary Finish(const CaptureReadSummary& read);

  // Octets held now for reassembly and decoding, and the most held at once.
  std::size_t buffered_octets() const;
  std::size_t peak_buffered_octets() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads `path` through a CaptureStreamDecoder.
CaptureDecodeSummary StreamCaptureFile(const std::string& path, const CaptureStreamOptions& options,
                                       CaptureStreamSink& sink);

}  // namespace rdmapct::capture
