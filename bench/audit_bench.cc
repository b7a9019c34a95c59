// Throughput of `rdmapct replay FILE --audit` without printing
// (replay::AuditCaptureFile: libpcap reading, TCP reassembly, MPA framing
// with CRC-32C, DDP/RDMAP decoding, both passive reference models), on a
// synthetic capture of at least 1 GiB written to /tmp when the benchmark
// starts (never committed), beside memcpy of a 256 MiB buffer. bytes/s is
// the size of the capture file per second. Issue 7's goal: >= 1 GB/s on
// one core, and >= 50 times tshark (tools/audit_vs_tshark.sh times
// `tshark -r` on the same file; tshark is not run here).
//
// The capture: one iWARP connection, Ethernet/IPv4/TCP, MPA Rev 1 with CRCs;
// the Initiator sends RDMA Writes of 1420 octets (one FPDU per 1440-octet TCP
// segment), and every 64th message is a Send or an RDMA Read Request that
// the Responder answers with a Read Response of 1420 octets. The audit must
// find nothing in it (checked; a finding fails the benchmark).
//
// RDMAPCT_AUDIT_BENCH_FILE: where the capture is written (default
// /tmp/rdmapct_audit_bench.pcap; kept for tools/audit_vs_tshark.sh and reused
// when it has the expected size). RDMAPCT_AUDIT_BENCH_MIB: its size in MiB
// of TCP payload (default 1024).
//
// Beside the speed: peak_RSS_MiB, the process's peak resident set
// (getrusage ru_maxrss; this benchmark runs first, before the memcpy
// baseline's 512 MiB), and held_MiB, the most octets the streaming audit
// held at once (reassembly, decoding, ULPDUs waiting for their turn). Both
// stay flat whatever RDMAPCT_AUDIT_BENCH_MIB is (issue 16: the audit used
// to hold the whole capture).
// Run: <build>/bench/rdmapct_bench --benchmark_filter=Audit
#include <benchmark/benchmark.h>

#include <pcap/pcap.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "capture/capture_builder.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "replay/audit.h"

namespace rdmapct::replay {
namespace {

std::string BenchFile() {
  const char* env = std::getenv("RDMAPCT_AUDIT_BENCH_FILE");
  return env != nullptr && *env ? env : "/tmp/rdmapct_audit_bench.pcap";
}

uint64_t PayloadTarget() {
  const char* env = std::getenv("RDMAPCT_AUDIT_BENCH_MIB");
  const uint64_t mib = env != nullptr ? std::strtoull(env, nullptr, 10) : 0;
  return (mib != 0 ? mib : 1024) << 20;
}

// Streams pcap records (Ethernet, microsecond timestamps, little-endian).
class PcapStream {
 public:
  explicit PcapStream(const std::string& path) : f_(std::fopen(path.c_str(), "wb")) {
    const uint32_t h[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, DLT_EN10MB};
    if (f_ != nullptr) std::fwrite(h, sizeof h, 1, f_);
  }
  ~PcapStream() {
    if (f_ != nullptr) std::fclose(f_);
  }
  bool ok() const { return f_ != nullptr; }
  // One TCP segment from `from` (0 Initiator, 1 Responder) with `payload`.
  void Segment(int from, const wire::Bytes& payload) {
    capture::FrameSpec s;
    s.source = ends_[from];
    s.destination = ends_[1 - from];
    s.seq = seq_[from];
    s.ack = seq_[1 - from];
    s.flags = capture::kTcpAck | capture::kTcpPsh;
    s.payload = payload;
    seq_[from] += static_cast<uint32_t>(payload.size());
    const wire::Bytes frame = capture::BuildTcpFrame(DLT_EN10MB, s);
    ++usec_;
    const uint32_t rec[4] = {static_cast<uint32_t>(1767225600 + usec_ / 1000000),
                             static_cast<uint32_t>(usec_ % 1000000), static_cast<uint32_t>(frame.size()),
                             static_cast<uint32_t>(frame.size())};
    std::fwrite(rec, sizeof rec, 1, f_);
    std::fwrite(frame.data(), 1, frame.size(), f_);
  }

 private:
  std::FILE* f_;
  capture::Endpoint ends_[2] = {{{4, {10, 0, 0, 1}}, 49152}, {{4, {10, 0, 0, 2}}, 5040}};
  uint32_t seq_[2] = {0x2c6d4001, 0x7e1f8001};
  uint64_t usec_ = 0;
};

bool WriteBenchCapture(const std::string& path, uint64_t payload_target) {
  PcapStream out(path);
  if (!out.ok()) return false;
  wire::MpaStartupFrame req;
  req.crc_required = true;
  out.Segment(0, wire::EncodeMpaStartupFrame(req));
  wire::MpaStartupFrame rep = req;
  rep.is_reply = true;
  out.Segment(1, wire::EncodeMpaStartupFrame(rep));
  const std::vector<uint8_t> data(1420, 0x5a);
  uint64_t written = 0, to = 0;
  uint32_t send_msn = 1, read_msn = 1;
  for (uint64_t n = 0; written < payload_target; ++n) {
    wire::Bytes fpdu;
    if (n % 128 == 63) {
      fpdu = wire::EncodeFpdu(wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, send_msn++, data)));
    } else if (n % 128 == 127) {
      const wire::ReadRequestHeader rr{.sink_stag = 0x0000AA01,
                                       .sink_tagged_offset = to,
                                       .read_message_size = 1420,
                                       .source_stag = 0x0000BB01,
                                       .source_tagged_offset = 0};
      out.Segment(0, wire::EncodeFpdu(wire::EncodeSegment(wire::MakeReadRequest(read_msn++, rr))));
      fpdu = wire::EncodeFpdu(wire::EncodeSegment(wire::MakeReadResponse(0x0000AA01, to, data)));
      out.Segment(1, fpdu);
      written += fpdu.size();
      continue;
    } else {
      fpdu = wire::EncodeFpdu(wire::EncodeSegment(wire::MakeRdmaWrite(0x0000CC01, to, data)));
    }
    to += data.size();
    out.Segment(0, fpdu);
    written += fpdu.size();
  }
  return true;
}

// The capture, written once per process (or reused from an earlier run).
const std::string* BenchCapture(std::string& error) {
  static std::string path;
  static std::string failure;
  static bool done = false;
  if (!done) {
    done = true;
    path = BenchFile();
    const uint64_t target = PayloadTarget();
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path, ec);
    // Payload plus 54 + 16 octets of headers per 1440-octet segment.
    const uint64_t expected_min = target + target / 1440 * 70;
    if (ec || size < expected_min || size > expected_min + expected_min / 50) {
      std::fprintf(stderr, "audit bench: writing %s (%llu MiB of TCP payload)...\n", path.c_str(),
                   static_cast<unsigned long long>(target >> 20));
      if (!WriteBenchCapture(path, target)) failure = "cannot write " + path;
    }
  }
  error = failure;
  return failure.empty() ? &path : nullptr;
}

void BM_AuditCapture(benchmark::State& state) {
  std::string error;
  const std::string* path = BenchCapture(error);
  if (path == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  const uint64_t size = std::filesystem::file_size(*path);
  AuditOptions options;
  uint64_t segments = 0;
  std::size_t held = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const AuditReport r = AuditCaptureFile(*path, options);
    if (!r.findings.empty() || r.connections.size() != 1 || !r.read.error.empty()) {
      state.SkipWithError(
          ("the audit is not clean: " + (r.findings.empty() ? r.read.error : r.findings[0].detail)).c_str());
      return;
    }
    segments = r.segments;
    held = std::max(held, r.peak_buffered_octets + r.peak_waiting_octets);
    benchmark::ClobberMemory();  // (DoNotOptimize(segments) here left segments 0 with this GCC)
  }
  const double elapsed_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_RSS_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024;  // ru_maxrss: KiB on Linux
  state.counters["held_MiB"] = static_cast<double>(held) / (1 << 20);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
  state.counters["capture_MiB"] = static_cast<double>(size) / (1 << 20);
  // Wall time per ULPDU of the whole audit (reading, reassembly, decoding,
  // both models), to set beside BM_DecodePipeline's per-FPDU cost.
  state.counters["ns_per_ULPDU"] =
      segments == 0 ? 0.0 : elapsed_ns / static_cast<double>(segments * state.iterations());
}
BENCHMARK(BM_AuditCapture)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();

// The yardstick: memcpy of a 256 MiB buffer, one core.
void BM_AuditMemcpyBaseline(benchmark::State& state) {
  const std::size_t n = std::size_t{256} << 20;
  std::vector<uint8_t> src(n, 0x5a), dst(n);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_AuditMemcpyBaseline)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rdmapct::replay
