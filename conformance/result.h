// What a conformance run produces: one CaseResult per case (verdict, the
// step that decided it, expected vs actual, the accept-set member the target
// chose, every frame exchanged) and a RunResult around them. Reports
// (console, JSON, JUnit XML, HTML, pcap) are views of these structs; the
// runner (runner.h) fills them and never formats them.
//
// Verdicts (decisions D-S3 severity mapping):
//   pass  every expectation met (a MAY-level mismatch is only a note);
//   warn  a SHOULD-level expectation missed, or the target chose a registered
//         code outside the accept-set (decisions D-S1); not a failure;
//   fail  a MUST / MUST NOT expectation missed;
//   skip  not applicable: the target lacks a capability the case needs, or
//         the case is not in the selected profile;
//   error the target misbehaved outside what the case checks (connection
//         refused, test-ULP convention broken, no MPA Reply) or the case
//         could not be executed; no conformance statement is made.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/case.pb.h"
#include "reference/wire/bytes.h"

namespace rdmapct::conformance {

enum class Verdict : uint8_t { kPass, kWarn, kFail, kSkip, kError };

std::string_view VerdictName(Verdict v);  // "pass", "warn", "fail", "skip", "error"
std::optional<Verdict> ParseVerdict(std::string_view name);

// The verdict a missed expectation of `level` earns (decisions D-S3):
// MUST / MUST_NOT (and an unspecified level) -> kFail, SHOULD / SHOULD_NOT ->
// kWarn, MAY -> kPass (reported as a note only).
Verdict VerdictForMiss(proto::Level level);

// The worse of two verdicts, for combining the steps of one case:
// error > fail > warn > pass. kSkip only results from a skipped case and
// yields to anything else.
Verdict Worse(Verdict a, Verdict b);

// The milder of two misses, for an any_of none of whose alternatives matched
// (its verdict is its least severe miss): pass < warn < skip < fail < error.
// On a tie, `a`.
Verdict MilderMiss(Verdict a, Verdict b);

// "MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY", "" (unspecified).
std::string_view LevelText(proto::Level level);

enum class Direction : uint8_t {
  kToTarget,    // suite (MPA Initiator) -> target (MPA Responder)
  kFromTarget,  // target -> suite
};
std::string_view DirectionName(Direction d);  // "suite->target", "target->suite"

enum class FrameKind : uint8_t {
  kMpaRequest,  // the suite's MPA Request Frame
  kMpaReply,    // the target's MPA Reply Frame
  kFpdu,        // one MPA FPDU, Markers inside it included
  kRaw,         // octets that form no frame: raw TCP bytes a case sent, or
                // target octets left undecodable (garbage, a cut-off FPDU)
  kFin,         // that direction was closed gracefully (no octets)
  kRst,         // the connection was reset / aborted (no octets)
};
std::string_view FrameKindName(FrameKind k);

// One frame (or connection event) as exchanged. Per connection and
// direction, the `raw` octets of the records concatenated in order are that
// direction's TCP byte stream (up to the recording bound; `truncated` marks
// where it stopped), so a pcap writer can rebuild the streams.
struct FrameRecord {
  uint32_t connection = 0;  // 0-based connection of the case (a case may reconnect)
  Direction direction = Direction::kToTarget;
  FrameKind kind = FrameKind::kFpdu;
  uint64_t stream_offset = 0;       // offset of raw[0] in its direction's stream
  std::chrono::microseconds at{0};  // since the case started
  wire::Bytes raw;                  // octets exactly as on the wire
  bool truncated = false;           // raw was cut at the recording bound
  bool event_record = false;        // a target Send carrying a test-ULP Event Record
  std::string summary;              // one line, e.g. "Terminate 0/1/0x00 M D R"
  std::string detail;               // multi-line decoded field tree (may be empty)
};

// Which member of an accept-set the target's behaviour matched.
struct AcceptChoice {
  std::string what;        // "Terminate code", "DDP Segment Length", "close"
  std::string chosen;      // e.g. "1/1/0x00 DDP / Tagged Buffer Error / Invalid STag"
  bool preferred = false;  // the case's preferred member (else an accepted alternative
                           // or, for a warn, a registered code outside the set)
  bool in_set = true;      // false: outside the accept-set (graded by the case)
  std::string note;        // the member's note from the case file ("siw", "decisions D-A3")
  bool tolerated = false;  // in the set, but the RFC names the preferred member: a warning
};

// The outcome of one step of a case.
struct StepResult {
  int index = 0;       // 0-based index in Case.step (-1: an implicit connect)
  std::string action;  // "connect", "send", "expect terminate", "pause", ...
  std::string note;    // Step.note of the case file
  Verdict verdict = Verdict::kPass;
  proto::Level severity = proto::LEVEL_UNSPECIFIED;  // level it was graded at
  std::vector<std::string> requirements;             // ids this step checks (case's by default)
  std::string reason;                                // one line; empty for a plain pass
  std::string expected;                              // what the case expects (may be multi-line)
  std::string actual;                                // what the target did (may be multi-line)
  std::vector<std::string> notes;                    // informational lines (MAY-level, choices)
  std::vector<AcceptChoice> choices;
  std::vector<std::size_t> frames;  // indexes into CaseResult::frames it looked at
  std::chrono::microseconds duration{0};
};

struct CaseResult {
  std::string id;  // "rfc5040/7.2/read-req-invalid-src-stag"
  std::string title;
  std::string document;  // "rfc5040" (first id component)
  std::string section;   // "7.2" (second id component)
  std::vector<std::string> requirements;
  proto::Level level = proto::LEVEL_UNSPECIFIED;
  std::vector<std::string> tags;
  // A value of a swept case (Case.sweep): every value is its own result; these
  // name the swept case, its parameter and the value ("" when not swept).
  std::string sweep_case, sweep_parameter, sweep_value;

  Verdict verdict = Verdict::kPass;
  // One line: why the case did not pass (the deciding step's reason, the
  // missing capability of a skip, the setup error); empty for a plain pass.
  std::string reason;
  int deciding_step = -1;  // index into `steps` of the step that set the verdict
  std::vector<StepResult> steps;
  std::vector<AcceptChoice> choices;  // every accept-set choice of the case
  std::vector<std::string> messages;  // case-level notes (skips, setup, advertisement)
  std::vector<FrameRecord> frames;    // every frame of every connection, in order

  std::chrono::system_clock::time_point start{};
  std::chrono::microseconds duration{0};
};

struct Counts {
  std::size_t pass = 0, warn = 0, fail = 0, skip = 0, error = 0;
  std::size_t total() const { return pass + warn + fail + skip + error; }
  void Add(Verdict v);
  friend bool operator==(const Counts&, const Counts&) = default;
};
Counts CountVerdicts(const std::vector<CaseResult>& cases);

struct RunResult {
  std::string target;   // TargetConnector::Describe()
  std::string profile;  // wire::ProfileName: "rfc5040", "rfc7306", "commit"
  // What the target said about itself on its first accepted connection
  // (convention version, regions, IRD, MPA options), one line each.
  std::vector<std::string> target_info;
  std::chrono::system_clock::time_point start{};
  std::chrono::microseconds duration{0};
  // The selected cases in the deterministic selection order, whatever the
  // number of jobs. After an abort, cases not run are present with verdict
  // kError and reason "not run: <abort_reason>".
  std::vector<CaseResult> cases;
  Counts counts;
  // The run stopped early: an unknown test-ULP major version, or the target
  // refused several connections in a row (RunOptions::keep_going unset).
  bool aborted = false;
  std::string abort_reason;
  // The run was interrupted (RunOptions::stop: SIGINT / SIGTERM): `cases`
  // holds only the cases that finished, `not_run` the ids of the selected
  // cases that did not (abandoned in flight or never started), in
  // selection order. The reports say "INTERRUPTED, partial".
  bool interrupted = false;
  std::vector<std::string> not_run;
};

// Process exit status of a run (docs/reports.md "Exit status"):
//   kExitPass  (0) every case passed, warned or was skipped, and something
//                  was tested (NothingTested is empty);
//   kExitFail  (1) at least one case failed (a MUST-level expectation missed);
//   kExitError (2) no case failed, but the run was aborted or a case ended in
//                  an error (target unreachable, convention broken): the
//                  target could not be judged. Usage errors also use 2.
//   kExitNothingTested (3) no failure, no error, but NothingTested: an empty
//                  run is never a pass (e.g. a reproducer of another profile).
inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitError = 2;
inline constexpr int kExitNothingTested = 3;
//   kExitInterrupted (130) the run was interrupted (SIGINT or SIGTERM): the
//                  reports hold the verdicts so far, marked partial.
inline constexpr int kExitInterrupted = 130;
int ExitStatus(const RunResult& run);

// Why a run tested nothing, or "" when it tested something: every selected
// case was skipped ("nothing was tested: ..."), or the selection held MUST /
// MUST NOT cases and every one of them was skipped, so no MUST-level
// statement can be made ("nothing was tested at MUST level: ..."). A
// selection without MUST-level cases (--level SHOULD) is only judged by the
// first rule.
std::string NothingTested(const RunResult& run);

}  // namespace rdmapct::conformance
