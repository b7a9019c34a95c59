// Stream decoding driver: the octets of ONE direction of an iWARP connection
// (or a list of bare DDP segments) in, a sequence of decoded frames and
// errors out. It ties together the MPA startup decoder (mpa.h), the MPA
// deframer (mpa_deframer.h, Markers and CRC) and DecodeRdmapSegment (rdmap.h)
// and records where every octet came from, so that a describer
// (describe.h) can name each field at its stream offset.
//
// Used by `rdmapct decode`, the decode benchmark, and later by capture and
// conformance reports. No I/O: the caller hands in the octets.
//
// Offsets are stream offsets: octets from the first octet handed in (for
// bare DDP segments, from the first octet of the first segment, the
// segments counted back to back).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/profile.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

enum class HandshakeMode : uint8_t {
  kAuto,     // present when the stream starts with "MPA ID Re" (both keys' common prefix)
  kPresent,  // the stream starts with an MPA Request or Reply Frame
  kAbsent,   // the stream starts with the first FPDU of Full Operation
};

struct StreamDecodeOptions {
  Profile profile = Profile::kCommit;
  bool crc_enabled = true;       // MPA CRC in use (negotiated, RFC 5044 §7.1.1 C bit)
  bool markers_enabled = false;  // MPA Markers in this direction (negotiated, M bit)
  HandshakeMode handshake = HandshakeMode::kAuto;
  // Keep going after a CRC mismatch, a Marker mismatch (the deframer's
  // continue options, trusting ULPDU_Length) or an undecodable DDP segment;
  // each is still reported through OnError, as not fatal.
  bool continue_after_errors = false;
  // With CRCs off the field "may contain any value" and is not checked
  // (R5044-4.1-07); computing it anyway shows whether the peer still
  // generates it (R5044-4.4-08). Off in the benchmark.
  bool compute_crc_when_disabled = true;
  // Record each Marker (offset, FPDUPTR) in DecodedFpdu::markers.
  bool record_markers = true;
  // Where the octets handed in sit in the whole direction: the stream
  // offset of the first one (added to every reported offset; a capture
  // decodes the part after a gap with the offsets of the TCP stream).
  uint64_t stream_offset = 0;
  // Without a startup frame: the Marker-space position of the first octet
  // handed in, (its SeqNum - SeqStart) mod 2^32 (MpaDeframerConfig::
  // first_position); 0 when the octets start at the first FPDU of Full
  // Operation. Not used when a startup frame is decoded.
  uint32_t first_position = 0;
};

// Maps a "logical" octet index (the octets of one FPDU or segment with the
// Markers removed) to its stream offset. Markers sit every 512 octets of
// stream; logical octet 0 is never inside one.
struct StreamOffsetMap {
  static constexpr uint64_t kNoMarker = std::numeric_limits<uint64_t>::max();
  uint64_t start = 0;                  // stream offset of logical octet 0
  uint64_t before_marker = kNoMarker;  // logical octets before the first Marker
  uint64_t base = 0;                   // logical index that At(0) refers to

  uint64_t At(uint64_t index) const {
    const uint64_t i = index + base;
    if (i < before_marker) return start + i;
    return start + i + kMarkerSize * (1 + (i - before_marker) / (kMarkerInterval - kMarkerSize));
  }
  // The same map with index 0 moved to logical octet base + n.
  StreamOffsetMap From(uint64_t n) const {
    StreamOffsetMap m = *this;
    m.base += n;
    return m;
  }
};

// One Marker found inside (or right before) an FPDU.
struct MarkerSeen {
  uint64_t offset = 0;            // stream offset of the Marker's first octet
  uint16_t reserved = 0;          // RESERVED (ignored on receive, R5044-4.2-03)
  uint16_t fpduptr = 0;           // FPDUPTR as received
  uint16_t expected_fpduptr = 0;  // back-pointer to this FPDU's ULPDU_Length
  bool ok() const { return FpduPtrForCompare(fpduptr) == FpduPtrForCompare(expected_fpduptr); }
};

// The MPA part of one FPDU.
struct DecodedFpdu {
  uint64_t offset = 0;         // first octet, the leading Marker included
  uint64_t header_offset = 0;  // the ULPDU_Length field
  uint32_t wire_length = 0;    // octets on the wire, Markers included
  uint16_t ulpdu_length = 0;
  uint8_t pad_length = 0;
  uint8_t pad[3] = {0, 0, 0};  // PAD octets as received (not checked, R5044-4.1-04)
  uint64_t crc_offset = 0;     // the CRC field
  uint32_t received_crc = 0;
  uint32_t computed_crc = 0;
  bool crc_checked = false;   // CRC in use: compared
  bool crc_computed = false;  // computed_crc is meaningful
  bool crc_ok = true;
  bool marker_ok = true;
  std::span<const MarkerSeen> markers;  // valid during the callback only
  StreamOffsetMap map;                  // logical FPDU octet (0 = ULPDU_Length) -> stream offset
};

// One DDP segment: the ULPDU of an FPDU, or a bare segment.
struct DecodedSegment {
  uint64_t number = 0;                // frame number, 1-based; the startup frame counts
  const DecodedFpdu* fpdu = nullptr;  // nullptr for bare DDP segments
  ByteSpan ulpdu;                     // DDP header + payload, Markers removed (callback only)
  StreamOffsetMap map;                // ulpdu index -> stream offset
  // Decoded with base_offset 0: every offset inside (ddp.header_offset,
  // payload_offset, ulp_payload_offset) is an ulpdu index; map.At() gives
  // the stream offset. Empty when the DDP or RDMAP header is truncated.
  std::optional<RdmapMessageView> rdmap;
  std::optional<DecodeError> error;  // why rdmap is empty (stream offset)
};

struct DecodedStartupFrame {
  uint64_t number = 1;
  uint64_t offset = 0;
  ByteSpan octets;  // the whole frame (valid during the callback)
  MpaStartupFrame frame;
};

// What went wrong, and whether decoding stopped there.
struct StreamError {
  DecodeError error;          // offset = stream offset
  uint64_t frame_number = 0;  // the frame it belongs to (0: before any frame)
  bool fatal = true;
};

// Receives the decoded frames in stream order. A non-fatal error is reported
// right after the frame it belongs to; a fatal one last.
class StreamDecodeSink {
 public:
  virtual ~StreamDecodeSink() = default;
  virtual void OnStartupFrame(const DecodedStartupFrame& frame) = 0;
  virtual void OnSegment(const DecodedSegment& segment) = 0;
  virtual void OnError(const StreamError& error) = 0;
};

struct StreamDecodeSummary {
  uint64_t frames = 0;  // startup frame + segments delivered
  uint64_t errors = 0;  // errors reported, the fatal one included
  std::optional<DecodeError> fatal;
  bool ok() const { return errors == 0; }
};

// True when `stream` starts like an MPA Request/Reply Frame (the 9-octet
// prefix "MPA ID Re" both keys share, or a prefix of it for a shorter stream).
bool LooksLikeMpaStartupFrame(ByteSpan stream);

// REQ R5044-6-03 R5044-4.4-14 R5044-5.2-02
// Decodes an MPA byte stream: the optional Request/Reply Frame, then FPDUs
// (Markers removed and checked, CRC checked per options), each ULPDU as a
// DDP/RDMAP segment under options.profile. An FPDU that is incomplete at the
// end is a fatal kTruncated "FPDU" error at its first octet.
StreamDecodeSummary DecodeMpaStream(ByteSpan stream, const StreamDecodeOptions& options, StreamDecodeSink& sink);

// Decodes bare DDP segments (no MPA framing; options.crc/markers/handshake
// are not used). Segment k starts at the sum of the earlier sizes.
StreamDecodeSummary DecodeDdpSegments(std::span<const ByteSpan> segments, const StreamDecodeOptions& options,
                                      StreamDecodeSink& sink);

// Describe(), plus the received and computed CRC for a CRC mismatch.
std::string DescribeStreamError(const DecodeError& e);

}  // namespace rdmapct::wire
