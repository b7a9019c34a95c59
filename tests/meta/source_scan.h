// Reading the source tree as text for the meta tests (layering_test,
// budget_test) and tools/update_budget.sh: which files there are, their
// #include lines, and how long each function is.
//
// This is a scanner, not a C++ parser. It is good enough for this tree's
// style (docs/architecture.md) and is itself unit-tested
// (source_scan_test.cc); where it guesses, it errs towards reporting.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rdmapct::meta {

// The checkout the meta tests read: $RDMAPCT_SOURCE_DIR (CTest sets it),
// else the current directory.
std::filesystem::path SourceRoot();

// Files under `root` whose names end in one of `endings` (".cc", ".h",
// "CMakeLists.txt", ...), as sorted '/'-separated paths relative to `root`.
// Skipped: hidden directories (.git, .ci, ...), build trees (directories
// named build* or holding a CMakeCache.txt), and symbolic links.
std::vector<std::string> ListSourceFiles(const std::filesystem::path& root, const std::vector<std::string>& endings);

std::string ReadWholeFile(const std::filesystem::path& path);

struct Include {
  int line = 0;         // 1-based
  std::string path;     // between the quotes or angle brackets
  bool quoted = false;  // "..." (a project header) rather than <...>
};

struct ScannedSource {
  // The text with comments, string and character literals and preprocessor
  // directives replaced by spaces; newlines are kept, so line numbers hold.
  std::string code;
  std::vector<Include> includes;
};

ScannedSource ScanSource(std::string_view text);

// One function body: a brace block whose enclosing blocks are all namespace,
// class, struct, union, enum or extern "C" scopes, and whose head (the text
// since the previous ';', '{' or '}') has a parenthesis. Lambdas and local
// classes count towards the function they stand in; a lambda that
// initialises a namespace-scope variable counts as a function of its own.
struct FunctionSpan {
  // "Foo::Bar", "operator==", "lambda"; a macro (4 or more capitals, digits
  // or '_') with its arguments: "TEST(Suite, Name)".
  std::string name;
  int first_line = 0;  // the line of the body's '{'
  int last_line = 0;   // the line of its '}'
  // The measure the budget uses: lines from first_line to last_line that hold
  // code, i.e. not blank once comments are removed. Comments saying why cost
  // nothing; blank lines cost nothing.
  int code_lines = 0;
};

std::vector<FunctionSpan> MeasureFunctions(std::string_view text);

// Physical lines (newline characters, plus one for an unterminated last line).
int CountLines(std::string_view text);

}  // namespace rdmapct::meta
