// A captured connection as a conformance script (`rdmapct replay FILE
// --as-case OUT.textproto`): one Case of proto/case.proto in text format that
// `rdmapct conform --script OUT.textproto --target ...` runs against a live
// target.
//
// - connect: the captured MPA Request's C and M bits (the runner's own
//   Request otherwise: its Suite Request Private Data, Rev 1);
// - every ULPDU the Initiator sent, in capture order: a `send` of the
//   octets as they were captured (`raw { layer: DDP_SEGMENT }`: the runner
//   frames them with the negotiated CRC and Markers); an FPDU whose CRC was
//   wrong is sent as a whole FPDU with the same wrong CRC (`layer: FPDU`);
// - every ULPDU the Responder sent, where it came in the capture: an
//   `expect` of the same message type (`frame { type }`) or, for a
//   Terminate, of the same Layer/EType/Error Code (`terminate { accept }`,
//   any other code fails: `other_registered: MUST`);
//   Event Records of the test-ULP convention (Sends of the target's ULP)
//   are not expected (their sequence numbers depend on the target's past);
// - `expect { nothing {} }` at the end, when the Responder had nothing more
//   to say in the capture.
//
// STags, offsets and MSNs are sent as captured (not remapped): the script
// reproduces the connection against a target whose Advertisement names the
// same STags (the reference target, `rdmapct serve`, or the captured target
// itself). The case cites R5040-1.1-01 (RDMAP delivers in submission order),
// plus R5040-7.1-02 when it expects a Terminate.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "reference/wire/profile.h"

namespace rdmapct::replay {

struct AsCaseOptions {
  wire::Profile profile = wire::Profile::kCommit;
  std::optional<std::size_t> connection;  // default: the first iWARP connection
};

struct AsCaseResult {
  bool ok = false;
  std::string error;      // one line when !ok ("<file>: ...")
  std::string textproto;  // the CaseFile
  std::size_t connection = 0;
  std::size_t sends = 0, expects = 0;
};

AsCaseResult CaptureAsCase(const std::string& path, const AsCaseOptions& options);

}  // namespace rdmapct::replay
