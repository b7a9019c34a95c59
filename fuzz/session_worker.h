// Sessions against the in-process reference in a child process, so that a
// session can be cut whatever it does: one that runs over its time or
// memory cap (a fault such as skip-bounds-check serving a 4 GiB Read, or an
// oracle gone astray) is killed and reported as a finding of its own kind,
// `resource`; one that kills the child (a crash of the reference or of an
// oracle) is a `crash` finding. The parent polls the child's RSS and the
// clock every 20 ms; outside ASan builds the child also runs under
// RLIMIT_DATA, so an allocation past the cap fails at once.
//
// The run's own deadline and a stop flag (SIGINT) cut a session too, as
// `cut` and not as a finding: `--time` is honoured within the poll period.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>

#include "fuzz/session_oracle.h"
#include "proto/session.pb.h"
#include "reference/model/faults.h"

namespace rdmapct::fuzz {

struct ConnectionLimits {
  std::chrono::milliseconds time{10'000};  // per session
  std::size_t memory_mb = 384;             // the child's RSS (docs: the run stays under 512 MB)
};

struct WorkerResult {
  OracleResult oracles;  // a `resource` or `crash` finding when cut by a cap or killed
  bool cut = false;      // cut by the run's deadline or stop flag: no verdict
};

class SessionWorker {
 public:
  SessionWorker(const model::FaultSet& faults, const ConnectionLimits& limits);
  ~SessionWorker();
  SessionWorker(const SessionWorker&) = delete;
  SessionWorker& operator=(const SessionWorker&) = delete;

  WorkerResult Run(const proto::FuzzSession& s, std::optional<std::chrono::steady_clock::time_point> deadline = {},
                   const std::atomic<int>* stop = nullptr);

  std::size_t last_rss_kb() const { return last_rss_kb_; }  // the child's, at its last poll
  int restarts() const { return restarts_; }                // children replaced after a cut

 private:
  bool Start();
  void Kill();
  std::optional<std::string> Await(const std::chrono::steady_clock::time_point started,
                                   std::optional<std::chrono::steady_clock::time_point> deadline,
                                   const std::atomic<int>* stop, WorkerResult& result);

  model::FaultSet faults_;
  ConnectionLimits limits_;
  int pid_ = -1, to_child_ = -1, from_child_ = -1;
  std::size_t last_rss_kb_ = 0;
  int restarts_ = 0;
};

// The RSS of this process, in KiB (0 when /proc cannot tell).
std::size_t SelfRssKb();

}  // namespace rdmapct::fuzz
