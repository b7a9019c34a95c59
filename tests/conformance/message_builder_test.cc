// Message templates: valid defaults from the Advertisement and the stream
// state, overrides of any header field, segmentation, payload fills, and
// the case errors a template can contain.
#include "conformance/message_builder.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "reference/wire/ddp.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::conformance {
namespace {

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr uint8_t kRW = wire::kAccessRemoteRead | wire::kAccessRemoteWrite;

class MessageBuilderTest : public ::testing::Test {
 protected:
  MessageBuilderTest() {
    adv_.ird = 4;
    adv_.receive_buffer_count = 4;
    adv_.receive_buffer_size = 1024;
    adv_.regions = {{0x1a01, 0x10000, 8192, kRW, 0, 1, 0},
                    {0x1b02, 0x20000, 1024, wire::kAccessRemoteRead, 0, 1, 8192},
                    {0x2e05, 0x30000, 1024, kRW, wire::kAttrInvalidatable, 2, 0}};
    regions_ = RegionMap(adv_, proto::Needs{});
    ctx_.profile = wire::Profile::kRfc5040;
    ctx_.regions = &regions_;
    ctx_.state = &state_;
  }

  std::optional<BuiltMessage> Build(const std::string& text) {
    proto::Send send;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &send)) << text;
    error_.clear();
    return BuildMessage(send, ctx_, error_);
  }
  static wire::DdpSegmentView Ddp(const wire::Bytes& ulpdu) { return wire::DecodeDdpSegment(ulpdu).value(); }
  static wire::RdmapMessageView Rdmap(const wire::Bytes& ulpdu) {
    return wire::DecodeRdmapSegment(ulpdu, wire::Profile::kRfc5040).value();
  }

  wire::Advertisement adv_;
  RegionMap regions_;
  SendState state_;
  BuildContext ctx_;
  std::string error_;
};

TEST_F(MessageBuilderTest, WriteDefaultsComeFromTheRegion) {
  auto m = Build(
      R"pb(label: "w" message { type: RDMA_WRITE remote { region: RW offset: 1000 } payload { text: "abc" } })pb");
  ASSERT_TRUE(m) << error_;
  ASSERT_EQ(m->ulpdus.size(), 1u);
  const wire::RdmapMessageView v = Rdmap(m->ulpdus[0]);
  EXPECT_TRUE(v.ddp.header.tagged);
  EXPECT_TRUE(v.ddp.header.last);
  EXPECT_EQ(v.ddp.header.ddp_version, 1);
  EXPECT_EQ(v.ctrl.rdma_version, 1);
  EXPECT_EQ(v.opcode(), wire::Opcode::kRdmaWrite);
  EXPECT_EQ(v.ddp.header.stag, 0x1a01u);
  EXPECT_EQ(v.ddp.header.tagged_offset, 0x10000u + 1000);
  EXPECT_EQ(wire::Bytes(v.ulp_payload.begin(), v.ulp_payload.end()), (wire::Bytes{'a', 'b', 'c'}));
  EXPECT_EQ(m->sent.label, "w");
  EXPECT_EQ(m->sent.ulpdu_length, 14u + 3);
  EXPECT_EQ(m->sent.payload_length, 3u);
  EXPECT_EQ(m->sent.ddp_header_octets.size(), 14u);
  ASSERT_TRUE(m->write);
  EXPECT_EQ(m->write->memory_object, 1);
  EXPECT_EQ(m->write->object_offset, 1000u);
  // Not into a read-only region, and not when the case overrides fields.
  EXPECT_FALSE(Build(R"pb(message { type: RDMA_WRITE remote { region: RO } payload { text: "a" } })pb")->write);
  EXPECT_FALSE(Build(R"pb(message { type: RDMA_WRITE remote { region: RW } set { rv: 0 } })pb")->write);
}

// decisions D-G14: the target's EMSS is known within a range (a middlebox can
// give it a larger one than the suite sees); a length meant to exceed its
// MULPDU takes the largest, a length meant to fit takes the suite's own.
TEST_F(MessageBuilderTest, LengthFromMulpduTakesTheBoundThatCannotFailAConformingTarget) {
  ctx_.target_mulpdu = 1442;      // EMSS 1448, as the suite's connection reports
  ctx_.target_mulpdu_max = 1454;  // EMSS 1460, the configured bound
  auto size_of = [&](const char* text) {
    auto m = Build(text);
    EXPECT_TRUE(m) << error_;
    return m ? std::get<wire::ReadRequestHeader>(Rdmap(m->ulpdus[0]).header).read_message_size : 0u;
  };
  EXPECT_EQ(size_of(R"pb(message { type: RDMA_READ_REQUEST remote { region: RW } length_from_mulpdu {} })pb"),
            1442u - 14);
  EXPECT_EQ(size_of(R"pb(message { type: RDMA_READ_REQUEST remote { region: RW } length_from_mulpdu { delta: 1 } })pb"),
            1454u - 14 + 1);
  EXPECT_EQ(
      size_of(
          R"pb(message { type: RDMA_READ_REQUEST remote { region: RW } length_from_mulpdu { segments: 3 delta: 1 } })pb"),
      3 * (1454u - 14) + 1);
  ctx_.target_mulpdu_max = 0;  // no bound: the suite's own for both
  EXPECT_EQ(size_of(R"pb(message { type: RDMA_READ_REQUEST remote { region: RW } length_from_mulpdu { delta: 1 } })pb"),
            1442u - 14 + 1);
}

TEST_F(MessageBuilderTest, ReadRequestDefaultsAndNextMsn) {
  auto a = Build(R"pb(message { type: RDMA_READ_REQUEST remote { region: RO anchor: END offset: -16 } })pb");
  auto b = Build(R"pb(message { type: RDMA_READ_REQUEST remote { region: RO } length: 8 })pb");
  ASSERT_TRUE(a && b) << error_;
  const wire::RdmapMessageView va = Rdmap(a->ulpdus[0]), vb = Rdmap(b->ulpdus[0]);
  EXPECT_EQ(va.ddp.header.queue_number, 1u);
  EXPECT_EQ(va.ddp.header.msn, 1u);
  EXPECT_EQ(vb.ddp.header.msn, 2u);
  const auto& ha = std::get<wire::ReadRequestHeader>(va.header);
  EXPECT_EQ(ha.sink_stag, kSuiteSinkStag);
  EXPECT_EQ(ha.sink_tagged_offset, kSuiteSinkBase);
  EXPECT_EQ(ha.read_message_size, 64u);  // default RDMARDSZ
  EXPECT_EQ(ha.source_stag, 0x1b02u);
  EXPECT_EQ(ha.source_tagged_offset, 0x20000u + 1024 - 16);
  EXPECT_EQ(std::get<wire::ReadRequestHeader>(vb.header).sink_tagged_offset, kSuiteSinkBase + 64);
  ASSERT_TRUE(a->read && a->sent.read_request);
  EXPECT_EQ(a->read->size, 64u);
  EXPECT_EQ(a->sent.rdma_header_octets.size(), 28u);
  EXPECT_EQ(a->sent.ulpdu_length, 18u + 28);
}

TEST_F(MessageBuilderTest, ExplicitMsnDoesNotAdvanceTheQueue) {
  EXPECT_EQ(Ddp(Build(R"pb(message { type: SEND set { msn: 7 } })pb")->ulpdus[0]).header.msn, 7u);
  EXPECT_EQ(Ddp(Build(R"pb(message { type: SEND set { msn_delta: 1 } })pb")->ulpdus[0]).header.msn, 2u);
  EXPECT_EQ(Ddp(Build(R"pb(message { type: SEND })pb")->ulpdus[0]).header.msn, 1u);
  EXPECT_EQ(Ddp(Build(R"pb(message { type: SEND })pb")->ulpdus[0]).header.msn, 2u);
  EXPECT_EQ(state_.next_msn[0], 3u);
  EXPECT_EQ(state_.next_msn[1], 1u);
}

TEST_F(MessageBuilderTest, OverridesAnyHeaderField) {
  auto m = Build(
      R"pb(message { type: SEND set { rv: 2 dv: 0 rsvd: 5 queue_number: 9 message_offset: 4 invalidate_stag: 0x77 } })pb");
  ASSERT_TRUE(m) << error_;
  const wire::DdpSegmentHeader h = Ddp(m->ulpdus[0]).header;
  EXPECT_EQ(h.ddp_version, 0);
  EXPECT_EQ(h.rsvd, 5);
  EXPECT_EQ(h.queue_number, 9u);
  EXPECT_EQ(h.message_offset, 4u);
  EXPECT_EQ(h.invalidate_stag, 0x77u);
  EXPECT_EQ(h.rsvd_ulp0, 0x83);  // RV=10b, Rsv=0, opcode Send
  auto op = Build(R"pb(message { type: SEND set { opcode: 9 t: 1 l: 0 } })pb");
  ASSERT_TRUE(op) << error_;
  EXPECT_EQ(op->ulpdus[0][1] & 0x0F, 9);
  EXPECT_TRUE(Ddp(op->ulpdus[0]).header.tagged);
  EXPECT_FALSE(Ddp(op->ulpdus[0]).header.last);
  auto rr = Build(
      R"pb(message { type: RDMA_READ_REQUEST remote { region: RW } set { read_message_size: 0 source_stag: 5 } })pb");
  const wire::ReadRequestHeader h2 = std::get<wire::ReadRequestHeader>(Rdmap(rr->ulpdus[0]).header);
  EXPECT_EQ(h2.read_message_size, 0u);
  EXPECT_EQ(h2.source_stag, 5u);
}

TEST_F(MessageBuilderTest, TerminateAndInvalidateTemplates) {
  auto t = Build(
      R"pb(message { type: TERMINATE set { terminate_layer: 1 terminate_etype: 2 terminate_error_code: 3 terminate_m: 1 ddp_segment_length: 22 } })pb");
  ASSERT_TRUE(t) << error_;
  const wire::RdmapMessageView v = Rdmap(t->ulpdus[0]);
  EXPECT_EQ(v.ddp.header.queue_number, 2u);
  const auto& th = std::get<wire::TerminateHeader>(v.header);
  EXPECT_EQ(th.code, (wire::TerminateCode{1, 2, 3}));
  EXPECT_TRUE(th.m);
  EXPECT_TRUE(th.has_segment_length);
  EXPECT_EQ(th.ddp_segment_length, 22);
  auto inv =
      Build(R"pb(message { type: SEND_WITH_INVALIDATE invalidate { region: INVALIDATABLE } payload { text: "x" } })pb");
  ASSERT_TRUE(inv) << error_;
  EXPECT_EQ(Ddp(inv->ulpdus[0]).header.invalidate_stag, 0x2e05u);
  auto raw = Build(R"pb(message { type: RDMA_READ_REQUEST set { rdmap_header_hex: "01 02 03" } })pb");
  ASSERT_TRUE(raw) << error_;
  EXPECT_EQ(raw->ulpdus[0].size(), 18u + 3);
  EXPECT_FALSE(raw->read);
}

TEST_F(MessageBuilderTest, CaseErrors) {
  EXPECT_FALSE(Build(R"pb(message { type: RDMA_WRITE remote { region: RW } set { sink_stag: 1 } })pb"));
  EXPECT_EQ(error_, "field sink_stag does not apply to RDMA Write");
  EXPECT_FALSE(Build(R"pb(message { type: RDMA_WRITE remote { region: FOREIGN } })pb"));
  EXPECT_EQ(error_, "the target advertises no region for role FOREIGN");
  EXPECT_FALSE(Build(R"pb(message { type: SEND payload { fill { length: 4 kind: COMPLEMENT_OF_PATTERN } } })pb"));
  EXPECT_TRUE(Contains(error_, "needs a destination region"));
  EXPECT_FALSE(
      Build(R"pb(message { type: SEND payload { text: "abc" } } segmentation { payload_size: 1 payload_size: 1 })pb"));
  EXPECT_TRUE(Contains(error_, "add up to 2, the message has 3 octets")) << error_;
  EXPECT_FALSE(Build(
      R"pb(message { type: SEND payload { text: "abc" } } segmentation { payload_size: 1 payload_size: 2 order: 0 order: 0 })pb"));
  EXPECT_TRUE(Contains(error_, "permutation")) << error_;
  EXPECT_FALSE(Build(R"pb(message {})pb"));
  EXPECT_FALSE(Build(R"pb(message { type: SEND payload { hex: "0g" } })pb"));
}

TEST_F(MessageBuilderTest, PayloadFillsAndLengthOverride) {
  auto c = Build(
      R"pb(message { type: RDMA_WRITE remote { region: RW offset: 300 } payload { fill { length: 4 kind: COMPLEMENT_OF_PATTERN } } })pb");
  ASSERT_TRUE(c) << error_;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(c->sent.ulp_payload[i], static_cast<uint8_t>(~wire::PatternByte(1, 300 + i)));
  auto k = Build(R"pb(message { type: SEND payload { fill { length: 3 kind: CONSTANT byte: 0x5a } } })pb");
  EXPECT_EQ(k->sent.ulp_payload, (wire::Bytes{0x5a, 0x5a, 0x5a}));
  auto n = Build(R"pb(message { type: SEND payload { fill { length: 3 byte: 0xfe } } })pb");
  EXPECT_EQ(n->sent.ulp_payload, (wire::Bytes{0xfe, 0xff, 0x00}));
  auto cut = Build(R"pb(message { type: SEND payload { text: "abcdef" } set { payload_length: 2 } })pb");
  EXPECT_EQ(cut->sent.ulp_payload, (wire::Bytes{'a', 'b'}));
  auto grow = Build(R"pb(message { type: SEND payload { text: "ab" } set { payload_length: 4 } })pb");
  EXPECT_EQ(grow->sent.ulp_payload, (wire::Bytes{'a', 'b', 2, 3}));
}

TEST_F(MessageBuilderTest, SegmentationByMulpdu) {
  auto m = Build(R"pb(message { type: SEND payload { fill { length: 300 } } } segmentation { mulpdu: 128 })pb");
  ASSERT_TRUE(m) << error_;
  ASSERT_EQ(m->ulpdus.size(), 3u);
  const uint32_t sizes[] = {110, 110, 80};
  const uint32_t mos[] = {0, 110, 220};
  for (int i = 0; i < 3; ++i) {
    const wire::DdpSegmentView v = Ddp(m->ulpdus[i]);
    EXPECT_EQ(v.payload.size(), sizes[i]);
    EXPECT_EQ(v.header.message_offset, mos[i]);
    EXPECT_EQ(v.header.last, i == 2);
    EXPECT_EQ(v.header.msn, 1u);
  }
  // A tagged message advances the TO.
  auto w = Build(
      R"pb(message { type: RDMA_WRITE remote { region: RW } payload { fill { length: 200 } } } segmentation { mulpdu: 114 })pb");
  ASSERT_EQ(w->ulpdus.size(), 2u);
  EXPECT_EQ(Ddp(w->ulpdus[1]).header.tagged_offset, 0x10000u + 100);
}

TEST_F(MessageBuilderTest, ExplicitSizesOrderAndSegmentOverrides) {
  auto m = Build(R"pb(message { type: SEND payload { fill { length: 300 } } }
                      segmentation { payload_size: 100 payload_size: 200 order: 1 order: 0
                                     segment { index: 0 set { l: 1 msn: 4 } } })pb");
  ASSERT_TRUE(m) << error_;
  ASSERT_EQ(m->ulpdus.size(), 2u);
  const wire::DdpSegmentView first = Ddp(m->ulpdus[0]), second = Ddp(m->ulpdus[1]);
  EXPECT_EQ(first.header.message_offset, 100u);  // segment 1 goes first
  EXPECT_TRUE(first.header.last);
  EXPECT_EQ(second.header.message_offset, 0u);
  EXPECT_TRUE(second.header.last);  // the premature L=1 of the override
  EXPECT_EQ(second.header.msn, 4u);
  EXPECT_EQ(m->sent.ddp_header.message_offset, 100u);  // the echo reference is the first sent
  EXPECT_FALSE(Build(R"pb(message { type: SEND } segmentation { segment { index: 3 } })pb"));
  EXPECT_FALSE(Build(R"pb(message { type: SEND } segmentation { segment { index: 0 set { sink_stag: 1 } } })pb"));
  EXPECT_EQ(error_, "field sink_stag cannot be overridden per segment");
}

TEST_F(MessageBuilderTest, RawOctetsAndPayloads) {
  std::string error;
  proto::RawBytes raw;
  raw.set_hex("de ad\nbe ef");
  EXPECT_EQ(RawOctets(raw, error), (wire::Bytes{0xde, 0xad, 0xbe, 0xef}));
  raw.set_hex("abc");
  EXPECT_FALSE(RawOctets(raw, error));
  proto::RegionRef ref;
  ref.set_stag(0x99);
  ref.set_tagged_offset(0xFFFFFFFFFFFFFFF0);
  const auto r = ResolveRef(ref, regions_, error);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stag, 0x99u);
  EXPECT_EQ(r->tagged_offset, 0xFFFFFFFFFFFFFFF0u);
  EXPECT_EQ(r->region, nullptr);
}

}  // namespace
}  // namespace rdmapct::conformance
