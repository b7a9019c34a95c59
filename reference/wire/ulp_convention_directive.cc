#include "reference/wire/ulp_convention_directive.h"

#include <algorithm>

namespace rdmapct::wire {

void EncodeConnectDirective(const ConnectDirective& d, Bytes& out) {
  const std::size_t at = out.size();
  out.resize(at + kDirectiveLength, 0);
  std::copy(kDirectiveMagic.begin(), kDirectiveMagic.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
  out[at + 4] = d.major_version;
  out[at + 5] = d.minor_version;
  StoreBe16(&out[at + 6], d.flags);
  StoreBe16(&out[at + 8], d.ird);
  StoreBe16(&out[at + 10], d.ord);
  StoreBe32(&out[at + 12], d.case_hash);
}

Result<ConnectDirective> DecodeConnectDirective(ByteSpan data) {
  if (data.size() < kDirectiveLength) {
    return DecodeError{DecodeErrorKind::kTruncated, "Connect Directive", 0, data.size()};
  }
  if (!std::equal(kDirectiveMagic.begin(), kDirectiveMagic.end(), data.begin())) {
    return DecodeError{DecodeErrorKind::kInvalidValue, "Directive Magic", 0, LoadBe32(data.data())};
  }
  ConnectDirective d;
  d.major_version = data[4];
  d.minor_version = data[5];
  if (d.major_version != 1) return DecodeError{DecodeErrorKind::kInvalidValue, "Major Version", 4, d.major_version};
  d.flags = LoadBe16(&data[6]);
  if (d.minor_version == 0 && (d.flags & ~kKnownDirectiveFlags) != 0) {
    return DecodeError{DecodeErrorKind::kReservedNonZero, "Directive Flags", 6, d.flags};
  }
  d.ird = LoadBe16(&data[8]);
  d.ord = LoadBe16(&data[10]);
  if (d.ird > 0x3FFF) return DecodeError{DecodeErrorKind::kInvalidValue, "IRD", 8, d.ird};
  if (d.ord > 0x3FFF) return DecodeError{DecodeErrorKind::kInvalidValue, "ORD", 10, d.ord};
  d.case_hash = LoadBe32(&data[12]);
  return d;
}

}  // namespace rdmapct::wire
