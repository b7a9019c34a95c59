// `rdmapct fuzz campaign`: runs the libFuzzer binaries (fuzz/, built by
// fuzz/build.sh) one harness after another inside a time budget, in fork
// mode, with their dictionaries, .options and seed corpora; keeps the
// corpus in OUT/corpus/<harness>/ (the next campaign resumes from it);
// collects crash/timeout/oom/leak artifacts, replays each to get its
// signature (sanitizer report top frames, or the session oracle's finding),
// deduplicates by signature across campaigns, minimizes the first of each,
// writes a reproducer (fuzz_session: a conformance script, replayed for a
// pcap; raw harnesses: the input and the command), and writes stats.json
// and summary.md.
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli/cli_fuzz.h"
#include "cli/commands.h"
#include "conformance/catalog.h"

namespace rdmapct::cli {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

namespace {

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Harness {
  std::string name;
  fs::path binary;
  std::vector<std::string> flags;  // from .dict / .options
  std::vector<fs::path> seeds;     // source corpus dirs that exist
};

struct Progress {
  long runs = 0, cov = 0, ft = 0, corp = 0, exec_per_s = 0, crashes = 0, timeouts = 0, ooms = 0;
};

// "#1234: cov: 56 ft: 78 corp: 9 exec/s: 100 oom/timeout/crash: 0/0/1 ..." (fork
// mode) or "#1234 NEW cov: 56 ft: 78 corp: 9/1Kb ... exec/s: 100 ..." (one job).
bool ParseProgress(const std::string& line, Progress& p) {
  static const std::regex kRuns(R"(^#(\d+)[: ])");
  std::smatch m;
  if (!std::regex_search(line, m, kRuns)) return false;
  p.runs = std::stol(m[1]);
  const auto field = [&](const char* name, long& out) {
    const std::regex re(std::string(name) + R"(:? (\d+))");
    std::smatch k;
    if (std::regex_search(line, k, re)) out = std::stol(k[1]);
  };
  field("cov", p.cov);
  field("ft", p.ft);
  field("corp", p.corp);
  field("exec/s", p.exec_per_s);
  static const std::regex kCounts(R"(oom/timeout/crash: (\d+)/(\d+)/(\d+))");
  if (std::regex_search(line, m, kCounts)) {
    p.ooms = std::stol(m[1]);
    p.timeouts = std::stol(m[2]);
    p.crashes = std::stol(m[3]);
  }
  return true;
}

// Runs a shell command, every output line to `log` and to `on_line`.
int RunLogged(const std::string& command, std::ofstream& log, const std::function<void(const std::string&)>& on_line) {
  log << "$ " << command << "\n";
  std::FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  std::string line;
  while (std::fgets(buf, sizeof buf, p)) {
    line += buf;
    if (line.back() != '\n' && line.size() < 16384) continue;
    log << line;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (on_line) on_line(line);
    line.clear();
  }
  const int status = pclose(p);
  log.flush();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string Capture(const std::string& command, int& rc) {
  std::FILE* p = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  if (!p) {
    rc = -1;
    return out;
  }
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p) && out.size() < (1u << 20)) out += buf;
  const int status = pclose(p);
  rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return out;
}

// A libFuzzer binary answers -help=1 with its flag list; a standalone
// replay binary (standalone_main.cc) does not.
bool IsLibFuzzer(const fs::path& bin) {
  int rc = 0;
  const std::string out = Capture("timeout 20 " + Quote(bin.string()) + " -help=1", rc);
  return out.find(" fork ") != std::string::npos && out.find("libFuzzer") != std::string::npos;
}

// [libfuzzer] key = value lines of a .options file.
std::vector<std::string> OptionsFlags(const fs::path& file) {
  std::vector<std::string> flags;
  std::ifstream in(file);
  std::string line;
  bool section = false;
  while (std::getline(in, line)) {
    line.erase(0, line.find_first_not_of(" \t"));
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line.rfind("[libfuzzer]", 0) == 0;
      continue;
    }
    const auto eq = line.find('=');
    if (!section || eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    key.erase(key.find_last_not_of(" \t") + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r") + 1);
    // The campaign decides these itself.
    if (key == "max_total_time" || key == "runs" || key == "fork" || key == "jobs" || key == "workers") continue;
    flags.push_back("-" + key + "=" + value);
  }
  return flags;
}

fs::path DefaultFuzzersDir(const fs::path& source) {
  if (const char* env = std::getenv("RDMAPCT_FUZZERS")) return env;
  for (const fs::path& p : {source / "build-fuzz" / "out", source / "build-fuzz" / "fuzz"}) {
    if (fs::is_directory(p)) return p;
  }
  return source / "build-fuzz" / "out";
}

// The signature of a finding: the session oracle's finding line, or the
// sanitizer's kind and the top frames of the project's stack.
std::string SignatureOf(const std::string& report, const std::string& kind) {
  std::istringstream in(report);
  std::string line, sig;
  static const std::regex kFinding(R"(^finding: (\S+) at step \d+: (.*)$)");
  static const std::regex kSummary(R"(SUMMARY: \w+Sanitizer: (\S+))");
  static const std::regex kFrame(R"(^\s*#\d+ 0x[0-9a-f]+ in (\S+))");
  static const std::regex kRuntime(R"(runtime error: (.*))");
  std::vector<std::string> frames;
  std::string finding, summary, runtime;
  while (std::getline(in, line)) {
    std::smatch m;
    if (finding.empty() && std::regex_search(line, m, kFinding)) {
      std::string d = m[2];
      d = std::regex_replace(d, std::regex(R"(0x[0-9a-f]+|\d+)"), "#");
      finding = std::string(m[1]) + ": " + d;
    } else if (summary.empty() && std::regex_search(line, m, kSummary)) {
      summary = m[1];
    } else if (runtime.empty() && std::regex_search(line, m, kRuntime)) {
      runtime = std::regex_replace(std::string(m[1]), std::regex(R"(0x[0-9a-f]+|-?\d+)"), "#");
    } else if (frames.size() < 3 && std::regex_search(line, m, kFrame)) {
      const std::string fn = m[1];
      // Skip the sanitizer runtime and libFuzzer frames.
      if (fn.find("__sanitizer") == 0 || fn.find("__asan") == 0 || fn.find("__ubsan") == 0 || fn.find("fuzzer::") == 0 ||
          fn.find("abort") != std::string::npos || fn.find("raise") != std::string::npos || fn == "__GI_raise" ||
          fn.find("__interceptor") == 0 || fn.find("__libc") == 0 || fn.find("pthread_kill") != std::string::npos)
        continue;
      frames.push_back(fn);
    }
  }
  if (!finding.empty()) return "oracle " + finding;
  sig = kind + (summary.empty() ? "" : " " + summary) + (runtime.empty() ? "" : " (" + runtime + ")");
  for (const std::string& f : frames) sig += " < " + f;
  return sig;
}

std::string Hash8(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  char b[9];
  std::snprintf(b, sizeof b, "%08x", h);
  return b;
}

std::string NowIso() {
  const std::time_t t = std::time(nullptr);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return b;
}

std::size_t FilesIn(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return 0;
  return static_cast<std::size_t>(std::count_if(fs::directory_iterator(dir, ec), fs::directory_iterator(),
                                                [](const fs::directory_entry& e) { return e.is_regular_file(); }));
}

json LoadJson(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return json::object();
  try {
    return json::parse(in);
  } catch (const json::exception&) {
    return json::object();
  }
}

}  // namespace

int RunCampaign(const CampaignCommand& cmd, std::FILE* out, std::FILE* err) {
  const fs::path source = cmd.source_dir.empty() ? conformance::RepositoryDir() : fs::path(cmd.source_dir);
  const fs::path fuzzers = cmd.fuzzers_dir.empty() ? DefaultFuzzersDir(source) : fs::path(cmd.fuzzers_dir);
  if (!fs::is_directory(fuzzers)) {
    std::fprintf(err, "rdmapct fuzz campaign: error: no fuzzer binaries in %s (build them with fuzz/build.sh, or give --fuzzers DIR)\n",
                 fuzzers.c_str());
    return kExitUsage;
  }
  // The harnesses to run.
  std::vector<std::string> names;
  const bool all = std::count(cmd.harnesses.begin(), cmd.harnesses.end(), "all") > 0 || cmd.harnesses.empty();
  if (all) {
    for (const auto& e : fs::directory_iterator(fuzzers)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("fuzz_", 0) == 0 && e.is_regular_file() && n.find('.') == std::string::npos &&
          (fs::status(e.path()).permissions() & fs::perms::owner_exec) != fs::perms::none)
        names.push_back(n);
    }
    std::sort(names.begin(), names.end());
  } else {
    names = cmd.harnesses;
  }
  std::vector<Harness> harnesses;
  for (const std::string& n : names) {
    Harness h{n, fuzzers / n, {}, {}};
    if (!fs::exists(h.binary)) {
      std::fprintf(err, "rdmapct fuzz campaign: error: no harness %s in %s\n", n.c_str(), fuzzers.c_str());
      return kExitUsage;
    }
    if (!IsLibFuzzer(h.binary)) {
      std::fprintf(err, "rdmapct fuzz campaign: error: %s is not a libFuzzer binary (build the fuzz preset: fuzz/build.sh)\n",
                   h.binary.c_str());
      return kExitUsage;
    }
    for (const fs::path& d : {fuzzers / (n + ".dict"), source / "fuzz" / (n + ".dict")}) {
      if (fs::exists(d)) {
        h.flags.push_back("-dict=" + d.string());
        break;
      }
    }
    for (const fs::path& o : {fuzzers / (n + ".options"), source / "fuzz" / (n + ".options")}) {
      if (fs::exists(o)) {
        for (const std::string& f : OptionsFlags(o)) {
          if (f.rfind("-dict=", 0) != 0) h.flags.push_back(f);
        }
        break;
      }
    }
    for (const fs::path& d : {source / "corpus" / n, source / "corpus" / "regressions" / n}) {
      if (fs::is_directory(d)) h.seeds.push_back(d);
    }
    harnesses.push_back(std::move(h));
  }
  if (harnesses.empty()) {
    std::fprintf(err, "rdmapct fuzz campaign: error: no fuzz_* harness in %s\n", fuzzers.c_str());
    return kExitUsage;
  }

  const fs::path root = cmd.out_dir;
  std::error_code ec;
  fs::create_directories(root / "logs", ec);
  if (ec) {
    std::fprintf(err, "rdmapct fuzz campaign: error: cannot create %s: %s\n", root.c_str(), ec.message().c_str());
    return kExitUsage;
  }
  // Known findings of earlier campaigns (deduplication across nights).
  json known = LoadJson(root / "findings.json");
  if (!known.is_object()) known = json::object();
  const auto start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  // A tenth of the budget (at most 10 min) is kept for merging, replay and minimization.
  const long total = static_cast<long>(cmd.time.count());
  const long reserve = std::min<long>(600, total / 10);
  json stats;
  stats["started"] = NowIso();
  stats["time_budget_s"] = total;
  stats["jobs"] = cmd.jobs;
  stats["harnesses"] = json::object();
  if (!cmd.faults.empty()) {
    std::string joined;
    for (const std::string& f : cmd.faults) joined += (joined.empty() ? "" : ",") + f;
    setenv("RDMAPCT_SESSION_FAULTS", joined.c_str(), 1);
    stats["session_faults"] = joined;
  }
  int new_findings = 0;

  for (std::size_t i = 0; i < harnesses.size(); ++i) {
    const Harness& h = harnesses[i];
    const long left = total - reserve - static_cast<long>(elapsed());
    const long slice = std::max<long>(1, left / static_cast<long>(harnesses.size() - i));
    const fs::path corpus = root / "corpus" / h.name;
    const fs::path artifacts = root / "artifacts" / h.name;
    fs::create_directories(corpus, ec);
    fs::create_directories(artifacts, ec);
    std::set<std::string> before;
    for (const auto& e : fs::directory_iterator(artifacts)) before.insert(e.path().filename().string());
    const std::size_t corpus_before = FilesIn(corpus);

    std::string command = Quote(h.binary.string()) + " -fork=" + std::to_string(std::max(1, cmd.jobs)) +
                          " -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=" +
                          std::to_string(slice) + " -artifact_prefix=" + Quote(artifacts.string() + "/") +
                          " -print_final_stats=1";
    for (const std::string& f : h.flags) command += " " + Quote(f);
    command += " " + Quote(corpus.string());
    for (const fs::path& s : h.seeds) command += " " + Quote(s.string());
    if (!cmd.quiet) {
      std::fprintf(out, "[%6.0fs] %s: %lds, %d job%s, corpus %zu + seeds\n", elapsed(), h.name.c_str(), slice, cmd.jobs,
                   cmd.jobs == 1 ? "" : "s", corpus_before);
      std::fflush(out);
    }
    std::ofstream log(root / "logs" / (h.name + ".log"), std::ios::app);
    Progress p;
    auto last_print = Clock::now();
    const int rc = RunLogged(command, log, [&](const std::string& line) {
      if (!ParseProgress(line, p) || cmd.quiet) return;
      if (Clock::now() - last_print < std::chrono::seconds(10)) return;
      last_print = Clock::now();
      std::fprintf(out, "[%6.0fs]   %s: %ld execs, %ld exec/s, cov %ld, ft %ld, corpus %ld, crash/timeout/oom %ld/%ld/%ld\n",
                   elapsed(), h.name.c_str(), p.runs, p.exec_per_s, p.cov, p.ft, p.corp, p.crashes, p.timeouts, p.ooms);
      std::fflush(out);
    });

    // New artifacts: replay for the signature, dedupe, minimize, reproduce.
    json harness_findings = json::array();
    for (const auto& e : fs::directory_iterator(artifacts)) {
      const std::string file = e.path().filename().string();
      if (before.count(file) || !e.is_regular_file()) continue;
      const std::string kind = file.substr(0, file.find('-'));
      int replay_rc = 0;
      const std::string report = Capture("timeout 60 " + Quote(h.binary.string()) + " -runs=3 " + Quote(e.path().string()), replay_rc);
      const std::string sig = h.name + ": " + SignatureOf(report, kind);
      json& k = known[sig];
      if (k.is_null()) {
        ++new_findings;
        const fs::path dir = root / "findings" / (h.name + "-" + Hash8(sig));
        fs::create_directories(dir, ec);
        fs::copy_file(e.path(), dir / "input", fs::copy_options::overwrite_existing, ec);
        // Minimize (crashes only; libFuzzer shrinks while the crash stays).
        fs::path reproducer = dir / "input";
        const long remaining = total - static_cast<long>(elapsed());
        if (cmd.minimize && kind == "crash" && remaining >= 4) {
          // At most 30 s, and never past the budget.
          const long budget = std::min<long>(30, remaining / 2);
          std::ofstream mlog(dir / "minimize.log");
          RunLogged("timeout " + std::to_string(budget + 10) + " " + Quote(h.binary.string()) +
                        " -minimize_crash=1 -max_total_time=" + std::to_string(budget) + " -runs=100000 " +
                        "-exact_artifact_path=" + Quote((dir / "minimized").string()) + " " + Quote(e.path().string()),
                    mlog, {});
          if (fs::exists(dir / "minimized")) reproducer = dir / "minimized";
        }
        std::ofstream(dir / "report.txt") << report;
        std::ofstream(dir / "reproduce.sh") << "#!/bin/sh\n# " << sig << "\n"
                                           << (cmd.faults.empty() ? "" : "RDMAPCT_SESSION_FAULTS=" + stats.value("session_faults", std::string()) + " ")
                                           << Quote(h.binary.string()) << " " << Quote(reproducer.string()) << "\n";
        if (h.name == "fuzz_session") {
          std::FILE* devnull = std::fopen((dir / "repro.log").c_str(), "w");
          FuzzReproCommand repro;
          repro.input = reproducer.string();
          repro.out_dir = dir.string();
          repro.faults = cmd.faults;
          RunFuzzRepro(repro, devnull ? devnull : err, devnull ? devnull : err);
          if (devnull) std::fclose(devnull);
        }
        k = json{{"harness", h.name}, {"kind", kind}, {"first_seen", NowIso()},
                 {"first_seen_campaign_s", elapsed()}, {"dir", dir.string()}, {"count", 0}};
        if (!cmd.quiet) std::fprintf(out, "[%6.0fs]   NEW finding %s\n            %s\n", elapsed(), dir.filename().c_str(), sig.c_str());
      }
      k["count"] = k.value("count", 0) + 1;
      harness_findings.push_back(json{{"artifact", file}, {"signature", sig}, {"dir", k["dir"]}});
    }

    // Merge: keep only inputs that add coverage (bounded by the reserve).
    std::size_t corpus_after = FilesIn(corpus);
    const long merge_left = total - static_cast<long>(elapsed());
    if (merge_left >= 5) {
      const fs::path merged = root / "corpus" / (h.name + ".merged");
      fs::remove_all(merged, ec);
      fs::create_directories(merged, ec);
      std::ofstream mlog(root / "logs" / (h.name + ".merge.log"));
      const long merge_time = std::min<long>(merge_left, std::max<long>(5, std::min<long>(reserve / static_cast<long>(harnesses.size()), 120)));
      const int mrc = RunLogged("timeout " + std::to_string(merge_time) + " " + Quote(h.binary.string()) +
                                    " -merge=1 -rss_limit_mb=4096 " + Quote(merged.string()) + " " + Quote(corpus.string()),
                                mlog, {});
      if (mrc == 0 && FilesIn(merged) > 0) {
        fs::remove_all(corpus, ec);
        fs::rename(merged, corpus, ec);
        corpus_after = FilesIn(corpus);
      } else {
        fs::remove_all(merged, ec);
      }
    }
    stats["harnesses"][h.name] = json{{"seconds", slice},
                                      {"exit_status", rc},
                                      {"execs", p.runs},
                                      {"exec_per_s", p.exec_per_s},
                                      {"coverage", p.cov},
                                      {"features", p.ft},
                                      {"corpus_before", corpus_before},
                                      {"corpus_after", corpus_after},
                                      {"crashes", p.crashes},
                                      {"timeouts", p.timeouts},
                                      {"ooms", p.ooms},
                                      {"artifacts", harness_findings}};
  }

  stats["finished"] = NowIso();
  stats["seconds"] = elapsed();
  stats["new_findings"] = new_findings;
  stats["findings"] = known;
  std::ofstream(root / "findings.json") << known.dump(2) << "\n";
  std::ofstream(root / "stats.json") << stats.dump(2) << "\n";

  // summary.md: one table per campaign.
  std::ofstream md(root / "summary.md");
  md << "# rdmapct fuzz campaign, " << stats["started"].get<std::string>() << "\n\n"
     << "Budget " << total << " s, ran " << static_cast<long>(elapsed()) << " s, " << cmd.jobs << " job(s) per harness.\n\n"
     << "| harness | seconds | execs | exec/s | coverage | corpus (before -> after) | crash/timeout/oom |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const auto& [name, s] : stats["harnesses"].items()) {
    md << "| " << name << " | " << s["seconds"] << " | " << s["execs"] << " | " << s["exec_per_s"] << " | " << s["coverage"]
       << " | " << s["corpus_before"] << " -> " << s["corpus_after"] << " | " << s["crashes"] << "/" << s["timeouts"] << "/"
       << s["ooms"] << " |\n";
  }
  md << "\n## Findings (" << known.size() << " distinct, " << new_findings << " new in this campaign)\n\n";
  for (const auto& [sig, f] : known.items()) {
    md << "- `" << sig << "`: first seen " << f.value("first_seen", std::string()) << ", " << f.value("count", 0)
       << " artifact(s), " << f.value("dir", std::string()) << "\n";
  }
  md.close();
  std::fprintf(out, "campaign done in %.0f s: %zu harness%s, %d new finding%s (%zu known); %s/stats.json, %s/summary.md\n",
               elapsed(), harnesses.size(), harnesses.size() == 1 ? "" : "es", new_findings, new_findings == 1 ? "" : "s",
               known.size(), root.c_str(), root.c_str());
  return new_findings > 0 ? kExitFail : kExitOk;
}

}  // namespace rdmapct::cli
