// The connection's framing of what the suite sends (byte-exact FPDUs, Markers,
// deliberate corruption checked with the wire layer's own deframer) and its
// receive side (frames and Event Records in separate queues).
#include "conformance/connection.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::conformance {
namespace {

// Hands out queued octets; writes are kept.
class QueueTransport : public targets::Transport {
 public:
  targets::IoStatus Write(wire::ByteSpan b) override {
    written.insert(written.end(), b.begin(), b.end());
    return targets::IoStatus::kOk;
  }
  targets::IoStatus Read(wire::Bytes& out, std::size_t max, std::chrono::milliseconds) override {
    if (queue.empty()) return closed ? targets::IoStatus::kClosed : targets::IoStatus::kTimeout;
    const std::size_t n = std::min(max, queue.size());
    out.insert(out.end(), queue.begin(), queue.begin() + n);
    queue.erase(queue.begin(), queue.begin() + n);
    return targets::IoStatus::kOk;
  }
  void ShutdownWrite() override {}
  void Abort() override {}
  std::string last_error() const override { return ""; }
  std::string peer() const override { return "queue"; }
  wire::Bytes written, queue;
  bool closed = false;
};

class ConnectionTest : public ::testing::Test {
 protected:
  ConnectionTest() : recorder_(frames_, Clock::now(), 1 << 20, wire::Profile::kRfc5040) {
    auto t = std::make_unique<QueueTransport>();
    transport_ = t.get();
    conn_ = std::make_unique<Connection>(std::move(t), 0, recorder_, ConnectionLimits{});
  }
  static proto::Framing Mods(const std::string& text) {
    proto::Framing f;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &f));
    return f;
  }
  // Deframes `stream` as the target would; returns the ULPDUs or the error.
  static wire::Status Deframe(const wire::Bytes& stream, bool markers, std::vector<wire::Bytes>* out = nullptr) {
    wire::MpaDeframer d({.crc_enabled = true, .markers_enabled = markers});
    wire::Status st = d.Feed(stream, [&](const wire::MpaFpdu& f) {
      if (out) out->emplace_back(f.ulpdu.begin(), f.ulpdu.end());
    });
    if (!st.ok()) return st;
    return d.Finish();
  }

  std::vector<FrameRecord> frames_;
  Recorder recorder_;
  QueueTransport* transport_;
  std::unique_ptr<Connection> conn_;
  const wire::Bytes ulpdu_ = wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, 1, wire::Bytes(37, 0x61)));
};

TEST_F(ConnectionTest, PlainFpduIsByteExact) {
  conn_->StartFullOperation(true, false, false);
  EXPECT_EQ(conn_->FrameUlpdu(ulpdu_, nullptr, ""), wire::EncodeFpdu(ulpdu_));
  ASSERT_EQ(frames_.size(), 1u);
  EXPECT_EQ(frames_[0].direction, Direction::kToTarget);
  EXPECT_EQ(frames_[0].kind, FrameKind::kFpdu);
  EXPECT_TRUE(frames_[0].summary.rfind("Send QN 0 MSN 1", 0) == 0) << frames_[0].summary;
  EXPECT_FALSE(frames_[0].detail.empty());
  conn_->StartFullOperation(false, false, false);
  const wire::Bytes no_crc = conn_->FrameUlpdu(ulpdu_, nullptr, "");
  EXPECT_EQ(wire::LoadCrc32c(no_crc.data() + no_crc.size() - 4), 0u);
}

// With Markers the octets equal the wire layer's MarkerInserter and
// deframe cleanly across several 512-octet Marker positions.
TEST_F(ConnectionTest, MarkersMatchTheWireInserterAndDeframe) {
  conn_->StartFullOperation(true, false, true);
  wire::Bytes stream, expected;
  wire::MarkerInserter reference;
  for (int i = 0; i < 20; ++i) {
    const wire::Bytes b = conn_->FrameUlpdu(ulpdu_, nullptr, "");
    stream.insert(stream.end(), b.begin(), b.end());
    reference.AppendUlpdu(expected, ulpdu_);
  }
  EXPECT_EQ(stream, expected);
  std::vector<wire::Bytes> got;
  ASSERT_TRUE(Deframe(stream, true, &got).ok());
  ASSERT_EQ(got.size(), 20u);
  EXPECT_EQ(got[19], ulpdu_);
}

TEST_F(ConnectionTest, CorruptionsReachTheWire) {
  conn_->StartFullOperation(true, false, true);
  wire::Bytes bad = conn_->FrameUlpdu(ulpdu_, nullptr, "");
  const proto::Framing crc = Mods("corrupt_crc: true");
  wire::Bytes corrupt = conn_->FrameUlpdu(ulpdu_, &crc, "");
  bad.insert(bad.end(), corrupt.begin(), corrupt.end());
  wire::Status st = Deframe(bad, true);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, wire::DecodeErrorKind::kCrcMismatch);
}

// A wrong FPDUPTR with a CRC that covers it correctly: a Marker error.
TEST_F(ConnectionTest, WrongFpduPtrIsAMarkerMismatch) {
  conn_->StartFullOperation(true, false, true);
  const proto::Framing ptr = Mods("fpdu_ptr_delta: 8");
  wire::Bytes stream = conn_->FrameUlpdu(ulpdu_, nullptr, "");
  for (int i = 0; i < 12; ++i) {
    const wire::Bytes b = conn_->FrameUlpdu(ulpdu_, &ptr, "");
    stream.insert(stream.end(), b.begin(), b.end());
  }
  const wire::Status st = Deframe(stream, true);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, wire::DecodeErrorKind::kMarkerMismatch);
}

TEST_F(ConnectionTest, ExactCrcLengthPadAndMarkerReserved) {
  conn_->StartFullOperation(true, false, false);
  const proto::Framing exact = Mods("crc: 0x12345678");
  const wire::Bytes a = conn_->FrameUlpdu(ulpdu_, &exact, "");
  EXPECT_EQ(wire::LoadCrc32c(a.data() + a.size() - 4), 0x12345678u);
  // The ULPDU_Length lies; the CRC still covers the octets as sent.
  const proto::Framing len = Mods("ulpdu_length_delta: -2 pad_hex: \"ff ee\"");
  const wire::Bytes b = conn_->FrameUlpdu(ulpdu_, &len, "");
  EXPECT_EQ(wire::LoadBe16(b.data()), ulpdu_.size() - 2);
  EXPECT_EQ(b.size(), wire::FpduLength(ulpdu_.size()));
  EXPECT_EQ(b[2 + ulpdu_.size()], 0xff);  // 55-octet ULPDU: 1 PAD octet
  EXPECT_EQ(wire::LoadCrc32c(b.data() + b.size() - 4), wire::Crc32c(wire::ByteSpan(b).first(b.size() - 4)));
}

TEST_F(ConnectionTest, MarkerReservedField) {
  conn_->StartFullOperation(true, false, true);
  const proto::Framing reserved = Mods("marker_reserved: 0xabcd");
  const wire::Bytes c = conn_->FrameUlpdu(ulpdu_, &reserved, "");
  EXPECT_EQ(wire::LoadBe16(c.data()), 0xabcd);  // the first FPDU starts with a Marker
}

TEST_F(ConnectionTest, FramesAndEventRecordsQueueSeparately) {
  conn_->StartFullOperation(true, false, false);
  wire::Bytes rec;
  wire::EncodeEventRecord(wire::MakeSendEvent(1, wire::Bytes{'h', 'i'}, std::nullopt, std::nullopt), rec);
  wire::AppendFpdu(transport_->queue, wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, 1, rec)));
  const wire::Bytes term = wire::EncodeSegment(wire::MakeTerminate(1, wire::TerminateHeader{}));
  wire::AppendFpdu(transport_->queue, term);
  // A Send that is no Event Record stays a frame.
  wire::AppendFpdu(transport_->queue, wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, 2, wire::Bytes{1})));
  transport_->closed = true;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(100);
  while (conn_->Pump(deadline)) {
  }
  Observation obs = conn_->Observe();
  ASSERT_EQ(obs.events.size(), 1u);
  EXPECT_EQ(obs.events[0].msn, 1u);
  ASSERT_TRUE(obs.events[0].event);
  EXPECT_EQ(obs.events[0].event->length, 2u);
  ASSERT_EQ(obs.frames.size(), 2u);
  EXPECT_EQ(obs.frames[0].ulpdu, term);
  EXPECT_EQ(obs.link, LinkState::kFin);
  EXPECT_TRUE(frames_[obs.events[0].record].event_record);
  conn_->Consume(1, 1);
  obs = conn_->Observe();
  EXPECT_EQ(obs.frames.size(), 1u);
  EXPECT_TRUE(obs.events.empty());
  // The recorded octets of each direction concatenate to the stream.
  EXPECT_EQ(frames_.back().kind, FrameKind::kFin);
}

TEST_F(ConnectionTest, SendRtrEchoIsDroppedOnce) {
  conn_->StartFullOperation(true, false, false);
  conn_->IgnoreSendRtrEvent();
  for (uint32_t msn = 1; msn <= 2; ++msn) {
    wire::Bytes rec;
    wire::EncodeEventRecord(wire::MakeSendEvent(msn, {}, std::nullopt, std::nullopt), rec);
    wire::AppendFpdu(transport_->queue, wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, msn, rec)));
  }
  while (conn_->Pump(Clock::now() + std::chrono::milliseconds(50))) {
  }
  const Observation obs = conn_->Observe();
  ASSERT_EQ(obs.events.size(), 1u);
  EXPECT_EQ(obs.events[0].msn, 2u);
}

}  // namespace
}  // namespace rdmapct::conformance
