#include "conformance/result.h"

#include <array>

namespace rdmapct::conformance {
namespace {

constexpr std::array<std::string_view, 5> kVerdictNames = {"pass", "warn", "fail", "skip", "error"};

// The two orders verdicts are folded in, as data indexed by Verdict (pass,
// warn, fail, skip, error). Worse(): a skip yields to anything, skip < pass <
// warn < fail < error. MilderMiss(): of several misses the least severe, and a
// skip (the alternative did not apply) is milder than a fail but no better
// than a warn: pass < warn < skip < fail < error.
constexpr std::array<int, 5> kWorseRank = {1, 2, 3, 0, 4};
constexpr std::array<int, 5> kMissRank = {0, 1, 3, 2, 4};

int RankIn(const std::array<int, 5>& ranks, Verdict v) { return ranks.at(static_cast<std::size_t>(v)); }

}  // namespace

std::string_view VerdictName(Verdict v) { return kVerdictNames.at(static_cast<std::size_t>(v)); }

std::optional<Verdict> ParseVerdict(std::string_view name) {
  for (std::size_t i = 0; i < kVerdictNames.size(); ++i) {
    if (kVerdictNames[i] == name) return static_cast<Verdict>(i);
  }
  return std::nullopt;
}

Verdict VerdictForMiss(proto::Level level) {
  switch (level) {
    case proto::SHOULD:
    case proto::SHOULD_NOT:
      return Verdict::kWarn;
    case proto::MAY:
      return Verdict::kPass;
    default:
      return Verdict::kFail;
  }
}

Verdict Worse(Verdict a, Verdict b) { return RankIn(kWorseRank, a) >= RankIn(kWorseRank, b) ? a : b; }

Verdict MilderMiss(Verdict a, Verdict b) { return RankIn(kMissRank, b) < RankIn(kMissRank, a) ? b : a; }

std::string_view LevelText(proto::Level level) {
  switch (level) {
    case proto::MUST:
      return "MUST";
    case proto::MUST_NOT:
      return "MUST NOT";
    case proto::SHOULD:
      return "SHOULD";
    case proto::SHOULD_NOT:
      return "SHOULD NOT";
    case proto::MAY:
      return "MAY";
    default:
      return "";
  }
}

std::string_view DirectionName(Direction d) { return d == Direction::kToTarget ? "suite->target" : "target->suite"; }

std::string_view FrameKindName(FrameKind k) {
  switch (k) {
    case FrameKind::kMpaRequest:
      return "MPA Request";
    case FrameKind::kMpaReply:
      return "MPA Reply";
    case FrameKind::kFpdu:
      return "FPDU";
    case FrameKind::kRaw:
      return "raw";
    case FrameKind::kFin:
      return "FIN";
    case FrameKind::kRst:
      return "RST";
  }
  return "?";
}

void Counts::Add(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      ++pass;
      break;
    case Verdict::kWarn:
      ++warn;
      break;
    case Verdict::kFail:
      ++fail;
      break;
    case Verdict::kSkip:
      ++skip;
      break;
    case Verdict::kError:
      ++error;
      break;
  }
}

Counts CountVerdicts(const std::vector<CaseResult>& cases) {
  Counts c;
  for (const CaseResult& r : cases) c.Add(r.verdict);
  return c;
}

namespace {

bool MustLevel(proto::Level level) {
  return level == proto::MUST || level == proto::MUST_NOT || level == proto::LEVEL_UNSPECIFIED;
}

}  // namespace

std::string NothingTested(const RunResult& run) {
  const Counts c = CountVerdicts(run.cases);
  if (c.skip == c.total()) {
    return c.total() == 0 ? "nothing was tested: no case was selected"
                          : "nothing was tested: every selected case was skipped (" + std::to_string(c.skip) +
                                " not applicable to the profile " + run.profile + " or to the target)";
  }
  std::size_t must = 0, must_run = 0;
  for (const CaseResult& r : run.cases) {
    if (!MustLevel(r.level)) continue;
    ++must;
    if (r.verdict != Verdict::kSkip) ++must_run;
  }
  if (must > 0 && must_run == 0) {
    return "nothing was tested at MUST level: every one of the " + std::to_string(must) +
           " MUST / MUST NOT case(s) selected was skipped";
  }
  return {};
}

int ExitStatus(const RunResult& run) {
  if (run.interrupted) return kExitInterrupted;
  const Counts c = CountVerdicts(run.cases);
  if (c.fail > 0) return kExitFail;
  if (run.aborted || c.error > 0) return kExitError;
  if (!NothingTested(run).empty()) return kExitNothingTested;
  return kExitPass;
}

}  // namespace rdmapct::conformance
