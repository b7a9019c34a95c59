// `rdmapct replay FILE --decode` end to end: runs the built binary on the
// sample captures of pcaps/ (golden text), on captures of a conformance run
// (every frame the runner recorded is found at its stream offset, in a
// capture frame of its direction that carries its first octet), and on
// unusable input (one-line errors, exit status 2; a cut-short file: 1).
//
// Golden files: tests/cli/golden/replay/<capture>.txt hold the text output
// of `rdmapct replay pcaps/<capture>.pcap --decode`, <capture>.stderr its
// warnings and errors (exit status 1 when it holds an error). After an
// intended output change, regenerate them with
//   RDMAPCT_UPDATE_GOLDEN=1 build/tests/cli_test --gtest_filter='ReplayGolden.*'
// and review the diff.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "reference/wire/hex.h"
#include "tests/capture/pcap_test_util.h"
#include "tests/cli/cli_test_util.h"

#ifndef RDMAPCT_BINARY
#error "RDMAPCT_BINARY (path of the rdmapct executable) must be defined by the build"
#endif

namespace rdmapct::cli {
namespace {

using test_util::Quote;
using test_util::ReadFile;
using test_util::SourceDir;
using test_util::WriteFile;

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace rdmapct::capture::pcap_test;

fs::path Fresh(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("rdmapct_replay_test." + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

using test_util::Outcome;

// Runs `rdmapct <args>` in `cwd` (default: the source directory, so sample
// paths read as in the README).
Outcome Rdmapct(const std::string& args, const fs::path& cwd = SourceDir()) {
  return test_util::RunRdmapctIn(args, cwd);
}

std::vector<fs::path> SampleCaptures() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(SourceDir()) / "pcaps")) {
    if (e.path().extension() == ".pcap" || e.path().extension() == ".pcapng") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The first sample the conformance runner wrote (one connection each).
fs::path RunnerSample() {
  for (const fs::path& p : SampleCaptures()) {
    if (p.filename().string().rfind("rfc", 0) == 0) return p;
  }
  return {};
}

int CountLines(const std::string& s, const std::string& prefix) {
  int n = 0;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0;
  return n;
}

// ---- golden output of the sample captures ----------------------------------------

TEST(ReplayGolden, EverySampleCaptureMatchesItsGoldenText) {
  const bool update = std::getenv("RDMAPCT_UPDATE_GOLDEN") != nullptr;
  const std::vector<fs::path> samples = SampleCaptures();
  ASSERT_GE(samples.size(), 2u);
  for (const fs::path& p : samples) {
    SCOPED_TRACE(p.filename().string());
    const Outcome r = Rdmapct("replay pcaps/" + p.filename().string() + " --decode");
    const fs::path golden = fs::path(SourceDir()) / "tests/cli/golden/replay" / p.stem();
    if (update) {
      fs::create_directories(golden.parent_path());
      WriteFile(golden.string() + ".txt", r.out);
      if (!r.err.empty())
        WriteFile(golden.string() + ".stderr", r.err);
      else
        fs::remove(golden.string() + ".stderr");
    }
    const std::string err = ReadFile(golden.string() + ".stderr");
    EXPECT_EQ(r.status, err.find("error: ") != std::string::npos ? 1 : 0);
    EXPECT_EQ(r.out, ReadFile(golden.string() + ".txt")) << "regenerate with RDMAPCT_UPDATE_GOLDEN=1 if intended";
    EXPECT_EQ(r.err, err);
  }
}

// The JSON form holds the same frames, each with its capture frame,
// connection and direction, and the same warnings and errors.
TEST(ReplayGolden, JsonHasTheSameFramesAndIssues) {
  for (const fs::path& p : SampleCaptures()) {
    SCOPED_TRACE(p.filename().string());
    const Outcome text = Rdmapct("replay pcaps/" + p.filename().string() + " --decode");
    const Outcome json = Rdmapct("replay pcaps/" + p.filename().string() + " --decode --json --profile commit");
    EXPECT_EQ(json.status, text.status);
    EXPECT_EQ(json.err, text.err);
    const nlohmann::json j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["options"]["profile"], "commit");
    EXPECT_EQ(j["capture"]["link_type"], 1);
    EXPECT_EQ(j["capture"]["complete"], true);
    EXPECT_EQ(static_cast<int>(j["frames"].size()), CountLines(text.out, "Frame "));
    EXPECT_EQ(static_cast<int>(j["connections"].size()), CountLines(text.out, "Connection "));
    EXPECT_EQ(static_cast<int>(j["errors"].size()), CountLines(text.err, "rdmapct replay: error: "));
    EXPECT_EQ(static_cast<int>(j["warnings"].size()), CountLines(text.err, "warning: "));
    uint64_t number = 0;
    for (const auto& f : j["frames"]) {
      EXPECT_EQ(f["frame"], ++number);
      EXPECT_EQ(f["name"], "Frame " + std::to_string(number));
      EXPECT_GT(f["capture_frame"].get<uint64_t>(), 0u);
      EXPECT_EQ(f["children"][0]["name"], "Capture");
      EXPECT_EQ(f["children"][0]["children"][0]["number"], f["capture_frame"]);
      EXPECT_TRUE(f["direction"] == "Initiator -> Responder" || f["direction"] == "Responder -> Initiator");
    }
  }
}

// ---- round trip through a conformance run ----------------------------------------

struct ReportFrame {
  unsigned connection = 0;
  bool from_target = false;
  std::string kind;
  uint64_t offset = 0, length = 0;
};

// The replayed capture holds exactly the MPA frames the runner recorded.
// The frames replay --decode found against the ones the runner recorded, in
// (connection, direction, offset) order.
void ExpectSameFrames(std::vector<ReportFrame> got, std::vector<ReportFrame> want) {
  const auto order = [](const ReportFrame& a, const ReportFrame& b) {
    return std::tie(a.connection, a.from_target, a.offset) < std::tie(b.connection, b.from_target, b.offset);
  };
  std::sort(want.begin(), want.end(), order);
  std::sort(got.begin(), got.end(), order);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].connection, want[i].connection) << i;
    EXPECT_EQ(got[i].from_target, want[i].from_target) << i;
    EXPECT_EQ(got[i].kind, want[i].kind) << i;
    EXPECT_EQ(got[i].offset, want[i].offset) << i;
    EXPECT_EQ(got[i].length, want[i].length) << i;
  }
}

TEST(ReplayRoundTrip, FindsEveryFrameTheRunnerRecorded) {
  const fs::path dir = Fresh("roundtrip");
  const Outcome run = Rdmapct(
      "conform --case 'rfc5040/7.2/*' --case 'rfc5044/4.3/*' --case 'rfc5044/5.2/*' "
      "--pcap-dir caps --json run.json -v",  // -v: the passing cases' frames too
      dir);
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  const nlohmann::json report = nlohmann::json::parse(ReadFile(dir / "run.json"));
  std::size_t cases = 0, frames = 0;
  for (const auto& c : report["cases"]) {
    const std::string id = c["id"];
    SCOPED_TRACE(id);
    std::vector<ReportFrame> want;
    bool truncated = false;
    for (const auto& f : c["frames"]) {
      const std::string kind = f["kind"];
      if (kind != "MPA Request" && kind != "MPA Reply" && kind != "FPDU") continue;
      truncated |= f["truncated"].get<bool>();
      want.push_back({f["connection"], f["direction"] == "target->suite", kind, f["stream_offset"], f["length"]});
    }
    if (truncated || want.empty()) continue;
    std::string file = id;
    std::replace(file.begin(), file.end(), '/', '_');
    const fs::path pcap = dir / "caps" / (file + ".pcap");
    const Outcome r = Rdmapct("replay " + Quote(pcap.string()) + " --decode --json", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const ParsedCapture packets = ReadCapture(pcap);
    std::vector<ReportFrame> got;
    for (const auto& f : j["frames"]) {
      const std::string layer = f["children"][1]["name"];
      const std::string kind = layer == "MPA Request Frame" ? "MPA Request"
                               : layer == "MPA Reply Frame" ? "MPA Reply"
                                                            : "FPDU";
      const bool from_target = f["direction"] == "Responder -> Initiator";
      got.push_back({f["connection"], from_target, kind, f["offset"], f["length"]});
      // Its capture frame is a segment of its direction that carries its first octet.
      const ParsedPacket& p = packets.packets.at(f["capture_frame"].get<std::size_t>() - 1);
      EXPECT_EQ(p.src_port == 5040, from_target);
      EXPECT_EQ(p.src_port == 5040 ? p.dst_port : p.src_port, 49152 + f["connection"].get<unsigned>());
      EXPECT_FALSE(p.payload.empty());
    }
    frames += want.size();
    ++cases;
    ExpectSameFrames(std::move(got), std::move(want));
  }
  EXPECT_GE(cases, 12u);
  EXPECT_GE(frames, 100u);
}

// ---- bad input ------------------------------------------------------------------

TEST(ReplayErrors, MissingFileIsOneLineAndStatus2) {
  const Outcome r = Rdmapct("replay /nonexistent/capture.pcap --decode");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "rdmapct replay: error: /nonexistent/capture.pcap: No such file or directory\n");
}

TEST(ReplayErrors, GarbageFileIsOneLineAndStatus2) {
  const fs::path dir = Fresh("garbage");
  WriteFile(dir / "garbage.pcap", "GET / HTTP/1.1\r\n\r\nthis is no capture file at all");
  const Outcome r = Rdmapct("replay garbage.pcap --decode --json", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("rdmapct replay: error: garbage.pcap: "));
  EXPECT_EQ(CountLines(r.err, ""), 1);
}

TEST(ReplayErrors, TruncatedFileDecodesWhatItHoldsThenOneErrorLineStatus1) {
  const fs::path dir = Fresh("truncated");
  const fs::path sample = RunnerSample();
  ASSERT_FALSE(sample.empty());
  std::string octets = ReadFile(sample);
  octets.resize(octets.size() - 30);  // inside the last packet
  WriteFile(dir / "cut.pcap", octets);
  const std::size_t packets = ReadCapture(sample).packets.size();
  const Outcome r = Rdmapct("replay cut.pcap --decode", dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_GE(CountLines(r.out, "Frame "), 3);
  const std::string last = r.err.substr(r.err.rfind("error: "));
  EXPECT_THAT(last, StartsWith("error: cut.pcap: truncated dump file"));
  EXPECT_THAT(last, HasSubstr("(after frame " + std::to_string(packets - 1) + ")\n"));
  EXPECT_EQ(CountLines(r.err, "rdmapct replay: error: "), 1);
  const Outcome j = Rdmapct("replay cut.pcap --decode --json", dir);
  EXPECT_EQ(j.status, 1);
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["capture"]["complete"], false);
  EXPECT_THAT(doc["errors"].back()["message"].get<std::string>(), StartsWith("cut.pcap: truncated dump file"));
}

TEST(ReplayErrors, BadFlagsAreStatus2) {
  const std::string sample = "pcaps/" + RunnerSample().filename().string();
  const Outcome no_decode = Rdmapct("replay " + sample);
  EXPECT_EQ(no_decode.status, 2);
  EXPECT_THAT(no_decode.err, HasSubstr("give exactly one of --decode, --audit"));
  EXPECT_EQ(CountLines(no_decode.err, ""), 1);
  EXPECT_EQ(Rdmapct("replay " + sample + " --decode --profile rfc9999").status, 2);
  EXPECT_EQ(Rdmapct("replay --decode").status, 2);
  const Outcome conn = Rdmapct("replay " + sample + " --decode --connection 7");
  EXPECT_EQ(conn.status, 2);
  EXPECT_EQ(conn.err, "rdmapct replay: error: --connection 7: " + sample + " has 1 TCP connection (0..0)\n");
}

TEST(ReplayErrors, ACaptureWithoutTcpIsAWarningNotAnError) {
  const fs::path dir = Fresh("empty");
  // A pcap file header (little-endian, Ethernet) and no packet.
  const std::string header(
      "\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x01\x00\x00\x00", 24);
  WriteFile(dir / "empty.pcap", header);
  const Outcome r = Rdmapct("replay empty.pcap --decode", dir);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "rdmapct replay: warning: empty.pcap holds no TCP connection (0 frames)\n");
}

}  // namespace
}  // namespace rdmapct::cli
