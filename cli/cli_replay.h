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
  std::optional<std::size_t> connection;   // --connection N
  bool json = false;
  bool verbose = false;   // -v: every payload octet, not only the first 32
  bool offsets = false;   // --offsets: stream offset and length of every field
};

// Frames go to `out`; "warning: ..." and "error: ..." lines to `err`.
// Returns kExitOk; kExitFail when a decoding error was found or the file
// is cut short (everything before is printed first); kExitUsage when the
// file cannot be read at all or --connection names no connection.
int RunReplayDecode(const ReplayCommand& cmd, std::FILE* out, std::FILE* err);

}  // namespace rdmapct::cli
