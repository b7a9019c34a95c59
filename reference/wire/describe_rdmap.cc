// Field trees for DDP headers (RFC 5041 §4), the RDMAP Control Field and
// every RDMAP header (RFC 5040 §4, RFC 7306 §4-6, draft-talpey-rdma-commit-01 §3.1).
#include <variant>

#include "reference/wire/describe.h"
#include "reference/wire/describe_internal.h"
#include "reference/wire/hex.h"
#include "reference/wire/terminate_codes.h"

namespace rdmapct::wire {
namespace {
using namespace describe_detail;

// ---- DDP ---------------------------------------------------------------------

// REQ R5041-4.1-01: T = b>>7, L = (b>>6)&1, Rsvd = (b>>2)&0xF, DV = b&3.
Field DdpControl(const DdpSegmentHeader& h, uint64_t at) {
  const uint8_t c = EncodeDdpControl(h.tagged, h.last, h.rsvd, h.ddp_version);
  Field f = Num("DDP Control", c, HexValue(c, 2), at, 1);
  f.Add(Bits("T (Tagged flag)", h.tagged, h.tagged ? "1 (Tagged Buffer Model)" : "0 (Untagged Buffer Model)", at, 1, 7,
             1));
  f.Add(Bits("L (Last flag)", h.last, h.last ? "1 (last segment of the DDP Message)" : "0 (more segments follow)", at,
             1, 6, 1));
  f.Add(Bits("Rsvd", h.rsvd, std::to_string(h.rsvd), at, 1, 2, 4));
  Field& dv = f.Add(
      Bits("DV (DDP Version)", h.ddp_version,
           std::to_string(h.ddp_version) + (h.ddp_version == kDdpVersion ? "" : " (not 01b: Invalid DDP version)"), at,
           1, 0, 2));
  dv.problem = h.ddp_version != kDdpVersion;
  return f;
}

// ---- RDMAP Control Field -------------------------------------------------------

std::string OpcodeText(uint8_t opcode, Profile profile, bool& known) {
  const OpcodeInfo* info = FindOpcode(opcode, profile);
  known = info != nullptr;
  if (info != nullptr) return HexValue(opcode, 2) + " (" + info->name + ")";
  std::string s = HexValue(opcode, 2) + " (unknown: not defined by profile " + std::string(ProfileName(profile));
  if (profile == Profile::kRfc5040) s += ", Unexpected OpCode";
  // A hint for the common mistake of decoding extension traffic under a
  // narrower profile (the opcode width is the same below 0x10).
  if (const OpcodeInfo* wider = FindOpcode(opcode, Profile::kCommit); wider != nullptr) {
    s += std::string("; ") + wider->name + " under " +
         std::string(ProfileName(wider->min_profile == Profile::kRfc7306 ? Profile::kRfc7306 : Profile::kCommit));
  }
  return s + ")";
}

// REQ R5040-4.1-02 RCOMMIT-3.1-01: RV(2) Rsv(2) Opcode(4), or RV(2) Rsv(1) Opcode(5) (commit).
Field RdmapControlField(uint8_t b, Profile profile, uint64_t at) {
  const RdmapControl c = DecodeRdmapControl(b, profile);
  const bool wide = profile == Profile::kCommit;
  Field f = Num("RDMAP Control Field", b, HexValue(b, 2), at, 1);
  Field& rv = f.Add(Bits(
      "RV (RDMA Version)", c.rdma_version,
      std::to_string(c.rdma_version) + (c.rdma_version == kRdmaVersionIetf ? "" : " (not 01b: Invalid RDMAP version)"),
      at, 1, 6, 2));
  rv.problem = c.rdma_version != kRdmaVersionIetf;
  f.Add(Bits("Rsv", c.rsv, std::to_string(c.rsv), at, 1, wide ? 5 : 4, wide ? 1 : 2));
  bool known = false;
  std::string text = OpcodeText(c.opcode, profile, known);
  Field& op = f.Add(Bits("Opcode", c.opcode, std::move(text), at, 1, 0, wide ? 5 : 4));
  op.problem = !known;
  return f;
}

// ---- RDMAP headers --------------------------------------------------------------

// REQ R5040-4.2-T02: Figure 6 field names.
Field ReadRequestFields(std::string name, const ReadRequestHeader& h, const StreamOffsetMap& m) {
  Field f = Node(std::move(name), "", m.At(0), kReadRequestHeaderLength);
  f.Add(Num("SinkSTag (Data Sink STag)", h.sink_stag, HexValue(h.sink_stag, 8), m.At(0), 4));
  f.Add(Num("SinkTO (Data Sink Tagged Offset)", h.sink_tagged_offset, HexValue(h.sink_tagged_offset, 16), m.At(4), 8));
  f.Add(Num("RDMARDSZ (RDMA Read Message Size)", h.read_message_size, DecHex(h.read_message_size, 8), m.At(12), 4));
  f.Add(Num("SrcSTag (Data Source STag)", h.source_stag, HexValue(h.source_stag, 8), m.At(16), 4));
  f.Add(Num("SrcTO (Data Source Tagged Offset)", h.source_tagged_offset, HexValue(h.source_tagged_offset, 16), m.At(20),
            8));
  return f;
}

const char* ErrorTypeName(uint8_t layer, uint8_t etype) {
  for (const TerminateCodeEntry& e : TerminateCodeTable()) {
    if (e.layer == layer && e.error_type == etype) return e.error_type_name;
  }
  return "Unassigned";
}

const char* ErrorCodeName(const TerminateCode& code) {
  const TerminateCodeEntry* e = FindTerminateCode(code);
  if (e == nullptr) return "Unassigned";
  return e->any_code ? "any code of this Error Type" : e->error_code_name;
}

// REQ R5040-4.8-03: Layer(4) EType(4) Error Code(8) M D R Reserved(13).
Field TerminateControl(const TerminateHeader& h, uint64_t at) {
  const uint32_t w = uint32_t{h.code.layer & 0xFu} << 28 | uint32_t{h.code.error_type & 0xFu} << 24 |
                     uint32_t{h.code.error_code} << 16 | uint32_t{h.m} << 15 | uint32_t{h.d} << 14 |
                     uint32_t{h.r} << 13 | (h.reserved & 0x1FFFu);
  Field f = Num("Terminate Control", w, HexValue(w, 8), at, 4);
  f.Add(Bits("Layer", h.code.layer, HexValue(h.code.layer, 1) + " (" + TerminateLayerName(h.code.layer) + ")", at, 4,
             28, 4));
  f.Add(Bits("EType (Error Type)", h.code.error_type,
             HexValue(h.code.error_type, 1) + " (" + ErrorTypeName(h.code.layer, h.code.error_type) + ")", at, 4, 24,
             4));
  Field& code = f.Add(Bits("Error Code", h.code.error_code,
                           HexValue(h.code.error_code, 2) + " (" + ErrorCodeName(h.code) + ")", at, 4, 16, 8));
  code.problem = !IsRegistered(h.code);
  f.Add(Bits("M (DDP Segment Length valid)", h.m, YesNo(h.m), at, 4, 15, 1));
  f.Add(Bits("D (DDP Header Included)", h.d, YesNo(h.d), at, 4, 14, 1));
  f.Add(Bits("R (RDMAP Header Included)", h.r, YesNo(h.r), at, 4, 13, 1));
  f.Add(Bits("Reserved", h.reserved, std::to_string(h.reserved), at, 4, 0, 13));
  return f;
}

Field TerminateFields(const TerminateHeader& h, Profile profile, const StreamOffsetMap& m) {
  const bool fixed = h.form == TerminateForm::kFixed;
  Field f = Node("Terminate Header", Describe(h.code), m.At(0), h.encoded_length);
  f.Add(TerminateControl(h, m.At(0)));
  f.Add(Node(
      "Layout",
      fixed ? "fixed 52 octets (absent parts are zero-filled areas)" : "bit-driven (parts present as M, D and R say)",
      m.At(0), h.encoded_length));
  std::size_t at = kTerminateControlLength;
  if (h.has_segment_length) {
    f.Add(Num("DDP Segment Length", h.ddp_segment_length, DecHex(h.ddp_segment_length, 4), m.At(at), 2));
    at += 2;
  }
  if (h.has_ddp_header) {
    const DdpSegmentHeader& t = h.terminated_ddp_header;
    Field& ddp = f.Add(DescribeDdpHeader(t, m.From(at), "Terminated DDP Header"));
    ddp.Add(RdmapControlField(t.rsvd_ulp0, profile, m.At(at + 1)));
    if (!t.tagged) ddp.Add(Num("Invalidate STag", t.invalidate_stag, HexValue(t.invalidate_stag, 8), m.At(at + 2), 4));
    at += t.HeaderLength();
    if (fixed && t.tagged) {
      f.Add(Num("DDP Header area tail", h.fixed_ddp_area_tail, HexValue(h.fixed_ddp_area_tail, 8), m.At(at), 4));
      at += 4;
    }
  }
  if (h.has_rdma_header) {
    f.Add(ReadRequestFields("Terminated RDMA Header", h.terminated_rdma_header, m.From(at)));
  }
  return f;
}

// RFC 7306 Figure 4 / Figure 6.
Field AtomicRequestFields(const AtomicRequestHeader& h, const StreamOffsetMap& m) {
  Field f = Node("Atomic Request Header", AtomicOpcodeName(h.atomic_opcode), m.At(0), kAtomicRequestHeaderLength);
  const uint32_t w0 = (h.reserved & 0x0FFFFFFFu) << 4 | (h.atomic_opcode & 0xFu);
  Field& word = f.Add(Num("Reserved (Not Used) / AOpCode", w0, HexValue(w0, 8), m.At(0), 4));
  word.Add(Bits("Reserved (Not Used)", h.reserved, HexValue(h.reserved, 7), m.At(0), 4, 4, 28));
  Field& op =
      word.Add(Bits("AOpCode (Atomic Operation Code)", h.atomic_opcode,
                    HexValue(h.atomic_opcode, 1) + " (" + AtomicOpcodeName(h.atomic_opcode) + ")", m.At(0), 4, 0, 4));
  op.problem = h.atomic_opcode != 0x0 && h.atomic_opcode != 0x2;
  f.Add(Num("Request Identifier", h.request_identifier, HexValue(h.request_identifier, 8), m.At(4), 4));
  f.Add(Num("Remote STag", h.remote_stag, HexValue(h.remote_stag, 8), m.At(8), 4));
  f.Add(Num("Remote Tagged Offset", h.remote_tagged_offset, HexValue(h.remote_tagged_offset, 16), m.At(12), 8));
  f.Add(Num("Add or Swap Data", h.add_or_swap_data, HexValue(h.add_or_swap_data, 16), m.At(20), 8));
  f.Add(Num("Add or Swap Mask", h.add_or_swap_mask, HexValue(h.add_or_swap_mask, 16), m.At(28), 8));
  f.Add(Num("Compare Data", h.compare_data, HexValue(h.compare_data, 16), m.At(36), 8));
  f.Add(Num("Compare Mask", h.compare_mask, HexValue(h.compare_mask, 16), m.At(44), 8));
  return f;
}

Field AtomicResponseFields(const AtomicResponseHeader& h, const StreamOffsetMap& m) {
  Field f = Node("Atomic Response Header", "", m.At(0), kAtomicResponseHeaderLength);
  f.Add(Num("Original Request Identifier", h.original_request_identifier, HexValue(h.original_request_identifier, 8),
            m.At(0), 4));
  f.Add(Num("Original Remote Data Value", h.original_remote_data_value, HexValue(h.original_remote_data_value, 16),
            m.At(4), 8));
  return f;
}

// Data Sink STag | Data Sink Length | Data Sink Tagged Offset (COMMIT §3.1.1-3).
template <class H>
void DataSinkFields(Field& f, const H& h, const StreamOffsetMap& m) {
  f.Add(Num("Data Sink STag", h.data_sink_stag, HexValue(h.data_sink_stag, 8), m.At(0), 4));
  f.Add(Num("Data Sink Length", h.data_sink_length, DecHex(h.data_sink_length, 8), m.At(4), 4));
  f.Add(Num("Data Sink Tagged Offset", h.data_sink_tagged_offset, HexValue(h.data_sink_tagged_offset, 16), m.At(8), 8));
}

Field FlushRequestFields(const FlushRequestHeader& h, const StreamOffsetMap& m) {
  Field f = Node("RDMA Flush Request Header", "", m.At(0), kFlushRequestHeaderLength);
  DataSinkFields(f, h, m);
  const uint32_t flags = h.flush_disposition_flags;
  Field& fl = f.Add(Num("Flush Disposition Flags", flags, HexValue(flags, 8), m.At(16), 4));
  fl.Add(Bits("Reserved", flags >> 2, HexValue(flags >> 2, 8), m.At(16), 4, 2, 30));
  fl.Add(Bits("G (Flush to Global Visibility)", (flags >> 1) & 1, YesNo((flags >> 1) & 1), m.At(16), 4, 1, 1));
  fl.Add(Bits("P (Flush to Persistence)", flags & 1, YesNo(flags & 1), m.At(16), 4, 0, 1));
  return f;
}

Field VerifyRequestFields(const VerifyRequestHeader& h, const StreamOffsetMap& m) {
  Field f = Node("RDMA Verify Request Header", "", m.At(0), kVerifyRequestHeaderLength + h.hash_value.size());
  DataSinkFields(f, h, m);
  f.Add(Octets("Hash Value", h.hash_value, m.At(16)));
  return f;
}

Field AtomicWriteRequestFields(const AtomicWriteRequestHeader& h, const StreamOffsetMap& m) {
  Field f = Node("Atomic Write Request Header", "", m.At(0), kAtomicWriteRequestHeaderLength);
  DataSinkFields(f, h, m);
  f.Add(Num("Data", h.data, HexValue(h.data, 16), m.At(16), 8));
  return f;
}

std::string SegmentNote(const RdmapMessageView& v) {
  const OpcodeInfo& info = *v.opcode_info;
  if (!v.tagged_flag_matches) {
    return std::string("the DDP T flag is ") + (v.ddp.header.tagged ? "1" : "0") + " but " + info.name + " uses the " +
           (info.tagged ? "Tagged" : "Untagged") + " Buffer Model; the RDMAP header is not decoded";
  }
  if (info.header != HeaderKind::kNone && !v.header_present) {
    return "continuation segment (MO " + std::to_string(v.ddp.header.message_offset) +
           "): the RDMAP header is in the segment with MO 0";
  }
  return {};
}

}  // namespace

const char* AtomicOpcodeName(uint8_t aopcode) {
  switch (aopcode) {
    case 0x0:
      return "FetchAdd";
    case 0x2:
      return "CmpSwap";
    default:
      return "Reserved";
  }
}

Field DescribeDdpHeader(const DdpSegmentHeader& h, const StreamOffsetMap& m, std::string name) {
  Field f = Node(std::move(name), h.tagged ? "tagged (14-octet header)" : "untagged (18-octet header)", m.At(0),
                 h.HeaderLength());
  f.Add(DdpControl(h, m.At(0)));
  if (h.tagged) {
    f.Add(Num("RsvdULP", h.rsvd_ulp0, HexValue(h.rsvd_ulp0, 2) + " (RDMAP Control Field)", m.At(1), 1));
    f.Add(Num("STag", h.stag, HexValue(h.stag, 8), m.At(2), 4));
    f.Add(Num("TO (Tagged Offset)", h.tagged_offset, HexValue(h.tagged_offset, 16), m.At(6), 8));
    return f;
  }
  Bytes ulp(5);
  ulp[0] = h.rsvd_ulp0;
  StoreBe32(ulp.data() + 1, h.invalidate_stag);
  f.Add(Node("RsvdULP", HexOctets(ulp) + " (RDMAP Control Field, Invalidate STag)", m.At(1), 5));
  f.Add(Num("QN (Queue Number)", h.queue_number, DecHex(h.queue_number, 8), m.At(6), 4));
  f.Add(Num("MSN (Message Sequence Number)", h.msn, DecHex(h.msn, 8), m.At(10), 4));
  f.Add(Num("MO (Message Offset)", h.message_offset, DecHex(h.message_offset, 8), m.At(14), 4));
  return f;
}

Field DescribeRdmap(const RdmapMessageView& v, Profile profile, const StreamOffsetMap& m) {
  const std::string name = v.opcode_known ? v.opcode_info->name : "Unknown opcode " + HexValue(v.ctrl.opcode, 2);
  Field f = Node("RDMAP", name, m.At(1), v.ulp_payload_offset - 1);
  f.problem = !v.opcode_known;
  f.Add(RdmapControlField(v.ddp.header.rsvd_ulp0, profile, m.At(1)));
  if (!v.ddp.header.tagged) {
    std::string use;
    if (v.opcode_known && v.opcode_info->invalidate_stag == InvalidateStagUse::kValid) use = " (STag to invalidate)";
    const uint32_t s = v.invalidate_stag();
    f.Add(Num("Invalidate STag", s, HexValue(s, 8) + use, m.At(2), 4));
  }
  if (v.opcode_known) {
    if (std::string note = SegmentNote(v); !note.empty()) f.Add(Node("Note", note, m.At(0), 0));
  }
  if (v.header_present) f.Add(DescribeRdmapHeader(v.header, profile, m.From(v.ddp.payload_offset)));
  return f;
}

Field DescribeRdmapHeader(const RdmapHeader& header, Profile profile, const StreamOffsetMap& m) {
  struct Visitor {
    Profile profile;
    const StreamOffsetMap& m;
    Field operator()(std::monostate) const { return Node("RDMAP Header", "none", m.At(0), 0); }
    Field operator()(const ReadRequestHeader& h) const { return ReadRequestFields("RDMA Read Request Header", h, m); }
    Field operator()(const TerminateHeader& h) const { return TerminateFields(h, profile, m); }
    Field operator()(const ImmediateDataHeader& h) const {
      Field f = Node("Immediate Data Header", "", m.At(0), kImmediateDataHeaderLength);
      f.Add(Num("Immediate Data", h.immediate_data, HexValue(h.immediate_data, 16), m.At(0), 8));
      return f;
    }
    Field operator()(const AtomicRequestHeader& h) const { return AtomicRequestFields(h, m); }
    Field operator()(const AtomicResponseHeader& h) const { return AtomicResponseFields(h, m); }
    Field operator()(const FlushRequestHeader& h) const { return FlushRequestFields(h, m); }
    Field operator()(const VerifyRequestHeader& h) const { return VerifyRequestFields(h, m); }
    Field operator()(const VerifyResponseHeader& h) const {
      Field f = Node("RDMA Verify Response Header", "", m.At(0), h.hash_value.size());
      f.Add(Octets("Hash Value", h.hash_value, m.At(0)));
      return f;
    }
    Field operator()(const AtomicWriteRequestHeader& h) const { return AtomicWriteRequestFields(h, m); }
  };
  return std::visit(Visitor{profile, m}, header);
}

Field DescribeRdmapControlField(uint8_t control, Profile profile, uint64_t offset) {
  return RdmapControlField(control, profile, offset);
}

}  // namespace rdmapct::wire
