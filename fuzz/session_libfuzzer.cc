// libFuzzer glue of fuzz_session: inputs are binary-protobuf FuzzSessions,
// mutated and crossed over as trees (fuzz/session_mutator.h), with
// LLVMFuzzerMutate as the byte mutator of scalar and bytes fields. Linked
// only into real fuzzer builds (fuzz/CMakeLists.txt): the standalone
// replayer has no LLVMFuzzerMutate.
#include <cstring>
#include <string>

#include "fuzz/session_mutator.h"
#include "proto/session.pb.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// Writes `s` to data if it fits; the size written, or 0.
size_t Store(const rdmapct::proto::FuzzSession& s, uint8_t* data, size_t max_size) {
  std::string out;
  if (!s.SerializeToString(&out) || out.size() > max_size) return 0;
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

rdmapct::fuzz::ByteMutator LibFuzzerBytes() {
  return [](uint8_t* d, size_t n, size_t max) { return LLVMFuzzerMutate(d, n, max); };
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  rdmapct::proto::FuzzSession s;
  if (!s.ParseFromArray(data, static_cast<int>(size))) s.Clear();
  rdmapct::fuzz::SessionMutator m(seed, LibFuzzerBytes());
  for (int attempt = 0; attempt < 4; ++attempt) {
    rdmapct::proto::FuzzSession t = s;
    m.Mutate(t);
    if (const size_t n = Store(t, data, max_size); n != 0 || t.ByteSizeLong() == 0) return n;
  }
  return Store(s, data, max_size);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                                            uint8_t* out, size_t max_out_size, unsigned int seed) {
  rdmapct::proto::FuzzSession a, b, mixed;
  if (!a.ParseFromArray(data1, static_cast<int>(size1))) a.Clear();
  if (!b.ParseFromArray(data2, static_cast<int>(size2))) b.Clear();
  rdmapct::fuzz::SessionMutator m(seed, LibFuzzerBytes());
  m.CrossOver(a, b, mixed);
  return Store(mixed, out, max_out_size);
}
