// Test-ULP convention decoders (docs/target-convention.md; ulp_convention.h and,
// for 1.1, ulp_convention_commands.h):
// the Advertisement a target puts in its MPA Reply Private Data and the
// Event Records it sends come from the target under test; the Suite Request
// is what a target reads from the suite's MPA Request, with its 1.1
// extension; a Command Record is what a target's ULP executes; the Connect
// Directive is what a target as MPA Initiator reads from a rejecting Reply
// (ulp_convention_directive.h). All are untrusted.
//
// Every decoder runs on the whole input (the magics keep them apart), and,
// when the input is an MPA Reply, on its Private Data as the suite does.
// Oracles:
//  - a version 1.0 or 1.1 advertisement / record re-encodes to exactly the
//    input (Command Records, the Suite Request extension and the Commands
//    block too);
//  - a newer-minor one (which may carry octets the 1.0 encoder does not
//    write) re-encodes to something that decodes to the same value;
//  - DecodeAdvertisementFromPrivateData without the RFC 6581 word is
//    DecodeAdvertisement; with it, errors are reported against the
//    Private Data (offset >= 4);
//  - region selection and the full-suite check never return a region that
//    is not in the advertisement or too short;
//  - errors lie inside the input.
#include <cstddef>
#include <cstdint>

#include "fuzz/support.h"
#include "reference/wire/mpa.h"
#include "reference/wire/ulp_convention.h"
#include "reference/wire/ulp_convention_directive.h"

namespace {

using namespace rdmapct::wire;
using rdmapct::fuzz::SameBytes;
using rdmapct::fuzz::SameError;

void CheckErrorInside(const DecodeError& e, std::size_t base, std::size_t size) {
  FUZZ_CHECK(e.field != nullptr);
  FUZZ_CHECK(e.offset >= base && e.offset <= base + size);
}

bool IsIn(const Advertisement& adv, const AdvertisedRegion* r) {
  if (r == nullptr) return true;
  return r >= adv.regions.data() && r < adv.regions.data() + adv.regions.size();
}

void CheckUses(const Advertisement& adv, uint32_t min_length) {
  for (std::size_t i = 0; i < kRegionRoleCount; ++i) {
    const auto role = static_cast<RegionRole>(i);
    const AdvertisedRegion* r = SelectRegion(adv, role, min_length);
    FUZZ_CHECK(IsIn(adv, r));
    if (r != nullptr) FUZZ_CHECK(r->length >= min_length);
    FUZZ_CHECK(ParseRegionRole(RegionRoleName(role)) == role);
  }
  if (!adv.regions.empty()) {
    const AdvertisedRegion& r0 = adv.regions.front();
    FUZZ_CHECK(IsIn(adv, FindReadableView(adv, r0.memory_object, r0.object_offset, min_length)));
    const Bytes pattern = RegionPattern(r0, r0.base_tagged_offset, 16);
    FUZZ_CHECK(pattern.size() == 16 && pattern[0] == PatternByte(r0.memory_object, r0.object_offset));
  }
  (void)MissingForFullSuite(adv, true, true);
}

void CheckAdvertisement(ByteSpan in) {
  auto r = DecodeAdvertisement(in);
  auto plain = DecodeAdvertisementFromPrivateData(in, false);
  FUZZ_CHECK(r.ok() == plain.ok());
  if (!r.ok()) {
    CheckErrorInside(r.error(), 0, in.size());
    FUZZ_CHECK(SameError(r.error(), plain.error()));
  } else {
    const Advertisement& adv = *r;
    FUZZ_CHECK(*plain == adv);
    FUZZ_CHECK(HasAdvertisementMagic(in));
    FUZZ_CHECK(adv.major_version == kUlpConventionMajorVersion);
    FUZZ_CHECK(in.size() <= kAdvertisementMaxLength);
    FUZZ_CHECK(!(adv.flags & kFlagPreviousOutcome));  // carried by `previous`
    static Bytes enc;
    enc.clear();
    const Status st = EncodeAdvertisement(adv, enc);
    if (adv.minor_version <= kUlpConventionKnownMinorVersion) {
      FUZZ_CHECK(st.ok() && SameBytes(enc, in));
    }
    if (st.ok()) {
      auto again = DecodeAdvertisement(enc);
      FUZZ_CHECK(again.ok() && *again == adv);
    }
    CheckUses(adv, 0);
    CheckUses(adv, 64);
  }
  auto with_word = DecodeAdvertisementFromPrivateData(in, true);
  if (!with_word.ok()) {
    CheckErrorInside(with_word.error(), 0, in.size());
    if (in.size() >= kRfc6581WordLength) FUZZ_CHECK(with_word.error().offset >= kRfc6581WordLength);
  }
}

void CheckEventRecord(ByteSpan in) {
  auto r = DecodeEventRecord(in);
  if (!r.ok()) {
    CheckErrorInside(r.error(), 0, in.size());
    auto shifted = DecodeEventRecord(in, 9);
    FUZZ_CHECK(!shifted.ok() && SameError(shifted.error(), r.error().At(9)));
    return;
  }
  const EventRecord& ev = *r;
  FUZZ_CHECK(HasEventRecordMagic(in));
  FUZZ_CHECK(ev.major_version == kUlpConventionMajorVersion);
  FUZZ_CHECK(ev.prefix.size() <= in.size() - kEventRecordHeaderLength);
  static Bytes enc;
  enc.clear();
  EncodeEventRecord(ev, enc);
  if (ev.minor_version <= kUlpConventionKnownMinorVersion) {
    FUZZ_CHECK(SameBytes(enc, in));
    FUZZ_CHECK(ev.prefix.size() <= kEventPrefixMax &&
               ev.prefix.size() == std::min<std::size_t>(ev.length, kEventPrefixMax));
  }
  auto again = DecodeEventRecord(enc);
  FUZZ_CHECK(again.ok() && *again == ev);
}

// Suite Request (docs §2.4): a target decodes it from the suite's MPA
// Request; 1.0 requests round-trip exactly, newer minors to an equal value.
void CheckSuiteRequest(ByteSpan in) {
  auto r = DecodeSuiteRequest(in);
  if (!r.ok()) {
    CheckErrorInside(r.error(), 0, in.size());
    return;
  }
  FUZZ_CHECK(in.size() >= kSuiteRequestLength && r->major_version == kUlpConventionMajorVersion);
  static Bytes enc;
  enc.clear();
  EncodeSuiteRequest(*r, enc);
  FUZZ_CHECK(enc.size() == kSuiteRequestLength);
  if (r->minor_version <= kUlpConventionKnownMinorVersion) FUZZ_CHECK(SameBytes(enc, in.first(kSuiteRequestLength)));
  auto again = DecodeSuiteRequest(enc);
  FUZZ_CHECK(again.ok() && *again == *r);
  // 1.1: the extension after the 12 octets, as a target reads it.
  if (r->minor_version < 1) return;
  auto ext = DecodeSuiteRequestExtension(in.subspan(kSuiteRequestLength), kSuiteRequestLength);
  if (!ext.ok()) {
    CheckErrorInside(ext.error(), kSuiteRequestLength, in.size() - kSuiteRequestLength);
    return;
  }
  enc.clear();
  EncodeSuiteRequestExtension(*ext, enc);
  auto ext_again = DecodeSuiteRequestExtension(enc);
  FUZZ_CHECK(ext_again.ok() && *ext_again == *ext);
}

// Command Records (docs §7.2): 1.1 records re-encode to the input; every
// decoded command has a known type (1.1) and zero in the fields it does not use.
void CheckCommandRecord(ByteSpan in) {
  auto r = DecodeCommandRecord(in);
  if (!r.ok()) {
    CheckErrorInside(r.error(), 0, in.size());
    auto shifted = DecodeCommandRecord(in, 5);
    FUZZ_CHECK(!shifted.ok() && SameError(shifted.error(), r.error().At(5)));
    return;
  }
  FUZZ_CHECK(HasCommandRecordMagic(in) && !r->commands.empty());
  static Bytes enc;
  enc.clear();
  FUZZ_CHECK(EncodeCommandRecord(*r, enc).ok());
  if (r->minor_version == kUlpConventionKnownMinorVersion) {
    FUZZ_CHECK(SameBytes(enc, in));
    for (const Command& c : r->commands) FUZZ_CHECK(CommandTypeName(c.type) != "unknown command");
  }
  auto again = DecodeCommandRecord(enc);
  FUZZ_CHECK(again.ok() && *again == *r);
}

// The Commands block (docs §7.4) on its own.
void CheckCommandsBlock(ByteSpan in) {
  auto r = DecodeCommandsBlock(in);
  if (!r.ok()) {
    CheckErrorInside(r.error(), 0, in.size());
    return;
  }
  static Bytes enc;
  enc.clear();
  EncodeCommandsBlock(*r, enc);
  FUZZ_CHECK(SameBytes(enc, in.first(kCommandsBlockLength)));
}

}  // namespace

// A 1.0 Directive re-encodes to its 16 octets; any Directive round-trips.
void CheckConnectDirective(ByteSpan in) {
  auto d = DecodeConnectDirective(in);
  if (!d.ok()) {
    CheckErrorInside(d.error(), 0, in.size());
    return;
  }
  FUZZ_CHECK(in.size() >= kDirectiveLength && d->ird <= kIrdOrdMask && d->ord <= kIrdOrdMask);
  static Bytes enc;
  enc.clear();
  EncodeConnectDirective(*d, enc);
  if (d->minor_version == 0) FUZZ_CHECK(SameBytes(enc, in.first(kDirectiveLength)));
  auto again = DecodeConnectDirective(enc);
  FUZZ_CHECK(again.ok() && *again == *d);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteSpan in(data, size);
  CheckAdvertisement(in);
  CheckEventRecord(in);
  CheckSuiteRequest(in);
  CheckConnectDirective(in);
  CheckCommandRecord(in);
  CheckCommandsBlock(in);
  // As the suite reads a target's Reply: the frame, then its Private Data.
  auto frame = DecodeMpaStartupFrame(in, {.expect = MpaFrameKind::kReply});
  if (frame.ok()) CheckConnectDirective(frame->private_data);
  if (frame.ok()) {
    auto adv = DecodeAdvertisementFromPrivateData(frame->private_data, false);
    if (!adv.ok()) CheckErrorInside(adv.error(), 0, frame->private_data.size());
    if (adv.ok()) CheckUses(*adv, 0);
  }
  return 0;
}
