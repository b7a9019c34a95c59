#include "reference/wire/mpa_markers.h"

#include <algorithm>

#include "reference/wire/crc32c.h"

namespace rdmapct::wire {

// REQ R5044-4.2-01, R5044-4.2-02 (RESERVED zero unless a tester overrides),
// REQ R5044-4.2-04, R5044-4.3-05, R5044-4.3-11, R5044-4.3-12: FPDUPTR is the
// distance back to this FPDU's ULPDU_Length (0 for a leading Marker);
// REQ R5044-4.2-05: FPDUs are multiples of 4, so its low two bits are zero.
void MarkerInserter::PutMarker(Bytes& out, uint32_t header_position) {
  const uint16_t fpduptr = static_cast<uint16_t>(position_ - header_position) ^ options_.fpduptr_xor;
  const std::size_t at = out.size();
  out.resize(at + kMarkerSize);
  StoreMarker(out.data() + at, fpduptr, options_.reserved);
  position_ += kMarkerSize;
}

// Copies `octets`, inserting a Marker before any octet that falls on a
// Marker position. (The first octet of an FPDU never does: a leading Marker
// has already been written by then.)
void MarkerInserter::Emit(Bytes& out, ByteSpan octets, uint32_t header_position) {
  while (!octets.empty()) {
    if (IsMarkerPosition(position_)) PutMarker(out, header_position);
    const std::size_t take = std::min<std::size_t>(octets.size(), kMarkerInterval - position_ % kMarkerInterval);
    out.insert(out.end(), octets.begin(), octets.begin() + take);
    position_ += static_cast<uint32_t>(take);
    octets = octets.subspan(take);
  }
}

void MarkerInserter::AppendFpdu(Bytes& out, ByteSpan fpdu, const FpduEncodeOptions& options) {
  const std::size_t start = out.size();
  // REQ R5044-4.3-10, R5044-4.3-07, R5044-4.3-13: a Marker falling exactly
  // between FPDUs precedes this one with FPDUPTR 0 (first FPDU: always).
  if (IsMarkerPosition(position_)) PutMarker(out, position_);
  const uint32_t header_position = position_;
  const std::size_t body = fpdu.size() >= kCrc32cSize ? fpdu.size() - kCrc32cSize : fpdu.size();
  Emit(out, fpdu.first(body), header_position);
  if (body == fpdu.size()) return;  // not even a CRC field: nothing more to do
  // REQ R5044-4.4-11: a Marker right after the PAD belongs to this FPDU.
  if (IsMarkerPosition(position_)) PutMarker(out, header_position);
  // REQ R5044-4.3-02, R5044-4.3-08, R5044-4.4-11, R5044-4.4-12: the CRC
  // covers every wire octet of this FPDU before the CRC field, Markers included.
  uint32_t crc = options.crc_enabled ? Crc32c(ByteSpan(out).subspan(start)) : LoadCrc32c(fpdu.data() + body);
  uint8_t field[kCrc32cSize];
  StoreCrc32c(field, crc ^ options.crc_xor);
  Emit(out, field, header_position);
}

void MarkerInserter::AppendUlpdu(Bytes& out, ByteSpan ulpdu, const FpduEncodeOptions& options) {
  Bytes plain;
  plain.reserve(FpduLength(ulpdu.size()));
  wire::AppendFpdu(plain, ulpdu, {.crc_enabled = false, .pad_octet = options.pad_octet});
  AppendFpdu(out, plain, {.crc_enabled = options.crc_enabled, .crc_xor = options.crc_xor});
}

}  // namespace rdmapct::wire
