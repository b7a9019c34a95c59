// `rdmapct load` end to end: the built binary against the in-process
// reference target (`--target reference`, no server needed; the TCP path is
// tests/targets/load_generator_test.cc). Budgets are message counts, so the
// printed count is exact; rates are not checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/cli_test_util.h"

#ifndef RDMAPCT_BINARY
#error "RDMAPCT_BINARY (path of the rdmapct executable) must be defined by the build"
#endif

namespace rdmapct::cli {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::MatchesRegex;

using test_util::Outcome;

// Runs `rdmapct load ARGS` (ARGS already shell-quoted) with stdin from /dev/null.
Outcome Load(const std::string& args) { return test_util::RunRdmapct("load " + args); }

TEST(LoadCommand, WritesPrintOneLineWithTheExactCount) {
  const Outcome r = Load("--target reference --op write --messages 64 --seconds 0");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, MatchesRegex("rdmapct load: write 4096 octets, crc on, 1 connection\\(s\\): 64 messages in "
                                  "[0-9.]+ s = [0-9]+ msgs/s, [0-9.]+ MB/s \\(1 connection\\(s\\) opened and "
                                  "closed cleanly\\)\n"));
  EXPECT_EQ(r.err, "");
}

// The target posts 8 receive buffers: 20 Sends take 3 connections.
TEST(LoadCommand, SendsWithoutCrcUseAFreshConnectionPerBufferSet) {
  const Outcome r = Load("--target 'reference?crc=0' --op send --crc off --messages 20 --seconds 0");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("send 4096 octets, crc off, 1 connection(s): 20 messages in "));
  EXPECT_THAT(r.out, HasSubstr("(3 connection(s) opened and closed cleanly)"));
}

// A target whose Reply sets C gets CRCs; the line says so and a note
// explains why.
TEST(LoadCommand, CrcFollowsTheTargetsReply) {
  const Outcome r = Load("--target reference --crc off --messages 8 --seconds 0");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("crc on"));
  EXPECT_THAT(r.err, HasSubstr("asked for CRCs off, the target's Reply made them on"));
}

TEST(LoadCommand, SendsLargerThanTheBuffersAreAnError) {
  const Outcome r = Load("--target reference --op send --size 8192 --messages 8 --seconds 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "rdmapct load: error: the target posts 8 receive buffer(s) of 4096 octets: no room for "
            "8192-octet Sends\n");
}

TEST(LoadCommand, UsageErrorsAreOneLineAndExit2) {
  for (const char* args : {"--target reference --op read", "--target reference --seconds 0", "--op write",
                           "--target nosuch://x --messages 1"}) {
    const Outcome r = Load(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace rdmapct::cli
