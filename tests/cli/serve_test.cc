// `rdmapct serve` end to end: the built binary runs as a child process on
// 127.0.0.1 port 0 (it prints the port it got), the whole suite runs against
// it over TCP, and every case must get the verdict it gets from the same
// reference configuration in-process (same case ids, same verdicts), with
// and without fault switches. SIGTERM / SIGINT stop it with exit status 0;
// bad flags and an address in use are one line and exit status 2.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "conformance/runner.h"
#include "targets/target_uri.h"
#include "targets/tcp.h"
#include "targets/tcp_listen.h"
#include "tests/cli/cli_test_util.h"

#ifndef RDMAPCT_BINARY
#error "RDMAPCT_BINARY (path of the rdmapct executable) must be defined by the build"
#endif

extern char** environ;

namespace rdmapct::cli {
namespace {

using test_util::ReadFile;

namespace fs = std::filesystem;
using conformance::CaseResult;
using conformance::RunResult;
using conformance::Verdict;
using testing::HasSubstr;
using testing::StartsWith;

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

fs::path TempPath(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("rdmapct_serve_test." + std::to_string(::getpid()));
  fs::create_directories(dir);
  static int counter = 0;
  return dir / (name + std::to_string(++counter));
}

// `rdmapct serve ARGS` as a child: stdout on a pipe (the "listening on"
// line), stderr in a file. The destructor kills a child still running.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> args) : err_path_(TempPath("stderr")) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    args.insert(args.begin(), {RDMAPCT_BINARY, "serve"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, RDMAPCT_BINARY, &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    out_fd_ = out[0];
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
  }

  // The first stdout line, waiting at most 20 s for it (a stuck child
  // fails the test instead of hanging it). Empty if the child exits first.
  std::string FirstLine() {
    std::string line;
    while (line.find('\n') == std::string::npos) {
      pollfd p{out_fd_, POLLIN, 0};
      if (poll(&p, 1, 20000) <= 0) break;
      char buf[256];
      const ssize_t n = read(out_fd_, buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    return line.substr(0, line.find('\n'));
  }

  // "127.0.0.1:PORT" from the "listening on" line, or "".
  std::string Address() {
    const std::string line = FirstLine();
    std::smatch m;
    static const std::regex re("listening on (127\\.0\\.0\\.1:[0-9]+) ");
    return std::regex_search(line, m, re) ? m[1].str() : "";
  }

  // Sends `signal` and returns the exit status (-1 if killed by a signal).
  int Stop(int signal = SIGTERM) {
    if (pid_ <= 0) return -2;
    kill(pid_, signal);
    return Wait();
  }
  int Wait() {
    int raw = 0;
    waitpid(pid_, &raw, 0);
    pid_ = -1;
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }
  std::string err() const { return ReadFile(err_path_); }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  fs::path err_path_;
};

std::string Describe(const CaseResult& r) {
  return r.id + ": " + std::string(conformance::VerdictName(r.verdict)) + " (" + r.reason + ")";
}

RunResult RunOver(targets::TargetConnector& connector, wire::Profile profile, int jobs) {
  conformance::RunOptions options;
  options.profile = profile;
  options.jobs = jobs;
  return conformance::RunSuite(options, connector);
}

struct Config {
  wire::Profile profile;
  std::vector<std::string> faults;
};

std::string ConfigName(const ::testing::TestParamInfo<Config>& info) {
  std::string name(wire::ProfileName(info.param.profile));
  for (const std::string& f : info.param.faults) name += "_" + f;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class ServeSameVerdicts : public ::testing::TestWithParam<Config> {};

// The whole suite over TCP, four cases in flight (so serve runs connections
// concurrently), against the same reference configuration in-process. The
// cases where the target is the MPA Initiator run against a second serve
// started with --connect to the suite's listener (docs/target-convention.md
// §10), as the in-process reference connects by itself.
TEST_P(ServeSameVerdicts, WholeSuiteOverTcpMatchesInProcess) {
  const Config& cfg = GetParam();
  std::vector<std::string> args = {"--listen", "127.0.0.1:0", "--profile", std::string(wire::ProfileName(cfg.profile))};
  targets::ConnectorOptions in_process;
  in_process.profile = cfg.profile;
  for (const std::string& f : cfg.faults) {
    args.insert(args.end(), {"--fault", f});
    ASSERT_FALSE(in_process.faults.AddByNames(f).has_value()) << f;
  }
  ServeProcess serve(args);
  const std::string address = serve.Address();
  ASSERT_FALSE(address.empty()) << serve.err();

  std::string error;
  auto reference = targets::MakeConnector("reference", in_process, error);
  ASSERT_NE(reference, nullptr) << error;
  auto tcp = targets::TcpConnector::Create(address, {}, error);
  ASSERT_NE(tcp, nullptr) << error;
  auto listener = targets::TcpListenConnector::Create("127.0.0.1:0", {}, error);
  ASSERT_NE(listener, nullptr) << error;
  std::vector<std::string> connect_args = args;
  connect_args[0] = "--connect";
  connect_args[1] = listener->address();
  ServeProcess initiator(connect_args);
  targets::ListeningConnector both(*tcp, std::move(listener));
  const RunResult expected = RunOver(*reference, cfg.profile, 1);
  const RunResult got = RunOver(both, cfg.profile, 4);
  ASSERT_FALSE(expected.aborted) << expected.abort_reason;
  ASSERT_FALSE(got.aborted) << got.abort_reason;
  ASSERT_EQ(got.cases.size(), expected.cases.size());
  ASSERT_GT(got.cases.size(), 0u);
  for (std::size_t i = 0; i < got.cases.size(); ++i) {
    ASSERT_EQ(got.cases[i].id, expected.cases[i].id);
    EXPECT_EQ(got.cases[i].verdict, expected.cases[i].verdict)
        << "over TCP " << Describe(got.cases[i]) << "\nin-process " << Describe(expected.cases[i]);
  }
  EXPECT_EQ(got.counts, expected.counts);
  EXPECT_THAT(got.target, StartsWith("tcp://" + address + ", target connects to listen://127.0.0.1:"));
  EXPECT_FALSE(got.target_info.empty());
  if (cfg.faults.empty()) {
    EXPECT_EQ(got.counts.fail + got.counts.error, 0u);
  } else {
    EXPECT_GT(got.counts.fail, 0u) << "the fault must be caught over TCP too";
  }
  EXPECT_EQ(serve.Stop(SIGTERM), 0) << serve.err();
  const std::string log = serve.err();
  EXPECT_THAT(log, HasSubstr("rdmapct serve: stopped: "));
  EXPECT_EQ(initiator.Stop(SIGTERM), 0) << initiator.err();
  EXPECT_THAT(initiator.err(), HasSubstr("rdmapct serve: stopped: "));
}

INSTANTIATE_TEST_SUITE_P(Profiles, ServeSameVerdicts,
                         ::testing::Values(Config{wire::Profile::kRfc5040, {}}, Config{wire::Profile::kRfc7306, {}},
                                           Config{wire::Profile::kCommit, {}},
                                           Config{wire::Profile::kRfc5040, {"skip-bounds-check"}},
                                           Config{wire::Profile::kRfc7306, {"skip-access-rights-check"}},
                                           Config{wire::Profile::kCommit, {"terminate-without-terminated-header"}},
                                           Config{wire::Profile::kRfc5040, {"wrong-terminate-code"}}),
                         ConfigName);

// One log line per connection and one per Terminate, then the summary;
// SIGINT stops the server as SIGTERM does.
TEST(Serve, LogsOneLinePerConnectionAndTerminateAndStopsOnSigint) {
  ServeProcess serve({"--listen", "127.0.0.1:0"});
  const std::string address = serve.Address();
  ASSERT_FALSE(address.empty()) << serve.err();
  std::string error;
  auto tcp = targets::TcpConnector::Create(address, {}, error);
  ASSERT_NE(tcp, nullptr) << error;
  conformance::RunOptions options;
  options.filter.sections = {"7.2"};
  const RunResult run = conformance::RunSuite(options, *tcp);
  ASSERT_FALSE(run.aborted) << run.abort_reason;
  ASSERT_EQ(serve.Stop(SIGINT), 0) << serve.err();

  const std::vector<std::string> lines = SplitLines(serve.err());
  ASSERT_FALSE(lines.empty());
  std::size_t connections = 0, terminates = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    EXPECT_THAT(lines[i], StartsWith("[127.0.0.1:")) << lines[i];
    if (lines[i].find(": Terminate ") != std::string::npos)
      ++terminates;
    else
      ++connections;
  }
  const std::string last = lines.back();
  EXPECT_THAT(last, StartsWith("rdmapct serve: stopped: " + std::to_string(connections) + " connection(s) served"));
  EXPECT_THAT(last, HasSubstr(" " + std::to_string(terminates) + " Terminate(s)"));
  EXPECT_GT(terminates, 0u) << "7.2 cases make the target send Terminates";
  EXPECT_GE(connections, run.cases.size());
}

TEST(Serve, QuietLogsOnlyTheSummary) {
  ServeProcess serve({"--listen", "127.0.0.1:0", "--quiet"});
  const std::string address = serve.Address();
  ASSERT_FALSE(address.empty());
  std::string error;
  auto tcp = targets::TcpConnector::Create(address, {}, error);
  conformance::RunOptions options;
  options.filter.sections = {"7.2"};
  conformance::RunSuite(options, *tcp);
  ASSERT_EQ(serve.Stop(), 0);
  const std::vector<std::string> lines = SplitLines(serve.err());
  ASSERT_EQ(lines.size(), 1u) << serve.err();
  EXPECT_THAT(lines[0], StartsWith("rdmapct serve: stopped: "));
}

// --crc off rejects the suite's default Request (C = 1): every case is in
// error and the run stops after a few; --crc optional answers C = 0 and the
// suite still passes (CRCs because the suite asks) but for the case that
// grades the default configuration; --mpa-rev 1 closes a
// Rev 2 Request, so the RFC 6581 cases are skipped.
TEST(Serve, MpaPolicyFlags) {
  std::string error;
  {
    ServeProcess serve({"--listen", "127.0.0.1:0", "--crc", "off"});
    const std::string address = serve.Address();
    ASSERT_FALSE(address.empty());
    auto tcp = targets::TcpConnector::Create(address, {}, error);
    conformance::RunOptions options;
    options.filter.sections = {"7.2"};
    const RunResult run = conformance::RunSuite(options, *tcp);
    ASSERT_FALSE(run.cases.empty());
    EXPECT_EQ(run.cases[0].verdict, Verdict::kError);
    EXPECT_THAT(run.cases[0].reason, HasSubstr("rejected the MPA Request (R=1)"));
    EXPECT_TRUE(run.aborted);
    EXPECT_THAT(run.abort_reason, HasSubstr("rejected the MPA Request (R=1)"));
    EXPECT_EQ(serve.Stop(), 0);
    EXPECT_THAT(serve.err(), HasSubstr("crc-not-supported"));
  }
  {
    ServeProcess serve({"--listen", "127.0.0.1:0", "--crc", "optional", "--mpa-rev", "1"});
    const std::string address = serve.Address();
    ASSERT_FALSE(address.empty());
    auto tcp = targets::TcpConnector::Create(address, {}, error);
    const RunResult run = RunOver(*tcp, wire::Profile::kRfc5040, 2);
    ASSERT_FALSE(run.aborted) << run.abort_reason;
    // --crc optional is an administrator's preference not to use CRCs, so the
    // target is no longer in its default configuration: the one case that
    // grades the default (R5044-4.4-03, C=1 answered to C=0) must fail, and
    // nothing else may.
    std::vector<std::string> failed;
    for (const CaseResult& c : run.cases)
      if (c.verdict == Verdict::kFail || c.verdict == Verdict::kError) failed.push_back(c.id);
    EXPECT_EQ(failed, std::vector<std::string>{"rfc5044/4.4/default-config-uses-crc"});
    ASSERT_FALSE(run.target_info.empty());
    EXPECT_THAT(run.target_info[0], HasSubstr("MPA Reply"));
    bool rfc6581_skipped = false;
    for (const CaseResult& c : run.cases) {
      if (c.document == "rfc6581" && c.verdict == Verdict::kSkip) rfc6581_skipped = true;
    }
    EXPECT_TRUE(rfc6581_skipped || std::none_of(run.cases.begin(), run.cases.end(),
                                                [](const CaseResult& c) { return c.document == "rfc6581"; }));
    EXPECT_EQ(serve.Stop(), 0);
  }
}

// ---- usage errors: one line, exit 2 -------------------------------------------

TEST(ServeUsage, BadFlagsExit2WithOneLine) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"--listen", "127.0.0.1:0", "--crc", "maybe"},
      {"--listen", "127.0.0.1:0", "--markers", "yes"},
      {"--listen", "127.0.0.1:0", "--mpa-rev", "3"},
      {"--listen", "127.0.0.1:0", "--profile", "rfc9999"},
      {"--listen", "127.0.0.1:0", "--max-connections", "0"},
      {"--listen", "127.0.0.1:0", "--fault", "no-such-fault"},
      {"--listen", "127.0.0.1"},
      {"--listen", "127.0.0.1:70000"},
      {"--listen", "127.0.0.1:0", "--bogus"},
      {"--listen", "127.0.0.1:0", "--connect", "127.0.0.1:1"},
      {"--connect", "127.0.0.1"},
      {"--connect", "127.0.0.1:1", "--connections", "-1"},
  };
  for (const std::vector<std::string>& args : bad) {
    ServeProcess serve(args);
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    EXPECT_EQ(serve.FirstLine(), "") << joined;
    EXPECT_EQ(serve.Wait(), 2) << joined;
    const std::vector<std::string> lines = SplitLines(serve.err());
    EXPECT_EQ(lines.size(), 1u) << joined << ": " << serve.err();
    if (!lines.empty()) {
      EXPECT_THAT(lines[0], StartsWith("rdmapct serve: error: ")) << joined;
    }
  }
}

TEST(ServeUsage, PortInUseExits2WithOneLine) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  ServeProcess serve({"--listen", address});
  EXPECT_EQ(serve.FirstLine(), "");
  EXPECT_EQ(serve.Wait(), 2);
  const std::vector<std::string> lines = SplitLines(serve.err());
  ASSERT_EQ(lines.size(), 1u) << serve.err();
  EXPECT_EQ(lines[0], "rdmapct serve: error: cannot listen on " + address + ": Address already in use");
  close(fd);
}

}  // namespace
}  // namespace rdmapct::cli
