// The campaign driver's view of libFuzzer: progress lines in both modes, the
// process group it runs a harness in, and that group's resident memory (the
// status line's RSS when fork mode prints none).
#include "fuzz/campaign_libfuzzer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace rdmapct::fuzz::campaign {
namespace {

TEST(CampaignProgress, ForkModeLinesGiveCountsButNoRss) {
  Progress p;
  ASSERT_TRUE(
      ParseProgress("#123456: cov: 1338 ft: 1822 corp: 191 exec/s: 6152 oom/timeout/crash: 1/2/3 time: 15s job: 9", p));
  EXPECT_EQ(p.runs, 123456);
  EXPECT_EQ(p.cov, 1338);
  EXPECT_EQ(p.ft, 1822);
  EXPECT_EQ(p.corp, 191);
  EXPECT_EQ(p.exec_per_s, 6152);
  EXPECT_EQ(p.ooms, 1);
  EXPECT_EQ(p.timeouts, 2);
  EXPECT_EQ(p.crashes, 3);
  EXPECT_EQ(p.rss_mb, 0);
}

TEST(CampaignProgress, OneJobLinesCarryRss) {
  Progress p;
  ASSERT_TRUE(ParseProgress("#4096\tpulse  cov: 56 ft: 78 corp: 9/1Kb exec/s: 100 rss: 41Mb", p));
  EXPECT_EQ(p.runs, 4096);
  EXPECT_EQ(p.rss_mb, 41);
  EXPECT_FALSE(ParseProgress("INFO: Seed: 1234", p));
}

TEST(CampaignProgress, GroupRssCountsTheGroupsProcessesAndNothingElse) {
  // This test process belongs to its own process group (or its runner's):
  // a gtest binary holds more than 1 MiB resident.
  EXPECT_GT(GroupRssMb(getpgrp()), 0);
  // No process is in a group whose id is no pid at all.
  EXPECT_EQ(GroupRssMb(0x7ffffff0), 0);
}

TEST(CampaignProgress, RunLoggedNamesItsGroupWhileTheCommandRuns) {
  const std::filesystem::path log_path =
      std::filesystem::path(::testing::TempDir()) / ("campaign_run_logged." + std::to_string(getpid()) + ".log");
  std::ofstream log(log_path);
  pid_t group = -1;
  long rss_seen = -1;
  std::vector<std::string> lines;
  const int rc = RunLogged(
      "echo one; sleep 0.2; echo two; exit 3", log,
      [&](const std::string& line) {
        lines.push_back(line);
        if (group > 0) rss_seen = GroupRssMb(group);
      },
      nullptr, &group);
  EXPECT_EQ(rc, 3);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
  EXPECT_GT(group, 0);
  EXPECT_GE(rss_seen, 0);           // the shell was alive: measured, possibly under 1 MiB
  EXPECT_EQ(GroupRssMb(group), 0);  // reaped: nothing of the group is left
  std::filesystem::remove(log_path);
}

}  // namespace
}  // namespace rdmapct::fuzz::campaign
