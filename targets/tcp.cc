#include "targets/tcp.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rdmapct::targets {

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline`, for poll() (never negative).
int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

// poll() for `events` until the deadline; 1 ready, 0 timeout, -1 error (errno).
int WaitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, RemainingMs(deadline));
    if (r >= 0) return r;
    if (errno != EINTR) return -1;
  }
}

std::string ErrnoText(int err) { return std::strerror(err); }

// One non-blocking connect attempt; the connected fd, or -1 with `error`.
// `reset` is set when the handshake completed but the peer reset the
// connection before we looked (a refusal is ECONNREFUSED instead).
int ConnectOne(const addrinfo* ai, Clock::time_point deadline, bool& reset, std::string& error) {
  const int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) {
    error = "socket: " + ErrnoText(errno);
    return -1;
  }
  // Announce an Ethernet MSS, so a target on loopback or a jumbo-frame link
  // segments as on a 1500-octet MTU and the MULPDU cases stay within their
  // regions; the cases compute the MULPDU from the MSS actually in use
  // (TcpTransport::EffectiveMss, decisions D-G14). Best effort.
  const int announced_mss = kAnnouncedMss;
  setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &announced_mss, sizeof announced_mss);
  int err = 0;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      const int r = WaitFor(fd, POLLOUT, deadline);
      socklen_t len = sizeof err;
      if (r == 0) {
        err = ETIMEDOUT;
      } else if (r < 0) {
        err = errno;
      } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = errno;
      }
    }
  }
  reset = err == ECONNRESET;
  if (err != 0 && !reset) {
    error = ErrnoText(err);
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

bool SplitHostPort(std::string_view s, std::string& host, std::string& port, std::string& error, bool allow_port_zero) {
  std::size_t colon;
  if (!s.empty() && s.front() == '[') {
    const std::size_t close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') {
      error = "bad TCP address \"" + std::string(s) + "\" (use [IPv6]:PORT)";
      return false;
    }
    host = std::string(s.substr(1, close - 1));
    colon = close + 1;
  } else {
    colon = s.rfind(':');
    if (colon == std::string_view::npos || s.find(':') != colon) {
      error = "bad TCP address \"" + std::string(s) + "\" (use HOST:PORT or [IPv6]:PORT)";
      return false;
    }
    host = std::string(s.substr(0, colon));
  }
  port = std::string(s.substr(colon + 1));
  const bool digits = !port.empty() && port.size() <= 5 &&
                      std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int lowest = allow_port_zero ? 0 : 1;
  if (host.empty() || !digits || std::stoi(port) < lowest || std::stoi(port) > 65535) {
    error = "bad TCP address \"" + std::string(s) + "\" (host and a port " + std::to_string(lowest) + "-65535 needed)";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------

TcpTransport::TcpTransport(int fd, std::string peer, TcpOptions options)
    : fd_(fd), peer_(std::move(peer)), options_(options) {}

TcpTransport::~TcpTransport() {
  if (fd_ >= 0) close(fd_);
}

IoStatus TcpTransport::Fail(const char* call, int err) {
  if (err == ECONNRESET) {
    reset_ = true;
    last_error_ = std::string(call) + ": connection reset by the target";
    return IoStatus::kReset;
  }
  if (err == EPIPE) {
    last_error_ = std::string(call) + ": the connection is closed";
    return IoStatus::kClosed;
  }
  last_error_ = std::string(call) + ": " + ErrnoText(err);
  return IoStatus::kError;
}

IoStatus TcpTransport::Write(wire::ByteSpan bytes) {
  if (fd_ < 0) {
    last_error_ = "write after Abort()";
    return IoStatus::kError;
  }
  if (reset_) return IoStatus::kReset;
  if (!partial_write_.empty()) {
    last_error_ = "send: the stream is unusable after a partial write (" + partial_write_ + ")";
    return IoStatus::kError;
  }
  const Clock::time_point deadline = Clock::now() + options_.write_timeout;
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Fail("send", errno);
    const int r = WaitFor(fd_, POLLOUT, deadline);
    if (r < 0) return Fail("poll", errno);
    if (r == 0) {
      last_error_ = "send: the target took only " + std::to_string(sent) + " of " + std::to_string(bytes.size()) +
                    " octets within " + std::to_string(options_.write_timeout.count()) + " ms";
      if (sent > 0) partial_write_ = std::to_string(sent) + " of " + std::to_string(bytes.size()) + " octets";
      return IoStatus::kTimeout;
    }
  }
  return IoStatus::kOk;
}

IoStatus TcpTransport::Read(wire::Bytes& out, std::size_t max_bytes, std::chrono::milliseconds timeout) {
  if (fd_ < 0) {
    last_error_ = "read after Abort()";
    return IoStatus::kError;
  }
  if (reset_) return IoStatus::kReset;
  if (fin_received_) return IoStatus::kClosed;
  const Clock::time_point deadline = Clock::now() + timeout;
  const std::size_t cap = std::min<std::size_t>(max_bytes, 1u << 20);
  while (cap > 0) {
    const std::size_t at = out.size();
    out.resize(at + cap);
    const ssize_t n = recv(fd_, out.data() + at, cap, 0);
    const int err = errno;
    out.resize(at + (n > 0 ? static_cast<std::size_t>(n) : 0));
    if (n > 0) return IoStatus::kOk;
    if (n == 0) {
      fin_received_ = true;
      return IoStatus::kClosed;
    }
    if (err == EINTR) continue;
    if (err != EAGAIN && err != EWOULDBLOCK) return Fail("recv", err);
    const int r = WaitFor(fd_, POLLIN, deadline);
    if (r < 0) return Fail("poll", errno);
    if (r == 0) return IoStatus::kTimeout;
  }
  return IoStatus::kTimeout;
}

void TcpTransport::ShutdownWrite() {
  if (fd_ >= 0 && shutdown(fd_, SHUT_WR) != 0 && errno != ENOTCONN) Fail("shutdown", errno);
}

// SO_LINGER with a zero timeout turns close() into an abortive release: the
// kernel sends a RST and drops whatever is queued.
std::optional<std::size_t> TcpTransport::EffectiveMss() const {
  int mss = 0;
  socklen_t len = sizeof mss;
  if (fd_ < 0 || ::getsockopt(fd_, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) != 0 || mss <= 0) return std::nullopt;
  return static_cast<std::size_t>(mss);
}

void TcpTransport::Abort() {
  if (fd_ < 0) return;
  const linger l{1, 0};
  setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd_);
  fd_ = -1;
}

// ---------------------------------------------------------------------------

TcpConnector::TcpConnector(std::string host, std::string port, TcpOptions options)
    : host_(std::move(host)), port_(std::move(port)), options_(options) {}

std::unique_ptr<TcpConnector> TcpConnector::Create(std::string_view host_port, TcpOptions options, std::string& error) {
  std::string host, port;
  if (!SplitHostPort(host_port, host, port, error)) return nullptr;
  return std::unique_ptr<TcpConnector>(new TcpConnector(host, port, options));
}

std::unique_ptr<Transport> TcpConnector::Connect(std::chrono::milliseconds timeout, std::string& error) {
  const Clock::time_point deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (const int r = getaddrinfo(host_.c_str(), port_.c_str(), &hints, &list); r != 0) {
    error = Describe() + ": cannot resolve " + host_ + ": " + gai_strerror(r);
    return nullptr;
  }
  std::string why = "no address";
  int fd = -1;
  bool reset = false;
  for (const addrinfo* ai = list; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ConnectOne(ai, deadline, reset, why);
  }
  freeaddrinfo(list);
  if (fd < 0) {
    error = "cannot connect to " + Describe() + ": " + why;
    return nullptr;
  }
  auto t = std::make_unique<TcpTransport>(fd, Describe(), options_);
  // Accepted, then reset at once: the connection exists, and is reset.
  if (reset) t->reset_ = true;
  return t;
}

std::string TcpConnector::Describe() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return "tcp://" + (v6 ? "[" + host_ + "]" : host_) + ":" + port_;
}

std::string NumericAddress(const sockaddr* sa, socklen_t len) {
  char host[NI_MAXHOST];
  char port[NI_MAXSERV];
  if (getnameinfo(sa, len, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  return sa->sa_family == AF_INET6 ? "[" + std::string(host) + "]:" + port : std::string(host) + ":" + port;
}

int ListenSocket(const std::string& host, const std::string& port, int backlog, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* list = nullptr;
  if (const int r = getaddrinfo(host.c_str(), port.c_str(), &hints, &list); r != 0) {
    error = "cannot resolve " + host + ": " + gai_strerror(r);
    return -1;
  }
  int fd = -1;
  error = "no address";
  for (const addrinfo* ai = list; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      error = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, backlog) != 0) {
      error = std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(list);
  return fd;
}

}  // namespace rdmapct::targets
