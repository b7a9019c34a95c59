// The suite against hostile targets over real TCP on 127.0.0.1: scripted
// peers (one thread per connection) that never answer, trickle one octet a
// second, close at once, send a wrong MPA key, reject, announce a huge
// ULPDU_Length, flood, send garbage, send a Terminate with nonsense codes or
// reset mid-case. Each case must end as `error` or `fail` with a reason that
// names what the target did, within the runner's own timeouts (no
// wall-clock assertion here), with bounded memory (the flood's recorded
// octets are capped), and the run must go on with the next case. A target
// that fails every connection (nothing listening, every handshake broken)
// ends the run after a few in a row, unless keep_going.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/runner.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"
#include "targets/reference_target.h"
#include "targets/tcp.h"

namespace rdmapct::conformance {
namespace {

using std::chrono::milliseconds;
using testing::AnyOf;
using testing::HasSubstr;
using testing::Not;

// ---- the scripted peer -----------------------------------------------------------

// One accepted connection as the script sees it.
class Peer {
 public:
  Peer(int fd, const std::atomic<bool>& stop) : fd_(fd), stop_(stop) {}
  ~Peer() {
    if (fd_ >= 0) close(fd_);
  }
  // Waits (in short slices, so the test can stop it) for readable input;
  // false once the suite has gone or the test is over.
  bool WaitReadable(milliseconds max) {
    for (auto waited = milliseconds(0); waited < max && !stop_; waited += milliseconds(50)) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) > 0) return !(p.revents & (POLLERR | POLLNVAL));
    }
    return false;
  }
  // Reads exactly n octets (false on EOF, error or stop).
  bool ReadExactly(std::size_t n, wire::Bytes& out) {
    while (n > 0) {
      if (!WaitReadable(milliseconds(10000))) return false;
      uint8_t buf[4096];
      const ssize_t r = recv(fd_, buf, std::min(n, sizeof buf), 0);
      if (r <= 0) return false;
      out.insert(out.end(), buf, buf + r);
      n -= static_cast<std::size_t>(r);
    }
    return true;
  }
  // The suite's MPA Request Frame: 20 octets, then PD_Length.
  bool ReadRequest(wire::Bytes& request) {
    if (!ReadExactly(20, request)) return false;
    return ReadExactly(wire::LoadBe16(&request[18]), request);
  }
  // Reads whatever arrives next (at least one octet).
  bool ReadSome() {
    if (!WaitReadable(milliseconds(10000))) return false;
    uint8_t buf[65536];
    return recv(fd_, buf, sizeof buf, 0) > 0;
  }
  bool Send(wire::ByteSpan b) {
    std::size_t at = 0;
    while (at < b.size() && !stop_) {
      const ssize_t n = send(fd_, b.data() + at, b.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        at += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p{fd_, POLLOUT, 0};
        poll(&p, 1, 50);
        continue;
      }
      return false;
    }
    return at == b.size();
  }
  // Drains input while the suite stays connected (a peer that stays silent).
  void StayUntilClosed() {
    while (WaitReadable(milliseconds(60000))) {
      uint8_t buf[4096];
      if (recv(fd_, buf, sizeof buf, 0) <= 0) return;
    }
  }
  // Octets are waiting to be read (does not wait).
  bool Pending() {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
  }
  // Reads what is there (at least one octet); false on EOF, error or stop.
  bool ReadAvailable(wire::Bytes& out) {
    if (!WaitReadable(milliseconds(10000))) return false;
    uint8_t buf[65536];
    const ssize_t r = recv(fd_, buf, sizeof buf, 0);
    if (r <= 0) return false;
    out.assign(buf, buf + r);
    return true;
  }
  // Never reads: the suite's writes fill both socket buffers.
  void IdleUntilStopped() {
    while (!stop_) std::this_thread::sleep_for(milliseconds(20));
  }
  void Reset() {
    const linger l{1, 0};
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd_);
    fd_ = -1;
  }
  void CloseNow() {
    close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
  const std::atomic<bool>& stop_;
};

using Script = std::function<void(Peer&)>;

// Listens on 127.0.0.1, port chosen by the kernel; runs `script` on a thread
// per accepted connection.
class HostileTarget {
 public:
  explicit HostileTarget(Script script) : script_(std::move(script)) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    address_ = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~HostileTarget() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    acceptor_.join();
    for (std::thread& t : peers_) t.join();
    close(fd_);
  }
  const std::string& address() const { return address_; }
  int connections() const { return connections_; }

 private:
  void AcceptLoop() {
    while (!stop_) {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      peers_.emplace_back([this, c] {
        Peer peer(c, stop_);
        script_(peer);
      });
    }
  }

  Script script_;
  int fd_ = -1;
  std::string address_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  std::vector<std::thread> peers_;
};

// ---- what the scripts send --------------------------------------------------------

// A genuine accepting Reply with an Advertisement, from the reference target.
wire::Bytes GenuineReply(const wire::Bytes& request) {
  static targets::ReferenceTarget target;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  wire::Bytes out;
  target.Accept()->OnBytes(request, out);
  return out;
}

wire::Bytes Fpdu(const wire::RdmapSegment& seg) {
  wire::Bytes out;
  wire::AppendFpdu(out, wire::EncodeSegment(seg), {.crc_enabled = true});
  return out;
}

// Answers the Request genuinely and waits for the suite's first FPDU.
bool ReachFullOperation(Peer& p) {
  wire::Bytes request;
  if (!p.ReadRequest(request)) return false;
  return p.Send(GenuineReply(request)) && p.ReadSome();
}

void NeverAnswers(Peer& p) { p.StayUntilClosed(); }

// Linux siw 6.1's accept race (docs/reports/siw S7): siw hands the socket
// from its connection manager to the QP only after the MPA Reply is sent,
// and FPDUs that arrived in between stay unread until more octets or the FIN
// come. This peer is the reference target behind such a hand-off, kHandOff
// after its Reply: what is already waiting then is never read.
constexpr milliseconds kHandOff{500};
void LateHandOff(Peer& p) {
  targets::ReferenceTarget target;
  std::unique_ptr<targets::ReferenceTargetConnection> session = target.Accept();
  wire::Bytes in, out;
  if (!p.ReadRequest(in)) return;
  session->OnBytes(in, out);
  if (!p.Send(out)) return;
  std::this_thread::sleep_for(kHandOff);
  if (p.Pending()) return p.StayUntilClosed();
  while (p.ReadAvailable(in)) {
    out.clear();
    session->OnBytes(in, out);
    if (!out.empty() && !p.Send(out)) return;
  }
}

void OneOctetPerSecond(Peer& p) {
  wire::Bytes request;
  if (!p.ReadRequest(request)) return;
  const wire::Bytes reply = GenuineReply(request);
  for (uint8_t b : reply) {
    if (!p.Send(wire::ByteSpan(&b, 1))) return;
    // A second between octets; WaitReadable returns early when the suite
    // has gone (EOF is readable), ending the script.
    if (p.WaitReadable(milliseconds(1000))) return;
  }
}

void ClosesAtOnce(Peer& p) { p.CloseNow(); }

void WrongKey(Peer& p) {
  wire::Bytes request;
  if (!p.ReadRequest(request)) return;
  wire::Bytes reply = GenuineReply(request);
  reply[0] ^= 0x20;  // "MPA ID Rep Frame" -> "mPA ID Rep Frame"
  p.Send(reply);
  p.StayUntilClosed();
}

void Rejects(Peer& p) {
  wire::Bytes request;
  if (!p.ReadRequest(request)) return;
  wire::MpaStartupFrame reject;
  reject.is_reply = true;
  reject.reject = true;
  reject.revision = 1;
  p.Send(wire::EncodeMpaStartupFrame(reject));
  p.StayUntilClosed();
}

// An FPDU announcing ULPDU_Length 0xFFFF, of which only 100 octets come.
void HugeUlpduLength(Peer& p) {
  if (!ReachFullOperation(p)) return;
  wire::Bytes b = {0xFF, 0xFF};
  b.resize(100, 0x42);
  p.Send(b);
  p.StayUntilClosed();
}

// Event Record Sends (the convention's, so no expectation takes them as
// the answer it waits for), without end.
void FloodsEvents(Peer& p) {
  if (!ReachFullOperation(p)) return;
  wire::Bytes batch;
  for (uint32_t msn = 1; p.Send(batch);) {
    batch.clear();
    for (int i = 0; i < 256; ++i, ++msn) {
      wire::Bytes rec;
      wire::EncodeEventRecord(wire::MakeSendEvent(msn, wire::Bytes(64, 0xA5), std::nullopt, std::nullopt), rec);
      wire::AppendFpdu(batch, wire::EncodeSegment(wire::MakeSend(wire::Opcode::kSend, msn, rec)),
                       {.crc_enabled = true});
    }
  }
}

void SendsGarbage(Peer& p) {
  wire::Bytes request;
  if (!p.ReadRequest(request)) return;
  std::mt19937 rng(7);
  wire::Bytes junk(4096);
  for (uint8_t& b : junk) b = static_cast<uint8_t>(rng());
  p.Send(junk);
  p.StayUntilClosed();
}

// Enough random octets that whatever ULPDU_Length they start with, the
// FPDU completes and its CRC fails.
void GarbageAfterReply(Peer& p) {
  if (!ReachFullOperation(p)) return;
  std::mt19937 rng(11);
  wire::Bytes junk(128 * 1024);
  for (uint8_t& b : junk) b = static_cast<uint8_t>(rng());
  p.Send(junk);
  p.StayUntilClosed();
}

// Layer 0xF / EType 0xF / Error Code 0xFF: no such code (RFC 6580).
void NonsenseTerminate(Peer& p) {
  if (!ReachFullOperation(p)) return;
  wire::TerminateHeader h;
  h.code = {0xF, 0xF, 0xFF};
  p.Send(Fpdu(wire::MakeTerminate(1, h)));
  p.StayUntilClosed();
}

void ResetsMidCase(Peer& p) {
  if (!ReachFullOperation(p)) return;
  p.Reset();
}

// ---- the cases --------------------------------------------------------------------

LoadedCase Case(const std::string& id, const std::string& body) {
  CaseLoad load =
      ParseCaseFile("case { id: \"" + id + "\" title: \"t\" requirement: \"R5040-7.2-09a\" level: MUST " + body + " }",
                    "hostile.textproto", "rfc5040", "7.2");
  EXPECT_TRUE(load.ok()) << (load.errors.empty() ? "" : load.errors.front());
  return std::move(load.cases.at(0));
}

// A Write that must be Terminated, and a Write that must be placed (read
// back with the suite's own Read Request).
const std::vector<LoadedCase>& TwoCases() {
  static const std::vector<LoadedCase> cases = [] {
    std::vector<LoadedCase> v;
    v.push_back(Case("rfc5040/7.2/hostile-write-terminated", R"pb(
      needs { region { role: RO } }
      step { send { message { type: RDMA_WRITE remote { region: RO } payload { text: "x" } } } }
      step { expect { timeout_ms: 5000 terminate { accept { layer: 1 etype: 1 code: 0 } accept { layer: 0 etype: 1 code: 2 } } } }
    )pb"));
    v.push_back(Case("rfc5040/7.2/hostile-write-placed", R"pb(
      needs { region { role: RW min_length: 64 } ird: 1 }
      step { send { label: "w" message { type: RDMA_WRITE remote { region: RW offset: 8 } payload { text: "hostile" } } } }
      step { expect { memory { at { region: RW offset: 8 } length: 7 data_of: "w" } } }
    )pb"));
    return v;
  }();
  return cases;
}

std::vector<const LoadedCase*> Selection(int copies = 1) {
  std::vector<const LoadedCase*> out;
  for (int i = 0; i < copies; ++i) {
    for (const LoadedCase& c : TwoCases()) out.push_back(&c);
  }
  return out;
}

// Short waits, small bounds: every hostile behaviour ends by the runner's
// own timeouts and limits.
RunOptions Fast() {
  RunOptions o;
  o.driver.connect_timeout = milliseconds(1000);
  o.driver.reply_timeout = milliseconds(300);
  o.driver.expect_timeout = milliseconds(300);
  o.driver.close_timeout = milliseconds(100);
  o.driver.case_timeout = milliseconds(3000);
  o.driver.limits.max_received_octets = 4u << 20;
  o.driver.limits.max_recorded_octets = 256u << 10;
  return o;
}

void LongWaits(RunOptions& o) {
  o.driver.expect_timeout = milliseconds(20000);
  o.driver.case_timeout = milliseconds(30000);
}

RunResult RunAgainst(const HostileTarget& target, const RunOptions& options = Fast(), int copies = 1) {
  std::string error;
  auto connector = targets::TcpConnector::Create(target.address(), {}, error);
  EXPECT_NE(connector, nullptr) << error;
  return RunCases(Selection(copies), options, *connector);
}

std::size_t RecordedOctets(const CaseResult& r) {
  std::size_t n = 0;
  for (const FrameRecord& f : r.frames) n += f.raw.size();
  return n;
}

struct Hostile {
  const char* name;
  Script script;
  const char* reason;  // what every case's reason must say
  std::function<void(RunOptions&)> tweak = {};
};

class HostileTargetTest : public ::testing::TestWithParam<Hostile> {};

TEST_P(HostileTargetTest, EveryCaseEndsJudgedAndTheRunGoesOn) {
  const Hostile& h = GetParam();
  HostileTarget target(h.script);
  RunOptions options = Fast();
  if (h.tweak) h.tweak(options);
  const RunResult run = RunAgainst(target, options);
  EXPECT_FALSE(run.aborted) << run.abort_reason;
  ASSERT_EQ(run.cases.size(), 2u);
  for (const CaseResult& c : run.cases) {
    EXPECT_THAT(c.verdict, AnyOf(Verdict::kError, Verdict::kFail)) << c.id << ": " << c.reason;
    EXPECT_THAT(c.reason, HasSubstr(h.reason)) << c.id;
    EXPECT_THAT(c.reason, testing::Not(HasSubstr("not run"))) << c.id;
    EXPECT_LE(RecordedOctets(c), options.driver.limits.max_recorded_octets + 64) << c.id;
  }
  EXPECT_EQ(target.connections(), 2);
}

INSTANTIATE_TEST_SUITE_P(
    Behaviours, HostileTargetTest,
    ::testing::Values(Hostile{"never_answers", NeverAnswers, "no MPA Reply within 300 ms"},
                      Hostile{"one_octet_per_second", OneOctetPerSecond, "no MPA Reply within 300 ms"},
                      Hostile{"closes_at_once", ClosesAtOnce, "without an MPA Reply"},
                      Hostile{"wrong_mpa_key", WrongKey, "MPA Reply does not decode"},
                      Hostile{"reject_bit", Rejects, "rejected the MPA Request (R=1)"},
                      Hostile{"huge_ulpdu_length", HugeUlpduLength, "incomplete FPDU (ULPDU_Length 65535"},
                      // The floods must reach the runner's bound before an expectation
                      // times out, also on a loaded machine under ASan: long waits, which
                      // the bound cuts short.
                      Hostile{"flood_of_frames", FloodsEvents, "target flood: more than 4096 unconsumed frames",
                              [](RunOptions& o) { LongWaits(o); }},
                      Hostile{"flood_of_octets", FloodsEvents,
                              "target flood: more than 4194304 octets on one connection",
                              [](RunOptions& o) {
                                LongWaits(o);
                                o.driver.limits.max_queued = 1u << 20;
                              }},
                      Hostile{"garbage_instead_of_reply", SendsGarbage, "MPA Reply does not decode"},
                      Hostile{"garbage_after_reply", GarbageAfterReply, "no valid FPDU"},
                      Hostile{"terminate_with_nonsense_codes", NonsenseTerminate, "Terminate"},
                      Hostile{"reset_mid_case", ResetsMidCase, "the connection ended (RST)"}),
    [](const ::testing::TestParamInfo<Hostile>& info) { return std::string(info.param.name); });

// ---- a target that reads late after its Reply (siw S7) ---------------------------

RunOptions ForLateHandOff(milliseconds pause) {
  RunOptions o = Fast();
  o.driver.expect_timeout = milliseconds(1000);
  o.driver.case_timeout = milliseconds(10000);
  o.driver.pause_after_reply = pause;
  return o;
}

// Without a pause the suite's first FPDU is written at once (R5044-7.1.2-R02h
// lets it), lands in the hand-off window and is never answered: both cases
// fail. This is what makes the pause's test below able to fail.
TEST(LateHandOff, FpdusRightAfterTheReplyAreStranded) {
  HostileTarget target(LateHandOff);
  const RunResult run = RunAgainst(target, ForLateHandOff(milliseconds(0)));
  ASSERT_EQ(run.cases.size(), 2u);
  for (const CaseResult& c : run.cases) EXPECT_EQ(c.verdict, Verdict::kFail) << c.id << ": " << c.reason;
}

// --pause-after-reply longer than the hand-off: both cases are judged on the
// target's RDMAP behaviour and pass.
TEST(LateHandOff, PauseAfterReplyLetsTheTargetReadEveryFpdu) {
  HostileTarget target(LateHandOff);
  const RunResult run = RunAgainst(target, ForLateHandOff(3 * kHandOff));
  ASSERT_EQ(run.cases.size(), 2u);
  for (const CaseResult& c : run.cases) EXPECT_EQ(c.verdict, Verdict::kPass) << c.id << ": " << c.reason;
}

// ---- targets that fail every connection --------------------------------------------

// A port nothing listens on: bound once, then closed.
std::string DeadAddress() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
}

void ExpectStoppedAfterThree(const RunResult& run, const std::string& why) {
  EXPECT_TRUE(run.aborted);
  EXPECT_THAT(run.abort_reason, HasSubstr("3 connections in a row")) << run.abort_reason;
  EXPECT_THAT(run.abort_reason, HasSubstr(why)) << run.abort_reason;
  ASSERT_EQ(run.cases.size(), 6u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_THAT(run.cases[i].reason, HasSubstr(why)) << i;
  for (std::size_t i = 3; i < 6; ++i) {
    EXPECT_EQ(run.cases[i].verdict, Verdict::kError);
    EXPECT_THAT(run.cases[i].reason, HasSubstr("not run: ")) << i;
  }
  EXPECT_EQ(run.counts.error, 6u);
  EXPECT_EQ(ExitStatus(run), kExitError);
}

TEST(DeadTarget, NothingListeningStopsTheRunAfterThreeRefusals) {
  std::string error;
  auto connector = targets::TcpConnector::Create(DeadAddress(), {}, error);
  ASSERT_NE(connector, nullptr) << error;
  ExpectStoppedAfterThree(RunCases(Selection(3), Fast(), *connector), "Connection refused");
}

TEST(DeadTarget, EveryHandshakeBrokenStopsTheRun) {
  for (const auto& [script, why] : {std::pair<Script, std::string>{WrongKey, "MPA Reply does not decode"},
                                    {NeverAnswers, "no MPA Reply"},
                                    {ClosesAtOnce, "without an MPA Reply"},
                                    {Rejects, "rejected the MPA Request (R=1)"}}) {
    HostileTarget target(script);
    const RunResult run = RunAgainst(target, Fast(), 3);
    ExpectStoppedAfterThree(run, why);
    // Issue 18: a target that accepted every connection was said to have
    // "refused" them.
    EXPECT_THAT(run.abort_reason, Not(HasSubstr("refused"))) << run.abort_reason;
    EXPECT_EQ(target.connections(), 3) << why;
  }
}

TEST(DeadTarget, KeepGoingRunsEveryCase) {
  HostileTarget target(WrongKey);
  RunOptions options = Fast();
  options.keep_going = true;
  const RunResult run = RunAgainst(target, options, 3);
  EXPECT_FALSE(run.aborted);
  EXPECT_EQ(run.abort_reason, "");
  ASSERT_EQ(run.cases.size(), 6u);
  for (const CaseResult& c : run.cases) EXPECT_THAT(c.reason, HasSubstr("MPA Reply does not decode"));
  EXPECT_EQ(target.connections(), 6);
  EXPECT_EQ(ExitStatus(run), kExitError);
}

// ---- the TCP transport itself ------------------------------------------------------

// A write that times out part-way leaves the stream unusable: a retry (the
// session retries a timed-out write after reading) must not send the
// octets that already went out a second time.
TEST(TcpTransportHostile, WriteAfterAPartialTimeoutIsAnError) {
  HostileTarget target([](Peer& p) { p.IdleUntilStopped(); });
  std::string error;
  auto connector = targets::TcpConnector::Create(target.address(), {.write_timeout = milliseconds(200)}, error);
  ASSERT_NE(connector, nullptr);
  auto t = connector->Connect(milliseconds(1000), error);
  ASSERT_NE(t, nullptr) << error;
  const wire::Bytes big(64u << 20, 0x11);  // more than both socket buffers hold
  ASSERT_EQ(t->Write(big), targets::IoStatus::kTimeout);
  EXPECT_THAT(t->last_error(), HasSubstr("the target took only"));
  EXPECT_EQ(t->Write(wire::Bytes(4, 0)), targets::IoStatus::kError);
  EXPECT_THAT(t->last_error(), HasSubstr("unusable after a partial write"));
  t->Abort();
}

}  // namespace
}  // namespace rdmapct::conformance
