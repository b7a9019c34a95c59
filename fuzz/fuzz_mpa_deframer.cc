// Streaming MPA deframer (RFC 5044 §4, §6; mpa_deframer.h).
//
// Input layout (front to back, see support.h):
//   octet 0  config: 0x01 CRC, 0x02 Markers, 0x04 continue after CRC error,
//            0x08 continue after Marker mismatch, 0x10 startup frame first,
//            0x20 reject ULPDUs shorter than a DDP header, 0x40 do NOT check
//            Markers, 0x80 compute the CRC even when disabled
//   octet 1  mode: 0x03 startup frame kind (0 Request, 1 Reply, else either),
//            0x04 wait for StartFullOperation after the frame, 0x08/0x10 CRC
//            and Markers passed to StartFullOperation, 0xE0 >> 5 = number of
//            chunk-size octets that follow the next 6 octets
//   octets 2-5  Marker-space position of the first octet (big-endian)
//   octets 6-7  max ULPDU_Length (0 = 65535)
//   chunk-size octets: c < 0x80 -> c octets (0 = an empty Feed),
//            else (c - 0x7F) * 64 octets; used cyclically; none = 1 octet
//   the rest: the TCP payload stream of one direction.
//
// Oracles:
//  - chunking differential: the stream fed whole and fed in the chosen
//    chunks yields the same FPDUs (every field but zero_copy, ULPDU octets
//    by CRC-32C digest), the same error (kind, field, offset, value), the
//    same Finish() and the same startup frame;
//  - an independent reference walk over the whole stream (Marker octets are
//    exactly those at Marker-space positions 0-3 mod 512) recomputes every
//    delivered FPDU: header offset, ULPDU_Length, ULPDU octets, wire length,
//    Marker count, FPDUPTR verdict, received and computed CRC;
//  - FPDUs tile the stream; nothing is delivered after a latched error;
//    without the continue flags crc_ok and marker_ok are always true.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "fuzz/support.h"
#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"

namespace {

using namespace rdmapct::wire;
using rdmapct::fuzz::InputSplitter;
using rdmapct::fuzz::SameError;

struct Record {
  uint64_t offset, header_offset, bad_marker_offset;
  uint32_t wire_length, received_crc, computed_crc, ulpdu_digest;
  uint16_t ulpdu_length, markers;
  bool crc_checked, crc_ok, marker_ok, shorter;
  friend bool operator==(const Record&, const Record&) = default;
};

struct FullOperation {
  bool crc;
  bool markers;
};

struct Outcome {
  std::vector<Record> fpdus;
  std::optional<DecodeError> status;
  std::optional<DecodeError> finish;
  Bytes startup_frame;   // re-encoded, empty if none
  uint64_t fed = 0;
};

// Recomputes one delivered FPDU from the whole stream, independently of the
// deframer's layout arithmetic.
class ReferenceWalk {
 public:
  ReferenceWalk(ByteSpan stream, const MpaFpdu& f, uint32_t position, bool markers)
      : s_(stream), f_(f), pos0_(position), markers_(markers), i_(f.offset) {}

  void Check(const MpaDeframerConfig& cfg) {
    const uint64_t h0 = Next();
    FUZZ_CHECK(h0 == f_.header_offset);
    const uint16_t ulpdu_length = static_cast<uint16_t>(s_[h0] << 8 | s_[Next()]);
    FUZZ_CHECK(ulpdu_length == f_.ulpdu_length && f_.ulpdu.size() == ulpdu_length);
    for (std::size_t k = 0; k < ulpdu_length; ++k) FUZZ_CHECK(s_[Next()] == f_.ulpdu[k]);
    for (std::size_t k = 0; k < FpduPadLength(ulpdu_length); ++k) Next();
    uint8_t crc_field[kCrc32cSize];
    const uint64_t crc_at = Next();
    crc_field[0] = s_[crc_at];
    for (std::size_t k = 1; k < kCrc32cSize; ++k) crc_field[k] = s_[Next()];
    FUZZ_CHECK(i_ == f_.offset + f_.wire_length);
    FUZZ_CHECK(markers_seen_ == f_.markers);
    FUZZ_CHECK(LoadCrc32c(crc_field) == f_.received_crc);
    const bool computed = cfg.crc_enabled || cfg.compute_crc_when_disabled;
    const uint32_t crc = computed ? Crc32c(s_.subspan(f_.offset, crc_at - f_.offset)) : 0;
    FUZZ_CHECK(f_.computed_crc == crc);
    FUZZ_CHECK(f_.crc_checked == cfg.crc_enabled);
    FUZZ_CHECK(f_.crc_ok == (!cfg.crc_enabled || crc == f_.received_crc));
    const bool check = cfg.markers_enabled && cfg.check_markers;
    FUZZ_CHECK(f_.marker_ok == (!check || !bad_marker_));
    if (check && bad_marker_) FUZZ_CHECK(f_.bad_marker_offset == *bad_marker_);
  }

 private:
  // A Marker octet sits at Marker-space position 0-3 mod 512, in a Marker
  // that starts inside this FPDU (a stream may begin mid-Marker).
  bool IsMarkerOctet(uint64_t i) const {
    const uint32_t r = (pos0_ + static_cast<uint32_t>(i - f_.offset)) % kMarkerInterval;
    return markers_ && r < kMarkerSize && i >= f_.offset + r;
  }
  // The wire index of the next FPDU octet, stepping over (and judging) Markers.
  uint64_t Next() {
    while (IsMarkerOctet(i_)) {
      FUZZ_CHECK(i_ + kMarkerSize <= s_.size());
      const uint16_t fpduptr = LoadMarker(s_.data() + i_).fpduptr;
      // A Marker before ULPDU_Length leads the FPDU (FPDUPTR 0); later ones
      // point back to ULPDU_Length.
      const uint64_t expected = i_ == f_.offset ? 0 : i_ - f_.header_offset;
      if (!bad_marker_ && FpduPtrForCompare(fpduptr) != FpduPtrForCompare(static_cast<uint16_t>(expected))) {
        bad_marker_ = i_;
      }
      ++markers_seen_;
      i_ += kMarkerSize;
    }
    FUZZ_CHECK(i_ < s_.size());
    return i_++;
  }

  ByteSpan s_;
  const MpaFpdu& f_;
  uint32_t pos0_;
  bool markers_;
  uint64_t i_;
  uint16_t markers_seen_ = 0;
  std::optional<uint64_t> bad_marker_;
};

class Driver {
 public:
  Driver(const MpaDeframerConfig& cfg, FullOperation fo, ByteSpan stream, bool reference)
      : d_(cfg), fo_(fo), stream_(stream), reference_(reference) {}

  void Feed(ByteSpan chunk, Outcome& out) {
    auto on_fpdu = [&](const MpaFpdu& f) { OnFpdu(f, out); };
    Status st = d_.Feed(chunk, on_fpdu);
    if (st.ok() && d_.awaiting_full_operation()) {
      d_.StartFullOperation(fo_.crc, fo_.markers);
      st = d_.Feed({}, on_fpdu);
    }
    if (!st.ok()) {
      FUZZ_CHECK(d_.error().has_value() && SameError(*d_.error(), st.error()));
      if (out.status) FUZZ_CHECK(SameError(*out.status, st.error()));   // latched
      out.status = st.error();
    } else {
      FUZZ_CHECK(!out.status.has_value());
    }
  }

  void Finish(Outcome& out) {
    const Status fin = d_.Finish();
    if (!fin.ok()) out.finish = fin.error();
    if (out.status) FUZZ_CHECK(out.finish && SameError(*out.finish, *out.status));
    if (d_.startup_frame()) out.startup_frame = EncodeMpaStartupFrame(*d_.startup_frame());
    out.fed = d_.octets_fed();
    FUZZ_CHECK(d_.fpdu_count() == out.fpdus.size());
    // REQ R5044-8-09: after an error nothing more is delivered.
    if (out.status) {
      const std::size_t before = out.fpdus.size();
      const uint8_t zero[8] = {};
      Feed(ByteSpan(zero, sizeof zero), out);
      FUZZ_CHECK(out.fpdus.size() == before);
    }
  }

 private:
  void OnFpdu(const MpaFpdu& f, Outcome& out) {
    const MpaDeframerConfig& cfg = d_.config();
    FUZZ_CHECK(!out.status.has_value());
    FUZZ_CHECK(f.ulpdu.size() == f.ulpdu_length);
    FUZZ_CHECK(f.shorter_than_ddp_header == (f.ulpdu_length < MpaDeframerConfig::kSmallestDdpHeader));
    FUZZ_CHECK(f.ulpdu_length <= cfg.max_ulpdu_length);
    if (cfg.reject_shorter_than_ddp_header) FUZZ_CHECK(!f.shorter_than_ddp_header);
    if (!cfg.continue_after_crc_error) FUZZ_CHECK(f.crc_ok);
    if (!cfg.continue_after_marker_mismatch && f.crc_ok) FUZZ_CHECK(f.marker_ok);
    if (!out.fpdus.empty()) {
      const Record& prev = out.fpdus.back();
      FUZZ_CHECK(f.offset == prev.offset + prev.wire_length);   // FPDUs tile the stream
    }
    if (cfg.markers_enabled) {
      const MarkedFpduLayout l = LayoutMarkedFpdu(d_.position(), FpduLength(f.ulpdu_length));
      FUZZ_CHECK(f.wire_length == l.wire_length);
    } else {
      FUZZ_CHECK(f.wire_length == FpduLength(f.ulpdu_length) && f.markers == 0);
      FUZZ_CHECK(f.header_offset == f.offset);
    }
    if (reference_) ReferenceWalk(stream_, f, d_.position(), cfg.markers_enabled).Check(cfg);
    out.fpdus.push_back(Record{f.offset, f.header_offset, f.bad_marker_offset, f.wire_length,
                               f.received_crc, f.computed_crc, Crc32c(f.ulpdu), f.ulpdu_length,
                               f.markers, f.crc_checked, f.crc_ok, f.marker_ok,
                               f.shorter_than_ddp_header});
  }

  MpaDeframer d_;
  FullOperation fo_;
  ByteSpan stream_;
  bool reference_;
};

std::size_t ChunkSize(uint8_t c) { return c < 0x80 ? c : std::size_t{c - 0x7Fu} * 64; }

bool SameOptionalError(const std::optional<DecodeError>& a, const std::optional<DecodeError>& b) {
  return a.has_value() == b.has_value() && (!a || SameError(*a, *b));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  InputSplitter in(data, size);
  const uint8_t flags = in.U8();
  const uint8_t mode = in.U8();
  MpaDeframerConfig cfg;
  cfg.crc_enabled = flags & 0x01;
  cfg.markers_enabled = flags & 0x02;
  cfg.continue_after_crc_error = flags & 0x04;
  cfg.continue_after_marker_mismatch = flags & 0x08;
  cfg.expect_startup_frame = flags & 0x10;
  cfg.reject_shorter_than_ddp_header = flags & 0x20;
  cfg.check_markers = !(flags & 0x40);
  cfg.compute_crc_when_disabled = flags & 0x80;
  const uint8_t kind = mode & 0x03;
  cfg.startup_kind = kind == 0 ? MpaFrameKind::kRequest : kind == 1 ? MpaFrameKind::kReply : MpaFrameKind::kEither;
  cfg.wait_for_full_operation = mode & 0x04;
  const FullOperation fo{(mode & 0x08) != 0, (mode & 0x10) != 0};
  cfg.first_position = in.U32();
  const uint16_t max_ulpdu = in.U16();
  cfg.max_ulpdu_length = max_ulpdu == 0 ? 0xFFFF : max_ulpdu;
  const ByteSpan chunk_octets = in.Take(mode >> 5);
  const ByteSpan stream = in.Rest();

  static Outcome whole, chunked;   // reused: no allocation once grown
  for (Outcome* o : {&whole, &chunked}) {
    o->fpdus.clear();
    o->status.reset();
    o->finish.reset();
    o->startup_frame.clear();
  }

  Driver one(cfg, fo, stream, /*reference=*/true);
  one.Feed(stream, whole);
  one.Finish(whole);

  Driver many(cfg, fo, stream, /*reference=*/false);
  std::size_t cycle_total = 0;
  for (uint8_t c : chunk_octets) cycle_total += ChunkSize(c);
  std::size_t at = 0;
  for (std::size_t k = 0; at < stream.size(); ++k) {
    std::size_t n = cycle_total == 0 ? 1 : ChunkSize(chunk_octets[k % chunk_octets.size()]);
    n = std::min(n, stream.size() - at);
    many.Feed(stream.subspan(at, n), chunked);
    at += n;
  }
  many.Finish(chunked);

  FUZZ_CHECK(whole.fpdus == chunked.fpdus);
  FUZZ_CHECK(SameOptionalError(whole.status, chunked.status));
  FUZZ_CHECK(SameOptionalError(whole.finish, chunked.finish));
  FUZZ_CHECK(whole.startup_frame == chunked.startup_frame);
  // Octets offered after a latched error are refused, not counted.
  FUZZ_CHECK(whole.fed == stream.size());
  if (chunked.status) {
    FUZZ_CHECK(chunked.fed > chunked.status->offset && chunked.fed <= stream.size());
  } else {
    FUZZ_CHECK(chunked.fed == stream.size());
  }
  return 0;
}
