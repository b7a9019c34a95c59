// Meta-test of the case files: every conformance/cases/**/*.textproto parses
// as an rdmapct.proto.CaseFile, case ids are unique and well-formed, every
// cited requirement id exists in the catalog, and the cross-references inside
// a case (regions against `needs`, send labels) hold. A broken case file
// fails here, before any runner sees it.
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "conformance/catalog.h"
#include "proto/case.pb.h"

namespace rdmapct::conformance {
namespace {

namespace fs = std::filesystem;
namespace pb = google::protobuf;
using rdmapct::proto::Case;
using rdmapct::proto::CaseFile;

class CollectErrors : public pb::io::ErrorCollector {
 public:
  explicit CollectErrors(std::vector<std::string>& out, std::string file)
      : out_(out), file_(std::move(file)) {}
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    out_.push_back(file_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) +
                   ": " + message);
  }

 private:
  std::vector<std::string>& out_;
  std::string file_;
};

// Calls `visit` for every set field of `m` and of its sub-messages, depth
// first, in field order.
using Visitor = std::function<void(const pb::Message&, const pb::FieldDescriptor*, int index)>;
void Walk(const pb::Message& m, const Visitor& visit) {
  const pb::Reflection* refl = m.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  refl->ListFields(m, &fields);
  for (const pb::FieldDescriptor* f : fields) {
    const int n = f->is_repeated() ? refl->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      const int index = f->is_repeated() ? i : -1;
      visit(m, f, index);
      if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
      Walk(f->is_repeated() ? refl->GetRepeatedMessage(m, f, i) : refl->GetMessage(m, f), visit);
    }
  }
}

std::string StringField(const pb::Message& m, const pb::FieldDescriptor* f, int index) {
  const pb::Reflection* refl = m.GetReflection();
  return index < 0 ? refl->GetString(m, f) : refl->GetRepeatedString(m, f, index);
}

int EnumField(const pb::Message& m, const pb::FieldDescriptor* f, int index) {
  const pb::Reflection* refl = m.GetReflection();
  return index < 0 ? refl->GetEnumValue(m, f) : refl->GetRepeatedEnumValue(m, f, index);
}

bool IsSlug(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// "rfc5040" + "7.2_read-request-errors" -> id prefix "rfc5040/7.2/".
std::string IdPrefix(const std::string& doc_dir, const std::string& file_stem) {
  return doc_dir + "/" + file_stem.substr(0, file_stem.find('_')) + "/";
}

// Accept-sets name at most one preferred member, and exactly one when they
// have several (so reports can say what the RFC's natural choice is).
template <class Repeated>
std::string CheckPreferred(const Repeated& set, const char* what) {
  int preferred = 0;
  for (const auto& e : set) preferred += e.preferred() ? 1 : 0;
  if (preferred > 1 || (set.size() > 1 && preferred != 1)) {
    return std::string(what) + " accept-set needs exactly one preferred member";
  }
  return {};
}

// Everything that is wrong with one case (empty when nothing is).
std::vector<std::string> CheckCase(const Case& c, const std::string& id_prefix,
                                   const Catalog& catalog) {
  std::vector<std::string> bad;
  const std::string where = "case " + c.id() + ": ";
  if (c.id().rfind(id_prefix, 0) != 0 || !IsSlug(c.id().substr(id_prefix.size()))) {
    bad.push_back(where + "id must be " + id_prefix + "<slug> (lower case, digits, '-')");
  }
  if (c.title().empty()) bad.push_back(where + "no title");
  if (c.level() == proto::LEVEL_UNSPECIFIED) bad.push_back(where + "no level");
  if (c.requirement().empty()) bad.push_back(where + "cites no requirement");
  if (c.step().empty()) bad.push_back(where + "has no steps");

  std::set<int> needed;
  for (const proto::RegionNeed& n : c.needs().region()) needed.insert(n.role());
  std::set<std::string> labels;
  for (const proto::Step& step : c.step()) {
    if (step.has_send() && !step.send().label().empty()) {
      if (!labels.insert(step.send().label()).second) {
        bad.push_back(where + "send label '" + step.send().label() + "' defined twice");
      }
    }
    if (step.has_target()) bad.push_back(where + "target actions are not defined in convention 1.0");
    Walk(step, [&](const pb::Message& m, const pb::FieldDescriptor* f, int i) {
      if (f->enum_type() == proto::Region_descriptor() && !needed.count(EnumField(m, f, i))) {
        bad.push_back(where + "uses region " + proto::Region_Name(EnumField(m, f, i)) +
                      " not listed in needs");
      }
      if (f->name() == "data_of" || f->name() == "offending") {
        const std::string label = StringField(m, f, i);
        if (!label.empty() && !labels.count(label)) {
          bad.push_back(where + f->name() + " names '" + label + "', not an earlier send label");
        }
      }
      if (m.GetDescriptor() == proto::TerminateMatcher::descriptor() && f->name() == "accept" &&
          i == 0) {
        const auto& t = static_cast<const proto::TerminateMatcher&>(m);
        if (std::string e = CheckPreferred(t.accept(), "Terminate"); !e.empty()) bad.push_back(where + e);
        if (std::string e = CheckPreferred(t.ddp_segment_length(), "DDP Segment Length"); !e.empty()) {
          bad.push_back(where + e);
        }
      }
    });
    if (step.has_expect() && step.expect().has_terminate() && step.expect().terminate().accept().empty()) {
      bad.push_back(where + "terminate expectation with an empty accept-set");
    }
  }
  // Requirement ids anywhere: the case's own and narrower per-expectation ones.
  Walk(c, [&](const pb::Message& m, const pb::FieldDescriptor* f, int i) {
    if (f->name() != "requirement" || f->type() != pb::FieldDescriptor::TYPE_STRING) return;
    const std::string id = StringField(m, f, i);
    if (!catalog.Contains(id)) bad.push_back(where + "requirement " + id + " is not in the catalog");
  });
  return bad;
}

// Parses one file and checks its cases; `seen` maps case ids to the file
// that defined them first.
std::vector<std::string> CheckCaseFile(const std::string& label, const std::string& text,
                                       const std::string& doc_dir, const std::string& file_stem,
                                       const Catalog& catalog,
                                       std::map<std::string, std::string>& seen) {
  std::vector<std::string> bad;
  CaseFile file;
  pb::TextFormat::Parser parser;
  CollectErrors errors(bad, label);
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &file)) {
    if (bad.empty()) bad.push_back(label + ": does not parse");
    return bad;
  }
  if (file.case_().empty()) bad.push_back(label + ": no cases");
  for (const Case& c : file.case_()) {
    auto [it, inserted] = seen.emplace(c.id(), label);
    if (!inserted) bad.push_back(label + ": duplicate case id " + c.id() + " (first in " + it->second + ")");
    for (std::string& e : CheckCase(c, IdPrefix(doc_dir, file_stem), catalog)) {
      bad.push_back(label + ": " + e);
    }
  }
  return bad;
}

const Catalog& TheCatalog() {
  static const CatalogLoad load = Catalog::LoadDefault();
  EXPECT_TRUE(load.ok()) << load.error.Describe();
  return *load.catalog;
}

std::vector<fs::path> CaseFiles() {
  std::vector<fs::path> files;
  const fs::path root = RepositoryDir() / "conformance" / "cases";
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().extension() == ".textproto") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CaseSchemaTest, EveryCaseFileParsesAndIsConsistent) {
  const std::vector<fs::path> files = CaseFiles();
  ASSERT_FALSE(files.empty()) << "no case files under conformance/cases";
  std::map<std::string, std::string> seen;
  for (const fs::path& p : files) {
    const fs::path rel = p.lexically_relative(RepositoryDir() / "conformance" / "cases");
    ASSERT_EQ(std::distance(rel.begin(), rel.end()), 2) << rel << ": cases/<doc>/<file>";
    for (const std::string& e : CheckCaseFile(rel.string(), ReadAll(p), rel.begin()->string(),
                                              p.stem().string(), TheCatalog(), seen)) {
      ADD_FAILURE() << e;
    }
  }
  EXPECT_GE(seen.size(), 3u);
}

// The checker itself must catch what it promises to catch.
class CaseCheckerTest : public ::testing::Test {
 protected:
  std::vector<std::string> Check(const std::string& text) {
    return CheckCaseFile("x.textproto", text, "rfc5040", "7.2_x", TheCatalog(), seen_);
  }
  static bool Has(const std::vector<std::string>& v, const std::string& part) {
    return std::any_of(v.begin(), v.end(),
                       [&](const std::string& s) { return s.find(part) != std::string::npos; });
  }
  std::map<std::string, std::string> seen_;
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
  text.replace(text.find("preferred: true"), 15,
               "} accept { layer: 1 etype: 1 code: 0");
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
