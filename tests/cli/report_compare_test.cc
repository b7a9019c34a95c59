// `rdmapct report compare` end to end: two real conform runs of one case
// (the reference, then the reference with a fault that breaks the rule the
// case checks), compared in both orders.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace rdmapct::cli {
namespace {

namespace fs = std::filesystem;
using test_util::Quote;
using test_util::ReadFile;
using test_util::RunRdmapctIn;
using testing::HasSubstr;

TEST(ReportCompareCli, NamesTheRegressionAndWritesTheMatrix) {
  const fs::path dir = fs::temp_directory_path() / ("rdmapct_report_compare_test." + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string one = " --case rfc5040/7.2/write-to-read-only-region --json ";
  const fs::path good = dir / "good.json", bad = dir / "bad.json", html = dir / "matrix.html";
  ASSERT_EQ(RunRdmapctIn("conform" + one + Quote(good.string()), dir).status, 0);
  ASSERT_EQ(RunRdmapctIn("conform --fault skip-access-rights-check" + one + Quote(bad.string()), dir).status, 1);

  const test_util::Outcome worse = RunRdmapctIn(
      "report compare " + Quote(good.string()) + " " + Quote(bad.string()) + " --html " + Quote(html.string()), dir);
  EXPECT_EQ(worse.status, 1) << worse.out << worse.err;
  EXPECT_THAT(worse.out, HasSubstr("#1 -> #2: 1 change(s), 1 regression(s)\n"));
  EXPECT_THAT(worse.out, HasSubstr("  REGRESSED  rfc5040/7.2/write-to-read-only-region  pass -> fail\n"));
  EXPECT_THAT(ReadFile(html),
              HasSubstr("<code>rfc5040/7.2/write-to-read-only-region</code> <strong>(differs)</strong>"));

  const test_util::Outcome better =
      RunRdmapctIn("report compare " + Quote(bad.string()) + " " + Quote(good.string()), dir);
  EXPECT_EQ(better.status, 0) << better.out << better.err;
  EXPECT_THAT(better.out, HasSubstr("  changed    rfc5040/7.2/write-to-read-only-region  fail -> pass\n"));

  const test_util::Outcome one_file = RunRdmapctIn("report compare " + Quote(good.string()), dir);
  EXPECT_EQ(one_file.status, 2);
  const fs::path junk = dir / "junk.json";
  std::ofstream(junk) << "{}";
  const test_util::Outcome not_report =
      RunRdmapctIn("report compare " + Quote(good.string()) + " " + Quote(junk.string()), dir);
  EXPECT_EQ(not_report.status, 2);
  EXPECT_THAT(not_report.err, HasSubstr("not an rdmapct conform report"));
}

}  // namespace
}  // namespace rdmapct::cli
