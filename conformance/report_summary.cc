#include "conformance/report_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

namespace rdmapct::conformance {
namespace {

constexpr std::string_view kLacks = "the target lacks: ";

// The capabilities a skip reason names. Case driver skips read "the target
// lacks: a, b" (one capability each); other capability skips (a refused
// MPA Request option, no SE reporting, no plain readable region) are named
// by their whole reason.
std::vector<std::string> Capabilities(const std::string& reason) {
  if (!reason.starts_with(kLacks)) return {reason};
  std::vector<std::string> out;
  std::string_view rest = std::string_view(reason).substr(kLacks.size());
  while (!rest.empty()) {
    const std::size_t comma = rest.find(", ");
    out.emplace_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 2);
  }
  return out;
}

void Tally(Completeness& c, const std::string& capability) {
  auto it = std::find_if(c.lacking.begin(), c.lacking.end(), [&](const auto& e) { return e.first == capability; });
  if (it == c.lacking.end())
    c.lacking.emplace_back(capability, 1);
  else
    ++it->second;
}

std::string LackingText(const Completeness& c) {
  std::string out;
  for (const auto& [what, n] : c.lacking) out += fmt::format("{}{} ({} case(s))", out.empty() ? "" : "; ", what, n);
  return out;
}

}  // namespace

std::string InterruptedMarker(const RunResult& run) {
  if (!run.interrupted) return {};
  return fmt::format("INTERRUPTED, partial: {} of {} case(s) ran, {} not run", run.cases.size(),
                     run.cases.size() + run.not_run.size(), run.not_run.size());
}

Completeness AssessCompleteness(const RunResult& run) {
  Completeness c;
  std::size_t errors = 0;
  for (const CaseResult& r : run.cases) {
    if (r.verdict == Verdict::kError) ++errors;
    if (r.verdict != Verdict::kSkip) continue;
    if (r.reason.starts_with("not in profile")) {
      ++c.profile_skips;
      continue;
    }
    ++c.capability_skips;
    for (const std::string& what : Capabilities(r.reason)) Tally(c, what);
  }
  std::vector<std::string> gaps;
  if (run.interrupted) gaps.push_back(fmt::format("the run was interrupted ({} case(s) not run)", run.not_run.size()));
  if (run.aborted) gaps.push_back("the run was aborted (" + run.abort_reason + ")");
  if (errors > 0) gaps.push_back(fmt::format("{} case(s) ended in an error and were not judged", errors));
  if (c.capability_skips > 0) {
    gaps.push_back(
        fmt::format("{} case(s) skipped for capabilities the target lacks: {}", c.capability_skips, LackingText(c)));
  }
  c.complete = gaps.empty();
  if (c.complete) {
    c.statement = fmt::format("complete: every selected case of profile {} was judged", run.profile);
    if (c.profile_skips > 0) c.statement += fmt::format(" ({} case(s) outside the profile)", c.profile_skips);
    return c;
  }
  c.statement = "partial: ";
  for (std::size_t i = 0; i < gaps.size(); ++i) c.statement += (i ? "; " : "") + gaps[i];
  return c;
}

std::vector<std::string> CaseIds(const RunResult& run, Verdict v) {
  std::vector<std::string> ids;
  for (const CaseResult& c : run.cases) {
    if (c.verdict == v) ids.push_back(c.id);
  }
  return ids;
}

std::string PcapFile(const ReportContext& ctx, const std::string& id) {
  const auto it = ctx.pcap_files.find(id);
  return it == ctx.pcap_files.end() ? std::string() : it->second;
}

std::string RelativeHref(const std::filesystem::path& file, const std::filesystem::path& base) {
  std::filesystem::path rel = file;
  if (!base.empty()) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(file, ec);
    if (!ec) rel = abs.lexically_normal().lexically_relative(std::filesystem::absolute(base, ec).lexically_normal());
    if (ec || rel.empty()) rel = file;
  }
  std::string out;
  for (unsigned char c : rel.generic_string()) {
    if (std::isalnum(c) || std::string_view("._~/-").find(static_cast<char>(c)) != std::string_view::npos)
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

}  // namespace rdmapct::conformance
