#include "conformance/report_common.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>

#include "reference/wire/hex.h"

namespace rdmapct::conformance {
namespace {

// Levels in the order summary tables show them.
constexpr std::array<proto::Level, 6> kLevelOrder = {proto::MUST,       proto::MUST_NOT, proto::SHOULD,
                                                     proto::SHOULD_NOT, proto::MAY,      proto::LEVEL_UNSPECIFIED};

bool ShellSafe(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("-_./:=,@%+").find(c) != std::string_view::npos;
}

std::vector<std::string_view> SplitDots(std::string_view s) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t dot = s.find('.');
    parts.push_back(s.substr(0, dot));
    if (dot == std::string_view::npos) return parts;
    s.remove_prefix(dot + 1);
  }
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Length of the well-formed UTF-8 sequence at s[i], 0 if ill-formed
// (overlong forms, surrogates and values above U+10FFFF are ill-formed).
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else
    return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return n;
}

// Shared by the XML and HTML escapers: both forbid the same controls in
// practice (XML 1.0 outright, HTML as parse errors).
std::string MarkupEscape(std::string_view text) {
  const std::string clean = SanitizeUtf8(text);
  std::string out;
  out.reserve(clean.size() + clean.size() / 8);
  for (char ch : clean) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if ((c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::mutex& PcapMutex() {
  static std::mutex m;
  return m;
}
PcapWriter& PcapSlot() {
  static PcapWriter writer;
  return writer;
}

}  // namespace

std::string ShellQuote(std::string_view arg) {
  if (!arg.empty() && std::all_of(arg.begin(), arg.end(), ShellSafe)) return std::string(arg);
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string ReproduceCommand(const ReportContext& ctx, const RunResult& run, const CaseResult& c) {
  std::string cmd = "rdmapct conform --target " + ShellQuote(ctx.target_arg.empty() ? run.target : ctx.target_arg);
  if (!run.profile.empty()) cmd += " --profile " + ShellQuote(run.profile);
  for (const std::string& a : ctx.reproduce_args) cmd += " " + ShellQuote(a);
  cmd += " --case " + ShellQuote(c.id) + " -v";
  return cmd;
}

Verdict GroupVerdict(const Counts& c) {
  if (c.fail > 0) return Verdict::kFail;
  if (c.error > 0) return Verdict::kError;
  if (c.warn > 0) return Verdict::kWarn;
  if (c.pass > 0) return Verdict::kPass;
  return Verdict::kSkip;
}

bool SectionLess(std::string_view a, std::string_view b) {
  const std::vector<std::string_view> pa = SplitDots(a), pb = SplitDots(b);
  for (std::size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    if (pa[i] == pb[i]) continue;
    if (AllDigits(pa[i]) && AllDigits(pb[i])) {
      // Compare by value without overflow: fewer digits (after leading
      // zeros) is smaller.
      const auto strip = [](std::string_view s) {
        s.remove_prefix(std::min(s.find_first_not_of('0'), s.size()));
        return s;
      };
      const std::string_view x = strip(pa[i]), y = strip(pb[i]);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      continue;
    }
    if (AllDigits(pa[i]) != AllDigits(pb[i])) return AllDigits(pa[i]);  // numbers before letters
    return pa[i] < pb[i];
  }
  if (pa.size() != pb.size()) return pa.size() < pb.size();
  return a < b;
}

std::vector<SweepGroup> GroupSweeps(const RunResult& run) {
  std::vector<SweepGroup> out;
  for (const CaseResult& c : run.cases) {
    if (c.sweep_case.empty()) continue;
    auto g = std::find_if(out.begin(), out.end(), [&](const SweepGroup& s) { return s.case_id == c.sweep_case; });
    if (g == out.end()) {
      out.push_back(SweepGroup{c.sweep_case, c.sweep_parameter, {}, {}});
      g = out.end() - 1;
    }
    g->values.push_back(&c);
    g->counts.Add(c.verdict);
  }
  return out;
}

std::string SweepLabel(const CaseResult& c) {
  return c.sweep_case.empty() ? std::string() : c.sweep_parameter + "=" + c.sweep_value;
}

std::string SweepValuesText(const SweepGroup& g) {
  std::string out = g.parameter + ":";
  for (const CaseResult* c : g.values) out += " " + c->sweep_value + " " + VerdictLabel(c->verdict) + ",";
  if (!g.values.empty()) out.pop_back();
  return out;
}

std::vector<DocumentGroup> GroupCases(const RunResult& run) {
  std::map<std::string, DocumentGroup> docs;
  for (const CaseResult& c : run.cases) {
    DocumentGroup& d = docs[c.document];
    d.document = c.document;
    d.counts.Add(c.verdict);
    auto s = std::find_if(d.sections.begin(), d.sections.end(),
                          [&](const SectionGroup& g) { return g.section == c.section; });
    if (s == d.sections.end()) {
      d.sections.push_back(SectionGroup{c.section, {}, {}});
      s = d.sections.end() - 1;
    }
    s->cases.push_back(&c);
    s->counts.Add(c.verdict);
    auto l = std::find_if(d.levels.begin(), d.levels.end(), [&](const LevelGroup& g) { return g.level == c.level; });
    if (l == d.levels.end()) {
      d.levels.push_back(LevelGroup{c.level, {}});
      l = d.levels.end() - 1;
    }
    l->counts.Add(c.verdict);
  }
  std::vector<DocumentGroup> out;
  for (auto& [name, d] : docs) {
    std::stable_sort(d.sections.begin(), d.sections.end(),
                     [](const SectionGroup& a, const SectionGroup& b) { return SectionLess(a.section, b.section); });
    const auto rank = [](proto::Level l) {
      return std::find(kLevelOrder.begin(), kLevelOrder.end(), l) - kLevelOrder.begin();
    };
    std::sort(d.levels.begin(), d.levels.end(),
              [&](const LevelGroup& a, const LevelGroup& b) { return rank(a.level) < rank(b.level); });
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<const CaseResult*> CasesWith(const RunResult& run, std::initializer_list<Verdict> verdicts) {
  std::vector<const CaseResult*> out;
  for (const CaseResult& c : run.cases) {
    if (std::find(verdicts.begin(), verdicts.end(), c.verdict) != verdicts.end()) out.push_back(&c);
  }
  return out;
}

std::string VerdictLabel(Verdict v) {
  std::string s(VerdictName(v));
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

std::string LevelLabel(proto::Level level) {
  const std::string_view t = LevelText(level);
  return t.empty() ? "unspecified" : std::string(t);
}

std::string IsoTime(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string DurationText(std::chrono::microseconds d) {
  char buf[32];
  const long long us = d.count();
  if (us < 1000)
    std::snprintf(buf, sizeof buf, "%lld us", us);
  else if (us < 1000000)
    std::snprintf(buf, sizeof buf, "%lld ms", us / 1000);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(us) / 1e6);
  return buf;
}

std::string SecondsText(std::chrono::microseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(d.count()) / 1e6);
  return buf;
}

std::string HexDump(wire::ByteSpan data, uint64_t base, std::size_t max) {
  std::string out;
  const std::size_t shown = std::min(max, data.size());
  for (const std::string& line : wire::HexDumpLines(data.first(shown), base)) out += line + "\n";
  if (shown < data.size()) out += "... " + std::to_string(data.size() - shown) + " more octets\n";
  return out;
}

std::string HexDigits(wire::ByteSpan data) { return wire::HexOctets(data, 0); }

std::string Indent(std::string_view text, std::string_view indent) {
  std::string out;
  bool at_line_start = true;
  for (char c : text) {
    if (at_line_start && c != '\n') out += indent;
    out += c;
    at_line_start = c == '\n';
  }
  return out;
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string XmlEscape(std::string_view text) { return MarkupEscape(text); }
std::string HtmlEscape(std::string_view text) { return MarkupEscape(text); }

void SetPcapWriter(PcapWriter writer) {
  std::lock_guard<std::mutex> lock(PcapMutex());
  PcapSlot() = std::move(writer);
}

bool PcapWriterAvailable() {
  std::lock_guard<std::mutex> lock(PcapMutex());
  return static_cast<bool>(PcapSlot());
}

bool WriteCasePcaps(const std::filesystem::path& dir, const RunResult& run, std::string& error) {
  PcapWriter writer;
  {
    std::lock_guard<std::mutex> lock(PcapMutex());
    writer = PcapSlot();
  }
  if (!writer) {
    error = "--pcap-dir: pcap output is not yet available in this build (no capture writer)";
    return false;
  }
  return writer(dir, run, error);
}

bool WriteTextFile(const std::filesystem::path& path, std::string_view content, std::string& error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    error = path.string() + ": cannot open for writing";
    return false;
  }
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) {
    error = path.string() + ": write failed";
    return false;
  }
  return true;
}

}  // namespace rdmapct::conformance
