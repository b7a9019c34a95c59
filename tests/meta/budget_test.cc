// DEVELOPERS.md's budgets, executable: no file over 800 lines, no function
// over 60, except the items of tests/meta/budget_allowlist.tsv, which may
// only shrink (tests/meta/budget.h says how, tools/update_budget.sh rewrites it).
#include "tests/meta/budget.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/meta/source_scan.h"

namespace rdmapct::meta {
namespace {

std::string Lines(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return all;
}

TEST(Budget, TheTreeKeepsItsBudget) {
  const std::filesystem::path root = SourceRoot();
  std::vector<BudgetItem> allowed;
  std::string error;
  ASSERT_TRUE(ParseAllowList(ReadWholeFile(root / kAllowListPath), allowed, error)) << error;
  ASSERT_FALSE(allowed.empty()) << "no " << kAllowListPath << " under " << root;
  const std::vector<std::string> problems = CompareWithAllowList(FindOverBudget(root), allowed);
  EXPECT_TRUE(problems.empty()) << Lines(problems);
}

TEST(Budget, NewGrownAndFixedItemsFail) {
  const std::vector<BudgetItem> allowed = {{"a.cc", "Long", 80}, {"a.cc", "Fixed", 70}, {"big.cc", "-", 900}};
  const std::vector<BudgetItem> over = {{"a.cc", "Long", 81}, {"b.cc", "New", 61}, {"big.cc", "-", 850}};
  const std::vector<std::string> problems = CompareWithAllowList(over, allowed);
  ASSERT_EQ(problems.size(), 3u) << Lines(problems);
  EXPECT_EQ(problems[0], "GREW: a.cc: Long is 81 lines, the allow-list says 80: an allow-listed item may only shrink");
  EXPECT_EQ(problems[1], "NEW: b.cc: New is 61 lines (budget 60): shorten it");
  EXPECT_EQ(problems[2],
            "FIXED: a.cc: Fixed is within budget now (or gone): delete its line from tests/meta/budget_allowlist.tsv");
  EXPECT_TRUE(CompareWithAllowList(over, over).empty());
}

TEST(Budget, AllowListRoundTrips) {
  const std::vector<BudgetItem> items = {{"tools/gen_corpus.cc", "-", 852}, {"cli/x.cc", "TEST(A, B)", 61}};
  std::vector<BudgetItem> parsed;
  std::string error;
  ASSERT_TRUE(ParseAllowList(FormatAllowList(items), parsed, error)) << error;
  EXPECT_EQ(parsed, items);
  EXPECT_FALSE(ParseAllowList("12 no tabs\n", parsed, error));
  EXPECT_NE(error.find(":1:"), std::string::npos);
}

TEST(Budget, ALongFunctionIsMeasuredOverBudget) {
  std::string text = "void F() {\n";
  for (int i = 0; i < kFunctionLineBudget; ++i) text += "  ++x;\n";
  text += "}\n";
  const auto spans = MeasureFunctions(text);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].code_lines, kFunctionLineBudget + 2);
}

}  // namespace
}  // namespace rdmapct::meta
