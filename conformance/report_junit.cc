#include "conformance/report_junit.h"

#include <fmt/format.h>

#include "conformance/report_summary.h"

namespace rdmapct::conformance {
namespace {

std::string Attr(std::string_view name, std::string_view value) {
  return fmt::format(" {}=\"{}\"", name, XmlEscape(value));
}

std::string CountAttrs(const Counts& c) {
  // JUnit counts warnings as passed tests.
  return fmt::format(" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"", c.total(), c.fail, c.error, c.skip);
}

std::chrono::microseconds TotalTime(const std::vector<const CaseResult*>& cases) {
  std::chrono::microseconds t{0};
  for (const CaseResult* c : cases) t += c->duration;
  return t;
}

// Plain-text details of a case (escaped by the caller).
std::string SystemOut(const RunResult& run, const CaseResult& c, const ReportContext& ctx) {
  std::string out =
      fmt::format("{}\nverdict: {}\nlevel: {}\nrequirements:", c.title, VerdictName(c.verdict), LevelLabel(c.level));
  for (const std::string& r : c.requirements) out += " " + r;
  out += "\n";
  if (!c.reason.empty()) out += "reason: " + c.reason + "\n";
  if (c.deciding_step >= 0 && static_cast<std::size_t>(c.deciding_step) < c.steps.size()) {
    const StepResult& s = c.steps[static_cast<std::size_t>(c.deciding_step)];
    out += fmt::format("step {}: {}\n", s.index, s.action);
    if (!s.expected.empty()) out += "expected:\n" + Indent(s.expected, "  ") + "\n";
    if (!s.actual.empty()) out += "actual:\n" + Indent(s.actual, "  ") + "\n";
  }
  for (const AcceptChoice& ch : c.choices) {
    out += fmt::format("{}: {}{}{}\n", ch.what, ch.chosen,
                       !ch.in_set     ? " (outside the accept-set)"
                       : ch.preferred ? " (preferred)"
                       : ch.tolerated ? " (tolerated: the RFC names another code)"
                                      : " (accepted alternative)",
                       ch.note.empty() ? "" : " [" + ch.note + "]");
  }
  for (const std::string& m : c.messages) out += m + "\n";
  if (!c.frames.empty()) out += "frames:\n";
  for (std::size_t i = 0; i < c.frames.size(); ++i) {
    const FrameRecord& f = c.frames[i];
    out += fmt::format("  #{} conn {} {} {} {} octets {}\n", i, f.connection, DirectionName(f.direction),
                       FrameKindName(f.kind), f.raw.size(), f.summary);
  }
  if (c.verdict != Verdict::kPass && c.verdict != Verdict::kSkip) {
    out += "reproduce: " + ReproduceCommand(ctx, run, c) + "\n";
  }
  // The capture, also in the form Jenkins' and GitLab's JUnit readers turn
  // into an attachment.
  if (const std::string pcap = PcapFile(ctx, c.id); !pcap.empty()) {
    out += "pcap: " + pcap + "\n[[ATTACHMENT|" + pcap + "]]\n";
  }
  return out;
}

// The <failure>/<error> body: the deciding step's expected vs actual.
std::string FailureBody(const CaseResult& c) {
  if (c.deciding_step < 0 || static_cast<std::size_t>(c.deciding_step) >= c.steps.size()) return c.reason;
  const StepResult& s = c.steps[static_cast<std::size_t>(c.deciding_step)];
  return fmt::format("{}\nexpected:\n{}\nactual:\n{}", c.reason, Indent(s.expected, "  "), Indent(s.actual, "  "));
}

// An interrupted run gets one more suite whose only testcase is in error,
// so a CI shows the run as partial whatever the verdicts so far.
std::string InterruptedSuite(const RunResult& run) {
  if (!run.interrupted) return {};
  std::string not_run = "not run:";
  for (const std::string& id : run.not_run) not_run += "\n  " + id;
  const std::string marker = InterruptedMarker(run);
  return "  <testsuite" + Attr("name", "rdmapct INTERRUPTED") +
         " tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\"" + Attr("timestamp", IsoTime(run.start)) +
         ">\n    <testcase" + Attr("classname", "rdmapct") + Attr("name", "INTERRUPTED, partial") + ">\n      <error" +
         Attr("message", marker) + Attr("type", "interrupted") + ">" + XmlEscape(not_run) +
         "</error>\n    </testcase>\n  </testsuite>\n";
}

std::string TestCase(const RunResult& run, const CaseResult& c, const ReportContext& ctx) {
  std::string out = "    <testcase" + Attr("classname", c.document + "." + c.section) + Attr("name", c.id) +
                    Attr("time", SecondsText(c.duration)) + ">\n";
  out +=
      "      <properties>"
      "<property" +
      Attr("name", "verdict") + Attr("value", VerdictName(c.verdict)) + "/>";
  for (const std::string& r : c.requirements)
    out += "<property" + Attr("name", "requirement") + Attr("value", r) + "/>";
  if (const std::string pcap = PcapFile(ctx, c.id); !pcap.empty()) {
    out += "<property" + Attr("name", "pcap") + Attr("value", pcap) + "/>";
  }
  if (!c.sweep_case.empty()) {
    out += "<property" + Attr("name", "sweep_case") + Attr("value", c.sweep_case) + "/>";
    out += "<property" + Attr("name", "sweep_parameter") + Attr("value", c.sweep_parameter) + "/>";
    out += "<property" + Attr("name", "sweep_value") + Attr("value", c.sweep_value) + "/>";
  }
  out += "</properties>\n";
  switch (c.verdict) {
    case Verdict::kFail:
      out += "      <failure" + Attr("message", c.reason) + Attr("type", LevelLabel(c.level)) + ">" +
             XmlEscape(FailureBody(c)) + "</failure>\n";
      break;
    case Verdict::kError:
      out += "      <error" + Attr("message", c.reason) + Attr("type", "error") + ">" + XmlEscape(FailureBody(c)) +
             "</error>\n";
      break;
    case Verdict::kSkip:
      out += "      <skipped" + Attr("message", c.reason) + "/>\n";
      break;
    case Verdict::kPass:
    case Verdict::kWarn:
      break;
  }
  out += "      <system-out>" + XmlEscape(SystemOut(run, c, ctx)) + "</system-out>\n";
  return out + "    </testcase>\n";
}

}  // namespace

std::string RenderJunitReport(const RunResult& run, const ReportContext& ctx) {
  // An all-skipped run is not a pass; JUnit consumers see it as a property.
  const std::string nothing = NothingTested(run);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  Counts totals = CountVerdicts(run.cases);
  if (run.interrupted) ++totals.error;  // the INTERRUPTED testcase
  const std::string marker = run.interrupted ? " (" + InterruptedMarker(run) + ")" : "";
  out += "<testsuites" + Attr("name", "rdmapct conform " + run.profile + marker) + CountAttrs(totals) +
         Attr("time", SecondsText(run.duration)) + Attr("timestamp", IsoTime(run.start)) + ">\n";
  out += InterruptedSuite(run);
  const std::string certification = AssessCompleteness(run).statement;
  for (const DocumentGroup& d : GroupCases(run)) {
    for (const SectionGroup& s : d.sections) {
      out += "  <testsuite" + Attr("name", d.document + " " + s.section) + CountAttrs(s.counts) +
             Attr("time", SecondsText(TotalTime(s.cases))) + Attr("timestamp", IsoTime(run.start)) + ">\n";
      out += "    <properties>";
      out += "<property" + Attr("name", "target") + Attr("value", run.target) + "/>";
      out += "<property" + Attr("name", "profile") + Attr("value", run.profile) + "/>";
      out += "<property" + Attr("name", "rdmapct_version") + Attr("value", ctx.tool_version) + "/>";
      out += "<property" + Attr("name", "certification") + Attr("value", certification) + "/>";
      if (!nothing.empty()) out += "<property" + Attr("name", "nothing_tested") + Attr("value", nothing) + "/>";
      out += "</properties>\n";
      for (const CaseResult* c : s.cases) out += TestCase(run, *c, ctx);
      out += "  </testsuite>\n";
    }
  }
  return out + "</testsuites>\n";
}

}  // namespace rdmapct::conformance
