#include "conformance/frame_text.h"

#include <cstdio>
#include <variant>

#include "reference/wire/hex.h"
#include "reference/wire/opcodes.h"

namespace rdmapct::conformance {
namespace {

std::string Bit(const char* name, bool v) { return std::string(" ") + name + "=" + (v ? "1" : "0"); }

std::string UntaggedText(const wire::DdpSegmentHeader& h) {
  return " QN " + std::to_string(h.queue_number) + " MSN " + std::to_string(h.msn) + " MO " +
         std::to_string(h.message_offset);
}

std::string TaggedText(const wire::DdpSegmentHeader& h) {
  return " STag " + Hex32(h.stag) + " TO " + Hex64(h.tagged_offset);
}

std::string TerminateText(const wire::TerminateHeader& t) {
  std::string s = " " + TerminateCodeText(t.code) + Bit("M", t.m) + Bit("D", t.d) + Bit("R", t.r);
  if (t.has_segment_length) s += " DDP Segment Length " + std::to_string(t.ddp_segment_length);
  if (t.form == wire::TerminateForm::kFixed) s += " (fixed 52-octet form)";
  return s;
}

// The RDMAP header part of a summary.
std::string HeaderText(const wire::RdmapHeader& header) {
  if (const auto* r = std::get_if<wire::ReadRequestHeader>(&header)) {
    return " SinkSTag " + Hex32(r->sink_stag) + " SinkTO " + Hex64(r->sink_tagged_offset) + " RDMARDSZ " +
           std::to_string(r->read_message_size) + " SrcSTag " + Hex32(r->source_stag) + " SrcTO " +
           Hex64(r->source_tagged_offset);
  }
  if (const auto* t = std::get_if<wire::TerminateHeader>(&header)) return TerminateText(*t);
  if (const auto* i = std::get_if<wire::ImmediateDataHeader>(&header)) {
    return " Immediate Data " + Hex64(i->immediate_data);
  }
  if (const auto* a = std::get_if<wire::AtomicRequestHeader>(&header)) {
    return " AOpCode " + std::to_string(a->atomic_opcode) + " Request Identifier " +
           std::to_string(a->request_identifier) + " Remote STag " + Hex32(a->remote_stag) + " Remote TO " +
           Hex64(a->remote_tagged_offset);
  }
  if (const auto* a = std::get_if<wire::AtomicResponseHeader>(&header)) {
    return " Original Request Identifier " + std::to_string(a->original_request_identifier) +
           " Original Remote Data Value " + Hex64(a->original_remote_data_value);
  }
  if (const auto* f = std::get_if<wire::FlushRequestHeader>(&header)) {
    return " Data Sink STag " + Hex32(f->data_sink_stag) + " Data Sink Length " + std::to_string(f->data_sink_length) +
           " Data Sink TO " + Hex64(f->data_sink_tagged_offset);
  }
  if (const auto* v = std::get_if<wire::VerifyRequestHeader>(&header)) {
    return " Data Sink STag " + Hex32(v->data_sink_stag) + " Data Sink Length " + std::to_string(v->data_sink_length) +
           " Data Sink TO " + Hex64(v->data_sink_tagged_offset);
  }
  if (const auto* w = std::get_if<wire::AtomicWriteRequestHeader>(&header)) {
    return " Data Sink STag " + Hex32(w->data_sink_stag) + " Data Sink TO " + Hex64(w->data_sink_tagged_offset) +
           " Data " + Hex64(w->data);
  }
  return {};
}

}  // namespace

std::string HexString(wire::ByteSpan data, std::size_t max) {
  const std::size_t n = std::min(max, data.size());
  std::string s = wire::HexOctets(data.first(n));
  if (n < data.size()) s += " ... (" + std::to_string(data.size()) + " octets)";
  return s;
}

std::optional<wire::Bytes> ParseHexString(std::string_view text) {
  wire::Result<wire::Bytes> octets = wire::ParseHex(text);
  if (!octets.ok()) return std::nullopt;
  return std::move(*octets);
}

std::string Hex32(uint32_t v) { return wire::HexValue(v, 8); }

std::string Hex64(uint64_t v) { return wire::HexValue(v, 16); }

std::string TerminateCodeText(wire::TerminateCode code) {
  char b[24];
  std::snprintf(b, sizeof b, "%x/%x/0x%02x", code.layer, code.error_type, code.error_code);
  return std::string(b) + " (" + wire::Describe(code) + ")";
}

std::string SummarizeUlpdu(wire::ByteSpan ulpdu, wire::Profile profile) {
  auto view = wire::DecodeRdmapSegment(ulpdu, profile);
  if (!view.ok()) {
    auto ddp = wire::DecodeDdpSegment(ulpdu);
    if (!ddp.ok()) return "undecodable DDP segment (" + view.error().Describe() + ")";
    const wire::RdmapControl c = wire::DecodeRdmapControl(ddp->header.rsvd_ulp0, profile);
    return "opcode " + std::to_string(c.opcode) + " with a truncated RDMAP header (" + view.error().Describe() + ")";
  }
  const wire::DdpSegmentHeader& h = view->ddp.header;
  std::string s = view->opcode_known ? view->opcode_info->name : "unknown opcode " + std::to_string(view->ctrl.opcode);
  s += h.tagged ? TaggedText(h) : UntaggedText(h);
  s += Bit("L", h.last);
  if (view->ctrl.rdma_version != wire::kRdmaVersionIetf) s += " RV=" + std::to_string(view->ctrl.rdma_version);
  if (h.ddp_version != wire::kDdpVersion) s += " DV=" + std::to_string(h.ddp_version);
  if (view->opcode_known && !view->tagged_flag_matches) s += " (T flag wrong for the opcode)";
  if (!h.tagged && h.invalidate_stag != 0) s += " Invalidate STag " + Hex32(h.invalidate_stag);
  s += HeaderText(view->header);
  s += " payload " + std::to_string(view->ulp_payload.size());
  return s;
}

std::string SummarizeStartupFrame(const wire::MpaStartupFrame& f) {
  std::string s = f.is_reply ? "MPA Reply" : "MPA Request";
  s += " Rev " + std::to_string(f.revision) + Bit("M", f.marker_required) + Bit("C", f.crc_required) +
       Bit("R", f.reject) + Bit("S", f.enhanced);
  if (f.enhanced_data) {
    const wire::EnhancedIrdOrd& e = *f.enhanced_data;
    s += " IRD " + std::to_string(e.ird) + " ORD " + std::to_string(e.ord) + Bit("A", e.peer_to_peer) +
         Bit("B", e.send_rtr) + Bit("C", e.write_rtr) + Bit("D", e.read_rtr);
  }
  s += " Private Data " + std::to_string(f.private_data.size()) + " octets";
  if (wire::HasAdvertisementMagic(f.private_data)) s += " (Advertisement)";
  return s;
}

std::string SummarizeEvent(const wire::EventRecord& ev) {
  std::string s = "Event Record #" + std::to_string(ev.sequence) + " ";
  switch (ev.type) {
    case wire::EventType::kSendDelivered:
      s += "Send delivered, length " + std::to_string(ev.length);
      if (ev.flags & wire::kEventInvalidated) s += ", invalidated STag " + Hex32(ev.invalidated_stag);
      break;
    case wire::EventType::kImmediateDataDelivered:
      s += "Immediate Data delivered, " + Hex64(ev.value);
      break;
    case wire::EventType::kCompletionError:
      s += "completion error " + Hex64(ev.value);
      break;
    case wire::EventType::kCommandCompleted:
      if (auto c = wire::CompletionFromValue(ev.invalidated_stag, ev.value)) {
        s += "command " + std::to_string(c->command_id) + " (" + std::string(wire::CommandTypeName(c->type)) + ") " +
             std::string(wire::CompletionStatusName(c->status)) + ", length " + std::to_string(ev.length);
      } else {
        s += "command completed " + Hex64(ev.value);
      }
      break;
  }
  if (ev.flags & wire::kEventSolicitedKnown) s += (ev.flags & wire::kEventSolicited) ? ", SE" : ", no SE";
  return s;
}

std::vector<std::string> DiffDdpHeaders(const wire::DdpSegmentHeader& e, const wire::DdpSegmentHeader& a) {
  std::vector<std::string> out;
  auto cmp = [&](const char* name, uint64_t ev, uint64_t av, bool hex) {
    if (ev == av) return;
    out.push_back(std::string(name) + ": expected " + (hex ? Hex64(ev) : std::to_string(ev)) + ", got " +
                  (hex ? Hex64(av) : std::to_string(av)));
  };
  cmp("T", e.tagged, a.tagged, false);
  cmp("L", e.last, a.last, false);
  cmp("Rsvd", e.rsvd, a.rsvd, false);
  cmp("DV", e.ddp_version, a.ddp_version, false);
  cmp("RsvdULP[0] (RDMAP Control Field)", e.rsvd_ulp0, a.rsvd_ulp0, true);
  if (e.tagged && a.tagged) {
    cmp("STag", e.stag, a.stag, true);
    cmp("TO", e.tagged_offset, a.tagged_offset, true);
  } else if (!e.tagged && !a.tagged) {
    cmp("Invalidate STag", e.invalidate_stag, a.invalidate_stag, true);
    cmp("QN", e.queue_number, a.queue_number, false);
    cmp("MSN", e.msn, a.msn, false);
    cmp("MO", e.message_offset, a.message_offset, false);
  }
  return out;
}

std::vector<std::string> DiffReadRequestHeaders(const wire::ReadRequestHeader& e, const wire::ReadRequestHeader& a) {
  std::vector<std::string> out;
  auto cmp = [&](const char* name, uint64_t ev, uint64_t av) {
    if (ev != av) out.push_back(std::string(name) + ": expected " + Hex64(ev) + ", got " + Hex64(av));
  };
  cmp("SinkSTag", e.sink_stag, a.sink_stag);
  cmp("SinkTO", e.sink_tagged_offset, a.sink_tagged_offset);
  cmp("RDMARDSZ", e.read_message_size, a.read_message_size);
  cmp("SrcSTag", e.source_stag, a.source_stag);
  cmp("SrcTO", e.source_tagged_offset, a.source_tagged_offset);
  return out;
}

std::string DdpHeaderText(const wire::DdpSegmentHeader& h) {
  std::string s = "T=" + std::to_string(h.tagged) + " L=" + std::to_string(h.last) + " Rsvd=" + std::to_string(h.rsvd) +
                  " DV=" + std::to_string(h.ddp_version) + " RsvdULP[0]=" + Hex32(h.rsvd_ulp0);
  return s + (h.tagged ? TaggedText(h) : " Invalidate STag " + Hex32(h.invalidate_stag) + UntaggedText(h));
}

std::string ReadRequestHeaderText(const wire::ReadRequestHeader& h) {
  return HeaderText(wire::RdmapHeader(h)).substr(1);
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) {
    if (!s.empty()) s += '\n';
    s += l;
  }
  return s;
}

}  // namespace rdmapct::conformance
