// Matchers on hand-built frames: the accept-set grading of decisions D-S1
// (preferred / accepted alternative / registered other / unassigned),
// malformed and missing Terminates, echo comparison field by field, the DDP
// Segment Length accept-set (decisions D-E), close, silence, events and Read
// Responses.
#include "conformance/matchers.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::conformance {
namespace {

template <class M>
M Parse(const std::string& text) {
  M m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The offending RDMA Read Request the suite "sent": QN 1 MSN 1, 28-octet header.
const wire::ReadRequestHeader kRead{0x5157e000, 0x510000000000, 64, 0x3108, 0x7f3a12345800};

SentMessage OffendingRead() {
  const wire::RdmapSegment seg = wire::MakeReadRequest(1, kRead);
  SentMessage s;
  s.label = "req";
  s.opcode = wire::Opcode::kRdmaReadRequest;
  s.ddp_header = seg.ddp;
  s.read_request = kRead;
  s.ulpdu_length = 18 + 28;
  s.payload_length = 28;
  return s;
}

ReceivedFrame Frame(const wire::RdmapSegment& seg, std::size_t record = 7) {
  return ReceivedFrame{record, wire::EncodeSegment(seg)};
}

// A well-formed Terminate echoing the offending Read Request (RFC 5040 §7.1 case 3).
ReceivedFrame TerminateFrame(wire::TerminateCode code, uint16_t segment_length = 46,
                             const wire::DdpSegmentHeader* ddp = nullptr,
                             const wire::ReadRequestHeader* rdma = &kRead) {
  static const wire::DdpSegmentHeader offending = wire::MakeReadRequest(1, kRead).ddp;
  return Frame(wire::MakeTerminate(1, wire::MakeTerminateHeader(code, ddp ? ddp : &offending, segment_length, rdma)));
}

const char kInvalidStagMatcher[] = R"pb(
  accept { layer: 0 etype: 1 code: 0 preferred: true note: "Invalid STag" }
  accept { layer: 1 etype: 1 code: 0 note: "DDP Invalid STag" }
  m { value: true } d { value: true } r { value: true }
  ddp_segment_length { form: ULPDU_LENGTH preferred: true }
  ddp_segment_length { form: DDP_PAYLOAD_LENGTH }
  ddp_header { kind: OFFENDING }
  rdma_header { kind: OFFENDING }
)pb";

class TerminateMatcherTest : public ::testing::Test {
 protected:
  MatchOutcome Match(const ReceivedFrame& f, const std::string& text = kInvalidStagMatcher) {
    ctx_.offending = &offending_;
    return MatchTerminateFrame(Parse<proto::TerminateMatcher>(text), f, ctx_);
  }
  SentMessage offending_ = OffendingRead();
  MatchContext ctx_;
};

// REQ R5040-7.2-09a: the preferred code with every field right passes.
TEST_F(TerminateMatcherTest, PreferredCodePasses) {
  const MatchOutcome o = Match(TerminateFrame(wire::term::kRdmapInvalidStag));
  EXPECT_EQ(o.verdict, Verdict::kPass) << o.reason;
  ASSERT_EQ(o.choices.size(), 2u);
  EXPECT_EQ(o.choices[0].what, "Terminate code");
  EXPECT_TRUE(o.choices[0].preferred);
  EXPECT_TRUE(Contains(o.choices[0].chosen, "0/1/0x00")) << o.choices[0].chosen;
  EXPECT_EQ(o.choices[0].note, "Invalid STag");
  EXPECT_EQ(o.frames, std::vector<std::size_t>{7});
  EXPECT_TRUE(Contains(o.expected, "(preferred)"));
}

TEST_F(TerminateMatcherTest, AcceptedAlternativePassesNotingTheChoice) {
  const MatchOutcome o = Match(TerminateFrame(wire::term::kDdpTaggedInvalidStag));
  EXPECT_EQ(o.verdict, Verdict::kPass) << o.reason;
  EXPECT_FALSE(o.choices[0].preferred);
  EXPECT_TRUE(o.choices[0].in_set);
  EXPECT_EQ(o.choices[0].note, "DDP Invalid STag");
  ASSERT_FALSE(o.notes.empty());
  EXPECT_TRUE(Contains(o.notes[0], "accepted alternative 1/1/0x00"));
}

// decisions D-S1: another registered code is a warning by default.
TEST_F(TerminateMatcherTest, OtherRegisteredCodeWarns) {
  const MatchOutcome o = Match(TerminateFrame(wire::term::kRdmapBaseOrBoundsViolation));
  EXPECT_EQ(o.verdict, Verdict::kWarn);
  EXPECT_TRUE(Contains(o.reason, "0/1/0x01")) << o.reason;
  EXPECT_TRUE(Contains(o.reason, "registered but not in the accept-set")) << o.reason;
  EXPECT_FALSE(o.choices[0].in_set);
  // A case may grade it harder.
  const MatchOutcome hard = Match(TerminateFrame(wire::term::kRdmapBaseOrBoundsViolation),
                                  std::string(kInvalidStagMatcher) + " other_registered: MUST");
  EXPECT_EQ(hard.verdict, Verdict::kFail);
}

// REQ R5040-4.8-03: an unassigned (RFC 6580) code fails.
TEST_F(TerminateMatcherTest, UnassignedCodeFails) {
  const MatchOutcome o = Match(TerminateFrame({0x0, 0x1, 0x7F}));
  EXPECT_EQ(o.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(o.reason, "is not registered (RFC 6580)")) << o.reason;
  EXPECT_EQ(Match(TerminateFrame({0x5, 0x0, 0x00})).verdict, Verdict::kFail);  // Layer 5 is undefined
}

TEST_F(TerminateMatcherTest, MalformedTerminateFails) {
  // Terminate Control cut after 2 octets.
  wire::RdmapSegment seg = wire::MakeTerminate(1, wire::TerminateHeader{});
  wire::Bytes ulpdu = wire::EncodeSegment(seg);
  ulpdu.resize(18 + 2);
  MatchOutcome o = Match(ReceivedFrame{1, ulpdu});
  EXPECT_EQ(o.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(o.reason, "malformed Terminate")) << o.reason;
  EXPECT_TRUE(Contains(o.reason, "Terminate Control")) << o.reason;
  // On the wrong queue.
  wire::RdmapSegment qn0 =
      wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::term::kRdmapInvalidStag, nullptr, 0, nullptr));
  qn0.ddp.queue_number = 0;
  o = Match(Frame(qn0));
  EXPECT_EQ(o.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(o.reason, "QN 0 (must be 2)")) << o.reason;
  // Tagged.
  wire::RdmapSegment tagged =
      wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::term::kRdmapInvalidStag, nullptr, 0, nullptr));
  tagged.ddp.tagged = true;
  EXPECT_TRUE(Contains(Match(Frame(tagged)).reason, "T=1"));
}

TEST_F(TerminateMatcherTest, NotATerminateFails) {
  const MatchOutcome o = Match(Frame(wire::MakeReadResponse(0x5157e000, 0x510000000000, {})));
  EXPECT_EQ(o.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(o.reason, "expected a Terminate, got RDMA Read Response")) << o.reason;
}

TEST_F(TerminateMatcherTest, EchoedDdpHeaderComparedFieldByField) {
  wire::DdpSegmentHeader wrong = wire::MakeReadRequest(1, kRead).ddp;
  wrong.msn = 2;
  wrong.last = false;
  const MatchOutcome o = Match(TerminateFrame(wire::term::kRdmapInvalidStag, 46, &wrong));
  EXPECT_EQ(o.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(o.reason, "Terminated DDP Header differs")) << o.reason;
  EXPECT_TRUE(Contains(o.reason, "L: expected 1, got 0")) << o.reason;
  EXPECT_TRUE(Contains(o.reason, "MSN: expected 1, got 2")) << o.reason;
}

TEST_F(TerminateMatcherTest, EchoedRdmaHeaderComparedFieldByField) {
  wire::ReadRequestHeader wrong = kRead;
  wrong.source_stag = 0x3109;
  const MatchOutcome o = Match(TerminateFrame(wire::term::kRdmapInvalidStag, 46, nullptr, &wrong));
  EXPECT_EQ(o.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(o.reason, "SrcSTag: expected 0x0000000000003108, got 0x0000000000003109")) << o.reason;
  // Absent (R=0) where it is expected: fails at the echo's default MUST.
  const MatchOutcome absent = Match(TerminateFrame(wire::term::kRdmapInvalidStag, 46, nullptr, nullptr));
  EXPECT_EQ(absent.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(absent.reason, "no Terminated RDMA Header (R=0)")) << absent.reason;
}

// R5040-4.8-05..07: the M/D/R bits are SHOULD, so a wrong bit warns.
TEST_F(TerminateMatcherTest, HeaderBitsWarnByDefault) {
  const MatchOutcome o = Match(TerminateFrame(wire::term::kRdmapInvalidStag),
                               R"pb(accept { layer: 0 etype: 1 code: 0 } r { value: false })pb");
  EXPECT_EQ(o.verdict, Verdict::kWarn);
  EXPECT_TRUE(Contains(o.reason, "R bit is 1, expected 0")) << o.reason;
  const MatchOutcome must = Match(TerminateFrame(wire::term::kRdmapInvalidStag),
                                  R"pb(accept { layer: 0 etype: 1 code: 0 } r { value: false severity: MUST })pb");
  EXPECT_EQ(must.verdict, Verdict::kFail);
}

// decisions D-E: ULPDU_Length preferred, the payload length (siw) warns.
TEST_F(TerminateMatcherTest, SegmentLengthAcceptSet) {
  EXPECT_EQ(Match(TerminateFrame(wire::term::kRdmapInvalidStag, 46)).verdict, Verdict::kPass);
  const MatchOutcome siw = Match(TerminateFrame(wire::term::kRdmapInvalidStag, 28));
  EXPECT_EQ(siw.verdict, Verdict::kWarn);
  EXPECT_TRUE(Contains(siw.reason, "DDP Segment Length 28 is the accepted alternative")) << siw.reason;
  ASSERT_EQ(siw.choices.size(), 2u);
  EXPECT_FALSE(siw.choices[1].preferred);
  const MatchOutcome wrong = Match(TerminateFrame(wire::term::kRdmapInvalidStag, 99));
  EXPECT_EQ(wrong.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(wrong.reason, "DDP Segment Length 99 is not an accepted value")) << wrong.reason;
}

TEST_F(TerminateMatcherTest, FixedFormWithZeroAreasReadsAsAbsent) {
  const wire::DdpSegmentHeader offending = wire::MakeReadRequest(1, kRead).ddp;
  ReceivedFrame f =
      Frame(wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::term::kDdpTaggedInvalidStag, &offending, 46, nullptr,
                                                             wire::TerminateForm::kFixed)));
  const MatchOutcome o = Match(f, R"pb(accept { layer: 1 etype: 1 code: 0 } d { value: true } r { value: false }
                                      ddp_header { kind: OFFENDING } rdma_header { kind: ABSENT })pb");
  EXPECT_EQ(o.verdict, Verdict::kPass) << o.reason << "\n" << o.actual;
}

TEST_F(TerminateMatcherTest, UpdatedEchoCountsReadResponsesBeforeTheTerminate) {
  wire::ReadRequestHeader advanced = kRead;
  advanced.sink_tagged_offset += 16;
  advanced.source_tagged_offset += 16;
  advanced.read_message_size -= 16;
  const wire::Bytes data(16, 0xAB);
  std::vector<ReceivedFrame> frames = {
      Frame(wire::MakeReadResponse(kRead.sink_stag, kRead.sink_tagged_offset, data), 1),
      TerminateFrame(wire::term::kRdmapBaseOrBoundsViolation, 46, nullptr, &advanced)};
  Observation obs;
  obs.frames = frames;
  ctx_.offending = &offending_;
  const Evaluation e = EvaluateTerminate(
      Parse<proto::TerminateMatcher>(R"pb(accept { layer: 0 etype: 1 code: 1 } rdma_header { kind: UPDATED })pb"), obs,
      ctx_);
  ASSERT_TRUE(e.decided);
  EXPECT_EQ(e.frames_used, 2u);
  EXPECT_EQ(e.outcome.verdict, Verdict::kPass) << e.outcome.reason;
  EXPECT_TRUE(Contains(e.outcome.notes.back(), "16 octets")) << e.outcome.notes.back();
}

TEST_F(TerminateMatcherTest, MissingTerminate) {
  const auto m = Parse<proto::TerminateMatcher>(kInvalidStagMatcher);
  Observation obs;
  EXPECT_FALSE(EvaluateTerminate(m, obs, ctx_).decided);  // still waiting
  obs.deadline_passed = true;
  Evaluation e = EvaluateTerminate(m, obs, ctx_);
  ASSERT_TRUE(e.decided);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(e.outcome.reason, "no Terminate within 2000 ms")) << e.outcome.reason;
  obs.deadline_passed = false;
  obs.link = LinkState::kFin;
  e = EvaluateTerminate(m, obs, ctx_);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(e.outcome.reason, "connection ended (FIN)")) << e.outcome.reason;
  obs.problem = StreamProblem{Verdict::kError, "target flood: too much", std::nullopt};
  EXPECT_EQ(EvaluateTerminate(m, obs, ctx_).outcome.verdict, Verdict::kError);
  // A SHOULD-level expectation only warns.
  obs.problem.reset();
  ctx_.severity = proto::SHOULD;
  EXPECT_EQ(EvaluateTerminate(m, obs, ctx_).outcome.verdict, Verdict::kWarn);
}

TEST(ClosedMatcherTest, FinRstAndFramesBeforeTheClose) {
  MatchContext ctx;
  Observation obs;
  const auto either = Parse<proto::ConnectionClosed>("accept: FIN accept: RST rst_severity: SHOULD");
  EXPECT_FALSE(EvaluateClosed(either, obs, ctx).decided);
  obs.link = LinkState::kFin;
  Evaluation e = EvaluateClosed(either, obs, ctx);
  EXPECT_EQ(e.outcome.verdict, Verdict::kPass);
  EXPECT_TRUE(e.outcome.choices.at(0).preferred);
  obs.link = LinkState::kReset;
  e = EvaluateClosed(either, obs, ctx);
  EXPECT_EQ(e.outcome.verdict, Verdict::kWarn);  // R5040-6.2.1-05
  EXPECT_TRUE(Contains(e.outcome.reason, "instead of a graceful close"));
  EXPECT_EQ(EvaluateClosed(proto::ConnectionClosed{}, obs, ctx).outcome.verdict, Verdict::kPass);
  EXPECT_EQ(EvaluateClosed(Parse<proto::ConnectionClosed>("accept: FIN"), obs, ctx).outcome.verdict, Verdict::kFail);
  obs.link = LinkState::kOpen;
  obs.deadline_passed = true;
  EXPECT_TRUE(Contains(EvaluateClosed(either, obs, ctx).outcome.reason, "still open"));
  std::vector<ReceivedFrame> frames = {Frame(wire::MakeReadResponse(1, 0, {}))};
  obs.frames = frames;
  e = EvaluateClosed(either, obs, ctx);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_EQ(e.frames_used, 1u);
  EXPECT_TRUE(Contains(e.outcome.reason, "instead of closing"));
}

TEST(NothingMatcherTest, SilenceEventsAndFrames) {
  MatchContext ctx;
  Observation obs;
  wire::Bytes rec;
  wire::EncodeEventRecord(wire::MakeSendEvent(1, wire::Bytes{1, 2}, std::nullopt, std::nullopt), rec);
  std::vector<ReceivedEvent> events = {ReceivedEvent{3, 1, wire::DecodeEventRecord(rec).value(), ""}};
  obs.events = events;
  EXPECT_FALSE(EvaluateNothing(Parse<proto::Nothing>("allow_events: true"), obs, ctx).decided);
  Evaluation e = EvaluateNothing(proto::Nothing{}, obs, ctx);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_EQ(e.events_used, 1u);
  obs.deadline_passed = true;
  EXPECT_EQ(EvaluateNothing(Parse<proto::Nothing>("allow_events: true"), obs, ctx).outcome.verdict, Verdict::kPass);
  std::vector<ReceivedFrame> frames = {Frame(wire::MakeReadResponse(1, 0, {}))};
  obs.frames = frames;
  e = EvaluateNothing(Parse<proto::Nothing>("allow_events: true"), obs, ctx);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(e.outcome.reason, "the target sent RDMA Read Response"));
}

class EventMatcherTest : public ::testing::Test {
 protected:
  Evaluation Eval(const std::string& text, wire::EventRecord ev, uint32_t msn = 1) {
    events_ = {ReceivedEvent{4, msn, ev, ""}};
    Observation obs;
    obs.events = events_;
    return EvaluateEvent(Parse<proto::EventMatcher>(text), obs, ctx_);
  }
  std::vector<ReceivedEvent> events_;
  MatchContext ctx_;
  const wire::Bytes hello_{'h', 'e', 'l', 'l', 'o'};
};

TEST_F(EventMatcherTest, MatchesTypeLengthAndData) {
  ctx_.expected_data = hello_;
  const Evaluation e = Eval("type: SEND_DELIVERED length: 5", wire::MakeSendEvent(1, hello_, false, std::nullopt));
  EXPECT_EQ(e.outcome.verdict, Verdict::kPass) << e.outcome.reason;
  EXPECT_EQ(e.events_used, 1u);
  ctx_.expected_data = wire::Bytes{'h', 'e', 'l', 'p', '!'};
  EXPECT_TRUE(
      Contains(Eval("", wire::MakeSendEvent(1, hello_, false, std::nullopt)).outcome.reason, "delivered data differs"));
}

TEST_F(EventMatcherTest, Mismatches) {
  EXPECT_TRUE(Contains(Eval("length: 4", wire::MakeSendEvent(1, hello_, false, std::nullopt)).outcome.reason,
                       "Delivered Length 5, expected 4"));
  EXPECT_TRUE(Contains(
      Eval("type: IMMEDIATE_DATA_DELIVERED", wire::MakeSendEvent(1, hello_, false, std::nullopt)).outcome.reason,
      "Event Type 1, expected 2"));
  // REQ R5041-4.3-07: the carrying Send's MSN must equal the Sequence Number.
  const Evaluation msn = Eval("", wire::MakeSendEvent(1, hello_, false, std::nullopt), 2);
  EXPECT_EQ(msn.outcome.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(msn.outcome.reason, "differs from the Send's MSN 2")) << msn.outcome.reason;
  ctx_.invalidated_stag = 0x2e05;
  EXPECT_TRUE(Contains(Eval("", wire::MakeSendEvent(1, hello_, false, 0x2e06)).outcome.reason,
                       "invalidated STag 0x00002e06, expected 0x00002e05"));
}

TEST_F(EventMatcherTest, SolicitedNeedsATargetThatKnowsSe) {
  EXPECT_EQ(Eval("solicited: true", wire::MakeSendEvent(1, hello_, std::nullopt, std::nullopt)).outcome.verdict,
            Verdict::kSkip);
  EXPECT_EQ(Eval("solicited: true", wire::MakeSendEvent(1, hello_, true, std::nullopt)).outcome.verdict,
            Verdict::kPass);
  EXPECT_EQ(Eval("solicited: true", wire::MakeSendEvent(1, hello_, false, std::nullopt)).outcome.verdict,
            Verdict::kFail);
}

TEST_F(EventMatcherTest, UndecodableRecordIsAConventionError) {
  events_ = {ReceivedEvent{4, 1, std::nullopt, "Event Record does not decode: x"}};
  Observation obs;
  obs.events = events_;
  const Evaluation e = EvaluateEvent(proto::EventMatcher{}, obs, ctx_);
  EXPECT_EQ(e.outcome.verdict, Verdict::kError);
  EXPECT_TRUE(Contains(e.outcome.reason, "test-ULP convention"));
}

ReceivedFrame Response(uint32_t stag, uint64_t to, wire::ByteSpan data, bool last, std::size_t record = 0) {
  wire::RdmapSegment seg = wire::MakeReadResponse(stag, to, data);
  seg.ddp.last = last;
  return Frame(seg, record);
}

TEST(ReadResponsesTest, InOrderSegmentedResponsesWithData) {
  wire::Bytes a(100), b(40);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(0x80 + i);
  const std::vector<ReadRequestSent> reqs = {{0x51, 0x1000, 100, a, "Read Request 1"},
                                             {0x51, 0x2000, 40, b, "Read Request 2"}};
  std::vector<ReceivedFrame> frames = {Response(0x51, 0x1000, wire::ByteSpan(a).first(60), false, 1),
                                       Response(0x51, 0x1000 + 60, wire::ByteSpan(a).subspan(60), true, 2),
                                       Response(0x51, 0x2000, b, true, 3)};
  Observation obs;
  obs.frames = std::span<const ReceivedFrame>(frames).first(2);
  MatchContext ctx;
  EXPECT_FALSE(EvaluateReadResponses(reqs, obs, ctx).decided);
  obs.frames = frames;
  std::vector<wire::Bytes> data;
  const Evaluation e = EvaluateReadResponses(reqs, obs, ctx, &data);
  ASSERT_TRUE(e.decided);
  EXPECT_EQ(e.outcome.verdict, Verdict::kPass) << e.outcome.reason;
  EXPECT_EQ(e.frames_used, 3u);
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0], a);
  EXPECT_EQ(e.outcome.frames, (std::vector<std::size_t>{1, 2, 3}));
}

TEST(ReadResponsesTest, Violations) {
  const wire::Bytes a(32, 0x11);
  const std::vector<ReadRequestSent> reqs = {{0x51, 0x1000, 32, a, "memory at RW"}};
  MatchContext ctx;
  auto eval = [&](std::vector<ReceivedFrame> frames, bool deadline = false) {
    Observation obs;
    obs.frames = frames;
    obs.deadline_passed = deadline;
    return EvaluateReadResponses(reqs, obs, ctx).outcome;
  };
  EXPECT_TRUE(Contains(eval({Response(0x52, 0x1000, a, true)}).reason, "is not the SinkSTag"));
  EXPECT_TRUE(Contains(eval({Response(0x51, 0x1001, a, true)}).reason, "outside [SinkTO"));
  EXPECT_TRUE(Contains(eval({Response(0x51, 0x1000, wire::ByteSpan(a).first(16), true)}).reason, "does not end"));
  wire::Bytes bad = a;
  bad[20] = 0x12;
  const MatchOutcome diff = eval({Response(0x51, 0x1000, bad, true)});
  EXPECT_EQ(diff.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(diff.reason, "1 octets differ, the first at offset 20")) << diff.reason;
  const MatchOutcome partial = eval({Response(0x51, 0x1000, wire::ByteSpan(a).first(16), false)}, true);
  EXPECT_TRUE(Contains(partial.reason, "16 of 32 octets received")) << partial.reason;
  EXPECT_TRUE(Contains(eval({Frame(wire::MakeTerminate(1, {}))}).reason, "expected a Read Response"));
}

TEST(FrameMatcherTest, TypeFieldsPayloadAndCount) {
  MatchContext ctx;
  const wire::Bytes data = {1, 2, 3};
  std::vector<ReceivedFrame> frames = {Response(0x51, 0x1000, data, true, 1), Response(0x51, 0x1003, data, true, 2)};
  Observation obs;
  obs.frames = frames;
  ctx.expected_data = data;
  Evaluation e = EvaluateFrame(
      Parse<proto::FrameMatcher>("type: RDMA_READ_RESPONSE fields { stag: 0x51 l: 1 } count: 2"), obs, ctx);
  EXPECT_EQ(e.outcome.verdict, Verdict::kPass) << e.outcome.reason;
  EXPECT_EQ(e.frames_used, 2u);
  e = EvaluateFrame(Parse<proto::FrameMatcher>("fields { tagged_offset: 4096 }"), obs, ctx);
  EXPECT_EQ(e.outcome.verdict, Verdict::kPass);
  e = EvaluateFrame(Parse<proto::FrameMatcher>("count: 2 fields { tagged_offset: 4096 }"), obs, ctx);
  EXPECT_EQ(e.outcome.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(e.outcome.reason, "frame 2: tagged_offset: expected 4096, got 4099")) << e.outcome.reason;
  e = EvaluateFrame(Parse<proto::FrameMatcher>("type: SEND"), obs, ctx);
  EXPECT_TRUE(Contains(e.outcome.reason, "expected Send, got RDMA Read Response")) << e.outcome.reason;
  e = EvaluateFrame(Parse<proto::FrameMatcher>("fields { msn: 1 }"), obs, ctx);
  EXPECT_TRUE(Contains(e.outcome.reason, "msn: expected 1, the frame has no such field")) << e.outcome.reason;
}

TEST(MpaReplyMatcherTest, FieldsAndClose) {
  MatchContext ctx;
  wire::MpaStartupFrame request;
  HandshakeOutcome h;
  wire::MpaStartupFrame reply;
  reply.is_reply = true;
  reply.crc_required = true;
  reply.revision = 1;
  h.reply = reply;
  EXPECT_EQ(
      MatchMpaReply(Parse<proto::MpaReplyMatcher>("accepted: true revision: 1 crc: true"), h, request, ctx).verdict,
      Verdict::kPass);
  const MatchOutcome rev = MatchMpaReply(Parse<proto::MpaReplyMatcher>("revision: 2"), h, request, ctx);
  EXPECT_EQ(rev.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(rev.reason, "Rev is 1, expected 2"));
  EXPECT_TRUE(Contains(MatchMpaReply(Parse<proto::MpaReplyMatcher>("ird: 4"), h, request, ctx).reason, "no RFC 6581"));
  HandshakeOutcome closed;
  closed.link = LinkState::kFin;
  EXPECT_EQ(MatchMpaReply(Parse<proto::MpaReplyMatcher>("or_closed: true"), closed, request, ctx).verdict,
            Verdict::kPass);
  EXPECT_EQ(MatchMpaReply(Parse<proto::MpaReplyMatcher>("accepted: false"), closed, request, ctx).verdict,
            Verdict::kFail);
}

// REQ R5044-7.1.1-14: R = 1 on a Reply that carries the Advertisement (what
// Linux siw sends to a Request with R = 1) fails as a refusal and says that
// the Reply otherwise accepts; a plain rejecting Reply gets no such remark.
TEST(MpaReplyMatcherTest, RejectBitOnAnOtherwiseAcceptingReplyIsNamed) {
  MatchContext ctx;
  wire::MpaStartupFrame request;
  request.reject = true;
  HandshakeOutcome h;
  wire::MpaStartupFrame reply;
  reply.is_reply = true;
  reply.reject = true;
  h.reply = reply;
  h.advertisement = true;
  const MatchOutcome echoed = MatchMpaReply(Parse<proto::MpaReplyMatcher>("accepted: true"), h, request, ctx);
  EXPECT_EQ(echoed.verdict, Verdict::kFail);
  EXPECT_TRUE(Contains(echoed.reason,
                       "accepted (R=0) is 0, expected 1: R = 1 in a Reply that carries the target's "
                       "Advertisement"))
      << echoed.reason;
  EXPECT_TRUE(Contains(echoed.reason, "the Request's R bit echoed?")) << echoed.reason;
  h.advertisement = false;
  const MatchOutcome plain = MatchMpaReply(Parse<proto::MpaReplyMatcher>("accepted: true"), h, request, ctx);
  EXPECT_EQ(plain.verdict, Verdict::kFail);
  EXPECT_FALSE(Contains(plain.reason, "Advertisement")) << plain.reason;
}

TEST(MemoryDifferenceTest, NamesFirstOffsetAndCount) {
  EXPECT_EQ(MemoryDifference(wire::Bytes{1, 2, 3}, wire::Bytes{1, 2, 3}), "");
  const std::string d = MemoryDifference(wire::Bytes{1, 2, 3, 4}, wire::Bytes{1, 9, 3, 8});
  EXPECT_TRUE(Contains(d, "2 octets differ, the first at offset 1")) << d;
  EXPECT_TRUE(Contains(d, "expected at 0: 01 02 03 04")) << d;
  EXPECT_TRUE(Contains(MemoryDifference(wire::Bytes{1, 2}, wire::Bytes{1}), "1 octets, expected 2"));
}

}  // namespace
}  // namespace rdmapct::conformance
