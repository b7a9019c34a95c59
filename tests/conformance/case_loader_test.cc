#include "conformance/case_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace rdmapct::conformance {
namespace {

namespace fs = std::filesystem;

const Catalog& TheCatalog() {
  static const CatalogLoad load = Catalog::LoadDefault();
  EXPECT_TRUE(load.ok()) << load.error.Describe();
  return *load.catalog;
}

bool Has(const std::vector<std::string>& v, const std::string& part) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

const char kTwoCases[] = R"pb(
case {
  id: "rfc5040/7.2/alpha"
  title: "a"
  requirement: "R5040-7.2-09a"
  level: MUST
  tag: "terminate"
  step { pause { ms: 1 } }
}
case {
  id: "rfc5040/7.2/beta"
  title: "b"
  requirement: "R5040-7.2-09a"
  level: SHOULD
  profile: RFC7306
  profile: COMMIT
  tag: "bounds"
  step { pause { ms: 1 } }
}
)pb";

TEST(CaseLoaderTest, RecordsFileLineDocumentAndSection) {
  CaseLoad load = ParseCaseFile(kTwoCases, "rfc5040/7.2_x.textproto", "rfc5040", "7.2");
  ASSERT_TRUE(load.ok()) << load.errors.front();
  ASSERT_EQ(load.cases.size(), 2u);
  EXPECT_EQ(load.cases[0].line, 2);
  EXPECT_EQ(load.cases[1].line, 10);
  EXPECT_EQ(load.cases[1].where(), "rfc5040/7.2_x.textproto:10");
  EXPECT_EQ(load.cases[0].document, "rfc5040");
  EXPECT_EQ(load.cases[0].section, "7.2");
  EXPECT_TRUE(ValidateCases(load.cases, TheCatalog()).empty());
}

TEST(CaseLoaderTest, ValidationMessagesNameFileAndLine) {
  std::string text = kTwoCases;
  text.replace(text.find("title: \"b\""), 10, "");
  CaseLoad load = ParseCaseFile(text, "f.textproto", "rfc5040", "7.2");
  EXPECT_TRUE(Has(ValidateCases(load.cases, TheCatalog()), "f.textproto:10: case rfc5040/7.2/beta: no title"));
}

TEST(CaseLoaderTest, ChecksThatGoBeyondTheFieldWalk) {
  const char text[] = R"pb(
case {
  id: "rfc5040/7.2/c"
  title: "c"
  requirement: "R5040-7.2-09a"
  level: MUST
  step {}
  step { expect { event { solicited: true } } }
  step { expect { read_responses { first_request: 2 last_request: 1 } } }
  step { expect { any_of {} } }
  step { expect { memory { unchanged: true } } }
  step { expect { terminate { accept { preferred: true } ddp_segment_length { value: 1 } ddp_segment_length { value: 2 } } } }
}
)pb";
  CaseLoad load = ParseCaseFile(text, "f.textproto", "rfc5040", "7.2");
  const std::vector<std::string> bad = ValidateCases(load.cases, TheCatalog());
  EXPECT_TRUE(Has(bad, "a step without an action"));
  EXPECT_TRUE(Has(bad, "SE without needs.solicited_known"));
  EXPECT_TRUE(Has(bad, "first_request <= last_request"));
  EXPECT_TRUE(Has(bad, "any_of without alternatives"));
  EXPECT_TRUE(Has(bad, "memory expectation of length 0"));
  EXPECT_TRUE(Has(bad, "DDP Segment Length accept-set needs exactly one preferred member"));
}

CaseFilter With(void (*set)(CaseFilter&)) {
  CaseFilter f;
  set(f);
  return f;
}

TEST(CaseLoaderTest, FiltersByIdGlobSectionDocumentLevelTagProfile) {
  CaseLoad load = ParseCaseFile(kTwoCases, "x", "rfc5040", "7.2");
  auto ids = [&](const CaseFilter& f) {
    std::vector<std::string> out;
    for (const LoadedCase* c : SelectCases(load.cases, f)) out.push_back(c->id());
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(ids({}), (V{"rfc5040/7.2/alpha", "rfc5040/7.2/beta"}));
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.ids = {"rfc5040/7.2/beta"}; })), V{"rfc5040/7.2/beta"});
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.ids = {"*/al*"}; })), V{"rfc5040/7.2/alpha"});
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.ids = {"rfc5040/7.2/b"}; })), V{});
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.sections = {"7"}; })).size(), 2u);
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.sections = {"7.2"}; })).size(), 2u);
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.sections = {"7.22"}; })).size(), 0u);
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.sections = {"7.1"}; })).size(), 0u);
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.documents = {"rfc7306"}; })).size(), 0u);
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.levels = {proto::SHOULD}; })), V{"rfc5040/7.2/beta"});
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.tags = {"terminate", "nothing"}; })), V{"rfc5040/7.2/alpha"});
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.profile = wire::Profile::kRfc5040; })), V{"rfc5040/7.2/alpha"});
  EXPECT_EQ(ids(With([](CaseFilter& f) { f.profile = wire::Profile::kCommit; })).size(), 2u);
  EXPECT_EQ(ids(With([](CaseFilter& f) {
              f.levels = {proto::MUST};
              f.profile = wire::Profile::kCommit;
            })),
            V{"rfc5040/7.2/alpha"});
}

TEST(CaseLoaderTest, IdComponents) {
  EXPECT_EQ(IdComponent("rfc5040/7.2/x-y", 0), "rfc5040");
  EXPECT_EQ(IdComponent("rfc5040/7.2/x-y", 1), "7.2");
  EXPECT_EQ(IdComponent("rfc5040/7.2/x-y", 2), "x-y");
  EXPECT_EQ(IdComponent("rfc5040", 1), "");
}

TEST(CaseLoaderTest, LoadsADirectoryAndRejectsMisplacedFiles) {
  const fs::path dir = fs::temp_directory_path() / ("rdmapct-cases-" + std::to_string(getpid()));
  fs::create_directories(dir / "rfc5040");
  std::ofstream(dir / "rfc5040" / "7.2_x.textproto") << kTwoCases;
  std::ofstream(dir / "stray.textproto") << kTwoCases;
  std::ofstream(dir / "rfc5040" / "7.3_bad.textproto") << "case { id: \"a\"\n  levle: MUST }";
  CaseLoad load = LoadCaseFiles(dir);
  EXPECT_EQ(load.cases.size(), 2u);
  EXPECT_TRUE(Has(load.errors, "stray.textproto: case files live at"));
  EXPECT_TRUE(Has(load.errors, "rfc5040/7.3_bad.textproto:2:")) << load.errors.front();
  EXPECT_TRUE(Has(LoadCaseFiles(dir / "none").errors, "not a directory"));
  fs::remove_all(dir);
}

// Issue 19 part 4: a sweep is one case per value, each with its own id,
// title and patched steps; the swept case's id selects them all.
constexpr char kSwept[] = R"pb(
  case {
    id: "rfc5040/7.2/swept"
    title: "offset {value}"
    requirement: "R5040-7.2-09a"
    level: MUST
    needs { region { role: RW } }
    step { note: "at +{value}" send { message { type: RDMA_WRITE remote { region: RW offset: 1 } set { rv: 1 } } } }
    step { expect { closed {} } }
    sweep {
      parameter: "offset"
      value { value: "1" }
      value { value: "9" patch { step: 0 merge { send { message { remote { offset: 9 } set { rv: 2 } } } } } }
      value { value: "0x10" id_suffix: "-sixteen" title: "sixteen" }
    }
  }
)pb";

TEST(CaseLoaderTest, ExpandsASweepIntoOneCasePerValue) {
  const CaseLoad load = ParseCaseFile(kSwept, "s.textproto", "rfc5040", "7.2");
  ASSERT_TRUE(load.ok()) << load.errors.front();
  ASSERT_EQ(load.cases.size(), 3u);
  EXPECT_EQ(load.cases[0].id(), "rfc5040/7.2/swept-1");
  EXPECT_EQ(load.cases[1].id(), "rfc5040/7.2/swept-9");
  EXPECT_EQ(load.cases[2].id(), "rfc5040/7.2/swept-sixteen");
  EXPECT_EQ(load.cases[0].proto.title(), "offset 1");
  EXPECT_EQ(load.cases[2].proto.title(), "sixteen");
  EXPECT_EQ(load.cases[1].proto.step(0).note(), "at +9");
  // The patch merged: the offset and the field replaced, the region kept.
  const proto::Message& m = load.cases[1].proto.step(0).send().message();
  EXPECT_EQ(m.remote().offset(), 9);
  EXPECT_EQ(m.remote().region(), proto::RW);
  EXPECT_EQ(m.set().rv(), 2u);
  EXPECT_EQ(load.cases[0].proto.step(0).send().message().remote().offset(), 1);
  for (const LoadedCase& c : load.cases) {
    EXPECT_EQ(c.sweep_case, "rfc5040/7.2/swept");
    EXPECT_EQ(c.sweep_parameter, "offset");
    EXPECT_FALSE(c.proto.has_sweep());
  }
  EXPECT_EQ(load.cases[1].sweep_value, "9");
  CaseFilter f;
  f.ids = {"rfc5040/7.2/swept"};
  EXPECT_EQ(SelectCases(load.cases, f).size(), 3u);
  f.ids = {"rfc5040/7.2/swept-9"};
  EXPECT_EQ(SelectCases(load.cases, f).size(), 1u);

  const CaseLoad bad = ParseCaseFile(
      "case { id: \"rfc5040/7.2/b\" title: \"t\" requirement: \"R5040-7.2-09a\" level: MUST "
      "step { pause { ms: 1 } } sweep { parameter: \"p\" value { value: \"1\" patch { step: 3 } } } }",
      "b.textproto", "rfc5040", "7.2");
  EXPECT_TRUE(Has(bad.errors, "sweep value 1 patches step 3 of 1")) << (bad.errors.empty() ? "" : bad.errors.front());
}

// Issue 18: --cases-dir /tmp walked all of /tmp and listed every stray file.
TEST(CaseLoaderTest, ADirectoryThatIsNoCaseTreeIsOneErrorAndIsNotWalked) {
  const fs::path dir = fs::temp_directory_path() / ("rdmapct-not-cases-" + std::to_string(getpid()));
  for (int i = 0; i < 30; ++i) {
    fs::create_directories(dir / "a" / std::to_string(i));
    std::ofstream(dir / "a" / std::to_string(i) / "deep.textproto") << kTwoCases;
  }
  std::ofstream(dir / "top.textproto") << kTwoCases;
  fs::create_directories(dir / "somebody-elses");
  std::ofstream(dir / "somebody-elses" / "t1.textproto") << kTwoCases;
  CaseLoad load = LoadCaseFiles(dir);
  EXPECT_TRUE(load.cases.empty());
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_THAT(load.errors[0], testing::StartsWith(dir.string() + ": not a case tree"));
  fs::remove_all(dir);
}

TEST(CaseLoaderTest, TheDefaultCasesLoadCleanly) {
  CaseLoad load = LoadCases();
  EXPECT_TRUE(load.ok()) << load.errors.front();
  EXPECT_GE(load.cases.size(), 3u);
}

}  // namespace
}  // namespace rdmapct::conformance
