// Stream decoding driver and field-tree describer (stream_decode.h,
// describe.h): what `rdmapct decode` runs on a user's capture or hex file.
//
// Input layout:
//   octet 0  0x03 profile (0 rfc5040, 1 rfc7306, else commit), 0x04 CRC,
//            0x08 Markers, 0x30 >> 4 handshake (0/3 auto, 1 present,
//            2 absent), 0x40 continue after errors, 0x80 bare DDP segments
//   octet 1  0x01 compute the CRC when disabled, 0x02 record Markers,
//            0x04 render with offsets, 0x08 render every octet
//   the rest: one direction's stream, or (bare) segments, each preceded by
//            a one-octet length.
// Oracles:
//  - the offset maps are right: every ULPDU octet the sink sees is the
//    stream octet its map names, and so are ULPDU_Length, PAD, the CRC
//    field and every recorded Marker (RESERVED and FPDUPTR as on the wire);
//  - frames are numbered 1, 2, ... in order, FPDUs tile the stream from the
//    end of the startup frame, a startup frame re-encodes to its octets;
//  - a segment has either a decoded RDMAP view (equal to
//    DecodeRdmapSegment's) or an error, never both;
//  - errors lie inside the stream; only the last one may be fatal, and only
//    when not told to continue; the summary counts what the sink received;
//  - every described field lies inside the stream and a bit field inside
//    its container; rendering never fails.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fuzz/support.h"
#include "reference/wire/crc32c.h"
#include "reference/wire/describe.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/stream_decode.h"

namespace {

using namespace rdmapct::wire;
using rdmapct::fuzz::InputSplitter;
using rdmapct::fuzz::SameBytes;

void CheckTree(const Field& f, uint64_t stream_size) {
  if (f.length > 0) FUZZ_CHECK(f.offset < stream_size && f.length <= stream_size - f.offset);
  if (f.bit_width > 0) FUZZ_CHECK(uint64_t{f.bit_shift} + f.bit_width <= 8 * f.length);
  (void)BitPattern(f);
  for (const Field& c : f.children) CheckTree(c, stream_size);
}

class CheckingSink : public StreamDecodeSink {
 public:
  CheckingSink(ByteSpan stream, std::vector<ByteSpan> segments, const StreamDecodeOptions& options,
               const TextRenderOptions& render)
      : stream_(stream), segments_(std::move(segments)), options_(options), render_(render) {
    for (ByteSpan s : segments_) total_ += s.size();
    if (segments_.empty()) total_ = stream.size();
  }

  void OnStartupFrame(const DecodedStartupFrame& f) override {
    FUZZ_CHECK(!fatal_seen_ && frames_ == 0 && f.number == 1 && f.offset == 0);
    FUZZ_CHECK(f.octets.data() == stream_.data() && SameBytes(EncodeMpaStartupFrame(f.frame), f.octets));
    next_fpdu_ = f.octets.size();
    ++frames_;
    Describe(DescribeStartupFrame(f));
  }

  void OnSegment(const DecodedSegment& s) override {
    FUZZ_CHECK(!fatal_seen_ && s.number == frames_ + 1);
    FUZZ_CHECK(s.rdmap.has_value() != s.error.has_value());
    auto again = DecodeRdmapSegment(s.ulpdu, options_.profile);
    FUZZ_CHECK(again.ok() == s.rdmap.has_value());
    if (s.rdmap) FUZZ_CHECK(again->ulp_payload_offset == s.rdmap->ulp_payload_offset && again->ctrl == s.rdmap->ctrl);
    if (s.error) FUZZ_CHECK(s.error->offset <= total_);
    if (s.fpdu != nullptr) {
      CheckFpdu(*s.fpdu, s.ulpdu);
      // Every ULPDU octet is the stream octet the map names.
      for (std::size_t i = 0; i < s.ulpdu.size(); ++i) {
        const uint64_t at = s.map.At(i);
        FUZZ_CHECK(at < stream_.size() && stream_[at] == s.ulpdu[i]);
      }
    } else {
      FUZZ_CHECK(segments_index_ < segments_.size());
      FUZZ_CHECK(SameBytes(s.ulpdu, segments_[segments_index_]) && s.map.start == bare_at_);
      bare_at_ += s.ulpdu.size();
      ++segments_index_;
    }
    ++frames_;
    Describe(DescribeSegment(s, options_.profile));
  }

  void OnError(const StreamError& e) override {
    FUZZ_CHECK(!fatal_seen_);
    FUZZ_CHECK(e.error.offset <= total_ && e.error.field != nullptr);
    FUZZ_CHECK(e.frame_number <= frames_ + 1);
    if (!e.fatal) FUZZ_CHECK(options_.continue_after_errors);
    fatal_seen_ = e.fatal;
    if (e.fatal) fatal_ = e.error;
    ++errors_;
    (void)DescribeStreamError(e.error);
  }

  void CheckSummary(const StreamDecodeSummary& sum) const {
    FUZZ_CHECK(sum.frames == frames_ && sum.errors == errors_);
    FUZZ_CHECK(sum.fatal.has_value() == fatal_seen_);
    if (sum.fatal) FUZZ_CHECK(rdmapct::fuzz::SameError(*sum.fatal, fatal_));
  }

 private:
  void CheckFpdu(const DecodedFpdu& f, ByteSpan ulpdu) {
    FUZZ_CHECK(f.offset == next_fpdu_);  // FPDUs tile the stream
    next_fpdu_ = f.offset + f.wire_length;
    FUZZ_CHECK(next_fpdu_ <= stream_.size() && f.ulpdu_length == ulpdu.size());
    FUZZ_CHECK(f.map.At(0) == f.header_offset);
    FUZZ_CHECK((stream_[f.map.At(0)] << 8 | stream_[f.map.At(1)]) == f.ulpdu_length);
    FUZZ_CHECK(f.pad_length == FpduPadLength(f.ulpdu_length));
    const uint64_t pad_at = kUlpduLengthSize + f.ulpdu_length;
    for (uint8_t k = 0; k < f.pad_length; ++k) FUZZ_CHECK(f.pad[k] == stream_[f.map.At(pad_at + k)]);
    uint8_t crc[kCrc32cSize];
    for (std::size_t k = 0; k < kCrc32cSize; ++k) {
      const uint64_t at = f.map.At(pad_at + f.pad_length + k);
      FUZZ_CHECK(at < next_fpdu_);
      crc[k] = stream_[at];
    }
    FUZZ_CHECK(f.crc_offset == f.map.At(pad_at + f.pad_length) && LoadCrc32c(crc) == f.received_crc);
    if (f.crc_checked) FUZZ_CHECK(f.crc_ok == (f.computed_crc == f.received_crc));
    bool all_ok = true;
    for (const MarkerSeen& m : f.markers) {
      FUZZ_CHECK(m.offset >= f.offset && m.offset + kMarkerSize <= next_fpdu_);
      const Marker wire = LoadMarker(stream_.data() + m.offset);
      FUZZ_CHECK(wire.reserved == m.reserved && wire.fpduptr == m.fpduptr);
      all_ok = all_ok && m.ok();
    }
    if (options_.record_markers && options_.markers_enabled) FUZZ_CHECK(f.marker_ok == all_ok);
    if (!options_.markers_enabled) FUZZ_CHECK(f.markers.empty() && f.header_offset == f.offset);
  }

  void Describe(const Field& root) {
    CheckTree(root, total_);
    FUZZ_CHECK(!RenderText(root, render_).empty());
  }

  ByteSpan stream_;
  std::vector<ByteSpan> segments_;
  const StreamDecodeOptions& options_;
  TextRenderOptions render_;
  uint64_t total_ = 0;
  uint64_t frames_ = 0, errors_ = 0, next_fpdu_ = 0, bare_at_ = 0;
  std::size_t segments_index_ = 0;
  bool fatal_seen_ = false;
  DecodeError fatal_{};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  InputSplitter in(data, size);
  const uint8_t a = in.U8();
  const uint8_t b = in.U8();
  StreamDecodeOptions o;
  const uint8_t p = a & 0x03;
  o.profile = p == 0 ? Profile::kRfc5040 : p == 1 ? Profile::kRfc7306 : Profile::kCommit;
  o.crc_enabled = a & 0x04;
  o.markers_enabled = a & 0x08;
  const uint8_t h = (a >> 4) & 0x03;
  o.handshake = h == 1 ? HandshakeMode::kPresent : h == 2 ? HandshakeMode::kAbsent : HandshakeMode::kAuto;
  o.continue_after_errors = a & 0x40;
  o.compute_crc_when_disabled = b & 0x01;
  o.record_markers = b & 0x02;
  TextRenderOptions render;
  render.show_offsets = b & 0x04;
  if (b & 0x08) render.max_octets = std::numeric_limits<std::size_t>::max();

  if (a & 0x80) {
    std::vector<ByteSpan> segments;
    while (!in.empty()) segments.push_back(in.Take(in.U8()));
    CheckingSink sink({}, segments, o, render);
    sink.CheckSummary(DecodeDdpSegments(segments, o, sink));
  } else {
    const ByteSpan stream = in.Rest();
    CheckingSink sink(stream, {}, o, render);
    sink.CheckSummary(DecodeMpaStream(stream, o, sink));
  }
  return 0;
}
