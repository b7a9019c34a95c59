// The plugin C ABI end to end: the example plugin (the reference target
// behind rdmapct_target_plugin.h) gives the same octets as the in-process
// target, and the loader names what is wrong with a bad plugin.
#include "targets/plugin_loader.h"

#include <gtest/gtest.h>

#include <chrono>

#include "targets/in_process.h"
#include "tests/targets/target_test_util.h"

namespace rdmapct::targets {
namespace {

using std::chrono::milliseconds;
using wire::Bytes;
using wire::Opcode;

Bytes Fpdu(const wire::RdmapSegment& s) { return wire::EncodeFpdu(wire::EncodeSegment(s)); }

// A short exchange: startup, a Write, a Read back, a Send (event), a bad
// Write (Terminate), then everything the target sends until its FIN.
Bytes Exchange(TargetConnector& connector) {
  std::string error;
  std::unique_ptr<Transport> t = connector.Connect(milliseconds(1000), error);
  EXPECT_NE(t, nullptr) << error;
  if (!t) return {};
  const wire::AdvertisedRegion rw = DefaultTargetLayout(wire::Profile::kRfc5040).regions[0];
  Bytes in = wire::EncodeMpaStartupFrame(testing::MakeRequest({}));
  const Bytes data = testing::ComplementOfPattern(rw, rw.base_tagged_offset, 300);
  for (const Bytes& b :
       {Fpdu(wire::MakeRdmaWrite(rw.stag, rw.base_tagged_offset, data)),
        Fpdu(wire::MakeReadRequest(1, wire::ReadRequestHeader{0x99, 0, 300, rw.stag, rw.base_tagged_offset})),
        Fpdu(wire::MakeSend(Opcode::kSend, 1, data)), Fpdu(wire::MakeRdmaWrite(0xBAD, 0, data))}) {
    in.insert(in.end(), b.begin(), b.end());
  }
  // Cut the input anywhere: the target must not care.
  for (std::size_t at = 0; at < in.size(); at += 97) {
    const std::size_t n = std::min<std::size_t>(97, in.size() - at);
    EXPECT_EQ(t->Write(wire::ByteSpan(in).subspan(at, n)), IoStatus::kOk);
  }
  Bytes out;
  IoStatus st;
  while ((st = t->Read(out, 1000, milliseconds(1000))) == IoStatus::kOk) {
  }
  EXPECT_EQ(st, IoStatus::kClosed) << t->last_error();
  t->ShutdownWrite();
  return out;
}

std::unique_ptr<PluginConnector> LoadReference(const std::string& config = "") {
  std::string error;
  auto c = PluginConnector::Load(RDMAPCT_REFERENCE_PLUGIN, config, error);
  EXPECT_NE(c, nullptr) << error;
  return c;
}

TEST(ReferencePlugin, GivesTheSameOctetsAsTheInProcessTarget) {
  auto plugin = LoadReference();
  ASSERT_NE(plugin, nullptr);
  InProcessConnector in_process(std::make_shared<ReferenceTarget>());
  const Bytes a = Exchange(*plugin);
  const Bytes b = Exchange(in_process);
  EXPECT_GT(a.size(), 300u);
  EXPECT_EQ(a, b);
  // Serial 2 on both, with the outcome of the first (a Terminate sent).
  EXPECT_EQ(Exchange(*plugin), Exchange(in_process));
}

TEST(ReferencePlugin, ConfigStringSelectsProfileAndFaults) {
  auto plugin = LoadReference("profile=rfc7306&fault=skip-bounds-check");
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->Describe(),
            std::string("plugin ") + RDMAPCT_REFERENCE_PLUGIN + " (config: profile=rfc7306&fault=skip-bounds-check)");
  std::string error;
  auto t = plugin->Connect(milliseconds(100), error);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->Write(wire::EncodeMpaStartupFrame(testing::MakeRequest({}))), IoStatus::kOk);
  Bytes out;
  ASSERT_EQ(t->Read(out, 4096, milliseconds(100)), IoStatus::kOk);
  auto reply = wire::DecodeMpaStartupFrame(out, {wire::MpaFrameKind::kReply});
  ASSERT_TRUE(reply.ok());
  auto adv = wire::DecodeAdvertisementFromPrivateData(reply->private_data, false);
  ASSERT_TRUE(adv.ok());
  EXPECT_TRUE(adv->flags & wire::kFlagRfc7306);

  std::string open_error;
  EXPECT_EQ(PluginConnector::Load(RDMAPCT_REFERENCE_PLUGIN, "fault=no-such-fault", open_error), nullptr);
  EXPECT_NE(open_error.find("refused to open"), std::string::npos) << open_error;
  EXPECT_NE(open_error.find("no-such-fault"), std::string::npos) << open_error;
}

TEST(ReferencePlugin, ReadWaitsUpToTheDeadlineThenTimesOut) {
  auto plugin = LoadReference();
  ASSERT_NE(plugin, nullptr);
  std::string error;
  auto t = plugin->Connect(milliseconds(100), error);
  ASSERT_NE(t, nullptr);
  Bytes out;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(t->Read(out, 4096, milliseconds(60)), IoStatus::kTimeout);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, milliseconds(60));
  EXPECT_LT(took, milliseconds(1000));
  EXPECT_TRUE(out.empty());
}

TEST(ReferencePlugin, PeekMemoryAndAbort) {
  auto plugin = LoadReference();
  ASSERT_NE(plugin, nullptr);
  std::string error;
  auto t = plugin->Connect(milliseconds(100), error);
  auto* p = dynamic_cast<PluginTransport*>(t.get());
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(t->Write(wire::EncodeMpaStartupFrame(testing::MakeRequest({}))), IoStatus::kOk);
  const wire::AdvertisedRegion rw = DefaultTargetLayout(wire::Profile::kRfc5040).regions[0];
  Bytes mem;
  ASSERT_TRUE(p->PeekMemory(rw.stag, rw.base_tagged_offset + 8, 16, mem)) << p->last_error();
  EXPECT_EQ(mem, wire::RegionPattern(rw, rw.base_tagged_offset + 8, 16));
  EXPECT_FALSE(p->PeekMemory(0xBAD, 0, 4, mem));
  EXPECT_NE(p->last_error().find("no such range"), std::string::npos) << p->last_error();
  t->Abort();
  Bytes out;
  EXPECT_EQ(t->Read(out, 10, milliseconds(0)), IoStatus::kError);
  EXPECT_EQ(t->Write(Bytes(1, 0)), IoStatus::kError);
}

TEST(PluginLoader, NamesAMissingFile) {
  std::string error;
  EXPECT_EQ(PluginConnector::Load("/nonexistent/librdmapct_nothing.so", "", error), nullptr);
  EXPECT_NE(error.find("cannot load plugin /nonexistent/librdmapct_nothing.so"), std::string::npos) << error;
}

TEST(PluginLoader, NamesAMissingSymbol) {
  std::string error;
  EXPECT_EQ(PluginConnector::Load("libm.so.6", "", error), nullptr);
  EXPECT_NE(error.find("lacks the symbol rdmapct_plugin_abi_version"), std::string::npos) << error;
}

TEST(PluginLoader, RefusesAnotherAbiVersion) {
  std::string error;
  EXPECT_EQ(PluginConnector::Load(RDMAPCT_BAD_ABI_PLUGIN, "", error), nullptr);
  EXPECT_NE(error.find("implements target plugin ABI 2; this rdmapct implements ABI 1"), std::string::npos) << error;
}

}  // namespace
}  // namespace rdmapct::targets
