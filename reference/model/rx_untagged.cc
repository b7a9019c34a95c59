// QN 0: the Send variants and Immediate Data. Each message consumes the
// posted receive buffer its MSN selects; segments are placed by MO in any
// order; messages are delivered strictly in MSN order once complete.
#include <algorithm>
#include <cstring>

#include "reference/model/endpoint.h"

namespace rdmapct::model {

using wire::Opcode;

// REQ R5041-7.1-U2 R5041-7.1-U5 R5040-5.3-02 R5040-5.3-12 R7306-6.3-02 R5041-4.3-08
// The legal MSNs are those of the posted buffers: [expected, expected + posted).
// Passive audit: receives of unknown size are assumed for the next
// kPassiveWindow MSNs.
constexpr uint32_t kPassiveWindow = 1024;

ReceiveBuffer* RdmapEndpoint::ClaimReceive(const RxSegment& rx, Reactions& out) {
  if (config_.passive && config_.passive_assume_receives) {
    const uint32_t distance = rx.ddp().msn - expected_msn_[0];
    while (distance < kPassiveWindow && resources_.posted_receives() <= distance) {
      resources_.PostUnboundedReceive();
    }
  }
  const uint32_t posted = static_cast<uint32_t>(resources_.posted_receives());
  if (RaiseIf(rx, CheckMsn(rx.ddp().msn, expected_msn_[0], posted, 0, config_.faults), out)) {
    return nullptr;
  }
  // Only the faults accept-send-without-buffer / skip-msn-check get here
  // with an MSN that has no buffer: the segment is dropped or lands in the
  // head buffer.
  const uint32_t index = rx.ddp().msn - expected_msn_[0];
  if (posted == 0) {
    ++segments_dropped_;
    return nullptr;
  }
  return resources_.Receive(index < posted ? index : 0);
}

// REQ R5040-5.3-01 R5040-5.3-03 R5041-4.1-03 R5041-5.3-03 R5041-7.1-U3 R5041-7.1-U4
// R5041-4.3-05
void RdmapEndpoint::OnSend(const RxSegment& rx, Reactions& out) {
  ReceiveBuffer* buf = ClaimReceive(rx, out);
  if (buf == nullptr) return;
  const wire::DdpSegmentHeader& h = rx.ddp();
  const wire::ByteSpan payload = rx.payload();
  const FaultSet& f = config_.faults;
  if (!buf->unbounded && RaiseIf(rx, CheckMessageOffset(h.message_offset, payload.size(), buf->capacity, f), out)) {
    return;
  }
  if (RaiseIf(rx, CheckMessageStructure(*buf, h.message_offset, payload.size(), h.last), out)) {
    return;
  }
  // deliver-send-into-small-buffer: whatever does not fit is cut off.
  const std::size_t capacity =
      buf->unbounded ? std::size_t{h.message_offset} + payload.size() : std::size_t{buf->capacity};
  const std::size_t begin = std::min<std::size_t>(h.message_offset, capacity);
  const std::size_t n = std::min(payload.size(), capacity - begin);
  if (n > 0 && !buf->unbounded) {
    if (buf->data.size() < begin + n) buf->data.resize(begin + n);
    std::memcpy(buf->data.data() + begin, payload.data(), n);
  }
  buf->received.Insert(begin, begin + n);
  if (h.last) buf->message_length = static_cast<uint32_t>(begin + n);
  // decisions D-F6: RsvdULP of the MO=0 segment (or of the first one seen) wins.
  if (!buf->started || (h.message_offset == 0 && !buf->have_first_segment)) {
    buf->rdmap_control = h.rsvd_ulp0;
    buf->invalidate_stag = h.invalidate_stag;
    buf->have_first_segment = h.message_offset == 0;
  }
  buf->started = true;
  DeliverCompletedReceives(rx, out);
}

// REQ R7306-6.3-01 R7306-6.3-02 R7306-6.3-04 R7306-6.3-07
// Immediate Data is one 8-octet message; its octets travel in the
// completion, not in the receive buffer (decisions.md: no capacity check).
void RdmapEndpoint::OnImmediateData(const RxSegment& rx, Reactions& out) {
  const wire::DdpSegmentHeader& h = rx.ddp();
  ReceiveBuffer* buf = ClaimReceive(rx, out);
  if (buf == nullptr) return;
  CheckResult r = CheckRdmapHeaderLength(*rx.info, rx.payload().size(), config_.faults);
  if (!r && (h.message_offset != 0 || !h.last || buf->started)) {
    r = MakeViolation(ViolationKind::kImmediateDataLength, "R7306-6.3-07",
                      "Immediate Data split over several segments");
  }
  if (RaiseIf(rx, std::move(r), out)) return;
  const auto& imm = std::get<wire::ImmediateDataHeader>(rx.view.header);
  buf->immediate_data = imm.immediate_data;
  buf->rdmap_control = h.rsvd_ulp0;
  buf->message_length = 0;
  buf->started = true;
  buf->have_first_segment = true;
  DeliverCompletedReceives(rx, out);
}

// REQ R5040-5.5-R10 R5040-5.5-R16 R5040-5.3-05 R5041-5.4-02 R5041-5.4-03 R5041-5.3-05
// R5041-5.3-06 R5040-5.3-14 R5040-5.3-15 R5040-5.3-06 R7306-6.3-03 R7306-6.4-01
// Delivery in MSN order: only the head buffer may complete a delivery, and
// each delivered message advances the expected MSN.
void RdmapEndpoint::DeliverCompletedReceives(const RxSegment& rx, Reactions& out) {
  while (resources_.posted_receives() > 0) {
    ReceiveBuffer* head = resources_.Receive(0);
    if (!head->started || !head->Complete()) return;
    const Opcode op = static_cast<Opcode>(wire::DecodeRdmapControl(head->rdmap_control, config_.profile).opcode);
    const bool invalidate = wire::InfoFor(op).invalidate_stag == wire::InvalidateStagUse::kValid;
    if (invalidate &&
        RaiseIf(rx, CheckInvalidateStag(resources_, config_.stream_id, head->invalidate_stag, config_.faults), out)) {
      return;
    }
    ReceiveBuffer done = resources_.PopReceive();
    const bool immediate = op == Opcode::kImmediateData || op == Opcode::kImmediateDataWithSe;
    UlpEvent& e = out.AddEvent(immediate ? UlpEventKind::kImmediateDataReceived : UlpEventKind::kSendReceived);
    e.opcode = op;
    e.receive_id = done.receive_id;
    e.msn = expected_msn_[0]++;
    e.solicited_event = wire::InfoFor(op).solicited_event;
    e.value = done.immediate_data;
    e.length = *done.message_length;
    if (invalidate) {
      // invalidate-non-invalidatable-stag: even foreign STags are invalidated.
      e.invalidated = resources_.Invalidate(done.invalidate_stag);
      e.invalidated_stag = done.invalidate_stag;
    }
    if (!done.unbounded) done.data.resize(e.length);
    e.data = std::move(done.data);
  }
}

}  // namespace rdmapct::model
