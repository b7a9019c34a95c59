#include "targets/tcp_listen.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rdmapct::targets {

namespace {

// A Request older than this has waited in the backlog while the suite ran
// other cases; the target's own Reply timer (5 s for the reference over
// TCP) may run out during the case's first wait, which then sees a close
// the case did not cause.
constexpr unsigned kStaleRequestMs = 1000;

// A connection the target opened while the suite was busy and then gave up
// on (no Reply in time, convention §10.3) waits in the backlog with its FIN:
// POLLRDHUP shows that FIN even behind the unread Request. One whose Request
// came more than kStaleRequestMs ago is about to be given up on. The target
// connects again when a connection ends, so the suite takes the next one.
bool Stale(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return true;
  int pending = 0;
  tcp_info info{};
  socklen_t len = sizeof info;
  return ioctl(fd, FIONREAD, &pending) == 0 && pending > 0 && getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
         info.tcpi_last_data_recv > kStaleRequestMs;
}

}  // namespace

std::unique_ptr<TcpListenConnector> TcpListenConnector::Create(std::string_view host_port, TcpOptions options,
                                                               std::string& error) {
  std::string host, port;
  if (!SplitHostPort(host_port, host, port, error, true)) return nullptr;
  const int fd = ListenSocket(host, port, 16, error);
  if (fd < 0) {
    error = "cannot listen on " + std::string(host_port) + ": " + error;
    return nullptr;
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  return std::unique_ptr<TcpListenConnector>(
      new TcpListenConnector(fd, NumericAddress(reinterpret_cast<sockaddr*>(&ss), len), options));
}

TcpListenConnector::TcpListenConnector(int fd, std::string address, TcpOptions options)
    : fd_(fd), address_(std::move(address)), options_(options) {}

TcpListenConnector::~TcpListenConnector() { close(fd_); }

std::unique_ptr<Transport> TcpListenConnector::Connect(std::chrono::milliseconds, std::string& error) {
  error = "listen://" + address_ + " only accepts connections from the target";
  return nullptr;
}

std::unique_ptr<Transport> TcpListenConnector::Accept(std::chrono::milliseconds timeout, std::string& error) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    const int fd = accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0 && Stale(fd)) {
      close(fd);
      continue;
    }
    if (fd >= 0) {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return std::make_unique<TcpTransport>(fd, NumericAddress(reinterpret_cast<sockaddr*>(&ss), len), options_);
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
      error = std::string("accept: ") + std::strerror(errno);
      return nullptr;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      error = "no connection to listen://" + address_ + " within " + std::to_string(timeout.count()) + " ms";
      return nullptr;
    }
    pollfd p{fd_, POLLIN, 0};
    poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
  }
}

std::string TcpListenConnector::Describe() const { return "listen://" + address_; }

ListeningConnector::ListeningConnector(TargetConnector& connector, std::unique_ptr<TcpListenConnector> listener)
    : connector_(connector), listener_(std::move(listener)) {}

ListeningConnector::ListeningConnector(std::unique_ptr<TargetConnector> connector,
                                       std::unique_ptr<TcpListenConnector> listener)
    : owned_(std::move(connector)), connector_(*owned_), listener_(std::move(listener)) {}

std::string ListeningConnector::Describe() const {
  return connector_.Describe() + ", target connects to " + listener_->Describe();
}

}  // namespace rdmapct::targets
