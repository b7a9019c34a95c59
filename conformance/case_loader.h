// Loading, validating and selecting conformance cases
// (conformance/cases/<doc>/<section>_<slug>.textproto, proto/case.proto).
//
// Loading parses every *.textproto under a directory with
// google::protobuf::TextFormat; a syntax error names file:line:column.
// ValidateCases checks what the schema cannot express: ids unique and
// well-formed ("<doc>/<section>/<slug>" matching the file's place), every
// cited requirement id in the catalog, cross-references inside a case
// (regions against `needs`, send labels, accept-sets with one preferred
// member). A broken case file is rejected before any target sees it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/catalog.h"
#include "proto/case.pb.h"
#include "reference/wire/profile.h"

namespace rdmapct::conformance {

struct LoadedCase {
  proto::Case proto;
  std::string file;      // label of the source, e.g. "rfc5040/7.2_write-errors.textproto"
  int line = 0;          // 1-based line of the `case {` in that file (0: unknown)
  std::string document;  // directory under cases/, e.g. "rfc5040"
  std::string section;   // file name up to the first '_', e.g. "7.2"
  // One value of a Case.sweep (the loader expands a swept case into one
  // LoadedCase per value): the swept case's own id, its parameter, this value.
  std::string sweep_case, sweep_parameter, sweep_value;

  const std::string& id() const { return proto.id(); }
  // "<file>:<line>" for messages.
  std::string where() const;
  // Whether the case applies to `profile` (an empty profile list: every one).
  bool AppliesTo(wire::Profile profile) const;
};

struct CaseLoad {
  std::vector<LoadedCase> cases;    // files in sorted path order, cases in file order
  std::vector<std::string> errors;  // "<file>:<line>:<col>: <message>"
  bool ok() const { return errors.empty(); }
};

// The case tree of rdmapct's data directory: DataDir()/conformance/cases.
std::filesystem::path DefaultCasesDir();

// Parses one case file. `label` names it in errors; `document` and `section`
// are what its place in the tree says (the id prefix "<document>/<section>/").
// A file without cases is an error. A case with a `sweep` becomes one case
// per value (id `<id><id_suffix>`, its steps patched, `{value}` replaced in
// the title and notes).
CaseLoad ParseCaseFile(std::string_view text, const std::string& label, const std::string& document,
                       const std::string& section);

// Every *.textproto under `dir` (recursively), each at cases/<doc>/<file>:
// a file deeper or shallower than that is an error. Does not validate.
CaseLoad LoadCaseFiles(const std::filesystem::path& dir = DefaultCasesDir());

// Everything wrong with a set of cases, one line each ("<file>:<line>: case
// <id>: <problem>"); empty when they are consistent.
std::vector<std::string> ValidateCases(const std::vector<LoadedCase>& cases, const Catalog& catalog);

// LoadCaseFiles, then ValidateCases against the default catalog.
CaseLoad LoadCases(const std::filesystem::path& dir = DefaultCasesDir());

// Case selection. Within each list any entry may match; the lists combine
// with AND; an empty list does not restrict.
struct CaseFilter {
  std::vector<std::string> ids;  // exact id or a glob ('*', '?', '[...]'); a swept case's own id selects every value
  std::vector<std::string> sections;   // "7.2" selects 7.2 and 7.2.x
  std::vector<std::string> documents;  // "rfc5040"
  std::vector<proto::Level> levels;
  std::vector<std::string> tags;
  std::optional<wire::Profile> profile;  // only cases that apply to it
};

bool MatchesFilter(const LoadedCase& c, const CaseFilter& filter);
std::vector<const LoadedCase*> SelectCases(const std::vector<LoadedCase>& cases, const CaseFilter& filter);

// "rfc5040/7.2/x" -> component 0 "rfc5040", 1 "7.2", 2 "x" ("" if absent).
std::string IdComponent(std::string_view id, int index);

proto::Profile ToProtoProfile(wire::Profile p);

}  // namespace rdmapct::conformance
