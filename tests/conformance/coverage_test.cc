// Requirement coverage on a small hand-built catalog and case set: which
// rows count, which cases cite them (case-level and per-expectation ids),
// reasons for rows not checkable on the wire, and every input problem.
#include "conformance/coverage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rdmapct::conformance {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;
using testing::Not;

Catalog SmallCatalog() {
  const std::string rows =
      // MUST-class rows (MUST, MUST NOT, REQUIRED) of two documents.
      "R5040-7.2-01\tRFC5040\t7.2\tMUST\tdata sink\tyes\taccess-rights\tWrite to RO is terminated.\t\n"
      "R5040-7.2-02\tRFC5040\t7.2\tMUST NOT\tdata sink\tyes\tddp-tagged\tNothing placed.\t\n"
      "R5040-7.2-03\tRFC5040\t7.2\tMUST\tdata sink\tpartial\tcompletion\tCompletion error surfaced.\t\n"
      "R5040-7.2-04\tRFC5040\t7.2\tMUST\tRNIC\tno\tinternal\tInternal state.\t\n"
      "R5040-7.2-05\tRFC5040\t7.2\tMUST\tdata sink\tyes\tordering\tNot yet checked.\t\n"
      "R5044-5.1-01\tRFC5044\t5.1\tREQUIRED\tsender\tyes\tmpa-framing\tFPDU framing.\t\n"
      // SHOULD-class rows: SHOULD, lower-case must, informative appendix MUST.
      "R5040-4.8-05\tRFC5040\t4.8\tSHOULD\tlocal peer\tyes\tterminate-codes\tM bit set.\t\n"
      "R5040-4.8-06\tRFC5040\t4.8\tmust (lc)\tlocal peer\tyes\tterminate-codes\tlower case.\t\n"
      "R5044-A.4-01\tRFC5044\tA.4\tMUST\tsender\tyes\tmpa-framing\t(Informative appendix) text.\t\n"
      // Not tabled: MAY, may (lc), DESC, TABLE.
      "R5040-4.8-07\tRFC5040\t4.8\tMAY\tlocal peer\tyes\tterminate-codes\tMay do.\t\n"
      "R5040-4.8-08\tRFC5040\t4.8\tmay (lc)\tlocal peer\tyes\tterminate-codes\tmay do.\t\n"
      "R5040-4.8-09\tRFC5040\t4.8\tDESC\tlocal peer\tyes\theader-format\tLayout.\t\n";
  CatalogLoad load = Catalog::Parse(std::string(Catalog::kHeader) + "\n" + rows, "small.tsv");
  EXPECT_TRUE(load.ok()) << load.error.Describe();
  return *load.catalog;
}

LoadedCase MakeCase(const std::string& text) {
  CaseLoad load = ParseCaseFile(text, "mem.textproto", "rfc5040", "7.2");
  EXPECT_TRUE(load.ok()) << (load.errors.empty() ? "" : load.errors[0]);
  EXPECT_EQ(load.cases.size(), 1u);
  return load.cases.at(0);
}

std::vector<LoadedCase> SmallCases() {
  return {
      MakeCase(R"pb(case {
        id: "rfc5040/7.2/write-ro" title: "t" level: MUST
        requirement: "R5040-7.2-01"
        requirement: "R5040-4.8-06"
        step { expect { requirement: "R5040-7.2-02" nothing {} } }
        step { expect { any_of { alternative { requirement: "R5044-5.1-01" nothing {} } } } }
      })pb"),
      MakeCase(R"pb(case {
        id: "rfc5040/7.2/write-ro-again" title: "t" level: MUST
        requirement: "R5040-7.2-01"
        requirement: "R5040-9.9-99"
        step { pause { ms: 1 } }
      })pb"),
  };
}

const CoverageRow* Row(const Coverage& cov, const std::string& id) {
  for (const CoverageRow& r : cov.rows) {
    if (r.requirement->id == id) return &r;
  }
  return nullptr;
}

TEST(CoverageTest, CitedRequirementsIncludeEveryExpectation) {
  const std::vector<LoadedCase> cases = SmallCases();
  EXPECT_THAT(CitedRequirements(cases[0].proto),
              ElementsAre("R5040-7.2-01", "R5040-4.8-06", "R5040-7.2-02", "R5044-5.1-01"));
}

TEST(CoverageTest, ClassesFollowTheGrade) {
  const Catalog catalog = SmallCatalog();
  CoverageClass cls;
  ASSERT_TRUE(CoverageClassOf(*catalog.Find("R5044-5.1-01"), cls));  // REQUIRED
  EXPECT_EQ(cls, CoverageClass::kMust);
  ASSERT_TRUE(CoverageClassOf(*catalog.Find("R5040-7.2-02"), cls));  // MUST NOT
  EXPECT_EQ(cls, CoverageClass::kMust);
  ASSERT_TRUE(CoverageClassOf(*catalog.Find("R5040-4.8-06"), cls));  // must (lc): graded as a warning
  EXPECT_EQ(cls, CoverageClass::kShould);
  ASSERT_TRUE(CoverageClassOf(*catalog.Find("R5044-A.4-01"), cls));  // informative appendix MUST
  EXPECT_EQ(cls, CoverageClass::kShould);
  EXPECT_FALSE(CoverageClassOf(*catalog.Find("R5040-4.8-07"), cls));  // MAY
  EXPECT_FALSE(CoverageClassOf(*catalog.Find("R5040-4.8-08"), cls));  // may (lc)
  EXPECT_FALSE(CoverageClassOf(*catalog.Find("R5040-4.8-09"), cls));  // DESC
}

TEST(CoverageTest, StatusOfEveryRow) {
  const Catalog catalog = SmallCatalog();
  const Coverage cov = ComputeCoverage(catalog, SmallCases(), {{"R5040-7.2-03", "needs a DUT-side agent"}});
  ASSERT_EQ(cov.rows.size(), 9u);  // MAY / may (lc) / DESC rows are not tabled
  EXPECT_EQ(Row(cov, "R5040-7.2-01")->status, CoverageStatus::kCovered);
  EXPECT_THAT(Row(cov, "R5040-7.2-01")->cases, ElementsAre("rfc5040/7.2/write-ro", "rfc5040/7.2/write-ro-again"));
  EXPECT_EQ(Row(cov, "R5040-7.2-02")->status, CoverageStatus::kCovered);  // cited by an expectation only
  EXPECT_EQ(Row(cov, "R5044-5.1-01")->status, CoverageStatus::kCovered);  // inside any_of
  EXPECT_EQ(Row(cov, "R5040-7.2-03")->status, CoverageStatus::kReasoned);
  EXPECT_EQ(Row(cov, "R5040-7.2-03")->reason, "needs a DUT-side agent");
  EXPECT_EQ(Row(cov, "R5040-7.2-04")->status, CoverageStatus::kNotObservable);
  EXPECT_EQ(Row(cov, "R5040-7.2-05")->status, CoverageStatus::kUncovered);
  EXPECT_EQ(Row(cov, "R5040-4.8-05")->status, CoverageStatus::kUncovered);
  EXPECT_EQ(Row(cov, "R5040-4.8-05")->cls, CoverageClass::kShould);
  EXPECT_EQ(Row(cov, "R5040-4.8-07"), nullptr);

  const CoverageCounts must = cov.Count(CoverageClass::kMust);
  EXPECT_EQ(must.rows, 6u);
  EXPECT_EQ(must.covered, 3u);
  EXPECT_EQ(must.reasoned, 1u);
  EXPECT_EQ(must.not_observable, 1u);
  EXPECT_EQ(must.uncovered, 1u);
  EXPECT_EQ(cov.Count(CoverageClass::kMust, "RFC5044").covered, 1u);
  EXPECT_EQ(cov.Count(CoverageClass::kShould).rows, 3u);
  EXPECT_EQ(cov.Count(CoverageClass::kShould).covered, 1u);
  EXPECT_THAT(cov.Documents(), ElementsAre("RFC5040", "RFC5044"));
  // The case citing an unknown id is a problem of the inputs.
  EXPECT_THAT(cov.problems,
              ElementsAre("case rfc5040/7.2/write-ro-again cites R5040-9.9-99, which is not in the catalog"));
}

TEST(CoverageTest, StaleAndUnknownReasonsAreProblems) {
  const Catalog catalog = SmallCatalog();
  const Coverage cov = ComputeCoverage(catalog, {SmallCases()[0]},
                                       {{"R5040-7.2-01", "covered anyway"}, {"R5040-1.1-77", "no such row"}});
  EXPECT_THAT(cov.problems,
              ElementsAre("reason given for R5040-1.1-77, which is not in the catalog",
                          "reason given for R5040-7.2-01, which case rfc5040/7.2/write-ro covers: remove it from "
                          "the reasons file"));
  EXPECT_EQ(Row(cov, "R5040-7.2-01")->status, CoverageStatus::kCovered);
}

TEST(CoverageTest, ReasonsFileParsing) {
  const ReasonsLoad ok = ParseReasons("# comment\n\nR5040-7.2-03\tneeds an agent \r\n  \nR5040-7.2-04\tx", "r.tsv");
  EXPECT_TRUE(ok.ok());
  ASSERT_EQ(ok.reasons.size(), 2u);
  EXPECT_EQ(ok.reasons.at("R5040-7.2-03"), "needs an agent");
  EXPECT_EQ(ok.reasons.at("R5040-7.2-04"), "x");
  const ReasonsLoad bad = ParseReasons("R5040-7.2-03 no tab\nR5040-7.2-04\t\nR1\ta\nR1\tb\n", "r.tsv");
  EXPECT_THAT(bad.errors, ElementsAre("r.tsv:1: expected 'id<TAB>reason'", "r.tsv:2: expected 'id<TAB>reason'",
                                      "r.tsv:4: duplicate id R1"));
  const ReasonsLoad missing = LoadReasons("/nonexistent/reasons.tsv");
  EXPECT_THAT(missing.errors, ElementsAre("/nonexistent/reasons.tsv: cannot read"));
}

TEST(CoverageTest, TextTable) {
  const Catalog catalog = SmallCatalog();
  const Coverage cov = ComputeCoverage(catalog, SmallCases(), {{"R5040-7.2-03", "needs a DUT-side agent"}});
  const std::string text = RenderCoverageText(cov);
  EXPECT_THAT(text, HasSubstr("\nRFC5040 MUST-level rows\n"));
  EXPECT_THAT(text, HasSubstr("  R5040-7.2-01         MUST        yes     covered        rfc5040/7.2/write-ro "
                              "rfc5040/7.2/write-ro-again\n"));
  EXPECT_THAT(text, HasSubstr("  R5040-7.2-03         MUST        partial reasoned       not checkable on the wire: "
                              "needs a DUT-side agent\n"));
  EXPECT_THAT(text,
              HasSubstr("  R5040-7.2-04         MUST        no      not-observable not wire-observable (catalog)\n"));
  EXPECT_THAT(text, HasSubstr("  R5040-7.2-05         MUST        yes     uncovered      -\n"));
  EXPECT_THAT(text, HasSubstr("  MUST        5 rows:    2 covered,    1 not checkable (reason),    1 not "
                              "wire-observable,    1 uncovered\n"));
  EXPECT_THAT(text, HasSubstr("Uncovered MUST-level rows:\n  R5040-7.2-05\n"));
  EXPECT_THAT(text, HasSubstr("problem: case rfc5040/7.2/write-ro-again cites R5040-9.9-99"));
  // Without covered rows, only the gaps.
  const std::string gaps = RenderCoverageText(cov, false);
  EXPECT_THAT(gaps, Not(HasSubstr("  R5040-7.2-01 ")));
  EXPECT_THAT(gaps, HasSubstr("  R5040-7.2-05 "));
}

TEST(CoverageTest, Json) {
  const Catalog catalog = SmallCatalog();
  const Coverage cov = ComputeCoverage(catalog, SmallCases(), {{"R5040-7.2-03", "needs a DUT-side agent"}});
  const nlohmann::json j = nlohmann::json::parse(RenderCoverageJson(cov));
  EXPECT_EQ(j["schema"], "rdmapct-coverage");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["summary"]["must"]["rows"], 6);
  EXPECT_EQ(j["summary"]["must"]["uncovered"], 1);
  EXPECT_EQ(j["summary"]["documents"][1]["doc"], "RFC5044");
  ASSERT_EQ(j["rows"].size(), 9u);
  EXPECT_EQ(j["rows"][0]["id"], "R5040-7.2-01");
  EXPECT_EQ(j["rows"][0]["class"], "MUST");
  EXPECT_EQ(j["rows"][0]["status"], "covered");
  EXPECT_EQ(j["rows"][0]["cases"].size(), 2u);
  EXPECT_EQ(j["rows"][2]["status"], "reasoned");
  EXPECT_EQ(j["rows"][2]["reason"], "needs a DUT-side agent");
  EXPECT_EQ(j["rows"][2]["wire_observable"], "partial");
  EXPECT_EQ(j["problems"].size(), 1u);
}

}  // namespace
}  // namespace rdmapct::conformance
