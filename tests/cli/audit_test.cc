// `rdmapct replay FILE --audit` end to end: the built binary on the capture
// with deliberate violations (golden text, and each violation asserted on
// its own from the RFC rule it breaks), on the other sample captures (clean
// where the capture is clean), in JSON, and on unusable input (one-line
// error, exit status 2, never a crash).
//
// Golden files: tests/cli/golden/replay/audit_violations.audit.txt holds the
// output of `rdmapct replay pcaps/audit_violations.pcap --audit`, and
// .audit.stderr its stderr. After an intended change:
//   RDMAPCT_UPDATE_GOLDEN=1 build/tests/cli_test --gtest_filter='AuditGolden.*'
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/capture/pcap_test_util.h"
#include "tests/cli/cli_test_util.h"

namespace rdmapct::cli {
namespace {

using test_util::Quote;
using test_util::ReadFile;
using test_util::SourceDir;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

using test_util::Outcome;

fs::path TempDir() {
  const fs::path d = fs::path(::testing::TempDir()) / ("rdmapct_audit_test." + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

// In the source tree, where the sample captures are.
Outcome Rdmapct(const std::string& args) { return test_util::RunRdmapctIn(args, SourceDir()); }

std::vector<std::string> Lines(const std::string& s, const std::string& containing = "") {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    if (line.find(containing) != std::string::npos) out.push_back(line);
  }
  return out;
}

// Violation lines: "connection N, <direction> (...), frame F, stream offset O: LEVEL ID [check]: ..."
std::vector<std::string> Violations(const std::string& out) {
  std::vector<std::string> v;
  for (const std::string& l : Lines(out)) {
    if (l.rfind("connection ", 0) == 0 && l.find(", stream offset ") != std::string::npos) v.push_back(l);
  }
  return v;
}

int Count(const std::vector<std::string>& lines, std::initializer_list<std::string> parts) {
  int n = 0;
  for (const std::string& l : lines) {
    bool all = true;
    for (const std::string& p : parts) all = all && l.find(p) != std::string::npos;
    n += all;
  }
  return n;
}

constexpr const char* kViolations = "pcaps/audit_violations.pcap";

TEST(AuditGolden, ViolationsCaptureMatchesItsGoldenOutput) {
  const Outcome r = Rdmapct(std::string("replay ") + kViolations + " --audit");
  const fs::path golden = fs::path(SourceDir()) / "tests/cli/golden/replay/audit_violations.audit";
  if (std::getenv("RDMAPCT_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden.string() + ".txt", std::ios::binary) << r.out;
    std::ofstream(golden.string() + ".stderr", std::ios::binary) << r.err;
  }
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, ReadFile(golden.string() + ".txt")) << "regenerate with RDMAPCT_UPDATE_GOLDEN=1 if intended";
  EXPECT_EQ(r.err, ReadFile(golden.string() + ".stderr"));
}

// Each deliberate violation of tools/gen_audit_pcap.cc, by the rule it breaks
// and the side that broke it (independent of the golden text).
TEST(AuditGolden, EveryDeliberateViolationIsReportedAgainstTheRightSide) {
  const Outcome r = Rdmapct(std::string("replay ") + kViolations + " --audit");
  ASSERT_EQ(r.status, 1) << r.err;
  const std::vector<std::string> v = Violations(r.out);
  const std::string i2r = "Initiator -> Responder", r2i = "Responder -> Initiator";
  // Connection 0: R5041-7.1-G4, a Write past the advertised 4096 octets ...
  EXPECT_EQ(Count(v, {"connection 0, ", i2r, "R5041-7.1-G4", "[tagged-base-or-bounds]"}), 1);
  // ... answered by a Terminate outside the accept-set of a bounds error, M = D = 0.
  EXPECT_EQ(Count(v, {"connection 0, ", r2i, "[terminate-code]", "0/1/0x00", "expected 1/1/0x01"}), 1);
  EXPECT_EQ(Count(v, {"connection 0, ", r2i, "SHOULD R5040-4.8-06", "D = 0"}), 1);
  EXPECT_EQ(Count(v, {"connection 0, ", r2i, "SHOULD R5040-4.8-05", "M = 0"}), 1);
  // Connection 1: R5040-4.4-03, a Read Response shorter than the Read Request.
  EXPECT_EQ(Count(v, {"connection 1, ", r2i, "R5040-4.4-03", "48 of 64"}), 1);
  // Connection 2: R5044-4.4-10, the Responder's wrong CRC; the Initiator's
  // Terminate 2/0/0x02 is what RFC 5044 asks for, so nothing against it.
  EXPECT_EQ(Count(v, {"connection 2, ", r2i, "MUST R5044-4.4-10", "[llp-crc-error]"}), 1);
  EXPECT_EQ(Count(v, {"connection 2, ", i2r}), 0);
  // Connection 3: R5041-4.3-07 (MSN 3 after 1) and R5040-5.4-10 (a Send after its Terminate).
  EXPECT_EQ(Count(v, {"connection 3, ", i2r, "R5041-4.3-07", "MSN 3 on QN 0, expected 2"}), 1);
  EXPECT_EQ(Count(v, {"connection 3, ", i2r, "R5040-5.4-10"}), 1);
  EXPECT_EQ(v.size(), 8u);
  EXPECT_THAT(r.out, HasSubstr("4 iWARP connections of 4 TCP connections, 11 ULPDUs, 8 violations"));
}

TEST(AuditGolden, JsonHoldsTheSameViolations) {
  const Outcome text = Rdmapct(std::string("replay ") + kViolations + " --audit");
  const Outcome json = Rdmapct(std::string("replay ") + kViolations + " --audit --json");
  EXPECT_EQ(json.status, text.status);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["violations"].size(), Violations(text.out).size());
  EXPECT_EQ(j["summary"]["violations"], 8);
  EXPECT_EQ(j["summary"]["complete"], true);
  EXPECT_EQ(j["connections"].size(), 4u);
  const auto& first = j["violations"][0];
  EXPECT_EQ(first["requirement"], "R5041-7.1-G4");
  EXPECT_EQ(first["level"], "MUST");
  EXPECT_EQ(first["direction"], "Initiator -> Responder");
  EXPECT_GT(first["capture_frame"].get<uint64_t>(), 0u);
}

// The samples written by the conformance runner against the reference
// target: the target (Responder) never breaks a rule; the only violation is
// the suite's own deliberate bad CRC in the bad-crc sample.
TEST(AuditSamples, ReferenceTargetCapturesAuditClean) {
  int audited = 0;
  for (const auto& e : fs::directory_iterator(fs::path(SourceDir()) / "pcaps")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".pcap" || name == "audit_violations.pcap") continue;
    SCOPED_TRACE(name);
    const Outcome r = Rdmapct("replay pcaps/" + name + " --audit");
    const std::vector<std::string> v = Violations(r.out);
    EXPECT_EQ(Count(v, {"Responder -> Initiator"}), 0) << r.out;
    if (name.find("bad-crc") != std::string::npos) {
      EXPECT_EQ(r.status, 1);
      ASSERT_EQ(v.size(), 1u) << r.out;
      EXPECT_THAT(v[0], HasSubstr("Initiator -> Responder"));
      EXPECT_THAT(v[0], HasSubstr("R5044-4.4-10 [llp-crc-error]"));
    } else {
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_TRUE(v.empty()) << r.out;
      EXPECT_THAT(r.out, HasSubstr(", 0 violations\n"));
    }
    ++audited;
  }
  EXPECT_GE(audited, 3);
}

TEST(AuditErrors, UnreadableInputIsOneLineAndStatus2) {
  const Outcome missing = Rdmapct("replay pcaps/no-such-file.pcap --audit");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(Lines(missing.err).size(), 1u);
  EXPECT_THAT(missing.err, HasSubstr("no-such-file.pcap"));
  const fs::path garbage = TempDir() / "garbage.pcap";
  std::ofstream(garbage, std::ios::binary) << "this is not a capture file at all";
  const Outcome g = Rdmapct("replay " + Quote(garbage.string()) + " --audit");
  EXPECT_EQ(g.status, 2);
  EXPECT_THAT(g.err, HasSubstr("error: "));
  EXPECT_EQ(Rdmapct(std::string("replay ") + kViolations + " --audit --decode").status, 2);
}

// Every prefix of a capture (cut inside the file header, a record header, a
// packet): never a crash, and a file cut short is status 2 with an error
// that names it.
TEST(AuditErrors, TruncatedCapturesNeverCrash) {
  const std::string whole = ReadFile(fs::path(SourceDir()) / kViolations);
  ASSERT_GT(whole.size(), 1000u);
  const fs::path cut = TempDir() / "cut.pcap";
  for (std::size_t n = 0; n < whole.size(); n += 53) {
    SCOPED_TRACE(n);
    std::ofstream(cut, std::ios::binary | std::ios::trunc).write(whole.data(), static_cast<std::streamsize>(n));
    const Outcome r = Rdmapct("replay " + Quote(cut.string()) + " --audit");
    ASSERT_NE(r.status, -1) << "crashed";
    EXPECT_TRUE(r.status == 1 || r.status == 2 || r.status == 0) << r.status;
    if (r.status == 2) {
      EXPECT_THAT(r.err, HasSubstr("error: "));
    }
  }
}

// --as-case: the script replays the captured Initiator side; the target
// that was captured (the reference) passes it, a target answering with
// another Terminate code fails it (R5040-7.1-02: the captured Terminate is
// the expectation).
TEST(ReplayAsCase, ScriptPassesOnTheCapturedTargetAndFailsOnAFaultyOne) {
  const fs::path script = TempDir() / "case.textproto";
  const Outcome w = Rdmapct("replay pcaps/rfc5040_7.2_read-req-invalid-src-stag.pcap --profile rfc5040 --as-case " +
                            Quote(script.string()));
  ASSERT_EQ(w.status, 0) << w.err;
  EXPECT_THAT(w.out, HasSubstr("1 sends, 1 expectations"));
  const std::string text = ReadFile(script);
  EXPECT_THAT(text, HasSubstr("send { raw { layer: DDP_SEGMENT hex: "));
  EXPECT_THAT(text, HasSubstr("accept { layer: 0x0 etype: 0x1 code: 0x00"));
  const Outcome ok = Rdmapct("conform --profile rfc5040 --script " + Quote(script.string()));
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("1 cases: 1 pass"));
  const Outcome bad = Rdmapct("conform --profile rfc5040 --target 'reference?fault=wrong-terminate-code' --script " +
                              Quote(script.string()));
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr("FAIL"));
}

// --against runs that script at once; every sample replays cleanly against
// the reference target it was captured from.
TEST(ReplayAgainst, SamplesReplayAgainstTheReference) {
  for (const char* name : {"rfc5040_7.2_read-req-invalid-src-stag", "rfc5044_4.3_target-markers-every-placement",
                           "rfc5044_4.4_bad-crc-fpdu-and-later-fpdus-dropped"}) {
    SCOPED_TRACE(name);
    const Outcome r = Rdmapct(std::string("replay pcaps/") + name + ".pcap --profile rfc5040 --against reference");
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("Result: PASS"));
    EXPECT_THAT(r.out, HasSubstr("\nreplay: the target answered as in the capture\n"));
  }
  const Outcome bad = Rdmapct(
      "replay pcaps/rfc5040_7.2_read-req-invalid-src-stag.pcap --profile rfc5040 --against "
      "'reference?fault=wrong-terminate-code'");
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr("not in the accept-set"));
  EXPECT_THAT(bad.out, HasSubstr("\nreplay: the target's answers differ from the capture's (FAIL above)\n"));
  // No handshake, no Initiator: a clear error.
  EXPECT_EQ(Rdmapct("replay pcaps/no-such-file.pcap --as-case /dev/null").status, 2);
}

}  // namespace
}  // namespace rdmapct::cli
