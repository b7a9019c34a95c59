// TEMPORARY: placeholders for the RFC 7306 / COMMIT request and response
// handlers until rx_atomic.cc and rx_commit.cc exist (the engineer who writes
// them deletes this file). Until then these messages are refused with the
// Terminate the model sends for an opcode it does not implement.
#include "reference/model/endpoint.h"

namespace rdmapct::model {

namespace {
const char* kNotYet = "handler not implemented yet (rx_extensions_stub.cc)";
}

void RdmapEndpoint::OnAtomicRequest(const RxSegment& rx, Reactions& out) {
  Raise(rx, MakeViolation(ViolationKind::kUnexpectedOpcode, "R7306-5.2.1-S3a", kNotYet), out);
}
void RdmapEndpoint::OnAtomicResponse(const RxSegment& rx, Reactions& out) {
  Raise(rx, MakeViolation(ViolationKind::kUnexpectedOpcode, "R7306-5.2.2-S6", kNotYet), out);
}
void RdmapEndpoint::OnFlushRequest(const RxSegment& rx, Reactions& out) {
  Raise(rx, MakeViolation(ViolationKind::kUnexpectedOpcode, "RCOMMIT-3.1.1.2-03", kNotYet), out);
}
void RdmapEndpoint::OnFlushResponse(const RxSegment& rx, Reactions& out) {
  Raise(rx, MakeViolation(ViolationKind::kUnexpectedOpcode, "RCOMMIT-3.1.1.2-01", kNotYet), out);
}
void RdmapEndpoint::OnVerifyRequest(const RxSegment& rx, Reactions& out) {
  Raise(rx, MakeViolation(ViolationKind::kUnexpectedOpcode, "RCOMMIT-3.1.2-02", kNotYet), out);
}
void RdmapEndpoint::OnVerifyResponse(const RxSegment& rx, Reactions& out) {
  Raise(rx, MakeViolation(ViolationKind::kUnexpectedOpcode, "RCOMMIT-3.1.2.2-01", kNotYet), out);
}
void RdmapEndpoint::OnAtomicWriteRequest(const RxSegment& rx, Reactions& out) {
  Raise(rx, MakeViolation(ViolationKind::kUnexpectedOpcode, "RCOMMIT-3.1.3-02", kNotYet), out);
}
void RdmapEndpoint::OnAtomicWriteResponse(const RxSegment& rx, Reactions& out) {
  Raise(rx, MakeViolation(ViolationKind::kUnexpectedOpcode, "RCOMMIT-3.1.3.2-01", kNotYet), out);
}

}  // namespace rdmapct::model
