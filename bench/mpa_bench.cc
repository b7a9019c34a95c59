// MPA receive-path throughput: CRC-32C (hardware vs portable), deframing a
// large FPDU stream with CRC checking (Markers off and on), and memcpy of the
// same size as the yardstick (target: deframe + CRC >= 2 GB/s on one core and
// >= 30% of memcpy). Run: <build>/bench/rdmapct_bench --benchmark_filter=Mpa|Crc|Memcpy
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>

#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"

namespace rdmapct::wire {
namespace {

constexpr std::size_t kStreamSize = 64u << 20;

Bytes RandomBytes(std::size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(&b[i], &v, 8);
  }
  return b;
}

void BM_Crc32cHardware(benchmark::State& state) {
  if (!Crc32cHardwareAvailable()) {
    state.SkipWithError("no SSE4.2");
    return;
  }
  const Bytes buf = RandomBytes(state.range(0), 1);
  for (auto _ : state) benchmark::DoNotOptimize(Crc32cHardware(0, buf));
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc32cHardware)->Arg(4096)->Arg(65536);

void BM_Crc32cPortable(benchmark::State& state) {
  const Bytes buf = RandomBytes(state.range(0), 1);
  for (auto _ : state) benchmark::DoNotOptimize(Crc32cPortable(0, buf));
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc32cPortable)->Arg(4096)->Arg(65536);

// ~64 MiB of FPDUs with ULPDUs of 1 KiB..16 KiB (fixed seed), CRC on.
const Bytes& Stream(bool markers) {
  static const Bytes streams[2] = {
      [] {
        Bytes wire;
        wire.reserve(kStreamSize + 70000);
        std::mt19937 rng(7);
        const Bytes payload = RandomBytes(16384, 2);
        while (wire.size() < kStreamSize) {
          const std::size_t n = std::uniform_int_distribution<std::size_t>(1024, 16384)(rng);
          AppendFpdu(wire, ByteSpan(payload).first(n));
        }
        return wire;
      }(),
      [] {
        Bytes wire;
        wire.reserve(kStreamSize + 70000);
        std::mt19937 rng(7);
        const Bytes payload = RandomBytes(16384, 2);
        MarkerInserter ins;
        while (wire.size() < kStreamSize) {
          const std::size_t n = std::uniform_int_distribution<std::size_t>(1024, 16384)(rng);
          ins.AppendUlpdu(wire, ByteSpan(payload).first(n));
        }
        return wire;
      }()};
  return streams[markers ? 1 : 0];
}

// Args: markers (0/1), chunk size fed per Feed call (an MSS-sized TCP
// segment or a 64 KiB receive buffer).
void BM_MpaDeframeCrc(benchmark::State& state) {
  const bool markers = state.range(0) != 0;
  const std::size_t chunk = static_cast<std::size_t>(state.range(1));
  const Bytes& wire = Stream(markers);
  uint64_t fpdus = 0;
  for (auto _ : state) {
    MpaDeframer d({.crc_enabled = true, .markers_enabled = markers});
    uint64_t sum = 0;
    auto on_fpdu = [&](const MpaFpdu& f) { sum += f.ulpdu.size() + f.ulpdu[0]; };
    for (std::size_t off = 0; off < wire.size(); off += chunk) {
      const ByteSpan piece = ByteSpan(wire).subspan(off, std::min(chunk, wire.size() - off));
      if (!d.Feed(piece, on_fpdu).ok()) state.SkipWithError("deframe error");
    }
    benchmark::DoNotOptimize(sum);
    fpdus = d.fpdu_count();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(wire.size()));
  state.counters["fpdus"] = double(fpdus);
}
BENCHMARK(BM_MpaDeframeCrc)
    ->ArgsProduct({{0, 1}, {1460, 65536}})
    ->ArgNames({"markers", "chunk"})
    ->Unit(benchmark::kMillisecond);

void BM_Memcpy(benchmark::State& state) {
  const Bytes& src = Stream(false);
  Bytes dst(src.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(src.size()));
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rdmapct::wire
