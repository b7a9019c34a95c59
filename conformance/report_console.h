// Console view of a run: cases grouped by document and section, one line
// per case ("FAIL   <id>  <title>"), for every case that did not pass the
// reason, expected vs actual and a reproduce command; with verbose every
// step and every frame exchanged (decoded field tree and hex dump); then a
// summary per document and level and the totals. Colour (ANSI) only when
// asked, i.e. when the output is a terminal.
//
// LiveProgress prints one line as each case finishes (the runner's per-case
// callback); on a terminal the line is rewritten in place, so only the
// grouped report stays on screen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "conformance/report_common.h"
#include "conformance/result.h"

namespace rdmapct::conformance {

struct ConsoleStyle {
  bool color = false;  // ANSI colours for verdicts
};

// The whole report (grouped cases, details, summary), ending in a newline.
std::string RenderConsoleReport(const RunResult& run, const ReportContext& ctx, ConsoleStyle style = {});

// "PASS   <id>  <title>" (verdict padded to 5 columns, coloured if asked).
std::string RenderCaseLine(const CaseResult& c, ConsoleStyle style = {});

// The indented detail block of a case: level and requirements, reason, the
// deciding step's expected vs actual, accept-set choices, messages, the
// reproduce command; with ctx.verbose every step and every frame. Empty for
// a plain pass without verbose.
std::string RenderCaseDetail(const RunResult& run, const CaseResult& c, const ReportContext& ctx);

// One frame: header line, decoded field tree (FrameRecord::detail) and hex
// dump (at most `max_dump` octets of it).
std::string RenderFrame(const FrameRecord& f, std::size_t index, std::size_t max_dump = SIZE_MAX);

// The summary: per document (and per level inside it) and the totals.
std::string RenderConsoleSummary(const RunResult& run, ConsoleStyle style = {});

// "[ 3/12] FAIL   <id>  (12 ms)".
std::string RenderProgressLine(const CaseResult& c, std::size_t done, std::size_t total, ConsoleStyle style = {});

// Thread-safe: the runner may report cases from several jobs.
class LiveProgress {
 public:
  // `in_place`: rewrite one line (a terminal); else one line per case.
  LiveProgress(std::FILE* out, std::size_t total, bool in_place, ConsoleStyle style = {});
  void OnCase(const CaseResult& c);
  // Clears the in-place line so what follows starts on a clean line.
  void Finish();

 private:
  std::mutex mu_;
  std::FILE* out_;
  std::size_t total_;
  std::size_t done_ = 0;
  bool in_place_;
  ConsoleStyle style_;
};

}  // namespace rdmapct::conformance
