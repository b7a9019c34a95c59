#include "fuzz/campaign.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "fuzz/campaign_libfuzzer.h"

namespace rdmapct::fuzz {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace campaign;

namespace {

struct Harness {
  std::string name;
  fs::path binary;
  std::vector<std::string> flags;  // from .dict / .options
  std::vector<fs::path> seeds;     // source corpus dirs that exist
};

// What one harness's run left behind, for collect and merge.
struct HarnessRun {
  long slice = 0;
  int exit_status = 0;
  Progress progress;
  std::size_t corpus_before = 0, corpus_after = 0;
  std::set<std::string> artifacts_before;
  json artifacts = json::array();
};

class Campaign {
 public:
  explicit Campaign(const CampaignOptions& o) : o_(o) {}
  CampaignResult Run();

 private:
  bool Plan();
  bool PlanHarness(const std::string& name, const fs::path& fuzzers);
  HarnessRun RunHarness(std::size_t i);
  void Collect(const Harness& h, HarnessRun& run);
  void NewFinding(const Harness& h, const fs::path& artifact, const std::string& kind, const std::string& sig,
                  const std::string& report, json& k);
  void Merge(const Harness& h, HarnessRun& run);
  void Summarise();
  void WriteSummary() const;

  bool Stopped() const { return o_.stop && o_.stop->load() > 0; }
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  long Left() const { return total_ - static_cast<long>(Elapsed()); }
  void Say(const std::string& line) const {
    if (!o_.progress) return;
    char b[16];
    std::snprintf(b, sizeof b, "[%6.0fs] ", Elapsed());
    o_.progress(b + line);
  }
  CampaignResult Fail(std::string error) {
    result_.status = CampaignResult::Status::kBadOptions;
    result_.error = std::move(error);
    return result_;
  }

  const CampaignOptions& o_;
  fs::path root_, fuzzers_;
  std::vector<Harness> harnesses_;
  json known_, stats_;
  Clock::time_point start_ = Clock::now();
  long total_ = 0, reserve_ = 0;
  std::string session_faults_;
  CampaignResult result_;
};

// The harnesses to run, each with its flags and seed corpora.
bool Campaign::Plan() {
  fuzzers_ = o_.fuzzers_dir.empty() ? DefaultFuzzersDir(o_.source_dir) : o_.fuzzers_dir;
  if (!fs::is_directory(fuzzers_)) {
    result_.error =
        "no fuzzer binaries in " + fuzzers_.string() + " (build them with fuzz/build.sh, or give --fuzzers DIR)";
    return false;
  }
  std::vector<std::string> names;
  const bool all = std::count(o_.harnesses.begin(), o_.harnesses.end(), "all") > 0 || o_.harnesses.empty();
  if (all) {
    for (const auto& e : fs::directory_iterator(fuzzers_)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("fuzz_", 0) == 0 && e.is_regular_file() && n.find('.') == std::string::npos &&
          (fs::status(e.path()).permissions() & fs::perms::owner_exec) != fs::perms::none)
        names.push_back(n);
    }
    std::sort(names.begin(), names.end());
  } else {
    names = o_.harnesses;
  }
  for (const std::string& n : names) {
    if (!PlanHarness(n, fuzzers_)) return false;
  }
  if (harnesses_.empty()) {
    result_.error = "no fuzz_* harness in " + fuzzers_.string();
    return false;
  }
  return true;
}

bool Campaign::PlanHarness(const std::string& n, const fs::path& fuzzers) {
  Harness h{n, fuzzers / n, {}, {}};
  if (!fs::exists(h.binary)) {
    result_.error = "no harness " + n + " in " + fuzzers.string();
    return false;
  }
  if (!IsLibFuzzer(h.binary)) {
    result_.error = h.binary.string() + " is not a libFuzzer binary (build the fuzz preset: fuzz/build.sh)";
    return false;
  }
  const fs::path& source = o_.source_dir;
  for (const fs::path& d : {fuzzers / (n + ".dict"), source / "fuzz" / (n + ".dict")}) {
    if (fs::exists(d)) {
      h.flags.push_back("-dict=" + d.string());
      break;
    }
  }
  for (const fs::path& o : {fuzzers / (n + ".options"), source / "fuzz" / (n + ".options")}) {
    if (!fs::exists(o)) continue;
    for (const std::string& f : OptionsFlags(o)) {
      if (f.rfind("-dict=", 0) != 0) h.flags.push_back(f);
    }
    break;
  }
  for (const fs::path& d : {source / "corpus" / n, source / "corpus" / "regressions" / n}) {
    if (fs::is_directory(d)) h.seeds.push_back(d);
  }
  harnesses_.push_back(std::move(h));
  return true;
}

// libFuzzer in fork mode for this harness's slice of what is left.
HarnessRun Campaign::RunHarness(std::size_t i) {
  const Harness& h = harnesses_[i];
  HarnessRun run;
  const long left = total_ - reserve_ - static_cast<long>(Elapsed());
  run.slice = std::max<long>(1, left / static_cast<long>(harnesses_.size() - i));
  const fs::path corpus = root_ / "corpus" / h.name;
  const fs::path artifacts = root_ / "artifacts" / h.name;
  std::error_code ec;
  fs::create_directories(corpus, ec);
  fs::create_directories(artifacts, ec);
  for (const auto& e : fs::directory_iterator(artifacts)) run.artifacts_before.insert(e.path().filename().string());
  run.corpus_before = FilesIn(corpus);

  std::string command =
      Quote(h.binary.string()) + " -fork=" + std::to_string(std::max(1, o_.jobs)) +
      " -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=" + std::to_string(run.slice) +
      " -artifact_prefix=" + Quote(artifacts.string() + "/") +
      " -print_final_stats=1 -timeout=" + std::to_string(o_.input_timeout_s) +
      " -rss_limit_mb=" + std::to_string(o_.rss_limit_mb);
  for (const std::string& f : h.flags) command += " " + Quote(f);
  command += " " + Quote(corpus.string());
  for (const fs::path& s : h.seeds) command += " " + Quote(s.string());
  Say(h.name + ": " + std::to_string(run.slice) + "s, " + std::to_string(o_.jobs) + " job" + (o_.jobs == 1 ? "" : "s") +
      ", corpus " + std::to_string(run.corpus_before) + " + seeds");
  std::ofstream log(root_ / "logs" / (h.name + ".log"), std::ios::app);
  auto last_print = Clock::now();
  Progress& p = run.progress;
  pid_t group = -1;
  run.exit_status = RunLogged(
      command, log,
      [&](const std::string& line) {
        if (!ParseProgress(line, p) || Clock::now() - last_print < std::chrono::seconds(10)) return;
        last_print = Clock::now();
        if (group > 0 && line.find("rss:") == std::string::npos) p.rss_mb = GroupRssMb(group);
        char b[320];
        std::snprintf(b, sizeof b,
                      "  %s: %ld execs, %ld exec/s, %ld findings (crash/timeout/oom %ld/%ld/%ld), %zu distinct known, "
                      "RSS %ld MB, cov %ld, ft %ld, corpus %ld",
                      h.name.c_str(), p.runs, p.exec_per_s, p.crashes + p.timeouts + p.ooms, p.crashes, p.timeouts,
                      p.ooms, known_.size(), p.rss_mb, p.cov, p.ft, p.corp);
        Say(b);
      },
      o_.stop, &group);
  return run;
}

// New artifacts: replay for the signature, dedupe, minimize, reproduce.
void Campaign::Collect(const Harness& h, HarnessRun& run) {
  for (const auto& e : fs::directory_iterator(root_ / "artifacts" / h.name)) {
    const std::string file = e.path().filename().string();
    if (run.artifacts_before.count(file) || !e.is_regular_file()) continue;
    const std::string kind = file.substr(0, file.find('-'));
    int replay_rc = 0;
    const std::string report =
        Capture("timeout 60 " + Quote(h.binary.string()) + " -runs=3 " + Quote(e.path().string()), replay_rc);
    const std::string sig = h.name + ": " + SignatureOf(report, kind);
    json& k = known_[sig];
    if (k.is_null()) NewFinding(h, e.path(), kind, sig, report, k);
    k["count"] = k.value("count", 0) + 1;
    run.artifacts.push_back(json{{"artifact", file}, {"signature", sig}, {"dir", k["dir"]}});
  }
}

// The first artifact of a signature: minimized (crashes only, at most 30 s
// and never past the budget), with its report and reproduce.sh.
void Campaign::NewFinding(const Harness& h, const fs::path& artifact, const std::string& kind, const std::string& sig,
                          const std::string& report, json& k) {
  ++result_.new_findings;
  const fs::path dir = root_ / "findings" / (h.name + "-" + Hash8(sig));
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::copy_file(artifact, dir / "input", fs::copy_options::overwrite_existing, ec);
  fs::path reproducer = dir / "input";
  const long remaining = Left();
  if (o_.minimize && kind == "crash" && remaining >= 4 && !Stopped()) {
    const long budget = std::min<long>(30, remaining / 2);
    std::ofstream mlog(dir / "minimize.log");
    RunLogged("timeout " + std::to_string(budget + 10) + " " + Quote(h.binary.string()) +
                  " -minimize_crash=1 -max_total_time=" + std::to_string(budget) + " -runs=100000 " +
                  "-exact_artifact_path=" + Quote((dir / "minimized").string()) + " " + Quote(artifact.string()),
              mlog, {});
    if (fs::exists(dir / "minimized")) reproducer = dir / "minimized";
  }
  std::ofstream(dir / "report.txt") << report;
  std::ofstream(dir / "reproduce.sh") << "#!/bin/sh\n# " << sig << "\n"
                                      << (session_faults_.empty() ? ""
                                                                  : "RDMAPCT_SESSION_FAULTS=" + session_faults_ + " ")
                                      << Quote(h.binary.string()) << " " << Quote(reproducer.string()) << "\n";
  if (h.name == "fuzz_session" && o_.session_repro) o_.session_repro(reproducer, dir, o_.faults);
  k = json{{"harness", h.name},   {"kind", kind}, {"first_seen", NowIso()}, {"first_seen_campaign_s", Elapsed()},
           {"dir", dir.string()}, {"count", 0}};
  Say("  NEW finding " + dir.filename().string() + "\n            " + sig);
}

// Keep only inputs that add coverage (bounded by the reserve).
void Campaign::Merge(const Harness& h, HarnessRun& run) {
  const fs::path corpus = root_ / "corpus" / h.name;
  run.corpus_after = FilesIn(corpus);
  const long merge_left = Left();
  if (merge_left < 5 || Stopped()) return;
  const fs::path merged = root_ / "corpus" / (h.name + ".merged");
  std::error_code ec;
  fs::remove_all(merged, ec);
  fs::create_directories(merged, ec);
  std::ofstream mlog(root_ / "logs" / (h.name + ".merge.log"));
  const long per_harness = reserve_ / static_cast<long>(harnesses_.size());
  const long merge_time = std::min<long>(merge_left, std::max<long>(5, std::min<long>(per_harness, 120)));
  const int mrc = RunLogged("timeout " + std::to_string(merge_time) + " " + Quote(h.binary.string()) +
                                " -merge=1 -rss_limit_mb=4096 " + Quote(merged.string()) + " " + Quote(corpus.string()),
                            mlog, {});
  if (mrc == 0 && FilesIn(merged) > 0) {
    fs::remove_all(corpus, ec);
    fs::rename(merged, corpus, ec);
    run.corpus_after = FilesIn(corpus);
  } else {
    fs::remove_all(merged, ec);
  }
}

void Campaign::Summarise() {
  result_.interrupted = Stopped();
  stats_["interrupted"] = result_.interrupted;
  stats_["finished"] = NowIso();
  stats_["seconds"] = Elapsed();
  stats_["new_findings"] = result_.new_findings;
  stats_["findings"] = known_;
  std::ofstream(root_ / "findings.json") << known_.dump(2) << "\n";
  result_.stats_file = root_ / "stats.json";
  std::ofstream(result_.stats_file) << stats_.dump(2) << "\n";
  result_.summary_file = root_ / "summary.md";
  WriteSummary();
  result_.harnesses = harnesses_.size();
  result_.known_findings = known_.size();
  result_.seconds = Elapsed();
}

// summary.md: one table per campaign.
void Campaign::WriteSummary() const {
  std::ofstream md(result_.summary_file);
  md << "# rdmapct fuzz campaign, " << stats_["started"].get<std::string>()
     << (result_.interrupted ? " (interrupted)" : "") << "\n\n"
     << "Budget " << total_ << " s, ran " << static_cast<long>(Elapsed()) << " s, " << o_.jobs << " job(s) per harness"
     << (result_.interrupted ? "; interrupted (SIGINT/SIGTERM): the harnesses not listed did not run" : "") << ".\n\n"
     << "| harness | seconds | execs | exec/s (average) | coverage | corpus (before -> after) | crash/timeout/oom |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const auto& [name, s] : stats_["harnesses"].items()) {
    md << "| " << name << " | " << s["seconds"] << " | " << s["execs"] << " | " << s["exec_per_s"] << " | "
       << s["coverage"] << " | " << s["corpus_before"] << " -> " << s["corpus_after"] << " | " << s["crashes"] << "/"
       << s["timeouts"] << "/" << s["ooms"] << " |\n";
  }
  md << "\n## Findings (" << known_.size() << " distinct, " << result_.new_findings << " new in this campaign)\n\n";
  for (const auto& [sig, f] : known_.items()) {
    md << "- `" << sig << "`: first seen " << f.value("first_seen", std::string()) << ", " << f.value("count", 0)
       << " artifact(s), " << f.value("dir", std::string()) << "\n";
  }
}

json HarnessStats(const HarnessRun& run) {
  const Progress& p = run.progress;
  return json{{"seconds", run.slice},
              {"exit_status", run.exit_status},
              {"execs", p.runs},
              // The average over the slice: libFuzzer's last exec/s figure
              // says how fast the harness ran at the end only (on a loaded
              // machine a fraction of the average).
              {"exec_per_s", run.slice > 0 ? p.runs / run.slice : 0},
              {"last_exec_per_s", p.exec_per_s},
              {"coverage", p.cov},
              {"features", p.ft},
              {"corpus_before", run.corpus_before},
              {"corpus_after", run.corpus_after},
              {"crashes", p.crashes},
              {"timeouts", p.timeouts},
              {"ooms", p.ooms},
              {"artifacts", run.artifacts}};
}

CampaignResult Campaign::Run() {
  if (!Plan()) return Fail(result_.error);
  root_ = o_.out_dir;
  std::error_code ec;
  fs::create_directories(root_ / "logs", ec);
  if (ec) return Fail("cannot create " + root_.string() + ": " + ec.message());
  // Known findings of earlier campaigns (deduplication across nights).
  known_ = LoadJson(root_ / "findings.json");
  if (!known_.is_object()) known_ = json::object();
  // A tenth of the budget (at most 10 min) is kept for merging, replay and minimization.
  total_ = static_cast<long>(o_.time.count());
  reserve_ = std::min<long>(600, total_ / 10);
  stats_ = json{{"started", NowIso()}, {"time_budget_s", total_}, {"jobs", o_.jobs}, {"harnesses", json::object()}};
  for (const std::string& f : o_.faults) session_faults_ += (session_faults_.empty() ? "" : ",") + f;
  if (!session_faults_.empty()) {
    setenv("RDMAPCT_SESSION_FAULTS", session_faults_.c_str(), 1);
    stats_["session_faults"] = session_faults_;
  }
  for (std::size_t i = 0; i < harnesses_.size() && !Stopped(); ++i) {
    HarnessRun run = RunHarness(i);
    Collect(harnesses_[i], run);
    Merge(harnesses_[i], run);
    stats_["harnesses"][harnesses_[i].name] = HarnessStats(run);
  }
  Summarise();
  return result_;
}

}  // namespace

CampaignResult RunCampaign(const CampaignOptions& options) { return Campaign(options).Run(); }

}  // namespace rdmapct::fuzz
