#include "reference/wire/mpa_fpdu.h"

#include <algorithm>

#include "reference/wire/crc32c.h"

namespace rdmapct::wire {

void AppendFpdu(Bytes& out, ByteSpan ulpdu, const FpduEncodeOptions& options) {
  if (ulpdu.size() > kMaxUlpduLength) ulpdu = ulpdu.first(kMaxUlpduLength);
  const std::size_t start = out.size();
  const std::size_t pad = FpduPadLength(ulpdu.size());
  out.resize(start + FpduLength(ulpdu.size()));
  uint8_t* p = out.data() + start;
  // REQ R5044-4.1-01, R5044-4.1-02: ULPDU_Length counts the ULPDU only.
  StoreBe16(p, static_cast<uint16_t>(ulpdu.size()));
  if (!ulpdu.empty()) std::copy(ulpdu.begin(), ulpdu.end(), p + kUlpduLengthSize);
  // REQ R5044-4.1-03: PAD is zero on send (unless a tester overrides it).
  std::fill_n(p + kUlpduLengthSize + ulpdu.size(), pad, options.pad_octet);
  const std::size_t covered = kUlpduLengthSize + ulpdu.size() + pad;
  // REQ R5044-4.4-09: the CRC field is always present; REQ R5044-4.4-11:
  // it covers ULPDU_Length, ULPDU and PAD; REQ R5044-4.4-10: LSB first.
  const uint32_t crc = options.crc_enabled ? Crc32c(ByteSpan(p, covered)) : 0;
  StoreCrc32c(p + covered, crc ^ options.crc_xor);
}

Bytes EncodeFpdu(ByteSpan ulpdu, const FpduEncodeOptions& options) {
  Bytes out;
  out.reserve(FpduLength(std::min(ulpdu.size(), kMaxUlpduLength)));
  AppendFpdu(out, ulpdu, options);
  return out;
}

Result<FpduView> DecodeFpdu(ByteSpan data, bool crc_enabled) {
  ByteReader r(data);
  DecodeError err{};
  FpduView v;
  if (!r.Read16("ULPDU_Length", v.ulpdu_length, err)) return err;
  const std::size_t pad = FpduPadLength(v.ulpdu_length);
  ByteSpan crc_field;
  if (!r.ReadSpan("ULPDU", v.ulpdu_length, v.ulpdu, err) || !r.ReadSpan("PAD", pad, v.pad, err)) {
    return err;
  }
  const std::size_t crc_offset = r.offset();
  if (!r.ReadSpan("CRC", kCrc32cSize, crc_field, err)) return err;
  v.received_crc = LoadCrc32c(crc_field.data());
  v.size = r.pos();
  // REQ R5044-4.1-07, R5044-7.1.1-13: with CRCs off the field is not checked.
  if (crc_enabled) {
    // REQ R5044-4.4-14, R5044-4.4-15, R5044-6-02
    v.computed_crc = Crc32c(data.first(crc_offset));
    if (v.computed_crc != v.received_crc) {
      return DecodeError{DecodeErrorKind::kCrcMismatch, "CRC", crc_offset,
                         uint64_t{v.received_crc} << 32 | v.computed_crc};
    }
  }
  return v;
}

std::size_t Mulpdu(std::size_t emss, bool markers) {
  // REQ R5044-4.5-02, R5044-4.5-03 (worst-case Marker count when markers).
  const std::size_t overhead = kFpduOverhead + (markers ? 4 * ((emss + 511) / 512) : 0) + emss % 4;
  const std::size_t mulpdu = emss > overhead ? emss - overhead : 0;
  // REQ R5044-4.5-08, R5044-3-04
  return std::clamp(mulpdu, kMinMulpdu, kMaxMulpdu);
}

}  // namespace rdmapct::wire
