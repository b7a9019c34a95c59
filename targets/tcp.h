// The TCP client transport: the suite (MPA Initiator) connects to a target
// that listens on TCP, e.g. `rdmapct serve` or a test ULP on a real RNIC.
//
// Every wait is bounded: connect by the Connect() timeout, Write by
// TcpOptions::write_timeout, Read by its own timeout. The socket is
// non-blocking throughout and waits use poll(). TCP_NODELAY is set so each
// Write leaves as soon as possible (one write boundary per call).
//
// Statuses: recv() == 0 (the peer's FIN) -> kClosed, sticky; ECONNRESET ->
// kReset, sticky; EPIPE on send -> kClosed. Abort() closes with SO_LINGER 0,
// which makes the kernel send a RST.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "targets/transport.h"

namespace rdmapct::targets {

// The MSS the suite announces in its SYN (Ethernet: 1500 - 40).
inline constexpr int kAnnouncedMss = 1460;

struct TcpOptions {
  std::chrono::milliseconds write_timeout{10000};
};

class TcpTransport : public Transport {
 public:
  // Takes ownership of the connected, non-blocking socket `fd`.
  TcpTransport(int fd, std::string peer, TcpOptions options);
  ~TcpTransport() override;
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  // kOk once every octet is handed to the kernel; kTimeout if the peer's
  // window stayed closed for write_timeout (last_error says how many octets
  // went out); kClosed / kReset / kError. A kTimeout with no octet sent may
  // be retried; after one that sent part of the octets the stream is
  // unusable, and every later Write is kError (a retry would repeat them).
  IoStatus Write(wire::ByteSpan bytes) override;
  IoStatus Read(wire::Bytes& out, std::size_t max_bytes, std::chrono::milliseconds timeout) override;
  void ShutdownWrite() override;
  void Abort() override;
  std::string last_error() const override { return last_error_; }
  std::string peer() const override { return peer_; }
  // TCP_MAXSEG of the connected socket (the current MSS, options excluded).
  std::optional<std::size_t> EffectiveMss() const override;

 private:
  friend class TcpConnector;
  IoStatus Fail(const char* call, int err);

  int fd_;
  std::string peer_;
  TcpOptions options_;
  std::string last_error_;
  bool fin_received_ = false;
  bool reset_ = false;
  std::string partial_write_;  // set when a Write timed out part-way
};

class TcpConnector : public TargetConnector {
 public:
  // `host_port`: "HOST:PORT", "[IPv6]:PORT". Checks the syntax only; names
  // are resolved (getaddrinfo, IPv4 and IPv6) at every Connect().
  static std::unique_ptr<TcpConnector> Create(std::string_view host_port, TcpOptions options, std::string& error);

  // Tries every address getaddrinfo gives, each with a non-blocking connect
  // bounded by what is left of `timeout`.
  std::unique_ptr<Transport> Connect(std::chrono::milliseconds timeout, std::string& error) override;
  std::string Describe() const override;  // "tcp://HOST:PORT"

 private:
  TcpConnector(std::string host, std::string port, TcpOptions options);
  std::string host_;
  std::string port_;
  TcpOptions options_;
};

// "host:port" or "[v6addr]:port" -> host, port; false with a reason.
// Port 0 ("pick a free port") only for a listener (allow_port_zero).
bool SplitHostPort(std::string_view host_port, std::string& host, std::string& port, std::string& error,
                   bool allow_port_zero = false);

// "127.0.0.1:4791" / "[::1]:4791" for a socket address ("?" if it has none).
std::string NumericAddress(const sockaddr* sa, socklen_t len);

// A non-blocking listening socket on the first address of host:port that
// binds (SO_REUSEADDR); -1 with `error`. Shared by serve (TcpServer) and
// conform --listen (TcpListenConnector).
int ListenSocket(const std::string& host, const std::string& port, int backlog, std::string& error);

}  // namespace rdmapct::targets
