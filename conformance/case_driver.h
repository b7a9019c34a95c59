// The case driver: runs ONE conformance case against a target, acting as
// the MPA Initiator over one Transport per connection, and grades the
// target's reactions with the case's own expectations (matchers.h).
//
// What each step does at run time:
//   connect  opens a connection and sends the MPA Request built from the
//            case's options (Rev, C, M, RFC 6581 S + IRD/ORD/RTR word, a
//            Suite Request with Keep Memory, or the case's own octets);
//            reads the Reply with a deadline and a byte bound; decodes the
//            Advertisement; skips the case when the target lacks what it
//            needs; sets up framing (CRC as negotiated, Markers from the
//            target iff the Request had M=1, to the target iff the Reply
//            had M=1 or as the case forces) and sends the RTR if negotiated.
//            Without a leading connect step the case gets a default one.
//   send     builds the message from its template (message_builder.h),
//            frames it (CRC, Markers, the case's corruption) and writes it
//            with the case's TCP write boundaries and delays.
//   expect   waits (bounded) until its matcher decides: frames and Event
//            Records queue separately; memory expectations read target
//            memory back with the suite's own RDMA Read Request.
//   pause    waits, reading what arrives; close sends FIN or RST.
//   listen   the target is the MPA Initiator (convention §10): accepts its
//            connection, reads its Request (asking for the case's options
//            with a Connect Directive when it differs), takes the
//            Advertisement from it, sends the case's Reply (now, or in a
//            later `reply` step) and waits for the target's first FPDU.
// A step that fails, errors or skips ends the case; a warning does not.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/connection.h"
#include "conformance/result.h"
#include "reference/wire/profile.h"
#include "reference/wire/ulp_convention_commands.h"
#include "targets/reaction_clock.h"
#include "targets/transport.h"

namespace rdmapct::conformance {

struct CaseDriverOptions {
  wire::Profile profile = wire::Profile::kRfc5040;
  std::chrono::milliseconds connect_timeout{5000};  // TargetConnector::Connect
  std::chrono::milliseconds reply_timeout{5000};    // MPA Reply after the Request
  std::chrono::milliseconds expect_timeout{2000};   // an Expect without timeout_ms
  std::chrono::milliseconds case_timeout{60000};    // the whole case, every wait included
  std::chrono::milliseconds close_timeout{1000};    // target's FIN after the suite's
  // Quiet time between an accepted MPA Reply and the suite's first FPDU (the
  // RTR included). 0 by default: RFC 5044 §7.1.2 Rule 2 (R5044-7.1.2-R02h)
  // has the Responder read FPDUs from its Reply on. A pause separates a
  // target that only misses FPDUs arriving right after its Reply (Linux siw
  // 6.1, docs/reports/siw S7) from its other findings.
  std::chrono::milliseconds pause_after_reply{0};
  // Over a transport that waits in wall time, end an `expect nothing` at the
  // answer of a fence (docs/target-convention.md §2.5, case_driver_fence.cc)
  // where RDMAP ordering allows it; false: every such wait takes its window.
  bool fence = true;
  // Over a transport that waits in wall time, an `expect nothing` that no
  // fence ends waits its window cut to the target's own reaction time
  // (reaction_clock.h, convention §2.5); false: its whole window.
  bool adaptive_quiet = true;
  // The target's reaction times, shared by the cases of a run (the runner
  // sets one per run); null: the case times its own connections only.
  std::shared_ptr<ReactionClock> reactions;
  // A diagnostic reading of one known target bug, never a certification:
  // the target's Terminate Control is read with the little-endian bit-field
  // order undone (wire::SwapTerminateControlBitfieldOrder; Linux siw 6.1,
  // docs/reports/siw S1), to see what else its Terminates get right or
  // wrong. The runner says so in the run's target information.
  bool undo_terminate_bitfield_order = false;
  std::size_t emss = 1460;  // for the suite's MULPDU (RFC 5044 §4.5)
  ConnectionLimits limits;
};

struct CaseRun {
  CaseResult result;
  // The target refused the case's first connection, or left its default
  // MPA Request without a Reply (the runner counts these to stop a run
  // against a dead target).
  bool connect_failed = false;
  // Stop the whole run: the target speaks an unknown test-ULP major version.
  bool abort_run = false;
  std::string abort_reason;
  // What the target said about itself on its first accepted connection.
  std::vector<std::string> target_info;
};

CaseRun RunCase(const LoadedCase& c, targets::TargetConnector& connector, const CaseDriverOptions& options);

// The MPA Request a connect step sends (exposed for tests).
struct MpaRequest {
  wire::MpaStartupFrame frame;  // as decoded from `octets` when the case gives raw octets
  wire::Bytes octets;
  bool decodable = true;  // false: request_hex that is no Request Frame
};
// nullopt with `error` when the case's hex does not parse.
// `extension` (test-ULP 1.1, convention §2.4): the Suite Request extension
// that advertises the suite's region and IRD, for cases that send commands.
std::optional<MpaRequest> BuildMpaRequest(const proto::Connect& c, const std::string& case_id, std::string& error,
                                          const wire::SuiteRequestExtension* extension = nullptr);

// The suite's MPA Reply to the target's Request (a listen or reply step;
// case_driver_listen.cc); nullopt with `error` when the case's hex does not parse.
std::optional<wire::Bytes> BuildMpaReply(const proto::Reply& r, const wire::MpaStartupFrame& request,
                                         std::string& error);

}  // namespace rdmapct::conformance
