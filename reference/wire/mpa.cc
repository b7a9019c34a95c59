#include "reference/wire/mpa.h"

#include <algorithm>

namespace rdmapct::wire {
namespace {

constexpr std::size_t kPdLengthOffset = 18;

DecodeError Error(DecodeErrorKind kind, const char* field, std::size_t offset, uint64_t value) {
  return DecodeError{kind, field, offset, value};
}

// REQ R5044-7.1.1-03, R5044-7.1.1-05, R5044-7.1.2-R05: the receiver checks the
// Key; R5044-7.1.2-R08a: a Request where a Reply was expected (and vice
// versa) is how Initiator/Initiator startups are detected. Works on a prefix
// of the key too, so a streaming caller learns of a bad key at once.
std::optional<DecodeError> CheckKey(ByteSpan key, MpaFrameKind expect) {
  const bool want_req = expect != MpaFrameKind::kReply;
  const bool want_rep = expect != MpaFrameKind::kRequest;
  for (std::size_t i = 0; i < key.size() && i < kMpaKeySize; ++i) {
    // The two keys differ only at octet 9 ('q' / 'p').
    if ((want_req && key[i] == kMpaRequestKey[i]) || (want_rep && key[i] == kMpaReplyKey[i])) continue;
    const char* field = !want_rep   ? "Key (expected \"MPA ID Req Frame\")"
                        : !want_req ? "Key (expected \"MPA ID Rep Frame\")"
                                    : "Key (expected \"MPA ID Req Frame\" or \"MPA ID Rep Frame\")";
    return Error(DecodeErrorKind::kBadKey, field, i, key[i]);
  }
  return std::nullopt;
}

}  // namespace

uint32_t EncodeEnhancedWord(const EnhancedIrdOrd& e) {
  return uint32_t{e.peer_to_peer} << 31 | uint32_t{e.send_rtr} << 30 | uint32_t(e.ird & kIrdOrdMask) << 16 |
         uint32_t{e.write_rtr} << 15 | uint32_t{e.read_rtr} << 14 | (e.ord & kIrdOrdMask);
}

EnhancedIrdOrd DecodeEnhancedWord(uint32_t w) {
  EnhancedIrdOrd e;
  e.peer_to_peer = (w >> 31) & 1;
  e.send_rtr = (w >> 30) & 1;
  e.ird = static_cast<uint16_t>((w >> 16) & kIrdOrdMask);
  e.write_rtr = (w >> 15) & 1;
  e.read_rtr = (w >> 14) & 1;
  e.ord = static_cast<uint16_t>(w & kIrdOrdMask);
  return e;
}

std::size_t MpaStartupFrame::EncodedSize() const {
  const std::size_t pd = private_data.size() + (enhanced_data ? kMpaEnhancedDataSize : 0);
  return kMpaStartupHeaderSize + std::min<std::size_t>(pd, 0xFFFF);
}

std::size_t MpaStartupFrameLength(ByteSpan prefix) {
  if (prefix.size() < kMpaStartupHeaderSize) return kMpaStartupHeaderSize;
  return kMpaStartupHeaderSize + LoadBe16(prefix.data() + kPdLengthOffset);
}

Result<MpaStartupFrame> DecodeMpaStartupFrame(ByteSpan data, const MpaFrameDecodeOptions& options) {
  if (auto bad = CheckKey(data.first(std::min(data.size(), kMpaKeySize)), options.expect)) return *bad;
  ByteReader r(data);
  DecodeError err{};
  ByteSpan key;
  uint8_t flags = 0, rev = 0;
  uint16_t pd_length = 0;
  if (!r.ReadSpan("Key", kMpaKeySize, key, err)) return err;
  MpaStartupFrame f;
  f.is_reply = key[9] == kMpaReplyKey[9];
  if (!r.Read8("M C R S Res", flags, err) || !r.Read8("Rev", rev, err) || !r.Read16("PD_Length", pd_length, err)) {
    return err;
  }
  // REQ R5044-7.1.1-22, R5044-7.1.1-24: Private Data over 512 octets is an
  // improperly formatted frame. Reported before waiting for the octets.
  if (pd_length > options.max_private_data) {
    return Error(DecodeErrorKind::kTooLong, "PD_Length", kPdLengthOffset, pd_length);
  }
  ByteSpan pd;
  if (!r.ReadSpan("Private Data", pd_length, pd, err)) return err;

  f.marker_required = flags & kMpaFlagM;
  f.crc_required = flags & kMpaFlagC;
  f.reject = flags & kMpaFlagR;
  f.enhanced = flags & kMpaFlagS;  // REQ R6581-6-01
  f.res = flags & kMpaResMask;     // REQ R5044-7.1.1-16, R6581-6-03: not checked
  f.revision = rev;                // REQ R5044-7.1.1-18: reported; policy decides
  // REQ R6581-6-08, R6581-9-01: with S set (and Rev >= 2, decisions D-H3) the
  // Private Data begins with the enhanced word; the ULP's part follows (R6581-9-02).
  if (f.enhanced && rev >= 2) {
    if (pd.size() < kMpaEnhancedDataSize) {
      return Error(DecodeErrorKind::kInvalidValue, "PD_Length", kPdLengthOffset, pd_length);
    }
    f.enhanced_data = DecodeEnhancedWord(LoadBe32(pd.data()));
    pd = pd.subspan(kMpaEnhancedDataSize);
  }
  f.private_data.assign(pd.begin(), pd.end());
  return f;
}

void AppendMpaStartupFrame(Bytes& out, const MpaStartupFrame& f) {
  ByteWriter w(out);
  const auto& key = f.is_reply ? kMpaReplyKey : kMpaRequestKey;  // REQ R5044-7.1.1-02/04
  w.PutBytes(key);
  // REQ R5044-7.1.1-15, R6581-6-02: Res is zero unless the caller sets it on purpose.
  w.Put8(static_cast<uint8_t>((f.marker_required ? kMpaFlagM : 0) | (f.crc_required ? kMpaFlagC : 0) |
                              (f.reject ? kMpaFlagR : 0) | (f.enhanced ? kMpaFlagS : 0) | (f.res & kMpaResMask)));
  w.Put8(f.revision);
  const std::size_t enhanced = f.enhanced_data ? kMpaEnhancedDataSize : 0;
  const std::size_t pd_total = std::min<std::size_t>(f.private_data.size() + enhanced, 0xFFFF);
  // REQ R5044-7.1.1-21: PD_Length is the Private Data length in octets.
  w.Put16(f.pd_length_override.value_or(static_cast<uint16_t>(pd_total)));
  if (f.enhanced_data) w.Put32(EncodeEnhancedWord(*f.enhanced_data));
  w.PutBytes(ByteSpan(f.private_data).first(pd_total - enhanced));
}

Bytes EncodeMpaStartupFrame(const MpaStartupFrame& frame) {
  Bytes out;
  out.reserve(frame.EncodedSize());
  AppendMpaStartupFrame(out, frame);
  return out;
}

MpaNegotiation NegotiateMpa(const MpaStartupFrame& request, const MpaStartupFrame& reply) {
  MpaNegotiation n;
  // REQ R5044-7.1.1-11, R5044-7.1.1-12: CRCs unless both sides sent C = 0.
  n.crc = request.crc_required || reply.crc_required;
  // REQ R5044-7.1.1-06, R5044-7.1.1-07, R5044-7.1.1-08: M governs the
  // *other* side's transmissions (decisions D-G3).
  n.markers_responder_to_initiator = request.marker_required;
  n.markers_initiator_to_responder = reply.marker_required;
  n.rejected = reply.reject;
  return n;
}

namespace {

void NegotiateRtr(const EnhancedIrdOrd& req, const EnhancedIrdOrd& rep, IrdOrdOutcome& o) {
  // REQ R6581-9.2-05, R6581-9.2-15: the Reply echoes A.
  o.reply_a_mismatch = req.peer_to_peer != rep.peer_to_peer;
  o.peer_to_peer = req.peer_to_peer && rep.peer_to_peer;
  // REQ R6581-9.2-17: with A = 0, B/C/D are ignored.
  if (!o.peer_to_peer) return;
  o.rtr_send = req.send_rtr && rep.send_rtr;
  o.rtr_write = req.write_rtr && rep.write_rtr;
  o.rtr_read = req.read_rtr && rep.read_rtr;
  // REQ R6581-9.2-08, R6581-9.2-10: the responder offers at least one type.
  o.reply_offers_no_rtr = !rep.send_rtr && !rep.write_rtr && !rep.read_rtr;
}

}  // namespace

IrdOrdOutcome NegotiateIrdOrd(const MpaStartupFrame& request, const MpaStartupFrame& reply) {
  IrdOrdOutcome o;
  if (!request.enhanced_data || !reply.enhanced_data) return o;
  const EnhancedIrdOrd& req = *request.enhanced_data;
  const EnhancedIrdOrd& rep = *reply.enhanced_data;
  o.applies = true;
  o.responder_ird = rep.ird;
  o.responder_ord = rep.ord;
  // REQ R6581-9.1-09, R6581-9.1-15, R6581-9.1-17
  o.initiator_ird = rep.ord == kIrdOrdNotNegotiated ? req.ird : std::max(req.ird, rep.ord);
  o.initiator_ord = rep.ird == kIrdOrdNotNegotiated ? req.ord : std::min(req.ord, rep.ird);
  o.initiator_ird_increased = o.initiator_ird > req.ird;
  // REQ R6581-9.1-06 (a reject may name the ORD it needs, R6581-9.1-07).
  o.responder_ord_exceeds_initiator_ird =
      !reply.reject && req.ird != kIrdOrdNotNegotiated && rep.ord != kIrdOrdNotNegotiated && rep.ord > req.ird;
  // REQ R6581-9.1-14, R6581-9.1-16
  o.responder_ird_not_3fff = req.ord == kIrdOrdNotNegotiated && rep.ird != kIrdOrdNotNegotiated;
  o.responder_ord_not_3fff = req.ird == kIrdOrdNotNegotiated && rep.ord != kIrdOrdNotNegotiated;
  NegotiateRtr(req, rep, o);
  return o;
}

}  // namespace rdmapct::wire
