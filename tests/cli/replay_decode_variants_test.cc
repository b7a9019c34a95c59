// Pins the output of every `rdmapct replay FILE --decode` mode on every
// sample capture of pcaps/, octet for octet: text and --json, -v, --offsets,
// each --profile, and --connection N for every connection (and one past the
// last: the usage error). Issue 16 wants `--decode` to stream the capture
// as `--audit` does, with output identical to today's; this test is what
// "identical" is checked against, beside the readable golden text of
// replay_test.cc (ReplayGolden), which covers only the default mode.
//
// Golden file: tests/cli/golden/replay/decode_variants.tsv, one line per
// capture and mode: capture, arguments, exit status, then the size and
// FNV-1a 64 digest of stdout and of stderr (whole outputs would be several
// MB of near-copies of the .txt goldens). After an intended output change,
// regenerate it with
//   RDMAPCT_UPDATE_GOLDEN=1 build/tests/cli_test --gtest_filter='ReplayDecodeVariants.*'
// and check the change with the readable goldens (ReplayGolden) and by
// running the changed modes by hand.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"

#ifndef RDMAPCT_BINARY
#error "RDMAPCT_BINARY (path of the rdmapct executable) must be defined by the build"
#endif

namespace rdmapct::cli {
namespace {

namespace fs = std::filesystem;
using test_util::Outcome;
using test_util::ReadFile;
using test_util::SourceDir;
using test_util::WriteFile;

uint64_t Fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string Hex(uint64_t v) {
  std::ostringstream o;
  o << std::hex << v;
  return o.str();
}

std::vector<std::string> Captures() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(SourceDir()) / "pcaps")) {
    if (e.path().extension() == ".pcap" || e.path().extension() == ".pcapng") out.push_back(e.path().filename());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The modes decoded for one capture with `connections` TCP connections.
std::vector<std::string> Modes(std::size_t connections) {
  std::vector<std::string> modes = {"--decode",
                                    "--decode --json",
                                    "--decode -v --offsets",
                                    "--decode --json -v --offsets",
                                    "--decode --profile rfc5040",
                                    "--decode --json --profile rfc7306"};
  for (std::size_t c = 0; c <= connections; ++c) {
    modes.push_back("--decode --connection " + std::to_string(c));
    modes.push_back("--decode --json --offsets --connection " + std::to_string(c));
  }
  return modes;
}

// One line of the golden file.
std::string Line(const std::string& capture, const std::string& mode, const Outcome& r) {
  return capture + "\t" + mode + "\t" + std::to_string(r.status) + "\t" + std::to_string(r.out.size()) + "\t" +
         Hex(Fnv1a64(r.out)) + "\t" + std::to_string(r.err.size()) + "\t" + Hex(Fnv1a64(r.err)) + "\n";
}

TEST(ReplayDecodeVariants, EveryModeOfEverySampleCaptureMatchesItsDigest) {
  const std::vector<std::string> captures = Captures();
  ASSERT_GE(captures.size(), 2u);
  std::string lines;
  for (const std::string& capture : captures) {
    const Outcome json = test_util::RunRdmapctIn("replay pcaps/" + capture + " --decode --json", SourceDir());
    const std::size_t connections = nlohmann::json::parse(json.out)["capture"]["connections"].get<std::size_t>();
    ASSERT_GE(connections, 1u) << capture;
    for (const std::string& mode : Modes(connections)) {
      lines += Line(capture, mode, test_util::RunRdmapctIn("replay pcaps/" + capture + " " + mode, SourceDir()));
    }
  }
  const fs::path golden = fs::path(SourceDir()) / "tests/cli/golden/replay/decode_variants.tsv";
  if (std::getenv("RDMAPCT_UPDATE_GOLDEN") != nullptr) WriteFile(golden, lines);
  const std::string want = ReadFile(golden);
  ASSERT_FALSE(want.empty()) << golden << " is missing: regenerate with RDMAPCT_UPDATE_GOLDEN=1";
  // Line by line, so that a failure names the capture and mode.
  std::istringstream got_in(lines), want_in(want);
  std::string g, w;
  while (std::getline(want_in, w)) {
    ASSERT_TRUE(std::getline(got_in, g)) << "missing: " << w;
    EXPECT_EQ(g, w);
  }
  EXPECT_FALSE(std::getline(got_in, g)) << "not in the golden file: " << g;
}

// The digests can fail: a mode whose output differs from the default's by
// one option gets a different digest, and the missing connection is a
// usage error (exit status 2) with nothing on stdout.
TEST(ReplayDecodeVariants, DigestsTellTheModesApart) {
  const std::string capture = Captures().front();
  const auto run = [&](const std::string& mode) {
    return test_util::RunRdmapctIn("replay pcaps/" + capture + " " + mode, SourceDir());
  };
  const Outcome plain = run("--decode"), offsets = run("--decode --offsets"), missing = run("--decode --connection 99");
  EXPECT_NE(Fnv1a64(plain.out), Fnv1a64(offsets.out));
  EXPECT_EQ(Fnv1a64(plain.out), Fnv1a64(run("--decode").out));
  EXPECT_EQ(missing.status, 2);
  EXPECT_TRUE(missing.out.empty());
}

}  // namespace
}  // namespace rdmapct::cli
