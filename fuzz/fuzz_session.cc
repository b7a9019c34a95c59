// Structure-aware session fuzzing of the reference target (README
// "Session fuzzing"). The input is a binary-protobuf FuzzSession
// (proto/session.proto); under libFuzzer it is mutated as a tree by
// session_libfuzzer.cc (LLVMFuzzerCustomMutator / CustomCrossOver around
// fuzz/session_mutator), so nearly every input is a meaningful session.
// An input that does not parse is skipped.
//
// Each session runs against a ReferenceTarget with the faults named in
// $RDMAPCT_SESSION_FAULTS (comma-separated `rdmapct --list-faults` names;
// none by default) and every oracle of fuzz/session_oracle.h is checked
// after every step: Terminates well-formed, nothing after a Terminate,
// Read Responses matching the Read Requests in order and length, the
// target's octets deframing, and the same octets and memory as a
// fault-free twin. Any finding aborts (a crash for libFuzzer, a failed
// replay for CTest). Without faults, a finding is a bug of the reference
// target (or of an oracle).
#include <cstdio>
#include <cstdlib>

#include "fuzz/session_oracle.h"
#include "proto/session.pb.h"
#include "reference/model/faults.h"

namespace {

rdmapct::model::FaultSet g_faults;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* names = std::getenv("RDMAPCT_SESSION_FAULTS")) {
    if (auto bad = g_faults.AddByNames(names)) {
      std::fprintf(stderr, "fuzz_session: unknown fault %.*s\n", static_cast<int>(bad->size()), bad->data());
      std::exit(2);
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rdmapct::proto::FuzzSession session;
  if (!session.ParseFromArray(data, static_cast<int>(size))) return 0;
  const rdmapct::fuzz::OracleResult r = rdmapct::fuzz::RunSessionOracles(session, g_faults);
  if (r.findings.empty()) return 0;
  for (const auto& f : r.findings) {
    std::fprintf(stderr, "finding: %s\nsignature: %s\n", rdmapct::fuzz::FormatFinding(f).c_str(),
                 rdmapct::fuzz::FindingSignature(f).c_str());
  }
  std::abort();
}
