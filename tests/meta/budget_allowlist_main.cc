// budget_allowlist: prints what tests/meta/budget_test would report, or with
// --update rewrites tests/meta/budget_allowlist.tsv from the tree and says
// what it added, removed, and which lengths grew or shrank
// (tools/update_budget.sh runs it).
//
//   budget_allowlist [--root DIR] [--update]
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "tests/meta/budget.h"
#include "tests/meta/source_scan.h"

namespace meta = rdmapct::meta;

namespace {

std::string Key(const meta::BudgetItem& i) { return i.file + "\t" + i.function; }

int Update(const std::filesystem::path& root, const std::vector<meta::BudgetItem>& before,
           const std::vector<meta::BudgetItem>& over) {
  std::map<std::string, int> old_lines;
  std::set<std::string> new_keys;
  for (const auto& i : before) old_lines[Key(i)] = i.lines;
  for (const auto& i : over) new_keys.insert(Key(i));
  for (const auto& i : over) {
    const auto it = old_lines.find(Key(i));
    if (it == old_lines.end()) {
      std::printf("added   %d\t%s\n", i.lines, Key(i).c_str());
    } else if (it->second != i.lines) {
      std::printf("%s %d -> %d\t%s\n", i.lines > it->second ? "grew   " : "shrank ", it->second, i.lines,
                  Key(i).c_str());
    }
  }
  for (const auto& i : before) {
    if (!new_keys.count(Key(i))) std::printf("removed %d\t%s\n", i.lines, Key(i).c_str());
  }
  std::ofstream out(root / meta::kAllowListPath, std::ios::binary | std::ios::trunc);
  out << meta::FormatAllowList(over);
  if (!out) {
    std::fprintf(stderr, "budget_allowlist: cannot write %s\n", (root / meta::kAllowListPath).c_str());
    return 2;
  }
  std::printf("%zu items in %s\n", over.size(), std::string(meta::kAllowListPath).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path root = meta::SourceRoot();
  bool update = false;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--update") {
      update = true;
    } else if (a == "--root" && k + 1 < argc) {
      root = argv[++k];
    } else {
      std::fprintf(stderr, "usage: budget_allowlist [--root DIR] [--update]\n");
      return 2;
    }
  }
  std::vector<meta::BudgetItem> allowed;
  std::string error;
  const std::string text = meta::ReadWholeFile(root / meta::kAllowListPath);
  if (!meta::ParseAllowList(text, allowed, error) && !update) {
    std::fprintf(stderr, "budget_allowlist: %s\n", error.c_str());
    return 2;
  }
  const std::vector<meta::BudgetItem> over = meta::FindOverBudget(root);
  if (update) return Update(root, allowed, over);
  const std::vector<std::string> problems = meta::CompareWithAllowList(over, allowed);
  for (const std::string& p : problems) std::printf("%s\n", p.c_str());
  return problems.empty() ? 0 : 1;
}
