#include "cli/cli_replay.h"

#include <limits>
#include <memory>

#include <nlohmann/json.hpp>

#include "capture/capture_decode.h"
#include "cli/cli_decode.h"
#include "cli/cli_error.h"
#include "cli/cli_interrupt.h"
#include "cli/commands.h"

namespace rdmapct::cli {
namespace {

using capture::CaptureIssue;
using capture::IssueSeverity;

// Common part of the renderers: issues go to `err` as they come, after
// flushing what was printed so far so that the order reads right.
class ReplaySink : public capture::CaptureDecodeSink {
 public:
  ReplaySink(const ReplayCommand& cmd, std::FILE* out, std::FILE* err) : cmd_(cmd), out_(out), err_(err) {}
  void OnIssue(const CaptureIssue& i) override {
    Record(i);
    std::fflush(out_);
    if (i.severity == IssueSeverity::kError)
      PrintError(err_, "replay", i.message);
    else
      PrintWarning(err_, "replay", i.message);
  }
  virtual void Finish(const capture::CaptureDecodeSummary&) {}

 protected:
  virtual void Record(const CaptureIssue&) {}
  std::size_t MaxOctets() const { return cmd_.verbose ? std::numeric_limits<std::size_t>::max() : 32; }

  const ReplayCommand& cmd_;
  std::FILE* out_;
  std::FILE* err_;
};

// A Connection block, then a Frame block per MPA frame, a blank line between blocks.
class TextSink : public ReplaySink {
 public:
  using ReplaySink::ReplaySink;
  void OnConnection(const capture::ConnectionDecode& c) override { Block(c.tree); }
  void OnFrame(const capture::CaptureFrame& f) override { Block(f.tree); }

 private:
  void Block(const wire::Field& tree) {
    if (!first_) std::fputc('\n', out_);
    first_ = false;
    const std::string text = wire::RenderText(tree, {MaxOctets(), cmd_.offsets});
    std::fwrite(text.data(), 1, text.size(), out_);
  }
  bool first_ = true;
};

// {"options", "frames": [...], "connections": [...], "capture", "warnings",
// "errors"}: frames are written as they come (one per line), the rest,
// small, at the end.
class JsonSink : public ReplaySink {
 public:
  using ReplaySink::ReplaySink;
  void OnConnection(const capture::ConnectionDecode& c) override {
    connections_.push_back(FieldToJson(c.tree, MaxOctets()));
  }
  // The file was cut short: one more error, not tied to a frame.
  void ReadError(const std::string& message) { errors_.push_back({{"message", message}}); }
  void OnFrame(const capture::CaptureFrame& f) override {
    Start();
    nlohmann::ordered_json j = FieldToJson(f.tree, MaxOctets());
    j["frame"] = f.number;
    j["capture_frame"] = f.capture_frame;
    j["connection"] = f.connection;
    j["direction"] = f.direction_name;
    std::fprintf(out_, "%s\n%s", frames_ == 0 ? "" : ",", j.dump().c_str());
    ++frames_;
  }
  void Finish(const capture::CaptureDecodeSummary& s) override {
    Start();
    const nlohmann::ordered_json capture = {{"file", s.read.file},
                                            {"link_type", s.read.link_type},
                                            {"link_type_name", capture::LinkTypeName(s.read.link_type)},
                                            {"frames", s.read.frames},
                                            {"tcp_segments", s.read.tcp_segments},
                                            {"not_tcp", s.read.skipped},
                                            {"unparsed", s.read.malformed},
                                            {"connections", s.connections},
                                            {"iwarp_connections", s.iwarp_connections},
                                            {"complete", s.read.error.empty()}};
    std::fprintf(out_, "%s],\"connections\":%s,\"capture\":%s,\"warnings\":%s,\"errors\":%s}\n", frames_ ? "\n" : "",
                 connections_.dump().c_str(), capture.dump().c_str(), warnings_.dump().c_str(), errors_.dump().c_str());
  }

 private:
  void Start() {
    if (started_) return;
    started_ = true;
    const nlohmann::ordered_json options = {
        {"profile", std::string(wire::ProfileName(cmd_.profile))},
        {"connection", cmd_.connection ? nlohmann::ordered_json(*cmd_.connection) : nlohmann::ordered_json(nullptr)}};
    std::fprintf(out_, "{\"options\":%s,\"frames\":[", options.dump().c_str());
  }
  void Record(const CaptureIssue& i) override {
    nlohmann::ordered_json j = {{"message", i.message}};
    if (i.connection) j["connection"] = *i.connection;
    if (i.direction >= 0) j["direction"] = i.direction == 0 ? "client -> server" : "server -> client";
    if (i.capture_frame != 0) j["capture_frame"] = i.capture_frame;
    if (i.frame != 0) j["frame"] = i.frame;
    if (i.error) {
      j["kind"] = wire::DecodeErrorKindName(i.error->kind);
      j["field"] = i.error->field;
      j["offset"] = i.error->offset;
      j["value"] = i.error->value;
    }
    (i.severity == IssueSeverity::kError ? errors_ : warnings_).push_back(std::move(j));
  }
  bool started_ = false;
  uint64_t frames_ = 0;
  nlohmann::ordered_json connections_ = nlohmann::ordered_json::array();
  nlohmann::ordered_json warnings_ = nlohmann::ordered_json::array();
  nlohmann::ordered_json errors_ = nlohmann::ordered_json::array();
};

}  // namespace

int RunReplayDecode(const ReplayCommand& cmd, std::FILE* out, std::FILE* err) {
  capture::CaptureDecodeOptions options;
  options.profile = cmd.profile;
  options.connection = cmd.connection;
  InterruptScope interrupt("rdmapct replay");
  options.stop = &interrupt.level();
  std::unique_ptr<ReplaySink> sink;
  JsonSink* json = nullptr;
  if (cmd.json) {
    auto j = std::make_unique<JsonSink>(cmd, out, err);
    json = j.get();
    sink = std::move(j);
  } else {
    sink = std::make_unique<TextSink>(cmd, out, err);
  }
  const capture::CaptureDecodeSummary s = capture::DecodeCaptureFile(cmd.file, options, *sink);
  if (!s.read.opened || !capture::SupportedLinkType(s.read.link_type)) {
    PrintError(err, "replay", s.read.error);
    return kExitUsage;
  }
  if (s.connection_missing) {
    std::fflush(out);
    Errorf(err, "replay", "--connection {}: {} has {} TCP connection{}{}", *cmd.connection, cmd.file, s.connections,
           s.connections == 1 ? "" : "s", s.connections == 0 ? "" : " (0.." + std::to_string(s.connections - 1) + ")");
    return kExitUsage;
  }
  if (s.connections == 0) {
    std::fflush(out);
    PrintWarning(err, "replay", fmt::format("{} holds no TCP connection ({} frames)", cmd.file, s.read.frames));
  }
  if (!s.read.error.empty() && json != nullptr) json->ReadError(s.read.error);
  sink->Finish(s);
  std::fflush(out);
  if (!s.read.error.empty()) PrintError(err, "replay", s.read.error);
  if (s.interrupted) {
    std::fprintf(err, "rdmapct replay: INTERRUPTED, partial: the frames above are those decoded before the signal\n");
    return kExitInterrupted;
  }
  return s.errors == 0 ? kExitOk : kExitFail;
}

}  // namespace rdmapct::cli
