// The case driver and the runner against scripted fake targets: every
// way a target can misbehave outside a case (silent, garbage, flood, dead,
// unknown convention, missing capability) ends as a bounded verdict, never a
// hang; and against the in-process reference target with fault switches,
// the cases catch the faults they are about.
#include "conformance/case_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <thread>

#include "conformance/case_loader.h"
#include "conformance/runner.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"
#include "targets/in_process.h"
#include "targets/reference_target.h"

namespace rdmapct::conformance {
namespace {

using std::chrono::milliseconds;

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A fake target: `on_write` sees every suite write and may queue octets or
// close; `on_idle` may produce octets whenever the suite reads an empty
// queue (a flood). With nothing to give, Read waits like TCP would.
struct Script {
  std::function<void(wire::ByteSpan in, wire::Bytes& out, bool& fin)> on_write;
  std::function<void(wire::Bytes& out)> on_idle;
};

class ScriptedTransport : public targets::Transport {
 public:
  explicit ScriptedTransport(Script s) : script_(std::move(s)) {}
  targets::IoStatus Write(wire::ByteSpan bytes) override {
    if (fin_) return targets::IoStatus::kClosed;
    if (script_.on_write) script_.on_write(bytes, queue_, fin_);
    return targets::IoStatus::kOk;
  }
  targets::IoStatus Read(wire::Bytes& out, std::size_t max, milliseconds timeout) override {
    if (queue_.empty() && script_.on_idle && !fin_) script_.on_idle(queue_);
    if (!queue_.empty()) {
      const std::size_t n = std::min(max, queue_.size());
      out.insert(out.end(), queue_.begin(), queue_.begin() + n);
      queue_.erase(queue_.begin(), queue_.begin() + n);
      return targets::IoStatus::kOk;
    }
    if (fin_) return targets::IoStatus::kClosed;
    std::this_thread::sleep_for(timeout);
    return targets::IoStatus::kTimeout;
  }
  void ShutdownWrite() override { fin_ = true; }
  void Abort() override { fin_ = true; }
  std::string last_error() const override { return ""; }
  std::string peer() const override { return "scripted"; }

 private:
  Script script_;
  wire::Bytes queue_;
  bool fin_ = false;
};

class ScriptedConnector : public targets::TargetConnector {
 public:
  explicit ScriptedConnector(std::function<Script()> make) : make_(std::move(make)) {}
  std::unique_ptr<targets::Transport> Connect(milliseconds, std::string& error) override {
    ++connects;
    if (!make_) {
      error = "connection refused";
      return nullptr;
    }
    return std::make_unique<ScriptedTransport>(make_());
  }
  std::string Describe() const override { return "scripted target"; }
  int connects = 0;

 private:
  std::function<Script()> make_;
};

wire::Advertisement TestAdvertisement() {
  wire::Advertisement adv;
  adv.ird = 4;
  adv.ord = 4;
  adv.receive_buffer_count = 4;
  adv.receive_buffer_size = 1024;
  adv.connection_serial = 1;
  adv.regions.push_back({0x1a01, 0x10000, 8192, wire::kAccessRemoteRead | wire::kAccessRemoteWrite, 0, 1, 0});
  return adv;
}

wire::Bytes ReplyOctets(const wire::Bytes& private_data, bool reject = false) {
  wire::MpaStartupFrame reply;
  reply.is_reply = true;
  reply.crc_required = true;
  reply.reject = reject;
  reply.private_data = private_data;
  return wire::EncodeMpaStartupFrame(reply);
}

wire::Bytes AdvertisementOctets(const wire::Advertisement& adv) {
  wire::Bytes pd;
  EXPECT_TRUE(wire::EncodeAdvertisement(adv, pd).ok());
  return pd;
}

// Replies to the MPA Request with `reply`; `after` runs on every later write.
Script Replying(wire::Bytes reply, std::function<void(wire::Bytes&, bool&)> after = {}) {
  auto first = std::make_shared<bool>(true);
  return Script{[=](wire::ByteSpan, wire::Bytes& out, bool& fin) {
                  if (*first) {
                    *first = false;
                    out.insert(out.end(), reply.begin(), reply.end());
                  } else if (after) {
                    after(out, fin);
                  }
                },
                {}};
}

LoadedCase Case(const std::string& body, const std::string& id = "rfc5040/7.2/t") {
  CaseLoad load =
      ParseCaseFile("case { id: \"" + id + "\" title: \"t\" requirement: \"R5040-7.2-09a\" level: MUST " + body + " }",
                    "t.textproto", "rfc5040", "7.2");
  EXPECT_TRUE(load.ok()) << (load.errors.empty() ? "" : load.errors.front());
  return std::move(load.cases.at(0));
}

const char kWriteThenTerminate[] = R"pb(
  needs { region { role: RW } }
  step { send { message { type: RDMA_WRITE remote { region: RW } payload { text: "x" } } } }
  step { expect { timeout_ms: 5000 terminate { accept { layer: 0 etype: 1 code: 0 } } } }
)pb";

CaseDriverOptions FastOptions() {
  CaseDriverOptions o;
  o.reply_timeout = milliseconds(150);
  o.expect_timeout = milliseconds(150);
  o.close_timeout = milliseconds(50);
  return o;
}

TEST(CaseDriverTest, SilentTargetIsAnErrorWithinTheTimeout) {
  ScriptedConnector connector([] { return Script{}; });
  const auto t0 = std::chrono::steady_clock::now();
  const CaseRun run = RunCase(Case(kWriteThenTerminate), connector, FastOptions());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(2000));
  EXPECT_EQ(run.result.verdict, Verdict::kError);
  EXPECT_TRUE(Contains(run.result.reason, "no MPA Reply within 150 ms")) << run.result.reason;
  EXPECT_TRUE(run.connect_failed);  // counts toward stopping the run
  ASSERT_FALSE(run.result.frames.empty());
  EXPECT_EQ(run.result.frames[0].kind, FrameKind::kMpaRequest);
}

TEST(CaseDriverTest, GarbageInsteadOfAReplyIsAnError) {
  const std::string http = "HTTP/1.1 400 Bad Request\r\n\r\n";
  ScriptedConnector connector([&] { return Replying(wire::Bytes(http.begin(), http.end())); });
  const CaseRun run = RunCase(Case(kWriteThenTerminate), connector, FastOptions());
  EXPECT_EQ(run.result.verdict, Verdict::kError);
  EXPECT_TRUE(Contains(run.result.reason, "MPA Reply does not decode")) << run.result.reason;
  EXPECT_TRUE(Contains(run.result.reason, "Key")) << run.result.reason;
  EXPECT_TRUE(std::any_of(run.result.frames.begin(), run.result.frames.end(),
                          [](const FrameRecord& f) { return f.kind == FrameKind::kRaw && f.raw.size() >= 16; }));
}

// After a good Reply, octets that are no FPDU fail the waiting expectation.
TEST(CaseDriverTest, GarbageFpdusFailTheExpectation) {
  const wire::Bytes reply = ReplyOctets(AdvertisementOctets(TestAdvertisement()));
  ScriptedConnector connector([&] {
    return Replying(reply, [](wire::Bytes& out, bool&) {
      wire::Bytes fpdu = wire::EncodeFpdu(wire::Bytes(20, 0x42), {.crc_xor = 1});
      out.insert(out.end(), fpdu.begin(), fpdu.end());
    });
  });
  const CaseRun run = RunCase(Case(kWriteThenTerminate), connector, FastOptions());
  EXPECT_EQ(run.result.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(run.result.reason, "no valid FPDU")) << run.result.reason;
  EXPECT_TRUE(Contains(run.result.reason, "CRC")) << run.result.reason;
}

// Event Records without end while the suite waits for a Terminate: the
// queue bound ends the wait as an error, long before the 5 s timeout.
TEST(CaseDriverTest, EventFloodIsBounded) {
  const wire::Bytes reply = ReplyOctets(AdvertisementOctets(TestAdvertisement()));
  ScriptedConnector connector([&] {
    auto msn = std::make_shared<uint32_t>(1);
    auto started = std::make_shared<bool>(false);
    Script s = Replying(reply, [started](wire::Bytes&, bool&) { *started = true; });
    s.on_idle = [msn, started](wire::Bytes& out) {
      if (!*started) return;
      for (int i = 0; i < 100; ++i, ++*msn) {
        wire::Bytes rec;
        wire::EncodeEventRecord(wire::MakeSendEvent(*msn, wire::Bytes{1}, std::nullopt, std::nullopt), rec);
        wire::AppendFpdu(out, wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, *msn, rec)));
      }
    };
    return s;
  });
  CaseDriverOptions options = FastOptions();
  options.limits.max_queued = 500;
  options.limits.max_recorded_octets = 64 * 1024;
  const auto t0 = std::chrono::steady_clock::now();
  const CaseRun run = RunCase(Case(kWriteThenTerminate), connector, options);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(3000));
  EXPECT_EQ(run.result.verdict, Verdict::kError);
  EXPECT_TRUE(Contains(run.result.reason, "target flood: more than 500 unconsumed frames")) << run.result.reason;
  std::size_t recorded = 0;
  for (const FrameRecord& f : run.result.frames) recorded += f.raw.size();
  EXPECT_LE(recorded, options.limits.max_recorded_octets);
}

// Event Records without end while the case waits in silence (events
// allowed): the per-connection octet bound stops reading.
TEST(CaseDriverTest, OctetFloodIsBounded) {
  const wire::Bytes reply = ReplyOctets(AdvertisementOctets(TestAdvertisement()));
  ScriptedConnector connector([&] {
    Script s = Replying(reply);
    auto msn = std::make_shared<uint32_t>(1);
    s.on_idle = [msn](wire::Bytes& out) {
      for (int i = 0; i < 100; ++i, ++*msn) {
        wire::Bytes rec;
        wire::EncodeEventRecord(wire::MakeSendEvent(*msn, wire::Bytes{1}, std::nullopt, std::nullopt), rec);
        wire::AppendFpdu(out, wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, *msn, rec)));
      }
    };
    return s;
  });
  CaseDriverOptions options = FastOptions();
  options.limits.max_received_octets = 200 * 1024;
  options.limits.max_queued = 1u << 20;
  options.adaptive_quiet = false;  // the whole window: the flood must end it
  const auto t0 = std::chrono::steady_clock::now();
  const CaseRun run =
      RunCase(Case(R"pb(step { expect { timeout_ms: 20000 nothing { allow_events: true } } })pb"), connector, options);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(5000));
  EXPECT_EQ(run.result.verdict, Verdict::kError);
  EXPECT_TRUE(Contains(run.result.reason, "target flood: more than 204800 octets on one connection"))
      << run.result.reason;
}

// Octets that are no FPDU, without end: the waiting expectation fails at
// the first undecodable octet (later octets are only counted, never kept).
TEST(CaseDriverTest, GarbageFloodIsBounded) {
  const wire::Bytes reply = ReplyOctets(AdvertisementOctets(TestAdvertisement()));
  ScriptedConnector connector([&] {
    Script s = Replying(reply);
    s.on_idle = [](wire::Bytes& out) { out.assign(64 * 1024, 0xEE); };
    return s;
  });
  CaseDriverOptions options = FastOptions();
  options.limits.max_received_octets = 1u << 20;
  const CaseRun run = RunCase(Case(R"pb(step { expect { timeout_ms: 20000 closed {} } })pb"), connector, options);
  EXPECT_EQ(run.result.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(run.result.reason, "no valid FPDU")) << run.result.reason;
}

TEST(CaseDriverTest, CaseBudgetBoundsEveryWait) {
  const wire::Bytes reply = ReplyOctets(AdvertisementOctets(TestAdvertisement()));
  ScriptedConnector connector([&] { return Replying(reply); });
  CaseDriverOptions options = FastOptions();
  options.case_timeout = milliseconds(300);
  const auto t0 = std::chrono::steady_clock::now();
  const CaseRun run = RunCase(Case(kWriteThenTerminate), connector, options);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(2000));
  EXPECT_EQ(run.result.verdict, Verdict::kError);
  EXPECT_TRUE(Contains(run.result.reason, "exceeded its time budget of 300 ms")) << run.result.reason;
}

TEST(CaseDriverTest, MissingCapabilityAndMissingAdvertisementSkip) {
  const wire::Bytes reply = ReplyOctets(AdvertisementOctets(TestAdvertisement()));
  ScriptedConnector connector([&] { return Replying(reply); });
  CaseRun run = RunCase(Case(R"pb(needs { region { role: RO min_length: 64 } ird: 8 }
                                  step { expect { nothing {} } })pb"),
                        connector, FastOptions());
  EXPECT_EQ(run.result.verdict, Verdict::kSkip);
  EXPECT_TRUE(Contains(run.result.reason, "region ro of >= 64 octets, IRD >= 8")) << run.result.reason;

  ScriptedConnector bare([&] { return Replying(ReplyOctets({})); });
  run = RunCase(Case(kWriteThenTerminate), bare, FastOptions());
  EXPECT_EQ(run.result.verdict, Verdict::kSkip);
  EXPECT_TRUE(Contains(run.result.reason, "Advertisement")) << run.result.reason;
}

TEST(CaseDriverTest, MalformedAdvertisementIsAConventionError) {
  wire::Bytes pd = AdvertisementOctets(TestAdvertisement());
  pd[6] = 0x80;  // a reserved Flags bit
  ScriptedConnector connector([&] { return Replying(ReplyOctets(pd)); });
  const CaseRun run = RunCase(Case(kWriteThenTerminate), connector, FastOptions());
  EXPECT_EQ(run.result.verdict, Verdict::kError);
  EXPECT_TRUE(Contains(run.result.reason, "target broke the test-ULP convention: malformed Advertisement"))
      << run.result.reason;
  EXPECT_FALSE(run.abort_run);
}

TEST(CaseDriverTest, RejectIsAnErrorForTheDefaultRequestAndASkipForAnOption) {
  ScriptedConnector connector([&] { return Replying(ReplyOctets({}, true)); });
  CaseRun run = RunCase(Case(kWriteThenTerminate), connector, FastOptions());
  EXPECT_EQ(run.result.verdict, Verdict::kError);
  EXPECT_TRUE(Contains(run.result.reason, "rejected the MPA Request (R=1)")) << run.result.reason;
  run = RunCase(Case(std::string("step { connect { request_markers: true } } ") + kWriteThenTerminate), connector,
                FastOptions());
  EXPECT_EQ(run.result.verdict, Verdict::kSkip);
  EXPECT_TRUE(Contains(run.result.reason, "does not accept an MPA Request with M=1")) << run.result.reason;
  EXPECT_FALSE(run.connect_failed);
}

TEST(RunnerTest, StopsAfterConsecutiveConnectionFailures) {
  ScriptedConnector dead(nullptr);
  std::vector<LoadedCase> cases;
  for (int i = 0; i < 6; ++i) cases.push_back(Case(kWriteThenTerminate, "rfc5040/7.2/c" + std::to_string(i)));
  std::vector<const LoadedCase*> selected;
  for (const LoadedCase& c : cases) selected.push_back(&c);
  RunOptions options;
  options.driver = FastOptions();
  RunResult run = RunCases(selected, options, dead);
  EXPECT_TRUE(run.aborted);
  EXPECT_TRUE(Contains(run.abort_reason, "failed to set up 3 connections in a row")) << run.abort_reason;
  EXPECT_EQ(dead.connects, 3);
  ASSERT_EQ(run.cases.size(), 6u);
  EXPECT_TRUE(Contains(run.cases[0].reason, "cannot connect to the target: connection refused"));
  EXPECT_TRUE(Contains(run.cases[5].reason, "not run: the target failed to set up")) << run.cases[5].reason;
  EXPECT_EQ(run.counts.error, 6u);
  EXPECT_EQ(ExitStatus(run), kExitError);

  options.keep_going = true;
  options.jobs = 2;
  run = RunCases(selected, options, dead);
  EXPECT_FALSE(run.aborted);
  EXPECT_EQ(dead.connects, 3 + 6);
}

// A transport whose connection reports a small TCP MSS (as a TCP transport
// reports TCP_MAXSEG), over the in-process reference.
class SmallMssTransport : public targets::Transport {
 public:
  explicit SmallMssTransport(std::unique_ptr<targets::Transport> inner) : inner_(std::move(inner)) {}
  targets::IoStatus Write(wire::ByteSpan b) override { return inner_->Write(b); }
  targets::IoStatus Read(wire::Bytes& out, std::size_t max, std::chrono::milliseconds t) override {
    return inner_->Read(out, max, t);
  }
  void ShutdownWrite() override { inner_->ShutdownWrite(); }
  void Abort() override { inner_->Abort(); }
  std::string last_error() const override { return inner_->last_error(); }
  std::string peer() const override { return inner_->peer(); }
  std::optional<std::size_t> EffectiveMss() const override { return 536; }
  bool WaitsInWallTime() const override { return inner_->WaitsInWallTime(); }

 private:
  std::unique_ptr<targets::Transport> inner_;
};

class SmallMssConnector : public targets::TargetConnector {
 public:
  std::unique_ptr<targets::Transport> Connect(std::chrono::milliseconds t, std::string& error) override {
    auto inner = inner_.Connect(t, error);
    return inner ? std::make_unique<SmallMssTransport>(std::move(inner)) : nullptr;
  }
  std::string Describe() const override { return "in-process reference, MSS 536"; }

 private:
  targets::InProcessConnector inner_{std::make_shared<targets::ReferenceTarget>()};
};

// decisions D-G14: the suite's FPDUs follow the connection's EMSS, also in a
// run that can be interrupted (the CLI's: RunOptions::stop wraps every
// transport), which once hid the EMSS behind its wrapper.
TEST(RunnerTest, TheSuitesFpdusFollowTheConnectionsMssInAStoppableRun) {
  const LoadedCase c = Case(R"pb(
    needs { region { role: RW min_length: 4096 } }
    step { send { message { type: RDMA_WRITE remote { region: RW } payload { fill { length: 3000 } } } } }
    step { expect { timeout_ms: 300 nothing {} } }
  )pb");
  SmallMssConnector connector;
  std::atomic<int> stop{0};
  RunOptions options;
  options.driver = FastOptions();
  options.stop = &stop;
  const RunResult run = RunCases({&c}, options, connector);
  ASSERT_EQ(run.cases.size(), 1u);
  EXPECT_EQ(run.cases[0].verdict, Verdict::kPass) << run.cases[0].reason;
  int fpdus = 0;
  for (const FrameRecord& f : run.cases[0].frames) {
    if (f.direction != Direction::kToTarget || f.kind != FrameKind::kFpdu) continue;
    ++fpdus;
    EXPECT_LE(f.raw.size(), 536u) << f.summary;
  }
  EXPECT_GE(fpdus, 6);  // 3000 octets at a MULPDU under 536 (and the RTR-free start)
}

TEST(RunnerTest, UnknownConventionMajorVersionStopsTheRun) {
  wire::Bytes pd = AdvertisementOctets(TestAdvertisement());
  pd[4] = 2;  // Major Version
  pd[5] = 3;
  ScriptedConnector connector([&] { return Replying(ReplyOctets(pd)); });
  std::vector<LoadedCase> cases = {Case(kWriteThenTerminate, "rfc5040/7.2/a"),
                                   Case(kWriteThenTerminate, "rfc5040/7.2/b")};
  RunOptions options;
  options.driver = FastOptions();
  const RunResult run = RunCases({&cases[0], &cases[1]}, options, connector);
  EXPECT_TRUE(run.aborted);
  EXPECT_EQ(run.abort_reason, "target speaks test-ULP convention 2.3; this suite implements 1.1");
  EXPECT_EQ(connector.connects, 1);
  EXPECT_EQ(run.cases[1].reason, "not run: target speaks test-ULP convention 2.3; this suite implements 1.1");
  EXPECT_EQ(ExitStatus(run), kExitError);
}

TEST(RunnerTest, InvalidCaseFilesEndTheRunBeforeAnyConnection) {
  ScriptedConnector connector([] { return Script{}; });
  RunOptions options;
  options.cases_dir = "/nonexistent/cases";
  const RunResult run = RunSuite(options, connector);
  EXPECT_TRUE(run.aborted);
  EXPECT_TRUE(Contains(run.abort_reason, "invalid case files")) << run.abort_reason;
  EXPECT_EQ(connector.connects, 0);
  EXPECT_EQ(ExitStatus(run), kExitError);
}

TEST(RunnerTest, KeepMemoryCasesRunAlone) {
  EXPECT_TRUE(NeedsExclusiveTarget(Case("needs { keep_memory: true } step { pause {} }").proto));
  EXPECT_TRUE(NeedsExclusiveTarget(Case("step { connect { keep_memory: true } }").proto));
  EXPECT_FALSE(NeedsExclusiveTarget(Case(kWriteThenTerminate).proto));
}

// The cases catch the faults they are about: the reference target with a
// fault switch is graded by the same case files and fails.
struct FaultCase {
  model::Fault fault;
  const char* case_id;
  Verdict verdict;
  const char* reason;
};

class FaultDetectionTest : public ::testing::TestWithParam<FaultCase> {};

TEST_P(FaultDetectionTest, CaseCatchesTheFault) {
  const FaultCase& f = GetParam();
  static const CaseLoad load = LoadCases();
  const LoadedCase* c = nullptr;
  for (const LoadedCase& lc : load.cases) {
    if (lc.id() == f.case_id) c = &lc;
  }
  ASSERT_NE(c, nullptr) << f.case_id;
  targets::ReferenceTargetConfig config;
  config.faults.Add(f.fault);
  targets::InProcessConnector connector(std::make_shared<targets::ReferenceTarget>(config));
  const CaseRun run = RunCase(*c, connector, CaseDriverOptions{});
  EXPECT_EQ(run.result.verdict, f.verdict) << run.result.reason;
  EXPECT_TRUE(Contains(run.result.reason, f.reason)) << run.result.reason;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FaultDetectionTest,
    ::testing::Values(FaultCase{model::Fault::kSkipBoundsCheck, "rfc5040/7.2/read-req-src-beyond-bounds",
                                Verdict::kFail, "expected a Terminate, got RDMA Read Response"},
                      FaultCase{model::Fault::kSkipAccessRightsCheck, "rfc5040/7.2/write-to-read-only-region",
                                Verdict::kFail, "no Terminate"},
                      FaultCase{model::Fault::kSkipStreamAssociationCheck, "rfc5040/7.2/read-req-foreign-src-stag",
                                Verdict::kFail, "expected a Terminate, got RDMA Read Response"},
                      FaultCase{model::Fault::kTerminateWithoutTerminatedHeader,
                                "rfc5040/7.2/read-req-invalid-src-stag", Verdict::kFail, "no Terminated"}));

}  // namespace
}  // namespace rdmapct::conformance
