// A served reference target for tests (targets/serve_thread.h): a server
// that does not start fails the test, Connector() opens connections to it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "targets/reference_target.h"
#include "targets/serve_thread.h"
#include "targets/tcp.h"

namespace rdmapct::targets::testing {

class Served {
 public:
  explicit Served(std::shared_ptr<ReferenceTarget> target) : target_(std::move(target)), serve_(target_, error_) {
    EXPECT_TRUE(serve_.ok()) << error_;
  }
  explicit Served(const ReferenceTargetConfig& config) : Served(std::make_shared<ReferenceTarget>(config)) {}

  std::unique_ptr<TcpConnector> Connector() {
    std::string error;
    auto c = TcpConnector::Create(serve_.address(), {}, error);
    EXPECT_NE(c, nullptr) << error;
    return c;
  }
  std::string address() const { return serve_.address(); }
  std::string Uri() const { return serve_.Uri(); }
  void Stop() { serve_.Stop(); }
  const TcpServerStats& stats() const { return serve_.stats(); }
  ReferenceTarget& target() { return *target_; }

 private:
  std::shared_ptr<ReferenceTarget> target_;
  std::string error_;  // before serve_, which writes it
  ServeThread serve_;
};

}  // namespace rdmapct::targets::testing
