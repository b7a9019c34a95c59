#include "conformance/coverage.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rdmapct::conformance {
namespace {

void AddOnce(std::vector<std::string>& list, const std::string& id) {
  if (std::find(list.begin(), list.end(), id) == list.end()) list.push_back(id);
}

void CollectExpect(const proto::Expect& e, std::vector<std::string>& out) {
  for (const std::string& id : e.requirement()) AddOnce(out, id);
  if (e.has_any_of()) {
    for (const proto::Expect& alt : e.any_of().alternative()) CollectExpect(alt, out);
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string RowLine(const CoverageRow& row) {
  const Requirement& r = *row.requirement;
  std::string what;
  switch (row.status) {
    case CoverageStatus::kCovered:
      for (const std::string& c : row.cases) what += (what.empty() ? "" : " ") + c;
      break;
    case CoverageStatus::kReasoned:
      what = "not checkable on the wire: " + row.reason;
      break;
    case CoverageStatus::kNotObservable:
      what = "not wire-observable (catalog)";
      break;
    case CoverageStatus::kUncovered:
      what = "-";
      break;
  }
  return fmt::format("  {:<20} {:<11} {:<7} {:<14} {}\n", r.id, LevelName(r.level),
                     WireObservableName(r.wire_observable), CoverageStatusName(row.status), what);
}

std::string CountsLine(std::string_view label, const CoverageCounts& c) {
  return fmt::format(
      "  {:<8} {:>4} rows: {:>4} covered, {:>4} not checkable (reason), {:>4} not wire-observable, "
      "{:>4} uncovered\n",
      label, c.rows, c.covered, c.reasoned, c.not_observable, c.uncovered);
}

}  // namespace

std::string_view CoverageClassName(CoverageClass c) { return c == CoverageClass::kMust ? "MUST" : "SHOULD"; }

std::string_view CoverageStatusName(CoverageStatus s) {
  switch (s) {
    case CoverageStatus::kCovered:
      return "covered";
    case CoverageStatus::kReasoned:
      return "reasoned";
    case CoverageStatus::kNotObservable:
      return "not-observable";
    case CoverageStatus::kUncovered:
      return "uncovered";
  }
  return "?";
}

ReasonsLoad ParseReasons(std::string_view tsv, const std::string& source) {
  ReasonsLoad out;
  std::size_t line_no = 0;
  while (!tsv.empty()) {
    const std::size_t nl = tsv.find('\n');
    const std::string_view line = tsv.substr(0, nl);
    tsv.remove_prefix(nl == std::string_view::npos ? tsv.size() : nl + 1);
    ++line_no;
    if (Trim(line).empty() || Trim(line).front() == '#') continue;
    const std::size_t tab = line.find('\t');
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (tab == std::string_view::npos || Trim(line.substr(tab + 1)).empty()) {
      out.errors.push_back(where + "expected 'id<TAB>reason'");
      continue;
    }
    const std::string id(Trim(line.substr(0, tab)));
    if (!out.reasons.emplace(id, std::string(Trim(line.substr(tab + 1)))).second) {
      out.errors.push_back(where + "duplicate id " + id);
    }
  }
  return out;
}

ReasonsLoad LoadReasons(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ReasonsLoad out;
    out.errors.push_back(path.string() + ": cannot read");
    return out;
  }
  std::ostringstream s;
  s << in.rdbuf();
  return ParseReasons(s.str(), path.string());
}

std::filesystem::path DefaultUncoveredReasonsFile() { return DataDir() / "conformance" / "uncovered_reasons.tsv"; }

ReasonsLoad LoadUncoveredReasons() {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::exists(DefaultUncoveredReasonsFile())) files.push_back(DefaultUncoveredReasonsFile());
  const std::filesystem::path dir = DataDir() / "conformance" / "reasons";
  std::error_code ec;
  std::vector<std::filesystem::path> per_doc;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".tsv") per_doc.push_back(e.path());
  }
  std::sort(per_doc.begin(), per_doc.end());  // deterministic error order
  files.insert(files.end(), per_doc.begin(), per_doc.end());
  ReasonsLoad out;
  for (const std::filesystem::path& f : files) {
    ReasonsLoad one = LoadReasons(f);
    out.errors.insert(out.errors.end(), one.errors.begin(), one.errors.end());
    for (auto& [id, reason] : one.reasons) {
      if (!out.reasons.emplace(id, reason).second) {
        out.errors.push_back(f.string() + ": " + id + " already has a reason in another file");
      }
    }
  }
  return out;
}

std::vector<std::string> CitedRequirements(const proto::Case& c) {
  std::vector<std::string> out;
  for (const std::string& id : c.requirement()) AddOnce(out, id);
  for (const proto::Step& s : c.step()) {
    if (s.has_expect()) CollectExpect(s.expect(), out);
  }
  return out;
}

bool CoverageClassOf(const Requirement& r, CoverageClass& out) {
  switch (r.grade()) {
    case Grade::kFail:
      out = CoverageClass::kMust;
      return true;
    case Grade::kWarn:
      // A lower-case "may" grades like the other lower-case keywords, but it
      // permits rather than asks: not a gap when nothing checks it.
      if (r.level == Level::kMayLc) return false;
      out = CoverageClass::kShould;
      return true;
    default:
      return false;
  }
}

Coverage ComputeCoverage(const Catalog& catalog, const std::vector<LoadedCase>& cases,
                         const std::map<std::string, std::string>& reasons) {
  Coverage out;
  std::map<std::string, std::vector<std::string>> citing;  // requirement id -> case ids
  for (const LoadedCase& c : cases) {
    for (const std::string& id : CitedRequirements(c.proto)) {
      if (!catalog.Contains(id)) {
        out.problems.push_back("case " + c.id() + " cites " + id + ", which is not in the catalog");
      }
      AddOnce(citing[id], c.id());
    }
  }
  for (const auto& [id, reason] : reasons) {
    if (!catalog.Contains(id)) out.problems.push_back("reason given for " + id + ", which is not in the catalog");
  }
  for (const Requirement& r : catalog.rows()) {
    CoverageRow row;
    row.requirement = &r;
    if (!CoverageClassOf(r, row.cls)) continue;
    if (auto it = citing.find(r.id); it != citing.end()) row.cases = it->second;
    if (auto it = reasons.find(r.id); it != reasons.end()) row.reason = it->second;
    if (!row.cases.empty()) {
      row.status = CoverageStatus::kCovered;
      if (!row.reason.empty()) {
        out.problems.push_back("reason given for " + r.id + ", which case " + row.cases.front() +
                               " covers: remove it from the reasons file");
      }
    } else if (!row.reason.empty()) {
      row.status = CoverageStatus::kReasoned;
    } else if (r.wire_observable == WireObservable::kNo) {
      row.status = CoverageStatus::kNotObservable;
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

CoverageCounts Coverage::Count(CoverageClass cls, std::string_view doc) const {
  CoverageCounts c;
  for (const CoverageRow& row : rows) {
    if (row.cls != cls || (!doc.empty() && row.requirement->doc != doc)) continue;
    ++c.rows;
    switch (row.status) {
      case CoverageStatus::kCovered:
        ++c.covered;
        break;
      case CoverageStatus::kReasoned:
        ++c.reasoned;
        break;
      case CoverageStatus::kNotObservable:
        ++c.not_observable;
        break;
      case CoverageStatus::kUncovered:
        ++c.uncovered;
        break;
    }
  }
  return c;
}

std::vector<std::string> Coverage::Documents() const {
  std::vector<std::string> docs;
  for (const CoverageRow& row : rows) AddOnce(docs, row.requirement->doc);
  return docs;
}

std::string RenderCoverageText(const Coverage& coverage, bool show_covered) {
  std::string out = "Requirement coverage (MUST / MUST NOT / REQUIRED rows; SHOULD-level rows for information)\n";
  for (const std::string& doc : coverage.Documents()) {
    for (CoverageClass cls : {CoverageClass::kMust, CoverageClass::kShould}) {
      out += fmt::format("\n{} {}-level rows\n", doc, CoverageClassName(cls));
      for (const CoverageRow& row : coverage.rows) {
        if (row.cls != cls || row.requirement->doc != doc) continue;
        if (!show_covered && row.status == CoverageStatus::kCovered) continue;
        out += RowLine(row);
      }
    }
  }
  out += "\nSummary\n";
  for (const std::string& doc : coverage.Documents()) {
    out += doc + "\n";
    out += CountsLine("MUST", coverage.Count(CoverageClass::kMust, doc));
    out += CountsLine("SHOULD", coverage.Count(CoverageClass::kShould, doc));
  }
  out += "total\n" + CountsLine("MUST", coverage.Count(CoverageClass::kMust)) +
         CountsLine("SHOULD", coverage.Count(CoverageClass::kShould));
  out += "\nUncovered MUST-level rows:";
  std::size_t n = 0;
  for (const CoverageRow& row : coverage.rows) {
    if (row.cls != CoverageClass::kMust || row.status != CoverageStatus::kUncovered) continue;
    out += (n++ % 6 == 0 ? "\n  " : " ") + row.requirement->id;
  }
  out += n == 0 ? " none\n" : "\n";
  for (const std::string& p : coverage.problems) out += "problem: " + p + "\n";
  return out;
}

std::string RenderCoverageJson(const Coverage& coverage) {
  using Json = nlohmann::ordered_json;
  const auto counts = [](const CoverageCounts& c) {
    return Json{{"rows", c.rows},
                {"covered", c.covered},
                {"reasoned", c.reasoned},
                {"not_observable", c.not_observable},
                {"uncovered", c.uncovered}};
  };
  Json docs = Json::array();
  for (const std::string& doc : coverage.Documents()) {
    docs.push_back(Json{{"doc", doc},
                        {"must", counts(coverage.Count(CoverageClass::kMust, doc))},
                        {"should", counts(coverage.Count(CoverageClass::kShould, doc))}});
  }
  Json rows = Json::array();
  for (const CoverageRow& row : coverage.rows) {
    const Requirement& r = *row.requirement;
    rows.push_back(Json{{"id", r.id},
                        {"doc", r.doc},
                        {"section", r.section},
                        {"level", LevelName(r.level)},
                        {"wire_observable", WireObservableName(r.wire_observable)},
                        {"topic", r.topic},
                        {"class", CoverageClassName(row.cls)},
                        {"status", CoverageStatusName(row.status)},
                        {"cases", row.cases},
                        {"reason", row.reason}});
  }
  Json doc{{"schema", "rdmapct-coverage"},
           {"schema_version", 1},
           {"summary", Json{{"must", counts(coverage.Count(CoverageClass::kMust))},
                            {"should", counts(coverage.Count(CoverageClass::kShould))},
                            {"documents", docs}}},
           {"rows", rows},
           {"problems", coverage.problems}};
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace rdmapct::conformance
