// `rdmapct load`: throughput of a target in Full Operation (e.g. `rdmapct
// serve`) under RDMA Writes or Sends from N concurrent connections, with
// the load generator of targets/load_generator.h.
//
// Output: one line on stdout, "rdmapct load: write 4096 octets, crc on, ...
// = N msgs/s, M MB/s (...)" (MB = 10^6 octets of payload); a run that went
// wrong prints what it counted on clean connections, then the error on
// stderr.
//
// Exit status: 0 a clean run; 2 bad flags, an unreachable target, or any
// error during the run (a Terminate, an unexpected frame or Event Record,
// an early close, a timeout); 130 interrupted (SIGINT / SIGTERM: no new
// message is sent, the connections close, and the line says
// "INTERRUPTED, partial:" before the figures of what was carried).
#pragma once

#include <cstdio>
#include <string>

#include "targets/load_generator.h"

namespace rdmapct::cli {

struct LoadCommand {
  std::string target;  // --target URI (tcp://HOST:PORT, reference, plugin:...)
  targets::LoadOptions options;
};

int RunLoadCommand(const LoadCommand& cmd, std::FILE* out, std::FILE* err);

}  // namespace rdmapct::cli
