#include "targets/in_process.h"

#include <algorithm>

namespace rdmapct::targets {

std::string DescribeReferenceConfig(const ReferenceTargetConfig& config) {
  std::string faults;
  for (const model::FaultInfo& f : model::AllFaults()) {
    if (!config.faults.Has(f.fault)) continue;
    if (!faults.empty()) faults += ",";
    faults += f.name;
  }
  return "profile " + std::string(wire::ProfileName(config.profile)) + ", fault: " + (faults.empty() ? "none" : faults);
}

InProcessTransport::InProcessTransport(std::shared_ptr<ReferenceTarget> target, std::string peer, bool initiator)
    : target_(std::move(target)),
      reference_(initiator ? target_->Connect() : target_->Accept()),
      peer_(std::move(peer)) {
  if (initiator) reference_->Start(queue_);
}

// The connection goes before the target it refers to (member order does that);
// a suite that drops the transport without closing is a reset.
InProcessTransport::~InProcessTransport() {
  if (!reference_->closed()) reference_->OnPeerReset();
}

IoStatus InProcessTransport::Write(wire::ByteSpan bytes) {
  if (aborted_) {
    last_error_ = "write after Abort()";
    return IoStatus::kError;
  }
  if (write_shut_) {
    last_error_ = "write after ShutdownWrite()";
    return IoStatus::kError;
  }
  if (reference_->closed()) return IoStatus::kClosed;
  if (queued() > kMaxBacklog) {
    last_error_ = "the target is not reading: " + std::to_string(queued()) + " octets wait for the suite";
    return IoStatus::kTimeout;
  }
  // Octets after the target's FIN are still consumed (TCP half-close): a
  // conforming target ignores them, a faulty one may act on them.
  reference_->OnBytes(bytes, queue_);
  return IoStatus::kOk;
}

IoStatus InProcessTransport::Read(wire::Bytes& out, std::size_t max_bytes, std::chrono::milliseconds timeout) {
  if (aborted_) {
    last_error_ = "read after Abort()";
    return IoStatus::kError;
  }
  const std::size_t n = std::min(max_bytes, queued());
  if (n > 0) {
    out.insert(out.end(), queue_.begin() + static_cast<std::ptrdiff_t>(head_),
               queue_.begin() + static_cast<std::ptrdiff_t>(head_ + n));
    head_ += n;
    if (head_ == queue_.size()) {
      queue_.clear();
      head_ = 0;
    } else if (head_ > queue_.size() / 2) {
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return IoStatus::kOk;
  }
  if (queued() == 0 && reference_->wants_close()) return IoStatus::kClosed;
  // An Initiator waiting for its Reply gives up on its own clock, which has
  // reached the furthest instant the suite has waited for (a wait costs no
  // wall time here either; a wait that ends before the timer never fires
  // it, however often it is retried in slices).
  if (const auto at = reference_->timer(); at && !write_shut_) {
    waited_until_ = std::max(waited_until_, std::chrono::steady_clock::now() + timeout);
    if (*at > waited_until_) return IoStatus::kTimeout;
    reference_->OnTimer(*at, queue_);
    if (queued() > 0) return Read(out, max_bytes, std::chrono::milliseconds(0));
    if (reference_->wants_close()) return IoStatus::kClosed;
  }
  return IoStatus::kTimeout;
}

void InProcessTransport::ShutdownWrite() {
  if (write_shut_ || aborted_) return;
  write_shut_ = true;
  reference_->OnPeerClosed(queue_);
}

void InProcessTransport::Abort() {
  if (aborted_) return;
  aborted_ = true;
  reference_->OnPeerReset();
  wire::Bytes().swap(queue_);
  head_ = 0;
}

InProcessConnector::InProcessConnector(std::shared_ptr<ReferenceTarget> target) : target_(std::move(target)) {}

std::unique_ptr<Transport> InProcessConnector::Connect(std::chrono::milliseconds /*timeout*/, std::string& error) {
  if (!target_->config_error().empty()) {
    error = "reference target misconfigured: " + target_->config_error();
    return nullptr;
  }
  return std::make_unique<InProcessTransport>(target_, Describe());
}

std::unique_ptr<Transport> InProcessConnector::Accept(std::chrono::milliseconds /*timeout*/, std::string& error) {
  if (!target_->config_error().empty()) {
    error = "reference target misconfigured: " + target_->config_error();
    return nullptr;
  }
  return std::make_unique<InProcessTransport>(target_, Describe() + " as MPA Initiator", true);
}

std::string InProcessConnector::Describe() const {
  return "in-process reference (" + DescribeReferenceConfig(target_->config()) + ")";
}

}  // namespace rdmapct::targets
