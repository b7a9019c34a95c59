#include "reference/wire/ulp_convention.h"

#include <algorithm>
#include <limits>

#include "reference/wire/crc32c.h"
#include "reference/wire/field_table.h"

namespace rdmapct::wire {
namespace {

// The tables below are the byte-layout tables of docs/target-convention.md
// (field_table.h), so code and document name the same fields at the same
// offsets.

// Advertisement header (docs §3.1).
constexpr LayoutField kAdvMagic{"Advertisement Magic", 0, 4};
constexpr LayoutField kAdvMajor{"Major Version", 4, 1};
constexpr LayoutField kAdvMinor{"Minor Version", 5, 1};
constexpr LayoutField kAdvFlags{"Flags", 6, 2};
constexpr LayoutField kAdvIrd{"IRD", 8, 2};
constexpr LayoutField kAdvOrd{"ORD", 10, 2};
constexpr LayoutField kAdvBufferCount{"Receive Buffer Count", 12, 2};
constexpr LayoutField kAdvRegionCount{"Region Count", 14, 1};
constexpr LayoutField kAdvEntryLength{"Region Entry Length", 15, 1};
constexpr LayoutField kAdvBufferSize{"Receive Buffer Size", 16, 4};
constexpr LayoutField kAdvSerial{"Connection Serial", 20, 4};
constexpr std::array<LayoutField, 11> kAdvHeaderFields{
    kAdvMagic,       kAdvMajor,       kAdvMinor,       kAdvFlags,      kAdvIrd,   kAdvOrd,
    kAdvBufferCount, kAdvRegionCount, kAdvEntryLength, kAdvBufferSize, kAdvSerial};

// Region entry (docs §3.2).
constexpr LayoutField kRegStag{"STag", 0, 4};
constexpr LayoutField kRegBaseTo{"Base Tagged Offset", 4, 8};
constexpr LayoutField kRegLength{"Length", 12, 4};
constexpr LayoutField kRegAccess{"Access", 16, 1};
constexpr LayoutField kRegAttributes{"Attributes", 17, 1};
constexpr LayoutField kRegObject{"Memory Object", 18, 2};
constexpr LayoutField kRegObjectOffset{"Object Offset", 20, 4};
constexpr std::array<LayoutField, 7> kRegionFields{kRegStag,       kRegBaseTo, kRegLength,      kRegAccess,
                                                   kRegAttributes, kRegObject, kRegObjectOffset};

// Previous-connection outcome block (docs §3.4).
constexpr LayoutField kOutSerial{"Outcome Connection Serial", 0, 4};
constexpr LayoutField kOutOutcome{"Outcome", 4, 1};
constexpr LayoutField kOutFlags{"Outcome Flags", 5, 1};
constexpr LayoutField kOutLayerType{"Outcome Layer/EType", 6, 1};
constexpr LayoutField kOutCode{"Outcome Error Code", 7, 1};
constexpr LayoutField kOutEvents{"Events Sent", 8, 2};
constexpr LayoutField kOutErrors{"Completion Errors", 10, 2};
constexpr std::array<LayoutField, 7> kOutcomeFields{kOutSerial, kOutOutcome, kOutFlags, kOutLayerType,
                                                    kOutCode,   kOutEvents,  kOutErrors};

// Event Record (docs §6.2).
constexpr LayoutField kEvMagic{"Event Magic", 0, 4};
constexpr LayoutField kEvMajor{"Major Version", 4, 1};
constexpr LayoutField kEvMinor{"Minor Version", 5, 1};
constexpr LayoutField kEvType{"Event Type", 6, 1};
constexpr LayoutField kEvFlags{"Event Flags", 7, 1};
constexpr LayoutField kEvSequence{"Sequence Number", 8, 4};
constexpr LayoutField kEvLength{"Delivered Length", 12, 4};
constexpr LayoutField kEvStag{"Invalidated STag", 16, 4};
constexpr LayoutField kEvValue{"Value", 20, 8};
constexpr LayoutField kEvDigest{"Digest", 28, 4};
constexpr LayoutField kEvPrefixLength{"Prefix Length", 32, 2};
constexpr LayoutField kEvReserved{"Reserved", 34, 2};
constexpr std::array<LayoutField, 12> kEventFields{kEvMagic, kEvMajor,    kEvMinor,        kEvType,
                                                   kEvFlags, kEvSequence, kEvLength,       kEvStag,
                                                   kEvValue, kEvDigest,   kEvPrefixLength, kEvReserved};

// Suite Request (docs §2.4).
constexpr LayoutField kReqMagic{"Request Magic", 0, 4};
constexpr LayoutField kReqMajor{"Major Version", 4, 1};
constexpr LayoutField kReqMinor{"Minor Version", 5, 1};
constexpr LayoutField kReqFlags{"Request Flags", 6, 2};
constexpr LayoutField kReqCaseHash{"Case Hash", 8, 4};
constexpr std::array<LayoutField, 5> kRequestFields{kReqMagic, kReqMajor, kReqMinor, kReqFlags, kReqCaseHash};

// True when the TO range [base, base + length) does not fit in 64 bits.
bool TaggedRangeWraps(uint64_t base, uint32_t length) {
  return length != 0 && base > std::numeric_limits<uint64_t>::max() - (length - 1);
}

std::size_t AdvertisementLength(const Advertisement& adv) {
  return kAdvertisementHeaderLength + adv.regions.size() * adv.region_entry_length +
         (adv.previous ? kPreviousOutcomeLength : 0) + (adv.commands ? kCommandsBlockLength : 0);
}

// Checks and decodes one region entry at `start`.
Result<AdvertisedRegion> DecodeRegion(const FieldBlock& b, bool newer_minor, uint8_t known_attributes) {
  AdvertisedRegion reg;
  reg.stag = static_cast<uint32_t>(b.Get(kRegStag));
  reg.base_tagged_offset = b.Get(kRegBaseTo);
  reg.length = static_cast<uint32_t>(b.Get(kRegLength));
  reg.access = static_cast<uint8_t>(b.Get(kRegAccess));
  reg.attributes = static_cast<uint8_t>(b.Get(kRegAttributes));
  reg.memory_object = static_cast<uint16_t>(b.Get(kRegObject));
  reg.object_offset = static_cast<uint32_t>(b.Get(kRegObjectOffset));
  if (TaggedRangeWraps(reg.base_tagged_offset, reg.length)) {
    return b.Error(DecodeErrorKind::kInvalidValue, kRegLength, reg.length);
  }
  if (!newer_minor && (reg.access & ~kKnownAccessBits) != 0) {
    return b.Error(DecodeErrorKind::kReservedNonZero, kRegAccess, reg.access);
  }
  if (!newer_minor && (reg.attributes & ~known_attributes) != 0) {
    return b.Error(DecodeErrorKind::kReservedNonZero, kRegAttributes, reg.attributes);
  }
  // An STag is either foreign (valid elsewhere) or deregistered (valid
  // nowhere); both at once would make the expected Terminate ambiguous.
  if ((reg.attributes & kAttrForeign) && (reg.attributes & kAttrDeregistered)) {
    return b.Error(DecodeErrorKind::kInvalidValue, kRegAttributes, reg.attributes);
  }
  // REQ R5040-8.1.1-07: a shared STag is usable (§12) and no remote peer may
  // invalidate it, so it is neither foreign, deregistered nor invalidatable.
  if ((known_attributes & kAttrShared) && (reg.attributes & kAttrShared) &&
      (reg.attributes & (kAttrForeign | kAttrDeregistered | kAttrInvalidatable))) {
    return b.Error(DecodeErrorKind::kInvalidValue, kRegAttributes, reg.attributes);
  }
  return reg;
}

Result<PreviousOutcome> DecodeOutcome(const FieldBlock& b, bool newer_minor) {
  PreviousOutcome out;
  out.connection_serial = static_cast<uint32_t>(b.Get(kOutSerial));
  uint64_t outcome = b.Get(kOutOutcome);
  if (outcome > kMaxConnectionOutcome && !newer_minor) {
    return b.Error(DecodeErrorKind::kInvalidValue, kOutOutcome, outcome);
  }
  out.outcome = static_cast<ConnectionOutcome>(outcome);
  out.flags = static_cast<uint8_t>(b.Get(kOutFlags));
  if (!newer_minor && (out.flags & ~kOutcomeCodeKnown) != 0) {
    return b.Error(DecodeErrorKind::kReservedNonZero, kOutFlags, out.flags);
  }
  uint8_t layer_type = static_cast<uint8_t>(b.Get(kOutLayerType));
  out.layer = layer_type >> 4;
  out.error_type = layer_type & 0xF;
  out.error_code = static_cast<uint8_t>(b.Get(kOutCode));
  // A Terminate triple only exists for the two Terminate outcomes.
  bool terminate =
      out.outcome == ConnectionOutcome::kTerminateSent || out.outcome == ConnectionOutcome::kTerminateReceived;
  // (An outcome only a newer minor version defines may carry a triple.)
  if ((out.flags & kOutcomeCodeKnown) && !terminate && outcome <= kMaxConnectionOutcome) {
    return b.Error(DecodeErrorKind::kInvalidValue, kOutFlags, out.flags);
  }
  if (!(out.flags & kOutcomeCodeKnown) && (layer_type != 0 || out.error_code != 0)) {
    return b.Error(DecodeErrorKind::kInvalidValue, kOutLayerType, layer_type);
  }
  out.events_sent = static_cast<uint16_t>(b.Get(kOutEvents));
  out.completion_errors = static_cast<uint16_t>(b.Get(kOutErrors));
  return out;
}

// The Attributes bits `adv`'s version defines: 1.3 adds kAttrShared, which
// only means something when the target serves concurrent connections (§12).
uint8_t KnownAttributes(const Advertisement& adv) {
  const bool shared = adv.minor_version >= kSharedRegionsMinorVersion && (adv.flags & kFlagConcurrentConnections) != 0;
  return shared ? kKnownAttributeBits13 : kKnownAttributeBits;
}

// Fixed header of the advertisement: everything up to the regions.
Result<Advertisement> DecodeAdvertisementHeader(const FieldBlock& h) {
  Advertisement adv;
  adv.major_version = static_cast<uint8_t>(h.Get(kAdvMajor));
  if (adv.major_version != kUlpConventionMajorVersion) {
    return h.Error(DecodeErrorKind::kInvalidValue, kAdvMajor, adv.major_version);
  }
  adv.minor_version = static_cast<uint8_t>(h.Get(kAdvMinor));
  const bool newer = adv.minor_version > kUlpConventionKnownMinorVersion;
  adv.flags = static_cast<uint16_t>(h.Get(kAdvFlags));
  // Bits 1.0 calls reserved: 1.1 defines kFlagCommands, 1.2 the concurrency bit (§11).
  const uint16_t known = adv.minor_version >= kConcurrentMinorVersion ? kKnownAdvertisementFlags12
                         : adv.minor_version >= 1                     ? kKnownAdvertisementFlags11
                                                                      : kKnownAdvertisementFlags;
  if (!newer && (adv.flags & ~known) != 0) {
    return h.Error(DecodeErrorKind::kReservedNonZero, kAdvFlags, adv.flags);
  }
  adv.ird = static_cast<uint16_t>(h.Get(kAdvIrd));
  adv.ord = static_cast<uint16_t>(h.Get(kAdvOrd));
  adv.receive_buffer_count = static_cast<uint16_t>(h.Get(kAdvBufferCount));
  adv.region_entry_length = static_cast<uint8_t>(h.Get(kAdvEntryLength));
  if (adv.region_entry_length < kRegionEntryLength || (!newer && adv.region_entry_length != kRegionEntryLength)) {
    return h.Error(DecodeErrorKind::kInvalidValue, kAdvEntryLength, adv.region_entry_length);
  }
  adv.receive_buffer_size = static_cast<uint32_t>(h.Get(kAdvBufferSize));
  adv.connection_serial = static_cast<uint32_t>(h.Get(kAdvSerial));
  return adv;
}

}  // namespace

// ---------------------------------------------------------------------------
// Suite Request

void EncodeSuiteRequest(const SuiteRequest& req, Bytes& out) {
  const std::size_t start = out.size();
  out.resize(start + kSuiteRequestLength, 0);
  std::copy(kSuiteRequestMagic.begin(), kSuiteRequestMagic.end(), out.begin() + start);
  StoreField(out, start, kReqMajor, req.major_version);
  StoreField(out, start, kReqMinor, req.minor_version);
  StoreField(out, start, kReqFlags, req.flags);
  StoreField(out, start, kReqCaseHash, req.case_hash);
}

Result<SuiteRequest> DecodeSuiteRequest(ByteSpan data, std::size_t base_offset) {
  FieldBlock b(data, 0, base_offset);
  if (!MagicMatches(data, kSuiteRequestMagic)) {
    if (data.size() < kReqMagic.width) return *b.FirstTruncated(kRequestFields);
    return b.Error(DecodeErrorKind::kInvalidValue, kReqMagic, LoadBe32(data.data()));
  }
  if (auto trunc = b.FirstTruncated(kRequestFields)) return *trunc;
  SuiteRequest req;
  req.major_version = static_cast<uint8_t>(b.Get(kReqMajor));
  if (req.major_version != kUlpConventionMajorVersion) {
    return b.Error(DecodeErrorKind::kInvalidValue, kReqMajor, req.major_version);
  }
  req.minor_version = static_cast<uint8_t>(b.Get(kReqMinor));
  req.flags = static_cast<uint16_t>(b.Get(kReqFlags));
  if (req.minor_version <= kUlpConventionKnownMinorVersion && (req.flags & ~kKnownRequestFlags) != 0) {
    return b.Error(DecodeErrorKind::kReservedNonZero, kReqFlags, req.flags);
  }
  req.case_hash = static_cast<uint32_t>(b.Get(kReqCaseHash));
  return req;
}

uint32_t CaseHash(std::string_view case_id) {
  return Crc32c(ByteSpan(reinterpret_cast<const uint8_t*>(case_id.data()), case_id.size()));
}

// ---------------------------------------------------------------------------
// Advertisement

Status EncodeAdvertisement(const Advertisement& adv, Bytes& out) {
  if (adv.region_entry_length < kRegionEntryLength) {
    return DecodeError{DecodeErrorKind::kInvalidValue, kAdvEntryLength.name, kAdvEntryLength.offset,
                       adv.region_entry_length};
  }
  if (adv.commands && adv.minor_version < kUlpConventionCommandsMinorVersion) {
    return DecodeError{DecodeErrorKind::kInvalidValue, kAdvMinor.name, kAdvMinor.offset, adv.minor_version};
  }
  if (adv.regions.size() > 0xFF || AdvertisementLength(adv) > kAdvertisementMaxLength) {
    return DecodeError{DecodeErrorKind::kTooLong, "Advertisement", kAdvertisementMaxLength, AdvertisementLength(adv)};
  }
  if (adv.previous && (adv.previous->layer > 0xF || adv.previous->error_type > 0xF)) {
    std::size_t at = AdvertisementLength(adv) - kPreviousOutcomeLength + kOutLayerType.offset;
    return DecodeError{DecodeErrorKind::kInvalidValue, kOutLayerType.name, at,
                       adv.previous->layer > 0xF ? adv.previous->layer : adv.previous->error_type};
  }
  const std::size_t start = out.size();
  out.resize(start + AdvertisementLength(adv), 0);
  std::copy(kAdvertisementMagic.begin(), kAdvertisementMagic.end(), out.begin() + start);
  uint16_t flags = adv.flags & ~(kFlagPreviousOutcome | kFlagCommands);
  if (adv.previous) flags |= kFlagPreviousOutcome;
  if (adv.commands) flags |= kFlagCommands;
  StoreField(out, start, kAdvMajor, adv.major_version);
  StoreField(out, start, kAdvMinor, adv.minor_version);
  StoreField(out, start, kAdvFlags, flags);
  StoreField(out, start, kAdvIrd, adv.ird);
  StoreField(out, start, kAdvOrd, adv.ord);
  StoreField(out, start, kAdvBufferCount, adv.receive_buffer_count);
  StoreField(out, start, kAdvRegionCount, adv.regions.size());
  StoreField(out, start, kAdvEntryLength, adv.region_entry_length);
  StoreField(out, start, kAdvBufferSize, adv.receive_buffer_size);
  StoreField(out, start, kAdvSerial, adv.connection_serial);
  std::size_t at = start + kAdvertisementHeaderLength;
  for (const AdvertisedRegion& r : adv.regions) {
    StoreField(out, at, kRegStag, r.stag);
    StoreField(out, at, kRegBaseTo, r.base_tagged_offset);
    StoreField(out, at, kRegLength, r.length);
    StoreField(out, at, kRegAccess, r.access);
    StoreField(out, at, kRegAttributes, r.attributes);
    StoreField(out, at, kRegObject, r.memory_object);
    StoreField(out, at, kRegObjectOffset, r.object_offset);
    at += adv.region_entry_length;  // octets beyond 24 stay zero
  }
  if (const auto& p = adv.previous) {
    StoreField(out, at, kOutSerial, p->connection_serial);
    StoreField(out, at, kOutOutcome, static_cast<uint8_t>(p->outcome));
    StoreField(out, at, kOutFlags, p->flags);
    StoreField(out, at, kOutLayerType, static_cast<uint8_t>(p->layer << 4 | p->error_type));
    StoreField(out, at, kOutCode, p->error_code);
    StoreField(out, at, kOutEvents, p->events_sent);
    StoreField(out, at, kOutErrors, p->completion_errors);
    at += kPreviousOutcomeLength;
  }
  if (adv.commands) {
    Bytes block;
    EncodeCommandsBlock(*adv.commands, block);
    std::copy(block.begin(), block.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
  }
  return Ok{};
}

Result<Advertisement> DecodeAdvertisement(ByteSpan data, std::size_t base_offset) {
  FieldBlock h(data, 0, base_offset);
  if (!MagicMatches(data, kAdvertisementMagic)) {
    if (data.size() < kAdvMagic.width) return *h.FirstTruncated(kAdvHeaderFields);
    return h.Error(DecodeErrorKind::kInvalidValue, kAdvMagic, LoadBe32(data.data()));
  }
  // The version decides how the rest is read, so check it before the
  // remaining header fields are known to be present.
  if (data.size() > kAdvMajor.offset && data[kAdvMajor.offset] != kUlpConventionMajorVersion) {
    return h.Error(DecodeErrorKind::kInvalidValue, kAdvMajor, data[kAdvMajor.offset]);
  }
  if (auto trunc = h.FirstTruncated(kAdvHeaderFields)) return *trunc;
  Result<Advertisement> header = DecodeAdvertisementHeader(h);
  if (!header.ok()) return header.error();
  if (data.size() > kAdvertisementMaxLength) {
    return DecodeError{DecodeErrorKind::kTooLong, "Advertisement", base_offset + kAdvertisementMaxLength, data.size()};
  }
  Advertisement adv = std::move(header).value();
  const bool newer = adv.minor_version > kUlpConventionKnownMinorVersion;

  const std::size_t count = h.Get(kAdvRegionCount);
  std::size_t at = kAdvertisementHeaderLength;
  for (std::size_t i = 0; i < count; ++i, at += adv.region_entry_length) {
    FieldBlock entry(data, at, base_offset);
    if (auto trunc = entry.FirstTruncated(kRegionFields)) return *trunc;
    if (at + adv.region_entry_length > data.size()) {  // a newer minor's longer entry
      return DecodeError{DecodeErrorKind::kTruncated, "Region Entry", base_offset + at, data.size() - at};
    }
    Result<AdvertisedRegion> reg = DecodeRegion(entry, newer, KnownAttributes(adv));
    if (!reg.ok()) return reg.error();
    for (const AdvertisedRegion& seen : adv.regions) {
      if (seen.stag == reg->stag) return entry.Error(DecodeErrorKind::kInvalidValue, kRegStag, reg->stag);
    }
    adv.regions.push_back(*reg);
  }
  if (adv.flags & kFlagPreviousOutcome) {
    FieldBlock block(data, at, base_offset);
    if (auto trunc = block.FirstTruncated(kOutcomeFields)) return *trunc;
    Result<PreviousOutcome> prev = DecodeOutcome(block, newer);
    if (!prev.ok()) return prev.error();
    adv.previous = *prev;
    at += kPreviousOutcomeLength;
  }
  if ((adv.flags & kFlagCommands) && adv.minor_version >= kUlpConventionCommandsMinorVersion) {
    Result<CommandCapabilities> caps =
        DecodeCommandsBlock(data.subspan(std::min(at, data.size())), base_offset + at, newer);
    if (!caps.ok()) return caps.error();
    adv.commands = *caps;
    at += kCommandsBlockLength;
  }
  if (at < data.size() && !newer) {
    return DecodeError{DecodeErrorKind::kLengthMismatch, "Advertisement", base_offset + at, data.size() - at};
  }
  adv.flags &= ~kFlagPreviousOutcome;             // carried by `previous`
  if (adv.commands) adv.flags &= ~kFlagCommands;  // carried by `commands`
  return adv;
}

Result<Advertisement> DecodeAdvertisementFromPrivateData(ByteSpan private_data, bool rfc6581_word) {
  if (!rfc6581_word) return DecodeAdvertisement(private_data, 0);
  if (private_data.size() < kRfc6581WordLength) {
    return DecodeError{DecodeErrorKind::kTruncated, "RFC 6581 IRD/ORD", 0, private_data.size()};
  }
  return DecodeAdvertisement(private_data.subspan(kRfc6581WordLength), kRfc6581WordLength);
}

bool HasAdvertisementMagic(ByteSpan data) { return MagicMatches(data, kAdvertisementMagic); }

// ---------------------------------------------------------------------------
// Memory pattern

Bytes RegionPattern(const AdvertisedRegion& region, uint64_t to, std::size_t length) {
  Bytes out(length);
  const uint64_t first = region.ObjectOffsetOf(to);
  for (std::size_t i = 0; i < length; ++i) out[i] = PatternByte(region.memory_object, first + i);
  return out;
}

// ---------------------------------------------------------------------------
// Region roles

namespace {

struct RoleSpelling {
  RegionRole role;
  std::string_view name;
};

constexpr std::array<RoleSpelling, kRegionRoleCount> kRoleNames{{
    {RegionRole::kReadWrite, "rw"},
    {RegionRole::kReadOnly, "ro"},
    {RegionRole::kWriteOnly, "wo"},
    {RegionRole::kAtomic, "atomic"},
    {RegionRole::kInvalidatable, "invalidatable"},
    {RegionRole::kAlias, "alias"},
    {RegionRole::kForeign, "foreign"},
    {RegionRole::kDeregistered, "deregistered"},
    {RegionRole::kFlush, "flush"},
    {RegionRole::kVerify, "verify"},
    {RegionRole::kShared, "shared"},
    {RegionRole::kSharedAtomic, "shared-atomic"},
}};

// A plain region: usable and never invalidated by a case, so it stays valid
// for the whole connection.
bool Plain(const AdvertisedRegion& r) { return r.usable() && !(r.attributes & kAttrInvalidatable); }

// The rules of docs §3.3 except kAlias, which depends on another region.
bool FillsRole(const AdvertisedRegion& r, RegionRole role) {
  const bool read = r.Has(kAccessRemoteRead);
  const bool write = r.Has(kAccessRemoteWrite);
  switch (role) {
    case RegionRole::kReadWrite:
      return Plain(r) && read && write;
    case RegionRole::kReadOnly:
      return Plain(r) && read && !write;
    case RegionRole::kWriteOnly:
      return Plain(r) && write && !read;
    case RegionRole::kAtomic:
      return Plain(r) && r.Has(kAccessRemoteAtomic | kAccessRemoteRead) && r.base_tagged_offset % 8 == 0 &&
             r.length >= 8;
    case RegionRole::kInvalidatable:
      return r.usable() && (r.attributes & kAttrInvalidatable) && read && write;
    case RegionRole::kForeign:
      return (r.attributes & kAttrForeign) != 0;
    case RegionRole::kDeregistered:
      return (r.attributes & kAttrDeregistered) != 0;
    case RegionRole::kFlush:
      return Plain(r) && r.Has(kAccessFlush);
    case RegionRole::kVerify:
      return Plain(r) && r.Has(kAccessVerify);
    case RegionRole::kShared:
      return Plain(r) && (r.attributes & kAttrShared) && read && write;
    case RegionRole::kSharedAtomic:
      return (r.attributes & kAttrShared) && FillsRole(r, RegionRole::kAtomic);
    case RegionRole::kAlias:
      return false;
  }
  return false;
}

// `view` can read all of `target`'s memory.
bool Covers(const AdvertisedRegion& view, uint16_t object, uint64_t offset, uint64_t length) {
  return view.memory_object == object && view.object_offset <= offset &&
         offset + length <= uint64_t{view.object_offset} + view.length;
}

}  // namespace

std::string_view RegionRoleName(RegionRole role) {
  for (const RoleSpelling& s : kRoleNames) {
    if (s.role == role) return s.name;
  }
  return "?";
}

std::optional<RegionRole> ParseRegionRole(std::string_view name) {
  for (const RoleSpelling& s : kRoleNames) {
    if (s.name == name) return s.role;
  }
  return std::nullopt;
}

const AdvertisedRegion* SelectRegion(const Advertisement& adv, RegionRole role, uint32_t min_length) {
  if (role == RegionRole::kAlias) {
    // A plain readable region over all of the invalidatable region's memory:
    // it stays valid after a Send with Invalidate and shows what happened.
    const AdvertisedRegion* inv = SelectRegion(adv, RegionRole::kInvalidatable, min_length);
    if (!inv) return nullptr;
    for (const AdvertisedRegion& r : adv.regions) {
      if (Plain(r) && r.Has(kAccessRemoteRead) && Covers(r, inv->memory_object, inv->object_offset, inv->length)) {
        return &r;
      }
    }
    return nullptr;
  }
  for (const AdvertisedRegion& r : adv.regions) {
    if (FillsRole(r, role) && r.length >= min_length) return &r;
  }
  return nullptr;
}

const AdvertisedRegion* FindReadableView(const Advertisement& adv, uint16_t memory_object, uint64_t object_offset,
                                         uint64_t length) {
  for (const AdvertisedRegion& r : adv.regions) {
    if (Plain(r) && r.Has(kAccessRemoteRead) && Covers(r, memory_object, object_offset, length)) {
      return &r;
    }
  }
  return nullptr;
}

std::vector<std::string> MissingForFullSuite(const Advertisement& adv, bool rfc7306, bool commit) {
  struct Need {
    RegionRole role;
    uint32_t min_length;
    bool wanted;
  };
  const Need needs[] = {
      {RegionRole::kReadWrite, kFullSuiteMinReadWriteLength, true},
      {RegionRole::kReadOnly, kFullSuiteMinRegionLength, true},
      {RegionRole::kWriteOnly, kFullSuiteMinRegionLength, true},
      {RegionRole::kAtomic, kFullSuiteMinAtomicLength, rfc7306},
      {RegionRole::kInvalidatable, kFullSuiteMinRegionLength, true},
      {RegionRole::kAlias, kFullSuiteMinRegionLength, true},
      {RegionRole::kForeign, 0, true},
      {RegionRole::kDeregistered, 0, true},
      {RegionRole::kFlush, kFullSuiteMinRegionLength, commit},
      {RegionRole::kVerify, kFullSuiteMinRegionLength, commit},
  };
  std::vector<std::string> missing;
  for (const Need& n : needs) {
    if (n.wanted && !SelectRegion(adv, n.role, n.min_length)) {
      std::string line = "region " + std::string(RegionRoleName(n.role));
      if (n.min_length) line += " of >= " + std::to_string(n.min_length) + " octets";
      missing.push_back(line);
    }
  }
  if (adv.receive_buffer_count < kFullSuiteMinReceiveBuffers ||
      adv.receive_buffer_count > kFullSuiteMaxReceiveBuffers) {
    missing.push_back("4 to 64 receive buffers (has " + std::to_string(adv.receive_buffer_count) + ")");
  }
  if (adv.receive_buffer_size < kFullSuiteMinReceiveBufferSize) {
    missing.push_back("receive buffers of >= 1024 octets (has " + std::to_string(adv.receive_buffer_size) + ")");
  }
  if (adv.ird < kFullSuiteMinIrd) {
    missing.push_back("IRD >= 4 (has " + std::to_string(adv.ird) + ")");
  }
  if (rfc7306 && !(adv.flags & kFlagRfc7306)) missing.push_back("RFC 7306 flag");
  if (commit && !(adv.flags & kFlagCommit)) missing.push_back("COMMIT flag");
  if (!(adv.flags & kFlagKeepMemory)) missing.push_back("Keep Memory flag");
  if (!adv.previous) missing.push_back("previous-connection outcome block");
  return missing;
}

// ---------------------------------------------------------------------------
// Event Records

EventRecord MakeSendEvent(uint32_t sequence, ByteSpan payload, std::optional<bool> solicited,
                          std::optional<uint32_t> invalidated_stag) {
  EventRecord ev;
  ev.type = EventType::kSendDelivered;
  ev.sequence = sequence;
  if (solicited) ev.flags |= kEventSolicitedKnown | (*solicited ? kEventSolicited : 0);
  if (invalidated_stag) {
    ev.flags |= kEventInvalidated;
    ev.invalidated_stag = *invalidated_stag;
  }
  ev.length = static_cast<uint32_t>(payload.size());
  ev.digest = Crc32c(payload);
  const std::size_t n = std::min(payload.size(), kEventPrefixMax);
  ev.prefix.assign(payload.begin(), payload.begin() + n);
  return ev;
}

EventRecord MakeImmediateDataEvent(uint32_t sequence, uint64_t immediate_data, std::optional<bool> solicited) {
  EventRecord ev;
  ev.type = EventType::kImmediateDataDelivered;
  ev.sequence = sequence;
  if (solicited) ev.flags |= kEventSolicitedKnown | (*solicited ? kEventSolicited : 0);
  ev.value = immediate_data;
  return ev;
}

EventRecord MakeCompletionErrorEvent(uint32_t sequence, ErrorSource source, uint32_t status) {
  EventRecord ev;
  ev.type = EventType::kCompletionError;
  ev.sequence = sequence;
  ev.value = uint64_t{static_cast<uint8_t>(source)} << 56 | status;
  return ev;
}

EventRecord MakeCommandCompletedEvent(uint32_t sequence, const Completion& c, ByteSpan moved) {
  EventRecord ev;
  ev.minor_version = kUlpConventionCommandsMinorVersion;
  ev.type = EventType::kCommandCompleted;
  ev.sequence = sequence;
  ev.invalidated_stag = c.command_id;
  ev.value = CompletionValue(c);
  ev.length = static_cast<uint32_t>(moved.size());
  ev.digest = Crc32c(moved);
  const std::size_t n = std::min(moved.size(), kEventPrefixMax);
  ev.prefix.assign(moved.begin(), moved.begin() + n);
  return ev;
}

void EncodeEventRecord(const EventRecord& ev, Bytes& out) {
  const std::size_t start = out.size();
  out.resize(start + kEventRecordHeaderLength, 0);
  std::copy(kEventRecordMagic.begin(), kEventRecordMagic.end(), out.begin() + start);
  StoreField(out, start, kEvMajor, ev.major_version);
  StoreField(out, start, kEvMinor, ev.minor_version);
  StoreField(out, start, kEvType, static_cast<uint8_t>(ev.type));
  StoreField(out, start, kEvFlags, ev.flags);
  StoreField(out, start, kEvSequence, ev.sequence);
  StoreField(out, start, kEvLength, ev.length);
  StoreField(out, start, kEvStag, ev.invalidated_stag);
  StoreField(out, start, kEvValue, ev.value);
  StoreField(out, start, kEvDigest, ev.digest);
  StoreField(out, start, kEvPrefixLength, ev.prefix.size());
  out.insert(out.end(), ev.prefix.begin(), ev.prefix.end());
}

namespace {

// Type 4, Command Completed (docs §7.3): no flags; Invalidated STag holds
// the Command Id; Value is the status word; only a success moves octets.
std::optional<DecodeError> CheckCompletionFields(const FieldBlock& b, const EventRecord& ev) {
  if (ev.flags != 0) return b.Error(DecodeErrorKind::kInvalidValue, kEvFlags, ev.flags);
  const std::optional<Completion> c = CompletionFromValue(ev.invalidated_stag, ev.value);
  if (!c) return b.Error(DecodeErrorKind::kInvalidValue, kEvValue, ev.value);
  if (c->status != CompletionStatus::kSuccess && ev.length != 0) {
    return b.Error(DecodeErrorKind::kInvalidValue, kEvLength, ev.length);
  }
  if (ev.length == 0 && ev.digest != 0) return b.Error(DecodeErrorKind::kInvalidValue, kEvDigest, ev.digest);
  const uint64_t prefix_length = b.Get(kEvPrefixLength);
  if (prefix_length != std::min<uint64_t>(ev.length, kEventPrefixMax)) {
    return b.Error(DecodeErrorKind::kLengthMismatch, kEvPrefixLength, prefix_length);
  }
  return std::nullopt;
}

// Field rules that depend on the Event Type (docs §6.2), checked in layout
// order so the reported offset is the first offending field.
std::optional<DecodeError> CheckEventFields(const FieldBlock& b, const EventRecord& ev) {
  if (ev.type == EventType::kCommandCompleted) return CheckCompletionFields(b, ev);
  const bool send = ev.type == EventType::kSendDelivered;
  if ((ev.flags & kEventInvalidated) && !send) {
    return b.Error(DecodeErrorKind::kInvalidValue, kEvFlags, ev.flags);
  }
  if (ev.type == EventType::kCompletionError && ev.flags != 0) {
    return b.Error(DecodeErrorKind::kInvalidValue, kEvFlags, ev.flags);
  }
  if (!send && ev.length != 0) return b.Error(DecodeErrorKind::kInvalidValue, kEvLength, ev.length);
  if (!(ev.flags & kEventInvalidated) && ev.invalidated_stag != 0) {
    return b.Error(DecodeErrorKind::kInvalidValue, kEvStag, ev.invalidated_stag);
  }
  if (send && ev.value != 0) return b.Error(DecodeErrorKind::kInvalidValue, kEvValue, ev.value);
  if (ev.type == EventType::kCompletionError) {
    uint8_t source = static_cast<uint8_t>(ev.value >> 56);
    if (source < static_cast<uint8_t>(ErrorSource::kReceiveQueue) ||
        source > static_cast<uint8_t>(ErrorSource::kAsyncEvent)) {
      return b.Error(DecodeErrorKind::kInvalidValue, kEvValue, ev.value);
    }
    if ((ev.value >> 32 & 0xFFFFFF) != 0) {
      return b.Error(DecodeErrorKind::kReservedNonZero, kEvValue, ev.value);
    }
  }
  // CRC-32C of zero octets is 0, so a record without data has digest 0.
  if (ev.length == 0 && ev.digest != 0) {
    return b.Error(DecodeErrorKind::kInvalidValue, kEvDigest, ev.digest);
  }
  const uint64_t prefix_length = b.Get(kEvPrefixLength);
  if (prefix_length != std::min<uint64_t>(ev.length, kEventPrefixMax)) {
    return b.Error(DecodeErrorKind::kLengthMismatch, kEvPrefixLength, prefix_length);
  }
  return std::nullopt;
}

}  // namespace

Result<EventRecord> DecodeEventRecord(ByteSpan data, std::size_t base_offset) {
  FieldBlock b(data, 0, base_offset);
  if (!MagicMatches(data, kEventRecordMagic)) {
    if (data.size() < kEvMagic.width) return *b.FirstTruncated(kEventFields);
    return b.Error(DecodeErrorKind::kInvalidValue, kEvMagic, LoadBe32(data.data()));
  }
  if (data.size() > kEvMajor.offset && data[kEvMajor.offset] != kUlpConventionMajorVersion) {
    return b.Error(DecodeErrorKind::kInvalidValue, kEvMajor, data[kEvMajor.offset]);
  }
  if (auto trunc = b.FirstTruncated(kEventFields)) return *trunc;
  EventRecord ev;
  ev.minor_version = static_cast<uint8_t>(b.Get(kEvMinor));
  const bool newer = ev.minor_version > kUlpConventionKnownMinorVersion;
  const uint64_t type = b.Get(kEvType);
  const uint8_t max_type = ev.minor_version >= kUlpConventionCommandsMinorVersion ? kMaxEventType11 : kMaxEventType;
  if (type == 0 || (!newer && type > max_type)) {
    return b.Error(DecodeErrorKind::kInvalidValue, kEvType, type);
  }
  ev.type = static_cast<EventType>(type);
  ev.flags = static_cast<uint8_t>(b.Get(kEvFlags));
  if (!newer && (ev.flags & ~kKnownEventFlags) != 0) {
    return b.Error(DecodeErrorKind::kReservedNonZero, kEvFlags, ev.flags);
  }
  if ((ev.flags & kEventSolicited) && !(ev.flags & kEventSolicitedKnown)) {
    return b.Error(DecodeErrorKind::kInvalidValue, kEvFlags, ev.flags);
  }
  ev.sequence = static_cast<uint32_t>(b.Get(kEvSequence));
  if (ev.sequence == 0) return b.Error(DecodeErrorKind::kInvalidValue, kEvSequence, 0);
  ev.length = static_cast<uint32_t>(b.Get(kEvLength));
  ev.invalidated_stag = static_cast<uint32_t>(b.Get(kEvStag));
  ev.value = b.Get(kEvValue);
  ev.digest = static_cast<uint32_t>(b.Get(kEvDigest));
  if (type <= kMaxEventType11) {
    if (auto bad = CheckEventFields(b, ev)) return *bad;
  }
  if (uint64_t rsvd = b.Get(kEvReserved); rsvd != 0 && !newer) {
    return b.Error(DecodeErrorKind::kReservedNonZero, kEvReserved, rsvd);
  }
  const std::size_t n = b.Get(kEvPrefixLength);
  const std::size_t have = data.size() - kEventRecordHeaderLength;
  if (have < n) {
    return DecodeError{DecodeErrorKind::kTruncated, "Data Prefix", base_offset + kEventRecordHeaderLength, have};
  }
  if (have > n && !newer) {
    return DecodeError{DecodeErrorKind::kLengthMismatch, "Event Record", base_offset + kEventRecordHeaderLength + n,
                       have - n};
  }
  ev.prefix.assign(data.begin() + kEventRecordHeaderLength, data.begin() + kEventRecordHeaderLength + n);
  // When the prefix is the whole message the digest can be checked here.
  const bool moved = ev.type == EventType::kSendDelivered || ev.type == EventType::kCommandCompleted;
  if (moved && ev.length == n && Crc32c(ev.prefix) != ev.digest) {
    return b.Error(DecodeErrorKind::kCrcMismatch, kEvDigest, ev.digest);
  }
  return ev;
}

bool HasEventRecordMagic(ByteSpan data) { return MagicMatches(data, kEventRecordMagic); }

}  // namespace rdmapct::wire
