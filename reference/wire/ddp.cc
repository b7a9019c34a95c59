#include "reference/wire/ddp.h"

namespace rdmapct::wire {

// Stub for the API commit; the implementation follows in the next commit.
DecodeError DdpTruncation(ByteSpan ulpdu, std::size_t base_offset) {
  return DecodeError{DecodeErrorKind::kTruncated, kFieldDdpControl, base_offset, ulpdu.size()};
}
void EncodeDdpHeader(const DdpSegmentHeader&, Bytes&) {}
Bytes EncodeDdpSegment(const DdpSegmentHeader&, ByteSpan) { return {}; }

}  // namespace rdmapct::wire
