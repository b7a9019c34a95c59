#include "targets/tcp_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "targets/tcp.h"

namespace rdmapct::targets {

namespace {

using Clock = std::chrono::steady_clock;

// Resets instead of closing gracefully: SO_LINGER 0 makes close() send a RST.
void CloseWithReset(int fd) {
  const linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

// The endpoint's stream state as an int, -1 before the Request was accepted.
int StreamStateOf(const ReferenceTargetConnection& s) {
  return s.endpoint() ? static_cast<int>(s.endpoint()->state()) : -1;
}

}  // namespace

struct TcpServer::Connection {
  int fd = -1;
  std::string peer;
  std::unique_ptr<ReferenceTargetConnection> reference;
  wire::Bytes in;  // peer -> target octets read; [in_head, end) not yet fed
  std::size_t in_head = 0;
  wire::Bytes out;  // target -> peer octets; [head, end) not yet sent
  std::size_t head = 0;
  bool fin_sent = false;  // our FIN (the reference connection wanted to close)
  bool peer_fin = false;  // the peer's FIN
  bool released = false;
  Clock::time_point last_progress;
  Clock::time_point fin_at;
  std::uint64_t octets_after_close = 0;

  std::size_t backlog() const { return out.size() - head; }
};

TcpServer::TcpServer(std::shared_ptr<ReferenceTarget> target, TcpServerOptions options, LogFn log)
    : target_(std::move(target)), options_(std::move(options)), log_(std::move(log)) {}

std::unique_ptr<TcpServer> TcpServer::Create(std::shared_ptr<ReferenceTarget> target, TcpServerOptions options,
                                             LogFn log, std::string& error) {
  if (!target->config_error().empty()) {
    error = "reference target misconfigured: " + target->config_error();
    return nullptr;
  }
  std::string host, port;
  if (!SplitHostPort(options.listen, host, port, error, /*allow_port_zero=*/true)) return nullptr;
  std::unique_ptr<TcpServer> s(new TcpServer(std::move(target), std::move(options), std::move(log)));
  s->listen_fd_ = ListenSocket(host, port, 128, error);
  if (s->listen_fd_ < 0) {
    error = "cannot listen on " + s->options_.listen + ": " + error;
    return nullptr;
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return nullptr;
  }
  s->wake_read_ = pipe_fds[0];
  s->wake_write_ = pipe_fds[1];
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  s->address_ = NumericAddress(reinterpret_cast<sockaddr*>(&a), len);
  s->port_ = ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&a)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  return s;
}

TcpServer::~TcpServer() {
  ShutDownAll();
  if (wake_read_ >= 0) close(wake_read_);
  if (wake_write_ >= 0) close(wake_write_);
}

void TcpServer::Stop() {
  const char b = 1;
  const ssize_t r = write(wake_write_, &b, 1);  // a full pipe already holds a wake-up
  (void)r;
}

void TcpServer::Log(const std::string& line) const {
  if (log_) log_(line);
}

void TcpServer::Run() {
  std::vector<pollfd> fds;
  bool stopping = false;
  while (!stopping && listen_fd_ >= 0) {
    fds.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& c : connections_) {
      short events = 0;
      if (WantsInput(*c)) events |= POLLIN;
      if (c->backlog() > 0) events |= POLLOUT;
      fds.push_back({c->fd, events, 0});
    }
    const int r = poll(fds.data(), fds.size(), PollTimeoutMs(Clock::now()));
    if (r < 0 && errno != EINTR) {
      Log(std::string("serve: poll: ") + std::strerror(errno));
      break;
    }
    if (r > 0 && (fds[0].revents & POLLIN)) stopping = true;
    // Existing connections first: a connection's reset or FIN is then
    // handled (and its outcome recorded) before a connection that arrived
    // in the same round is accepted (convention §3.4).
    const Clock::time_point now = Clock::now();
    for (std::size_t i = 0; i < connections_.size() && r >= 0; ++i) {
      Connection& c = *connections_[i];
      const short revents = fds[i + 2].revents;
      if ((revents & (POLLOUT | POLLERR | POLLHUP)) && c.backlog() > 0) Flush(c);
      if (!c.released && (revents & (POLLIN | POLLERR | POLLHUP))) OnReadable(c);
      if (!c.released) Advance(c);
      if (!c.released) CheckTimers(c, now);
    }
    std::erase_if(connections_, [](const std::unique_ptr<Connection>& c) { return c->released; });
    if (r > 0 && (fds[1].revents & POLLIN) && !stopping) AcceptAll();
  }
  ShutDownAll();
}

int TcpServer::PollTimeoutMs(Clock::time_point now) const {
  Clock::duration wait = std::chrono::seconds(1);
  for (const auto& c : connections_) {
    wait = std::min(wait, c->last_progress + options_.idle_timeout - now);
    if (c->fin_sent) wait = std::min(wait, c->fin_at + options_.close_timeout - now);
  }
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1000));
}

void TcpServer::AcceptAll() {
  // A bounded batch per round, so established connections are never starved.
  for (int n = 0; n < 64; ++n) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) Log(std::string("serve: accept: ") + std::strerror(errno));
      return;
    }
    const std::string peer = NumericAddress(reinterpret_cast<sockaddr*>(&a), len);
    if (connections_.size() >= options_.max_connections) {
      ++stats_.refused;
      Log("[" + peer + "] refused: " + std::to_string(connections_.size()) + " connections open (--max-connections " +
          std::to_string(options_.max_connections) + ")");
      CloseWithReset(fd);
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->peer = peer;
    c->reference = target_->Accept();
    // decisions D-G14: the MULPDU follows the MSS of this connection.
    int mss = 0;
    socklen_t mss_len = sizeof mss;
    if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &mss_len) == 0 && mss > 0) {
      c->reference->SetEffectiveMss(static_cast<std::size_t>(mss));
    }
    c->last_progress = Clock::now();
    connections_.push_back(std::move(c));
    ++stats_.accepted;
    stats_.peak_connections = std::max(stats_.peak_connections, connections_.size());
  }
}

// Stop reading while the peer has not taken what we owe it, or while what
// was read has not been fed: TCP flow control then holds the peer back, and
// both buffers stay bounded.
bool TcpServer::WantsInput(const Connection& c) const {
  return !c.peer_fin && c.in_head == c.in.size() && c.backlog() <= options_.max_output_backlog;
}

void TcpServer::OnReadable(Connection& c) {
  if (c.in_head < c.in.size()) return;  // an error or FIN waits until the input is fed
  c.in.resize(std::max<std::size_t>(options_.read_chunk, 1));
  c.in_head = 0;
  const ssize_t n = recv(c.fd, c.in.data(), c.in.size(), 0);
  c.in.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    const std::string why = errno == ECONNRESET ? "reset by the peer" : std::string("recv: ") + std::strerror(errno);
    ++stats_.reset_by_peer;
    c.reference->OnPeerReset();
    Release(c, why);
    return;
  }
  if (n == 0) {
    if (c.peer_fin) return;  // POLLHUP repeats the FIN
    c.peer_fin = true;
    c.last_progress = Clock::now();
    c.reference->OnPeerClosed(c.out);
    return;
  }
  c.last_progress = Clock::now();
  stats_.octets_in += static_cast<std::uint64_t>(n);
  if (c.fin_sent) {
    // The reference connection still consumes them (a faulty target may act on them),
    // but a peer that keeps sending after our FIN is cut off.
    c.octets_after_close += static_cast<std::uint64_t>(n);
    if (c.octets_after_close > options_.max_octets_after_close) {
      ResetConnection(c, "the peer sent more than " + std::to_string(options_.max_octets_after_close) +
                             " octets after the target's FIN");
      return;
    }
  }
  Feed(c);
}

// Hands the read octets to the reference connection a slice at a time, pausing while
// the output backlog is over its limit (see the header).
void TcpServer::Feed(Connection& c) {
  const std::size_t slice = std::max<std::size_t>(options_.feed_slice, 1);
  while (c.in_head < c.in.size() && c.backlog() <= options_.max_output_backlog) {
    const std::size_t n = std::min(slice, c.in.size() - c.in_head);
    const int before = StreamStateOf(*c.reference);
    c.reference->OnBytes(wire::ByteSpan(c.in).subspan(c.in_head, n), c.out);
    c.in_head += n;
    NoteTerminate(c, before);
    stats_.peak_output_backlog = std::max(stats_.peak_output_backlog, c.backlog());
  }
}

void TcpServer::NoteTerminate(Connection& c, int before) {
  const int after = StreamStateOf(*c.reference);
  const bool sent = after == static_cast<int>(model::StreamState::kTerminateSent);
  const bool received = after == static_cast<int>(model::StreamState::kTerminateReceived);
  if (after == before || !(sent || received)) return;
  ++stats_.terminates;
  std::string line = "[" + c.peer + "] conn " + std::to_string(c.reference->connection_serial()) +
                     (sent ? ": Terminate sent" : ": Terminate received");
  // The reference connection records its outcome as it closes, which it does right
  // after a Terminate (unless a fault keeps it open).
  const wire::PreviousOutcome o = target_->previous_outcome();
  if (o.connection_serial == c.reference->connection_serial() && (o.flags & wire::kOutcomeCodeKnown)) {
    char code[24];
    std::snprintf(code, sizeof code, " %u/%u/0x%02x", o.layer, o.error_type, o.error_code);
    line += code;
  }
  const auto& v = c.reference->endpoint()->first_violation();
  if (sent && v) line += std::string(" (") + model::ViolationKindName(v->kind) + ")";
  Log(line);
}

void TcpServer::Flush(Connection& c) {
  while (c.backlog() > 0) {
    const ssize_t n = send(c.fd, c.out.data() + c.head, c.backlog(), MSG_NOSIGNAL);
    if (n > 0) {
      c.head += static_cast<std::size_t>(n);
      stats_.octets_out += static_cast<std::uint64_t>(n);
      c.last_progress = Clock::now();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    const std::string why =
        errno == ECONNRESET || errno == EPIPE ? "reset by the peer" : std::string("send: ") + std::strerror(errno);
    ++stats_.reset_by_peer;
    c.reference->OnPeerReset();
    Release(c, why);
    return;
  }
  if (c.head == c.out.size()) {
    c.out.clear();
    c.head = 0;
  } else if (c.head >= c.out.size() / 2) {
    c.out.erase(c.out.begin(), c.out.begin() + static_cast<std::ptrdiff_t>(c.head));
    c.head = 0;
  }
}

// Sends what the reference connection produced, then FIN once it wants to close, and
// releases the connection when both sides are done.
void TcpServer::Advance(Connection& c) {
  if (c.backlog() > 0) Flush(c);
  if (c.released) return;
  if (c.in_head < c.in.size()) {
    Feed(c);
    if (c.backlog() > 0) Flush(c);
    if (c.released) return;
  }
  if (c.backlog() > 0 || c.in_head < c.in.size()) return;
  if (c.reference->wants_close() && !c.fin_sent) {
    shutdown(c.fd, SHUT_WR);
    c.fin_sent = true;
    c.fin_at = Clock::now();
  }
  if (c.fin_sent && c.reference->closed()) {
    ++stats_.closed;
    Release(c, "");
  }
}

void TcpServer::CheckTimers(Connection& c, Clock::time_point now) {
  if (now - c.last_progress >= options_.idle_timeout) {
    ResetConnection(c, "no progress for " + std::to_string(options_.idle_timeout.count()) + " ms");
  } else if (c.fin_sent && now - c.fin_at >= options_.close_timeout) {
    ResetConnection(c, "the peer did not close within " + std::to_string(options_.close_timeout.count()) +
                           " ms of the target's FIN");
  }
}

void TcpServer::ResetConnection(Connection& c, const std::string& why) {
  ++stats_.reset_by_limit;
  c.reference->OnPeerReset();
  const linger l{1, 0};
  setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  Release(c, "reset: " + why);
}

void TcpServer::Release(Connection& c, const std::string& how) {
  if (c.released) return;
  c.released = true;
  close(c.fd);
  c.fd = -1;
  Log("[" + c.peer + "] " + c.reference->log_line() + (how.empty() ? "" : " (" + how + ")"));
}

void TcpServer::ShutDownAll() {
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
  for (const auto& c : connections_) {
    if (c->released) continue;
    if (c->backlog() > 0) Flush(*c);  // one non-blocking attempt
    if (c->released) continue;
    ++stats_.closed_at_shutdown;
    Release(*c, "server shutdown");
  }
  connections_.clear();
}

}  // namespace rdmapct::targets
