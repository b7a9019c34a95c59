// MPA FPDU framing without Markers (RFC 5044 §4.1, §4.4) and the MULPDU
// formulas (§4.5).
//
//   ULPDU_Length (2 octets, big-endian) | ULPDU | PAD (0-3) | CRC (4 octets)
//
// The CRC field is always present (R5044-4.4-09). With CRCs enabled it holds
// the CRC-32C of ULPDU_Length, ULPDU and PAD, least significant octet first
// (R5044-4.4-10/11); with CRCs disabled it "may contain any value" and MUST
// NOT be checked (R5044-4.1-07, R5044-7.1.1-13) - this encoder then writes
// zero. Markers change both the octets on the wire and the CRC coverage:
// use MarkerInserter (mpa_markers.h) to send and MpaDeframer
// (mpa_deframer.h) to receive a stream with Markers.
#pragma once

#include <cstdint>

#include "reference/wire/bytes.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

inline constexpr std::size_t kUlpduLengthSize = 2;
inline constexpr std::size_t kFpduOverhead = 6;              // ULPDU_Length + CRC
inline constexpr std::size_t kMaxUlpduLength = 0xFFFF;       // the field's range
inline constexpr std::size_t kMaxPostedUlpduLength = 64768;  // R5044-3-05
inline constexpr std::size_t kMinMulpdu = 128;               // R5044-3-04, R5044-4.5-08
inline constexpr std::size_t kMaxMulpdu = 64768;             // R5044-3-04

// REQ R5044-4.1-05: PAD makes the FPDU a multiple of four octets.
constexpr std::size_t FpduPadLength(std::size_t ulpdu_length) {
  return (4 - (kUlpduLengthSize + ulpdu_length) % 4) % 4;
}

// Octets of an FPDU without Markers: 2 + ULPDU + PAD + 4.
constexpr std::size_t FpduLength(std::size_t ulpdu_length) {
  return kFpduOverhead + ulpdu_length + FpduPadLength(ulpdu_length);
}

struct FpduEncodeOptions {
  bool crc_enabled = true;
  // Tester knobs: PAD octets other than zero (R5044-4.1-04: the receiver
  // ignores them except for the CRC) and a value XORed into the CRC field
  // to send a wrong CRC on purpose. Defaults give a conformant FPDU.
  uint8_t pad_octet = 0;
  uint32_t crc_xor = 0;
};

// Appends one FPDU carrying `ulpdu` (at most 65535 octets; longer input is
// cut there since ULPDU_Length cannot describe it).
void AppendFpdu(Bytes& out, ByteSpan ulpdu, const FpduEncodeOptions& options = {});
Bytes EncodeFpdu(ByteSpan ulpdu, const FpduEncodeOptions& options = {});

// One FPDU as decoded from a buffer; spans point into that buffer.
struct FpduView {
  uint16_t ulpdu_length = 0;
  ByteSpan ulpdu;
  ByteSpan pad;
  uint32_t received_crc = 0;  // the CRC field, loaded least significant octet first
  uint32_t computed_crc = 0;  // 0 when CRC checking is off (not computed)
  std::size_t size = 0;       // octets consumed: FpduLength(ulpdu_length)
};

// Decodes the FPDU at the start of `data` (no Markers). Errors, offsets from
// data[0]: kTruncated "ULPDU_Length" / "ULPDU" / "PAD" / "CRC" (value =
// octets available from that field on); kCrcMismatch "CRC" at the CRC field
// (value = received << 32 | computed) when crc_enabled (R5044-4.4-14/15).
// PAD contents are not checked (R5044-4.1-04).
Result<FpduView> DecodeFpdu(ByteSpan data, bool crc_enabled);

// MULPDU for an EMSS (the effective TCP payload size, decisions D-G14):
// REQ R5044-4.5-02 (Markers): EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4)
// REQ R5044-4.5-03 (none):    EMSS - (6 + EMSS mod 4)
// clamped to [128, 64768] (R5044-3-04, R5044-4.5-08).
std::size_t Mulpdu(std::size_t emss, bool markers);

}  // namespace rdmapct::wire
