// replay::SegmentAudit on conversations built segment by segment (no
// file): each test breaks (or keeps) one RFC rule and checks what the audit
// reports - the requirement id, the side, the frame - and that a correct
// exchange is not reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capture/tcp_reassembly.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"
#include "reference/wire/ulp_convention.h"
#include "replay/audit.h"

namespace rdmapct::replay {
namespace {

using wire::Bytes;
using wire::Opcode;
constexpr int kInitiator = 0, kResponder = 1;  // the client sends the MPA Request
constexpr uint32_t kRegion = 0x1A01;

Bytes Advertisement(uint16_t ird = 4) {
  wire::Advertisement adv;
  adv.ird = ird;
  adv.ord = 4;
  adv.receive_buffer_count = 4;
  adv.receive_buffer_size = 256;
  wire::AdvertisedRegion r;
  r.stag = kRegion;
  r.length = 4096;
  r.access = wire::kAccessRemoteRead | wire::kAccessRemoteWrite | wire::kAccessRemoteAtomic;
  adv.regions.push_back(r);
  Bytes out;
  EXPECT_TRUE(wire::EncodeAdvertisement(adv, out).ok());
  return out;
}

// One TCP connection, one segment per call, frames numbered from 1.
class Conversation {
 public:
  explicit Conversation(const Bytes& reply_private_data = {}, const AuditOptions& options = {}) : audit_(options) {
    wire::MpaStartupFrame req;
    req.crc_required = true;
    Data(kInitiator, wire::EncodeMpaStartupFrame(req));
    wire::MpaStartupFrame rep = req;
    rep.is_reply = true;
    rep.private_data = reply_private_data;
    Data(kResponder, wire::EncodeMpaStartupFrame(rep));
  }
  struct NoHandshake {};
  explicit Conversation(NoHandshake) {}
  // Returns the capture frame of the segment.
  uint64_t Data(int from, const Bytes& payload) {
    capture::TcpSegment s;
    s.frame = ++frame_;
    s.source = ends_[from];
    s.destination = ends_[1 - from];
    s.seq = seq_[from];
    s.ack = seq_[1 - from];
    s.flags = capture::kTcpAck;
    s.payload = payload;
    seq_[from] += static_cast<uint32_t>(payload.size());
    audit_.Add(s);
    return frame_;
  }
  uint64_t Fpdu(int from, const wire::RdmapSegment& seg) {
    return Data(from, wire::EncodeFpdu(wire::EncodeSegment(seg)));
  }
  AuditReport Audit() { return audit_.Finish(); }

 private:
  SegmentAudit audit_;
  capture::Endpoint ends_[2] = {{{4, {10, 0, 0, 1}}, 49152}, {{4, {10, 0, 0, 2}}, 5040}};
  uint32_t seq_[2] = {1000, 5000};
  uint64_t frame_ = 0;
};

std::vector<std::string> Ids(const AuditReport& r) {
  std::vector<std::string> ids;
  for (const AuditFinding& f : r.findings) ids.push_back(f.requirement + " " + f.check);
  return ids;
}

const std::vector<uint8_t> kData(16, 0x42);

wire::RdmapSegment OutOfBoundsWrite() { return wire::MakeRdmaWrite(kRegion, 4090, kData); }

// A correct exchange of every common message: nothing to report.
TEST(Audit, CorrectExchangeIsClean) {
  Conversation c(Advertisement());
  c.Fpdu(kInitiator, wire::MakeRdmaWrite(kRegion, 0, kData));
  c.Fpdu(kInitiator, wire::MakeSend(Opcode::kSend, 1, kData));
  c.Fpdu(kInitiator, wire::MakeReadRequest(1, {0xAA01, 0x100, 32, kRegion, 64}));
  c.Fpdu(kResponder, wire::MakeReadResponse(0xAA01, 0x100, std::vector<uint8_t>(32, 1)));
  c.Fpdu(kResponder, wire::MakeSend(Opcode::kSend, 1, kData));
  const AuditReport r = c.Audit();
  EXPECT_TRUE(r.findings.empty()) << ::testing::PrintToString(Ids(r));
  ASSERT_EQ(r.connections.size(), 1u);
  EXPECT_TRUE(r.connections[0].advertisement);
  EXPECT_EQ(r.connections[0].segments[kInitiator], 3u);
  EXPECT_EQ(r.connections[0].segments[kResponder], 2u);
}

// R5041-7.1-G4 with the Terminate RFC 5040 Figure 10 asks for (1/1/0x01,
// M = D = 1 echoing the segment): only the Initiator's violation.
TEST(Audit, RightTerminateForABoundsErrorIsAccepted) {
  Conversation c(Advertisement());
  const wire::RdmapSegment w = OutOfBoundsWrite();
  const uint64_t frame = c.Fpdu(kInitiator, w);
  const uint16_t len = static_cast<uint16_t>(wire::EncodeSegment(w).size());
  c.Fpdu(kResponder,
         wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::TerminateCode{1, 1, 0x01}, &w.ddp, len, nullptr)));
  const AuditReport r = c.Audit();
  ASSERT_EQ(r.findings.size(), 1u) << ::testing::PrintToString(Ids(r));
  EXPECT_EQ(r.findings[0].requirement, "R5041-7.1-G4");
  EXPECT_EQ(r.findings[0].direction, kInitiator);
  EXPECT_EQ(r.findings[0].capture_frame, frame);
  EXPECT_EQ(r.findings[0].direction_name, "Initiator -> Responder");
}

// Without the Advertisement the region's bounds are unknown: the same Write
// is accepted (resources are inferred, never guessed).
TEST(Audit, WithoutAdvertisementUnknownRegionsAreNotJudged) {
  Conversation c;
  c.Fpdu(kInitiator, OutOfBoundsWrite());
  const AuditReport r = c.Audit();
  EXPECT_TRUE(r.findings.empty()) << ::testing::PrintToString(Ids(r));
  EXPECT_FALSE(r.connections[0].advertisement);
}

// R5040-4.8-03 / the accept-set: an RDMAP code for a DDP bounds error.
TEST(Audit, TerminateCodeOutsideTheAcceptSet) {
  Conversation c(Advertisement());
  const wire::RdmapSegment w = OutOfBoundsWrite();
  c.Fpdu(kInitiator, w);
  const uint16_t len = static_cast<uint16_t>(wire::EncodeSegment(w).size());
  const uint64_t frame =
      c.Fpdu(kResponder,
             wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::TerminateCode{0, 2, 0x06}, &w.ddp, len, nullptr)));
  const AuditReport r = c.Audit();
  ASSERT_EQ(r.findings.size(), 2u) << ::testing::PrintToString(Ids(r));
  EXPECT_EQ(r.findings[1].check, "terminate-code");
  EXPECT_EQ(r.findings[1].direction, kResponder);
  EXPECT_EQ(r.findings[1].capture_frame, frame);
  EXPECT_THAT(r.findings[1].detail, ::testing::HasSubstr("expected 1/1/0x01"));
}

// R5040-4.8-12: D = 1 but the echoed DDP header is not the offending one.
TEST(Audit, TerminateEchoingAnotherHeader) {
  Conversation c(Advertisement());
  const wire::RdmapSegment w = OutOfBoundsWrite();
  c.Fpdu(kInitiator, w);
  wire::DdpSegmentHeader other = w.ddp;
  other.tagged_offset = 0;
  const uint16_t len = static_cast<uint16_t>(wire::EncodeSegment(w).size());
  c.Fpdu(kResponder,
         wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::TerminateCode{1, 1, 0x01}, &other, len, nullptr)));
  EXPECT_THAT(Ids(c.Audit()),
              ::testing::ElementsAre("R5041-7.1-G4 tagged-base-or-bounds", "R5040-4.8-12 terminate-shape"));
}

// R5040-7.1-02: the Responder keeps streaming instead of Terminating.
TEST(Audit, MissingTerminate) {
  Conversation c(Advertisement());
  c.Fpdu(kInitiator, OutOfBoundsWrite());
  c.Fpdu(kResponder, wire::MakeSend(Opcode::kSend, 1, kData));
  const AuditReport r = c.Audit();
  ASSERT_EQ(r.findings.size(), 2u) << ::testing::PrintToString(Ids(r));
  EXPECT_EQ(r.findings[1].requirement, "R5040-7.1-02");
  EXPECT_EQ(r.findings[1].check, "terminate-missing");
  EXPECT_EQ(r.findings[1].direction, kResponder);
  EXPECT_EQ(r.findings[1].capture_frame, 0u);  // reported at the end of its stream
}

// R5040-4.4-02 (R5040-5.2.2-07): the second Read is answered first.
TEST(Audit, ReadResponsesOutOfOrder) {
  Conversation c;
  c.Fpdu(kInitiator, wire::MakeReadRequest(1, {0xAA01, 0, 16, 0xBB01, 0}));
  c.Fpdu(kInitiator, wire::MakeReadRequest(2, {0xAA02, 0, 16, 0xBB01, 0}));
  const uint64_t frame = c.Fpdu(kResponder, wire::MakeReadResponse(0xAA02, 0, kData));
  const AuditReport r = c.Audit();
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].requirement, "R5040-4.4-02");
  EXPECT_EQ(r.findings[0].direction, kResponder);
  EXPECT_EQ(r.findings[0].capture_frame, frame);
  for (const AuditFinding& f : r.findings) EXPECT_NE(f.check, "terminate-missing") << "the requester MAY check";
}

// R5040-5.4-10: a Send after the sender's own Terminate.
TEST(Audit, TrafficAfterOwnTerminate) {
  Conversation c;
  c.Fpdu(kResponder,
         wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::TerminateCode{0, 0, 0}, nullptr, 0, nullptr)));
  c.Fpdu(kInitiator, wire::MakeSend(Opcode::kSend, 1, kData));  // R5044-7.1.2-R04 needs the Initiator first...
  c.Fpdu(kResponder, wire::MakeSend(Opcode::kSend, 1, kData));
  const AuditReport r = c.Audit();
  ASSERT_EQ(r.findings.size(), 2u) << ::testing::PrintToString(Ids(r));
  EXPECT_EQ(r.findings[0].requirement, "R5044-7.1.2-R04");  // ...which it was not
  EXPECT_EQ(r.findings[1].requirement, "R5040-5.4-10");
  EXPECT_EQ(r.findings[1].direction, kResponder);
  EXPECT_EQ(r.findings[1].capture_frame, 5u);
}

// R5040-6.1-10 with the IRD the Responder advertised: two Reads outstanding at IRD 1.
TEST(Audit, AdvertisedIrdIsEnforced) {
  Conversation c(Advertisement(1));
  c.Fpdu(kInitiator, wire::MakeReadRequest(1, {0xAA01, 0, 16, kRegion, 0}));
  c.Fpdu(kInitiator, wire::MakeReadRequest(2, {0xAA01, 0, 16, kRegion, 0}));
  const AuditReport r = c.Audit();
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].check, "ird-exceeded");
  EXPECT_EQ(r.findings[0].direction, kInitiator);
}

// R5044-4.4-10: a wrong CRC is its sender's violation; the receiver owes 2/0/0x02.
TEST(Audit, BadCrcIsTheSendersViolationAndNeedsATerminate) {
  Conversation c;
  wire::FpduEncodeOptions o;
  o.crc_xor = 1;
  c.Data(kInitiator, wire::EncodeFpdu(wire::EncodeSegment(wire::MakeSend(Opcode::kSend, 1, kData)), o));
  c.Fpdu(kResponder, wire::MakeSend(Opcode::kSend, 1, kData));  // streams on instead of Terminating
  EXPECT_THAT(Ids(c.Audit()), ::testing::ElementsAre("R5044-4.4-10 llp-crc-error", "R5040-7.1-02 terminate-missing"));
}

// A capture that ends right after the error may have missed the Terminate:
// no verdict on it.
TEST(Audit, CaptureEndingAfterTheErrorDoesNotClaimAMissingTerminate) {
  Conversation c(Advertisement());
  c.Fpdu(kInitiator, OutOfBoundsWrite());
  EXPECT_THAT(Ids(c.Audit()), ::testing::ElementsAre("R5041-7.1-G4 tagged-base-or-bounds"));
}

// R5044-4.1-03: PAD octets the receiver ignores are still the sender's to zero.
TEST(Audit, NonZeroPadIsTheSendersViolation) {
  Conversation c;
  wire::FpduEncodeOptions o;
  o.pad_octet = 0xA5;
  const std::vector<uint8_t> odd(5, 1);  // 5-octet payload: PAD follows
  const uint64_t frame =
      c.Data(kResponder, wire::EncodeFpdu(wire::EncodeSegment(wire::MakeSend(Opcode::kSend, 1, odd)), o));
  const AuditReport r = c.Audit();
  std::vector<std::string> ids = Ids(r);
  EXPECT_THAT(ids, ::testing::Contains("R5044-4.1-03 mpa-pad"));
  for (const AuditFinding& f : r.findings) {
    if (f.check == "mpa-pad") {
      EXPECT_EQ(f.capture_frame, frame);
    }
  }
}

// R7306-8.2-05: an Atomic Request at a misaligned TO of an advertised region
// must be terminated; a target that executes and answers it owes the
// Terminate, and its Atomic Response answers nothing.
TEST(Audit, AnsweredMisalignedAtomicIsReported) {
  Conversation c(Advertisement());
  wire::AtomicRequestHeader a;
  a.atomic_opcode = static_cast<uint8_t>(wire::AtomicOpcode::kFetchAdd);
  a.request_identifier = 7;
  a.remote_stag = kRegion;
  a.remote_tagged_offset = 4;
  c.Fpdu(kInitiator, wire::MakeAtomicRequest(1, a));
  wire::AtomicResponseHeader resp;
  resp.original_request_identifier = 7;
  c.Fpdu(kResponder, wire::MakeAtomicResponse(1, resp));
  EXPECT_THAT(Ids(c.Audit()),
              ::testing::ElementsAre("R7306-8.2-05 atomic-misaligned", "R7306-5.2.1-S8 outbound-unsolicited-response",
                                     "R5040-7.1-02 terminate-missing"));
}

// The same request at an aligned TO, answered with the right Request
// Identifier, is clean; a wrong echo is R7306-5.2.2-S8.
TEST(Audit, AtomicResponseEchoIsChecked) {
  for (uint32_t echo : {7u, 8u}) {
    Conversation c(Advertisement());
    wire::AtomicRequestHeader a;
    a.request_identifier = 7;
    a.remote_stag = kRegion;
    a.remote_tagged_offset = 8;
    c.Fpdu(kInitiator, wire::MakeAtomicRequest(1, a));
    wire::AtomicResponseHeader resp;
    resp.original_request_identifier = echo;
    c.Fpdu(kResponder, wire::MakeAtomicResponse(1, resp));
    const std::vector<std::string> ids = Ids(c.Audit());
    if (echo == 7) {
      EXPECT_TRUE(ids.empty()) << ::testing::PrintToString(ids);
    } else {
      EXPECT_THAT(ids, ::testing::ElementsAre("R7306-5.2.2-S8 outbound-response-mismatch"));
    }
  }
}

// R5044-7.1.2-R02a: the Reply starts while the Request is still incomplete.
TEST(Audit, ReplyBeforeTheRequestIsComplete) {
  Conversation c{Conversation::NoHandshake{}};
  wire::MpaStartupFrame req;
  req.crc_required = true;
  const Bytes request = wire::EncodeMpaStartupFrame(req);
  c.Data(kInitiator, Bytes(request.begin(), request.begin() + 10));
  wire::MpaStartupFrame rep = req;
  rep.is_reply = true;
  const uint64_t reply = c.Data(kResponder, wire::EncodeMpaStartupFrame(rep));
  c.Data(kInitiator, Bytes(request.begin() + 10, request.end()));
  const AuditReport r = c.Audit();
  ASSERT_EQ(r.findings.size(), 1u) << ::testing::PrintToString(Ids(r));
  EXPECT_EQ(r.findings[0].requirement, "R5044-7.1.2-R02a");
  EXPECT_EQ(r.findings[0].direction, kResponder);
  EXPECT_EQ(r.findings[0].capture_frame, reply);
}

// Issue 16: the audit streams. A conversation 20 times the out-of-order
// cap, in which the Initiator sends most of the time and the Responder now
// and then, is audited whole while the octets held stay within the
// windows (the histories kept for retransmissions, an FPDU per direction,
// and the ULPDUs waiting for their turn in capture order).
TEST(AuditMemory, AConversationManyTimesTheCapIsAuditedWithinItsWindows) {
  AuditOptions options;
  options.reassembly.max_out_of_order = std::size_t{1} << 20;
  options.reassembly.history = std::size_t{64} << 10;
  Conversation c(Advertisement(), options);
  const std::vector<uint8_t> block(1024, 0x42);
  constexpr int kWrites = 20480;
  int reads = 0;
  for (int n = 0; n < kWrites; ++n) {
    c.Fpdu(kInitiator, wire::MakeRdmaWrite(kRegion, 1024 * (n % 4), block));
    if (n % 512 == 511) {
      c.Fpdu(kInitiator, wire::MakeReadRequest(++reads, {0xAA01, 0, 1024, kRegion, 0}));
      c.Fpdu(kResponder, wire::MakeReadResponse(0xAA01, 0, block));
    }
  }
  const AuditReport r = c.Audit();
  EXPECT_TRUE(r.findings.empty()) << ::testing::PrintToString(Ids(r));
  ASSERT_EQ(r.connections.size(), 1u);
  EXPECT_EQ(r.connections[0].segments[kInitiator], static_cast<uint64_t>(kWrites + reads));
  EXPECT_EQ(r.connections[0].segments[kResponder], static_cast<uint64_t>(reads));
  EXPECT_GT(r.octets, 20 * options.reassembly.max_out_of_order);
  EXPECT_LE(r.peak_buffered_octets, 4 * options.reassembly.history + 4 * 2048);
  EXPECT_LE(r.peak_waiting_octets, 4 * 2048u);
}

}  // namespace
}  // namespace rdmapct::replay
