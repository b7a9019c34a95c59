// capture/pcap_reader.h: every supported link type in pcap and pcapng,
// IPv4 options and IPv6 extension headers, VLAN tags, Ethernet padding,
// snapshot-length cuts, frames that cannot be parsed (warnings naming their
// frame number), non-TCP frames (skipped), and files libpcap cannot open
// or that are cut short (one-line errors). With tshark installed, tshark's
// reading of the same captures (ports, sequence numbers, payload lengths)
// must agree.
#include "capture/pcap_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <cstdio>
#include <sstream>

#include "capture/capture_builder.h"
#include "capture/pcap_writer.h"
#include "tests/capture/capture_test_util.h"
#include "tests/capture/pcap_test_util.h"

namespace rdmapct::capture {
namespace {

using namespace rdmapct::capture::test;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int kSll2 = 276;

TEST(PcapReader, ReadsWhatThePcapWriterWrote) {
  TcpCapture cap;
  cap.start = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  TcpConnection conn;
  conn.events.push_back({Sender::kClient, TcpEventKind::kData, std::chrono::microseconds(10), Text("hello"), 0});
  conn.events.push_back({Sender::kServer, TcpEventKind::kData, std::chrono::microseconds(20), Text("world!"), 0});
  conn.events.push_back({Sender::kClient, TcpEventKind::kFin, std::chrono::microseconds(30), {}, 0});
  cap.connections.push_back(conn);
  std::vector<Packet> packets;
  std::string error;
  ASSERT_TRUE(BuildPackets(cap, {}, packets, error)) << error;
  const auto path = TempPath("writer.pcap");
  ASSERT_TRUE(WritePcapFile(path, packets, error)) << error;

  CaptureReadSummary sum;
  const std::vector<Seg> segs = ReadSegments(path, sum);
  EXPECT_TRUE(sum.opened);
  EXPECT_EQ(sum.error, "");
  EXPECT_EQ(sum.link_type, DLT_EN10MB);
  EXPECT_EQ(sum.frames, packets.size());
  EXPECT_EQ(sum.tcp_segments, packets.size());
  EXPECT_TRUE(sum.warnings.empty());
  const pcap_test::ParsedCapture independent = pcap_test::ReadCapture(path);
  ASSERT_EQ(segs.size(), independent.packets.size());
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const pcap_test::ParsedPacket& p = independent.packets[i];
    EXPECT_EQ(segs[i].frame, i + 1);
    EXPECT_EQ(segs[i].time_ns, p.ts_us * 1000);
    EXPECT_EQ(segs[i].source.port, p.src_port);
    EXPECT_EQ(segs[i].destination.port, p.dst_port);
    EXPECT_EQ(segs[i].seq, p.seq);
    EXPECT_EQ(segs[i].ack, p.ack);
    EXPECT_EQ(segs[i].flags, p.flags);
    EXPECT_EQ(segs[i].window, p.window);
    EXPECT_EQ(segs[i].payload, p.payload);
  }
  EXPECT_EQ(segs[0].source.ToString(), "10.0.0.1:49152");
  EXPECT_EQ(segs[0].destination.ToString(), "10.0.0.2:5040");
}

struct LinkCase {
  const char* name = "";
  int link_type = 0;
  bool v6 = false;
  std::vector<uint16_t> vlans = {};
  bool options = false;
  bool host_order = true;
};

// Two frames of one connection in each link type and format.
std::vector<FrameSpec> TwoFrames(const LinkCase& c) {
  const IpAddress a = c.v6 ? V6(1) : V4(192, 168, 1, 1);
  const IpAddress b = c.v6 ? V6(2) : V4(192, 168, 1, 2);
  std::vector<FrameSpec> out = {
      Spec(Ep(a, 40000), Ep(b, 5040), 1000, 0, kTcpSyn, {}, 65535),
      Spec(Ep(b, 5040), Ep(a, 40000), 7000, 1001, kTcpAck | kTcpPsh, Text("MPA ID Rep Frame"), 512)};
  for (FrameSpec& s : out) {
    s.vlan_ids = c.vlans;
    s.ip_options = c.options;
    s.host_order_loopback = c.host_order;
  }
  return out;
}

class LinkTypes : public ::testing::TestWithParam<LinkCase> {};

const LinkCase kLinkCases[] = {
    {.name = "ethernet", .link_type = DLT_EN10MB},
    {.name = "ethernet_ipv6_ext", .link_type = DLT_EN10MB, .v6 = true, .options = true},
    {.name = "ethernet_vlan", .link_type = DLT_EN10MB, .vlans = {100}},
    {.name = "ethernet_qinq_ipv6", .link_type = DLT_EN10MB, .v6 = true, .vlans = {10, 20}},
    {.name = "ethernet_ip_options", .link_type = DLT_EN10MB, .options = true},
    {.name = "sll", .link_type = DLT_LINUX_SLL},
    {.name = "sll_vlan_ipv6", .link_type = DLT_LINUX_SLL, .v6 = true, .vlans = {7}},
    {.name = "sll2", .link_type = kSll2},
    {.name = "sll2_ipv6_ext", .link_type = kSll2, .v6 = true, .options = true},
    {.name = "raw_ipv4", .link_type = DLT_RAW},
    {.name = "raw_ipv6", .link_type = DLT_RAW, .v6 = true},
    {.name = "null_host_order", .link_type = DLT_NULL},
    {.name = "null_network_order_ipv6", .link_type = DLT_NULL, .v6 = true, .host_order = false},
    {.name = "loop_ipv6", .link_type = DLT_LOOP, .v6 = true},
};

INSTANTIATE_TEST_SUITE_P(PcapReader, LinkTypes, ::testing::ValuesIn(kLinkCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_P(LinkTypes, PcapAndPcapngReadBackExactly) {
  const LinkCase& c = GetParam();
  const std::vector<FrameSpec> specs = TwoFrames(c);
  std::vector<CaptureRecord> records;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    records.push_back({1'700'000'000'123'456'789 + static_cast<int64_t>(i), BuildTcpFrame(c.link_type, specs[i])});
  }
  for (bool ng : {false, true}) {
    SCOPED_TRACE(ng ? "pcapng" : "pcap");
    const wire::Bytes file =
        ng ? BuildPcapngFile(c.link_type, records) : BuildPcapFile(c.link_type, records, 65535, true);
    const auto path = WriteTemp(std::string(c.name) + (ng ? ".pcapng" : ".pcap"), file);
    CaptureReadSummary sum;
    const std::vector<Seg> segs = ReadSegments(path, sum);
    EXPECT_EQ(sum.error, "");
    EXPECT_TRUE(sum.warnings.empty()) << sum.warnings[0].message;
    ASSERT_EQ(segs.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(segs[i].frame, i + 1);
      EXPECT_EQ(segs[i].time_ns, records[i].time_ns);
      EXPECT_EQ(segs[i].source, specs[i].source);
      EXPECT_EQ(segs[i].destination, specs[i].destination);
      EXPECT_EQ(segs[i].seq, specs[i].seq);
      EXPECT_EQ(segs[i].ack, specs[i].ack);
      EXPECT_EQ(segs[i].flags, specs[i].flags);
      EXPECT_EQ(segs[i].window, specs[i].window);
      EXPECT_EQ(segs[i].payload, specs[i].payload);
      EXPECT_EQ(segs[i].payload_missing, 0u);
    }
  }
}

TEST(PcapReader, AddressesPrintInTheirTextForms) {
  EXPECT_EQ(Ep(V4(10, 0, 0, 1), 80).ToString(), "10.0.0.1:80");
  EXPECT_EQ(Ep(V6(1), 5040).ToString(), "[2001:db8::1]:5040");
}

// Pure parsing of single frames: what is a warning, what is skipped.
class ParseFrameTest : public ::testing::Test {
 protected:
  FrameSpec Spec(std::string payload = "") {
    return test::Spec(Ep(V4(10, 0, 0, 1), 1), Ep(V4(10, 0, 0, 2), 2), 1, 2, kTcpAck, Text(payload));
  }
  FrameParse Parse(int link, const wire::Bytes& f, uint32_t original = 0) {
    seg_ = TcpSegment{};
    return ParseFrame(link, f, original != 0 ? original : static_cast<uint32_t>(f.size()), seg_);
  }
  TcpSegment seg_;
};

TEST_F(ParseFrameTest, EthernetPaddingIsNotPayload) {
  wire::Bytes f = BuildTcpFrame(DLT_EN10MB, Spec());
  ASSERT_EQ(f.size(), 54u);
  f.resize(60, 0xEE);  // the minimum Ethernet frame
  EXPECT_EQ(Parse(DLT_EN10MB, f).kind, FrameKind::kTcp);
  EXPECT_TRUE(seg_.payload.empty());
  EXPECT_EQ(seg_.payload_missing, 0u);
}

TEST_F(ParseFrameTest, PayloadCutBySnaplenIsKeptAsFarAsCaptured) {
  wire::Bytes f = BuildTcpFrame(DLT_EN10MB, Spec("0123456789"));
  const uint32_t original = static_cast<uint32_t>(f.size());
  f.resize(f.size() - 6);
  EXPECT_EQ(Parse(DLT_EN10MB, f, original).kind, FrameKind::kTcp);
  EXPECT_EQ(std::string(seg_.payload.begin(), seg_.payload.end()), "0123");
  EXPECT_EQ(seg_.payload_missing, 6u);
}

TEST_F(ParseFrameTest, HeadersCutBySnaplenAreMalformed) {
  wire::Bytes f = BuildTcpFrame(DLT_EN10MB, Spec("xyz"));
  const uint32_t original = static_cast<uint32_t>(f.size());
  f.resize(14 + 20 + 10);
  const FrameParse p = Parse(DLT_EN10MB, f, original);
  EXPECT_EQ(p.kind, FrameKind::kMalformed);
  EXPECT_EQ(p.reason,
            "TCP header incomplete (10 octets of 20); frame cut by the snapshot length (44 of 57 octets captured)");
}

TEST_F(ParseFrameTest, MalformedFramesSayWhy) {
  const wire::Bytes good = BuildTcpFrame(DLT_EN10MB, Spec("abc"));
  struct Bad {
    std::size_t at;
    uint8_t value;
    const char* reason;
  };
  const Bad cases[] = {
      {14, 0x75, "IP version 7 in an IPv4 frame"},
      {14, 0x44, "IPv4 header length 16 below 20"},
      {14 + 6, 0x20, "IPv4 fragment (offset 0, more fragments): fragments are not reassembled"},
      {14 + 2, 0x00, "IPv4 total length 0 below the header length 20"},  // total length high octet...
      {14 + 20 + 12, 0x30, "TCP data offset 12 below 20"},
      {14 + 20 + 12, 0xF0, "TCP data offset 60 beyond the IP packet"},
  };
  for (const Bad& b : cases) {
    wire::Bytes f = good;
    f[b.at] = b.value;
    if (b.at == 14 + 2) f[14 + 3] = 0;  // ...and low octet: total length 0
    const FrameParse p = Parse(DLT_EN10MB, f);
    EXPECT_EQ(p.kind, FrameKind::kMalformed) << b.reason;
    EXPECT_EQ(p.reason, b.reason);
  }
  EXPECT_EQ(Parse(DLT_EN10MB, wire::Bytes(10, 0)).reason, "Ethernet header incomplete (10 octets of 14)");
  EXPECT_EQ(Parse(DLT_RAW, wire::Bytes{0x10}).reason, "IP version 1");
  EXPECT_THAT(Parse(147, good).reason, StartsWith("unsupported link type DLT 147"));
}

TEST_F(ParseFrameTest, NonTcpIsSkipped) {
  wire::Bytes udp = BuildTcpFrame(DLT_EN10MB, Spec());
  udp[14 + 9] = 17;
  EXPECT_EQ(Parse(DLT_EN10MB, udp).kind, FrameKind::kSkipped);
  EXPECT_EQ(Parse(DLT_EN10MB, udp).reason, "UDP");
  wire::Bytes arp = BuildTcpFrame(DLT_EN10MB, Spec());
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(Parse(DLT_EN10MB, arp).kind, FrameKind::kSkipped);
  EXPECT_EQ(Parse(DLT_EN10MB, arp).reason, "ARP");
  FrameSpec v6 = Spec();
  v6.source.address = V6(1);
  v6.destination.address = V6(2);
  wire::Bytes icmp6 = BuildTcpFrame(DLT_RAW, v6);
  icmp6[6] = 58;
  EXPECT_EQ(Parse(DLT_RAW, icmp6).reason, "ICMPv6");
}

// A capture with good frames around bad ones: each bad one is a warning
// naming its frame number, the good ones are read.
TEST(PcapReader, UnparsableFramesAreWarningsWithTheirFrameNumbers) {
  const FrameSpec spec = Spec(Ep(V4(10, 0, 0, 1), 1000), Ep(V4(10, 0, 0, 2), 5040), 1, 0, kTcpAck, Text("data"));
  const wire::Bytes good = BuildTcpFrame(DLT_EN10MB, spec);
  wire::Bytes garbage = good;
  garbage[14] = 0x95;
  wire::Bytes udp = good;
  udp[14 + 9] = 17;
  std::vector<CaptureRecord> records = {{0, good}, {1, wire::Bytes(good.begin(), good.begin() + 40), 58}, {2, garbage},
                                        {3, udp},  {4, wire::Bytes(good.begin(), good.end() - 2), 58},    {5, good}};
  const auto path = WriteTemp("bad-frames.pcap", BuildPcapFile(DLT_EN10MB, records));
  CaptureReadSummary sum;
  const std::vector<Seg> segs = ReadSegments(path, sum);
  EXPECT_EQ(sum.error, "");
  EXPECT_EQ(sum.frames, 6u);
  EXPECT_EQ(sum.tcp_segments, 3u);
  EXPECT_EQ(sum.skipped, 1u);
  EXPECT_EQ(sum.malformed, 2u);
  ASSERT_EQ(sum.warnings.size(), 3u);
  EXPECT_EQ(sum.warnings[0].frame, 2u);
  EXPECT_EQ(
      sum.warnings[0].message,
      "frame 2: TCP header incomplete (6 octets of 20); frame cut by the snapshot length (40 of 58 octets captured)");
  EXPECT_EQ(sum.warnings[1].message, "frame 3: IP version 9 in an IPv4 frame");
  EXPECT_EQ(sum.warnings[2].message, "frame 5: TCP payload cut by the snapshot length (2 octets of 4 captured)");
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(segs[0].frame, 1u);
  EXPECT_EQ(segs[1].frame, 5u);
  EXPECT_EQ(segs[1].payload, Text("da"));
  EXPECT_EQ(segs[2].frame, 6u);
}

TEST(PcapReader, MissingFileIsOneLineNamingIt) {
  const auto path = TempPath("does-not-exist.pcap");
  CaptureReadSummary sum;
  EXPECT_FALSE(ReadCaptureFile(path.string(), nullptr, sum));
  EXPECT_FALSE(sum.opened);
  EXPECT_EQ(sum.error, path.string() + ": No such file or directory");
}

TEST(PcapReader, GarbageFileIsOneLineNamingIt) {
  const auto path = WriteTemp("garbage.pcap", Text("this is not a capture file, only text\n"));
  CaptureReadSummary sum;
  EXPECT_FALSE(ReadCaptureFile(path.string(), nullptr, sum));
  EXPECT_FALSE(sum.opened);
  EXPECT_THAT(sum.error, StartsWith(path.string() + ": "));
  EXPECT_THAT(sum.error, HasSubstr("unknown file format"));
  EXPECT_EQ(sum.error.find('\n'), std::string::npos);
}

TEST(PcapReader, UnsupportedLinkTypeIsAnError) {
  const auto path = WriteTemp("usb.pcap", BuildPcapFile(147, {{0, wire::Bytes(30, 1)}}));
  CaptureReadSummary sum;
  EXPECT_FALSE(ReadCaptureFile(path.string(), nullptr, sum));
  EXPECT_TRUE(sum.opened);
  EXPECT_THAT(sum.error, StartsWith(path.string() + ": unsupported link type DLT 147"));
}

TEST(PcapReader, TruncatedFileKeepsTheFramesBeforeTheCut) {
  const FrameSpec spec = Spec(Ep(V4(10, 0, 0, 1), 1000), Ep(V4(10, 0, 0, 2), 5040), 1, 0, kTcpAck, Text("data"));
  const wire::Bytes f = BuildTcpFrame(DLT_EN10MB, spec);
  for (bool ng : {false, true}) {
    wire::Bytes file = ng ? BuildPcapngFile(DLT_EN10MB, {{0, f}, {1, f}, {2, f}})
                          : BuildPcapFile(DLT_EN10MB, {{0, f}, {1, f}, {2, f}});
    file.resize(file.size() - 20);  // inside the third frame
    const auto path = WriteTemp(ng ? "truncated.pcapng" : "truncated.pcap", file);
    CaptureReadSummary sum;
    const std::vector<Seg> segs = ReadSegments(path, sum);
    EXPECT_TRUE(sum.opened);
    EXPECT_EQ(segs.size(), 2u);
    EXPECT_THAT(sum.error, StartsWith(path.string() + ": truncated"));
    EXPECT_THAT(sum.error, HasSubstr("(after frame 2)"));
    EXPECT_EQ(sum.error.find('\n'), std::string::npos);
  }
}

// pcap_fopen_offline: the stream is closed on failure too (LeakSanitizer
// would see a leak, a double close would crash).
TEST(PcapReader, StreamInputIsClosedOnSuccessAndFailure) {
  static char garbage[] = "garbage garbage garbage garbage";
  std::FILE* f = fmemopen(garbage, sizeof garbage, "rb");
  ASSERT_NE(f, nullptr);
  CaptureReadSummary sum;
  EXPECT_FALSE(ReadCaptureStream(f, "memory", nullptr, sum));
  EXPECT_THAT(sum.error, StartsWith("memory: "));
  const FrameSpec spec = Spec(Ep(V4(10, 0, 0, 1), 1000), Ep(V4(10, 0, 0, 2), 5040), 1, 0, kTcpAck, Text("x"));
  wire::Bytes file = BuildPcapFile(DLT_EN10MB, {{0, BuildTcpFrame(DLT_EN10MB, spec)}});
  f = fmemopen(file.data(), file.size(), "rb");
  ASSERT_NE(f, nullptr);
  int n = 0;
  EXPECT_TRUE(ReadCaptureStream(
      f, "memory", [&](const TcpSegment&) { ++n; }, sum));
  EXPECT_EQ(n, 1);
}

// ---- tshark agreement ---------------------------------------------------------

TEST(PcapReaderTshark, AgreesWithTsharkOnEveryLinkType) {
  if (!pcap_test::HaveTshark()) GTEST_SKIP() << "tshark is not installed (tools/setup.sh installs it)";
  for (const LinkCase& c : kLinkCases) {
    SCOPED_TRACE(c.name);
    std::vector<CaptureRecord> records;
    for (const FrameSpec& s : TwoFrames(c)) records.push_back({0, BuildTcpFrame(c.link_type, s)});
    const auto path = WriteTemp(std::string("tshark-") + c.name + ".pcapng", BuildPcapngFile(c.link_type, records));
    CaptureReadSummary sum;
    std::ostringstream ours;
    for (const Seg& s : ReadSegments(path, sum)) {
      ours << s.frame << "|" << s.source.port << "|" << s.destination.port << "|" << s.seq << "|" << s.payload.size()
           << "\n";
    }
    const auto theirs = pcap_test::RunCommand("tshark -n -r '" + path.string() +
                                              "' -T fields -E separator='|' -e frame.number -e tcp.srcport "
                                              "-e tcp.dstport -e tcp.seq_raw -e tcp.len 2>/dev/null");
    ASSERT_TRUE(theirs.has_value());
    EXPECT_EQ(ours.str(), *theirs);
  }
}

}  // namespace
}  // namespace rdmapct::capture
