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
//    never fails.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "capture/capture_decode.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;   // fmemopen refuses an empty buffer
  std::vector<uint8_t> file(data, data + size);
  std::FILE* f = fmemopen(file.data(), file.size(), "rb");
  if (f == nullptr) return 0;
  ReassemblyOptions ro;
  ro.max_out_of_order = 4096;
  TcpReassembler reassembler(ro);
  uint64_t last_frame = 0, segments = 0;
  CaptureReadSummary summary;
  const bool ok = ReadCaptureStream(f, "fuzz", [&](const TcpSegment& s) {
    FUZZ_CHECK(s.frame > last_frame);
    last_frame = s.frame;
    ++segments;
    reassembler.Add(s);
  }, summary);
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
  return 0;
}
