// The fence tracker (fence.h).
#include "conformance/fence.h"

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
  // R5040-5.2.1-15: the fence's answer is one zero-length Read Response
  // with the fence's Sink STag and TO.
  if (read_response && h.last && h.stag == kFenceSinkStag && h.tagged_offset == reads_answered_ &&
      v.ulp_payload.empty() && reads_answered_ < reads_sent_) {
    ++reads_answered_;
    ++responses_seen_;
    return true;
  }
  // The last segment of any response (Read Response, QN 3) ends a request.
  if (h.last && (read_response || (!h.tagged && h.queue_number == 3))) ++responses_seen_;
  return false;
}

bool FenceTracker::OnReceivedEvent(uint32_t msn, const std::optional<wire::EventRecord>& e) {
  if (!send_fence_msn_ || msn != *send_fence_msn_ || !e) return false;
  if (e->type != wire::EventType::kSendDelivered || e->length != sizeof(kFenceSendPayload)) return false;
  send_fence_msn_.reset();
  ++sends_answered_;
  return true;
}

std::string FenceTracker::Blocked() const {
  if (!blocked_.empty()) return blocked_;
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
