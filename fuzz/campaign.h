// The driver of `rdmapct fuzz campaign` (README "Campaigns"): the libFuzzer
// binaries built by fuzz/build.sh run one harness after another inside a
// time budget, in fork mode, with their dictionaries, .options and seed
// corpora. Plan (which harnesses, with what flags), run (libFuzzer, its
// progress parsed), collect (each new artifact replayed for a signature,
// deduplicated across campaigns, minimized, given a reproducer), merge
// (the corpus kept for the next campaign) and summarise (stats.json,
// summary.md, findings.json).
//
// The driver prints nothing and returns no exit status: lines for the user
// go to `progress`; turning a fuzz_session finding into a replayed
// conformance script is the caller's `session_repro` (cli/).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/run_remote.h"

namespace rdmapct::fuzz {

struct CampaignOptions {
  std::vector<std::string> harnesses;  // names, or {"all"} / empty: every fuzz_* binary
  std::chrono::seconds time{600};      // whole campaign
  int jobs = 1;                        // libFuzzer -fork per harness
  std::filesystem::path out_dir = "rdmapct-campaign";
  std::filesystem::path fuzzers_dir;  // empty: $RDMAPCT_FUZZERS or SOURCE/build-fuzz/{out,fuzz}
  std::filesystem::path source_dir;   // corpus/, fuzz/*.dict, fuzz/*.options
  std::vector<std::string> faults;    // RDMAPCT_SESSION_FAULTS for fuzz_session
  bool minimize = true;
  // libFuzzer's per-input caps (-timeout, -rss_limit_mb per job); an input
  // over them is a timeout- or oom- artifact, a finding of its own kind.
  int input_timeout_s = 10;
  int rss_limit_mb = 1024;
  const std::atomic<int>* stop = nullptr;  // set (SIGINT, SIGTERM): end the running harness, collect, summarise
  ProgressFn progress;                     // may be empty
  // Writes (and replays) the conformance script of a fuzz_session finding:
  // the input file, the finding's directory, the faults. May be empty.
  std::function<void(const std::filesystem::path& input, const std::filesystem::path& dir,
                     const std::vector<std::string>& faults)>
      session_repro;
};

struct CampaignResult {
  enum class Status { kDone, kBadOptions };
  Status status = Status::kDone;
  std::string error;  // one line when kBadOptions
  std::size_t harnesses = 0;
  int new_findings = 0;
  std::size_t known_findings = 0;  // every campaign's, deduplicated
  double seconds = 0;
  bool interrupted = false;  // ended by `stop`; stats.json and summary.md say so
  std::filesystem::path stats_file, summary_file;
};

CampaignResult RunCampaign(const CampaignOptions& options);

}  // namespace rdmapct::fuzz
