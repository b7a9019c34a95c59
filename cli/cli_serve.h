// `rdmapct serve`: the reference target as an iWARP MPA Responder on a TCP
// port (targets/tcp_server.h), so `rdmapct conform --target tcp://...` and
// any other initiator (a real RNIC's test ULP, a load generator) can talk
// to it over the wire.
//
// Output: one line on stdout once listening ("rdmapct serve: listening on
// 127.0.0.1:41234 (...)", flushed, so a script or test can read the port
// when it asked for port 0); on stderr one line per connection and per
// Terminate (not with --quiet) and one line at shutdown.
//
// Exit status: 0 after SIGINT/SIGTERM (listener and connections closed);
// 2 for a usage error (bad flag value, unknown fault, bad address) or an
// address that cannot be bound (in use, not local), as one line on stderr.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "reference/wire/profile.h"
#include "targets/reference_target.h"
#include "targets/tcp_server.h"

namespace rdmapct::cli {

enum class CrcPolicy : uint8_t {
  kOn,        // Reply C = 1: CRCs always (RFC 5044 §4.4 default)
  kOptional,  // Reply C = 0: CRCs only when the Request sets C (siw's default)
  kOff,       // no CRC support: a Request with C = 1 is rejected (R = 1)
};

struct ServeCommand {
  std::string listen;  // --listen HOST:PORT (port 0: any free port)
  // --connect HOST:PORT: the target is the MPA Initiator instead and
  // connects to a listening suite, again after every connection
  // (docs/target-convention.md §10).
  std::string connect;
  uint64_t connections = 0;  // --connections N: stop after N (0: no limit)
  wire::Profile profile = wire::Profile::kRfc5040;
  std::vector<std::string> faults;  // --fault NAME (repeatable, or comma-separated)
  int mpa_rev = 2;                  // --mpa-rev: highest MPA Rev accepted (1: no RFC 6581)
  CrcPolicy crc = CrcPolicy::kOn;
  bool markers = false;  // --markers: Reply M = 1 (Markers wanted from the peer)
  int max_connections = 64;
  int idle_timeout_s = 60;
  bool quiet = false;  // no per-connection / per-Terminate lines
};

// The reference target configuration the flags describe; false with a
// one-line `error` (unknown fault).
bool MakeServeConfig(const ServeCommand& cmd, targets::ReferenceTargetConfig& config, std::string& error);

// Listens, prints the bound address on `out`, serves until SIGINT/SIGTERM,
// logs on `err`. Returns the exit status.
int RunServe(const ServeCommand& cmd, std::FILE* out, std::FILE* err);

}  // namespace rdmapct::cli
