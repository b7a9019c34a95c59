// Builds the Terminate message for a violation (RFC 5040 §4.8, §7.1): one
// pure function, used by every error path of the endpoint.
#pragma once

#include <cstdint>

#include "reference/model/decision_options.h"
#include "reference/model/faults.h"
#include "reference/model/violation.h"
#include "reference/wire/bytes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::model {

// REQ R5040-4.8-01 R5040-5.4-02 R5040-5.4-03 R5040-7.1-02
// The Terminate header for `v` (code, M/D/R, DDP Segment Length, echoed
// headers) per terminate_map.h, the DecisionOptions and the faults
// (wrong-terminate-code, terminate-without-terminated-header).
wire::TerminateHeader BuildTerminateHeader(const Violation& v, const DecisionOptions& options, const FaultSet& faults);

// Appends the complete Terminate ULPDU (untagged DDP header on QN 2 with
// `msn`, L=1, MO=0, RV/DV as given, then the Terminate header) to `out`.
// Profile selects the RDMAP Control Field layout.
void EmitTerminate(const wire::TerminateHeader& h, uint32_t msn, wire::Profile profile, uint8_t rdmap_version,
                   uint8_t ddp_version, wire::Bytes& out);

// BuildTerminateHeader + EmitTerminate.
void EmitTerminate(const Violation& v, uint32_t msn, wire::Profile profile, uint8_t rdmap_version, uint8_t ddp_version,
                   const DecisionOptions& options, const FaultSet& faults, wire::Bytes& out);

}  // namespace rdmapct::model
