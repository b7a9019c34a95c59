// The driver of `rdmapct fuzz` (README "rdmapct fuzz"): mutated sessions
// (session_search.h) against the in-process reference with faults (every
// oracle, session_oracle.h) or a live target (session_remote.h), each
// distinct finding written to OUT/findings/<oracle>-<hash>/ with its input
// and conformance script, OUT/stats.json kept current.
//
// The driver prints nothing and returns no exit status: lines for the user
// go to `progress`, and replaying a script through the conformance suite is
// the caller's `replay` (only cli/ sees both fuzz/ and conformance/).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/session_oracle.h"
#include "fuzz/session_twin.h"
#include "fuzz/session_worker.h"
#include "proto/session.pb.h"
#include "reference/wire/profile.h"

namespace rdmapct::fuzz {

// A written reproducer the caller may replay: the script, the profile to
// run it under, the target to run it against, and where its pcap goes.
struct ReplayRequest {
  std::filesystem::path script, dir;
  wire::Profile profile = wire::Profile::kRfc5040;
  std::string target;
  int pause_after_reply_ms = 0;
};
// true: the script fails on the target (the finding reproduces); false: it
// passes; nullopt: the replay itself did not complete.
using ReplayFn = std::function<std::optional<bool>(const ReplayRequest&)>;
using ProgressFn = std::function<void(const std::string& line)>;

struct RemoteRunOptions {
  std::string target = "reference";      // reference (in-process oracles) or tcp://, plugin:
  std::vector<std::string> faults;       // reference only (fault names)
  std::optional<wire::Profile> profile;  // sessions of this profile only
  std::chrono::seconds time{60};
  std::optional<long> runs;  // sessions at most
  uint64_t seed = 1;
  std::string out_dir = "rdmapct-fuzz";
  std::chrono::seconds restart_wait{30};
  std::string restart_command;  // sh -c, at most 3 times
  int settle_ms = 30;
  int pause_after_reply_ms = 0;
  // Live targets: each write's answer ends at a zero-length RDMA Read fence
  // (session_remote.h FencedSession; false: at settle_ms of quiet), and
  // sessions run in batches of 32 on `jobs` connections at once (the session
  // stream and the findings depend on the batch, never on `jobs`).
  bool fence = true;
  int jobs = 1;
  bool stop_at_first = false;
  // Per session: the in-process reference runs in a child process cut at
  // these caps (session_worker.h); a live target's session is cut at the time cap.
  ConnectionLimits limits;
  const std::atomic<int>* stop = nullptr;          // set (SIGINT, SIGTERM): end the run now, write what was found
  std::chrono::milliseconds status_every{10'000};  // a status line to `progress` this often
  ProgressFn progress;                             // one line per event (may be empty)
  ReplayFn replay;                                 // replays each new finding's script (may be empty)
};

struct RunFinding {
  std::string signature, dir;
  Finding first;
  double first_seen_s = 0;
  long first_seen_sessions = 0;  // sessions run when it was found
  int count = 0;
  std::optional<bool> reproduced;
  // Its reproducer was replayed and did not reproduce it (nor that of up to
  // three later hits): kept apart from the count of findings.
  bool flaky() const { return reproduced && !*reproduced; }
  int replays = 0;
};

struct RemoteRunResult {
  enum class Status {
    kDone,           // the budget ran out (findings may be empty)
    kBadOptions,     // error says why (unknown fault, bad target, no out dir)
    kNeverAnswered,  // the target gave no MPA Reply to the first session
    kTargetGone,     // it stopped answering and did not come back
  };
  Status status = Status::kDone;
  std::string error;  // one line, for every status but kDone
  long sessions = 0;
  double seconds = 0;
  int restarts = 0;
  // Live targets: sessions run while the target did not answer (from a
  // session without an MPA Reply even for a plain Request, until one got a
  // Reply again): they reached no target. A Request the target refuses
  // while it answers others is a session like any other.
  long sessions_not_answered = 0;
  bool interrupted = false;                    // ended by `stop`; stats.json and summary.md say so
  std::map<std::string, RunFinding> findings;  // by signature, flaky ones included
  std::filesystem::path stats_file, summary_file;
  std::size_t distinct() const;  // findings that are not flaky
  std::size_t flaky() const { return findings.size() - distinct(); }
};

RemoteRunResult RunRemote(const RemoteRunOptions& options);

// " (N of them while the target did not answer)" when there were any, else "".
std::string NotAnswered(const RemoteRunResult& r);

// The in-process reference as the session configured it, as a target URI.
std::string ReferenceUri(const proto::FuzzSession& s, const std::vector<std::string>& faults);

// Writes dir/session.pb, session.txt and repro.textproto (id
// fuzz/session/<slug>); returns the script's path.
std::filesystem::path WriteReproFiles(const std::filesystem::path& dir, const std::string& slug,
                                      const proto::FuzzSession& s, const std::vector<Finding>& findings,
                                      const std::string& origin, const TargetShape& target = {});

}  // namespace rdmapct::fuzz
