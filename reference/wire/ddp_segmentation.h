// DDP segmentation (Data Source) and untagged reassembly (Data Sink),
// RFC 5041 §5.2-§5.3.
//
// Segmentation splits one DDP message into segments whose ULPDU (DDP header +
// payload) is at most MULPDU octets: every segment but the last is full, L=1
// only on the last, MO (untagged) or TO (tagged) advances by the octets
// already sent, and a zero-length message is exactly one segment.
//
// Reassembly collects the segments of one untagged message by MO. Segments
// may arrive in any MO order (only the L=1 segment must come last on the
// wire, and even that is not assumed here: decisions D-F5); the message is
// complete when the L=1 segment has been seen and every octet below its end
// is present.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/ddp.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

// One planned segment: its header and a view of its share of the message.
struct PlannedDdpSegment {
  DdpSegmentHeader header;
  ByteSpan payload;  // points into the message passed to SegmentDdpMessage
};

// REQ R5041-5.2-01 R5041-5.2-11 R5041-4.1-04 R5041-4.1-05
// Splits `message` (for RDMAP untagged messages: RDMAP header + ULP payload,
// see EncodeRdmapMessageBody) into segments of at most `mulpdu` octets each.
// `first` supplies every header field of the first segment; `first.tagged`
// selects the model. The function sets L, and MO = first.message_offset +
// offset (untagged) or TO = first.tagged_offset + offset (tagged, modulo
// 2^64: a wrapping TO is produced as such, for negative tests).
// Errors: kInvalidValue "MULPDU" when mulpdu leaves no room for payload and
// the message is not empty; kTooLong "ULP Message Length" when the message
// has 2^32 octets or more (R5041-5.2 "MUST be less than 2^32").
Result<std::vector<PlannedDdpSegment>> SegmentDdpMessage(const DdpSegmentHeader& first, ByteSpan message,
                                                         std::size_t mulpdu);

// Encodes each planned segment as one ULPDU.
std::vector<Bytes> EncodeDdpSegments(std::span<const PlannedDdpSegment> segments);

// Outcome of adding one segment to an UntaggedMessageAssembler.
enum class ReassemblyStatus : uint8_t {
  kAccepted,         // stored; the message is not complete yet
  kComplete,         // stored; the message is now complete
  kNotUntagged,      // T=1: not for this assembler
  kQueueMismatch,    // QN differs from the first segment's
  kMsnMismatch,      // MSN differs from the first segment's
  kBeyondLast,       // ends past the end of the L=1 segment, or after L=1 ends earlier
  kSecondLast,       // a second L=1 segment with a different end
  kTooLong,          // MO + length exceeds the assembler's capacity (buffer size)
  kAlreadyComplete,  // the message was already complete
};
const char* ReassemblyStatusName(ReassemblyStatus s);

// REQ R5041-5.3-03 R5041-5.3-04 R5041-4.1-07
// Collects the segments of ONE untagged DDP message (one QN/MSN). Rejected
// segments leave the state unchanged. Octets received twice (overlapping MO
// ranges) are accepted and placed again (R5041-5.3-04 MAY Place a segment more
// than once); duplicate_octets() counts them.
class UntaggedMessageAssembler {
 public:
  // `capacity`: largest message accepted (e.g. the posted receive buffer).
  explicit UntaggedMessageAssembler(uint32_t capacity = 16u << 20) : capacity_(capacity) {}

  ReassemblyStatus Add(const DdpSegmentHeader& header, ByteSpan payload);
  ReassemblyStatus Add(const DdpSegmentView& seg) { return Add(seg.header, seg.payload); }

  bool started() const { return started_; }
  bool complete() const { return complete_; }
  uint32_t queue_number() const { return queue_number_; }
  uint32_t msn() const { return msn_; }
  // Known once the L=1 segment has arrived.
  std::optional<uint32_t> message_length() const { return message_length_; }
  uint64_t octets_received() const { return octets_received_; }  // distinct octets
  uint64_t duplicate_octets() const { return duplicate_octets_; }
  // RsvdULP octets of the MO=0 segment (RDMAP Control Field and Invalidate
  // STag), if it has arrived.
  std::optional<DdpSegmentHeader> first_segment_header() const { return first_header_; }

  // The reassembled message; meaningful once complete().
  ByteSpan message() const { return ByteSpan(data_.data(), message_length_.value_or(0)); }
  Bytes TakeMessage();
  void Reset();

 private:
  uint64_t Insert(uint64_t begin, uint64_t end);  // returns newly covered octets

  uint32_t capacity_;
  bool started_ = false;
  bool complete_ = false;
  uint32_t queue_number_ = 0;
  uint32_t msn_ = 0;
  std::optional<uint32_t> message_length_;
  std::optional<DdpSegmentHeader> first_header_;
  uint64_t octets_received_ = 0;
  uint64_t duplicate_octets_ = 0;
  uint64_t highest_end_ = 0;
  std::map<uint64_t, uint64_t> ranges_;  // begin -> end of received, merged ranges
  Bytes data_;
};

}  // namespace rdmapct::wire
