// The reference target as a real iWARP MPA Responder over TCP: what
// `rdmapct serve` runs. One shared ReferenceTarget (Connection Serial, Keep
// Memory and the previous-connection outcome carry over, convention §2.1),
// one ReferenceTargetConnection per accepted TCP connection.
//
// Design: a single-threaded event loop over non-blocking sockets and
// poll(). The reference connections are sans-I/O and cheap, so one thread keeps up with
// loopback traffic, needs no locking around the shared target, and makes
// every limit (connections, buffered octets, timers) a plain counter. A
// self-pipe wakes the loop for Stop(), which is async-signal-safe, so a
// SIGINT/SIGTERM handler can call it.
//
// Per connection, every resource is bounded:
//  * input: at most `read_chunk` octets per read, held until the reference connection has
//    taken them; the reference connection itself holds at most one partial Request or
//    FPDU (ReferenceTargetConnection::buffered);
//  * output: input goes to the reference connection in slices of `feed_slice` octets,
//    and the loop stops feeding and reading while more than
//    `max_output_backlog` octets wait to be sent to the peer (TCP flow
//    control then throttles the peer). The backlog can exceed the limit by
//    what one slice produces: a slice of Read Requests is answered at once,
//    so at most feed_slice / 28 Read Responses of the largest region;
//  * time: a connection with no progress in either direction for
//    `idle_timeout` is reset (the convention lets a target close idle
//    connections, §2.3); after the target's FIN the peer has
//    `close_timeout` to close, and may send at most `max_octets_after_close`
//    more octets, else it is reset;
//  * connections: beyond `max_connections` open ones, new connections are
//    accepted and reset at once (a prompt, visible refusal).
//
// Teardown follows the reference connection: after a Terminate (sent or received) the
// connection wants to close, and the loop sends the pending octets, then FIN
// (RFC 5040 §6.2.1, convention §2.3). A peer FIN closes the reference connection; a peer
// RST discards it. Every connection ends with one log line (the reference connection's
// log_line() and how the connection ended); every Terminate gets one more.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "targets/reference_target.h"

namespace rdmapct::targets {

struct TcpServerOptions {
  std::string listen = "127.0.0.1:4791";  // HOST:PORT or [IPv6]:PORT; port 0 picks a free one
  std::size_t max_connections = 64;
  std::size_t read_chunk = 64 * 1024;
  std::size_t feed_slice = 2048;
  std::size_t max_output_backlog = 1u << 20;
  std::chrono::milliseconds idle_timeout{60000};
  std::chrono::milliseconds close_timeout{10000};
  std::uint64_t max_octets_after_close = 16u << 20;
};

// Counters since Create(); read them after Run() returned, or from the
// loop's thread.
struct TcpServerStats {
  std::uint64_t accepted = 0;        // connections handed to a reference connection
  std::uint64_t refused = 0;         // reset at once: max_connections reached
  std::uint64_t closed = 0;          // released after FIN both ways
  std::uint64_t reset_by_peer = 0;   // the peer reset (RST) or the socket failed
  std::uint64_t reset_by_limit = 0;  // reset by us: idle, close or after-close limits
  std::uint64_t closed_at_shutdown = 0;
  std::uint64_t terminates = 0;  // Terminates sent or received by the reference connections
  std::uint64_t octets_in = 0;
  std::uint64_t octets_out = 0;
  std::size_t peak_connections = 0;
  std::size_t peak_output_backlog = 0;  // largest per-connection backlog seen
};

class TcpServer {
 public:
  // One line per event (connection released, Terminate, refusal); called on
  // the loop's thread. May be empty.
  using LogFn = std::function<void(const std::string& line)>;

  // Binds and listens (SO_REUSEADDR; the first address of HOST that binds).
  // nullptr with a one-line `error` for a bad address, an address in use, a
  // misconfigured target.
  static std::unique_ptr<TcpServer> Create(std::shared_ptr<ReferenceTarget> target, TcpServerOptions options, LogFn log,
                                           std::string& error);
  ~TcpServer();
  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;

  // The bound address, numeric: "127.0.0.1:41234", "[::1]:4791".
  const std::string& address() const { return address_; }
  uint16_t port() const { return port_; }

  // Serves until Stop(). Then closes the listener, sends what is pending to
  // every connection (without waiting), closes them and returns.
  void Run();
  // Makes Run() return soon. Thread-safe and async-signal-safe (one write()
  // to the self-pipe); a Stop() before Run() makes Run() return at once.
  void Stop();

  const TcpServerStats& stats() const { return stats_; }
  std::size_t open_connections() const { return connections_.size(); }
  const ReferenceTarget& target() const { return *target_; }

 private:
  struct Connection;
  TcpServer(std::shared_ptr<ReferenceTarget> target, TcpServerOptions options, LogFn log);

  void AcceptAll();
  void OnReadable(Connection& c);
  void Feed(Connection& c);
  bool WantsInput(const Connection& c) const;
  void Flush(Connection& c);
  void Advance(Connection& c);
  void CheckTimers(Connection& c, std::chrono::steady_clock::time_point now);
  void NoteTerminate(Connection& c, int before);
  void Release(Connection& c, const std::string& how);
  void ResetConnection(Connection& c, const std::string& why);
  int PollTimeoutMs(std::chrono::steady_clock::time_point now) const;
  void ShutDownAll();
  void Log(const std::string& line) const;

  std::shared_ptr<ReferenceTarget> target_;
  TcpServerOptions options_;
  LogFn log_;
  int listen_fd_ = -1;
  int wake_read_ = -1;
  int wake_write_ = -1;
  std::string address_;
  uint16_t port_ = 0;
  std::vector<std::unique_ptr<Connection>> connections_;
  TcpServerStats stats_;
};

}  // namespace rdmapct::targets
