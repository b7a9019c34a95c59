// Segments per second through the reference model's receive path, next to
// the decode-only rate (wire::DecodeRdmapSegment) of the same stream.
// Streams: RDMA Write 4 KiB, Send 1 KiB, Read Request 4 KiB (with its Read
// Responses generated at MULPDU 1452), Atomic FetchAdd (RFC 7306).
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "reference/model/endpoint.h"
#include "reference/wire/rdmap.h"

namespace {

using namespace rdmapct;  // NOLINT

constexpr uint32_t kStag = 0x100;
constexpr std::size_t kRegion = 1 << 20;
constexpr std::size_t kBatch = 1024;  // segments per fresh endpoint

using Stream = std::vector<wire::Bytes>;

Stream WriteStream() {
  Stream s;
  const wire::Bytes data(4096, 0xA5);
  for (std::size_t i = 0; i < kBatch; ++i) {
    s.push_back(wire::EncodeSegment(wire::MakeRdmaWrite(kStag, (i * 4096) % kRegion, data)));
  }
  return s;
}

Stream SendStream() {
  Stream s;
  const wire::Bytes data(1024, 0x5A);
  for (uint32_t i = 0; i < kBatch; ++i) {
    s.push_back(wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, i + 1, data)));
  }
  return s;
}

Stream ReadStream() {
  Stream s;
  for (uint32_t i = 0; i < kBatch; ++i) {
    wire::ReadRequestHeader h{0x999, 0, 4096, kStag, (uint64_t{i} * 4096) % kRegion};
    s.push_back(wire::EncodeSegment(wire::MakeReadRequest(i + 1, h)));
  }
  return s;
}

Stream AtomicStream() {
  Stream s;
  for (uint32_t i = 0; i < kBatch; ++i) {
    wire::AtomicRequestHeader h;
    h.atomic_opcode = static_cast<uint8_t>(wire::AtomicOpcode::kFetchAdd);
    h.request_identifier = i;
    h.remote_stag = kStag;
    h.remote_tagged_offset = (uint64_t{i} * 8) % kRegion;
    h.add_or_swap_data = 1;
    h.add_or_swap_mask = 0;
    s.push_back(wire::EncodeSegment(wire::MakeAtomicRequest(i + 1, h)));
  }
  return s;
}

std::unique_ptr<model::RdmapEndpoint> Fresh(wire::Profile profile, bool receives) {
  model::EndpointConfig c;
  c.profile = profile;
  c.ird = kBatch;
  auto ep = std::make_unique<model::RdmapEndpoint>(c);
  ep->resources().AddRegion(kStag, 0, kRegion, model::kAllAccess, c.stream_id);
  if (receives) {
    for (std::size_t i = 0; i < kBatch; ++i) ep->PostReceive(1024);
  }
  return ep;
}

// Feeds the stream batch by batch; each batch runs on a fresh endpoint
// (MSNs restart at 1), built while the timer is paused.
void RunModel(benchmark::State& state, const Stream& stream, wire::Profile profile, bool receives) {
  model::Reactions out;
  std::size_t segments_out = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto ep = Fresh(profile, receives);
    state.ResumeTiming();
    for (const wire::Bytes& seg : stream) {
      out.Clear();
      ep->OnSegment(seg, out);
      segments_out += out.segments().size();
    }
    if (ep->first_violation()) {
      state.SkipWithError(ep->first_violation()->detail.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * stream.size());
  state.counters["segments_out_per_in"] =
      static_cast<double>(segments_out) / std::max<double>(1, state.iterations() * stream.size());
}

void RunDecode(benchmark::State& state, const Stream& stream, wire::Profile profile) {
  for (auto _ : state) {
    for (const wire::Bytes& seg : stream) {
      auto v = wire::DecodeRdmapSegment(seg, profile);
      benchmark::DoNotOptimize(v);
    }
  }
  state.SetItemsProcessed(state.iterations() * stream.size());
}

void BM_ModelRx_Write4K(benchmark::State& s) {
  static const Stream st = WriteStream();
  RunModel(s, st, wire::Profile::kRfc5040, false);
}
void BM_DecodeOnly_Write4K(benchmark::State& s) {
  static const Stream st = WriteStream();
  RunDecode(s, st, wire::Profile::kRfc5040);
}
void BM_ModelRx_Send1K(benchmark::State& s) {
  static const Stream st = SendStream();
  RunModel(s, st, wire::Profile::kRfc5040, true);
}
void BM_DecodeOnly_Send1K(benchmark::State& s) {
  static const Stream st = SendStream();
  RunDecode(s, st, wire::Profile::kRfc5040);
}
void BM_ModelRx_ReadRequest4K(benchmark::State& s) {
  static const Stream st = ReadStream();
  RunModel(s, st, wire::Profile::kRfc5040, false);
}
void BM_DecodeOnly_ReadRequest4K(benchmark::State& s) {
  static const Stream st = ReadStream();
  RunDecode(s, st, wire::Profile::kRfc5040);
}
void BM_ModelRx_AtomicFetchAdd(benchmark::State& s) {
  static const Stream st = AtomicStream();
  RunModel(s, st, wire::Profile::kRfc7306, false);
}
void BM_DecodeOnly_AtomicFetchAdd(benchmark::State& s) {
  static const Stream st = AtomicStream();
  RunDecode(s, st, wire::Profile::kRfc7306);
}

BENCHMARK(BM_ModelRx_Write4K);
BENCHMARK(BM_DecodeOnly_Write4K);
BENCHMARK(BM_ModelRx_Send1K);
BENCHMARK(BM_DecodeOnly_Send1K);
BENCHMARK(BM_ModelRx_ReadRequest4K);
BENCHMARK(BM_DecodeOnly_ReadRequest4K);
BENCHMARK(BM_ModelRx_AtomicFetchAdd);
BENCHMARK(BM_DecodeOnly_AtomicFetchAdd);

}  // namespace
