// Helpers shared by the cli_test files, which run the built rdmapct binary:
// the source tree, whole files, and shell quoting for popen command lines.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

// Single-quoted for /bin/sh.
inline std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace rdmapct::cli::test_util
