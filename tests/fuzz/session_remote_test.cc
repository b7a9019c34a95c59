// The remote session fuzzer (fuzz/session_remote.h) against the reference
// target served over real TCP on 127.0.0.1 (targets/tcp_server.h): no
// finding on any seed session when the target is fault-free, and the
// bounded search finds faults through the black-box oracles only.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "fuzz/session_remote.h"
#include "fuzz/session_search.h"
#include "fuzz/session_seeds.h"
#include "targets/tcp.h"
#include "targets/tcp_server.h"
#include "tests/fuzz/fault_test_name.h"
#include "tests/targets/served_test_util.h"

namespace rdmapct::fuzz {
namespace {

// The commit-profile reference target with `faults`, served over TCP.
class Served : public targets::testing::Served {
 public:
  explicit Served(const model::FaultSet& faults) : targets::testing::Served(Config(faults)) {}

 private:
  static targets::ReferenceTargetConfig Config(const model::FaultSet& faults) {
    targets::ReferenceTargetConfig config;
    config.profile = wire::Profile::kCommit;
    config.faults = faults;
    return config;
  }
};

RemoteOptions Quick() {
  RemoteOptions o;
  o.settle = std::chrono::milliseconds(5);
  o.answer_timeout = std::chrono::milliseconds(500);
  return o;
}

// The served target runs one profile; the sessions keep to it.
proto::FuzzSession AsCommit(proto::FuzzSession s) {
  s.mutable_connection()->set_profile(proto::COMMIT);
  s.mutable_connection()->set_target_crc_optional(false);
  s.mutable_connection()->set_target_markers(false);
  return s;
}

TEST(SessionRemote, FaultFreeTargetOverTcpGivesNoFindingOnAnySeed) {
  Served served({});
  auto connector = served.Connector();
  ASSERT_NE(connector, nullptr);
  int runs = 0;
  for (const NamedSession& n : SeedSessions()) {
    if (n.session.connection().profile() != proto::COMMIT) continue;
    const proto::FuzzSession s = AsCommit(n.session);
    const RemoteResult r = RunSessionRemote(s, *connector, Quick());
    ++runs;
    for (const Finding& f : r.oracles.findings) ADD_FAILURE() << n.name << ": " << FormatFinding(f);
    EXPECT_FALSE(r.reference_reaction.empty() && !r.target_reaction.empty()) << n.name;
  }
  EXPECT_GT(runs, 10);
}

// FencedSession: a zero-length Read Request after every action that ends a
// TCP write, in the same write (the action before it is held), numbered
// from 0; actions held for the next one get none.
TEST(SessionRemote, FencedSessionFencesEveryWrite) {
  proto::FuzzSession s;
  s.add_action()->mutable_message()->set_type(proto::RDMA_WRITE);
  proto::SessionAction* held = s.add_action();
  held->mutable_message()->set_type(proto::SEND);
  held->mutable_delivery()->set_hold(true);
  s.add_action()->mutable_message()->set_type(proto::READ_REQUEST);
  const proto::FuzzSession f = FencedSession(s);
  ASSERT_EQ(f.action_size(), 5);
  const int fences[] = {1, 4};
  for (int k = 0; k < 2; ++k) {
    const proto::SessionAction& a = f.action(fences[k]);
    EXPECT_TRUE(f.action(fences[k] - 1).delivery().hold());
    EXPECT_EQ(a.message().type(), proto::READ_REQUEST);
    EXPECT_EQ(a.message().overrides().read_message_size(), 0u);
    EXPECT_EQ(a.message().overrides().sink_stag(), kFenceSinkStag);
    EXPECT_EQ(a.message().overrides().sink_tagged_offset(), static_cast<uint64_t>(k));
  }
  EXPECT_EQ(f.action(2).message().type(), proto::SEND);
  EXPECT_EQ(f.action(3).message().type(), proto::READ_REQUEST);
  EXPECT_FALSE(f.action(3).message().has_overrides());
}

// Against a conforming target every write of a seed session is ended by
// its fence (or the close), none by a quiet time: a settle of an hour would
// otherwise show as settled steps.
TEST(SessionRemote, TheFenceNotQuietEndsEveryStepOfTheSeeds) {
  Served served({});
  auto connector = served.Connector();
  ASSERT_NE(connector, nullptr);
  RemoteOptions o = Quick();
  o.settle = std::chrono::hours(1);
  o.answer_timeout = std::chrono::milliseconds(2000);
  for (const NamedSession& n : SeedSessions()) {
    if (n.session.connection().profile() != proto::COMMIT) continue;
    const RemoteResult r = RunSessionRemote(AsCommit(n.session), *connector, o);
    for (const Finding& f : r.oracles.findings) ADD_FAILURE() << n.name << ": " << FormatFinding(f);
    EXPECT_EQ(r.settled_steps, 0) << n.name;
    EXPECT_GT(r.fenced_steps, 0) << n.name;
  }
}

// A commit-profile session of the one action `a`.
proto::FuzzSession CommitSessionOf(const proto::SessionAction& a) {
  proto::FuzzSession s;
  s.mutable_connection()->set_profile(proto::COMMIT);
  *s.add_action() = a;
  return s;
}

std::string FindingsText(const RemoteResult& r) {
  std::string text;
  for (const Finding& f : r.oracles.findings) text += f.oracle + ": " + f.description + "\n";
  return text;
}

// docs/reports/siw E2: the fault-free twin ran at the reference's IRD 8,
// so a conforming target that holds 16 Read Requests (siw) diverged on any
// session with 9 to 16 outstanding. The twin now takes the target's IRD.
TEST(SessionRemote, TheTwinHoldsAsManyReadsAsTheTargetAdvertises) {
  targets::ReferenceTargetConfig config;
  config.profile = wire::Profile::kCommit;
  config.ird = 16;
  targets::testing::Served served(config);
  auto connector = served.Connector();
  ASSERT_NE(connector, nullptr);
  proto::SessionAction reads;
  reads.mutable_message()->set_type(proto::READ_REQUEST);
  reads.set_repeat(11);  // 12 Read Requests in one write, all outstanding
  const proto::FuzzSession s = CommitSessionOf(reads);

  const RemoteResult at_8 = RunSessionRemote(s, *connector, Quick());
  ASSERT_FALSE(at_8.oracles.findings.empty()) << "the twin at IRD 8 should have terminated the 9th Read";
  EXPECT_EQ(at_8.oracles.findings.front().oracle, "differential");

  RemoteOptions o = Quick();
  o.target.ird = 16;
  const RemoteResult at_16 = RunSessionRemote(s, *connector, o);
  EXPECT_TRUE(at_16.oracles.findings.empty()) << FindingsText(at_16);
  EXPECT_TRUE(at_16.replied);
}

// A session's region index names the target's n-th advertised region: a
// target that lists its regions in another order (siw's agent) diverged
// from a twin with the reference's own layout. The twin takes the
// target's regions from its Advertisement (ShapeOf).
TEST(SessionRemote, TheTwinTakesTheTargetsRegions) {
  targets::ReferenceTargetConfig config;
  config.profile = wire::Profile::kCommit;
  targets::TargetLayout layout = targets::DefaultTargetLayout(wire::Profile::kCommit);
  ASSERT_TRUE(layout.regions[0].Has(wire::kAccessRemoteWrite));
  ASSERT_FALSE(layout.regions[1].Has(wire::kAccessRemoteWrite));
  std::swap(layout.regions[0], layout.regions[1]);  // read-only first
  config.layout = layout;
  targets::testing::Served served(config);
  auto connector = served.Connector();
  ASSERT_NE(connector, nullptr);
  proto::SessionAction write;
  write.mutable_message()->set_type(proto::RDMA_WRITE);
  write.mutable_message()->set_region_index(1);  // the first advertised region
  write.mutable_message()->set_payload_size(16);
  const proto::FuzzSession s = CommitSessionOf(write);

  const RemoteResult own = RunSessionRemote(s, *connector, Quick());
  ASSERT_FALSE(own.oracles.findings.empty()) << "a twin with its own regions writes where the target refuses";
  EXPECT_EQ(own.oracles.findings.front().oracle, "differential");

  wire::Advertisement adv;
  adv.ird = config.ird;
  adv.regions = layout.regions;
  RemoteOptions o = Quick();
  o.target = ShapeOf(adv);
  ASSERT_TRUE(o.target.layout);
  EXPECT_EQ(o.target.layout->regions, layout.regions);
  const RemoteResult shaped = RunSessionRemote(s, *connector, o);
  EXPECT_TRUE(shaped.oracles.findings.empty()) << FindingsText(shaped);
}

TEST(SessionRemote, RefusedConnectionIsNoAnswer) {
  std::unique_ptr<targets::TcpConnector> connector;
  {
    Served served({});
    connector = served.Connector();
  }  // stopped: nothing listens on that port any more
  ASSERT_NE(connector, nullptr);
  const RemoteResult r = RunSessionRemote(AsCommit(SeedSessions().front().session), *connector, Quick());
  EXPECT_TRUE(r.connect_failed);
  ASSERT_EQ(r.oracles.findings.size(), 1u);
  EXPECT_EQ(r.oracles.findings[0].oracle, "no-answer");
}

// A target with siw's accept race (late-fpdu-hand-off: octets in the first
// 100 ms after its Reply stay unread): a Read sent at once gets no answer, a
// finding about the hand-off; with --pause-after-reply past the window the
// same session is answered and nothing is found.
TEST(SessionRemote, PauseAfterReplyStepsAroundALateHandOff) {
  Served served({model::Fault::kLateFpduHandOff});
  auto connector = served.Connector();
  ASSERT_NE(connector, nullptr);
  proto::FuzzSession read;
  for (const NamedSession& n : SeedSessions()) {
    if (n.name == "commit_read_request") read = AsCommit(n.session);
  }
  ASSERT_EQ(read.action_size(), 1);
  RemoteOptions at_once = Quick();
  const RemoteResult stranded = RunSessionRemote(read, *connector, at_once);
  EXPECT_FALSE(stranded.oracles.findings.empty());
  RemoteOptions paused = Quick();
  paused.pause_after_reply = std::chrono::milliseconds(300);
  const RemoteResult answered = RunSessionRemote(read, *connector, paused);
  for (const Finding& f : answered.oracles.findings) ADD_FAILURE() << FormatFinding(f);
}

class RemoteFault : public ::testing::TestWithParam<const char*> {};

TEST_P(RemoteFault, SearchOverTcpFindsTheFault) {
  const auto fault = model::FindFault(GetParam());
  ASSERT_TRUE(fault.has_value()) << GetParam();
  Served served({*fault});
  auto connector = served.Connector();
  ASSERT_NE(connector, nullptr);
  SearchOptions search;
  search.seed = 1;
  search.budget = 400;
  search.only_profile = wire::Profile::kCommit;
  const SearchResult r = SearchSessions(
      [&](const proto::FuzzSession& s) { return RunSessionRemote(AsCommit(s), *connector, Quick()).oracles; }, search);
  ASSERT_FALSE(r.findings.empty()) << GetParam() << " not found in " << search.budget << " sessions";
  std::printf("%s found over TCP after %d sessions: %s\n", GetParam(), r.sessions,
              FormatFinding(r.findings[0]).c_str());
}

INSTANTIATE_TEST_SUITE_P(Faults, RemoteFault, ::testing::Values("wrong-terminate-code", "skip-bounds-check"),
                         testing::FaultTestName);

}  // namespace
}  // namespace rdmapct::fuzz
