// The whole decode pipeline of `rdmapct decode` and of capture audits, minus
// printing: MPA deframing (Markers removed and checked) + CRC-32C check +
// DDP/RDMAP decode of every segment (wire::DecodeMpaStream), over a 64 MiB
// synthetic stream, and memcpy of the same buffer as the yardstick.
// Target: >= 2 GB/s on one core with CRC on, and >= 30% of memcpy.
//
// Traffic mix (fixed seed): 45% RDMA Writes of 4 KiB, 45% Sends of 4 KiB,
// 10% RDMA Read Requests, each message segmented at the MULPDU of the EMSS
// argument (RFC 5044 §4.5): 1460 (Ethernet MTU, a 4 KiB message takes 3
// FPDUs) or 8960 (jumbo frames, one FPDU per message).
// Run: <build>/bench/rdmapct_bench --benchmark_filter=Decode
#include <benchmark/benchmark.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <random>

#include "reference/wire/ddp_segmentation.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/stream_decode.h"

namespace rdmapct::wire {
namespace {

// 64 MiB; RDMAPCT_DECODE_BENCH_MIB=4 shrinks it for profiling under
// valgrind --tool=callgrind.
std::size_t DecodeStreamSize() {
  const char* env = std::getenv("RDMAPCT_DECODE_BENCH_MIB");
  const std::size_t mib = env != nullptr ? std::strtoul(env, nullptr, 10) : 0;
  return (mib != 0 ? mib : 64) << 20;
}
constexpr std::size_t kMessageSize = 4096;

// Appends one message, segmented at `mulpdu`, as FPDUs (with Markers if `ins`).
void AppendMessage(Bytes& wire, MarkerInserter* ins, const DdpSegmentHeader& first, ByteSpan body, std::size_t mulpdu) {
  auto planned = SegmentDdpMessage(first, body, mulpdu);
  for (const Bytes& seg : EncodeDdpSegments(*planned)) {
    if (ins != nullptr)
      ins->AppendUlpdu(wire, seg);
    else
      AppendFpdu(wire, seg);
  }
}

Bytes BuildStream(bool markers, std::size_t emss) {
  const std::size_t mulpdu = Mulpdu(emss, markers);
  Bytes payload(kMessageSize);
  std::mt19937 rng(11);
  for (uint8_t& b : payload) b = static_cast<uint8_t>(rng());
  Bytes wire;
  const std::size_t size = DecodeStreamSize();
  wire.reserve(size + 3 * 8192);
  MarkerInserter ins(0);
  uint32_t send_msn = 1, read_msn = 1;
  uint64_t to = 0;
  while (wire.size() < size) {
    const uint32_t pick = rng() % 20;
    if (pick < 9) {
      AppendMessage(wire, markers ? &ins : nullptr, MakeRdmaWrite(0x1000, to, {}).ddp, payload, mulpdu);
      to += kMessageSize;
    } else if (pick < 18) {
      AppendMessage(wire, markers ? &ins : nullptr, MakeSend(Opcode::kSend, send_msn++, {}).ddp, payload, mulpdu);
    } else {
      const RdmapSegment rr = MakeReadRequest(read_msn++, {0x2000, to, kMessageSize, 0x3000, to});
      const Bytes seg = EncodeSegment(rr);
      if (markers)
        ins.AppendUlpdu(wire, seg);
      else
        AppendFpdu(wire, seg);
    }
  }
  return wire;
}

const Bytes& DecodeStream(bool markers, std::size_t emss) {
  static std::array<Bytes, 4> cache;
  Bytes& b = cache[(markers ? 2 : 0) + (emss > 1500 ? 1 : 0)];
  if (b.empty()) b = BuildStream(markers, emss);
  return b;
}

// What a consumer of the pipeline minimally does with each segment: look at
// its opcode and payload, so that nothing can be optimised away.
struct CountingSink : StreamDecodeSink {
  uint64_t segments = 0, payload = 0, errors = 0;
  std::array<uint64_t, kOpcodeCount> per_opcode{};
  void OnStartupFrame(const DecodedStartupFrame&) override {}
  void OnSegment(const DecodedSegment& s) override {
    ++segments;
    if (s.rdmap && s.rdmap->opcode_known) {
      ++per_opcode[s.rdmap->ctrl.opcode];
      payload += s.rdmap->ulp_payload.size();
    }
  }
  void OnError(const StreamError&) override { ++errors; }
};

// Args: markers (0/1), EMSS.
void BM_DecodePipeline(benchmark::State& state) {
  const bool markers = state.range(0) != 0;
  const Bytes& wire = DecodeStream(markers, static_cast<std::size_t>(state.range(1)));
  const StreamDecodeOptions options{.profile = Profile::kCommit,
                                    .crc_enabled = true,
                                    .markers_enabled = markers,
                                    .handshake = HandshakeMode::kAbsent};
  CountingSink sink;
  for (auto _ : state) {
    sink = CountingSink{};
    const StreamDecodeSummary s = DecodeMpaStream(wire, options, sink);
    if (!s.ok() || sink.errors != 0) state.SkipWithError("decode error");
    benchmark::DoNotOptimize(sink.payload);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(wire.size()));
  state.counters["fpdus"] = double(sink.segments);
  state.counters["avg_fpdu"] = double(wire.size()) / double(sink.segments);
}
BENCHMARK(BM_DecodePipeline)
    ->ArgsProduct({{0, 1}, {1460, 8960}})
    ->ArgNames({"markers", "emss"})
    ->Unit(benchmark::kMillisecond);

void BM_DecodeMemcpy(benchmark::State& state) {
  const Bytes& src = DecodeStream(false, 8960);
  Bytes dst(src.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(src.size()));
}
BENCHMARK(BM_DecodeMemcpy)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rdmapct::wire
