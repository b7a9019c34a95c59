// How long a live target takes to react, and so how long a wait for its
// silence has to be (docs/target-convention.md §2.5, "Quiet").
//
// An `expect nothing` that no fence can end (before the suite's first FPDU,
// after raw octets that leave the target inside an FPDU, before a later step
// that numbers QN 0 messages or Event Records) can only wait. In-process the
// synchronous target has said everything at once; over TCP a fixed window
// (300 ms in most cases) stands in for that. A target that reacts to what it
// received does so within its own reaction time, so the window is cut to a
// multiple of the slowest reaction this target has shown in the run: the
// time from a suite write to the first octets that follow it (its MPA Reply,
// its answers, its Event Records). A slow target keeps its whole window; a
// fast one is not held for 300 ms per wait. The clock is shared by a run's
// cases, which may run on several threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace rdmapct::targets {

class ReactionClock {
 public:
  using Duration = std::chrono::steady_clock::duration;

  // The suite's quiet: kMultiple times the slowest reaction, kFloor at least.
  static constexpr int kMultiple = 8;
  static constexpr std::chrono::milliseconds kFloor{20};

  ReactionClock() = default;
  // Another multiple and floor (the live fuzzer's session quiet: 4, 1 ms).
  ReactionClock(int multiple, std::chrono::milliseconds floor) : multiple_(multiple), floor_(floor) {}
  int multiple() const { return multiple_; }
  std::chrono::milliseconds floor() const { return floor_; }

  // A reaction: `took` from a suite write to the target's next octets.
  void Observe(Duration took) {
    const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(took).count();
    int64_t seen = slowest_ns_.load(std::memory_order_relaxed);
    while (ns > seen && !slowest_ns_.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
    }
  }
  // The slowest reaction so far; zero before the first.
  Duration Slowest() const { return std::chrono::nanoseconds(slowest_ns_.load(std::memory_order_relaxed)); }
  // What an `expect nothing` of `window` waits: `window` until a reaction
  // has been seen, then multiple() times the slowest, floor() at least and
  // `window` at most.
  std::chrono::milliseconds Quiet(std::chrono::milliseconds window) const {
    const Duration slowest = Slowest();
    if (slowest == Duration::zero()) return window;
    const auto scaled = std::chrono::ceil<std::chrono::milliseconds>(multiple_ * slowest);
    return std::min(std::max(scaled, floor_), window);
  }

 private:
  int multiple_ = kMultiple;
  std::chrono::milliseconds floor_ = kFloor;
  std::atomic<int64_t> slowest_ns_{0};
};

}  // namespace rdmapct::targets
