#include "targets/target_uri.h"

#include <gtest/gtest.h>

#include "targets/in_process.h"

namespace rdmapct::targets {
namespace {

std::unique_ptr<TargetConnector> Make(std::string_view uri, std::string& error, const ConnectorOptions& o = {}) {
  return MakeConnector(uri, o, error);
}

const ReferenceTargetConfig& ConfigOf(const std::unique_ptr<TargetConnector>& c) {
  auto* in_process = dynamic_cast<InProcessConnector*>(c.get());
  EXPECT_NE(in_process, nullptr);
  return in_process->target()->config();
}

TEST(TargetUri, Reference) {
  std::string error;
  auto c = Make("reference", error);
  ASSERT_NE(c, nullptr) << error;
  EXPECT_EQ(c->Describe(), "in-process reference (profile rfc5040, fault: none)");
}

TEST(TargetUri, ReferenceQuery) {
  std::string error;
  auto c = Make("reference?fault=skip-bounds-check&profile=rfc7306&fault=ignore-ird", error);
  ASSERT_NE(c, nullptr) << error;
  EXPECT_EQ(c->Describe(), "in-process reference (profile rfc7306, fault: skip-bounds-check,ignore-ird)");
  auto d = Make(
      "reference?crc=0&markers=1&rfc6581=0&revs=1&ird=4&ord=2&buffers=16&buffer_size=2048"
      "&keep_memory=0&mulpdu=512",
      error);
  ASSERT_NE(d, nullptr) << error;
  const ReferenceTargetConfig& cfg = ConfigOf(d);
  EXPECT_FALSE(cfg.mpa.crc);
  EXPECT_TRUE(cfg.mpa.request_markers);
  EXPECT_FALSE(cfg.mpa.rfc6581);
  EXPECT_EQ(cfg.mpa.accepted_revisions, std::vector<uint8_t>{1});
  EXPECT_EQ(cfg.ird, 4);
  EXPECT_EQ(cfg.ord, 2);
  EXPECT_EQ(cfg.receive_buffer_count, 16);
  EXPECT_EQ(cfg.receive_buffer_size, 2048u);
  EXPECT_FALSE(cfg.keep_memory);
  EXPECT_EQ(cfg.mulpdu, 512u);
}

TEST(TargetUri, OptionsOverrideAndAddToTheQuery) {
  ConnectorOptions o;
  o.profile = wire::Profile::kCommit;
  o.faults.Add(model::Fault::kIgnoreIrd);
  std::string error;
  auto c = Make("reference?profile=rfc7306&fault=skip-msn-check", error, o);
  ASSERT_NE(c, nullptr) << error;
  const ReferenceTargetConfig& cfg = ConfigOf(c);
  EXPECT_EQ(cfg.profile, wire::Profile::kCommit);
  EXPECT_TRUE(cfg.faults.Has(model::Fault::kIgnoreIrd));
  EXPECT_TRUE(cfg.faults.Has(model::Fault::kSkipMsnCheck));
}

TEST(TargetUri, Errors) {
  struct Case {
    const char* uri;
    const char* message;
  };
  for (const Case& k : {
           Case{"ftp://x", "unknown target \"ftp://x\""},
           Case{"referencex", "unknown target"},
           Case{"reference?fault=nope", "unknown fault \"nope\""},
           Case{"reference?profile=rfc9999", "unknown profile"},
           Case{"reference?color=red", "unknown reference option \"color\""},
           Case{"reference?ird", "needs a value"},
           Case{"reference?ird=70000", "bad value for ird"},
           Case{"reference?ird=16383", "IRD/ORD above 0x3FFE"},
           Case{"plugin:", "without a path"},
           Case{"plugin:/nonexistent/lib.so?x=1", "cannot load plugin /nonexistent/lib.so"},
           Case{"tcp://nohostport", "bad TCP address"},
       }) {
    std::string error;
    EXPECT_EQ(Make(k.uri, error), nullptr) << k.uri;
    EXPECT_NE(error.find(k.message), std::string::npos) << k.uri << ": " << error;
  }
}

TEST(TargetUri, PluginAndTcp) {
  std::string error;
  auto p = Make(std::string("plugin:") + RDMAPCT_REFERENCE_PLUGIN + "?profile=commit", error);
  ASSERT_NE(p, nullptr) << error;
  EXPECT_NE(p->Describe().find("(config: profile=commit)"), std::string::npos);
  auto t = Make("tcp://127.0.0.1:4791", error);
  ASSERT_NE(t, nullptr) << error;
  EXPECT_EQ(t->Describe(), "tcp://127.0.0.1:4791");
}

}  // namespace
}  // namespace rdmapct::targets
