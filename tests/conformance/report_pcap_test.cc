// report_pcap: FrameRecords -> TCP connections -> capture files. A
// hand-built case checks every conversion rule (directions, gaps left by
// the recording bound, overlaps, records after FIN / RST, ports by
// connection number); the whole suite run against the in-process reference
// target checks that each capture, read back with libpcap, carries every
// connection's two streams exactly as recorded, with valid checksums.
#include "conformance/report_pcap.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>

#include "conformance/case_loader.h"
#include "conformance/report_common.h"
#include "conformance/runner.h"
#include "targets/in_process.h"
#include "targets/reference_target.h"
#include "tests/capture/pcap_test_util.h"

namespace rdmapct::conformance {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using capture::Sender;
using capture::TcpEventKind;
using ::testing::HasSubstr;
using namespace rdmapct::capture::pcap_test;

const uint32_t kSuiteIp = Ipv4(10, 0, 0, 1);
const uint32_t kTargetIp = Ipv4(10, 0, 0, 2);

fs::path TempDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "rdmapct_report_pcap_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

wire::Bytes Octets(std::size_t n, uint8_t first) {
  wire::Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(first + i);
  return b;
}

FrameRecord Record(uint32_t conn, Direction d, FrameKind k, uint64_t offset, wire::Bytes raw,
                   std::chrono::microseconds at) {
  FrameRecord r;
  r.connection = conn;
  r.direction = d;
  r.kind = k;
  r.stream_offset = offset;
  r.raw = std::move(raw);
  r.at = at;
  return r;
}

constexpr Direction kUp = Direction::kToTarget;
constexpr Direction kDown = Direction::kFromTarget;

// Every conversion rule in one case: connection 0 with a truncated target
// frame (the next record's offset jumps), a suite record after its own FIN;
// connection 1 with overlapping target records and a reset followed by a
// suite record; connection 3 (2 never recorded) closing at once.
CaseResult HandBuiltCase() {
  CaseResult c;
  c.id = "rfc5040/7.2/hand-built";
  c.verdict = Verdict::kFail;
  c.start = std::chrono::system_clock::time_point(1'700'000'000s);
  FrameRecord truncated = Record(0, kDown, FrameKind::kFpdu, 20, Octets(10, 0x40), 15us);
  truncated.truncated = true;
  c.frames = {
      Record(0, kUp, FrameKind::kMpaRequest, 0, Octets(20, 0x00), 0us),
      Record(0, kDown, FrameKind::kMpaReply, 0, Octets(20, 0x20), 5us),
      Record(0, kUp, FrameKind::kFpdu, 20, Octets(30, 0x60), 10us),
      truncated,
      Record(0, kDown, FrameKind::kFpdu, 50, Octets(8, 0x80), 20us),
      Record(0, kUp, FrameKind::kFin, 50, {}, 25us),
      Record(0, kUp, FrameKind::kRaw, 50, Octets(5, 0x90), 26us),  // after the suite's FIN: never sent
      Record(0, kDown, FrameKind::kFin, 58, {}, 30us),
      Record(1, kUp, FrameKind::kMpaRequest, 0, Octets(20, 0x00), 40us),
      Record(1, kDown, FrameKind::kRaw, 0, Octets(6, 0xA0), 42us),
      Record(1, kDown, FrameKind::kRaw, 3, Octets(6, 0xA3), 43us),  // its first 3 octets repeat the last 3
      Record(1, kDown, FrameKind::kRst, 9, {}, 45us),
      Record(1, kUp, FrameKind::kFpdu, 20, Octets(4, 0xB0), 46us),  // after the reset: never sent
      Record(3, kUp, FrameKind::kFin, 0, {}, 50us),
  };
  return c;
}

TEST(ReportPcapTest, FileNameReplacesEverySeparator) {
  EXPECT_EQ(PcapFileName("rfc5040/7.2/read-req-invalid-src-stag"), "rfc5040_7.2_read-req-invalid-src-stag.pcap");
  EXPECT_EQ(PcapFileName("commit/3.1/a b\\c\xc3\xa9"), "commit_3.1_a_b_c__.pcap");
  EXPECT_EQ(PcapFileName(""), "case.pcap");
  EXPECT_EQ(PcapFileName(".."), "case...pcap");
}

TEST(ReportPcapTest, RecordsBecomeEventsPerConnection) {
  const capture::TcpCapture cap = CaseCapture(HandBuiltCase());
  EXPECT_EQ(cap.start, std::chrono::system_clock::time_point(1'700'000'000s));
  ASSERT_EQ(cap.connections.size(), 3u);
  EXPECT_EQ(cap.connections[0].client_port, 49152);
  EXPECT_EQ(cap.connections[1].client_port, 49153);
  EXPECT_EQ(cap.connections[2].client_port, 49155);  // connection 3

  struct Want {
    Sender sender;
    TcpEventKind kind;
    int64_t at_us;
    wire::Bytes payload;
    uint32_t gap;
  };
  const auto expect_events = [](const capture::TcpConnection& conn, const std::vector<Want>& want) {
    ASSERT_EQ(conn.events.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(conn.events[i].sender, want[i].sender) << i;
      EXPECT_EQ(conn.events[i].kind, want[i].kind) << i;
      EXPECT_EQ(conn.events[i].at.count(), want[i].at_us) << i;
      EXPECT_EQ(conn.events[i].payload, want[i].payload) << i;
      EXPECT_EQ(conn.events[i].gap, want[i].gap) << i;
    }
  };
  const Sender kC = Sender::kClient, kS = Sender::kServer;
  expect_events(cap.connections[0], {{kC, TcpEventKind::kData, 0, Octets(20, 0x00), 0},
                                     {kS, TcpEventKind::kData, 5, Octets(20, 0x20), 0},
                                     {kC, TcpEventKind::kData, 10, Octets(30, 0x60), 0},
                                     {kS, TcpEventKind::kData, 15, Octets(10, 0x40), 0},
                                     {kS, TcpEventKind::kGap, 20, {}, 20},  // octets 30..49 not recorded
                                     {kS, TcpEventKind::kData, 20, Octets(8, 0x80), 0},
                                     {kC, TcpEventKind::kFin, 25, {}, 0},
                                     {kS, TcpEventKind::kFin, 30, {}, 0}});
  expect_events(cap.connections[1], {{kC, TcpEventKind::kData, 40, Octets(20, 0x00), 0},
                                     {kS, TcpEventKind::kData, 42, Octets(6, 0xA0), 0},
                                     {kS, TcpEventKind::kData, 43, Octets(3, 0xA6), 0},
                                     {kS, TcpEventKind::kRst, 45, {}, 0}});
  expect_events(cap.connections[2], {{kC, TcpEventKind::kFin, 50, {}, 0}});
}

TEST(ReportPcapTest, CaptureCarriesTheRecordedStreams) {
  const fs::path file = TempDir("hand") / "hand.pcap";
  std::string error;
  ASSERT_TRUE(WriteCasePcap(file, HandBuiltCase(), error)) << error;
  const ParsedCapture cap = ReadCapture(file);
  ASSERT_EQ(cap.error, "");
  EXPECT_EQ(cap.linktype, DLT_EN10MB);
  for (const ParsedPacket& p : cap.packets) {
    EXPECT_TRUE(p.ip_checksum_ok);
    EXPECT_TRUE(p.tcp_checksum_ok);
  }
  const Stream up0 = Reassemble(cap.packets, kSuiteIp, 49152, kTargetIp, 5040);
  const Stream down0 = Reassemble(cap.packets, kTargetIp, 5040, kSuiteIp, 49152, {{30, 20}});
  EXPECT_EQ(up0.error, "");
  EXPECT_EQ(down0.error, "");
  wire::Bytes want_up = Octets(20, 0x00), more = Octets(30, 0x60);
  want_up.insert(want_up.end(), more.begin(), more.end());
  EXPECT_EQ(up0.bytes, want_up);
  ASSERT_EQ(down0.bytes.size(), 58u);
  EXPECT_EQ(wire::Bytes(down0.bytes.begin() + 20, down0.bytes.begin() + 30), Octets(10, 0x40));
  EXPECT_EQ(wire::Bytes(down0.bytes.begin() + 50, down0.bytes.end()), Octets(8, 0x80));
  EXPECT_TRUE(up0.fin && down0.fin);

  const Stream down1 = Reassemble(cap.packets, kTargetIp, 5040, kSuiteIp, 49153);
  EXPECT_EQ(down1.error, "");
  EXPECT_EQ(down1.bytes, Octets(9, 0xA0));
  EXPECT_TRUE(down1.rst);
  const Stream up1 = Reassemble(cap.packets, kSuiteIp, 49153, kTargetIp, 5040);
  EXPECT_EQ(up1.bytes, Octets(20, 0x00));  // the record after the reset is not there
  EXPECT_FALSE(up1.rst);

  const Stream up3 = Reassemble(cap.packets, kSuiteIp, 49155, kTargetIp, 5040);
  EXPECT_EQ(up3.error, "");
  EXPECT_TRUE(up3.fin);
  EXPECT_TRUE(up3.bytes.empty());
}

TEST(ReportPcapTest, RunWritesOneFilePerCaseAndReportsUnwritableDirectories) {
  RunResult run;
  run.cases.push_back(HandBuiltCase());
  CaseResult never_connected;
  never_connected.id = "rfc5040/5.1/no-frames";
  never_connected.verdict = Verdict::kError;
  run.cases.push_back(never_connected);
  const fs::path dir = TempDir("run") / "nested" / "pcaps";  // created on demand
  std::string error;
  ASSERT_TRUE(WriteRunPcaps(dir, run, error)) << error;
  EXPECT_EQ(ReadCapture(dir / "rfc5040_7.2_hand-built.pcap").packets.size(), 26u);  // 12 + 9 + 5
  const ParsedCapture empty = ReadCapture(dir / "rfc5040_5.1_no-frames.pcap");
  EXPECT_EQ(empty.error, "");
  EXPECT_TRUE(empty.packets.empty());

  const fs::path file = TempDir("file") / "not-a-dir";
  std::ofstream(file) << "x";
  EXPECT_FALSE(WriteRunPcaps(file, run, error));
  EXPECT_THAT(error, HasSubstr(file.string() + ": cannot create the capture directory"));
  EXPECT_FALSE(WriteRunPcaps(file / "sub", run, error));
  EXPECT_THAT(error, HasSubstr("Not a directory"));
}

TEST(ReportPcapTest, OnlyFailuresAndErrorsWithFramesNeedACapture) {
  RunResult run;
  run.target = "t";
  for (Verdict v : {Verdict::kPass, Verdict::kWarn, Verdict::kFail, Verdict::kSkip, Verdict::kError}) {
    CaseResult c = HandBuiltCase();
    c.id = "x/" + std::string(VerdictName(v));
    c.verdict = v;
    run.cases.push_back(c);
  }
  run.cases.push_back(CaseResult{});
  run.cases.back().id = "x/error-without-frames";
  run.cases.back().verdict = Verdict::kError;
  const RunResult failed = CasesNeedingFailurePcap(run);
  ASSERT_EQ(failed.cases.size(), 2u);
  EXPECT_EQ(failed.cases[0].id, "x/fail");
  EXPECT_EQ(failed.cases[1].id, "x/error");
  EXPECT_EQ(failed.target, "t");
  EXPECT_EQ(failed.counts.fail, 1u);
  EXPECT_EQ(failed.counts.error, 1u);
}

TEST(ReportPcapTest, InstalledWriterServesTheReportHook) {
  SetPcapWriter(nullptr);
  InstallPcapWriter();
  EXPECT_TRUE(PcapWriterAvailable());
  RunResult run;
  run.cases.push_back(HandBuiltCase());
  const fs::path dir = TempDir("hook");
  std::string error;
  EXPECT_TRUE(WriteCasePcaps(dir, run, error)) << error;
  EXPECT_TRUE(fs::exists(dir / "rfc5040_7.2_hand-built.pcap"));
  SetPcapWriter(nullptr);
}

// Every case of the suite against the reference target: per connection and
// direction, the capture's reassembled stream is the records' octets (on a
// connection the target opened, the target holds the client port).
TEST(ReportPcapTest, ReferenceRunCapturesEqualTheRecordedStreams) {
  static const CaseLoad load = LoadCases();
  ASSERT_TRUE(load.ok());
  CaseFilter filter;
  filter.profile = wire::Profile::kRfc5040;
  const std::vector<const LoadedCase*> selected = SelectCases(load.cases, filter);
  ASSERT_FALSE(selected.empty());
  auto target = std::make_shared<targets::ReferenceTarget>(targets::ReferenceTargetConfig{});
  targets::InProcessConnector connector(target);
  const RunResult run = RunCases(selected, RunOptions{}, connector);
  const fs::path dir = TempDir("reference");
  std::string error;
  ASSERT_TRUE(WriteRunPcaps(dir, run, error)) << error;

  std::size_t connections = 0;
  for (const CaseResult& c : run.cases) {
    SCOPED_TRACE(c.id);
    const ParsedCapture cap = ReadCapture(dir / PcapFileName(c.id));
    ASSERT_EQ(cap.error, "");
    for (const ParsedPacket& p : cap.packets) {
      EXPECT_TRUE(p.ip_checksum_ok && p.tcp_checksum_ok);
    }
    std::map<std::pair<uint32_t, int>, wire::Bytes> recorded;
    std::map<std::pair<uint32_t, int>, bool> closed;
    std::map<uint32_t, bool> target_opened;  // a listen step: the target is the client
    for (const FrameRecord& f : c.frames) {
      ASSERT_FALSE(f.truncated);
      target_opened.try_emplace(f.connection, f.direction == kDown);
      const int d = f.direction == kUp ? 0 : 1;
      if (f.kind == FrameKind::kFin) closed[{f.connection, d}] = true;
      recorded[{f.connection, d}].insert(recorded[{f.connection, d}].end(), f.raw.begin(), f.raw.end());
    }
    for (const auto& [key, octets] : recorded) {
      const auto [conn, d] = key;
      const uint16_t port = static_cast<uint16_t>(49152 + conn);
      const uint16_t suite_port = target_opened[conn] ? 5040 : port;
      const uint16_t target_port = target_opened[conn] ? port : 5040;
      const Stream s = d == 0 ? Reassemble(cap.packets, kSuiteIp, suite_port, kTargetIp, target_port)
                              : Reassemble(cap.packets, kTargetIp, target_port, kSuiteIp, suite_port);
      EXPECT_EQ(s.error, "") << "connection " << conn << " direction " << d;
      EXPECT_EQ(s.bytes, octets) << "connection " << conn << " direction " << d;
      EXPECT_EQ(s.fin, closed[key]) << "connection " << conn << " direction " << d;
      connections += d;
    }
  }
  EXPECT_GE(connections, run.cases.size());
}

// A connection the target opened (a listen step, the target as MPA
// Initiator): its Request comes first, so the target is the TCP client,
// and the hosts are swapped to keep the suite at 10.0.0.1.
TEST(ReportPcapTest, TargetOpenedConnectionHasTheTargetAsClient) {
  CaseResult c;
  c.id = "rfc5044/7.1.2/initiator";
  c.frames = {
      Record(0, kDown, FrameKind::kMpaRequest, 0, Octets(20, 0x00), 0us),
      Record(0, kUp, FrameKind::kMpaReply, 0, Octets(20, 0x20), 5us),
      Record(0, kDown, FrameKind::kFpdu, 20, Octets(8, 0x40), 10us),
  };
  const capture::TcpCapture cap = CaseCapture(c);
  ASSERT_EQ(cap.connections.size(), 1u);
  EXPECT_TRUE(cap.connections[0].hosts_swapped);
  ASSERT_EQ(cap.connections[0].events.size(), 3u);
  EXPECT_EQ(cap.connections[0].events[0].sender, Sender::kClient);
  EXPECT_EQ(cap.connections[0].events[1].sender, Sender::kServer);
  EXPECT_FALSE(CaseCapture(HandBuiltCase()).connections[0].hosts_swapped);
}

}  // namespace
}  // namespace rdmapct::conformance
