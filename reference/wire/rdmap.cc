#include "reference/wire/rdmap.h"

#include <utility>

namespace rdmapct::wire {
namespace {

// Every fixed RDMAP header field reads through this reader so that a short
// buffer reports the RDMAP field name at its absolute offset.
class FieldReader {
 public:
  FieldReader(ByteSpan data, std::size_t base) : r_(data, base) {}
  bool U32(const char* field, uint32_t& out) { return ok_ && (ok_ = r_.Read32(field, out, err_)); }
  bool U64(const char* field, uint64_t& out) { return ok_ && (ok_ = r_.Read64(field, out, err_)); }
  bool Span(const char* field, std::size_t n, ByteSpan& out) { return ok_ && (ok_ = r_.ReadSpan(field, n, out, err_)); }
  bool ok() const { return ok_; }
  const DecodeError& error() const { return err_; }
  ByteReader& reader() { return r_; }

 private:
  ByteReader r_;
  DecodeError err_{};
  bool ok_ = true;
};

constexpr uint32_t TerminateControlWord(const TerminateHeader& h) {
  return uint32_t{h.code.layer & 0xFu} << 28 | uint32_t{h.code.error_type & 0xFu} << 24 |
         uint32_t{h.code.error_code} << 16 | uint32_t{h.m} << 15 | uint32_t{h.d} << 14 | uint32_t{h.r} << 13 |
         (h.reserved & 0x1FFFu);
}

void ApplyTerminateControlWord(uint32_t w, TerminateHeader& h) {
  h.code = TerminateCode{static_cast<uint8_t>(w >> 28), static_cast<uint8_t>((w >> 24) & 0xF),
                         static_cast<uint8_t>((w >> 16) & 0xFF)};
  h.m = ((w >> 15) & 1) != 0;
  h.d = ((w >> 14) & 1) != 0;
  h.r = ((w >> 13) & 1) != 0;
  h.reserved = static_cast<uint16_t>(w & 0x1FFF);
}

// Octet offsets inside a Terminate header (RFC 5040 Figure 7).
constexpr std::size_t kTermDdpAt = 6;
constexpr std::size_t kFixedRdmaAt = kTermDdpAt + kDdpUntaggedHeaderLength;  // 24

// Reads a Terminated DDP Header at the reader's position; its own T bit
// chooses 14 or 18 octets.
bool ReadTerminatedDdpHeader(FieldReader& fr, ByteSpan data, DdpSegmentHeader& out) {
  const std::size_t at = fr.reader().pos();
  const std::size_t len =
      (at < data.size() && DdpControlTagged(data[at])) ? kDdpTaggedHeaderLength : kDdpUntaggedHeaderLength;
  ByteSpan bytes;
  if (!fr.Span("Terminated DDP Header", len, bytes)) return false;
  out = LoadDdpHeaderUnchecked(bytes.data());
  return true;
}

// The fixed 52-octet form (decision in rdmap.h).
Result<TerminateHeader> DecodeFixedTerminate(TerminateHeader h, ByteSpan data, std::size_t base) {
  FieldReader fr(data, base);
  uint32_t word = 0;
  ByteSpan seg_len;
  fr.U32("Terminate Control", word);
  fr.Span("DDP Segment Length", 2, seg_len);
  ReadTerminatedDdpHeader(fr, data, h.terminated_ddp_header);
  if (!fr.ok()) return fr.error();
  h.ddp_segment_length = LoadBe16(seg_len.data());
  if (h.terminated_ddp_header.tagged) {
    h.fixed_ddp_area_tail = LoadBe32(data.data() + kTermDdpAt + kDdpTaggedHeaderLength);
  }
  auto rdma = DecodeReadRequestHeader(data.subspan(kFixedRdmaAt), base + kFixedRdmaAt);
  if (!rdma) return rdma.error();
  h.terminated_rdma_header = *rdma;
  h.form = TerminateForm::kFixed;
  h.has_segment_length = h.has_ddp_header = h.has_rdma_header = true;
  h.encoded_length = kTerminateFixedLength;
  return h;
}

Result<TerminateHeader> DecodeBitDrivenTerminate(TerminateHeader h, ByteSpan data, std::size_t base) {
  FieldReader fr(data, base);
  uint32_t word = 0;
  fr.U32("Terminate Control", word);
  h.form = TerminateForm::kBitDriven;
  h.has_segment_length = h.m || h.d;
  h.has_ddp_header = h.d;
  h.has_rdma_header = h.r;
  if (h.has_segment_length) {
    ByteSpan seg_len;
    if (fr.Span("DDP Segment Length", 2, seg_len)) h.ddp_segment_length = LoadBe16(seg_len.data());
  }
  if (h.has_ddp_header && fr.ok()) ReadTerminatedDdpHeader(fr, data, h.terminated_ddp_header);
  if (!fr.ok()) return fr.error();
  if (h.has_rdma_header) {
    const std::size_t at = fr.reader().pos();
    ByteSpan rdma_bytes;
    if (!fr.Span("Terminated RDMA Header", kTerminatedRdmaHeaderLength, rdma_bytes)) {
      return fr.error();
    }
    h.terminated_rdma_header = *DecodeReadRequestHeader(rdma_bytes, base + at);
  }
  h.encoded_length = fr.reader().pos();
  return h;
}

// Bit-driven length of the header whose first octets are `data`.
std::size_t BitDrivenTerminateLength(const TerminateHeader& h, ByteSpan data) {
  std::size_t n = kTerminateControlLength;
  if (h.m || h.d) n += 2;
  if (h.d) {
    const bool tagged = data.size() > kTermDdpAt && DdpControlTagged(data[kTermDdpAt]);
    n += tagged ? kDdpTaggedHeaderLength : kDdpUntaggedHeaderLength;
  }
  if (h.r) n += kTerminatedRdmaHeaderLength;
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------
// RDMA Read Request Header. REQ R5040-4.2-T02

Result<ReadRequestHeader> DecodeReadRequestHeader(ByteSpan data, std::size_t base_offset) {
  FieldReader fr(data, base_offset);
  ReadRequestHeader h;
  fr.U32("SinkSTag", h.sink_stag);
  fr.U64("SinkTO", h.sink_tagged_offset);
  fr.U32("RDMARDSZ", h.read_message_size);
  fr.U32("SrcSTag", h.source_stag);
  fr.U64("SrcTO", h.source_tagged_offset);
  if (!fr.ok()) return fr.error();
  return h;
}

void EncodeReadRequestHeader(const ReadRequestHeader& h, Bytes& out) {
  ByteWriter w(out);
  w.Put32(h.sink_stag);
  w.Put64(h.sink_tagged_offset);
  w.Put32(h.read_message_size);
  w.Put32(h.source_stag);
  w.Put64(h.source_tagged_offset);
}

// ---------------------------------------------------------------------------
// Terminate Header. REQ R5040-4.2-T08

Result<TerminateHeader> DecodeTerminateHeader(ByteSpan data, std::size_t base_offset) {
  TerminateHeader h;
  {
    FieldReader fr(data, base_offset);
    uint32_t word = 0;
    if (!fr.U32("Terminate Control", word)) return fr.error();
    ApplyTerminateControlWord(word, h);
  }
  const std::size_t bit_len = BitDrivenTerminateLength(h, data);
  if (data.size() >= kTerminateFixedLength && data.size() != bit_len) {
    return DecodeFixedTerminate(h, data, base_offset);
  }
  return DecodeBitDrivenTerminate(h, data, base_offset);
}

std::size_t TerminateHeaderLength(const TerminateHeader& h) {
  if (h.form == TerminateForm::kFixed) return kTerminateFixedLength;
  std::size_t n = kTerminateControlLength;
  if (h.has_segment_length) n += 2;
  if (h.has_ddp_header) n += h.terminated_ddp_header.HeaderLength();
  if (h.has_rdma_header) n += kTerminatedRdmaHeaderLength;
  return n;
}

void EncodeTerminateHeader(const TerminateHeader& h, Bytes& out) {
  ByteWriter w(out);
  w.Put32(TerminateControlWord(h));
  if (h.form == TerminateForm::kFixed) {
    // Every area is written; absent ones are whatever the caller left (zero
    // when built by MakeTerminateHeader).
    w.Put16(h.ddp_segment_length);
    EncodeDdpHeader(h.terminated_ddp_header, out);
    if (h.terminated_ddp_header.tagged) w.Put32(h.fixed_ddp_area_tail);
    EncodeReadRequestHeader(h.terminated_rdma_header, out);
    return;
  }
  if (h.has_segment_length) w.Put16(h.ddp_segment_length);
  if (h.has_ddp_header) EncodeDdpHeader(h.terminated_ddp_header, out);
  if (h.has_rdma_header) EncodeReadRequestHeader(h.terminated_rdma_header, out);
}

TerminateHeader MakeTerminateHeader(TerminateCode code, const DdpSegmentHeader* terminated_ddp,
                                    uint16_t ddp_segment_length, const ReadRequestHeader* terminated_rdma,
                                    TerminateForm form) {
  TerminateHeader h;
  h.code = code;
  h.form = form;
  h.m = h.d = terminated_ddp != nullptr;
  h.r = terminated_rdma != nullptr;
  const bool fixed = form == TerminateForm::kFixed;
  h.has_segment_length = h.has_ddp_header = fixed || h.d;
  h.has_rdma_header = fixed || h.r;
  if (terminated_ddp != nullptr) {
    h.ddp_segment_length = ddp_segment_length;
    h.terminated_ddp_header = *terminated_ddp;
  }
  if (terminated_rdma != nullptr) h.terminated_rdma_header = *terminated_rdma;
  h.encoded_length = TerminateHeaderLength(h);
  return h;
}

// ---------------------------------------------------------------------------
// RFC 7306 headers. REQ R7306-4.2-T01 R7306-4.2-T03 R7306-4.2-T04

Result<ImmediateDataHeader> DecodeImmediateDataHeader(ByteSpan data, std::size_t base_offset) {
  FieldReader fr(data, base_offset);
  ImmediateDataHeader h;
  if (!fr.U64("Immediate Data", h.immediate_data)) return fr.error();
  return h;
}

void EncodeImmediateDataHeader(const ImmediateDataHeader& h, Bytes& out) { ByteWriter(out).Put64(h.immediate_data); }

Result<AtomicRequestHeader> DecodeAtomicRequestHeader(ByteSpan data, std::size_t base_offset) {
  FieldReader fr(data, base_offset);
  AtomicRequestHeader h;
  uint32_t word0 = 0;
  // The first word is Reserved (28 bits) | AOpCode (4 bits); a short word is
  // reported as AOpCode, the field a receiver needs from it.
  fr.U32("AOpCode", word0);
  fr.U32("Request Identifier", h.request_identifier);
  fr.U32("Remote STag", h.remote_stag);
  fr.U64("Remote Tagged Offset", h.remote_tagged_offset);
  fr.U64("Add or Swap Data", h.add_or_swap_data);
  fr.U64("Add or Swap Mask", h.add_or_swap_mask);
  fr.U64("Compare Data", h.compare_data);
  fr.U64("Compare Mask", h.compare_mask);
  if (!fr.ok()) return fr.error();
  h.reserved = word0 >> 4;
  h.atomic_opcode = static_cast<uint8_t>(word0 & 0xF);
  return h;
}

void EncodeAtomicRequestHeader(const AtomicRequestHeader& h, Bytes& out) {
  ByteWriter w(out);
  w.Put32((h.reserved & 0x0FFFFFFFu) << 4 | (h.atomic_opcode & 0xFu));
  w.Put32(h.request_identifier);
  w.Put32(h.remote_stag);
  w.Put64(h.remote_tagged_offset);
  w.Put64(h.add_or_swap_data);
  w.Put64(h.add_or_swap_mask);
  w.Put64(h.compare_data);
  w.Put64(h.compare_mask);
}

Result<AtomicResponseHeader> DecodeAtomicResponseHeader(ByteSpan data, std::size_t base_offset) {
  FieldReader fr(data, base_offset);
  AtomicResponseHeader h;
  fr.U32("Original Request Identifier", h.original_request_identifier);
  fr.U64("Original Remote Data Value", h.original_remote_data_value);
  if (!fr.ok()) return fr.error();
  return h;
}

void EncodeAtomicResponseHeader(const AtomicResponseHeader& h, Bytes& out) {
  ByteWriter w(out);
  w.Put32(h.original_request_identifier);
  w.Put64(h.original_remote_data_value);
}

// ---------------------------------------------------------------------------
// COMMIT headers. REQ RCOMMIT-3.1-T07 RCOMMIT-3.1-T09 RCOMMIT-3.1-T10 RCOMMIT-3.1-T11

namespace {
// Data Sink STag | Data Sink Length | Data Sink Tagged Offset: the common
// 16-octet prefix of the Flush, Verify and Atomic Write Requests.
template <class H>
void ReadDataSink(FieldReader& fr, H& h) {
  fr.U32("Data Sink STag", h.data_sink_stag);
  fr.U32("Data Sink Length", h.data_sink_length);
  fr.U64("Data Sink Tagged Offset", h.data_sink_tagged_offset);
}
template <class H>
void WriteDataSink(ByteWriter& w, const H& h) {
  w.Put32(h.data_sink_stag);
  w.Put32(h.data_sink_length);
  w.Put64(h.data_sink_tagged_offset);
}
}  // namespace

Result<FlushRequestHeader> DecodeFlushRequestHeader(ByteSpan data, std::size_t base_offset) {
  FieldReader fr(data, base_offset);
  FlushRequestHeader h;
  ReadDataSink(fr, h);
  fr.U32("Flush Disposition Flags", h.flush_disposition_flags);
  if (!fr.ok()) return fr.error();
  return h;
}

void EncodeFlushRequestHeader(const FlushRequestHeader& h, Bytes& out) {
  ByteWriter w(out);
  WriteDataSink(w, h);
  w.Put32(h.flush_disposition_flags);
}

Result<VerifyRequestHeader> DecodeVerifyRequestHeader(ByteSpan data, std::size_t base_offset) {
  FieldReader fr(data, base_offset);
  VerifyRequestHeader h;
  ReadDataSink(fr, h);
  if (!fr.ok()) return fr.error();
  h.hash_value = fr.reader().rest();  // optional, length implied by the message length
  return h;
}

void EncodeVerifyRequestHeader(const VerifyRequestHeader& h, Bytes& out) {
  ByteWriter w(out);
  WriteDataSink(w, h);
  w.PutBytes(h.hash_value);
}

Result<VerifyResponseHeader> DecodeVerifyResponseHeader(ByteSpan data, std::size_t) {
  return VerifyResponseHeader{data};
}

void EncodeVerifyResponseHeader(const VerifyResponseHeader& h, Bytes& out) { ByteWriter(out).PutBytes(h.hash_value); }

Result<AtomicWriteRequestHeader> DecodeAtomicWriteRequestHeader(ByteSpan data, std::size_t base_offset) {
  FieldReader fr(data, base_offset);
  AtomicWriteRequestHeader h;
  ReadDataSink(fr, h);
  fr.U64("Data", h.data);
  if (!fr.ok()) return fr.error();
  return h;
}

void EncodeAtomicWriteRequestHeader(const AtomicWriteRequestHeader& h, Bytes& out) {
  ByteWriter w(out);
  WriteDataSink(w, h);
  w.Put64(h.data);
}

// ---------------------------------------------------------------------------
// Dispatch.

namespace {
template <class H>
Result<RdmapHeader> Widen(Result<H> r, std::size_t& consumed, std::size_t length) {
  if (!r) return r.error();
  consumed = length;
  return RdmapHeader(std::move(r).value());
}
}  // namespace

Result<RdmapHeader> DecodeRdmapHeader(HeaderKind kind, ByteSpan data, std::size_t base, std::size_t& consumed) {
  consumed = 0;
  switch (kind) {
    case HeaderKind::kNone:
      return RdmapHeader{};
    case HeaderKind::kReadRequest:
      return Widen(DecodeReadRequestHeader(data, base), consumed, kReadRequestHeaderLength);
    case HeaderKind::kTerminate: {
      auto r = DecodeTerminateHeader(data, base);
      const std::size_t n = r ? r->encoded_length : 0;
      return Widen(std::move(r), consumed, n);
    }
    case HeaderKind::kImmediateData:
      return Widen(DecodeImmediateDataHeader(data, base), consumed, kImmediateDataHeaderLength);
    case HeaderKind::kAtomicRequest:
      return Widen(DecodeAtomicRequestHeader(data, base), consumed, kAtomicRequestHeaderLength);
    case HeaderKind::kAtomicResponse:
      return Widen(DecodeAtomicResponseHeader(data, base), consumed, kAtomicResponseHeaderLength);
    case HeaderKind::kFlushRequest:
      return Widen(DecodeFlushRequestHeader(data, base), consumed, kFlushRequestHeaderLength);
    case HeaderKind::kVerifyRequest:
      return Widen(DecodeVerifyRequestHeader(data, base), consumed, data.size());
    case HeaderKind::kVerifyResponse:
      return Widen(DecodeVerifyResponseHeader(data, base), consumed, data.size());
    case HeaderKind::kAtomicWriteRequest:
      return Widen(DecodeAtomicWriteRequestHeader(data, base), consumed, kAtomicWriteRequestHeaderLength);
  }
  return RdmapHeader{};
}

void EncodeRdmapHeader(const RdmapHeader& h, Bytes& out) {
  struct Visitor {
    Bytes& out;
    void operator()(std::monostate) const {}
    void operator()(const ReadRequestHeader& x) const { EncodeReadRequestHeader(x, out); }
    void operator()(const TerminateHeader& x) const { EncodeTerminateHeader(x, out); }
    void operator()(const ImmediateDataHeader& x) const { EncodeImmediateDataHeader(x, out); }
    void operator()(const AtomicRequestHeader& x) const { EncodeAtomicRequestHeader(x, out); }
    void operator()(const AtomicResponseHeader& x) const { EncodeAtomicResponseHeader(x, out); }
    void operator()(const FlushRequestHeader& x) const { EncodeFlushRequestHeader(x, out); }
    void operator()(const VerifyRequestHeader& x) const { EncodeVerifyRequestHeader(x, out); }
    void operator()(const VerifyResponseHeader& x) const { EncodeVerifyResponseHeader(x, out); }
    void operator()(const AtomicWriteRequestHeader& x) const { EncodeAtomicWriteRequestHeader(x, out); }
  };
  std::visit(Visitor{out}, h);
}

Bytes EncodeRdmapMessageBody(const RdmapHeader& h, ByteSpan ulp_payload) {
  Bytes out;
  EncodeRdmapHeader(h, out);
  ByteWriter(out).PutBytes(ulp_payload);
  return out;
}

// ---------------------------------------------------------------------------
// Segments.

Result<RdmapMessageView> DecodeRdmapSegment(ByteSpan ulpdu, Profile profile, std::size_t base_offset) {
  auto ddp = DecodeDdpSegment(ulpdu, base_offset);
  if (!ddp) return ddp.error();
  RdmapMessageView v;
  v.ddp = *ddp;
  const DdpSegmentHeader& dh = v.ddp.header;
  v.ctrl = DecodeRdmapControl(dh.rsvd_ulp0, profile);
  v.opcode_info = FindOpcode(v.ctrl.opcode, profile);
  v.opcode_known = v.opcode_info != nullptr;
  v.tagged_flag_matches = v.opcode_known && v.opcode_info->tagged == dh.tagged;
  v.ulp_payload = v.ddp.payload;
  v.ulp_payload_offset = v.ddp.payload_offset;
  // The RDMAP header sits at the start of the DDP message (MO = 0) of an
  // untagged message whose opcode defines one; other segments carry payload.
  if (v.tagged_flag_matches && v.opcode_info->header != HeaderKind::kNone && !dh.tagged && dh.message_offset == 0) {
    std::size_t consumed = 0;
    auto h = DecodeRdmapHeader(v.opcode_info->header, v.ddp.payload, v.ddp.payload_offset, consumed);
    if (!h) return h.error();
    v.header = std::move(h).value();
    v.header_present = true;
    v.ulp_payload = v.ddp.payload.subspan(consumed);
    v.ulp_payload_offset += consumed;
  }
  return v;
}

void SetRdmapControl(RdmapSegment& seg, const RdmapControl& ctrl, Profile profile) {
  seg.ddp.rsvd_ulp0 = EncodeRdmapControl(ctrl, profile);
}

void EncodeSegment(const RdmapSegment& seg, Bytes& out) {
  EncodeDdpHeader(seg.ddp, out);
  EncodeRdmapHeader(seg.header, out);
  ByteWriter(out).PutBytes(seg.ulp_payload);
}

Bytes EncodeSegment(const RdmapSegment& seg) {
  Bytes out;
  out.reserve(seg.ddp.HeaderLength() + kTerminateFixedLength + seg.ulp_payload.size());
  EncodeSegment(seg, out);
  return out;
}

RdmapSegment ToSegment(const RdmapMessageView& v) { return RdmapSegment{v.ddp.header, v.header, v.ulp_payload}; }

// REQ R5040-4.1-01 R5040-4.1-05 R7306-4.1-05
RdmapSegment MakeSegment(Opcode op) {
  const OpcodeInfo& info = InfoFor(op);
  RdmapSegment seg;
  seg.ddp.tagged = info.tagged;
  seg.ddp.last = true;
  seg.ddp.ddp_version = kDdpVersion;
  // The 5-bit encoding equals the 4-bit one for opcodes below 0x10 when Rsv = 0.
  seg.ddp.rsvd_ulp0 = RdmapControlByte(op, Profile::kCommit);
  if (!info.tagged) {
    seg.ddp.queue_number = info.queue_number;
    seg.ddp.msn = 1;
  }
  return seg;
}

namespace {
RdmapSegment Tagged(Opcode op, uint32_t stag, uint64_t tagged_offset, ByteSpan payload) {
  RdmapSegment seg = MakeSegment(op);
  seg.ddp.stag = stag;
  seg.ddp.tagged_offset = tagged_offset;
  seg.ulp_payload = payload;
  return seg;
}
RdmapSegment Untagged(Opcode op, uint32_t msn, RdmapHeader header) {
  RdmapSegment seg = MakeSegment(op);
  seg.ddp.msn = msn;
  seg.header = std::move(header);
  return seg;
}
}  // namespace

RdmapSegment MakeRdmaWrite(uint32_t stag, uint64_t tagged_offset, ByteSpan payload) {
  return Tagged(Opcode::kRdmaWrite, stag, tagged_offset, payload);
}
RdmapSegment MakeReadResponse(uint32_t stag, uint64_t tagged_offset, ByteSpan payload) {
  return Tagged(Opcode::kRdmaReadResponse, stag, tagged_offset, payload);
}
RdmapSegment MakeReadRequest(uint32_t msn, const ReadRequestHeader& h) {
  return Untagged(Opcode::kRdmaReadRequest, msn, h);
}
RdmapSegment MakeSend(Opcode op, uint32_t msn, ByteSpan payload, uint32_t invalidate_stag) {
  RdmapSegment seg = Untagged(op, msn, {});
  seg.ddp.invalidate_stag = invalidate_stag;
  seg.ulp_payload = payload;
  return seg;
}
RdmapSegment MakeTerminate(uint32_t msn, const TerminateHeader& h) { return Untagged(Opcode::kTerminate, msn, h); }
RdmapSegment MakeImmediateData(uint32_t msn, uint64_t immediate_data, bool solicited_event) {
  return Untagged(solicited_event ? Opcode::kImmediateDataWithSe : Opcode::kImmediateData, msn,
                  ImmediateDataHeader{immediate_data});
}
RdmapSegment MakeAtomicRequest(uint32_t msn, const AtomicRequestHeader& h) {
  return Untagged(Opcode::kAtomicRequest, msn, h);
}
RdmapSegment MakeAtomicResponse(uint32_t msn, const AtomicResponseHeader& h) {
  return Untagged(Opcode::kAtomicResponse, msn, h);
}
RdmapSegment MakeFlushRequest(uint32_t msn, const FlushRequestHeader& h) {
  return Untagged(Opcode::kFlushRequest, msn, h);
}
RdmapSegment MakeFlushResponse(uint32_t msn) { return Untagged(Opcode::kFlushResponse, msn, {}); }
RdmapSegment MakeVerifyRequest(uint32_t msn, const VerifyRequestHeader& h) {
  return Untagged(Opcode::kVerifyRequest, msn, h);
}
RdmapSegment MakeVerifyResponse(uint32_t msn, ByteSpan hash_value) {
  return Untagged(Opcode::kVerifyResponse, msn, VerifyResponseHeader{hash_value});
}
RdmapSegment MakeAtomicWriteRequest(uint32_t msn, const AtomicWriteRequestHeader& h) {
  return Untagged(Opcode::kAtomicWriteRequest, msn, h);
}
RdmapSegment MakeAtomicWriteResponse(uint32_t msn) { return Untagged(Opcode::kAtomicWriteResponse, msn, {}); }

bool SwapTerminateControlBitfieldOrder(std::span<uint8_t> ulpdu, Profile profile) {
  constexpr std::size_t kControl = kDdpUntaggedHeaderLength;  // Terminate header follows the DDP header
  if (ulpdu.size() < kControl + 4 || (ulpdu[0] & 0x80) != 0) return false;
  if (DecodeRdmapControl(ulpdu[1], profile).opcode != static_cast<uint8_t>(Opcode::kTerminate)) return false;
  uint8_t& layer_etype = ulpdu[kControl];
  layer_etype = static_cast<uint8_t>(layer_etype << 4 | layer_etype >> 4);
  uint8_t& flags = ulpdu[kControl + 2];
  uint8_t reversed = 0;
  for (int bit = 0; bit < 8; ++bit) reversed |= static_cast<uint8_t>(((flags >> bit) & 1) << (7 - bit));
  flags = reversed;
  return true;
}

}  // namespace rdmapct::wire
