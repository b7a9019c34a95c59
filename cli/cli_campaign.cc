// `rdmapct fuzz campaign`: flags to fuzz::RunCampaign (fuzz/campaign.h),
// its progress to stdout, a fuzz_session finding's conformance script
// through `fuzz repro` (the suite), the result to an exit status.
#include <cstdio>

#include "cli/cli_fuzz.h"
#include "cli/cli_interrupt.h"
#include "cli/commands.h"
#include "conformance/catalog.h"
#include "fuzz/campaign.h"

namespace rdmapct::cli {

namespace fs = std::filesystem;

int RunCampaign(const CampaignCommand& cmd, std::FILE* out, std::FILE* err) {
  fuzz::CampaignOptions o;
  o.harnesses = cmd.harnesses;
  o.time = cmd.time;
  o.jobs = cmd.jobs;
  o.out_dir = cmd.out_dir;
  o.fuzzers_dir = cmd.fuzzers_dir;
  o.source_dir = cmd.source_dir.empty() ? conformance::RepositoryDir() : fs::path(cmd.source_dir);
  o.faults = cmd.faults;
  o.minimize = cmd.minimize;
  if (!cmd.quiet) {
    o.progress = [out](const std::string& line) {
      std::fprintf(out, "%s\n", line.c_str());
      std::fflush(out);
    };
  }
  // The script of a fuzz_session finding, replayed for its pcap.
  o.session_repro = [err](const fs::path& input, const fs::path& dir, const std::vector<std::string>& faults) {
    std::FILE* log = std::fopen((dir / "repro.log").c_str(), "w");
    FuzzReproCommand repro;
    repro.input = input.string();
    repro.out_dir = dir.string();
    repro.faults = faults;
    RunFuzzRepro(repro, log ? log : err, log ? log : err);
    if (log) std::fclose(log);
  };
  // SIGINT / SIGTERM: the harness stops, what it found is collected (interrupted).
  InterruptScope interrupt("rdmapct fuzz campaign");
  o.stop = &interrupt.level();
  const fuzz::CampaignResult r = fuzz::RunCampaign(o);
  if (r.status == fuzz::CampaignResult::Status::kBadOptions) {
    std::fprintf(err, "rdmapct fuzz campaign: error: %s\n", r.error.c_str());
    return kExitUsage;
  }
  const fs::path root = cmd.out_dir;
  std::fprintf(out,
               "campaign done in %.0f s: %zu harness%s, %d new finding%s (%zu known); %s/stats.json, %s/summary.md\n",
               r.seconds, r.harnesses, r.harnesses == 1 ? "" : "es", r.new_findings, r.new_findings == 1 ? "" : "s",
               r.known_findings, root.c_str(), root.c_str());
  if (r.interrupted) {
    std::fprintf(err, "rdmapct fuzz campaign: interrupted; findings so far in %s, %s\n", r.stats_file.c_str(),
                 r.summary_file.c_str());
    return kExitInterrupted;
  }
  return r.new_findings > 0 ? kExitFail : kExitOk;
}

}  // namespace rdmapct::cli
