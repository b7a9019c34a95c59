#include "reference/wire/terminate_codes.h"

#include <array>

namespace rdmapct::wire {
namespace {

constexpr bool kAny = true;
constexpr bool kOne = false;

// REQ R5040-4.8-03 R5040-4.8-T01 R5040-4.8-T15 R5040-4.8-T16
// RFC 6580 §3.1 (RDMAP), §3.2 (DDP), §3.3 (MPA, extended by RFC 6581 §11).
// Names follow RFC 5040 Figure 9, RFC 5041 §7.2, RFC 5044 §8, RFC 6581 §8.
// Sorted by (layer, error_type, error_code); any-code rows have code 0.
constexpr std::array<TerminateCodeEntry, 34> kTerminateCodeTable = {{
    {0x0, 0x0, 0x00, kAny, "RDMAP", "Local Catastrophic Error", "", "RDMAP / Local Catastrophic Error",
     "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x1, 0x00, kOne, "RDMAP", "Remote Protection Error", "Invalid STag",
     "RDMAP / Remote Protection Error / Invalid STag", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x1, 0x01, kOne, "RDMAP", "Remote Protection Error", "Base or bounds violation",
     "RDMAP / Remote Protection Error / Base or bounds violation", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x1, 0x02, kOne, "RDMAP", "Remote Protection Error", "Access rights violation",
     "RDMAP / Remote Protection Error / Access rights violation", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x1, 0x03, kOne, "RDMAP", "Remote Protection Error", "STag not associated with RDMAP Stream",
     "RDMAP / Remote Protection Error / STag not associated with RDMAP Stream", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x1, 0x04, kOne, "RDMAP", "Remote Protection Error", "TO wrap", "RDMAP / Remote Protection Error / TO wrap",
     "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x1, 0x09, kOne, "RDMAP", "Remote Protection Error", "STag cannot be Invalidated",
     "RDMAP / Remote Protection Error / STag cannot be Invalidated", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x1, 0xFF, kOne, "RDMAP", "Remote Protection Error", "Unspecified Error",
     "RDMAP / Remote Protection Error / Unspecified Error", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x2, 0x05, kOne, "RDMAP", "Remote Operation Error", "Invalid RDMAP version",
     "RDMAP / Remote Operation Error / Invalid RDMAP version", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x2, 0x06, kOne, "RDMAP", "Remote Operation Error", "Unexpected OpCode",
     "RDMAP / Remote Operation Error / Unexpected OpCode", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x2, 0x07, kOne, "RDMAP", "Remote Operation Error", "Catastrophic error, localized to RDMAP Stream",
     "RDMAP / Remote Operation Error / Catastrophic error, localized to RDMAP Stream", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x2, 0x08, kOne, "RDMAP", "Remote Operation Error", "Catastrophic error, global",
     "RDMAP / Remote Operation Error / Catastrophic error, global", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x2, 0x09, kOne, "RDMAP", "Remote Operation Error", "STag cannot be Invalidated",
     "RDMAP / Remote Operation Error / STag cannot be Invalidated", "RFC 5040 4.8 Fig. 9"},
    {0x0, 0x2, 0xFF, kOne, "RDMAP", "Remote Operation Error", "Unspecified Error",
     "RDMAP / Remote Operation Error / Unspecified Error", "RFC 5040 4.8 Fig. 9"},
    {0x1, 0x0, 0x00, kOne, "DDP", "Local Catastrophic", "Local Catastrophic", "DDP / Local Catastrophic",
     "RFC 5041 7.2"},
    {0x1, 0x1, 0x00, kOne, "DDP", "Tagged Buffer Error", "Invalid STag", "DDP / Tagged Buffer Error / Invalid STag",
     "RFC 5041 7.2"},
    {0x1, 0x1, 0x01, kOne, "DDP", "Tagged Buffer Error", "Base or bounds violation",
     "DDP / Tagged Buffer Error / Base or bounds violation", "RFC 5041 7.2"},
    {0x1, 0x1, 0x02, kOne, "DDP", "Tagged Buffer Error", "STag not associated with DDP Stream",
     "DDP / Tagged Buffer Error / STag not associated with DDP Stream", "RFC 5041 7.2"},
    {0x1, 0x1, 0x03, kOne, "DDP", "Tagged Buffer Error", "TO wrap", "DDP / Tagged Buffer Error / TO wrap",
     "RFC 5041 7.2"},
    {0x1, 0x1, 0x04, kOne, "DDP", "Tagged Buffer Error", "Invalid DDP version",
     "DDP / Tagged Buffer Error / Invalid DDP version", "RFC 5041 7.2"},
    {0x1, 0x2, 0x01, kOne, "DDP", "Untagged Buffer Error", "Invalid QN", "DDP / Untagged Buffer Error / Invalid QN",
     "RFC 5041 7.2"},
    {0x1, 0x2, 0x02, kOne, "DDP", "Untagged Buffer Error", "Invalid MSN - no buffer available",
     "DDP / Untagged Buffer Error / Invalid MSN - no buffer available", "RFC 5041 7.2"},
    {0x1, 0x2, 0x03, kOne, "DDP", "Untagged Buffer Error", "Invalid MSN - MSN range is not valid",
     "DDP / Untagged Buffer Error / Invalid MSN - MSN range is not valid", "RFC 5041 7.2"},
    {0x1, 0x2, 0x04, kOne, "DDP", "Untagged Buffer Error", "Invalid MO", "DDP / Untagged Buffer Error / Invalid MO",
     "RFC 5041 7.2"},
    {0x1, 0x2, 0x05, kOne, "DDP", "Untagged Buffer Error", "DDP Message too long for available buffer",
     "DDP / Untagged Buffer Error / DDP Message too long for available buffer", "RFC 5041 7.2"},
    {0x1, 0x2, 0x06, kOne, "DDP", "Untagged Buffer Error", "Invalid DDP version",
     "DDP / Untagged Buffer Error / Invalid DDP version", "RFC 5041 7.2"},
    {0x1, 0x3, 0x00, kAny, "DDP", "Reserved for the use by the LLP", "", "DDP / Reserved for the use by the LLP",
     "RFC 5041 7.2"},
    {0x2, 0x0, 0x01, kOne, "LLP", "MPA Error", "TCP connection closed, terminated, or lost",
     "LLP / MPA Error / TCP connection closed, terminated, or lost", "RFC 5044 8"},
    {0x2, 0x0, 0x02, kOne, "LLP", "MPA Error", "MPA CRC error", "LLP / MPA Error / MPA CRC error", "RFC 5044 8"},
    {0x2, 0x0, 0x03, kOne, "LLP", "MPA Error", "MPA Marker and ULPDU Length field mismatch",
     "LLP / MPA Error / MPA Marker and ULPDU Length field mismatch", "RFC 5044 8"},
    {0x2, 0x0, 0x04, kOne, "LLP", "MPA Error", "Invalid MPA Request or Reply Frame",
     "LLP / MPA Error / Invalid MPA Request or Reply Frame", "RFC 5044 8"},
    // RFC 6581 §8 codes, added to the RFC 6580 §3.3 registry by RFC 6581 §11.
    {0x2, 0x0, 0x05, kOne, "LLP", "MPA Error", "Local catastrophic", "LLP / MPA Error / Local catastrophic",
     "RFC 6581 8"},
    {0x2, 0x0, 0x06, kOne, "LLP", "MPA Error", "Insufficient IRD resources",
     "LLP / MPA Error / Insufficient IRD resources", "RFC 6581 8"},
    {0x2, 0x0, 0x07, kOne, "LLP", "MPA Error", "No matching RTR option", "LLP / MPA Error / No matching RTR option",
     "RFC 6581 8"},
}};

constexpr bool Matches(const TerminateCodeEntry& e, TerminateCode c) {
  return e.layer == c.layer && e.error_type == c.error_type && (e.any_code || e.error_code == c.error_code);
}

}  // namespace

std::span<const TerminateCodeEntry> TerminateCodeTable() { return kTerminateCodeTable; }

const TerminateCodeEntry* FindTerminateCode(TerminateCode code) {
  for (const auto& e : kTerminateCodeTable) {
    if (Matches(e, code)) return &e;
  }
  return nullptr;
}

bool IsRegistered(TerminateCode code) { return FindTerminateCode(code) != nullptr; }

const char* Describe(TerminateCode code) {
  const TerminateCodeEntry* e = FindTerminateCode(code);
  return e != nullptr ? e->description : "Unassigned";
}

const char* TerminateLayerName(uint8_t layer) {
  switch (layer) {
    case 0x0:
      return "RDMAP";
    case 0x1:
      return "DDP";
    case 0x2:
      return "LLP";
    default:
      return "undefined";
  }
}

}  // namespace rdmapct::wire
