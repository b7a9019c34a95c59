// MPA Markers (RFC 5044 §4.2, §4.3; decisions D-G3).
//
// A Marker is RESERVED (16 bits) | FPDUPTR (16 bits). With Markers enabled
// in a direction, a Marker starts at every TCP sequence number SeqNum with
// (SeqNum - SeqStart) mod 512 == 0, SeqStart being the first octet of that
// direction's first FPDU in Full Operation, so the first Marker (FPDUPTR 0)
// immediately precedes the first FPDU (R5044-4.3-10, R5044-7.1.2-R07).
//
// Positions here are "Marker-space positions": (SeqNum - SeqStart) mod 2^32.
// Because 2^32 is a multiple of 512, TCP sequence wrap changes nothing
// (R5044-4.3-06): all arithmetic is plain uint32_t.
//
// FPDUPTR = octets from the first octet of the containing FPDU's
// ULPDU_Length to the Marker's first octet (R5044-4.2-04, R5044-4.3-05),
// counting any earlier Markers in that FPDU. A Marker exactly between two
// FPDUs has FPDUPTR 0 and belongs to the next FPDU, whose CRC covers it
// (R5044-4.3-07/08, R5044-4.4-12). A Marker between PAD and CRC belongs to
// the current FPDU and is covered by its CRC (R5044-4.4-11).
#pragma once

#include <cstdint>

#include "reference/wire/bytes.h"
#include "reference/wire/mpa_fpdu.h"

namespace rdmapct::wire {

inline constexpr uint32_t kMarkerInterval = 512;
inline constexpr std::size_t kMarkerSize = 4;

struct Marker {
  uint16_t reserved = 0;
  uint16_t fpduptr = 0;
};

inline void StoreMarker(uint8_t* p, uint16_t fpduptr, uint16_t reserved = 0) {
  StoreBe16(p, reserved);
  StoreBe16(p + 2, fpduptr);
}
inline Marker LoadMarker(const uint8_t* p) { return Marker{LoadBe16(p), LoadBe16(p + 2)}; }

// REQ R5044-4.2-06, R5044-4.3-09: the receiver treats the two low FPDUPTR bits as zero.
constexpr uint16_t FpduPtrForCompare(uint16_t fpduptr) { return fpduptr & 0xFFFC; }

constexpr uint32_t MarkerSpacePosition(uint32_t seq, uint32_t seq_start) { return seq - seq_start; }
constexpr bool IsMarkerPosition(uint32_t position) { return position % kMarkerInterval == 0; }

// Where the Markers go for one FPDU of `fpdu_length` octets (ULPDU_Length
// through CRC, without Markers) whose first octet is due at Marker-space
// `position`.
struct MarkedFpduLayout {
  bool leading_marker = false;  // a Marker (FPDUPTR 0) precedes ULPDU_Length
  uint32_t inner_markers = 0;   // Markers after ULPDU_Length, up to before the last CRC octet
  std::size_t wire_length = 0;  // octets on the wire, all those Markers included
};

constexpr MarkedFpduLayout LayoutMarkedFpdu(uint32_t position, std::size_t fpdu_length) {
  MarkedFpduLayout l;
  if (IsMarkerPosition(position)) {
    l.leading_marker = true;
    position += kMarkerSize;
  }
  // The first inner Marker comes after `first` FPDU octets, then one every
  // 508 octets; a Marker due right after the last octet belongs to the next FPDU.
  const std::size_t first = kMarkerInterval - position % kMarkerInterval;
  if (fpdu_length > first) {
    l.inner_markers = static_cast<uint32_t>(1 + (fpdu_length - first - 1) / (kMarkerInterval - kMarkerSize));
  }
  l.wire_length = fpdu_length + kMarkerSize * (l.inner_markers + (l.leading_marker ? 1 : 0));
  return l;
}

struct MarkerInserterOptions {
  // Tester knobs (defaults are conformant): the RESERVED value to send
  // (R5044-4.2-03: ignored by receivers) and a value XORed into every
  // FPDUPTR (0x0003 sets the low bits receivers must ignore, R5044-4.2-06;
  // anything else makes a wrong back-pointer).
  uint16_t reserved = 0;
  uint16_t fpduptr_xor = 0;
};

// Per-direction Marker insertion (the sending side). Keeps the Marker-space
// position of the next octet; feed it every FPDU of the direction in order.
class MarkerInserter {
 public:
  // `seq_start` is the TCP sequence number of SeqStart (the first Marker);
  // `next_seq` that of the next octet to emit (defaults to seq_start, i.e.
  // the first FPDU of Full Operation comes next).
  explicit MarkerInserter(uint32_t seq_start = 0, MarkerInserterOptions options = {})
      : MarkerInserter(seq_start, seq_start, options) {}
  MarkerInserter(uint32_t seq_start, uint32_t next_seq, MarkerInserterOptions options = {})
      : seq_start_(seq_start), position_(next_seq - seq_start), options_(options) {}

  uint32_t seq_start() const { return seq_start_; }
  uint32_t next_seq() const { return seq_start_ + position_; }
  uint32_t position() const { return position_; }

  // Appends `fpdu` (ULPDU_Length .. CRC, no Markers, e.g. from AppendFpdu)
  // with Markers inserted. With options.crc_enabled the CRC is recomputed
  // over the octets the RFC assigns to this FPDU, Markers included
  // (R5044-4.3-02, R5044-4.4-11, R5044-4.4-12); otherwise the CRC field is
  // copied. options.crc_xor is applied in both cases; pad_octet is unused.
  // `fpdu` must not point into `out` (appending may reallocate it).
  void AppendFpdu(Bytes& out, ByteSpan fpdu, const FpduEncodeOptions& options = {});

  // Frames `ulpdu` (mpa_fpdu.h AppendFpdu) and appends it with Markers.
  void AppendUlpdu(Bytes& out, ByteSpan ulpdu, const FpduEncodeOptions& options = {});

 private:
  void PutMarker(Bytes& out, uint32_t header_position);
  void Emit(Bytes& out, ByteSpan octets, uint32_t header_position);

  uint32_t seq_start_;
  uint32_t position_;
  MarkerInserterOptions options_;
};

}  // namespace rdmapct::wire
