// Issue 18 ("delivered like real software"): the conventional CLI (version,
// help, man page, bash completion, one error style, exit statuses in --help)
// and the small inconsistencies, each pinned by a test that fails without
// its fix. Runs the built rdmapct binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"

namespace rdmapct::cli {
namespace {

namespace fs = std::filesystem;
using test_util::Outcome;
using test_util::Quote;
using test_util::ReadFile;
using test_util::SourceDir;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

Outcome Rdmapct(const std::string& args, const fs::path& cwd = SourceDir()) {
  return test_util::RunRdmapctIn(args, cwd);
}

fs::path TempRoot() { return fs::path(::testing::TempDir()) / ("rdmapct_delivery_test." + std::to_string(::getpid())); }

fs::path Fresh(const std::string& name) {
  const fs::path dir = TempRoot() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The scratch directories go when the test process ends.
class RemoveTempRoot : public ::testing::Environment {
 public:
  void TearDown() override { fs::remove_all(TempRoot()); }
};
[[maybe_unused]] ::testing::Environment* const kRemoveTempRoot =
    ::testing::AddGlobalTestEnvironment(new RemoveTempRoot);

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// ---- version and help --------------------------------------------------------------

TEST(DeliveryCli, VersionFlagAndCommandExit0) {
  for (const char* args : {"--version", "version"}) {
    const Outcome r = Rdmapct(args);
    EXPECT_EQ(r.status, 0) << args;
    EXPECT_THAT(r.out, testing::MatchesRegex("rdmapct [0-9]+\\.[0-9]+\\.[0-9]+\n")) << args;
    EXPECT_EQ(r.err, "") << args;
  }
}

TEST(DeliveryCli, HelpCommandPrintsHelpAndExits0) {
  const Outcome top = Rdmapct("help");
  EXPECT_EQ(top.status, 0);
  EXPECT_THAT(top.out, HasSubstr("conform"));
  // The overrides of the data directory and the exit statuses are in --help.
  EXPECT_THAT(top.out, HasSubstr("RDMAPCT_DATA_DIR"));
  EXPECT_THAT(top.out, HasSubstr("Exit status"));
  EXPECT_EQ(Rdmapct("--help").out, top.out);
  const Outcome conform = Rdmapct("help conform");
  EXPECT_EQ(conform.status, 0);
  EXPECT_THAT(conform.out, HasSubstr("--profile"));
  EXPECT_EQ(Rdmapct("help fuzz repro").status, 0);
  const Outcome bad = Rdmapct("help no-such-command");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "rdmapct help: error: no command \"no-such-command\" (see rdmapct --help)\n");
}

TEST(DeliveryCli, EveryCommandDocumentsItsExitStatus) {
  for (const char* c : {"decode", "replay", "conform", "serve", "load", "fuzz", "fuzz campaign", "report compare"}) {
    const Outcome r = Rdmapct(std::string(c) + " --help");
    EXPECT_EQ(r.status, 0) << c;
    EXPECT_THAT(r.out, HasSubstr("Exit status")) << c;
  }
}

// The man page and the completion script the build generated are those of
// the binary's own CLI definitions.
TEST(DeliveryCli, ManPageIsGeneratedFromTheCliDefinitions) {
  const Outcome man = Rdmapct("help --man");
  EXPECT_EQ(man.status, 0);
  EXPECT_THAT(man.out, StartsWith(".TH RDMAPCT 1 "));
  for (const char* s :
       {".SS \"rdmapct conform\"", ".SS \"rdmapct fuzz repro\"", "\\-\\-profile", "RDMAPCT_DATA_DIR", "Exit status"}) {
    EXPECT_THAT(man.out, HasSubstr(s)) << s;
  }
  const fs::path built = fs::path(RDMAPCT_BINARY).parent_path() / "rdmapct.1";
  EXPECT_EQ(ReadFile(built), man.out) << built;
}

TEST(DeliveryCli, BashCompletionCompletesCommandsAndFlags) {
  const fs::path script = fs::path(RDMAPCT_BINARY).parent_path() / "rdmapct.bash-completion";
  ASSERT_TRUE(fs::exists(script));
  auto complete = [&](const std::string& words, int cword) {
    const std::string cmd =
        "bash -c " + Quote("source " + Quote(script.string()) + "; COMP_WORDS=(" + words +
                           "); COMP_CWORD=" + std::to_string(cword) + "; _rdmapct; printf '%s\\n' \"${COMPREPLY[@]}\"");
    std::string out;
    if (std::FILE* p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
      pclose(p);
    }
    return Lines(out);
  };
  EXPECT_THAT(complete("rdmapct conf", 1), testing::ElementsAre("conform"));
  EXPECT_THAT(complete("rdmapct conform --prof", 2), testing::ElementsAre("--profile"));
  EXPECT_THAT(complete("rdmapct fuzz repro --tar", 3), testing::ElementsAre("--target"));
}

// ---- one error style ---------------------------------------------------------------

TEST(DeliveryErrors, EveryCommandSaysRdmapctCommandError) {
  struct Case {
    std::string args, prefix;
  };
  for (const Case& c : std::vector<Case>{
           {"--bogus", "rdmapct: error: "},
           {"decode --bogus", "rdmapct decode: error: "},
           {"decode /nonexistent/x.hex", "rdmapct decode: error: "},
           {"replay --bogus x.pcap", "rdmapct replay: error: "},
           {"replay /nonexistent/x.pcap --decode", "rdmapct replay: error: "},
           {"replay /nonexistent/x.pcap --audit", "rdmapct replay: error: "},
           {"conform --bogus", "rdmapct conform: error: "},
           {"conform --target nowhere", "rdmapct conform: error: "},
           {"serve --bogus", "rdmapct serve: error: "},
           {"serve --listen 127.0.0.1:1 --crc maybe", "rdmapct serve: error: "},
           {"load --bogus", "rdmapct load: error: "},
           {"load --target nowhere", "rdmapct load: error: "},
           {"fuzz --bogus", "rdmapct fuzz: error: "},
           {"fuzz --fault no-such-fault --time 1s", "rdmapct fuzz: error: "},
           {"fuzz repro /nonexistent/session.pb", "rdmapct fuzz repro: error: "},
           {"fuzz show /nonexistent/session.pb", "rdmapct fuzz show: error: "},
           {"report compare --bogus a.json b.json", "rdmapct report compare: error: "},
           {"report compare /nonexistent/a.json /nonexistent/b.json", "rdmapct report compare: error: "},
       }) {
    const Outcome r = Rdmapct(c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_THAT(r.err, StartsWith(c.prefix)) << c.args;
    EXPECT_EQ(Lines(r.err).size(), 1u) << c.args << ": " << r.err;
  }
}

// ---- the small inconsistencies of issue 18 -------------------------------------------

TEST(DeliveryFixes, DecodeOfAnEmptyFileIsAnError) {
  const fs::path dir = Fresh("empty");
  std::ofstream(dir / "empty.bin").close();
  std::ofstream(dir / "comments.hex") << "# nothing but a comment\n";
  for (const char* f : {"empty.bin", "comments.hex"}) {
    const Outcome r = Rdmapct(std::string("decode ") + f, dir);
    EXPECT_EQ(r.status, 1) << f;
    EXPECT_EQ(r.err, std::string("rdmapct decode: error: ") + f + " holds no octets to decode\n");
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(Rdmapct("decode --ddp comments.hex", dir).status, 1);
}

TEST(DeliveryFixes, CasesDirThatIsNoCaseTreeIsOneLineAndNotWalked) {
  const fs::path dir = Fresh("not-cases");
  for (int i = 0; i < 40; ++i) {
    fs::create_directories(dir / "deep" / std::to_string(i));
    std::ofstream(dir / "deep" / std::to_string(i) / "x.textproto") << "case {}\n";
  }
  std::ofstream(dir / "deep" / "y.textproto") << "case {}\n";  // two levels deep, not a document
  std::ofstream(dir / "z.textproto") << "case {}\n";
  const Outcome r = Rdmapct("conform --list --cases-dir " + Quote(dir.string()));
  EXPECT_EQ(r.status, 2);
  const std::vector<std::string> lines = Lines(r.err);
  ASSERT_LE(lines.size(), 2u) << r.err;
  EXPECT_THAT(lines[0], HasSubstr("not a case tree"));
}

// Audit and decode of the same truncated capture: the same status (1: the
// file is cut short; what it holds was processed).
TEST(DeliveryFixes, TruncatedCaptureExitsTheSameForDecodeAndAudit) {
  const fs::path dir = Fresh("truncated");
  std::string octets = ReadFile(fs::path(SourceDir()) / "pcaps" / "audit_violations.pcap");
  ASSERT_GT(octets.size(), 100u);
  octets.resize(octets.size() - 30);  // inside the last packet
  std::ofstream(dir / "cut.pcap", std::ios::binary) << octets;
  const Outcome decode = Rdmapct("replay cut.pcap --decode", dir);
  const Outcome audit = Rdmapct("replay cut.pcap --audit", dir);
  EXPECT_EQ(decode.status, 1) << decode.err;
  EXPECT_EQ(audit.status, 1) << audit.err;
  EXPECT_THAT(audit.err, HasSubstr("rdmapct replay: error: cut.pcap: truncated"));
}

TEST(DeliveryFixes, FuzzReproOfRandomOctetsIsOneLineWithoutProtobufLogs) {
  const fs::path dir = Fresh("random");
  std::string junk;
  for (int i = 0; i < 512; ++i) junk += static_cast<char>((i * 151 + 7) % 256);
  std::ofstream(dir / "random.pcap", std::ios::binary) << junk;
  const Outcome r = Rdmapct("fuzz repro random.pcap", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, Not(HasSubstr("libprotobuf")));
  EXPECT_THAT(r.err, StartsWith("rdmapct fuzz repro: error: random.pcap: not a FuzzSession"));
  EXPECT_EQ(Lines(r.err).size(), 1u) << r.err;
}

// Every file an example in a --help names exists (the fuzz --help example
// named corpus/fuzz_session/rfc5040_write, which never existed).
TEST(DeliveryFixes, FilesNamedByHelpExamplesExist) {
  const std::regex path_re(R"((?:^|[\s(`'"])((?:corpus|examples|pcaps|conformance|docs)/[A-Za-z0-9_.\-/]+))");
  std::set<std::string> checked;
  for (const char* c :
       {"decode", "replay", "conform", "serve", "load", "fuzz", "fuzz show", "fuzz repro", "fuzz campaign"}) {
    const std::string help = Rdmapct(std::string(c) + " --help").out;
    for (std::sregex_iterator it(help.begin(), help.end(), path_re), end; it != end; ++it) {
      std::string p = (*it)[1];
      while (!p.empty() && (p.back() == '.' || p.back() == '/')) p.pop_back();
      if (p.find('<') != std::string::npos) continue;
      checked.insert(p);
      EXPECT_TRUE(fs::exists(fs::path(SourceDir()) / p)) << c << " --help names " << p;
    }
  }
  EXPECT_TRUE(checked.count("corpus/fuzz_session/rfc5040_mixed")) << "the fuzz show example";
}

}  // namespace
}  // namespace rdmapct::cli
