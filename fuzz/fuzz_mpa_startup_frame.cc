// MPA Request/Reply Frame decoder (RFC 5044 §7.1.1, RFC 6581 §6/§9).
//
// The input is the frame as it arrives on the wire. Oracles:
//  - under every expected kind (Request, Reply, either) a decoded frame
//    re-encodes to exactly the octets it consumed, and it consumed
//    MpaStartupFrameLength() octets (= EncodedSize());
//  - the expected kind is honoured (a Request decoder never yields a Reply)
//    and "either" decodes exactly when one of the two does;
//  - the enhanced word is decoded exactly when S = 1 and Rev >= 2;
//  - a streaming caller that has one octet less than the frame needs gets
//    kTruncated, never a frame;
//  - errors are of the documented kinds, at offsets inside the input.
#include <cstddef>
#include <cstdint>

#include "fuzz/support.h"
#include "reference/wire/mpa.h"

namespace {

using namespace rdmapct::wire;
using rdmapct::fuzz::SameBytes;

bool SameFrame(const MpaStartupFrame& a, const MpaStartupFrame& b) {
  return a.is_reply == b.is_reply && a.marker_required == b.marker_required && a.crc_required == b.crc_required &&
         a.reject == b.reject && a.enhanced == b.enhanced && a.res == b.res && a.revision == b.revision &&
         a.enhanced_data == b.enhanced_data && a.private_data == b.private_data;
}

bool KeyOctetOk(ByteSpan data, std::size_t i, MpaFrameKind expect) {
  return (expect != MpaFrameKind::kReply && data[i] == kMpaRequestKey[i]) ||
         (expect != MpaFrameKind::kRequest && data[i] == kMpaReplyKey[i]);
}

// Each error is justified by the octets (RFC 5044 §7.1.1, RFC 6581 §6).
void CheckError(const DecodeError& e, ByteSpan data, const MpaFrameDecodeOptions& options) {
  const std::size_t key_checked = std::min(data.size(), kMpaKeySize);
  for (std::size_t i = 0; i < std::min<std::size_t>(e.offset, key_checked); ++i) {
    FUZZ_CHECK(KeyOctetOk(data, i, options.expect));  // nothing wrong before the error
  }
  switch (e.kind) {
    case DecodeErrorKind::kTruncated:
      FUZZ_CHECK(e.offset <= data.size());
      FUZZ_CHECK(e.value == data.size() - e.offset);
      FUZZ_CHECK(data.size() < MpaStartupFrameLength(data));
      break;
    case DecodeErrorKind::kBadKey:
      FUZZ_CHECK(e.offset < key_checked && !KeyOctetOk(data, e.offset, options.expect));
      FUZZ_CHECK(e.value == data[e.offset]);
      break;
    case DecodeErrorKind::kTooLong:
      FUZZ_CHECK(e.offset == 18 && data.size() >= kMpaStartupHeaderSize);
      FUZZ_CHECK(e.value == LoadBe16(data.data() + 18) && e.value > options.max_private_data);
      break;
    case DecodeErrorKind::kInvalidValue:
      FUZZ_CHECK(e.offset == 18 && data.size() >= kMpaStartupHeaderSize);
      FUZZ_CHECK(e.value == LoadBe16(data.data() + 18) && e.value < kMpaEnhancedDataSize);
      FUZZ_CHECK((data[16] & kMpaFlagS) && data[17] >= 2);
      break;
    default:
      FUZZ_CHECK(!"undocumented error kind");
  }
  FUZZ_CHECK(e.field != nullptr);
}

// Decodes under `options` and checks the round trip; returns whether it decoded.
bool DecodeAndCheck(ByteSpan data, const MpaFrameDecodeOptions& options) {
  auto r = DecodeMpaStartupFrame(data, options);
  if (!r.ok()) {
    CheckError(r.error(), data, options);
    return false;
  }
  const MpaStartupFrame& f = *r;
  if (options.expect == MpaFrameKind::kRequest) FUZZ_CHECK(!f.is_reply);
  if (options.expect == MpaFrameKind::kReply) FUZZ_CHECK(f.is_reply);
  FUZZ_CHECK(f.enhanced_data.has_value() == (f.enhanced && f.revision >= 2));
  FUZZ_CHECK(f.res <= kMpaResMask);

  const std::size_t consumed = MpaStartupFrameLength(data);
  FUZZ_CHECK(consumed <= data.size());
  FUZZ_CHECK(consumed - kMpaStartupHeaderSize <= options.max_private_data);
  FUZZ_CHECK(f.EncodedSize() == consumed);
  const Bytes encoded = EncodeMpaStartupFrame(f);
  FUZZ_CHECK(SameBytes(encoded, data.first(consumed)));

  // The re-encoded frame decodes to the same frame.
  auto again = DecodeMpaStartupFrame(encoded, options);
  FUZZ_CHECK(again.ok() && SameFrame(*again, f));

  // One octet short: a streaming caller must be told to wait.
  auto shorter = DecodeMpaStartupFrame(data.first(consumed - 1), options);
  FUZZ_CHECK(!shorter.ok() && shorter.error().kind == DecodeErrorKind::kTruncated);

  // Negotiation is a pure function of two frames; it must not trip on any.
  const MpaNegotiation n = NegotiateMpa(f, f);
  FUZZ_CHECK(n.rejected == f.reject);
  const IrdOrdOutcome o = NegotiateIrdOrd(f, f);
  FUZZ_CHECK(o.applies == f.enhanced_data.has_value());
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteSpan in(data, size);
  const bool request = DecodeAndCheck(in, {.expect = MpaFrameKind::kRequest});
  const bool reply = DecodeAndCheck(in, {.expect = MpaFrameKind::kReply});
  const bool either = DecodeAndCheck(in, {.expect = MpaFrameKind::kEither});
  FUZZ_CHECK(!(request && reply));
  FUZZ_CHECK(either == (request || reply));
  // An auditor may accept any PD_Length the field can hold; the round trip
  // must hold there too.
  const bool lenient = DecodeAndCheck(in, {.expect = MpaFrameKind::kEither, .max_private_data = 0xFFFF});
  if (either) FUZZ_CHECK(lenient);
  return 0;
}
