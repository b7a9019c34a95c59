// Session features that the example case files do not exercise yet, each
// as a small case run against the in-process reference target: RFC 6581
// setup with every RTR type, Markers in both directions, events with their
// delivered data, Read Responses of a multi-segment read, frame matchers,
// any_of (decisions D-G10), Keep Memory across connections, TCP write splits.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "conformance/case_driver.h"
#include "conformance/case_loader.h"
#include "targets/in_process.h"
#include "targets/reference_target.h"

namespace rdmapct::conformance {
namespace {

std::string Explain(const CaseResult& r) {
  std::string s = std::string(VerdictName(r.verdict)) + ": " + r.reason + "\n";
  for (const StepResult& st : r.steps) {
    s += "  step " + std::to_string(st.index) + " " + st.action + " " + std::string(VerdictName(st.verdict)) + " " +
         st.reason + "\n    expected: " + st.expected + "\n    actual: " + st.actual + "\n";
  }
  for (const FrameRecord& f : r.frames) s += "  " + std::string(DirectionName(f.direction)) + " " + f.summary + "\n";
  return s;
}

CaseRun RunInline(const std::string& body, targets::ReferenceTargetConfig config = {}) {
  CaseLoad load = ParseCaseFile(
      "case { id: \"rfc5040/5.1/f\" title: \"f\" requirement: \"R5040-5.1-01\" level: MUST " + body + " }",
      "f.textproto", "rfc5040", "5.1");
  EXPECT_TRUE(load.ok()) << (load.errors.empty() ? "" : load.errors.front());
  targets::InProcessConnector connector(std::make_shared<targets::ReferenceTarget>(config));
  return RunCase(load.cases.at(0), connector, CaseDriverOptions{});
}

TEST(CaseDriverFeaturesTest, Rfc6581SendRtrMarkersEventsAndReads) {
  const CaseRun run = RunInline(R"pb(
    needs { region { role: RW min_length: 8192 } receive_buffers: 2 }
    step { connect { request_markers: true rfc6581 { peer_to_peer: true rtr: RTR_SEND } } }
    step { send { label: "s" message { type: SEND payload { fill { length: 700 byte: 3 } } } } }
    step { expect { event { type: SEND_DELIVERED length: 700 data_of: "s" sequence: 1 } } }
    step { send { message { type: RDMA_WRITE remote { region: RW offset: 16 }
                            payload { fill { length: 3000 kind: COMPLEMENT_OF_PATTERN } } } } }
    step { send { message { type: RDMA_READ_REQUEST remote { region: RW } length: 4000 } } }
    step { expect { read_responses { first_request: 1 last_request: 1 } } }
    step { expect { timeout_ms: 100 nothing {} } }
  )pb");
  EXPECT_EQ(run.result.verdict, Verdict::kPass) << Explain(run.result);
  // Markers in what the target sent: a 4000-octet Read Response crosses Marker positions.
  bool enhanced = false;
  for (const FrameRecord& f : run.result.frames) enhanced |= f.summary.find("IRD 8 ORD 8 A=1") != std::string::npos;
  EXPECT_TRUE(enhanced) << Explain(run.result);
  if (std::getenv("RDMAPCT_EXPLAIN")) std::printf("%s", Explain(run.result).c_str());
}

TEST(CaseDriverFeaturesTest, ReadAndWriteRtrAreAbsorbed) {
  for (const char* rtr : {"RTR_READ", "RTR_WRITE"}) {
    const CaseRun run = RunInline(std::string(R"pb(
      needs { region { role: RW } }
      step { connect { rfc6581 { peer_to_peer: true rtr: )pb") +
                                  rtr + R"pb( } } }
      step { expect { timeout_ms: 100 nothing {} } }
      step { send { message { type: RDMA_READ_REQUEST remote { region: RW } length: 10 } } }
      step { expect { frame { type: RDMA_READ_RESPONSE fields { stag: 0x5157e000 l: 1 payload_length: 10 } } } }
    )pb");
    EXPECT_EQ(run.result.verdict, Verdict::kPass) << rtr << "\n" << Explain(run.result);
  }
}

// decisions D-G10: a bad CRC earns a Terminate 0x2/0x0/0x02 or a silent drop.
TEST(CaseDriverFeaturesTest, AnyOfTakesTheFirstMatchingAlternative) {
  const CaseRun run = RunInline(R"pb(
    step { send { message { type: SEND payload { text: "x" } } framing { corrupt_crc: true } } }
    step { expect { any_of {
      alternative { terminate { accept { layer: 2 etype: 0 code: 2 } } }
      alternative { timeout_ms: 100 nothing {} } } } }
  )pb");
  EXPECT_EQ(run.result.verdict, Verdict::kPass) << Explain(run.result);
  ASSERT_EQ(run.result.steps.size(), 3u);  // the implicit connect, send, expect
  ASSERT_FALSE(run.result.steps[2].notes.empty());
  EXPECT_NE(run.result.steps[2].notes.back().find("alternative 1 of 2 matched"), std::string::npos)
      << run.result.steps[2].notes.back();
  const CaseRun none = RunInline(R"pb(
    step { send { message { type: SEND payload { text: "x" } } } }
    step { expect { any_of {
      alternative { timeout_ms: 100 terminate { accept { layer: 2 etype: 0 code: 2 } } }
      alternative { timeout_ms: 100 closed {} } } } }
  )pb");
  EXPECT_EQ(none.result.verdict, Verdict::kFail) << Explain(none.result);
  EXPECT_NE(none.result.reason.find("no alternative matched: 1) no Terminate"), std::string::npos)
      << none.result.reason;
}

TEST(CaseDriverFeaturesTest, KeepMemoryCarriesWritesToTheNextConnection) {
  const CaseRun run = RunInline(R"pb(
    needs { region { role: WO min_length: 1024 } region { role: RW } keep_memory: true }
    step { send { label: "w" message { type: RDMA_WRITE remote { region: WO offset: 100 }
                                       payload { fill { length: 64 kind: COMPLEMENT_OF_PATTERN } } } } }
    step { close { kind: FIN } }
    step { expect { closed { accept: FIN } } }
    step { connect { keep_memory: true } }
    step { expect { memory { at { region: WO offset: 100 } length: 64 data_of: "w" } } }
    step { expect { memory { at { region: WO offset: 164 } length: 64 unchanged: true } } }
    step { connect {} }
    step { expect { memory { at { region: WO offset: 100 } length: 64 unchanged: true } } }
  )pb");
  EXPECT_EQ(run.result.verdict, Verdict::kPass) << Explain(run.result);
  uint32_t connections = 0;
  for (const FrameRecord& f : run.result.frames) connections = std::max(connections, f.connection + 1);
  EXPECT_EQ(connections, 3u);
}

TEST(CaseDriverFeaturesTest, TcpWriteSplitsAndHeldSends) {
  const CaseRun run = RunInline(R"pb(
    needs { region { role: RW } }
    step { send { label: "a" message { type: SEND payload { text: "hello" } } tcp { write_size: 1 write_size: 3 hold: true } } }
    step { send { label: "b" message { type: SEND payload { text: "world" } } tcp { write_size: 7 write_size: 2 } } }
    step { expect { event { data_of: "a" } } }
    step { expect { event { data_of: "b" sequence: 2 } } }
  )pb");
  EXPECT_EQ(run.result.verdict, Verdict::kPass) << Explain(run.result);
}

// A wrong expectation in a case is reported against the target's actual
// behaviour, naming the field: the matcher is the case's, not the model's.
TEST(CaseDriverFeaturesTest, MismatchesNameTheField) {
  const CaseRun run = RunInline(R"pb(
    needs { region { role: RW } }
    step { send { message { type: RDMA_READ_REQUEST remote { region: RW } length: 10 } } }
    step { expect { frame { type: RDMA_READ_RESPONSE fields { tagged_offset: 1 } } } }
  )pb");
  EXPECT_EQ(run.result.verdict, Verdict::kFail);
  EXPECT_NE(run.result.reason.find("tagged_offset: expected 1, got"), std::string::npos) << run.result.reason;
}

// Issue 15: a tolerated accept-set member (the RFC names the preferred
// code) is a warning that says so, never a silent pass; an accepted
// alternative passes with a note.
TEST(CaseDriverFeaturesTest, ToleratedTerminateCodeWarnsAcceptedAlternativePasses) {
  const std::string body = R"pb(
    needs { region { role: DEREGISTERED } }
    step { send { label: "w" message { type: RDMA_WRITE remote { region: DEREGISTERED } payload { text: "x" } } } }
    step { expect { terminate { accept { layer: 1 etype: 1 code: 2 preferred: true }
                                accept { layer: 1 etype: 1 code: 0 %s note: "F.1" } offending: "w" } } }
  )pb";
  char text[1024];
  std::snprintf(text, sizeof text, body.c_str(), "tolerated: true");
  const CaseRun tolerated = RunInline(text);
  EXPECT_EQ(tolerated.result.verdict, Verdict::kWarn) << Explain(tolerated.result);
  EXPECT_NE(tolerated.result.reason.find("is tolerated, but the RFC names 1/1/0x02"), std::string::npos)
      << tolerated.result.reason;
  ASSERT_FALSE(tolerated.result.choices.empty());
  EXPECT_TRUE(tolerated.result.choices.front().tolerated);
  std::snprintf(text, sizeof text, body.c_str(), "");
  const CaseRun accepted = RunInline(text);
  EXPECT_EQ(accepted.result.verdict, Verdict::kPass) << Explain(accepted.result);
}

// Issue 15: any_of may offer several MPA Replies (the Rev 0 case).
TEST(CaseDriverFeaturesTest, AnyOfMpaRepliesAndACloseInsteadOfAReply) {
  const CaseRun run = RunInline(R"pb(
    step { connect { revision: 0 crc: true request_markers: true } }
    step { expect { any_of { alternative { mpa_reply { accepted: true revision: 0 markers: true crc: true } }
                             alternative { mpa_reply { revision: 1 or_closed: true } } } } }
  )pb");
  EXPECT_EQ(run.result.verdict, Verdict::kPass) << Explain(run.result);
  targets::ReferenceTargetConfig siw;
  siw.faults.Add(model::Fault::kRev0ReplyWithoutMarkers);
  const CaseRun plain = RunInline(R"pb(
    step { connect { revision: 0 crc: true request_markers: true } }
    step { expect { any_of { alternative { mpa_reply { accepted: true revision: 0 markers: true crc: true } }
                             alternative { mpa_reply { revision: 1 or_closed: true } } } } }
  )pb",
                                  siw);
  EXPECT_EQ(plain.result.verdict, Verdict::kFail) << Explain(plain.result);
}

}  // namespace
}  // namespace rdmapct::conformance
