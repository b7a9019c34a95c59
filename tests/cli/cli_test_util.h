// Helpers shared by the cli_test files, which run the built rdmapct binary:
// the source tree, whole files, shell quoting, and running the binary.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace rdmapct::cli::test_util {

// The checkout whose examples and goldens the tests read (RDMAPCT_SOURCE_DIR
// overrides the one the test was built from).
inline std::string SourceDir() {
  if (const char* env = std::getenv("RDMAPCT_SOURCE_DIR"); env && *env) return env;
  return RDMAPCT_SOURCE_DIR_COMPILED;
}

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const std::filesystem::path& p, std::string_view data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// Single-quoted for /bin/sh.
inline std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Outcome {
  int status = -1;  // exit status; -1 if killed by a signal
  std::string out, err;
};

// Runs `rdmapct <args>` (args already quoted for /bin/sh) in `cwd`, with
// `stdin_data` on standard input (none: /dev/null). The one popen runner of
// the cli tests.
inline Outcome RunRdmapctIn(const std::string& args, const std::filesystem::path& cwd,
                            const std::string& stdin_data = "") {
  static int counter = 0;
  const std::filesystem::path base =
      std::filesystem::temp_directory_path() /
      ("rdmapct_cli_test." + std::to_string(::getpid()) + "." + std::to_string(++counter));
  const std::filesystem::path err_path = base.string() + ".stderr", in_path = base.string() + ".stdin";
  std::string in = "/dev/null";
  if (!stdin_data.empty()) {
    WriteFile(in_path, stdin_data);
    in = in_path.string();
  }
  const std::string cmd = "cd " + Quote(cwd.string()) + " && " + Quote(RDMAPCT_BINARY) + " " + args + " <" + Quote(in) +
                          " 2>" + Quote(err_path.string());
  Outcome r;
  if (std::FILE* p = popen(cmd.c_str(), "r")) {
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int raw = pclose(p);
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }
  r.err = ReadFile(err_path);
  std::filesystem::remove(err_path);
  std::filesystem::remove(in_path);
  return r;
}

// The same in the source directory, so example paths read as in the README.
inline Outcome RunRdmapct(const std::string& args, const std::string& stdin_data = "") {
  return RunRdmapctIn(args, SourceDir(), stdin_data);
}

}  // namespace rdmapct::cli::test_util
