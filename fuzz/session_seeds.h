// Valid FuzzSessions to start from: the fuzz_session seed corpus
// (tools/gen_corpus) and the starting pool of the bounded searches in
// tests/fuzz. Deterministic.
#pragma once

#include <string>
#include <vector>

#include "proto/session.pb.h"

namespace rdmapct::fuzz {

struct NamedSession {
  std::string name;  // file-name safe: "<profile>_<message type>" ...
  proto::FuzzSession session;
};

// Per profile: one session per message type the profile defines (a valid
// message with the template's defaults), then a mixed session (Write, two
// Read Requests in one TCP write, Send, split across writes), the mixed
// session with CRCs off and with Markers both ways, RFC 6581 IRD/ORD, and
// the two-step error paths single mutations do not reach (a Write to a
// region a Send with Invalidate just invalidated; a COMMIT Flush whose flags
// the mutator can clear).
std::vector<NamedSession> SeedSessions();

}  // namespace rdmapct::fuzz
