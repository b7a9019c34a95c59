// Fault-detection meta-test: proves that the conformance suite catches bugs.
//
// The reference target can be made deliberately wrong (reference/model/
// faults.h). For every fault and every profile (rfc5040, rfc7306, commit)
// the whole case suite runs in-process against the reference target with
// that one fault switched on, and:
//   (a) the clean reference passes every case in every profile (no fail, no
//       warning, no error), so every failure or warning below is the fault's
//       doing;
//   (b) with the fault, at least one case fails in some profile (or warns,
//       for a fault of a SHOULD rule): the suite detects the fault;
//   (c) at least one failing case cites one of the fault's requirement ids
//       (semantic detection, not collateral damage), unless the fault is in
//       kCollateralOnly below with a written reason;
//   (d) the exact set of failing and warning (profile, case) pairs is the one
//       recorded in conformance/fault_matrix.tsv: the expected cases fail or
//       warn, the rest pass.
//   (e) with the fault, no case ends in error: the suite judged the target.
//
// A fault no case detects yet is recorded in the matrix as
// "<fault> - not-detected"; its test is then SKIPPED with the fault's
// requirement ids, so case writers see what is missing (and an unrecorded
// non-detection fails). The matrix must stay exact, like coverage_todo.tsv.
//
// Regenerate the matrix after adding or changing cases, then review the diff:
//   RDMAPCT_UPDATE_FAULT_MATRIX=1 build/tests/conformance_test --gtest_filter='*SuiteFault*:FaultMatrix*'
// RDMAPCT_EXPLAIN=1 prints why each case failed under each fault.
//
// Cost: every case of a profile runs once per fault plus once clean, i.e.
// (faults + 1) x (case runs of the three profiles); each (fault, profile) is
// one RunCases with 2 jobs, shared by the tests of one process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/catalog.h"
#include "conformance/report_common.h"
#include "conformance/runner.h"
#include "reference/model/faults.h"
#include "targets/in_process.h"
#include "targets/reference_target.h"

namespace rdmapct::conformance {
namespace {

constexpr wire::Profile kProfiles[] = {wire::Profile::kRfc5040, wire::Profile::kRfc7306, wire::Profile::kCommit};
constexpr std::string_view kNotDetected = "not-detected";

// Faults whose failing cases may all cite other requirement ids than the
// fault's own, each with the reason why that is still a real detection.
// The list stays exact: a listed fault that is detected semantically fails
// (remove it).
struct CollateralOnly {
  const char* fault;
  const char* reason;
};
// Empty: every fault is caught by a case citing one of its ids. An entry
// looks like {"wrong-read-response-to", "caught only by the memory read-back
// of every Write case, whose steps cite placement ids; ..."}.
const std::vector<CollateralOnly> kCollateralOnly = {};

// Faults no wire case can require a reaction to, because a conforming
// target may show the same octets; each names where it is caught instead.
// Their test is skipped with this reason while the matrix records them as
// not detected.
const std::vector<CollateralOnly> kNotWireObservable = {
    {"ignore-ird",
     "IRD + 1 requests are outstanding together only if the target has not answered the first when "
     "the last arrives; a conforming target may answer each at once (conformance/reasons/rfc5040.tsv "
     "R5040-6.1-10), so no case can require the overrun's Terminate. Caught by targets_test "
     "ReferenceTargetFaults.IgnoreIrdAndReversedResponsesShowWhenRequestsArriveTogether"},
};

// Faults that show only in a timing window: their runs use the case driver
// options a user gives against such a target, so the matrix records what a
// run that steps around the window still catches. late-fpdu-hand-off (siw's
// accept race) run without the pause would fail nearly every case, each on
// a 2 s timeout; with it, only the case that never pauses may fail. The
// window is shortened (and the pause kept longer) to keep the runs quick.
struct TimedFault {
  const char* fault;
  std::chrono::milliseconds window, pause_after_reply;
};
const std::vector<TimedFault> kTimedFaults = {
    {"late-fpdu-hand-off", std::chrono::milliseconds(40), std::chrono::milliseconds(50)},
};

const TimedFault* TimedFaultFor(const model::FaultSet& faults) {
  for (const TimedFault& t : kTimedFaults) {
    if (faults.Has(*model::FindFault(t.fault))) return &t;
  }
  return nullptr;
}

const char* NotWireObservableReason(std::string_view fault) {
  for (const CollateralOnly& c : kNotWireObservable)
    if (fault == c.fault) return c.reason;
  return nullptr;
}

std::filesystem::path MatrixFile() { return RepositoryDir() / "conformance" / "fault_matrix.tsv"; }

// One line of the matrix: a failing (profile, case) pair of a fault, or a
// warning one (`warn`, a SHOULD-level case: the clean reference warns
// nowhere, so a warning is the fault's doing too), or the not-detected
// marker (profile "-", case_id kNotDetected).
struct MatrixRow {
  std::string fault, profile, case_id;
  bool warn = false;
  auto operator<=>(const MatrixRow&) const = default;
  std::string Line() const { return fault + "\t" + profile + "\t" + case_id + (warn ? "\twarn" : ""); }
};

// A fault is detected by a case that fails, or that warns at SHOULD level
// (a fault of a SHOULD rule can do no more).
bool Detects(Verdict v) { return v == Verdict::kFail || v == Verdict::kWarn; }

const CaseLoad& TheCases() {
  static const CaseLoad load = LoadCases();
  return load;
}

// Cases of one profile, in selection order: cases of other profiles would
// only be skipped, so they are not run at all.
std::vector<const LoadedCase*> CasesOf(wire::Profile p) {
  CaseFilter filter;
  filter.profile = p;
  return SelectCases(TheCases().cases, filter);
}

RunResult RunWithFaults(const model::FaultSet& faults, wire::Profile p, bool record_frames = false) {
  targets::ReferenceTargetConfig config;
  config.profile = p;
  config.faults = faults;
  const TimedFault* timed = TimedFaultFor(faults);
  if (timed) config.late_hand_off = timed->window;
  auto target = std::make_shared<targets::ReferenceTarget>(config);
  EXPECT_EQ(target->config_error(), "");
  targets::InProcessConnector connector(target);
  RunOptions options;
  options.profile = p;
  options.jobs = 2;
  if (timed) options.driver.pause_after_reply = timed->pause_after_reply;
  // Verdicts never look at the recorded frames (they are for reports), so the
  // fault runs skip recording them and their decoded field trees: about a
  // quarter of the cost in a Debug build. The clean runs record as a user's
  // run does.
  if (!faults.empty() && !record_frames) options.driver.limits.max_recorded_octets = 0;
  RunResult run = RunCases(CasesOf(p), options, connector);
  // A case that takes seconds in-process multiplies by (faults + 1): name it.
  for (const CaseResult& c : run.cases) {
    if (c.duration > std::chrono::seconds(2)) {
      std::printf("note: %s took %lld ms in profile %s (%s)\n", c.id.c_str(),
                  static_cast<long long>(c.duration.count() / 1000), run.profile.c_str(), run.target.c_str());
    }
  }
  return run;
}

// The three profile runs of one fault (or of the clean target).
struct FaultRuns {
  std::vector<RunResult> runs;  // parallel to kProfiles
};

// Runs are cached per process: the per-fault tests, the regeneration and
// the summary share them.
const FaultRuns& RunsFor(std::optional<model::Fault> fault) {
  static std::map<int, FaultRuns> cache;
  const int key = fault ? static_cast<int>(*fault) : -1;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  FaultRuns out;
  model::FaultSet set;
  if (fault) set.Add(*fault);
  for (wire::Profile p : kProfiles) out.runs.push_back(RunWithFaults(set, p));
  return cache.emplace(key, std::move(out)).first->second;
}

// The matrix rows a fault's runs produce: its failing pairs, sorted, or the
// not-detected marker.
std::vector<MatrixRow> ObservedRows(const model::FaultInfo& info) {
  std::vector<MatrixRow> rows;
  for (const RunResult& run : RunsFor(info.fault).runs) {
    for (const CaseResult& c : run.cases) {
      if (Detects(c.verdict)) rows.push_back({info.name, run.profile, c.id, c.verdict == Verdict::kWarn});
    }
  }
  if (rows.empty()) rows.push_back({info.name, "-", std::string(kNotDetected)});
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::string MatrixText() {
  std::string out =
      "# Fault-detection matrix (tests/conformance/fault_detection_test.cc).\n"
      "# For each reference fault (reference/model/faults.h), every (profile, case)\n"
      "# that FAILS when the whole suite runs against the reference target with that\n"
      "# fault on, or that WARNS (SHOULD level; fourth column \"warn\"); every other\n"
      "# case of that profile passes or is skipped.\n"
      "# \"<fault>\t-\tnot-detected\": no case detects the fault yet (its test is skipped).\n"
      "# Generated, do not edit by hand. After adding or changing cases, regenerate\n"
      "# and review the diff (docs/testing.md):\n"
      "#   RDMAPCT_UPDATE_FAULT_MATRIX=1 build/tests/conformance_test --gtest_filter='*SuiteFault*:FaultMatrix*'\n"
      "# fault\tprofile\tcase id\t[warn]\n";
  std::vector<MatrixRow> all;
  for (const model::FaultInfo& info : model::AllFaults()) {
    for (MatrixRow& r : ObservedRows(info)) all.push_back(std::move(r));
  }
  std::sort(all.begin(), all.end());
  for (const MatrixRow& r : all) out += r.Line() + "\n";
  return out;
}

struct Matrix {
  std::vector<MatrixRow> rows;      // in file order
  std::vector<std::string> errors;  // "fault_matrix.tsv:<line>: <problem>"
};

Matrix ParseMatrix(std::istream& in) {
  Matrix m;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::stringstream s(line);
    for (std::string col; std::getline(s, col, '\t');) cols.push_back(col);
    const std::string where = "fault_matrix.tsv:" + std::to_string(n) + ": ";
    if (cols.size() != 3 && !(cols.size() == 4 && cols[3] == "warn")) {
      m.errors.push_back(where + "expected 3 tab-separated columns (and \"warn\"), got " + std::to_string(cols.size()));
      continue;
    }
    MatrixRow row{cols[0], cols[1], cols[2], cols.size() == 4};
    if (!model::FindFault(row.fault)) m.errors.push_back(where + "unknown fault \"" + row.fault + "\"");
    const bool marker = row.profile == "-" && row.case_id == kNotDetected;
    if (!marker && !wire::ParseProfile(row.profile)) {
      m.errors.push_back(where + "unknown profile \"" + row.profile + "\"");
    }
    m.rows.push_back(std::move(row));
  }
  return m;
}

// The committed matrix; with RDMAPCT_UPDATE_FAULT_MATRIX set it is first
// rewritten from the current cases (every fault is run once for that).
const Matrix& TheMatrix() {
  static const Matrix matrix = [] {
    if (std::getenv("RDMAPCT_UPDATE_FAULT_MATRIX")) {
      std::string error;
      if (!WriteTextFile(MatrixFile(), MatrixText(), error)) ADD_FAILURE() << error;
    }
    std::ifstream in(MatrixFile());
    if (!in) return Matrix{{}, {MatrixFile().string() + ": cannot read"}};
    return ParseMatrix(in);
  }();
  return matrix;
}

std::vector<MatrixRow> ExpectedRows(std::string_view fault) {
  std::vector<MatrixRow> rows;
  for (const MatrixRow& r : TheMatrix().rows) {
    if (r.fault == fault) rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// "missing" and "unexpected" lines, in the file's format, for review.
std::string Diff(const std::vector<MatrixRow>& expected, const std::vector<MatrixRow>& observed) {
  std::string missing, unexpected;
  std::vector<MatrixRow> d;
  std::set_difference(expected.begin(), expected.end(), observed.begin(), observed.end(), std::back_inserter(d));
  for (const MatrixRow& r : d) missing += "\n  - " + r.Line();
  d.clear();
  std::set_difference(observed.begin(), observed.end(), expected.begin(), expected.end(), std::back_inserter(d));
  for (const MatrixRow& r : d) unexpected += "\n  + " + r.Line();
  return "fault_matrix.tsv differs from the suite's results.\n"
         "missing (listed, but now passes / not detected):" +
         (missing.empty() ? std::string(" none") : missing) +
         "\nunexpected (fails, not listed):" + (unexpected.empty() ? std::string(" none") : unexpected) +
         "\nIf the change is intended: RDMAPCT_UPDATE_FAULT_MATRIX=1 conformance_test "
         "--gtest_filter='*SuiteFault*:FaultMatrix*', then review the diff.";
}

std::set<std::string> Ids(std::string_view space_separated) {
  std::set<std::string> out;
  std::stringstream s{std::string(space_separated)};
  for (std::string id; s >> id;) out.insert(id);
  return out;
}

// Whether a failing case checks one of `ids`: its own requirements or those
// of a step that did not pass (the step that caught the fault).
bool CitesAny(const CaseResult& c, const std::set<std::string>& ids) {
  for (const std::string& r : c.requirements) {
    if (ids.count(r)) return true;
  }
  for (const StepResult& st : c.steps) {
    if (st.verdict == Verdict::kPass) continue;
    for (const std::string& r : st.requirements) {
      if (ids.count(r)) return true;
    }
  }
  return false;
}

const char* CollateralReason(std::string_view fault) {
  for (const CollateralOnly& c : kCollateralOnly) {
    if (fault == c.fault) return c.reason;
  }
  return nullptr;
}

std::string Why(const CaseResult& c) { return c.id + " (" + std::string(VerdictName(c.verdict)) + "): " + c.reason; }

TEST(FaultMatrixTest, CasesLoadAndEveryProfileHasCases) {
  for (const std::string& e : TheCases().errors) ADD_FAILURE() << e;
  for (wire::Profile p : kProfiles) EXPECT_FALSE(CasesOf(p).empty()) << wire::ProfileName(p);
}

TEST(FaultMatrixTest, MatrixFileIsWellFormedAndSorted) {
  const Matrix& m = TheMatrix();
  for (const std::string& e : m.errors) ADD_FAILURE() << e;
  EXPECT_TRUE(std::is_sorted(m.rows.begin(), m.rows.end())) << "fault_matrix.tsv is not sorted: regenerate it";
  EXPECT_EQ(std::set<MatrixRow>(m.rows.begin(), m.rows.end()).size(), m.rows.size()) << "duplicate rows";
  for (const MatrixRow& r : m.rows) {
    if (r.case_id != kNotDetected) continue;
    EXPECT_EQ(ExpectedRows(r.fault).size(), 1u) << r.fault << " is both not-detected and detected";
  }
}

TEST(FaultMatrixTest, CollateralAllowListNamesFaultsWithReasons) {
  for (const CollateralOnly& c : kCollateralOnly) {
    EXPECT_TRUE(model::FindFault(c.fault)) << c.fault;
    EXPECT_GT(std::string_view(c.reason).size(), 20u) << c.fault << ": write the reason";
  }
}

// What the matrix says, one line per fault (no run needed): the list of
// faults case writers still have to catch.
TEST(FaultMatrixTest, Summary) {
  std::string text = "fault-detection matrix (conformance/fault_matrix.tsv):\n";
  std::size_t detected = 0;
  for (const model::FaultInfo& info : model::AllFaults()) {
    const std::vector<MatrixRow> rows = ExpectedRows(info.name);
    const bool missing = rows.size() == 1 && rows[0].case_id == kNotDetected;
    if (!missing && !rows.empty()) ++detected;
    text += "  " + std::string(info.name) + std::string(36 - std::min<std::size_t>(35, std::strlen(info.name)), ' ') +
            (missing ? "NOT DETECTED  (" + std::string(info.requirement_ids) + ")"
                     : std::to_string(rows.size()) + " failing or warning (profile, case) pair(s)") +
            "\n";
  }
  text += "  " + std::to_string(detected) + " of " + std::to_string(model::AllFaults().size()) + " faults detected\n";
  std::printf("%s", text.c_str());
  RecordProperty("faults_detected", static_cast<int>(detected));
}

TEST(SuiteFaultCleanTest, ReferencePassesEveryCaseInEveryProfile) {
  for (const RunResult& run : RunsFor(std::nullopt).runs) {
    EXPECT_FALSE(run.aborted) << run.profile << ": " << run.abort_reason;
    for (const CaseResult& c : run.cases) {
      EXPECT_TRUE(c.verdict == Verdict::kPass || c.verdict == Verdict::kSkip) << run.profile << ": " << Why(c);
    }
  }
}

// The test parameter: one fault (printed by name in test logs).
struct FaultParam {
  const model::FaultInfo* info;
  friend void PrintTo(const FaultParam& p, std::ostream* os) { *os << p.info->name; }
};

std::vector<FaultParam> AllFaultParams() {
  std::vector<FaultParam> out;
  for (const model::FaultInfo& info : model::AllFaults()) out.push_back({&info});
  return out;
}

// The premise of not recording frames in the fault runs: a faulty run with
// full recording gives every case the same verdict and reason.
TEST(FaultMatrixTest, RecordingFramesDoesNotChangeVerdicts) {
  const model::Fault fault = model::Fault::kTerminateWithoutTerminatedHeader;
  const RunResult& quiet = RunsFor(fault).runs[0];
  const RunResult recorded = RunWithFaults(model::FaultSet{fault}, kProfiles[0], true);
  ASSERT_EQ(quiet.cases.size(), recorded.cases.size());
  std::size_t failing = 0;
  for (std::size_t i = 0; i < quiet.cases.size(); ++i) {
    EXPECT_EQ(Why(quiet.cases[i]), Why(recorded.cases[i]));
    EXPECT_TRUE(quiet.cases[i].frames.size() <= recorded.cases[i].frames.size());
    failing += quiet.cases[i].verdict == Verdict::kFail;
  }
  EXPECT_GT(failing, 0u);  // the comparison covers failing cases too
}

class SuiteFaultDetectionTest : public ::testing::TestWithParam<FaultParam> {};

TEST_P(SuiteFaultDetectionTest, SuiteDetectsTheFault) {
  const model::FaultInfo& info = *GetParam().info;
  const FaultRuns& fr = RunsFor(info.fault);
  const std::set<std::string> ids = Ids(info.requirement_ids);
  std::size_t failing = 0;
  bool semantic = false;
  for (const RunResult& run : fr.runs) {
    ASSERT_FALSE(run.aborted) << run.profile << ": " << run.abort_reason;
    for (const CaseResult& c : run.cases) {
      // (e) a fault must be judged, not make the suite give up.
      EXPECT_NE(c.verdict, Verdict::kError) << info.name << ", " << run.profile << ": " << Why(c);
      if (!Detects(c.verdict)) continue;
      ++failing;
      semantic = semantic || CitesAny(c, ids);
      // RDMAPCT_EXPLAIN=1: why each case failed, for case writers.
      if (std::getenv("RDMAPCT_EXPLAIN")) std::printf("%s %s: %s\n", info.name, run.profile.c_str(), Why(c).c_str());
    }
  }
  // (d) exactly the recorded pairs fail.
  const std::vector<MatrixRow> observed = ObservedRows(info);
  const std::vector<MatrixRow> expected = ExpectedRows(info.name);
  EXPECT_TRUE(expected == observed) << Diff(expected, observed);
  // (b) the suite detects the fault; a recorded gap is reported as a skip.
  if (failing == 0) {
    const std::string gap = std::string("NOT DETECTED: no case fails with fault ") + info.name + " (" +
                            info.description + "); write a case citing one of: " + info.requirement_ids;
    if (const char* why = NotWireObservableReason(info.name); why && expected == observed) {
      GTEST_SKIP() << info.name << " is not observable on the wire: " << why;
    }
    if (expected == observed) GTEST_SKIP() << gap;
    FAIL() << gap;
  }
  EXPECT_EQ(NotWireObservableReason(info.name), nullptr)
      << info.name << " is now detected by the suite: remove it from kNotWireObservable";
  // (c) detected for the right reason.
  const char* collateral = CollateralReason(info.name);
  if (collateral) {
    EXPECT_FALSE(semantic) << info.name << " is now caught by a case citing its ids: remove it from kCollateralOnly";
  } else {
    std::string cases;
    for (const MatrixRow& r : observed) cases += "\n  " + r.profile + " " + r.case_id;
    EXPECT_TRUE(semantic) << info.name << ": " << failing << " case(s) fail, but none cites one of "
                          << info.requirement_ids << " (collateral damage only):" << cases
                          << "\nCite the fault's ids in the case that should catch it, or add the fault to "
                             "kCollateralOnly with a reason.";
  }
}

std::string FaultName(const ::testing::TestParamInfo<FaultParam>& info) {
  std::string name = info.param.info->name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllFaults, SuiteFaultDetectionTest, ::testing::ValuesIn(AllFaultParams()), FaultName);

// The matrix lists only faults that exist, and every fault exactly once in
// some form (pairs or the not-detected marker).
TEST(FaultMatrixTest, EveryFaultIsInTheMatrix) {
  std::set<std::string> listed;
  for (const MatrixRow& r : TheMatrix().rows) listed.insert(r.fault);
  for (const model::FaultInfo& info : model::AllFaults()) {
    EXPECT_TRUE(listed.count(info.name)) << info.name << " is missing from fault_matrix.tsv: regenerate it";
  }
}

}  // namespace
}  // namespace rdmapct::conformance
