// `rdmapct replay FILE --as-case OUT` and `--against URI`: a captured
// connection as a conformance script (replay::CaptureAsCase), written out or
// run at once by the conformance runner.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_conform.h"
#include "cli/cli_error.h"
#include "cli/cli_replay.h"
#include "cli/commands.h"
#include "replay/as_case.h"

namespace rdmapct::cli {
namespace {

bool BuildCase(const ReplayCommand& cmd, replay::AsCaseResult& r, std::FILE* err) {
  replay::AsCaseOptions o;
  o.profile = cmd.profile;
  o.connection = cmd.connection;
  r = replay::CaptureAsCase(cmd.file, o);
  if (!r.ok) PrintError(err, "replay", r.error);
  return r.ok;
}

bool WriteText(const std::string& path, const std::string& text, std::FILE* err) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) PrintError(err, "replay", path + ": cannot write the script");
  return static_cast<bool>(f);
}

}  // namespace

int RunReplayAsCase(const ReplayCommand& cmd, const std::string& out_file, std::FILE* out, std::FILE* err) {
  replay::AsCaseResult r;
  if (!BuildCase(cmd, r, err) || !WriteText(out_file, r.textproto, err)) return kExitUsage;
  std::fprintf(out, "%s: connection %zu as a conformance case: %zu sends, %zu expectations\n", out_file.c_str(),
               r.connection, r.sends, r.expects);
  return kExitOk;
}

int RunReplayAgainst(const ReplayCommand& cmd, const std::string& target, std::FILE* out, std::FILE* err) {
  replay::AsCaseResult r;
  if (!BuildCase(cmd, r, err)) return kExitUsage;
  const std::filesystem::path script =
      std::filesystem::temp_directory_path() / ("rdmapct-replay-" + std::to_string(::getpid()) + ".textproto");
  if (!WriteText(script.string(), r.textproto, err)) return kExitUsage;
  std::fprintf(out, "replaying connection %zu of %s (the Initiator's %zu ULPDUs) against %s; script: %s\n",
               r.connection, cmd.file.c_str(), r.sends, target.c_str(), script.string().c_str());
  ConformCommand c;
  c.target = target;
  c.profile = cmd.profile;
  c.scripts = {script.string()};
  c.verbose = true;
  c.color = false;
  conformance::CertifyResult result;
  const int status = RunConform(c, out, err, &result);  // the script stays, for the "reproduce:" line
  if (result.judged()) {
    std::fprintf(out, "replay: %s\n",
                 result.failed() ? "the target's answers differ from the capture's (FAIL above)"
                                 : "the target answered as in the capture");
  }
  return status;
}

}  // namespace rdmapct::cli
