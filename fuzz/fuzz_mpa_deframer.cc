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
//    Marker count, FPDUPTR verdict, received and computed CRC; and it
//    justifies how the stream ended: an error must be the documented one
//    (kind, field offset, value) for the FPDU after the last delivered one
//    (or DecodeMpaStartupFrame's error for the frame), and a clean end with
//    octets left over must leave an FPDU that really is incomplete;
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
  Bytes startup_frame;  // re-encoded, empty if none
  uint64_t fed = 0;
};

// What the FPDU starting at stream offset `offset` (Marker-space position
// `position`) must look like, recomputed from the whole stream independently
// of the deframer's layout arithmetic: a Marker octet is one at position
// 0-3 mod 512 of a Marker that starts inside this FPDU (a stream may begin
// mid-Marker).
struct Expected {
  bool header = false;    // both ULPDU_Length octets are in the stream
  bool complete = false;  // so is the last CRC octet
  uint64_t header_offset = 0, crc_offset = 0, end = 0;
  uint16_t ulpdu_length = 0, markers = 0;
  uint32_t received_crc = 0, wire_crc = 0;  // wire_crc: CRC-32C of [offset, crc_offset)
  std::optional<uint64_t> bad_marker;
  uint16_t bad_fpduptr = 0;
};

class Predictor {
 public:
  Predictor(ByteSpan stream, uint64_t offset, uint32_t position, bool markers)
      : s_(stream), offset_(offset), pos0_(position), markers_(markers), i_(offset) {}

  // ULPDU octets (Markers removed) go to `ulpdu`.
  Expected Run(Bytes& ulpdu) {
    Expected e;
    ulpdu.clear();
    uint64_t h0 = 0, h1 = 0;
    if (!Next(h0)) return e;
    header_ = h0;  // before the next Marker is judged: one may split ULPDU_Length
    if (!Next(h1)) return e;
    e.header = true;
    e.header_offset = h0;
    e.ulpdu_length = static_cast<uint16_t>(s_[h0] << 8 | s_[h1]);
    uint64_t at = 0;
    for (std::size_t k = 0; k < e.ulpdu_length; ++k) {
      if (!Next(at)) return e;
      ulpdu.push_back(s_[at]);
    }
    for (std::size_t k = 0; k < FpduPadLength(e.ulpdu_length); ++k) {
      if (!Next(at)) return e;
    }
    uint8_t crc_field[kCrc32cSize];
    for (std::size_t k = 0; k < kCrc32cSize; ++k) {
      if (!Next(at)) return e;
      if (k == 0) e.crc_offset = at;
      crc_field[k] = s_[at];
    }
    e.complete = true;
    e.end = i_;
    e.markers = markers_seen_;
    e.received_crc = LoadCrc32c(crc_field);
    e.wire_crc = Crc32c(s_.subspan(offset_, e.crc_offset - offset_));
    e.bad_marker = bad_marker_;
    e.bad_fpduptr = bad_fpduptr_;
    return e;
  }

 private:
  bool IsMarkerOctet(uint64_t i) const {
    const uint32_t r = (pos0_ + static_cast<uint32_t>(i - offset_)) % kMarkerInterval;
    return markers_ && r < kMarkerSize && i >= offset_ + r;
  }
  // The wire index of the next FPDU octet, stepping over (and judging)
  // Markers; false when the stream ends first.
  bool Next(uint64_t& at) {
    while (IsMarkerOctet(i_)) {
      if (i_ + kMarkerSize > s_.size()) return false;
      const uint16_t fpduptr = LoadMarker(s_.data() + i_).fpduptr;
      // A Marker before ULPDU_Length leads the FPDU (FPDUPTR 0); later ones
      // point back to ULPDU_Length.
      const uint64_t expected = i_ == offset_ ? 0 : i_ - header_;
      if (!bad_marker_ && FpduPtrForCompare(fpduptr) != FpduPtrForCompare(static_cast<uint16_t>(expected))) {
        bad_marker_ = i_;
        bad_fpduptr_ = fpduptr;
      }
      ++markers_seen_;
      i_ += kMarkerSize;
    }
    if (i_ >= s_.size()) return false;
    at = i_++;
    return true;
  }

  ByteSpan s_;
  uint64_t offset_;
  uint32_t pos0_;
  bool markers_;
  uint64_t i_;
  uint64_t header_ = 0;
  uint16_t markers_seen_ = 0;
  std::optional<uint64_t> bad_marker_;
  uint16_t bad_fpduptr_ = 0;
};

Bytes& UlpduScratch() {
  static Bytes b;
  return b;
}

// A delivered FPDU is exactly what the reference predicts.
void CheckDelivered(ByteSpan stream, const MpaFpdu& f, uint32_t position, const MpaDeframerConfig& cfg) {
  Bytes& ulpdu = UlpduScratch();
  const Expected e = Predictor(stream, f.offset, position, cfg.markers_enabled).Run(ulpdu);
  FUZZ_CHECK(e.complete && e.header_offset == f.header_offset && e.ulpdu_length == f.ulpdu_length);
  FUZZ_CHECK(rdmapct::fuzz::SameBytes(ulpdu, f.ulpdu));
  FUZZ_CHECK(e.end == f.offset + f.wire_length && e.markers == f.markers);
  FUZZ_CHECK(e.received_crc == f.received_crc);
  const bool computed = cfg.crc_enabled || cfg.compute_crc_when_disabled;
  FUZZ_CHECK(f.computed_crc == (computed ? e.wire_crc : 0));
  FUZZ_CHECK(f.crc_checked == cfg.crc_enabled);
  FUZZ_CHECK(f.crc_ok == (!cfg.crc_enabled || e.wire_crc == e.received_crc));
  const bool check = cfg.markers_enabled && cfg.check_markers;
  FUZZ_CHECK(f.marker_ok == (!check || !e.bad_marker));
  if (check && e.bad_marker) FUZZ_CHECK(f.bad_marker_offset == *e.bad_marker);
}

// An FPDU error is justified by the reference, at the documented field with
// the documented value (mpa_deframer.h), and a clean end with octets left
// over means the next FPDU really is incomplete.
void CheckFpduOutcome(ByteSpan stream, uint64_t offset, uint32_t position, const MpaDeframerConfig& cfg,
                      const std::optional<DecodeError>& error) {
  Bytes& ulpdu = UlpduScratch();
  const Expected e = Predictor(stream, offset, position, cfg.markers_enabled).Run(ulpdu);
  if (!error) {
    FUZZ_CHECK(!e.complete);  // else it would have been delivered
    return;
  }
  FUZZ_CHECK(e.header);
  const DecodeError& err = *error;
  const bool too_long = e.ulpdu_length > cfg.max_ulpdu_length;
  const bool too_short = cfg.reject_shorter_than_ddp_header && e.ulpdu_length < MpaDeframerConfig::kSmallestDdpHeader;
  switch (err.kind) {
    case DecodeErrorKind::kTooLong:
      FUZZ_CHECK(too_long && err.offset == e.header_offset && err.value == e.ulpdu_length);
      return;
    case DecodeErrorKind::kInvalidValue:
      FUZZ_CHECK(!too_long && too_short && err.offset == e.header_offset && err.value == e.ulpdu_length);
      return;
    default:
      break;
  }
  FUZZ_CHECK(!too_long && !too_short && e.complete);
  const bool crc_bad = cfg.crc_enabled && e.wire_crc != e.received_crc;
  if (err.kind == DecodeErrorKind::kCrcMismatch) {
    FUZZ_CHECK(crc_bad && !cfg.continue_after_crc_error && err.offset == e.crc_offset);
    FUZZ_CHECK(err.value == (uint64_t{e.received_crc} << 32 | e.wire_crc));
  } else {
    FUZZ_CHECK(err.kind == DecodeErrorKind::kMarkerMismatch);
    FUZZ_CHECK(!crc_bad && cfg.markers_enabled && cfg.check_markers && !cfg.continue_after_marker_mismatch);
    FUZZ_CHECK(e.bad_marker && err.offset == *e.bad_marker && err.value == e.bad_fpduptr);
  }
}

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
      if (out.status) FUZZ_CHECK(SameError(*out.status, st.error()));  // latched
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
    if (reference_) CheckEnd(out);
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
      FUZZ_CHECK(f.offset == prev.offset + prev.wire_length);  // FPDUs tile the stream
    }
    if (cfg.markers_enabled) {
      const MarkedFpduLayout l = LayoutMarkedFpdu(d_.position(), FpduLength(f.ulpdu_length));
      FUZZ_CHECK(f.wire_length == l.wire_length);
    } else {
      FUZZ_CHECK(f.wire_length == FpduLength(f.ulpdu_length) && f.markers == 0);
      FUZZ_CHECK(f.header_offset == f.offset);
    }
    if (reference_) CheckDelivered(stream_, f, d_.position(), cfg);
    out.fpdus.push_back(Record{f.offset, f.header_offset, f.bad_marker_offset, f.wire_length, f.received_crc,
                               f.computed_crc, Crc32c(f.ulpdu), f.ulpdu_length, f.markers, f.crc_checked, f.crc_ok,
                               f.marker_ok, f.shorter_than_ddp_header});
  }

  // Why the stream ended where it did: an error or an incomplete tail must
  // be justified by the startup frame decoder or the reference FPDU walk.
  void CheckEnd(const Outcome& out) const {
    const MpaDeframerConfig& cfg = d_.config();
    if (cfg.expect_startup_frame && !d_.startup_frame()) {
      auto frame = DecodeMpaStartupFrame(stream_, {.expect = cfg.startup_kind});
      FUZZ_CHECK(!frame.ok());
      if (out.status) {
        FUZZ_CHECK(SameError(*out.status, frame.error()));
      } else {
        FUZZ_CHECK(frame.error().kind == DecodeErrorKind::kTruncated);
        FUZZ_CHECK(out.finish && out.finish->kind == DecodeErrorKind::kTruncated && out.finish->offset == 0);
      }
      return;
    }
    uint64_t next = cfg.expect_startup_frame ? MpaStartupFrameLength(stream_) : 0;
    if (!out.fpdus.empty()) next = out.fpdus.back().offset + out.fpdus.back().wire_length;
    FUZZ_CHECK(next <= stream_.size());
    if (!out.status && next == stream_.size()) {
      FUZZ_CHECK(!out.finish);
      return;
    }
    CheckFpduOutcome(stream_, next, d_.position(), cfg, out.status);
    if (!out.status) {
      FUZZ_CHECK(out.finish && out.finish->kind == DecodeErrorKind::kTruncated && out.finish->offset == next);
      FUZZ_CHECK(out.finish->value == stream_.size() - next);
    }
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

  static Outcome whole, chunked;  // reused: no allocation once grown
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
