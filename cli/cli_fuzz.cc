#include "cli/cli_fuzz.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_conform.h"
#include "cli/cli_error.h"
#include "cli/cli_interrupt.h"
#include "cli/commands.h"
#include "fuzz/run_remote.h"
#include "fuzz/session_builder.h"
#include "fuzz/session_repro.h"
#include "proto/session.pb.h"
#include "reference/model/faults.h"
#include "reference/wire/hex.h"

namespace rdmapct::cli {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::optional<std::chrono::seconds> ParseDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  long long total = 0, number = -1;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      number = (number < 0 ? 0 : number) * 10 + (c - '0');
      if (number > 10'000'000) return std::nullopt;
      continue;
    }
    if (number < 0) return std::nullopt;
    const long long unit = c == 's' ? 1 : c == 'm' ? 60 : c == 'h' ? 3600 : c == 'd' ? 86400 : 0;
    if (unit == 0) return std::nullopt;
    total += number * unit;
    number = -1;
  }
  if (number >= 0) total += number;
  return std::chrono::seconds(total);
}

namespace {

std::optional<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A binary FuzzSession, or one in text format (what `fuzz show` prints).
// Keeps the text parser's first complaint instead of letting protobuf log
// "[libprotobuf ERROR ...]" lines on stderr (the command prints one line).
class FirstTextError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (first.empty()) first = "line " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  std::string first;
};

// A FuzzSession in binary or text format; nullopt with `why` (the text
// parser's first error) otherwise.
std::optional<proto::FuzzSession> ParseSession(const std::string& data, std::string* why = nullptr) {
  proto::FuzzSession s;
  if (s.ParseFromString(data)) return s;
  google::protobuf::TextFormat::Parser parser;
  FirstTextError errors;
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(data, &s)) return s;
  if (why) *why = errors.first;
  return std::nullopt;
}

std::string SessionText(const proto::FuzzSession& s) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(s, &text);
  return text;
}

void HexDump(std::FILE* out, const std::string& data) {
  const wire::ByteSpan octets(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  for (const std::string& line : wire::HexDumpLines(octets)) std::fprintf(out, "%s\n", line.c_str());
}

std::optional<model::FaultSet> Faults(const std::vector<std::string>& names, std::FILE* err) {
  model::FaultSet set;
  for (const std::string& n : names) {
    if (auto bad = set.AddByNames(n)) {
      std::fprintf(err, "rdmapct fuzz: error: unknown fault \"%.*s\" (see rdmapct --list-faults)\n",
                   static_cast<int>(bad->size()), bad->data());
      return std::nullopt;
    }
  }
  return set;
}

// A written script replayed once through the conformance suite (the one
// place that sees both fuzz/ and conformance/): replay.txt, replay.json
// and the pcap beside it.
std::optional<bool> ReplayScript(const fuzz::ReplayRequest& req) {
  ConformCommand cc;
  cc.target = req.target;
  cc.profile = req.profile;
  cc.scripts = {req.script.string()};
  cc.pcap_dir = req.dir.string();
  cc.json_file = (req.dir / "replay.json").string();
  cc.color = false;
  cc.keep_going = true;
  cc.pause_after_reply_ms = req.pause_after_reply_ms;
  std::FILE* log = std::fopen((req.dir / "replay.txt").c_str(), "w");
  if (!log) return std::nullopt;
  conformance::CertifyResult result;
  RunConform(cc, log, log, &result);
  std::fclose(log);
  if (!result.judged()) return std::nullopt;
  return result.failed();
}

}  // namespace

int RunFuzzShow(const std::vector<std::string>& files, std::FILE* out, std::FILE* err) {
  int rc = kExitOk;
  for (const std::string& f : files) {
    const auto data = ReadWhole(f);
    if (!data) {
      std::fprintf(err, "rdmapct fuzz show: error: %s: cannot read\n", f.c_str());
      rc = kExitUsage;
      continue;
    }
    if (files.size() > 1) std::fprintf(out, "# %s\n", f.c_str());
    proto::FuzzSession s;
    if (!data->empty() && s.ParseFromString(*data)) {
      std::fputs(SessionText(s).c_str(), out);
      continue;
    }
    std::fprintf(out, "# not a FuzzSession: %zu octets of raw harness input\n", data->size());
    HexDump(out, *data);
  }
  return rc;
}

int RunFuzzRepro(const FuzzReproCommand& cmd, std::FILE* out, std::FILE* err) {
  const auto data = ReadWhole(cmd.input);
  if (!data) {
    std::fprintf(err, "rdmapct fuzz repro: error: %s: cannot read\n", cmd.input.c_str());
    return kExitUsage;
  }
  std::string why;
  const auto session = ParseSession(*data, &why);
  if (!session) {
    Errorf(err, "fuzz repro",
           "{}: not a FuzzSession (binary, or text format: {}); raw harness inputs replay with their fuzz_* binary",
           cmd.input, why.empty() ? "empty" : why);
    return kExitUsage;
  }
  const auto faults = Faults(cmd.faults, err);
  if (!faults) return kExitUsage;
  const fuzz::OracleResult r = fuzz::RunSessionOracles(*session, *faults);
  for (const fuzz::Finding& f : r.findings) std::fprintf(out, "finding: %s\n", fuzz::FormatFinding(f).c_str());
  if (r.findings.empty())
    std::fprintf(out, "no finding on the in-process reference%s\n", cmd.faults.empty() ? "" : " with these faults");
  const std::string stem = fs::path(cmd.input).stem().string();
  std::string slug;
  for (char c : stem)
    slug += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                                                        : '-';
  if (slug.empty()) slug = "input";
  const std::string target = !cmd.replay           ? ""
                             : !cmd.target.empty() ? cmd.target
                                                   : fuzz::ReferenceUri(*session, cmd.faults);
  fuzz::ReplayRequest req;
  req.dir = cmd.out_dir;
  req.script = fuzz::WriteReproFiles(req.dir, slug, *session, r.findings, "rdmapct fuzz repro " + cmd.input);
  req.profile = fuzz::SessionProfile(*session);
  req.target = target;
  std::fprintf(out, "script: %s\n", req.script.c_str());
  const std::optional<bool> reproduced = target.empty() ? std::nullopt : ReplayScript(req);
  if (reproduced) {
    std::fprintf(out, "replayed against %s: %s (pcap and replay.txt in %s)\n", target.c_str(),
                 *reproduced ? "fails, the finding reproduces" : "passes", cmd.out_dir.c_str());
    return *reproduced ? kExitFail : kExitOk;
  } else if (!target.empty()) {
    std::fprintf(err, "rdmapct fuzz repro: error: the replay against %s ended in an error (see %s/replay.txt)\n",
                 target.c_str(), cmd.out_dir.c_str());
    return kExitUsage;
  }
  return r.findings.empty() ? kExitOk : kExitFail;
}

int RunFuzzRun(const FuzzRunCommand& cmd, std::FILE* out, std::FILE* err) {
  fuzz::RemoteRunOptions o;
  o.target = cmd.target;
  o.faults = cmd.faults;
  o.profile = cmd.profile;
  o.time = cmd.time;
  o.runs = cmd.runs;
  o.seed = cmd.seed;
  o.out_dir = cmd.out_dir;
  o.restart_wait = cmd.restart_wait;
  o.restart_command = cmd.restart_command;
  o.settle_ms = cmd.settle_ms;
  o.pause_after_reply_ms = cmd.pause_after_reply_ms;
  o.fence = !cmd.no_fence;
  o.jobs = cmd.jobs;
  o.stop_at_first = cmd.stop_at_first;
  o.limits.time = cmd.session_time;
  o.limits.memory_mb = cmd.session_memory_mb;
  o.replay = ReplayScript;
  if (!cmd.quiet) {
    o.progress = [out](const std::string& line) {
      std::fprintf(out, "%s\n", line.c_str());
      std::fflush(out);
    };
  }
  // SIGINT / SIGTERM: the run ends, what it found is written (interrupted).
  InterruptScope interrupt("rdmapct fuzz");
  o.stop = &interrupt.level();
  const fuzz::RemoteRunResult r = fuzz::RunRemote(o);
  using Status = fuzz::RemoteRunResult::Status;
  if (r.status == Status::kBadOptions || r.status == Status::kNeverAnswered) {
    std::fprintf(err, "rdmapct fuzz: error: %s\n", r.error.c_str());
    return kExitUsage;
  }
  const std::size_t n = r.distinct();
  const std::string flaky = r.flaky() == 0 ? "" : " (+" + std::to_string(r.flaky()) + " flaky)";
  // One decimal: a slow live target (siw under TCG) runs a few sessions/s.
  // Sessions while the target did not answer reached no target: the rate is of the others.
  const long answered = r.sessions - r.sessions_not_answered;
  char rate[120];
  const double per_s = r.seconds > 0 ? answered / r.seconds : 0.0;
  if (r.sessions_not_answered > 0) {
    std::snprintf(rate, sizeof rate, "%ld of them while the target did not answer; %.1f/s of the others",
                  r.sessions_not_answered, per_s);
  } else {
    std::snprintf(rate, sizeof rate, "%.1f/s", per_s);
  }
  std::fprintf(out, "%ld sessions in %.1f s (%s), %zu distinct finding%s%s, %d target restart%s; stats in %s, %s\n",
               r.sessions, r.seconds, rate, n, n == 1 ? "" : "s", flaky.c_str(), r.restarts, r.restarts == 1 ? "" : "s",
               r.stats_file.c_str(), r.summary_file.c_str());
  if (r.interrupted) {
    std::fprintf(err, "rdmapct fuzz: interrupted; findings so far in %s, %s\n", r.stats_file.c_str(),
                 r.summary_file.c_str());
    return kExitInterrupted;
  }
  if (r.status == Status::kTargetGone) {
    std::fprintf(err, "rdmapct fuzz: error: %s\n", r.error.c_str());
    return kExitUsage;
  }
  return n == 0 ? kExitOk : kExitFail;
}

}  // namespace rdmapct::cli
