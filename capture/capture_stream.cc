#include "capture/capture_stream.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "capture/decode_text.h"
#include "capture/stream_direction.h"
#include "reference/wire/mpa.h"

namespace rdmapct::capture {
namespace {

using wire::ByteSpan;

constexpr uint64_t kNoFrame = std::numeric_limits<uint64_t>::max();

// The smallest of the frames that are not 0 (0: none).
uint64_t Lowest(std::initializer_list<uint64_t> frames) {
  uint64_t low = kNoFrame;
  for (uint64_t f : frames) {
    if (f != 0) low = std::min(low, f);
  }
  return low;
}

// True once the start of a direction shows what DetermineFraming will find
// in it: no startup frame, a complete one, or as much as it ever looks at.
bool HeadKnown(const StreamPiece* head) {
  if (head == nullptr) return false;
  const ByteSpan h = head->octets;
  if (h.size() >= kStreamLookahead) return true;
  if (h.size() < 9) return false;
  if (!wire::LooksLikeMpaStartupFrame(h)) return true;
  return wire::DecodeMpaStartupFrame(h).ok();
}

// Collects what DecodeConnection emits, in its order, for one connection.
struct Emitter {
  CaptureStreamSink& sink;
  CaptureDecodeSummary& summary;
  void operator()(CaptureIssue issue) const {
    if (issue.severity == IssueSeverity::kError)
      ++summary.errors;
    else
      ++summary.warnings;
    sink.OnIssue(issue);
  }
  void Warn(std::size_t c, std::string message) const {
    CaptureIssue w;
    w.message = std::move(message);
    w.connection = c;
    (*this)(std::move(w));
  }
};

// Both directions of one connection, from the first octet to Finish.
class ConnectionStream {
 public:
  ConnectionStream(const std::vector<ReassembledConnection>& conns, std::size_t c, const CaptureStreamOptions& options,
                   CaptureStreamSink& sink)
      : conns_(conns), c_(c), options_(options), sink_(sink) {
    for (int d = 0; d < 2; ++d) {
      dec_[d] = std::make_unique<DirectionStreamDecoder>(conns, c, d, cf_, options.profile, sink, ranks_);
    }
  }

  void OnOctets(int d, uint64_t offset, ByteSpan octets, uint64_t frame, bool finishing) {
    dec_[d]->Append(offset, octets, frame);
    if (finishing) return;  // Finish decodes, once every direction has all its octets
    if (!decided_)
      TryDecide(false);
    else
      dec_[d]->Decode(false);
  }

  // After a segment of this connection: which capture frames units may still end in.
  void Progress(uint64_t next_frame, const TcpReassembler& r) {
    if (!decided_) return;
    std::array<uint64_t, 2> low{};
    for (int d = 0; d < 2; ++d) low[d] = Lowest({dec_[d]->LowestFrame(), r.FirstWaitingFrame(c_, d), next_frame});
    ranks_.Settle(std::min(low[0], low[1]));
    sink_.OnProgress(c_, low);
  }

  void Finish() {
    if (!decided_) TryDecide(true);
    for (auto& d : dec_) d->Decode(true);
    ranks_.Settle(kNoFrame);
  }

  // Both FINs are in and everything before them was delivered: decode the
  // rest now (as Finish would) and let the sink know.
  void Close() {
    if (closed_) return;
    closed_ = true;
    Finish();
    for (auto& d : dec_) d->Release();
    sink_.OnConnectionClosed(conns_[c_]);
  }

  std::size_t buffered() const { return dec_[0]->buffered() + dec_[1]->buffered(); }
  std::size_t accounted = 0;  // buffered() when last counted

  void Emit(const std::vector<const ReassemblyNote*>& notes, const Emitter& emit, CaptureDecodeSummary& summary);

 private:
  void TryDecide(bool final);
  ConnectionFraming Determine();
  void Classify(std::array<std::optional<CaptureIssue>, 2>& unsynced, std::vector<CaptureIssue>& issues);

  const std::vector<ReassembledConnection>& conns_;
  const std::size_t c_;
  const CaptureStreamOptions& options_;
  CaptureStreamSink& sink_;
  ConnectionFraming cf_;
  bool decided_ = false;
  bool closed_ = false;
  // Decided at the cap: the octets of each direction whose start was not
  // all there yet (a direction that sends nothing more changed nothing).
  std::array<std::optional<uint64_t>, 2> short_at_;
  bool handshake_iwarp_ = false;  // iWARP by its startup frames
  RecordRanks ranks_;
  std::array<std::unique_ptr<DirectionStreamDecoder>, 2> dec_;
};

// DetermineFraming on the octets held from stream offset 0.
ConnectionFraming ConnectionStream::Determine() {
  ReassembledConnection view = conns_[c_];
  std::array<StreamPiece*, 2> heads{dec_[0]->head(), dec_[1]->head()};
  for (int d = 0; d < 2; ++d) {
    if (heads[d] != nullptr) view.directions[d].pieces.push_back(std::move(*heads[d]));
  }
  ConnectionFraming cf = DetermineFraming(view, options_.profile);
  for (int d = 0; d < 2; ++d) {
    if (heads[d] != nullptr) *heads[d] = std::move(view.directions[d].pieces.front());
  }
  return cf;
}

void ConnectionStream::TryDecide(bool final) {
  const std::size_t cap = options_.max_held;
  const bool forced = !final && std::max(dec_[0]->buffered(), dec_[1]->buffered()) >= cap;
  if (!final && !forced && !(HeadKnown(dec_[0]->head()) && HeadKnown(dec_[1]->head()))) return;
  ConnectionFraming cf = Determine();
  // With one startup frame, the rest is found by trying the first FPDUs:
  // as many octets as the trial looks at first.
  const bool probing = cf.initiator && !cf.negotiation && (cf.startup[0].frame || cf.startup[1].frame);
  if (probing && !final && !forced && std::min(dec_[0]->buffered(), dec_[1]->buffered()) < kStreamLookahead) {
    return;
  }
  for (int d = 0; d < 2 && forced; ++d) {
    const bool short_head = !HeadKnown(dec_[d]->head()) || (probing && dec_[d]->buffered() < kStreamLookahead);
    if (short_head) short_at_[d] = conns_[c_].directions[d].octets_out;
  }
  cf_ = std::move(cf);
  decided_ = true;
  handshake_iwarp_ = cf_.iwarp;
  sink_.OnFraming(conns_[c_], cf_);
  for (auto& d : dec_) d->Decode(final);
}

// A failed resynchronisation is a warning where DecodeCaptureFile knew the
// connection to be iWARP by then (the startup frames, or a boundary found
// before: all of direction 0 is decoded before direction 1 there), else
// the held-back `unsynced` warning.
void ConnectionStream::Classify(std::array<std::optional<CaptureIssue>, 2>& unsynced,
                                std::vector<CaptureIssue>& issues) {
  for (int d = 0; d < 2; ++d) {
    for (HeldIssue& h : dec_[d]->issues()) {
      const bool iwarp_then = handshake_iwarp_ || h.synced_before || (d == 1 && dec_[0]->ever_synced());
      if (!h.conditional || iwarp_then)
        issues.push_back(std::move(h.issue));
      else
        unsynced[d] = std::move(h.issue);
    }
    dec_[d]->issues().clear();
  }
}

// What DecodeConnection reports for the connection, in its order.
void ConnectionStream::Emit(const std::vector<const ReassemblyNote*>& notes, const Emitter& emit,
                            CaptureDecodeSummary& summary) {
  const ReassembledConnection& c = conns_[c_];
  if (cf_.iwarp) ++summary.iwarp_connections;
  sink_.OnConnectionEnd(ConnectionDecode{&c, &cf_, {dec_[0]->frames(), dec_[1]->frames()}, {}});
  if (!cf_.iwarp) {
    if (c.directions[0].octets_out + c.directions[1].octets_out > 0) {
      emit.Warn(c_, "connection " + std::to_string(c_) + " (" + c.client.ToString() + " -> " + c.server.ToString() +
                        "): not decoded: neither direction starts with an MPA Request/Reply Frame and no FPDU with a "
                        "valid CRC was found (not iWARP, or captured without its MPA handshake)" +
                        (notes.empty() ? "" : "; " + std::to_string(notes.size()) + " TCP notes not shown"));
    }
    return;
  }
  if (!cf_.note.empty()) emit.Warn(c_, "connection " + std::to_string(c_) + ": " + cf_.note);
  bool grew = false;
  for (int d = 0; d < 2; ++d) grew = grew || (short_at_[d] && c.directions[d].octets_out > *short_at_[d]);
  if (grew) {
    emit.Warn(c_, "connection " + std::to_string(c_) + ": the MPA framing was decided after " +
                      OctetText(options_.max_held) + " of one direction, from what the other had sent by then");
  }
  for (const ReassemblyNote* n : notes) {
    CaptureIssue w;
    w.message = n->message;
    w.connection = c_;
    w.direction = n->direction;
    w.capture_frame = n->frame;
    emit(std::move(w));
  }
  std::array<std::optional<CaptureIssue>, 2> unsynced;
  std::vector<CaptureIssue> issues;
  Classify(unsynced, issues);
  for (auto& u : unsynced) {
    if (u) emit(std::move(*u));
  }
  for (CaptureIssue& i : issues) emit(std::move(i));
  for (RecordRanks::Carrier& k : ranks_.TakeErrors()) {
    const uint64_t number = summary.frames + k.rank + 1;
    for (CaptureIssue& e : k.errors) {
      e.frame = number;
      e.message += " (Frame " + std::to_string(number) + ", capture frame " + std::to_string(k.capture_frame) + ")";
      emit(std::move(e));
    }
  }
  summary.frames += ranks_.total();
}

}  // namespace

struct CaptureStreamDecoder::Impl : ReassemblyListener {
  Impl(const CaptureStreamOptions& o, CaptureStreamSink& s) : options(o), sink(s), reassembler(o.reassembly) {
    reassembler.SetListener(this);
  }

  bool Selected(std::size_t c) const { return !options.connection || *options.connection == c; }

  ConnectionStream& Stream(std::size_t c) {
    if (streams.size() <= c) streams.resize(c + 1);
    if (!streams[c]) streams[c] = std::make_unique<ConnectionStream>(reassembler.connections(), c, options, sink);
    return *streams[c];
  }

  void OnOctets(std::size_t c, int d, uint64_t offset, ByteSpan octets, uint64_t frame) override {
    if (Selected(c)) Stream(c).OnOctets(d, offset, octets, frame, finishing);
  }

  // Counts what connection c holds now, and the peak of everything held.
  void Account(ConnectionStream& s) {
    const std::size_t now = s.buffered();
    held = held + now - s.accounted;
    s.accounted = now;
    peak = std::max(peak, held + reassembler.buffered_octets());
  }

  void Add(const TcpSegment& segment);
  CaptureDecodeSummary Finish(const CaptureReadSummary& read);

  const CaptureStreamOptions options;
  CaptureStreamSink& sink;
  TcpReassembler reassembler;
  std::vector<std::unique_ptr<ConnectionStream>> streams;
  bool finishing = false, interrupted = false;
  std::size_t held = 0, peak = 0;
};

void CaptureStreamDecoder::Impl::Add(const TcpSegment& segment) {
  if (options.stop && options.stop->load() > 0) {
    interrupted = true;
    return;
  }
  reassembler.Add(segment);
  const std::size_t c = reassembler.last_connection();
  if (c < streams.size() && streams[c]) {
    streams[c]->Progress(segment.frame + 1, reassembler);
    if (reassembler.FinClosed(c)) streams[c]->Close();
    Account(*streams[c]);
  }
  peak = std::max(peak, held + reassembler.buffered_octets());
}

CaptureDecodeSummary CaptureStreamDecoder::Impl::Finish(const CaptureReadSummary& read) {
  CaptureDecodeSummary summary;
  summary.read = read;
  summary.interrupted = interrupted;
  finishing = true;
  reassembler.Finish();
  for (auto& s : streams) {
    if (s) Account(*s);
  }
  const Emitter emit{sink, summary};
  for (const CaptureWarning& w : read.warnings) {
    CaptureIssue i;
    i.message = w.message;
    i.capture_frame = w.frame;
    emit(std::move(i));
  }
  if (read.warnings_dropped != 0) {
    CaptureIssue i;
    i.message = std::to_string(read.warnings_dropped) + " more frames could not be parsed";
    emit(std::move(i));
  }
  const std::vector<ReassembledConnection>& conns = reassembler.connections();
  summary.connections = conns.size();
  if (options.connection && *options.connection >= conns.size()) {
    summary.connection_missing = true;
    summary.peak_buffered_octets = peak;
    return summary;
  }
  std::vector<std::vector<const ReassemblyNote*>> notes(conns.size());
  for (const ReassemblyNote& n : reassembler.notes()) notes[n.connection].push_back(&n);
  for (std::size_t c = 0; c < conns.size(); ++c) {
    if (!Selected(c)) continue;
    ConnectionStream& s = Stream(c);
    s.Finish();
    s.Emit(notes[c], emit, summary);
    streams[c].reset();  // its units are all out: free what it held
  }
  if (reassembler.notes_dropped() != 0 && !options.connection) {
    CaptureIssue w;
    w.message = std::to_string(reassembler.notes_dropped()) + " more TCP reassembly notes not shown";
    emit(std::move(w));
  }
  summary.peak_buffered_octets = peak;
  return summary;
}

CaptureStreamDecoder::CaptureStreamDecoder(const CaptureStreamOptions& options, CaptureStreamSink& sink)
    : impl_(std::make_unique<Impl>(options, sink)) {}
CaptureStreamDecoder::~CaptureStreamDecoder() = default;

void CaptureStreamDecoder::Add(const TcpSegment& segment) { impl_->Add(segment); }
CaptureDecodeSummary CaptureStreamDecoder::Finish(const CaptureReadSummary& read) { return impl_->Finish(read); }
std::size_t CaptureStreamDecoder::buffered_octets() const { return impl_->held + impl_->reassembler.buffered_octets(); }
std::size_t CaptureStreamDecoder::peak_buffered_octets() const { return impl_->peak; }

CaptureDecodeSummary StreamCaptureFile(const std::string& path, const CaptureStreamOptions& options,
                                       CaptureStreamSink& sink) {
  CaptureStreamDecoder decoder(options, sink);
  CaptureReadSummary read;
  const bool whole = ReadCaptureFile(
      path, [&](const TcpSegment& s) { decoder.Add(s); }, read);
  if (!read.opened || read.link_type < 0 || !SupportedLinkType(read.link_type)) {
    CaptureDecodeSummary summary;
    summary.read = read;
    return summary;  // nothing usable: the caller reports read.error
  }
  CaptureDecodeSummary summary = decoder.Finish(read);
  if (!whole) ++summary.errors;  // cut short: read.error, reported by the caller after the frames
  return summary;
}

}  // namespace rdmapct::capture
