// What the campaign driver (campaign.cc) needs to know about libFuzzer
// binaries and their output: flags from .options, progress lines, crash
// reports as signatures, and running a command with its output logged.
#pragma once

#include <sys/types.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rdmapct::fuzz::campaign {

std::string Quote(const std::string& s);  // for sh -c

struct Progress {
  long runs = 0, cov = 0, ft = 0, corp = 0, exec_per_s = 0, crashes = 0, timeouts = 0, ooms = 0, rss_mb = 0;
};
// "#1234: cov: 56 ft: 78 corp: 9 exec/s: 100 oom/timeout/crash: 0/0/1 ..." (fork
// mode) or "#1234<TAB>NEW cov: 56 ft: 78 corp: 9/1Kb ... exec/s: 100 ..." (one job).
bool ParseProgress(const std::string& line, Progress& p);

// Runs a shell command in a process group of its own, every output line to
// `log` and to `on_line`; the exit status (128 + signal when killed). A set
// `stop` ends the command (SIGTERM to its group, SIGKILL 10 s later).
// `group`, when given, receives the process group id before the first line.
int RunLogged(const std::string& command, std::ofstream& log, const std::function<void(const std::string&)>& on_line,
              const std::atomic<int>* stop = nullptr, pid_t* group = nullptr);
// The resident memory of every process in a process group, in MiB (0 when
// none is left). libFuzzer's fork mode prints no rss: field, so the status
// line measures the harness's processes instead.
long GroupRssMb(pid_t group);
// Runs a shell command, stdout and stderr (at most 1 MiB) into the result.
std::string Capture(const std::string& command, int& rc);

// A libFuzzer binary answers -help=1 with its flag list; a standalone
// replay binary (standalone_main.cc) does not.
bool IsLibFuzzer(const std::filesystem::path& bin);
// The [libfuzzer] key = value lines of a .options file as flags, without
// those the campaign decides itself.
std::vector<std::string> OptionsFlags(const std::filesystem::path& file);
std::filesystem::path DefaultFuzzersDir(const std::filesystem::path& source);

// The signature of a finding: the session oracle's finding line, or the
// sanitizer's kind and the top frames of the project's stack.
std::string SignatureOf(const std::string& report, const std::string& kind);

std::string Hash8(const std::string& s);
std::string NowIso();
std::size_t FilesIn(const std::filesystem::path& dir);
nlohmann::json LoadJson(const std::filesystem::path& p);

}  // namespace rdmapct::fuzz::campaign
