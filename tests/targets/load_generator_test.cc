// The load generator against a real TcpServer on 127.0.0.1 port 0 (the
// server `rdmapct serve` runs), on a thread of this process. What the
// generator says it sent must be what the server saw: the octets the server
// read, its connection count, no Terminate, and for Writes the target's
// memory holding the payload in every slot of the region written. Budgets
// are message counts, so nothing depends on the machine's speed.
#include "targets/load_generator.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"
#include "reference/wire/ulp_convention.h"
#include "targets/reference_target.h"
#include "targets/tcp.h"
#include "targets/tcp_server.h"
#include "tests/targets/served_test_util.h"

namespace rdmapct::targets {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

// `rdmapct serve --listen 127.0.0.1:0` on a thread; Stop() joins it, after
// which stats() may be read.
using Serve = testing::Served;

// `serve --crc optional`: C in the Reply is 0, the Request decides.
ReferenceTargetConfig CrcOptional() {
  ReferenceTargetConfig config;
  config.mpa.crc = false;
  return config;
}

LoadOptions Budget(LoadOp op, bool crc, int connections, uint64_t messages) {
  LoadOptions o;
  o.op = op;
  o.crc = crc;
  o.connections = connections;
  o.max_messages = messages;
  o.duration = milliseconds(0);  // the message budget alone bounds the run
  return o;
}

void ExpectConsistent(const LoadResult& r, const LoadOptions& o) {
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.messages, o.max_messages);
  EXPECT_EQ(r.payload_octets, r.messages * 4096);
  ASSERT_TRUE(r.crc.has_value());
  EXPECT_EQ(*r.crc, o.crc);
}

class LoadWrites : public ::testing::TestWithParam<bool> {};

// 4 KiB Writes cycle over the six slots of the 24 KiB rw region: after the
// run every slot holds the payload, and the server read exactly the octets
// the generator sent, on the connections it opened, with no Terminate.
TEST_P(LoadWrites, LandInTargetMemoryAndServerSawEveryOctet) {
  const bool crc = GetParam();
  Serve serve(CrcOptional());
  auto connector = serve.Connector();
  const LoadOptions o = Budget(LoadOp::kWrite, crc, 1, 100);
  const LoadResult r = RunLoad(*connector, o);
  ExpectConsistent(r, o);
  EXPECT_EQ(r.events, 0u);
  EXPECT_EQ(r.connections, 1u);
  EXPECT_EQ(r.read_backs, 1u);
  // Request (20) + 100 FPDUs of 2 + 14 + 4096 + PAD 0 + CRC 4 + the
  // read-back's Read Request (2 + 18 + 28 + 4).
  EXPECT_EQ(r.wire_octets, 20u + 100u * 4116u + 52u);
  ASSERT_TRUE(r.write_region.has_value());
  wire::Advertisement layout;
  layout.regions = serve.target().layout().regions;
  const wire::AdvertisedRegion* rw = wire::SelectRegion(layout, wire::RegionRole::kReadWrite, 4096);
  ASSERT_NE(rw, nullptr);
  EXPECT_EQ(r.write_region->stag, rw->stag);

  serve.Stop();
  EXPECT_EQ(serve.stats().terminates, 0u);
  EXPECT_EQ(serve.stats().accepted, r.connections);
  EXPECT_EQ(serve.stats().octets_in, r.wire_octets);
  const wire::Bytes memory = serve.target().MemorySnapshot(rw->memory_object);
  const wire::Bytes payload = LoadPayload(4096);
  ASSERT_GE(memory.size(), rw->object_offset + rw->length);
  for (uint32_t slot = 0; slot < rw->length / 4096; ++slot) {
    const auto* at = memory.data() + rw->object_offset + slot * 4096;
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), at)) << "slot " << slot << " not written";
  }
}

INSTANTIATE_TEST_SUITE_P(Crc, LoadWrites, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "CrcOn" : "CrcOff"; });

class LoadSends : public ::testing::TestWithParam<bool> {};

// The target posts 8 buffers per connection and never reposts them: 50
// Sends over 2 workers need at least 7 connections, every Send comes back
// as a checked Event Record, and no buffer runs out (no Terminate).
TEST_P(LoadSends, UseAFreshConnectionPerBufferSet) {
  const bool crc = GetParam();
  Serve serve(CrcOptional());
  auto connector = serve.Connector();
  const LoadOptions o = Budget(LoadOp::kSend, crc, 2, 50);
  const LoadResult r = RunLoad(*connector, o);
  ExpectConsistent(r, o);
  EXPECT_EQ(r.events, r.messages);
  // ceil(50 / 8) connections carry Sends; a worker whose first connection
  // opens after the budget is gone carries none (at most one of the two).
  EXPECT_GE(r.connections, 7u);
  EXPECT_LE(r.connections, 8u);
  // Each connection: the 20-octet Request; each Send one 4120-octet FPDU
  // (2 + 18 + 4096 + 4).
  EXPECT_EQ(r.wire_octets, 20u * r.connections + 50u * 4120u);

  serve.Stop();
  EXPECT_EQ(serve.stats().terminates, 0u);
  EXPECT_EQ(serve.stats().accepted, r.connections);
  EXPECT_EQ(serve.stats().octets_in, r.wire_octets);
}

INSTANTIATE_TEST_SUITE_P(Crc, LoadSends, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "CrcOn" : "CrcOff"; });

// A scripted target on a raw socket: it answers the MPA Request with a
// Reply and an Advertisement (one 24 KiB rw region), answers the first
// octets of Full Operation with a Terminate 0/1/0x00 (Invalid STag), then
// sends its FIN and reads until the initiator goes away.
class TerminatingTarget {
 public:
  TerminatingTarget() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 4), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    address_ = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    thread_ = std::thread([this] { Serve(); });
  }
  ~TerminatingTarget() {
    thread_.join();
    close(fd_);
  }
  const std::string& address() const { return address_; }

 private:
  static wire::Bytes Reply() {
    wire::Advertisement adv;
    adv.ird = 8;
    adv.receive_buffer_count = 8;
    adv.receive_buffer_size = 4096;
    adv.connection_serial = 1;
    adv.regions.push_back({.stag = 0x1a01,
                           .base_tagged_offset = 0,
                           .length = 0x6000,
                           .access = wire::kAccessRemoteRead | wire::kAccessRemoteWrite});
    wire::MpaStartupFrame reply;
    reply.is_reply = true;
    reply.crc_required = true;
    EXPECT_TRUE(wire::EncodeAdvertisement(adv, reply.private_data).ok());
    return wire::EncodeMpaStartupFrame(reply);
  }
  static wire::Bytes Terminate() {
    const wire::TerminateHeader h = wire::MakeTerminateHeader(
        wire::MakeTerminateCode(wire::RdmapErrorType::kRemoteProtection, wire::RdmapErrorCode::kInvalidStag), nullptr,
        0, nullptr);
    return wire::EncodeFpdu(wire::EncodeSegment(wire::MakeTerminate(1, h)));
  }
  void Serve() {
    const int c = accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    const timeval tv{5, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[65536];
    std::size_t got = 0;
    while (got < wire::kMpaStartupHeaderSize) {  // the Request, no Private Data
      const ssize_t n = recv(c, buf + got, wire::kMpaStartupHeaderSize - got, 0);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    const wire::Bytes reply = Reply();
    send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
    if (recv(c, buf, sizeof buf, 0) > 0) {  // the first FPDU octets
      const wire::Bytes t = Terminate();
      send(c, t.data(), t.size(), MSG_NOSIGNAL);
    }
    shutdown(c, SHUT_WR);
    while (recv(c, buf, sizeof buf, 0) > 0) {
    }
    close(c);
  }

  int fd_ = -1;
  std::string address_;
  std::thread thread_;
};

// A Terminate is the target refusing what the generator sent: an error that
// names it, and nothing is counted.
TEST(Load, TerminateIsAnErrorAndNothingIsCounted) {
  TerminatingTarget target;
  std::string error;
  auto connector = TcpConnector::Create(target.address(), {}, error);
  ASSERT_NE(connector, nullptr) << error;
  const LoadResult r = RunLoad(*connector, Budget(LoadOp::kWrite, true, 1, 64));
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.error, HasSubstr("a Terminate 0/1/0x00"));
  EXPECT_EQ(r.messages, 0u);
  EXPECT_EQ(r.connections, 0u);
}

// A target whose stream fails without a Terminate (this one reassembles
// ULPDUs of at most 1024 octets and gives up at the first 4 KiB Write)
// closes before the initiator does: an error, and nothing is counted.
TEST(Load, StreamFailureWithoutTerminateIsAnError) {
  ReferenceTargetConfig config = CrcOptional();
  config.max_inbound_ulpdu = 1024;
  Serve serve(config);
  auto connector = serve.Connector();
  LoadOptions o = Budget(LoadOp::kWrite, true, 1, 64);
  o.io_timeout = milliseconds(300);
  const LoadResult r = RunLoad(*connector, o);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.error, HasSubstr("the target"));
  EXPECT_EQ(r.messages, 0u);
  EXPECT_EQ(r.connections, 0u);
  serve.Stop();
  EXPECT_EQ(serve.stats().terminates, 0u);
}

// Sends larger than the posted buffers would each earn a Terminate: the
// generator refuses before sending any.
TEST(Load, SendsLargerThanTheBuffersAreRefused) {
  ReferenceTargetConfig config = CrcOptional();
  config.receive_buffer_size = 1024;
  Serve serve(config);
  auto connector = serve.Connector();
  const LoadResult r = RunLoad(*connector, Budget(LoadOp::kSend, true, 1, 8));
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.error, HasSubstr("receive buffer(s) of 1024 octets"));
  EXPECT_EQ(r.messages, 0u);
  serve.Stop();
  EXPECT_EQ(serve.stats().terminates, 0u);
}

// A target that asks for CRCs (serve --crc on) gets them, whatever the
// Request said; the result says so.
TEST(Load, CrcFollowsTheNegotiation) {
  Serve serve(ReferenceTargetConfig{});
  auto connector = serve.Connector();
  const LoadResult r = RunLoad(*connector, Budget(LoadOp::kWrite, false, 1, 16));
  EXPECT_TRUE(r.ok()) << r.error;
  ASSERT_TRUE(r.crc.has_value());
  EXPECT_TRUE(*r.crc);
  EXPECT_EQ(r.messages, 16u);
}

// A listener that never accepts (the kernel completes the handshake) and
// so never sends a Reply: the run ends with an error after io_timeout
// instead of hanging.
TEST(Load, SilentTargetEndsTheRunWithAnError) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 8), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::string error;
  auto connector = TcpConnector::Create("127.0.0.1:" + std::to_string(ntohs(a.sin_port)), {}, error);
  ASSERT_NE(connector, nullptr) << error;
  LoadOptions o = Budget(LoadOp::kSend, true, 2, 100);
  o.io_timeout = milliseconds(200);
  const LoadResult r = RunLoad(*connector, o);
  close(fd);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.error, HasSubstr("no MPA Reply within 200 ms"));
  EXPECT_EQ(r.messages, 0u);
}

TEST(Load, BadOptionsAreRefusedBeforeConnecting) {
  LoadOptions o;
  o.duration = milliseconds(0);
  o.max_messages = 0;
  EXPECT_THAT(ValidateLoadOptions(o), HasSubstr("budget"));
  o.max_messages = 1;
  o.connections = 0;
  EXPECT_THAT(ValidateLoadOptions(o), HasSubstr("connections"));
  o.connections = 1;
  o.message_size = 0;
  EXPECT_THAT(ValidateLoadOptions(o), HasSubstr("size"));
  o.message_size = 4096;
  EXPECT_EQ(ValidateLoadOptions(o), "");
}

}  // namespace
}  // namespace rdmapct::targets
