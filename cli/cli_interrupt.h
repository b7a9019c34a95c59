// SIGINT and SIGTERM during a long command (conform, load, replay): the
// work stops in an orderly way and what was done is still reported.
//
// While an InterruptScope lives, the first SIGINT sets level() to
// conformance::kStopFinish (finish what is in flight, start nothing new,
// then write every report, marked partial), the second to kStopAbandon
// (cut what is in flight short too), and a third exits at once with
// status 130. A first SIGTERM goes straight to kStopAbandon: whoever sends
// it (a CI job's timeout) will not wait for slow cases. Each signal prints one line on stderr so the user knows
// what happens. The previous handlers come back when the scope ends. A
// scope inside another (a driver that runs conform as one of its steps)
// shares the outer one's handlers and level. Not thread-safe: scopes are
// made on the main thread.
#pragma once

#include <atomic>

#include "conformance/result.h"

namespace rdmapct::cli {

// The documented exit status of an interrupted command (128 + SIGINT, as a
// shell reports a process killed by Ctrl-C), whichever signal it was.
inline constexpr int kExitInterrupted = conformance::kExitInterrupted;

class InterruptScope {
 public:
  // `command` names the command in the lines printed ("rdmapct conform").
  explicit InterruptScope(const char* command);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  // 0 until a signal came; then 1, 2 (conformance::kStopFinish, kStopAbandon).
  const std::atomic<int>& level() const;
  bool interrupted() const { return level().load() > 0; }
};

}  // namespace rdmapct::cli
