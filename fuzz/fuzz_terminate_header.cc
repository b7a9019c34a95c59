// Terminate header decoder (RFC 5040 §4.8, Figures 7-8; rdmap.h) and the
// Terminate code registry (RFC 6580 §3; terminate_codes.h).
//
// The input is the Terminate header as it follows the untagged DDP header
// (plus whatever trailing octets). Oracles, per the two documented forms:
//  - kBitDriven: presence follows M/D/R (the Segment Length with M or D),
//    the length is 4 + [2] + [14/18] + [28] and the input is shorter than
//    52 octets or exactly that long;
//  - kFixed: the input has at least 52 octets and a length other than the
//    bit-driven one; 52 octets consumed, every area present;
//  - either form: EncodeTerminateHeader reproduces the consumed octets
//    exactly, TerminateHeaderLength agrees, and the re-encoding decodes to
//    the same header (a 52-octet fixed encoding whose bits also describe 52
//    octets legitimately reads back as kBitDriven with the same fields);
//  - MakeTerminateHeader of the decoded parts, in both forms, round-trips
//    through encode/decode;
//  - IsRegistered/FindTerminateCode/Describe agree on the decoded code and
//    on the code with the four-bit fields taken from the input unmasked.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fuzz/support.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"

namespace {

using namespace rdmapct::wire;
using rdmapct::fuzz::SameBytes;

Bytes& Scratch() {
  static Bytes b;
  b.clear();
  return b;
}

void CheckRegistry(TerminateCode code) {
  const TerminateCodeEntry* e = FindTerminateCode(code);
  FUZZ_CHECK(IsRegistered(code) == (e != nullptr));
  const char* d = Describe(code);
  FUZZ_CHECK(d != nullptr);
  FUZZ_CHECK(e != nullptr ? d == e->description : std::strcmp(d, "Unassigned") == 0);
  if (e != nullptr) {
    FUZZ_CHECK(e->layer == code.layer && e->error_type == code.error_type);
    FUZZ_CHECK(e->any_code || e->error_code == code.error_code);
    // RFC 6580: only Layers 0x0-0x2 are registered.
    FUZZ_CHECK(code.layer <= 0x2);
  }
  FUZZ_CHECK(TerminateLayerName(code.layer) != nullptr);
}

// The header `h` re-encodes and re-decodes to itself (up to form, see above).
void CheckReencode(const TerminateHeader& h) {
  Bytes& enc = Scratch();
  EncodeTerminateHeader(h, enc);
  FUZZ_CHECK(enc.size() == TerminateHeaderLength(h));
  auto again = DecodeTerminateHeader(enc);
  FUZZ_CHECK(again.ok());
  TerminateHeader a = *again;
  if (h.form == TerminateForm::kFixed && a.form == TerminateForm::kBitDriven) {
    FUZZ_CHECK(enc.size() == kTerminateFixedLength && h.d && h.r && !h.terminated_ddp_header.tagged);
    a.form = TerminateForm::kFixed;
  }
  FUZZ_CHECK(a == h);
}

void CheckDecoded(const TerminateHeader& h, ByteSpan in) {
  FUZZ_CHECK(h.encoded_length >= kTerminateControlLength && h.encoded_length <= in.size());
  FUZZ_CHECK(TerminateHeaderLength(h) == h.encoded_length);
  const std::size_t ddp_len = h.terminated_ddp_header.HeaderLength();
  const std::size_t bit_len =
      kTerminateControlLength + ((h.m || h.d) ? 2 : 0) + (h.d ? ddp_len : 0) + (h.r ? kTerminatedRdmaHeaderLength : 0);
  if (h.form == TerminateForm::kBitDriven) {
    FUZZ_CHECK(h.has_segment_length == (h.m || h.d) && h.has_ddp_header == h.d && h.has_rdma_header == h.r);
    FUZZ_CHECK(h.encoded_length == bit_len);
    FUZZ_CHECK(in.size() < kTerminateFixedLength || in.size() == bit_len);
    FUZZ_CHECK(h.fixed_ddp_area_tail == 0);
  } else {
    FUZZ_CHECK(h.has_segment_length && h.has_ddp_header && h.has_rdma_header);
    FUZZ_CHECK(h.encoded_length == kTerminateFixedLength && in.size() >= kTerminateFixedLength);
    // The bit-driven reading, with the T bit of the area, describes a different length.
    const bool tagged_area = (in[6] & 0x80) != 0;
    const std::size_t area_bit_len =
        kTerminateControlLength + ((h.m || h.d) ? 2 : 0) + (h.d ? (tagged_area ? 14 : 18) : 0) + (h.r ? 28 : 0);
    FUZZ_CHECK(in.size() != area_bit_len);
  }
  FUZZ_CHECK(h.reserved <= 0x1FFF && h.code.layer <= 0xF && h.code.error_type <= 0xF);
  // Fields where RFC 5040 Figures 7-8 put them (not only a round trip).
  FUZZ_CHECK(h.code.layer == in[0] >> 4 && h.code.error_type == (in[0] & 0xF) && h.code.error_code == in[1]);
  FUZZ_CHECK(h.m == ((in[2] & 0x80) != 0) && h.d == ((in[2] & 0x40) != 0) && h.r == ((in[2] & 0x20) != 0));
  const bool fixed = h.form == TerminateForm::kFixed;
  if (h.has_segment_length) FUZZ_CHECK(h.ddp_segment_length == LoadBe16(in.data() + 4));
  if (h.has_ddp_header) {
    const uint8_t* e = in.data() + 6;
    const DdpSegmentHeader& t = h.terminated_ddp_header;
    FUZZ_CHECK(EncodeDdpControl(t.tagged, t.last, t.rsvd, t.ddp_version) == e[0] && t.rsvd_ulp0 == e[1]);
    FUZZ_CHECK(t.tagged ? t.stag == LoadBe32(e + 2) && t.tagged_offset == LoadBe64(e + 6)
                        : t.queue_number == LoadBe32(e + 6) && t.msn == LoadBe32(e + 10) &&
                              t.message_offset == LoadBe32(e + 14));
    if (fixed && t.tagged) FUZZ_CHECK(h.fixed_ddp_area_tail == LoadBe32(e + 14));
  }
  if (h.has_rdma_header) {
    const std::size_t at =
        fixed ? 24 : kTerminateControlLength + (h.has_segment_length ? 2 : 0) + (h.has_ddp_header ? ddp_len : 0);
    const ReadRequestHeader& x = h.terminated_rdma_header;
    FUZZ_CHECK(x.sink_stag == LoadBe32(in.data() + at) && x.source_tagged_offset == LoadBe64(in.data() + at + 20));
    FUZZ_CHECK(x.read_message_size == LoadBe32(in.data() + at + 12));
  }

  Bytes& enc = Scratch();
  EncodeTerminateHeader(h, enc);
  FUZZ_CHECK(SameBytes(enc, in.first(h.encoded_length)));
  CheckReencode(h);

  // Consistent headers built from the decoded parts, in both forms.
  for (TerminateForm form : {TerminateForm::kBitDriven, TerminateForm::kFixed}) {
    const TerminateHeader made =
        MakeTerminateHeader(h.code, h.has_ddp_header ? &h.terminated_ddp_header : nullptr, h.ddp_segment_length,
                            h.has_rdma_header ? &h.terminated_rdma_header : nullptr, form);
    FUZZ_CHECK(made.encoded_length == TerminateHeaderLength(made));
    CheckReencode(made);
  }
  CheckRegistry(h.code);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteSpan in(data, size);
  auto r = DecodeTerminateHeader(in);
  if (r.ok()) {
    CheckDecoded(*r, in);
  } else {
    const DecodeError& e = r.error();
    FUZZ_CHECK(e.kind == DecodeErrorKind::kTruncated && e.field != nullptr);
    FUZZ_CHECK(e.offset <= size && e.value == size - e.offset);
    auto shifted = DecodeTerminateHeader(in, 77);
    FUZZ_CHECK(!shifted.ok() && rdmapct::fuzz::SameError(shifted.error(), e.At(77)));
  }
  // The registry takes raw octets too (a model may build any triple).
  if (size >= 2) {
    CheckRegistry(TerminateCode{static_cast<uint8_t>(data[0] >> 4), static_cast<uint8_t>(data[0] & 0xF), data[1]});
    CheckRegistry(TerminateCode{data[0], size >= 3 ? data[2] : uint8_t{0}, data[1]});
  }
  return 0;
}
