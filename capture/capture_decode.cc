#include "capture/capture_decode.h"

#include <algorithm>
#include <array>
#include <utility>

#include "capture/decode_text.h"
#include "reference/wire/stream_decode.h"

namespace rdmapct::capture {
namespace {

using wire::ByteSpan;
using wire::Field;

std::string Octets(uint64_t n) { return OctetText(n); }

Field Node(std::string name, std::string value, std::optional<uint64_t> number = std::nullopt) {
  Field f;
  f.name = std::move(name);
  f.value = std::move(value);
  f.number = number;
  return f;
}

// The capture frames that carried [offset, offset + length), in stream order.
std::vector<uint64_t> FramesIn(const DirectionStream& ds, uint64_t offset, uint64_t length) {
  std::vector<uint64_t> out;
  const uint64_t first = ds.FrameAt(offset);
  if (first != 0) out.push_back(first);
  auto it = std::upper_bound(ds.frames.begin(), ds.frames.end(), offset,
                             [](uint64_t o, const FrameMark& m) { return o < m.offset; });
  for (; it != ds.frames.end() && it->offset < offset + length; ++it) {
    if (std::find(out.begin(), out.end(), it->frame) == out.end()) out.push_back(it->frame);
  }
  return out;
}

// Frames decoded from one direction, before they are merged in capture order.
struct Record {
  int direction = 0;
  uint64_t capture_frame = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  Field tree;
  std::vector<CaptureIssue> errors;
};

// Decodes one direction of a connection, piece by piece, resynchronising
// where the framing is lost. A wire::StreamDecodeSink for each run of
// wire::DecodeMpaStream.
class DirectionDecoder : public wire::StreamDecodeSink {
 public:
  DirectionDecoder(const ReassembledConnection& c, int d, ConnectionFraming& cf, const CaptureDecodeOptions& options,
                   std::vector<Record>& records, std::vector<CaptureIssue>& issues, CaptureDecodeSink& sink)
      : c_(c),
        d_(d),
        ds_(c.directions[d]),
        cf_(cf),
        f_(cf.directions[d]),
        options_(options),
        records_(records),
        issues_(issues),
        sink_(sink) {}

  void Run() {
    for (std::size_t i = 0; i < ds_.pieces.size(); ++i) DecodePiece(i);
  }
  uint64_t frames() const { return frames_; }
  // The warning held back when nothing in this direction looked like MPA.
  const std::optional<CaptureIssue>& unsynced() const { return unsynced_; }

 private:
  void OnStartupFrame(const wire::DecodedStartupFrame& f) override {
    Unit(CapturedUnit::Kind::kStartupFrame, f.offset, f.octets.size(), f.octets, nullptr, std::nullopt);
    Add(options_.describe ? wire::DescribeStartupFrame(f) : Field{}, f.offset, f.octets.size());
  }
  void OnSegment(const wire::DecodedSegment& s) override {
    const uint64_t offset = s.fpdu != nullptr ? s.fpdu->offset : s.map.At(0);
    const uint64_t length = s.fpdu != nullptr ? s.fpdu->wire_length : s.ulpdu.size();
    Unit(CapturedUnit::Kind::kSegment, offset, length, s.ulpdu, &s, std::nullopt);
    Add(options_.describe ? wire::DescribeSegment(s, options_.profile) : Field{}, offset, length);
  }
  void OnError(const wire::StreamError& e) override {
    if (e.error.kind == wire::DecodeErrorKind::kTruncated) return;  // the caller looks at the summary
    Unit(CapturedUnit::Kind::kError, e.error.offset, 0, {}, nullptr, e.error);
    CaptureIssue issue = Issue(IssueSeverity::kError, wire::DescribeStreamError(e.error), ds_.FrameAt(e.error.offset));
    issue.error = e.error;
    const std::size_t n = records_.size() - call_base_;
    if (e.frame_number != 0 && e.frame_number == n) {
      records_.back().errors.push_back(std::move(issue));
    } else {
      issues_.push_back(std::move(issue));
    }
  }

  void Unit(CapturedUnit::Kind kind, uint64_t offset, uint64_t length, ByteSpan octets, const wire::DecodedSegment* s,
            std::optional<wire::DecodeError> error) {
    CapturedUnit u;
    u.kind = kind;
    u.connection = c_.index;
    u.direction = d_;
    u.offset = offset;
    u.length = length;
    u.capture_frame = ds_.FrameAt(offset);
    u.last_capture_frame = length == 0 ? u.capture_frame : ds_.FrameAt(offset + length - 1);
    u.octets = octets;
    const wire::Bytes& stream = ds_.pieces[piece_].octets;
    u.stable = !octets.empty() && octets.data() >= stream.data() &&
               octets.data() + octets.size() <= stream.data() + stream.size();
    u.segment = s;
    u.error = error;
    sink_.OnUnit(u);
  }

  void Add(Field tree, uint64_t offset, uint64_t length) {
    records_.push_back(Record{d_, ds_.FrameAt(offset), offset, length, std::move(tree), {}});
    ++frames_;
  }

  CaptureIssue Issue(IssueSeverity severity, const std::string& what, uint64_t capture_frame) const {
    CaptureIssue i;
    i.severity = severity;
    i.message = Who(c_, cf_, d_) + ": " + what;
    i.connection = c_.index;
    i.direction = d_;
    i.capture_frame = capture_frame;
    return i;
  }

  void DecodePiece(std::size_t i);
  bool Resync(std::size_t i, std::size_t& pos, bool after_error);
  void Truncated(std::size_t i, const wire::DecodeError& e);

  const ReassembledConnection& c_;
  const int d_;
  const DirectionStream& ds_;
  ConnectionFraming& cf_;
  DirectionFraming& f_;
  const CaptureDecodeOptions& options_;
  std::vector<Record>& records_;
  std::vector<CaptureIssue>& issues_;
  CaptureDecodeSink& sink_;
  std::size_t piece_ = 0;      // the piece being decoded
  std::size_t call_base_ = 0;  // records_.size() when the current DecodeMpaStream began
  uint64_t frames_ = 0;
  std::optional<CaptureIssue> unsynced_;
};

void DirectionDecoder::DecodePiece(std::size_t i) {
  piece_ = i;
  const StreamPiece& p = ds_.pieces[i];
  const bool handshake = i == 0 && p.offset == 0 && cf_.startup[d_].present;
  std::size_t pos = 0;
  bool sync = !handshake;
  bool after_error = false;
  while (pos < p.octets.size()) {
    if (sync && !Resync(i, pos, after_error)) return;
    wire::StreamDecodeOptions o;
    o.profile = options_.profile;
    o.crc_enabled = f_.crc;
    o.markers_enabled = f_.markers;
    o.handshake = !sync ? wire::HandshakeMode::kPresent : wire::HandshakeMode::kAbsent;
    o.continue_after_errors = false;  // after an error the framing is found again (Resync)
    o.stream_offset = p.offset + pos;
    if (f_.markers && f_.seq_start) o.first_position = static_cast<uint32_t>(o.stream_offset - *f_.seq_start);
    call_base_ = records_.size();
    const wire::StreamDecodeSummary sum = wire::DecodeMpaStream(ByteSpan(p.octets).subspan(pos), o, *this);
    if (!sum.fatal) return;
    if (sum.fatal->kind == wire::DecodeErrorKind::kTruncated) {
      Truncated(i, *sum.fatal);
      return;
    }
    // Go on after the frame in error when it was delivered (its length is
    // known), else right after the error's offset.
    const uint64_t resume =
        records_.size() > call_base_ ? records_.back().offset + records_.back().length : sum.fatal->offset + 1;
    pos = static_cast<std::size_t>(std::max<uint64_t>(resume, p.offset + pos + 1) - p.offset);
    sync = true;
    after_error = true;
  }
}

// Moves `pos` to the next FPDU boundary of piece i; false (with a warning)
// when there is none.
bool DirectionDecoder::Resync(std::size_t i, std::size_t& pos, bool after_error) {
  const StreamPiece& p = ds_.pieces[i];
  const uint64_t from = p.offset + pos;
  const std::optional<std::size_t> at = FindFpduBoundary(p, pos, f_, options_.profile);
  if (!at) {
    CaptureIssue w = Issue(IssueSeverity::kWarning, ResyncFailedText(f_, from, p.end()), ds_.FrameAt(from));
    if (!cf_.iwarp)
      unsynced_ = std::move(w);
    else
      issues_.push_back(std::move(w));
    pos = p.octets.size();
    return false;
  }
  const uint64_t to = p.offset + *at;
  AdoptFoundFraming(cf_, f_, to);
  const std::string what = ResyncFoundText({from, to, ds_.FrameAt(to), after_error, i == 0, ds_.syn, f_.crc, p.offset});
  if (!what.empty()) issues_.push_back(Issue(IssueSeverity::kWarning, what, ds_.FrameAt(to)));
  pos = *at;
  return true;
}

// The stream of piece i ends inside a frame.
void DirectionDecoder::Truncated(std::size_t i, const wire::DecodeError& e) {
  const bool gap_follows = i + 1 < ds_.pieces.size() || ds_.GapAt(ds_.pieces[i].end());
  TruncatedText t = DescribeTruncated(ds_, e, ds_.FrameAt(e.offset), gap_follows);
  CaptureIssue issue = Issue(t.severity, t.message, ds_.FrameAt(e.offset));
  if (t.severity == IssueSeverity::kError) issue.error = e;
  issues_.push_back(std::move(issue));
}

std::string FrameList(const std::vector<uint64_t>& frames) {
  std::string s;
  for (std::size_t k = 0; k < frames.size(); ++k) {
    if (k == 8) return s + ", ... (" + std::to_string(frames.size()) + " frames)";
    s += (k ? ", " : "") + std::to_string(frames[k]);
  }
  return s;
}

// A direction's endpoints and name as the "Capture" node shows them: formatted
// once per connection, not once per frame.
struct DirectionText {
  std::string source, destination, name;
};

DirectionText TextOf(const ReassembledConnection& c, const ConnectionFraming& cf, int d) {
  return {c.directions[d].source.ToString(), c.directions[d].destination.ToString(), DirectionName(cf, d)};
}

// The "Capture" node put first in every frame's tree.
Field CaptureNode(const ReassembledConnection& c, const DirectionText& t, const Record& r) {
  const DirectionStream& ds = c.directions[r.direction];
  Field n = Node("Capture", "frame " + std::to_string(r.capture_frame) + ", connection " + std::to_string(c.index) +
                                ", " + t.source + " -> " + t.destination + ", " + t.name);
  n.offset = r.offset;
  n.Add(Node("Capture Frame", std::to_string(r.capture_frame), r.capture_frame));
  const std::vector<uint64_t> all = FramesIn(ds, r.offset, r.length);
  if (all.size() > 1) n.Add(Node("Capture Frames", FrameList(all)));
  n.Add(Node("Connection", std::to_string(c.index), c.index));
  n.Add(Node("Source", t.source));
  n.Add(Node("Destination", t.destination));
  n.Add(Node("Direction", t.name));
  for (Field& ch : n.children) ch.offset = r.offset;
  return n;
}

std::string StartupSummary(const StartupFrameSeen& s) {
  if (!s.present) return "none captured";
  const std::string kind = s.is_reply ? "MPA Reply Frame" : "MPA Request Frame";
  if (!s.frame) return kind + " (undecodable: " + wire::DescribeStreamError(*s.error) + ")";
  const wire::MpaStartupFrame& f = *s.frame;
  return kind + " (Rev " + std::to_string(f.revision) + ", M " + std::to_string(f.marker_required) + ", C " +
         std::to_string(f.crc_required) + ", R " + std::to_string(f.reject) + ", " + Octets(s.length) + ")";
}

Field DescribeDirection(const ReassembledConnection& c, const ConnectionFraming& cf, int d, uint64_t frames) {
  const DirectionStream& ds = c.directions[d];
  const DirectionFraming& f = cf.directions[d];
  Field n = Node(DirectionName(cf, d), ds.source.ToString() + " -> " + ds.destination.ToString() + ", " +
                                           Octets(ds.octets_out) + ", " + std::to_string(frames) + " MPA frames");
  n.Add(Node("Startup Frame", StartupSummary(cf.startup[d])));
  if (f.decided) {
    n.Add(Node("CRC", f.crc ? "on" : "off"));
    n.Add(Node("Markers", f.markers ? "on" : "off"));
    n.Add(Node("Framing", f.basis));
  } else {
    n.Add(Node("Framing", "unknown: not decoded"));
  }
  std::string tcp = ds.syn ? "SYN in frame " + std::to_string(ds.syn_frame) : "no SYN captured";
  if (ds.fin_offset) tcp += ", FIN in frame " + std::to_string(ds.fin_frame);
  if (ds.rst_frame != 0) tcp += ", RST in frame " + std::to_string(ds.rst_frame);
  n.Add(Node("TCP", tcp + ", " + std::to_string(ds.segments) + " segments"));
  n.Add(Node("Stream Octets", std::to_string(ds.octets_out), ds.octets_out));
  uint64_t missing = 0;
  for (const StreamGap& g : ds.gaps) missing += g.length;
  n.Add(Node("Gaps",
             std::to_string(ds.gaps.size()) + (ds.gaps.empty() ? "" : " (" + Octets(missing) + " not captured)"),
             ds.gaps.size()));
  n.Add(Node("MPA Frames", std::to_string(frames), frames));
  return n;
}

Field DescribeConnection(const ReassembledConnection& c, const ConnectionFraming& cf,
                         const std::array<uint64_t, 2>& frames) {
  std::string kind = "not iWARP";
  if (cf.iwarp) {
    const StartupFrameSeen* s = cf.startup[0].frame ? &cf.startup[0] : cf.startup[1].frame ? &cf.startup[1] : nullptr;
    kind = s != nullptr ? "iWARP, MPA Rev " + std::to_string(s->frame->revision) : "iWARP";
  }
  Field n = Node("Connection " + std::to_string(c.index), c.client.ToString() + " -> " + c.server.ToString() +
                                                              ", capture frames " + std::to_string(c.first_frame) +
                                                              "-" + std::to_string(c.last_frame) + ", " + kind);
  const bool syn = c.directions[0].syn;
  n.Add(Node("Client", c.client.ToString() + (syn ? " (sent the SYN)" : " (sent the first segment captured)")));
  n.Add(Node("Server", c.server.ToString()));
  if (cf.initiator) {
    const int i = *cf.initiator;
    n.Add(Node("MPA Initiator", c.directions[i].source.ToString()));
    n.Add(Node("MPA Responder", c.directions[i].destination.ToString()));
  }
  if (cf.negotiation && cf.negotiation->rejected) n.Add(Node("MPA", "the Responder rejected the connection (R = 1)"));
  const int first = cf.initiator.value_or(0);
  n.Add(DescribeDirection(c, cf, first, frames[first]));
  n.Add(DescribeDirection(c, cf, 1 - first, frames[1 - first]));
  return n;
}

void Emit(CaptureDecodeSink& sink, CaptureIssue issue, CaptureDecodeSummary& summary) {
  if (issue.severity == IssueSeverity::kError)
    ++summary.errors;
  else
    ++summary.warnings;
  sink.OnIssue(issue);
}

bool HasData(const ReassembledConnection& c) { return c.directions[0].octets_out + c.directions[1].octets_out > 0; }

// The frames of a connection in capture order, each with its "Capture" node
// and followed by its errors.
void EmitFrames(const ReassembledConnection& c, const ConnectionFraming& cf, std::vector<Record>& records,
                const CaptureDecodeOptions& options, CaptureDecodeSink& sink, CaptureDecodeSummary& summary) {
  const std::array<DirectionText, 2> text = {TextOf(c, cf, 0), TextOf(c, cf, 1)};
  for (Record& r : records) {
    CaptureFrame f;
    f.number = ++summary.frames;
    f.connection = c.index;
    f.direction = r.direction;
    f.direction_name = text[r.direction].name;
    f.capture_frame = r.capture_frame;
    f.offset = r.offset;
    f.tree = std::move(r.tree);
    f.tree.name = "Frame " + std::to_string(f.number);
    if (options.describe) f.tree.children.insert(f.tree.children.begin(), CaptureNode(c, text[r.direction], r));
    sink.OnFrame(f);
    for (CaptureIssue& e : r.errors) {
      e.frame = f.number;
      e.message += " (Frame " + std::to_string(f.number) + ", capture frame " + std::to_string(r.capture_frame) + ")";
      Emit(sink, std::move(e), summary);
    }
  }
}

void DecodeConnection(const ReassembledConnection& c, const std::vector<const ReassemblyNote*>& notes,
                      const CaptureDecodeOptions& options, CaptureDecodeSink& sink, CaptureDecodeSummary& summary) {
  ConnectionFraming cf = DetermineFraming(c, options.profile);
  std::vector<Record> records;
  std::vector<CaptureIssue> issues;
  std::array<uint64_t, 2> frames{};
  std::optional<CaptureIssue> unsynced[2];
  for (int d = 0; d < 2; ++d) {
    DirectionDecoder dec(c, d, cf, options, records, issues, sink);
    dec.Run();
    frames[d] = dec.frames();
    unsynced[d] = dec.unsynced();
  }
  if (cf.iwarp) ++summary.iwarp_connections;
  sink.OnConnection(
      ConnectionDecode{&c, &cf, frames, options.describe ? DescribeConnection(c, cf, frames) : wire::Field{}});
  const auto warn = [&](std::string m) {
    CaptureIssue w;
    w.message = std::move(m);
    w.connection = c.index;
    Emit(sink, std::move(w), summary);
  };
  if (!cf.iwarp) {
    if (HasData(c)) {
      warn("connection " + std::to_string(c.index) + " (" + c.client.ToString() + " -> " + c.server.ToString() +
           "): not decoded: neither direction starts with an MPA Request/Reply Frame and no FPDU with a valid CRC "
           "was found (not iWARP, or captured without its MPA handshake)" +
           (notes.empty() ? "" : "; " + std::to_string(notes.size()) + " TCP notes not shown"));
    }
    return;
  }
  if (!cf.note.empty()) warn("connection " + std::to_string(c.index) + ": " + cf.note);
  for (const ReassemblyNote* n : notes) {
    CaptureIssue w;
    w.message = n->message;
    w.connection = c.index;
    w.direction = n->direction;
    w.capture_frame = n->frame;
    Emit(sink, std::move(w), summary);
  }
  for (auto& u : unsynced) {
    if (u) Emit(sink, std::move(*u), summary);
  }
  for (CaptureIssue& i : issues) Emit(sink, std::move(i), summary);
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return a.capture_frame != b.capture_frame ? a.capture_frame < b.capture_frame : a.offset < b.offset;
  });
  EmitFrames(c, cf, records, options, sink, summary);
}

}  // namespace

void DecodeConnections(const TcpReassembler& reassembler, const CaptureDecodeOptions& options, CaptureDecodeSink& sink,
                       CaptureDecodeSummary& summary) {
  const std::vector<ReassembledConnection>& conns = reassembler.connections();
  summary.connections = conns.size();
  if (options.connection && *options.connection >= conns.size()) {
    summary.connection_missing = true;
    return;
  }
  std::vector<std::vector<const ReassemblyNote*>> notes(conns.size());
  for (const ReassemblyNote& n : reassembler.notes()) notes[n.connection].push_back(&n);
  for (const ReassembledConnection& c : conns) {
    if (options.connection && *options.connection != c.index) continue;
    if (options.stop && options.stop->load() > 0) {
      summary.interrupted = true;
      return;
    }
    DecodeConnection(c, notes[c.index], options, sink, summary);
  }
  if (reassembler.notes_dropped() != 0 && !options.connection) {
    CaptureIssue w;
    w.message = std::to_string(reassembler.notes_dropped()) + " more TCP reassembly notes not shown";
    Emit(sink, std::move(w), summary);
  }
}

CaptureDecodeSummary DecodeCaptureFile(const std::string& path, const CaptureDecodeOptions& options,
                                       CaptureDecodeSink& sink) {
  CaptureDecodeSummary summary;
  TcpReassembler reassembler(options.reassembly);
  const auto stopped = [&] { return options.stop && options.stop->load() > 0; };
  const bool whole = ReadCaptureFile(
      path,
      [&](const TcpSegment& s) {
        if (!stopped()) reassembler.Add(s);
      },
      summary.read);
  summary.interrupted = stopped();
  if (!summary.read.opened || summary.read.link_type < 0 || !SupportedLinkType(summary.read.link_type)) {
    return summary;  // nothing usable: the caller reports read.error
  }
  reassembler.Finish();
  for (const CaptureWarning& w : summary.read.warnings) {
    CaptureIssue i;
    i.message = w.message;
    i.capture_frame = w.frame;
    Emit(sink, std::move(i), summary);
  }
  if (summary.read.warnings_dropped != 0) {
    CaptureIssue i;
    i.message = std::to_string(summary.read.warnings_dropped) + " more frames could not be parsed";
    Emit(sink, std::move(i), summary);
  }
  DecodeConnections(reassembler, options, sink, summary);
  if (!whole) ++summary.errors;  // cut short: read.error, reported by the caller after the frames
  return summary;
}

}  // namespace rdmapct::capture
