#include "conformance/runner.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>

namespace rdmapct::conformance {
namespace {

// Connect() calls are serialized: a connector need not be thread-safe.
class SerializedConnector : public targets::TargetConnector {
 public:
  explicit SerializedConnector(targets::TargetConnector& inner) : inner_(inner) {}
  std::unique_ptr<targets::Transport> Connect(std::chrono::milliseconds timeout, std::string& error) override {
    std::lock_guard<std::mutex> lock(mu_);
    return inner_.Connect(timeout, error);
  }
  std::string Describe() const override { return inner_.Describe(); }
  bool CanAccept() const override { return inner_.CanAccept(); }
  std::unique_ptr<targets::Transport> Accept(std::chrono::milliseconds timeout, std::string& error) override {
    std::lock_guard<std::mutex> lock(mu_);
    return inner_.Accept(timeout, error);
  }

 private:
  targets::TargetConnector& inner_;
  std::mutex mu_;
};

// A transport that gives up at once when the run is abandoned
// (RunOptions::stop reaches kStopAbandon): reads wait in slices of at most
// kStopPoll, so a case waiting for a silent target notices within one.
class StoppableTransport : public targets::Transport {
 public:
  static constexpr std::chrono::milliseconds kStopPoll{100};
  StoppableTransport(std::unique_ptr<targets::Transport> inner, const std::atomic<int>& stop)
      : inner_(std::move(inner)), stop_(stop) {}
  targets::IoStatus Write(wire::ByteSpan bytes) override {
    return Abandoned() ? targets::IoStatus::kError : inner_->Write(bytes);
  }
  targets::IoStatus Read(wire::Bytes& out, std::size_t max_bytes, std::chrono::milliseconds timeout) override {
    // Polling a transport that answers at once would spin until the
    // deadline, turning the in-process reference's free waits into busy ones.
    if (!inner_->WaitsInWallTime())
      return Abandoned() ? targets::IoStatus::kError : inner_->Read(out, max_bytes, timeout);
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (Abandoned()) return targets::IoStatus::kError;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      const targets::IoStatus st =
          inner_->Read(out, max_bytes, std::clamp(left, std::chrono::milliseconds{0}, kStopPoll));
      if (st != targets::IoStatus::kTimeout || left <= kStopPoll) return st;
    }
  }
  void ShutdownWrite() override { inner_->ShutdownWrite(); }
  void Abort() override { inner_->Abort(); }
  std::string last_error() const override {
    return Abandoned() ? "abandoned: the run was interrupted" : inner_->last_error();
  }
  std::string peer() const override { return inner_->peer(); }
  bool WaitsInWallTime() const override { return inner_->WaitsInWallTime(); }
  // decisions D-G14: the suite sizes its FPDUs by the connection's EMSS.
  std::optional<std::size_t> EffectiveMss() const override { return inner_->EffectiveMss(); }

 private:
  bool Abandoned() const { return stop_.load() >= kStopAbandon; }
  std::unique_ptr<targets::Transport> inner_;
  const std::atomic<int>& stop_;
};

class StoppableConnector : public targets::TargetConnector {
 public:
  StoppableConnector(targets::TargetConnector& inner, const std::atomic<int>& stop) : inner_(inner), stop_(stop) {}
  std::unique_ptr<targets::Transport> Connect(std::chrono::milliseconds timeout, std::string& error) override {
    std::unique_ptr<targets::Transport> t = inner_.Connect(timeout, error);
    if (!t) return t;
    return std::make_unique<StoppableTransport>(std::move(t), stop_);
  }
  std::string Describe() const override { return inner_.Describe(); }
  bool CanAccept() const override { return inner_.CanAccept(); }
  std::unique_ptr<targets::Transport> Accept(std::chrono::milliseconds timeout, std::string& error) override {
    std::unique_ptr<targets::Transport> t = inner_.Accept(timeout, error);
    if (!t) return t;
    return std::make_unique<StoppableTransport>(std::move(t), stop_);
  }

 private:
  targets::TargetConnector& inner_;
  const std::atomic<int>& stop_;
};

CaseResult NotRun(const LoadedCase& c, const std::string& why) {
  CaseResult r;
  r.id = c.id();
  r.title = c.proto.title();
  r.document = IdComponent(c.id(), 0);
  r.section = IdComponent(c.id(), 1);
  r.requirements.assign(c.proto.requirement().begin(), c.proto.requirement().end());
  r.level = c.proto.level();
  r.tags.assign(c.proto.tag().begin(), c.proto.tag().end());
  r.sweep_case = c.sweep_case;
  r.sweep_parameter = c.sweep_parameter;
  r.sweep_value = c.sweep_value;
  r.verdict = Verdict::kError;
  r.reason = "not run: " + why;
  return r;
}

// The order cases start in. With one job, the catalogue's. With more, the
// cases that need the target to themselves (NeedsExclusiveTarget) first, one
// at a time, then the rest in parallel: scattered among the others, each
// exclusive case would wait for every case in flight to end (the longest
// wait a case makes, up to a second) and hold a worker while it waits, so a
// run of 16 jobs over TCP took 6.5 s for 10.8 s of case time. Verdicts do not
// depend on the order: a case shares nothing with the cases before it but
// the target, and those that need its history run exclusively.
std::vector<std::size_t> RunOrder(const std::vector<const LoadedCase*>& cases, int jobs) {
  std::vector<std::size_t> order(cases.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (jobs <= 1) return order;
  std::stable_partition(order.begin(), order.end(),
                        [&](std::size_t i) { return NeedsExclusiveTarget(cases[i]->proto); });
  return order;
}

// Shared state of one run's workers.
class Pool {
 public:
  Pool(const std::vector<const LoadedCase*>& cases, const RunOptions& options, targets::TargetConnector& connector,
       const CaseCallback& on_case)
      : cases_(cases),
        options_(options),
        connector_(connector),
        on_case_(on_case),
        results_(cases.size()),
        abandoned_(cases.size(), false),
        order_(RunOrder(cases, options.jobs)) {}

  void Run(RunResult& out) {
    const int jobs = std::clamp<int>(options_.jobs, 1, std::max<int>(1, static_cast<int>(cases_.size())));
    std::vector<std::thread> workers;
    for (int i = 1; i < jobs; ++i) workers.emplace_back([this] { Work(); });
    Work();
    for (std::thread& t : workers) t.join();
    out.interrupted = Interrupted();
    for (std::size_t i = 0; i < cases_.size(); ++i) {
      if (out.interrupted && (!results_[i] || abandoned_[i])) {
        out.not_run.push_back(cases_[i]->id());
        continue;
      }
      if (!results_[i]) Finish(i, CaseRun{NotRun(*cases_[i], stop_reason_), false, false, "", {}});
      out.cases.push_back(std::move(results_[i]->result));
    }
    out.aborted = stopped_;
    out.abort_reason = stop_reason_;
    out.target_info = target_info_;
    if (options_.driver.undo_terminate_bitfield_order) {
      out.target_info.insert(out.target_info.begin(),
                             "DIAGNOSTIC RUN, not a certification: --quirk terminate-bitfields reads the target's "
                             "Terminate Control with its little-endian bit-field order undone");
    }
  }

 private:
  void Work() {
    while (true) {
      const std::size_t k = next_.fetch_add(1);
      if (k >= order_.size() || stopped_ || Interrupted()) return;
      const std::size_t i = order_[k];
      CaseRun run;
      {
        // Keep Memory and outcome cases need "the previous
        // connection" to be their own (docs/target-convention.md §2.4, §3.4).
        std::optional<std::unique_lock<std::shared_mutex>> exclusive;
        std::optional<std::shared_lock<std::shared_mutex>> shared;
        if (NeedsExclusiveTarget(cases_[i]->proto))
          exclusive.emplace(target_mu_);
        else
          shared.emplace(target_mu_);
        if (stopped_ || Interrupted()) return;
        run = RunCase(*cases_[i], connector_, options_.driver);
      }
      Finish(i, std::move(run));
    }
  }

  void Finish(std::size_t i, CaseRun run) {
    std::lock_guard<std::mutex> lock(mu_);
    if (run.abort_run && !stopped_) Stop(run.abort_reason);
    if (run.connect_failed) {
      if (++consecutive_failures_ >= options_.max_consecutive_connect_failures && !options_.keep_going) {
        // Not "refused": a target that accepts and never answers the MPA
        // Request fails the same way; the last reason says which it was.
        Stop("the target failed to set up " + std::to_string(consecutive_failures_) +
             " connections in a row (last: " + run.result.reason + ")");
      }
    } else if (!run.result.steps.empty()) {
      consecutive_failures_ = 0;
    }
    if (target_info_.empty()) target_info_ = run.target_info;
    // A case still in flight when the run was abandoned was cut short: its
    // verdict says nothing about the target.
    abandoned_[i] = options_.stop && options_.stop->load() >= kStopAbandon;
    results_[i] = std::move(run);
    // Deliver in selection order: everything up to the first unfinished case.
    while (delivered_ < results_.size() && results_[delivered_]) {
      if (on_case_ && !abandoned_[delivered_]) on_case_(results_[delivered_]->result, delivered_, results_.size());
      ++delivered_;
    }
  }

  bool Interrupted() const { return options_.stop && options_.stop->load() >= kStopFinish; }

  void Stop(const std::string& why) {
    stopped_ = true;
    stop_reason_ = why;
  }

  const std::vector<const LoadedCase*>& cases_;
  const RunOptions& options_;
  targets::TargetConnector& connector_;
  const CaseCallback& on_case_;
  std::vector<std::optional<CaseRun>> results_;
  std::vector<bool> abandoned_;
  std::vector<std::size_t> order_;  // RunOrder: the cases' indices in the order they start
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> stopped_{false};
  std::string stop_reason_;
  std::mutex mu_;
  std::shared_mutex target_mu_;
  int consecutive_failures_ = 0;
  std::size_t delivered_ = 0;
  std::vector<std::string> target_info_;
};

}  // namespace

bool NeedsExclusiveTarget(const proto::Case& c) {
  if (c.needs().keep_memory() || c.needs().previous_outcome()) return true;
  // The target's next connection to the suite is the case's own, and a
  // Connect Directive shapes only that one (convention §10).
  return std::any_of(c.step().begin(), c.step().end(), [](const proto::Step& s) {
    return (s.has_connect() && s.connect().keep_memory()) || s.has_listen() ||
           (s.has_expect() && s.expect().has_previous_commands());
  });
}

RunResult RunCases(const std::vector<const LoadedCase*>& cases, const RunOptions& options,
                   targets::TargetConnector& connector, const CaseCallback& on_case) {
  RunResult out;
  out.target = connector.Describe();
  out.profile = std::string(wire::ProfileName(options.profile));
  out.start = std::chrono::system_clock::now();
  const auto began = std::chrono::steady_clock::now();
  RunOptions opts = options;
  opts.driver.profile = options.profile;
  // One target, one record of its reaction times for all the run's cases.
  if (!opts.driver.reactions) opts.driver.reactions = std::make_shared<ReactionClock>();
  SerializedConnector serialized(connector);
  std::optional<StoppableConnector> stoppable;
  if (options.stop) stoppable.emplace(serialized, *options.stop);
  targets::TargetConnector& used = stoppable ? static_cast<targets::TargetConnector&>(*stoppable) : serialized;
  Pool pool(cases, opts, used, on_case);
  pool.Run(out);
  out.counts = CountVerdicts(out.cases);
  out.duration = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - began);
  return out;
}

RunResult RunSuite(const RunOptions& options, targets::TargetConnector& connector, const CaseCallback& on_case) {
  const CaseLoad load = LoadCases(options.cases_dir.empty() ? DefaultCasesDir() : options.cases_dir);
  if (!load.ok()) {
    RunResult out;
    out.target = connector.Describe();
    out.profile = std::string(wire::ProfileName(options.profile));
    out.start = std::chrono::system_clock::now();
    out.aborted = true;
    out.abort_reason = "invalid case files:";
    for (const std::string& e : load.errors) out.abort_reason += "\n  " + e;
    return out;
  }
  return RunCases(SelectCases(load.cases, options.filter), options, connector, on_case);
}

}  // namespace rdmapct::conformance
