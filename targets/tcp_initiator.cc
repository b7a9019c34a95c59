#include "targets/tcp_initiator.h"

#include <algorithm>
#include <thread>

#include "targets/tcp.h"

namespace rdmapct::targets {

namespace {

using Clock = std::chrono::steady_clock;

// One connection, start to end: the Request, then octets both ways until
// both sides have closed (or the peer reset, or it idled out).
void Serve(Transport& t, ReferenceTargetConnection& s, const TcpInitiatorOptions& options,
           const std::atomic<bool>& stop, TcpInitiatorStats& stats) {
  wire::Bytes out;
  s.Start(out);
  bool fin_sent = false;
  Clock::time_point last = Clock::now();
  Clock::time_point fin_at{};
  while (!stop.load()) {
    if (!out.empty()) {
      stats.octets_out += out.size();
      if (t.Write(out) != IoStatus::kOk) return;
      out.clear();
    }
    if (s.wants_close() && !fin_sent) {
      t.ShutdownWrite();
      fin_sent = true;
      fin_at = Clock::now();
    }
    // Its side is closed: after 1 s without the peer's FIN (a connection
    // still in the suite's backlog) it moves on to the next connection.
    if (fin_sent && Clock::now() - fin_at > std::chrono::seconds(1)) return;
    auto wait = std::chrono::milliseconds(100);
    if (const auto at = s.timer()) {
      wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(*at - Clock::now()), std::chrono::milliseconds(0),
                        wait);
    }
    wire::Bytes in;
    const IoStatus st = t.Read(in, 64 * 1024, wait);
    if (st == IoStatus::kOk) {
      stats.octets_in += in.size();
      s.OnBytes(in, out);
      last = Clock::now();
    } else if (st == IoStatus::kTimeout) {
      s.OnTimer(Clock::now(), out);
      if (Clock::now() - last > options.idle_timeout) return t.Abort();
    } else if (st == IoStatus::kClosed) {
      s.OnPeerClosed(out);
      if (!out.empty()) t.Write(out);
      if (!fin_sent) t.ShutdownWrite();
      return;
    } else {
      s.OnPeerReset();
      return;
    }
  }
  t.Abort();
}

}  // namespace

bool RunTcpInitiator(ReferenceTarget& target, const TcpInitiatorOptions& options, const std::atomic<bool>& stop,
                     const InitiatorLogFn& log, TcpInitiatorStats& stats, std::string& error) {
  std::unique_ptr<TcpConnector> connector = TcpConnector::Create(options.connect, TcpOptions{}, error);
  if (!connector) return false;
  Clock::time_point refused_since = Clock::now();
  while (!stop.load() && (options.max_connections == 0 || stats.connections < options.max_connections)) {
    std::string why;
    std::unique_ptr<Transport> t = connector->Connect(std::chrono::milliseconds(1000), why);
    if (!t) {
      if (Clock::now() - refused_since > options.give_up) {
        if (log) log("giving up: " + why);
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    ++stats.connections;
    std::unique_ptr<ReferenceTargetConnection> s = target.Connect();
    Serve(*t, *s, options, stop, stats);
    if (log) log(s->log_line());
    refused_since = Clock::now();
  }
  return true;
}

}  // namespace rdmapct::targets
