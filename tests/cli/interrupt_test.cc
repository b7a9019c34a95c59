// SIGINT / SIGTERM during `rdmapct conform`, `rdmapct load` and `rdmapct
// replay --decode` (issue 18:
// "Ctrl-C loses nothing already done"): the built binary runs as a child,
// gets the signal mid-run, and must exit 130 with every requested report
// written, well-formed and marked "INTERRUPTED, partial".
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/cli_test_util.h"

namespace rdmapct::cli {
namespace {

namespace fs = std::filesystem;
using test_util::ReadFile;
using testing::EndsWith;
using testing::HasSubstr;
using testing::StartsWith;

// A TCP target that completes the handshake (the kernel does, from the
// backlog) and never says a word: every case waits for its MPA Reply.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ADD_FAILURE() << "cannot listen on the loopback";
    }
    port_ = ntohs(a.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  std::string Uri() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
  // Waits up to `ms` for the first connection (accepted, kept open).
  bool AwaitConnection(int ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms) != 1) return false;
    accepted_.push_back(::accept(fd_, nullptr, nullptr));
    return accepted_.back() >= 0;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::vector<int> accepted_;
};

// `rdmapct ARGS` as a child with stdout and stderr on pipes.
class Child {
 public:
  explicit Child(std::vector<std::string> args) {
    int out[2], err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0) ADD_FAILURE() << "pipe";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::close(out[0]), ::close(err[0]), ::close(out[1]), ::close(err[1]);
      args.insert(args.begin(), RDMAPCT_BINARY);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(RDMAPCT_BINARY, argv.data());
      ::_exit(127);
    }
    ::close(out[1]), ::close(err[1]);
    out_ = out[0], err_ = err[0];
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) ::kill(pid_, SIGKILL), ::waitpid(pid_, nullptr, 0);
    ::close(out_), ::close(err_);
  }
  // Reads stderr until it holds `text` (or `ms` pass); true if it does.
  bool AwaitStderr(const std::string& text, int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (err.find(text) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      pollfd p{err_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1 || !Drain(err_, err)) return false;
    }
    return true;
  }
  void Signal(int sig) { ::kill(pid_, sig); }
  // Waits until the child catches `sig` (its SigCgt mask in /proc), so a
  // signal sent next reaches the handler, not the default action.
  bool AwaitHandler(int sig, int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      const std::string status = ReadFile("/proc/" + std::to_string(pid_) + "/status");
      const std::size_t at = status.find("SigCgt:\t");
      if (at != std::string::npos && (std::stoull(status.substr(at + 8, 16), nullptr, 16) >> (sig - 1)) & 1)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // Reads both pipes to their end and returns the exit status (-1: killed,
  // or still running after `ms`, then killed).
  int Wait(int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    bool out_open = true, err_open = true;
    while ((out_open || err_open) && std::chrono::steady_clock::now() < until) {
      pollfd p[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
      if (::poll(p, 2, 100) <= 0) continue;
      if (p[0].revents) out_open = Drain(out_, out);
      if (p[1].revents) err_open = Drain(err_, err);
    }
    int raw = 0;
    if (out_open || err_open) ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &raw, 0);
    reaped_ = true;
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }
  std::string out, err;

 private:
  static bool Drain(int fd, std::string& into) {
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) into.append(buf, static_cast<std::size_t>(n));
    return n > 0;
  }
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  bool reaped_ = false;
};

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("rdmapct_interrupt_test." + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct Reports {
  fs::path json, junit, html;
};

std::vector<std::string> ConformArgs(const SilentListener& target, const Reports& r, int timeout_ms) {
  return {"conform",  "--target",     target.Uri(), "--keep-going",  "--timeout", std::to_string(timeout_ms),
          "--case",   "rfc5040/*",    "--json",     r.json.string(), "--junit",   r.junit.string(),
          "--report", r.html.string()};
}

// Every report exists, is well-formed as far as we can tell without an XML
// parser, and carries the marker; the JSON lists what did not run.
void ExpectPartialReports(const Reports& r, std::size_t min_not_run) {
  const nlohmann::json j = nlohmann::json::parse(ReadFile(r.json));
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_EQ(j["exit_status"], 130);
  EXPECT_THAT(j["partial_marker"].get<std::string>(), StartsWith("INTERRUPTED, partial: "));
  EXPECT_GE(j["not_run"].size(), min_not_run);
  const std::string xml = ReadFile(r.junit);
  EXPECT_THAT(xml, StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
  EXPECT_THAT(xml, EndsWith("</testsuites>\n"));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"rdmapct\" name=\"INTERRUPTED, partial\">"));
  const std::string html = ReadFile(r.html);
  EXPECT_THAT(html, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(html, EndsWith("</html>\n"));
  EXPECT_THAT(html, HasSubstr("INTERRUPTED, partial: "));
}

TEST(Interrupt, SigintDuringConformFinishesTheCaseInFlightAndWritesEveryReport) {
  SilentListener target;
  const fs::path dir = FreshDir("finish");
  const Reports r{dir / "r.json", dir / "r.xml", dir / "r.html"};
  Child child(ConformArgs(target, r, 300));
  // One case decided (its MPA Reply never came): the run is under way.
  ASSERT_TRUE(child.AwaitStderr("] ERROR  rfc5040/", 30000)) << child.err;
  child.Signal(SIGINT);
  ASSERT_EQ(child.Wait(30000), 130) << child.out << child.err;
  EXPECT_THAT(child.err, HasSubstr("rdmapct conform: interrupted: finishing the work in flight"));
  EXPECT_THAT(child.out, HasSubstr("Result: INTERRUPTED, partial: "));
  ExpectPartialReports(r, 1);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(r.json));
  EXPECT_GE(j["cases"].size(), 1u);  // the verdicts so far are kept
}

TEST(Interrupt, SecondSignalAbandonsTheCaseInFlight) {
  SilentListener target;
  const fs::path dir = FreshDir("abandon");
  const Reports r{dir / "r.json", dir / "r.xml", dir / "r.html"};
  // A wait of ten minutes for the first MPA Reply: only abandoning ends it.
  Child child(ConformArgs(target, r, 600000));
  ASSERT_TRUE(target.AwaitConnection(30000));
  ASSERT_TRUE(child.AwaitHandler(SIGINT, 30000));
  child.Signal(SIGINT);
  ASSERT_TRUE(child.AwaitStderr("interrupted: finishing", 30000)) << child.err;
  child.Signal(SIGTERM);
  ASSERT_EQ(child.Wait(60000), 130) << child.out << child.err;
  EXPECT_THAT(child.err, HasSubstr("interrupted again: abandoning the work in flight"));
  ExpectPartialReports(r, 1);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(r.json));
  EXPECT_EQ(j["cases"].size(), 0u);  // the abandoned case says nothing about the target
}

// A CI timeout sends SIGTERM and will not wait: the case in flight is
// abandoned at once and the reports are written.
TEST(Interrupt, SigtermAbandonsAtOnce) {
  SilentListener target;
  const fs::path dir = FreshDir("sigterm");
  const Reports r{dir / "r.json", dir / "r.xml", dir / "r.html"};
  Child child(ConformArgs(target, r, 600000));
  ASSERT_TRUE(target.AwaitConnection(30000));
  ASSERT_TRUE(child.AwaitHandler(SIGTERM, 30000));
  child.Signal(SIGTERM);
  ASSERT_EQ(child.Wait(60000), 130) << child.out << child.err;
  EXPECT_THAT(child.err, HasSubstr("terminated (SIGTERM): abandoning the work in flight"));
  ExpectPartialReports(r, 1);
}

TEST(Interrupt, SigintDuringLoadReportsWhatWasCarried) {
  Child child({"load", "--target", "reference", "--seconds", "600", "--size", "64"});
  ASSERT_TRUE(child.AwaitHandler(SIGINT, 30000));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let it carry a few messages
  child.Signal(SIGINT);
  ASSERT_EQ(child.Wait(60000), 130) << child.out << child.err;
  EXPECT_THAT(child.out, StartsWith("rdmapct load: INTERRUPTED, partial: write 64 octets"));
}

// The first `records` records of a classic pcap file (its 24-octet header
// kept), and the rest.
std::pair<std::string, std::string> SplitPcap(const std::string& pcap, int records) {
  std::size_t at = 24;
  for (int r = 0; r < records && at + 16 <= pcap.size(); ++r) {
    const auto* h = reinterpret_cast<const unsigned char*>(pcap.data() + at + 8);  // incl_len, little-endian
    at += 16 + (h[0] | h[1] << 8 | h[2] << 16 | static_cast<std::size_t>(h[3]) << 24);
  }
  return {pcap.substr(0, at), pcap.substr(at)};
}

// `replay --decode` reading a FIFO: the first half of a capture is written,
// then SIGINT, then the rest. Nothing read after the signal is decoded,
// stdout holds at most what the first half alone decodes to, and stderr
// ends with the INTERRUPTED line (exit 130). Today --decode reads the whole
// capture before it decodes (DecodeCaptureFile), so a signal while reading
// prints no frame; a streaming --decode (issue 16) would print the first
// half's frames, which this test accepts too.
TEST(Interrupt, SigintDuringReplayDecodePrintsWhatWasRead) {
  const fs::path dir = FreshDir("replay");
  const std::string pcap =
      ReadFile(fs::path(test_util::SourceDir()) / "pcaps/rfc5040_7.2_read-req-invalid-src-stag.pcap");
  const auto [head, tail] = SplitPcap(pcap, 6);
  ASSERT_FALSE(tail.empty());
  test_util::WriteFile(dir / "head.pcap", head);
  const test_util::Outcome alone = test_util::RunRdmapctIn("replay head.pcap --decode", dir);
  const test_util::Outcome whole = test_util::RunRdmapctIn(
      "replay pcaps/rfc5040_7.2_read-req-invalid-src-stag.pcap --decode", test_util::SourceDir());
  ASSERT_NE(alone.out, whole.out);  // the test could tell the halves apart
  const fs::path fifo = dir / "capture.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Child child({"replay", fifo.string(), "--decode"});
  ASSERT_TRUE(child.AwaitHandler(SIGINT, 30000));
  const int fd = ::open(fifo.c_str(), O_WRONLY);  // returns once the child opened it
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, head.data(), head.size()), static_cast<ssize_t>(head.size()));
  // Let it read the first half (the FIFO is empty again) and decode it.
  for (int n = 1, waited = 0; n > 0 && waited < 30000; waited += 10) {
    if (::ioctl(fd, FIONREAD, &n) != 0) n = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  child.Signal(SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(::write(fd, tail.data(), tail.size()), static_cast<ssize_t>(tail.size()));
  ::close(fd);
  ASSERT_EQ(child.Wait(60000), 130) << child.err;
  EXPECT_EQ(alone.out.rfind(child.out, 0), 0u) << "not a prefix of the first half's decode:\n" << child.out;
  EXPECT_THAT(child.err, EndsWith("rdmapct replay: INTERRUPTED, partial: the frames above are those decoded before "
                                  "the signal\n"));
}

}  // namespace
}  // namespace rdmapct::cli
