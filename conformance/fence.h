// The suite's fence (docs/target-convention.md §2.5): what one connection's
// stream tells about whether a fence may end a wait, and the fence answers
// to take out of the frame and event queues. The case driver decides when
// to fence (case_driver_fence.cc); the connection feeds this tracker every
// ULPDU the suite frames and every one the target sends.
//
// Why the answer is ordered: a zero-length RDMA Read Request is answered by
// a zero-length Read Response (R5040-5.2.1-15); Read Requests are processed
// only after they are Delivered, in order (R5040-5.5-R12), and Read
// Responses go out in request order (R5040-5.2.2-07). So its Read Response
// follows every Terminate and response that earlier messages caused. A Send
// is Delivered after every earlier message (R5040-5.5-R10) and the test ULP
// posts Event Records in completion order (convention §6.1), so a fence
// Send's Event Record follows every record that earlier messages caused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "reference/wire/bytes.h"
#include "reference/wire/profile.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::conformance {

// The Data Sink STag of the suite's fence Read Requests (the fuzzer's too);
// the Sink TO is the fence's number on the connection, from 0.
inline constexpr uint32_t kFenceSinkStag = 0x5117fe0c;
// The payload of a fence Send (its Event Record repeats it).
inline constexpr uint8_t kFenceSendPayload[] = {'F', 'N', 'C', 'E'};

class FenceTracker {
 public:
  explicit FenceTracker(wire::Profile profile) : profile_(profile) {}

  // Every ULPDU the suite frames; `modified`: the case corrupts its framing.
  void OnSent(wire::ByteSpan ulpdu, bool modified);
  // Octets that are no FPDU the suite framed (raw TCP, a hand-built FPDU).
  void Taint(const std::string& why) {
    if (blocked_.empty()) blocked_ = why;
  }
  // A frame from the target: true when it is a fence's Read Response (the
  // connection drops it from the frame queue).
  bool OnReceivedFrame(const wire::RdmapMessageView& v);
  // An Event Record: true when it is the fence Send's (dropped likewise).
  bool OnReceivedEvent(const std::optional<wire::EventRecord>& e);

  // "" when the stream lets a fence be answered (whole FPDUs only, no
  // Terminate from the suite, at least one FPDU sent), else why not.
  std::string Blocked() const;
  // Requests (QN 1) sent whose last response segment has not come.
  uint32_t RequestsOutstanding() const { return requests_sent_ - responses_seen_; }
  // The next QN 0 MSN when every QN 0 message so far was whole and in MSN
  // order (so a fence Send takes exactly that MSN), else nullopt.
  std::optional<uint32_t> NextQn0Msn() const;

  // A fence Read Request is about to go out: its Sink TO.
  uint64_t NextReadFence() { return reads_sent_++; }
  void ExpectSendFence() { send_fence_pending_ = true; }
  uint32_t reads_answered() const { return reads_answered_; }
  uint32_t reads_sent() const { return static_cast<uint32_t>(reads_sent_); }
  uint32_t sends_answered() const { return sends_answered_; }
  // "" unless a fence Read was answered other than R5040-5.2.1-15 says:
  // then no fence of this connection can end a wait.
  const std::string& broken() const { return broken_; }

 private:
  wire::Profile profile_;
  std::string blocked_;
  uint32_t fpdus_sent_ = 0;
  uint32_t requests_sent_ = 0;
  uint32_t responses_seen_ = 0;
  uint32_t qn0_messages_ = 0;  // QN 0 messages whose L=1 segment went out
  bool qn0_open_ = false;      // a QN 0 message started and not ended
  bool qn0_irregular_ = false;
  uint64_t reads_sent_ = 0;
  uint32_t reads_answered_ = 0;
  bool send_fence_pending_ = false;
  std::string broken_;
  uint32_t sends_answered_ = 0;
};

}  // namespace rdmapct::conformance
