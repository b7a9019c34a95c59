#include "fuzz/session_repro.h"

#include <google/protobuf/text_format.h>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>

#include "fuzz/session_builder.h"
#include "fuzz/session_twin.h"
#include "proto/message_type.h"
#include "reference/wire/hex.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"
#include "reference/wire/ulp_convention.h"
#include "targets/reference_target.h"

namespace rdmapct::fuzz {

using wire::Bytes;
using wire::ByteSpan;
using wire::Opcode;

namespace {

// The role under which the advertisement lists `region` first.
std::optional<proto::Region> RoleOf(const wire::Advertisement& adv, const wire::AdvertisedRegion* region) {
  for (std::size_t r = 0; r < wire::kRegionRoleCount; ++r) {
    if (wire::SelectRegion(adv, static_cast<wire::RegionRole>(r)) == region) return static_cast<proto::Region>(r + 1);
  }
  return std::nullopt;
}

// The case Region of the advertised region a session message names
// (SessionBuilder::PickRegion: a role the target lacks falls back to its
// first region).
proto::Region CaseRegion(const proto::SessionMessage& m, const wire::Advertisement& adv) {
  if (adv.regions.empty()) return proto::RW;
  if (m.region() == proto::REGION_UNSPECIFIED && m.region_index() != 0) {
    return RoleOf(adv, &adv.regions[(m.region_index() - 1) % adv.regions.size()]).value_or(proto::RW);
  }
  const proto::Region role = m.region() != proto::REGION_UNSPECIFIED
                                 ? static_cast<proto::Region>((m.region() - 1) % wire::kRegionRoleCount + 1)
                                 : static_cast<proto::Region>(static_cast<int>(DefaultRegionRole(m.type())) + 1);
  if (wire::SelectRegion(adv, static_cast<wire::RegionRole>(role - 1))) return role;
  return RoleOf(adv, &adv.regions.front()).value_or(proto::RW);
}

// The template values session_builder.cc gives each type, as case fields.
void TemplateFields(const proto::SessionMessage& m, uint32_t request_id, proto::Message& out) {
  proto::Fields& set = *out.mutable_set();
  switch (m.type()) {
    case proto::TERMINATE:
      set.set_terminate_layer(wire::term::kRdmapLocalCatastrophic.layer);
      set.set_terminate_etype(wire::term::kRdmapLocalCatastrophic.error_type);
      set.set_terminate_error_code(wire::term::kRdmapLocalCatastrophic.error_code);
      break;
    case proto::IMMEDIATE_DATA:
    case proto::IMMEDIATE_DATA_SE:
      set.set_immediate_data(uint64_t{m.payload_seed()} * 0x9e3779b97f4a7c15ull);
      break;
    case proto::ATOMIC_FETCH_ADD:
    case proto::ATOMIC_CMP_SWAP: {
      const bool cas = m.type() == proto::ATOMIC_CMP_SWAP;
      set.set_atomic_opcode(static_cast<uint32_t>(cas ? wire::AtomicOpcode::kCmpSwap : wire::AtomicOpcode::kFetchAdd));
      set.set_request_identifier(request_id);
      set.set_add_or_swap_data(cas ? 0x0123456789abcdefull : 1);
      set.set_add_or_swap_mask(0);
      set.set_compare_data(0);
      set.set_compare_mask(0);
      break;
    }
    case proto::ATOMIC_RESPONSE:
      set.set_original_request_identifier(request_id);
      set.set_original_remote_data_value(0);
      break;
    case proto::FLUSH_REQUEST:
      set.set_flush_disposition_flags(wire::kFlushToPersistence);
      break;
    case proto::ATOMIC_WRITE_REQUEST:
      out.set_length(8);
      set.set_atomic_write_data(0x1122334455667788ull);
      break;
    default:
      break;
  }
}

// SessionOverrides -> Fields (session_builder.cc OverrideDdp / OverrideHeader).
void OverrideFields(const proto::SessionMessage& m, bool tagged_template, proto::Message& out) {
  const proto::SessionOverrides& o = m.overrides();
  proto::Fields& set = *out.mutable_set();
  if (o.has_tagged()) set.set_t(o.tagged());
  if (o.has_last()) set.set_l(o.last());
  if (o.has_ddp_rsvd()) set.set_rsvd(o.ddp_rsvd() & 0xF);
  if (o.has_ddp_version()) set.set_dv(o.ddp_version() & 3);
  if (o.has_rdma_version()) set.set_rv(o.rdma_version());
  if (o.has_opcode()) set.set_opcode(o.opcode());
  if (o.has_rsv()) set.set_rsv(o.rsv());
  const bool tagged = o.has_tagged() ? o.tagged() : tagged_template;
  if (o.has_stag()) tagged ? set.set_stag(o.stag()) : set.set_invalidate_stag(o.stag());
  if (o.has_tagged_offset()) set.set_tagged_offset(o.tagged_offset());
  if (o.has_queue_number()) set.set_queue_number(o.queue_number());
  if (o.has_msn_delta()) set.set_msn_delta(o.msn_delta());
  if (o.has_message_offset()) set.set_message_offset(o.message_offset());
  switch (m.type()) {
    case proto::READ_REQUEST:
      if (o.has_sink_stag()) set.set_sink_stag(o.sink_stag());
      if (o.has_sink_tagged_offset()) set.set_sink_tagged_offset(o.sink_tagged_offset());
      if (o.has_read_message_size()) set.set_read_message_size(o.read_message_size());
      if (o.has_source_stag()) set.set_source_stag(o.source_stag());
      if (o.has_source_tagged_offset()) set.set_source_tagged_offset(o.source_tagged_offset());
      break;
    case proto::ATOMIC_FETCH_ADD:
    case proto::ATOMIC_CMP_SWAP:
      if (o.has_atomic_opcode()) set.set_atomic_opcode(o.atomic_opcode() & 0xF);
      if (o.has_request_identifier()) set.set_request_identifier(o.request_identifier());
      if (o.has_add_or_swap_data()) set.set_add_or_swap_data(o.add_or_swap_data());
      if (o.has_add_or_swap_mask()) set.set_add_or_swap_mask(o.add_or_swap_mask());
      if (o.has_compare_data()) set.set_compare_data(o.compare_data());
      if (o.has_compare_mask()) set.set_compare_mask(o.compare_mask());
      break;
    case proto::ATOMIC_RESPONSE:
      if (o.has_request_identifier()) set.set_original_request_identifier(o.request_identifier());
      if (o.has_compare_data()) set.set_original_remote_data_value(o.compare_data());
      break;
    case proto::FLUSH_REQUEST:
      if (o.has_flush_disposition_flags()) set.set_flush_disposition_flags(o.flush_disposition_flags());
      if (o.has_read_message_size()) set.set_data_sink_length(o.read_message_size());
      break;
    case proto::VERIFY_REQUEST:
      if (o.has_read_message_size()) set.set_data_sink_length(o.read_message_size());
      break;
    case proto::ATOMIC_WRITE_REQUEST:
      if (o.has_add_or_swap_data()) set.set_atomic_write_data(o.add_or_swap_data());
      if (o.has_read_message_size()) set.set_data_sink_length(o.read_message_size());
      break;
    case proto::TERMINATE:
      if (o.has_terminate_code()) {
        set.set_terminate_layer(o.terminate_code() >> 12 & 0xF);
        set.set_terminate_etype(o.terminate_code() >> 8 & 0xF);
        set.set_terminate_error_code(o.terminate_code() & 0xFF);
      }
      if (o.has_terminate_mdr()) {
        set.set_terminate_m(o.terminate_mdr() >> 2 & 1);
        set.set_terminate_d(o.terminate_mdr() >> 1 & 1);
        set.set_terminate_r(o.terminate_mdr() & 1);
      }
      break;
    default:
      break;
  }
}

// Builds the case's steps while walking the session's actions.
class CaseWriter {
 public:
  CaseWriter(const proto::FuzzSession& s, const TwinRun& twin, proto::Case& c) : s_(s), twin_(twin), c_(c) {}

  void Connect() {
    const proto::SessionConnection& conn = s_.connection();
    proto::Connect& k = *c_.add_step()->mutable_connect();
    k.set_revision(twin_.request.revision);
    // A Request with C=0 to a target that insists on CRCs uses CRCs anyway
    // (RFC 5044 §8.1); the runner skips a case whose C=0 Request meets a
    // C=1 Reply, so the script asks for what the connection will use.
    k.set_crc(twin_.connected ? twin_.ctx.crc : !conn.crc_off());
    k.set_request_markers(conn.markers());
    if (conn.enhanced()) {
      proto::Rfc6581& e = *k.mutable_rfc6581();
      e.set_ird(conn.ird() & wire::kIrdOrdMask);
      e.set_ord(conn.ord() & wire::kIrdOrdMask);
      e.set_peer_to_peer((conn.rtr_flags() & 1) != 0);
    }
  }

  // The sends of action i, then what the reference sent for the writes that ended in it.
  void Action(int i) {
    const proto::SessionAction& a = s_.action(i);
    const uint32_t copies = 1 + std::min(a.repeat(), kMaxRepeat);
    for (uint32_t k = 0; k < copies; ++k) {
      proto::Step* step = c_.add_step();
      proto::Send& send = *step->mutable_send();
      if (a.has_raw()) {
        const std::string& raw = a.raw();
        const std::size_t n = std::min(raw.size(), kMaxPayload);
        send.mutable_raw()->set_layer(proto::RawBytes::TCP);
        send.mutable_raw()->set_hex(wire::HexOctets(ByteSpan(reinterpret_cast<const uint8_t*>(raw.data()), n)));
      } else {
        Message(a.message(), *send.mutable_message());
        Framing(a.framing(), send);
      }
      const bool last_copy = k + 1 == copies;
      if (k == 0) {
        for (int w = 0; w < std::min<int>(a.delivery().split_size(), static_cast<int>(kMaxSplits)); ++w) {
          if (a.delivery().split(w) != 0) send.mutable_tcp()->add_write_size(a.delivery().split(w));
        }
      }
      if (!last_copy || (a.delivery().hold() && i + 1 < s_.action_size())) send.mutable_tcp()->set_hold(true);
    }
    for (const TwinWrite& w : twin_.writes) {
      if (w.action == static_cast<std::size_t>(i)) Reaction(w.out);
    }
  }

  void End(bool closed) {
    if (closed) {
      c_.add_step()->mutable_expect()->mutable_closed();
      return;
    }
    Reaction(twin_.after_fin);
    proto::Expect& e = *c_.add_step()->mutable_expect();
    e.set_timeout_ms(200);
    e.mutable_nothing()->set_allow_events(false);
  }

  // Every region role a send names, as the case's needs.
  void Needs() {
    for (proto::Region r : regions_) c_.mutable_needs()->add_region()->set_role(r);
  }

  void Requirement(const std::string& id) {
    if (requirements_.insert(id).second) c_.add_requirement(id);
  }

 private:
  void Message(const proto::SessionMessage& m, proto::Message& out) {
    const Opcode op = SessionOpcode(m.type());
    out.set_type(proto::MessageTypeOf(op));
    const proto::Region region = CaseRegion(m, twin_.ctx.advertisement);
    const wire::OpcodeInfo& info = wire::InfoFor(op);
    const bool tagged = info.tagged;
    if (info.invalidate_stag == wire::InvalidateStagUse::kValid) {  // the Sends with Invalidate
      regions_.insert(region);
      out.mutable_invalidate()->set_region(region);
    } else if (info.remote_region) {
      regions_.insert(region);
      out.mutable_remote()->set_region(region);
      if (m.offset() != 0) out.mutable_remote()->set_offset(static_cast<int64_t>(m.offset()));
    }
    if (op == Opcode::kRdmaReadRequest || op == Opcode::kFlushRequest || op == Opcode::kVerifyRequest) {
      out.set_length(m.length() == 0 ? 64 : m.length());
    }
    const Bytes payload = SessionFiller(std::min<std::size_t>(m.payload_size(), kMaxPayload), m.payload_seed());
    // The case's payload is the ULP payload, or a Verify Response's Hash Value.
    const bool carries_payload = info.ulp_payload_allowed || info.header == wire::HeaderKind::kVerifyResponse;
    if (carries_payload) {
      out.mutable_payload()->set_hex(wire::HexOctets(payload));
    } else if (op == Opcode::kVerifyRequest) {
      out.mutable_set()->set_hash_value_hex(wire::HexOctets(payload));
    }
    uint32_t request_id = next_request_id_;
    if (m.type() == proto::ATOMIC_FETCH_ADD || m.type() == proto::ATOMIC_CMP_SWAP) ++next_request_id_;
    TemplateFields(m, request_id, out);
    if (m.has_overrides()) OverrideFields(m, tagged, out);
    if (out.has_set() && out.set().ByteSizeLong() == 0) out.clear_set();
  }

  static void Framing(const proto::SessionFraming& f, proto::Send& send) {
    if (f.crc_xor() != 0) send.mutable_framing()->set_corrupt_crc(true);
    if (f.ulpdu_length_delta() != 0) send.mutable_framing()->set_ulpdu_length_delta(f.ulpdu_length_delta());
    if (f.pad_octet() != 0) {
      char b[3];
      std::snprintf(b, sizeof b, "%02x", f.pad_octet() & 0xFF);
      send.mutable_framing()->set_pad_hex(std::string(b) + b + b);
    }
  }

  // Expectations for what the reference sent in reply to one TCP write.
  void Reaction(const Bytes& octets) {
    if (octets.empty()) return;
    if (!deframer_) {
      deframer_.emplace(
          wire::MpaDeframerConfig{.crc_enabled = twin_.ctx.crc, .markers_enabled = twin_.request.marker_required});
    }
    std::vector<Bytes> ulpdus;
    (void)deframer_->Feed(octets, [&](const wire::MpaFpdu& f) { ulpdus.emplace_back(f.ulpdu.begin(), f.ulpdu.end()); });
    for (const Bytes& u : ulpdus) Frame(u);
  }

  void Frame(const Bytes& ulpdu) {
    auto d = wire::DecodeRdmapSegment(ulpdu, twin_.ctx.profile);
    if (!d.ok() || !d.value().opcode_known) return;
    const wire::RdmapMessageView& v = d.value();
    const Opcode op = v.opcode();
    if (wire::HasEventRecordMagic(v.ulp_payload)) return Event(v.ulp_payload);
    if (op == Opcode::kTerminate) return Terminate(v);
    if (op == Opcode::kRdmaReadResponse) {
      if (!v.ddp.header.last) return;
      ++read_responses_;
      Requirement("R5040-5.2-01");
      proto::ReadResponses& r = *c_.add_step()->mutable_expect()->mutable_read_responses();
      r.set_first_request(read_responses_);
      r.set_last_request(read_responses_);
      r.set_skip_data_check(true);
      return;
    }
    proto::FrameMatcher& f = *c_.add_step()->mutable_expect()->mutable_frame();
    f.set_type(proto::MessageTypeOf(op));
    if (const auto* ar = std::get_if<wire::AtomicResponseHeader>(&v.header)) {
      f.mutable_fields()->set_original_request_identifier(ar->original_request_identifier);
      Requirement("R7306-5.2.2-02");
    }
  }

  void Terminate(const wire::RdmapMessageView& v) {
    const auto* t = std::get_if<wire::TerminateHeader>(&v.header);
    if (!t) return;
    Requirement("R5040-4.8-03");
    proto::TerminateMatcher& m = *c_.add_step()->mutable_expect()->mutable_terminate();
    proto::TerminateCode& code = *m.add_accept();
    code.set_layer(t->code.layer);
    code.set_etype(t->code.error_type);
    code.set_code(t->code.error_code);
    code.set_preferred(true);
    code.set_note("what the fault-free reference target sent");
    m.set_other_registered(proto::MUST);
  }

  void Event(ByteSpan payload) {
    auto ev = wire::DecodeEventRecord(payload);
    if (!ev.ok()) return;
    proto::EventMatcher& m = *c_.add_step()->mutable_expect()->mutable_event();
    switch (ev.value().type) {
      case wire::EventType::kSendDelivered:
        m.set_type(proto::EventMatcher::SEND_DELIVERED);
        m.set_length(ev.value().length);
        break;
      case wire::EventType::kImmediateDataDelivered:
        m.set_type(proto::EventMatcher::IMMEDIATE_DATA_DELIVERED);
        m.set_immediate_data(ev.value().value);
        break;
      default:
        m.set_type(proto::EventMatcher::COMPLETION_ERROR);
        break;
    }
  }

  const proto::FuzzSession& s_;
  const TwinRun& twin_;
  proto::Case& c_;
  std::optional<wire::MpaDeframer> deframer_;
  std::set<std::string> requirements_;
  std::set<proto::Region> regions_;
  uint32_t next_request_id_ = 1;
  uint32_t read_responses_ = 0;
};

std::string ProfileName(proto::Profile p) {
  return p == proto::RFC7306 ? "rfc7306" : p == proto::COMMIT ? "commit" : "rfc5040";
}

}  // namespace

proto::Case SessionToCase(const proto::FuzzSession& s, const ReproOptions& options) {
  const TwinRun twin = RunTwin(s, options.target);
  proto::Case c;
  c.set_id(options.id);
  c.set_level(proto::MUST);
  c.add_profile(s.connection().profile() == proto::PROFILE_UNSPECIFIED ? proto::RFC5040 : s.connection().profile());
  c.add_tag("fuzz-reproducer");
  std::string title = "fuzz reproducer";
  if (!options.findings.empty()) title += ": " + FormatFinding(options.findings.front());
  c.set_title(title.substr(0, 200));

  CaseWriter w(s, twin, c);
  w.Connect();
  if (!twin.connected) {
    // The reference refused the Request: the Reply (if any) is all there is to see.
    c.add_step()->mutable_expect()->mutable_closed();
    w.Requirement("R5044-7.1.1-01");
  } else {
    bool closed = false;
    std::size_t last_action = s.action_size() == 0 ? 0 : static_cast<std::size_t>(s.action_size() - 1);
    for (const TwinWrite& tw : twin.writes) {
      if (tw.closed) {
        closed = true;
        last_action = tw.action;
      }
    }
    for (int i = 0; i < s.action_size() && static_cast<std::size_t>(i) <= last_action; ++i) w.Action(i);
    w.End(closed);
  }
  w.Needs();
  if (c.requirement().empty()) w.Requirement("R5040-6.1-02");

  std::string notes =
      "Written by rdmapct from a fuzz session (" +
      (options.origin.empty() ? std::string("fuzz_session") : options.origin) +
      "). The expectations are what the fault-free reference target did with the same octets (the differential "
      "oracle); the reference passes the conformance suite. Profile " +
      ProfileName(c.profile(0)) + ".";
  if (s.connection().target_crc_optional() || s.connection().target_markers()) {
    notes += " The session configured the target with" +
             std::string(s.connection().target_crc_optional() ? " CRC optional" : "") +
             (s.connection().target_markers() ? " Markers requested" : "") + "; give the target the same options.";
  }
  for (const Finding& f : options.findings) notes += "\nFinding: " + FormatFinding(f);
  c.set_notes(notes);
  return c;
}

std::string CaseFileText(const proto::Case& c) {
  proto::CaseFile file;
  *file.add_case_() = c;
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.PrintToString(file, &text);
  return "# proto-file: proto/case.proto\n# proto-message: rdmapct.proto.CaseFile\n#\n"
         "# A reproducer written by `rdmapct fuzz repro`. Replay it with\n"
         "#   rdmapct conform --script THIS_FILE --profile " +
         ProfileName(c.profile(0)) + " --target ...\n\n" + text;
}

}  // namespace rdmapct::fuzz
