#include "reference/model/reactions.h"

namespace rdmapct::model {

const char* StreamStateName(StreamState s) {
  switch (s) {
    case StreamState::kStreaming:
      return "streaming";
    case StreamState::kTerminateSent:
      return "terminate-sent";
    case StreamState::kTerminateReceived:
      return "terminate-received";
    case StreamState::kClosing:
      return "closing";
    case StreamState::kError:
      return "error";
  }
  return "?";
}

const char* UlpEventKindName(UlpEventKind k) {
  switch (k) {
    case UlpEventKind::kSendReceived:
      return "send-received";
    case UlpEventKind::kImmediateDataReceived:
      return "immediate-data-received";
    case UlpEventKind::kReadCompleted:
      return "read-completed";
    case UlpEventKind::kAtomicCompleted:
      return "atomic-completed";
    case UlpEventKind::kFlushCompleted:
      return "flush-completed";
    case UlpEventKind::kVerifyCompleted:
      return "verify-completed";
    case UlpEventKind::kAtomicWriteCompleted:
      return "atomic-write-completed";
    case UlpEventKind::kTerminateReceived:
      return "terminate-received";
    case UlpEventKind::kError:
      return "error";
  }
  return "?";
}

void UlpEvent::Reset() {
  wire::Bytes keep = std::move(data);
  keep.clear();
  *this = UlpEvent{};
  data = std::move(keep);
}

void Reactions::Clear() {
  segment_count_ = 0;
  event_count_ = 0;
  violations_.clear();
  state_changes_.clear();
}

wire::Bytes& Reactions::AddSegment() {
  if (segment_count_ == segments_.size()) segments_.emplace_back();
  wire::Bytes& b = segments_[segment_count_++];
  b.clear();
  return b;
}

UlpEvent& Reactions::AddEvent(UlpEventKind kind) {
  if (event_count_ == events_.size()) events_.emplace_back();
  UlpEvent& e = events_[event_count_++];
  e.Reset();
  e.kind = kind;
  return e;
}

}  // namespace rdmapct::model
