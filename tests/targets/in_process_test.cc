// The in-process Transport: statuses, immediate timeouts, half-close,
// abort and flow control, with a reference target behind it.
#include "targets/in_process.h"

#include <gtest/gtest.h>

#include <chrono>

#include "tests/targets/target_test_util.h"

namespace rdmapct::targets {
namespace {

using std::chrono::milliseconds;
using wire::Bytes;
using wire::Opcode;

struct Connected {
  std::unique_ptr<Transport> transport;
  wire::MpaStartupFrame reply;
  wire::Advertisement adv;
};

Connected Connect(InProcessConnector& connector, testing::InitiatorOptions o = {}) {
  Connected c;
  std::string error;
  c.transport = connector.Connect(milliseconds(1000), error);
  EXPECT_NE(c.transport, nullptr) << error;
  if (!c.transport) return c;
  EXPECT_EQ(c.transport->Write(wire::EncodeMpaStartupFrame(testing::MakeRequest(o))), IoStatus::kOk);
  Bytes in;
  EXPECT_EQ(c.transport->Read(in, 4096, milliseconds(1000)), IoStatus::kOk);
  auto reply = wire::DecodeMpaStartupFrame(in, {wire::MpaFrameKind::kReply});
  EXPECT_TRUE(reply.ok());
  if (!reply.ok()) return c;
  c.reply = reply.value();
  auto adv = wire::DecodeAdvertisementFromPrivateData(c.reply.private_data, false);
  EXPECT_TRUE(adv.ok());
  if (adv.ok()) c.adv = adv.value();
  return c;
}

Bytes Fpdu(const wire::RdmapSegment& s) { return wire::EncodeFpdu(wire::EncodeSegment(s)); }

TEST(InProcessTransport, SilentTargetTimesOutAtOnceWithoutSleeping) {
  InProcessConnector connector(std::make_shared<ReferenceTarget>());
  Connected c = Connect(connector);
  ASSERT_TRUE(c.transport);
  Bytes in;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(c.transport->Read(in, 4096, milliseconds(5000)), IoStatus::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
  EXPECT_TRUE(in.empty());
}

TEST(InProcessTransport, TerminateThenClosedOnceDrained) {
  InProcessConnector connector(std::make_shared<ReferenceTarget>());
  Connected c = Connect(connector);
  ASSERT_TRUE(c.transport);
  ASSERT_EQ(c.transport->Write(Fpdu(wire::MakeRdmaWrite(0xBAD, 0, Bytes(4, 1)))), IoStatus::kOk);
  // Read the Terminate FPDU in two pieces: max_bytes is honoured.
  Bytes in;
  ASSERT_EQ(c.transport->Read(in, 5, milliseconds(0)), IoStatus::kOk);
  EXPECT_EQ(in.size(), 5u);
  ASSERT_EQ(c.transport->Read(in, 4096, milliseconds(0)), IoStatus::kOk);
  auto fpdu = wire::DecodeFpdu(in, true);
  ASSERT_TRUE(fpdu.ok());
  EXPECT_EQ(fpdu->size, in.size());
  auto seg = wire::DecodeRdmapSegment(fpdu->ulpdu, wire::Profile::kRfc5040);
  ASSERT_TRUE(seg.ok());
  EXPECT_EQ(seg->opcode(), Opcode::kTerminate);
  EXPECT_EQ(c.transport->Read(in, 4096, milliseconds(0)), IoStatus::kClosed);
  EXPECT_EQ(c.transport->Read(in, 4096, milliseconds(0)), IoStatus::kClosed);
  // Half-closed by the target: the suite may still write (and is ignored).
  EXPECT_EQ(c.transport->Write(Fpdu(wire::MakeSend(Opcode::kSend, 1, Bytes(1, 2)))), IoStatus::kOk);
  c.transport->ShutdownWrite();
  EXPECT_EQ(c.transport->Read(in, 4096, milliseconds(0)), IoStatus::kClosed);
}

TEST(InProcessTransport, ShutdownWriteMakesTheTargetCloseToo) {
  InProcessConnector connector(std::make_shared<ReferenceTarget>());
  Connected c = Connect(connector);
  ASSERT_TRUE(c.transport);
  c.transport->ShutdownWrite();
  Bytes in;
  EXPECT_EQ(c.transport->Read(in, 4096, milliseconds(0)), IoStatus::kClosed);
  EXPECT_EQ(c.transport->Write(Bytes(4, 0)), IoStatus::kError);
  EXPECT_NE(c.transport->last_error().find("ShutdownWrite"), std::string::npos);
}

TEST(InProcessTransport, AbortDiscardsEverything) {
  InProcessConnector connector(std::make_shared<ReferenceTarget>());
  Connected c = Connect(connector);
  ASSERT_TRUE(c.transport);
  ASSERT_EQ(c.transport->Write(Fpdu(wire::MakeSend(Opcode::kSend, 1, Bytes(3, 9)))), IoStatus::kOk);
  c.transport->Abort();
  Bytes in;
  EXPECT_EQ(c.transport->Read(in, 4096, milliseconds(0)), IoStatus::kError);
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(c.transport->Write(Bytes(4, 0)), IoStatus::kError);
  // The next connection reports the reset one as closed without a Terminate.
  Connected next = Connect(connector);
  ASSERT_TRUE(next.adv.previous.has_value());
  EXPECT_EQ(next.adv.previous->outcome, wire::ConnectionOutcome::kClosed);
  EXPECT_EQ(next.adv.previous->events_sent, 1);
}

TEST(InProcessTransport, ConnectionsShareOneTarget) {
  auto target = std::make_shared<ReferenceTarget>();
  InProcessConnector connector(target);
  EXPECT_EQ(connector.Describe(), "in-process reference (profile rfc5040, fault: none)");
  for (uint32_t serial = 1; serial <= 3; ++serial) {
    Connected c = Connect(connector);
    EXPECT_EQ(c.adv.connection_serial, serial);
    EXPECT_EQ(c.transport->peer(), connector.Describe());
  }
  EXPECT_EQ(target->connections_accepted(), 3u);
}

TEST(InProcessTransport, TargetStopsReadingWhenTheSuiteDoesNot) {
  InProcessConnector connector(std::make_shared<ReferenceTarget>());
  Connected c = Connect(connector);
  ASSERT_TRUE(c.transport);
  const wire::AdvertisedRegion* rw = wire::SelectRegion(c.adv, wire::RegionRole::kReadWrite);
  ASSERT_NE(rw, nullptr);
  IoStatus st = IoStatus::kOk;
  uint32_t msn = 1;
  for (; msn < 10000 && st == IoStatus::kOk; ++msn) {
    wire::ReadRequestHeader rr{.sink_stag = 1,
                               .sink_tagged_offset = 0,
                               .read_message_size = rw->length,
                               .source_stag = rw->stag,
                               .source_tagged_offset = rw->base_tagged_offset};
    st = c.transport->Write(Fpdu(wire::MakeReadRequest(msn, rr)));
  }
  EXPECT_EQ(st, IoStatus::kTimeout);
  auto* t = dynamic_cast<InProcessTransport*>(c.transport.get());
  ASSERT_NE(t, nullptr);
  EXPECT_LE(t->queued(), InProcessTransport::kMaxBacklog + 2 * rw->length);
  // Reading makes room again.
  Bytes in;
  while (c.transport->Read(in, 1 << 20, milliseconds(0)) == IoStatus::kOk) in.clear();
  wire::ReadRequestHeader rr{.sink_stag = 1,
                             .sink_tagged_offset = 0,
                             .read_message_size = 8,
                             .source_stag = rw->stag,
                             .source_tagged_offset = rw->base_tagged_offset};
  EXPECT_EQ(c.transport->Write(Fpdu(wire::MakeReadRequest(msn - 1, rr))), IoStatus::kOk);
  EXPECT_EQ(c.transport->Read(in, 1 << 20, milliseconds(0)), IoStatus::kOk);
}

TEST(InProcessConnectorTest, MisconfiguredTargetRefusesToConnect) {
  ReferenceTargetConfig config;
  config.ird = 0x3FFF;
  InProcessConnector connector(std::make_shared<ReferenceTarget>(config));
  std::string error;
  EXPECT_EQ(connector.Connect(milliseconds(10), error), nullptr);
  EXPECT_NE(error.find("IRD/ORD"), std::string::npos) << error;
}

}  // namespace
}  // namespace rdmapct::targets
