// Connect Directive (docs/target-convention.md §10.2): how the suite, as MPA
// Responder, tells a target that connects to it (the MPA Initiator) which
// options to ask for on its next connection. The suite rejects the current
// Request (R = 1) with the Directive as the Reply's Private Data; the target
// closes and its next Request carries the options.
//
// Layout (16 octets, big-endian):
//   0  4  Directive Magic  "RPCD" (52 50 43 44)
//   4  1  Major Version    1
//   5  1  Minor Version    0
//   6  2  Directive Flags  kDirective*
//   8  2  IRD              the Initiator IRD to offer (with kDirectiveEnhanced)
//  10  2  ORD              the Initiator ORD to offer (with kDirectiveEnhanced)
//  12  4  Case Hash        CRC-32C of the case id, for the target's logs
#pragma once

#include <array>
#include <cstdint>

#include "reference/wire/bytes.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

inline constexpr std::array<uint8_t, 4> kDirectiveMagic = {0x52, 0x50, 0x43, 0x44};
inline constexpr std::size_t kDirectiveLength = 16;

inline constexpr uint16_t kDirectiveCrc = 0x0001;         // C = 1 in the Request
inline constexpr uint16_t kDirectiveMarkers = 0x0002;     // M = 1
inline constexpr uint16_t kDirectiveEnhanced = 0x0004;    // Rev 2, S = 1, RFC 6581 word
inline constexpr uint16_t kDirectivePeerToPeer = 0x0008;  // A = 1
inline constexpr uint16_t kDirectiveSendRtr = 0x0010;     // B
inline constexpr uint16_t kDirectiveWriteRtr = 0x0020;    // C (RTR)
inline constexpr uint16_t kDirectiveReadRtr = 0x0040;     // D
inline constexpr uint16_t kDirectiveKeepMemory = 0x0080;  // as the Suite Request's Keep Memory
inline constexpr uint16_t kKnownDirectiveFlags = 0x00FF;

struct ConnectDirective {
  uint8_t major_version = 1;
  uint8_t minor_version = 0;
  uint16_t flags = 0;
  uint16_t ird = 8;
  uint16_t ord = 8;
  uint32_t case_hash = 0;
  bool Has(uint16_t flag) const { return (flags & flag) != 0; }
  friend bool operator==(const ConnectDirective&, const ConnectDirective&) = default;
};

void EncodeConnectDirective(const ConnectDirective& d, Bytes& out);
// The Directive at the start of `data` (octets after 16 belong to later
// minor versions). Errors: kTruncated, kInvalidValue (magic, major version,
// IRD/ORD above 0x3FFF), kReservedNonZero (unknown flags at minor <= 0).
Result<ConnectDirective> DecodeConnectDirective(ByteSpan data);

}  // namespace rdmapct::wire
