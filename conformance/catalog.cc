#include "conformance/catalog.h"

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

namespace rdmapct::conformance {
namespace {

constexpr std::size_t kColumns = 9;

struct LevelSpelling {
  Level level;
  std::string_view text;
};

// The spellings of decisions D-CONV, exactly as they appear in the TSV.
constexpr std::array<LevelSpelling, 15> kLevels{{
    {Level::kMust, "MUST"},
    {Level::kMustNot, "MUST NOT"},
    {Level::kRequired, "REQUIRED"},
    {Level::kShould, "SHOULD"},
    {Level::kShouldNot, "SHOULD NOT"},
    {Level::kRecommended, "RECOMMENDED"},
    {Level::kMay, "MAY"},
    {Level::kOptional, "OPTIONAL"},
    {Level::kMustLc, "must (lc)"},
    {Level::kShouldLc, "should (lc)"},
    {Level::kMayLc, "may (lc)"},
    {Level::kRecommendedLc, "recommended (lc)"},
    {Level::kRequiredLc, "required (lc)"},
    {Level::kTable, "TABLE"},
    {Level::kDesc, "DESC"},
}};

// The id prefix of each `doc` value (decisions D-CONV: R5040-<sec>-NN, RCOMMIT-...).
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kDocPrefixes{{
    {"RFC5040", "R5040"},
    {"RFC7306", "R7306"},
    {"COMMIT", "RCOMMIT"},
    {"RFC5041", "R5041"},
    {"RFC5044", "R5044"},
    {"RFC6581", "R6581"},
}};

std::vector<std::string_view> SplitTabs(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t tab = line.find('\t', start);
    if (tab == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

bool IsItemChar(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// An id is "<doc prefix>-<section>-<item>" with the row's own doc and
// section, so a row pasted under the wrong section is caught.
std::string CheckId(std::string_view id, std::string_view doc, std::string_view section) {
  std::string_view prefix;
  for (const auto& [d, p] : kDocPrefixes) {
    if (d == doc) prefix = p;
  }
  if (prefix.empty()) return "unknown doc '" + std::string(doc) + "'";
  if (section.empty()) return "empty section";
  std::string head = std::string(prefix) + "-" + std::string(section) + "-";
  if (id.substr(0, head.size()) != head) {
    return "id '" + std::string(id) + "' does not start with '" + head + "' (doc/section columns)";
  }
  std::string_view item = id.substr(head.size());
  if (item.empty()) return "id '" + std::string(id) + "' has no item number";
  for (char c : item) {
    if (!IsItemChar(c)) return "id '" + std::string(id) + "' has a bad item number";
  }
  return {};
}

// Fills `row` from one data line; returns an error message or "".
std::string ParseRow(std::string_view line, Requirement& row) {
  std::vector<std::string_view> f = SplitTabs(line);
  if (f.size() != kColumns) {
    return "expected " + std::to_string(kColumns) + " tab-separated columns, found " + std::to_string(f.size());
  }
  if (std::string err = CheckId(f[0], f[1], f[2]); !err.empty()) return err;
  std::optional<Level> level = ParseLevel(f[3]);
  if (!level) return "unknown level '" + std::string(f[3]) + "'";
  std::optional<WireObservable> wire = ParseWireObservable(f[5]);
  if (!wire) return "unknown wire_observable '" + std::string(f[5]) + "' (yes/partial/no)";
  if (f[4].empty()) return "empty actor";
  if (f[6].empty()) return "empty topic";
  if (f[7].empty()) return "empty requirement";
  row.id = f[0];
  row.doc = f[1];
  row.section = f[2];
  row.level = *level;
  row.actor = f[4];
  row.wire_observable = *wire;
  row.topic = f[6];
  row.requirement = f[7];
  row.expected_wire_behaviour = f[8];
  return {};
}

CatalogLoad Fail(std::string source, std::size_t line, std::string message) {
  CatalogLoad out;
  out.error = CatalogError{std::move(source), line, std::move(message)};
  return out;
}

}  // namespace

std::optional<Level> ParseLevel(std::string_view text) {
  for (const LevelSpelling& l : kLevels) {
    if (l.text == text) return l.level;
  }
  return std::nullopt;
}

std::string_view LevelName(Level level) {
  for (const LevelSpelling& l : kLevels) {
    if (l.level == level) return l.text;
  }
  return "?";
}

std::optional<WireObservable> ParseWireObservable(std::string_view text) {
  if (text == "yes") return WireObservable::kYes;
  if (text == "partial") return WireObservable::kPartial;
  if (text == "no") return WireObservable::kNo;
  return std::nullopt;
}

std::string_view WireObservableName(WireObservable w) {
  switch (w) {
    case WireObservable::kYes:
      return "yes";
    case WireObservable::kPartial:
      return "partial";
    case WireObservable::kNo:
      return "no";
  }
  return "?";
}

bool Requirement::informative_appendix() const {
  return requirement.find("(Informative appendix)") != std::string::npos;
}

Grade Requirement::grade() const {
  // decisions D-S3: rows from informative appendices are warnings whatever
  // their keyword.
  if (informative_appendix()) return Grade::kWarn;
  switch (level) {
    case Level::kMust:
    case Level::kMustNot:
    case Level::kRequired:
      return Grade::kFail;
    case Level::kMay:
    case Level::kOptional:
      return Grade::kInfo;
    case Level::kTable:
    case Level::kDesc:
      return Grade::kGoverning;
    default:
      return Grade::kWarn;
  }
}

std::string CatalogError::Describe() const {
  std::ostringstream out;
  out << source << ":" << line << ": " << message;
  return out.str();
}

CatalogLoad Catalog::Parse(std::string_view tsv, std::string source) {
  Catalog cat;
  cat.source_ = source;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  bool saw_header = false;
  while (pos < tsv.size()) {
    std::size_t nl = tsv.find('\n', pos);
    std::string_view line = tsv.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? tsv.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!saw_header) {
      if (line != kHeader) return Fail(source, line_no, "header line is not the catalog header");
      saw_header = true;
      continue;
    }
    if (line.empty()) return Fail(source, line_no, "empty line");
    Requirement row;
    if (std::string err = ParseRow(line, row); !err.empty()) {
      return Fail(source, line_no, err);
    }
    row.line = line_no;
    auto [it, inserted] = cat.by_id_.emplace(row.id, cat.rows_.size());
    if (!inserted) {
      return Fail(source, line_no,
                  "duplicate id " + row.id + " (first on line " + std::to_string(cat.rows_[it->second].line) + ")");
    }
    cat.rows_.push_back(std::move(row));
  }
  if (!saw_header) return Fail(source, 0, "empty file");
  CatalogLoad out;
  out.catalog = std::move(cat);
  return out;
}

CatalogLoad Catalog::Load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail(path.string(), 0, "cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Fail(path.string(), 0, "read error");
  return Parse(text.str(), path.string());
}

CatalogLoad Catalog::LoadDefault() {
  std::string why;
  std::optional<std::filesystem::path> path = FindRequirementsFile(&why);
  if (!path) return Fail("requirements.tsv", 0, why);
  return Load(*path);
}

const Requirement* Catalog::Find(std::string_view id) const {
  auto it = by_id_.find(std::string(id));
  return it == by_id_.end() ? nullptr : &rows_[it->second];
}

std::filesystem::path DataDir() {
  if (const char* env = std::getenv(kDataDirVariable); env && *env) return env;
  // /proc/self/exe, not argv[0]: the binary may have been found through PATH.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path bin = ec ? std::filesystem::current_path(ec) : exe.parent_path();
  // <prefix>/bin/rdmapct -> <prefix>/share/rdmapct; build/rdmapct and
  // build/tests/<test> -> build/share/rdmapct (a link to the source tree).
  for (std::filesystem::path base = bin;; base = base.parent_path()) {
    const std::filesystem::path candidate = base / "share" / "rdmapct";
    if (std::filesystem::is_regular_file(candidate / "conformance" / "requirements.tsv", ec)) return candidate;
    if (base == bin.parent_path().parent_path() || base == base.parent_path()) break;
  }
  return bin.parent_path() / "share" / "rdmapct";  // absent: errors name the expected place
}

std::filesystem::path RepositoryDir() {
  if (const char* env = std::getenv("RDMAPCT_SOURCE_DIR"); env && *env) return env;
  return DataDir();
}

std::optional<std::filesystem::path> FindRequirementsFile(std::string* why) {
  std::error_code ec;
  if (const char* env = std::getenv("RDMAPCT_SPEC_DIR"); env && *env) {
    // An explicit choice must not silently fall back to another copy.
    std::filesystem::path p = std::filesystem::path(env) / "requirements.tsv";
    if (std::filesystem::is_regular_file(p, ec)) return p;
    if (why) *why = "RDMAPCT_SPEC_DIR is set but " + p.string() + " does not exist";
    return std::nullopt;
  }
  const std::filesystem::path p = (DataDir() / "conformance" / "requirements.tsv").lexically_normal();
  if (std::filesystem::is_regular_file(p, ec)) return p;
  if (why) {
    *why = "no requirements.tsv at " + p.string() + "; set " + kDataDirVariable +
           " to rdmapct's data directory (<prefix>/share/rdmapct) or RDMAPCT_SPEC_DIR to a directory "
           "holding requirements.tsv";
  }
  return std::nullopt;
}

}  // namespace rdmapct::conformance
