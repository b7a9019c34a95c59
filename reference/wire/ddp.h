// DDP segment headers (RFC 5041 §4): decode and byte-exact encode.
//
//   DDP Control (1 octet): T = b>>7, L = (b>>6)&1, Rsvd = (b>>2)&0xF, DV = b&3
//   Tagged   (14 octets): Control | RsvdULP (1)          | STag (4) | TO (8)
//   Untagged (18 octets): Control | RsvdULP (5)          | QN (4) | MSN (4) | MO (4)
// RsvdULP[0] (octet 1) is RDMAP's control byte; untagged RsvdULP octets 2-5
// carry RDMAP's Invalidate STag (RFC 5040 §4.1, Figure 3).
//
// Decoding is syntactic: every field, reserved ones included, is reported as
// found; the only error is truncation. Whether a DV, Rsvd or QN value is
// acceptable, and which Terminate it earns, is the state machine's decision.
// This is the hot path of the capture pipeline, so the decoder is inline,
// allocation-free and zero-copy (the payload is a span of the input).
#pragma once

#include <cstddef>
#include <cstdint>

#include "reference/wire/bytes.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

inline constexpr std::size_t kDdpTaggedHeaderLength = 14;
inline constexpr std::size_t kDdpUntaggedHeaderLength = 18;
inline constexpr uint8_t kDdpVersion = 1;  // DV = 01b (RFC 5041 §4.1)

// RFC field names used in DecodeError::field.
inline constexpr const char* kFieldDdpControl = "DDP Control";
inline constexpr const char* kFieldRsvdUlp = "RsvdULP";
inline constexpr const char* kFieldStag = "STag";
inline constexpr const char* kFieldTo = "TO";
inline constexpr const char* kFieldQn = "QN";
inline constexpr const char* kFieldMsn = "MSN";
inline constexpr const char* kFieldMo = "MO";

// Every field of a DDP header, including the reserved ones, so encoders can
// put wrong values on the wire on purpose. Fields of the other model are
// ignored by the encoder and zero after decoding.
struct DdpSegmentHeader {
  bool tagged = false;                // T
  bool last = true;                   // L
  uint8_t rsvd = 0;                   // Rsvd, 4 bits (MUST be 0 on transmit, not checked on receive)
  uint8_t ddp_version = kDdpVersion;  // DV, 2 bits
  uint8_t rsvd_ulp0 = 0;              // RsvdULP[0:7]: the RDMAP Control Field
  // Tagged Buffer Model
  uint32_t stag = 0;           // STag
  uint64_t tagged_offset = 0;  // TO
  // Untagged Buffer Model
  uint32_t invalidate_stag = 0;  // RsvdULP[8:39]: RDMAP Invalidate STag (or zero)
  uint32_t queue_number = 0;     // QN
  uint32_t msn = 0;              // MSN
  uint32_t message_offset = 0;   // MO

  std::size_t HeaderLength() const { return tagged ? kDdpTaggedHeaderLength : kDdpUntaggedHeaderLength; }
  friend bool operator==(const DdpSegmentHeader&, const DdpSegmentHeader&) = default;
};

// The DDP Control octet alone.
inline constexpr uint8_t EncodeDdpControl(bool tagged, bool last, uint8_t rsvd, uint8_t dv) {
  return static_cast<uint8_t>((tagged ? 0x80 : 0) | (last ? 0x40 : 0) | (rsvd & 0xF) << 2 | (dv & 3));
}
inline constexpr bool DdpControlTagged(uint8_t b) { return (b >> 7) != 0; }
inline constexpr bool DdpControlLast(uint8_t b) { return ((b >> 6) & 1) != 0; }
inline constexpr uint8_t DdpControlRsvd(uint8_t b) { return (b >> 2) & 0xF; }
inline constexpr uint8_t DdpControlVersion(uint8_t b) { return b & 3; }

// One decoded DDP segment: header plus a view of the ULP payload.
struct DdpSegmentView {
  DdpSegmentHeader header;
  ByteSpan payload;                // octets after the DDP header (points into the input)
  std::size_t header_offset = 0;   // absolute offset of the DDP Control octet
  std::size_t payload_offset = 0;  // absolute offset of payload[0]
};

// Out-of-line slow path: which field a short ULPDU cuts (DDP Control,
// RsvdULP, STag, TO, QN, MSN, MO) at its absolute offset.
DecodeError DdpTruncation(ByteSpan ulpdu, std::size_t base_offset);

// Decodes only the header (no payload split); `p` must hold HeaderLength()
// octets, which the caller has checked.
inline DdpSegmentHeader LoadDdpHeaderUnchecked(const uint8_t* p) {
  DdpSegmentHeader h;
  const uint8_t c = p[0];
  h.tagged = DdpControlTagged(c);
  h.last = DdpControlLast(c);
  h.rsvd = DdpControlRsvd(c);
  h.ddp_version = DdpControlVersion(c);
  h.rsvd_ulp0 = p[1];
  if (h.tagged) {
    h.stag = LoadBe32(p + 2);
    h.tagged_offset = LoadBe64(p + 6);
  } else {
    h.invalidate_stag = LoadBe32(p + 2);
    h.queue_number = LoadBe32(p + 6);
    h.msn = LoadBe32(p + 10);
    h.message_offset = LoadBe32(p + 14);
  }
  return h;
}

// REQ R5041-4.1-01 R5040-3.1-07
// Decodes one ULPDU (DDP header + payload, i.e. the ULPDU of an MPA FPDU).
// `base_offset` is the absolute offset of ulpdu[0] in the caller's buffer;
// errors (only kTruncated) carry absolute offsets.
inline Result<DdpSegmentView> DecodeDdpSegment(ByteSpan ulpdu, std::size_t base_offset = 0) {
  if (ulpdu.empty()) return DdpTruncation(ulpdu, base_offset);
  const std::size_t hlen = DdpControlTagged(ulpdu[0]) ? kDdpTaggedHeaderLength : kDdpUntaggedHeaderLength;
  if (ulpdu.size() < hlen) return DdpTruncation(ulpdu, base_offset);
  DdpSegmentView v;
  v.header = LoadDdpHeaderUnchecked(ulpdu.data());
  v.payload = ulpdu.subspan(hlen);
  v.header_offset = base_offset;
  v.payload_offset = base_offset + hlen;
  return v;
}

// Appends the 14- or 18-octet header (chosen by h.tagged) to `out`.
void EncodeDdpHeader(const DdpSegmentHeader& h, Bytes& out);

// Header + payload as one ULPDU.
Bytes EncodeDdpSegment(const DdpSegmentHeader& h, ByteSpan payload);

}  // namespace rdmapct::wire
