// Traceability meta-test (the requirement-id trail, docs/architecture.md):
//   - every case cites catalog ids that exist and case ids are unique
//     (ValidateCases, the same checks the runner applies);
//   - conformance/uncovered_reasons.tsv names catalog rows only, and no row a
//     case already covers (a stale reason hides nothing);
//   - every wire-observable (yes / partial) MUST / MUST NOT / REQUIRED row
//     has a case or a documented reason, except the rows listed in
//     conformance/coverage_todo.tsv. The list is exact, like the fault
//     matrix: a NEW uncovered row fails (write a case, or a reason), and so
//     does a listed row that a case now covers (remove it: regenerate);
//   - every `// REQ <id>` tag in the sources names a catalog id.
//
// To regenerate the list after adding cases (then review the diff):
//   RDMAPCT_UPDATE_COVERAGE_TODO=1 build/tests/conformance_test --gtest_filter='Traceability*'
#include <gtest/gtest.h>

#include <iostream>

#include <fmt/format.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/catalog.h"
#include "conformance/coverage.h"
#include "conformance/report_common.h"

namespace rdmapct::conformance {
namespace {

std::filesystem::path TodoFile() { return RepositoryDir() / "conformance" / "coverage_todo.tsv"; }

const Catalog& TheCatalog() {
  static const CatalogLoad load = Catalog::LoadDefault();
  EXPECT_TRUE(load.ok()) << load.error.Describe();
  return *load.catalog;
}

const CaseLoad& TheCases() {
  static const CaseLoad load = LoadCaseFiles(DefaultCasesDir());
  return load;
}

// The rows the todo list is about: wire-observable MUST-class rows with
// neither a case nor a reason.
std::vector<const CoverageRow*> OpenRows(const Coverage& cov) {
  std::vector<const CoverageRow*> out;
  for (const CoverageRow& row : cov.rows) {
    if (row.cls == CoverageClass::kMust && row.status == CoverageStatus::kUncovered &&
        row.requirement->wire_observable != WireObservable::kNo) {
      out.push_back(&row);
    }
  }
  return out;
}

std::string TodoText(const std::vector<const CoverageRow*>& rows) {
  std::string out =
      "# Wire-observable MUST / MUST NOT / REQUIRED rows without a conformance case\n"
      "# or a reason in uncovered_reasons.tsv (tests/conformance/traceability_test.cc).\n"
      "# The list must stay exact: remove an id when a case covers it.\n"
      "# Regenerate: RDMAPCT_UPDATE_COVERAGE_TODO=1 conformance_test --gtest_filter='Traceability*'\n"
      "# id\tlevel\twire_observable\ttopic\n";
  for (const CoverageRow* row : rows) {
    const Requirement& r = *row->requirement;
    out += fmt::format("{}\t{}\t{}\t{}\n", r.id, LevelName(r.level), WireObservableName(r.wire_observable), r.topic);
  }
  return out;
}

TEST(TraceabilityTest, CasesCiteExistingIdsAndIdsAreUnique) {
  const CaseLoad& load = TheCases();
  for (const std::string& e : load.errors) ADD_FAILURE() << e;
  for (const std::string& e : ValidateCases(load.cases, TheCatalog())) ADD_FAILURE() << e;
  std::set<std::string> ids;
  for (const LoadedCase& c : load.cases) {
    EXPECT_TRUE(ids.insert(c.id()).second) << "duplicate case id " << c.id() << " at " << c.where();
    for (const std::string& r : CitedRequirements(c.proto)) {
      EXPECT_TRUE(TheCatalog().Contains(r)) << c.where() << ": " << c.id() << " cites unknown " << r;
    }
  }
  EXPECT_FALSE(load.cases.empty());
}

TEST(TraceabilityTest, ReasonsFileIsCleanAndNotStale) {
  const ReasonsLoad reasons = LoadUncoveredReasons();
  for (const std::string& e : reasons.errors) ADD_FAILURE() << e;
  const Coverage cov = ComputeCoverage(TheCatalog(), TheCases().cases, reasons.reasons);
  for (const std::string& p : cov.problems) ADD_FAILURE() << p;
}

TEST(TraceabilityTest, EveryWireObservableMustRowHasACaseOrAReasonOrIsListed) {
  const ReasonsLoad reasons = LoadUncoveredReasons();
  const Coverage cov = ComputeCoverage(TheCatalog(), TheCases().cases, reasons.reasons);
  const std::vector<const CoverageRow*> open = OpenRows(cov);
  if (std::getenv("RDMAPCT_UPDATE_COVERAGE_TODO")) {
    std::string error;
    ASSERT_TRUE(WriteTextFile(TodoFile(), TodoText(open), error)) << error;
  }
  const ReasonsLoad todo = LoadReasons(TodoFile());
  for (const std::string& e : todo.errors) ADD_FAILURE() << e;

  std::set<std::string> open_ids;
  for (const CoverageRow* row : open) {
    open_ids.insert(row->requirement->id);
    EXPECT_TRUE(todo.reasons.count(row->requirement->id))
        << row->requirement->id << " (" << LevelName(row->requirement->level) << ", "
        << WireObservableName(row->requirement->wire_observable)
        << ") has no case and no reason: write a case, add a reason to conformance/uncovered_reasons.tsv, "
           "or list it in conformance/coverage_todo.tsv";
  }
  for (const auto& [id, rest] : todo.reasons) {
    const CoverageRow* row = nullptr;
    for (const CoverageRow& r : cov.rows) {
      if (r.requirement->id == id) row = &r;
    }
    if (!row) {
      ADD_FAILURE() << "coverage_todo.tsv lists " << id
                    << ", which is not a MUST / MUST NOT / REQUIRED row of the catalog: remove it";
    } else if (!open_ids.count(id)) {
      // The list is exact (issue 15): a stale row hides a covered requirement
      // from whoever reads the list to find work.
      ADD_FAILURE() << "coverage_todo.tsv lists " << id << ", which is now " << CoverageStatusName(row->status)
                    << (row->cases.empty() ? "" : " by " + row->cases.front())
                    << ": remove it from the list (RDMAPCT_UPDATE_COVERAGE_TODO=1)";
    }
  }
}

// Every id after `// REQ` in the sources is a catalog id: a typo or a
// retired id would break `grep -rn <id>` (docs/architecture.md).
TEST(TraceabilityTest, EveryReqTagNamesACatalogId) {
  namespace fs = std::filesystem;
  const std::regex id_re("R(5040|5041|5044|6581|7306|COMMIT)-[A-Za-z0-9.]+-[A-Za-z0-9]+");
  std::size_t tags = 0;
  for (const char* dir :
       {"reference", "conformance", "targets", "capture", "pcaps", "replay", "fuzz", "cli", "tools"}) {
    const fs::path root = RepositoryDir() / dir;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(root, ec)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        const std::size_t at = line.find("// REQ ");
        if (at == std::string::npos) continue;
        ++tags;
        const std::string rest = line.substr(at + 7);
        for (auto it = std::sregex_iterator(rest.begin(), rest.end(), id_re); it != std::sregex_iterator(); ++it) {
          EXPECT_TRUE(TheCatalog().Contains(it->str()))
              << e.path().lexically_relative(RepositoryDir()).string() << ":" << n << ": // REQ names " << it->str()
              << ", which is not in the catalog";
        }
      }
    }
  }
  EXPECT_GT(tags, 100u);
}

}  // namespace
}  // namespace rdmapct::conformance
