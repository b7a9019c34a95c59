// `rdmapct fuzz`, `fuzz show`, `fuzz repro` and `fuzz campaign`, run as a
// user runs them. The campaign runs a stand-in for a libFuzzer binary (a
// shell script that speaks libFuzzer's flags, progress lines and artifact
// files), so CI checks the runner's parsing, deduplication, resume and
// reports without a clang fuzz build; the real binaries run in
// docs/testing.md's campaign check.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_test_util.h"

namespace rdmapct::cli {
namespace {

namespace fs = std::filesystem;
using test_util::Outcome;
using test_util::Quote;
using test_util::ReadFile;
using test_util::RunRdmapctIn;
using test_util::SourceDir;

fs::path Scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "rdmapct_fuzz_cli_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

nlohmann::json Json(const fs::path& p) { return nlohmann::json::parse(ReadFile(p)); }

TEST(FuzzShow, SessionAsTextAndRawInputAsHexdump) {
  const fs::path dir = Scratch("show");
  const fs::path seed = fs::path(SourceDir()) / "corpus" / "fuzz_session" / "rfc5040_mixed";
  ASSERT_TRUE(fs::exists(seed)) << seed;
  const Outcome text = RunRdmapctIn("fuzz show " + Quote(seed.string()), dir);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("connection {"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("type: READ_REQUEST"), std::string::npos) << text.out;

  std::ofstream(dir / "raw.bin", std::ios::binary) << std::string("\x00\x01\xff", 3);
  const Outcome raw = RunRdmapctIn("fuzz show raw.bin", dir);
  EXPECT_EQ(raw.status, 0) << raw.err;
  EXPECT_NE(raw.out.find("not a FuzzSession: 3 octets"), std::string::npos) << raw.out;
  EXPECT_NE(raw.out.find("0000  00 01 ff"), std::string::npos) << raw.out;

  const Outcome missing = RunRdmapctIn("fuzz show no-such-file", dir);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("no-such-file: cannot read"), std::string::npos) << missing.err;
}

TEST(FuzzRun, FindsAFaultAndItsScriptReproducesOnlyWithTheFault) {
  const fs::path dir = Scratch("run");
  const Outcome r = RunRdmapctIn("fuzz --target reference --fault wrong-terminate-code --runs 3000 --out out", dir);
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  const auto stats = Json(dir / "out" / "stats.json");
  ASSERT_FALSE(stats["findings"].empty()) << stats.dump(2);
  const auto& f = stats["findings"][0];
  EXPECT_EQ(f["reproduced"], true) << stats.dump(2);
  const fs::path finding = dir / f["dir"].get<std::string>();
  for (const char* file : {"session.pb", "session.txt", "repro.textproto", "replay.json"}) {
    EXPECT_TRUE(fs::exists(finding / file)) << file;
  }
  bool pcap = false;
  for (const auto& e : fs::directory_iterator(finding)) pcap |= e.path().extension() == ".pcap";
  EXPECT_TRUE(pcap);

  // The script is an ordinary conformance script: it fails the faulty
  // reference and passes the fault-free one.
  const std::string script = Quote((finding / "repro.textproto").string());
  const std::string profile = " --profile " + Json(finding / "replay.json")["profile"].get<std::string>();
  const Outcome bad = RunRdmapctIn("conform --script " + script + profile + " --fault wrong-terminate-code", dir);
  EXPECT_EQ(bad.status, 1) << bad.out << bad.err;
  const Outcome good = RunRdmapctIn("conform --script " + script + profile, dir);
  EXPECT_EQ(good.status, 0) << good.out << good.err;

  // fuzz show reads the finding; fuzz repro rewrites its script.
  const Outcome show = RunRdmapctIn("fuzz show " + Quote((finding / "session.pb").string()), dir);
  EXPECT_EQ(show.status, 0);
  EXPECT_EQ(show.out, ReadFile(finding / "session.txt"));
  const Outcome repro = RunRdmapctIn(
      "fuzz repro " + Quote((finding / "session.txt").string()) + " --fault wrong-terminate-code --out again", dir);
  EXPECT_EQ(repro.status, 1) << repro.out << repro.err;
  EXPECT_NE(repro.out.find("fails, the finding reproduces"), std::string::npos) << repro.out;
}

TEST(FuzzRun, FaultFreeReferenceHasNoFinding) {
  const fs::path dir = Scratch("clean");
  const Outcome r = RunRdmapctIn("fuzz --target reference --runs 1500 --seed 7 --out out", dir);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(Json(dir / "out" / "stats.json")["findings"].empty());
  EXPECT_EQ(Json(dir / "out" / "stats.json")["sessions"], 1500);
}

// Issue 17's runaway: skip-bounds-check serves Reads of up to 4 GiB; the
// session that asks for one is cut at the memory cap and reported as a
// `resource` finding whose reproducer is cut again. (The session stream
// depends on the case format's enums and the default layout: since issue 20
// the first such session is number 2035.)
TEST(FuzzRun, RunawaySessionIsCutAtItsCapAndReportedAsResource) {
  const fs::path dir = Scratch("runaway");
  const Outcome r = RunRdmapctIn("fuzz --target reference --fault skip-bounds-check --runs 2500 --out out", dir);
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  bool resource = false;
  const auto stats = Json(dir / "out" / "stats.json");
  for (const auto& f : stats["findings"]) {
    if (f["oracle"] != "resource") continue;
    resource = true;
    EXPECT_NE(f["description"].get<std::string>().find("384 MB"), std::string::npos) << f.dump();
    EXPECT_EQ(f["reproduced"], true) << f.dump();
    EXPECT_TRUE(fs::exists(dir / f["dir"].get<std::string>() / "session.pb"));
  }
  EXPECT_TRUE(resource) << ReadFile(dir / "out" / "stats.json");
}

TEST(FuzzRun, ThreeFaultsGiveThreeFindingsEachReproduced) {
  const fs::path dir = Scratch("three");
  const Outcome r = RunRdmapctIn(
      "fuzz --target reference --fault ignore-ird --fault execute-misaligned-atomic "
      "--fault read-responses-out-of-order --runs 6000 --out out",
      dir);
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("3 distinct findings,"), std::string::npos) << r.out;
  const auto stats = Json(dir / "out" / "stats.json");
  EXPECT_EQ(stats["distinct_findings"], 3) << stats.dump(2);
  EXPECT_EQ(stats["flaky_findings"], 0) << stats.dump(2);
  for (const auto& f : stats["findings"]) EXPECT_EQ(f["reproduced"], true) << f.dump();
}

// `rdmapct ARGS` in `dir` as a child (exec'd by sh, so the pid is
// rdmapct's), sent `signal` once `ready` holds (at most 30 s); its exit
// status (-1 if killed, -2 if it did not end within 30 s after the signal).
int RunAndSignal(const std::string& args, const fs::path& dir, int signal, const std::function<bool()>& ready) {
  const std::string cmd = "cd " + Quote(dir.string()) + " && exec " + Quote(RDMAPCT_BINARY) + " " + args +
                          " </dev/null >stdout.txt 2>stderr.txt";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto wait_for = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 300 && !done(); ++i) usleep(100'000);
  };
  wait_for(ready);
  kill(pid, signal);
  int raw = 0;
  bool ended = false;
  wait_for([&] { return ended = waitpid(pid, &raw, WNOHANG) == pid; });
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &raw, 0);
    return -2;
  }
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

// Issue 17: Ctrl-C left no stats.json and no summary.
TEST(FuzzRun, SigintKeepsStatsSummaryAndFindingsMarkedInterrupted) {
  const fs::path dir = Scratch("sigint");
  const int status = RunAndSignal("fuzz --target reference --fault wrong-terminate-code --time 120s --out out", dir,
                                  SIGINT, [&] { return fs::exists(dir / "out" / "stats.json"); });
  ASSERT_EQ(status, 130) << ReadFile(dir / "stdout.txt") << ReadFile(dir / "stderr.txt");
  const auto stats = Json(dir / "out" / "stats.json");
  EXPECT_EQ(stats["interrupted"], true) << stats.dump(2);
  ASSERT_FALSE(stats["findings"].empty());
  EXPECT_TRUE(fs::exists(dir / stats["findings"][0]["dir"].get<std::string>() / "repro.textproto"));
  EXPECT_NE(ReadFile(dir / "out" / "summary.md").find("(interrupted)"), std::string::npos);
  EXPECT_NE(ReadFile(dir / "stderr.txt").find("interrupted"), std::string::npos);
}

TEST(FuzzRun, SilentPortIsAClearError) {
  const fs::path dir = Scratch("dead");
  const Outcome r = RunRdmapctIn("fuzz --target tcp://127.0.0.1:9 --time 3s --restart-wait 1s --out out", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("never answered"), std::string::npos) << r.err;
}

TEST(FuzzRun, BadFlags) {
  const fs::path dir = Scratch("flags");
  EXPECT_EQ(RunRdmapctIn("fuzz --time soon", dir).status, 2);
  EXPECT_EQ(RunRdmapctIn("fuzz --session-time never", dir).status, 2);
  EXPECT_EQ(RunRdmapctIn("fuzz --session-memory 1", dir).status, 2);
  EXPECT_EQ(RunRdmapctIn("fuzz --fault no-such-fault --runs 1", dir).status, 2);
  EXPECT_EQ(RunRdmapctIn("fuzz --target tcp://127.0.0.1:9 --fault wrong-terminate-code", dir).status, 2);
}

// A stand-in for a libFuzzer binary: -help=1 lists `fork`; a fuzzing run
// prints fork-mode progress and leaves two crash artifacts with the same
// stack; replaying an artifact prints an ASan report; -merge=1 copies.
constexpr const char* kFakeFuzzer = R"(#!/bin/sh
for a in "$@"; do
  case "$a" in
    -help=1) echo "Usage: libFuzzer"; echo " fork   0  Experimental mode"; exit 0 ;;
    -artifact_prefix=*) prefix=${a#-artifact_prefix=} ;;
    -exact_artifact_path=*) exact=${a#-exact_artifact_path=} ;;
    -merge=1) merge=1 ;;
    -minimize_crash=1) minimize=1 ;;
    -fork=*) fork=1 ;;
    -*) ;;
    *) args="$args $a" ;;
  esac
done
set -- $args
if [ -n "$merge" ]; then out=$1; shift; cp "$@"/* "$out"/ 2>/dev/null; exit 0; fi
if [ -n "$minimize" ]; then head -c 1 "$1" > "$exact"; exit 0; fi
if [ -n "$fork" ]; then
  echo "#1000: cov: 12 ft: 34 corp: 5 exec/s: 4321 oom/timeout/crash: 0/0/2 time: 1s job: 1 dft_time: 0"
  n=$(ls "$prefix" | wc -l)
  echo "input $n a" > "${prefix}crash-a$n"; echo "input $n b" > "${prefix}crash-b$n"
  echo "seed $n" > "$1/seed$n"
  exit 0
fi
echo "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011"
echo "    #0 0x55d1 in rdmapct::wire::DecodeThing(unsigned char const*) /src/x.cc:10"
echo "    #1 0x55d2 in LLVMFuzzerTestOneInput /src/fuzz_fake.cc:5"
echo "SUMMARY: AddressSanitizer: heap-buffer-overflow /src/x.cc:10 in DecodeThing"
exit 1
)";

TEST(FuzzCampaign, RunsDeduplicatesResumesAndReports) {
  const fs::path dir = Scratch("campaign");
  fs::create_directories(dir / "bin");
  const fs::path fake = dir / "bin" / "fuzz_fake";
  std::ofstream(fake) << kFakeFuzzer;
  fs::permissions(fake, fs::perms::owner_all);
  const std::string args = "fuzz campaign --harness fuzz_fake --time 20s --fuzzers bin --out camp --quiet";
  const Outcome first = RunRdmapctIn(args, dir);
  ASSERT_EQ(first.status, 1) << first.out << first.err;  // new findings
  const auto stats = Json(dir / "camp" / "stats.json");
  const auto& h = stats["harnesses"]["fuzz_fake"];
  EXPECT_EQ(h["last_exec_per_s"], 4321) << h.dump(2);  // libFuzzer's last figure
  EXPECT_EQ(h["exec_per_s"], h["execs"].get<long>() / h["seconds"].get<long>()) << h.dump(2);  // the average
  EXPECT_EQ(h["coverage"], 12);
  EXPECT_EQ(h["crashes"], 2);
  EXPECT_EQ(h["artifacts"].size(), 2u);
  // Two artifacts, one stack: one finding, minimized, with a reproduce.sh.
  EXPECT_EQ(stats["new_findings"], 1) << stats.dump(2);
  ASSERT_EQ(stats["findings"].size(), 1u);
  const auto& f = stats["findings"].begin().value();
  EXPECT_EQ(f["count"], 2);
  const fs::path fdir = dir / f["dir"].get<std::string>();
  EXPECT_EQ(fs::file_size(fdir / "minimized"), 1u);
  EXPECT_NE(ReadFile(fdir / "reproduce.sh").find("minimized"), std::string::npos);
  EXPECT_NE(stats["findings"].begin().key().find("heap-buffer-overflow < rdmapct::wire::DecodeThing"),
            std::string::npos)
      << stats["findings"].begin().key();
  EXPECT_NE(ReadFile(dir / "camp" / "summary.md").find("| fuzz_fake |"), std::string::npos);
  EXPECT_EQ(fs::exists(dir / "camp" / "corpus" / "fuzz_fake" / "seed0"), true);

  // The next night: the corpus is kept and the known finding is not new.
  const Outcome second = RunRdmapctIn(args, dir);
  EXPECT_EQ(second.status, 0) << second.out << second.err;
  const auto again = Json(dir / "camp" / "stats.json");
  EXPECT_EQ(again["new_findings"], 0);
  EXPECT_EQ(again["findings"].begin().value()["count"], 4);
  EXPECT_EQ(again["harnesses"]["fuzz_fake"]["corpus_before"], 1);
}

// SIGTERM during a harness's run: the harness is stopped, its artifacts
// collected, stats.json and summary.md written and marked "interrupted".
TEST(FuzzCampaign, SigtermStopsTheHarnessAndKeepsWhatItFound) {
  const fs::path dir = Scratch("campaign_sigterm");
  fs::create_directories(dir / "bin");
  std::string slow = kFakeFuzzer;
  // The fuzzing run leaves its artifacts, then fuzzes "forever".
  slow.replace(slow.find("  exit 0\nfi\necho \"==1==ERROR"), 8, "  sleep 600; exit 0");
  std::ofstream(dir / "bin" / "fuzz_fake") << slow;
  fs::permissions(dir / "bin" / "fuzz_fake", fs::perms::owner_all);
  const int status = RunAndSignal("fuzz campaign --harness fuzz_fake --time 1h --fuzzers bin --out camp", dir, SIGTERM,
                                  [&] { return fs::exists(dir / "camp" / "corpus" / "fuzz_fake" / "seed0"); });
  ASSERT_EQ(status, 130) << ReadFile(dir / "stdout.txt") << ReadFile(dir / "stderr.txt");
  const auto stats = Json(dir / "camp" / "stats.json");
  EXPECT_EQ(stats["interrupted"], true) << stats.dump(2);
  EXPECT_EQ(stats["new_findings"], 1) << stats.dump(2);
  EXPECT_NE(ReadFile(dir / "camp" / "summary.md").find("(interrupted)"), std::string::npos);
}

TEST(FuzzCampaign, NoFuzzerBinariesIsAClearError) {
  const fs::path dir = Scratch("nobins");
  const Outcome r = RunRdmapctIn("fuzz campaign --fuzzers nowhere --time 5s", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no fuzzer binaries in nowhere"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rdmapct::cli
