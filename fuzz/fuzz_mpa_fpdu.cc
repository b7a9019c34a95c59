// Single-FPDU decoder without Markers (RFC 5044 §4.1, §4.4; mpa_fpdu.h) and
// the CRC-32C it relies on (crc32c.h).
//
// Octet 0: 0x01 check CRCs; octet 1: where to split the rest for the CRC
// combination checks; the rest is the FPDU (and whatever follows it).
// Oracles:
//  - DecodeFpdu agrees with the streaming MpaDeframer on the first FPDU
//    (same ULPDU, CRC field, computed CRC, error kind/offset/value);
//  - a decoded FPDU is ULPDU_Length | ULPDU | PAD | CRC exactly, and
//    AppendFpdu of its ULPDU reproduces it when PAD is zero and the CRC is
//    the one a sender computes;
//  - CRC-32C: the dispatching, portable and hardware paths agree, and
//    Crc32cExtend / Crc32cCombine over any split equal the whole;
//  - a single flipped bit in a good FPDU is always caught (CRC-32C detects
//    every one-bit error).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fuzz/support.h"
#include "reference/wire/crc32c.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/mpa_fpdu.h"

namespace {

using namespace rdmapct::wire;
using rdmapct::fuzz::InputSplitter;
using rdmapct::fuzz::SameBytes;
using rdmapct::fuzz::SameError;

void CheckCrc(ByteSpan data, std::size_t split) {
  const uint32_t whole = Crc32c(data);
  FUZZ_CHECK(Crc32cPortable(0, data) == whole);
  FUZZ_CHECK(Crc32cHardware(0, data) == whole);
  FUZZ_CHECK(Crc32cExtend(0, data) == whole);
  const ByteSpan a = data.first(split), b = data.subspan(split);
  const uint32_t ca = Crc32c(a);
  FUZZ_CHECK(Crc32cExtend(ca, b) == whole);
  FUZZ_CHECK(Crc32cPortable(ca, b) == whole && Crc32cHardware(ca, b) == whole);
  FUZZ_CHECK(Crc32cCombine(ca, Crc32c(b), b.size()) == whole);
}

// The first FPDU as the streaming deframer sees it.
struct Streamed {
  std::optional<MpaFpdu> fpdu;
  Bytes ulpdu;
  std::optional<DecodeError> error;
};

Streamed Deframe(ByteSpan data, bool crc) {
  MpaDeframer d({.crc_enabled = crc});
  Streamed s;
  Status st = d.Feed(data, [&s](const MpaFpdu& f) {
    if (s.fpdu) return;
    s.fpdu = f;
    s.ulpdu.assign(f.ulpdu.begin(), f.ulpdu.end());
  });
  if (!st.ok()) s.error = st.error();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  InputSplitter in(data, size);
  const bool crc = in.Bool();
  const uint8_t split_octet = in.U8();
  const ByteSpan fpdu = in.Rest();
  CheckCrc(fpdu, fpdu.empty() ? 0 : split_octet % (fpdu.size() + 1));

  auto r = DecodeFpdu(fpdu, crc);
  // Only the first FPDU is compared: octets after it are another FPDU.
  const Streamed s = Deframe(r.ok() ? fpdu.first(r->size) : fpdu, crc);
  if (!r.ok()) {
    const DecodeError& e = r.error();
    FUZZ_CHECK(e.offset <= fpdu.size());
    if (e.kind == DecodeErrorKind::kTruncated) {
      FUZZ_CHECK(!s.fpdu && !s.error);  // the deframer waits for more
    } else {
      FUZZ_CHECK(e.kind == DecodeErrorKind::kCrcMismatch && crc);
      FUZZ_CHECK(!s.fpdu && s.error && SameError(*s.error, e));
    }
    return 0;
  }
  const FpduView& v = *r;
  FUZZ_CHECK(v.size == FpduLength(v.ulpdu_length) && v.size <= fpdu.size());
  FUZZ_CHECK(v.ulpdu.size() == v.ulpdu_length && v.ulpdu.data() == fpdu.data() + kUlpduLengthSize);
  FUZZ_CHECK(v.pad.size() == FpduPadLength(v.ulpdu_length) && v.pad.data() == v.ulpdu.data() + v.ulpdu.size());
  FUZZ_CHECK(v.received_crc == LoadCrc32c(fpdu.data() + v.size - kCrc32cSize));
  FUZZ_CHECK(v.size % 4 == 0);
  FUZZ_CHECK(s.fpdu.has_value() && !s.error);
  FUZZ_CHECK(SameBytes(s.ulpdu, v.ulpdu) && s.fpdu->received_crc == v.received_crc);
  FUZZ_CHECK(s.fpdu->computed_crc == v.computed_crc && s.fpdu->wire_length == v.size);

  bool zero_pad = true;
  for (uint8_t b : v.pad) zero_pad = zero_pad && b == 0;
  if (zero_pad) {
    // Any CRC field is reproduced by XORing the difference to the sender's CRC.
    const uint32_t sender_crc = Crc32c(fpdu.first(v.size - kCrc32cSize));
    static Bytes enc;
    enc.clear();
    AppendFpdu(enc, v.ulpdu, {.crc_enabled = true, .crc_xor = v.received_crc ^ sender_crc});
    FUZZ_CHECK(SameBytes(enc, fpdu.first(v.size)));
  }
  // A good FPDU with one bit flipped must fail the CRC check.
  if (crc && v.size <= 4096) {
    static Bytes flipped;
    flipped.assign(fpdu.begin(), fpdu.begin() + static_cast<std::ptrdiff_t>(v.size));
    const std::size_t bit = (std::size_t{split_octet} * 131) % (v.size * 8);
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    auto bad = DecodeFpdu(flipped, true);
    // Flipping a ULPDU_Length bit changes the framing instead (truncation
    // or a shorter FPDU whose CRC field is other octets); still not Ok with
    // the same ULPDU.
    if (bit >= 16) {
      FUZZ_CHECK(!bad.ok() && bad.error().kind == DecodeErrorKind::kCrcMismatch);
    } else {
      FUZZ_CHECK(!bad.ok() || !SameBytes(bad->ulpdu, v.ulpdu));
    }
  }
  return 0;
}
