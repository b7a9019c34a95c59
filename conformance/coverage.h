// Requirement coverage: which cases cite each catalog row
// (`rdmapct conform --coverage`), and which MUST-level rows nothing checks.
//
// Rows are classed by how a missed check is graded (Requirement::grade(),
// decisions D-S3): MUST / MUST NOT / REQUIRED rows are the ones coverage is
// about; SHOULD-level rows (SHOULD family, lower-case keywords, informative
// appendices) are shown for information. MAY and DESC / TABLE rows are not
// tabled (a case may still cite them).
//
// A row is
//   covered         some case cites it (Case.requirement or an Expect's own
//                   requirement list);
//   reasoned        no case, but conformance/uncovered_reasons.tsv says why
//                   it is not checkable on the wire (a `partial` row needing a
//                   DUT-side agent, a multi-stream LLP, IPsec, ...);
//   not observable  no case, and the catalog marks it wire_observable = no;
//   uncovered       none of these.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/catalog.h"

namespace rdmapct::conformance {

enum class CoverageClass : uint8_t { kMust, kShould };
enum class CoverageStatus : uint8_t { kCovered, kReasoned, kNotObservable, kUncovered };

std::string_view CoverageClassName(CoverageClass c);    // "MUST", "SHOULD"
std::string_view CoverageStatusName(CoverageStatus s);  // "covered", "reasoned", "not-observable", "uncovered"

// id -> reason, from a TSV file: one "id<TAB>reason" a line; '#' lines and
// blank lines are comments.
struct ReasonsLoad {
  std::map<std::string, std::string> reasons;
  std::vector<std::string> errors;  // "<source>:<line>: <problem>"
  bool ok() const { return errors.empty(); }
};
ReasonsLoad ParseReasons(std::string_view tsv, const std::string& source);
ReasonsLoad LoadReasons(const std::filesystem::path& path);
// DataDir()/conformance/uncovered_reasons.tsv.
std::filesystem::path DefaultUncoveredReasonsFile();
// Every reason the repository holds: uncovered_reasons.tsv (rows no document
// owns: IPsec, multi-stream LLPs, ...) plus conformance/reasons/<doc>.tsv,
// one file per document kept by that document's case writers. An id given
// in two files is an error.
ReasonsLoad LoadUncoveredReasons();

struct CoverageRow {
  const Requirement* requirement = nullptr;
  CoverageClass cls = CoverageClass::kMust;
  CoverageStatus status = CoverageStatus::kUncovered;
  std::vector<std::string> cases;  // ids citing the row, case order
  std::string reason;              // from the reasons file (also kept when covered)
};

struct CoverageCounts {
  std::size_t rows = 0, covered = 0, reasoned = 0, not_observable = 0, uncovered = 0;
};

struct Coverage {
  std::vector<CoverageRow> rows;  // catalog order, MUST and SHOULD classes only
  // Problems of the inputs: a case or a reason naming an id the catalog
  // lacks, a reason given for a row a case covers (the reason is stale).
  std::vector<std::string> problems;

  CoverageCounts Count(CoverageClass cls, std::string_view doc = {}) const;
  // Catalog documents in first-appearance order ("RFC5040", ...).
  std::vector<std::string> Documents() const;
};

// Every requirement id a case cites: its own and every Expect's (any_of
// alternatives included), each once, in order of appearance.
std::vector<std::string> CitedRequirements(const proto::Case& c);

// The class of a row, or false when it is not tabled (MAY, DESC, TABLE).
bool CoverageClassOf(const Requirement& r, CoverageClass& out);

Coverage ComputeCoverage(const Catalog& catalog, const std::vector<LoadedCase>& cases,
                         const std::map<std::string, std::string>& reasons);

// Text table: per document the MUST rows then the SHOULD rows, one line each
// ("R5040-7.2-01  MUST  yes  covered  rfc5040/7.2/x"), then counts and the
// uncovered MUST-level rows. `show_covered` false lists only rows without a case.
std::string RenderCoverageText(const Coverage& coverage, bool show_covered = true);
// {"schema": "rdmapct-coverage", "schema_version": 1, "summary": {...},
//  "rows": [{"id","doc","section","level","wire_observable","topic","class",
//            "status","cases","reason"}], "problems": [...]} (docs/reports.md).
std::string RenderCoverageJson(const Coverage& coverage);

}  // namespace rdmapct::conformance
