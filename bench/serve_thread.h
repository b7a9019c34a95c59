// A TcpServer serving the reference target on 127.0.0.1 port 0 on a
// thread of its own, as `rdmapct serve --listen 127.0.0.1:0` runs it, for
// the benchmarks that talk to it over loopback TCP.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "targets/reference_target.h"
#include "targets/tcp_server.h"

namespace rdmapct::bench {

// A TcpServer serving on its own thread for the lifetime of the object.
class ServeThread {
 public:
  ServeThread(const targets::ReferenceTargetConfig& config, std::string& error) {
    targets::TcpServerOptions options;
    options.listen = "127.0.0.1:0";
    server_ = targets::TcpServer::Create(std::make_shared<targets::ReferenceTarget>(config), options, {}, error);
    if (server_) thread_ = std::thread([this] { server_->Run(); });
  }
  ~ServeThread() {
    if (!server_) return;
    server_->Stop();
    thread_.join();
  }
  ServeThread(const ServeThread&) = delete;
  ServeThread& operator=(const ServeThread&) = delete;

  bool ok() const { return server_ != nullptr; }
  std::string address() const { return server_->address(); }

 private:
  std::unique_ptr<targets::TcpServer> server_;
  std::thread thread_;
};

}  // namespace rdmapct::bench
