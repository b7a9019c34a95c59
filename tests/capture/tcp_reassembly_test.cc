// capture/tcp_reassembly.h: exact streams, frame maps and notes for
// in-order, out-of-order, retransmitted, overlapping, missing and wrapped
// segments, the handshake and its absence, FIN/RST, the out-of-order cap
// and a 4-tuple reused by a second connection.
#include "capture/tcp_reassembly.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/capture/capture_test_util.h"

namespace rdmapct::capture {
namespace {

using namespace rdmapct::capture::test;
using ::testing::ElementsAre;

const Endpoint kClient = Ep(V4(10, 0, 0, 1), 49152);
const Endpoint kServer = Ep(V4(10, 0, 0, 2), 5040);

class Reassembly : public ::testing::Test {
 protected:
  // Client data segment `frame` at stream offset `offset` (ISN `isn`).
  void C(uint64_t frame, uint32_t offset, const std::string& data, uint8_t flags = kTcpAck) {
    const wire::Bytes p = Text(data);
    r_.Add(Segment(frame, kClient, kServer, isn_ + 1 + offset, flags, p, 0));
  }
  void Handshake(uint32_t isn = 1000) {
    isn_ = isn;
    r_.Add(Segment(1, kClient, kServer, isn_, kTcpSyn, {}));
    r_.Add(Segment(2, kServer, kClient, 5000, kTcpSyn | kTcpAck, {}, isn_ + 1));
  }
  const DirectionStream& Up() const { return r_.connections().at(0).directions[0]; }
  std::vector<std::string> Notes() const {
    std::vector<std::string> out;
    for (const ReassemblyNote& n : r_.notes()) out.push_back(n.message);
    return out;
  }

  TcpReassembler r_;
  uint32_t isn_ = 1000;
};

TEST_F(Reassembly, InOrderSegmentsMakeOneStreamWithItsFrameMap) {
  Handshake();
  C(3, 0, "hello ");
  C(4, 6, "world");
  r_.Finish();
  ASSERT_EQ(r_.connections().size(), 1u);
  const ReassembledConnection& c = r_.connections()[0];
  EXPECT_EQ(c.client, kClient);
  EXPECT_EQ(c.server, kServer);
  EXPECT_EQ(c.first_frame, 1u);
  EXPECT_EQ(c.last_frame, 4u);
  EXPECT_TRUE(Up().syn);
  EXPECT_EQ(Up().first_seq, 1001u);
  ASSERT_EQ(Up().pieces.size(), 1u);
  EXPECT_EQ(Up().pieces[0].offset, 0u);
  EXPECT_EQ(Joined(Up()), Text("hello world"));
  EXPECT_THAT(Up().frames, ElementsAre(FrameMark{0, 3}, FrameMark{6, 4}));
  EXPECT_EQ(Up().FrameAt(5), 3u);
  EXPECT_EQ(Up().FrameAt(6), 4u);
  EXPECT_EQ(Up().octets_in, 11u);
  EXPECT_EQ(Up().octets_out, 11u);
  EXPECT_TRUE(r_.notes().empty());
  EXPECT_TRUE(c.directions[1].syn);
  EXPECT_EQ(c.directions[1].first_seq, 5001u);
}

TEST_F(Reassembly, OutOfOrderSegmentsWaitForTheOctetsBefore) {
  Handshake();
  C(3, 10, "KLMNO");
  C(4, 5, "FGHIJ");
  EXPECT_EQ(r_.Waiting(0, 0), 10u);
  EXPECT_EQ(Up().end(), 0u);
  C(5, 0, "ABCDE");
  EXPECT_EQ(r_.Waiting(0, 0), 0u);
  r_.Finish();
  EXPECT_EQ(Joined(Up()), Text("ABCDEFGHIJKLMNO"));
  EXPECT_THAT(Up().frames, ElementsAre(FrameMark{0, 5}, FrameMark{5, 4}, FrameMark{10, 3}));
  EXPECT_TRUE(r_.notes().empty());
}

TEST_F(Reassembly, IdenticalRetransmissionsAreIgnored) {
  Handshake();
  C(3, 0, "ABCDE");
  C(4, 0, "ABCDE");  // whole copy
  C(5, 3, "DEFGH");  // overlaps the end
  C(6, 10, "KL");
  C(7, 8, "IJKLMN");  // overlaps a waiting segment on both sides
  r_.Finish();
  EXPECT_EQ(Joined(Up()), Text("ABCDEFGHIJKLMN"));
  EXPECT_THAT(Up().frames,
              ElementsAre(FrameMark{0, 3}, FrameMark{5, 5}, FrameMark{8, 7}, FrameMark{10, 6}, FrameMark{12, 7}));
  EXPECT_TRUE(r_.notes().empty()) << Notes()[0];
  EXPECT_EQ(Up().octets_in, 5u + 5 + 5 + 2 + 6);
  EXPECT_EQ(Up().octets_out, 14u);
}

TEST_F(Reassembly, ConflictingOverlapsAreReportedAndTheFirstCopyKept) {
  Handshake();
  C(3, 0, "ABCDE");
  C(4, 2, "CxEFG");  // differs from delivered octets
  C(5, 20, "uvw");
  C(6, 19, "tUvWx");  // differs from waiting octets
  C(7, 7, "HIJKLMNOPQRS");
  r_.Finish();
  EXPECT_EQ(Joined(Up()), Text("ABCDEFGHIJKLMNOPQRStuvwx"));
  EXPECT_THAT(Notes(),
              ElementsAre("connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040): frame 4: conflicting overlap at seq "
                          "1004, stream offset 3: 1 of 3 overlapping octets differ from the copy in frame 3; the "
                          "first copy is kept",
                          "connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040): frame 6: conflicting overlap at seq "
                          "1021, stream offset 20: 2 of 3 overlapping octets differ from the copy in frame 5; the "
                          "first copy is kept"));
  EXPECT_EQ(r_.notes()[0].kind, ReassemblyNoteKind::kConflictingOverlap);
  EXPECT_EQ(r_.notes()[0].frame, 4u);
  EXPECT_EQ(r_.notes()[0].offset, 3u);
}

TEST_F(Reassembly, GapsAreReportedAndTheStreamResumesAfterThem) {
  Handshake();
  C(3, 0, "ABCD");
  C(4, 10, "KLMN");  // 6 octets never captured before
  C(5, 14, "OP");
  r_.Finish();
  ASSERT_EQ(Up().pieces.size(), 2u);
  EXPECT_EQ(Up().pieces[0].offset, 0u);
  EXPECT_EQ(Up().pieces[0].octets, Text("ABCD"));
  EXPECT_EQ(Up().pieces[1].offset, 10u);
  EXPECT_EQ(Up().pieces[1].octets, Text("KLMNOP"));
  EXPECT_THAT(Up().gaps, ElementsAre(StreamGap{4, 6, 4}));
  EXPECT_THAT(Up().frames, ElementsAre(FrameMark{0, 3}, FrameMark{10, 4}, FrameMark{14, 5}));
  EXPECT_EQ(Up().end(), 16u);
  EXPECT_THAT(Notes(), ElementsAre("connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040): frame 4: 6 octets never captured "
                                   "at seq 1005, stream offset 4; the stream resumes at offset 10"));
}

TEST_F(Reassembly, MissingOctetsBeforeTheFinAreAGapAtTheEnd) {
  Handshake();
  C(3, 0, "ABCD");
  C(4, 8, "", kTcpFin | kTcpAck);
  r_.Finish();
  EXPECT_EQ(Up().fin_offset, 8u);
  EXPECT_EQ(Up().fin_frame, 4u);
  EXPECT_THAT(Up().gaps, ElementsAre(StreamGap{4, 4, 0}));
  EXPECT_THAT(Notes(), ElementsAre("connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040): 4 octets before the FIN (frame 4) "
                                   "never captured at the end of the stream (seq 1005, stream offset 4)"));
}

TEST_F(Reassembly, OctetsThePeerAcknowledgedButNeverCapturedAreAGapAtTheEnd) {
  Handshake();
  C(3, 0, "ABCD");
  r_.Add(Segment(4, kServer, kClient, 5001, kTcpAck, {}, 1001 + 9));
  r_.Finish();
  EXPECT_THAT(Up().gaps, ElementsAre(StreamGap{4, 5, 0}));
  ASSERT_EQ(r_.notes().size(), 1u);
  EXPECT_EQ(r_.notes()[0].message,
            "connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040): 5 octets acknowledged by the peer "
            "never captured at the end of the stream (seq 1005, stream offset 4)");
}

TEST_F(Reassembly, SequenceNumbersWrap) {
  Handshake(0xFFFFFFF0u);  // data starts at 0xFFFFFFF1 and wraps after 15 octets
  C(3, 0, "0123456789");
  C(4, 20, "KLMNOPQRST");  // beyond the wrap, out of order
  C(5, 10, "ABCDEFGHIJ");  // across the wrap
  r_.Finish();
  EXPECT_EQ(Joined(Up()), Text("0123456789ABCDEFGHIJKLMNOPQRST"));
  EXPECT_THAT(Up().frames, ElementsAre(FrameMark{0, 3}, FrameMark{10, 5}, FrameMark{20, 4}));
  EXPECT_TRUE(r_.notes().empty());
}

TEST_F(Reassembly, WithoutTheHandshakeTheStreamStartsAtTheFirstSegment) {
  isn_ = 77776;  // data at 77777
  C(10, 0, "mid-");
  r_.Add(Segment(11, kServer, kClient, 42, kTcpAck, Text("reply"), 77781));
  C(12, 4, "stream");
  C(13, -3 + 0, "xyzmid");  // starts 3 octets before the first segment seen
  r_.Finish();
  const ReassembledConnection& c = r_.connections()[0];
  EXPECT_EQ(c.client, kClient);  // the sender of the first segment seen
  EXPECT_FALSE(Up().syn);
  EXPECT_EQ(Up().first_seq, 77777u);
  EXPECT_EQ(Joined(Up()), Text("mid-stream"));
  EXPECT_EQ(Joined(c.directions[1]), Text("reply"));
  EXPECT_EQ(c.directions[1].first_seq, 42u);
  ASSERT_EQ(r_.notes().size(), 1u);
  EXPECT_EQ(r_.notes()[0].kind, ReassemblyNoteKind::kBeforeStart);
  EXPECT_EQ(r_.notes()[0].message,
            "connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040): frame 13: 3 octets at seq 77774 "
            "lie before the start of the stream (seq 77777: the capture began after them) and "
            "are ignored");
}

TEST_F(Reassembly, FinRstAndOctetsAfterTheFin) {
  Handshake();
  C(3, 0, "ABC", kTcpAck | kTcpFin);
  C(4, 3, "DEF");  // after the FIN
  r_.Add(Segment(5, kServer, kClient, 5001, kTcpRst | kTcpAck, Text("reset reason"), 1005));
  r_.Finish();
  EXPECT_EQ(Joined(Up()), Text("ABC"));
  EXPECT_EQ(Up().fin_offset, 3u);
  EXPECT_EQ(Up().fin_frame, 3u);
  const DirectionStream& down = r_.connections()[0].directions[1];
  EXPECT_EQ(down.rst_frame, 5u);
  EXPECT_TRUE(down.pieces.empty());  // an RST's payload is no stream data
  EXPECT_THAT(Notes(), ElementsAre("connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040): frame 4: 3 octets after the FIN "
                                   "(seq 1004, stream offset 3, FIN in frame 3) ignored"));
}

TEST_F(Reassembly, KeepAlivesAreIgnored) {
  Handshake();
  C(3, 0, "ABCD");
  C(4, 3, std::string(1, '\0'));  // one octet already received, content meaningless
  r_.Finish();
  EXPECT_EQ(Joined(Up()), Text("ABCD"));
  EXPECT_TRUE(r_.notes().empty());
}

TEST(ReassemblyCap, OutOfOrderOctetsBeyondTheCapAreDroppedFurthestFirst) {
  TcpReassembler r(ReassemblyOptions{10});
  r.Add(Segment(1, kClient, kServer, 100, kTcpSyn, {}));
  const wire::Bytes a = Text("AAAAAA"), b = Text("BBBBBB"), head = Text("0123");
  r.Add(Segment(2, kClient, kServer, 101 + 10, kTcpAck, a));  // offsets 10..15
  r.Add(Segment(3, kClient, kServer, 101 + 20, kTcpAck, b));  // 20..25: 12 waiting, 2 over the cap
  EXPECT_EQ(r.Waiting(0, 0), 10u);
  EXPECT_EQ(r.FirstWaitingFrame(0, 0), 2u);
  r.Add(Segment(4, kClient, kServer, 101, kTcpAck, head));  // 0..3
  r.Finish();
  const DirectionStream& d = r.connections()[0].directions[0];
  ASSERT_EQ(d.pieces.size(), 3u);
  EXPECT_EQ(d.pieces[2].offset, 20u);
  EXPECT_EQ(d.pieces[2].octets, Text("BBBB"));
  ASSERT_GE(r.notes().size(), 1u);
  EXPECT_EQ(r.notes()[0].kind, ReassemblyNoteKind::kBufferFull);
  EXPECT_EQ(r.notes()[0].message,
            "connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040): frame 3: out-of-order buffer full "
            "(10 octets waiting): 2 octets from seq 125, stream offset 24 on dropped");
  EXPECT_EQ(r.notes()[0].offset, 24u);
  EXPECT_EQ(r.notes()[0].length, 2u);
}

TEST(ReassemblyConnections, ANewSynOnTheSameFourTupleIsANewConnection) {
  TcpReassembler r;
  const wire::Bytes one = Text("first"), two = Text("second");
  r.Add(Segment(1, kClient, kServer, 10, kTcpSyn, {}));
  r.Add(Segment(2, kClient, kServer, 10, kTcpSyn, {}));  // the same SYN again
  r.Add(Segment(3, kClient, kServer, 11, kTcpAck, one));
  r.Add(Segment(4, kClient, kServer, 9000, kTcpSyn, {}));
  r.Add(Segment(5, kServer, kClient, 300, kTcpSyn | kTcpAck, {}, 9001));
  r.Add(Segment(6, kClient, kServer, 9001, kTcpAck, two));
  const Endpoint other = Ep(V6(7), 1234);
  r.Add(Segment(7, kServer, other, 1, kTcpSyn | kTcpAck, {}, 1));  // a SYN-ACK first: its destination is the client
  r.Finish();
  ASSERT_EQ(r.connections().size(), 3u);
  EXPECT_EQ(Joined(r.connections()[0].directions[0]), one);
  EXPECT_EQ(r.connections()[0].last_frame, 3u);
  EXPECT_EQ(Joined(r.connections()[1].directions[0]), two);
  EXPECT_EQ(r.connections()[1].index, 1u);
  EXPECT_EQ(r.connections()[1].first_frame, 4u);
  EXPECT_EQ(r.connections()[2].client, other);
  EXPECT_EQ(r.connections()[2].server, kServer);
  EXPECT_TRUE(r.notes().empty());
}

}  // namespace
}  // namespace rdmapct::capture

namespace rdmapct::capture {
namespace {

// Streaming mode: what the listener gets, in order.
struct Listened : ReassemblyListener {
  std::string octets;
  std::vector<uint64_t> frames;
  void OnOctets(std::size_t, int, uint64_t offset, wire::ByteSpan o, uint64_t frame) override {
    EXPECT_EQ(offset, octets.size());
    octets.append(o.begin(), o.end());
    frames.push_back(frame);
  }
};

// Octets go to the listener as they become contiguous and are not kept;
// only the history is, to compare retransmissions with: a differing copy
// inside it is a conflicting overlap, one older than it is said once.
TEST(ReassemblyStreaming, OctetsGoToTheListenerAndOnlyTheHistoryIsKept) {
  ReassemblyOptions o;
  o.history = 8;
  TcpReassembler r(o);
  Listened l;
  r.SetListener(&l);
  const wire::Bytes a = Text("0123456789"), b = Text("abcdefghij"), c = Text("ABCDEFGHIJ");
  r.Add(Segment(1, kClient, kServer, 100, kTcpSyn, {}));
  r.Add(Segment(2, kClient, kServer, 111, kTcpAck, b));  // offsets 10..19: wait
  EXPECT_EQ(r.buffered_octets(), 10u);
  EXPECT_EQ(r.FirstWaitingFrame(0, 0), 2u);
  r.Add(Segment(3, kClient, kServer, 101, kTcpAck, a));  // 0..9, then 10..19 follow
  r.Add(Segment(4, kClient, kServer, 121, kTcpAck, c));  // 20..29
  EXPECT_EQ(l.octets, "0123456789abcdefghijABCDEFGHIJ");
  EXPECT_THAT(l.frames, ElementsAre(3, 2, 4));
  EXPECT_TRUE(r.connections()[0].directions[0].pieces.empty());
  EXPECT_LE(r.buffered_octets(), 2 * o.history);
  EXPECT_EQ(r.FirstWaitingFrame(0, 0), 0u);
  r.Add(Segment(5, kClient, kServer, 101, kTcpAck, Text("zz")));  // 0..1, long gone: said once
  r.Add(Segment(6, kClient, kServer, 103, kTcpAck, Text("zz")));  // not again
  r.Add(Segment(7, kClient, kServer, 129, kTcpAck, Text("!")));   // 28: differs from frame 4's 'I'
  r.Finish();
  ASSERT_EQ(r.notes().size(), 2u);
  EXPECT_EQ(r.notes()[0].kind, ReassemblyNoteKind::kBeyondHistory);
  EXPECT_EQ(r.notes()[1].kind, ReassemblyNoteKind::kConflictingOverlap);
  EXPECT_THAT(r.notes()[1].message, ::testing::HasSubstr("copy in frame 4"));
  EXPECT_GE(r.peak_buffered_octets(), 10u);  // the out-of-order wait counts
  EXPECT_LE(r.peak_buffered_octets(), 2 * o.history + 10);
}

// Octets delivered after the connection closed (here after the peer's RST)
// join its kept tail: a differing retransmission of them is a conflicting
// overlap streaming as in batch (a fuzz_pcap_reader finding).
TEST(ReassemblyStreaming, OctetsAfterTheCloseAreComparedLikeTheRest) {
  for (const bool streaming : {false, true}) {
    TcpReassembler r;
    Listened l;
    if (streaming) r.SetListener(&l);
    r.Add(Segment(1, kClient, kServer, 100, kTcpSyn, {}));
    r.Add(Segment(2, kServer, kClient, 5000, kTcpRst | kTcpAck, {}, 101));
    r.Add(Segment(3, kClient, kServer, 101, kTcpAck, Text("ABC")));
    r.Add(Segment(4, kClient, kServer, 101, kTcpAck, Text("AxC")));
    r.Finish();
    ASSERT_EQ(r.notes().size(), 1u) << "streaming " << streaming;
    EXPECT_EQ(r.notes()[0].kind, ReassemblyNoteKind::kConflictingOverlap) << "streaming " << streaming;
    EXPECT_THAT(r.notes()[0].message, ::testing::HasSubstr("copy in frame 3")) << "streaming " << streaming;
  }
}

}  // namespace
}  // namespace rdmapct::capture
