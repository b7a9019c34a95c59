// The reference target as MPA Initiator (targets/reference_initiator.cc,
// docs/target-convention.md §10), driven octet by octet as the listening
// suite drives it.
#include <gtest/gtest.h>

#include <thread>

#include "reference/wire/mpa.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"
#include "reference/wire/ulp_convention_directive.h"
#include "targets/reference_target.h"

namespace rdmapct::targets {
namespace {

using wire::Bytes;

wire::MpaStartupFrame RequestOf(const Bytes& out) {
  auto r = wire::DecodeMpaStartupFrame(out, {.expect = wire::MpaFrameKind::kRequest});
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : wire::MpaStartupFrame{};
}

Bytes Reply(const wire::MpaStartupFrame& request, bool crc, bool reject = false) {
  wire::MpaStartupFrame f;
  f.is_reply = true;
  f.crc_required = crc;
  f.reject = reject;
  f.revision = request.revision;
  return wire::EncodeMpaStartupFrame(f);
}

// The ULPDUs of what the target sent after its Request.
std::vector<Bytes> Fpdus(wire::ByteSpan octets, bool crc) {
  std::vector<Bytes> out;
  wire::MpaDeframerConfig cfg;
  cfg.crc_enabled = crc;
  cfg.wait_for_full_operation = false;
  wire::MpaDeframer d(cfg);
  EXPECT_TRUE(d.Feed(octets, [&](const wire::MpaFpdu& f) { out.emplace_back(f.ulpdu.begin(), f.ulpdu.end()); }).ok());
  return out;
}

TEST(ReferenceInitiator, RequestCarriesTheAdvertisementAndNothingFollowsIt) {
  ReferenceTarget target;
  auto s = target.Connect();
  Bytes out;
  s->Start(out);
  const wire::MpaStartupFrame req = RequestOf(out);
  EXPECT_EQ(out.size(), req.EncodedSize());  // R5044-7.1.2-R03a: nothing before the Reply
  EXPECT_EQ(req.revision, 1);
  EXPECT_FALSE(req.enhanced);  // R6581-10-04 by default
  EXPECT_TRUE(req.crc_required);
  auto adv = wire::DecodeAdvertisement(req.private_data);
  ASSERT_TRUE(adv.ok());
  EXPECT_EQ(adv->connection_serial, 1u);
  EXPECT_EQ(s->phase(), ConnectionPhase::kAwaitingReply);
}

TEST(ReferenceInitiator, AcceptingReplyWithCrcGetsTheHelloWithACrc) {
  ReferenceTargetConfig c;
  c.initiator.crc = false;
  ReferenceTarget target(c);
  auto s = target.Connect();
  Bytes out;
  s->Start(out);
  const wire::MpaStartupFrame req = RequestOf(out);
  EXPECT_FALSE(req.crc_required);
  out.clear();
  s->OnBytes(Reply(req, true), out);  // R5044-7.1.1-12: C=1 in either frame
  const std::vector<Bytes> fpdus = Fpdus(out, true);
  ASSERT_EQ(fpdus.size(), 1u);
  auto v = wire::DecodeRdmapSegment(fpdus[0], wire::Profile::kRfc5040);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->opcode(), wire::Opcode::kRdmaWrite);
  EXPECT_EQ(v->ddp.header.stag, 0u);
  EXPECT_TRUE(v->ulp_payload.empty());
}

TEST(ReferenceInitiator, RejectWithDirectiveShapesTheNextRequestOnly) {
  ReferenceTarget target;
  auto s = target.Connect();
  Bytes out;
  s->Start(out);
  const wire::MpaStartupFrame req = RequestOf(out);
  wire::MpaStartupFrame reject;
  reject.is_reply = true;
  reject.reject = true;
  wire::ConnectDirective d;
  d.flags = wire::kDirectiveEnhanced | wire::kDirectivePeerToPeer | wire::kDirectiveSendRtr;
  d.ird = 4;
  d.ord = 2;
  wire::EncodeConnectDirective(d, reject.private_data);
  out.clear();
  s->OnBytes(wire::EncodeMpaStartupFrame(reject), out);
  EXPECT_TRUE(out.empty());  // R5044-7.1.2-R03c: no FPDU after R=1
  EXPECT_TRUE(s->wants_close());
  EXPECT_EQ(s->close_reason(), CloseReason::kReplyRejected);

  auto next = target.Connect();
  Bytes out2;
  next->Start(out2);
  const wire::MpaStartupFrame r2 = RequestOf(out2);
  ASSERT_TRUE(r2.enhanced_data);
  EXPECT_EQ(r2.revision, 2);
  EXPECT_FALSE(r2.crc_required);
  EXPECT_TRUE(r2.enhanced_data->peer_to_peer);
  EXPECT_TRUE(r2.enhanced_data->send_rtr);
  EXPECT_FALSE(r2.enhanced_data->write_rtr);
  EXPECT_EQ(r2.enhanced_data->ird, 4);
  EXPECT_EQ(r2.enhanced_data->ord, 2);

  auto third = target.Connect();
  Bytes out3;
  third->Start(out3);
  EXPECT_FALSE(RequestOf(out3).enhanced_data);
}

TEST(ReferenceInitiator, BadReplyKeyClosesWithoutAnFpdu) {
  ReferenceTarget target;
  auto s = target.Connect();
  Bytes out;
  s->Start(out);
  Bytes reply = Reply(RequestOf(out), true);
  reply[15] ^= 0x20;
  out.clear();
  s->OnBytes(reply, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(s->close_reason(), CloseReason::kBadReply);
}

TEST(ReferenceInitiator, NoReplyTimesOut) {
  ReferenceTargetConfig c;
  c.initiator.reply_timeout = std::chrono::milliseconds(500);
  ReferenceTarget target(c);
  auto s = target.Connect();
  Bytes out;
  s->Start(out);
  ASSERT_TRUE(s->timer());
  s->OnTimer(*s->timer() - std::chrono::milliseconds(1), out);
  EXPECT_FALSE(s->wants_close());
  s->OnTimer(*s->timer(), out);
  EXPECT_EQ(s->close_reason(), CloseReason::kReplyTimeout);
  EXPECT_FALSE(s->timer());
}

TEST(ReferenceInitiator, ReplyOrdBeyondItsIrdGetsTerm206) {
  ReferenceTargetConfig c;
  c.initiator.rfc6581 = true;
  ReferenceTarget target(c);
  auto s = target.Connect();
  Bytes out;
  s->Start(out);
  const wire::MpaStartupFrame req = RequestOf(out);
  ASSERT_TRUE(req.enhanced_data);
  wire::MpaStartupFrame f;
  f.is_reply = true;
  f.crc_required = true;
  f.revision = 2;
  f.enhanced = true;
  f.enhanced_data = wire::EnhancedIrdOrd{.ird = 8, .ord = 0x3FFE};
  out.clear();
  s->OnBytes(wire::EncodeMpaStartupFrame(f), out);
  const std::vector<Bytes> fpdus = Fpdus(out, true);
  ASSERT_EQ(fpdus.size(), 1u);
  auto v = wire::DecodeRdmapSegment(fpdus[0], wire::Profile::kRfc5040);
  ASSERT_TRUE(v.ok());
  const auto* t = std::get_if<wire::TerminateHeader>(&v->header);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->code, wire::MakeTerminateCode(wire::MpaErrorCode::kInsufficientIrdResources));
  EXPECT_TRUE(s->wants_close());
}

}  // namespace
}  // namespace rdmapct::targets
