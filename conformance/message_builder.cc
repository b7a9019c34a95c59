#include "conformance/message_builder.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <variant>

#include "conformance/frame_text.h"
#include "proto/message_type.h"
#include "reference/wire/ddp.h"
#include "reference/wire/ddp_segmentation.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::conformance {
namespace {

namespace pb = google::protobuf;
using wire::Opcode;

// The set fields of a Fields message by name; appliers Take() what they
// understand, and whatever is left does not apply to the message.
class FieldBag {
 public:
  explicit FieldBag(const proto::Fields& f) {
    const pb::Reflection* refl = f.GetReflection();
    std::vector<const pb::FieldDescriptor*> set;
    refl->ListFields(f, &set);
    for (const pb::FieldDescriptor* d : set) {
      switch (d->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_UINT32:
          numbers_[d->name()] = refl->GetUInt32(f, d);
          break;
        case pb::FieldDescriptor::CPPTYPE_UINT64:
          numbers_[d->name()] = refl->GetUInt64(f, d);
          break;
        case pb::FieldDescriptor::CPPTYPE_INT32:
          numbers_[d->name()] = static_cast<uint64_t>(refl->GetInt32(f, d));
          break;
        case pb::FieldDescriptor::CPPTYPE_INT64:
          numbers_[d->name()] = static_cast<uint64_t>(refl->GetInt64(f, d));
          break;
        default:
          strings_[d->name()] = refl->GetString(f, d);
          break;
      }
    }
  }
  template <class T>
  void Apply(const char* name, T& field) {
    if (auto it = numbers_.find(name); it != numbers_.end()) {
      field = static_cast<T>(it->second);
      numbers_.erase(it);
    }
  }
  std::optional<uint64_t> Take(const char* name) {
    auto it = numbers_.find(name);
    if (it == numbers_.end()) return std::nullopt;
    uint64_t v = it->second;
    numbers_.erase(it);
    return v;
  }
  std::optional<std::string> TakeString(const char* name) {
    auto it = strings_.find(name);
    if (it == strings_.end()) return std::nullopt;
    std::string v = it->second;
    strings_.erase(it);
    return v;
  }
  // "" when every field was applied, else the first one left over.
  std::string Leftover() const {
    if (!numbers_.empty()) return numbers_.begin()->first;
    if (!strings_.empty()) return strings_.begin()->first;
    return {};
  }

 private:
  std::map<std::string, uint64_t> numbers_;
  std::map<std::string, std::string> strings_;
};

// DDP header fields and the RDMAP Control Field (RsvdULP[0]); `l` only when
// `with_last` (message-level L is applied after segmentation).
void ApplyDdpFields(FieldBag& f, wire::DdpSegmentHeader& h, wire::Profile profile, bool with_last) {
  f.Apply("t", h.tagged);
  if (with_last) f.Apply("l", h.last);
  f.Apply("rsvd", h.rsvd);
  f.Apply("dv", h.ddp_version);
  wire::RdmapControl c = wire::DecodeRdmapControl(h.rsvd_ulp0, profile);
  f.Apply("rv", c.rdma_version);
  f.Apply("rsv", c.rsv);
  f.Apply("opcode", c.opcode);
  h.rsvd_ulp0 = wire::EncodeRdmapControl(c, profile);
  f.Apply("stag", h.stag);
  f.Apply("tagged_offset", h.tagged_offset);
  f.Apply("invalidate_stag", h.invalidate_stag);
  f.Apply("queue_number", h.queue_number);
  f.Apply("message_offset", h.message_offset);
}

// The Terminate fields of a Terminate the suite sends; "" or an error.
std::string ApplyTerminateFields(FieldBag& f, wire::TerminateHeader& t) {
  f.Apply("terminate_layer", t.code.layer);
  f.Apply("terminate_etype", t.code.error_type);
  f.Apply("terminate_error_code", t.code.error_code);
  f.Apply("terminate_m", t.m);
  f.Apply("terminate_d", t.d);
  f.Apply("terminate_r", t.r);
  f.Apply("terminate_reserved", t.reserved);
  f.Apply("ddp_segment_length", t.ddp_segment_length);
  if (auto hex = f.TakeString("terminated_ddp_header_hex")) {
    std::optional<wire::Bytes> b = ParseHexString(*hex);
    auto seg = b ? wire::DecodeDdpSegment(*b) : wire::DecodeDdpSegment({});
    if (!seg.ok()) return "terminated_ddp_header_hex is not a DDP header";
    t.terminated_ddp_header = seg->header;
  }
  if (auto hex = f.TakeString("terminated_rdma_header_hex")) {
    std::optional<wire::Bytes> b = ParseHexString(*hex);
    auto rr = b ? wire::DecodeReadRequestHeader(*b) : wire::DecodeReadRequestHeader({});
    if (!rr.ok()) return "terminated_rdma_header_hex is not a 28-octet RDMA Read Request header";
    t.terminated_rdma_header = *rr;
  }
  // Bit-driven form: present exactly what the bits announce.
  t.has_segment_length = t.m || t.d;
  t.has_ddp_header = t.d;
  t.has_rdma_header = t.r;
  return {};
}

// Overrides of the RDMAP header of the template's type; `storage` keeps
// octets a header view points to (Verify hash values). "" or an error.
std::string ApplyHeaderFields(FieldBag& f, wire::RdmapHeader& header, wire::Bytes& storage) {
  if (auto* r = std::get_if<wire::ReadRequestHeader>(&header)) {
    f.Apply("sink_stag", r->sink_stag);
    f.Apply("sink_tagged_offset", r->sink_tagged_offset);
    f.Apply("read_message_size", r->read_message_size);
    f.Apply("source_stag", r->source_stag);
    f.Apply("source_tagged_offset", r->source_tagged_offset);
  } else if (auto* t = std::get_if<wire::TerminateHeader>(&header)) {
    if (std::string e = ApplyTerminateFields(f, *t); !e.empty()) return e;
  } else if (auto* i = std::get_if<wire::ImmediateDataHeader>(&header)) {
    f.Apply("immediate_data", i->immediate_data);
  } else if (auto* a = std::get_if<wire::AtomicRequestHeader>(&header)) {
    f.Apply("atomic_reserved", a->reserved);
    f.Apply("atomic_opcode", a->atomic_opcode);
    f.Apply("request_identifier", a->request_identifier);
    f.Apply("remote_stag", a->remote_stag);
    f.Apply("remote_tagged_offset", a->remote_tagged_offset);
    f.Apply("add_or_swap_data", a->add_or_swap_data);
    f.Apply("add_or_swap_mask", a->add_or_swap_mask);
    f.Apply("compare_data", a->compare_data);
    f.Apply("compare_mask", a->compare_mask);
  } else if (auto* r = std::get_if<wire::AtomicResponseHeader>(&header)) {
    f.Apply("original_request_identifier", r->original_request_identifier);
    f.Apply("original_remote_data_value", r->original_remote_data_value);
  } else if (auto* fl = std::get_if<wire::FlushRequestHeader>(&header)) {
    f.Apply("data_sink_stag", fl->data_sink_stag);
    f.Apply("data_sink_length", fl->data_sink_length);
    f.Apply("data_sink_tagged_offset", fl->data_sink_tagged_offset);
    f.Apply("flush_disposition_flags", fl->flush_disposition_flags);
  } else if (auto* v = std::get_if<wire::VerifyRequestHeader>(&header)) {
    f.Apply("data_sink_stag", v->data_sink_stag);
    f.Apply("data_sink_length", v->data_sink_length);
    f.Apply("data_sink_tagged_offset", v->data_sink_tagged_offset);
    if (auto hex = f.TakeString("hash_value_hex")) {
      std::optional<wire::Bytes> b = ParseHexString(*hex);
      if (!b) return "hash_value_hex does not parse";
      storage = *b;
      v->hash_value = storage;
    }
  } else if (auto* w = std::get_if<wire::AtomicWriteRequestHeader>(&header)) {
    f.Apply("data_sink_stag", w->data_sink_stag);
    f.Apply("data_sink_length", w->data_sink_length);
    f.Apply("data_sink_tagged_offset", w->data_sink_tagged_offset);
    f.Apply("atomic_write_data", w->data);
  }
  return {};
}

// The valid single-segment default of a message type (before overrides).
wire::RdmapSegment Template(const proto::Message& m, Opcode op, const ResolvedRef& remote, uint32_t msn,
                            BuildContext& ctx, uint32_t invalidate_stag, uint32_t length) {
  switch (op) {
    case Opcode::kRdmaWrite:
      return wire::MakeRdmaWrite(remote.stag, remote.tagged_offset, {});
    case Opcode::kRdmaReadRequest:
      return wire::MakeReadRequest(
          msn, {kSuiteSinkStag, ctx.state->next_sink_to, length, remote.stag, remote.tagged_offset});
    case Opcode::kRdmaReadResponse:
      return wire::MakeReadResponse(remote.stag, remote.tagged_offset, {});
    case Opcode::kSend:
    case Opcode::kSendWithSe:
    case Opcode::kSendWithInvalidate:
    case Opcode::kSendWithSeAndInvalidate:
      return wire::MakeSend(op, msn, {}, invalidate_stag);
    case Opcode::kTerminate:
      return wire::MakeTerminate(msn, wire::TerminateHeader{});
    case Opcode::kImmediateData:
    case Opcode::kImmediateDataWithSe:
      return wire::MakeImmediateData(msn, 0, op == Opcode::kImmediateDataWithSe);
    case Opcode::kAtomicRequest: {
      wire::AtomicRequestHeader h;
      h.request_identifier = ctx.state->next_request_identifier;
      h.remote_stag = remote.stag;
      h.remote_tagged_offset = remote.tagged_offset;
      return wire::MakeAtomicRequest(msn, h);
    }
    case Opcode::kAtomicResponse:
      return wire::MakeAtomicResponse(msn, {});
    case Opcode::kFlushRequest:
      return wire::MakeFlushRequest(msn, {remote.stag, length, remote.tagged_offset, wire::kFlushToPersistence});
    case Opcode::kFlushResponse:
      return wire::MakeFlushResponse(msn);
    case Opcode::kVerifyRequest:
      return wire::MakeVerifyRequest(msn, {remote.stag, length, remote.tagged_offset, {}});
    case Opcode::kVerifyResponse:
      return wire::MakeVerifyResponse(msn, {});
    case Opcode::kAtomicWriteRequest:
      return wire::MakeAtomicWriteRequest(msn, {remote.stag, 8, remote.tagged_offset, 0});
    case Opcode::kAtomicWriteResponse:
      return wire::MakeAtomicWriteResponse(msn);
  }
  (void)m;
  return wire::MakeSegment(op);
}

// Splits the message body per Segmentation; every header starts as `first`.
std::optional<std::vector<wire::PlannedDdpSegment>> Segment(const wire::DdpSegmentHeader& first, wire::ByteSpan body,
                                                            const proto::Segmentation& s, std::size_t mulpdu,
                                                            std::string& error) {
  if (s.payload_size().empty()) {
    const std::size_t limit = s.has_mulpdu() ? s.mulpdu() : mulpdu;
    auto planned = wire::SegmentDdpMessage(first, body, limit);
    if (!planned.ok()) {
      error = "segmentation: " + planned.error().Describe();
      return std::nullopt;
    }
    return std::move(*planned);
  }
  const uint64_t total = std::accumulate(s.payload_size().begin(), s.payload_size().end(), uint64_t{0});
  if (total != body.size()) {
    error = "segmentation payload sizes add up to " + std::to_string(total) + ", the message has " +
            std::to_string(body.size()) + " octets";
    return std::nullopt;
  }
  std::vector<wire::PlannedDdpSegment> out;
  std::size_t at = 0;
  for (int i = 0; i < s.payload_size_size(); ++i) {
    wire::PlannedDdpSegment seg{first, body.subspan(at, s.payload_size(i))};
    seg.header.last = i + 1 == s.payload_size_size();
    if (first.tagged)
      seg.header.tagged_offset = first.tagged_offset + at;
    else
      seg.header.message_offset = static_cast<uint32_t>(first.message_offset + at);
    at += s.payload_size(i);
    out.push_back(seg);
  }
  return out;
}

// Per-segment overrides and the transmission order.
bool Arrange(std::vector<wire::PlannedDdpSegment>& segs, const proto::Segmentation& s, wire::Profile profile,
             std::string& error) {
  for (const proto::SegmentFields& sf : s.segment()) {
    if (sf.index() >= segs.size()) {
      error = "segment override for index " + std::to_string(sf.index()) + " of " + std::to_string(segs.size());
      return false;
    }
    FieldBag bag(sf.set());
    ApplyDdpFields(bag, segs[sf.index()].header, profile, true);
    if (auto msn = bag.Take("msn")) segs[sf.index()].header.msn = static_cast<uint32_t>(*msn);
    if (std::string left = bag.Leftover(); !left.empty()) {
      error = "field " + left + " cannot be overridden per segment";
      return false;
    }
  }
  if (s.order().empty()) return true;
  std::vector<uint32_t> sorted(s.order().begin(), s.order().end());
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted.size() != segs.size() || sorted[i] != i) {
      error = "segmentation order must be a permutation of 0.." + std::to_string(segs.size() - 1);
      return false;
    }
  }
  std::vector<wire::PlannedDdpSegment> ordered;
  for (uint32_t i : s.order()) ordered.push_back(segs[i]);
  segs = std::move(ordered);
  return true;
}

}  // namespace

RegionMap::RegionMap(const wire::Advertisement& adv, const proto::Needs& needs) {
  for (int role = proto::RW; role <= proto::SHARED_ATOMIC; ++role) {
    uint32_t min_length = 0;
    for (const proto::RegionNeed& n : needs.region()) {
      if (n.role() == role) min_length = std::max(min_length, n.min_length());
    }
    // proto::Region is wire::RegionRole + 1 (both follow convention §3.3).
    const auto* r = wire::SelectRegion(adv, static_cast<wire::RegionRole>(role - 1), min_length);
    if (r) regions_[role] = *r;
  }
}

const wire::AdvertisedRegion* RegionMap::Find(proto::Region role) const {
  if (role <= 0 || static_cast<std::size_t>(role) >= regions_.size() || !regions_[role]) return nullptr;
  return &*regions_[role];
}

std::optional<ResolvedRef> ResolveRef(const proto::RegionRef& ref, const RegionMap& regions, std::string& error) {
  ResolvedRef out;
  uint64_t base = 0;
  if (ref.stag_source_case() == proto::RegionRef::kRegion) {
    out.region = regions.Find(ref.region());
    if (!out.region) {
      error = "the target advertises no region for role " + proto::Region_Name(ref.region());
      return std::nullopt;
    }
    out.stag = out.region->stag;
    base = out.region->base_tagged_offset;
    if (ref.anchor() == proto::RegionRef::END) base += out.region->length;
  } else {
    out.stag = ref.stag();
  }
  out.tagged_offset = ref.has_tagged_offset() ? ref.tagged_offset() : base + static_cast<uint64_t>(ref.offset());
  return out;
}

std::optional<wire::Bytes> BuildPayload(const proto::Payload& p, const ResolvedRef* dest, std::string& error) {
  switch (p.content_case()) {
    case proto::Payload::kHex: {
      std::optional<wire::Bytes> b = ParseHexString(p.hex());
      if (!b) error = "payload hex does not parse";
      return b;
    }
    case proto::Payload::kText:
      return wire::Bytes(p.text().begin(), p.text().end());
    case proto::Payload::kFill:
      break;
    default:
      return wire::Bytes{};
  }
  const proto::Fill& f = p.fill();
  wire::Bytes out(f.length());
  switch (f.kind()) {
    case proto::Fill::COUNTER:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(f.byte() + i);
      break;
    case proto::Fill::CONSTANT:
      std::fill(out.begin(), out.end(), static_cast<uint8_t>(f.byte()));
      break;
    default:
      if (!dest || !dest->region) {
        error = "a COMPLEMENT_OF_PATTERN fill needs a destination region";
        return std::nullopt;
      }
      out = wire::RegionPattern(*dest->region, dest->tagged_offset, f.length());
      for (uint8_t& b : out) b = static_cast<uint8_t>(~b);
  }
  return out;
}

std::optional<wire::Bytes> RawOctets(const proto::RawBytes& raw, std::string& error) {
  std::optional<wire::Bytes> b = ParseHexString(raw.hex());
  if (!b) error = "raw hex does not parse";
  return b;
}

namespace {

// The DDP segments of a template after overrides, segmentation and order.
std::optional<std::vector<wire::PlannedDdpSegment>> Plan(const proto::Send& send, const wire::RdmapSegment& seg,
                                                         const wire::Bytes& body, std::optional<uint64_t> last,
                                                         BuildContext& ctx, std::string& error) {
  auto segs = Segment(seg.ddp, body, send.segmentation(), ctx.mulpdu, error);
  if (!segs) return std::nullopt;
  if (last) {
    for (wire::PlannedDdpSegment& s : *segs) s.header.last = *last != 0;
  }
  if (!Arrange(*segs, send.segmentation(), ctx.profile, error)) return std::nullopt;
  return segs;
}

// What the matchers and the memory model need to know about the message.
void Describe(const proto::Send& send, Opcode op, const wire::RdmapSegment& seg, const wire::Bytes& body,
              bool custom_header, const wire::Bytes& payload, const ResolvedRef& remote, BuiltMessage& out) {
  SentMessage& sent = out.sent;
  sent.label = send.label();
  sent.opcode = op;
  const wire::ByteSpan first = out.ulpdus.front();
  auto decoded = wire::DecodeDdpSegment(first);
  if (decoded.ok()) {
    sent.ddp_header = decoded->header;
    sent.ddp_header_octets.assign(first.begin(), first.begin() + decoded->header.HeaderLength());
    sent.payload_length = static_cast<uint32_t>(decoded->payload.size());
  }
  sent.ulpdu_length = static_cast<uint32_t>(first.size());
  sent.ulp_payload = payload;
  const auto* a = std::get_if<wire::AtomicRequestHeader>(&seg.header);
  if (a && !custom_header) sent.atomic_request = *a;
  const auto* r = std::get_if<wire::ReadRequestHeader>(&seg.header);
  if (r && !custom_header) {
    sent.read_request = *r;
    sent.rdma_header_octets.assign(body.begin(), body.begin() + wire::kReadRequestHeaderLength);
    out.read = ReadRequestSent{r->sink_stag, r->sink_tagged_offset, r->read_message_size, std::nullopt, ""};
  }
  // The suite's memory model follows plain, unmodified Writes into a
  // writable region only (anything else may be rejected by the target).
  const proto::Message& m = send.message();
  const wire::AdvertisedRegion* region = remote.region;
  if (op == Opcode::kRdmaWrite && region && region->usable() && region->Has(wire::kAccessRemoteWrite) &&
      m.set().ByteSizeLong() == 0 && send.segmentation().segment().empty() && !send.has_framing() &&
      remote.tagged_offset >= region->base_tagged_offset &&
      remote.tagged_offset - region->base_tagged_offset + payload.size() <= region->length) {
    out.write = MemoryWrite{region->memory_object, region->ObjectOffsetOf(remote.tagged_offset), payload};
  }
}

// A RegionRef the message may leave unset (then STag 0, TO 0).
bool ResolveOptional(bool present, const proto::RegionRef& ref, const RegionMap& regions, ResolvedRef& out,
                     std::string& error) {
  if (!present) return true;
  std::optional<ResolvedRef> r = ResolveRef(ref, regions, error);
  if (r) out = *r;
  return r.has_value();
}

// Message.length_from_mulpdu: what `segments` Read Response segments of
// the target carry at its MULPDU (each after a 14-octet tagged DDP header).
// The target's EMSS is known only within a range (BuildContext), so the
// bound that cannot fail a conforming target is taken: a length beyond
// `segments` FPDUs (delta > 0, the target must split) from the largest
// MULPDU it may use, a length within them from the suite's own.
uint32_t LengthFromMulpdu(const proto::MulpduLength& l, const BuildContext& ctx) {
  const std::size_t target_mulpdu =
      l.delta() > 0 ? std::max(ctx.target_mulpdu, ctx.target_mulpdu_max) : ctx.target_mulpdu;
  const int64_t per_segment = static_cast<int64_t>(target_mulpdu) - static_cast<int64_t>(wire::kDdpTaggedHeaderLength);
  const int64_t n = static_cast<int64_t>(std::max<uint32_t>(l.segments(), 1)) * per_segment + l.delta();
  return static_cast<uint32_t>(std::clamp<int64_t>(n, 0, UINT32_MAX));
}

// RDMAP header (or the case's raw header octets) followed by the payload.
std::optional<wire::Bytes> Body(const wire::RdmapHeader& header, const std::optional<std::string>& header_hex,
                                const wire::Bytes& payload, std::string& error) {
  wire::Bytes body;
  if (header_hex) {
    std::optional<wire::Bytes> h = ParseHexString(*header_hex);
    if (!h) {
      error = "rdmap_header_hex does not parse";
      return std::nullopt;
    }
    body = *h;
  } else {
    wire::EncodeRdmapHeader(header, body);
  }
  body.insert(body.end(), payload.begin(), payload.end());
  return body;
}

}  // namespace

std::optional<BuiltMessage> BuildMessage(const proto::Send& send, BuildContext& ctx, std::string& error) {
  const proto::Message& m = send.message();
  if (m.type() == proto::Message::TYPE_UNSPECIFIED) {
    error = "a message without a type";
    return std::nullopt;
  }
  const Opcode op = proto::OpcodeOf(m.type());
  const wire::OpcodeInfo& info = wire::InfoFor(op);
  ResolvedRef remote, invalidate;
  if (!ResolveOptional(m.has_remote(), m.remote(), *ctx.regions, remote, error) ||
      !ResolveOptional(m.has_invalidate(), m.invalidate(), *ctx.regions, invalidate, error)) {
    return std::nullopt;
  }
  std::optional<wire::Bytes> payload = BuildPayload(m.payload(), m.has_remote() ? &remote : nullptr, error);
  if (!payload) return std::nullopt;
  FieldBag bag(m.set());
  if (auto n = bag.Take("payload_length")) {
    const std::size_t old = payload->size();
    payload->resize(*n);
    for (std::size_t i = old; i < payload->size(); ++i) (*payload)[i] = static_cast<uint8_t>(i);
  }
  const uint32_t length = m.has_length_from_mulpdu()       ? LengthFromMulpdu(m.length_from_mulpdu(), ctx)
                          : m.has_length()                 ? m.length()
                          : op == Opcode::kRdmaReadRequest ? 64
                                                           : static_cast<uint32_t>(payload->size());
  // "next" MSN of the opcode's queue; an explicit MSN does not advance it.
  const int qn = info.tagged ? -1 : info.queue_number;
  uint32_t msn = qn >= 0 ? ctx.state->next_msn[qn] : 0;
  const std::optional<uint64_t> explicit_msn = bag.Take("msn");
  const std::optional<uint64_t> delta = bag.Take("msn_delta");
  if (explicit_msn)
    msn = static_cast<uint32_t>(*explicit_msn);
  else if (delta)
    msn = static_cast<uint32_t>(msn + static_cast<int64_t>(*delta));
  wire::RdmapSegment seg = Template(m, op, remote, msn, ctx, invalidate.stag, length);
  seg.ddp.msn = msn;
  ApplyDdpFields(bag, seg.ddp, ctx.profile, false);
  const std::optional<uint64_t> last = bag.Take("l");
  const std::optional<std::string> header_hex = bag.TakeString("rdmap_header_hex");
  wire::Bytes storage;
  if (std::string e = ApplyHeaderFields(bag, seg.header, storage); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  if (std::string left = bag.Leftover(); !left.empty()) {
    error = "field " + left + " does not apply to " + info.name;
    return std::nullopt;
  }
  std::optional<wire::Bytes> body = Body(seg.header, header_hex, *payload, error);
  if (!body) return std::nullopt;
  auto segs = Plan(send, seg, *body, last, ctx, error);
  if (!segs) return std::nullopt;
  BuiltMessage out;
  for (const wire::PlannedDdpSegment& s : *segs) {
    wire::Bytes u;
    wire::EncodeDdpHeader(s.header, u);
    u.insert(u.end(), s.payload.begin(), s.payload.end());
    out.ulpdus.push_back(std::move(u));
  }
  Describe(send, op, seg, *body, header_hex.has_value(), *payload, remote, out);
  if (qn >= 0 && !explicit_msn && !delta) ++ctx.state->next_msn[qn];
  if (op == Opcode::kRdmaReadRequest) ctx.state->next_sink_to += std::max<uint64_t>(length, 1);
  if (op == Opcode::kAtomicRequest) ++ctx.state->next_request_identifier;
  return out;
}

}  // namespace rdmapct::conformance
