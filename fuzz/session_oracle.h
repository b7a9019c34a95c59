// Runs a FuzzSession against a ReferenceTarget with a FaultSet and checks,
// after every step, invariants that hold for any correct implementation:
//
//  terminate         every Terminate the target sends decodes, is on QN 2
//                    with ascending MSNs, and nothing follows it
//  read-response     every Read Response answers a Read Request the suite
//                    sent (Data Sink STag and TO), in request order, with
//                    the requested length (segments contiguous, L on the last)
//  framing           the target's octets deframe (CRC, Markers as
//                    negotiated) and every ULPDU decodes as RDMAP
//  differential      a second, fault-free ReferenceTarget fed the same octets
//                    sends the same octets, closes at the same step and
//                    leaves the same memory in every advertised region
//
// Step 0 is the MPA Request; step k (k >= 1) is the k-th TCP write of the
// session (session_builder.h); the last step is the suite's FIN.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "proto/session.pb.h"
#include "reference/model/faults.h"
#include "targets/reference_target.h"

namespace rdmapct::fuzz {

struct Finding {
  std::string oracle;  // "terminate", "read-response", "framing", "differential"
  std::size_t step = 0;
  std::string description;  // one line
  // What makes one bug one finding (run_remote.h FindingSignature): the
  // requirement the divergence violates ("" when no rule names it) and the
  // shape of the diverging step, e.g. "RDMA Read Response instead of
  // Terminate", "Terminate/code", "RDMA Read Response/header", "memory".
  std::string requirement = {};
  std::string shape = {};
};

std::string FormatFinding(const Finding& f);

// What makes one bug found twice one finding: "differential:
// R5040-6.1-10: response instead of Terminate"; without a shape, the
// oracle and the description with its numbers taken out.
std::string FindingSignature(const Finding& f);

// The target configuration a session asks for (profile, MPA options).
targets::ReferenceTargetConfig SessionTargetConfig(const proto::FuzzSession& s, const model::FaultSet& faults);

struct OracleResult {
  std::vector<Finding> findings;  // at most one per oracle (the first)
  std::size_t steps = 0;          // steps executed
};

// Runs the whole session; never throws, whatever the session holds.
OracleResult RunSessionOracles(const proto::FuzzSession& s, const model::FaultSet& faults);

// The invariant oracles alone (terminate, read-response, framing), for a
// target that is not in-process (fuzz/session_remote.h): the suite's octets
// go to Sent, the target's to Received, in the order they were seen.
class InvariantChecker {
 public:
  InvariantChecker(wire::Profile profile, bool crc, bool markers_from_target, bool markers_to_target);
  ~InvariantChecker();
  void Sent(wire::ByteSpan octets);
  void Received(wire::ByteSpan octets, std::size_t step, std::vector<Finding>& findings);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rdmapct::fuzz
