// The Terminate code space: Layer / Error Type / Error Code triples of
// RFC 5040 Figure 9, RFC 5041 §7.2, RFC 5044 §8 and RFC 6581 §8, with the
// registration status of RFC 6580 §3.1-3.3 (the RFC 6580 registry).
//
// One table (kTerminateCodeTable in terminate_codes.cc) answers both
// IsRegistered() and Describe(); the typed enums and the named constants below
// are for code that builds or checks a specific Terminate.
#pragma once

#include <cstdint>
#include <span>

namespace rdmapct::wire {

enum class TerminateLayer : uint8_t { kRdmap = 0x0, kDdp = 0x1, kLlp = 0x2 };

// RFC 5040 Figure 9, Layer 0x0.
enum class RdmapErrorType : uint8_t {
  kLocalCatastrophic = 0x0,
  kRemoteProtection = 0x1,
  kRemoteOperation = 0x2,
};

enum class RdmapErrorCode : uint8_t {
  // Remote Protection Error (EType 0x1)
  kInvalidStag = 0x00,
  kBaseOrBoundsViolation = 0x01,
  kAccessRightsViolation = 0x02,
  kStagNotAssociatedWithRdmapStream = 0x03,
  kToWrap = 0x04,
  // Remote Operation Error (EType 0x2)
  kInvalidRdmapVersion = 0x05,
  kUnexpectedOpcode = 0x06,
  kCatastrophicLocalizedToStream = 0x07,
  kCatastrophicGlobal = 0x08,
  // both ETypes 0x1 and 0x2
  kStagCannotBeInvalidated = 0x09,
  kUnspecified = 0xFF,
};

// RFC 5041 §7.2.
enum class DdpErrorType : uint8_t {
  kLocalCatastrophic = 0x0,
  kTaggedBufferError = 0x1,
  kUntaggedBufferError = 0x2,
  kReservedForLlp = 0x3,
};

enum class DdpTaggedErrorCode : uint8_t {
  kInvalidStag = 0x00,
  kBaseOrBoundsViolation = 0x01,
  kStagNotAssociatedWithDdpStream = 0x02,
  kToWrap = 0x03,
  kInvalidDdpVersion = 0x04,
};

enum class DdpUntaggedErrorCode : uint8_t {
  kInvalidQn = 0x01,
  kInvalidMsnNoBufferAvailable = 0x02,
  kInvalidMsnRangeNotValid = 0x03,
  kInvalidMo = 0x04,
  kDdpMessageTooLong = 0x05,
  kInvalidDdpVersion = 0x06,
};

// Layer 0x2 (LLP), EType 0x0 (MPA): RFC 5044 §8 codes 1-4, RFC 6581 §8 codes 5-7.
inline constexpr uint8_t kMpaErrorType = 0x0;
enum class MpaErrorCode : uint8_t {
  kTcpConnectionLost = 0x01,         // TCP connection closed, terminated, or lost
  kCrcError = 0x02,                  // MPA CRC error
  kMarkerMismatch = 0x03,            // MPA Marker and ULPDU Length field mismatch
  kInvalidRequestOrReply = 0x04,     // Invalid MPA Request or Reply Frame
  kLocalCatastrophic = 0x05,         // RFC 6581
  kInsufficientIrdResources = 0x06,  // RFC 6581
  kNoMatchingRtrOption = 0x07,       // RFC 6581
};

// The three octet-sized parts of a Terminate Control field. Raw integers on
// purpose: a decoded Terminate may carry any 4/4/8-bit value.
struct TerminateCode {
  uint8_t layer = 0;       // 4 bits on the wire
  uint8_t error_type = 0;  // 4 bits on the wire
  uint8_t error_code = 0;  // 8 bits
  friend constexpr bool operator==(const TerminateCode&, const TerminateCode&) = default;
};

constexpr TerminateCode MakeTerminateCode(RdmapErrorType t, RdmapErrorCode c) {
  return {0x0, static_cast<uint8_t>(t), static_cast<uint8_t>(c)};
}
constexpr TerminateCode MakeTerminateCode(DdpTaggedErrorCode c) { return {0x1, 0x1, static_cast<uint8_t>(c)}; }
constexpr TerminateCode MakeTerminateCode(DdpUntaggedErrorCode c) { return {0x1, 0x2, static_cast<uint8_t>(c)}; }
constexpr TerminateCode MakeTerminateCode(MpaErrorCode c) { return {0x2, kMpaErrorType, static_cast<uint8_t>(c)}; }

// Every registered triple by name (RDMAP EType 0 and DDP EType 3 accept any
// code; the constants use code 0x00 for them).
namespace term {
using RT = RdmapErrorType;
using RC = RdmapErrorCode;
inline constexpr TerminateCode kRdmapLocalCatastrophic{0x0, 0x0, 0x00};
inline constexpr TerminateCode kRdmapInvalidStag = MakeTerminateCode(RT::kRemoteProtection, RC::kInvalidStag);
inline constexpr TerminateCode kRdmapBaseOrBoundsViolation =
    MakeTerminateCode(RT::kRemoteProtection, RC::kBaseOrBoundsViolation);
inline constexpr TerminateCode kRdmapAccessRightsViolation =
    MakeTerminateCode(RT::kRemoteProtection, RC::kAccessRightsViolation);
inline constexpr TerminateCode kRdmapStagNotAssociatedWithRdmapStream =
    MakeTerminateCode(RT::kRemoteProtection, RC::kStagNotAssociatedWithRdmapStream);
inline constexpr TerminateCode kRdmapToWrap = MakeTerminateCode(RT::kRemoteProtection, RC::kToWrap);
inline constexpr TerminateCode kRdmapProtectionStagCannotBeInvalidated =
    MakeTerminateCode(RT::kRemoteProtection, RC::kStagCannotBeInvalidated);
inline constexpr TerminateCode kRdmapProtectionUnspecified = MakeTerminateCode(RT::kRemoteProtection, RC::kUnspecified);
inline constexpr TerminateCode kRdmapInvalidRdmapVersion =
    MakeTerminateCode(RT::kRemoteOperation, RC::kInvalidRdmapVersion);
inline constexpr TerminateCode kRdmapUnexpectedOpcode = MakeTerminateCode(RT::kRemoteOperation, RC::kUnexpectedOpcode);
inline constexpr TerminateCode kRdmapCatastrophicLocalizedToStream =
    MakeTerminateCode(RT::kRemoteOperation, RC::kCatastrophicLocalizedToStream);
inline constexpr TerminateCode kRdmapCatastrophicGlobal =
    MakeTerminateCode(RT::kRemoteOperation, RC::kCatastrophicGlobal);
inline constexpr TerminateCode kRdmapOperationStagCannotBeInvalidated =
    MakeTerminateCode(RT::kRemoteOperation, RC::kStagCannotBeInvalidated);
inline constexpr TerminateCode kRdmapOperationUnspecified = MakeTerminateCode(RT::kRemoteOperation, RC::kUnspecified);

inline constexpr TerminateCode kDdpLocalCatastrophic{0x1, 0x0, 0x00};
inline constexpr TerminateCode kDdpTaggedInvalidStag = MakeTerminateCode(DdpTaggedErrorCode::kInvalidStag);
inline constexpr TerminateCode kDdpTaggedBaseOrBoundsViolation =
    MakeTerminateCode(DdpTaggedErrorCode::kBaseOrBoundsViolation);
inline constexpr TerminateCode kDdpTaggedStagNotAssociatedWithDdpStream =
    MakeTerminateCode(DdpTaggedErrorCode::kStagNotAssociatedWithDdpStream);
inline constexpr TerminateCode kDdpTaggedToWrap = MakeTerminateCode(DdpTaggedErrorCode::kToWrap);
inline constexpr TerminateCode kDdpTaggedInvalidDdpVersion = MakeTerminateCode(DdpTaggedErrorCode::kInvalidDdpVersion);
inline constexpr TerminateCode kDdpUntaggedInvalidQn = MakeTerminateCode(DdpUntaggedErrorCode::kInvalidQn);
inline constexpr TerminateCode kDdpUntaggedInvalidMsnNoBufferAvailable =
    MakeTerminateCode(DdpUntaggedErrorCode::kInvalidMsnNoBufferAvailable);
inline constexpr TerminateCode kDdpUntaggedInvalidMsnRangeNotValid =
    MakeTerminateCode(DdpUntaggedErrorCode::kInvalidMsnRangeNotValid);
inline constexpr TerminateCode kDdpUntaggedInvalidMo = MakeTerminateCode(DdpUntaggedErrorCode::kInvalidMo);
inline constexpr TerminateCode kDdpUntaggedMessageTooLong = MakeTerminateCode(DdpUntaggedErrorCode::kDdpMessageTooLong);
inline constexpr TerminateCode kDdpUntaggedInvalidDdpVersion =
    MakeTerminateCode(DdpUntaggedErrorCode::kInvalidDdpVersion);
inline constexpr TerminateCode kDdpReservedForLlp{0x1, 0x3, 0x00};

inline constexpr TerminateCode kMpaTcpConnectionLost = MakeTerminateCode(MpaErrorCode::kTcpConnectionLost);
inline constexpr TerminateCode kMpaCrcError = MakeTerminateCode(MpaErrorCode::kCrcError);
inline constexpr TerminateCode kMpaMarkerMismatch = MakeTerminateCode(MpaErrorCode::kMarkerMismatch);
inline constexpr TerminateCode kMpaInvalidRequestOrReply = MakeTerminateCode(MpaErrorCode::kInvalidRequestOrReply);
inline constexpr TerminateCode kMpaLocalCatastrophic = MakeTerminateCode(MpaErrorCode::kLocalCatastrophic);
inline constexpr TerminateCode kMpaInsufficientIrdResources =
    MakeTerminateCode(MpaErrorCode::kInsufficientIrdResources);
inline constexpr TerminateCode kMpaNoMatchingRtrOption = MakeTerminateCode(MpaErrorCode::kNoMatchingRtrOption);
}  // namespace term

// One registry row. `any_code` rows match every Error Code of their
// Layer/EType (RFC 6580 "ALL": RDMAP Local Catastrophic, DDP EType 0x3).
struct TerminateCodeEntry {
  uint8_t layer;
  uint8_t error_type;
  uint8_t error_code;
  bool any_code;
  const char* layer_name;       // "RDMAP", "DDP", "LLP (MPA)"
  const char* error_type_name;  // RFC spelling, e.g. "Remote Protection Error"
  const char* error_code_name;  // RFC spelling, e.g. "Invalid STag"
  const char* description;      // "RDMAP / Remote Protection Error / Invalid STag"
  const char* reference;        // defining document and section
};

// Every registered entry (38 rows of terminate-codes.tsv minus the
// "unassigned" catch-alls), in Layer/EType/Code order.
std::span<const TerminateCodeEntry> TerminateCodeTable();

// The entry a triple matches, or nullptr when RFC 6580 leaves it Unassigned.
const TerminateCodeEntry* FindTerminateCode(TerminateCode code);

// REQ R5040-4.8-03 R5040-4.8-T01 R5040-4.8-T15 R5040-4.8-T16
// RFC 6580 §3.1-3.3: RDMAP EType 0x0 takes any code; DDP Local Catastrophic
// only 0x00; DDP EType 0x3 any code; everything else only as listed; Layers
// 0x3-0xF never.
bool IsRegistered(TerminateCode code);

// "RDMAP / Remote Protection Error / Invalid STag"; "Unassigned" otherwise.
// For the any-code rows the code is not named ("RDMAP / Local Catastrophic Error").
const char* Describe(TerminateCode code);

const char* TerminateLayerName(uint8_t layer);  // "RDMAP", "DDP", "LLP", "undefined"

}  // namespace rdmapct::wire
