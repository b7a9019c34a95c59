// `rdmapct fuzz show | repro | run | campaign`: the glue between the flags
// (cmd_fuzz.cc) and fuzz/ (session builder, oracles, reproducers, remote
// runs) and the libFuzzer binaries (campaigns, cli_campaign.cc).
#pragma once

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "reference/wire/profile.h"

namespace rdmapct::cli {

// "90", "90s", "15m", "8h", "1h30m" -> seconds; nullopt if malformed.
std::optional<std::chrono::seconds> ParseDuration(std::string_view text);

// Prints every FILE as protobuf text format (a FuzzSession), or, for an
// input of a raw-byte harness, says so and hexdumps it.
int RunFuzzShow(const std::vector<std::string>& files, std::FILE* out, std::FILE* err);

struct FuzzReproCommand {
  std::string input;                // a binary (or text) FuzzSession
  std::string out_dir;              // where the script (and pcap) go
  std::vector<std::string> faults;  // of the in-process reference the input failed on
  std::string target;               // replay the script here (default: the reference with the faults)
  bool replay = true;               // run the script once (pcap, verdict)
};
int RunFuzzRepro(const FuzzReproCommand& cmd, std::FILE* out, std::FILE* err);

struct FuzzRunCommand {
  std::string target = "reference";      // reference[?..] (in-process oracles) or tcp://, plugin:
  std::vector<std::string> faults;       // reference only
  std::optional<wire::Profile> profile;  // sessions of this profile only (a live target runs one)
  std::chrono::seconds time{60};
  std::optional<long> runs;  // sessions at most
  uint64_t seed = 1;
  std::string out_dir = "rdmapct-fuzz";
  std::chrono::seconds restart_wait{30};  // a target that stopped answering may come back
  std::string restart_command;            // run (sh -c) when it has not come back within restart_wait; at most 3 times
  int settle_ms = 30;
  bool no_fence = false;         // --no-fence: --settle quiet ends every write's answer
  int jobs = 1;                  // live targets: sessions on this many connections at once
  int pause_after_reply_ms = 0;  // --pause-after-reply (live targets and their reproducer replays)
  bool quiet = false;
  bool stop_at_first = false;                      // end the run at the first finding
  std::chrono::milliseconds session_time{10'000};  // per-session caps (fuzz/session_worker.h)
  std::size_t session_memory_mb = 384;
};
// Exit status: 0 no finding, 1 findings (written to out_dir), 2 usage or
// the target never answered.
int RunFuzzRun(const FuzzRunCommand& cmd, std::FILE* out, std::FILE* err);

struct CampaignCommand {
  std::vector<std::string> harnesses;  // names, or {"all"}
  std::chrono::seconds time{600};      // whole campaign
  int jobs = 1;                        // libFuzzer -fork per harness
  std::string out_dir = "rdmapct-campaign";
  std::string fuzzers_dir;          // the fuzz_* binaries (default: found beside the source tree)
  std::string source_dir;           // corpus/, fuzz/*.dict (default: RepositoryDir())
  std::vector<std::string> faults;  // RDMAPCT_SESSION_FAULTS for fuzz_session
  bool minimize = true;
  bool quiet = false;
};
int RunCampaign(const CampaignCommand& cmd, std::FILE* out, std::FILE* err);

}  // namespace rdmapct::cli
