// ONE table from ViolationKind to the Terminate the model sends for it, the
// set of Terminates the RFCs allow for it (the conformance accept-set, docs/decisions.md
// §5.1), which headers the Terminate carries (RFC 5040 Figure 10, §4.8) and
// the requirement ids. Every ambiguity decision of docs/decisions.md that
// concerns a Terminate lives in this table.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "reference/model/decision_options.h"
#include "reference/model/violation.h"
#include "reference/wire/terminate_codes.h"

namespace rdmapct::model {

// Whether the Terminated RDMA Header (R bit) is sent.
enum class RdmaHeaderEcho : uint8_t {
  kNever,
  kIfReadRequest,  // RFC 5040 §4.8: only when the offending message is a Read Request
};

inline constexpr std::size_t kMaxAcceptSet = 6;

struct TerminateRule {
  ViolationKind kind;
  const char* name;                                       // kebab-case (ViolationKindName)
  bool emits_terminate;                                   // false: surfaced to the ULP only (no Terminate)
  wire::TerminateCode chosen;                             // the model's default Terminate code
  std::array<wire::TerminateCode, kMaxAcceptSet> accept;  // RFC-allowed codes
  uint8_t accept_count;
  bool ddp_header;              // M=1, D=1: DDP Segment Length + Terminated DDP Header
  RdmaHeaderEcho rdma_header;   // R
  const char* requirement_ids;  // space-separated
  const char* decision;         // "decisions.md #n (D-Xn)" or "" when the RFC is explicit

  std::span<const wire::TerminateCode> accept_set() const {
    return std::span<const wire::TerminateCode>(accept.data(), accept_count);
  }
};

// Every row, in ViolationKind order.
std::span<const TerminateRule> TerminateRules();
const TerminateRule& RuleFor(ViolationKind kind);

// The code the model sends for `kind`, after the DecisionOptions that select
// another reading (each alternative is in the accept-set).
wire::TerminateCode ChosenCode(ViolationKind kind, const DecisionOptions& options);

// True when `code` is in the accept-set of `kind`.
bool IsAccepted(ViolationKind kind, wire::TerminateCode code);

}  // namespace rdmapct::model
