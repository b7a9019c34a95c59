// The fence tracker (fence.h).
#include "conformance/fence.h"

#include <algorithm>

#include "reference/wire/opcodes.h"

namespace rdmapct::conformance {

void FenceTracker::OnSent(wire::ByteSpan ulpdu, bool modified) {
  ++fpdus_sent_;
  // A corrupted FPDU can leave the target inside an FPDU: a fence's octets
  // would be read as part of it (convention §2.5).
  if (modified) Taint("the case sent an FPDU with corrupted framing");
  auto v = wire::DecodeRdmapSegment(ulpdu, profile_);
  if (!v.ok() || !v->opcode_known) {
    Taint("the case sent a ULPDU that is no RDMAP message");
    return;
  }
  const wire::DdpSegmentHeader& h = v->ddp.header;
  if (h.tagged) return;
  switch (h.queue_number) {
    case 0:
      // A fence Send must take the MSN the target expects next.
      if (h.msn != qn0_messages_ + 1) qn0_irregular_ = true;
      if (h.last && h.msn == qn0_messages_ + 1) ++qn0_messages_;
      qn0_open_ = !h.last && !qn0_irregular_;
      return;
    case 1:
      if (h.last) ++requests_sent_;
      return;
    case 2:
      // R5040-7-01: after a Terminate the stream is torn down, so
      // nothing can answer a fence.
      Taint("the suite sent a Terminate");
      return;
    default:
      Taint("the suite sent an untagged message on QN " + std::to_string(h.queue_number));
  }
}

bool FenceTracker::OnReceivedFrame(const wire::RdmapMessageView& v) {
  const wire::DdpSegmentHeader& h = v.ddp.header;
  const bool read_response = h.tagged && v.opcode_known && v.opcode() == wire::Opcode::kRdmaReadResponse;
  // A Read Response to the fence's Sink STag (no case uses it) is the
  // fence's, well-formed or not: it is never one of the case's frames.
  if (read_response && h.stag == kFenceSinkStag && reads_answered_ < reads_sent_) {
    // R5040-5.2.1-15, R5040-4.4-03: one zero-length Read Response with the
    // fence's Sink TO. Another answer proves nothing about the order.
    if (!h.last || h.tagged_offset != reads_answered_ || !v.ulp_payload.empty()) {
      broken_ = "Read Response TO " + std::to_string(h.tagged_offset) + " L=" + (h.last ? "1" : "0") + " with " +
                std::to_string(v.ulp_payload.size()) + " octets, expected TO " + std::to_string(reads_answered_) +
                " L=1 with none";
    }
    if (h.last) {
      ++reads_answered_;
      ++responses_seen_;
    }
    return true;
  }
  // The last segment of any response (Read Response, QN 3) ends a request.
  if (h.last && (read_response || (!h.tagged && h.queue_number == 3))) ++responses_seen_;
  return false;
}

bool FenceTracker::OnReceivedEvent(const std::optional<wire::EventRecord>& e) {
  // Known by its content: the record's Sequence Number counts the target's
  // own Sends, not the suite's QN 0 MSNs (a target may report a Send RTR or
  // not, convention §2.2).
  if (!send_fence_pending_ || !e || e->type != wire::EventType::kSendDelivered) return false;
  const wire::ByteSpan fence(kFenceSendPayload);
  if (e->length != fence.size() || !std::equal(e->prefix.begin(), e->prefix.end(), fence.begin(), fence.end())) {
    return false;
  }
  send_fence_pending_ = false;
  ++sends_answered_;
  return true;
}

std::string FenceTracker::Blocked() const {
  if (!blocked_.empty()) return blocked_;
  if (!broken_.empty()) return "the target answered an earlier fence wrongly";
  // R5044-7.1.2-R04: before the suite's first FPDU the target must stay
  // silent; that wait is a true silence check, and a fence would end it.
  if (fpdus_sent_ == 0) return "the suite has sent no FPDU yet";
  return {};
}

std::optional<uint32_t> FenceTracker::NextQn0Msn() const {
  if (qn0_irregular_ || qn0_open_) return std::nullopt;
  return qn0_messages_ + 1;
}

}  // namespace rdmapct::conformance
