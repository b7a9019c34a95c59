// capture/capture_stream.h: the streaming decoder behind `replay --audit`.
// It must say what DecodeCaptureFile says (the same units per direction,
// the same warnings and errors in the same order, with the same frame
// numbers) while holding a bounded number of octets, whatever the size of
// the capture; and its progress bounds must hold (no unit comes later that
// ends in an earlier capture frame than promised).
#include "capture/capture_stream.h"
#include "capture/stream_direction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::capture {
namespace {

using wire::Bytes;

// A TCP conversation as the segments of a capture, numbered from frame 1.
class Segments {
 public:
  // The octets `from` sends next (0 client, 1 server), as one segment.
  void Send(int from, const Bytes& payload) {
    Push(from, seq_[from], payload);
    seq_[from] += Size(payload);
  }
  // The same, but the segment is not captured (a gap).
  void Lose(int from, const Bytes& payload) { seq_[from] += Size(payload); }
  // `payload` at the sequence number of `back` octets ago (a retransmission).
  void Resend(int from, uint32_t back, const Bytes& payload) { Push(from, seq_[from] - back, payload); }
  void SwapLastTwo() { std::swap(segments_[segments_.size() - 1], segments_[segments_.size() - 2]); }
  void Fin(int from) { Push(from, seq_[from], {}, kTcpFin | kTcpAck); }
  // Forgets the segments handed out (the sequence and frame numbers go on).
  void Clear() {
    frame_base_ += segments_.size();
    segments_.clear();
  }

  // TcpSegments (frames numbered in order), valid while this object lives.
  std::vector<TcpSegment> Frames() const {
    std::vector<TcpSegment> out;
    for (const Held& h : segments_) {
      TcpSegment s;
      s.frame = frame_base_ + out.size() + 1;
      s.source = ends_[h.from];
      s.destination = ends_[1 - h.from];
      s.seq = h.seq;
      s.ack = seq_[1 - h.from];
      s.flags = h.flags;
      s.payload = h.payload;
      out.push_back(s);
    }
    return out;
  }

 private:
  struct Held {
    int from;
    uint32_t seq;
    Bytes payload;
    uint8_t flags;
  };
  static uint32_t Size(const Bytes& b) { return static_cast<uint32_t>(b.size()); }
  void Push(int from, uint32_t seq, const Bytes& payload, uint8_t flags = kTcpAck) {
    segments_.push_back(Held{from, seq, payload, flags});
  }
  std::deque<Held> segments_;
  Endpoint ends_[2] = {{{4, {10, 0, 0, 1}}, 49152}, {{4, {10, 0, 0, 2}}, 5040}};
  uint32_t seq_[2] = {0xfffff000u, 5000};  // the client's sequence numbers wrap
  uint64_t frame_base_ = 0;
};

Bytes StartupFrame(bool reply) {
  wire::MpaStartupFrame f;
  f.crc_required = true;
  f.is_reply = reply;
  return wire::EncodeMpaStartupFrame(f);
}

Bytes Write(uint64_t to, std::size_t size) {
  return wire::EncodeFpdu(wire::EncodeSegment(wire::MakeRdmaWrite(0xCC01, to, std::vector<uint8_t>(size, 0x5a))));
}

// What a decoder handed up, in comparable form.
std::string UnitText(const CapturedUnit& u) {
  return std::to_string(static_cast<int>(u.kind)) + "@" + std::to_string(u.offset) + "+" + std::to_string(u.length) +
         " frames " + std::to_string(u.capture_frame) + "-" + std::to_string(u.last_capture_frame);
}

struct BatchRecorder : CaptureDecodeSink {
  std::array<std::vector<std::string>, 2> units;
  std::vector<std::string> issues;
  void OnConnection(const ConnectionDecode&) override {}
  void OnFrame(const CaptureFrame&) override {}
  void OnIssue(const CaptureIssue& i) override { issues.push_back(i.message); }
  void OnUnit(const CapturedUnit& u) override { units[u.direction].push_back(UnitText(u)); }
};

// Checks the progress promise on the fly: a unit never ends before the
// lowest frame announced for its direction.
struct StreamRecorder : CaptureStreamSink {
  std::array<std::vector<std::string>, 2> units;
  std::vector<std::string> issues;
  std::array<uint64_t, 2> lowest{};
  uint64_t broken_promises = 0, framings = 0, ends = 0, closed = 0;
  void OnFraming(const ReassembledConnection&, const ConnectionFraming&) override { ++framings; }
  void OnUnit(const CapturedUnit& u) override {
    units[u.direction].push_back(UnitText(u));
    if (u.last_capture_frame < lowest[u.direction]) ++broken_promises;
  }
  void OnProgress(std::size_t, const std::array<uint64_t, 2>& low) override {
    for (int d = 0; d < 2; ++d) {
      if (low[d] < lowest[d]) ++broken_promises;  // a bound never goes back
      lowest[d] = low[d];
    }
  }
  void OnConnectionClosed(const ReassembledConnection&) override { ++closed; }
  void OnConnectionEnd(const ConnectionDecode&) override { ++ends; }
  void OnIssue(const CaptureIssue& i) override { issues.push_back(i.message); }
};

// The same segments through both decoders; returns what the streaming one said.
StreamRecorder ExpectSameAsBatch(const Segments& conversation, const CaptureStreamOptions& options = {}) {
  const std::vector<TcpSegment> frames = conversation.Frames();
  TcpReassembler reassembler(options.reassembly);
  for (const TcpSegment& s : frames) reassembler.Add(s);
  reassembler.Finish();
  BatchRecorder batch;
  CaptureDecodeOptions batch_options;
  batch_options.describe = false;
  CaptureDecodeSummary batch_summary;
  DecodeConnections(reassembler, batch_options, batch, batch_summary);

  StreamRecorder stream;
  CaptureStreamDecoder decoder(options, stream);
  for (const TcpSegment& s : frames) decoder.Add(s);
  CaptureReadSummary read;
  read.opened = true;
  const CaptureDecodeSummary summary = decoder.Finish(read);
  EXPECT_EQ(stream.units[0], batch.units[0]);
  EXPECT_EQ(stream.units[1], batch.units[1]);
  EXPECT_EQ(stream.issues, batch.issues);
  EXPECT_EQ(summary.frames, batch_summary.frames);
  EXPECT_EQ(summary.errors, batch_summary.errors);
  EXPECT_EQ(stream.broken_promises, 0u);
  return stream;
}

TEST(CaptureStream, SaysWhatTheBatchDecoderSaysAboutGapsErrorsAndRetransmissions) {
  Segments c;
  c.Send(0, StartupFrame(false));
  c.Send(1, StartupFrame(true));
  uint64_t to = 0;
  for (int n = 0; n < 40; ++n, to += 100) {
    Bytes fpdu = Write(to, 100);
    if (n == 7) fpdu[fpdu.size() - 1] ^= 0xff;  // a CRC error: an error of its frame
    if (n == 12) {
      c.Lose(0, fpdu);  // a gap: the decoder resynchronises after it
      continue;
    }
    if (n == 25) {  // two FPDUs in one segment, the second in error: its rank counts the first
      Bytes both = Write(to, 8);
      fpdu[fpdu.size() - 2] ^= 0x01;
      both.insert(both.end(), fpdu.begin(), fpdu.end());
      c.Send(0, both);
      continue;
    }
    const Bytes head(fpdu.begin(), fpdu.begin() + 30), tail(fpdu.begin() + 30, fpdu.end());
    c.Send(0, head);
    c.Send(0, tail);
    if (n % 5 == 0) c.SwapLastTwo();                                                         // out of order
    if (n == 20) c.Resend(0, static_cast<uint32_t>(tail.size()), Bytes(tail.size(), 0x11));  // conflicting
    if (n % 9 == 0) c.Send(1, Write(to, 16));
  }
  const Bytes last = Write(to, 64);
  c.Send(0, Bytes(last.begin(), last.begin() + 20));  // closed inside a frame
  c.Fin(0);
  const StreamRecorder r = ExpectSameAsBatch(c);
  using ::testing::Contains;
  using ::testing::HasSubstr;
  EXPECT_THAT(r.issues, Contains(HasSubstr("CRC mismatch")));
  EXPECT_THAT(r.issues, Contains(HasSubstr("(Frame ")));
  EXPECT_THAT(r.issues, Contains(HasSubstr("never captured")));
  EXPECT_THAT(r.issues, Contains(HasSubstr("conflicting overlap")));
  EXPECT_THAT(r.issues, Contains(HasSubstr("closed its stream")));
  EXPECT_GT(r.units[0].size(), 30u);
  EXPECT_GT(r.units[1].size(), 4u);
}

TEST(CaptureStream, SaysWhatTheBatchDecoderSaysWithoutTheHandshake) {
  Segments c;
  uint64_t to = 0;
  c.Send(0, Bytes(7, 0x33));  // the capture starts inside an FPDU
  for (int n = 0; n < 30; ++n, to += 200) {
    c.Send(0, Write(to, 200));
    if (n % 4 == 0) c.Send(1, Write(to, 40));
    if (n == 10) c.Send(0, Bytes(50, 0x77));  // garbage: resynchronised after it
  }
  const StreamRecorder r = ExpectSameAsBatch(c);
  EXPECT_THAT(r.issues, ::testing::Contains(::testing::HasSubstr("the capture starts after the MPA handshake")));
  EXPECT_THAT(r.issues, ::testing::Contains(::testing::HasSubstr("resynchronised at stream offset")));
  EXPECT_GT(r.units[0].size(), 5u);
}

TEST(CaptureStream, SaysWhatTheBatchDecoderSaysAboutAConnectionThatIsNotIwarp) {
  Segments c;
  for (int n = 0; n < 20; ++n) c.Send(n % 2, Bytes(300, static_cast<uint8_t>('a' + n)));
  EXPECT_THAT(ExpectSameAsBatch(c).issues, ::testing::ElementsAre(::testing::HasSubstr("not decoded")));
}

// Once both FINs are in and everything before them was delivered, the
// connection is decoded to its end and the sink told so, before the
// capture ends; what it reports at the end is unchanged.
TEST(CaptureStream, AConnectionClosedByBothFinsIsFinishedWhenItCloses) {
  Segments c;
  c.Send(0, StartupFrame(false));
  c.Send(1, StartupFrame(true));
  for (int n = 0; n < 10; ++n) c.Send(n % 3 == 0 ? 1 : 0, Write(100 * n, 100));
  const Bytes last = Write(1000, 64);
  c.Send(0, Bytes(last.begin(), last.begin() + 20));  // the FIN comes inside a frame
  c.Fin(0);
  c.Fin(1);
  StreamRecorder sink;
  CaptureStreamDecoder decoder({}, sink);
  const std::vector<TcpSegment> frames = c.Frames();
  for (const TcpSegment& s : frames) decoder.Add(s);
  EXPECT_EQ(sink.closed, 1u);
  EXPECT_EQ(sink.units[0].size() + sink.units[1].size(), 12u);
  EXPECT_EQ(sink.ends, 0u);
  CaptureReadSummary read;
  read.opened = true;
  decoder.Finish(read);
  EXPECT_EQ(sink.ends, 1u);
  EXPECT_THAT(ExpectSameAsBatch(c).issues, ::testing::Contains(::testing::HasSubstr("closed its stream")));
}

// Many errors: each is placed among the frames (RecordRanks) without
// going over all earlier ones again.
TEST(CaptureStream, SaysWhatTheBatchDecoderSaysAboutManyErrors) {
  Segments c;
  c.Send(0, StartupFrame(false));
  c.Send(1, StartupFrame(true));
  for (int n = 0; n < 6000; ++n) {
    Bytes fpdu = Write(64 * n, 64);
    if (n % 3 == 2) fpdu[fpdu.size() - 1] ^= 0x5a;
    c.Send(n % 7 == 0 ? 1 : 0, fpdu);
  }
  const StreamRecorder r = ExpectSameAsBatch(c);
  EXPECT_GE(std::count_if(r.issues.begin(), r.issues.end(),
                          [](const std::string& m) { return m.find("CRC mismatch") != std::string::npos; }),
            1000);
}

// The framing is decided at the latest when a direction holds max_held
// octets. A peer that never sends changes nothing (the same as the batch
// decoder, no warning); a Reply that comes after that is said.
TEST(CaptureStream, AFramingDecidedAtTheHoldCapIsSaidOnlyWhenItMattered) {
  CaptureStreamOptions options;
  options.max_held = kStreamLookahead + 4096;  // no less than a framing probe looks at
  Segments one_way;
  one_way.Send(0, StartupFrame(false));
  for (std::size_t n = 0; n < options.max_held / 200 + 40; ++n) one_way.Send(0, Write(200 * n, 200));
  EXPECT_THAT(ExpectSameAsBatch(one_way, options).issues,
              ::testing::Not(::testing::Contains(::testing::HasSubstr("decided after"))));

  Segments late_reply = one_way;
  late_reply.Send(1, StartupFrame(true));
  StreamRecorder sink;
  CaptureStreamDecoder decoder(options, sink);
  for (const TcpSegment& s : late_reply.Frames()) decoder.Add(s);
  CaptureReadSummary read;
  read.opened = true;
  decoder.Finish(read);
  EXPECT_THAT(sink.issues, ::testing::Contains(::testing::HasSubstr("the MPA framing was decided after " +
                                                                    std::to_string(options.max_held) + " octets")));
}

// A capture many times the cap is decoded completely while the octets held
// for reassembly and decoding stay within the windows: 24 MiB of FPDUs,
// out of order and retransmitted, through a 1 MiB cap and 64 KiB histories.
TEST(CaptureStream, HoldsABoundedNumberOfOctetsWhateverTheCaptureSize) {
  CaptureStreamOptions options;
  options.reassembly.max_out_of_order = std::size_t{1} << 20;
  options.reassembly.history = std::size_t{64} << 10;
  StreamRecorder sink;
  CaptureStreamDecoder decoder(options, sink);
  std::size_t fed = 0;
  Segments c;
  c.Send(0, StartupFrame(false));
  c.Send(1, StartupFrame(true));
  uint64_t to = 0;
  constexpr int kFpdus = 16384;
  for (int n = 0; n < kFpdus; ++n, to += 1420) {
    const Bytes fpdu = Write(to, 1420);
    const Bytes head(fpdu.begin(), fpdu.begin() + 700), tail(fpdu.begin() + 700, fpdu.end());
    c.Send(0, head);
    c.Send(0, tail);
    if (n % 3 == 0) c.SwapLastTwo();
    if (n % 7 == 0) c.Resend(0, static_cast<uint32_t>(tail.size()), tail);
    if (n % 64 == 0) c.Send(1, Write(to, 100));
    if (n % 1024 == 1023) {  // hand the segments over as a capture would, and forget them
      for (const TcpSegment& s : c.Frames()) {
        decoder.Add(s);
        fed += s.payload.size();
      }
      c.Clear();
    }
  }
  CaptureReadSummary read;
  read.opened = true;
  const CaptureDecodeSummary summary = decoder.Finish(read);
  EXPECT_GE(fed, std::size_t{24} * options.reassembly.max_out_of_order);
  EXPECT_EQ(sink.units[0].size(), 1u + kFpdus);
  EXPECT_EQ(sink.units[1].size(), 1u + kFpdus / 64);
  EXPECT_THAT(sink.issues, ::testing::IsEmpty());
  EXPECT_EQ(sink.broken_promises, 0u);
  // Histories (twice their size at most, per direction), an FPDU waiting
  // out of order, an incomplete FPDU per direction.
  EXPECT_LE(summary.peak_buffered_octets, 4 * options.reassembly.history + 4 * 2048);
  EXPECT_GT(summary.peak_buffered_octets, options.reassembly.history);  // the history is in the count
}

}  // namespace
}  // namespace rdmapct::capture
