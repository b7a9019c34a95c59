#include "conformance/report_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "conformance/report_common.h"
#include "conformance/report_html.h"

namespace rdmapct::conformance {
namespace {

using Json = nlohmann::json;

// How bad a verdict is for "did it get worse": skip and absence judge
// nothing, so a change from or to them is a change, never a regression.
int Badness(const std::string& v) {
  if (v == "pass") return 0;
  if (v == "warn") return 1;
  if (v == "error") return 2;
  if (v == "fail") return 3;
  return -1;
}

bool IsRegression(const std::string& before, const std::string& after) {
  const int b = Badness(before), a = Badness(after);
  return b >= 0 && a >= 0 && a > b;
}

std::string Str(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool ReadCases(const Json& j, ComparedRun& out, std::string& error) {
  const auto cases = j.find("cases");
  if (cases == j.end() || !cases->is_array()) {
    error = "no \"cases\" array";
    return false;
  }
  for (const Json& c : *cases) {
    if (!c.is_object() || Str(c, "id").empty()) {
      error = "a case without an id";
      return false;
    }
    out.cases.emplace_back(Str(c, "id"), Str(c, "verdict"));
  }
  return true;
}

std::string Shown(const std::string& verdict) { return verdict.empty() ? "(absent)" : verdict; }

std::string Cell(const std::string* verdict) {
  if (!verdict) return "<td><span class=\"v v-none\">&ndash;</span></td>";
  const std::optional<Verdict> v = ParseVerdict(*verdict);
  return fmt::format("<td><span class=\"v v-{}\">{}</span></td>", v ? HtmlEscape(*verdict) : "none",
                     v ? VerdictLabel(*v) : HtmlEscape(*verdict));
}

std::vector<std::string> UnionOfIds(const std::vector<ComparedRun>& runs) {
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const ComparedRun& r : runs) {
    for (const auto& [id, verdict] : r.cases) {
      if (seen.insert(id).second) ids.push_back(id);
    }
  }
  return ids;
}

std::string RunHeading(const ComparedRun& r, std::size_t i) {
  return fmt::format("<th>#{} <code>{}</code><br>{}<br>{} {}{}</th>", i + 1, HtmlEscape(r.label), HtmlEscape(r.target),
                     HtmlEscape(r.profile), HtmlEscape(r.start),
                     r.interrupted ? "<br><span class=\"v v-error\">INTERRUPTED, partial</span>" : "");
}

std::string MatrixTable(const std::vector<ComparedRun>& runs) {
  std::string out = "<h2>Matrix</h2>\n<table>\n<tr><th>Case</th>";
  for (std::size_t i = 0; i < runs.size(); ++i) out += RunHeading(runs[i], i);
  out += "</tr>\n";
  for (const std::string& id : UnionOfIds(runs)) {
    std::set<std::string> verdicts;
    std::string cells;
    for (const ComparedRun& r : runs) {
      const std::string* v = r.Find(id);
      verdicts.insert(v ? *v : "");
      cells += Cell(v);
    }
    const bool differs = verdicts.size() > 1;
    out += fmt::format("<tr{}><td><code>{}</code>{}</td>{}</tr>\n", differs ? " class=\"differs\"" : "", HtmlEscape(id),
                       differs ? " <strong>(differs)</strong>" : "", cells);
  }
  return out + "</table>\n";
}

std::string ChangesHtml(const std::vector<ComparedRun>& runs) {
  std::string out = "<h2>Changes from run to run</h2>\n";
  for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
    const std::vector<VerdictChange> changes = DiffVerdicts(runs[i], runs[i + 1]);
    out += fmt::format("<h3>#{} &rarr; #{}: {} change(s)</h3>\n", i + 1, i + 2, changes.size());
    if (changes.empty()) continue;
    out += "<table>\n<tr><th>Case</th><th>Before</th><th>After</th><th></th></tr>\n";
    for (const VerdictChange& c : changes) {
      out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>\n", HtmlEscape(c.id),
                         HtmlEscape(Shown(c.before)), HtmlEscape(Shown(c.after)),
                         c.regression ? "<strong>regression</strong>" : "");
    }
    out += "</table>\n";
  }
  return out;
}

}  // namespace

const std::string* ComparedRun::Find(const std::string& id) const {
  for (const auto& [case_id, verdict] : cases) {
    if (case_id == id) return &verdict;
  }
  return nullptr;
}

bool LoadComparedRun(const std::string& path, ComparedRun& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot read";
    return false;
  }
  const Json j = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    error = path + ": not JSON";
    return false;
  }
  if (Str(j, "schema") != "rdmapct-conform-report") {
    error = path + ": not an rdmapct conform report (schema \"" + Str(j, "schema") + "\")";
    return false;
  }
  out = ComparedRun{};
  out.label = path;
  out.target = Str(j, "target"), out.target_arg = Str(j, "target_arg"), out.profile = Str(j, "profile");
  out.start = Str(j, "start"), out.verdict = Str(j, "verdict");
  if (const auto tool = j.find("tool"); tool != j.end() && tool->is_object()) out.tool_version = Str(*tool, "version");
  out.interrupted = j.value("interrupted", false);
  if (!ReadCases(j, out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

std::vector<VerdictChange> DiffVerdicts(const ComparedRun& a, const ComparedRun& b) {
  std::vector<VerdictChange> out;
  for (const std::string& id : UnionOfIds({a, b})) {
    const std::string* before = a.Find(id);
    const std::string* after = b.Find(id);
    VerdictChange c{id, before ? *before : "", after ? *after : "", false};
    if (c.before == c.after) continue;
    c.regression = IsRegression(c.before, c.after);
    out.push_back(std::move(c));
  }
  return out;
}

std::string RenderCompareText(const std::vector<ComparedRun>& runs) {
  std::string out =
      fmt::format("rdmapct report compare: {} run(s), {} case(s)\n", runs.size(), UnionOfIds(runs).size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ComparedRun& r = runs[i];
    out += fmt::format("  #{} {}: {}, profile {}, {}, verdict {}{}\n", i + 1, r.label, r.target, r.profile, r.start,
                       r.verdict, r.interrupted ? ", INTERRUPTED, partial" : "");
  }
  for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
    const std::vector<VerdictChange> changes = DiffVerdicts(runs[i], runs[i + 1]);
    const auto regressions = std::count_if(changes.begin(), changes.end(), [](const auto& c) { return c.regression; });
    out += fmt::format("\n#{} -> #{}: {} change(s), {} regression(s)\n", i + 1, i + 2, changes.size(), regressions);
    for (const VerdictChange& c : changes) {
      out += fmt::format("  {:<10} {}  {} -> {}\n", c.regression ? "REGRESSED" : "changed", c.id, Shown(c.before),
                         Shown(c.after));
    }
  }
  return out;
}

std::string RenderCompareHtml(const std::vector<ComparedRun>& runs) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>rdmapct interop matrix: {} run(s)</title>\n", runs.size());
  out += "<style>" + std::string(HtmlReportStyle()) + "tr.differs td { background: #fff4e5; }\n</style>\n";
  out += "</head>\n<body>\n<h1>iWARP RDMAP conformance: interop matrix</h1>\n";
  out += fmt::format(
      "<p>{} run(s), {} case(s). A row marked <strong>(differs)</strong> does not have the same "
      "verdict in every run; &ndash; means the case is not in that run.</p>\n",
      runs.size(), UnionOfIds(runs).size());
  out += MatrixTable(runs);
  out += ChangesHtml(runs);
  return out + "<footer>Generated by rdmapct report compare.</footer>\n</body>\n</html>\n";
}

}  // namespace rdmapct::conformance
