#include "reference/model/emit_terminate.h"

#include "reference/model/terminate_map.h"

namespace rdmapct::model {

namespace {

// wrong-terminate-code: a registered code that is NOT in the accept-set, so a
// conformance check grades it (WARN for registered codes, decisions D-S1).
wire::TerminateCode WrongCode(ViolationKind kind) {
  static constexpr wire::TerminateCode kCandidates[] = {
      wire::term::kRdmapOperationUnspecified, wire::term::kRdmapProtectionUnspecified,
      wire::term::kRdmapCatastrophicGlobal, wire::term::kDdpLocalCatastrophic};
  for (const wire::TerminateCode& c : kCandidates) {
    if (!IsAccepted(kind, c)) return c;
  }
  return wire::term::kRdmapLocalCatastrophic;
}

bool IsInvalidateKind(ViolationKind k) {
  return k == ViolationKind::kInvalidateStagInvalid || k == ViolationKind::kInvalidateStagNotAssociated ||
         k == ViolationKind::kInvalidateStagNotInvalidatable;
}

}  // namespace

// REQ R5040-4.8-02 R5040-4.8-05 R5040-4.8-06 R5040-4.8-07 R5040-4.8-08 R5040-4.8-10
// REQ R5040-4.8-11 R5040-4.8-12 R5040-4.8-13 R5040-4.8-14 R5040-4.8-15 R5040-7.1-02c2
// REQ R5040-7.1-02c3 R5041-7.1-02 R7306-8.1-C2 RCOMMIT-5.1-C2
wire::TerminateHeader BuildTerminateHeader(const Violation& v, const DecisionOptions& options, const FaultSet& faults) {
  const TerminateRule& rule = RuleFor(v.kind);
  wire::TerminateCode code = ChosenCode(v.kind, options);
  if (faults.Has(Fault::kWrongTerminateCode)) code = WrongCode(v.kind);

  const bool strip = faults.Has(Fault::kTerminateWithoutTerminatedHeader);
  const OffendingSegment& seg = v.offending;
  const bool echo_ddp = rule.ddp_header && seg.has_ddp_header && !strip;
  const bool echo_rdma = echo_ddp && rule.rdma_header == RdmaHeaderEcho::kIfReadRequest && seg.has_read_request;
  // decisions D-E: the DDP Segment Length is the ULPDU_Length handed up by MPA
  // (or, by option, the payload length only).
  uint32_t length = seg.ulpdu_length;
  if (options.segment_length == SegmentLengthConvention::kPayloadLength) {
    length -= static_cast<uint32_t>(seg.ddp_header.HeaderLength());
  }
  wire::TerminateHeader h =
      wire::MakeTerminateHeader(code, echo_ddp ? &seg.ddp_header : nullptr, static_cast<uint16_t>(length),
                                echo_rdma ? &seg.read_request : nullptr, options.terminate_form);
  // decisions D-A2: Figure 10 asks for R=1 on SendInv protection errors although
  // there is no RDMA header to echo; by option, send a zero-filled one.
  if (echo_ddp && options.rdma_header_on_invalidate_error && IsInvalidateKind(v.kind)) {
    h.r = true;
    h.has_rdma_header = true;
    h.terminated_rdma_header = wire::ReadRequestHeader{};
  }
  return h;
}

// REQ R5040-5.4-02 R5040-5.4-03 R5040-4.1-T08 R5040-4.1-12
void EmitTerminate(const wire::TerminateHeader& h, uint32_t msn, wire::Profile profile, uint8_t rdmap_version,
                   uint8_t ddp_version, wire::Bytes& out) {
  wire::RdmapSegment seg = wire::MakeTerminate(msn, h);
  seg.ddp.ddp_version = ddp_version;
  wire::SetRdmapControl(seg, wire::RdmapControl{rdmap_version, 0, static_cast<uint8_t>(wire::Opcode::kTerminate)},
                        profile);
  wire::EncodeSegment(seg, out);
}

void EmitTerminate(const Violation& v, uint32_t msn, wire::Profile profile, uint8_t rdmap_version, uint8_t ddp_version,
                   const DecisionOptions& options, const FaultSet& faults, wire::Bytes& out) {
  const std::size_t start = out.size();
  EmitTerminate(BuildTerminateHeader(v, options, faults), msn, profile, rdmap_version, ddp_version, out);
  if (faults.Has(Fault::kTerminateControlLittleEndian)) {
    wire::SwapTerminateControlBitfieldOrder(std::span(out).subspan(start), profile);
  }
}

}  // namespace rdmapct::model
