// Does nothing: tools/fuzz_bench.sh runs it next to every fuzz_* harness so
// their exec/s read against the cost of libFuzzer itself on this machine.
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)data;
  (void)size;
  return 0;
}
