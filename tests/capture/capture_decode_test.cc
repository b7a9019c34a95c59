// capture/capture_decode.h and capture/mpa_framing.h on captures written
// by the project's pcap writer: roles and framing from the MPA Request and
// Reply (CRC, Markers per direction), every frame with its capture frame(s),
// connection and direction, FPDUs spread over several segments, captures
// that start after the handshake, gaps, a CRC error, a stream closed inside
// a frame, a lost Reply, a non-iWARP connection and the connection filter.
#include "capture/capture_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <atomic>

#include "capture/pcap_writer.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/rdmap.h"
#include "tests/capture/capture_test_util.h"
#include "tests/capture/pcap_test_util.h"

namespace rdmapct::capture {
namespace {

using namespace rdmapct::capture::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using wire::Bytes;

struct SeenFrame {
  uint64_t number, connection;
  int direction;
  std::string direction_name;
  uint64_t capture_frame, offset;
  wire::Field tree;
};

struct Recorder : CaptureDecodeSink {
  std::vector<wire::Field> connections;
  std::vector<ConnectionFraming> framings;
  std::vector<SeenFrame> frames;
  std::vector<CaptureIssue> issues;
  void OnConnection(const ConnectionDecode& c) override {
    connections.push_back(c.tree);
    framings.push_back(*c.framing);
  }
  void OnFrame(const CaptureFrame& f) override {
    frames.push_back({f.number, f.connection, f.direction, f.direction_name, f.capture_frame, f.offset, f.tree});
  }
  void OnIssue(const CaptureIssue& i) override { issues.push_back(i); }
  std::vector<std::string> Messages(IssueSeverity s) const {
    std::vector<std::string> out;
    for (const CaptureIssue& i : issues) {
      if (i.severity == s) out.push_back(i.message);
    }
    return out;
  }
};

Bytes Request(bool crc, bool markers) {
  wire::MpaStartupFrame f;
  f.crc_required = crc;
  f.marker_required = markers;
  f.private_data = Text("req-pd");
  return wire::EncodeMpaStartupFrame(f);
}

Bytes Reply(bool crc, bool markers) {
  wire::MpaStartupFrame f;
  f.is_reply = true;
  f.crc_required = crc;
  f.marker_required = markers;
  return wire::EncodeMpaStartupFrame(f);
}

Bytes SendUlpdu(uint32_t msn, std::size_t size) {
  return wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, msn, Bytes(size, static_cast<uint8_t>(msn))));
}

// FPDUs of Sends with MSN first, first+1, ... (sizes as given), with Markers
// counted from the start of `out` when `markers`.
Bytes Fpdus(uint32_t first, const std::vector<std::size_t>& sizes, bool markers, uint32_t crc_xor_of_second = 0) {
  Bytes out;
  wire::MarkerInserter ins(0);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const Bytes u = SendUlpdu(first + static_cast<uint32_t>(k), sizes[k]);
    const wire::FpduEncodeOptions o{.crc_xor = k == 1 ? crc_xor_of_second : 0};
    if (markers)
      ins.AppendUlpdu(out, u, o);
    else
      wire::AppendFpdu(out, u, o);
  }
  return out;
}

TcpEvent Data(Sender s, Bytes b) { return TcpEvent{s, TcpEventKind::kData, {}, std::move(b), 0}; }
TcpEvent Gap(Sender s, uint32_t n) { return TcpEvent{s, TcpEventKind::kGap, {}, {}, n}; }
TcpEvent Fin(Sender s) { return TcpEvent{s, TcpEventKind::kFin, {}, {}, 0}; }

struct Decoded {
  Recorder rec;
  CaptureDecodeSummary summary;
  std::vector<pcap_test::ParsedPacket> packets;
};

Decoded DecodeWritten(const std::string& name, const std::vector<TcpConnection>& conns,
                      const PcapWriterOptions& wo = {}, std::size_t drop_first = 0, CaptureDecodeOptions options = {}) {
  TcpCapture cap;
  cap.connections = conns;
  std::vector<Packet> packets;
  std::string error;
  EXPECT_TRUE(BuildPackets(cap, wo, packets, error)) << error;
  packets.erase(packets.begin(), packets.begin() + static_cast<std::ptrdiff_t>(drop_first));
  const auto path = TempPath(name + ".pcap");
  EXPECT_TRUE(WritePcapFile(path, packets, error)) << error;
  Decoded d;
  d.summary = DecodeCaptureFile(path.string(), options, d.rec);
  d.packets = pcap_test::ReadCapture(path).packets;
  return d;
}

// The capture frame (1-based) whose TCP payload starts with `octets`.
uint64_t FrameStarting(const Decoded& d, const Bytes& octets) {
  for (std::size_t i = 0; i < d.packets.size(); ++i) {
    const Bytes& p = d.packets[i].payload;
    if (!p.empty() && p.size() <= octets.size() && std::equal(p.begin(), p.end(), octets.begin())) return i + 1;
    if (p.size() > octets.size() && std::equal(octets.begin(), octets.end(), p.begin())) return i + 1;
  }
  return 0;
}

const wire::Field* Child(const wire::Field& f, const std::string& name) { return f.Find(name); }

TEST(CaptureDecode, HandshakeAndFpdusEachWithItsCaptureFrame) {
  TcpConnection c;
  const Bytes req = Request(true, false), rep = Reply(false, false);
  const Bytes c1 = Fpdus(1, {10}, false), c2 = Fpdus(2, {20}, false), s1 = Fpdus(1, {30}, false);
  c.events = {Data(Sender::kClient, req), Data(Sender::kServer, rep), Data(Sender::kClient, c1),
              Data(Sender::kServer, s1),  Data(Sender::kClient, c2),  Fin(Sender::kClient),
              Fin(Sender::kServer)};
  const Decoded d = DecodeWritten("handshake", {c});
  EXPECT_TRUE(d.rec.issues.empty()) << d.rec.issues[0].message;
  EXPECT_EQ(d.summary.errors, 0u);
  EXPECT_EQ(d.summary.connections, 1u);
  EXPECT_EQ(d.summary.iwarp_connections, 1u);
  ASSERT_EQ(d.rec.framings.size(), 1u);
  const ConnectionFraming& f = d.rec.framings[0];
  EXPECT_EQ(f.initiator, 0);
  ASSERT_TRUE(f.negotiation);
  for (const DirectionFraming& df : f.directions) {
    EXPECT_TRUE(df.decided);
    EXPECT_TRUE(df.crc);  // the Request asked for CRCs: on in both directions
    EXPECT_FALSE(df.markers);
    EXPECT_EQ(df.basis, "negotiated by the Request and Reply Frames");
  }
  ASSERT_EQ(d.rec.frames.size(), 5u);
  const struct {
    int direction;
    const Bytes* octets;
    uint64_t offset;
    const char* first_layer;
  } want[] = {{0, &req, 0, "MPA Request Frame"},
              {1, &rep, 0, "MPA Reply Frame"},
              {0, &c1, req.size(), "MPA FPDU"},
              {1, &s1, rep.size(), "MPA FPDU"},
              {0, &c2, req.size() + c1.size(), "MPA FPDU"}};
  for (std::size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    const SeenFrame& s = d.rec.frames[i];
    EXPECT_EQ(s.number, i + 1);
    EXPECT_EQ(s.tree.name, "Frame " + std::to_string(i + 1));
    EXPECT_EQ(s.direction, want[i].direction);
    EXPECT_EQ(s.direction_name, want[i].direction == 0 ? "Initiator -> Responder" : "Responder -> Initiator");
    EXPECT_EQ(s.offset, want[i].offset);
    EXPECT_EQ(s.capture_frame, FrameStarting(d, *want[i].octets));
    ASSERT_GE(s.tree.children.size(), 2u);
    EXPECT_EQ(s.tree.children[0].name, "Capture");
    EXPECT_EQ(s.tree.children[1].name, want[i].first_layer);
    EXPECT_EQ(Child(s.tree, "Capture Frame")->number, s.capture_frame);
    EXPECT_EQ(Child(s.tree, "Connection")->number, 0u);
    EXPECT_EQ(Child(s.tree, "Source")->value, want[i].direction == 0 ? "10.0.0.1:49152" : "10.0.0.2:5040");
  }
  EXPECT_EQ(Child(d.rec.frames[2].tree, "MSN (Message Sequence Number)")->number, 1u);
  EXPECT_EQ(d.rec.connections[0].name, "Connection 0");
  EXPECT_EQ(d.rec.connections[0].value, "10.0.0.1:49152 -> 10.0.0.2:5040, capture frames 1-" +
                                            std::to_string(d.packets.size()) + ", iWARP, MPA Rev 1");
}

// REQ R5044-7.1.1-06 R5044-7.1.1-07: Markers go towards the side that asked.
// `rdmapct replay` interrupted (SIGINT / SIGTERM): a stop request set
// before decoding leaves nothing decoded and says so; without one the same
// capture decodes.
TEST(CaptureDecode, AStopRequestStopsDecodingAndMarksTheSummaryInterrupted) {
  TcpConnection c;
  c.events = {Data(Sender::kClient, Request(true, false)), Data(Sender::kServer, Reply(false, false)),
              Data(Sender::kClient, Fpdus(1, {10}, false)), Fin(Sender::kClient), Fin(Sender::kServer)};
  std::atomic<int> stop{1};
  CaptureDecodeOptions options;
  options.stop = &stop;
  const Decoded stopped = DecodeWritten("stopped", {c}, {}, 0, options);
  EXPECT_TRUE(stopped.summary.interrupted);
  EXPECT_TRUE(stopped.rec.frames.empty());
  stop = 0;
  const Decoded whole = DecodeWritten("not-stopped", {c}, {}, 0, options);
  EXPECT_FALSE(whole.summary.interrupted);
  EXPECT_FALSE(whole.rec.frames.empty());
}

TEST(CaptureDecode, MarkersFollowTheReceiversMBit) {
  TcpConnection c;
  const Bytes to_server = Fpdus(1, {600, 40}, false);
  const Bytes to_client = Fpdus(1, {700, 50}, true);  // the Request asked (M = 1)
  c.events = {Data(Sender::kClient, Request(true, true)), Data(Sender::kServer, Reply(true, false)),
              Data(Sender::kClient, to_server), Data(Sender::kServer, to_client)};
  const Decoded d = DecodeWritten("markers", {c});
  EXPECT_TRUE(d.rec.issues.empty()) << d.rec.issues[0].message;
  const ConnectionFraming& f = d.rec.framings[0];
  EXPECT_FALSE(f.directions[0].markers);
  EXPECT_TRUE(f.directions[1].markers);
  EXPECT_EQ(f.directions[1].seq_start, Reply(true, false).size());
  ASSERT_EQ(d.rec.frames.size(), 6u);
  // The server's first FPDU (700 + 18 + 6 octets from SeqStart) holds the
  // Markers at 0 and 512, its second (at 732, 76 octets) none; the client's none.
  const wire::Field* markers = Child(d.rec.frames[4].tree, "Markers");
  ASSERT_NE(markers, nullptr);
  EXPECT_EQ(markers->value, "2");
  EXPECT_FALSE(markers->problem);
  EXPECT_EQ(Child(d.rec.frames[5].tree, "Markers"), nullptr);
  EXPECT_EQ(Child(d.rec.frames[2].tree, "Markers"), nullptr);
}

TEST(CaptureDecode, AnFpduOverSeveralSegmentsNamesThemAll) {
  TcpConnection c;
  const Bytes big = Fpdus(1, {200}, false);
  c.events = {Data(Sender::kClient, Request(true, false)), Data(Sender::kServer, Reply(true, false)),
              Data(Sender::kClient, big)};
  PcapWriterOptions wo;
  wo.mss = 100;
  const Decoded d = DecodeWritten("spanning", {c}, wo);
  EXPECT_TRUE(d.rec.issues.empty()) << d.rec.issues[0].message;
  ASSERT_EQ(d.rec.frames.size(), 3u);
  const SeenFrame& s = d.rec.frames[2];
  const uint64_t first = FrameStarting(d, big);
  EXPECT_EQ(s.capture_frame, first);
  ASSERT_NE(Child(s.tree, "Capture Frames"), nullptr);
  EXPECT_EQ(Child(s.tree, "Capture Frames")->value,
            std::to_string(first) + ", " + std::to_string(first + 1) + ", " + std::to_string(first + 2));
}

TEST(CaptureDecode, ACaptureStartingAfterTheHandshakeResynchronisesOnACrc) {
  TcpConnection c;
  const Bytes req = Request(true, false);
  const Bytes fpdus = Fpdus(1, {150, 20, 30, 40}, false);
  c.events = {Data(Sender::kClient, req), Data(Sender::kServer, Reply(true, false)), Data(Sender::kClient, fpdus)};
  PcapWriterOptions wo;
  wo.mss = 100;
  // Drop SYN, SYN-ACK, ACK, the Request, the Reply and the first 100 octets of FPDUs.
  const Decoded d = DecodeWritten("midstream", {c}, wo, 6);
  EXPECT_EQ(d.summary.errors, 0u);
  const ConnectionFraming& f = d.rec.framings[0];
  EXPECT_FALSE(f.initiator);
  EXPECT_TRUE(f.iwarp);
  EXPECT_EQ(
      f.directions[0].basis,
      "an FPDU with a valid CRC found at stream offset 76 (the MPA handshake was not captured); Markers assumed off");
  // The first FPDU is 176 octets; 100 of them were not captured.
  EXPECT_THAT(d.rec.Messages(IssueSeverity::kWarning),
              ElementsAre("connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040, client -> server): resynchronised at "
                          "stream offset 76 (capture frame 1): 76 octets from offset 0 skipped (the capture starts "
                          "after the MPA handshake)"));
  ASSERT_EQ(d.rec.frames.size(), 3u);
  EXPECT_EQ(d.rec.frames[0].direction_name, "client -> server");
  EXPECT_EQ(Child(d.rec.frames[0].tree, "MSN (Message Sequence Number)")->number, 2u);
}

TEST(CaptureDecode, AfterAGapMarkersPointBackToTheFpdus) {
  TcpConnection c;
  const Bytes req = Request(true, false);
  const Bytes fpdus = Fpdus(1, {300, 900, 60, 2000, 70, 80}, true);  // the Reply asks for Markers
  const std::size_t cut = 500, lost = 700;                           // inside FPDU 2 .. inside FPDU 4
  c.events = {Data(Sender::kClient, req), Data(Sender::kServer, Reply(true, true)),
              Data(Sender::kClient, Bytes(fpdus.begin(), fpdus.begin() + cut)), Gap(Sender::kClient, lost),
              Data(Sender::kClient, Bytes(fpdus.begin() + cut + lost, fpdus.end()))};
  const Decoded d = DecodeWritten("gap-markers", {c});
  EXPECT_EQ(d.summary.errors, 0u);
  const std::vector<std::string> w = d.rec.Messages(IssueSeverity::kWarning);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_THAT(w[0], HasSubstr("700 octets never captured at seq"));
  EXPECT_THAT(w[1],
              HasSubstr("a frame continues into octets that were not captured: incomplete FPDU at stream offset " +
                        std::to_string(req.size() + 328) + " (172 octets there, capture frame"));
  EXPECT_THAT(w[2], HasSubstr("resynchronised at stream offset"));
  EXPECT_THAT(w[2], HasSubstr("(after a gap)"));
  // The first Send, then the FPDUs after the one the gap cut (the third
  // holds no Marker: found by trying offsets before the fourth's Marker).
  std::vector<uint64_t> msns;
  for (const SeenFrame& s : d.rec.frames) {
    if (const wire::Field* m = Child(s.tree, "MSN (Message Sequence Number)")) msns.push_back(*m->number);
  }
  EXPECT_THAT(msns, ElementsAre(1u, 3u, 4u, 5u, 6u));
  for (const SeenFrame& s : d.rec.frames) {
    const wire::Field* mk = Child(s.tree, "Markers");
    if (mk != nullptr) {
      EXPECT_FALSE(mk->problem);
    }
  }
}

TEST(CaptureDecode, ACrcErrorBelongsToItsFrameAndDecodingGoesOn) {
  TcpConnection c;
  c.events = {Data(Sender::kClient, Request(true, false)), Data(Sender::kServer, Reply(true, false)),
              Data(Sender::kClient, Fpdus(1, {10, 20, 30}, false, 0x1))};
  const Decoded d = DecodeWritten("crc-error", {c});
  EXPECT_EQ(d.summary.errors, 1u);
  EXPECT_TRUE(d.rec.Messages(IssueSeverity::kWarning).empty());
  ASSERT_EQ(d.rec.frames.size(), 5u);
  const std::vector<std::string> e = d.rec.Messages(IssueSeverity::kError);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_THAT(e[0], HasSubstr("connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040, Initiator -> Responder): CRC mismatch"));
  EXPECT_THAT(e[0], HasSubstr("(Frame 4, capture frame " + std::to_string(d.rec.frames[3].capture_frame) + ")"));
  const CaptureIssue& issue = d.rec.issues.back();
  EXPECT_EQ(issue.frame, 4u);
  ASSERT_TRUE(issue.error);
  EXPECT_EQ(issue.error->kind, wire::DecodeErrorKind::kCrcMismatch);
  EXPECT_TRUE(Child(d.rec.frames[3].tree, "CRC")->problem);
  EXPECT_EQ(Child(d.rec.frames[4].tree, "MSN (Message Sequence Number)")->number, 3u);
}

TEST(CaptureDecode, ClosingInsideAFrameIsAnError) {
  TcpConnection c;
  const Bytes f = Fpdus(1, {40}, false);
  c.events = {Data(Sender::kClient, Request(true, false)), Data(Sender::kServer, Reply(true, false)),
              Data(Sender::kClient, Bytes(f.begin(), f.begin() + 20)), Fin(Sender::kClient)};
  const Decoded d = DecodeWritten("fin-inside", {c});
  EXPECT_EQ(d.summary.errors, 1u);
  ASSERT_EQ(d.rec.Messages(IssueSeverity::kError).size(), 1u);
  EXPECT_THAT(d.rec.Messages(IssueSeverity::kError)[0],
              HasSubstr(": the sender closed its stream (FIN in capture frame"));
  EXPECT_THAT(d.rec.Messages(IssueSeverity::kError)[0],
              HasSubstr(") inside a frame: incomplete FPDU at stream offset 26 (20 octets there, capture frame"));
}

TEST(CaptureDecode, WithoutTheReplyTheFramingIsFoundByTryingTheFirstFpdus) {
  TcpConnection c;
  const Bytes rep = Reply(true, true);  // asks for Markers: the client's FPDUs carry them
  c.events = {Data(Sender::kClient, Request(false, false)), Gap(Sender::kServer, static_cast<uint32_t>(rep.size())),
              Data(Sender::kClient, Fpdus(1, {600, 10}, true)), Data(Sender::kServer, Fpdus(1, {20, 30}, false))};
  const Decoded d = DecodeWritten("no-reply", {c});
  EXPECT_EQ(d.summary.errors, 0u);
  const ConnectionFraming& f = d.rec.framings[0];
  EXPECT_EQ(f.initiator, 0);
  EXPECT_TRUE(f.directions[0].crc);
  EXPECT_TRUE(f.directions[0].markers);
  EXPECT_THAT(f.directions[0].basis, HasSubstr("CRC use and Markers found by trying the first FPDUs"));
  EXPECT_FALSE(f.directions[1].markers);  // the Request's M = 0
  EXPECT_EQ(d.rec.frames.size(), 5u);     // Request, 2 + 2 FPDUs
}

TEST(CaptureDecode, NonIwarpConnectionsAreNamedButNotDecoded) {
  TcpConnection http;
  http.events = {Data(Sender::kClient, Text("GET / HTTP/1.1\r\nHost: x\r\n\r\n")),
                 Data(Sender::kServer, Text("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))};
  const Decoded d = DecodeWritten("http", {http});
  EXPECT_EQ(d.summary.iwarp_connections, 0u);
  EXPECT_TRUE(d.rec.frames.empty());
  EXPECT_THAT(d.rec.Messages(IssueSeverity::kWarning),
              ElementsAre("connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040): not decoded: neither direction starts "
                          "with an MPA Request/Reply Frame and no FPDU with a valid CRC was found (not iWARP, or "
                          "captured without its MPA handshake)"));
  EXPECT_EQ(d.rec.connections[0].value, "10.0.0.1:49152 -> 10.0.0.2:5040, capture frames 1-6, not iWARP");
}

TEST(CaptureDecode, OneConnectionOnly) {
  TcpConnection a, b;
  a.events = {Data(Sender::kClient, Request(true, false)), Data(Sender::kServer, Reply(true, false))};
  b.events = {Data(Sender::kClient, Request(true, false)), Data(Sender::kServer, Reply(true, false)),
              Data(Sender::kClient, Fpdus(7, {10}, false))};
  CaptureDecodeOptions o;
  o.connection = 1;
  const Decoded d = DecodeWritten("filter", {a, b}, {}, 0, o);
  ASSERT_EQ(d.rec.connections.size(), 1u);
  EXPECT_EQ(d.rec.connections[0].name, "Connection 1");
  ASSERT_EQ(d.rec.frames.size(), 3u);
  EXPECT_EQ(d.rec.frames[0].number, 1u);
  for (const SeenFrame& s : d.rec.frames) EXPECT_EQ(s.connection, 1u);
  EXPECT_EQ(Child(d.rec.frames[0].tree, "Source")->value, "10.0.0.1:49153");
  o.connection = 2;
  const Decoded none = DecodeWritten("filter-none", {a, b}, {}, 0, o);
  EXPECT_TRUE(none.summary.connection_missing);
  EXPECT_EQ(none.summary.connections, 2u);
  EXPECT_TRUE(none.rec.frames.empty());
}

}  // namespace
}  // namespace rdmapct::capture
