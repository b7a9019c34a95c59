#include "fuzz/run_remote.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "fuzz/session_builder.h"
#include "fuzz/session_remote.h"
#include "fuzz/session_repro.h"
#include "fuzz/session_search.h"
#include "reference/model/faults.h"
#include "reference/wire/crc32c.h"
#include "reference/wire/mpa.h"
#include "reference/wire/ulp_convention.h"
#include "targets/target_uri.h"

namespace rdmapct::fuzz {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

bool WriteWhole(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  return static_cast<bool>(out.flush());
}

std::string ShortHash(const std::string& s) {
  char b[9];
  std::snprintf(b, sizeof b, "%08x",
                wire::Crc32c(wire::ByteSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size())));
  return b;
}

proto::Profile ToProto(wire::Profile p) {
  switch (p) {
    case wire::Profile::kRfc7306:
      return proto::RFC7306;
    case wire::Profile::kCommit:
      return proto::COMMIT;
    default:
      return proto::RFC5040;
  }
}

}  // namespace

std::string ReferenceUri(const proto::FuzzSession& s, const std::vector<std::string>& faults) {
  std::string uri = "reference?profile=" + std::string(wire::ProfileName(SessionProfile(s)));
  if (s.connection().target_crc_optional()) uri += "&crc=0";
  if (s.connection().target_markers()) uri += "&markers=1";
  for (const std::string& f : faults) uri += "&fault=" + f;
  return uri;
}

fs::path WriteReproFiles(const fs::path& dir, const std::string& slug, const proto::FuzzSession& s,
                         const std::vector<Finding>& findings, const std::string& origin, const TargetShape& target) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  WriteWhole(dir / "session.pb", s.SerializeAsString());
  std::string text;
  google::protobuf::TextFormat::PrintToString(s, &text);
  WriteWhole(dir / "session.txt", text);
  ReproOptions o;
  o.id = "fuzz/session/" + slug;
  o.findings = findings;
  o.origin = origin;
  o.target = target;
  const fs::path script = dir / "repro.textproto";
  WriteWhole(script, CaseFileText(SessionToCase(s, o)));
  return script;
}

namespace {

// The profile a live target claims in its Advertisement (RFC 7306 and
// COMMIT flags), read from the Reply to a plain Request; nullopt when it
// gives none (down, restarting, or not a convention target).
// What a live target's Advertisement claims.
struct TargetClaims {
  wire::Profile profile;
  TargetShape shape;  // its IRD and regions
};

std::optional<TargetClaims> ClaimsOf(targets::TargetConnector& connector, const RemoteOptions& o) {
  std::string error;
  std::unique_ptr<targets::Transport> t = connector.Connect(o.connect_timeout, error);
  if (!t) return std::nullopt;
  proto::FuzzSession plain;
  plain.mutable_connection()->set_profile(proto::RFC5040);
  if (t->Write(wire::EncodeMpaStartupFrame(BuildRequest(plain))) != targets::IoStatus::kOk) return std::nullopt;
  wire::Bytes got;
  const auto end = Clock::now() + o.reply_timeout;
  auto reply = wire::DecodeMpaStartupFrame(got, {wire::MpaFrameKind::kReply});
  while (!reply.ok() && Clock::now() < end) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    if (t->Read(got, 4096, left) != targets::IoStatus::kOk) break;
    reply = wire::DecodeMpaStartupFrame(got, {wire::MpaFrameKind::kReply});
  }
  t->Abort();
  if (!reply.ok() || reply.value().reject) return std::nullopt;
  auto adv = wire::DecodeAdvertisementFromPrivateData(reply.value().private_data, false);
  if (!adv.ok()) return std::nullopt;
  const uint32_t flags = adv.value().flags;
  return TargetClaims{flags & wire::kFlagCommit    ? wire::Profile::kCommit
                      : flags & wire::kFlagRfc7306 ? wire::Profile::kRfc7306
                                                   : wire::Profile::kRfc5040,
                      ShapeOf(adv.value())};
}

class RemoteRun {
 public:
  explicit RemoteRun(const RemoteRunOptions& o) : o_(o), in_process_(o.target == "reference") {}

  RemoteRunResult Run();

 private:
  bool Prepare();
  OracleResult RunOne(const proto::FuzzSession& s0);
  bool SearchRound(uint64_t round);
  void OnNoAnswer(const Finding& f);
  // `seen_at`: the run's session count when the session ran.
  void Record(const proto::FuzzSession& s, const std::vector<Finding>& findings, long seen_at);
  void RecordAlso(SearchResult::Found found, long before);
  void WriteStats() const;
  void WriteSummary() const;
  void MaybeStatus();
  void Say(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }
  std::string Stamp() const {
    char b[24];
    std::snprintf(b, sizeof b, "[%6.1fs] ", Elapsed());
    return b;
  }
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  RemoteRunResult Fail(RemoteRunResult::Status st, std::string error) {
    result_.status = st;
    result_.error = std::move(error);
    return std::move(result_);
  }

  bool SettleProfile();

  const RemoteRunOptions& o_;
  const bool in_process_;
  std::optional<wire::Profile> profile_;  // the sessions' (--profile, or what the target claims)
  model::FaultSet faults_;
  std::unique_ptr<targets::TargetConnector> connector_;
  std::unique_ptr<SessionWorker> worker_;  // the in-process reference, capped
  RemoteOptions remote_;
  Clock::time_point start_ = Clock::now(), deadline_;
  RemoteRunResult result_;
  int answered_ = 0, restart_commands_ = 0;
  long sessions_seen_ = 0;  // sessions begun, the current search's included
  Clock::time_point last_status_ = Clock::now();
  bool target_gone_ = false, stop_ = false;
  std::optional<Clock::time_point> unanswered_since_;
  std::mutex bookkeeping_;  // --jobs: live sessions end on several threads
};

bool RemoteRun::Prepare() {
  for (const std::string& n : o_.faults) {
    if (auto bad = faults_.AddByNames(n)) {
      result_.error = "unknown fault \"" + std::string(*bad) + "\" (see rdmapct --list-faults)";
      return false;
    }
  }
  if (!o_.faults.empty() && !in_process_) {
    result_.error = "--fault applies to --target reference only";
    return false;
  }
  if (!in_process_) {
    connector_ = targets::MakeConnector(o_.target, {}, result_.error);
    if (!connector_) return false;
  }
  std::error_code ec;
  fs::create_directories(o_.out_dir, ec);
  if (ec) {
    result_.error = "cannot create " + o_.out_dir + ": " + ec.message();
    return false;
  }
  if (in_process_) worker_ = std::make_unique<SessionWorker>(faults_, o_.limits);
  remote_.session_time = o_.limits.time;
  remote_.settle = std::chrono::milliseconds(o_.settle_ms);
  remote_.pause_after_reply = std::chrono::milliseconds(o_.pause_after_reply_ms);
  remote_.fence = o_.fence;
  result_.stats_file = fs::path(o_.out_dir) / "stats.json";
  result_.summary_file = fs::path(o_.out_dir) / "summary.md";
  return SettleProfile();
}

// A live target runs one profile: the one it claims, which --profile may
// name but not contradict (sessions of another profile would be a stream of
// false findings).
bool RemoteRun::SettleProfile() {
  profile_ = o_.profile;
  if (in_process_) return true;
  const std::optional<TargetClaims> claims = ClaimsOf(*connector_, remote_);
  if (!claims) return true;        // no answer yet: the run reports it
  remote_.target = claims->shape;  // the twin is shaped like the target (E2)
  const std::optional<wire::Profile> claimed = claims->profile;
  if (o_.profile && *o_.profile != *claimed) {
    result_.error = "--profile " + std::string(wire::ProfileName(*o_.profile)) + " conflicts with " + o_.target +
                    ", whose Advertisement claims " + std::string(wire::ProfileName(*claimed)) +
                    " (leave --profile out to use the target's)";
    return false;
  }
  if (!o_.profile)
    Say(Stamp() + "profile " + std::string(wire::ProfileName(*claimed)) + ", from the target's Advertisement");
  profile_ = claimed;
  return true;
}

// One session; remote runs keep to the profile the target runs.
OracleResult RemoteRun::RunOne(const proto::FuzzSession& s0) {
  {
    const std::lock_guard<std::mutex> lock(bookkeeping_);
    ++sessions_seen_;
    MaybeStatus();
  }
  proto::FuzzSession s = s0;
  if (profile_) s.mutable_connection()->set_profile(ToProto(*profile_));
  if (in_process_) return std::move(worker_->Run(s, deadline_, o_.stop).oracles);
  s.mutable_connection()->set_target_crc_optional(false);
  s.mutable_connection()->set_target_markers(false);
  RemoteResult r = RunSessionRemote(s, *connector_, remote_);
  const std::lock_guard<std::mutex> lock(bookkeeping_);
  // Only an MPA Reply shows that the target is up. A close without one is
  // no sign of life even where the reference would have closed too (a
  // Request it refuses): a port forwarder in front of a dead guest closes
  // every connection. Counting those as answers made a dead siw guest look
  // up every other session, and its sessions as fuzzing done.
  const bool no_answer = !r.oracles.findings.empty() && r.oracles.findings.front().oracle == "no-answer";
  if (!r.replied && (no_answer || unanswered_since_)) ++result_.sessions_not_answered;
  if (r.replied) {
    ++answered_;
    if (unanswered_since_) {
      ++result_.restarts;  // it came back
      unanswered_since_.reset();
      Say(Stamp() + "target answering again");
    }
  }
  return std::move(r.oracles);
}

// The target may be restarting (a crash, a VM reboot). A TCP connect proves
// nothing (a port forwarder accepts for a dead guest): it is back when a
// session gets an MPA Reply again.
void RemoteRun::OnNoAnswer(const Finding& f) {
  if (!unanswered_since_) {
    unanswered_since_ = Clock::now();
    Say(Stamp() + "target not answering (" + f.description + "); waiting up to " +
        std::to_string(o_.restart_wait.count()) + "s");
  } else if (Clock::now() - *unanswered_since_ >= o_.restart_wait) {
    if (o_.restart_command.empty() || restart_commands_ >= 3) {
      target_gone_ = true;
      return;
    }
    ++restart_commands_;
    Say(Stamp() + "running the restart command: " + o_.restart_command);
    const int rc = std::system(o_.restart_command.c_str());
    if (rc != 0) Say(Stamp() + "restart command exited with status " + std::to_string(rc));
    unanswered_since_ = Clock::now();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
}

// A new finding: its input, script and (replayed) verdict; a known one is
// counted, and replayed again (its input replacing the first) while the
// finding is flaky, at most three times.
void RemoteRun::Record(const proto::FuzzSession& s, const std::vector<Finding>& findings, long seen_at) {
  const Finding& f = findings.front();
  const std::string sig = FindingSignature(f);
  RunFinding& rf = result_.findings[sig];
  if (++rf.count > 1 && (!rf.flaky() || rf.replays > 3)) return;
  if (rf.count == 1) {
    rf.signature = sig;
    rf.first = f;
    rf.first_seen_s = Elapsed();
    rf.first_seen_sessions = seen_at;
  }
  const std::string slug = f.oracle + "-" + ShortHash(sig);
  rf.dir = (fs::path(o_.out_dir) / "findings" / slug).string();
  ++rf.replays;
  ReplayRequest req;
  req.dir = rf.dir;
  // A live target ran the session with its fences: so does the script.
  const proto::FuzzSession& ran = in_process_ || !o_.fence ? s : FencedSession(s);
  req.script = WriteReproFiles(rf.dir, slug, ran, findings, "rdmapct fuzz --target " + o_.target, remote_.target);
  req.profile = SessionProfile(s);
  req.target = in_process_ ? ReferenceUri(s, o_.faults) : o_.target;
  req.pause_after_reply_ms = in_process_ ? 0 : o_.pause_after_reply_ms;
  if (in_process_ && (f.oracle == "resource" || f.oracle == "crash")) {
    // Its script would take the replaying process over the caps: the
    // session itself is run again, in a new child under the same caps
    // (and the run's deadline: cut there, it is "not replayed").
    SessionWorker again(faults_, o_.limits);
    const WorkerResult w = again.Run(s, deadline_, o_.stop);
    if (!w.cut) rf.reproduced = !w.oracles.findings.empty() && w.oracles.findings.front().oracle == f.oracle;
  } else if (o_.replay) {
    rf.reproduced = o_.replay(req);
  }
  if (rf.count > 1 && rf.flaky()) return WriteStats();
  Say(Stamp() + (rf.count > 1 ? "finding " + slug + " is no longer flaky" : "finding " + slug) + " (" +
      (rf.reproduced ? (*rf.reproduced ? "reproducer reproduces it" : "flaky: reproducer does not reproduce it")
                     : "not replayed") +
      ")\n          " + FormatFinding(f) + "\n          " + sig);
  WriteStats();
}

// One search, to its first finding (false: nothing more to do).
bool RemoteRun::SearchRound(uint64_t round) {
  SearchOptions so;
  so.seed = o_.seed + round;
  so.deadline = deadline_;
  so.only_profile = profile_;
  so.stop = o_.stop;
  if (!in_process_) {
    // Batches fix the session stream; --jobs only says how many run at once.
    so.batch = 32;
    so.jobs = o_.jobs;
  }
  so.budget = o_.runs ? static_cast<int>(std::max<long>(0, *o_.runs - result_.sessions)) : 1 << 30;
  if (so.budget == 0) return false;
  SearchResult r = SearchSessions([this](const proto::FuzzSession& s) { return RunOne(s); }, so);
  // Every session that ran counts, the rest of a finding's batch too; each
  // finding is first seen at its own place in the stream, not the batch's end.
  const long before = result_.sessions;
  result_.sessions += std::max(r.sessions, r.executed);
  if (r.findings.empty()) return false;  // budget or deadline
  const auto record_also = [&] {
    for (SearchResult::Found& f : r.also) RecordAlso(std::move(f), before);
  };
  proto::FuzzSession s = r.session;
  if (profile_) s.mutable_connection()->set_profile(ToProto(*profile_));
  if (r.findings.front().oracle == "no-answer") {
    if (answered_ == 0) {
      stop_ = true;
      result_.status = RemoteRunResult::Status::kNeverAnswered;
      result_.error = o_.target + " never answered: " + r.findings.front().description;
      return false;
    }
    OnNoAnswer(r.findings.front());
    record_also();
    return true;
  }
  Record(s, r.findings, before + r.sessions);
  record_also();
  return !o_.stop_at_first;
}

// A later finding of the same batch: recorded like the first, except that
// "no answer" (the target went quiet) is left to the first one to handle.
void RemoteRun::RecordAlso(SearchResult::Found found, long before) {
  if (found.findings.front().oracle == "no-answer") return;
  if (profile_) found.session.mutable_connection()->set_profile(ToProto(*profile_));
  Record(found.session, found.findings, before + found.number);
}

// Every status_every: sessions, sessions/s, findings (hits), distinct, RSS.
void RemoteRun::MaybeStatus() {
  if (!o_.progress || Clock::now() - last_status_ < o_.status_every) return;
  last_status_ = Clock::now();
  long hits = 0;
  for (const auto& [sig, f] : result_.findings) hits += f.count;
  const double elapsed = Elapsed();
  char b[200];
  std::snprintf(b, sizeof b, "%ld sessions, %.0f/s, %ld findings, %zu distinct, RSS %zu MB", sessions_seen_,
                elapsed > 0 ? sessions_seen_ / elapsed : 0.0, hits, result_.distinct(), SelfRssKb() / 1024);
  std::string line = Stamp() + b;
  if (result_.sessions_not_answered > 0)
    line += ", " + std::to_string(result_.sessions_not_answered) + " while the target did not answer";
  if (worker_) line += " + " + std::to_string(worker_->last_rss_kb() / 1024) + " MB session process";
  Say(line);
}

// summary.md: the run and every finding, flaky ones apart.
void RemoteRun::WriteSummary() const {
  std::ofstream md(result_.summary_file);
  md << "# rdmapct fuzz --target " << o_.target << (result_.interrupted ? " (interrupted)" : "") << "\n\n"
     << result_.sessions << " sessions in " << static_cast<long>(Elapsed()) << " s" << NotAnswered(result_) << ", seed "
     << o_.seed << ", " << result_.distinct() << " distinct finding(s), " << result_.flaky() << " flaky, "
     << result_.restarts << " target restart(s)"
     << (result_.interrupted ? "; interrupted (SIGINT/SIGTERM) before the end of its budget" : "")
     << ".\n\n| signature | hits | first seen (s) | reproduced | directory |\n|---|---|---|---|---|\n";
  for (const auto& [sig, f] : result_.findings) {
    md << "| `" << sig << "` | " << f.count << " | " << static_cast<long>(f.first_seen_s) << " | "
       << (f.reproduced ? (*f.reproduced ? "yes" : "no (flaky)") : "not replayed") << " | " << f.dir << " |\n";
  }
}

void RemoteRun::WriteStats() const {
  nlohmann::json j;
  const double elapsed = Elapsed();
  j["target"] = o_.target;
  j["seed"] = o_.seed;
  j["sessions"] = result_.sessions;
  j["seconds"] = elapsed;
  j["sessions_per_second"] = elapsed > 0 ? result_.sessions / elapsed : 0.0;
  j["target_restarts"] = result_.restarts;
  // Sessions that reached no target (it was down or restarting), and the
  // rate of the others.
  j["sessions_not_answered"] = result_.sessions_not_answered;
  j["answered_sessions_per_second"] =
      elapsed > 0 ? std::max(0L, result_.sessions - result_.sessions_not_answered) / elapsed : 0.0;
  j["findings"] = nlohmann::json::array();
  for (const auto& [sig, f] : result_.findings) {
    nlohmann::json x{{"signature", sig},
                     {"oracle", f.first.oracle},
                     {"description", f.first.description},
                     {"first_seen_s", f.first_seen_s},
                     {"first_seen_sessions", f.first_seen_sessions},
                     {"count", f.count},
                     {"dir", f.dir}};
    if (f.reproduced) x["reproduced"] = *f.reproduced;
    x["flaky"] = f.flaky();
    if (!f.first.requirement.empty()) x["requirement"] = f.first.requirement;
    if (!f.first.shape.empty()) x["shape"] = f.first.shape;
    j["findings"].push_back(x);
  }
  j["interrupted"] = result_.interrupted;
  j["distinct_findings"] = result_.distinct();
  j["flaky_findings"] = result_.flaky();
  WriteWhole(result_.stats_file, j.dump(2) + "\n");
}

RemoteRunResult RemoteRun::Run() {
  if (!Prepare()) return Fail(RemoteRunResult::Status::kBadOptions, result_.error);
  deadline_ = start_ + o_.time;
  remote_.run_deadline = deadline_;
  for (uint64_t round = 0; Clock::now() < deadline_ && !target_gone_ && !stop_ && !(o_.stop && o_.stop->load() > 0);
       ++round) {
    if (!SearchRound(round)) break;
  }
  if (result_.status == RemoteRunResult::Status::kNeverAnswered) return std::move(result_);
  result_.seconds = Elapsed();
  result_.interrupted = o_.stop && o_.stop->load() > 0;
  WriteStats();
  WriteSummary();
  if (target_gone_) {
    result_.status = RemoteRunResult::Status::kTargetGone;
    result_.error =
        o_.target + " stopped answering and did not come back within " + std::to_string(o_.restart_wait.count()) + "s";
  }
  return std::move(result_);
}

}  // namespace

std::size_t RemoteRunResult::distinct() const {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(), [](const auto& e) { return !e.second.flaky(); }));
}

RemoteRunResult RunRemote(const RemoteRunOptions& options) { return RemoteRun(options).Run(); }

std::string NotAnswered(const RemoteRunResult& r) {
  if (r.sessions_not_answered == 0) return "";
  return " (" + std::to_string(r.sessions_not_answered) + " of them while the target did not answer)";
}

}  // namespace rdmapct::fuzz
