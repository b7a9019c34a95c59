// Meta-test of the case files: every conformance/cases/**/*.textproto parses
// as an rdmapct.proto.CaseFile, case ids are unique and well-formed, every
// cited requirement id exists in the catalog, and the cross-references inside
// a case (regions against `needs`, send labels) hold. The checks live in the
// library (ValidateCases, case_loader.h) so the runner applies them too; this
// test runs them on the real files and proves that they catch what they
// promise. A broken case file fails here, before any runner sees it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "conformance/case_loader.h"
#include "conformance/catalog.h"

namespace rdmapct::conformance {
namespace {

const Catalog& TheCatalog() {
  static const CatalogLoad load = Catalog::LoadDefault();
  EXPECT_TRUE(load.ok()) << load.error.Describe();
  return *load.catalog;
}

TEST(CaseSchemaTest, EveryCaseFileParsesAndIsConsistent) {
  const CaseLoad load = LoadCaseFiles(DefaultCasesDir());
  for (const std::string& e : load.errors) ADD_FAILURE() << e;
  for (const std::string& e : ValidateCases(load.cases, TheCatalog())) ADD_FAILURE() << e;
  EXPECT_GE(load.cases.size(), 3u);
}

// The checker itself must catch what it promises to catch.
class CaseCheckerTest : public ::testing::Test {
 protected:
  // Parses `text` as one more file "x.textproto" at cases/rfc5040/7.2_x and
  // validates it together with the files checked before (duplicate ids
  // across files).
  std::vector<std::string> Check(const std::string& text) {
    CaseLoad one = ParseCaseFile(text, "x.textproto", "rfc5040", "7.2");
    for (LoadedCase& c : one.cases) all_.push_back(std::move(c));
    std::vector<std::string> bad = one.errors;
    for (std::string& e : ValidateCases(all_, TheCatalog())) bad.push_back(std::move(e));
    return bad;
  }
  static bool Has(const std::vector<std::string>& v, const std::string& part) {
    return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.find(part) != std::string::npos; });
  }
  std::vector<LoadedCase> all_;
};

const char kGood[] = R"pb(
  case {
    id: "rfc5040/7.2/good"
    title: "t"
    requirement: "R5040-7.2-09a"
    level: MUST
    needs { region { role: DEREGISTERED } }
    step {
      send {
        label: "r"
        message { type: RDMA_READ_REQUEST remote { region: DEREGISTERED } }
      }
    }
    step {
      expect {
        terminate {
          accept { layer: 0 etype: 1 code: 0 preferred: true }
          offending: "r"
        }
      }
    }
  }
)pb";

TEST_F(CaseCheckerTest, AcceptsAGoodCase) {
  std::vector<std::string> bad = Check(kGood);
  EXPECT_TRUE(bad.empty()) << bad.front();
}

TEST_F(CaseCheckerTest, ReportsParseErrorsWithLineAndColumn) {
  std::vector<std::string> bad = Check("case { id: \"a\"\n  levle: MUST }");
  ASSERT_FALSE(bad.empty());
  EXPECT_TRUE(Has(bad, "x.textproto:2:")) << bad.front();
  EXPECT_TRUE(Has(bad, "levle")) << bad.front();
  EXPECT_FALSE(Check("case { level: SOMETIMES }").empty());
}

TEST_F(CaseCheckerTest, ReportsDuplicateIdsAcrossFiles) {
  EXPECT_TRUE(Check(kGood).empty());
  std::vector<std::string> bad = Check(kGood);
  EXPECT_TRUE(Has(bad, "duplicate case id rfc5040/7.2/good (first in x.textproto)"));
}

TEST_F(CaseCheckerTest, ReportsRequirementsMissingFromTheCatalog) {
  std::string text = kGood;
  text.replace(text.find("R5040-7.2-09a"), 13, "R5040-7.2-99z");
  EXPECT_TRUE(Has(Check(text), "requirement R5040-7.2-99z is not in the catalog"));
  std::string nested = kGood;
  nested.replace(nested.find("terminate {"), 11, "requirement: \"R9-1-01\" terminate {");
  EXPECT_TRUE(Has(Check(nested), "requirement R9-1-01 is not in the catalog"));
}

TEST_F(CaseCheckerTest, ReportsBrokenCrossReferences) {
  std::string text = kGood;
  text.replace(text.find("needs { region { role: DEREGISTERED } }"), 39, "");
  EXPECT_TRUE(Has(Check(text), "uses region DEREGISTERED not listed in needs"));

  text = kGood;
  text.replace(text.find("offending: \"r\""), 14, "offending: \"q\"");
  EXPECT_TRUE(Has(Check(text), "offending names 'q'"));

  text = kGood;
  text.replace(text.find("preferred: true"), 15, "} accept { layer: 1 etype: 1 code: 0");
  EXPECT_TRUE(Has(Check(text), "exactly one preferred"));
}

TEST_F(CaseCheckerTest, ReportsMalformedIdsAndMissingFields) {
  std::string text = kGood;
  text.replace(text.find("rfc5040/7.2/good"), 16, "rfc5040/7.3/Good");
  EXPECT_TRUE(Has(Check(text), "id must be rfc5040/7.2/<slug>"));
  std::vector<std::string> bad = Check("case { id: \"rfc5040/7.2/empty\" }");
  EXPECT_TRUE(Has(bad, "no title"));
  EXPECT_TRUE(Has(bad, "no level"));
  EXPECT_TRUE(Has(bad, "cites no requirement"));
  EXPECT_TRUE(Has(bad, "has no steps"));
  EXPECT_TRUE(Has(Check(""), "no cases"));
}

}  // namespace
}  // namespace rdmapct::conformance
