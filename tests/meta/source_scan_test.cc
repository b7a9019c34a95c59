// The scanner behind the layering and budget tests: a wrong measure would
// let an over-long function pass or flag a short one.
#include "tests/meta/source_scan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rdmapct::meta {
namespace {

std::vector<std::string> Names(const std::vector<FunctionSpan>& spans) {
  std::vector<std::string> names;
  for (const FunctionSpan& s : spans) names.push_back(s.name);
  return names;
}

TEST(ScanSource, FindsIncludesButNotInCommentsOrStrings) {
  const ScannedSource s = ScanSource(
      "#include \"reference/wire/ddp.h\"\n"
      "  #  include <vector>\n"
      "/* #include \"no/block.h\"\n"
      "#include \"no/still_block.h\" */\n"
      "// #include \"no/line.h\"\n"
      "const char* k = \"#include \\\"no/string.h\\\"\";\n");
  ASSERT_EQ(s.includes.size(), 2u);
  EXPECT_EQ(s.includes[0].path, "reference/wire/ddp.h");
  EXPECT_TRUE(s.includes[0].quoted);
  EXPECT_EQ(s.includes[0].line, 1);
  EXPECT_EQ(s.includes[1].path, "vector");
  EXPECT_FALSE(s.includes[1].quoted);
  EXPECT_EQ(s.includes[1].line, 2);
}

TEST(ScanSource, BlanksCommentsAndLiteralsKeepingLines) {
  const std::string text = "int a = '{'; // }\nauto s = R\"x({\n})x\"; int n = 1'000;\n/* { */ int b;\n";
  const ScannedSource s = ScanSource(text);
  EXPECT_EQ(s.code.size(), text.size());
  EXPECT_EQ(s.code.find('{'), std::string::npos);
  EXPECT_EQ(s.code.find('}'), std::string::npos);
  EXPECT_NE(s.code.find("int n = 1'000;"), std::string::npos);  // a digit separator is no literal
  EXPECT_NE(s.code.find("int b;"), std::string::npos);
  EXPECT_EQ(CountLines(s.code), 4);
}

TEST(MeasureFunctions, CountsCodeLinesOfTheBody) {
  const auto spans = MeasureFunctions(
      "namespace x {\n"
      "int F(int a) {\n"
      "  // why\n"
      "\n"
      "  if (a) {\n"
      "    return 1;\n"
      "  }\n"
      "  return 2;\n"
      "}\n"
      "}  // namespace x\n");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].name, "F");
  EXPECT_EQ(spans[0].first_line, 2);
  EXPECT_EQ(spans[0].last_line, 9);
  EXPECT_EQ(spans[0].code_lines, 6);  // not the comment, not the blank line
}

TEST(MeasureFunctions, NamesMembersOperatorsAndTestMacros) {
  const auto spans = MeasureFunctions(
      "class A {\n"
      " public:\n"
      "  A(int v) : v_{v}, w_(v) {}\n"
      "  bool operator()(int x) const { return x == v_; }\n"
      "  friend bool operator==(const A&, const A&) = default;\n"
      "  int v_{0};\n"
      "  int w_ = 1;\n"
      "};\n"
      "template <typename T>\n"
      "T A::Get() const {\n"
      "  return {};\n"
      "}\n"
      "TEST(Suite, Name) {\n"
      "  EXPECT_EQ(1, 1);\n"
      "}\n");
  EXPECT_EQ(Names(spans), (std::vector<std::string>{"A", "operator()", "A::Get", "TEST(Suite, Name)"}));
}

TEST(MeasureFunctions, DataTablesAndBracedArgumentsAreNotFunctions) {
  const auto spans = MeasureFunctions(
      "constexpr Row kTable[] = {\n"
      "    {Opcode(1), F(2)},\n"
      "};\n"
      "const std::vector<int> kList{F(1), 2};\n"
      "extern \"C\" {\n"
      "int G() try {\n"
      "  return H(1, {2, 3});\n"
      "} catch (...) {\n"
      "  return 0;\n"
      "}\n"
      "}\n"
      "const auto kMake = [](int a) {\n"
      "  return a;\n"
      "};\n");
  EXPECT_EQ(Names(spans), (std::vector<std::string>{"G", "catch", "lambda"}));
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].first_line, 6);
  EXPECT_EQ(spans[0].last_line, 8);
}

TEST(MeasureFunctions, LambdasCountTowardsTheirFunction) {
  const auto spans = MeasureFunctions(
      "void F() {\n"
      "  auto g = [](int a) {\n"
      "    return a;\n"
      "  };\n"
      "  struct Local { int x; };\n"
      "}\n");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].code_lines, 6);
}

}  // namespace
}  // namespace rdmapct::meta
