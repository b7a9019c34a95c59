// A TcpServer serving a reference target on 127.0.0.1 port 0 on a thread of
// its own, as `rdmapct serve --listen 127.0.0.1:0` runs it: for the tests and
// benchmarks that talk to a served target over loopback TCP.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "targets/reference_target.h"
#include "targets/tcp_server.h"

namespace rdmapct::targets {

// A TcpServer serving on its own thread for the lifetime of the object.
class ServeThread {
 public:
  ServeThread(const ReferenceTargetConfig& config, std::string& error)
      : ServeThread(std::make_shared<ReferenceTarget>(config), error) {}
  ServeThread(std::shared_ptr<ReferenceTarget> target, std::string& error) {
    TcpServerOptions options;
    options.listen = "127.0.0.1:0";
    server_ = TcpServer::Create(std::move(target), options, {}, error);
    if (server_) thread_ = std::thread([this] { server_->Run(); });
  }
  ~ServeThread() { Stop(); }
  void Stop() {
    if (!thread_.joinable()) return;
    server_->Stop();
    thread_.join();
  }
  ServeThread(const ServeThread&) = delete;
  ServeThread& operator=(const ServeThread&) = delete;

  bool ok() const { return server_ != nullptr; }
  std::string address() const { return server_->address(); }
  std::string Uri() const { return "tcp://" + address(); }
  // Read after Stop() (the server thread writes them while it runs).
  const TcpServerStats& stats() const { return server_->stats(); }

 private:
  std::unique_ptr<targets::TcpServer> server_;
  std::thread thread_;
};

}  // namespace rdmapct::targets
