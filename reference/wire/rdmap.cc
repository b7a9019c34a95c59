#include "reference/wire/rdmap.h"

namespace rdmapct::wire {
namespace {
DecodeError NotYet(std::size_t base) {
  return DecodeError{DecodeErrorKind::kTruncated, "RDMAP", base, 0};
}
}  // namespace

// Stubs for the API commit; the implementation follows in the next commit.
std::size_t TerminateHeaderLength(const TerminateHeader&) { return 0; }
TerminateHeader MakeTerminateHeader(TerminateCode code, const DdpSegmentHeader*, uint16_t,
                                    const ReadRequestHeader*, TerminateForm form) {
  TerminateHeader h;
  h.code = code;
  h.form = form;
  return h;
}
Result<ReadRequestHeader> DecodeReadRequestHeader(ByteSpan, std::size_t b) { return NotYet(b); }
Result<TerminateHeader> DecodeTerminateHeader(ByteSpan, std::size_t b) { return NotYet(b); }
Result<ImmediateDataHeader> DecodeImmediateDataHeader(ByteSpan, std::size_t b) { return NotYet(b); }
Result<AtomicRequestHeader> DecodeAtomicRequestHeader(ByteSpan, std::size_t b) { return NotYet(b); }
Result<AtomicResponseHeader> DecodeAtomicResponseHeader(ByteSpan, std::size_t b) { return NotYet(b); }
Result<FlushRequestHeader> DecodeFlushRequestHeader(ByteSpan, std::size_t b) { return NotYet(b); }
Result<VerifyRequestHeader> DecodeVerifyRequestHeader(ByteSpan, std::size_t b) { return NotYet(b); }
Result<VerifyResponseHeader> DecodeVerifyResponseHeader(ByteSpan, std::size_t b) { return NotYet(b); }
Result<AtomicWriteRequestHeader> DecodeAtomicWriteRequestHeader(ByteSpan, std::size_t b) {
  return NotYet(b);
}
void EncodeReadRequestHeader(const ReadRequestHeader&, Bytes&) {}
void EncodeTerminateHeader(const TerminateHeader&, Bytes&) {}
void EncodeImmediateDataHeader(const ImmediateDataHeader&, Bytes&) {}
void EncodeAtomicRequestHeader(const AtomicRequestHeader&, Bytes&) {}
void EncodeAtomicResponseHeader(const AtomicResponseHeader&, Bytes&) {}
void EncodeFlushRequestHeader(const FlushRequestHeader&, Bytes&) {}
void EncodeVerifyRequestHeader(const VerifyRequestHeader&, Bytes&) {}
void EncodeVerifyResponseHeader(const VerifyResponseHeader&, Bytes&) {}
void EncodeAtomicWriteRequestHeader(const AtomicWriteRequestHeader&, Bytes&) {}
Result<RdmapHeader> DecodeRdmapHeader(HeaderKind, ByteSpan, std::size_t b, std::size_t& consumed) {
  consumed = 0;
  return NotYet(b);
}
void EncodeRdmapHeader(const RdmapHeader&, Bytes&) {}
Bytes EncodeRdmapMessageBody(const RdmapHeader&, ByteSpan) { return {}; }
Result<RdmapMessageView> DecodeRdmapSegment(ByteSpan, Profile, std::size_t b) { return NotYet(b); }
void SetRdmapControl(RdmapSegment&, const RdmapControl&, Profile) {}
void EncodeSegment(const RdmapSegment&, Bytes&) {}
Bytes EncodeSegment(const RdmapSegment&) { return {}; }
RdmapSegment ToSegment(const RdmapMessageView&) { return {}; }
RdmapSegment MakeSegment(Opcode) { return {}; }
RdmapSegment MakeRdmaWrite(uint32_t, uint64_t, ByteSpan) { return {}; }
RdmapSegment MakeReadRequest(uint32_t, const ReadRequestHeader&) { return {}; }
RdmapSegment MakeReadResponse(uint32_t, uint64_t, ByteSpan) { return {}; }
RdmapSegment MakeSend(Opcode, uint32_t, ByteSpan, uint32_t) { return {}; }
RdmapSegment MakeTerminate(uint32_t, const TerminateHeader&) { return {}; }
RdmapSegment MakeImmediateData(uint32_t, uint64_t, bool) { return {}; }
RdmapSegment MakeAtomicRequest(uint32_t, const AtomicRequestHeader&) { return {}; }
RdmapSegment MakeAtomicResponse(uint32_t, const AtomicResponseHeader&) { return {}; }
RdmapSegment MakeFlushRequest(uint32_t, const FlushRequestHeader&) { return {}; }
RdmapSegment MakeFlushResponse(uint32_t) { return {}; }
RdmapSegment MakeVerifyRequest(uint32_t, const VerifyRequestHeader&) { return {}; }
RdmapSegment MakeVerifyResponse(uint32_t, ByteSpan) { return {}; }
RdmapSegment MakeAtomicWriteRequest(uint32_t, const AtomicWriteRequestHeader&) { return {}; }
RdmapSegment MakeAtomicWriteResponse(uint32_t) { return {}; }

}  // namespace rdmapct::wire
