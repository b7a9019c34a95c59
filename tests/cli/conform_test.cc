// `rdmapct conform` and `rdmapct --list-faults` end to end: runs the built
// binary (RDMAPCT_BINARY) and checks stdout, stderr, exit status and the
// report files, against the in-process reference target (with and without a
// fault switch), an unreachable TCP target and broken inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "conformance/case_loader.h"
#include "reference/model/faults.h"
#include "tests/cli/cli_test_util.h"

#ifndef RDMAPCT_BINARY
#error "RDMAPCT_BINARY (path of the rdmapct executable) must be defined by the build"
#endif

namespace rdmapct::cli {
namespace {

using test_util::Quote;
using test_util::ReadFile;
using test_util::SourceDir;

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

using test_util::Outcome;

fs::path TempDir() {
  const fs::path dir = fs::path(::testing::TempDir()) / ("rdmapct_conform_test." + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// Runs `rdmapct <args>` in the source directory with stdin from /dev/null.
Outcome Rdmapct(const std::string& args) { return test_util::RunRdmapct(args); }

std::size_t Lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n' ? 1 : 0;
  return n;
}

const std::vector<conformance::LoadedCase>& Cases() {
  static const conformance::CaseLoad load = conformance::LoadCases();
  EXPECT_TRUE(load.ok());
  return load.cases;
}

// ---- selection and listing ------------------------------------------------------

TEST(ConformList, ListsEveryCaseAndFilters) {
  const Outcome all = Rdmapct("conform --list");
  ASSERT_EQ(all.status, 0) << all.err;
  for (const conformance::LoadedCase& c : Cases()) {
    EXPECT_THAT(all.out, HasSubstr(c.id() + " ")) << c.id();
    EXPECT_THAT(all.out, HasSubstr(c.proto.title()));
  }
  EXPECT_THAT(all.out, HasSubstr("\n" + std::to_string(Cases().size()) + " case(s)\n"));

  const Outcome one = Rdmapct("conform --list --case 'rfc5040/7.2/write-*'");
  ASSERT_EQ(one.status, 0);
  EXPECT_THAT(one.out, HasSubstr("rfc5040/7.2/write-to-read-only-region"));
  EXPECT_THAT(one.out, Not(HasSubstr("rfc5040/5.1/")));
  const Outcome section = Rdmapct("conform --list --section 5.1 --level MUST");
  ASSERT_EQ(section.status, 0);
  EXPECT_THAT(section.out, HasSubstr("rfc5040/5.1/write-then-read-back"));
  EXPECT_THAT(section.out, Not(HasSubstr("rfc5040/7.2/")));
}

TEST(ConformList, EmptySelectionIsAUsageError) {
  const Outcome r = Rdmapct("conform --list --tag no-such-tag");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, StartsWith("rdmapct conform: error: no case matches the selection"));
  EXPECT_EQ(Lines(r.err), 1u);
  EXPECT_EQ(r.out, "");
}

// ---- bad flags: one line, exit 2 ------------------------------------------------

TEST(ConformUsage, BadFlagsExit2WithOneLine) {
  for (const char* args : {"conform --bogus", "conform --profile rfc9999", "conform --level OFTEN", "conform --jobs 0",
                           "conform --timeout -5", "conform --script /nonexistent/x.textproto",
                           "conform --list --coverage", "conform --case", "conform --quirk little-endian"}) {
    const Outcome r = Rdmapct(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(Lines(r.err), 1u) << args << ": " << r.err;
    EXPECT_THAT(r.err, StartsWith("rdmapct conform: error: ")) << args;
    EXPECT_EQ(r.out, "") << args;
  }
}

TEST(ConformUsage, TargetAndFaultErrorsExit2BeforeRunning) {
  struct Bad {
    const char* args;
    const char* message;
  };
  for (const Bad& b : {
           Bad{"conform --fault no-such-fault",
               "rdmapct conform: error: unknown fault \"no-such-fault\" (see rdmapct --list-faults)\n"},
           Bad{"conform --target tcp://127.0.0.1:9 --fault ignore-ird",
               "rdmapct conform: error: --fault only applies to the reference target (got --target "
               "tcp://127.0.0.1:9)\n"},
           Bad{"conform --target nowhere", "rdmapct conform: error: target nowhere: unknown target \"nowhere\""},
           Bad{"conform --target 'reference?colour=blue'",
               "rdmapct conform: error: target reference?colour=blue: unknown reference option"},
           Bad{"conform --json /nonexistent/dir/r.json",
               "rdmapct conform: error: --json /nonexistent/dir/r.json: directory"},
           Bad{"conform --pcap-dir /dev/null/x",
               "rdmapct conform: error: --pcap-dir /dev/null/x: cannot create the directory"},
       }) {
    const Outcome r = Rdmapct(b.args);
    EXPECT_EQ(r.status, 2) << b.args;
    EXPECT_THAT(r.err, StartsWith(b.message)) << b.args;
    EXPECT_EQ(Lines(r.err), 1u) << b.args << ": " << r.err;
    EXPECT_EQ(r.out, "") << b.args;  // nothing was run
  }
}

TEST(ConformUsage, NoSubcommandPrintsHelpAndExits2) {
  const Outcome r = Rdmapct("");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("conform"));
  EXPECT_THAT(r.err, HasSubstr("--list-faults"));
}

TEST(ConformUsage, HelpDocumentsProfilesPcapAndExitStatus) {
  const Outcome r = Rdmapct("conform --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("rfc5040 (default"));
  EXPECT_THAT(r.out, HasSubstr("--pcap-dir DIR writes DIR/<case id"));
  EXPECT_THAT(r.out, HasSubstr("rdmapct-failures/"));
  EXPECT_THAT(r.out, HasSubstr("Exit status: 0 every case passed"));
}

// ---- --list-faults ------------------------------------------------------------

TEST(ListFaults, ListsEveryFaultWithDescriptionAndRequirements) {
  const Outcome r = Rdmapct("--list-faults");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const model::FaultInfo& f : model::AllFaults()) {
    EXPECT_THAT(r.out, HasSubstr(std::string(f.name) + " ")) << f.name;
    EXPECT_THAT(r.out, HasSubstr(f.description)) << f.name;
    EXPECT_THAT(r.out, HasSubstr(std::string("requirements: ") + f.requirement_ids)) << f.name;
  }
  EXPECT_THAT(r.out, HasSubstr(std::to_string(model::AllFaults().size()) + " fault(s)"));
  EXPECT_EQ(Rdmapct("faults").out, r.out);
}

// ---- coverage -------------------------------------------------------------------

TEST(ConformCoverage, PrintsTheTableAndJson) {
  const fs::path json = TempDir() / "coverage.json";
  const Outcome r = Rdmapct("conform --coverage --json " + Quote(json.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("Requirement coverage"));
  EXPECT_THAT(r.out, HasSubstr("\nRFC5040 MUST-level rows\n"));
  EXPECT_THAT(r.out, HasSubstr("rfc5040/7.2/write-to-read-only-region"));
  EXPECT_THAT(r.out, HasSubstr("not checkable on the wire: needs an IPsec profile"));
  EXPECT_THAT(r.out, HasSubstr("Uncovered MUST-level rows:"));
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["schema"], "rdmapct-coverage");
  EXPECT_GT(j["summary"]["must"]["rows"].get<int>(), 300);
  EXPECT_GE(j["summary"]["must"]["covered"].get<int>(), 1);
  EXPECT_TRUE(j["problems"].empty());
}

// ---- running ---------------------------------------------------------------------

TEST(ConformRun, ReferenceTargetPassesAndWritesEveryReport) {
  const fs::path dir = TempDir();
  const fs::path json = dir / "run.json", junit = dir / "run.xml", html = dir / "run.html";
  fs::remove(json), fs::remove(junit), fs::remove(html);
  const Outcome r = Rdmapct("conform --target reference --jobs 2 --json " + Quote(json.string()) + " --junit " +
                            Quote(junit.string()) + " --report " + Quote(html.string()));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("rdmapct conform: target in-process reference"));
  EXPECT_THAT(r.out, HasSubstr("\nrfc5040 section 7.2\n"));
  EXPECT_THAT(r.out, HasSubstr("Result: PASS"));
  // The live lines went to stderr, one per case, numbered against the total.
  const std::string total = std::to_string(Cases().size());
  EXPECT_THAT(r.err, HasSubstr("/" + total + "] PASS   rfc5040/5.1/write-then-read-back"));
  EXPECT_THAT(r.err, HasSubstr("/" + total + "] SKIP   rfc7306/"));  // not in the default profile

  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["exit_status"], 0);
  EXPECT_EQ(j["target_arg"], "reference");
  EXPECT_EQ(j["cases"].size(), Cases().size());
  EXPECT_EQ(j["counts"]["fail"], 0);
  EXPECT_EQ(j["counts"]["error"], 0);
  // Cases are listed in document order, so the first ones may be skipped
  // (commit/ under the default profile): look at the first case that ran.
  const nlohmann::json* ran = nullptr;
  for (const nlohmann::json& c : j["cases"])
    if (c["verdict"] == "pass") {
      ran = &c;
      break;
    }
  ASSERT_NE(ran, nullptr);
  // A passing case's frames stay out of the JSON without -v (compact
  // report), but are counted.
  EXPECT_TRUE((*ran)["frames"].empty()) << (*ran)["id"];
  EXPECT_GT((*ran)["frames_omitted"].get<int>(), 0) << (*ran)["id"];
  EXPECT_TRUE(j["failed_cases"].empty());
  // Complete unless a case was skipped for a capability the reference
  // lacks (it insists on CRCs, so a C=0 case is skipped); outside-profile
  // skips are no gap.
  std::size_t capability_skips = 0;
  for (const nlohmann::json& c : j["cases"]) {
    if (c["verdict"] == "skip" && !c["reason"].get<std::string>().starts_with("not in profile")) ++capability_skips;
  }
  EXPECT_EQ(j["completeness"]["capability_skips"], capability_skips);
  EXPECT_EQ(j["completeness"]["complete"], capability_skips == 0);
  EXPECT_THAT(r.out, HasSubstr("  certification " + j["completeness"]["statement"].get<std::string>() + "\n"));

  const std::string xml = ReadFile(junit);
  EXPECT_THAT(xml, StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
  std::size_t testcases = 0;
  for (std::size_t at = xml.find("<testcase "); at != std::string::npos; at = xml.find("<testcase ", at + 1))
    ++testcases;
  EXPECT_EQ(testcases, Cases().size());
  EXPECT_THAT(xml, HasSubstr("failures=\"0\" errors=\"0\""));

  const std::string page = ReadFile(html);
  EXPECT_THAT(page, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(page, HasSubstr("<p>No failures, errors or warnings.</p>"));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
}

// The target as MPA Initiator (listen-step cases): the in-process reference
// connects by itself, a fault of its Initiator role fails the case citing
// the rule, and the reproduce command keeps the case.
TEST(ConformRun, InitiatorCasesRunAgainstTheInProcessReference) {
  const Outcome ok = Rdmapct("conform --tag initiator");
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("  PASS   rfc6581/9.2/initiator-sends-read-rtr-first  "));
  EXPECT_THAT(ok.out, HasSubstr("  PASS   rfc5044/7.1.2/initiator-sends-nothing-before-reply  "));
  const Outcome bad = Rdmapct("conform --tag initiator --fault accept-reply-bad-key");
  EXPECT_EQ(bad.status, 1) << bad.out << bad.err;
  EXPECT_THAT(bad.out, HasSubstr("  FAIL   rfc5044/7.1.2/initiator-closes-on-bad-reply-key  "));
}

TEST(ConformRun, FaultyReferenceFailsTheCaseThatCitesTheRule) {
  const fs::path html = TempDir() / "fault.html";
  const Outcome r =
      Rdmapct("conform --fault skip-access-rights-check --case 'rfc5040/7.2/*' --report " + Quote(html.string()));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("  FAIL   rfc5040/7.2/write-to-read-only-region  "));
  const std::string reproduce =
      "rdmapct conform --target reference --profile rfc5040 --fault skip-access-rights-check "
      "--case rfc5040/7.2/write-to-read-only-region -v";
  EXPECT_THAT(r.out, HasSubstr("reproduce: " + reproduce + "\n"));
  // Both directions of the rights check fail: the Write through a read-only
  // STag and the Read Request from a write-only one; the other 7.2 cases pass.
  EXPECT_THAT(r.out, HasSubstr("  FAIL   rfc5040/7.2/read-req-write-only-source  "));
  EXPECT_THAT(r.out, HasSubstr("Result: FAIL: 2 case(s)"));
  const std::string page = ReadFile(html);
  EXPECT_THAT(page, HasSubstr("<pre class=\"cmd\">" + reproduce + "</pre>"));
  EXPECT_THAT(page, HasSubstr("<code>R5041-7.1-G2</code>"));
}

// Linux siw's Terminate Control layout (docs/reports/siw S1) as a fault:
// the suite fails it; --quirk terminate-bitfields reads through it, so the
// same Terminates pass, and the run says it is no certification.
TEST(ConformRun, TerminateBitfieldQuirkReadsThroughSiwsLayout) {
  const std::string run = "conform --fault terminate-control-little-endian --case 'rfc5040/7.2/*'";
  const Outcome plain = Rdmapct(run);
  EXPECT_EQ(plain.status, 1) << plain.out << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("  FAIL   rfc5040/7.2/write-to-read-only-region  "));
  EXPECT_THAT(plain.out, Not(HasSubstr("DIAGNOSTIC RUN")));
  const Outcome quirk = Rdmapct(run + " --quirk terminate-bitfields");
  EXPECT_EQ(quirk.status, 0) << quirk.out << quirk.err;
  EXPECT_THAT(quirk.out, HasSubstr("  DIAGNOSTIC RUN, not a certification: --quirk terminate-bitfields"));
  EXPECT_THAT(quirk.out, HasSubstr("  PASS   rfc5040/7.2/write-to-read-only-region  "));
  // A target that lays the control field out as the RFC does fails under the quirk.
  const Outcome wrong = Rdmapct("conform --case rfc5040/7.2/write-to-read-only-region --quirk terminate-bitfields");
  EXPECT_EQ(wrong.status, 1) << wrong.out << wrong.err;
  // The quirk is kept in the reproduce command.
  EXPECT_THAT(wrong.out, HasSubstr("--quirk terminate-bitfields --case rfc5040/7.2/write-to-read-only-region -v\n"));
}

TEST(ConformRun, VerboseShowsDecodedAndHexDumpedFrames) {
  const Outcome r = Rdmapct("conform -v --case rfc5040/5.1/write-then-read-back");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("frames:\n"));
  EXPECT_THAT(r.out, HasSubstr("suite->target MPA Request @0"));
  EXPECT_THAT(r.out, HasSubstr("MPA ID Req Frame"));  // hex dump ASCII column
  EXPECT_THAT(r.out, HasSubstr("DDP Control: 0x"));   // decoded field tree
}

TEST(ConformRun, UnreachableTargetIsExit2) {
  // Port 9 (discard) on the loopback: nothing listens in the test environment.
  const Outcome r = Rdmapct("conform --target tcp://127.0.0.1:9 --case rfc5040/5.1/write-then-read-back");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("  ERROR  rfc5040/5.1/write-then-read-back"));
  EXPECT_THAT(r.out, HasSubstr("cannot connect"));
}

TEST(ConformRun, ScriptRunsTheCasesOfOneFile) {
  const fs::path script = TempDir() / "repro.textproto";
  std::ofstream(script) << ReadFile(fs::path(SourceDir()) / "conformance/cases/rfc5040/5.1_rdma-write.textproto");
  const Outcome r = Rdmapct("conform --script " + Quote(script.string()));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("PASS   rfc5040/5.1/write-then-read-back"));
  EXPECT_THAT(r.out, Not(HasSubstr("rfc5040/7.2/")));

  const fs::path bad = TempDir() / "bad.textproto";
  std::ofstream(bad) << "case { id: \"rfc5040/7.2/x\" title: \"t\" level: MUST requirement: \"R9999-1-01\" "
                        "step { pause { ms: 1 } } }\n";
  const Outcome b = Rdmapct("conform --script " + Quote(bad.string()));
  EXPECT_EQ(b.status, 2);
  EXPECT_THAT(b.err, HasSubstr("requirement R9999-1-01 is not in the catalog"));
  EXPECT_THAT(b.err, HasSubstr("invalid case files: nothing was run"));
  EXPECT_EQ(b.out, "");
}

// Issue 15: a reproducer written for rfc7306 (its cases name that profile
// only) run under --profile commit is skipped whole; that run tested nothing
// and must not exit 0 or print PASS.
std::string Rfc7306Only(const std::string& file) {
  std::string text = ReadFile(fs::path(SourceDir()) / "conformance/cases" / file);
  for (std::size_t at; (at = text.find("profile: COMMIT\n")) != std::string::npos;) text.erase(at, 16);
  return text;
}

TEST(ConformRun, AllSkippedRunSaysNothingWasTested) {
  const fs::path script = TempDir() / "rfc7306-repro.textproto";
  std::ofstream(script) << Rfc7306Only("rfc7306/6.3_immediate-data.textproto");
  const fs::path json = TempDir() / "skipped.json", junit = TempDir() / "skipped.xml";
  const Outcome r = Rdmapct("conform --script " + Quote(script.string()) + " --profile commit --json " +
                            Quote(json.string()) + " --junit " + Quote(junit.string()));
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("nothing was tested"));
  EXPECT_THAT(r.out, HasSubstr("Result: NOT TESTED"));
  EXPECT_THAT(r.out, Not(HasSubstr("Result: PASS")));
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["exit_status"], 3);
  EXPECT_THAT(j["nothing_tested"].get<std::string>(), HasSubstr("nothing was tested"));
  EXPECT_THAT(ReadFile(junit), HasSubstr("name=\"nothing_tested\""));
}

// The same for a certification in which only SHOULD-level cases ran: the
// rfc7306 MUST cases are skipped under commit, the SHOULD teardown cases run.
TEST(ConformRun, NoMustCaseRanSaysNothingWasTestedAtMustLevel) {
  const fs::path script = TempDir() / "should-only.textproto";
  std::ofstream(script) << Rfc7306Only("rfc7306/6.3_immediate-data.textproto")
                        << ReadFile(fs::path(SourceDir()) / "conformance/cases/rfc5040/6.2_stream-teardown.textproto");
  const Outcome r = Rdmapct("conform --script " + Quote(script.string()) + " --profile commit");
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("PASS   rfc5040/6.2/"));
  EXPECT_THAT(r.out, HasSubstr("Result: NOT TESTED: nothing was tested at MUST level"));
}

}  // namespace
}  // namespace rdmapct::cli
