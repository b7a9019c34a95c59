#include "fuzz/session_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

namespace rdmapct::fuzz {

using Clock = std::chrono::steady_clock;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

constexpr std::chrono::milliseconds kPoll{20};

// Field `index` of /proc/<pid>/statm, in KiB.
std::size_t StatmKb(const std::string& pid, int index) {
  std::ifstream in("/proc/" + pid + "/statm");
  std::size_t v = 0;
  for (int i = 0; i <= index && in >> v; ++i) {
  }
  return in ? v * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) / 1024 : 0;
}

bool ReadAll(int fd, void* data, std::size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool WriteAll(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<std::size_t>(put);
  }
  return true;
}

bool SendFrame(int fd, const std::string& body) {
  const uint32_t n = static_cast<uint32_t>(body.size());
  return WriteAll(fd, &n, sizeof n) && WriteAll(fd, body.data(), body.size());
}

std::optional<std::string> ReceiveFrame(int fd) {
  uint32_t n = 0;
  if (!ReadAll(fd, &n, sizeof n) || n > (64u << 20)) return std::nullopt;
  std::string body(n, '\0');
  if (!ReadAll(fd, body.data(), n)) return std::nullopt;
  return body;
}

// "steps\n" then "oracle\tstep\trequirement\tshape\tdescription\n" per finding.
std::string Encode(const OracleResult& r) {
  std::string s = std::to_string(r.steps) + "\n";
  for (const Finding& f : r.findings) {
    std::string d = f.description;
    for (char& c : d) c = (c == '\n' || c == '\t') ? ' ' : c;
    s += f.oracle + "\t" + std::to_string(f.step) + "\t" + f.requirement + "\t" + f.shape + "\t" + d + "\n";
  }
  return s;
}

OracleResult Decode(const std::string& s) {
  OracleResult r;
  std::istringstream in(s);
  std::string line;
  if (std::getline(in, line)) r.steps = std::stoul(line);
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    for (std::size_t at = 0; f.size() < 4;) {
      const auto tab = line.find('\t', at);
      if (tab == std::string::npos) break;
      f.push_back(line.substr(at, tab - at));
      at = tab + 1;
      if (f.size() == 4) f.push_back(line.substr(at));
    }
    if (f.size() != 5) continue;
    r.findings.push_back({f[0], std::stoul(f[1]), f[4], f[2], f[3]});
  }
  return r;
}

int g_child_out = -1;
std::size_t g_child_memory_mb = 0;

// A failed allocation in the child ends the session there and then, with
// no unwinding (it may happen under a noexcept frame): the answer is a
// `resource` finding and the parent starts a new child.
void OutOfMemory() {
  OracleResult r;
  r.findings = {{"resource", 0, "session over " + std::to_string(g_child_memory_mb) + " MB"}};
  std::set_new_handler(nullptr);  // should even this string not fit
  SendFrame(g_child_out, Encode(r));
  _exit(3);
}

// The child: sessions in, results out, until the parent closes the pipe.
[[noreturn]] void ChildLoop(int in, int out, const model::FaultSet& faults, const ConnectionLimits& limits) {
  signal(SIGINT, SIG_IGN);  // the parent decides what an interrupt ends
  signal(SIGPIPE, SIG_IGN);
  if (!kAsan) {
    // An allocation past the cap fails at once (bad_alloc) instead of growing
    // until the parent's next poll. ASan reserves its shadow as data, so only
    // the poll holds there.
    const rlim_t have = StatmKb("self", 5) * 1024;
    const rlim_t cap = std::max<rlim_t>(limits.memory_mb << 20, have + (64u << 20));
    const rlimit rl{cap, cap};
    setrlimit(RLIMIT_DATA, &rl);
  }
  g_child_out = out;
  g_child_memory_mb = limits.memory_mb;
  std::set_new_handler(OutOfMemory);
  while (const auto frame = ReceiveFrame(in)) {
    proto::FuzzSession s;
    OracleResult r;
    if (s.ParseFromString(*frame)) r = RunSessionOracles(s, faults);
    if (!SendFrame(out, Encode(r))) break;
  }
  _exit(0);
}

}  // namespace

std::size_t SelfRssKb() { return StatmKb("self", 1); }

SessionWorker::SessionWorker(const model::FaultSet& faults, const ConnectionLimits& limits)
    : faults_(faults), limits_(limits) {}

SessionWorker::~SessionWorker() { Kill(); }

bool SessionWorker::Start() {
  int down[2], up[2];
  if (pipe2(down, O_CLOEXEC) != 0) return false;
  if (pipe2(up, O_CLOEXEC) != 0) {
    close(down[0]);
    close(down[1]);
    return false;
  }
  // A child that died between sessions makes the next write fail (EPIPE),
  // not kill this process.
  signal(SIGPIPE, SIG_IGN);
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    ChildLoop(down[0], up[1], faults_, limits_);
  }
  close(down[0]);
  close(up[1]);
  if (pid < 0) {
    close(down[1]);
    close(up[0]);
    return false;
  }
  pid_ = pid;
  to_child_ = down[1];
  from_child_ = up[0];
  return true;
}

void SessionWorker::Kill() {
  if (pid_ < 0) return;
  kill(pid_, SIGKILL);
  close(to_child_);
  close(from_child_);
  waitpid(pid_, nullptr, 0);
  pid_ = to_child_ = from_child_ = -1;
}

WorkerResult SessionWorker::Run(const proto::FuzzSession& s, std::optional<Clock::time_point> deadline,
                                const std::atomic<int>* stop) {
  WorkerResult result;
  if (pid_ < 0 && !Start()) {
    // No child (fork refused): run in-process, without the caps.
    result.oracles = RunSessionOracles(s, faults_);
    return result;
  }
  const auto started = Clock::now();
  if (!SendFrame(to_child_, s.SerializeAsString())) {
    Kill();
    ++restarts_;
    result.oracles.findings = {{"crash", 0, "the session process was gone before the session"}};
    return result;
  }
  if (const auto frame = Await(started, deadline, stop, result)) {
    result.oracles = Decode(*frame);
    // The child ends itself after a failed allocation.
    if (!result.oracles.findings.empty() && result.oracles.findings.front().oracle == "resource") {
      Kill();
      ++restarts_;
    }
  }
  // A child grown past half its cap between sessions (allocator caches, ASan
  // quarantine) is replaced, so the next session starts with its whole cap.
  if (pid_ >= 0 && last_rss_kb_ > limits_.memory_mb * 1024 / 2) {
    Kill();
    ++restarts_;
  }
  return result;
}

// Waits for the child's answer, polling its RSS, the session's time, the
// run's deadline and the stop flag; nullopt when the session was cut.
std::optional<std::string> SessionWorker::Await(const Clock::time_point started,
                                                std::optional<Clock::time_point> deadline, const std::atomic<int>* stop,
                                                WorkerResult& result) {
  const std::string pid = std::to_string(pid_);
  std::string why;
  for (;;) {
    pollfd p{from_child_, POLLIN, 0};
    const int n = poll(&p, 1, static_cast<int>(kPoll.count()));
    if (n > 0) {
      auto frame = ReceiveFrame(from_child_);
      last_rss_kb_ = StatmKb(pid, 1);
      if (frame) return frame;
      int status = 0;
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      close(to_child_);
      close(from_child_);
      pid_ = to_child_ = from_child_ = -1;
      ++restarts_;
      why = WIFSIGNALED(status) ? "the session process died of signal " + std::to_string(WTERMSIG(status))
                                : "the session process exited with status " + std::to_string(WEXITSTATUS(status));
      result.oracles.findings = {{"crash", 0, why}};
      return std::nullopt;
    }
    last_rss_kb_ = StatmKb(pid, 1);
    const auto now = Clock::now();
    if ((deadline && now >= *deadline) || (stop && stop->load() > 0)) {
      result.cut = true;
    } else if (now - started > limits_.time) {
      why = "session ran over " + std::to_string(limits_.time.count()) + " ms";
    } else if (last_rss_kb_ > limits_.memory_mb * 1024) {
      why = "session over " + std::to_string(limits_.memory_mb) + " MB";
    } else {
      continue;
    }
    if (!why.empty()) result.oracles.findings = {{"resource", 0, why}};
    break;
  }
  Kill();
  ++restarts_;
  return std::nullopt;
}

}  // namespace rdmapct::fuzz
