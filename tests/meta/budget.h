// The size budgets of DEVELOPERS.md as a check: no source file over 800
// lines, no function over 60, except what tests/meta/budget_allowlist.tsv
// lists. The allow-list may only shrink:
//   - a file or function over budget that it does not list fails (NEW);
//   - a listed one that grew past its recorded length fails (GREW);
//   - a listed one that is now within budget, or gone, fails (FIXED) until
//     its line is deleted, so the list stays exact.
// Shrinking an item that stays over budget is fine (its line may be lowered
// by hand or by tools/update_budget.sh).
//
// Measures (source_scan.h):
//   file:     physical lines (wc -l) of every .h .cc .proto .sh .py .cmake
//             and CMakeLists.txt outside build trees;
//   function: lines from the body's '{' to its '}' that hold code (blank and
//             comment-only lines do not count) of every .h and .cc.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rdmapct::meta {

inline constexpr int kFileLineBudget = 800;
inline constexpr int kFunctionLineBudget = 60;
inline constexpr std::string_view kAllowListPath = "tests/meta/budget_allowlist.tsv";
inline constexpr std::string_view kWholeFile = "-";  // the function column of a file entry

struct BudgetItem {
  std::string file;
  std::string function;  // kWholeFile for a file's own length
  int lines = 0;
  friend bool operator==(const BudgetItem&, const BudgetItem&) = default;
};

// Everything over budget in the tree under `root`, sorted by file then
// function. Two over-budget functions of one name in one file get "#2", "#3"
// in order of appearance.
std::vector<BudgetItem> FindOverBudget(const std::filesystem::path& root);

// The allow-list's text: '#' comment lines, then "lines<TAB>file<TAB>function".
// false with `error` naming the line on a malformed one.
bool ParseAllowList(std::string_view text, std::vector<BudgetItem>& items, std::string& error);
std::string FormatAllowList(const std::vector<BudgetItem>& items);

// One line per problem (NEW, GREW, FIXED), each saying what to do; empty
// when the tree keeps its budget.
std::vector<std::string> CompareWithAllowList(const std::vector<BudgetItem>& over,
                                              const std::vector<BudgetItem>& allowed);

}  // namespace rdmapct::meta
