#include "conformance/case_loader.h"

#include <fnmatch.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace rdmapct::conformance {
namespace {

namespace fs = std::filesystem;
namespace pb = google::protobuf;
using proto::Case;

class CollectErrors : public pb::io::ErrorCollector {
 public:
  CollectErrors(std::vector<std::string>& out, std::string file) : out_(out), file_(std::move(file)) {}
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    out_.push_back(file_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message);
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
      visit(m, f, f->is_repeated() ? i : -1);
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
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
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

// Checks of one expectation that need more than the field walk.
void CheckExpect(const proto::Expect& e, const Case& c, std::vector<std::string>& bad) {
  if (e.has_terminate()) {
    const proto::TerminateMatcher& t = e.terminate();
    if (t.accept().empty()) bad.push_back("terminate expectation with an empty accept-set");
    if (std::string m = CheckPreferred(t.accept(), "Terminate"); !m.empty()) bad.push_back(m);
    for (const proto::TerminateCode& a : t.accept()) {
      if (a.tolerated() && (a.preferred() || t.accept_size() == 1)) {
        bad.push_back("a tolerated Terminate code cannot be the preferred one");
      }
    }
    if (std::string m = CheckPreferred(t.ddp_segment_length(), "DDP Segment Length"); !m.empty()) {
      bad.push_back(m);
    }
  }
  if (e.has_event() && e.event().has_solicited() && !c.needs().solicited_known()) {
    bad.push_back("event expectation checks SE without needs.solicited_known");
  }
  if (e.has_read_responses()) {
    const proto::ReadResponses& r = e.read_responses();
    if (r.first_request() == 0 || r.last_request() < r.first_request()) {
      bad.push_back("read_responses needs 1 <= first_request <= last_request");
    }
  }
  if (e.has_memory() && e.memory().length() == 0) bad.push_back("memory expectation of length 0");
  if (e.has_any_of()) {
    if (e.any_of().alternative().empty()) bad.push_back("any_of without alternatives");
    for (const proto::Expect& alt : e.any_of().alternative()) CheckExpect(alt, c, bad);
  }
}

// Everything wrong with the steps of one case.
void CheckSteps(const Case& c, std::vector<std::string>& bad) {
  std::set<int> needed;
  for (const proto::RegionNeed& n : c.needs().region()) needed.insert(n.role());
  std::set<std::string> labels;
  for (const proto::Step& step : c.step()) {
    if (step.has_send() && !step.send().label().empty() && !labels.insert(step.send().label()).second) {
      bad.push_back("send label '" + step.send().label() + "' defined twice");
    }
    if (step.has_target()) {
      if (step.target().command().empty()) bad.push_back("a target step without commands");
      for (const proto::Command& cmd : step.target().command()) {
        if (cmd.type() == proto::Command::TYPE_UNSPECIFIED) bad.push_back("a command without a type");
      }
    }
    if (step.action_case() == proto::Step::ACTION_NOT_SET) bad.push_back("a step without an action");
    if (step.has_expect()) CheckExpect(step.expect(), c, bad);
    Walk(step, [&](const pb::Message& m, const pb::FieldDescriptor* f, int i) {
      if (f->enum_type() == proto::Region_descriptor() && !needed.count(EnumField(m, f, i))) {
        bad.push_back("uses region " + proto::Region_Name(EnumField(m, f, i)) + " not listed in needs");
      }
      if (f->name() == "data_of" || f->name() == "offending") {
        const std::string label = StringField(m, f, i);
        if (!label.empty() && !labels.count(label)) {
          bad.push_back(f->name() + " names '" + label + "', not an earlier send label");
        }
      }
    });
  }
}

// Everything wrong with one case (empty when nothing is).
std::vector<std::string> CheckCase(const LoadedCase& lc, const Catalog& catalog) {
  const Case& c = lc.proto;
  std::vector<std::string> bad;
  const std::string prefix = lc.document + "/" + lc.section + "/";
  if (c.id().rfind(prefix, 0) != 0 || !IsSlug(c.id().substr(prefix.size()))) {
    bad.push_back("id must be " + prefix + "<slug> (lower case, digits, '-')");
  }
  if (c.title().empty()) bad.push_back("no title");
  if (c.level() == proto::LEVEL_UNSPECIFIED) bad.push_back("no level");
  if (c.requirement().empty()) bad.push_back("cites no requirement");
  if (c.step().empty()) bad.push_back("has no steps");
  CheckSteps(c, bad);
  // Requirement ids anywhere: the case's own and narrower per-expectation ones.
  Walk(c, [&](const pb::Message& m, const pb::FieldDescriptor* f, int i) {
    if (f->name() != "requirement" || f->type() != pb::FieldDescriptor::TYPE_STRING) return;
    const std::string id = StringField(m, f, i);
    if (!catalog.Contains(id)) bad.push_back("requirement " + id + " is not in the catalog");
  });
  return bad;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string LoadedCase::where() const { return line > 0 ? file + ":" + std::to_string(line) : file; }

bool LoadedCase::AppliesTo(wire::Profile profile) const {
  if (proto.profile().empty()) return true;
  const proto::Profile p = ToProtoProfile(profile);
  return std::any_of(proto.profile().begin(), proto.profile().end(), [&](int q) { return q == p; });
}

proto::Profile ToProtoProfile(wire::Profile p) {
  switch (p) {
    case wire::Profile::kRfc5040:
      return proto::RFC5040;
    case wire::Profile::kRfc7306:
      return proto::RFC7306;
    case wire::Profile::kCommit:
      return proto::COMMIT;
  }
  return proto::PROFILE_UNSPECIFIED;
}

fs::path DefaultCasesDir() { return DataDir() / "conformance" / "cases"; }

namespace {

void ReplaceValue(std::string& s, const std::string& value) {
  static constexpr std::string_view kPlaceholder = "{value}";
  for (std::size_t at = s.find(kPlaceholder); at != std::string::npos; at = s.find(kPlaceholder, at + value.size())) {
    s.replace(at, kPlaceholder.size(), value);
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One value of a sweep: the case with its id, title, notes and patched steps.
LoadedCase SweepPoint(const LoadedCase& base, const proto::Sweep& sweep, const proto::SweepValue& v,
                      std::vector<std::string>& errors) {
  LoadedCase one = base;
  one.sweep_case = base.id();
  one.sweep_parameter = sweep.parameter();
  one.sweep_value = v.value();
  one.proto.set_id(base.id() + (v.has_id_suffix() ? v.id_suffix() : "-" + Lower(v.value())));
  std::string title = v.title().empty() ? base.proto.title() : v.title();
  ReplaceValue(title, v.value());
  one.proto.set_title(title);
  for (const proto::StepPatch& p : v.patch()) {
    if (static_cast<int>(p.step()) >= one.proto.step_size()) {
      errors.push_back(base.where() + ": case " + base.id() + ": sweep value " + v.value() + " patches step " +
                       std::to_string(p.step()) + " of " + std::to_string(one.proto.step_size()));
      continue;
    }
    one.proto.mutable_step(static_cast<int>(p.step()))->MergeFrom(p.merge());
  }
  for (proto::Step& s : *one.proto.mutable_step()) ReplaceValue(*s.mutable_note(), v.value());
  ReplaceValue(*one.proto.mutable_notes(), v.value());
  return one;
}

// A case without a sweep as it is; a swept case as one case per value.
void Expand(LoadedCase lc, std::vector<LoadedCase>& out, std::vector<std::string>& errors) {
  if (!lc.proto.has_sweep()) {
    out.push_back(std::move(lc));
    return;
  }
  const proto::Sweep sweep = lc.proto.sweep();
  lc.proto.clear_sweep();
  if (sweep.value().empty() || sweep.parameter().empty()) {
    errors.push_back(lc.where() + ": case " + lc.id() + ": a sweep needs a parameter and at least one value");
  }
  for (const proto::SweepValue& v : sweep.value()) out.push_back(SweepPoint(lc, sweep, v, errors));
}

}  // namespace

CaseLoad ParseCaseFile(std::string_view text, const std::string& label, const std::string& document,
                       const std::string& section) {
  CaseLoad out;
  proto::CaseFile file;
  pb::TextFormat::Parser parser;
  CollectErrors errors(out.errors, label);
  parser.RecordErrorsTo(&errors);
  pb::TextFormat::ParseInfoTree locations;
  parser.WriteLocationsTo(&locations);
  if (!parser.ParseFromString(std::string(text), &file)) {
    if (out.errors.empty()) out.errors.push_back(label + ": does not parse");
    return out;
  }
  if (file.case_().empty()) out.errors.push_back(label + ": no cases");
  const pb::FieldDescriptor* case_field = proto::CaseFile::descriptor()->FindFieldByName("case");
  for (int i = 0; i < file.case__size(); ++i) {
    LoadedCase lc;
    lc.proto = std::move(*file.mutable_case_(i));
    lc.file = label;
    lc.line = locations.GetLocation(case_field, i).line + 1;
    lc.document = document;
    lc.section = section;
    Expand(std::move(lc), out.cases, out.errors);
  }
  return out;
}

CaseLoad LoadCaseFiles(const fs::path& dir) {
  CaseLoad out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    out.errors.push_back(dir.string() + ": not a directory of case files");
    return out;
  }
  // A case tree is two levels deep (<doc>/<section>_<slug>.textproto) and
  // has a directory named after a document: look no deeper, and say "not a
  // case tree" once otherwise, so that pointing --cases-dir at /tmp or $HOME
  // neither walks the whole tree nor lists every stray file in it.
  static constexpr std::string_view kDocuments[] = {"rfc5040", "rfc7306", "commit", "rfc5041", "rfc5044", "rfc6581"};
  std::vector<fs::path> files, in_docs;
  bool has_document = false;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && e.path().extension() == ".textproto") files.push_back(e.path());
    if (!e.is_directory(ec) || e.is_symlink(ec)) continue;
    const std::string name = e.path().filename().string();
    std::vector<fs::path> here;
    std::error_code inner;
    for (const fs::directory_entry& f : fs::directory_iterator(e.path(), inner)) {
      if (f.is_regular_file(inner) && f.path().extension() == ".textproto") here.push_back(f.path());
    }
    has_document |=
        !here.empty() && std::find(std::begin(kDocuments), std::end(kDocuments), name) != std::end(kDocuments);
    in_docs.insert(in_docs.end(), here.begin(), here.end());
  }
  if (!has_document) {
    out.errors.push_back(dir.string() +
                         ": not a case tree (no <doc>/<section>_<slug>.textproto case files, "
                         "<doc> being rfc5040, rfc7306, commit, rfc5041, rfc5044 or rfc6581)");
    return out;
  }
  files.insert(files.end(), in_docs.begin(), in_docs.end());
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) {
    const fs::path rel = p.lexically_relative(dir);
    if (std::distance(rel.begin(), rel.end()) != 2) {
      out.errors.push_back(rel.string() + ": case files live at <cases>/<doc>/<section>_<slug>.textproto");
      continue;
    }
    const std::string stem = p.stem().string();
    CaseLoad one = ParseCaseFile(ReadAll(p), rel.string(), rel.begin()->string(), stem.substr(0, stem.find('_')));
    for (LoadedCase& c : one.cases) out.cases.push_back(std::move(c));
    for (std::string& e : one.errors) out.errors.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> ValidateCases(const std::vector<LoadedCase>& cases, const Catalog& catalog) {
  std::vector<std::string> bad;
  std::map<std::string, std::string> seen;  // id -> where it was defined first
  for (const LoadedCase& c : cases) {
    const std::string where = c.where() + ": case " + c.id() + ": ";
    auto [it, inserted] = seen.emplace(c.id(), c.file);
    if (!inserted) bad.push_back(where + "duplicate case id " + c.id() + " (first in " + it->second + ")");
    for (const std::string& e : CheckCase(c, catalog)) bad.push_back(where + e);
  }
  return bad;
}

CaseLoad LoadCases(const fs::path& dir) {
  CaseLoad out = LoadCaseFiles(dir);
  const CatalogLoad catalog = Catalog::LoadDefault();
  if (!catalog.ok()) {
    out.errors.push_back(catalog.error.Describe());
    return out;
  }
  for (std::string& e : ValidateCases(out.cases, *catalog.catalog)) out.errors.push_back(std::move(e));
  return out;
}

std::string IdComponent(std::string_view id, int index) {
  for (int i = 0; i < index; ++i) {
    const std::size_t slash = id.find('/');
    if (slash == std::string_view::npos) return {};
    id.remove_prefix(slash + 1);
  }
  return std::string(id.substr(0, id.find('/')));
}

bool MatchesFilter(const LoadedCase& c, const CaseFilter& f) {
  auto any = [](const auto& list, auto pred) { return list.empty() || std::any_of(list.begin(), list.end(), pred); };
  const std::string section = IdComponent(c.id(), 1);
  return any(f.ids,
             [&](const std::string& g) {
               return g == c.id() || fnmatch(g.c_str(), c.id().c_str(), 0) == 0 ||
                      (!c.sweep_case.empty() &&
                       (g == c.sweep_case || fnmatch(g.c_str(), c.sweep_case.c_str(), 0) == 0));
             }) &&
         any(f.sections, [&](const std::string& s) { return section == s || section.rfind(s + ".", 0) == 0; }) &&
         any(f.documents, [&](const std::string& d) { return IdComponent(c.id(), 0) == d; }) &&
         any(f.levels, [&](proto::Level l) { return c.proto.level() == l; }) &&
         any(f.tags,
             [&](const std::string& t) {
               return std::find(c.proto.tag().begin(), c.proto.tag().end(), t) != c.proto.tag().end();
             }) &&
         (!f.profile || c.AppliesTo(*f.profile));
}

std::vector<const LoadedCase*> SelectCases(const std::vector<LoadedCase>& cases, const CaseFilter& filter) {
  std::vector<const LoadedCase*> out;
  for (const LoadedCase& c : cases) {
    if (MatchesFilter(c, filter)) out.push_back(&c);
  }
  return out;
}

}  // namespace rdmapct::conformance
