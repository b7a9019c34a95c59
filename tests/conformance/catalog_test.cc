#include "conformance/catalog.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

namespace rdmapct::conformance {
namespace {

namespace fs = std::filesystem;

fs::path VendoredPath() { return RepositoryDir() / "conformance" / "requirements.tsv"; }

const Catalog& Vendored() {
  static const CatalogLoad load = Catalog::Load(VendoredPath());
  EXPECT_TRUE(load.ok()) << load.error.Describe();
  return *load.catalog;
}

// Sets or clears an environment variable for one test and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

const std::string kHeader = std::string(Catalog::kHeader) + "\n";
const std::string kRow1 =
    "R5040-7.2-09a\tRFC5040\t7.2\tMUST\tresponder\tyes\tSTag/bounds\tSource STag valid.\t"
    "Terminate 0/1/0x00.\n";
const std::string kRow2 = "R5044-4.4-T01\tRFC5044\t4.4\tTABLE\tRNIC\tno\tcrc\tVector 1.\t\n";

// The catalog has to be found and complete wherever the suite runs.
TEST(CatalogTest, VendoredCopyHas945Rows) {
  ASSERT_TRUE(fs::exists(VendoredPath())) << VendoredPath();
  EXPECT_EQ(Vendored().size(), 945u);
  EXPECT_EQ(Vendored().rows().front().id, "R5040-1.1-01");
  EXPECT_EQ(Vendored().rows().front().line, 2u);
}

TEST(CatalogTest, LoadDefaultFindsACompleteCatalog) {
  ScopedEnv spec("RDMAPCT_SPEC_DIR", nullptr);
  CatalogLoad load = Catalog::LoadDefault();
  ASSERT_TRUE(load.ok()) << load.error.Describe();
  EXPECT_EQ(load.catalog->size(), 945u);
  // The test binary finds the data next to itself (build/share/rdmapct).
  EXPECT_EQ(fs::path(load.catalog->source()), (DataDir() / "conformance" / "requirements.tsv").lexically_normal());
}

// Known answers taken from requirements.tsv by hand.
TEST(CatalogTest, KnownRowsHaveTypedFields) {
  const Requirement* r = Vendored().Find("R5040-7.2-09a");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->doc, "RFC5040");
  EXPECT_EQ(r->section, "7.2");
  EXPECT_EQ(r->level, Level::kMust);
  EXPECT_EQ(r->actor, "responder");
  EXPECT_EQ(r->wire_observable, WireObservable::kYes);
  EXPECT_EQ(r->topic, "STag/bounds");
  EXPECT_EQ(r->line, 233u);
  EXPECT_EQ(r->grade(), Grade::kFail);

  EXPECT_EQ(Vendored().Find("R5040-7.2-09e")->level, Level::kMustNot);
  EXPECT_EQ(Vendored().Find("R5040-4.8-05")->level, Level::kShould);
  EXPECT_EQ(Vendored().Find("R5040-4.8-05")->grade(), Grade::kWarn);
  EXPECT_EQ(Vendored().Find("R5044-4.4-T01")->level, Level::kTable);
  EXPECT_EQ(Vendored().Find("R5044-4.4-T01")->grade(), Grade::kGoverning);
  EXPECT_EQ(Vendored().Find("R5040-3.1-06")->level, Level::kMustLc);
  EXPECT_EQ(Vendored().Find("R6581-9.1-17")->wire_observable, WireObservable::kPartial);
  EXPECT_EQ(Vendored().Find("R6581-9.1-17")->actor, "MPA initiator");
  EXPECT_EQ(Vendored().Find("RCOMMIT-6-01")->doc, "COMMIT");
  EXPECT_EQ(Vendored().Find("R5040-1.1-01")->level, Level::kDesc);
  EXPECT_EQ(Vendored().Find("R5040-5.1-10")->grade(), Grade::kInfo);
  EXPECT_EQ(Vendored().Find("R9999-1-01"), nullptr);
  EXPECT_FALSE(Vendored().Contains("r5040-7.2-09a"));  // ids are case-sensitive
}

// decisions D-S3: an informative-appendix MUST NOT is only a warning.
TEST(CatalogTest, InformativeAppendixRowsGradeAsWarnings) {
  const Requirement* r = Vendored().Find("R5044-A.4-01");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->level, Level::kMustNot);
  EXPECT_TRUE(r->informative_appendix());
  EXPECT_EQ(r->grade(), Grade::kWarn);
  EXPECT_FALSE(Vendored().Find("R5040-7.2-09a")->informative_appendix());
}

// The per-level and per-observability totals of decisions D-COUNTS.
TEST(CatalogTest, CountsMatchNotesSection3) {
  std::map<std::string, int> levels;
  std::map<WireObservable, int> wire;
  for (const Requirement& r : Vendored().rows()) {
    ++levels[std::string(LevelName(r.level))];
    ++wire[r.wire_observable];
  }
  const std::map<std::string, int> want{{"MUST", 417},        {"MUST NOT", 50},  {"REQUIRED", 5},
                                        {"SHOULD", 47},       {"SHOULD NOT", 6}, {"RECOMMENDED", 5},
                                        {"MAY", 62},          {"OPTIONAL", 3},   {"must (lc)", 12},
                                        {"should (lc)", 13},  {"may (lc)", 5},   {"recommended (lc)", 4},
                                        {"required (lc)", 3}, {"TABLE", 111},    {"DESC", 202}};
  EXPECT_EQ(levels, want);
  EXPECT_EQ(wire[WireObservable::kYes], 650);
  EXPECT_EQ(wire[WireObservable::kPartial], 172);
  EXPECT_EQ(wire[WireObservable::kNo], 123);
}

TEST(CatalogTest, LevelAndObservabilitySpellingsRoundTrip) {
  for (std::string_view s :
       {"MUST", "MUST NOT", "REQUIRED", "SHOULD", "SHOULD NOT", "RECOMMENDED", "MAY", "OPTIONAL", "must (lc)",
        "should (lc)", "may (lc)", "recommended (lc)", "required (lc)", "TABLE", "DESC"}) {
    std::optional<Level> l = ParseLevel(s);
    ASSERT_TRUE(l) << s;
    EXPECT_EQ(LevelName(*l), s);
  }
  EXPECT_FALSE(ParseLevel("must"));
  EXPECT_FALSE(ParseLevel("SHALL"));
  for (std::string_view s : {"yes", "partial", "no"}) {
    EXPECT_EQ(WireObservableName(*ParseWireObservable(s)), s);
  }
  EXPECT_FALSE(ParseWireObservable("Yes"));
}

TEST(CatalogTest, ParsesMinimalCatalogWithCrlfAndNoFinalNewline) {
  std::string text = kHeader + kRow1 + kRow2;
  text.pop_back();  // no final newline
  CatalogLoad load = Catalog::Parse(text, "mem");
  ASSERT_TRUE(load.ok()) << load.error.Describe();
  ASSERT_EQ(load.catalog->size(), 2u);
  EXPECT_EQ(load.catalog->Find("R5044-4.4-T01")->expected_wire_behaviour, "");
  EXPECT_EQ(load.catalog->Find("R5044-4.4-T01")->line, 3u);

  std::string crlf =
      "id\tdoc\tsection\tlevel\tactor\twire_observable\ttopic\trequirement\t"
      "expected_wire_behaviour\r\n" +
      kRow1.substr(0, kRow1.size() - 1) + "\r\n";
  CatalogLoad load2 = Catalog::Parse(crlf, "crlf");
  ASSERT_TRUE(load2.ok()) << load2.error.Describe();
  EXPECT_EQ(load2.catalog->rows()[0].expected_wire_behaviour, "Terminate 0/1/0x00.");
}

struct BadCase {
  const char* name;
  std::string text;
  std::size_t line;
  const char* message_part;
};

// Every malformation names its line and says what is wrong.
TEST(CatalogTest, MalformedInputIsRejectedWithLineNumber) {
  const BadCase cases[] = {
      {"empty file", "", 0, "empty file"},
      {"bad header", "id\tdoc\n" + kRow1, 1, "header"},
      {"too few columns", kHeader + kRow1 + "R5040-7.2-09b\tRFC5040\t7.2\tMUST\n", 3,
       "expected 9 tab-separated columns, found 4"},
      {"too many columns", kHeader + kRow2.substr(0, kRow2.size() - 1) + "\textra\n", 2, "found 10"},
      {"unknown level", kHeader + "R5040-7.2-09b\tRFC5040\t7.2\tSHALL\tx\tyes\tt\tr\te\n", 2, "unknown level 'SHALL'"},
      {"unknown observability", kHeader + "R5040-7.2-09b\tRFC5040\t7.2\tMUST\tx\tmaybe\tt\tr\te\n", 2,
       "unknown wire_observable 'maybe'"},
      {"unknown doc", kHeader + "R5040-7.2-09b\tRFC9999\t7.2\tMUST\tx\tyes\tt\tr\te\n", 2, "unknown doc 'RFC9999'"},
      {"id/section mismatch", kHeader + "R5040-7.3-09b\tRFC5040\t7.2\tMUST\tx\tyes\tt\tr\te\n", 2,
       "does not start with 'R5040-7.2-'"},
      {"id without item", kHeader + "R5040-7.2-\tRFC5040\t7.2\tMUST\tx\tyes\tt\tr\te\n", 2, "no item number"},
      {"bad item", kHeader + "R5040-7.2-0 1\tRFC5040\t7.2\tMUST\tx\tyes\tt\tr\te\n", 2, "bad item number"},
      {"empty actor", kHeader + "R5040-7.2-09b\tRFC5040\t7.2\tMUST\t\tyes\tt\tr\te\n", 2, "empty actor"},
      {"empty topic", kHeader + "R5040-7.2-09b\tRFC5040\t7.2\tMUST\tx\tyes\t\tr\te\n", 2, "empty topic"},
      {"empty requirement", kHeader + "R5040-7.2-09b\tRFC5040\t7.2\tMUST\tx\tyes\tt\t\te\n", 2, "empty requirement"},
      {"duplicate id", kHeader + kRow1 + kRow2 + kRow1, 4, "duplicate id R5040-7.2-09a (first on line 2)"},
      {"blank line inside", kHeader + kRow1 + "\n" + kRow2, 3, "empty line"},
  };
  for (const BadCase& c : cases) {
    CatalogLoad load = Catalog::Parse(c.text, "bad.tsv");
    ASSERT_FALSE(load.ok()) << c.name;
    EXPECT_EQ(load.error.line, c.line) << c.name;
    EXPECT_NE(load.error.message.find(c.message_part), std::string::npos) << c.name << ": " << load.error.message;
    EXPECT_EQ(load.error.Describe().rfind("bad.tsv:" + std::to_string(c.line) + ": ", 0), 0u) << load.error.Describe();
  }
}

TEST(CatalogTest, MissingFileIsAnError) {
  CatalogLoad load = Catalog::Load("/nonexistent/requirements.tsv");
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.error.line, 0u);
  EXPECT_EQ(load.error.message, "cannot open file");
}

TEST(CatalogTest, SpecDirEnvironmentOverridesAndNeverFallsBack) {
  fs::path dir = fs::temp_directory_path() / ("rdmapct_catalog_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  {
    ScopedEnv spec("RDMAPCT_SPEC_DIR", dir.c_str());
    std::string why;
    EXPECT_FALSE(FindRequirementsFile(&why));
    EXPECT_NE(why.find("RDMAPCT_SPEC_DIR"), std::string::npos) << why;
    EXPECT_FALSE(Catalog::LoadDefault().ok());

    std::ofstream(dir / "requirements.tsv") << kHeader << kRow1;
    ASSERT_EQ(FindRequirementsFile(), dir / "requirements.tsv");
    CatalogLoad load = Catalog::LoadDefault();
    ASSERT_TRUE(load.ok()) << load.error.Describe();
    EXPECT_EQ(load.catalog->size(), 1u);
  }
  fs::remove_all(dir);
}

// RDMAPCT_DATA_DIR moves the whole data directory; a directory without the
// catalog is an error that names both overrides.
TEST(CatalogTest, DataDirEnvironmentMovesTheCatalog) {
  fs::path data = fs::temp_directory_path() / ("rdmapct_data_" + std::to_string(getpid()));
  fs::create_directories(data / "conformance");
  std::ofstream(data / "conformance" / "requirements.tsv") << kHeader << kRow2;
  {
    ScopedEnv spec("RDMAPCT_SPEC_DIR", nullptr);
    ScopedEnv env(kDataDirVariable, data.c_str());
    EXPECT_EQ(DataDir(), data);
    ASSERT_EQ(FindRequirementsFile(), (data / "conformance" / "requirements.tsv").lexically_normal());
    fs::remove(data / "conformance" / "requirements.tsv");
    std::string why;
    EXPECT_FALSE(FindRequirementsFile(&why));
    EXPECT_NE(why.find("RDMAPCT_DATA_DIR"), std::string::npos) << why;
    EXPECT_NE(why.find("RDMAPCT_SPEC_DIR"), std::string::npos) << why;
  }
  fs::remove_all(data);
}

// Without the variable, the data directory is found from the executable's
// place, never from a path compiled in.
TEST(CatalogTest, DataDirIsFoundNextToTheExecutable) {
  ScopedEnv env(kDataDirVariable, nullptr);
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  const fs::path data = DataDir();
  EXPECT_EQ(data.filename(), "rdmapct");
  EXPECT_EQ(data.parent_path().filename(), "share");
  // build/tests/<binary>: the nearest share/rdmapct is build/share/rdmapct.
  EXPECT_EQ(
      fs::weakly_canonical(exe).string().rfind(fs::weakly_canonical(data.parent_path().parent_path()).string(), 0), 0u)
      << exe << " " << data;
  EXPECT_TRUE(fs::is_regular_file(data / "conformance" / "requirements.tsv"));
}

}  // namespace
}  // namespace rdmapct::conformance
