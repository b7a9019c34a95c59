// The RDMAP opcode table (RFC 5040 Figures 4/5, RFC 7306 Figures 2/3,
// draft-talpey-rdma-commit-01 §3.1 tables) and the RDMAP Control Field.
//
// One constexpr table (kOpcodeTable, one row per opcode 0x0-0x11) drives both
// directions: decoders look rows up by the opcode bits and a Profile, encoders
// take the tagged flag, queue number and header length from the same row.
//
// The RDMAP Control Field is octet 1 of every DDP header (DDP RsvdULP[0]).
// Its layout depends on the profile (decisions D-CONV and D-D1):
//   rfc5040 / rfc7306: RV = (b>>6)&3, Rsv = (b>>4)&3, Opcode = b&0xF
//   commit:            RV = (b>>6)&3, Rsv = (b>>5)&1, Opcode = b&0x1F
// so under rfc7306 the byte 0x50 is RV=01b, Rsv=01b, opcode 0x0 (RDMA Write),
// while under commit it is RV=01b, Rsv=0, opcode 0x10 (Atomic Write Request).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "reference/wire/profile.h"

namespace rdmapct::wire {

// RFC names (RFC 5040 Fig. 4, RFC 7306 Fig. 2, COMMIT §3.1 Table 1).
enum class Opcode : uint8_t {
  kRdmaWrite = 0x0,
  kRdmaReadRequest = 0x1,
  kRdmaReadResponse = 0x2,
  kSend = 0x3,
  kSendWithInvalidate = 0x4,
  kSendWithSe = 0x5,
  kSendWithSeAndInvalidate = 0x6,
  kTerminate = 0x7,
  kImmediateData = 0x8,         // RFC 7306
  kImmediateDataWithSe = 0x9,   // RFC 7306
  kAtomicRequest = 0xA,         // RFC 7306
  kAtomicResponse = 0xB,        // RFC 7306
  kFlushRequest = 0xC,          // COMMIT
  kFlushResponse = 0xD,         // COMMIT
  kVerifyRequest = 0xE,         // COMMIT
  kVerifyResponse = 0xF,        // COMMIT (collides with RFC 6580 "Reserved (Experimental)")
  kAtomicWriteRequest = 0x10,   // COMMIT (needs the 5-bit opcode)
  kAtomicWriteResponse = 0x11,  // COMMIT (needs the 5-bit opcode)
};

inline constexpr std::size_t kOpcodeCount = 0x12;

// Which RDMAP header follows the DDP header (first segment, MO = 0).
enum class HeaderKind : uint8_t {
  kNone,                // Write, Read Response, Sends, Flush/Atomic Write Responses
  kReadRequest,         // RFC 5040 §4.4, 28 octets
  kTerminate,           // RFC 5040 §4.8, variable (min 4)
  kImmediateData,       // RFC 7306 §6.2, 8 octets
  kAtomicRequest,       // RFC 7306 §5.2.1 Fig. 4, 52 octets
  kAtomicResponse,      // RFC 7306 §5.2.2 Fig. 6, 12 octets (decisions D-C1)
  kFlushRequest,        // COMMIT §3.1.1.1, 20 octets
  kVerifyRequest,       // COMMIT §3.1.2.1, 16 octets + optional Hash Value
  kVerifyResponse,      // COMMIT §3.1.2.2, Hash Value only (0 fixed octets)
  kAtomicWriteRequest,  // COMMIT §3.1.3.1, 24 octets
};

// How the Invalidate STag field (untagged RsvdULP octets 2-5) is used.
enum class InvalidateStagUse : uint8_t {
  kNoField,   // tagged message: the tagged DDP header has a 1-octet RsvdULP only
  kZero,      // MUST be zero on transmit, ignored on receive (RFC 5040 §4.1, RFC 7306 §4.1)
  kValid,     // carries the STag to invalidate (Send with Invalidate variants)
  kOptional,  // COMMIT requests: zero, or non-zero "processed by the receiver" (decisions D-D4)
};

inline constexpr uint8_t kNoQueueNumber = 0xFF;  // tagged messages have no QN

struct OpcodeInfo {
  Opcode opcode;
  const char* name;          // RFC spelling, e.g. "RDMA Read Request"
  Profile min_profile;       // first profile that defines the opcode
  bool tagged;               // DDP T flag the message MUST use
  uint8_t queue_number;      // 0..3, or kNoQueueNumber when tagged
  HeaderKind header;         // RDMAP header after the DDP header
  uint8_t header_length;     // fixed RDMAP header octets (Terminate: minimum 4)
  bool header_variable;      // header may be longer (Terminate, Verify hash)
  bool ulp_payload_allowed;  // RFC 5040 Fig. 5 / RFC 7306 Fig. 3 column
  bool solicited_event;      // SE variants
  InvalidateStagUse invalidate_stag;
  // The response a request asks for (RDMA Read, Atomic, Flush, Verify and
  // Atomic Write Requests); nullopt for every other message.
  std::optional<Opcode> response;
  // The message names a region of the remote peer's memory by STag and
  // Tagged Offset: tagged messages (the Data Sink) and the requests whose
  // header carries a Data Source or target STag. Send with Invalidate's
  // Invalidate STag names a region to invalidate, not one to access: false.
  bool remote_region;
  const char* reference;  // defining section
};

// REQ R5040-4.1-T01 R5040-4.1-T02 R5040-4.1-T03 R5040-4.1-T04 R5040-4.1-T05 R5040-4.1-T06
// REQ R5040-4.1-T07 R5040-4.1-T08 R5040-4.1-T09 R5040-4.2-T01 R5040-4.2-T02 R5040-4.2-T03
// REQ R5040-4.2-T04 R5040-4.2-T05 R5040-4.2-T06 R5040-4.2-T07 R5040-4.2-T08 R5040-4.2-T09
// REQ R7306-4.1-T01 R7306-4.1-T02 R7306-4.1-T03 R7306-4.1-T04 R7306-4.2-T01 R7306-4.2-T02
// REQ R7306-4.2-T03 R7306-4.2-T04 RCOMMIT-3.1-T01 RCOMMIT-3.1-T02 RCOMMIT-3.1-T03 RCOMMIT-3.1-T04
// REQ RCOMMIT-3.1-T05 RCOMMIT-3.1-T06 RCOMMIT-3.1-T07 RCOMMIT-3.1-T08 RCOMMIT-3.1-T09
// REQ RCOMMIT-3.1-T10 RCOMMIT-3.1-T11 RCOMMIT-3.1-T12
// Row i describes opcode i; a static_assert in opcodes.cc checks the order.
inline constexpr std::array<OpcodeInfo, kOpcodeCount> kOpcodeTable = {{
    {Opcode::kRdmaWrite, "RDMA Write", Profile::kRfc5040, true, kNoQueueNumber, HeaderKind::kNone, 0, false, true,
     false, InvalidateStagUse::kNoField, std::nullopt, true, "RFC 5040 4.1/4.3"},
    {Opcode::kRdmaReadRequest, "RDMA Read Request", Profile::kRfc5040, false, 1, HeaderKind::kReadRequest, 28, false,
     false, false, InvalidateStagUse::kZero, Opcode::kRdmaReadResponse, true, "RFC 5040 4.4"},
    {Opcode::kRdmaReadResponse, "RDMA Read Response", Profile::kRfc5040, true, kNoQueueNumber, HeaderKind::kNone, 0,
     false, true, false, InvalidateStagUse::kNoField, std::nullopt, true, "RFC 5040 4.5"},
    {Opcode::kSend, "Send", Profile::kRfc5040, false, 0, HeaderKind::kNone, 0, false, true, false,
     InvalidateStagUse::kZero, std::nullopt, false, "RFC 5040 4.6"},
    {Opcode::kSendWithInvalidate, "Send with Invalidate", Profile::kRfc5040, false, 0, HeaderKind::kNone, 0, false,
     true, false, InvalidateStagUse::kValid, std::nullopt, false, "RFC 5040 4.7"},
    {Opcode::kSendWithSe, "Send with Solicited Event", Profile::kRfc5040, false, 0, HeaderKind::kNone, 0, false, true,
     true, InvalidateStagUse::kZero, std::nullopt, false, "RFC 5040 4.6"},
    {Opcode::kSendWithSeAndInvalidate, "Send with Solicited Event and Invalidate", Profile::kRfc5040, false, 0,
     HeaderKind::kNone, 0, false, true, true, InvalidateStagUse::kValid, std::nullopt, false, "RFC 5040 4.7"},
    {Opcode::kTerminate, "Terminate", Profile::kRfc5040, false, 2, HeaderKind::kTerminate, 4, true, false, false,
     InvalidateStagUse::kZero, std::nullopt, false, "RFC 5040 4.8"},
    {Opcode::kImmediateData, "Immediate Data", Profile::kRfc7306, false, 0, HeaderKind::kImmediateData, 8, false, false,
     false, InvalidateStagUse::kZero, std::nullopt, false, "RFC 7306 6.2"},
    {Opcode::kImmediateDataWithSe, "Immediate Data with Solicited Event", Profile::kRfc7306, false, 0,
     HeaderKind::kImmediateData, 8, false, false, true, InvalidateStagUse::kZero, std::nullopt, false, "RFC 7306 6.2"},
    {Opcode::kAtomicRequest, "Atomic Request", Profile::kRfc7306, false, 1, HeaderKind::kAtomicRequest, 52, false,
     false, false, InvalidateStagUse::kZero, Opcode::kAtomicResponse, true, "RFC 7306 5.2.1"},
    {Opcode::kAtomicResponse, "Atomic Response", Profile::kRfc7306, false, 3, HeaderKind::kAtomicResponse, 12, false,
     false, false, InvalidateStagUse::kZero, std::nullopt, false, "RFC 7306 5.2.2"},
    {Opcode::kFlushRequest, "RDMA Flush Request", Profile::kCommit, false, 1, HeaderKind::kFlushRequest, 20, false,
     false, false, InvalidateStagUse::kOptional, Opcode::kFlushResponse, true, "COMMIT 3.1.1.1"},
    {Opcode::kFlushResponse, "RDMA Flush Response", Profile::kCommit, false, 3, HeaderKind::kNone, 0, false, false,
     false, InvalidateStagUse::kZero, std::nullopt, false, "COMMIT 3.1.1.2"},
    {Opcode::kVerifyRequest, "RDMA Verify Request", Profile::kCommit, false, 1, HeaderKind::kVerifyRequest, 16, true,
     false, false, InvalidateStagUse::kOptional, Opcode::kVerifyResponse, true, "COMMIT 3.1.2.1"},
    {Opcode::kVerifyResponse, "RDMA Verify Response", Profile::kCommit, false, 3, HeaderKind::kVerifyResponse, 0, true,
     false, false, InvalidateStagUse::kZero, std::nullopt, false, "COMMIT 3.1.2.2"},
    {Opcode::kAtomicWriteRequest, "Atomic Write Request", Profile::kCommit, false, 1, HeaderKind::kAtomicWriteRequest,
     24, false, false, false, InvalidateStagUse::kOptional, Opcode::kAtomicWriteResponse, true, "COMMIT 3.1.3.1"},
    {Opcode::kAtomicWriteResponse, "Atomic Write Response", Profile::kCommit, false, 3, HeaderKind::kNone, 0, false,
     false, false, InvalidateStagUse::kZero, std::nullopt, false, "COMMIT 3.1.3.2"},
}};

// True when `p` includes everything `min` defines (profiles are cumulative).
inline constexpr bool ProfileIncludes(Profile p, Profile min) {
  return static_cast<uint8_t>(p) >= static_cast<uint8_t>(min);
}

// The row for `opcode` (the opcode bits of the control byte) if the profile
// defines it, else nullptr (the receiver's "Unexpected OpCode" case).
inline constexpr const OpcodeInfo* FindOpcode(uint8_t opcode, Profile profile) {
  if (opcode >= kOpcodeCount) return nullptr;
  const OpcodeInfo& row = kOpcodeTable[opcode];
  return ProfileIncludes(profile, row.min_profile) ? &row : nullptr;
}

// The row of a named opcode (always exists).
inline constexpr const OpcodeInfo& InfoFor(Opcode op) { return kOpcodeTable[static_cast<uint8_t>(op)]; }

inline constexpr const char* OpcodeName(Opcode op) { return InfoFor(op).name; }

// ---------------------------------------------------------------------------
// RDMAP Control Field (RsvdULP[0]).

inline constexpr uint8_t kRdmaVersionIetf = 1;        // RV = 01b (RFC 5040 §4.1)
inline constexpr uint8_t kRdmaVersionConsortium = 0;  // RV = 00b (RDMA Consortium)

struct RdmapControl {
  uint8_t rdma_version = kRdmaVersionIetf;  // RV, 2 bits
  uint8_t rsv = 0;                          // Rsv: 2 bits (rfc5040/7306) or 1 bit (commit)
  uint8_t opcode = 0;                       // 4 bits (rfc5040/7306) or 5 bits (commit)
  friend constexpr bool operator==(const RdmapControl&, const RdmapControl&) = default;
};

// Width of the opcode field under a profile (4 or 5 bits).
inline constexpr unsigned OpcodeBits(Profile p) { return p == Profile::kCommit ? 5 : 4; }

// REQ R5040-4.1-02 RCOMMIT-3.1-01
inline constexpr RdmapControl DecodeRdmapControl(uint8_t b, Profile p) {
  if (p == Profile::kCommit) {
    return RdmapControl{static_cast<uint8_t>((b >> 6) & 3), static_cast<uint8_t>((b >> 5) & 1),
                        static_cast<uint8_t>(b & 0x1F)};
  }
  return RdmapControl{static_cast<uint8_t>((b >> 6) & 3), static_cast<uint8_t>((b >> 4) & 3),
                      static_cast<uint8_t>(b & 0xF)};
}

// Packs the fields; each is masked to its width under `p`, so any byte value
// (including a non-zero Rsv) can be produced on purpose.
inline constexpr uint8_t EncodeRdmapControl(const RdmapControl& c, Profile p) {
  if (p == Profile::kCommit) {
    return static_cast<uint8_t>((c.rdma_version & 3) << 6 | (c.rsv & 1) << 5 | (c.opcode & 0x1F));
  }
  return static_cast<uint8_t>((c.rdma_version & 3) << 6 | (c.rsv & 3) << 4 | (c.opcode & 0xF));
}

// The control byte a valid sender puts on the wire for `op` (RV=01b, Rsv=0).
inline constexpr uint8_t RdmapControlByte(Opcode op, Profile p = Profile::kCommit) {
  return EncodeRdmapControl(RdmapControl{kRdmaVersionIetf, 0, static_cast<uint8_t>(op)}, p);
}

}  // namespace rdmapct::wire
