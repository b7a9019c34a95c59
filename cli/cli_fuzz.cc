#include "cli/cli_fuzz.h"

#include <google/protobuf/text_format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/cli_conform.h"
#include "conformance/case_loader.h"
#include "cli/commands.h"
#include "fuzz/session_builder.h"
#include "fuzz/session_remote.h"
#include "fuzz/session_repro.h"
#include "fuzz/session_search.h"
#include "proto/session.pb.h"
#include "reference/model/faults.h"
#include "reference/wire/crc32c.h"
#include "reference/wire/hex.h"
#include "targets/target_uri.h"

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

bool WriteWhole(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  return static_cast<bool>(out.flush());
}

// A binary FuzzSession, or one in text format (what `fuzz show` prints).
std::optional<proto::FuzzSession> ParseSession(const std::string& data) {
  proto::FuzzSession s;
  if (s.ParseFromString(data)) return s;
  if (google::protobuf::TextFormat::ParseFromString(data, &s)) return s;
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
      std::fprintf(err, "rdmapct fuzz: unknown fault \"%.*s\" (see rdmapct --list-faults)\n",
                   static_cast<int>(bad->size()), bad->data());
      return std::nullopt;
    }
  }
  return set;
}

// The in-process reference as the session configured it, as a target URI.
std::string ReferenceUri(const proto::FuzzSession& s, const std::vector<std::string>& faults) {
  std::string uri = "reference?profile=" + std::string(wire::ProfileName(fuzz::SessionProfile(s)));
  if (s.connection().target_crc_optional()) uri += "&crc=0";
  if (s.connection().target_markers()) uri += "&markers=1";
  for (const std::string& f : faults) uri += "&fault=" + f;
  return uri;
}

// "differential at step 2: target sent 36 octets ..." -> a signature
// without the numbers, so one bug found twice is one finding.
std::string Signature(const fuzz::Finding& f) {
  std::string s = f.oracle + ":";
  bool in_number = false;
  for (char c : f.description) {
    const bool digit = std::isxdigit(static_cast<unsigned char>(c)) && (in_number || std::isdigit(static_cast<unsigned char>(c)));
    if (digit) {
      if (!in_number) s += '#';
      in_number = true;
      continue;
    }
    in_number = false;
    s += c;
  }
  return s;
}

std::string ShortHash(const std::string& s) {
  char b[9];
  std::snprintf(b, sizeof b, "%08x", wire::Crc32c(wire::ByteSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size())));
  return b;
}

struct WrittenRepro {
  fs::path script;
  std::optional<bool> reproduced;  // the script failed on the target (nullopt: not replayed)
};

// The session, its text, the conformance script and (replayed) a pcap.
WrittenRepro WriteRepro(const fs::path& dir, const std::string& slug, const proto::FuzzSession& s,
                        const std::vector<fuzz::Finding>& findings, const std::string& origin,
                        const std::string& replay_target, int pause_after_reply_ms = 0) {
  fs::create_directories(dir);
  WrittenRepro w;
  WriteWhole(dir / "session.pb", s.SerializeAsString());
  WriteWhole(dir / "session.txt", SessionText(s));
  fuzz::ReproOptions o;
  o.id = "fuzz/session/" + slug;
  o.findings = findings;
  o.origin = origin;
  const proto::Case c = fuzz::SessionToCase(s, o);
  w.script = dir / "repro.textproto";
  WriteWhole(w.script, fuzz::CaseFileText(c));
  if (replay_target.empty()) return w;
  ConformCommand cc;
  cc.target = replay_target;
  cc.profile = fuzz::SessionProfile(s);
  cc.scripts = {w.script.string()};
  cc.pcap_dir = dir.string();
  cc.json_file = (dir / "replay.json").string();
  cc.color = false;
  cc.keep_going = true;
  cc.pause_after_reply_ms = pause_after_reply_ms;
  std::FILE* log = std::fopen((dir / "replay.txt").c_str(), "w");
  if (!log) return w;
  const int rc = RunConform(cc, log, log);
  std::fclose(log);
  if (rc == kExitOk || rc == kExitFail) w.reproduced = rc == kExitFail;
  return w;
}

}  // namespace

int RunFuzzShow(const std::vector<std::string>& files, std::FILE* out, std::FILE* err) {
  int rc = kExitOk;
  for (const std::string& f : files) {
    const auto data = ReadWhole(f);
    if (!data) {
      std::fprintf(err, "rdmapct fuzz show: %s: cannot read\n", f.c_str());
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
    std::fprintf(err, "rdmapct fuzz repro: %s: cannot read\n", cmd.input.c_str());
    return kExitUsage;
  }
  const auto session = ParseSession(*data);
  if (!session) {
    std::fprintf(err, "rdmapct fuzz repro: %s: not a FuzzSession (binary or text format); raw harness inputs "
                      "replay with their fuzz_* binary\n", cmd.input.c_str());
    return kExitUsage;
  }
  const auto faults = Faults(cmd.faults, err);
  if (!faults) return kExitUsage;
  const fuzz::OracleResult r = fuzz::RunSessionOracles(*session, *faults);
  for (const fuzz::Finding& f : r.findings) std::fprintf(out, "finding: %s\n", fuzz::FormatFinding(f).c_str());
  if (r.findings.empty()) std::fprintf(out, "no finding on the in-process reference%s\n", cmd.faults.empty() ? "" : " with these faults");
  const std::string stem = fs::path(cmd.input).stem().string();
  std::string slug;
  for (char c : stem) slug += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '-';
  if (slug.empty()) slug = "input";
  const std::string target = !cmd.replay ? "" : !cmd.target.empty() ? cmd.target : ReferenceUri(*session, cmd.faults);
  const WrittenRepro w = WriteRepro(cmd.out_dir, slug, *session, r.findings, "rdmapct fuzz repro " + cmd.input, target);
  std::fprintf(out, "script: %s\n", w.script.c_str());
  if (w.reproduced) {
    std::fprintf(out, "replayed against %s: %s (pcap and replay.txt in %s)\n", target.c_str(),
                 *w.reproduced ? "fails, the finding reproduces" : "passes", cmd.out_dir.c_str());
    return *w.reproduced ? kExitFail : kExitOk;
  } else if (!target.empty()) {
    std::fprintf(err, "rdmapct fuzz repro: the replay against %s ended in an error (see %s/replay.txt)\n", target.c_str(),
                 cmd.out_dir.c_str());
    return kExitUsage;
  }
  return r.findings.empty() ? kExitOk : kExitFail;
}

namespace {

struct RunFinding {
  std::string signature, dir;
  fuzz::Finding first;
  double first_seen_s = 0;
  long first_seen_sessions = 0;  // sessions run when it was found
  int count = 0;
  std::optional<bool> reproduced;
};

void WriteRunStats(const fs::path& path, const FuzzRunCommand& cmd, long sessions, double elapsed, int restarts,
                   const std::map<std::string, RunFinding>& findings) {
  nlohmann::json j;
  j["target"] = cmd.target;
  j["seed"] = cmd.seed;
  j["sessions"] = sessions;
  j["seconds"] = elapsed;
  j["sessions_per_second"] = elapsed > 0 ? sessions / elapsed : 0.0;
  j["target_restarts"] = restarts;
  j["findings"] = nlohmann::json::array();
  for (const auto& [sig, f] : findings) {
    nlohmann::json x{{"signature", sig},     {"oracle", f.first.oracle}, {"description", f.first.description},
                     {"first_seen_s", f.first_seen_s}, {"first_seen_sessions", f.first_seen_sessions}, {"count", f.count}, {"dir", f.dir}};
    if (f.reproduced) x["reproduced"] = *f.reproduced;
    j["findings"].push_back(x);
  }
  WriteWhole(path, j.dump(2) + "\n");
}

}  // namespace

int RunFuzzRun(const FuzzRunCommand& cmd, std::FILE* out, std::FILE* err) {
  const auto faults = Faults(cmd.faults, err);
  if (!faults) return kExitUsage;
  const bool in_process = cmd.target == "reference";
  if (!cmd.faults.empty() && !in_process) {
    std::fprintf(err, "rdmapct fuzz: --fault applies to --target reference only\n");
    return kExitUsage;
  }
  std::unique_ptr<targets::TargetConnector> connector;
  if (!in_process) {
    std::string error;
    connector = targets::MakeConnector(cmd.target, {}, error);
    if (!connector) {
      std::fprintf(err, "rdmapct fuzz: %s\n", error.c_str());
      return kExitUsage;
    }
  }
  std::error_code ec;
  fs::create_directories(cmd.out_dir, ec);
  if (ec) {
    std::fprintf(err, "rdmapct fuzz: cannot create %s: %s\n", cmd.out_dir.c_str(), ec.message().c_str());
    return kExitUsage;
  }
  fuzz::RemoteOptions remote;
  remote.settle = std::chrono::milliseconds(cmd.settle_ms);
  remote.fence = !cmd.no_fence;
  remote.pause_after_reply = std::chrono::milliseconds(cmd.pause_after_reply_ms);
  const auto start = Clock::now();
  const auto deadline = start + cmd.time;
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::map<std::string, RunFinding> findings;
  long sessions = 0;
  int restarts = 0, answered = 0, restart_commands = 0;
  bool target_gone = false;
  std::optional<Clock::time_point> unanswered_since;

  std::mutex bookkeeping;
  // Remote runs keep to the profile the target runs.
  const fuzz::SessionRun run = [&](const proto::FuzzSession& s0) -> fuzz::OracleResult {
    proto::FuzzSession s = s0;
    if (cmd.profile) s.mutable_connection()->set_profile(conformance::ToProtoProfile(*cmd.profile));
    if (in_process) return fuzz::RunSessionOracles(s, *faults);
    s.mutable_connection()->set_target_crc_optional(false);
    s.mutable_connection()->set_target_markers(false);
    fuzz::RemoteResult r = fuzz::RunSessionRemote(s, *connector, remote);
    const std::lock_guard<std::mutex> lock(bookkeeping);  // --jobs: sessions end on several threads
    const bool no_answer = !r.oracles.findings.empty() && r.oracles.findings.front().oracle == "no-answer";
    if (!no_answer) {
      ++answered;
      if (unanswered_since) {
        ++restarts;  // it came back
        unanswered_since.reset();
        if (!cmd.quiet) {
          std::fprintf(out, "[%6.1fs] target answering again\n", elapsed());
          std::fflush(out);
        }
      }
    }
    return std::move(r.oracles);
  };

  for (uint64_t round = 0; Clock::now() < deadline && !target_gone; ++round) {
    fuzz::SearchOptions so;
    so.seed = cmd.seed + round;
    so.deadline = deadline;
    so.only_profile = cmd.profile;
    if (!in_process) {
      // Batches fix the session stream; --jobs only says how many run at once.
      so.batch = 32;
      so.jobs = cmd.jobs;
    }
    so.budget = cmd.runs ? static_cast<int>(std::max<long>(0, *cmd.runs - sessions)) : 1 << 30;
    if (so.budget == 0) break;
    fuzz::SearchResult r = fuzz::SearchSessions(run, so);
    sessions += r.sessions;
    if (r.findings.empty()) break;  // budget or deadline
    proto::FuzzSession s = r.session;
    if (cmd.profile) s.mutable_connection()->set_profile(conformance::ToProtoProfile(*cmd.profile));
    const fuzz::Finding& f = r.findings.front();
    if (f.oracle == "no-answer") {
      if (answered == 0) {
        std::fprintf(err, "rdmapct fuzz: %s never answered: %s\n", cmd.target.c_str(), f.description.c_str());
        return kExitUsage;
      }
      // The target may be restarting (a crash, a VM reboot). A TCP connect
      // proves nothing (a port forwarder accepts for a dead guest): it is
      // back when a session gets an MPA Reply again.
      if (!unanswered_since) {
        unanswered_since = Clock::now();
        if (!cmd.quiet) {
          std::fprintf(out, "[%6.1fs] target not answering (%s); waiting up to %llds\n", elapsed(),
                       f.description.c_str(), static_cast<long long>(cmd.restart_wait.count()));
          std::fflush(out);
        }
      } else if (Clock::now() - *unanswered_since >= cmd.restart_wait) {
        if (cmd.restart_command.empty() || restart_commands >= 3) {
          target_gone = true;
          continue;
        }
        ++restart_commands;
        if (!cmd.quiet) {
          std::fprintf(out, "[%6.1fs] running the restart command: %s\n", elapsed(), cmd.restart_command.c_str());
          std::fflush(out);
        }
        const int rc = std::system(cmd.restart_command.c_str());
        if (rc != 0) std::fprintf(err, "rdmapct fuzz: restart command exited with status %d\n", rc);
        unanswered_since = Clock::now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    const std::string sig = Signature(f);
    RunFinding& rf = findings[sig];
    ++rf.count;
    if (rf.count > 1) continue;
    rf.signature = sig;
    rf.first = f;
    rf.first_seen_s = elapsed();
    rf.first_seen_sessions = sessions;
    const std::string slug = f.oracle + "-" + ShortHash(sig);
    rf.dir = (fs::path(cmd.out_dir) / "findings" / slug).string();
    const std::string replay = in_process ? ReferenceUri(s, cmd.faults) : cmd.target;
    // A live target ran the session with its fences: so does the script.
    if (!in_process && remote.fence) s = fuzz::FencedSession(s);
    const WrittenRepro w = WriteRepro(rf.dir, slug, s, r.findings, "rdmapct fuzz --target " + cmd.target, replay,
                                      in_process ? 0 : cmd.pause_after_reply_ms);
    rf.reproduced = w.reproduced;
    if (!cmd.quiet) {
      std::fprintf(out, "[%6.1fs] finding %s (%s)\n          %s\n", elapsed(), slug.c_str(),
                   w.reproduced ? (*w.reproduced ? "script reproduces it" : "script does not reproduce it") : "not replayed",
                   fuzz::FormatFinding(f).c_str());
      std::fflush(out);
    }
    WriteRunStats(fs::path(cmd.out_dir) / "stats.json", cmd, sessions, elapsed(), restarts, findings);
    if (cmd.stop_at_first) break;
  }
  WriteRunStats(fs::path(cmd.out_dir) / "stats.json", cmd, sessions, elapsed(), restarts, findings);
  std::fprintf(out, "%ld sessions in %.1f s (%.0f/s), %zu distinct finding%s, %d target restart%s; stats in %s/stats.json\n",
               sessions, elapsed(), elapsed() > 0 ? sessions / elapsed() : 0.0, findings.size(),
               findings.size() == 1 ? "" : "s", restarts, restarts == 1 ? "" : "s", cmd.out_dir.c_str());
  if (target_gone) {
    std::fprintf(err, "rdmapct fuzz: %s stopped answering and did not come back within %llds\n", cmd.target.c_str(),
                 static_cast<long long>(cmd.restart_wait.count()));
    return kExitUsage;
  }
  return findings.empty() ? kExitOk : kExitFail;
}

}  // namespace rdmapct::cli
