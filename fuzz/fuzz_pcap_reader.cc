// Capture reading and decoding (capture/pcap_reader.h, tcp_reassembly.h,
// capture_decode.h): what `rdmapct replay FILE --decode` runs on a user's
// file.
//
// Input layout: the whole input is the capture file (pcap or pcapng, any
// link type), handed to libpcap through fmemopen (pcap_fopen_offline), then
// every TCP segment goes to the reassembler and every connection to the
// decoder, with a small out-of-order cap so that the cap is reached.
// Oracles:
//  - the reader's counts add up: frames = TCP segments + skipped + not
//    parsed; segments arrive with increasing frame numbers within the count;
//  - warnings and the error are single lines; at most kMaxStoredWarnings
//    are kept, in frame order;
//  - the reassembler never hands out more octets than came in, per
//    direction, and its frame maps name frames of that direction;
//  - decoded frames are numbered 1, 2, ... in output order, belong to the
//    connection announced before them, name a capture frame that was read,
//    and start with the "Capture" node; every issue is one line; rendering
//    never fails;
//  - the streaming decoder behind `--audit` (capture_stream.h), fed the
//    same segments, hands up the same units per direction and the same
//    issues in the same order as the batch decoder (describe off), and
//    keeps its promise that no later unit ends before the frame it gave.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "capture/capture_decode.h"
#include "capture/capture_stream.h"
#include "capture/pcap_reader.h"
#include "capture/tcp_reassembly.h"
#include "fuzz/support.h"

namespace {

using namespace rdmapct::capture;

bool OneLine(const std::string& s) { return !s.empty() && s.find('\n') == std::string::npos; }

class CheckingSink : public CaptureDecodeSink {
 public:
  explicit CheckingSink(uint64_t frames_read) : frames_read_(frames_read) {}
  void OnConnection(const ConnectionDecode& c) override {
    FUZZ_CHECK(c.connection != nullptr && c.framing != nullptr);
    connection_ = c.connection->index;
    (void)rdmapct::wire::RenderText(c.tree);
  }
  void OnFrame(const CaptureFrame& f) override {
    FUZZ_CHECK(f.number == ++frames_);
    FUZZ_CHECK(f.connection == connection_);
    FUZZ_CHECK(f.direction == 0 || f.direction == 1);
    FUZZ_CHECK(f.capture_frame >= 1 && f.capture_frame <= frames_read_);
    FUZZ_CHECK(!f.tree.children.empty() && f.tree.children[0].name == "Capture");
    (void)rdmapct::wire::RenderText(f.tree, {64, true});
  }
  void OnIssue(const CaptureIssue& i) override {
    FUZZ_CHECK(OneLine(i.message));
    FUZZ_CHECK(i.capture_frame <= frames_read_);
    if (i.frame != 0) FUZZ_CHECK(i.frame == frames_);
  }

 private:
  uint64_t frames_read_;
  uint64_t frames_ = 0;
  std::size_t connection_ = 0;
};

// What a decoder handed up, comparable between the two (the connection and
// direction are the key of UnitsSeen).
struct UnitSeen {
  CapturedUnit::Kind kind;
  uint64_t offset, length, capture_frame, last_capture_frame;
  friend bool operator==(const UnitSeen&, const UnitSeen&) = default;
};

UnitSeen Seen(const CapturedUnit& u) { return {u.kind, u.offset, u.length, u.capture_frame, u.last_capture_frame}; }

// Units per (connection, direction): the streaming decoder interleaves connections.
using UnitsSeen = std::map<std::pair<std::size_t, int>, std::vector<UnitSeen>>;

struct BatchRecorder : CaptureDecodeSink {
  UnitsSeen units;
  std::vector<std::string> issues;
  void OnConnection(const ConnectionDecode&) override {}
  void OnFrame(const CaptureFrame&) override {}
  void OnIssue(const CaptureIssue& i) override { issues.push_back(i.message); }
  void OnUnit(const CapturedUnit& u) override { units[{u.connection, u.direction}].push_back(Seen(u)); }
};

struct StreamRecorder : CaptureStreamSink {
  UnitsSeen units;
  std::vector<std::string> issues;
  std::vector<std::array<uint64_t, 2>> lowest;  // per connection
  void OnFraming(const ReassembledConnection&, const ConnectionFraming&) override {}
  void OnUnit(const CapturedUnit& u) override {
    units[{u.connection, u.direction}].push_back(Seen(u));
    if (u.connection < lowest.size()) FUZZ_CHECK(u.last_capture_frame >= lowest[u.connection][u.direction]);
  }
  void OnProgress(std::size_t c, const std::array<uint64_t, 2>& low) override {
    if (lowest.size() <= c) lowest.resize(c + 1);
    FUZZ_CHECK(low[0] >= lowest[c][0] && low[1] >= lowest[c][1]);
    lowest[c] = low;
  }
  void OnConnectionEnd(const ConnectionDecode&) override {}
  void OnIssue(const CaptureIssue& i) override { issues.push_back(i.message); }
};

// Batch and streaming decoding of the same segments agree.
void CompareWithStreaming(const std::vector<TcpSegment>& segments, const ReassemblyOptions& ro,
                          const CaptureReadSummary& read) {
  TcpReassembler reassembler(ro);
  for (const TcpSegment& s : segments) reassembler.Add(s);
  reassembler.Finish();
  BatchRecorder batch;
  CaptureDecodeOptions bo;
  bo.describe = false;
  CaptureDecodeSummary batch_summary;
  batch_summary.read = read;
  // The capture's own warnings come first in both.
  for (const CaptureWarning& w : read.warnings) batch.issues.push_back(w.message);
  if (read.warnings_dropped != 0) {
    batch.issues.push_back(std::to_string(read.warnings_dropped) + " more frames could not be parsed");
  }
  DecodeConnections(reassembler, bo, batch, batch_summary);
  CaptureStreamOptions so;
  so.reassembly = ro;
  StreamRecorder stream;
  CaptureStreamDecoder decoder(so, stream);
  for (const TcpSegment& s : segments) decoder.Add(s);
  const CaptureDecodeSummary summary = decoder.Finish(read);
  for (const std::string& m : stream.issues) {
    if (m.find("not compared with their first copy") != std::string::npos) return;  // beyond the history
  }
  FUZZ_CHECK(stream.units == batch.units);
  FUZZ_CHECK(stream.issues == batch.issues);
  FUZZ_CHECK(summary.frames == batch_summary.frames);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;  // fmemopen refuses an empty buffer
  std::vector<uint8_t> file(data, data + size);
  std::FILE* f = fmemopen(file.data(), file.size(), "rb");
  if (f == nullptr) return 0;
  ReassemblyOptions ro;
  ro.max_out_of_order = 4096;
  TcpReassembler reassembler(ro);
  uint64_t last_frame = 0, segments = 0;
  CaptureReadSummary summary;
  std::vector<TcpSegment> kept;
  std::vector<std::vector<uint8_t>> payloads;
  const bool ok = ReadCaptureStream(
      f, "fuzz",
      [&](const TcpSegment& s) {
        FUZZ_CHECK(s.frame > last_frame);
        last_frame = s.frame;
        ++segments;
        reassembler.Add(s);
        payloads.emplace_back(s.payload.begin(), s.payload.end());
        kept.push_back(s);
      },
      summary);
  for (std::size_t i = 0; i < kept.size(); ++i) kept[i].payload = payloads[i];
  FUZZ_CHECK(ok == summary.error.empty());
  if (!ok) FUZZ_CHECK(OneLine(summary.error));
  if (!summary.opened) return 0;
  FUZZ_CHECK(summary.frames == summary.tcp_segments + summary.skipped + summary.malformed);
  FUZZ_CHECK(segments == summary.tcp_segments && last_frame <= summary.frames);
  FUZZ_CHECK(summary.warnings.size() <= kMaxStoredWarnings);
  uint64_t previous = 0;
  for (const CaptureWarning& w : summary.warnings) {
    FUZZ_CHECK(OneLine(w.message) && w.frame >= previous && w.frame <= summary.frames);
    previous = w.frame;
  }
  reassembler.Finish();
  for (const ReassembledConnection& c : reassembler.connections()) {
    for (const DirectionStream& d : c.directions) {
      FUZZ_CHECK(d.octets_out <= d.octets_in);
      for (const FrameMark& m : d.frames) FUZZ_CHECK(m.frame >= c.first_frame && m.frame <= c.last_frame);
    }
  }
  for (const ReassemblyNote& n : reassembler.notes()) FUZZ_CHECK(OneLine(n.message));
  CheckingSink sink(summary.frames);
  CaptureDecodeSummary decoded;
  decoded.read = summary;
  DecodeConnections(reassembler, CaptureDecodeOptions{}, sink, decoded);
  FUZZ_CHECK(decoded.iwarp_connections <= decoded.connections);
  if (SupportedLinkType(summary.link_type)) CompareWithStreaming(kept, ro, summary);
  return 0;
}
