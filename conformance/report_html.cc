#include "conformance/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "conformance/report_console.h"
#include "conformance/report_summary.h"

namespace rdmapct::conformance {
namespace {

// Frames in a finding show at most this many octets of hex dump each; the
// JSON report has them all.
constexpr std::size_t kHtmlDumpOctets = 512;

constexpr std::array<proto::Level, 5> kLevelColumns = {proto::MUST, proto::MUST_NOT, proto::SHOULD, proto::SHOULD_NOT,
                                                       proto::MAY};

constexpr std::string_view kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 72em; color: #1b1b1b; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
table.meta th { width: 12em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 0.5em; overflow-x: auto; font-size: 0.85em; white-space: pre; }
pre.cmd { background: #1e1e1e; color: #f0f0f0; }
.v { font-weight: bold; padding: 0.05em 0.4em; border-radius: 3px; color: #fff; white-space: nowrap; }
.v-pass { background: #2e7d32; } .v-warn { background: #b26a00; } .v-fail { background: #c62828; }
.v-skip { background: #607d8b; } .v-error { background: #6a1b9a; } .v-none { background: #bbb; }
.overall { font-size: 1.4em; margin: 0.5em 0; }
section.finding { border: 1px solid #ccc; border-left: 6px solid #999; padding: 0 1em 0.5em; margin: 1em 0; }
section.finding.f-fail { border-left-color: #c62828; } section.finding.f-warn { border-left-color: #b26a00; }
section.finding.f-error { border-left-color: #6a1b9a; }
.req-text { margin: 0.2em 0; } .muted { color: #666; }
footer { margin-top: 3em; color: #666; font-size: 0.85em; }
)css";

std::string E(std::string_view s) { return HtmlEscape(s); }

std::string Badge(Verdict v) {
  return fmt::format("<span class=\"v v-{}\">{}</span>", VerdictName(v), VerdictLabel(v));
}

std::string Anchor(const CaseResult& c) { return "case-" + E(c.id); }

std::string MetaRow(std::string_view name, std::string_view value_html) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", E(name), value_html);
}

std::string OverallText(const RunResult& run) {
  const Counts c = CountVerdicts(run.cases);
  switch (ExitStatus(run)) {
    case kExitInterrupted:
      return InterruptedMarker(run) + ": the verdicts below are those of the cases that ran.";
    case kExitFail:
      return fmt::format("{} case(s) missed a MUST-level expectation.", c.fail);
    case kExitError:
      return "The target could not be judged: the run was aborted or cases ended in an error.";
    case kExitNothingTested:
      return "Not a pass: " + NothingTested(run) + ".";
    default:
      return fmt::format("Every MUST-level case that applied passed ({} warning(s), {} skipped).", c.warn, c.skip);
  }
}

std::string NotRunList(const RunResult& run) {
  std::string out = E(InterruptedMarker(run));
  for (const std::string& id : run.not_run) out += "<br><code>" + E(id) + "</code>";
  return out;
}

std::string Header(const RunResult& run, const ReportContext& ctx) {
  const Counts c = CountVerdicts(run.cases);
  std::string out = "<header>\n<h1>iWARP RDMAP conformance report</h1>\n";
  const int status = ExitStatus(run);
  const Verdict overall = status == kExitPass            ? (c.warn ? Verdict::kWarn : Verdict::kPass)
                          : status == kExitFail          ? Verdict::kFail
                          : status == kExitNothingTested ? Verdict::kSkip
                                                         : Verdict::kError;
  const std::string badge = run.interrupted ? "<span class=\"v v-error\">INTERRUPTED</span>" : Badge(overall);
  out += fmt::format("<p class=\"overall\">{} {}</p>\n", badge, E(OverallText(run)));
  out += "<table class=\"meta\">\n";
  out += MetaRow("Target", E(run.target));
  if (!ctx.target_arg.empty()) out += MetaRow("--target", "<code>" + E(ctx.target_arg) + "</code>");
  out += MetaRow("Profile", E(run.profile));
  out += MetaRow("Date (UTC)", E(IsoTime(run.start)));
  out += MetaRow("Duration", E(DurationText(run.duration)));
  out += MetaRow("rdmapct version", E(ctx.tool_version));
  out += MetaRow("Cases", E(fmt::format("{} run: {} pass, {} warn, {} fail, {} skip, {} error", c.total(), c.pass,
                                        c.warn, c.fail, c.skip, c.error)));
  out += MetaRow("Exit status", E(std::to_string(ExitStatus(run))));
  out += MetaRow("Certification", E(AssessCompleteness(run).statement));
  if (run.aborted) out += MetaRow("Run aborted", E(run.abort_reason));
  if (run.interrupted) out += MetaRow("Not run (interrupted)", NotRunList(run));
  if (!run.target_info.empty()) {
    std::string info;
    for (const std::string& line : run.target_info) info += E(line) + "<br>";
    out += MetaRow("Target says", info);
  }
  return out + "</table>\n</header>\n";
}

// The capture of a case as a link relative to the page.
std::string CaptureLink(const CaseResult& c, const ReportContext& ctx) {
  const std::string pcap = PcapFile(ctx, c.id);
  if (pcap.empty()) return {};
  return fmt::format("<a href=\"{}\">{}</a>", E(RelativeHref(pcap, ctx.link_base)), E(pcap));
}

// Right under the header, before any table: every case a reader must look
// at, failures first, with its reason and capture.
std::string Attention(const RunResult& run, const ReportContext& ctx) {
  const std::vector<const CaseResult*> cases = [&] {
    std::vector<const CaseResult*> all;
    for (Verdict v : {Verdict::kFail, Verdict::kError, Verdict::kWarn}) {
      for (const CaseResult* c : CasesWith(run, {v})) all.push_back(c);
    }
    return all;
  }();
  std::string out = "<section id=\"attention\">\n<h2>Failing and warning cases</h2>\n";
  if (cases.empty()) return out + "<p>None: no case failed, ended in an error or warned.</p>\n</section>\n";
  out += "<table>\n<tr><th>Verdict</th><th>Case</th><th>Level</th><th>Reason</th><th>Capture</th></tr>\n";
  for (const CaseResult* c : cases) {
    out += fmt::format(
        "<tr><td>{}</td><td><a href=\"#{}\"><code>{}</code></a></td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        Badge(c->verdict), Anchor(*c), E(c->id), E(LevelLabel(c->level)), E(c->reason), CaptureLink(*c, ctx));
  }
  return out + "</table>\n</section>\n";
}

std::string LevelCell(const DocumentGroup& d, proto::Level level) {
  for (const LevelGroup& l : d.levels) {
    if (l.level != level) continue;
    const std::size_t judged = l.counts.total() - l.counts.skip;
    return fmt::format("<td>{} <span class=\"muted\">{}/{} passed{}</span></td>", Badge(GroupVerdict(l.counts)),
                       l.counts.pass + l.counts.warn, judged,
                       l.counts.skip ? fmt::format(", {} skipped", l.counts.skip) : "");
  }
  return "<td><span class=\"v v-none\">&ndash;</span></td>";
}

std::string DocumentTable(const std::vector<DocumentGroup>& docs) {
  std::string out = "<h2>Verdict by document and level</h2>\n<table>\n<tr><th>Document</th>";
  for (proto::Level l : kLevelColumns) out += "<th>" + E(LevelText(l)) + "</th>";
  out += "<th>Overall</th></tr>\n";
  for (const DocumentGroup& d : docs) {
    out += "<tr><th>" + E(d.document) + "</th>";
    for (proto::Level l : kLevelColumns) out += LevelCell(d, l);
    out += "<td>" + Badge(GroupVerdict(d.counts)) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

std::string SectionTable(const std::vector<DocumentGroup>& docs) {
  std::string out =
      "<h2>Verdict by section</h2>\n<table>\n<tr><th>Document</th><th>Section</th><th>Cases</th><th>Pass</th>"
      "<th>Warn</th><th>Fail</th><th>Skip</th><th>Error</th><th>Verdict</th></tr>\n";
  for (const DocumentGroup& d : docs) {
    for (const SectionGroup& s : d.sections) {
      const Counts& c = s.counts;
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
          E(d.document), E(s.section), c.total(), c.pass, c.warn, c.fail, c.skip, c.error, Badge(GroupVerdict(c)));
    }
  }
  return out + "</table>\n";
}

// The catalog rows a finding cites: the deciding step's narrower ids first.
std::string RequirementsBlock(const CaseResult& c, const ReportContext& ctx) {
  std::vector<std::string> ids;
  if (c.deciding_step >= 0 && static_cast<std::size_t>(c.deciding_step) < c.steps.size()) {
    ids = c.steps[static_cast<std::size_t>(c.deciding_step)].requirements;
  }
  for (const std::string& id : c.requirements) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  std::string out =
      "<h4>Requirements</h4>\n<table>\n<tr><th>Id</th><th>Where</th><th>Level</th><th>Requirement</th></tr>\n";
  for (const std::string& id : ids) {
    const Requirement* r = ctx.catalog ? ctx.catalog->Find(id) : nullptr;
    if (!r) {
      out += fmt::format("<tr><td><code>{}</code></td><td colspan=\"3\" class=\"muted\">not in the catalog</td></tr>\n",
                         E(id));
      continue;
    }
    std::string text = "<p class=\"req-text\">" + E(r->requirement) + "</p>";
    if (!r->expected_wire_behaviour.empty()) {
      text += "<p class=\"req-text muted\">On the wire: " + E(r->expected_wire_behaviour) + "</p>";
    }
    out += fmt::format("<tr><td><code>{}</code></td><td>{} &sect;{}</td><td>{}</td><td>{}</td></tr>\n", E(id),
                       E(r->doc), E(r->section), E(LevelName(r->level)), text);
  }
  return out + "</table>\n";
}

std::string StepsTable(const CaseResult& c) {
  std::string out =
      "<h4>Steps</h4>\n<table>\n<tr><th>#</th><th>Action</th><th>Verdict</th><th>Reason / notes</th></tr>\n";
  for (const StepResult& s : c.steps) {
    std::string notes = E(s.reason);
    for (const std::string& n : s.notes) notes += (notes.empty() ? "" : "<br>") + E(n);
    if (!s.note.empty()) notes += (notes.empty() ? "" : "<br>") + ("<span class=\"muted\">" + E(s.note) + "</span>");
    out += fmt::format("<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       s.index >= 0 ? std::to_string(s.index) : std::string("&ndash;"), E(s.action), Badge(s.verdict),
                       notes);
  }
  return out + "</table>\n";
}

std::string ChoicesBlock(const CaseResult& c) {
  if (c.choices.empty()) return {};
  std::string out = "<h4>Accept-set choices</h4>\n<ul>\n";
  for (const AcceptChoice& ch : c.choices) {
    const char* how = !ch.in_set     ? "outside the accept-set"
                      : ch.preferred ? "preferred"
                      : ch.tolerated ? "tolerated: the RFC names another code"
                                     : "accepted alternative";
    out += fmt::format("<li>{}: <code>{}</code> ({}){}</li>\n", E(ch.what), E(ch.chosen), how,
                       ch.note.empty() ? "" : " &mdash; " + E(ch.note));
  }
  return out + "</ul>\n";
}

std::string Finding(const RunResult& run, const CaseResult& c, const ReportContext& ctx) {
  std::string out = fmt::format("<section class=\"finding f-{}\" id=\"{}\">\n<h3>{} <code>{}</code></h3>\n<p>{}</p>\n",
                                VerdictName(c.verdict), Anchor(c), Badge(c.verdict), E(c.id), E(c.title));
  out += "<table class=\"meta\">\n" + MetaRow("Level", E(LevelLabel(c.level)));
  if (!c.sweep_case.empty()) out += MetaRow("Sweep", "<code>" + E(c.sweep_case) + "</code> " + E(SweepLabel(c)));
  if (!c.reason.empty()) out += MetaRow("Reason", E(c.reason));
  for (const std::string& m : c.messages) out += MetaRow("Note", E(m));
  if (std::string link = CaptureLink(c, ctx); !link.empty()) out += MetaRow("Capture (pcap)", link);
  out += "</table>\n" + RequirementsBlock(c, ctx);
  if (c.deciding_step >= 0 && static_cast<std::size_t>(c.deciding_step) < c.steps.size()) {
    const StepResult& s = c.steps[static_cast<std::size_t>(c.deciding_step)];
    out += fmt::format("<h4>Expected (step {}: {})</h4>\n<pre>{}</pre>\n<h4>Actual</h4>\n<pre>{}</pre>\n", s.index,
                       E(s.action), E(s.expected), E(s.actual));
  }
  out += ChoicesBlock(c);
  if (!c.steps.empty()) out += StepsTable(c);
  if (!c.frames.empty()) {
    std::string frames;
    for (std::size_t i = 0; i < c.frames.size(); ++i) frames += RenderFrame(c.frames[i], i, kHtmlDumpOctets);
    out += fmt::format("<details><summary>Frames exchanged ({}), decoded</summary>\n<pre>{}</pre>\n</details>\n",
                       c.frames.size(), E(frames));
  }
  out += "<h4>Reproduce</h4>\n<pre class=\"cmd\">" + E(ReproduceCommand(ctx, run, c)) + "</pre>\n";
  return out + "</section>\n";
}

std::string Findings(const RunResult& run, const ReportContext& ctx) {
  std::string out = "<h2>Findings</h2>\n";
  bool any = false;
  for (Verdict v : {Verdict::kFail, Verdict::kError, Verdict::kWarn}) {
    for (const CaseResult* c : CasesWith(run, {v})) {
      out += Finding(run, *c, ctx);
      any = true;
    }
  }
  if (!any) out += "<p>No failures, errors or warnings.</p>\n";
  return out;
}

// One row per swept case, one badge per value (TLS-Anvil style).
std::string SweepTable(const RunResult& run) {
  const std::vector<SweepGroup> sweeps = GroupSweeps(run);
  if (sweeps.empty()) return {};
  std::string out =
      "<h2>Sweeps</h2>\n<table>\n<tr><th>Case</th><th>Parameter</th><th>Values</th><th>Verdict</th></tr>\n";
  for (const SweepGroup& g : sweeps) {
    std::string values;
    for (const CaseResult* c : g.values) values += E(c->sweep_value) + "&nbsp;" + Badge(c->verdict) + " ";
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>\n", E(g.case_id),
                       E(g.parameter), values, Badge(GroupVerdict(g.counts)));
  }
  return out + "</table>\n";
}

std::string AllCases(const RunResult& run) {
  std::string out =
      "<h2>All cases</h2>\n<table>\n<tr><th>Case</th><th>Title</th><th>Level</th><th>Verdict</th><th>Time</th>"
      "<th>Reason</th></tr>\n";
  for (const CaseResult& c : run.cases) {
    const bool finding = c.verdict == Verdict::kFail || c.verdict == Verdict::kError || c.verdict == Verdict::kWarn;
    const std::string id = finding ? fmt::format("<a href=\"#{}\"><code>{}</code></a>", Anchor(c), E(c.id))
                                   : "<code>" + E(c.id) + "</code>";
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                       id, E(c.title) + (c.sweep_case.empty() ? "" : " <code>" + E(SweepLabel(c)) + "</code>"),
                       E(LevelLabel(c.level)), Badge(c.verdict), E(DurationText(c.duration)), E(c.reason));
  }
  return out + "</table>\n";
}

}  // namespace

std::string_view HtmlReportStyle() { return kStyle; }

std::string RenderHtmlReport(const RunResult& run, const ReportContext& ctx) {
  const std::vector<DocumentGroup> docs = GroupCases(run);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>rdmapct conformance report: {} ({})</title>\n", E(run.target), E(run.profile));
  out += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += Header(run, ctx);
  out += Attention(run, ctx);
  out += DocumentTable(docs);
  out += SectionTable(docs);
  out += Findings(run, ctx);
  out += SweepTable(run);
  out += AllCases(run);
  out += fmt::format(
      "<footer>Generated by rdmapct {} on {}. Verdicts: MUST / MUST NOT misses fail, SHOULD misses warn, MAY "
      "differences only inform; a skipped case was not applicable to this target (a capability it does not "
      "advertise), so it makes no statement either way.</footer>\n",
      E(ctx.tool_version), E(IsoTime(run.start)));
  return out + "</body>\n</html>\n";
}

}  // namespace rdmapct::conformance
