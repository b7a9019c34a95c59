// What the reports say about a run as a whole so that a CI can act on it
// (issue 18): the failing and warning cases on the first screen and in the
// console summary, each failure's capture in every format, complete or
// partial with the capabilities the target lacked, the INTERRUPTED marker,
// frames in the JSON only where a case did not pass, and the comparison of
// runs (report_compare.h).
#include "conformance/report_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "conformance/case_loader.h"
#include "conformance/report_compare.h"
#include "conformance/report_console.h"
#include "conformance/report_html.h"
#include "conformance/report_json.h"
#include "conformance/report_junit.h"

namespace rdmapct::conformance {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::Not;

CaseResult Case(const std::string& id, Verdict v, const std::string& reason = "") {
  CaseResult c;
  c.id = id;
  c.title = "title of " + id;
  c.document = IdComponent(id, 0);
  c.section = IdComponent(id, 1);
  c.level = proto::MUST;
  c.verdict = v;
  c.reason = reason;
  FrameRecord f;
  f.kind = FrameKind::kMpaRequest;
  f.raw = wire::Bytes(20, 0x4d);
  f.summary = "MPA Request of " + id;
  c.frames = {f, f};
  return c;
}

RunResult SampleRun() {
  RunResult run;
  run.target = "t";
  run.profile = "rfc5040";
  run.cases = {Case("rfc5040/5.1/ok", Verdict::kPass),
               Case("rfc5040/7.2/broken", Verdict::kFail, "no Terminate"),
               Case("rfc5040/7.2/meh", Verdict::kWarn, "outside the accept-set"),
               Case("rfc5040/7.2/atomic", Verdict::kSkip, "the target lacks: region ATOMIC, IRD >= 2"),
               Case("rfc5040/7.2/atomic2", Verdict::kSkip, "the target lacks: region ATOMIC"),
               Case("rfc7306/3/x", Verdict::kSkip, "not in profile rfc5040")};
  run.counts = CountVerdicts(run.cases);
  return run;
}

ReportContext Context() {
  ReportContext ctx;
  ctx.target_arg = "reference";
  ctx.pcap_files["rfc5040/7.2/broken"] = "out/rdmapct-failures/rfc5040_7.2_broken.pcap";
  return ctx;
}

TEST(ReportSummary, ConsoleSummaryNamesFailingAndWarningCases) {
  const std::string s = RenderConsoleSummary(SampleRun());
  EXPECT_THAT(s, HasSubstr("  failed (1):\n    rfc5040/7.2/broken\n"));
  EXPECT_THAT(s, HasSubstr("  warned (1):\n    rfc5040/7.2/meh\n"));
  EXPECT_THAT(s, Not(HasSubstr("in error (")));  // none in this run
  EXPECT_LT(s.find("failed (1)"), s.find("Result: FAIL"));
}

TEST(ReportSummary, HtmlFirstScreenListsFailingAndWarningCasesWithTheirCaptures) {
  ReportContext ctx = Context();
  ctx.link_base = fs::absolute("out");
  const std::string page = RenderHtmlReport(SampleRun(), ctx);
  const std::size_t attention = page.find("<h2>Failing and warning cases</h2>");
  ASSERT_NE(attention, std::string::npos);
  EXPECT_LT(attention, page.find("<h2>Verdict by document and level</h2>"));
  const std::string first = page.substr(attention, page.find("</section>", attention) - attention);
  EXPECT_THAT(first, HasSubstr("<a href=\"#case-rfc5040/7.2/broken\"><code>rfc5040/7.2/broken</code></a>"));
  EXPECT_THAT(first, HasSubstr("<code>rfc5040/7.2/meh</code>"));
  EXPECT_LT(first.find("broken"), first.find("meh"));  // failures first
  // The link is relative to the page's directory: the page and its
  // rdmapct-failures/ travel together.
  const std::string link =
      "<a href=\"rdmapct-failures/rfc5040_7.2_broken.pcap\">out/rdmapct-failures/rfc5040_7.2_broken.pcap</a>";
  EXPECT_THAT(first, HasSubstr(link));
  EXPECT_THAT(page, HasSubstr("<tr><th>Capture (pcap)</th><td>" + link + "</td></tr>"));  // in the finding
}

TEST(ReportSummary, JsonAndJunitNameEachFailuresCapture) {
  const ReportContext ctx = Context();
  const nlohmann::json j = nlohmann::json::parse(RenderJsonReport(SampleRun(), ctx));
  EXPECT_EQ(j["cases"][1]["pcap"], "out/rdmapct-failures/rfc5040_7.2_broken.pcap");
  EXPECT_EQ(j["cases"][0]["pcap"], "");
  EXPECT_EQ(j["failed_cases"], nlohmann::json::array({"rfc5040/7.2/broken"}));
  EXPECT_EQ(j["warned_cases"], nlohmann::json::array({"rfc5040/7.2/meh"}));
  const std::string xml = RenderJunitReport(SampleRun(), ctx);
  EXPECT_THAT(xml, HasSubstr("<property name=\"pcap\" value=\"out/rdmapct-failures/rfc5040_7.2_broken.pcap\"/>"));
  EXPECT_THAT(xml, HasSubstr("[[ATTACHMENT|out/rdmapct-failures/rfc5040_7.2_broken.pcap]]"));
}

TEST(ReportSummary, PartialCertificationNamesTheCapabilitiesTheTargetLacked) {
  const Completeness c = AssessCompleteness(SampleRun());
  EXPECT_FALSE(c.complete);
  EXPECT_EQ(c.capability_skips, 2u);
  EXPECT_EQ(c.profile_skips, 1u);  // the chosen profile is no gap
  using Entry = std::pair<std::string, std::size_t>;
  EXPECT_EQ(c.lacking, (std::vector<Entry>{{"region ATOMIC", 2}, {"IRD >= 2", 1}}));
  EXPECT_EQ(c.statement,
            "partial: 2 case(s) skipped for capabilities the target lacks: region ATOMIC (2 case(s)); "
            "IRD >= 2 (1 case(s))");
  const ReportContext ctx = Context();
  EXPECT_THAT(RenderConsoleSummary(SampleRun()), HasSubstr("  certification " + c.statement + "\n"));
  EXPECT_THAT(RenderHtmlReport(SampleRun(), ctx), HasSubstr("<tr><th>Certification</th><td>partial: 2 case(s)"));
  const nlohmann::json j = nlohmann::json::parse(RenderJsonReport(SampleRun(), ctx));
  EXPECT_EQ(j["completeness"]["complete"], false);
  EXPECT_EQ(j["completeness"]["lacking"][0]["capability"], "region ATOMIC");
  EXPECT_THAT(RenderJunitReport(SampleRun(), ctx), HasSubstr("<property name=\"certification\" value=\"partial: "));

  RunResult clean;
  clean.profile = "commit";
  clean.cases = {Case("commit/3.1.1/a", Verdict::kPass), Case("rfc7306/3/x", Verdict::kSkip, "not in profile commit")};
  const Completeness ok = AssessCompleteness(clean);
  EXPECT_TRUE(ok.complete);
  EXPECT_EQ(ok.statement, "complete: every selected case of profile commit was judged (1 case(s) outside the profile)");
}

TEST(ReportSummary, JsonKeepsFramesOnlyWhereACaseDidNotPassUnlessVerbose) {
  ReportContext ctx = Context();
  nlohmann::json j = nlohmann::json::parse(RenderJsonReport(SampleRun(), ctx));
  EXPECT_TRUE(j["cases"][0]["frames"].empty());  // pass
  EXPECT_EQ(j["cases"][0]["frames_omitted"], 2);
  EXPECT_EQ(j["cases"][1]["frames"].size(), 2u);  // fail
  EXPECT_EQ(j["cases"][2]["frames"].size(), 2u);  // warn
  EXPECT_TRUE(j["cases"][3]["frames"].empty());   // skip
  ctx.verbose = true;
  j = nlohmann::json::parse(RenderJsonReport(SampleRun(), ctx));
  EXPECT_EQ(j["cases"][0]["frames"].size(), 2u);
  EXPECT_EQ(j["cases"][0]["frames_omitted"], 0);
}

TEST(ReportSummary, AnInterruptedRunIsMarkedPartialInEveryFormat) {
  RunResult run = SampleRun();
  run.interrupted = true;
  run.not_run = {"rfc5040/9/late", "rfc5040/9/later"};
  const std::string marker = "INTERRUPTED, partial: 6 of 8 case(s) ran, 2 not run";
  EXPECT_EQ(InterruptedMarker(run), marker);
  EXPECT_EQ(InterruptedMarker(SampleRun()), "");
  const ReportContext ctx = Context();
  const std::string console = RenderConsoleReport(run, ctx);
  EXPECT_THAT(console, HasSubstr("\n  " + marker + "\n"));
  EXPECT_THAT(console, HasSubstr("Result: " + marker + " (the verdicts so far) (exit status 130)"));
  const std::string page = RenderHtmlReport(run, ctx);
  EXPECT_THAT(page, HasSubstr("<span class=\"v v-error\">INTERRUPTED</span> " + marker));
  EXPECT_THAT(page, HasSubstr("<code>rfc5040/9/later</code>"));
  const nlohmann::json j = nlohmann::json::parse(RenderJsonReport(run, ctx));
  EXPECT_EQ(j["partial_marker"], marker);
  EXPECT_EQ(j["exit_status"], 130);
  EXPECT_EQ(j["not_run"].size(), 2u);
  EXPECT_THAT(j["completeness"]["statement"].get<std::string>(),
              HasSubstr("the run was interrupted (2 case(s) not run)"));
  const std::string xml = RenderJunitReport(run, ctx);
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"rdmapct conform rfc5040 (" + marker + ")\""));
  EXPECT_THAT(xml, HasSubstr("<error message=\"" + marker + "\" type=\"interrupted\">not run:\n  rfc5040/9/late"));
}

TEST(ReportSummary, RelativeHrefEncodesAndRelativises) {
  EXPECT_EQ(RelativeHref("a b/c#d.pcap", ""), "a%20b/c%23d.pcap");
  EXPECT_EQ(RelativeHref(fs::absolute("x/y/z.pcap"), fs::absolute("x")), "y/z.pcap");
  EXPECT_EQ(RelativeHref("x/z.pcap", fs::absolute("w")), "../x/z.pcap");
}

// ---- report compare -----------------------------------------------------------

fs::path WriteReport(const std::string& name, const RunResult& run) {
  const fs::path p = fs::temp_directory_path() / ("rdmapct_compare_test." + std::to_string(::getpid()) + "." + name);
  std::ofstream(p) << RenderJsonReport(run, Context());
  return p;
}

TEST(ReportCompare, DiffNamesEveryChangeAndRegressions) {
  RunResult before = SampleRun(), after = SampleRun();
  after.cases[0].verdict = Verdict::kFail;  // ok: pass -> fail, a regression
  after.cases[1].verdict = Verdict::kPass;  // broken: fail -> pass
  after.cases[3].verdict = Verdict::kPass;  // atomic: skip -> pass, no regression
  after.cases.pop_back();                   // rfc7306/3/x: gone
  after.cases.push_back(Case("rfc5040/9/new", Verdict::kError));
  ComparedRun a, b;
  std::string error;
  ASSERT_TRUE(LoadComparedRun(WriteReport("a.json", before).string(), a, error)) << error;
  ASSERT_TRUE(LoadComparedRun(WriteReport("b.json", after).string(), b, error)) << error;
  const std::vector<VerdictChange> d = DiffVerdicts(a, b);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].id, "rfc5040/5.1/ok");
  EXPECT_TRUE(d[0].regression);
  EXPECT_FALSE(d[1].regression);  // an improvement
  EXPECT_FALSE(d[2].regression);  // skip -> pass
  EXPECT_EQ(d[3].after, "");      // absent now
  EXPECT_EQ(d[4].before, "");     // new
  EXPECT_FALSE(d[4].regression);
  const std::string text = RenderCompareText({a, b});
  EXPECT_THAT(text, HasSubstr("#1 -> #2: 5 change(s), 1 regression(s)\n"));
  EXPECT_THAT(text, HasSubstr("  REGRESSED  rfc5040/5.1/ok  pass -> fail\n"));
  EXPECT_THAT(text, HasSubstr("  changed    rfc5040/9/new  (absent) -> error\n"));
}

TEST(ReportCompare, MatrixHasACellPerCaseAndRunAndMarksDifferences) {
  RunResult second = SampleRun();
  second.cases[2].verdict = Verdict::kPass;
  ComparedRun a, b, c;
  std::string error;
  ASSERT_TRUE(LoadComparedRun(WriteReport("m1.json", SampleRun()).string(), a, error));
  ASSERT_TRUE(LoadComparedRun(WriteReport("m2.json", second).string(), b, error));
  ASSERT_TRUE(LoadComparedRun(WriteReport("m3.json", SampleRun()).string(), c, error));
  const std::string page = RenderCompareHtml({a, b, c});
  EXPECT_THAT(page, HasSubstr("<tr class=\"differs\"><td><code>rfc5040/7.2/meh</code> <strong>(differs)</strong></td>"
                              "<td><span class=\"v v-warn\">WARN</span></td><td><span class=\"v v-pass\">PASS</span>"
                              "</td><td><span class=\"v v-warn\">WARN</span></td></tr>"));
  EXPECT_THAT(page, HasSubstr("<tr><td><code>rfc5040/7.2/broken</code></td>"));
  EXPECT_THAT(page, HasSubstr("#2 &rarr; #3: 1 change(s)"));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
}

TEST(ReportCompare, RejectsWhatIsNotAConformReport) {
  const fs::path p = fs::temp_directory_path() / ("rdmapct_compare_test." + std::to_string(::getpid()) + ".bad");
  std::ofstream(p) << R"({"schema": "rdmapct-coverage"})";
  ComparedRun r;
  std::string error;
  EXPECT_FALSE(LoadComparedRun(p.string(), r, error));
  EXPECT_THAT(error, HasSubstr("not an rdmapct conform report"));
  std::ofstream(p) << "not json";
  EXPECT_FALSE(LoadComparedRun(p.string(), r, error));
  EXPECT_THAT(error, HasSubstr("not JSON"));
}

}  // namespace
}  // namespace rdmapct::conformance
