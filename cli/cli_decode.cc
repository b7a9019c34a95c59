#include "cli/cli_decode.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "cli/cli_error.h"
#include "cli/commands.h"
#include "reference/wire/hex.h"

namespace rdmapct::cli {
namespace {

using wire::Bytes;
using wire::ByteSpan;

// ---- input -------------------------------------------------------------------

struct Input {
  Bytes octets;
  bool hex = false;
  std::string name;  // for messages
};

bool ReadAll(std::istream& in, Bytes& out) {
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// --format auto: a .hex/.txt name is hex, a .bin name binary; otherwise hex
// when the file is plain text (hex files can only hold printable ASCII).
bool IsHex(const DecodeCommand& cmd, const Input& in) {
  if (cmd.format != InputFormat::kAuto) return cmd.format == InputFormat::kHex;
  if (EndsWith(in.name, ".hex") || EndsWith(in.name, ".txt")) return true;
  if (EndsWith(in.name, ".bin")) return false;
  return wire::LooksLikeText(in.octets);
}

// Reads the input; on failure prints the reason and returns false.
bool ReadInput(const DecodeCommand& cmd, Input& in, std::FILE* err) {
  if (cmd.hex) {
    in.octets.assign(cmd.hex->begin(), cmd.hex->end());
    in.hex = cmd.format != InputFormat::kBinary;
    in.name = "--hex";
    return true;
  }
  in.name = cmd.input;
  if (cmd.input == "-") {
    if (!ReadAll(std::cin, in.octets)) {
      PrintError(err, "decode", "cannot read standard input");
      return false;
    }
  } else {
    std::ifstream f(cmd.input, std::ios::binary);
    if (!f || !ReadAll(f, in.octets)) {
      Errorf(err, "decode", "cannot read {}: {}", cmd.input, std::strerror(errno));
      return false;
    }
  }
  in.hex = IsHex(cmd, in);
  return true;
}

// ---- output ------------------------------------------------------------------

std::string ErrorLine(const wire::StreamError& e) {
  std::string s = wire::DescribeStreamError(e.error);
  if (e.frame_number != 0) s += " (frame " + std::to_string(e.frame_number) + ")";
  return ErrorText("decode", s);
}

// Common part of the two renderers: errors go to `err` as they happen,
// after flushing what was printed so far so that the order reads right.
class OutputSink : public wire::StreamDecodeSink {
 public:
  OutputSink(const DecodeCommand& cmd, std::FILE* out, std::FILE* err) : cmd_(cmd), out_(out), err_(err) {}
  void OnStartupFrame(const wire::DecodedStartupFrame& f) override { Emit(wire::DescribeStartupFrame(f)); }
  void OnSegment(const wire::DecodedSegment& s) override { Emit(wire::DescribeSegment(s, cmd_.options.profile)); }
  void OnError(const wire::StreamError& e) override {
    Record(e);
    std::fflush(out_);
    std::fputs(ErrorLine(e).c_str(), err_);
  }
  virtual void Finish() {}

 protected:
  virtual void Emit(const wire::Field& frame) = 0;
  virtual void Record(const wire::StreamError&) {}
  std::size_t MaxOctets() const { return cmd_.verbose ? std::numeric_limits<std::size_t>::max() : 32; }

  const DecodeCommand& cmd_;
  std::FILE* out_;
  std::FILE* err_;
};

// One tshark -V style block per frame, a blank line between blocks.
class TextSink : public OutputSink {
 public:
  using OutputSink::OutputSink;

 private:
  void Emit(const wire::Field& frame) override {
    if (!first_) std::fputc('\n', out_);
    first_ = false;
    const std::string text = wire::RenderText(frame, {MaxOctets(), cmd_.offsets});
    std::fwrite(text.data(), 1, text.size(), out_);
  }
  bool first_ = true;
};

// {"options": {...}, "frames": [...], "errors": [...]}: written frame by
// frame (one frame per line) so that nothing is held back, and always
// closed, so the document stays valid after an error.
class JsonSink : public OutputSink {
 public:
  JsonSink(const DecodeCommand& cmd, std::FILE* out, std::FILE* err) : OutputSink(cmd, out, err) {
    const wire::StreamDecodeOptions& o = cmd.options;
    static constexpr const char* kHandshake[] = {"auto", "yes", "no"};
    nlohmann::ordered_json options = {{"framing", cmd.ddp ? "ddp" : "mpa"},
                                      {"profile", std::string(wire::ProfileName(o.profile))},
                                      {"continue", o.continue_after_errors}};
    if (!cmd.ddp) {
      options["crc"] = o.crc_enabled;
      options["markers"] = o.markers_enabled;
      options["handshake"] = kHandshake[static_cast<int>(o.handshake)];
    }
    std::fprintf(out_, "{\"options\":%s,\"frames\":[", options.dump().c_str());
  }
  void Finish() override { std::fprintf(out_, "%s],\"errors\":%s}\n", first_ ? "" : "\n", errors_.dump().c_str()); }

 private:
  void Emit(const wire::Field& frame) override {
    std::fprintf(out_, "%s\n%s", first_ ? "" : ",", FieldToJson(frame, MaxOctets()).dump().c_str());
    first_ = false;
  }
  void Record(const wire::StreamError& e) override {
    errors_.push_back({{"message", wire::DescribeStreamError(e.error)},
                       {"kind", wire::DecodeErrorKindName(e.error.kind)},
                       {"field", e.error.field},
                       {"offset", e.error.offset},
                       {"value", e.error.value},
                       {"frame", e.frame_number},
                       {"fatal", e.fatal}});
  }
  bool first_ = true;
  nlohmann::ordered_json errors_ = nlohmann::ordered_json::array();
};

wire::StreamDecodeSummary Decode(const DecodeCommand& cmd, const Input& in, const std::vector<Bytes>& lines,
                                 OutputSink& sink) {
  if (!cmd.ddp) return wire::DecodeMpaStream(in.octets, cmd.options, sink);
  std::vector<ByteSpan> segments;
  if (in.hex) {
    for (const Bytes& l : lines) segments.emplace_back(l);
  } else {
    segments.emplace_back(in.octets);  // a binary file is one segment
  }
  return wire::DecodeDdpSegments(segments, cmd.options, sink);
}

}  // namespace

nlohmann::ordered_json FieldToJson(const wire::Field& f, std::size_t max_octets) {
  nlohmann::ordered_json j = {{"name", f.name}, {"value", f.value}, {"offset", f.offset}, {"length", f.length}};
  if (f.number) j["number"] = *f.number;
  if (f.bit_width != 0) {
    j["bit_shift"] = f.bit_shift;
    j["bit_width"] = f.bit_width;
  }
  if (f.octets) {
    const std::size_t n = std::min(max_octets, f.octets->size());
    j["octets"] = wire::HexOctets(ByteSpan(*f.octets).first(n));
    if (n < f.octets->size()) j["octets_truncated"] = true;
  }
  if (f.problem) j["problem"] = true;
  if (!f.children.empty()) {
    nlohmann::ordered_json children = nlohmann::ordered_json::array();
    for (const wire::Field& c : f.children) children.push_back(FieldToJson(c, max_octets));
    j["children"] = std::move(children);
  }
  return j;
}

int RunDecode(const DecodeCommand& cmd, std::FILE* out, std::FILE* err) {
  Input in;
  if (!ReadInput(cmd, in, err)) return kExitUsage;
  std::vector<Bytes> lines;  // --ddp hex: one segment per line
  if (in.hex) {
    const std::string_view text(reinterpret_cast<const char*>(in.octets.data()), in.octets.size());
    wire::DecodeError bad{};
    bool ok = true;
    if (cmd.ddp) {
      auto r = wire::ParseHexLines(text);
      if (r) {
        for (wire::HexLine& l : *r) lines.push_back(std::move(l.octets));
      } else {
        ok = false;
        bad = r.error();
      }
    } else if (auto r = wire::ParseHex(text)) {
      in.octets = std::move(r).value();
    } else {
      ok = false;
      bad = r.error();
    }
    if (!ok) {
      Errorf(err, "decode", "{} in {}", wire::DescribeHexError(bad, text), in.name);
      return kExitFail;
    }
  }
  // Nothing to decode is malformed input, not a silent success.
  if (cmd.ddp && in.hex ? lines.empty() : in.octets.empty()) {
    Errorf(err, "decode", "{} holds no octets to decode", in.name == "-" ? "standard input" : in.name);
    return kExitFail;
  }
  std::unique_ptr<OutputSink> sink;
  if (cmd.json)
    sink = std::make_unique<JsonSink>(cmd, out, err);
  else
    sink = std::make_unique<TextSink>(cmd, out, err);
  const wire::StreamDecodeSummary summary = Decode(cmd, in, lines, *sink);
  sink->Finish();
  std::fflush(out);
  return summary.ok() ? kExitOk : kExitFail;
}

}  // namespace rdmapct::cli
