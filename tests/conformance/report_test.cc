// Reports rendered from a hand-built RunResult: every format says what the
// result says, groups by document / section / level, escapes everything the
// target or a case file controls, and gives a reproduce command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/catalog.h"
#include "conformance/report_common.h"
#include "conformance/report_console.h"
#include "conformance/report_html.h"
#include "conformance/report_json.h"
#include "conformance/report_junit.h"

namespace rdmapct::conformance {
namespace {

namespace testing_fixture {

std::optional<Catalog> SmallCatalog() {
  const std::string tsv = std::string(Catalog::kHeader) + "\n" +
                          "R5040-7.2-01\tRFC5040\t7.2\tMUST\tdata sink\tyes\taccess-rights\t"
                          "Write to an STag without Remote Write access <must> be terminated & place \"nothing\".\t"
                          "Terminate 1/1/0x00.\n"
                          "R5040-7.2-02\tRFC5040\t7.2\tMUST\tdata sink\tyes\tddp-tagged\tA valid Write is placed.\t\n"
                          "R5040-4.8-05\tRFC5040\t4.8\tSHOULD\tlocal peer\tyes\tterminate-codes\tM bit set.\t\n";
  CatalogLoad load = Catalog::Parse(tsv, "small.tsv");
  EXPECT_TRUE(load.ok()) << load.error.Describe();
  return load.catalog;
}

CaseResult Case(std::string id, std::string title, proto::Level level, Verdict v, std::string reason,
                std::chrono::microseconds duration) {
  CaseResult c;
  c.document = IdComponent(id, 0);
  c.section = IdComponent(id, 1);
  c.id = std::move(id);
  c.title = std::move(title);
  c.level = level;
  c.verdict = v;
  c.reason = std::move(reason);
  c.duration = duration;
  c.requirements = {"R5040-7.2-02"};
  return c;
}

FrameRecord Frame(Direction d, FrameKind k, uint64_t offset, wire::Bytes raw, std::string summary, std::string detail,
                  std::chrono::microseconds at) {
  FrameRecord f;
  f.direction = d;
  f.kind = k;
  f.stream_offset = offset;
  f.raw = std::move(raw);
  f.summary = std::move(summary);
  f.detail = std::move(detail);
  f.at = at;
  return f;
}

// The failing case: a Write through a read-only STag was placed.
CaseResult FailingCase() {
  CaseResult c = Case("rfc5040/7.2/write-to-read-only-region", "Write <via> RO & \"stuff\"", proto::MUST,
                      Verdict::kFail, "no Terminate within 2000 ms", std::chrono::microseconds(2'500'000));
  c.requirements = {"R5040-7.2-01", "R5041-7.1-99"};
  c.deciding_step = 1;
  StepResult send;
  send.index = 0;
  send.action = "send RDMA Write";
  StepResult expect;
  expect.index = 1;
  expect.action = "expect terminate";
  expect.verdict = Verdict::kFail;
  expect.severity = proto::MUST;
  expect.requirements = c.requirements;
  expect.reason = c.reason;
  expect.expected = "Terminate 1/1/0x00 (DDP / Tagged Buffer Error / Invalid STag)";
  expect.actual = "RDMA Write placed 256 octets";
  expect.frames = {1};
  c.steps = {send, expect};
  c.choices = {AcceptChoice{"Terminate code", "1/1/0x00", true, true, "siw"}};
  const std::string key = "MPA ID Req Frame";
  wire::Bytes request(key.begin(), key.end());
  for (uint8_t b : {0x40, 0x01, 0x00, 0x00}) request.push_back(b);
  c.frames = {
      Frame(Direction::kToTarget, FrameKind::kMpaRequest, 0, request, "MPA Request Rev 1 M=0 C=1 R=0 S=0 PD_Length 0",
            "MPA Request Frame\n    Key: MPA ID Req Frame\n", std::chrono::microseconds(0)),
      Frame(Direction::kToTarget, FrameKind::kFpdu, 20, wire::Bytes(40, 0xAB), "RDMA Write STag 0x100", "",
            std::chrono::microseconds(1200)),
      Frame(Direction::kFromTarget, FrameKind::kFin, 20, {}, "", "", std::chrono::microseconds(3000))};
  return c;
}

RunResult SampleRun() {
  RunResult run;
  run.target = "in-process reference (fault: none)";
  run.profile = "rfc5040";
  run.target_info = {"convention 1.0", "IRD 8"};
  run.start = std::chrono::system_clock::from_time_t(1714564800);  // 2024-05-01T12:00:00Z
  run.duration = std::chrono::microseconds(3'000'000);
  using us = std::chrono::microseconds;
  run.cases.push_back(
      Case("rfc5040/7.2/write-ok", "RDMA Write places data", proto::MUST, Verdict::kPass, "", us(1000)));
  run.cases.push_back(FailingCase());
  run.cases.push_back(Case("rfc5040/10.1/security", "Security case", proto::MUST, Verdict::kPass, "", us(500)));
  CaseResult warn = Case("rfc5040/7.2/terminate-code-choice", "Terminate code choice", proto::SHOULD, Verdict::kWarn,
                         "registered code outside the accept-set", us(2000));
  warn.requirements = {"R5040-4.8-05"};
  warn.choices = {
      AcceptChoice{"Terminate code", "0/2/0x06 (RDMAP / Remote Operation Error / Invalid Request)", false, false, ""}};
  run.cases.push_back(warn);
  run.cases.push_back(Case("rfc5040/7.2/needs-atomic", "Needs an atomic region", proto::MUST, Verdict::kSkip,
                           "target lacks region ATOMIC", us(10)));
  run.cases.push_back(
      Case("rfc5041/7.1/garbage", "Garbage answer", proto::MUST, Verdict::kError, "target sent garbage", us(700)));
  run.counts = CountVerdicts(run.cases);
  return run;
}

}  // namespace testing_fixture

using testing::HasSubstr;
using testing::Not;

std::size_t Occurrences(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

class ReportTest : public testing::Test {
 protected:
  void SetUp() override {
    catalog_ = testing_fixture::SmallCatalog();
    run_ = testing_fixture::SampleRun();
    ctx_.catalog = &*catalog_;
    ctx_.tool_version = "9.8.7";
    ctx_.target_arg = "reference";
    ctx_.reproduce_args = {"--fault", "skip-bounds-check"};
  }
  std::optional<Catalog> catalog_;
  RunResult run_;
  ReportContext ctx_;
};

// ---- shared helpers ---------------------------------------------------------

TEST(ReportCommonTest, SectionOrderIsNumericPerComponent) {
  EXPECT_TRUE(SectionLess("7.2", "7.10"));
  EXPECT_FALSE(SectionLess("7.10", "7.2"));
  EXPECT_TRUE(SectionLess("7", "7.1"));
  EXPECT_TRUE(SectionLess("9.1", "10"));
  EXPECT_TRUE(SectionLess("7.2", "A.4"));  // numbers before appendix letters
  EXPECT_TRUE(SectionLess("A.4", "A.5.2"));
  EXPECT_TRUE(SectionLess("007", "8"));  // by value, leading zeros do not matter
  EXPECT_FALSE(SectionLess("5.5", "5.5"));
}

TEST(ReportCommonTest, GroupVerdictOrder) {
  Counts c;
  EXPECT_EQ(GroupVerdict(c), Verdict::kSkip);
  c.skip = 2;
  EXPECT_EQ(GroupVerdict(c), Verdict::kSkip);
  c.pass = 1;
  EXPECT_EQ(GroupVerdict(c), Verdict::kPass);
  c.warn = 1;
  EXPECT_EQ(GroupVerdict(c), Verdict::kWarn);
  c.error = 1;
  EXPECT_EQ(GroupVerdict(c), Verdict::kError);
  c.fail = 1;
  EXPECT_EQ(GroupVerdict(c), Verdict::kFail);
}

TEST(ReportCommonTest, ShellQuoteOnlyWhenNeeded) {
  EXPECT_EQ(ShellQuote("rfc5040/7.2/write-to-read-only-region"), "rfc5040/7.2/write-to-read-only-region");
  EXPECT_EQ(ShellQuote("tcp://10.0.0.2:4791"), "tcp://10.0.0.2:4791");
  EXPECT_EQ(ShellQuote("reference?fault=a&profile=commit"), "'reference?fault=a&profile=commit'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
}

TEST(ReportCommonTest, EscapingAndUtf8) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(HtmlEscape("<script>"), "&lt;script&gt;");
  // XML 1.0 forbids C0 controls other than TAB, LF, CR, even as references.
  EXPECT_EQ(XmlEscape("a\x01"
                      "b\tc\n"),
            "a\\x01b\tc\n");
  EXPECT_EQ(XmlEscape(std::string("\0", 1)), "\\x00");
  // Ill-formed UTF-8 becomes U+FFFD; well-formed text passes unchanged.
  EXPECT_EQ(SanitizeUtf8("ok \xc2\xa7 \xe2\x82\xac"), "ok \xc2\xa7 \xe2\x82\xac");
  EXPECT_EQ(SanitizeUtf8("\xff"), "\xef\xbf\xbd");
  EXPECT_EQ(SanitizeUtf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong '/'
  EXPECT_EQ(SanitizeUtf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
  EXPECT_EQ(SanitizeUtf8("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");                  // cut short
}

TEST(ReportCommonTest, HexDumpKnownAnswer) {
  const wire::Bytes key = {'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e', 0x40, 0x01};
  EXPECT_EQ(HexDump(key, 0x20),
            "0020  4d 50 41 20 49 44 20 52  65 71 20 46 72 61 6d 65  MPA ID Req Frame\n"
            "0030  40 01                                             @.\n");
  EXPECT_EQ(HexDump(key, 0, 4), "0000  4d 50 41 20                                       MPA \n... 14 more octets\n");
  EXPECT_EQ(HexDigits(key).substr(0, 8), "4d504120");
}

TEST(ReportCommonTest, TimeAndDuration) {
  EXPECT_EQ(IsoTime(std::chrono::system_clock::from_time_t(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(DurationText(std::chrono::microseconds(350)), "350 us");
  EXPECT_EQ(DurationText(std::chrono::microseconds(12'345)), "12 ms");
  EXPECT_EQ(DurationText(std::chrono::microseconds(1'250'000)), "1.25 s");
  EXPECT_EQ(SecondsText(std::chrono::microseconds(12'345)), "0.012");
}

TEST_F(ReportTest, GroupingByDocumentSectionAndLevel) {
  const std::vector<DocumentGroup> docs = GroupCases(run_);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].document, "rfc5040");
  EXPECT_EQ(docs[1].document, "rfc5041");
  ASSERT_EQ(docs[0].sections.size(), 2u);
  EXPECT_EQ(docs[0].sections[0].section, "7.2");  // numeric order: "10.1" < "7.2" as text
  EXPECT_EQ(docs[0].sections[1].section, "10.1");
  EXPECT_EQ(docs[0].sections[0].cases.size(), 4u);
  ASSERT_EQ(docs[0].levels.size(), 2u);
  EXPECT_EQ(docs[0].levels[0].level, proto::MUST);
  EXPECT_EQ(docs[0].levels[1].level, proto::SHOULD);
  EXPECT_EQ(docs[0].levels[0].counts.fail, 1u);
  EXPECT_EQ(docs[0].counts.total(), 5u);
  EXPECT_EQ(GroupVerdict(docs[0].counts), Verdict::kFail);
  EXPECT_EQ(GroupVerdict(docs[1].counts), Verdict::kError);
}

TEST_F(ReportTest, ReproduceCommandKeepsTargetProfileAndExtraArgs) {
  EXPECT_EQ(ReproduceCommand(ctx_, run_, run_.cases[1]),
            "rdmapct conform --target reference --profile rfc5040 --fault skip-bounds-check "
            "--case rfc5040/7.2/write-to-read-only-region -v");
  ReportContext bare;  // no --target given: the connector's description, quoted
  EXPECT_THAT(ReproduceCommand(bare, run_, run_.cases[1]),
              HasSubstr("--target 'in-process reference (fault: none)' --profile rfc5040 --case"));
}

TEST(ReportPcapTest, HookIsANoOpUntilAWriterIsInstalled) {
  RunResult run;
  std::string error;
  SetPcapWriter(nullptr);
  EXPECT_FALSE(PcapWriterAvailable());
  EXPECT_FALSE(WriteCasePcaps("/tmp", run, error));
  EXPECT_THAT(error, HasSubstr("not yet available"));
  int calls = 0;
  SetPcapWriter([&](const std::filesystem::path& dir, const RunResult&, std::string&) {
    ++calls;
    return dir == "/tmp/x";
  });
  EXPECT_TRUE(PcapWriterAvailable());
  EXPECT_TRUE(WriteCasePcaps("/tmp/x", run, error));
  EXPECT_EQ(calls, 1);
  SetPcapWriter(nullptr);
}

// ---- console ------------------------------------------------------------------

TEST_F(ReportTest, ConsoleGroupsCasesAndExplainsFailures) {
  const std::string out = RenderConsoleReport(run_, ctx_);
  EXPECT_THAT(out, Not(HasSubstr("\x1b[")));  // no colour unless asked
  const std::size_t s72 = out.find("\nrfc5040 section 7.2\n");
  const std::size_t s101 = out.find("\nrfc5040 section 10.1\n");
  const std::size_t s5041 = out.find("\nrfc5041 section 7.1\n");
  ASSERT_NE(s72, std::string::npos) << out;
  ASSERT_NE(s101, std::string::npos);
  ASSERT_NE(s5041, std::string::npos);
  EXPECT_LT(s72, s101);
  EXPECT_LT(s101, s5041);
  // One line per case, verdict padded to 5 columns.
  EXPECT_THAT(out, HasSubstr("  PASS   rfc5040/7.2/write-ok  RDMA Write places data\n"));
  EXPECT_THAT(out, HasSubstr("  FAIL   rfc5040/7.2/write-to-read-only-region  Write <via> RO & \"stuff\"\n"));
  EXPECT_THAT(out, HasSubstr("  SKIP   rfc5040/7.2/needs-atomic"));
  EXPECT_THAT(out, HasSubstr("  ERROR  rfc5041/7.1/garbage"));
  // The failure: reason, deciding step, expected vs actual, reproduce.
  EXPECT_THAT(out, HasSubstr("reason: no Terminate within 2000 ms\n"));
  EXPECT_THAT(out, HasSubstr("expected: Terminate 1/1/0x00 (DDP / Tagged Buffer Error / Invalid STag)\n"));
  EXPECT_THAT(out, HasSubstr("actual:   RDMA Write placed 256 octets\n"));
  EXPECT_THAT(out, HasSubstr("reproduce: rdmapct conform --target reference --profile rfc5040 --fault "
                             "skip-bounds-check --case rfc5040/7.2/write-to-read-only-region -v\n"));
  // The warning names the choice outside the accept-set.
  EXPECT_THAT(out, HasSubstr("Terminate code: 0/2/0x06 (RDMAP / Remote Operation Error / Invalid Request) "
                             "(outside the accept-set)"));
  // A plain pass has no detail without -v, and frames only appear with -v.
  EXPECT_THAT(out, HasSubstr("  PASS   rfc5040/7.2/write-ok  RDMA Write places data\n"
                             "  FAIL   rfc5040/7.2/write-to-read-only-region"));
  EXPECT_THAT(out, Not(HasSubstr("MPA ID Req Frame")));
  // Summary per document and level, then the totals and the result.
  EXPECT_THAT(out, HasSubstr("  rfc5040        5 cases: 2 pass, 1 warn, 1 fail, 1 skip, 0 error  FAIL \n"));
  EXPECT_THAT(out, HasSubstr("    MUST         4 cases: 2 pass, 0 warn, 1 fail, 1 skip, 0 error  FAIL \n"));
  EXPECT_THAT(out, HasSubstr("    SHOULD       1 cases: 0 pass, 1 warn, 0 fail, 0 skip, 0 error  WARN \n"));
  EXPECT_THAT(out, HasSubstr("  total          6 cases: 2 pass, 1 warn, 1 fail, 1 skip, 1 error\n"));
  EXPECT_THAT(out, HasSubstr("Result: FAIL: 1 case(s) missed a MUST-level expectation (exit status 1)\n"));
}

TEST_F(ReportTest, ConsoleVerboseShowsStepsAndDecodedFrames) {
  ctx_.verbose = true;
  const std::string out = RenderConsoleReport(run_, ctx_);
  // Every case gets a detail block, a pass included.
  EXPECT_THAT(out, HasSubstr("level MUST; requirements R5040-7.2-02"));
  EXPECT_THAT(out, HasSubstr("step 1 FAIL  expect terminate [MUST]"));
  // Frame header, decoded tree (FrameRecord::detail) and hex dump.
  EXPECT_THAT(out, HasSubstr("#0 conn 0 suite->target MPA Request @0 20 octets +0 us  MPA Request Rev 1"));
  EXPECT_THAT(out, HasSubstr("    MPA Request Frame\n"));
  EXPECT_THAT(out, HasSubstr("0000  4d 50 41 20 49 44 20 52  65 71 20 46 72 61 6d 65  MPA ID Req Frame\n"));
  EXPECT_THAT(out, HasSubstr("#2 conn 0 target->suite FIN +3 ms"));
}

TEST_F(ReportTest, ConsoleColourOnlyWhenAsked) {
  const std::string out = RenderConsoleReport(run_, ctx_, ConsoleStyle{.color = true});
  EXPECT_THAT(out, HasSubstr("\x1b[1;31mFAIL\x1b[0m "));
  EXPECT_THAT(out, HasSubstr("\x1b[32mPASS\x1b[0m "));
  EXPECT_EQ(RenderCaseLine(run_.cases[0]), "PASS   rfc5040/7.2/write-ok  RDMA Write places data");
}

TEST_F(ReportTest, LiveProgressOneLinePerCaseOrInPlace) {
  for (bool in_place : {false, true}) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    LiveProgress progress(f, 12, in_place);
    progress.OnCase(run_.cases[0]);
    progress.OnCase(run_.cases[1]);
    progress.Finish();
    std::rewind(f);
    std::string text;
    for (int ch; (ch = std::fgetc(f)) != EOF;) text += static_cast<char>(ch);
    std::fclose(f);
    if (in_place) {
      EXPECT_EQ(text,
                "\r\x1b[K[ 1/12] PASS   rfc5040/7.2/write-ok  (1 ms)"
                "\r\x1b[K[ 2/12] FAIL   rfc5040/7.2/write-to-read-only-region  (2.50 s)\r\x1b[K");
    } else {
      EXPECT_EQ(text,
                "[ 1/12] PASS   rfc5040/7.2/write-ok  (1 ms)\n"
                "[ 2/12] FAIL   rfc5040/7.2/write-to-read-only-region  (2.50 s)\n");
    }
  }
}

// ---- JSON ---------------------------------------------------------------------

TEST_F(ReportTest, JsonHasTheWholeResult) {
  const nlohmann::json j = nlohmann::json::parse(RenderJsonReport(run_, ctx_));
  EXPECT_EQ(j["schema"], "rdmapct-conform-report");
  EXPECT_EQ(j["schema_version"], kJsonReportSchemaVersion);
  EXPECT_EQ(j["tool"]["version"], "9.8.7");
  EXPECT_EQ(j["target"], "in-process reference (fault: none)");
  EXPECT_EQ(j["target_arg"], "reference");
  EXPECT_EQ(j["profile"], "rfc5040");
  EXPECT_EQ(j["target_info"][0], "convention 1.0");
  EXPECT_EQ(j["start"], "2024-05-01T12:00:00Z");
  EXPECT_EQ(j["duration_us"], 3'000'000);
  EXPECT_EQ(j["exit_status"], 1);
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["counts"]["fail"], 1);
  EXPECT_EQ(j["counts"]["total"], 6);
  ASSERT_EQ(j["cases"].size(), run_.cases.size());
  const nlohmann::json& fail = j["cases"][1];
  EXPECT_EQ(fail["id"], "rfc5040/7.2/write-to-read-only-region");
  EXPECT_EQ(fail["title"], "Write <via> RO & \"stuff\"");
  EXPECT_EQ(fail["verdict"], "fail");
  EXPECT_EQ(fail["level"], "MUST");
  EXPECT_EQ(fail["requirements"][0], "R5040-7.2-01");
  EXPECT_EQ(fail["deciding_step"], 1);
  EXPECT_EQ(fail["duration_us"], 2'500'000);
  EXPECT_EQ(fail["steps"][1]["action"], "expect terminate");
  EXPECT_EQ(fail["steps"][1]["severity"], "MUST");
  EXPECT_EQ(fail["steps"][1]["actual"], "RDMA Write placed 256 octets");
  EXPECT_EQ(fail["steps"][1]["frames"][0], 1);
  EXPECT_EQ(fail["choices"][0]["chosen"], "1/1/0x00");
  EXPECT_EQ(fail["choices"][0]["preferred"], true);
  ASSERT_EQ(fail["frames"].size(), 3u);
  EXPECT_EQ(fail["frames"][0]["kind"], "MPA Request");
  EXPECT_EQ(fail["frames"][0]["direction"], "suite->target");
  EXPECT_EQ(fail["frames"][0]["raw_hex"], "4d504120494420526571204672616d6540010000");
  EXPECT_EQ(fail["frames"][0]["length"], 20);
  EXPECT_EQ(fail["frames"][2]["kind"], "FIN");
  EXPECT_EQ(fail["frames"][2]["at_us"], 3000);
  EXPECT_EQ(fail["reproduce"], ReproduceCommand(ctx_, run_, run_.cases[1]));
  // Summary per document, level and section.
  ASSERT_EQ(j["documents"].size(), 2u);
  EXPECT_EQ(j["documents"][0]["document"], "rfc5040");
  EXPECT_EQ(j["documents"][0]["verdict"], "fail");
  EXPECT_EQ(j["documents"][0]["levels"][0]["level"], "MUST");
  EXPECT_EQ(j["documents"][0]["levels"][0]["counts"]["fail"], 1);
  EXPECT_EQ(j["documents"][0]["sections"][1]["section"], "10.1");
}

TEST_F(ReportTest, JsonReplacesIllFormedUtf8FromTheTarget) {
  ctx_.verbose = true;  // case 0 passes: its frames are in the JSON only with --verbose
  run_.cases[0].frames.push_back(FrameRecord{});
  run_.cases[0].frames.back().summary = "garbage \xff\xfe";
  const nlohmann::json j = nlohmann::json::parse(RenderJsonReport(run_, ctx_));
  EXPECT_EQ(j["cases"][0]["frames"][0]["summary"], "garbage \xef\xbf\xbd\xef\xbf\xbd");
}

// ---- JUnit XML ----------------------------------------------------------------

// Well-formedness as far as the report uses XML: balanced, properly nested
// elements, attribute values quoted, no bare '<' or '&' in text.
::testing::AssertionResult WellFormedXml(const std::string& xml) {
  std::vector<std::string> stack;
  std::size_t i = xml.find("?>");
  if (xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0) != 0 || i == std::string::npos) {
    return ::testing::AssertionFailure() << "no XML declaration";
  }
  const std::regex entity("^&(amp|lt|gt|quot|#39);");
  for (i += 2; i < xml.size(); ++i) {
    if (xml[i] == '&') {
      if (!std::regex_search(xml.substr(i, 8), entity)) return ::testing::AssertionFailure() << "bare & at " << i;
      continue;
    }
    if (xml[i] != '<') continue;
    const std::size_t end = xml.find('>', i);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unterminated tag at " << i;
    std::string tag = xml.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) return ::testing::AssertionFailure() << "'<' inside tag at " << i;
    if (Occurrences(tag, "\"") % 2 != 0) return ::testing::AssertionFailure() << "unbalanced quotes at " << i;
    i = end;
    if (tag.rfind("!--", 0) == 0) continue;
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) {
        return ::testing::AssertionFailure()
               << "</" << tag.substr(1) << "> does not close <" << (stack.empty() ? "" : stack.back()) << ">";
      }
      stack.pop_back();
    } else if (tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  if (!stack.empty()) return ::testing::AssertionFailure() << "<" << stack.back() << "> never closed";
  return ::testing::AssertionSuccess();
}

TEST_F(ReportTest, JunitOfAnInterruptedRunIsWellFormedAndCountsTheMarker) {
  run_.interrupted = true;
  run_.not_run = {"rfc5040/9/a&b"};
  ctx_.pcap_files["rfc5040/7.2/write-to-read-only-region"] = "out/<x>.pcap";
  const std::string xml = RenderJunitReport(run_, ctx_);
  EXPECT_TRUE(WellFormedXml(xml));
  EXPECT_THAT(xml, HasSubstr("tests=\"7\" failures=\"1\" errors=\"2\""));  // 6 cases + the marker
  EXPECT_THAT(xml, HasSubstr("rfc5040/9/a&amp;b"));
}

TEST_F(ReportTest, JunitCountsAndMapping) {
  const std::string xml = RenderJunitReport(run_, ctx_);
  EXPECT_TRUE(WellFormedXml(xml)) << xml;
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"rdmapct conform rfc5040\" tests=\"6\" failures=\"1\" errors=\"1\" "
                             "skipped=\"1\" time=\"3.000\" timestamp=\"2024-05-01T12:00:00Z\">"));
  // One testsuite per document / section, numeric section order.
  EXPECT_EQ(Occurrences(xml, "<testsuite "), 3u);
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"rfc5040 7.2\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"rfc5041 7.1\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\""));
  EXPECT_LT(xml.find("name=\"rfc5040 7.2\""), xml.find("name=\"rfc5040 10.1\""));
  EXPECT_EQ(Occurrences(xml, "<testcase "), 6u);
  EXPECT_EQ(Occurrences(xml, "<failure "), 1u);
  EXPECT_EQ(Occurrences(xml, "<error "), 1u);
  EXPECT_EQ(Occurrences(xml, "<skipped "), 1u);
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"rfc5040.7.2\" name=\"rfc5040/7.2/write-to-read-only-region\" "
                             "time=\"2.500\">"));
  EXPECT_THAT(xml, HasSubstr("<failure message=\"no Terminate within 2000 ms\" type=\"MUST\">"));
  EXPECT_THAT(xml, HasSubstr("<skipped message=\"target lacks region ATOMIC\"/>"));
  // A warning passes, with the verdict as a property.
  EXPECT_THAT(xml, HasSubstr("<property name=\"verdict\" value=\"warn\"/>"));
  // Title with < & " escaped, also inside system-out.
  EXPECT_THAT(xml, HasSubstr("Write &lt;via&gt; RO &amp; &quot;stuff&quot;"));
  EXPECT_THAT(xml, Not(HasSubstr("<via>")));
  EXPECT_THAT(xml, HasSubstr("reproduce: rdmapct conform --target reference"));
  EXPECT_THAT(xml, HasSubstr("<property name=\"target\" value=\"in-process reference (fault: none)\"/>"));
}

TEST_F(ReportTest, JunitEscapesControlCharactersFromTheTarget) {
  run_.cases[5].reason = "garbage \x01\x02 <x> & \"q\"";
  const std::string xml = RenderJunitReport(run_, ctx_);
  EXPECT_TRUE(WellFormedXml(xml)) << xml;
  EXPECT_THAT(xml, HasSubstr("<error message=\"garbage \\x01\\x02 &lt;x&gt; &amp; &quot;q&quot;\""));
}

// ---- HTML ---------------------------------------------------------------------

TEST_F(ReportTest, HtmlIsASelfContainedCertificationReport) {
  const std::string html = RenderHtmlReport(run_, ctx_);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(html, HasSubstr("<style>"));
  // Self-contained: no scripts, no external assets.
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("http")));
  // Header: target, profile, date, version, overall verdict.
  EXPECT_THAT(html, HasSubstr("<tr><th>Target</th><td>in-process reference (fault: none)</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><th>Profile</th><td>rfc5040</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><th>Date (UTC)</th><td>2024-05-01T12:00:00Z</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><th>rdmapct version</th><td>9.8.7</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"v v-fail\">FAIL</span> 1 case(s) missed a MUST-level expectation."));
  // Per document and level table: rfc5040 MUST cell fails 2 of 3 judged.
  EXPECT_THAT(html,
              HasSubstr("<span class=\"v v-fail\">FAIL</span> <span class=\"muted\">2/3 passed, 1 skipped</span>"));
  // Per section table row.
  EXPECT_THAT(html, HasSubstr("<tr><td>rfc5040</td><td>10.1</td><td class=\"num\">1</td>"));
  // The finding: requirement text from the catalog, escaped; expected vs
  // actual; decoded frames; the reproduce command.
  EXPECT_THAT(html, HasSubstr("Write to an STag without Remote Write access &lt;must&gt; be terminated &amp; "
                              "place &quot;nothing&quot;."));
  EXPECT_THAT(html, Not(HasSubstr("<must>")));
  EXPECT_THAT(html, HasSubstr("On the wire: Terminate 1/1/0x00."));
  EXPECT_THAT(html, HasSubstr("<pre>Terminate 1/1/0x00 (DDP / Tagged Buffer Error / Invalid STag)</pre>"));
  EXPECT_THAT(html, HasSubstr("<pre>RDMA Write placed 256 octets</pre>"));
  EXPECT_THAT(html, HasSubstr("<details><summary>Frames exchanged (3), decoded</summary>"));
  EXPECT_THAT(html, HasSubstr("MPA ID Req Frame"));
  EXPECT_THAT(html, HasSubstr("<pre class=\"cmd\">rdmapct conform --target reference --profile rfc5040 --fault "
                              "skip-bounds-check --case rfc5040/7.2/write-to-read-only-region -v</pre>"));
  EXPECT_THAT(html, HasSubstr("<h3><span class=\"v v-fail\">FAIL</span> <code>rfc5040/7.2/write-to-read-only-region"
                              "</code></h3>\n<p>Write &lt;via&gt; RO &amp; &quot;stuff&quot;</p>"));
  // Findings: the failure, the error and the warning, not the passes or the skip.
  EXPECT_EQ(Occurrences(html, "<section class=\"finding"), 3u);
  EXPECT_LT(html.find("\"finding f-fail\""), html.find("\"finding f-error\""));
  EXPECT_LT(html.find("\"finding f-error\""), html.find("\"finding f-warn\""));
  // A cited id the catalog lacks is shown as such, not dropped.
  EXPECT_THAT(html,
              HasSubstr("<td><code>R5041-7.1-99</code></td><td colspan=\"3\" class=\"muted\">not in the catalog"));
  // All cases listed, findings linked.
  EXPECT_THAT(html, HasSubstr("<a href=\"#case-rfc5040/7.2/write-to-read-only-region\">"));
  EXPECT_THAT(html, HasSubstr("<td><code>rfc5040/7.2/write-ok</code></td>"));
  EXPECT_THAT(html, HasSubstr("target lacks region ATOMIC"));
}

TEST_F(ReportTest, HtmlOfACleanRunSaysSo) {
  RunResult clean = run_;
  clean.cases = {run_.cases[0]};
  const std::string html = RenderHtmlReport(clean, ctx_);
  EXPECT_THAT(html, HasSubstr("<p>No failures, errors or warnings.</p>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"v v-pass\">PASS</span> Every MUST-level case that applied passed"));
}

// Issue 19 part 4: every value of a sweep is its own result in every
// report, with the parameter beside it, and the sweep is summarised.
TEST_F(ReportTest, SweepValuesAreSubResultsInEveryReport) {
  RunResult run = run_;
  using us = std::chrono::microseconds;
  for (const char* v : {"1", "2"}) {
    CaseResult c = testing_fixture::Case(std::string("rfc5040/7.2/misaligned-") + v, "misaligned", proto::MUST,
                                         std::string(v) == "1" ? Verdict::kPass : Verdict::kFail, "", us(10));
    c.sweep_case = "rfc5040/7.2/misaligned";
    c.sweep_parameter = "misalignment";
    c.sweep_value = v;
    run.cases.push_back(c);
  }
  const std::string console = RenderConsoleReport(run, ctx_, ConsoleStyle{false});
  EXPECT_THAT(console, HasSubstr("rfc5040/7.2/misaligned-2  misaligned  [misalignment=2]"));
  EXPECT_THAT(
      console,
      HasSubstr("Sweeps (1: one result per value)\n  rfc5040/7.2/misaligned  FAIL   misalignment: 1 PASS, 2 FAIL\n"));
  const nlohmann::json j = nlohmann::json::parse(RenderJsonReport(run, ctx_));
  ASSERT_EQ(j["sweeps"].size(), 1u);
  EXPECT_EQ(j["sweeps"][0]["case"], "rfc5040/7.2/misaligned");
  EXPECT_EQ(j["sweeps"][0]["values"][1]["verdict"], "fail");
  EXPECT_EQ(j["cases"].back()["sweep"]["value"], "2");
  EXPECT_TRUE(j["cases"][0]["sweep"].is_null());
  const std::string xml = RenderJunitReport(run, ctx_);
  EXPECT_THAT(xml, HasSubstr("<property name=\"sweep_parameter\" value=\"misalignment\"/>"));
  EXPECT_THAT(xml, HasSubstr("<property name=\"sweep_value\" value=\"2\"/>"));
  const std::string html = RenderHtmlReport(run, ctx_);
  EXPECT_THAT(html, HasSubstr("<h2>Sweeps</h2>"));
  EXPECT_THAT(html, HasSubstr("<code>misalignment=2</code>"));
}

}  // namespace
}  // namespace rdmapct::conformance
