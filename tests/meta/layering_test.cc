// The layer table of docs/architecture.md as data: every #include of the
// tree must point down (or within its own part), never up or sideways.
// Change the table here and in the document together; the test checks that
// the document's folders and these rows agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "tests/meta/source_scan.h"

namespace rdmapct::meta {
namespace {

struct Part {
  std::string_view name;
  // Paths that belong to it (a folder ending in '/', or the start of a file
  // name); the longest matching prefix of any part wins.
  std::vector<std::string_view> prefixes;
  std::vector<std::string_view> may_use;  // besides itself
  bool in_doc_table = false;              // a row of docs/architecture.md's table
};

// Rows above `targets` may use these three parts of it.
#define TARGETS "targets", "target-uri", "plugin-abi"
#define LIBRARIES "wire", "model", TARGETS, "capture", "proto", "conformance", "fuzz", "replay"

const std::vector<Part>& Table() {
  static const std::vector<Part> kTable = {
      {"wire", {"reference/wire/"}, {}, true},
      {"model", {"reference/model/"}, {"wire"}, true},
      // targets/: transports and the reference target; inside it, the
      // connector factory (target URIs: it loads plugins and dials TCP) sits
      // on top, the plugin C ABI at the bottom, and the example plugin and
      // the verbs agent beside the rest.
      {"targets", {"targets/"}, {"wire", "model", "plugin-abi"}, true},
      {"target-uri", {"targets/target_uri."}, {"wire", "model", "targets", "plugin-abi"}},
      {"plugin-abi", {"targets/plugin/rdmapct_target_plugin.h"}, {}},
      {"plugin", {"targets/plugin/"}, {"wire", "model", "targets", "plugin-abi"}},
      {"agent", {"targets/agent/"}, {"wire"}},
      {"capture", {"capture/"}, {"wire"}, true},
      // Schemas, and proto/message_type.h tying their enums to wire::Opcode.
      {"proto", {"proto/"}, {"wire"}},
      {"conformance", {"conformance/"}, {"wire", "model", TARGETS, "capture", "proto"}, true},
      {"fuzz", {"fuzz/"}, {"wire", "model", TARGETS, "proto"}, true},
      // The harnesses may use the fuzz library, and the capture harnesses
      // (fuzz_pcap_reader, fuzz_tcp_reassembly) the capture layer.
      {"fuzz-harness", {"fuzz/fuzz_"}, {"wire", "model", TARGETS, "proto", "fuzz", "capture"}},
      {"replay", {"replay/"}, {"wire", "model", TARGETS, "capture"}, true},
      {"cli", {"cli/"}, {LIBRARIES}, true},
      // Drivers outside the table: developer tools and benchmarks use the
      // libraries; tests may use anything.
      {"tools", {"tools/"}, {LIBRARIES}},
      {"bench", {"bench/"}, {LIBRARIES}},
      {"tests", {"tests/"}, {LIBRARIES, "plugin", "agent", "fuzz-harness", "cli", "tools"}},
  };
  return kTable;
}

#undef LIBRARIES
#undef TARGETS

// System headers the two pure layers may not include: the model does no I/O,
// reads no clock and starts no thread; the wire codecs use the C++ standard
// library only (docs/architecture.md).
const std::vector<std::string_view> kImpureHeaders = {"thread",   "mutex",    "shared_mutex", "condition_variable",
                                                      "future",   "atomic",   "chrono",       "ctime",
                                                      "random",   "fstream",  "iostream",     "filesystem",
                                                      "sys/",     "unistd.h", "netinet/",     "arpa/",
                                                      "netdb.h",  "poll.h",   "fcntl.h",      "dlfcn.h",
                                                      "signal.h", "pcap",     "fmt/",         "nlohmann/",
                                                      "google/",  "CLI/",     "gtest/",       "gmock/"};

const Part* PartOf(std::string_view path) {
  const Part* best = nullptr;
  std::size_t best_length = 0;
  for (const Part& part : Table()) {
    for (std::string_view prefix : part.prefixes) {
      if (path.starts_with(prefix) && prefix.size() > best_length) {
        best = &part;
        best_length = prefix.size();
      }
    }
  }
  return best;
}

bool MayUse(const Part& from, const Part& to) {
  return from.name == to.name || std::find(from.may_use.begin(), from.may_use.end(), to.name) != from.may_use.end();
}

std::string Join(const std::vector<std::string_view>& names) {
  std::string s;
  for (std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s.empty() ? "nothing else" : s;
}

// The problem with `file` including `inc`, or nothing. `exists` tells whether
// a path names a file of the tree.
template <typename Exists>
std::optional<std::string> CheckInclude(const std::string& file, const Include& inc, Exists exists) {
  const std::string where = file + ":" + std::to_string(inc.line) + ": ";
  const Part* from = PartOf(file);
  if (from == nullptr) return where + "the file belongs to no row of the layer table (tests/meta/layering_test.cc)";
  if (!inc.quoted) {
    if (from->name != "wire" && from->name != "model") return std::nullopt;
    for (std::string_view banned : kImpureHeaders) {
      if (inc.path.starts_with(banned))
        return where + "<" + inc.path + ">: the " + std::string(from->name) +
               " layer does no I/O, reads no clock and starts no thread";
    }
    return std::nullopt;
  }
  const bool generated = inc.path.starts_with("proto/") && inc.path.ends_with(".pb.h");
  if (!generated && !exists(inc.path)) {
    return where + "\"" + inc.path + "\" is not a path from the repository root";
  }
  const Part* to = PartOf(inc.path);
  if (to == nullptr || !MayUse(*from, *to)) {
    return where + "\"" + inc.path + "\" is in " + std::string(to ? to->name : "no layer") + ", but " +
           std::string(from->name) + " may use only " + Join(from->may_use);
  }
  return std::nullopt;
}

std::vector<std::string> TreeProblems() {
  const std::filesystem::path root = SourceRoot();
  const auto exists = [&](const std::string& p) { return std::filesystem::is_regular_file(root / p); };
  std::vector<std::string> problems;
  for (const std::string& file : ListSourceFiles(root, {".h", ".cc"})) {
    for (const Include& inc : ScanSource(ReadWholeFile(root / file)).includes) {
      if (auto p = CheckInclude(file, inc, exists)) problems.push_back(*p);
    }
  }
  return problems;
}

const auto kAll = [](const std::string&) { return true; };

TEST(Layering, EveryIncludePointsDown) {
  const std::vector<std::string> problems = TreeProblems();
  std::string all;
  for (const std::string& p : problems) all += p + "\n";
  EXPECT_TRUE(problems.empty()) << all;
}

TEST(Layering, TheTreeHasTheLayers) {
  // Guards against a scan that reads nothing and so finds nothing wrong.
  const auto files = ListSourceFiles(SourceRoot(), {".h", ".cc"});
  for (const Part& part : Table()) {
    if (part.name == "proto") continue;  // generated into the build tree
    const bool found =
        std::any_of(files.begin(), files.end(), [&](const std::string& f) { return PartOf(f) == &part; });
    EXPECT_TRUE(found) << part.name << " has no files: is RDMAPCT_SOURCE_DIR the checkout?";
  }
}

TEST(Layering, UpwardAndSidewaysIncludesFail) {
  const Include model_h{3, "reference/model/state.h", true};
  EXPECT_TRUE(CheckInclude("reference/wire/ddp.cc", model_h, kAll));  // up
  EXPECT_FALSE(CheckInclude("targets/tcp.cc", model_h, kAll));        // down
  const Include capture_h{4, "capture/pcap_writer.h", true};
  EXPECT_TRUE(CheckInclude("targets/tcp.cc", capture_h, kAll));          // sideways
  EXPECT_TRUE(CheckInclude("fuzz/session_oracle.cc", capture_h, kAll));  // only the harnesses
  EXPECT_FALSE(CheckInclude("fuzz/fuzz_pcap_reader.cc", capture_h, kAll));
  const Include conformance_h{5, "conformance/case_driver.h", true};
  EXPECT_TRUE(CheckInclude("fuzz/session_remote.cc", conformance_h, kAll));  // sideways
  EXPECT_FALSE(CheckInclude("cli/cli_conform.cc", conformance_h, kAll));
  const Include cli_h{6, "cli/cli_common.h", true};
  EXPECT_TRUE(CheckInclude("conformance/runner.cc", cli_h, kAll));  // up
  EXPECT_TRUE(CheckInclude("cli/cli_conform.cc", Include{7, "tests/cli/cli_test_util.h", true}, kAll));
}

TEST(Layering, InsideTargetsTheUriParserIsOnTop) {
  const Include uri{21, "targets/target_uri.h", true};
  const auto p = CheckInclude("targets/plugin/reference_plugin.cc", uri, kAll);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p,
            "targets/plugin/reference_plugin.cc:21: \"targets/target_uri.h\" is in target-uri, but plugin may "
            "use only wire, model, targets, plugin-abi");
  EXPECT_TRUE(CheckInclude("targets/tcp.cc", uri, kAll));
  EXPECT_FALSE(CheckInclude("conformance/runner.cc", uri, kAll));
  EXPECT_FALSE(CheckInclude("targets/target_uri.cc", Include{1, "targets/tcp.h", true}, kAll));
  EXPECT_TRUE(CheckInclude("targets/agent/convention.cc", Include{1, "reference/model/state.h", true}, kAll));
}

TEST(Layering, PathsAreFromTheRepositoryRoot) {
  const auto none = [](const std::string&) { return false; };
  EXPECT_TRUE(CheckInclude("reference/wire/ddp.cc", Include{2, "ddp.h", true}, none));
  EXPECT_FALSE(CheckInclude("conformance/runner.cc", Include{2, "proto/case.pb.h", true}, none));
  EXPECT_TRUE(CheckInclude("newlayer/x.cc", Include{2, "reference/wire/ddp.h", true}, kAll));
}

TEST(Layering, PureLayersIncludeNoClockThreadOrIo) {
  EXPECT_TRUE(CheckInclude("reference/model/state.cc", Include{2, "chrono", false}, kAll));
  EXPECT_TRUE(CheckInclude("reference/wire/ddp.cc", Include{2, "fmt/format.h", false}, kAll));
  EXPECT_TRUE(CheckInclude("reference/wire/ddp.cc", Include{2, "sys/socket.h", false}, kAll));
  EXPECT_FALSE(CheckInclude("reference/wire/ddp.cc", Include{2, "cstdint", false}, kAll));
  EXPECT_FALSE(CheckInclude("targets/tcp.cc", Include{2, "sys/socket.h", false}, kAll));
}

TEST(Layering, TheDocumentsTableHasTheseRows) {
  const std::string doc = ReadWholeFile(SourceRoot() / "docs/architecture.md");
  ASSERT_FALSE(doc.empty());
  // | layer | `folder/` | `library` | ... : the folder column of each row.
  static const std::regex kRow(R"re(\n\|[^|\n]*\| `([a-z/_]+/)` \|)re");
  std::vector<std::string> doc_folders;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), kRow); it != std::sregex_iterator(); ++it) {
    doc_folders.push_back((*it)[1].str());
  }
  std::vector<std::string> table_folders;
  for (const Part& part : Table()) {
    if (part.in_doc_table) table_folders.push_back(std::string(part.prefixes.front()));
  }
  std::sort(doc_folders.begin(), doc_folders.end());
  std::sort(table_folders.begin(), table_folders.end());
  EXPECT_EQ(doc_folders, table_folders);
}

}  // namespace
}  // namespace rdmapct::meta
