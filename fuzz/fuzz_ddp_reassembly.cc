// Untagged DDP message reassembly (RFC 5041 §5.3; ddp_segmentation.h).
//
// Octet 0 picks the mode:
//  even: arbitrary segments. Octets 1-2 are the assembler capacity; then
//        records, each: flags (0x01 L, 0x02 QN+1, 0x04 MSN+1, 0x08 T, 0x10
//        32-bit MO), MO (2 or 4 octets), payload length (1 octet), payload.
//        QN/MSN are 0/1 so mismatches are likely. Every record is encoded
//        as a DDP segment, decoded back (must round-trip) and added.
//        Oracle: a shadow model written from the header's contract (which
//        status each segment earns, in the documented order; rejected
//        segments change nothing; overlapping octets are placed again)
//        must agree with the assembler after every Add on the status,
//        started/QN/MSN, message length, distinct and duplicate octet
//        counts and completion; octets_received <= capacity; complete
//        implies every octet below the message length arrived and message()
//        holds the last octets placed there.
//  odd:  one message segmented by SegmentDdpMessage. Octets 1-2 message
//        length, octet 3 MULPDU - 19, octet 4 extra capacity, then order
//        octets (a Fisher-Yates shuffle of the segments, plus one resent
//        segment), then the message octets. Oracle: every segment is
//        accepted, the last one completes, and the message is reassembled
//        exactly; TakeMessage returns it and resets the assembler.

// GCC 12 takes the std::optional members of Shadow, inlined into the
// harness, for reads of uninitialized octets (-Wmaybe-uninitialized); every
// one is initialized, and clang and ASan + UBSan see nothing.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "fuzz/support.h"
#include "reference/wire/ddp.h"
#include "reference/wire/ddp_segmentation.h"

namespace {

using namespace rdmapct::wire;
using rdmapct::fuzz::InputSplitter;
using rdmapct::fuzz::SameBytes;

constexpr std::size_t kMaxCapacity = 0xFFFF;

// What the assembler is specified to do, tracked independently.
class Shadow {
 public:
  explicit Shadow(uint32_t capacity) : capacity_(capacity) {}

  ReassemblyStatus Expect(const DdpSegmentHeader& h, std::size_t length) const {
    if (h.tagged) return ReassemblyStatus::kNotUntagged;
    if (complete_) return ReassemblyStatus::kAlreadyComplete;
    if (started_ && h.queue_number != qn_) return ReassemblyStatus::kQueueMismatch;
    if (started_ && h.msn != msn_) return ReassemblyStatus::kMsnMismatch;
    const uint64_t end = uint64_t{h.message_offset} + length;
    if (end > capacity_) return ReassemblyStatus::kTooLong;
    if (length_ && end > *length_) return ReassemblyStatus::kBeyondLast;
    if (h.last && length_ && end != *length_) return ReassemblyStatus::kSecondLast;
    if (h.last && highest_end_ > end) return ReassemblyStatus::kBeyondLast;
    return ReassemblyStatus::kAccepted;  // or kComplete, decided by Apply
  }

  ReassemblyStatus Apply(const DdpSegmentHeader& h, ByteSpan payload) {
    if (!started_) {
      started_ = true;
      qn_ = h.queue_number;
      msn_ = h.msn;
    }
    const std::size_t begin = h.message_offset;
    const std::size_t end = begin + payload.size();
    if (begin == 0) first_ = h;
    if (h.last) length_ = static_cast<uint32_t>(end);
    for (std::size_t i = begin; i < end; ++i) {
      if (have_[i])
        ++duplicates_;
      else
        ++received_;
      have_[i] = true;
      octets_[i] = payload[i - begin];
    }
    highest_end_ = std::max<uint64_t>(highest_end_, end);
    complete_ = length_ && received_ == *length_;
    return complete_ ? ReassemblyStatus::kComplete : ReassemblyStatus::kAccepted;
  }

  void Compare(const UntaggedMessageAssembler& a) const {
    FUZZ_CHECK(a.started() == started_ && a.complete() == complete_);
    if (started_) FUZZ_CHECK(a.queue_number() == qn_ && a.msn() == msn_);
    FUZZ_CHECK(a.message_length() == length_);
    FUZZ_CHECK(a.octets_received() == received_ && a.duplicate_octets() == duplicates_);
    FUZZ_CHECK(a.octets_received() <= capacity_);
    FUZZ_CHECK(a.first_segment_header() == first_);
    if (complete_) {
      const ByteSpan m = a.message();
      // Every octet below the length was received: Expect refuses whatever
      // would end beyond it, so received_ == *length_ covers them all.
      FUZZ_CHECK(m.size() == *length_);
      FUZZ_CHECK(SameBytes(m, ByteSpan(octets_.data(), m.size())));
    }
  }

  // The arrays are static, so nothing is allocated or zero-filled per run
  // but the 8 KiB bitset: one memset, where clearing the touched bits one by
  // one (up to 65535, each a coverage-counted loop iteration) took a third of
  // the harness's time.
  void Clear() { have_.reset(); }

 private:
  static inline std::bitset<kMaxCapacity + 1> have_;
  static inline std::array<uint8_t, kMaxCapacity + 1> octets_;
  uint32_t capacity_;
  bool started_ = false, complete_ = false;
  uint32_t qn_ = 0, msn_ = 0;
  std::optional<uint32_t> length_;
  std::optional<DdpSegmentHeader> first_;
  uint64_t received_ = 0, duplicates_ = 0, highest_end_ = 0;
};

// Encodes `h` + payload, decodes it back, and checks the DDP round trip.
DdpSegmentView ThroughTheWire(const DdpSegmentHeader& h, ByteSpan payload) {
  static Bytes wire;
  wire.clear();
  EncodeDdpHeader(h, wire);
  wire.insert(wire.end(), payload.begin(), payload.end());
  auto v = DecodeDdpSegment(wire);
  FUZZ_CHECK(v.ok() && v->header == h && SameBytes(v->payload, payload));
  DdpSegmentView out = *v;
  out.payload = payload;  // `wire` is reused; point at the caller's octets
  return out;
}

void ArbitrarySegments(InputSplitter& in) {
  const uint32_t capacity = in.U16();
  UntaggedMessageAssembler a(capacity);
  Shadow s(capacity);
  while (!in.empty()) {
    const uint8_t f = in.U8();
    DdpSegmentHeader h;
    h.last = f & 0x01;
    h.tagged = f & 0x08;
    if (h.tagged) {
      h.stag = 0x1234;
    } else {
      h.queue_number = (f & 0x02) ? 1 : 0;
      h.msn = (f & 0x04) ? 1 : 0;
      h.message_offset = (f & 0x10) ? in.U32() : in.U16();
    }
    const ByteSpan payload = in.Take(in.U8());
    const DdpSegmentView v = ThroughTheWire(h, payload);
    const ReassemblyStatus want = s.Expect(h, payload.size());
    const ReassemblyStatus got = a.Add(v);
    if (want == ReassemblyStatus::kAccepted) {
      FUZZ_CHECK(got == s.Apply(h, payload));
    } else {
      FUZZ_CHECK(got == want);
    }
    s.Compare(a);
  }
  s.Clear();
}

void SegmentedMessage(InputSplitter& in) {
  const std::size_t length = in.U16() % 4097;
  const std::size_t mulpdu = kDdpUntaggedHeaderLength + 1 + in.U8();
  const uint32_t capacity = static_cast<uint32_t>(length + in.U8());
  DdpSegmentHeader first;
  first.queue_number = 0;
  first.msn = 7;
  first.rsvd_ulp0 = 0x43;  // Send
  const ByteSpan order = in.Take(16);
  const ByteSpan message = in.Take(length);
  auto planned = SegmentDdpMessage(first, message, mulpdu);
  FUZZ_CHECK(planned.ok() && !planned->empty());
  std::vector<PlannedDdpSegment>& segs = *planned;
  for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
    const std::size_t j = i + (i < order.size() ? order[i] : 0) % (segs.size() - i);
    std::swap(segs[i], segs[j]);
  }
  UntaggedMessageAssembler a(capacity);
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const ReassemblyStatus got = a.Add(ThroughTheWire(segs[i].header, segs[i].payload));
    FUZZ_CHECK(got == (i + 1 == segs.size() ? ReassemblyStatus::kComplete : ReassemblyStatus::kAccepted));
    if (i == 0 && segs.size() > 1) {  // a resent segment is placed again
      FUZZ_CHECK(a.Add(segs[0].header, segs[0].payload) == ReassemblyStatus::kAccepted);
      FUZZ_CHECK(a.duplicate_octets() == segs[0].payload.size());
    }
  }
  FUZZ_CHECK(a.complete() && a.octets_received() == message.size());
  FUZZ_CHECK(SameBytes(a.message(), message));
  FUZZ_CHECK(a.Add(segs[0].header, segs[0].payload) == ReassemblyStatus::kAlreadyComplete);
  const Bytes taken = a.TakeMessage();
  FUZZ_CHECK(SameBytes(taken, message) && !a.started() && !a.complete());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  InputSplitter in(data, size);
  if ((in.U8() & 1) == 0) {
    ArbitrarySegments(in);
  } else {
    SegmentedMessage(in);
  }
  return 0;
}
