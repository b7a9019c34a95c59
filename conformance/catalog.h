// The requirement catalog (requirements.tsv): every normative statement of
// RFC 5040, 7306, 5041, 5044, 6581 and draft-talpey-rdma-commit-01 with a
// stable id. Cases cite these ids; the runner grades results by the level of
// the rows a check cites (decisions D-S3). The TSV is the single copy of the
// RFC paraphrases: code never repeats them.
//
// Where the file comes from (FindRequirementsFile):
//   1. $RDMAPCT_SPEC_DIR/requirements.tsv when RDMAPCT_SPEC_DIR is set
//      (an explicit choice: a missing file there is an error, no fallback);
//   2. DataDir()/conformance/requirements.tsv.
// No path of the source tree is compiled in: an installed or moved binary
// finds its data next to itself (DataDir).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rdmapct::conformance {

// The `level` column as written (decisions D-CONV): BCP 14 keywords, their
// lower-case-only forms "(lc)", and the DESC / TABLE pseudo-levels.
enum class Level : uint8_t {
  kMust,
  kMustNot,
  kRequired,
  kShould,
  kShouldNot,
  kRecommended,
  kMay,
  kOptional,
  kMustLc,
  kShouldLc,
  kMayLc,
  kRecommendedLc,
  kRequiredLc,
  kTable,
  kDesc,
};

enum class WireObservable : uint8_t { kYes, kPartial, kNo };

// How a failed check of a row is graded (decisions D-S3).
enum class Grade : uint8_t {
  kFail,       // MUST / MUST NOT / REQUIRED
  kWarn,       // SHOULD family, lower-case keywords, informative appendices
  kInfo,       // MAY / OPTIONAL: both behaviours are acceptable
  kGoverning,  // DESC / TABLE: the strength of the text that uses the row
};

std::optional<Level> ParseLevel(std::string_view text);
std::string_view LevelName(Level level);  // the spelling used in the TSV
std::optional<WireObservable> ParseWireObservable(std::string_view text);
std::string_view WireObservableName(WireObservable w);

struct Requirement {
  std::string id;       // "R5040-7.2-09a"
  std::string doc;      // "RFC5040", ..., "COMMIT"
  std::string section;  // "7.2"
  Level level;
  std::string actor;
  WireObservable wire_observable;
  std::string topic;
  std::string requirement;              // paraphrase of the normative text
  std::string expected_wire_behaviour;  // may be empty
  std::size_t line = 0;                 // 1-based line in the source file

  // Rows quoted from RFC 5044 appendices that are "NOT part of the standard".
  bool informative_appendix() const;
  Grade grade() const;
};

// A load failure names the file, the 1-based line (0: the file as a whole)
// and what is wrong, so a broken catalog edit is found at once.
struct CatalogError {
  std::string source;
  std::size_t line = 0;
  std::string message;

  std::string Describe() const;  // "<source>:<line>: <message>"
};

struct CatalogLoad;

class Catalog {
 public:
  // The exact header line every catalog file starts with.
  static constexpr std::string_view kHeader =
      "id\tdoc\tsection\tlevel\tactor\twire_observable\ttopic\trequirement\t"
      "expected_wire_behaviour";

  // Parses TSV text; `source` only names it in errors.
  static CatalogLoad Parse(std::string_view tsv, std::string source);
  static CatalogLoad Load(const std::filesystem::path& path);
  // Load(FindRequirementsFile()), with the lookup failure as an error.
  static CatalogLoad LoadDefault();

  const Requirement* Find(std::string_view id) const;
  bool Contains(std::string_view id) const { return Find(id) != nullptr; }
  const std::vector<Requirement>& rows() const { return rows_; }
  std::size_t size() const { return rows_.size(); }
  const std::string& source() const { return source_; }

 private:
  std::vector<Requirement> rows_;
  std::unordered_map<std::string, std::size_t> by_id_;  // id -> index in rows_
  std::string source_;
};

struct CatalogLoad {
  std::optional<Catalog> catalog;  // set on success
  CatalogError error;              // meaningful only when !catalog
  bool ok() const { return catalog.has_value(); }
};

// rdmapct's data directory, laid out like the repository (conformance/cases/,
// conformance/requirements.tsv, conformance/reasons/, docs/decisions.md):
//   1. $RDMAPCT_DATA_DIR when set (listed in `rdmapct --help`);
//   2. the nearest <dir>/share/rdmapct holding conformance/requirements.tsv,
//      <dir> being the executable's directory or one of its two parents:
//      <prefix>/share/rdmapct for an installed <prefix>/bin/rdmapct, and
//      build/share/rdmapct (a link to the source tree made by CMake) for
//      build/rdmapct and the test binaries under build/;
//   3. else <exe dir>/../share/rdmapct, which does not exist (errors name it).
inline constexpr const char* kDataDirVariable = "RDMAPCT_DATA_DIR";
std::filesystem::path DataDir();

// The tree the developer tests read (fault_matrix.tsv, coverage_todo.tsv):
// $RDMAPCT_SOURCE_DIR when set (CTest sets it), else DataDir().
std::filesystem::path RepositoryDir();

// The catalog file by the search order above; nullopt with `why` filled when
// RDMAPCT_SPEC_DIR names a directory without requirements.tsv or no
// candidate exists.
std::optional<std::filesystem::path> FindRequirementsFile(std::string* why = nullptr);

}  // namespace rdmapct::conformance
