// The suite listening for a target that connects to it as MPA Initiator
// (docs/target-convention.md §10; `rdmapct conform --listen HOST:PORT`).
//
// TcpListenConnector binds once at Create() and hands out one accepted
// connection per Accept(), bounded by its timeout. ListeningConnector
// pairs it with the ordinary connector of --target, so one run has both
// roles: Connect() reaches the target, Accept() waits for it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "targets/tcp.h"
#include "targets/transport.h"

namespace rdmapct::targets {

class TcpListenConnector : public TargetConnector {
 public:
  // Binds and listens on `host_port` ("HOST:PORT", "[IPv6]:PORT"; port 0
  // picks a free port); nullptr with a one-line `error`.
  static std::unique_ptr<TcpListenConnector> Create(std::string_view host_port, TcpOptions options, std::string& error);
  ~TcpListenConnector() override;

  // The listener only accepts.
  std::unique_ptr<Transport> Connect(std::chrono::milliseconds timeout, std::string& error) override;
  bool CanAccept() const override { return true; }
  std::unique_ptr<Transport> Accept(std::chrono::milliseconds timeout, std::string& error) override;
  std::string Describe() const override;  // "listen://127.0.0.1:4792"
  const std::string& address() const { return address_; }

 private:
  TcpListenConnector(int fd, std::string address, TcpOptions options);
  int fd_;
  std::string address_;
  TcpOptions options_;
};

// Connect() goes to `connector`, Accept() to `listener`.
class ListeningConnector : public TargetConnector {
 public:
  ListeningConnector(TargetConnector& connector, std::unique_ptr<TcpListenConnector> listener);
  // Owns the connector too.
  ListeningConnector(std::unique_ptr<TargetConnector> connector, std::unique_ptr<TcpListenConnector> listener);
  std::unique_ptr<Transport> Connect(std::chrono::milliseconds timeout, std::string& error) override {
    return connector_.Connect(timeout, error);
  }
  bool CanAccept() const override { return true; }
  std::unique_ptr<Transport> Accept(std::chrono::milliseconds timeout, std::string& error) override {
    return listener_->Accept(timeout, error);
  }
  // "tcp://HOST:PORT, target connects to listen://HOST:PORT"
  std::string Describe() const override;

 private:
  std::unique_ptr<TargetConnector> owned_;
  TargetConnector& connector_;
  std::unique_ptr<TcpListenConnector> listener_;
};

}  // namespace rdmapct::targets
