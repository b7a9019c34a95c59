// The reaction clock (targets/reaction_clock.h): the quiet of an
// `expect nothing` no fence can end is the step's window until the target
// has reacted once, then 8 times its slowest reaction, 20 ms at least and
// the window at most.
#include "targets/reaction_clock.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace rdmapct::targets {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(ReactionClock, TheWholeWindowUntilTheTargetHasReacted) {
  ReactionClock clock;
  EXPECT_EQ(clock.Slowest(), ReactionClock::Duration::zero());
  EXPECT_EQ(clock.Quiet(milliseconds(300)), milliseconds(300));
}

TEST(ReactionClock, EightTimesTheSlowestReactionWithinFloorAndWindow) {
  ReactionClock clock;
  clock.Observe(microseconds(100));
  EXPECT_EQ(clock.Quiet(milliseconds(300)), milliseconds(20));  // 0.8 ms is under the floor
  clock.Observe(milliseconds(5));
  clock.Observe(milliseconds(1));  // a faster one does not lower it
  EXPECT_EQ(clock.Slowest(), milliseconds(5));
  EXPECT_EQ(clock.Quiet(milliseconds(300)), milliseconds(40));
  EXPECT_EQ(clock.Quiet(milliseconds(30)), milliseconds(30));  // never above the step's window
  clock.Observe(microseconds(3001));
  EXPECT_EQ(clock.Quiet(milliseconds(300)), milliseconds(40));
  clock.Observe(microseconds(5001));  // 40.008 ms is rounded up
  EXPECT_EQ(clock.Quiet(milliseconds(300)), milliseconds(41));
}

// The live fuzzer's session quiet: 4 times the slowest reaction, 1 ms at least.
TEST(ReactionClock, AnotherMultipleAndFloor) {
  ReactionClock clock(4, milliseconds(1));
  clock.Observe(microseconds(100));
  EXPECT_EQ(clock.Quiet(milliseconds(30)), milliseconds(1));
  clock.Observe(milliseconds(2));
  EXPECT_EQ(clock.Quiet(milliseconds(30)), milliseconds(8));
  clock.Observe(milliseconds(10));
  EXPECT_EQ(clock.Quiet(milliseconds(30)), milliseconds(30));
}

// A run's cases share one clock across the runner's threads: the slowest
// reaction any of them saw wins.
TEST(ReactionClock, ThreadsKeepTheSlowest) {
  ReactionClock clock;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&clock, t] {
      for (int i = 1; i <= 1000; ++i) clock.Observe(microseconds(i * 4 + t));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(clock.Slowest(), microseconds(4003));
}

}  // namespace
}  // namespace rdmapct::targets
