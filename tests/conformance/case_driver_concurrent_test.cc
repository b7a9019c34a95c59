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

CaseRun RunInline(const std::string& body, targets::ReferenceTargetConfig config = {}) {
  CaseLoad load = ParseCaseFile(
      "case { id: \"rfc5040/8.1.1/c\" title: \"c\" requirement: \"R5040-8.1.1-02\" "
      "level: MUST " +
          body + " }",
      "c.textproto", "rfc5040", "8.1.1");
  EXPECT_TRUE(load.ok()) << (load.errors.empty() ? "" : load.errors.front());
  targets::InProcessConnector connector(std::make_shared<targets::ReferenceTarget>(config));
  return RunCase(load.cases.at(0), connector, CaseDriverOptions{});
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
