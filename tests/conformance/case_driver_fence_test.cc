// The case driver's fence (conformance/case_driver_fence.cc, convention
// §2.5) against the reference target behind a transport that waits in wall
// time as TCP does: a fenced `expect nothing` still fails on every frame or
// Event Record that comes before the fence's answer; the fence takes its QN 0
// and QN 1 MSNs without shifting the case's own numbering; a step the fence
// cannot end (before the first FPDU, after raw octets, before later event
// checks) waits the quiet the target's reaction time allows
// (reaction_clock.h), or its whole window with `--quiet fixed`.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "conformance/case_driver.h"
#include "conformance/case_loader.h"
#include "targets/in_process.h"
#include "targets/reference_target.h"

namespace rdmapct::conformance {
namespace {

using std::chrono::milliseconds;

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The in-process reference, read like TCP: a read that finds nothing waits
// its whole timeout, and the driver sees a transport that waits in wall time.
class WallTimeTransport : public targets::Transport {
 public:
  explicit WallTimeTransport(std::unique_ptr<targets::Transport> inner) : inner_(std::move(inner)) {}
  targets::IoStatus Write(wire::ByteSpan b) override { return inner_->Write(b); }
  targets::IoStatus Read(wire::Bytes& out, std::size_t max, milliseconds timeout) override {
    const targets::IoStatus st = inner_->Read(out, max, milliseconds(0));
    if (st == targets::IoStatus::kTimeout) std::this_thread::sleep_for(timeout);
    return st;
  }
  void ShutdownWrite() override { inner_->ShutdownWrite(); }
  void Abort() override { inner_->Abort(); }
  std::string last_error() const override { return inner_->last_error(); }
  std::string peer() const override { return inner_->peer(); }
  bool WaitsInWallTime() const override { return true; }

 private:
  std::unique_ptr<targets::Transport> inner_;
};

class WallTimeConnector : public targets::TargetConnector {
 public:
  explicit WallTimeConnector(targets::ReferenceTargetConfig config = {})
      : inner_(std::make_shared<targets::ReferenceTarget>(config)) {}
  std::unique_ptr<targets::Transport> Connect(milliseconds t, std::string& error) override {
    auto inner = inner_.Connect(t, error);
    return inner ? std::make_unique<WallTimeTransport>(std::move(inner)) : nullptr;
  }
  std::string Describe() const override { return "in-process reference, read in wall time"; }

 private:
  targets::InProcessConnector inner_;
};

LoadedCase Case(const std::string& body) {
  CaseLoad load = ParseCaseFile(
      "case { id: \"rfc5040/5.1/t\" title: \"t\" requirement: \"R5040-5.1-02\" level: MUST " + body + " }",
      "t.textproto", "rfc5040", "5.1");
  EXPECT_TRUE(load.ok()) << (load.errors.empty() ? "" : load.errors.front());
  return std::move(load.cases.at(0));
}

std::string Notes(const StepResult& s) {
  std::string all;
  for (const std::string& n : s.notes) all += n + "\n";
  return all;
}

// Step k of the case file (the implicit connect is step 0 of the result).
const StepResult& Step(const CaseRun& run, int k) { return run.result.steps.at(static_cast<std::size_t>(k) + 1); }

const char kWriteReadWrite[] = R"pb(
  needs { region { role: RW min_length: 4096 } }
  step { send { message { type: RDMA_WRITE remote { region: RW } payload { text: "abc" } } } }
  step { expect { timeout_ms: 10000 nothing {} } }
  step { send { message { type: RDMA_READ_REQUEST remote { region: RW } length: 3 } } }
  step { expect { read_responses { first_request: 1 last_request: 1 } } }
  step { expect { timeout_ms: 10000 nothing {} } }
)pb";

// R5040-5.2.1-15, R5040-5.5-R12: the fence's Read Response ends the wait
// long before its 10 s; the fence Read took QN 1 MSN 1, so the case's Read
// Request is MSN 2 (a target that saw a gap would Terminate) and is still
// `first_request: 1`; the fence Send took QN 0 MSN 1, the next one MSN 2.
TEST(CaseDriverFence, EndsTheWaitAndKeepsTheCasesNumbering) {
  WallTimeConnector connector;
  const CaseRun run = RunCase(Case(kWriteReadWrite), connector, CaseDriverOptions{});
  ASSERT_EQ(run.result.verdict, Verdict::kPass) << run.result.reason;
  const std::string first = Notes(Step(run, 1));
  EXPECT_TRUE(Contains(first, "fence: a 4-octet Send (QN 0 MSN 1)")) << first;
  EXPECT_TRUE(Contains(first, "fence: a zero-length RDMA Read Request (QN 1 MSN 1, Sink STag 0x5117fe0c TO 0)"))
      << first;
  EXPECT_TRUE(Contains(first, "the fence answered")) << first;
  const std::string second = Notes(Step(run, 4));
  EXPECT_TRUE(Contains(second, "fence: a 4-octet Send (QN 0 MSN 2)")) << second;
  EXPECT_TRUE(Contains(second, "(QN 1 MSN 3, Sink STag 0x5117fe0c TO 1)")) << second;
  EXPECT_TRUE(Contains(second, "the fence answered")) << second;
  EXPECT_LT(Step(run, 1).duration, milliseconds(10000));
  int fence_records = 0;
  for (const FrameRecord& f : run.result.frames) fence_records += Contains(f.summary, "fence");
  EXPECT_EQ(fence_records, 4);  // two fence Sends and two fence Reads, named in the capture
}

// The fence Read's answer is not one of the case's frames, and only a
// transport that waits in wall time gets a fence.
TEST(CaseDriverFence, InProcessAndNoFenceRunsSendNoFence) {
  targets::InProcessConnector in_process(std::make_shared<targets::ReferenceTarget>());
  const CaseRun a = RunCase(Case(kWriteReadWrite), in_process, CaseDriverOptions{});
  ASSERT_EQ(a.result.verdict, Verdict::kPass) << a.result.reason;
  EXPECT_FALSE(Contains(Notes(Step(a, 1)), "fence")) << Notes(Step(a, 1));
  WallTimeConnector tcp_like;
  CaseDriverOptions options;
  options.fence = false;
  options.adaptive_quiet = false;
  const LoadedCase c = Case(R"pb(
    needs { region { role: RW min_length: 4096 } }
    step { send { message { type: RDMA_WRITE remote { region: RW } payload { text: "abc" } } } }
    step { expect { timeout_ms: 200 nothing {} } }
  )pb");
  const CaseRun b = RunCase(c, tcp_like, options);
  ASSERT_EQ(b.result.verdict, Verdict::kPass) << b.result.reason;
  EXPECT_FALSE(Contains(Notes(Step(b, 1)), "fence")) << Notes(Step(b, 1));
  EXPECT_GE(Step(b, 1).duration, milliseconds(200));
}

// A Terminate before the fence's answer fails the step, as it did the wait.
TEST(CaseDriverFence, TerminateBeforeTheFenceAnswerFails) {
  WallTimeConnector connector;
  const CaseRun run = RunCase(Case(R"pb(
                                needs { region { role: RW min_length: 4096 } }
                                step { send { message { type: RDMA_WRITE remote { stag: 0xdeadbeef } payload { text: "x" } } } }
                                step { expect { timeout_ms: 10000 nothing {} } }
                              )pb"),
                              connector, CaseDriverOptions{});
  EXPECT_EQ(run.result.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(run.result.reason, "Terminate")) << run.result.reason;
  EXPECT_TRUE(Contains(Notes(Step(run, 1)), "fence: a zero-length RDMA Read Request")) << Notes(Step(run, 1));
}

// A frame the case did not expect (here the Read Response to its own Read
// Request) before the fence's answer fails the step.
TEST(CaseDriverFence, AnotherFrameBeforeTheFenceAnswerFails) {
  WallTimeConnector connector;
  const CaseRun run = RunCase(Case(R"pb(
                                needs { region { role: RW min_length: 4096 } }
                                step { send { message { type: RDMA_READ_REQUEST remote { region: RW } length: 8 } } }
                                step { expect { timeout_ms: 10000 nothing {} } }
                              )pb"),
                              connector, CaseDriverOptions{});
  EXPECT_EQ(run.result.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(run.result.reason, "RDMA Read Response")) << run.result.reason;
}

// R5040-5.5-R10: an Event Record the earlier messages caused comes before
// the fence Send's own, so it still fails a step that allows none; with
// allow_events only the Read fence goes out and the record stays queued for
// the case.
TEST(CaseDriverFence, EventRecordsBeforeTheFenceSendStillCount) {
  WallTimeConnector connector;
  const char* send = R"pb(
    needs { receive_buffers: 2 receive_buffer_size: 64 }
    step { send { label: "a" message { type: SEND payload { text: "hello" } } } }
  )pb";
  const CaseRun strict =
      RunCase(Case(std::string(send) + "step { expect { timeout_ms: 10000 nothing {} } }"), connector, {});
  EXPECT_EQ(strict.result.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(strict.result.reason, "Send delivered")) << strict.result.reason;
  const CaseRun allowed =
      RunCase(Case(std::string(send) + "step { expect { timeout_ms: 10000 nothing { allow_events: true } } }"
                                       "step { expect { event { data_of: \"a\" sequence: 1 } } }"),
              connector, {});
  ASSERT_EQ(allowed.result.verdict, Verdict::kPass) << allowed.result.reason;
  const std::string notes = Notes(Step(allowed, 1));
  EXPECT_TRUE(Contains(notes, "fence: a zero-length RDMA Read Request")) << notes;
  EXPECT_FALSE(Contains(notes, "fence: a 4-octet Send")) << notes;
}

// A fence answered other than R5040-5.2.1-15 and R5040-4.4-03 require
// (here every Read Response's TO is 4 too high) proves no order: the step
// waits its window and passes as it did without the fence, the wrong answer
// is no case frame, and the connection's later waits are not fenced.
TEST(CaseDriverFence, AWrongFenceAnswerEndsNothing) {
  targets::ReferenceTargetConfig config;
  config.faults.Add(model::Fault::kWrongReadResponseTo);
  WallTimeConnector connector(config);
  const CaseRun run = RunCase(Case(R"pb(
                                needs { region { role: RW min_length: 4096 } }
                                step { send { message { type: RDMA_WRITE remote { region: RW } payload { text: "abc" } } } }
                                step { expect { timeout_ms: 200 nothing {} } }
                                step { expect { timeout_ms: 200 nothing {} } }
                              )pb"),
                              connector, CaseDriverOptions{});
  ASSERT_EQ(run.result.verdict, Verdict::kPass) << run.result.reason;
  const std::string first = Notes(Step(run, 1));
  EXPECT_TRUE(Contains(first, "the fence was answered wrongly: Read Response TO 4")) << first;
  EXPECT_FALSE(Contains(first, "the fence answered:")) << first;
  EXPECT_GE(Step(run, 1).duration, milliseconds(200));
  EXPECT_TRUE(Contains(Notes(Step(run, 2)), "not fenced (the target answered an earlier fence wrongly)"))
      << Notes(Step(run, 2));
}

// Waits no fence may end: before the suite's first FPDU (R5044-7.1.2-R04, a
// true silence check), after raw octets that may leave the target inside an
// FPDU, and where a later step checks Event Records (a fence Send would
// take the MSN and the sequence number the case expects).
std::string UnfenceableWaits(int window_ms) {
  const std::string nothing = "step { expect { timeout_ms: " + std::to_string(window_ms) + " nothing {} } }";
  return R"pb(
    needs { receive_buffers: 2 receive_buffer_size: 64 }
  )pb" + nothing +
         R"pb(
           step { send { label: "a" message { type: SEND payload { text: "abc" } } } }
           step { expect { timeout_ms: 200 nothing { allow_events: true } } }
           step { expect { event { data_of: "a" sequence: 1 } } }
         )pb" +
         nothing + R"pb(
           step { send { label: "b" message { type: SEND payload { text: "def" } } } }
           step { expect { event { data_of: "b" sequence: 2 } } }
           step { send { raw { layer: TCP hex: "00" } } }
         )pb" +
         nothing;
}

TEST(CaseDriverFence, WaitsTheFenceCannotEndTakeTheirWindowWithFixedQuiet) {
  WallTimeConnector connector;
  CaseDriverOptions options;
  options.adaptive_quiet = false;
  const CaseRun run = RunCase(Case(UnfenceableWaits(200)), connector, options);
  ASSERT_EQ(run.result.verdict, Verdict::kPass) << run.result.reason;
  EXPECT_TRUE(Contains(Notes(Step(run, 0)), "not fenced (the suite has sent no FPDU yet)")) << Notes(Step(run, 0));
  EXPECT_TRUE(Contains(Notes(Step(run, 2)), "the fence answered")) << Notes(Step(run, 2));
  EXPECT_TRUE(Contains(Notes(Step(run, 4)), "not fenced (a later step sends on QN 0")) << Notes(Step(run, 4));
  EXPECT_TRUE(Contains(Notes(Step(run, 8)), "not fenced (the case sent raw TCP octets")) << Notes(Step(run, 8));
  for (int k : {0, 4, 8}) {
    EXPECT_GE(Step(run, k).duration, milliseconds(200)) << k;
    EXPECT_FALSE(Contains(Notes(Step(run, k)), "quiet:")) << Notes(Step(run, k));
  }
}

// By default the same waits are cut to the target's reaction time: the
// reference reacts within microseconds, so a 10 s window becomes the 20 ms
// floor (or 8 times a slower reaction on a loaded machine), said in a note.
// The run's clock saw the reactions: the MPA Reply, the answers.
TEST(CaseDriverFence, WaitsTheFenceCannotEndTakeTheQuiet) {
  WallTimeConnector connector;
  CaseDriverOptions options;
  options.reactions = std::make_shared<ReactionClock>();
  const CaseRun run = RunCase(Case(UnfenceableWaits(10000)), connector, options);
  ASSERT_EQ(run.result.verdict, Verdict::kPass) << run.result.reason;
  EXPECT_GT(options.reactions->Slowest(), ReactionClock::Duration::zero());
  for (int k : {0, 4, 8}) {
    const std::string notes = Notes(Step(run, k));
    EXPECT_TRUE(Contains(notes, "not fenced (")) << notes;
    EXPECT_TRUE(Contains(notes, " ms of the step's 10000 ms, 8 times the target's slowest reaction in this run"))
        << notes;
    EXPECT_LT(Step(run, k).duration, milliseconds(10000)) << k;
  }
}

// The quiet still sees what the target does in reaction: an Event Record of
// a Send fails a step that allows none and that no fence may end (a later
// step checks Event Records), as the whole window did.
TEST(CaseDriverFence, TheQuietStillSeesAReaction) {
  WallTimeConnector connector;
  const CaseRun run = RunCase(Case(R"pb(
                                needs { receive_buffers: 2 receive_buffer_size: 64 }
                                step { send { label: "a" message { type: SEND payload { text: "abc" } } } }
                                step { expect { timeout_ms: 10000 nothing {} } }
                                step { expect { event { data_of: "a" sequence: 1 } } }
                              )pb"),
                              connector, CaseDriverOptions{});
  EXPECT_EQ(run.result.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(run.result.reason, "Send delivered")) << run.result.reason;
  EXPECT_TRUE(Contains(Notes(Step(run, 1)), "not fenced (a later step sends on QN 0")) << Notes(Step(run, 1));
}

}  // namespace
}  // namespace rdmapct::conformance
