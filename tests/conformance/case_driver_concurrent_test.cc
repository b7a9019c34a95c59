// Cases with two connections open at once (Step.connection, convention
// 1.2 §11), run against the in-process reference target.
#include <gtest/gtest.h>

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
         st.reason + "\n";
  }
  return s;
}

CaseRun RunInline(const std::string& body, targets::ReferenceTargetConfig config = {},
                  wire::Profile profile = wire::Profile::kRfc5040) {
  CaseLoad load = ParseCaseFile(
      "case { id: \"rfc5040/8.1.1/c\" title: \"c\" requirement: \"R5040-8.1.1-02\" "
      "level: MUST " +
          body + " }",
      "c.textproto", "rfc5040", "8.1.1");
  EXPECT_TRUE(load.ok()) << (load.errors.empty() ? "" : load.errors.front());
  targets::InProcessConnector connector(std::make_shared<targets::ReferenceTarget>(config));
  CaseDriverOptions options;
  options.profile = profile;
  return RunCase(load.cases.at(0), connector, options);
}

// Each connection keeps its own MSNs, Event sequence and region map: both
// first Sends are MSN 1 and their events sequence 1; each side's own Write
// reads back through that side.
TEST(CaseDriverConcurrentTest, TwoConnectionsKeepTheirOwnState) {
  const CaseRun run = RunInline(R"pb(
    needs { region { role: RW } concurrent_connections: true }
    step { connect {} }
    step { connection: 1 connect {} }
    step { send { label: "a" message { type: SEND payload { text: "on A" } } } }
    step { connection: 1 send { label: "b" message { type: SEND payload { text: "on B" } } } }
    step { connection: 1 expect { event { type: SEND_DELIVERED data_of: "b" sequence: 1 } } }
    step { expect { event { type: SEND_DELIVERED data_of: "a" sequence: 1 } } }
    step { connection: 1 send { label: "w" message { type: RDMA_WRITE remote { region: RW }
                                payload { fill { length: 32 kind: COMPLEMENT_OF_PATTERN } } } } }
    step { connection: 1 expect { memory { at { region: RW } length: 32 data_of: "w" } } }
    step { expect { memory { at { region: RW } length: 32 unchanged: true } } }
  )pb");
  EXPECT_EQ(run.result.verdict, Verdict::kPass) << Explain(run.result);
  EXPECT_EQ(run.result.steps.at(1).notes.back(), "on connection B");
}

TEST(CaseDriverConcurrentTest, TargetWithoutTheFlagIsSkippedNamingIt) {
  targets::ReferenceTargetConfig config;
  config.concurrent_connections = false;
  const CaseRun run = RunInline(R"pb(
    needs { concurrent_connections: true }
    step { connect {} }
    step { connection: 1 connect {} }
  )pb",
                                config);
  EXPECT_EQ(run.result.verdict, Verdict::kSkip) << Explain(run.result);
  EXPECT_NE(run.result.reason.find("concurrent connections (flag 0x0040)"), std::string::npos) << run.result.reason;
}

// Convention 1.3 §12: a case naming the shared region is skipped against a
// target without one, naming the capability.
TEST(CaseDriverConcurrentTest, TargetWithoutASharedRegionIsSkippedNamingIt) {
  targets::ReferenceTargetConfig config;
  config.shared_regions = false;
  const CaseRun run = RunInline(R"pb(
    needs { region { role: SHARED } concurrent_connections: true }
    step { connect {} }
  )pb",
                                config);
  EXPECT_EQ(run.result.verdict, Verdict::kSkip) << Explain(run.result);
  EXPECT_NE(run.result.reason.find("a shared region (convention 1.3 attribute 0x08)"), std::string::npos)
      << run.result.reason;
}

// REQ R7306-5.3-01: atomic_responses records what A and B got back, and
// serial_atomics finds the order; a wrong initial value leaves none.
TEST(CaseDriverConcurrentTest, SerialAtomicsOverTwoConnections) {
  for (const char* initial : {"0x100", "0x101"}) {
    const CaseRun run = RunInline(std::string(R"pb(
      profile: RFC7306
      needs { region { role: SHARED_ATOMIC } concurrent_connections: true }
      step { connect {} }
      step { connection: 1 connect {} }
      step { send { message { type: ATOMIC_REQUEST remote { region: SHARED_ATOMIC }
             set { atomic_opcode: 2 compare_mask: 0 add_or_swap_data: 0x100 request_identifier: 9 } } } }
      step { expect { frame { type: ATOMIC_RESPONSE } } }
      step { send { label: "a" message { type: ATOMIC_REQUEST remote { region: SHARED_ATOMIC }
             set { atomic_opcode: 0 add_or_swap_data: 1 add_or_swap_mask: 0 request_identifier: 1 } } } }
      step { connection: 1 send { label: "b" message { type: ATOMIC_REQUEST remote { region: SHARED_ATOMIC }
             set { atomic_opcode: 0 add_or_swap_data: 2 add_or_swap_mask: 0 request_identifier: 2 } } } }
      step { expect { atomic_responses { label: "a" } } }
      step { connection: 1 expect { atomic_responses { label: "b" } } }
      step { expect { serial_atomics { label: "a" label: "b" initial: )pb") +
                                      initial + R"pb( at { region: SHARED_ATOMIC } } } }
    )pb",
                                  {.profile = wire::Profile::kRfc7306}, wire::Profile::kRfc7306);
    const bool right = std::string(initial) == "0x100";
    EXPECT_EQ(run.result.verdict, right ? Verdict::kPass : Verdict::kFail) << initial << Explain(run.result);
  }
}

TEST(CaseDriverConcurrentTest, ThirdConnectionIsACaseError) {
  const CaseRun run = RunInline(R"pb(
    step { connect {} }
    step { connection: 2 connect {} }
  )pb");
  EXPECT_EQ(run.result.verdict, Verdict::kError) << Explain(run.result);
  EXPECT_NE(run.result.reason.find("connections 0 and 1"), std::string::npos) << run.result.reason;
}

}  // namespace
}  // namespace rdmapct::conformance
