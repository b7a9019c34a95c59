// `rdmapct serve` measured over loopback TCP, in-process: a targets::TcpServer
// on 127.0.0.1 port 0 on a thread of its own, as `rdmapct serve --listen
// 127.0.0.1:0` runs it (same server, same reference target), and the client
// side in this process too.
//
//  * BM_ServeSuite: the whole conformance suite over TCP against it, one
//    profile per benchmark, jobs 1 and 2. One iteration is one suite run
//    (`rdmapct conform --target tcp://...`); items are cases, so
//    items_per_second is cases/s, comparable with BM_Suite (in-process).
//  * BM_ServeLoad: the load generator (targets/load_generator.h, `rdmapct
//    load`) against a server with `--crc optional`: 4 KiB RDMA Writes and
//    4 KiB Sends, CRCs on and off (the Request's C bit), over 1 and 4
//    connections. One iteration is one bounded run (a message budget; Sends
//    open a fresh connection per 8 messages, the target's receive buffers).
//    items_per_second is messages/s; MB is payload in 10^6 octets (per second).
//
// On a machine with few cores the client threads, the server's single
// thread and the kernel's loopback share them: the figures are a lower
// bound for a dedicated server.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/runner.h"
#include "targets/load_generator.h"
#include "targets/reference_target.h"
#include "targets/serve_thread.h"
#include "targets/tcp.h"
#include "targets/tcp_server.h"

namespace {

using namespace rdmapct;  // NOLINT
using targets::ServeThread;

const conformance::CaseLoad& Cases() {
  static const conformance::CaseLoad load = conformance::LoadCases();
  return load;
}

// `rdmapct serve --profile P` (the defaults: crc on, mpa-rev 2, no Markers).
void BM_ServeSuite(benchmark::State& state, wire::Profile p, int jobs) {
  if (!Cases().ok() || Cases().cases.empty()) {
    state.SkipWithError("conformance/cases did not load");
    return;
  }
  conformance::CaseFilter filter;
  filter.profile = p;
  const auto cases = conformance::SelectCases(Cases().cases, filter);
  targets::ReferenceTargetConfig config;
  config.profile = p;
  std::string error;
  ServeThread serve(config, error);
  auto connector = serve.ok() ? targets::TcpConnector::Create(serve.address(), {}, error) : nullptr;
  if (!connector) {
    state.SkipWithError(error.c_str());
    return;
  }
  conformance::RunOptions options;
  options.profile = p;
  options.jobs = jobs;
  long n = 0;
  for (auto _ : state) {
    const conformance::RunResult run = conformance::RunCases(cases, options, *connector);
    if (run.aborted || run.counts.fail + run.counts.error > 0) {
      error = run.aborted ? "run aborted: " + run.abort_reason
                          : "the clean reference target failed " + std::to_string(run.counts.fail + run.counts.error) +
                                " case(s) over TCP";
      state.SkipWithError(error.c_str());
      return;
    }
    n = static_cast<long>(run.cases.size());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["cases"] = static_cast<double>(n);
  state.counters["s_per_suite"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK_CAPTURE(BM_ServeSuite, rfc5040_jobs1, wire::Profile::kRfc5040, 1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ServeSuite, rfc5040_jobs2, wire::Profile::kRfc5040, 2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ServeSuite, rfc7306_jobs1, wire::Profile::kRfc7306, 1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ServeSuite, rfc7306_jobs2, wire::Profile::kRfc7306, 2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ServeSuite, commit_jobs1, wire::Profile::kCommit, 1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ServeSuite, commit_jobs2, wire::Profile::kCommit, 2)->UseRealTime()->Unit(benchmark::kMillisecond);

// Messages per iteration: 16 MiB of Writes; 128 connections of 8 Sends.
constexpr uint64_t kWriteBudget = 4096;
constexpr uint64_t kSendBudget = 1024;

// `rdmapct serve --crc optional`: the Reply leaves C = 0, so the Request's
// C decides.
void BM_ServeLoad(benchmark::State& state, targets::LoadOp op, bool crc) {
  targets::ReferenceTargetConfig config;
  config.mpa.crc = false;
  std::string error;
  ServeThread serve(config, error);
  auto connector = serve.ok() ? targets::TcpConnector::Create(serve.address(), {}, error) : nullptr;
  if (!connector) {
    state.SkipWithError(error.c_str());
    return;
  }
  targets::LoadOptions options;
  options.op = op;
  options.message_size = 4096;
  options.crc = crc;
  options.connections = static_cast<int>(state.range(0));
  options.max_messages = op == targets::LoadOp::kWrite ? kWriteBudget : kSendBudget;
  options.duration = std::chrono::seconds(60);  // a safety bound only
  uint64_t messages = 0, octets = 0, connections = 0;
  for (auto _ : state) {
    const targets::LoadResult r = targets::RunLoad(*connector, options);
    if (!r.ok() || r.crc != crc) {
      error = r.ok() ? std::string("the target negotiated CRCs ") + (crc ? "off" : "on") : r.error;
      state.SkipWithError(error.c_str());
      return;
    }
    messages += r.messages;
    octets += r.payload_octets;
    connections += r.connections;
  }
  state.SetItemsProcessed(static_cast<int64_t>(messages));
  state.SetBytesProcessed(static_cast<int64_t>(octets));
  state.counters["MB"] = benchmark::Counter(static_cast<double>(octets) / 1e6, benchmark::Counter::kIsRate);
  state.counters["conns_per_iter"] =
      static_cast<double>(connections) / static_cast<double>(std::max<int64_t>(state.iterations(), 1));
}

// BM_ServeLoad/<op>4k/crc_<on|off>/connections:N
[[maybe_unused]] const bool kLoadRegistered = [] {
  for (targets::LoadOp op : {targets::LoadOp::kWrite, targets::LoadOp::kSend}) {
    for (bool crc : {true, false}) {
      const std::string name =
          std::string("BM_ServeLoad/") + targets::LoadOpName(op) + "4k/crc_" + (crc ? "on" : "off");
      benchmark::RegisterBenchmark(name.c_str(), BM_ServeLoad, op, crc)
          ->ArgName("connections")
          ->Arg(1)
          ->Arg(4)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  return true;
}();

}  // namespace
