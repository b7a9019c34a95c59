#include "conformance/report_json.h"

#include <nlohmann/json.hpp>

#include "conformance/report_summary.h"

namespace rdmapct::conformance {
namespace {

using Json = nlohmann::ordered_json;

Json CountsJson(const Counts& c) {
  return Json{{"pass", c.pass}, {"warn", c.warn},   {"fail", c.fail},
              {"skip", c.skip}, {"error", c.error}, {"total", c.total()}};
}

Json ChoiceJson(const AcceptChoice& ch) {
  return Json{{"what", ch.what},           {"chosen", ch.chosen}, {"preferred", ch.preferred},
              {"tolerated", ch.tolerated}, {"in_set", ch.in_set}, {"note", ch.note}};
}

Json ChoicesJson(const std::vector<AcceptChoice>& choices) {
  Json out = Json::array();
  for (const AcceptChoice& ch : choices) out.push_back(ChoiceJson(ch));
  return out;
}

Json StepJson(const StepResult& s) {
  Json frames = Json::array();
  for (std::size_t f : s.frames) frames.push_back(f);
  return Json{{"index", s.index},
              {"action", s.action},
              {"note", s.note},
              {"verdict", VerdictName(s.verdict)},
              {"severity", LevelText(s.severity)},
              {"requirements", s.requirements},
              {"reason", s.reason},
              {"expected", s.expected},
              {"actual", s.actual},
              {"notes", s.notes},
              {"choices", ChoicesJson(s.choices)},
              {"frames", frames},
              {"duration_us", s.duration.count()}};
}

Json FrameJson(const FrameRecord& f, std::size_t index) {
  return Json{{"index", index},
              {"connection", f.connection},
              {"direction", DirectionName(f.direction)},
              {"kind", FrameKindName(f.kind)},
              {"stream_offset", f.stream_offset},
              {"at_us", f.at.count()},
              {"length", f.raw.size()},
              {"raw_hex", HexDigits(f.raw)},
              {"truncated", f.truncated},
              {"event_record", f.event_record},
              {"summary", f.summary},
              {"detail", f.detail}};
}

// Frames make most of a report's size and matter only where a case did not
// pass: a passing or skipped case keeps them only with --verbose.
bool KeepsFrames(const CaseResult& c, const ReportContext& ctx) {
  return ctx.verbose || (c.verdict != Verdict::kPass && c.verdict != Verdict::kSkip);
}

Json CaseJson(const RunResult& run, const CaseResult& c, const ReportContext& ctx) {
  Json steps = Json::array();
  for (const StepResult& s : c.steps) steps.push_back(StepJson(s));
  Json frames = Json::array();
  const bool keep = KeepsFrames(c, ctx);
  for (std::size_t i = 0; keep && i < c.frames.size(); ++i) frames.push_back(FrameJson(c.frames[i], i));
  return Json{{"id", c.id},
              {"title", c.title},
              {"document", c.document},
              {"section", c.section},
              {"requirements", c.requirements},
              {"level", LevelText(c.level)},
              {"tags", c.tags},
              {"sweep", c.sweep_case.empty()
                            ? Json(nullptr)
                            : Json{{"case", c.sweep_case}, {"parameter", c.sweep_parameter}, {"value", c.sweep_value}}},
              {"verdict", VerdictName(c.verdict)},
              {"reason", c.reason},
              {"deciding_step", c.deciding_step},
              {"start", IsoTime(c.start)},
              {"duration_us", c.duration.count()},
              {"messages", c.messages},
              {"choices", ChoicesJson(c.choices)},
              {"steps", steps},
              {"frames", frames},
              {"frames_omitted", keep ? 0 : c.frames.size()},
              {"pcap", PcapFile(ctx, c.id)},
              {"reproduce", ReproduceCommand(ctx, run, c)}};
}

// One entry per swept case: its values in run order with their verdicts.
Json SweepsJson(const RunResult& run) {
  Json out = Json::array();
  for (const SweepGroup& g : GroupSweeps(run)) {
    Json values = Json::array();
    for (const CaseResult* c : g.values) {
      values.push_back(Json{{"value", c->sweep_value}, {"id", c->id}, {"verdict", VerdictName(c->verdict)}});
    }
    out.push_back(Json{{"case", g.case_id},
                       {"parameter", g.parameter},
                       {"verdict", VerdictName(GroupVerdict(g.counts))},
                       {"counts", CountsJson(g.counts)},
                       {"values", values}});
  }
  return out;
}

Json SummaryJson(const RunResult& run) {
  Json docs = Json::array();
  for (const DocumentGroup& d : GroupCases(run)) {
    Json levels = Json::array();
    for (const LevelGroup& l : d.levels) {
      levels.push_back(Json{{"level", LevelText(l.level)},
                            {"verdict", VerdictName(GroupVerdict(l.counts))},
                            {"counts", CountsJson(l.counts)}});
    }
    Json sections = Json::array();
    for (const SectionGroup& s : d.sections) {
      sections.push_back(Json{
          {"section", s.section}, {"verdict", VerdictName(GroupVerdict(s.counts))}, {"counts", CountsJson(s.counts)}});
    }
    docs.push_back(Json{{"document", d.document},
                        {"verdict", VerdictName(GroupVerdict(d.counts))},
                        {"counts", CountsJson(d.counts)},
                        {"levels", levels},
                        {"sections", sections}});
  }
  return docs;
}

Json CompletenessJson(const RunResult& run) {
  const Completeness c = AssessCompleteness(run);
  Json lacking = Json::array();
  for (const auto& [what, n] : c.lacking) lacking.push_back(Json{{"capability", what}, {"cases", n}});
  return Json{{"complete", c.complete},
              {"statement", c.statement},
              {"capability_skips", c.capability_skips},
              {"profile_skips", c.profile_skips},
              {"lacking", lacking}};
}

}  // namespace

std::string RenderJsonReport(const RunResult& run, const ReportContext& ctx) {
  Json cases = Json::array();
  for (const CaseResult& c : run.cases) cases.push_back(CaseJson(run, c, ctx));
  const Counts counts = CountVerdicts(run.cases);
  Json doc{{"schema", "rdmapct-conform-report"},
           {"schema_version", kJsonReportSchemaVersion},
           {"tool", Json{{"name", "rdmapct"}, {"version", ctx.tool_version}}},
           {"target", run.target},
           {"target_arg", ctx.target_arg},
           {"profile", run.profile},
           {"target_info", run.target_info},
           {"start", IsoTime(run.start)},
           {"duration_us", run.duration.count()},
           {"aborted", run.aborted},
           {"abort_reason", run.abort_reason},
           {"interrupted", run.interrupted},
           {"partial_marker", InterruptedMarker(run)},
           {"not_run", run.not_run},
           {"verdict", VerdictName(GroupVerdict(counts))},
           {"exit_status", ExitStatus(run)},
           {"nothing_tested", NothingTested(run)},
           {"counts", CountsJson(counts)},
           {"completeness", CompletenessJson(run)},
           {"failed_cases", CaseIds(run, Verdict::kFail)},
           {"error_cases", CaseIds(run, Verdict::kError)},
           {"warned_cases", CaseIds(run, Verdict::kWarn)},
           {"documents", SummaryJson(run)},
           {"sweeps", SweepsJson(run)},
           {"cases", cases}};
  // Target-controlled text may hold any octets: replace ill-formed UTF-8
  // instead of throwing.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace rdmapct::conformance
