#include "tests/meta/source_scan.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace rdmapct::meta {
namespace fs = std::filesystem;

namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsBuildTree(const fs::path& dir) {
  const std::string name = dir.filename().string();
  return name == "build" || name.rfind("build-", 0) == 0 || fs::exists(dir / "CMakeCache.txt");
}

bool EndsWithAny(const std::string& name, const std::vector<std::string>& endings) {
  return std::any_of(endings.begin(), endings.end(), [&](const std::string& e) {
    return name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
  });
}

// Replaces [from, to) by spaces, keeping newlines.
void Blank(std::string& s, std::size_t from, std::size_t to) {
  for (std::size_t k = from; k < to && k < s.size(); ++k) {
    if (s[k] != '\n') s[k] = ' ';
  }
}

// The end (one past) of a quoted literal starting at `open` (the quote).
std::size_t EndOfQuoted(std::string_view t, std::size_t open) {
  const char quote = t[open];
  std::size_t j = open + 1;
  while (j < t.size() && t[j] != quote && t[j] != '\n') j += t[j] == '\\' ? 2 : 1;
  return std::min(j + 1, t.size());
}

// R"delim( ... )delim": `open` is the quote after R.
std::size_t EndOfRaw(std::string_view t, std::size_t open) {
  const std::size_t paren = t.find('(', open);
  if (paren == std::string_view::npos) return t.size();
  const std::string close = ")" + std::string(t.substr(open + 1, paren - open - 1)) + "\"";
  const std::size_t end = t.find(close, paren);
  return end == std::string_view::npos ? t.size() : end + close.size();
}

bool IsRawStringQuote(std::string_view t, std::size_t i) {
  if (i == 0 || t[i - 1] != 'R') return false;
  std::size_t k = i - 1;  // 'R'; allow the u8, u, U, L prefixes before it
  while (k > 0 && IsIdentChar(t[k - 1])) --k;
  const std::string_view prefix = t.substr(k, i - 1 - k);
  return prefix.empty() || prefix == "u8" || prefix == "u" || prefix == "U" || prefix == "L";
}

// 1'000'000: a quote inside a number is a digit separator, not a literal.
bool IsDigitSeparator(std::string_view t, std::size_t i) {
  if (i == 0 || !std::isalnum(static_cast<unsigned char>(t[i - 1]))) return false;
  std::size_t k = i;
  while (k > 0 && (IsIdentChar(t[k - 1]) || t[k - 1] == '\'' || t[k - 1] == '.')) --k;
  return std::isdigit(static_cast<unsigned char>(t[k]));
}

// A directive runs to the first newline not escaped by a backslash.
std::size_t EndOfDirective(std::string_view t, std::size_t i) {
  while (i < t.size() && !(t[i] == '\n' && t[i - 1] != '\\')) ++i;
  return i;
}

void ParseDirective(std::string_view d, int line, std::vector<Include>& out) {
  static const std::regex kInclude(R"re(^#\s*include\s*(["<])([^">]*)[">])re");
  std::match_results<std::string_view::const_iterator> m;
  if (std::regex_search(d.begin(), d.end(), m, kInclude)) {
    out.push_back(Include{line, m[2].str(), m[1].str() == "\""});
  }
}

}  // namespace

fs::path SourceRoot() {
  if (const char* env = std::getenv("RDMAPCT_SOURCE_DIR"); env && *env) return env;
  return fs::current_path();
}

std::vector<std::string> ListSourceFiles(const fs::path& root, const std::vector<std::string>& endings) {
  std::vector<std::string> files;
  auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied);
  for (; it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    if (it->is_symlink()) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory()) {
      if (p.filename().string().rfind('.', 0) == 0 || IsBuildTree(p)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && EndsWithAny(p.filename().string(), endings)) {
      files.push_back(fs::relative(p, root).generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int CountLines(std::string_view text) {
  const int n = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  return n + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

ScannedSource ScanSource(std::string_view t) {
  ScannedSource out;
  out.code.assign(t.begin(), t.end());
  int line = 1;
  bool line_start = true;  // nothing but white space so far on this line
  std::size_t i = 0;
  while (i < t.size()) {
    const char ch = t[i];
    std::size_t end = i + 1;
    if (ch == '\n') {
      ++line;
      line_start = true;
      ++i;
      continue;
    }
    if (line_start && ch == '#') {
      end = EndOfDirective(t, i);
      ParseDirective(t.substr(i, end - i), line, out.includes);
      Blank(out.code, i, end);
    } else if (t.compare(i, 2, "//") == 0) {
      end = std::min(t.find('\n', i), t.size());
      Blank(out.code, i, end);
    } else if (t.compare(i, 2, "/*") == 0) {
      const std::size_t close = t.find("*/", i + 2);
      end = close == std::string_view::npos ? t.size() : close + 2;
      Blank(out.code, i, end);
    } else if (ch == '"') {
      end = IsRawStringQuote(t, i) ? EndOfRaw(t, i) : EndOfQuoted(t, i);
      Blank(out.code, i + 1, end - 1);
    } else if (ch == '\'' && !IsDigitSeparator(t, i)) {
      end = EndOfQuoted(t, i);
      Blank(out.code, i + 1, end - 1);
    }
    if (!std::isspace(static_cast<unsigned char>(ch))) line_start = false;
    line += static_cast<int>(std::count(t.begin() + i + 1, t.begin() + end, '\n'));
    i = end;
  }
  return out;
}

namespace {

std::string Trim(std::string_view s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(' ') - b + 1));
}

// Drops [[attributes]], access labels and leading template <...> parameter lists.
std::string StripPrefixes(std::string h) {
  for (std::size_t a; (a = h.find("[[")) != std::string::npos;) {
    const std::size_t b = h.find("]]", a);
    h.erase(a, b == std::string::npos ? std::string::npos : b + 2 - a);
  }
  h = Trim(h);
  for (bool again = true; again;) {  // access labels end no head: `private: int F() {`
    again = false;
    for (std::string_view label : {"public", "private", "protected"}) {
      if (h.rfind(label, 0) == 0 && Trim(std::string_view(h).substr(label.size())).rfind(':', 0) == 0) {
        h = Trim(std::string_view(h).substr(h.find(':') + 1));
        again = true;
      }
    }
  }
  while (h.rfind("template", 0) == 0 && h.size() > 8 && (h[8] == ' ' || h[8] == '<')) {
    std::size_t k = h.find('<');
    int depth = 0;
    for (; k < h.size(); ++k) {
      depth += h[k] == '<' ? 1 : h[k] == '>' ? -1 : 0;
      if (depth == 0) break;
    }
    h = Trim(k < h.size() ? std::string_view(h).substr(k + 1) : std::string_view());
  }
  return h;
}

// The text of `h` outside (), [] and {} pairs, other characters as '.'.
std::string DepthZero(const std::string& h) {
  std::string z(h.size(), '.');
  int depth = 0;
  for (std::size_t k = 0; k < h.size(); ++k) {
    const char c = h[k];
    if (c == ')' || c == ']' || c == '}') --depth;
    if (depth == 0) z[k] = c;
    if (c == '(' || c == '[' || c == '{') ++depth;
  }
  return z;
}

bool HasWord(const std::string& z, std::string_view word) {
  for (std::size_t k = z.find(word); k != std::string::npos; k = z.find(word, k + 1)) {
    const std::size_t e = k + word.size();
    if ((k == 0 || !IsIdentChar(z[k - 1])) && (e >= z.size() || !IsIdentChar(z[e]))) return true;
  }
  return false;
}

// The position of a lone '=' (not ==, !=, <=, >=) at depth zero, or npos.
std::size_t AssignmentAt(const std::string& z) {
  for (std::size_t k = 0; k < z.size(); ++k) {
    if (z[k] != '=') continue;
    const char before = k > 0 ? z[k - 1] : ' ';
    const char after = k + 1 < z.size() ? z[k + 1] : ' ';
    if (after != '=' && before != '=' && before != '!' && before != '<' && before != '>') return k;
  }
  return std::string::npos;
}

// A constructor's member initialiser in braces: `Foo() : a_{1} {`.
bool IsMemberBraceInit(const std::string& h, const std::string& z) {
  const std::size_t close = z.find(')');
  if (close == std::string::npos) return false;
  bool colon = false;
  for (std::size_t k = close; k < z.size(); ++k) {
    if (z[k] == ':' && z[k - 1] != ':' && (k + 1 >= z.size() || z[k + 1] != ':')) colon = true;
  }
  if (!colon || h.empty()) return false;
  if (h.back() == '>') return true;
  std::size_t k = h.size();
  while (k > 0 && IsIdentChar(h[k - 1])) --k;
  const std::string last = h.substr(k);
  static const char* kQualifiers[] = {"const", "noexcept", "override", "final", "mutable", "try"};
  return !last.empty() &&
         std::none_of(std::begin(kQualifiers), std::end(kQualifiers), [&](const char* q) { return last == q; });
}

enum class BlockKind { kScope, kFunction, kLambda, kData, kInit };

BlockKind Classify(const std::string& head, int paren_depth) {
  if (paren_depth > 0) return BlockKind::kInit;  // a braced argument: f(x, {1, 2})
  const std::string h = StripPrefixes(head);
  const std::string z = DepthZero(h);
  const bool parens = z.find('(') != std::string::npos;
  for (const char* k : {"namespace", "class", "struct", "union", "enum"}) {
    if (HasWord(z, k)) return BlockKind::kScope;
  }
  if (HasWord(z, "extern") && !parens) return BlockKind::kScope;  // extern "C" {, not extern "C" int F() {
  if (!parens) return BlockKind::kData;
  if (!HasWord(z, "operator")) {
    if (const std::size_t eq = AssignmentAt(z); eq != std::string::npos) {
      return Trim(std::string_view(h).substr(eq + 1)).rfind('[', 0) == 0 ? BlockKind::kLambda : BlockKind::kData;
    }
  }
  return IsMemberBraceInit(h, z) ? BlockKind::kInit : BlockKind::kFunction;
}

std::string Collapse(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  return Trim(out);
}

// "Foo::Bar", "operator==", "TEST(Suite, Name)".
std::string FunctionName(const std::string& head) {
  const std::string h = StripPrefixes(head);
  const std::string z = DepthZero(h);
  std::size_t open = z.find('(');
  const std::size_t op = z.find("operator");
  const bool is_operator = op != std::string::npos && op < open && HasWord(z, "operator");
  if (is_operator) {  // operator()(...): the name's own parentheses come first
    std::size_t k = op + 8;
    while (k < h.size() && h[k] == ' ') ++k;
    if (h.compare(k, 2, "()") == 0) open = z.find('(', k + 2);
  }
  if (open == std::string::npos) return "?";
  std::size_t end = open;
  while (end > 0 && h[end - 1] == ' ') --end;
  std::size_t k = is_operator ? op : end;
  while (k > 0 && (IsIdentChar(h[k - 1]) || h[k - 1] == ':' || h[k - 1] == '~')) --k;
  std::string name = h.substr(k, end - k);
  const bool macro =
      name.size() >= 4 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
      });
  if (macro) {
    const std::size_t close = z.find(')', open);
    name +=
        Collapse(std::string_view(h).substr(open, close == std::string::npos ? std::string::npos : close - open + 1));
  }
  return name.empty() ? "?" : Collapse(name);
}

// [n]: how many of lines 1..n hold code (anything but white space).
std::vector<int> CodeLinesBefore(const std::string& code) {
  std::vector<int> before{0};
  bool has_code = false;
  for (char c : code) {
    if (c == '\n') {
      before.push_back(before.back() + (has_code ? 1 : 0));
      has_code = false;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      has_code = true;
    }
  }
  before.push_back(before.back() + (has_code ? 1 : 0));
  return before;
}

void AppendCollapsed(std::string& head, char c) {
  if (!std::isspace(static_cast<unsigned char>(c))) {
    head += c;
  } else if (!head.empty() && head.back() != ' ') {
    head += ' ';
  }
}

}  // namespace

std::vector<FunctionSpan> MeasureFunctions(std::string_view text) {
  const std::string code = ScanSource(text).code;
  const std::vector<int> code_lines_before = CodeLinesBefore(code);
  std::vector<FunctionSpan> spans;
  std::string head;  // the text since the last ';', '{' or '}' at scope level
  int head_parens = 0;
  BlockKind body_kind = BlockKind::kScope;
  int body_depth = 0;  // > 0: inside a function, data or initialiser block
  FunctionSpan current;
  int line = 1;
  for (char c : code) {
    if (c == '\n') ++line;
    if (body_depth > 0) {
      body_depth += c == '{' ? 1 : c == '}' ? -1 : 0;
      if (body_depth > 0) continue;
      if (body_kind == BlockKind::kFunction || body_kind == BlockKind::kLambda) {
        current.last_line = line;
        current.code_lines = code_lines_before[line] - code_lines_before[current.first_line - 1];
        spans.push_back(current);
      }
      const bool init = body_kind == BlockKind::kInit;
      body_kind = BlockKind::kScope;
      if (init) {
        head += "{}";  // the head goes on: `Foo() : a_{1} {`
        continue;
      }
    }
    if (c == ';' || c == '}') {
      head.clear();
      head_parens = 0;
    } else if (c == '{') {
      body_kind = Classify(head, head_parens);
      if (body_kind == BlockKind::kScope) {
        head.clear();
        continue;
      }
      body_depth = 1;
      current = FunctionSpan{body_kind == BlockKind::kLambda ? "lambda" : FunctionName(head), line, 0, 0};
    } else {
      head_parens += c == '(' ? 1 : c == ')' ? -1 : 0;
      AppendCollapsed(head, c);
    }
  }
  return spans;
}

}  // namespace rdmapct::meta
