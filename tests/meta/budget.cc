#include "tests/meta/budget.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "tests/meta/source_scan.h"

namespace rdmapct::meta {
namespace {

const std::vector<std::string> kBudgetedFiles = {".h", ".cc", ".proto", ".sh", ".py", ".cmake", "CMakeLists.txt"};
const std::vector<std::string> kCxxFiles = {".h", ".cc"};

bool IsCxx(const std::string& file) { return file.ends_with(".h") || file.ends_with(".cc"); }

void AddOverBudgetFunctions(const std::string& file, std::string_view text, std::vector<BudgetItem>& out) {
  std::map<std::string, int> seen;
  for (const FunctionSpan& f : MeasureFunctions(text)) {
    if (f.code_lines <= kFunctionLineBudget) continue;
    const int n = ++seen[f.name];
    out.push_back(BudgetItem{file, n == 1 ? f.name : f.name + "#" + std::to_string(n), f.code_lines});
  }
}

std::string Describe(const BudgetItem& i) { return i.function == kWholeFile ? i.file : i.file + ": " + i.function; }

}  // namespace

std::vector<BudgetItem> FindOverBudget(const std::filesystem::path& root) {
  std::vector<BudgetItem> over;
  for (const std::string& file : ListSourceFiles(root, kBudgetedFiles)) {
    const std::string text = ReadWholeFile(root / file);
    if (const int lines = CountLines(text); lines > kFileLineBudget) {
      over.push_back(BudgetItem{file, std::string(kWholeFile), lines});
    }
    if (IsCxx(file)) AddOverBudgetFunctions(file, text, over);
  }
  std::stable_sort(over.begin(), over.end(), [](const BudgetItem& a, const BudgetItem& b) {
    return std::tie(a.file, a.function) < std::tie(b.file, b.function);
  });
  return over;
}

bool ParseAllowList(std::string_view text, std::vector<BudgetItem>& items, std::string& error) {
  std::istringstream in{std::string(text)};
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string lines, file, function;
    if (!std::getline(fields, lines, '\t') || !std::getline(fields, file, '\t') || !std::getline(fields, function) ||
        lines.empty() || !std::all_of(lines.begin(), lines.end(), ::isdigit) || file.empty() || function.empty()) {
      error = std::string(kAllowListPath) + ":" + std::to_string(n) + ": want lines<TAB>file<TAB>function";
      return false;
    }
    items.push_back(BudgetItem{file, function, std::stoi(lines)});
  }
  return true;
}

std::string FormatAllowList(const std::vector<BudgetItem>& items) {
  std::string out =
      "# Over-budget files (> 800 lines) and functions (> 60 code lines) that exist today.\n"
      "# This list may only shrink (tests/meta/budget.h): shorten an item, then delete its line.\n"
      "# A new item over budget fails the test; so does a listed one that grew past its number.\n"
      "# Rewrite from the tree (after merges, by the lead): tools/update_budget.sh\n"
      "# lines\tfile\tfunction ('-': the whole file)\n";
  for (const BudgetItem& i : items) out += std::to_string(i.lines) + "\t" + i.file + "\t" + i.function + "\n";
  return out;
}

std::vector<std::string> CompareWithAllowList(const std::vector<BudgetItem>& over,
                                              const std::vector<BudgetItem>& allowed) {
  const auto key = [](const BudgetItem& i) { return std::make_pair(i.file, i.function); };
  std::map<std::pair<std::string, std::string>, int> allowed_lines;
  for (const BudgetItem& a : allowed) allowed_lines[key(a)] = a.lines;
  std::vector<std::string> problems;
  for (const BudgetItem& o : over) {
    const auto it = allowed_lines.find(key(o));
    const int budget = o.function == kWholeFile ? kFileLineBudget : kFunctionLineBudget;
    if (it == allowed_lines.end()) {
      problems.push_back("NEW: " + Describe(o) + " is " + std::to_string(o.lines) + " lines (budget " +
                         std::to_string(budget) + "): shorten it");
    } else if (o.lines > it->second) {
      problems.push_back("GREW: " + Describe(o) + " is " + std::to_string(o.lines) + " lines, the allow-list says " +
                         std::to_string(it->second) + ": an allow-listed item may only shrink");
    }
    if (it != allowed_lines.end()) allowed_lines.erase(it);
  }
  for (const auto& [k, lines] : allowed_lines) {
    problems.push_back("FIXED: " + Describe(BudgetItem{k.first, k.second, lines}) +
                       " is within budget now (or gone): delete its line from " + std::string(kAllowListPath));
  }
  return problems;
}

}  // namespace rdmapct::meta
