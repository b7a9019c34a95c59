// The TCP client transport against a tiny loopback listener (127.0.0.1
// only) that echoes, closes, resets or stays silent.
#include "targets/tcp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace rdmapct::targets {
namespace {

using std::chrono::milliseconds;
using wire::Bytes;

enum class Behaviour { kEcho, kClose, kReset, kSilent };

// Accepts one connection and behaves as told, on a thread of its own.
class Listener {
 public:
  explicit Listener(Behaviour b) : behaviour_(b) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 4), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~Listener() {
    done_ = true;
    shutdown(fd_, SHUT_RDWR);
    thread_.join();
    close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  void Release() { done_ = true; }

 private:
  void Serve() {
    const int c = accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    if (behaviour_ == Behaviour::kEcho) {
      char buf[4096];
      ssize_t n;
      while ((n = recv(c, buf, sizeof buf, 0)) > 0) send(c, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
    } else if (behaviour_ == Behaviour::kReset) {
      // Reset once the client has spoken, so the RST never races the handshake.
      char c1;
      recv(c, &c1, 1, 0);
      const linger l{1, 0};
      setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    } else if (behaviour_ == Behaviour::kSilent) {
      while (!done_) std::this_thread::sleep_for(milliseconds(5));
    }
    close(c);
  }

  Behaviour behaviour_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

std::unique_ptr<Transport> Connect(const std::string& address, TcpOptions o = {}) {
  std::string error;
  auto connector = TcpConnector::Create(address, o, error);
  EXPECT_NE(connector, nullptr) << error;
  if (!connector) return nullptr;
  EXPECT_EQ(connector->Describe(), "tcp://" + address);
  auto t = connector->Connect(milliseconds(2000), error);
  EXPECT_NE(t, nullptr) << error;
  return t;
}

TEST(TcpTransport, EchoThenFin) {
  Listener l(Behaviour::kEcho);
  auto t = Connect(l.address());
  ASSERT_NE(t, nullptr);
  const Bytes hello = {'h', 'e', 'l', 'l', 'o'};
  ASSERT_EQ(t->Write(hello), IoStatus::kOk);
  Bytes in;
  while (in.size() < hello.size()) {
    ASSERT_EQ(t->Read(in, 4096, milliseconds(2000)), IoStatus::kOk);
  }
  EXPECT_EQ(in, hello);
  // Our FIN ends the echo loop; the peer's FIN comes back as kClosed.
  t->ShutdownWrite();
  EXPECT_EQ(t->Read(in, 4096, milliseconds(2000)), IoStatus::kClosed);
  EXPECT_EQ(t->Read(in, 4096, milliseconds(0)), IoStatus::kClosed);  // sticky
  EXPECT_EQ(t->peer(), "tcp://" + l.address());
}

TEST(TcpTransport, PeerCloseIsClosed) {
  Listener l(Behaviour::kClose);
  auto t = Connect(l.address());
  ASSERT_NE(t, nullptr);
  Bytes in;
  EXPECT_EQ(t->Read(in, 4096, milliseconds(2000)), IoStatus::kClosed);
  EXPECT_TRUE(in.empty());
}

TEST(TcpTransport, PeerResetIsReset) {
  Listener l(Behaviour::kReset);
  auto t = Connect(l.address());
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->Write(Bytes(1, 'x')), IoStatus::kOk);
  Bytes in;
  EXPECT_EQ(t->Read(in, 4096, milliseconds(2000)), IoStatus::kReset) << t->last_error();
  EXPECT_EQ(t->Write(Bytes(4, 0)), IoStatus::kReset);  // sticky
}

TEST(TcpTransport, SilentPeerTimesOutWithinTheDeadline) {
  Listener l(Behaviour::kSilent);
  auto t = Connect(l.address());
  ASSERT_NE(t, nullptr);
  Bytes in;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(t->Read(in, 4096, milliseconds(150)), IoStatus::kTimeout);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, milliseconds(150));
  EXPECT_LT(took, milliseconds(1500));
  // A peer that never reads: the write times out once the windows are full.
  auto w = Connect(l.address() /* second accept never happens: backlog only */, TcpOptions{milliseconds(200)});
  ASSERT_NE(w, nullptr);
  Bytes big(1 << 20, 0x42);
  IoStatus st = IoStatus::kOk;
  for (int i = 0; i < 64 && st == IoStatus::kOk; ++i) st = w->Write(big);
  EXPECT_EQ(st, IoStatus::kTimeout);
  EXPECT_NE(w->last_error().find("octets within 200 ms"), std::string::npos) << w->last_error();
  l.Release();
}

TEST(TcpTransport, AbortSendsReset) {
  // The listener echoes; after our RST its recv() fails, and our handle is gone.
  Listener l(Behaviour::kEcho);
  auto t = Connect(l.address());
  ASSERT_NE(t, nullptr);
  t->Abort();
  Bytes in;
  EXPECT_EQ(t->Read(in, 10, milliseconds(0)), IoStatus::kError);
  EXPECT_EQ(t->Write(Bytes(1, 0)), IoStatus::kError);
}

TEST(TcpConnectorTest, RefusedConnectionIsAnError) {
  // Bind a port, then close it, so nobody listens there.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  std::string error;
  auto c = TcpConnector::Create("127.0.0.1:" + std::to_string(ntohs(a.sin_port)), {}, error);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->Connect(milliseconds(1000), error), nullptr);
  EXPECT_NE(error.find("cannot connect to tcp://127.0.0.1:"), std::string::npos) << error;
}

TEST(TcpConnectorTest, AddressSyntax) {
  std::string host, port, error;
  ASSERT_TRUE(SplitHostPort("[::1]:4791", host, port, error)) << error;
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, "4791");
  ASSERT_TRUE(SplitHostPort("target.example:80", host, port, error));
  EXPECT_EQ(host, "target.example");
  for (const char* bad : {"", "host", "host:", ":80", "host:0", "host:65536", "::1:80", "[::1]80", "host:8x"}) {
    EXPECT_FALSE(SplitHostPort(bad, host, port, error)) << bad;
  }
  auto c = TcpConnector::Create("[::1]:4791", {}, error);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->Describe(), "tcp://[::1]:4791");
}

}  // namespace
}  // namespace rdmapct::targets
