// The reference target as MPA Initiator over TCP (`rdmapct serve --connect
// HOST:PORT`, docs/target-convention.md §10): it connects to the suite,
// runs one ReferenceTargetConnection per connection (Request first) and, when
// a connection has ended, connects again at once, so the suite gets one
// connection per case. One connection at a time; every wait is bounded.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "targets/reference_target.h"

namespace rdmapct::targets {

struct TcpInitiatorOptions {
  std::string connect;                       // HOST:PORT of the listening suite
  uint64_t max_connections = 0;              // stop after this many (0: no limit)
  std::chrono::milliseconds give_up{10000};  // stop when refused for this long
  std::chrono::milliseconds idle_timeout{60000};
};

struct TcpInitiatorStats {
  uint64_t connections = 0;
  uint64_t octets_in = 0;
  uint64_t octets_out = 0;
};

using InitiatorLogFn = std::function<void(const std::string& line)>;

// Runs until `stop` is set, max_connections were made or the suite refused
// connections for give_up. false with `error` for an unusable address.
bool RunTcpInitiator(ReferenceTarget& target, const TcpInitiatorOptions& options, const std::atomic<bool>& stop,
                     const InitiatorLogFn& log, TcpInitiatorStats& stats, std::string& error);

}  // namespace rdmapct::targets
