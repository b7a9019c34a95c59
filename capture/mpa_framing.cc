#include "capture/mpa_framing.h"

#include <algorithm>
#include <vector>

#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/stream_decode.h"

namespace rdmapct::capture {
namespace {

using wire::ByteSpan;

// The key prefix both keys share ("MPA ID Re"), and the octet that tells them apart.
constexpr std::size_t kKeyPrefix = 9;
constexpr std::size_t kKeyKindOctet = 9;

// The smallest DDP header (tagged, RFC 5041 §4.2): a shorter ULPDU is no DDP Segment.
constexpr std::size_t kSmallestUlpdu = 14;

// DDP Control's DV and the RDMAP Control Field's RV are both 1 (RFC 5041
// §4.2, RFC 5040 §4.3): the cheap test of a CRC-less candidate.
bool PlausibleHeaders(ByteSpan ulpdu) { return ulpdu.size() >= 2 && (ulpdu[0] & 0x03) == 1 && (ulpdu[1] >> 6) == 1; }

// How the FPDUs at the start of some octets look under one framing.
struct Probe {
  int good = 0;            // leading FPDUs that check
  bool bad = false;        // the FPDU after them did not
  bool clean_end = false;  // the octets ended on an FPDU boundary
};

class ProbeSink : public wire::StreamDecodeSink {
 public:
  ProbeSink(bool crc, int enough) : crc_(crc), enough_(enough) {}
  void OnStartupFrame(const wire::DecodedStartupFrame&) override {}
  void OnSegment(const wire::DecodedSegment& s) override {
    if (probe.bad || probe.good >= enough_) return;
    const bool ok = s.fpdu != nullptr && s.fpdu->crc_ok && s.fpdu->marker_ok &&
                    (crc_ || (s.rdmap.has_value() && PlausibleHeaders(s.ulpdu)));
    if (ok)
      ++probe.good;
    else
      probe.bad = true;
  }
  void OnError(const wire::StreamError& e) override {
    if (e.error.kind != wire::DecodeErrorKind::kTruncated) probe.bad = true;
    truncated = e.error.kind == wire::DecodeErrorKind::kTruncated;
  }
  Probe probe;
  bool truncated = false;

 private:
  bool crc_;
  int enough_;
};

// Decodes the FPDUs at the start of `data` (stream offset `offset`) under a framing.
Probe ProbeFpdus(ByteSpan data, uint64_t offset, bool crc, bool markers, std::optional<uint64_t> seq_start,
                 wire::Profile profile, int enough) {
  wire::StreamDecodeOptions o;
  o.profile = profile;
  o.crc_enabled = crc;
  o.markers_enabled = markers;
  o.handshake = wire::HandshakeMode::kAbsent;
  o.compute_crc_when_disabled = false;
  o.record_markers = false;
  o.stream_offset = offset;
  if (markers && seq_start) o.first_position = static_cast<uint32_t>(offset - *seq_start);
  ProbeSink sink(crc, enough);
  // Enough octets for `enough` of the largest FPDUs, no more: probing stays cheap.
  const std::size_t window = std::min<std::size_t>(data.size(), static_cast<std::size_t>(enough) * kResyncWindow);
  (void)wire::DecodeMpaStream(data.first(window), o, sink);
  sink.probe.clean_end = !sink.probe.bad && !sink.truncated && window == data.size();
  return sink.probe;
}

// FPDUs start at the probed offset: two check in a row (three without
// CRCs), or all FPDUs up to the end of the octets check.
bool Accept(const Probe& p, bool crc) {
  const int needed = crc ? 2 : 3;
  return p.good >= needed || (p.good >= 1 && !p.bad && p.clean_end);
}

// Tries each framing left open for direction `d` after its startup frame
// and keeps the one under which the first FPDUs check.
void ProbeOpenFraming(const DirectionStream& ds, const StartupFrameSeen& own, bool crc_open, bool markers_open,
                      wire::Profile profile, DirectionFraming& f) {
  if (!crc_open && !markers_open) return;
  if (ds.pieces.empty() || ds.pieces[0].offset != 0 || !own.frame) return;  // nothing to try on
  const ByteSpan rest = ByteSpan(ds.pieces[0].octets).subspan(own.length);
  if (rest.empty()) return;
  int best = -1;
  DirectionFraming chosen = f;
  // Ties go to CRCs on and Markers off, the defaults of RFC 5044 peers.
  for (int crc = crc_open ? 1 : f.crc; crc >= (crc_open ? 0 : f.crc); --crc) {
    for (int mk = markers_open ? 0 : f.markers; mk <= (markers_open ? 1 : f.markers); ++mk) {
      const Probe p = ProbeFpdus(rest, own.length, crc != 0, mk != 0, own.length, profile, 2);
      const int score = p.good * 2 + (p.bad ? 0 : 1);
      if (Accept(p, crc != 0) && score > best) {
        best = score;
        chosen.crc = crc != 0;
        chosen.markers = mk != 0;
      }
    }
  }
  if (best >= 0) {
    f.crc = chosen.crc;
    f.markers = chosen.markers;
    f.basis += std::string(f.basis.empty() ? "" : "; ") + (crc_open ? "CRC use" : "") +
               (crc_open && markers_open ? " and " : "") + (markers_open ? "Markers" : "") +
               " found by trying the first FPDUs (the peer's startup frame was not captured)";
  } else {
    f.basis += std::string(f.basis.empty() ? "" : "; ") + (crc_open ? "CRCs assumed on" : "") +
               (crc_open && markers_open ? ", " : "") + (markers_open ? "Markers assumed off" : "") +
               " (the peer's startup frame was not captured and no framing made the first FPDUs check)";
  }
}

void Negotiated(ConnectionFraming& cf, int init, wire::Profile profile, const ReassembledConnection& c) {
  const int resp = 1 - init;
  const StartupFrameSeen& req = cf.startup[init];
  const StartupFrameSeen& rep = cf.startup[resp];
  const bool have_req = req.frame && !req.is_reply;
  const bool have_rep = rep.frame && rep.is_reply;
  DirectionFraming& to_resp = cf.directions[init];  // Initiator -> Responder
  DirectionFraming& to_init = cf.directions[resp];
  to_resp.decided = to_init.decided = true;
  if (have_req && have_rep) {
    cf.negotiation = wire::NegotiateMpa(*req.frame, *rep.frame);
    to_resp.crc = to_init.crc = cf.negotiation->crc;
    to_resp.markers = cf.negotiation->markers_initiator_to_responder;
    to_init.markers = cf.negotiation->markers_responder_to_initiator;
    to_resp.basis = to_init.basis = "negotiated by the Request and Reply Frames";
    return;
  }
  // One frame: its C = 1 turns CRCs on; its M fixes Markers towards its sender.
  const wire::MpaStartupFrame* known = have_req ? &*req.frame : have_rep ? &*rep.frame : nullptr;
  if (known == nullptr) return;
  const char* who = have_req ? "the Request's" : "the Reply's";
  const bool crc_open = !known->crc_required;
  for (DirectionFraming* f : {&to_resp, &to_init}) {
    f->crc = true;
    if (!crc_open) f->basis = std::string(who) + " C bit";
  }
  DirectionFraming& towards_sender = have_req ? to_init : to_resp;
  DirectionFraming& from_sender = have_req ? to_resp : to_init;
  towards_sender.markers = known->marker_required;
  towards_sender.basis += std::string(towards_sender.basis.empty() ? "" : ", ") + who + " M bit";
  ProbeOpenFraming(c.directions[have_req ? resp : init], cf.startup[have_req ? resp : init], crc_open, false, profile,
                   towards_sender);
  ProbeOpenFraming(c.directions[have_req ? init : resp], cf.startup[have_req ? init : resp], crc_open, true, profile,
                   from_sender);
}

// With Markers (SeqStart known): every Marker points back at the FPDU it
// sits in (or, FPDUPTR 0, starts one), which gives a candidate; FPDUs
// before it hold no Marker, so they are short and found by trying each
// offset up to it (at most kMarkerScan octets).
constexpr std::size_t kMarkerScan = 1024;

std::optional<std::size_t> FindMarkedFpduBoundary(const StreamPiece& piece, std::size_t from, std::size_t limit,
                                                  const DirectionFraming& f, wire::Profile profile) {
  if (!f.seq_start) return std::nullopt;  // Markers cannot be placed
  const ByteSpan data = piece.octets;
  const uint64_t seq_start = *f.seq_start;
  const auto marker_at = [&](uint64_t off) {
    return off >= seq_start && (off - seq_start) % wire::kMarkerInterval == 0;
  };
  const auto accept = [&](uint64_t start) {
    const std::size_t at = start - piece.offset;
    return Accept(ProbeFpdus(data.subspan(at), start, f.crc, true, seq_start, profile, f.crc ? 2 : 3), f.crc);
  };
  const uint64_t first = piece.offset + from;
  std::optional<uint64_t> found;
  uint64_t m = first <= seq_start ? seq_start
                                  : seq_start + (first - seq_start + wire::kMarkerInterval - 1) /
                                                    wire::kMarkerInterval * wire::kMarkerInterval;
  for (; !found && m + wire::kMarkerSize <= piece.offset + limit; m += wire::kMarkerInterval) {
    const uint16_t ptr = wire::FpduPtrForCompare(wire::LoadMarker(&data[m - piece.offset]).fpduptr);
    if (ptr > m - first) continue;  // the FPDU began before `from`
    uint64_t start = m - ptr;
    // A Marker right before ULPDU_Length belongs to the FPDU.
    if (ptr != 0 && start >= first + wire::kMarkerSize && marker_at(start - wire::kMarkerSize))
      start -= wire::kMarkerSize;
    if (accept(start)) found = start;
  }
  const uint64_t scan_end = std::min<uint64_t>(found.value_or(piece.offset + limit), first + kMarkerScan);
  for (uint64_t s = first; s < scan_end; ++s) {
    const uint64_t header = marker_at(s) ? s + wire::kMarkerSize : s;  // a leading Marker
    if (header + 4 > piece.end() || marker_at(header + 1) || marker_at(header + 2) || marker_at(header + 3)) continue;
    const uint8_t* h = &data[header - piece.offset];
    if (wire::LoadBe16(h) < kSmallestUlpdu || !PlausibleHeaders(ByteSpan(h + 2, 2))) continue;
    if (accept(s)) return s - piece.offset;
  }
  if (found) return *found - piece.offset;
  return std::nullopt;
}

}  // namespace

StartupFrameSeen FindStartupFrame(const DirectionStream& d) {
  StartupFrameSeen s;
  if (d.pieces.empty() || d.pieces[0].offset != 0) return s;
  const ByteSpan head = d.pieces[0].octets;
  if (head.size() < kKeyPrefix || !std::equal(head.begin(), head.begin() + kKeyPrefix, wire::kMpaRequestKey.begin())) {
    return s;
  }
  s.present = true;
  s.is_reply = head.size() > kKeyKindOctet && head[kKeyKindOctet] == wire::kMpaReplyKey[kKeyKindOctet];
  auto r = wire::DecodeMpaStartupFrame(head);
  if (r) {
    s.frame = std::move(r).value();
    s.is_reply = s.frame->is_reply;
    s.length = wire::MpaStartupFrameLength(head);
  } else {
    s.error = r.error();
  }
  return s;
}

ConnectionFraming DetermineFraming(const ReassembledConnection& c, wire::Profile profile) {
  ConnectionFraming cf;
  for (int d = 0; d < 2; ++d) {
    cf.startup[d] = FindStartupFrame(c.directions[d]);
    if (cf.startup[d].frame) cf.directions[d].seq_start = cf.startup[d].length;
  }
  const StartupFrameSeen& a = cf.startup[0];
  const StartupFrameSeen& b = cf.startup[1];
  cf.iwarp = a.present || b.present;
  if (a.present && b.present && a.is_reply == b.is_reply) {
    cf.note = std::string("both sides start with an MPA ") + (a.is_reply ? "Reply" : "Request") +
              " Frame: the Initiator is taken to be the client";
    cf.initiator = 0;
  } else if ((a.present && !a.is_reply) || (b.present && b.is_reply)) {
    cf.initiator = 0;
  } else if (a.present || b.present) {
    cf.initiator = 1;
  }
  if (cf.initiator) Negotiated(cf, *cf.initiator, profile, c);
  return cf;
}

std::optional<std::size_t> FindFpduBoundary(const StreamPiece& piece, std::size_t from, const DirectionFraming& f,
                                            wire::Profile profile) {
  const ByteSpan data = piece.octets;
  if (from >= data.size()) return std::nullopt;
  const std::size_t limit = std::min(data.size(), from + kResyncWindow);
  if (f.markers) return FindMarkedFpduBoundary(piece, from, limit, f, profile);
  if (!f.crc && !f.decided) return std::nullopt;  // nothing to check a guess against
  for (std::size_t o = from; o + wire::kFpduOverhead <= limit; ++o) {
    const std::size_t length = wire::LoadBe16(&data[o]);
    const std::size_t end = o + wire::FpduLength(length);
    if (length < kSmallestUlpdu || end > data.size() || !PlausibleHeaders(data.subspan(o + 2))) continue;
    // The next FPDU's header too, when it is there: random octets rarely
    // pass both, which keeps CRCs over non-iWARP streams rare.
    if (end + 4 <= data.size() &&
        (wire::LoadBe16(&data[end]) < kSmallestUlpdu || !PlausibleHeaders(data.subspan(end + 2)))) {
      continue;
    }
    if (f.crc && !wire::DecodeFpdu(data.subspan(o), true).ok()) continue;
    if (Accept(ProbeFpdus(data.subspan(o), piece.offset + o, f.crc, false, std::nullopt, profile, f.crc ? 2 : 3),
               f.crc)) {
      return o;
    }
  }
  return std::nullopt;
}

}  // namespace rdmapct::capture
