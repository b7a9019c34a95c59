#include "reference/wire/ddp_segmentation.h"

namespace rdmapct::wire {

// Stub for the API commit; the implementation follows in the next commit.
Result<std::vector<PlannedDdpSegment>> SegmentDdpMessage(const DdpSegmentHeader&, ByteSpan,
                                                          std::size_t) {
  return DecodeError{DecodeErrorKind::kInvalidValue, "MULPDU", 0, 0};
}
std::vector<Bytes> EncodeDdpSegments(std::span<const PlannedDdpSegment>) { return {}; }
const char* ReassemblyStatusName(ReassemblyStatus) { return "?"; }
ReassemblyStatus UntaggedMessageAssembler::Add(const DdpSegmentHeader&, ByteSpan) {
  return ReassemblyStatus::kNotUntagged;
}
Bytes UntaggedMessageAssembler::TakeMessage() { return {}; }
void UntaggedMessageAssembler::Reset() {}
bool UntaggedMessageAssembler::Overlaps(uint64_t, uint64_t) const { return false; }
void UntaggedMessageAssembler::Insert(uint64_t, uint64_t) {}

}  // namespace rdmapct::wire
