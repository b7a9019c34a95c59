// The in-process transport: the suite talks to a ReferenceTarget in the
// same process, octet for octet as it would over TCP, with no sockets.
//
// Timing: the reference target is synchronous. Write() runs the target on
// the octets at once and queues everything it sends back, so by the time
// Read() is called the answer is either queued or will never come. Read()
// therefore never sleeps: with nothing queued it returns kTimeout at once,
// whatever the timeout (a "silent target" costs no wall time in-process).
//
// Flow control: like a TCP peer whose receive window fills, the target stops
// taking octets while more than kMaxBacklog octets wait for the suite to
// read them; Write() then returns kTimeout and consumes nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "targets/reference_target.h"
#include "targets/transport.h"

namespace rdmapct::targets {

class InProcessTransport : public Transport {
 public:
  static constexpr std::size_t kMaxBacklog = 16u << 20;

  // `initiator`: the target opens the connection as MPA Initiator; its
  // Request is queued at once (ReferenceTargetConnection::Start).
  InProcessTransport(std::shared_ptr<ReferenceTarget> target, std::string peer, bool initiator = false);
  ~InProcessTransport() override;

  // kOk: the target consumed the octets. kTimeout: the backlog is full.
  // kClosed: both sides closed. kError: after ShutdownWrite() or Abort().
  IoStatus Write(wire::ByteSpan bytes) override;
  bool WaitsInWallTime() const override { return false; }
  // kOk with queued octets; kClosed once the target closed its side and the
  // queue is drained; kTimeout otherwise (immediately, see above; an
  // Initiator waiting for its Reply gives up, closing, when its timer falls
  // within the suite's accumulated waits); kError after Abort().
  IoStatus Read(wire::Bytes& out, std::size_t max_bytes, std::chrono::milliseconds timeout) override;
  void ShutdownWrite() override;
  void Abort() override;
  std::string last_error() const override { return last_error_; }
  std::string peer() const override { return peer_; }

  // White-box access for tests (memory peeks, the connection's log line).
  ReferenceTargetConnection& reference() { return *reference_; }
  const ReferenceTargetConnection& reference() const { return *reference_; }
  std::size_t queued() const { return queue_.size() - head_; }

 private:
  std::shared_ptr<ReferenceTarget> target_;  // outlives reference_
  std::unique_ptr<ReferenceTargetConnection> reference_;
  std::string peer_;
  std::string last_error_;
  wire::Bytes queue_;  // target -> suite octets; [head_, end) not yet read
  std::size_t head_ = 0;
  bool write_shut_ = false;
  std::chrono::steady_clock::time_point waited_until_{};  // the furthest instant a Read waited for
  bool aborted_ = false;
};

// Connect() opens a connection on one shared ReferenceTarget, so Keep Memory,
// the Connection Serial and the outcome block carry over between the
// connections of a run.
class InProcessConnector : public TargetConnector {
 public:
  explicit InProcessConnector(std::shared_ptr<ReferenceTarget> target);
  std::unique_ptr<Transport> Connect(std::chrono::milliseconds timeout, std::string& error) override;
  // "in-process reference (profile rfc5040, fault: none)"
  std::string Describe() const override;
  // The target opens a connection as MPA Initiator (convention §10).
  bool CanAccept() const override { return true; }
  std::unique_ptr<Transport> Accept(std::chrono::milliseconds timeout, std::string& error) override;
  const std::shared_ptr<ReferenceTarget>& target() const { return target_; }

 private:
  std::shared_ptr<ReferenceTarget> target_;
};

// "profile rfc7306, fault: skip-bounds-check,ignore-ird"
std::string DescribeReferenceConfig(const ReferenceTargetConfig& config);

}  // namespace rdmapct::targets
