// fuzz/session_worker: sessions of the in-process reference in a child
// process, cut at their caps (issue 17: skip-bounds-check serving a 4 GiB
// Read took 30 s and 7 GB in one session).
#include "fuzz/session_worker.h"

#include <gtest/gtest.h>

#include "fuzz/session_seeds.h"

namespace rdmapct::fuzz {
namespace {

using model::Fault;

// A Read of 4 GiB - 1 from the target's read region: the fault-free
// target refuses it (base or bounds), skip-bounds-check serves it.
proto::FuzzSession HugeRead() {
  proto::FuzzSession s;
  s.mutable_connection()->set_profile(proto::RFC5040);
  proto::SessionMessage* m = s.add_action()->mutable_message();
  m->set_type(proto::READ_REQUEST);
  m->set_length(0xffffffffu);
  return s;
}

std::string Describe(const OracleResult& r) {
  std::string s;
  for (const Finding& f : r.findings) s += FormatFinding(f) + "\n";
  return s;
}

TEST(SessionWorker, AgreesWithTheOraclesOnSeeds) {
  SessionWorker w({Fault::kWrongTerminateCode}, {});
  for (const NamedSession& n : SeedSessions()) {
    const OracleResult direct = RunSessionOracles(n.session, {Fault::kWrongTerminateCode});
    const WorkerResult r = w.Run(n.session);
    EXPECT_FALSE(r.cut);
    EXPECT_EQ(Describe(r.oracles), Describe(direct)) << n.name;
    EXPECT_EQ(r.oracles.steps, direct.steps) << n.name;
  }
}

TEST(SessionWorker, MemoryCapCutsASessionAsAResourceFinding) {
  SessionWorker w({Fault::kSkipBoundsCheck}, {.time = std::chrono::seconds(120), .memory_mb = 256});
  const WorkerResult r = w.Run(HugeRead());
  ASSERT_EQ(r.oracles.findings.size(), 1u) << Describe(r.oracles);
  EXPECT_EQ(r.oracles.findings[0].oracle, "resource");
  EXPECT_NE(r.oracles.findings[0].description.find("256 MB"), std::string::npos) << Describe(r.oracles);
  // The next session runs in a new child, unharmed.
  const WorkerResult next = w.Run(SeedSessions().front().session);
  EXPECT_TRUE(next.oracles.findings.empty()) << Describe(next.oracles);
  // Without the fault the Read is refused at once.
  SessionWorker clean({}, {.time = std::chrono::seconds(120), .memory_mb = 256});
  EXPECT_TRUE(clean.Run(HugeRead()).oracles.findings.empty());
}

TEST(SessionWorker, TimeCapCutsASessionAsAResourceFinding) {
  SessionWorker w({Fault::kSkipBoundsCheck}, {.time = std::chrono::milliseconds(50), .memory_mb = 100'000});
  const WorkerResult r = w.Run(HugeRead());
  ASSERT_EQ(r.oracles.findings.size(), 1u) << Describe(r.oracles);
  EXPECT_EQ(r.oracles.findings[0].oracle, "resource");
  EXPECT_NE(r.oracles.findings[0].description.find("ran over 50 ms"), std::string::npos) << Describe(r.oracles);
}

TEST(SessionWorker, RunDeadlineAndStopCutWithoutAFinding) {
  SessionWorker w({Fault::kSkipBoundsCheck}, {.time = std::chrono::seconds(120), .memory_mb = 100'000});
  const WorkerResult r = w.Run(HugeRead(), std::chrono::steady_clock::now() + std::chrono::milliseconds(30));
  EXPECT_TRUE(r.cut);
  EXPECT_TRUE(r.oracles.findings.empty()) << Describe(r.oracles);
  std::atomic<int> stop{1};
  const WorkerResult s = w.Run(HugeRead(), std::nullopt, &stop);
  EXPECT_TRUE(s.cut);
}

}  // namespace
}  // namespace rdmapct::fuzz
