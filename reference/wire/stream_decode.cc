#include "reference/wire/stream_decode.h"

#include <algorithm>
#include <cstdio>

#include "reference/wire/mpa_deframer.h"
#include "reference/wire/mpa_fpdu.h"

namespace rdmapct::wire {
namespace {

// The common prefix of "MPA ID Req Frame" and "MPA ID Rep Frame".
constexpr std::size_t kKeyCommonPrefix = 9;

// Turns deframer output into DecodedFpdu/DecodedSegment, decodes DDP/RDMAP,
// and decides which errors stop decoding.
class Driver {
 public:
  Driver(ByteSpan stream, const StreamDecodeOptions& options, StreamDecodeSink& sink)
      : stream_(stream), base_(options.stream_offset), options_(options), sink_(sink) {}

  void SetFpduOrigin(uint64_t origin) { origin_ = origin; }
  uint64_t NextNumber() { return ++number_; }
  bool stopped() const { return summary_.fatal.has_value(); }
  StreamDecodeSummary summary() const { return summary_; }

  void StartupFrame(const DecodedStartupFrame& f) {
    ++summary_.frames;
    sink_.OnStartupFrame(f);
  }

  void Fatal(const DecodeError& e, uint64_t frame_number) {
    if (stopped()) return;
    ++summary_.errors;
    summary_.fatal = e;
    sink_.OnError(StreamError{e, frame_number, true});
  }

  // Reports `e` for frame `n`; fatal unless the options say go on.
  void Report(const DecodeError& e, uint64_t n) {
    if (!options_.continue_after_errors) return Fatal(e, n);
    ++summary_.errors;
    sink_.OnError(StreamError{e, n, false});
  }

  // `base`: stream offset of the first octet the deframer was fed.
  void OnFpdu(const MpaFpdu& f, uint64_t base);
  void OnSegment(ByteSpan ulpdu, const StreamOffsetMap& map, const DecodedFpdu* fpdu);

 private:
  StreamOffsetMap FpduMap(uint64_t header_offset) const;
  void RecordMarkers(const DecodedFpdu& d);

  // The octet at stream offset `at` (offsets include options.stream_offset).
  uint8_t At(uint64_t at) const { return stream_[at - base_]; }
  const uint8_t* Ptr(uint64_t at) const { return stream_.data() + (at - base_); }

  ByteSpan stream_;
  uint64_t base_ = 0;  // stream offset of stream_[0]
  const StreamDecodeOptions& options_;
  StreamDecodeSink& sink_;
  StreamDecodeSummary summary_;
  uint64_t number_ = 0;
  // Stream offset of Marker-space position 0 (SeqStart). May lie before
  // the first octet handed in (first_position): the arithmetic is modulo
  // 2^64, a multiple of the Marker interval, so positions stay right.
  uint64_t origin_ = 0;
  std::vector<MarkerSeen> markers_;  // reused for every FPDU
};

// REQ R5044-4.3-05 R5044-4.3-10: Markers every 512 octets from SeqStart.
StreamOffsetMap Driver::FpduMap(uint64_t header_offset) const {
  StreamOffsetMap m;
  m.start = header_offset;
  if (options_.markers_enabled) m.before_marker = kMarkerInterval - (header_offset - origin_) % kMarkerInterval;
  return m;
}

void Driver::RecordMarkers(const DecodedFpdu& d) {
  markers_.clear();
  if (!options_.markers_enabled || !options_.record_markers) return;
  const uint64_t rel = d.offset - origin_;
  uint64_t m = origin_ + (rel + kMarkerInterval - 1) / kMarkerInterval * kMarkerInterval;
  for (; m + kMarkerSize <= d.offset + d.wire_length; m += kMarkerInterval) {
    const Marker mk = LoadMarker(Ptr(m));
    // REQ R5044-4.3-07: a Marker between FPDUs (leading) points at 0.
    const uint64_t expected = m == d.offset ? 0 : m - d.header_offset;
    markers_.push_back(MarkerSeen{m, mk.reserved, mk.fpduptr, static_cast<uint16_t>(expected)});
  }
}

void Driver::OnFpdu(const MpaFpdu& f, uint64_t base) {
  if (stopped()) return;  // a fatal error was reported inside this stream already
  DecodedFpdu d;
  d.offset = f.offset + base;
  d.header_offset = f.header_offset + base;
  d.wire_length = f.wire_length;
  d.ulpdu_length = f.ulpdu_length;
  d.pad_length = static_cast<uint8_t>(FpduPadLength(f.ulpdu_length));
  d.map = FpduMap(d.header_offset);
  const uint64_t pad_logical = kUlpduLengthSize + f.ulpdu_length;
  for (uint8_t k = 0; k < d.pad_length; ++k) d.pad[k] = At(d.map.At(pad_logical + k));
  d.crc_offset = d.map.At(pad_logical + d.pad_length);
  d.received_crc = f.received_crc;
  d.computed_crc = f.computed_crc;
  d.crc_checked = f.crc_checked;
  d.crc_computed = f.crc_checked || options_.compute_crc_when_disabled;
  d.crc_ok = f.crc_ok;
  d.marker_ok = f.marker_ok;
  RecordMarkers(d);
  d.markers = markers_;
  const uint64_t n = number_ + 1;
  OnSegment(f.ulpdu, d.map.From(kUlpduLengthSize), &d);
  // REQ R5044-4.4-15: a CRC mismatch makes the FPDU invalid.
  if (!f.crc_ok) {
    Report({DecodeErrorKind::kCrcMismatch, "CRC", d.crc_offset, uint64_t{f.received_crc} << 32 | f.computed_crc}, n);
  } else if (!f.marker_ok) {
    // REQ R5044-8-T03: a Marker error counts only when the CRC is good.
    const uint64_t at = f.bad_marker_offset + base;
    Report({DecodeErrorKind::kMarkerMismatch, "FPDUPTR", at, LoadMarker(Ptr(at)).fpduptr}, n);
  }
}

void Driver::OnSegment(ByteSpan ulpdu, const StreamOffsetMap& map, const DecodedFpdu* fpdu) {
  DecodedSegment s;
  s.number = NextNumber();
  s.fpdu = fpdu;
  s.ulpdu = ulpdu;
  s.map = map;
  auto r = DecodeRdmapSegment(ulpdu, options_.profile, 0);
  if (r) {
    s.rdmap = std::move(r).value();
  } else {
    DecodeError e = r.error();
    e.offset = map.At(e.offset);
    s.error = e;
  }
  ++summary_.frames;
  sink_.OnSegment(s);
  if (s.error && (fpdu == nullptr || fpdu->crc_ok)) Report(*s.error, s.number);
}

}  // namespace

bool LooksLikeMpaStartupFrame(ByteSpan stream) {
  const std::size_t n = std::min(stream.size(), kKeyCommonPrefix);
  return n > 0 && std::equal(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(n), kMpaRequestKey.begin());
}

StreamDecodeSummary DecodeMpaStream(ByteSpan stream, const StreamDecodeOptions& options, StreamDecodeSink& sink) {
  Driver driver(stream, options, sink);
  const uint64_t base = options.stream_offset;
  uint64_t fpdus_at = 0;
  const bool handshake = options.handshake == HandshakeMode::kPresent ||
                         (options.handshake == HandshakeMode::kAuto && LooksLikeMpaStartupFrame(stream));
  if (handshake) {
    auto r = DecodeMpaStartupFrame(stream);
    if (!r) {
      driver.Fatal(r.error().At(base), 1);
      return driver.summary();
    }
    fpdus_at = MpaStartupFrameLength(stream);
    DecodedStartupFrame f;
    f.number = driver.NextNumber();
    f.offset = base;
    f.octets = stream.first(fpdus_at);
    f.frame = std::move(r).value();
    driver.StartupFrame(f);
  }
  // REQ R5044-4.3-10, R5044-7.1.2-R07: SeqStart is the first octet after the
  // frame (or, without one, first_position octets before the first octet).
  const uint32_t position = handshake ? 0 : options.first_position;
  driver.SetFpduOrigin(base + fpdus_at - position);
  MpaDeframerConfig config;
  config.crc_enabled = options.crc_enabled;
  config.markers_enabled = options.markers_enabled;
  config.first_position = position;
  config.compute_crc_when_disabled = options.compute_crc_when_disabled;
  // The driver, not the deframer, decides whether a CRC or Marker mismatch
  // stops decoding: it wants to show the offending FPDU first.
  config.continue_after_crc_error = true;
  config.continue_after_marker_mismatch = true;
  MpaDeframer deframer(config);
  const Status fed =
      deframer.Feed(stream.subspan(fpdus_at), [&](const MpaFpdu& f) { driver.OnFpdu(f, base + fpdus_at); });
  if (!driver.stopped()) {
    const Status end = fed ? deframer.Finish() : fed;
    if (!end) driver.Fatal(end.error().At(base + fpdus_at), 0);
  }
  return driver.summary();
}

StreamDecodeSummary DecodeDdpSegments(std::span<const ByteSpan> segments, const StreamDecodeOptions& options,
                                      StreamDecodeSink& sink) {
  Driver driver({}, options, sink);
  uint64_t at = 0;
  for (ByteSpan seg : segments) {
    if (driver.stopped()) break;
    StreamOffsetMap map;
    map.start = options.stream_offset + at;
    driver.OnSegment(seg, map, nullptr);
    at += seg.size();
  }
  return driver.summary();
}

std::string DescribeStreamError(const DecodeError& e) {
  if (e.kind != DecodeErrorKind::kCrcMismatch) return e.Describe();
  // `value` packs both CRCs (received << 32 | computed): print them apart,
  // never as one 64-bit number.
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s in %s at offset %zu: received CRC 0x%08x, computed 0x%08x",
                DecodeErrorKindName(e.kind), e.field, e.offset, static_cast<unsigned>(e.value >> 32),
                static_cast<unsigned>(e.value & 0xFFFFFFFF));
  return buf;
}

}  // namespace rdmapct::wire
