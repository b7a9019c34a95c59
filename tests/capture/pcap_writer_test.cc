// capture/pcap_writer: every capture is read back with libpcap and decoded
// by hand (pcap_test_util.h): link type, packet counts worked out by hand
// for each exchange, IPv4 / TCP checksums verified independently, sequence
// numbers continuous and the reassembled streams equal to the input, every
// acknowledgement equal to what the other side had sent, FIN / RST, wrap
// of the sequence space near 2^32, gaps, windows, time order, the errors.
// With tshark installed, Wireshark's own checksum validation and TCP
// analysis must find nothing to flag.
#include "capture/pcap_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <sstream>

#include "tests/capture/pcap_test_util.h"

namespace rdmapct::capture {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using namespace rdmapct::capture::pcap_test;

const uint32_t kSuiteIp = Ipv4(10, 0, 0, 1);
const uint32_t kTargetIp = Ipv4(10, 0, 0, 2);

fs::path TempFile(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "rdmapct_pcap_writer_test";
  fs::create_directories(dir);
  return dir / name;
}

wire::Bytes Pattern(std::size_t n, uint8_t seed) {
  wire::Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return b;
}

TcpEvent Data(Sender s, std::chrono::microseconds at, wire::Bytes payload) {
  return TcpEvent{s, TcpEventKind::kData, at, std::move(payload), 0};
}
TcpEvent Fin(Sender s, std::chrono::microseconds at) { return TcpEvent{s, TcpEventKind::kFin, at, {}, 0}; }
TcpEvent Rst(Sender s, std::chrono::microseconds at) { return TcpEvent{s, TcpEventKind::kRst, at, {}, 0}; }
TcpEvent Gap(Sender s, std::chrono::microseconds at, uint32_t n) { return TcpEvent{s, TcpEventKind::kGap, at, {}, n}; }

ParsedCapture WriteAndRead(const TcpCapture& cap, const std::string& name, const PcapWriterOptions& opts = {}) {
  const fs::path path = TempFile(name);
  std::string error;
  EXPECT_TRUE(WriteTcpCapture(path, cap, opts, error)) << error;
  ParsedCapture parsed = ReadCapture(path);
  EXPECT_EQ(parsed.error, "");
  return parsed;
}

// Every ACK acknowledges exactly what the other direction had sent so far
// (SYN and FIN count one, a gap's octets too): the writer never
// acknowledges partially. The writer never retransmits, so where a packet
// ends is where its sender's stream has reached.
void ExpectAcksComplete(const std::vector<ParsedPacket>& packets) {
  std::map<std::pair<uint32_t, uint16_t>, uint32_t> next;  // (ip, port) -> next sequence number
  for (std::size_t i = 0; i < packets.size(); ++i) {
    const ParsedPacket& p = packets[i];
    if (p.ack_flag()) {
      const auto peer = next.find({p.dst_ip, p.dst_port});
      ASSERT_NE(peer, next.end()) << "packet " << i + 1 << " acknowledges before the peer sent anything";
      EXPECT_EQ(p.ack, peer->second) << "packet " << i + 1;
    } else {
      EXPECT_TRUE(p.syn() && p.ack == 0) << "packet " << i + 1 << ": only the first SYN lacks ACK";
    }
    next[{p.src_ip, p.src_port}] =
        p.seq + static_cast<uint32_t>(p.payload.size()) + (p.syn() ? 1 : 0) + (p.fin() ? 1 : 0);
  }
}

void ExpectHeadersValid(const ParsedCapture& cap) {
  EXPECT_EQ(cap.linktype, DLT_EN10MB);
  EXPECT_EQ(cap.snaplen, 65535);
  for (std::size_t i = 0; i < cap.packets.size(); ++i) {
    const ParsedPacket& p = cap.packets[i];
    EXPECT_EQ(p.caplen, p.len) << i + 1;
    EXPECT_EQ(p.ethertype, 0x0800) << i + 1;
    EXPECT_EQ(p.ip_version, 4) << i + 1;
    EXPECT_EQ(p.ip_protocol, 6) << i + 1;
    EXPECT_EQ(p.ip_flags_fragment, 0x4000) << i + 1;  // DF, never fragmented
    EXPECT_TRUE(p.ip_checksum_ok) << "IPv4 header checksum of packet " << i + 1;
    EXPECT_TRUE(p.tcp_checksum_ok) << "TCP checksum of packet " << i + 1;
    EXPECT_LE(p.payload.size(), 1460u) << i + 1;
    if (i > 0) {
      EXPECT_GE(p.ts_us, cap.packets[i - 1].ts_us) << "time order at packet " << i + 1;
    }
  }
}

// An MPA-like exchange: Request, Reply, a message over two MSS, FIN both ways.
TcpCapture Exchange(uint32_t client_isn, uint32_t server_isn) {
  TcpConnection c;
  c.client_isn = client_isn;
  c.server_isn = server_isn;
  c.events = {Data(Sender::kClient, 0us, Pattern(100, 1)), Data(Sender::kServer, 10us, Pattern(50, 2)),
              Data(Sender::kClient, 20us, Pattern(3000, 3)), Fin(Sender::kServer, 30us), Fin(Sender::kClient, 40us)};
  TcpCapture cap;
  cap.start = std::chrono::system_clock::time_point(1'700'000'000s);
  cap.connections.push_back(std::move(c));
  return cap;
}

TEST(PcapWriterTest, HandshakeDataAndCloseReadBackExactly) {
  const TcpCapture in = Exchange(1000, 5000);
  const ParsedCapture cap = WriteAndRead(in, "exchange.pcap");
  ExpectHeadersValid(cap);
  // SYN, SYN-ACK, ACK; 100 (ACKed by the 50); 50 (ACKed by the 3000);
  // 1460 + 1460 + 80 (ACKed by the FIN); server FIN (ACKed by the client
  // FIN); client FIN; the server's final pure ACK.
  ASSERT_EQ(cap.packets.size(), 11u);
  const std::vector<uint8_t> flags = {0x02, 0x12, 0x10, 0x18, 0x18, 0x10, 0x10, 0x18, 0x11, 0x11, 0x10};
  for (std::size_t i = 0; i < flags.size(); ++i) EXPECT_EQ(cap.packets[i].flags, flags[i]) << "packet " << i + 1;
  EXPECT_EQ(cap.packets[0].seq, 1000u);
  EXPECT_EQ(cap.packets[0].ack, 0u);
  EXPECT_EQ(cap.packets[1].seq, 5000u);
  EXPECT_EQ(cap.packets[1].ack, 1001u);
  EXPECT_EQ(cap.packets[0].mss, std::optional<uint16_t>(1460));
  EXPECT_EQ(cap.packets[1].mss, std::optional<uint16_t>(1460));
  EXPECT_EQ(cap.packets[2].mss, std::nullopt);
  EXPECT_EQ(cap.packets[10].ack, 1000u + 1 + 100 + 3000 + 1);  // the server acknowledges the client FIN

  const Stream up = Reassemble(cap.packets, kSuiteIp, 49152, kTargetIp, 5040);
  const Stream down = Reassemble(cap.packets, kTargetIp, 5040, kSuiteIp, 49152);
  EXPECT_EQ(up.error, "");
  EXPECT_EQ(down.error, "");
  wire::Bytes expect_up = Pattern(100, 1);
  const wire::Bytes second = Pattern(3000, 3);
  expect_up.insert(expect_up.end(), second.begin(), second.end());
  EXPECT_EQ(up.bytes, expect_up);
  EXPECT_EQ(down.bytes, Pattern(50, 2));
  EXPECT_TRUE(up.fin);
  EXPECT_TRUE(down.fin);
  ExpectAcksComplete(cap.packets);

  // Times: the start plus each event's offset.
  const int64_t t0 = 1'700'000'000LL * 1'000'000;
  EXPECT_EQ(cap.packets[0].ts_us, t0);
  EXPECT_EQ(cap.packets[4].ts_us, t0 + 10);
  EXPECT_EQ(cap.packets[5].ts_us, t0 + 20);
  EXPECT_EQ(cap.packets[10].ts_us, t0 + 40);
  // IP identification counts per sender.
  EXPECT_EQ(cap.packets[0].ip_id, 0);
  EXPECT_EQ(cap.packets[2].ip_id, 1);
  EXPECT_EQ(cap.packets[3].ip_id, 2);
  EXPECT_EQ(cap.packets[1].ip_id, 0);
  EXPECT_EQ(cap.packets[4].ip_id, 1);
}

TEST(PcapWriterTest, SequenceNumbersWrapNear2To32) {
  // The client's data crosses 2^32 inside its second segment; the server's
  // SYN takes the last sequence number, so its data starts at 0.
  const TcpCapture in = Exchange(0xFFFFFF00u, 0xFFFFFFFFu);
  const ParsedCapture cap = WriteAndRead(in, "wrap.pcap");
  ExpectHeadersValid(cap);
  ASSERT_EQ(cap.packets.size(), 11u);
  EXPECT_EQ(cap.packets[3].seq, 0xFFFFFF01u);        // first client data
  EXPECT_EQ(cap.packets[4].seq, 0u);                 // server data after its SYN at 2^32 - 1
  EXPECT_EQ(cap.packets[4].ack, 0xFFFFFF01u + 100);  // 0xFFFFFF65
  EXPECT_EQ(cap.packets[5].seq, 0xFFFFFF65u);
  EXPECT_EQ(cap.packets[6].seq, 0xFFFFFF65u + 1460);  // wrapped: 0x519
  EXPECT_EQ(cap.packets[6].seq, 0x519u);
  const Stream up = Reassemble(cap.packets, kSuiteIp, 49152, kTargetIp, 5040);
  const Stream down = Reassemble(cap.packets, kTargetIp, 5040, kSuiteIp, 49152);
  EXPECT_EQ(up.error, "");
  EXPECT_EQ(down.error, "");
  EXPECT_EQ(up.bytes.size(), 3100u);
  EXPECT_EQ(down.bytes, Pattern(50, 2));
  ExpectAcksComplete(cap.packets);
}

TEST(PcapWriterTest, ResetEndsTheConnectionWithRstAck) {
  TcpCapture in;
  TcpConnection c;
  c.events = {Data(Sender::kClient, 0us, Pattern(20, 9)), Rst(Sender::kServer, 5us)};
  in.connections.push_back(c);
  const ParsedCapture cap = WriteAndRead(in, "rst.pcap");
  ExpectHeadersValid(cap);
  ASSERT_EQ(cap.packets.size(), 5u);  // handshake, data, RST|ACK (no separate ACK)
  EXPECT_EQ(cap.packets[4].flags, 0x14);
  EXPECT_EQ(cap.packets[4].src_ip, kTargetIp);
  EXPECT_EQ(cap.packets[4].ack, c.client_isn + 1 + 20);
  EXPECT_EQ(cap.packets[4].seq, c.server_isn + 1);
  const Stream down = Reassemble(cap.packets, kTargetIp, 5040, kSuiteIp, 49152);
  EXPECT_TRUE(down.rst);
  EXPECT_FALSE(down.fin);
}

TEST(PcapWriterTest, SuiteResetAfterTargetFin) {
  TcpCapture in;
  TcpConnection c;
  c.events = {Data(Sender::kClient, 0us, Pattern(10, 1)), Fin(Sender::kServer, 1us), Rst(Sender::kClient, 2us)};
  in.connections.push_back(c);
  const ParsedCapture cap = WriteAndRead(in, "fin-rst.pcap");
  ExpectHeadersValid(cap);
  // handshake, data, server FIN|ACK (acknowledges the data), client RST|ACK.
  ASSERT_EQ(cap.packets.size(), 6u);
  EXPECT_EQ(cap.packets[4].flags, 0x11);
  EXPECT_EQ(cap.packets[5].flags, 0x14);
  EXPECT_EQ(cap.packets[5].ack, c.server_isn + 2);  // the FIN counted
  ExpectAcksComplete(cap.packets);
}

TEST(PcapWriterTest, PureAckAfterEachBurstWhenThePeerStaysSilent) {
  TcpCapture in;
  TcpConnection c;
  c.events = {Data(Sender::kClient, 0us, Pattern(10, 1)), Data(Sender::kClient, 1us, Pattern(10, 2)),
              Data(Sender::kServer, 2us, Pattern(10, 3))};
  in.connections.push_back(c);
  const ParsedCapture cap = WriteAndRead(in, "acks.pcap");
  ExpectHeadersValid(cap);
  // handshake; data; server pure ACK; data (ACKed by the server's data);
  // server data; client pure ACK.
  ASSERT_EQ(cap.packets.size(), 8u);
  EXPECT_EQ(cap.packets[4].src_ip, kTargetIp);
  EXPECT_TRUE(cap.packets[4].payload.empty());
  EXPECT_EQ(cap.packets[4].ack, c.client_isn + 11);
  EXPECT_EQ(cap.packets[6].ack, c.client_isn + 21);
  EXPECT_EQ(cap.packets[7].src_ip, kSuiteIp);
  EXPECT_TRUE(cap.packets[7].payload.empty());
  ExpectAcksComplete(cap.packets);
}

TEST(PcapWriterTest, LargeMessageIsSegmentedAndTheReceiverKeepsTheWindowOpen) {
  TcpCapture in;
  TcpConnection c;
  c.events = {Data(Sender::kClient, 0us, Pattern(200'000, 5))};
  in.connections.push_back(c);
  const ParsedCapture cap = WriteAndRead(in, "big.pcap");
  ExpectHeadersValid(cap);
  const std::size_t segments = (200'000 + 1459) / 1460;  // 137
  std::size_t data = 0, acks = 0;
  uint32_t acked = c.client_isn + 1;
  for (std::size_t i = 3; i < cap.packets.size(); ++i) {
    const ParsedPacket& p = cap.packets[i];
    if (p.src_ip == kSuiteIp) {
      ++data;
      EXPECT_LE(p.seq + p.payload.size() - acked, 65535u) << "window overrun at packet " << i + 1;
      EXPECT_EQ(p.psh(), i + 1 == cap.packets.size() - 1) << i + 1;  // PSH on the last segment only
    } else {
      ++acks;
      acked = p.ack;
    }
  }
  EXPECT_EQ(data, segments);
  // 65535 / 1460 = 44 segments fit a window: an ACK before segments 45 and
  // 89 and 133, and the final one.
  EXPECT_EQ(acks, 4u);
  const Stream up = Reassemble(cap.packets, kSuiteIp, 49152, kTargetIp, 5040);
  EXPECT_EQ(up.error, "");
  EXPECT_EQ(up.bytes, Pattern(200'000, 5));
  ExpectAcksComplete(cap.packets);
}

TEST(PcapWriterTest, MssOptionControlsSegmentSize) {
  TcpCapture in;
  TcpConnection c;
  c.events = {Data(Sender::kServer, 0us, Pattern(1000, 5))};
  in.connections.push_back(c);
  PcapWriterOptions opts;
  opts.mss = 256;
  const ParsedCapture cap = WriteAndRead(in, "mss.pcap", opts);
  ASSERT_EQ(cap.packets.size(), 3u + 4 + 1);  // 256 * 3 + 232, then the client's ACK
  EXPECT_EQ(cap.packets[0].mss, std::optional<uint16_t>(256));
  for (std::size_t i = 3; i < 6; ++i) EXPECT_EQ(cap.packets[i].payload.size(), 256u);
  EXPECT_EQ(cap.packets[6].payload.size(), 232u);
  EXPECT_EQ(Reassemble(cap.packets, kTargetIp, 5040, kSuiteIp, 49152).bytes, Pattern(1000, 5));
}

TEST(PcapWriterTest, GapAdvancesTheSequenceWithoutAPacket) {
  TcpCapture in;
  TcpConnection c;
  c.events = {Data(Sender::kServer, 0us, Pattern(40, 1)), Gap(Sender::kServer, 1us, 300),
              Data(Sender::kServer, 2us, Pattern(60, 2)), Fin(Sender::kServer, 3us)};
  in.connections.push_back(c);
  const ParsedCapture cap = WriteAndRead(in, "gap.pcap");
  ExpectHeadersValid(cap);
  // handshake; 40; client ACK; (gap) 60; client ACK; FIN; client ACK.
  ASSERT_EQ(cap.packets.size(), 9u);
  EXPECT_EQ(cap.packets[5].seq, c.server_isn + 1 + 40 + 300);
  const Stream down = Reassemble(cap.packets, kTargetIp, 5040, kSuiteIp, 49152, {{40, 300}});
  EXPECT_EQ(down.error, "");
  ASSERT_EQ(down.bytes.size(), 400u);
  EXPECT_EQ(wire::Bytes(down.bytes.begin(), down.bytes.begin() + 40), Pattern(40, 1));
  EXPECT_EQ(wire::Bytes(down.bytes.begin() + 340, down.bytes.end()), Pattern(60, 2));
}

TEST(PcapWriterTest, ConnectionsGetDistinctPortsAndInterleaveByTime) {
  TcpCapture in;
  TcpConnection a, b, never;
  a.events = {Data(Sender::kClient, 0us, Pattern(10, 1)), Data(Sender::kServer, 100us, Pattern(10, 2))};
  b.events = {Data(Sender::kClient, 50us, Pattern(10, 3)), Fin(Sender::kClient, 150us)};
  b.client_isn = 77;
  in.connections = {a, b, never};
  const ParsedCapture cap = WriteAndRead(in, "two.pcap");
  ExpectHeadersValid(cap);
  // a: 3 + 1 + 1 + client ACK = 6; b: 3 + 1 + server ACK + FIN + server ACK = 7; never: 0.
  ASSERT_EQ(cap.packets.size(), 13u);
  std::map<uint16_t, std::size_t> per_port;
  for (const ParsedPacket& p : cap.packets) {
    const uint16_t client_port = p.src_ip == kSuiteIp ? p.src_port : p.dst_port;
    ++per_port[client_port];
    EXPECT_EQ(p.src_ip == kSuiteIp ? p.dst_port : p.src_port, 5040);
  }
  EXPECT_EQ(per_port[49152], 6u);
  EXPECT_EQ(per_port[49153], 7u);
  // b's handshake (50 us) comes between a's first data and a's reply.
  EXPECT_EQ(cap.packets[4].src_port, 49153);
  EXPECT_TRUE(cap.packets[4].syn());
  EXPECT_EQ(Reassemble(cap.packets, kSuiteIp, 49153, kTargetIp, 5040).isn, 77u);
}

TEST(PcapWriterTest, TimeNeverGoesBackWithinAConnection) {
  TcpCapture in;
  TcpConnection c;
  c.events = {Data(Sender::kClient, 100us, Pattern(10, 1)), Data(Sender::kServer, 40us, Pattern(10, 2))};
  in.connections.push_back(c);
  const ParsedCapture cap = WriteAndRead(in, "clamp.pcap");
  ASSERT_EQ(cap.packets.size(), 6u);
  for (const ParsedPacket& p : cap.packets) EXPECT_EQ(p.ts_us, 100);
}

TEST(PcapWriterTest, EmptyCaptureIsAValidFileWithoutPackets) {
  const ParsedCapture cap = WriteAndRead(TcpCapture{}, "empty.pcap");
  EXPECT_EQ(cap.linktype, DLT_EN10MB);
  EXPECT_TRUE(cap.packets.empty());
}

TEST(PcapWriterTest, ImpossibleEventSequencesAreErrors) {
  struct Bad {
    std::vector<TcpEvent> events;
    const char* message;
  };
  const std::vector<Bad> bad = {
      {{Fin(Sender::kClient, 0us), Data(Sender::kClient, 1us, Pattern(1, 1))},
       "connection 0 event 1: data after that side's FIN"},
      {{Fin(Sender::kServer, 0us), Fin(Sender::kServer, 1us)}, "connection 0 event 1: second FIN from the same side"},
      {{Rst(Sender::kClient, 0us), Data(Sender::kServer, 1us, Pattern(1, 1))},
       "connection 0 event 1: event after the connection was reset"},
      {{Fin(Sender::kServer, 0us), Gap(Sender::kServer, 1us, 5)}, "connection 0 event 1: gap after that side's FIN"},
  };
  for (const Bad& b : bad) {
    TcpCapture in;
    in.connections.push_back(TcpConnection{});
    in.connections.back().events = b.events;
    std::vector<Packet> packets;
    std::string error;
    EXPECT_FALSE(BuildPackets(in, {}, packets, error));
    EXPECT_EQ(error, b.message);
    EXPECT_TRUE(packets.empty());
  }
}

TEST(PcapWriterTest, OptionAndPortErrors) {
  TcpCapture in;
  TcpConnection c;
  c.events = {Data(Sender::kClient, 0us, Pattern(1, 1))};
  c.client_port = 40000;
  in.connections = {c, c};
  std::vector<Packet> packets;
  std::string error;
  EXPECT_FALSE(BuildPackets(in, {}, packets, error));
  EXPECT_EQ(error, "connection 1: client port 40000 used twice");

  in.connections.resize(1);
  PcapWriterOptions opts;
  opts.mss = 0;
  EXPECT_FALSE(BuildPackets(in, opts, packets, error));
  EXPECT_EQ(error, "MSS 0 outside 1..65481");
  opts.mss = kMaxMss;
  EXPECT_TRUE(BuildPackets(in, opts, packets, error)) << error;
  EXPECT_EQ(packets.size(), 5u);
  opts.mss = 2000;
  opts.window = 1000;
  EXPECT_FALSE(BuildPackets(in, opts, packets, error));
  EXPECT_EQ(error, "window 1000 smaller than the MSS");
}

TEST(PcapWriterTest, UnwritablePathIsAnErrorNamingIt) {
  std::string error;
  const fs::path missing = TempFile("no-such-dir") / "x.pcap";
  EXPECT_FALSE(WriteTcpCapture(missing, Exchange(1, 2), {}, error));
  EXPECT_THAT(error, HasSubstr(missing.string()));
  EXPECT_THAT(error, HasSubstr("No such file or directory"));
  EXPECT_EQ(error.find('\n'), std::string::npos);

  const fs::path dir = TempFile("is-a-dir");
  fs::create_directories(dir);
  error.clear();
  EXPECT_FALSE(WritePcapFile(dir, {}, error));
  EXPECT_THAT(error, HasSubstr(dir.string()));

  if (geteuid() != 0) {  // root writes anywhere
    const fs::path ro = TempFile("read-only");
    fs::create_directories(ro);
    chmod(ro.c_str(), 0500);
    error.clear();
    EXPECT_FALSE(WriteTcpCapture(ro / "x.pcap", Exchange(1, 2), {}, error));
    EXPECT_THAT(error, HasSubstr("Permission denied"));
    chmod(ro.c_str(), 0700);
  }
}

TEST(PcapWriterTest, FailedWriteIsAnErrorWithItsCause) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full to fill";
  std::vector<Packet> packets;
  std::string error;
  ASSERT_TRUE(BuildPackets(Exchange(1, 2), {}, packets, error)) << error;
  EXPECT_FALSE(WritePcapFile("/dev/full", packets, error));
  EXPECT_EQ(error, "/dev/full: write failed: No space left on device");
}

// ---- Wireshark agreement ----------------------------------------------------------

TEST(PcapWriterTshark, NoChecksumErrorsAndNoTcpAnalysisWarnings) {
  if (!HaveTshark()) GTEST_SKIP() << "tshark is not installed (tools/setup.sh installs it): Wireshark check skipped";
  for (const auto& [name, cap] : {std::pair{"tshark-exchange.pcap", Exchange(1000, 5000)},
                                  // Both directions wrap inside their data. (A server ISN of
                                  // 2^32 - 1 makes the handshake's ACK number 0, which
                                  // Wireshark takes for a duplicate of the SYN's unset
                                  // ACK field: its quirk, not a fault of the capture.)
                                  std::pair{"tshark-wrap.pcap", Exchange(0xFFFFFF00u, 0xFFFFFFF0u)}}) {
    const fs::path path = TempFile(name);
    std::string error;
    ASSERT_TRUE(WriteTcpCapture(path, cap, {}, error)) << error;
    // Checksum validation is off by default in Wireshark; turn it on. A bad
    // checksum is status 0, a good one 1; tcp.analysis.flags marks any
    // retransmission, lost segment, window or ACK anomaly.
    const std::string cmd = "tshark -n -r '" + path.string() +
                            "' -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE -T fields -e frame.number "
                            "-e ip.checksum.status -e tcp.checksum.status -e tcp.analysis.flags -e tcp.seq -e tcp.len "
                            "-E separator=, 2>&1";
    const std::optional<std::string> out = RunCommand(cmd);
    ASSERT_TRUE(out);
    std::istringstream lines(*out);
    std::string line;
    std::size_t n = 0;
    while (std::getline(lines, line)) {
      if (line.find("Running as user") != std::string::npos) continue;
      ++n;
      std::vector<std::string> f;
      std::stringstream ls(line);
      for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
      f.resize(6);
      EXPECT_EQ(f[1], "1") << name << ": IPv4 checksum: " << line;
      EXPECT_EQ(f[2], "1") << name << ": TCP checksum: " << line;
      EXPECT_EQ(f[3], "") << name << ": TCP analysis flagged: " << line;
    }
    EXPECT_EQ(n, 11u) << *out;
  }
}

}  // namespace
}  // namespace rdmapct::capture
