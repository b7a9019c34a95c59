// conformance::Certify in-process (no rdmapct binary, no popen): the
// pipeline behind `rdmapct conform` loads, selects, runs, writes the
// reports and captures, and says what it wrote; problems come back as
// data, not as printed lines or exit codes.
#include "conformance/certify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace rdmapct::conformance {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("rdmapct_certify_test." + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Certify, RunsTheSelectionAndWritesEveryReport) {
  const fs::path dir = FreshDir("reports");
  CertifyOptions o;
  o.filter.ids = {"rfc5040/5.1/*"};
  o.json_file = (dir / "r.json").string();
  o.junit_file = (dir / "r.xml").string();
  o.report_file = (dir / "r.html").string();
  o.tool_version = "test";
  std::size_t calls = 0;
  o.on_case = [&](const CaseResult&, std::size_t index, std::size_t total) {
    EXPECT_EQ(index, calls++);
    EXPECT_GT(total, index);
  };
  const CertifyResult r = Certify(o);
  ASSERT_TRUE(r.ran) << ::testing::PrintToString(r.errors);
  EXPECT_EQ(r.problem, CertifyProblem::kNone);
  EXPECT_TRUE(r.outputs_ok);
  EXPECT_TRUE(r.judged());
  EXPECT_FALSE(r.failed());
  EXPECT_GT(r.cases_loaded, r.run.cases.size());
  EXPECT_EQ(calls, r.run.cases.size());
  for (const CaseResult& c : r.run.cases) EXPECT_THAT(c.id, ::testing::StartsWith("rfc5040/5.1/"));
  EXPECT_EQ(r.reports_written, (std::vector<fs::path>{dir / "r.json", dir / "r.xml", dir / "r.html"}));
  const nlohmann::json j = nlohmann::json::parse(ReadFile(dir / "r.json"));
  EXPECT_EQ(j["cases"].size(), r.run.cases.size());
  EXPECT_EQ(j["tool"]["version"], "test");
  EXPECT_TRUE(r.pcaps_written.empty());  // nothing failed, no --pcap-dir
  EXPECT_FALSE(fs::exists(dir / "rdmapct-failures"));
}

TEST(Certify, AFaultFailsTheCaseAndItsCaptureIsWrittenBesideTheReport) {
  const fs::path dir = FreshDir("fault");
  CertifyOptions o;
  o.faults = {"skip-access-rights-check"};  // breaks R5041-7.1-G2 on purpose
  o.filter.ids = {"rfc5040/7.2/write-to-read-only-region"};
  o.json_file = (dir / "r.json").string();
  const CertifyResult r = Certify(o);
  ASSERT_TRUE(r.ran);
  EXPECT_TRUE(r.failed());
  EXPECT_TRUE(r.judged());
  EXPECT_EQ(ExitStatus(r.run), kExitFail);
  const fs::path pcap = dir / "rdmapct-failures" / "rfc5040_7.2_write-to-read-only-region.pcap";
  EXPECT_EQ(r.pcaps_written, std::vector<fs::path>{pcap});
  EXPECT_TRUE(fs::exists(pcap));
  EXPECT_EQ(r.context.pcap_files.at("rfc5040/7.2/write-to-read-only-region"), pcap.string());
  EXPECT_THAT(r.context.reproduce_args, Contains("skip-access-rights-check"));
}

TEST(Certify, PcapDirGetsEveryCase) {
  const fs::path dir = FreshDir("pcaps");
  CertifyOptions o;
  o.filter.ids = {"rfc5040/5.1/*"};
  o.pcap_dir = (dir / "p").string();
  const CertifyResult r = Certify(o);
  ASSERT_TRUE(r.ran);
  EXPECT_EQ(r.pcaps_written.size(), r.run.cases.size());
  for (const fs::path& p : r.pcaps_written) EXPECT_TRUE(fs::exists(p)) << p;
}

TEST(Certify, ProblemsComeBackAsDataAndNothingRuns) {
  CertifyOptions bad_fault;
  bad_fault.faults = {"no-such-fault"};
  bad_fault.filter.ids = {"rfc5040/5.1/*"};
  CertifyResult r = Certify(bad_fault);
  EXPECT_FALSE(r.ran);
  EXPECT_EQ(r.problem, CertifyProblem::kUsage);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0], HasSubstr("unknown fault \"no-such-fault\""));

  CertifyOptions empty;
  empty.filter.ids = {"no/such/case"};
  r = Certify(empty);
  EXPECT_EQ(r.problem, CertifyProblem::kEmptySelection);
  EXPECT_FALSE(r.ran);

  CertifyOptions unwritable;
  unwritable.filter.ids = {"rfc5040/5.1/*"};
  unwritable.report_file = "/nonexistent-dir/r.html";
  r = Certify(unwritable);
  EXPECT_EQ(r.problem, CertifyProblem::kUsage);
  EXPECT_THAT(r.errors.at(0), HasSubstr("--report /nonexistent-dir/r.html: directory"));

  const fs::path script = FreshDir("script") / "bad.textproto";
  std::ofstream(script) << "case { id: \"rfc5040/7.2/x\" title: \"t\" level: MUST requirement: \"R9999-1-01\" "
                           "step { pause { ms: 1 } } }\n";
  CertifyOptions invalid;
  invalid.scripts = {script.string()};
  r = Certify(invalid);
  EXPECT_EQ(r.problem, CertifyProblem::kInvalidCases);
  EXPECT_THAT(r.errors, Contains(HasSubstr("R9999-1-01 is not in the catalog")));
}

// The interrupt path without signals: a stop request after the first case
// keeps that verdict, lists the rest as not run and still writes the report.
TEST(Certify, AStopRequestEndsTheRunPartialAndTheReportsAreStillWritten) {
  const fs::path dir = FreshDir("stop");
  std::atomic<int> stop{0};
  CertifyOptions o;
  o.filter.ids = {"rfc5040/5.1/*"};
  o.json_file = (dir / "r.json").string();
  o.stop = &stop;
  o.on_case = [&](const CaseResult&, std::size_t, std::size_t) { stop = kStopFinish; };
  const CertifyResult r = Certify(o);
  ASSERT_TRUE(r.ran);
  EXPECT_TRUE(r.run.interrupted);
  ASSERT_EQ(r.run.cases.size(), 1u);
  EXPECT_FALSE(r.run.not_run.empty());
  EXPECT_FALSE(r.judged());
  EXPECT_EQ(ExitStatus(r.run), kExitInterrupted);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(dir / "r.json"));
  EXPECT_EQ(j["cases"].size(), 1u);
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_EQ(j["not_run"].size(), r.run.not_run.size());
}

}  // namespace
}  // namespace rdmapct::conformance
