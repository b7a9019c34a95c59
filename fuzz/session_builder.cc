#include "fuzz/session_builder.h"

#include <algorithm>

#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/terminate_codes.h"

namespace rdmapct::fuzz {

using wire::Bytes;
using wire::ByteSpan;
using wire::Opcode;

wire::Profile SessionProfile(const proto::FuzzSession& s) {
  switch (s.connection().profile()) {
    case proto::RFC7306:
      return wire::Profile::kRfc7306;
    case proto::COMMIT:
      return wire::Profile::kCommit;
    default:
      return wire::Profile::kRfc5040;
  }
}

wire::MpaStartupFrame BuildRequest(const proto::FuzzSession& s) {
  const proto::SessionConnection& c = s.connection();
  wire::MpaStartupFrame f;
  f.is_reply = false;
  f.crc_required = !c.crc_off();
  f.marker_required = c.markers();
  f.revision = static_cast<uint8_t>(c.mpa_revision() == 0 ? 1 : c.mpa_revision());
  if (c.rev0()) f.revision = 0;
  f.res = static_cast<uint8_t>(c.request_res() & wire::kMpaResMask);
  if (c.enhanced()) {
    if (c.mpa_revision() == 0) f.revision = 2;
    f.enhanced = true;
    wire::EnhancedIrdOrd e;
    e.peer_to_peer = (c.rtr_flags() & 1) != 0;
    e.send_rtr = (c.rtr_flags() & 2) != 0;
    e.write_rtr = (c.rtr_flags() & 4) != 0;
    e.read_rtr = (c.rtr_flags() & 8) != 0;
    e.ird = static_cast<uint16_t>(c.ird() & wire::kIrdOrdMask);
    e.ord = static_cast<uint16_t>(c.ord() & wire::kIrdOrdMask);
    f.enhanced_data = e;
  }
  return f;
}

SessionContext MakeSessionContext(const proto::FuzzSession& s, const wire::MpaStartupFrame& request,
                                  const wire::MpaStartupFrame& reply, wire::Advertisement advertisement) {
  SessionContext ctx;
  ctx.profile = SessionProfile(s);
  ctx.advertisement = std::move(advertisement);
  ctx.crc = request.crc_required || reply.crc_required;
  ctx.markers_to_target = reply.marker_required;
  return ctx;
}

SessionBuilder::SessionBuilder(SessionContext context) : ctx_(std::move(context)) {
  if (ctx_.markers_to_target) inserter_.emplace(0);
}

Bytes XorshiftOctets(std::size_t n, uint32_t state) {
  Bytes out(n);
  uint32_t s = state;
  for (uint8_t& b : out) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    b = static_cast<uint8_t>(s);
  }
  return out;
}

Bytes SessionFiller(std::size_t n, uint32_t seed) { return XorshiftOctets(n, seed * 2654435761u + 0x9e3779b9u); }

Opcode SessionOpcode(proto::SessionMessageType t) {
  static constexpr Opcode kMap[] = {Opcode::kRdmaWrite,
                                    Opcode::kRdmaReadRequest,
                                    Opcode::kRdmaReadResponse,
                                    Opcode::kSend,
                                    Opcode::kSendWithInvalidate,
                                    Opcode::kSendWithSe,
                                    Opcode::kSendWithSeAndInvalidate,
                                    Opcode::kTerminate,
                                    Opcode::kImmediateData,
                                    Opcode::kImmediateDataWithSe,
                                    Opcode::kAtomicRequest,
                                    Opcode::kAtomicRequest,
                                    Opcode::kAtomicResponse,
                                    Opcode::kFlushRequest,
                                    Opcode::kFlushResponse,
                                    Opcode::kVerifyRequest,
                                    Opcode::kVerifyResponse,
                                    Opcode::kAtomicWriteRequest,
                                    Opcode::kAtomicWriteResponse};
  static_assert(std::size(kMap) == proto::SessionMessageType_ARRAYSIZE, "one opcode per SessionMessageType");
  const auto i = static_cast<std::size_t>(t);
  return i < std::size(kMap) ? kMap[i] : Opcode::kRdmaWrite;
}

wire::RegionRole DefaultRegionRole(proto::SessionMessageType t) {
  switch (t) {
    case proto::SEND_INVALIDATE:
    case proto::SEND_SE_INVALIDATE:
      return wire::RegionRole::kInvalidatable;
    case proto::ATOMIC_FETCH_ADD:
    case proto::ATOMIC_CMP_SWAP:
      return wire::RegionRole::kAtomic;
    case proto::FLUSH_REQUEST:
      return wire::RegionRole::kFlush;
    case proto::VERIFY_REQUEST:
      return wire::RegionRole::kVerify;
    default:
      return wire::RegionRole::kReadWrite;
  }
}

namespace {

// Header field overrides, on whichever RDMAP header the template carries.
void OverrideHeader(const proto::SessionOverrides& o, wire::RdmapHeader& h) {
  if (auto* rr = std::get_if<wire::ReadRequestHeader>(&h)) {
    if (o.has_sink_stag()) rr->sink_stag = o.sink_stag();
    if (o.has_sink_tagged_offset()) rr->sink_tagged_offset = o.sink_tagged_offset();
    if (o.has_read_message_size()) rr->read_message_size = o.read_message_size();
    if (o.has_source_stag()) rr->source_stag = o.source_stag();
    if (o.has_source_tagged_offset()) rr->source_tagged_offset = o.source_tagged_offset();
  } else if (auto* a = std::get_if<wire::AtomicRequestHeader>(&h)) {
    if (o.has_atomic_opcode()) a->atomic_opcode = static_cast<uint8_t>(o.atomic_opcode() & 0xF);
    if (o.has_request_identifier()) a->request_identifier = o.request_identifier();
    if (o.has_add_or_swap_data()) a->add_or_swap_data = o.add_or_swap_data();
    if (o.has_add_or_swap_mask()) a->add_or_swap_mask = o.add_or_swap_mask();
    if (o.has_compare_data()) a->compare_data = o.compare_data();
    if (o.has_compare_mask()) a->compare_mask = o.compare_mask();
  } else if (auto* ar = std::get_if<wire::AtomicResponseHeader>(&h)) {
    if (o.has_request_identifier()) ar->original_request_identifier = o.request_identifier();
    if (o.has_compare_data()) ar->original_remote_data_value = o.compare_data();
  } else if (auto* fl = std::get_if<wire::FlushRequestHeader>(&h)) {
    if (o.has_flush_disposition_flags()) fl->flush_disposition_flags = o.flush_disposition_flags();
    if (o.has_read_message_size()) fl->data_sink_length = o.read_message_size();
  } else if (auto* v = std::get_if<wire::VerifyRequestHeader>(&h)) {
    if (o.has_read_message_size()) v->data_sink_length = o.read_message_size();
  } else if (auto* aw = std::get_if<wire::AtomicWriteRequestHeader>(&h)) {
    if (o.has_add_or_swap_data()) aw->data = o.add_or_swap_data();
    if (o.has_read_message_size()) aw->data_sink_length = o.read_message_size();
  } else if (auto* t = std::get_if<wire::TerminateHeader>(&h)) {
    if (o.has_terminate_code()) {
      const uint32_t c = o.terminate_code();
      t->code = {static_cast<uint8_t>(c >> 12 & 0xF), static_cast<uint8_t>(c >> 8 & 0xF),
                 static_cast<uint8_t>(c & 0xFF)};
    }
    if (o.has_terminate_mdr()) {
      // Bits only: the presence of the echoes stays as the template made it.
      t->m = (o.terminate_mdr() & 4) != 0;
      t->d = (o.terminate_mdr() & 2) != 0;
      t->r = (o.terminate_mdr() & 1) != 0;
    }
  }
}

void OverrideDdp(const proto::SessionOverrides& o, wire::Profile profile, Opcode op, uint32_t valid_msn,
                 wire::RdmapSegment& seg) {
  wire::DdpSegmentHeader& d = seg.ddp;
  if (o.has_tagged()) d.tagged = o.tagged();
  if (o.has_last()) d.last = o.last();
  if (o.has_ddp_rsvd()) d.rsvd = static_cast<uint8_t>(o.ddp_rsvd() & 0xF);
  if (o.has_ddp_version()) d.ddp_version = static_cast<uint8_t>(o.ddp_version() & 3);
  if (o.has_rdma_version() || o.has_opcode() || o.has_rsv()) {
    wire::RdmapControl c{wire::kRdmaVersionIetf, 0, static_cast<uint8_t>(op)};
    if (o.has_rdma_version()) c.rdma_version = static_cast<uint8_t>(o.rdma_version());
    if (o.has_opcode()) c.opcode = static_cast<uint8_t>(o.opcode());
    if (o.has_rsv()) c.rsv = static_cast<uint8_t>(o.rsv());
    wire::SetRdmapControl(seg, c, profile);
  }
  if (o.has_stag()) (d.tagged ? d.stag : d.invalidate_stag) = o.stag();
  if (o.has_tagged_offset()) d.tagged_offset = o.tagged_offset();
  if (o.has_queue_number()) d.queue_number = o.queue_number();
  if (o.has_msn_delta()) d.msn = valid_msn + static_cast<uint32_t>(o.msn_delta());
  if (o.has_message_offset()) d.message_offset = o.message_offset();
}

}  // namespace

const wire::AdvertisedRegion* SessionBuilder::PickRegion(const proto::SessionMessage& m) const {
  const auto& regions = ctx_.advertisement.regions;
  if (regions.empty()) return nullptr;
  if (m.region() == proto::REGION_UNSPECIFIED && m.region_index() != 0) {
    return &regions[(m.region_index() - 1) % regions.size()];
  }
  const wire::RegionRole role = m.region() == proto::REGION_UNSPECIFIED
                                    ? DefaultRegionRole(m.type())
                                    : static_cast<wire::RegionRole>((m.region() - 1) % wire::kRegionRoleCount);
  const wire::AdvertisedRegion* r = wire::SelectRegion(ctx_.advertisement, role);
  return r ? r : &regions.front();
}

wire::RdmapSegment SessionBuilder::BuildSegment(const proto::SessionMessage& m, Bytes& payload) {
  const Opcode op = SessionOpcode(m.type());
  const wire::AdvertisedRegion* r = PickRegion(m);
  const uint32_t stag = r ? r->stag : 0;
  const uint64_t to = (r ? r->base_tagged_offset : 0) + m.offset();
  const uint32_t length = m.length() == 0 ? 64 : m.length();
  payload = SessionFiller(std::min<std::size_t>(m.payload_size(), kMaxPayload), m.payload_seed());
  const uint8_t qn = wire::InfoFor(op).queue_number;
  uint32_t msn = 0;
  if (qn < next_msn_.size()) msn = next_msn_[qn]++;

  wire::RdmapSegment seg;
  switch (m.type()) {
    case proto::RDMA_WRITE:
      seg = wire::MakeRdmaWrite(stag, to, payload);
      break;
    case proto::READ_REQUEST:
      // A distinct Data Sink TO per request, so responses name their request.
      seg = wire::MakeReadRequest(msn, {kSuiteSinkStag, uint64_t{next_read_++} << 16, length, stag, to});
      break;
    case proto::READ_RESPONSE:
      seg = wire::MakeReadResponse(stag, to, payload);
      break;
    case proto::SEND:
    case proto::SEND_SE:
      seg = wire::MakeSend(op, msn, payload);
      break;
    case proto::SEND_INVALIDATE:
    case proto::SEND_SE_INVALIDATE:
      seg = wire::MakeSend(op, msn, payload, stag);
      break;
    case proto::TERMINATE:
      seg =
          wire::MakeTerminate(msn, wire::MakeTerminateHeader(wire::term::kRdmapLocalCatastrophic, nullptr, 0, nullptr));
      break;
    case proto::IMMEDIATE_DATA:
    case proto::IMMEDIATE_DATA_SE:
      seg = wire::MakeImmediateData(msn, uint64_t{m.payload_seed()} * 0x9e3779b97f4a7c15ull,
                                    m.type() == proto::IMMEDIATE_DATA_SE);
      break;
    case proto::ATOMIC_FETCH_ADD:
    case proto::ATOMIC_CMP_SWAP: {
      wire::AtomicRequestHeader h;
      const bool cas = m.type() == proto::ATOMIC_CMP_SWAP;
      h.atomic_opcode = static_cast<uint8_t>(cas ? wire::AtomicOpcode::kCmpSwap : wire::AtomicOpcode::kFetchAdd);
      h.request_identifier = next_request_id_++;
      h.remote_stag = stag;
      h.remote_tagged_offset = to;
      h.add_or_swap_data = cas ? 0x0123456789abcdefull : 1;
      seg = wire::MakeAtomicRequest(msn, h);
      break;
    }
    case proto::ATOMIC_RESPONSE:
      seg = wire::MakeAtomicResponse(msn, {next_request_id_, 0});
      break;
    case proto::FLUSH_REQUEST:
      seg = wire::MakeFlushRequest(msn, {stag, length, to, wire::kFlushToPersistence});
      break;
    case proto::FLUSH_RESPONSE:
      seg = wire::MakeFlushResponse(msn);
      break;
    case proto::VERIFY_REQUEST:
      seg = wire::MakeVerifyRequest(msn, {stag, length, to, payload});
      break;
    case proto::VERIFY_RESPONSE:
      seg = wire::MakeVerifyResponse(msn, payload);
      break;
    case proto::ATOMIC_WRITE_REQUEST:
      seg = wire::MakeAtomicWriteRequest(msn, {stag, 8, to, 0x1122334455667788ull});
      break;
    case proto::ATOMIC_WRITE_RESPONSE:
      seg = wire::MakeAtomicWriteResponse(msn);
      break;
    default:
      seg = wire::MakeRdmaWrite(stag, to, payload);
      break;
  }
  // Make*() writes the commit profile's control byte; rewrite it for this one.
  wire::SetRdmapControl(seg, {wire::kRdmaVersionIetf, 0, static_cast<uint8_t>(op)}, ctx_.profile);
  if (m.has_overrides()) {
    OverrideDdp(m.overrides(), ctx_.profile, op, msn, seg);
    OverrideHeader(m.overrides(), seg.header);
  }
  return seg;
}

Bytes SessionBuilder::Frame(ByteSpan ulpdu, const proto::SessionFraming& f) {
  Bytes plain;
  wire::AppendFpdu(plain, ulpdu, {.crc_enabled = false, .pad_octet = static_cast<uint8_t>(f.pad_octet())});
  if (f.ulpdu_length_delta() != 0) {
    // Modulo 2^16 (unsigned: any delta is defined).
    const uint16_t len =
        static_cast<uint16_t>(wire::LoadBe16(plain.data()) + static_cast<uint32_t>(f.ulpdu_length_delta()));
    wire::StoreBe16(plain.data(), len);
  }
  Bytes out;
  if (inserter_) {
    inserter_->AppendFpdu(out, plain, {.crc_enabled = ctx_.crc, .crc_xor = f.crc_xor()});
    return out;
  }
  out = std::move(plain);
  const std::size_t body = out.size() - wire::kCrc32cSize;
  const uint32_t crc = ctx_.crc ? wire::Crc32c(ByteSpan(out).first(body)) : 0;
  wire::StoreCrc32c(out.data() + body, crc ^ f.crc_xor());
  return out;
}

Bytes SessionBuilder::BuildAction(const proto::SessionAction& a) {
  Bytes out;
  for (uint32_t k = 0; k <= std::min(a.repeat(), kMaxRepeat); ++k) {
    if (a.has_raw()) {
      const std::string& raw = a.raw();
      const std::size_t n = std::min(raw.size(), kMaxPayload);
      out.insert(out.end(), raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(n));
      // Raw octets occupy stream positions: later Markers stay where they belong.
      if (inserter_) inserter_.emplace(inserter_->seq_start(), inserter_->next_seq() + static_cast<uint32_t>(n));
      continue;
    }
    Bytes payload;
    const wire::RdmapSegment seg = BuildSegment(a.message(), payload);
    const Bytes fpdu = Frame(wire::EncodeSegment(seg), a.framing());
    out.insert(out.end(), fpdu.begin(), fpdu.end());
  }
  return out;
}

std::vector<SessionWrite> SessionBuilder::BuildWrites(const proto::FuzzSession& s) {
  std::vector<SessionWrite> writes;
  Bytes held;
  for (int i = 0; i < s.action_size(); ++i) {
    const proto::SessionAction& a = s.action(i);
    Bytes octets = BuildAction(a);
    held.insert(held.end(), octets.begin(), octets.end());
    // Cut at the split sizes; the rest is the last piece.
    std::size_t used = 0;
    const int n = std::min<int>(a.delivery().split_size(), static_cast<int>(kMaxSplits));
    for (int k = 0; k < n && used < held.size(); ++k) {
      const std::size_t piece = std::min<std::size_t>(a.delivery().split(k), held.size() - used);
      if (piece == 0) continue;
      writes.push_back({Bytes(held.begin() + used, held.begin() + used + piece), static_cast<std::size_t>(i)});
      used += piece;
    }
    held.erase(held.begin(), held.begin() + used);
    if (a.delivery().hold() && i + 1 < s.action_size()) continue;
    if (!held.empty()) writes.push_back({std::move(held), static_cast<std::size_t>(i)});
    held.clear();
  }
  return writes;
}

std::vector<SessionWrite> BuildSessionWrites(const proto::FuzzSession& s, const SessionContext& ctx) {
  return SessionBuilder(ctx).BuildWrites(s);
}

}  // namespace rdmapct::fuzz
