// The reference target driven octet by octet like the suite drives it:
// MPA Responder startup, Full Operation, Event Records, Terminates, Keep
// Memory and the previous-connection outcome.
#include "targets/reference_target.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/targets/target_test_util.h"

namespace rdmapct::targets {
namespace {

using testing::ComplementOfPattern;
using testing::Initiator;
using testing::InitiatorOptions;
using wire::Bytes;
using wire::Opcode;
using wire::RegionRole;

Bytes Text(const char* s) { return Bytes(s, s + std::strlen(s)); }

wire::TerminateHeader TerminateOf(const wire::RdmapMessageView& v) {
  EXPECT_EQ(v.opcode(), Opcode::kTerminate);
  EXPECT_FALSE(v.ddp.header.tagged);
  EXPECT_EQ(v.ddp.header.queue_number, 2u);
  const auto* t = std::get_if<wire::TerminateHeader>(&v.header);
  EXPECT_NE(t, nullptr);
  return t ? *t : wire::TerminateHeader{};
}

// ---------------------------------------------------------------------------
// Startup.

TEST(ReferenceTargetStartup, Rev1ReplyCarriesTheAdvertisementWithTheFullSuiteRegions) {
  ReferenceTarget target;
  Initiator init(target, {.revision = 1});
  ASSERT_TRUE(init.Start());
  const wire::MpaStartupFrame& reply = init.reply();
  EXPECT_TRUE(reply.is_reply);
  EXPECT_FALSE(reply.reject);
  EXPECT_EQ(reply.revision, 1);
  EXPECT_FALSE(reply.enhanced);  // R6581-10-03: unenhanced Request, unenhanced Reply
  EXPECT_FALSE(reply.enhanced_data.has_value());
  EXPECT_TRUE(reply.crc_required);  // RFC 5044 §4.4 default
  EXPECT_FALSE(reply.marker_required);
  EXPECT_EQ(reply.res, 0);
  const wire::Advertisement& adv = init.advertisement();
  EXPECT_EQ(adv.connection_serial, 1u);
  EXPECT_EQ(adv.ird, 8);
  EXPECT_EQ(adv.receive_buffer_count, 8);
  EXPECT_EQ(adv.receive_buffer_size, 4096u);
  EXPECT_TRUE(adv.flags & wire::kFlagKeepMemory);
  EXPECT_FALSE(adv.flags & wire::kFlagRfc7306);
  ASSERT_TRUE(adv.previous.has_value());
  EXPECT_EQ(adv.previous->outcome, wire::ConnectionOutcome::kNone);
  EXPECT_EQ(adv.regions.size(), 8u);  // the full suite's 7 and a shared one (§12)
  EXPECT_TRUE(wire::MissingForFullSuite(adv, false, false).empty());
  EXPECT_EQ(init.reference().phase(), ConnectionPhase::kAwaitingFirstFpdu);
}

TEST(ReferenceTargetStartup, EveryProfileAdvertisesWhatTheFullSuiteNeeds) {
  for (wire::Profile p : {wire::Profile::kRfc5040, wire::Profile::kRfc7306, wire::Profile::kCommit}) {
    ReferenceTarget target(ReferenceTargetConfig{.profile = p});
    Initiator init(target);
    ASSERT_TRUE(init.Start());
    const bool rfc7306 = p != wire::Profile::kRfc5040;
    const bool commit = p == wire::Profile::kCommit;
    for (const std::string& m : wire::MissingForFullSuite(init.advertisement(), rfc7306, commit)) {
      ADD_FAILURE() << wire::ProfileName(p) << ": missing " << m;
    }
    EXPECT_EQ((init.advertisement().flags & wire::kFlagRfc7306) != 0, rfc7306);
    EXPECT_EQ((init.advertisement().flags & wire::kFlagCommit) != 0, commit);
  }
}

// REQ R6581-10-01 R6581-9.1-06 R6581-9.2-15
TEST(ReferenceTargetStartup, Rev2EnhancedReplyStartsWithTheRfc6581Word) {
  ReferenceTarget target;
  Initiator init(target, {.revision = 2, .enhanced = wire::EnhancedIrdOrd{.ird = 4, .ord = 2}});
  ASSERT_TRUE(init.Start());
  const wire::MpaStartupFrame& reply = init.reply();
  EXPECT_EQ(reply.revision, 2);
  EXPECT_TRUE(reply.enhanced);
  ASSERT_TRUE(reply.enhanced_data.has_value());
  EXPECT_FALSE(reply.enhanced_data->peer_to_peer);
  EXPECT_EQ(reply.enhanced_data->ird, 8);  // the target's IRD (>= initiator ORD 2)
  EXPECT_EQ(reply.enhanced_data->ord, 4);  // at most the initiator's IRD
  // The Advertisement follows the word (offset 4 of the Private Data).
  EXPECT_TRUE(wire::HasAdvertisementMagic(wire::ByteSpan(reply.private_data)));
  EXPECT_EQ(init.advertisement().ird, 8);
  EXPECT_EQ(init.advertisement().ord, 4);
  wire::MpaStartupFrame request;
  request.revision = 2;
  request.enhanced_data = wire::EnhancedIrdOrd{.ird = 4, .ord = 2};
  const wire::IrdOrdOutcome o = wire::NegotiateIrdOrd(request, reply);
  EXPECT_TRUE(o.applies);
  EXPECT_FALSE(o.responder_ord_exceeds_initiator_ird);
  ASSERT_NE(init.reference().endpoint(), nullptr);
  EXPECT_EQ(init.reference().endpoint()->config().ird, 8u);
  EXPECT_EQ(init.reference().endpoint()->config().ord, 4u);
}

// REQ R6581-9.1-14 R6581-9.1-16
TEST(ReferenceTargetStartup, AllOnesIrdOrdIsAnsweredWithAllOnes) {
  ReferenceTarget target;
  Initiator init(
      target, {.revision = 2,
               .enhanced = wire::EnhancedIrdOrd{.ird = wire::kIrdOrdNotNegotiated, .ord = wire::kIrdOrdNotNegotiated}});
  ASSERT_TRUE(init.Start());
  EXPECT_EQ(init.reply().enhanced_data->ird, wire::kIrdOrdNotNegotiated);
  EXPECT_EQ(init.reply().enhanced_data->ord, wire::kIrdOrdNotNegotiated);
  // The local values stay as configured, and the Advertisement says so.
  EXPECT_EQ(init.advertisement().ird, 8);
  EXPECT_EQ(init.advertisement().ord, 8);
}

// REQ R6581-9.2-05 R6581-9.2-06 R6581-9.2-10
TEST(ReferenceTargetStartup, PeerToPeerRepliesWithSupportedRtrTypes) {
  ReferenceTarget all;
  Initiator a(all, {.revision = 2,
                    .enhanced = wire::EnhancedIrdOrd{.peer_to_peer = true, .send_rtr = true, .ird = 4, .ord = 4}});
  ASSERT_TRUE(a.Start());
  const wire::EnhancedIrdOrd& e = *a.reply().enhanced_data;
  EXPECT_TRUE(e.peer_to_peer);
  EXPECT_TRUE(e.send_rtr);
  EXPECT_FALSE(e.write_rtr);
  EXPECT_FALSE(e.read_rtr);

  ReferenceTargetConfig c;
  c.mpa.rtr_send = false;
  ReferenceTarget no_send(c);
  Initiator b(no_send, {.revision = 2,
                        .enhanced = wire::EnhancedIrdOrd{.peer_to_peer = true, .send_rtr = true, .ird = 4, .ord = 4}});
  ASSERT_TRUE(b.Start());
  const wire::EnhancedIrdOrd& f = *b.reply().enhanced_data;
  EXPECT_TRUE(f.peer_to_peer);
  EXPECT_FALSE(f.send_rtr);
  EXPECT_TRUE(f.write_rtr || f.read_rtr);  // at least one type it supports
}

// decisions D-H6: a Send RTR consumes buffer 1 and MSN 1 but is no ULP event.
TEST(ReferenceTargetStartup, SendRtrIsHiddenAndTheFirstEventIsSequenceOne) {
  ReferenceTarget target;
  Initiator init(
      target,
      {.revision = 2, .enhanced = wire::EnhancedIrdOrd{.peer_to_peer = true, .send_rtr = true, .ird = 4, .ord = 4}});
  ASSERT_TRUE(init.Start());
  EXPECT_TRUE(init.Send(wire::MakeSend(Opcode::kSend, 1, {})).empty());
  const Bytes hello = Text("hello");
  init.Send(wire::MakeSend(Opcode::kSend, 2, hello));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 1u);
  auto rec = wire::DecodeEventRecord(v[0].ulp_payload);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->sequence, 1u);
  EXPECT_EQ(rec->length, 5u);
}

// REQ R6581-9.1-05
// Initiator ORD 0 with only a Read RTR: the target still has IRD for it, and
// the RTR (a zero-length Read Request, QN 1 MSN 1) gets a zero-length Read
// Response.
TEST(ReferenceTargetStartup, ReadRtrIsAnsweredWithAZeroLengthReadResponse) {
  ReferenceTargetConfig c;
  c.ird = 0;
  ReferenceTarget target(c);
  Initiator init(
      target,
      {.revision = 2, .enhanced = wire::EnhancedIrdOrd{.peer_to_peer = true, .ird = 4, .read_rtr = true, .ord = 0}});
  ASSERT_TRUE(init.Start());
  EXPECT_TRUE(init.reply().enhanced_data->read_rtr);
  EXPECT_GE(init.reply().enhanced_data->ird, 1);
  init.Send(wire::MakeReadRequest(1, wire::ReadRequestHeader{.sink_stag = 0x77}));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].opcode(), Opcode::kRdmaReadResponse);
  EXPECT_EQ(v[0].ddp.header.stag, 0x77u);
  EXPECT_TRUE(v[0].ulp_payload.empty());
  EXPECT_TRUE(v[0].ddp.header.last);
}

// REQ R5044-7.1.2-R04 R5044-7.1.2-R02a
TEST(ReferenceTargetStartup, ResponderSendsNothingBeforeTheRequestIsCompleteNorBeforeTheFirstFpdu) {
  ReferenceTarget target;
  auto session = target.Accept();
  const Bytes request = wire::EncodeMpaStartupFrame(testing::MakeRequest({}));
  Bytes out;
  for (std::size_t i = 0; i + 1 < request.size(); ++i) {
    session->OnBytes(wire::ByteSpan(&request[i], 1), out);
    ASSERT_TRUE(out.empty()) << "octet " << i;
  }
  session->OnBytes(wire::ByteSpan(&request.back(), 1), out);
  auto reply = wire::DecodeMpaStartupFrame(out, {wire::MpaFrameKind::kReply});
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(out.size(), reply->EncodedSize());
  // Nothing more while the suite is silent, even for empty input.
  out.clear();
  session->OnBytes({}, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(session->phase(), ConnectionPhase::kAwaitingFirstFpdu);
}

// REQ R5044-7.1.2-R09c
TEST(ReferenceTargetStartup, OctetsAfterTheRequestAreTheFirstFpdu) {
  ReferenceTarget target;
  auto session = target.Accept();
  Bytes in = wire::EncodeMpaStartupFrame(testing::MakeRequest({}));
  const Bytes hello = Text("hello");
  wire::AppendFpdu(in, wire::EncodeSegment(wire::MakeSend(Opcode::kSend, 1, hello)));
  Bytes out;
  session->OnBytes(in, out);
  auto reply = wire::DecodeMpaStartupFrame(out, {wire::MpaFrameKind::kReply});
  ASSERT_TRUE(reply.ok());
  auto fpdu = wire::DecodeFpdu(wire::ByteSpan(out).subspan(reply->EncodedSize()), true);
  ASSERT_TRUE(fpdu.ok());
  auto seg = wire::DecodeRdmapSegment(fpdu->ulpdu, wire::Profile::kRfc5040);
  ASSERT_TRUE(seg.ok());
  EXPECT_EQ(seg->opcode(), Opcode::kSend);
  EXPECT_EQ(session->phase(), ConnectionPhase::kFullOperation);
}

// REQ R5044-7.1.1-03 R5044-7.1.2-R02b
TEST(ReferenceTargetStartup, WrongKeyClosesWithoutReplyAsSoonAsTheKeyDiffers) {
  ReferenceTarget target;
  auto session = target.Accept();
  Bytes request = wire::EncodeMpaStartupFrame(testing::MakeRequest({}));
  request[9] = 'p';  // "MPA ID Rep Frame": the Reply key
  Bytes out;
  session->OnBytes(wire::ByteSpan(request).first(10), out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(session->wants_close());
  EXPECT_EQ(session->close_reason(), CloseReason::kBadRequest);
  session->OnBytes(wire::ByteSpan(request).subspan(10), out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(session->buffered(), 0u);
}

// REQ R5044-7.1.1-22
TEST(ReferenceTargetStartup, PrivateDataAbove512ClosesAtTheHeader) {
  ReferenceTarget target;
  wire::MpaStartupFrame f = testing::MakeRequest({});
  f.private_data.assign(513, 0xAB);
  const Bytes request = wire::EncodeMpaStartupFrame(f);
  auto session = target.Accept();
  Bytes out;
  session->OnBytes(wire::ByteSpan(request).first(20), out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(session->wants_close());
  EXPECT_EQ(session->close_reason(), CloseReason::kBadRequest);

  f.private_data.assign(512, 0xAB);  // 512 is fine
  auto ok = target.Accept();
  ok->OnBytes(wire::EncodeMpaStartupFrame(f), out);
  EXPECT_TRUE(wire::DecodeMpaStartupFrame(out, {wire::MpaFrameKind::kReply}).ok());
  EXPECT_FALSE(ok->wants_close());
}

// REQ R5044-7.1.1-19 R6581-10-08 R6581-6-06
TEST(ReferenceTargetStartup, RevisionsOutsideThePolicyCloseWithoutReply) {
  ReferenceTarget target;
  for (uint8_t rev : {0, 3, 0xFF}) {
    Initiator init(target, {.revision = rev});
    Bytes out;
    init.reference().OnBytes(wire::EncodeMpaStartupFrame(testing::MakeRequest({.revision = rev})), out);
    EXPECT_TRUE(out.empty()) << int(rev);
    EXPECT_EQ(init.reference().close_reason(), CloseReason::kRevisionRejected);
  }
  ReferenceTargetConfig c;
  c.mpa.rfc6581 = false;
  ReferenceTarget plain(c);
  auto s = plain.Accept();
  Bytes out;
  s->OnBytes(wire::EncodeMpaStartupFrame(
                 testing::MakeRequest({.revision = 2, .enhanced = wire::EnhancedIrdOrd{.ird = 1, .ord = 1}})),
             out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(s->close_reason(), CloseReason::kEnhancedRejected);
  // Rev 1 still works (R6581-6-06), and so does Rev 2 without S.
  Initiator rev1(plain, {.revision = 1});
  EXPECT_TRUE(rev1.Start());
  Initiator rev2(plain, {.revision = 2});
  ASSERT_TRUE(rev2.Start());
  EXPECT_EQ(rev2.reply().revision, 2);
  EXPECT_FALSE(rev2.reply().enhanced);
}

TEST(ReferenceTargetStartup, Rev0WhenAllowedRunsVersion0DdpAndRdmap) {
  ReferenceTargetConfig c;
  c.mpa.accepted_revisions = {0, 1, 2};
  ReferenceTarget target(c);
  Initiator init(target, {.revision = 0});
  ASSERT_TRUE(init.Start());
  EXPECT_EQ(init.reply().revision, 0);
  EXPECT_EQ(init.reference().endpoint()->config().ddp_version, 0);
  EXPECT_EQ(init.reference().endpoint()->config().rdmap_version, 0);
}

// ---------------------------------------------------------------------------
// Full Operation.

// REQ R5040-5.2.1-03
TEST(ReferenceTargetFullOperation, WriteThenReadReturnsTheWrittenOctets) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const wire::AdvertisedRegion rw = init.Region(RegionRole::kReadWrite);
  const uint64_t to = rw.base_tagged_offset + 16;
  const Bytes data = ComplementOfPattern(rw, to, 2000);
  // A Write is Placed with no ULP event and no reply.
  EXPECT_TRUE(init.Send(wire::MakeRdmaWrite(rw.stag, to, data)).empty());
  wire::ReadRequestHeader rr{.sink_stag = 0x5151,
                             .sink_tagged_offset = 0x1000,
                             .read_message_size = 2000,
                             .source_stag = rw.stag,
                             .source_tagged_offset = to};
  init.Send(wire::MakeReadRequest(1, rr));
  Bytes got;
  for (const wire::RdmapMessageView& v : init.Decoded()) {
    EXPECT_EQ(v.opcode(), Opcode::kRdmaReadResponse);
    EXPECT_TRUE(v.ddp.header.tagged);
    EXPECT_EQ(v.ddp.header.stag, 0x5151u);
    EXPECT_EQ(v.ddp.header.tagged_offset, 0x1000 + got.size());
    got.insert(got.end(), v.ulp_payload.begin(), v.ulp_payload.end());
  }
  EXPECT_EQ(got, data);
  EXPECT_TRUE(init.Decoded().back().ddp.header.last);
  EXPECT_GT(init.received().size(), 1u);  // 2000 octets exceed one MULPDU
  for (const Bytes& u : init.received()) EXPECT_LE(u.size(), wire::Mulpdu(1460, false));
}

// REQ R5041-4.3-07 R5041-4.3-08
TEST(ReferenceTargetFullOperation, SendIsReportedByAnEventRecordSend) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const Bytes hello = Text("hello");
  init.Send(wire::MakeSend(Opcode::kSend, 1, hello));
  ASSERT_EQ(init.received().size(), 1u);
  // The record of the convention's §6.2 example, in a Send with MSN 1.
  const Bytes example = {0x52, 0x50, 0x43, 0x45, 0x01, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
                         0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                         0x9a, 0x71, 0xbb, 0x4c, 0x00, 0x05, 0x00, 0x00, 0x68, 0x65, 0x6c, 0x6c, 0x6f};
  auto v = init.Decoded();
  EXPECT_EQ(v[0].opcode(), Opcode::kSend);
  EXPECT_EQ(v[0].ddp.header.queue_number, 0u);
  EXPECT_EQ(v[0].ddp.header.msn, 1u);
  // Flags 0x01 (SE known, no SE) differ from the example, which has 0x00.
  EXPECT_EQ(Bytes(v[0].ulp_payload.begin(), v[0].ulp_payload.end()), example);

  Bytes big(100);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 3);
  init.Send(wire::MakeSend(Opcode::kSendWithSe, 2, big));
  v = init.Decoded();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].ddp.header.msn, 2u);
  auto rec = wire::DecodeEventRecord(v[1].ulp_payload);
  ASSERT_TRUE(rec.ok()) << rec.error().Describe();
  EXPECT_EQ(rec->sequence, 2u);
  EXPECT_EQ(rec->length, 100u);
  EXPECT_EQ(rec->digest, wire::Crc32c(big));
  EXPECT_EQ(rec->prefix, Bytes(big.begin(), big.begin() + 64));
  EXPECT_EQ(rec->flags, wire::kEventSolicitedKnown | wire::kEventSolicited);
}

TEST(ReferenceTargetFullOperation, SendWithInvalidateReportsTheStagAndInvalidatesIt) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const wire::AdvertisedRegion inv = init.Region(RegionRole::kInvalidatable);
  init.Send(wire::MakeSend(Opcode::kSendWithInvalidate, 1, Text("x"), inv.stag));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 1u);
  auto rec = wire::DecodeEventRecord(v[0].ulp_payload);
  ASSERT_TRUE(rec.ok());
  EXPECT_TRUE(rec->flags & wire::kEventInvalidated);
  EXPECT_EQ(rec->invalidated_stag, inv.stag);
  EXPECT_TRUE(init.reference().PeekMemory(inv.stag, inv.base_tagged_offset, 1).size() == 1);
  // Invalidated: a Write through it now earns Invalid STag.
  init.Send(wire::MakeRdmaWrite(inv.stag, inv.base_tagged_offset, Text("y")));
  v = init.Decoded();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(TerminateOf(v[1]).code, wire::term::kDdpTaggedInvalidStag);
}

// REQ R5041-7.1-G1 R5040-6.2.1-05
TEST(ReferenceTargetFullOperation, WriteToInvalidStagEarnsTerminateThenCloseAndNoEvent) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const wire::AdvertisedRegion dereg = init.Region(RegionRole::kDeregistered);
  const Bytes data(8, 0x5A);
  init.Send(wire::MakeRdmaWrite(dereg.stag, dereg.base_tagged_offset, data));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 1u);
  const wire::TerminateHeader t = TerminateOf(v[0]);
  // The model's table: tagged-invalid-stag -> DDP 1/1/0x00 with the DDP header echoed.
  EXPECT_EQ(t.code, wire::term::kDdpTaggedInvalidStag);
  EXPECT_TRUE(t.m);
  EXPECT_TRUE(t.d);
  EXPECT_FALSE(t.r);
  EXPECT_EQ(t.terminated_ddp_header.stag, dereg.stag);
  EXPECT_EQ(v[0].ddp.header.msn, 1u);
  EXPECT_TRUE(init.reference().wants_close());
  EXPECT_EQ(init.reference().close_reason(), CloseReason::kTerminateSent);
  EXPECT_FALSE(init.reference().closed());
  // Nothing after the Terminate: no event for a later Send.
  EXPECT_TRUE(init.Send(wire::MakeSend(Opcode::kSend, 1, Text("late"))).empty());
  EXPECT_EQ(init.reference().events_sent(), 0u);
  init.Close();
  EXPECT_TRUE(init.reference().closed());
}

TEST(ReferenceTargetFullOperation, ForeignStagIsNotAssociatedWithTheStream) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const wire::AdvertisedRegion foreign = init.Region(RegionRole::kForeign);
  wire::ReadRequestHeader rr{.sink_stag = 1,
                             .read_message_size = 8,
                             .source_stag = foreign.stag,
                             .source_tagged_offset = foreign.base_tagged_offset};
  init.Send(wire::MakeReadRequest(1, rr));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(TerminateOf(v[0]).code, wire::term::kRdmapStagNotAssociatedWithRdmapStream);
}

// REQ R5044-8-T02 R5044-8-09
TEST(ReferenceTargetFullOperation, CrcErrorEarnsTerminate2_0_2) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  init.Send(wire::MakeSend(Opcode::kSend, 1, Text("ok")));
  init.Send(wire::MakeSend(Opcode::kSend, 2, Text("bad crc")), /*crc_xor=*/0x1);
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 2u);  // the first Send's event, then the Terminate
  const wire::TerminateHeader t = TerminateOf(v[1]);
  EXPECT_EQ(t.code, wire::term::kMpaCrcError);
  EXPECT_FALSE(t.m || t.d || t.r);
  EXPECT_TRUE(init.reference().wants_close());
  EXPECT_TRUE(init.Send(wire::MakeSend(Opcode::kSend, 2, Text("after"))).empty());
}

TEST(ReferenceTargetFullOperation, EventsBeforeTheTerminateInOneChunkGoOutFirst) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  Bytes chunk = init.Frame(wire::EncodeSegment(wire::MakeSend(Opcode::kSend, 1, Text("a"))));
  const Bytes bad = init.Frame(wire::EncodeSegment(wire::MakeRdmaWrite(0xDEAD, 0, Text("b"))));
  chunk.insert(chunk.end(), bad.begin(), bad.end());
  const Bytes more = init.Frame(wire::EncodeSegment(wire::MakeSend(Opcode::kSend, 2, Text("c"))));
  chunk.insert(chunk.end(), more.begin(), more.end());
  init.SendRaw(chunk);
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].opcode(), Opcode::kSend);
  EXPECT_EQ(v[1].opcode(), Opcode::kTerminate);
}

// The target answers each TCP write at its end (docs/decisions.md, "responses
// per TCP write"): requests that arrive together are outstanding together.
Bytes ReadRequestsInOneChunk(Initiator& init, const wire::AdvertisedRegion& src, uint32_t count) {
  Bytes chunk;
  for (uint32_t i = 0; i < count; ++i) {
    wire::ReadRequestHeader rr{.sink_stag = 0x100 + i,
                               .sink_tagged_offset = 0,
                               .read_message_size = 8,
                               .source_stag = src.stag,
                               .source_tagged_offset = src.base_tagged_offset + 8 * i};
    const Bytes f = init.Frame(wire::EncodeSegment(wire::MakeReadRequest(i + 1, rr)));
    chunk.insert(chunk.end(), f.begin(), f.end());
  }
  return chunk;
}

// REQ R5040-5.5-R20a R5040-5.2.2-07 R5040-5.2.2-03
TEST(ReferenceTargetFullOperation, ReadRequestsOfOneWriteAreAnsweredInRequestOrder) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const uint16_t ird = init.advertisement().ird;
  ASSERT_GE(ird, 2u);
  init.SendRaw(ReadRequestsInOneChunk(init, init.Region(RegionRole::kReadWrite), ird));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), ird);  // IRD requests at once are within IRD: all answered
  for (uint32_t i = 0; i < ird; ++i) {
    EXPECT_EQ(v[i].opcode(), Opcode::kRdmaReadResponse);
    EXPECT_EQ(v[i].ddp.header.stag, 0x100 + i);
  }
}

// REQ R5040-6.1-10 R5040-5.2.2-07
// IRD + 1 requests in one write: the first IRD are answered (they arrived
// before the error), then the overrun is terminated with a code of the
// accept-set {1/2/0x02, 0/2/0x07} (decisions D-C7); under ignore-ird all are
// answered, and under read-responses-out-of-order the order is reversed.
TEST(ReferenceTargetFullOperation, IrdPlusOneRequestsInOneWriteEarnATerminateAfterTheAnswers) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const uint16_t ird = init.advertisement().ird;
  init.SendRaw(ReadRequestsInOneChunk(init, init.Region(RegionRole::kReadWrite), ird + 1));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), ird + 1u);
  for (uint32_t i = 0; i < ird; ++i) EXPECT_EQ(v[i].ddp.header.stag, 0x100 + i);
  const wire::TerminateHeader t = TerminateOf(v[ird]);
  EXPECT_TRUE(t.code == (wire::TerminateCode{1, 2, 0x02}) || t.code == (wire::TerminateCode{0, 2, 0x07}))
      << wire::Describe(t.code);
}

// REQ R5040-5.3-14 R5040-7.1-03
// Found by fuzz_session: a Read Request from the invalidatable region and a
// Send with Invalidate of that region in one TCP write. The Read Response is
// served at the end of the write, after the invalidation, so serving it
// fails; that failure must end in one Terminate, not in the flush ahead of
// the Terminate serving the same response again (it recursed without end).
TEST(ReferenceTargetFullOperation, ReadServedAfterItsSourceWasInvalidatedInTheSameWriteEndsInOneTerminate) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const wire::AdvertisedRegion inv = init.Region(RegionRole::kInvalidatable);
  wire::ReadRequestHeader rr{.sink_stag = 0x77,
                             .sink_tagged_offset = 0,
                             .read_message_size = 128,
                             .source_stag = inv.stag,
                             .source_tagged_offset = inv.base_tagged_offset};
  Bytes chunk = init.Frame(wire::EncodeSegment(wire::MakeReadRequest(1, rr)));
  const Bytes send_inv =
      init.Frame(wire::EncodeSegment(wire::MakeSend(Opcode::kSendWithInvalidate, 1, Bytes(16, 0x5A), inv.stag)));
  chunk.insert(chunk.end(), send_inv.begin(), send_inv.end());
  init.SendRaw(chunk);
  auto v = init.Decoded();
  ASSERT_FALSE(v.empty());
  std::size_t terminates = 0;
  for (const wire::RdmapMessageView& m : v) terminates += m.opcode() == Opcode::kTerminate;
  EXPECT_EQ(terminates, 1u);
  EXPECT_EQ(v.back().opcode(), Opcode::kTerminate);  // nothing after it
}

TEST(ReferenceTargetFaults, IgnoreIrdAndReversedResponsesShowWhenRequestsArriveTogether) {
  const uint32_t count = 9;
  {
    ReferenceTargetConfig config;
    config.faults = model::FaultSet{model::Fault::kIgnoreIrd};
    ReferenceTarget target(config);
    Initiator init(target);
    ASSERT_TRUE(init.Start());
    ASSERT_LT(init.advertisement().ird, count);
    init.SendRaw(ReadRequestsInOneChunk(init, init.Region(RegionRole::kReadWrite), count));
    auto v = init.Decoded();
    ASSERT_EQ(v.size(), count);
    for (const wire::RdmapMessageView& m : v) EXPECT_EQ(m.opcode(), Opcode::kRdmaReadResponse);
  }
  {
    ReferenceTargetConfig config;
    config.faults = model::FaultSet{model::Fault::kReadResponsesOutOfOrder};
    ReferenceTarget target(config);
    Initiator init(target);
    ASSERT_TRUE(init.Start());
    init.SendRaw(ReadRequestsInOneChunk(init, init.Region(RegionRole::kReadWrite), 3));
    auto v = init.Decoded();
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].ddp.header.stag, 0x102u);
    EXPECT_EQ(v[2].ddp.header.stag, 0x100u);
  }
}

TEST(ReferenceTargetFullOperation, SuiteTerminateMakesTheTargetCloseSilently) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const wire::TerminateHeader h =
      wire::MakeTerminateHeader(wire::term::kMpaInsufficientIrdResources, nullptr, 0, nullptr);
  EXPECT_TRUE(init.Send(wire::MakeTerminate(1, h)).empty());
  EXPECT_TRUE(init.reference().wants_close());
  EXPECT_EQ(init.reference().close_reason(), CloseReason::kTerminateReceived);
  EXPECT_TRUE(init.Send(wire::MakeSend(Opcode::kSend, 1, Text("x"))).empty());
}

// REQ R5044-7.1.1-06 R5044-7.1.1-09 R5044-4.3-10 R5044-7.1.2-R07
TEST(ReferenceTargetFullOperation, MarkersInTargetFpdusWhenTheRequestHadM) {
  ReferenceTarget target;
  Initiator init(target, {.markers = true});
  ASSERT_TRUE(init.Start());
  EXPECT_FALSE(init.reply().marker_required);
  const wire::AdvertisedRegion rw = init.Region(RegionRole::kReadWrite);
  wire::ReadRequestHeader rr{
      .sink_stag = 7, .read_message_size = 3000, .source_stag = rw.stag, .source_tagged_offset = rw.base_tagged_offset};
  const Bytes out = init.Send(wire::MakeReadRequest(1, rr));
  // The first octets of the target's Full Operation are the Marker 0x00000000.
  ASSERT_GE(out.size(), 6u);
  EXPECT_EQ(wire::LoadBe32(out.data()), 0u);
  // The initiator's deframer checks every FPDUPTR (markers on, check_markers).
  EXPECT_FALSE(init.deframe_error().has_value()) << init.deframe_error()->Describe();
  uint32_t markers = 0;
  for (const wire::MpaFpdu& f : init.fpdus()) markers += f.markers;
  EXPECT_EQ(markers, (out.size() + 511) / 512);
  Bytes got;
  for (const auto& v : init.Decoded()) got.insert(got.end(), v.ulp_payload.begin(), v.ulp_payload.end());
  EXPECT_EQ(got, wire::RegionPattern(rw, rw.base_tagged_offset, 3000));
  // With Markers the target's MULPDU shrinks (RFC 5044 §4.5).
  EXPECT_EQ(init.reference().endpoint()->config().mulpdu, wire::Mulpdu(1460, true));
}

TEST(ReferenceTargetFullOperation, MarkersRequestedFromTheSuiteAreCheckedOnInput) {
  ReferenceTargetConfig c;
  c.mpa.request_markers = true;
  ReferenceTarget target(c);
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  EXPECT_TRUE(init.reply().marker_required);
  init.Send(wire::MakeSend(Opcode::kSend, 1, Text("with markers")));  // framed with Markers
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].opcode(), Opcode::kSend);
  // A wrong FPDUPTR: Terminate 2/0/0x03 (CRC recomputed so only the Marker is wrong).
  Initiator init2(target);
  ASSERT_TRUE(init2.Start());
  wire::MarkerInserter wrong(0, {.fpduptr_xor = 0x10});
  Bytes f;
  wrong.AppendUlpdu(f, wire::EncodeSegment(wire::MakeSend(Opcode::kSend, 1, Text("x"))), {});
  init2.SendRaw(f);
  auto w = init2.Decoded();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(TerminateOf(w[0]).code, wire::term::kMpaMarkerMismatch);
}

TEST(ReferenceTargetFullOperation, CrcOffBothWaysIgnoresTheCrcField) {
  ReferenceTargetConfig c;
  c.mpa.crc = false;
  ReferenceTarget target(c);
  Initiator init(target, {.crc = false});
  ASSERT_TRUE(init.Start());
  EXPECT_FALSE(init.reply().crc_required);
  init.Send(wire::MakeSend(Opcode::kSend, 1, Text("garbage crc")), 0xDEADBEEF);
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].opcode(), Opcode::kSend);
}

// ---------------------------------------------------------------------------
// Across connections.

TEST(ReferenceTargetConnections, KeepMemoryKeepsWhatThePreviousConnectionWroteOnlyWhenAsked) {
  ReferenceTarget target;
  const wire::SuiteRequest keep{.flags = wire::kRequestKeepMemory, .case_hash = 0x1234};
  const auto write_complement = [&](InitiatorOptions o) {
    Initiator init(target, o);
    EXPECT_TRUE(init.Start());
    const wire::AdvertisedRegion rw = init.Region(RegionRole::kReadWrite);
    init.Send(wire::MakeRdmaWrite(rw.stag, rw.base_tagged_offset, ComplementOfPattern(rw, rw.base_tagged_offset, 64)));
    init.Close();
    return rw;
  };
  const auto first64 = [&](InitiatorOptions o) {
    Initiator init(target, o);
    EXPECT_TRUE(init.Start());
    const wire::AdvertisedRegion rw = init.Region(RegionRole::kReadWrite);
    auto m = init.reference().PeekMemory(rw.stag, rw.base_tagged_offset, 64);
    return Bytes(m.begin(), m.end());
  };
  const wire::AdvertisedRegion rw = write_complement({});
  const Bytes pattern = wire::RegionPattern(rw, rw.base_tagged_offset, 64);
  EXPECT_EQ(first64({}), pattern);  // not asked: re-patterned
  write_complement({});
  EXPECT_EQ(first64({.suite_request = keep}), ComplementOfPattern(rw, rw.base_tagged_offset, 64));
  // A target that does not honour Keep Memory does not advertise it.
  ReferenceTargetConfig c;
  c.keep_memory = false;
  ReferenceTarget no_keep(c);
  Initiator a(no_keep);
  ASSERT_TRUE(a.Start());
  EXPECT_FALSE(a.advertisement().flags & wire::kFlagKeepMemory);
  a.Send(wire::MakeRdmaWrite(rw.stag, rw.base_tagged_offset, Bytes(64, 0)));
  a.Close();
  Initiator b(no_keep, {.suite_request = keep});
  ASSERT_TRUE(b.Start());
  EXPECT_FALSE(b.reference().keep_memory_requested());
  auto m = b.reference().PeekMemory(rw.stag, rw.base_tagged_offset, 64);
  EXPECT_EQ(Bytes(m.begin(), m.end()), pattern);
}

// The session fuzzer reuses its targets: after Reset a target is as new
// (Connection Serial 1, no previous outcome, memory patterned even for a
// Keep Memory connection).
TEST(ReferenceTargetConnections, ResetMakesTheTargetAsNew) {
  ReferenceTarget target;
  const wire::SuiteRequest keep{.flags = wire::kRequestKeepMemory, .case_hash = 0};
  wire::AdvertisedRegion rw;
  {
    Initiator init(target);
    ASSERT_TRUE(init.Start());
    rw = init.Region(RegionRole::kReadWrite);
    init.Send(wire::MakeRdmaWrite(rw.stag, rw.base_tagged_offset, ComplementOfPattern(rw, rw.base_tagged_offset, 64)));
    init.Send(wire::MakeRdmaWrite(0xBAD, 0, Text("x")));  // a Terminate: an outcome to report
  }
  EXPECT_NE(target.MemorySnapshot(rw.memory_object), Bytes());
  target.Reset();
  EXPECT_EQ(target.connections_accepted(), 0u);
  Initiator init(target, {.suite_request = keep});
  ASSERT_TRUE(init.Start());
  EXPECT_EQ(init.advertisement().connection_serial, 1u);
  ASSERT_TRUE(init.advertisement().previous.has_value());
  EXPECT_EQ(*init.advertisement().previous, wire::PreviousOutcome{});
  auto m = init.reference().PeekMemory(rw.stag, rw.base_tagged_offset, 64);
  EXPECT_EQ(Bytes(m.begin(), m.end()), wire::RegionPattern(rw, rw.base_tagged_offset, 64));
}

// hand_back_memory off (the session fuzzer's targets): what a connection
// wrote is not kept, so even a Keep Memory connection starts patterned.
TEST(ReferenceTargetConnections, WithoutHandBackEveryConnectionStartsPatterned) {
  ReferenceTargetConfig c;
  c.hand_back_memory = false;
  ReferenceTarget target(c);
  wire::AdvertisedRegion rw;
  {
    Initiator init(target);
    ASSERT_TRUE(init.Start());
    rw = init.Region(RegionRole::kReadWrite);
    init.Send(wire::MakeRdmaWrite(rw.stag, rw.base_tagged_offset, ComplementOfPattern(rw, rw.base_tagged_offset, 64)));
    init.Close();
  }
  Initiator next(target, {.suite_request = wire::SuiteRequest{.flags = wire::kRequestKeepMemory}});
  ASSERT_TRUE(next.Start());
  auto m = next.reference().PeekMemory(rw.stag, rw.base_tagged_offset, 64);
  EXPECT_EQ(Bytes(m.begin(), m.end()), wire::RegionPattern(rw, rw.base_tagged_offset, 64));
}

TEST(ReferenceTargetConnections, RejectedWriteLeavesMemoryForTheKeepMemoryConnection) {
  ReferenceTarget target;
  {
    Initiator init(target);
    ASSERT_TRUE(init.Start());
    const wire::AdvertisedRegion ro = init.Region(RegionRole::kReadOnly);
    init.Send(wire::MakeRdmaWrite(ro.stag, ro.base_tagged_offset, Bytes(16, 0)));
    ASSERT_TRUE(init.reference().wants_close());
  }
  Initiator next(target, {.suite_request = wire::SuiteRequest{.flags = wire::kRequestKeepMemory}});
  ASSERT_TRUE(next.Start());
  const wire::AdvertisedRegion ro = next.Region(RegionRole::kReadOnly);
  auto m = next.reference().PeekMemory(ro.stag, ro.base_tagged_offset, 16);
  EXPECT_EQ(Bytes(m.begin(), m.end()), wire::RegionPattern(ro, ro.base_tagged_offset, 16));
}

TEST(ReferenceTargetConnections, OutcomeBlockReportsThePreviousConnection) {
  ReferenceTarget target;
  {
    Initiator init(target);  // serial 1: the target sends a Terminate
    ASSERT_TRUE(init.Start());
    init.Send(wire::MakeSend(Opcode::kSend, 1, Text("e1")));
    init.Send(wire::MakeRdmaWrite(0xBAD, 0, Text("x")));
  }
  {
    Initiator init(target);  // serial 2: the suite sends a Terminate
    ASSERT_TRUE(init.Start());
    const wire::PreviousOutcome& p = *init.advertisement().previous;
    EXPECT_EQ(init.advertisement().connection_serial, 2u);
    EXPECT_EQ(p.connection_serial, 1u);
    EXPECT_EQ(p.outcome, wire::ConnectionOutcome::kTerminateSent);
    EXPECT_EQ(p.flags, wire::kOutcomeCodeKnown);
    EXPECT_EQ(p.layer, 1);
    EXPECT_EQ(p.error_type, 1);
    EXPECT_EQ(p.error_code, 0x00);
    EXPECT_EQ(p.events_sent, 1);
    EXPECT_EQ(p.completion_errors, 1);
    init.Send(
        wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::term::kRdmapUnexpectedOpcode, nullptr, 0, nullptr)));
  }
  {
    Initiator init(target);  // serial 3: the suite just closes
    ASSERT_TRUE(init.Start());
    const wire::PreviousOutcome& p = *init.advertisement().previous;
    EXPECT_EQ(p.connection_serial, 2u);
    EXPECT_EQ(p.outcome, wire::ConnectionOutcome::kTerminateReceived);
    EXPECT_EQ(p.layer, 0);
    EXPECT_EQ(p.error_type, 2);
    EXPECT_EQ(p.error_code, 0x06);
    init.Close();
  }
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  const wire::PreviousOutcome& p = *init.advertisement().previous;
  EXPECT_EQ(p.connection_serial, 3u);
  EXPECT_EQ(p.outcome, wire::ConnectionOutcome::kClosed);
  EXPECT_EQ(p.flags, 0);
  EXPECT_EQ(target.connections_accepted(), 4u);
}

TEST(ReferenceTargetConnections, EveryConnectionStartsWithFreshBuffersAndMsns) {
  ReferenceTargetConfig c;
  c.receive_buffer_count = 2;
  ReferenceTarget target(c);
  for (int conn = 0; conn < 2; ++conn) {
    Initiator init(target);
    ASSERT_TRUE(init.Start());
    init.Send(wire::MakeSend(Opcode::kSend, 1, Text("1")));
    init.Send(wire::MakeSend(Opcode::kSend, 2, Text("2")));
    init.Send(wire::MakeSend(Opcode::kSend, 3, Text("3")));  // no buffer left
    auto v = init.Decoded();
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].ddp.header.msn, 1u);
    EXPECT_EQ(TerminateOf(v[2]).code, wire::term::kDdpUntaggedInvalidMsnNoBufferAvailable);
  }
}

// ---------------------------------------------------------------------------
// Faults that act after a Terminate stay observable through the session.

TEST(ReferenceTargetFaults, AnswerAfterTerminateKeepsTheFaultyTargetOpen) {
  ReferenceTargetConfig c;
  c.faults.Add(model::Fault::kAnswerAfterTerminate);
  ReferenceTarget target(c);
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  init.Send(wire::MakeRdmaWrite(0xBAD, 0, Text("x")));
  EXPECT_FALSE(init.reference().wants_close());
  const wire::AdvertisedRegion rw = init.Region(RegionRole::kReadWrite);
  init.Send(wire::MakeReadRequest(1, wire::ReadRequestHeader{.sink_stag = 5,
                                                             .read_message_size = 4,
                                                             .source_stag = rw.stag,
                                                             .source_tagged_offset = rw.base_tagged_offset}));
  auto v = init.Decoded();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].opcode(), Opcode::kTerminate);
  EXPECT_EQ(v[1].opcode(), Opcode::kRdmaReadResponse);  // the fault shows on the wire
  init.Close();
  EXPECT_TRUE(init.reference().closed());
  EXPECT_EQ(target.previous_outcome().outcome, wire::ConnectionOutcome::kTerminateSent);
}

TEST(ReferenceTargetFaults, KeepPlacingAfterTerminateShowsOnTheKeepMemoryConnection) {
  for (bool faulty : {false, true}) {
    ReferenceTargetConfig c;
    if (faulty) c.faults.Add(model::Fault::kKeepPlacingAfterTerminate);
    ReferenceTarget target(c);
    const wire::AdvertisedRegion rw = DefaultTargetLayout(c.profile).regions[0];
    const Bytes data = ComplementOfPattern(rw, rw.base_tagged_offset, 8);
    {
      Initiator init(target);
      ASSERT_TRUE(init.Start());
      init.Send(wire::MakeRdmaWrite(0xBAD, 0, Text("x")));
      ASSERT_TRUE(init.reference().wants_close());
      EXPECT_TRUE(init.Send(wire::MakeRdmaWrite(rw.stag, rw.base_tagged_offset, data)).empty());
    }
    Initiator next(target, {.suite_request = wire::SuiteRequest{.flags = wire::kRequestKeepMemory}});
    ASSERT_TRUE(next.Start());
    auto m = next.reference().PeekMemory(rw.stag, rw.base_tagged_offset, 8);
    EXPECT_EQ(Bytes(m.begin(), m.end()), faulty ? data : wire::RegionPattern(rw, rw.base_tagged_offset, 8))
        << "faulty " << faulty;
  }
}

// ---------------------------------------------------------------------------
// Robustness.

TEST(ReferenceTargetRobustness, FloodOfOctetsStaysBounded) {
  ReferenceTarget target;
  Initiator init(target);
  ASSERT_TRUE(init.Start());
  Bytes chunk(4096, 0xFF);  // ULPDU_Length 0xFFFF, then garbage
  std::size_t peak = 0;
  for (int i = 0; i < 1024; ++i) {  // 4 MiB
    init.SendRaw(chunk);
    peak = std::max(peak, init.reference().buffered());
  }
  EXPECT_LE(peak, wire::FpduLength(0xFFFF) + 4096);
  EXPECT_TRUE(init.reference().wants_close());  // the CRC of that "FPDU" failed
  EXPECT_EQ(init.reference().buffered(), 0u);

  auto s = target.Accept();
  Bytes header = wire::EncodeMpaStartupFrame(testing::MakeRequest({}));
  header.resize(16);  // a valid Key, then nothing but more octets of the header...
  Bytes out;
  s->OnBytes(header, out);
  EXPECT_LE(s->buffered(), 20u + 512u);
}

TEST(ReferenceTargetRobustness, LogLineSummarisesTheConnection) {
  ReferenceTarget target;
  Initiator init(target, {.suite_request = wire::SuiteRequest{.case_hash = 0xCAFE0001}});
  ASSERT_TRUE(init.Start());
  init.Send(wire::MakeRdmaWrite(0xBAD, 0, Text("x")));
  const std::string line = init.reference().log_line();
  EXPECT_NE(line.find("conn 1 rev 1"), std::string::npos) << line;
  EXPECT_NE(line.find("case cafe0001"), std::string::npos) << line;
  EXPECT_NE(line.find("terminate-sent 1/1/0x00"), std::string::npos) << line;
  EXPECT_NE(line.find("tagged-invalid-stag"), std::string::npos) << line;
}

TEST(ReferenceTargetConfigTest, InvalidConfigsAreNamed) {
  ReferenceTargetConfig c;
  EXPECT_EQ(ValidateReferenceTargetConfig(c), "");
  c.layout = DefaultTargetLayout(wire::Profile::kCommit);
  c.layout->regions.push_back(c.layout->regions[0]);
  EXPECT_NE(ValidateReferenceTargetConfig(c).find("advertised twice"), std::string::npos);
  c.layout->regions.back().stag = 0x777;
  EXPECT_NE(ValidateReferenceTargetConfig(c).find("do not fit"), std::string::npos);
  c = {};
  c.mpa.rtr_send = c.mpa.rtr_write = c.mpa.rtr_read = false;
  EXPECT_NE(ValidateReferenceTargetConfig(c), "");
  // A target with a bad config refuses every Request (no Reply).
  ReferenceTarget target(c);
  EXPECT_NE(target.config_error(), "");
  auto s = target.Accept();
  Bytes out;
  s->OnBytes(wire::EncodeMpaStartupFrame(testing::MakeRequest({})), out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(s->close_reason(), CloseReason::kConfigError);
}

}  // namespace
}  // namespace rdmapct::targets
