// A fuzz session as a conformance script: `rdmapct conform --script FILE
// --target ...` replays a finding against any target of the test-ULP
// convention, not only the in-process reference it was found on.
//
// The sends are the session's actions in the case language, by region role
// and field override (so the script adapts to any target's STags): the
// message type, region and offset, lengths, payload octets, every header
// override, the MPA framing corruptions and the TCP write boundaries.
//
// The expectations are the reaction of the fault-free reference target to
// the same session, recorded when the script is written (the differential
// oracle, as a file): every non-event frame it sent (Terminates by their
// exact Layer/EType/Error Code, Read / Atomic / COMMIT Responses by type),
// every Event Record, and whether it closed. The reference passes the whole
// conformance suite, so "what it did" is the conforming reaction; a script's
// `notes` says so, and which oracle fired on the target that failed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fuzz/session_oracle.h"
#include "fuzz/session_twin.h"
#include "proto/case.pb.h"
#include "proto/session.pb.h"

namespace rdmapct::fuzz {

struct ReproOptions {
  std::string id = "fuzz/session/reproducer";  // Case.id
  std::vector<Finding> findings;               // what the failing target did (for title/notes/requirements)
  std::string origin;                          // e.g. "fuzz_session, faults skip-bounds-check"
  TargetShape target;                          // the live target's shape, as its twin ran (RunTwin)
};

// Never fails: a session the reference rejects at connection set-up becomes
// a case that expects what the reference did there (a Reply or a close).
proto::Case SessionToCase(const proto::FuzzSession& s, const ReproOptions& options);

// The case as a CaseFile in protobuf text format, with a header comment.
std::string CaseFileText(const proto::Case& c);

}  // namespace rdmapct::fuzz
