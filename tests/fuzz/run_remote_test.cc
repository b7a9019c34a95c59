// fuzz::RunRemote and fuzz::RunCampaign in-process: the drivers of
// `rdmapct fuzz` and `rdmapct fuzz campaign` report through their progress
// and replay hooks and their result structs, never through printing or
// exit statuses (tests/cli/fuzz_cli_test.cc runs the same as a user).
#include "fuzz/run_remote.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "fuzz/campaign.h"
#include "targets/reference_target.h"
#include "targets/tcp_server.h"
#include "tests/targets/served_test_util.h"

namespace rdmapct::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path Scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "rdmapct_run_remote_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(RunRemote, FindsAFaultWritesItsFilesAndAsksForOneReplayPerFinding) {
  const fs::path dir = Scratch("fault");
  RemoteRunOptions o;
  o.faults = {"wrong-terminate-code"};
  o.runs = 3000;
  o.out_dir = (dir / "out").string();
  std::vector<std::string> lines;
  std::vector<ReplayRequest> replays;
  o.progress = [&](const std::string& l) { lines.push_back(l); };
  o.replay = [&](const ReplayRequest& r) -> std::optional<bool> {
    replays.push_back(r);
    return true;
  };
  const RemoteRunResult r = RunRemote(o);
  ASSERT_EQ(r.status, RemoteRunResult::Status::kDone) << r.error;
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(replays.size(), r.findings.size());
  for (const ReplayRequest& q : replays) {
    EXPECT_TRUE(fs::exists(q.script)) << q.script;
    EXPECT_TRUE(fs::exists(q.dir / "session.pb"));
    EXPECT_NE(q.target.find("fault=wrong-terminate-code"), std::string::npos) << q.target;
  }
  for (const auto& [sig, f] : r.findings) EXPECT_EQ(f.reproduced, std::optional<bool>(true)) << sig;
  EXPECT_TRUE(fs::exists(r.stats_file));
  EXPECT_FALSE(lines.empty());
  EXPECT_LE(r.sessions, 3000);
}

// Issue 17: with three unrelated faults on, every differential finding
// used to be one signature. One finding per fault now, and each finding's
// input fails the reference with its own fault alone and with no other.
TEST(RunRemote, ThreeUnrelatedFaultsGiveThreeDistinctFindings) {
  const std::vector<std::string> faults = {"ignore-ird", "execute-misaligned-atomic", "read-responses-out-of-order"};
  RemoteRunOptions o;
  o.faults = faults;
  o.runs = 6000;
  o.out_dir = (Scratch("three") / "out").string();
  const RemoteRunResult r = RunRemote(o);
  ASSERT_EQ(r.status, RemoteRunResult::Status::kDone) << r.error;
  std::string sigs;
  for (const auto& [sig, f] : r.findings) sigs += sig + "\n";
  ASSERT_EQ(r.distinct(), 3u) << sigs;
  std::set<std::string> culprits;
  for (const auto& [sig, f] : r.findings) {
    proto::FuzzSession s;
    std::ifstream in(fs::path(f.dir) / "session.pb", std::ios::binary);
    ASSERT_TRUE(s.ParseFromIstream(&in)) << f.dir;
    std::vector<std::string> failing;
    for (const std::string& fault : faults) {
      model::FaultSet one;
      ASSERT_FALSE(one.AddByNames(fault).has_value());
      const OracleResult alone = RunSessionOracles(s, one);
      if (!alone.findings.empty() && FindingSignature(alone.findings.front()) == sig) failing.push_back(fault);
    }
    ASSERT_EQ(failing.size(), 1u) << sig;
    culprits.insert(failing.front());
  }
  EXPECT_EQ(culprits.size(), 3u);
}

// A finding whose reproducer does not reproduce it is flaky: kept, marked,
// and not counted.
TEST(RunRemote, AFindingThatDoesNotReproduceIsFlakyAndNotCounted) {
  RemoteRunOptions o;
  o.faults = {"read-responses-out-of-order"};
  o.runs = 3000;
  o.out_dir = (Scratch("flaky") / "out").string();
  int replays = 0;
  o.replay = [&](const ReplayRequest&) -> std::optional<bool> {
    ++replays;
    return false;
  };
  const RemoteRunResult r = RunRemote(o);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.distinct(), 0u);
  EXPECT_EQ(r.flaky(), r.findings.size());
  for (const auto& [sig, f] : r.findings) {
    EXPECT_TRUE(f.flaky()) << sig;
    EXPECT_LE(f.replays, 4) << sig;
  }
  EXPECT_GT(replays, static_cast<int>(r.findings.size()));  // flaky findings are replayed again on later hits
}

// A served reference target (what `rdmapct serve` runs) of one profile.
class Served : public targets::testing::Served {
 public:
  explicit Served(wire::Profile profile) : targets::testing::Served(Config(profile)) {}

 private:
  static targets::ReferenceTargetConfig Config(wire::Profile profile) {
    targets::ReferenceTargetConfig config;
    config.profile = profile;
    return config;
  }
};

// Issue 17: without --profile, sessions of every profile went to an rfc5040
// target and each RFC 7306 or COMMIT message was a false finding. The
// profile now comes from the target's Advertisement.
TEST(RunRemote, WithoutAProfileAHealthyTargetGivesNoFinding) {
  Served served(wire::Profile::kRfc5040);
  RemoteRunOptions o;
  o.target = served.Uri();
  o.runs = 150;
  o.settle_ms = 5;
  o.out_dir = (Scratch("profile") / "out").string();
  std::vector<std::string> lines;
  o.progress = [&](const std::string& l) { lines.push_back(l); };
  const RemoteRunResult r = RunRemote(o);
  ASSERT_EQ(r.status, RemoteRunResult::Status::kDone) << r.error;
  std::string sigs;
  for (const auto& [sig, f] : r.findings) sigs += sig + "\n";
  EXPECT_TRUE(r.findings.empty()) << sigs;
  EXPECT_EQ(r.sessions, 150);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("profile rfc5040, from the target's Advertisement"), std::string::npos) << lines.front();
}

TEST(RunRemote, AProfileTheTargetDoesNotClaimIsAOneLineError) {
  Served served(wire::Profile::kRfc5040);
  RemoteRunOptions o;
  o.target = served.Uri();
  o.profile = wire::Profile::kRfc7306;
  o.out_dir = (Scratch("conflict") / "out").string();
  const RemoteRunResult r = RunRemote(o);
  EXPECT_EQ(r.status, RemoteRunResult::Status::kBadOptions);
  EXPECT_NE(r.error.find("--profile rfc7306 conflicts with"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("claims rfc5040"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos);
  EXPECT_EQ(r.sessions, 0);
}

// The status line: sessions, sessions/s, findings, distinct, RSS (every
// 10 s by default; every session here).
TEST(RunRemote, StatusLinesSayHowTheRunGoes) {
  RemoteRunOptions o;
  o.faults = {"wrong-terminate-code"};
  o.runs = 200;
  o.status_every = std::chrono::milliseconds(0);
  o.out_dir = (Scratch("status") / "out").string();
  std::vector<std::string> status;
  o.progress = [&](const std::string& l) {
    if (l.find(" sessions, ") != std::string::npos) status.push_back(l);
  };
  const RemoteRunResult r = RunRemote(o);
  ASSERT_EQ(r.status, RemoteRunResult::Status::kDone) << r.error;
  ASSERT_GE(status.size(), 100u);
  const std::string& last = status.back();
  EXPECT_NE(last.find("/s, "), std::string::npos) << last;
  EXPECT_NE(last.find(" findings, "), std::string::npos) << last;
  EXPECT_NE(last.find(" distinct, RSS "), std::string::npos) << last;
  EXPECT_NE(last.find(" MB session process"), std::string::npos) << last;
}

// A stop flag set before the run (SIGINT at once): nothing runs, and what
// there is is written, marked interrupted.
TEST(RunRemote, StopEndsTheRunAndMarksItInterrupted) {
  RemoteRunOptions o;
  o.time = std::chrono::seconds(600);
  o.out_dir = (Scratch("stop") / "out").string();
  std::atomic<int> stop{1};
  o.stop = &stop;
  const RemoteRunResult r = RunRemote(o);
  EXPECT_TRUE(r.interrupted);
  EXPECT_LT(r.seconds, 60);
  EXPECT_NE(std::ifstream(r.summary_file).peek(), EOF);
  std::stringstream stats;
  stats << std::ifstream(r.stats_file).rdbuf();
  EXPECT_NE(stats.str().find("\"interrupted\": true"), std::string::npos) << stats.str();
}

// What QEMU's port forwarding does for a dead guest: accepts every TCP
// connection on `port` and closes it at once.
class ClosingListener {
 public:
  explicit ClosingListener(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd_, 64) == 0;
    if (ok_)
      thread_ = std::thread([this] {
        for (int c; (c = ::accept(fd_, nullptr, nullptr)) >= 0;) ::close(c);
      });
  }
  ~ClosingListener() {
    ::shutdown(fd_, SHUT_RDWR);  // ends the blocked accept()
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  bool ok() const { return ok_; }

 private:
  int fd_ = -1;
  bool ok_ = false;
  std::thread thread_;
};

// siw-vm, 2026-11-26: the guest panicked 12 minutes into a 30-minute run
// and its port forwarder then closed every connection. Sessions whose
// Request the reference refuses too (a close is their expected answer)
// counted as "the target answers": the run flipped between "not answering"
// and "answering again" 1958 times, never ran the restart command, and
// counted 64,000 sessions that reached no target. Only an MPA Reply is a
// sign of life; sessions while the target does not answer are counted apart.
TEST(RunRemote, ATargetThatDiesBehindAForwarderIsGoneNotAnswering) {
  auto served = std::make_unique<Served>(wire::Profile::kRfc5040);
  const std::string address = served->address();
  const auto port = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  RemoteRunOptions o;
  o.target = served->Uri();
  o.time = std::chrono::seconds(60);
  o.restart_wait = std::chrono::seconds(1);
  o.status_every = std::chrono::milliseconds(0);
  o.out_dir = (Scratch("dies") / "out").string();
  std::unique_ptr<ClosingListener> forwarder;
  std::atomic<bool> died{false};
  std::vector<std::string> lines;
  o.progress = [&](const std::string& l) {
    lines.push_back(l);
    // After 40 sessions the target dies; its address now closes every connection.
    if (!died && l.find(" 40 sessions, ") != std::string::npos) {
      died = true;
      served->Stop();
      forwarder = std::make_unique<ClosingListener>(port);
      ASSERT_TRUE(forwarder->ok());
    }
  };
  const RemoteRunResult r = RunRemote(o);
  ASSERT_TRUE(died);
  EXPECT_EQ(r.status, RemoteRunResult::Status::kTargetGone) << r.error;
  EXPECT_EQ(r.restarts, 0);  // it never came back
  EXPECT_GT(r.sessions_not_answered, 0);
  EXPECT_LT(r.sessions_not_answered, r.sessions);
  int back = 0;
  for (const std::string& l : lines) back += l.find("target answering again") != std::string::npos;
  EXPECT_EQ(back, 0);
  std::stringstream stats;
  stats << std::ifstream(r.stats_file).rdbuf();
  EXPECT_NE(stats.str().find("\"sessions_not_answered\": " + std::to_string(r.sessions_not_answered)),
            std::string::npos)
      << stats.str();
}

TEST(RunRemote, BadOptionsAreOneLineErrors) {
  RemoteRunOptions o;
  o.faults = {"no-such-fault"};
  o.out_dir = (Scratch("bad") / "out").string();
  RemoteRunResult r = RunRemote(o);
  EXPECT_EQ(r.status, RemoteRunResult::Status::kBadOptions);
  EXPECT_NE(r.error.find("no-such-fault"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos);
  o.faults.clear();
  o.target = "nonsense://x";
  r = RunRemote(o);
  EXPECT_EQ(r.status, RemoteRunResult::Status::kBadOptions) << r.error;
}

// A stand-in libFuzzer binary: -help=1 says libFuzzer and fork; a fuzzing
// run prints one progress line and leaves one crash; a replay prints an
// ASan summary.
constexpr const char* kFake = R"(#!/bin/sh
for a in "$@"; do
  case "$a" in
    -help=1) echo "libFuzzer"; echo " fork   0"; exit 0 ;;
    -artifact_prefix=*) prefix=${a#-artifact_prefix=} ;;
    -fork=*) fork=1 ;;
  esac
done
if [ -n "$fork" ]; then
  echo "#77: cov: 5 ft: 6 corp: 1 exec/s: 99 oom/timeout/crash: 0/0/1 time: 1s"
  echo x > "${prefix}crash-1"; exit 0
fi
echo "SUMMARY: AddressSanitizer: stack-overflow"; exit 1
)";

TEST(RunCampaign, PlansRunsCollectsAndSummarisesThroughItsResult) {
  const fs::path dir = Scratch("campaign");
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "bin" / "fuzz_fake") << kFake;
  fs::permissions(dir / "bin" / "fuzz_fake", fs::perms::owner_all);
  CampaignOptions o;
  o.harnesses = {"all"};
  o.time = std::chrono::seconds(10);
  o.out_dir = dir / "camp";
  o.fuzzers_dir = dir / "bin";
  o.source_dir = dir;  // no corpus, no dictionaries
  o.minimize = false;
  std::vector<std::string> lines;
  o.progress = [&](const std::string& l) { lines.push_back(l); };
  const CampaignResult r = RunCampaign(o);
  ASSERT_EQ(r.status, CampaignResult::Status::kDone) << r.error;
  EXPECT_EQ(r.harnesses, 1u);
  EXPECT_EQ(r.new_findings, 1);
  EXPECT_EQ(r.known_findings, 1u);
  EXPECT_TRUE(fs::exists(r.stats_file));
  EXPECT_TRUE(fs::exists(dir / "camp" / "summary.md"));
  EXPECT_FALSE(lines.empty());

  o.fuzzers_dir = dir / "nowhere";
  const CampaignResult bad = RunCampaign(o);
  EXPECT_EQ(bad.status, CampaignResult::Status::kBadOptions);
  EXPECT_NE(bad.error.find("no fuzzer binaries"), std::string::npos) << bad.error;
}

}  // namespace
}  // namespace rdmapct::fuzz
