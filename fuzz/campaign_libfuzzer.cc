#include "fuzz/campaign_libfuzzer.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <regex>
#include <sstream>

namespace rdmapct::fuzz::campaign {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool ParseProgress(const std::string& line, Progress& p) {
  static const std::regex kRuns(R"(^#(\d+)[:\s])");
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
  static const std::regex kRss(R"(rss: (\d+)Mb)");
  if (std::regex_search(line, m, kRss)) p.rss_mb = std::stol(m[1]);
  static const std::regex kCounts(R"(oom/timeout/crash: (\d+)/(\d+)/(\d+))");
  if (std::regex_search(line, m, kCounts)) {
    p.ooms = std::stol(m[1]);
    p.timeouts = std::stol(m[2]);
    p.crashes = std::stol(m[3]);
  }
  return true;
}

namespace {

// sh -c COMMAND in a process group of its own (libFuzzer's fork jobs
// included), stdout and stderr on a pipe; -1 when it cannot start.
pid_t SpawnGroup(const std::string& command, int& out_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::string c = command;
  char sh[] = "/bin/sh", dash_c[] = "-c";
  char* argv[] = {sh, dash_c, c.data(), nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (pid < 0) close(fds[0]);
  out_fd = fds[0];
  return pid;
}

}  // namespace

// Runs a shell command, every output line to `log` and to `on_line`. When
// `stop` is set, the command's process group gets SIGTERM (libFuzzer
// prints its final stats and exits), and SIGKILL 10 s later.
int RunLogged(const std::string& command, std::ofstream& log, const std::function<void(const std::string&)>& on_line,
              const std::atomic<int>* stop, pid_t* group) {
  log << "$ " << command << "\n";
  int fd = -1;
  const pid_t pid = SpawnGroup(command, fd);
  if (pid < 0) return -1;
  if (group) *group = pid;  // SpawnGroup made the child its group's leader
  std::string pending;
  std::optional<std::chrono::steady_clock::time_point> killed_at;
  for (;;) {
    if (stop && stop->load() > 0 && !killed_at) {
      kill(-pid, SIGTERM);
      killed_at = std::chrono::steady_clock::now();
    }
    if (killed_at && std::chrono::steady_clock::now() - *killed_at > std::chrono::seconds(10)) kill(-pid, SIGKILL);
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos || pending.size() >= 16384;) {
      const std::size_t len = nl == std::string::npos ? pending.size() : nl;
      const std::string line = pending.substr(0, len);
      pending.erase(0, nl == std::string::npos ? len : len + 1);
      log << line << "\n";
      if (on_line) on_line(line);
    }
  }
  if (!pending.empty()) {
    log << pending << "\n";
    if (on_line) on_line(pending);
  }
  close(fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  log.flush();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

long GroupRssMb(pid_t group) {
  long pages = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so parse after ')'.
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    long ppid = 0, pgrp = 0;
    if (!(rest >> state >> ppid >> pgrp) || pgrp != group) continue;
    std::ifstream statm(e.path() / "statm");
    long size = 0, resident = 0;
    if (statm >> size >> resident) pages += resident;
  }
  return pages * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
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
  static const std::regex kSignature(R"(^signature: (.*)$)");
  bool signed_finding = false;
  static const std::regex kSummary(R"(SUMMARY: \w+Sanitizer: (\S+))");
  static const std::regex kFrame(R"(^\s*#\d+ 0x[0-9a-f]+ in (\S+))");
  static const std::regex kRuntime(R"(runtime error: (.*))");
  std::vector<std::string> frames;
  std::string finding, summary, runtime;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!signed_finding && std::regex_search(line, m, kSignature)) {
      finding = m[1];  // fuzz_session's own, of its first finding: oracle, requirement, shape
      signed_finding = true;
    } else if (finding.empty() && std::regex_search(line, m, kFinding)) {
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
      if (fn.find("__sanitizer") == 0 || fn.find("__asan") == 0 || fn.find("__ubsan") == 0 ||
          fn.find("fuzzer::") == 0 || fn.find("abort") != std::string::npos || fn.find("raise") != std::string::npos ||
          fn == "__GI_raise" || fn.find("__interceptor") == 0 || fn.find("__libc") == 0 ||
          fn.find("pthread_kill") != std::string::npos)
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

}  // namespace rdmapct::fuzz::campaign
