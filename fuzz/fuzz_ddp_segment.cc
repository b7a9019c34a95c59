// DDP segment and RDMAP message decoders (RFC 5041 §4, RFC 5040 §4,
// RFC 7306 §4-6, draft-talpey-rdma-commit-01 §3.1; ddp.h, rdmap.h).
//
// The input is one ULPDU (DDP header + payload), decoded under each of the
// three profiles. Oracles:
//  - round trip: decoding is syntactic and keeps every bit, reserved ones
//    included (rdmap.h; property test RoundTrip.ArbitraryDecodableOctets-
//    ReencodeExactly), so EncodeSegment(ToSegment(view)) reproduces the
//    input byte for byte, and so does EncodeDdpSegment for the DDP view;
//  - the view is consistent: the Control Field is the profile's reading of
//    octet 1, opcode_info is the table row, header_present exactly when the
//    RDMAP header is due (known opcode, T flag as the table says, untagged,
//    MO = 0, a header kind), ulp_payload is the tail of the input at
//    ulp_payload_offset, DecodeDdpSegment agrees on the DDP part;
//  - profiles are cumulative: an opcode rfc5040 knows reads the same under
//    rfc7306;
//  - errors are kTruncated only, at an offset inside the input, equal to
//    DecodeDdpSegment's when the DDP header itself is short, inside the RDMAP
//    header otherwise; a base offset shifts every error offset.
#include <array>
#include <cstddef>
#include <cstdint>
#include <variant>

#include "fuzz/support.h"
#include "reference/wire/ddp.h"
#include "reference/wire/rdmap.h"

namespace {

using namespace rdmapct::wire;
using rdmapct::fuzz::SameBytes;
using rdmapct::fuzz::SameError;

constexpr std::array<Profile, 3> kProfiles = {Profile::kRfc5040, Profile::kRfc7306, Profile::kCommit};
constexpr std::size_t kBase = 1000;  // an arbitrary outer-buffer offset

bool HeaderDue(const DdpSegmentHeader& h, const OpcodeInfo* info) {
  return info != nullptr && info->tagged == h.tagged && !h.tagged && h.message_offset == 0 &&
         info->header != HeaderKind::kNone;
}

// Every decoded field sits where the RFC figure puts it (offsets written
// from RFC 5041 Figures 4-5, RFC 5040 Figure 6, RFC 7306 Figures 4/6 and
// COMMIT §3.1): a round trip alone would not notice a field swap made
// symmetrically in the decoder and the encoder.
void CheckFieldOffsets(const RdmapMessageView& v, ByteSpan in) {
  const DdpSegmentHeader& h = v.ddp.header;
  const uint8_t* p = in.data();
  FUZZ_CHECK(h.rsvd_ulp0 == p[1]);
  if (h.tagged) {
    FUZZ_CHECK(h.stag == LoadBe32(p + 2) && h.tagged_offset == LoadBe64(p + 6));
  } else {
    FUZZ_CHECK(h.invalidate_stag == LoadBe32(p + 2) && h.queue_number == LoadBe32(p + 6));
    FUZZ_CHECK(h.msn == LoadBe32(p + 10) && h.message_offset == LoadBe32(p + 14));
  }
  const uint8_t* r = p + v.ddp.payload_offset;  // first RDMAP header octet
  if (const auto* x = std::get_if<ReadRequestHeader>(&v.header)) {
    FUZZ_CHECK(x->sink_stag == LoadBe32(r) && x->sink_tagged_offset == LoadBe64(r + 4));
    FUZZ_CHECK(x->read_message_size == LoadBe32(r + 12) && x->source_stag == LoadBe32(r + 16));
    FUZZ_CHECK(x->source_tagged_offset == LoadBe64(r + 20));
  } else if (const auto* x = std::get_if<ImmediateDataHeader>(&v.header)) {
    FUZZ_CHECK(x->immediate_data == LoadBe64(r));
  } else if (const auto* x = std::get_if<AtomicRequestHeader>(&v.header)) {
    FUZZ_CHECK(x->reserved == LoadBe32(r) >> 4 && x->atomic_opcode == (r[3] & 0xF));
    FUZZ_CHECK(x->request_identifier == LoadBe32(r + 4) && x->remote_stag == LoadBe32(r + 8));
    FUZZ_CHECK(x->remote_tagged_offset == LoadBe64(r + 12) && x->add_or_swap_data == LoadBe64(r + 20));
    FUZZ_CHECK(x->add_or_swap_mask == LoadBe64(r + 28) && x->compare_data == LoadBe64(r + 36));
    FUZZ_CHECK(x->compare_mask == LoadBe64(r + 44));
  } else if (const auto* x = std::get_if<AtomicResponseHeader>(&v.header)) {
    FUZZ_CHECK(x->original_request_identifier == LoadBe32(r));
    FUZZ_CHECK(x->original_remote_data_value == LoadBe64(r + 4));
  } else if (const auto* x = std::get_if<FlushRequestHeader>(&v.header)) {
    FUZZ_CHECK(x->data_sink_stag == LoadBe32(r) && x->data_sink_length == LoadBe32(r + 4));
    FUZZ_CHECK(x->data_sink_tagged_offset == LoadBe64(r + 8) && x->flush_disposition_flags == LoadBe32(r + 16));
  } else if (const auto* x = std::get_if<VerifyRequestHeader>(&v.header)) {
    FUZZ_CHECK(x->data_sink_stag == LoadBe32(r) && x->data_sink_length == LoadBe32(r + 4));
    FUZZ_CHECK(x->data_sink_tagged_offset == LoadBe64(r + 8));
    FUZZ_CHECK(x->hash_value.data() == r + 16 && x->hash_value.size() == in.size() - v.ddp.payload_offset - 16);
  } else if (const auto* x = std::get_if<VerifyResponseHeader>(&v.header)) {
    FUZZ_CHECK(x->hash_value.data() == r && x->hash_value.size() == in.size() - v.ddp.payload_offset);
  } else if (const auto* x = std::get_if<AtomicWriteRequestHeader>(&v.header)) {
    FUZZ_CHECK(x->data_sink_stag == LoadBe32(r) && x->data_sink_length == LoadBe32(r + 4));
    FUZZ_CHECK(x->data_sink_tagged_offset == LoadBe64(r + 8) && x->data == LoadBe64(r + 16));
  } else if (const auto* x = std::get_if<TerminateHeader>(&v.header)) {
    // Layer(4) EType(4) | Error Code(8) | M D R | Reserved(13), RFC 5040 Figure 7.
    FUZZ_CHECK(x->code.layer == r[0] >> 4 && x->code.error_type == (r[0] & 0xF) && x->code.error_code == r[1]);
    FUZZ_CHECK(x->m == ((r[2] & 0x80) != 0) && x->d == ((r[2] & 0x40) != 0) && x->r == ((r[2] & 0x20) != 0));
    FUZZ_CHECK(x->reserved == (LoadBe16(r + 2) & 0x1FFF));
    if (x->has_segment_length) FUZZ_CHECK(x->ddp_segment_length == LoadBe16(r + 4));
  }
}

void CheckView(const RdmapMessageView& v, ByteSpan in, Profile p, const DdpSegmentView& ddp) {
  FUZZ_CHECK(v.ddp.header == ddp.header);
  FUZZ_CHECK(v.ctrl == DecodeRdmapControl(in[1], p));
  FUZZ_CHECK(EncodeRdmapControl(v.ctrl, p) == in[1]);
  FUZZ_CHECK(v.opcode_info == FindOpcode(v.ctrl.opcode, p));
  FUZZ_CHECK(v.opcode_known == (v.opcode_info != nullptr));
  FUZZ_CHECK(v.tagged_flag_matches == (v.opcode_known && v.opcode_info->tagged == ddp.header.tagged));
  FUZZ_CHECK(v.header_present == HeaderDue(ddp.header, v.opcode_info));
  FUZZ_CHECK(v.header_present == (v.header.index() != 0));
  // The ULP payload is the tail of the input.
  FUZZ_CHECK(v.ulp_payload.data() + v.ulp_payload.size() == in.data() + in.size());
  FUZZ_CHECK(v.ulp_payload_offset == static_cast<std::size_t>(v.ulp_payload.data() - in.data()));
  FUZZ_CHECK(v.ulp_payload_offset >= ddp.payload_offset);
  if (!v.header_present) FUZZ_CHECK(v.ulp_payload_offset == ddp.payload_offset);
  if (v.opcode_known) FUZZ_CHECK(static_cast<uint8_t>(v.opcode()) == v.ctrl.opcode);
  if (const auto* t = std::get_if<TerminateHeader>(&v.header)) {
    FUZZ_CHECK(t->encoded_length == v.ulp_payload_offset - ddp.payload_offset);
    FUZZ_CHECK(TerminateHeaderLength(*t) == t->encoded_length);
  }
}

// Decodes under one profile; returns the view's opcode row for the
// cross-profile check (nullptr when unknown or not decoded).
const OpcodeInfo* CheckProfile(ByteSpan in, Profile p, const Result<DdpSegmentView>& ddp) {
  auto r = DecodeRdmapSegment(in, p);
  auto shifted = DecodeRdmapSegment(in, p, kBase);
  FUZZ_CHECK(r.ok() == shifted.ok());
  if (!r.ok()) {
    const DecodeError& e = r.error();
    FUZZ_CHECK(e.kind == DecodeErrorKind::kTruncated && e.field != nullptr);
    FUZZ_CHECK(e.offset <= in.size());
    FUZZ_CHECK(SameError(shifted.error(), e.At(kBase)));
    if (!ddp.ok()) {
      FUZZ_CHECK(SameError(e, ddp.error()));
    } else {
      // Only an RDMAP header that is due can run out.
      FUZZ_CHECK(e.offset >= ddp->payload_offset);
      const OpcodeInfo* info = FindOpcode(DecodeRdmapControl(in[1], p).opcode, p);
      FUZZ_CHECK(HeaderDue(ddp->header, info));
      // ... and only when the octets are fewer than its fixed part needs.
      FUZZ_CHECK(ddp->payload.size() < info->header_length || info->header == HeaderKind::kTerminate);
    }
    return nullptr;
  }
  FUZZ_CHECK(ddp.ok());
  const RdmapMessageView& v = *r;
  CheckView(v, in, p, *ddp);
  CheckFieldOffsets(v, in);
  FUZZ_CHECK(shifted->ulp_payload_offset == v.ulp_payload_offset + kBase);
  FUZZ_CHECK(shifted->ddp.header_offset == kBase);

  // Byte-exact round trip and a stable re-decode.
  static Bytes out;
  out.clear();
  EncodeSegment(ToSegment(v), out);
  FUZZ_CHECK(SameBytes(out, in));
  auto again = DecodeRdmapSegment(out, p);
  FUZZ_CHECK(again.ok() && again->ctrl == v.ctrl && again->header_present == v.header_present &&
             again->ulp_payload_offset == v.ulp_payload_offset);
  return v.opcode_info;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteSpan in(data, size);
  const Result<DdpSegmentView> ddp = DecodeDdpSegment(in);
  if (ddp.ok()) {
    const DdpSegmentView& v = *ddp;
    FUZZ_CHECK(v.header_offset == 0 && v.payload_offset == v.header.HeaderLength());
    FUZZ_CHECK(v.payload.data() == in.data() + v.payload_offset && v.payload.size() == size - v.payload_offset);
    FUZZ_CHECK(v.header.ddp_version <= 3 && v.header.rsvd <= 0xF);
    if (v.header.tagged) {
      FUZZ_CHECK(v.header.invalidate_stag == 0 && v.header.queue_number == 0 && v.header.msn == 0 &&
                 v.header.message_offset == 0);
    } else {
      FUZZ_CHECK(v.header.stag == 0 && v.header.tagged_offset == 0);
    }
    FUZZ_CHECK(SameBytes(EncodeDdpSegment(v.header, v.payload), in));
  } else {
    FUZZ_CHECK(ddp.error().kind == DecodeErrorKind::kTruncated);
    FUZZ_CHECK(ddp.error().offset <= size && ddp.error().value == size - std::min(size, ddp.error().offset));
  }

  std::array<const OpcodeInfo*, 3> rows{};
  for (std::size_t i = 0; i < kProfiles.size(); ++i) rows[i] = CheckProfile(in, kProfiles[i], ddp);
  // Profiles are cumulative and rfc5040/rfc7306 read octet 1 the same way.
  if (rows[0] != nullptr) FUZZ_CHECK(rows[1] == rows[0]);
  return 0;
}
