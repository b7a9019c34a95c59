// What every report view of a RunResult (console, JSON, JUnit XML, HTML)
// shares: the context a report needs beyond the result (catalog for the
// requirement text, tool version, how the user named the target so a
// failure can be reproduced), grouping by document / section / level with
// one verdict per group, the reproduce command, hex dumps, timestamps, and
// text sanitising (UTF-8, XML and HTML escaping). Reports only read results;
// the runner never formats them (result.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/catalog.h"
#include "conformance/result.h"
#include "reference/wire/bytes.h"

namespace rdmapct::conformance {

struct ReportContext {
  const Catalog* catalog = nullptr;  // requirement text; null: ids only
  std::string tool_version;          // "0.1.0"
  // The --target argument as the user wrote it ("reference",
  // "tcp://10.0.0.2:4791"): RunResult::target is the connector's
  // description, which is not always a valid argument.
  std::string target_arg;
  // Further arguments a reproduce command must keep to see the same
  // behaviour, already split: {"--fault", "skip-bounds-check"}.
  std::vector<std::string> reproduce_args;
  bool verbose = false;  // console: steps and frames of every case
  // Case id -> the capture file written for it (report_pcap.h), so a
  // failure block can name it; empty when no capture was written.
  std::map<std::string, std::string> pcap_files;
  // The directory of the file being rendered, so that links to captures
  // are relative to it (an HTML report and its rdmapct-failures/ travel
  // together); empty: paths as written.
  std::filesystem::path link_base;
};

// "rdmapct conform --target reference --profile rfc5040 --case 'rfc5040/7.2/x' -v"
// (arguments quoted for a POSIX shell only when they need it).
std::string ReproduceCommand(const ReportContext& ctx, const RunResult& run, const CaseResult& c);
std::string ShellQuote(std::string_view arg);

// ---- grouping ---------------------------------------------------------------

// The verdict of a group of cases, for summary tables: fail if any case
// failed, else error if any errored (the group could not be judged), else
// warn, else pass; skip when every case was skipped (or there are none).
Verdict GroupVerdict(const Counts& counts);

// Section order: dot-separated components, numeric ones by value
// ("7.2" < "7.10" < "A.4"), then by text.
bool SectionLess(std::string_view a, std::string_view b);

struct SectionGroup {
  std::string section;
  std::vector<const CaseResult*> cases;  // run order
  Counts counts;
};

struct LevelGroup {
  proto::Level level = proto::LEVEL_UNSPECIFIED;
  Counts counts;
};

struct DocumentGroup {
  std::string document;
  std::vector<SectionGroup> sections;  // SectionLess order
  std::vector<LevelGroup> levels;      // MUST, MUST NOT, SHOULD, SHOULD NOT, MAY, unspecified; only levels with cases
  Counts counts;
};

// Documents in name order; every case in exactly one section group.
std::vector<DocumentGroup> GroupCases(const RunResult& run);

// The values of one swept case (Case.sweep), in run order: one sub-result
// per value, TLS-Anvil style.
struct SweepGroup {
  std::string case_id;  // the swept case's own id
  std::string parameter;
  std::vector<const CaseResult*> values;
  Counts counts;
};
std::vector<SweepGroup> GroupSweeps(const RunResult& run);
// "misalignment=3" for a value of a swept case, else "".
std::string SweepLabel(const CaseResult& c);
// "misalignment: 1 PASS, 2 FAIL, ..." one entry per value.
std::string SweepValuesText(const SweepGroup& g);

// Cases whose verdict is in `verdicts`, in run order.
std::vector<const CaseResult*> CasesWith(const RunResult& run, std::initializer_list<Verdict> verdicts);

// "PASS", "WARN", "FAIL", "SKIP", "ERROR".
std::string VerdictLabel(Verdict v);
// The level of a case, "MUST" ... or "unspecified".
std::string LevelLabel(proto::Level level);

// ---- text helpers -----------------------------------------------------------

// "2024-05-01T12:34:56Z" (UTC, seconds).
std::string IsoTime(std::chrono::system_clock::time_point t);
// "12 ms", "1.25 s", "350 us".
std::string DurationText(std::chrono::microseconds d);
// Seconds with millisecond precision, "0.012" (JUnit time attributes).
std::string SecondsText(std::chrono::microseconds d);

// Classic hex dump, 16 octets a line: "0000  4d 50 41 20 ...  MPA ID Req Frame".
// `base` is the offset printed for data[0]; at most `max` octets, then a
// "... N more octets" line.
std::string HexDump(wire::ByteSpan data, uint64_t base = 0, std::size_t max = SIZE_MAX);
// Lower-case hex digits without separators ("4d5041").
std::string HexDigits(wire::ByteSpan data);

// Every line of `text` prefixed with `indent` (empty lines stay empty).
std::string Indent(std::string_view text, std::string_view indent);

// Valid UTF-8: ill-formed sequences become U+FFFD. Target-controlled text
// (summaries, detail trees) goes through this before any report writes it.
std::string SanitizeUtf8(std::string_view text);
// XML 1.0 character data / attribute value: & < > " ' escaped, characters
// XML 1.0 forbids (C0 controls other than TAB, LF, CR) written as "\xNN"
// text, ill-formed UTF-8 replaced.
std::string XmlEscape(std::string_view text);
// HTML text / attribute value: & < > " ' escaped, ill-formed UTF-8 replaced,
// C0 controls other than TAB, LF, CR written as "\xNN".
std::string HtmlEscape(std::string_view text);

// ---- pcap hook --------------------------------------------------------------

// Writes the frames of every case of `run` as captures into `dir` (one file
// per case; FrameRecord raw octets rebuild each direction's stream). A
// capture/ writer installs itself with SetPcapWriter; until one does,
// WriteCasePcaps reports that the feature is not available.
using PcapWriter = std::function<bool(const std::filesystem::path& dir, const RunResult& run, std::string& error)>;
void SetPcapWriter(PcapWriter writer);
bool PcapWriterAvailable();
// false with a one-line `error` when no writer is installed or it failed.
bool WriteCasePcaps(const std::filesystem::path& dir, const RunResult& run, std::string& error);

// Writes `content` to `path` (created or truncated); false with a one-line
// reason on failure.
bool WriteTextFile(const std::filesystem::path& path, std::string_view content, std::string& error);

}  // namespace rdmapct::conformance
