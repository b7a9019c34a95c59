#include "conformance/report_console.h"

#include <fmt/format.h>

#include <algorithm>

#include "conformance/report_summary.h"

namespace rdmapct::conformance {
namespace {

const char* AnsiColour(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "\x1b[32m";  // green
    case Verdict::kWarn:
      return "\x1b[33m";  // yellow
    case Verdict::kFail:
      return "\x1b[1;31m";  // bold red
    case Verdict::kSkip:
      return "\x1b[36m";  // cyan
    case Verdict::kError:
      return "\x1b[1;35m";  // bold magenta
  }
  return "";
}

// The verdict label padded to 5 columns (padding outside the colour codes,
// so columns line up either way).
std::string PaddedVerdict(Verdict v, ConsoleStyle style) {
  const std::string label = VerdictLabel(v);
  const std::string pad(5 - std::min<std::size_t>(label.size(), 5), ' ');
  if (!style.color) return label + pad;
  return std::string(AnsiColour(v)) + label + "\x1b[0m" + pad;
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string CountsText(const Counts& c) {
  return fmt::format("{:>3} cases: {} pass, {} warn, {} fail, {} skip, {} error", c.total(), c.pass, c.warn, c.fail,
                     c.skip, c.error);
}

// "expected:" / "actual:" with a multi-line value indented under the label.
std::string Labelled(std::string_view label, std::string_view value, std::string_view indent) {
  if (value.empty()) return {};
  if (value.find('\n') == std::string_view::npos) return fmt::format("{}{} {}\n", indent, label, value);
  std::string body = Indent(value, std::string(indent) + "  ");
  if (body.back() != '\n') body += '\n';
  return fmt::format("{}{}\n{}", indent, label, body);
}

std::string ChoiceText(const AcceptChoice& ch) {
  std::string s = ch.what + ": " + ch.chosen;
  if (!ch.in_set)
    s += " (outside the accept-set)";
  else if (ch.preferred)
    s += " (preferred)";
  else if (ch.tolerated)
    s += " (tolerated: the RFC names another code)";
  else
    s += " (accepted alternative)";
  if (!ch.note.empty()) s += " [" + ch.note + "]";
  return s;
}

std::string StepLine(const StepResult& s) {
  // Index -1 is the connect the runner adds before a case without one.
  std::string line = s.index >= 0 ? fmt::format("step {} {} {}", s.index, PaddedVerdict(s.verdict, {}), s.action)
                                  : fmt::format("implicit {} {}", PaddedVerdict(s.verdict, {}), s.action);
  if (s.severity != proto::LEVEL_UNSPECIFIED) line += " [" + LevelLabel(s.severity) + "]";
  line += " (" + DurationText(s.duration) + ")";
  if (!s.note.empty()) line += " -- " + s.note;
  return line;
}

// Every step with its own reason / expected / actual / notes.
std::string StepsBlock(const CaseResult& c, std::string_view indent) {
  std::string out;
  const std::string inner = std::string(indent) + "  ";
  for (const StepResult& s : c.steps) {
    out += std::string(indent) + SanitizeUtf8(StepLine(s)) + "\n";
    if (!s.reason.empty()) out += inner + "reason: " + SanitizeUtf8(s.reason) + "\n";
    if (s.verdict != Verdict::kPass) {
      out += Labelled("expected:", SanitizeUtf8(s.expected), inner);
      out += Labelled("actual:", SanitizeUtf8(s.actual), inner);
    }
    for (const std::string& n : s.notes) out += inner + "note: " + SanitizeUtf8(n) + "\n";
    for (const AcceptChoice& ch : s.choices) out += inner + SanitizeUtf8(ChoiceText(ch)) + "\n";
    if (!s.frames.empty()) {
      std::vector<std::string> ids;
      for (std::size_t f : s.frames) ids.push_back("#" + std::to_string(f));
      out += inner + "frames: " + Join(ids, " ") + "\n";
    }
  }
  return out;
}

// What a reader of a failure needs first: why, and what differed.
std::string DecidingBlock(const CaseResult& c, std::string_view indent) {
  std::string out;
  if (!c.reason.empty()) out += std::string(indent) + "reason: " + SanitizeUtf8(c.reason) + "\n";
  if (c.deciding_step >= 0 && static_cast<std::size_t>(c.deciding_step) < c.steps.size()) {
    const StepResult& s = c.steps[static_cast<std::size_t>(c.deciding_step)];
    out += std::string(indent) + "at " + SanitizeUtf8(StepLine(s)) + "\n";
    if (!s.requirements.empty() && s.requirements != c.requirements) {
      out += std::string(indent) + "checks: " + Join(s.requirements, " ") + "\n";
    }
    out += Labelled("expected:", SanitizeUtf8(s.expected), indent);
    out += Labelled("actual:  ", SanitizeUtf8(s.actual), indent);
  }
  return out;
}

// "  failed (2):" and one id a line, so a CI log shows what to look at
// above the Result line; nothing when there is none.
std::string CaseIdList(std::string_view what, const std::vector<std::string>& ids) {
  if (ids.empty()) return {};
  std::string out = fmt::format("  {} ({}):\n", what, ids.size());
  for (const std::string& id : ids) out += "    " + SanitizeUtf8(id) + "\n";
  return out;
}

}  // namespace

std::string RenderCaseLine(const CaseResult& c, ConsoleStyle style) {
  const std::string sweep = SweepLabel(c);
  return PaddedVerdict(c.verdict, style) + "  " + SanitizeUtf8(c.id) + "  " + SanitizeUtf8(c.title) +
         (sweep.empty() ? "" : "  [" + SanitizeUtf8(sweep) + "]");
}

std::string RenderFrame(const FrameRecord& f, std::size_t index, std::size_t max_dump) {
  std::string out =
      fmt::format("#{} conn {} {} {}", index, f.connection, DirectionName(f.direction), FrameKindName(f.kind));
  if (f.kind != FrameKind::kFin && f.kind != FrameKind::kRst) {
    out += fmt::format(" @{} {} octets", f.stream_offset, f.raw.size());
  }
  out += fmt::format(" +{}", DurationText(f.at));
  if (f.event_record) out += " [Event Record]";
  if (f.truncated) out += " [truncated]";
  if (!f.summary.empty()) out += "  " + SanitizeUtf8(f.summary);
  out += "\n";
  if (!f.detail.empty()) {
    std::string detail = Indent(SanitizeUtf8(f.detail), "    ");
    if (detail.back() != '\n') detail += '\n';
    out += detail;
  }
  if (!f.raw.empty()) out += Indent(HexDump(f.raw, f.stream_offset, max_dump), "    ");
  return out;
}

std::string RenderCaseDetail(const RunResult& run, const CaseResult& c, const ReportContext& ctx) {
  const bool problem = c.verdict != Verdict::kPass;
  if (!problem && !ctx.verbose) return {};
  const std::string ind = "       ";
  std::string out;
  if (problem || ctx.verbose) {
    out += ind + "level " + LevelLabel(c.level) + "; requirements " + Join(c.requirements, " ") + "\n";
  }
  out += DecidingBlock(c, ind);
  for (const AcceptChoice& ch : c.choices) {
    if (!ch.preferred || !ch.in_set) out += ind + SanitizeUtf8(ChoiceText(ch)) + "\n";
  }
  for (const std::string& m : c.messages) out += ind + SanitizeUtf8(m) + "\n";
  if (ctx.verbose) {
    if (!c.steps.empty()) out += ind + "steps:\n" + StepsBlock(c, ind + "  ");
    if (!c.frames.empty()) {
      out += ind + "frames:\n";
      for (std::size_t i = 0; i < c.frames.size(); ++i) out += Indent(RenderFrame(c.frames[i], i), ind + "  ");
    }
  }
  if (problem && c.verdict != Verdict::kSkip) out += ind + "reproduce: " + ReproduceCommand(ctx, run, c) + "\n";
  if (auto pcap = ctx.pcap_files.find(c.id); pcap != ctx.pcap_files.end()) out += ind + "pcap: " + pcap->second + "\n";
  return out;
}

std::string RenderConsoleSummary(const RunResult& run, ConsoleStyle style) {
  std::string out = "Summary\n";
  for (const DocumentGroup& d : GroupCases(run)) {
    out += fmt::format("  {:<12} {}  {}\n", d.document, CountsText(d.counts),
                       PaddedVerdict(GroupVerdict(d.counts), style));
    for (const LevelGroup& l : d.levels) {
      out += fmt::format("    {:<10} {}  {}\n", LevelLabel(l.level), CountsText(l.counts),
                         PaddedVerdict(GroupVerdict(l.counts), style));
    }
  }
  const Counts total = CountVerdicts(run.cases);
  out += fmt::format("  {:<12} {}\n", "total", CountsText(total));
  const std::vector<SweepGroup> sweeps = GroupSweeps(run);
  if (!sweeps.empty()) out += fmt::format("Sweeps ({}: one result per value)\n", sweeps.size());
  for (const SweepGroup& g : sweeps) {
    out += fmt::format("  {}  {}  {}\n", SanitizeUtf8(g.case_id), PaddedVerdict(GroupVerdict(g.counts), style),
                       SanitizeUtf8(SweepValuesText(g)));
  }
  if (run.aborted) out += "  run aborted: " + SanitizeUtf8(run.abort_reason) + "\n";
  out += CaseIdList("failed", CaseIds(run, Verdict::kFail));
  out += CaseIdList("in error", CaseIds(run, Verdict::kError));
  out += CaseIdList("warned", CaseIds(run, Verdict::kWarn));
  out += "  certification " + SanitizeUtf8(AssessCompleteness(run).statement) + "\n";
  const int status = ExitStatus(run);
  std::string result;
  if (status == kExitInterrupted)
    result = InterruptedMarker(run) + " (the verdicts so far)";
  else if (status == kExitFail)
    result = fmt::format("FAIL: {} case(s) missed a MUST-level expectation", total.fail);
  else if (status == kExitError)
    result = "ERROR: the target could not be judged (run aborted or cases in error)";
  else if (status == kExitNothingTested)
    result = "NOT TESTED: " + NothingTested(run);
  else
    result = total.warn > 0 ? fmt::format("PASS with {} warning(s)", total.warn) : "PASS";
  out += fmt::format("Result: {} (exit status {})\n", result, status);
  return out;
}

std::string RenderConsoleReport(const RunResult& run, const ReportContext& ctx, ConsoleStyle style) {
  std::string out = fmt::format("rdmapct conform: target {}, profile {}, {} case(s), {}\n", SanitizeUtf8(run.target),
                                run.profile, run.cases.size(), IsoTime(run.start));
  if (run.interrupted) out += "  " + InterruptedMarker(run) + "\n";
  for (const std::string& info : run.target_info) out += "  " + SanitizeUtf8(info) + "\n";
  for (const DocumentGroup& d : GroupCases(run)) {
    for (const SectionGroup& s : d.sections) {
      out += fmt::format("\n{} section {}\n", d.document, s.section);
      for (const CaseResult* c : s.cases) {
        out += "  " + RenderCaseLine(*c, style) + "\n";
        out += RenderCaseDetail(run, *c, ctx);
      }
    }
  }
  out += "\n" + RenderConsoleSummary(run, style);
  return out;
}

std::string RenderProgressLine(const CaseResult& c, std::size_t done, std::size_t total, ConsoleStyle style) {
  const int width = static_cast<int>(std::to_string(total).size());
  return fmt::format("[{:>{}}/{}] {}  {}  ({})", done, width, total, PaddedVerdict(c.verdict, style),
                     SanitizeUtf8(c.id), DurationText(c.duration));
}

LiveProgress::LiveProgress(std::FILE* out, std::size_t total, bool in_place, ConsoleStyle style)
    : out_(out), total_(total), in_place_(in_place), style_(style) {}

void LiveProgress::OnCase(const CaseResult& c) {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  const std::string line = RenderProgressLine(c, done_, total_, style_);
  if (in_place_)
    std::fprintf(out_, "\r\x1b[K%s", line.c_str());
  else
    std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void LiveProgress::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (in_place_ && done_ > 0) {
    std::fprintf(out_, "\r\x1b[K");
    std::fflush(out_);
  }
}

}  // namespace rdmapct::conformance
