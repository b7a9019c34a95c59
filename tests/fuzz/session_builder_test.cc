// fuzz/session_builder: a hand-written session becomes exactly the frames a
// valid Initiator writes (MSNs per queue, lengths, CRCs), overrides and
// framing corruptions change exactly their field, Delivery cuts writes.
#include "fuzz/session_builder.h"

#include <gtest/gtest.h>

#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::fuzz {
namespace {

using wire::Bytes;

SessionContext Context() {
  SessionContext c;
  wire::AdvertisedRegion rw;
  rw.stag = 0x00001a01;
  rw.base_tagged_offset = 0x10000;
  rw.length = 0x1000;
  rw.access = wire::kAccessRemoteRead | wire::kAccessRemoteWrite;
  c.advertisement.regions.push_back(rw);
  return c;
}

proto::SessionAction MessageAction(proto::SessionMessageType type) {
  proto::SessionAction a;
  a.mutable_message()->set_type(type);
  return a;
}

Bytes Concat(const std::vector<SessionWrite>& w) {
  Bytes out;
  for (const SessionWrite& x : w) out.insert(out.end(), x.octets.begin(), x.octets.end());
  return out;
}

TEST(SessionBuilder, SendIsByteExact) {
  proto::FuzzSession s;
  *s.add_action() = MessageAction(proto::SEND);
  const auto writes = BuildSessionWrites(s, Context());
  ASSERT_EQ(writes.size(), 1u);
  // ULPDU_Length 18, untagged DDP header (T=0 L=1 DV=1), RV=1 Send,
  // Invalidate STag 0, QN 0, MSN 1, MO 0; no PAD; CRC32c over all of it.
  Bytes expected = {0x00, 0x12, 0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
  const uint32_t crc = wire::Crc32c(expected);
  expected.resize(expected.size() + 4);
  wire::StoreCrc32c(expected.data() + 20, crc);
  EXPECT_EQ(writes[0].octets, expected);
}

TEST(SessionBuilder, ValidSessionMatchesTheWireEncoders) {
  proto::FuzzSession s;
  proto::SessionAction w = MessageAction(proto::RDMA_WRITE);
  w.mutable_message()->set_offset(16);
  w.mutable_message()->set_payload_size(9);
  w.mutable_message()->set_payload_seed(3);
  *s.add_action() = w;
  *s.add_action() = MessageAction(proto::READ_REQUEST);
  proto::SessionAction rr = MessageAction(proto::READ_REQUEST);
  rr.mutable_message()->set_length(100);
  *s.add_action() = rr;
  proto::SessionAction send = MessageAction(proto::SEND_SE);
  send.mutable_message()->set_payload_size(5);
  *s.add_action() = send;

  const Bytes payload = SessionFiller(9, 3);
  Bytes expected;
  wire::AppendFpdu(expected, wire::EncodeSegment(wire::MakeRdmaWrite(0x1a01, 0x10010, payload)));
  wire::AppendFpdu(expected, wire::EncodeSegment(wire::MakeReadRequest(1, {kSuiteSinkStag, 0, 64, 0x1a01, 0x10000})));
  wire::AppendFpdu(expected,
                   wire::EncodeSegment(wire::MakeReadRequest(2, {kSuiteSinkStag, 0x10000, 100, 0x1a01, 0x10000})));
  const Bytes sp = SessionFiller(5, 0);
  wire::AppendFpdu(expected, wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSendWithSe, 1, sp)));
  EXPECT_EQ(Concat(BuildSessionWrites(s, Context())), expected);
}

TEST(SessionBuilder, OverridesChangeTheirFieldOnly) {
  proto::FuzzSession s;
  proto::SessionAction a = MessageAction(proto::SEND);
  a.mutable_message()->mutable_overrides()->set_msn_delta(-1);
  a.mutable_message()->mutable_overrides()->set_queue_number(7);
  a.mutable_message()->mutable_overrides()->set_rdma_version(2);
  *s.add_action() = a;
  *s.add_action() = MessageAction(proto::SEND);  // MSN 2: the queue advanced anyway
  wire::RdmapSegment first = wire::MakeSend(wire::Opcode::kSend, 0, {});
  first.ddp.queue_number = 7;
  first.ddp.rsvd_ulp0 = 0x83;
  Bytes expected;
  wire::AppendFpdu(expected, wire::EncodeSegment(first));
  wire::AppendFpdu(expected, wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, 2, {})));
  EXPECT_EQ(Concat(BuildSessionWrites(s, Context())), expected);
}

TEST(SessionBuilder, FramingCorruptions) {
  proto::FuzzSession s;
  proto::SessionAction a = MessageAction(proto::SEND);
  a.mutable_message()->set_payload_size(1);  // 19-octet ULPDU: 3 PAD octets
  a.mutable_framing()->set_crc_xor(1);
  a.mutable_framing()->set_pad_octet(0xAA);
  a.mutable_framing()->set_ulpdu_length_delta(4);
  *s.add_action() = a;
  const Bytes out = Concat(BuildSessionWrites(s, Context()));
  ASSERT_EQ(out.size(), 2u + 19 + 3 + 4);
  EXPECT_EQ(wire::LoadBe16(out.data()), 19 + 4);
  EXPECT_EQ(out[21], 0xAA);
  EXPECT_EQ(out[23], 0xAA);
  EXPECT_EQ(wire::LoadCrc32c(out.data() + 24), wire::Crc32c(wire::ByteSpan(out).first(24)) ^ 1);
}

TEST(SessionBuilder, DeliveryCutsAndHoldsWrites) {
  proto::FuzzSession s;
  proto::SessionAction a = MessageAction(proto::SEND);
  a.mutable_delivery()->add_split(5);
  a.mutable_delivery()->add_split(3);
  a.mutable_delivery()->set_hold(true);
  *s.add_action() = a;
  *s.add_action() = MessageAction(proto::SEND);
  proto::SessionAction raw;
  raw.set_raw("xyz");
  *s.add_action() = raw;
  const auto writes = BuildSessionWrites(s, Context());
  ASSERT_EQ(writes.size(), 4u);
  EXPECT_EQ(writes[0].octets.size(), 5u);
  EXPECT_EQ(writes[1].octets.size(), 3u);
  EXPECT_EQ(writes[2].octets.size(), 24u - 8 + 24);  // the held rest with the next action
  EXPECT_EQ(writes[2].action, 1u);
  EXPECT_EQ(writes[3].octets, (Bytes{'x', 'y', 'z'}));
}

TEST(SessionBuilder, RepeatIsABurstWithFreshMsnsAndSinks) {
  proto::FuzzSession s;
  proto::SessionAction a = MessageAction(proto::READ_REQUEST);
  a.set_repeat(2);
  *s.add_action() = a;
  Bytes expected;
  for (uint32_t k = 0; k < 3; ++k) {
    wire::AppendFpdu(expected, wire::EncodeSegment(wire::MakeReadRequest(
                                   k + 1, {kSuiteSinkStag, uint64_t{k} << 16, 64, 0x1a01, 0x10000})));
  }
  const auto writes = BuildSessionWrites(s, Context());
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].octets, expected);
}

TEST(SessionBuilder, RequestFollowsTheConnection) {
  proto::FuzzSession s;
  s.mutable_connection()->set_crc_off(true);
  s.mutable_connection()->set_markers(true);
  s.mutable_connection()->set_enhanced(true);
  s.mutable_connection()->set_ird(3);
  s.mutable_connection()->set_rtr_flags(2);
  const wire::MpaStartupFrame r = BuildRequest(s);
  EXPECT_FALSE(r.crc_required);
  EXPECT_TRUE(r.marker_required);
  EXPECT_EQ(r.revision, 2);
  ASSERT_TRUE(r.enhanced_data.has_value());
  EXPECT_EQ(r.enhanced_data->ird, 3);
  EXPECT_TRUE(r.enhanced_data->send_rtr);
}

}  // namespace
}  // namespace rdmapct::fuzz
