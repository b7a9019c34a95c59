#include "reference/wire/ddp.h"

#include <array>
#include <span>

namespace rdmapct::wire {
namespace {

struct FieldSpan {
  const char* name;
  std::size_t offset;
  std::size_t length;
};

// RFC 5041 Figures 4 and 5, field by field.
constexpr std::array<FieldSpan, 4> kTaggedFields = {
    {{kFieldDdpControl, 0, 1}, {kFieldRsvdUlp, 1, 1}, {kFieldStag, 2, 4}, {kFieldTo, 6, 8}}};
constexpr std::array<FieldSpan, 5> kUntaggedFields = {
    {{kFieldDdpControl, 0, 1}, {kFieldRsvdUlp, 1, 5}, {kFieldQn, 6, 4}, {kFieldMsn, 10, 4}, {kFieldMo, 14, 4}}};

}  // namespace

// REQ R5041-4.4-01
// The first field the ULPDU does not fully contain, at its absolute offset;
// `value` is the number of octets that were available from that offset.
DecodeError DdpTruncation(ByteSpan ulpdu, std::size_t base_offset) {
  const std::size_t n = ulpdu.size();
  auto report = [&](const FieldSpan& f) {
    return DecodeError{DecodeErrorKind::kTruncated, f.name, base_offset + f.offset, n > f.offset ? n - f.offset : 0};
  };
  if (n == 0) return report(kTaggedFields[0]);
  const std::span<const FieldSpan> fields = DdpControlTagged(ulpdu[0]) ? std::span<const FieldSpan>(kTaggedFields)
                                                                       : std::span<const FieldSpan>(kUntaggedFields);
  for (const FieldSpan& f : fields) {
    if (n < f.offset + f.length) return report(f);
  }
  // Not truncated: callers only come here on a short buffer.
  return DecodeError{DecodeErrorKind::kTruncated, kFieldDdpControl, base_offset, n};
}

// REQ R5040-3.1-06 R5041-4.1-01
void EncodeDdpHeader(const DdpSegmentHeader& h, Bytes& out) {
  // Built at the offsets of RFC 5041 Figures 4 and 5, then appended at once:
  // `out` grows once per header, not once per field.
  uint8_t header[kDdpUntaggedHeaderLength];
  header[0] = EncodeDdpControl(h.tagged, h.last, h.rsvd, h.ddp_version);
  header[1] = h.rsvd_ulp0;
  if (h.tagged) {
    StoreBe32(header + 2, h.stag);
    StoreBe64(header + 6, h.tagged_offset);
  } else {
    StoreBe32(header + 2, h.invalidate_stag);
    StoreBe32(header + 6, h.queue_number);
    StoreBe32(header + 10, h.msn);
    StoreBe32(header + 14, h.message_offset);
  }
  out.insert(out.end(), header, header + h.HeaderLength());
}

Bytes EncodeDdpSegment(const DdpSegmentHeader& h, ByteSpan payload) {
  Bytes out;
  out.reserve(h.HeaderLength() + payload.size());
  EncodeDdpHeader(h, out);
  ByteWriter(out).PutBytes(payload);
  return out;
}

}  // namespace rdmapct::wire
