// `rdmapct replay FILE --decode`: decode the iWARP traffic of a pcap or
// pcapng capture with capture::DecodeCaptureFile and print every connection
// and every MPA frame (the trees `rdmapct decode` prints, each with its
// capture frame, connection and direction) as text or JSON.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "reference/wire/profile.h"

namespace rdmapct::cli {

struct ReplayCommand {
  std::string file;
  wire::Profile profile = wire::Profile::kCommit;
  std::optional<std::size_t> connection;  // --connection N
  bool json = false;
  bool verbose = false;  // -v: every payload octet, not only the first 32
  bool offsets = false;  // --offsets: stream offset and length of every field
};

// Frames go to `out`; "warning: ..." and "error: ..." lines to `err`.
// Returns kExitOk; kExitFail when a decoding error was found or the file
// is cut short (everything before is printed first); kExitUsage when the
// file cannot be read at all or --connection names no connection;
// kExitInterrupted after SIGINT / SIGTERM (what was decoded is printed).
int RunReplayDecode(const ReplayCommand& cmd, std::FILE* out, std::FILE* err);

// `rdmapct replay FILE --audit` (cli_audit.cc): replay::AuditCaptureFile,
// then one line per violation (connection, direction, capture frame, stream
// offset, level and requirement id, check, seen vs expected) and a summary
// per connection on `out` (or JSON); the capture's warnings and errors on
// `err`. Returns kExitOk when no violation was found, kExitFail when one
// was, kExitUsage when the file cannot be read (not at all, or not to its
// end: the violations found in what it holds are printed first) or
// --connection names no connection.
int RunReplayAudit(const ReplayCommand& cmd, std::FILE* out, std::FILE* err);

// `rdmapct replay FILE --as-case OUT` (cli_replay_case.cc): writes the
// connection (--connection, default the first iWARP one) as a conformance
// script (replay::CaptureAsCase). kExitUsage on any error.
int RunReplayAsCase(const ReplayCommand& cmd, const std::string& out_file, std::FILE* out, std::FILE* err);

// `rdmapct replay FILE --against URI [--side initiator]`: the same script,
// run at once by the conformance runner against the target (RunConform with
// -v), so every step where the target's answers differ from the capture's
// is reported; a last line, read from the CertifyResult, says whether the
// target answered as in the capture. Exit status as `conform`.
int RunReplayAgainst(const ReplayCommand& cmd, const std::string& target, std::FILE* out, std::FILE* err);

}  // namespace rdmapct::cli
