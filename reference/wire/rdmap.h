// RDMAP message codecs: the RDMAP part of every message of RFC 5040,
// RFC 7306 and draft-talpey-rdma-commit-01, on top of the DDP codec.
//
// Decoding is syntactic. DecodeRdmapSegment() reports what is on the wire
// (unknown opcodes, wrong T flags, reserved bits, odd lengths) and fails only
// when the octets run out; the state machine decides which Terminate a frame
// earns. Header views may point into the decoded buffer (Verify hash values).
//
// Encoding is byte-exact and every field is overridable: Make*() returns a
// valid RdmapSegment for each message, the caller changes any field (DDP
// control bits, RsvdULP, QN, MSN, MO, header fields, payload) and
// EncodeSegment() writes exactly that. The conformance suite and the fuzzer
// build malformed frames this way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>

#include "reference/wire/bytes.h"
#include "reference/wire/ddp.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/profile.h"
#include "reference/wire/result.h"
#include "reference/wire/terminate_codes.h"

namespace rdmapct::wire {

// ---------------------------------------------------------------------------
// RDMA Read Request Header (RFC 5040 §4.4, Figure 6): 28 octets.
inline constexpr std::size_t kReadRequestHeaderLength = 28;
struct ReadRequestHeader {
  uint32_t sink_stag = 0;             // Data Sink STag (SinkSTag)
  uint64_t sink_tagged_offset = 0;    // Data Sink Tagged Offset (SinkTO)
  uint32_t read_message_size = 0;     // RDMA Read Message Size (RDMARDSZ)
  uint32_t source_stag = 0;           // Data Source STag (SrcSTag)
  uint64_t source_tagged_offset = 0;  // Data Source Tagged Offset (SrcTO)
  friend bool operator==(const ReadRequestHeader&, const ReadRequestHeader&) = default;
};

// ---------------------------------------------------------------------------
// Terminate Header (RFC 5040 §4.8, Figures 7-8).
//
// Word 0 (big-endian): Layer(4) | EType(4) | Error Code(8) | M | D | R | Reserved(13).
// Then DDP Segment Length (2), Terminated DDP Header (14 if its T bit is set,
// else 18), Terminated RDMA Header (28).
//
// Decision (decisions D-A4, decision 5.2): RFC 5040 §4.8 makes each part
// present only when its bit says so ("bit-driven" form), while §7.1 says
// unused headers are "set to zero", which implementations read as a fixed
// 52-octet layout with zero-filled areas (Linux siw). The decoder accepts
// both and reports which it saw:
//   kBitDriven: 4 + [2 if M or D] + [14/18 if D] + [28 if R] octets. The
//     Segment Length is also taken when only M is set (M says it is valid;
//     Linux irdma sends it that way).
//   kFixed: exactly 52 octets: Segment Length at 4, an 18-octet DDP header
//     area at 6 (a tagged echo uses its first 14 octets), the 28-octet RDMA
//     header area at 24, whatever the bits say.
// When both readings give the same length (D=1, R=1, untagged echo: 52) the
// form is kBitDriven; the two are byte-identical then. Octets beyond the
// recognised form are left for the caller (RdmapMessageView::ulp_payload).
// M/D/R disagreeing with presence is reported, never rejected (4.8 SHOULD).
enum class TerminateForm : uint8_t { kBitDriven, kFixed };

inline constexpr std::size_t kTerminateControlLength = 4;
inline constexpr std::size_t kTerminateFixedLength = 52;
inline constexpr std::size_t kTerminatedRdmaHeaderLength = 28;

struct TerminateHeader {
  TerminateCode code;     // Layer, EType, Error Code
  bool m = false;         // DDP Segment Length valid
  bool d = false;         // DDP Header included
  bool r = false;         // RDMAP Header included
  uint16_t reserved = 0;  // 13 bits, MUST be 0 on transmit, ignored on receive
  TerminateForm form = TerminateForm::kBitDriven;
  // Presence on the wire. kBitDriven: what the encoder writes / what the
  // decoder found (derived from M/D/R). kFixed: always true (the areas exist).
  bool has_segment_length = false;
  bool has_ddp_header = false;
  bool has_rdma_header = false;
  uint16_t ddp_segment_length = 0;  // DDP Segment Length
  // Terminated DDP Header (its T bit selects 14/18 octets). All-zero by
  // default so that a kFixed encoding of an absent header is zero-filled.
  DdpSegmentHeader terminated_ddp_header{.tagged = false, .last = false, .ddp_version = 0};
  uint32_t fixed_ddp_area_tail = 0;          // kFixed + tagged echo: octets 14-17 of the area
  ReadRequestHeader terminated_rdma_header;  // Terminated RDMA Header
  std::size_t encoded_length = 0;            // set by the decoder: octets consumed
  friend bool operator==(const TerminateHeader&, const TerminateHeader&) = default;
};

// Octets EncodeTerminateHeader() will write for `h`.
std::size_t TerminateHeaderLength(const TerminateHeader& h);

// A consistent Terminate: M and D (and the Segment Length) when
// `terminated_ddp` is given, R when `terminated_rdma` is given.
TerminateHeader MakeTerminateHeader(TerminateCode code, const DdpSegmentHeader* terminated_ddp,
                                    uint16_t ddp_segment_length, const ReadRequestHeader* terminated_rdma,
                                    TerminateForm form = TerminateForm::kBitDriven);

// ---------------------------------------------------------------------------
// RFC 7306.
inline constexpr std::size_t kImmediateDataHeaderLength = 8;
struct ImmediateDataHeader {
  uint64_t immediate_data = 0;  // the 8 octets, loaded big-endian (byte-exact round trip)
  friend bool operator==(const ImmediateDataHeader&, const ImmediateDataHeader&) = default;
};

enum class AtomicOpcode : uint8_t { kFetchAdd = 0x0, kCmpSwap = 0x2 };  // 0x1 Reserved

inline constexpr std::size_t kAtomicRequestHeaderLength = 52;
struct AtomicRequestHeader {                 // RFC 7306 Figure 4
  uint32_t reserved = 0;                     // Reserved (Not Used), 28 bits
  uint8_t atomic_opcode = 0;                 // AOpCode, 4 bits
  uint32_t request_identifier = 0;           // Request Identifier
  uint32_t remote_stag = 0;                  // Remote STag
  uint64_t remote_tagged_offset = 0;         // Remote Tagged Offset
  uint64_t add_or_swap_data = 0;             // Add or Swap Data
  uint64_t add_or_swap_mask = ~uint64_t{0};  // Add or Swap Mask
  uint64_t compare_data = 0;                 // Compare Data
  uint64_t compare_mask = ~uint64_t{0};      // Compare Mask
  friend bool operator==(const AtomicRequestHeader&, const AtomicRequestHeader&) = default;
};

inline constexpr std::size_t kAtomicResponseHeaderLength = 12;  // Figure 6 (decisions D-C1)
struct AtomicResponseHeader {
  uint32_t original_request_identifier = 0;  // Original Request Identifier
  uint64_t original_remote_data_value = 0;   // Original Remote Data Value
  friend bool operator==(const AtomicResponseHeader&, const AtomicResponseHeader&) = default;
};

// ---------------------------------------------------------------------------
// draft-talpey-rdma-commit-01 §3.1.
inline constexpr uint32_t kFlushToPersistence = 0x01;       // P
inline constexpr uint32_t kFlushToGlobalVisibility = 0x02;  // G

inline constexpr std::size_t kFlushRequestHeaderLength = 20;
struct FlushRequestHeader {
  uint32_t data_sink_stag = 0;                             // Data Sink STag
  uint32_t data_sink_length = 0;                           // Data Sink Length (32 bits per the figure)
  uint64_t data_sink_tagged_offset = 0;                    // Data Sink Tagged Offset
  uint32_t flush_disposition_flags = kFlushToPersistence;  // Flush Disposition Flags
  friend bool operator==(const FlushRequestHeader&, const FlushRequestHeader&) = default;
};

inline constexpr std::size_t kVerifyRequestHeaderLength = 16;  // + optional Hash Value
struct VerifyRequestHeader {
  uint32_t data_sink_stag = 0;
  uint32_t data_sink_length = 0;
  uint64_t data_sink_tagged_offset = 0;
  ByteSpan hash_value;  // optional, variable: every octet after the 16 (not owned)
};

struct VerifyResponseHeader {
  ByteSpan hash_value;  // the whole payload (not owned)
};

inline constexpr std::size_t kAtomicWriteRequestHeaderLength = 24;
struct AtomicWriteRequestHeader {
  uint32_t data_sink_stag = 0;
  uint32_t data_sink_length = 8;  // MUST be 8
  uint64_t data_sink_tagged_offset = 0;
  uint64_t data = 0;  // Data, big-endian on the wire
  friend bool operator==(const AtomicWriteRequestHeader&, const AtomicWriteRequestHeader&) = default;
};

// Any RDMAP header; std::monostate = no RDMAP header.
using RdmapHeader = std::variant<std::monostate, ReadRequestHeader, TerminateHeader, ImmediateDataHeader,
                                 AtomicRequestHeader, AtomicResponseHeader, FlushRequestHeader, VerifyRequestHeader,
                                 VerifyResponseHeader, AtomicWriteRequestHeader>;

// ---------------------------------------------------------------------------
// Per-header codecs. `data` starts at the first RDMAP header octet; offsets in
// errors are base_offset + position. Truncation errors name the RDMAP field
// ("SinkSTag", "RDMARDSZ", "Terminate Control", "Terminated DDP Header",
// "AOpCode", "Compare Mask", "Data Sink Length", ...). Trailing octets are
// not consumed (except Verify hash values, which take all of them).
Result<ReadRequestHeader> DecodeReadRequestHeader(ByteSpan data, std::size_t base_offset = 0);
Result<TerminateHeader> DecodeTerminateHeader(ByteSpan data, std::size_t base_offset = 0);
Result<ImmediateDataHeader> DecodeImmediateDataHeader(ByteSpan data, std::size_t base_offset = 0);
Result<AtomicRequestHeader> DecodeAtomicRequestHeader(ByteSpan data, std::size_t base_offset = 0);
Result<AtomicResponseHeader> DecodeAtomicResponseHeader(ByteSpan data, std::size_t base_offset = 0);
Result<FlushRequestHeader> DecodeFlushRequestHeader(ByteSpan data, std::size_t base_offset = 0);
Result<VerifyRequestHeader> DecodeVerifyRequestHeader(ByteSpan data, std::size_t base_offset = 0);
Result<VerifyResponseHeader> DecodeVerifyResponseHeader(ByteSpan data, std::size_t base_offset = 0);
Result<AtomicWriteRequestHeader> DecodeAtomicWriteRequestHeader(ByteSpan data, std::size_t base_offset = 0);

void EncodeReadRequestHeader(const ReadRequestHeader& h, Bytes& out);
void EncodeTerminateHeader(const TerminateHeader& h, Bytes& out);
void EncodeImmediateDataHeader(const ImmediateDataHeader& h, Bytes& out);
void EncodeAtomicRequestHeader(const AtomicRequestHeader& h, Bytes& out);
void EncodeAtomicResponseHeader(const AtomicResponseHeader& h, Bytes& out);
void EncodeFlushRequestHeader(const FlushRequestHeader& h, Bytes& out);
void EncodeVerifyRequestHeader(const VerifyRequestHeader& h, Bytes& out);
void EncodeVerifyResponseHeader(const VerifyResponseHeader& h, Bytes& out);
void EncodeAtomicWriteRequestHeader(const AtomicWriteRequestHeader& h, Bytes& out);

// Dispatch on the kind / the variant alternative. Decoding kNone yields
// monostate and consumes nothing. `consumed` receives the header length.
Result<RdmapHeader> DecodeRdmapHeader(HeaderKind kind, ByteSpan data, std::size_t base_offset, std::size_t& consumed);
void EncodeRdmapHeader(const RdmapHeader& h, Bytes& out);  // monostate writes nothing

// RDMAP header + ULP payload: the DDP message body an untagged message is
// segmented from (ddp_segmentation.h).
Bytes EncodeRdmapMessageBody(const RdmapHeader& h, ByteSpan ulp_payload);

// ---------------------------------------------------------------------------
// One decoded DDP segment seen as RDMAP.
struct RdmapMessageView {
  DdpSegmentView ddp;                       // DDP header + DDP payload
  RdmapControl ctrl;                        // RsvdULP[0] decoded under the profile
  const OpcodeInfo* opcode_info = nullptr;  // nullptr when the profile does not define it
  bool opcode_known = false;                // opcode_info != nullptr
  bool tagged_flag_matches = false;         // DDP T flag == the opcode's (false if unknown)
  // True when this segment carries the RDMAP header: known opcode with a
  // header, T flag as the table says, and MO = 0 (the header is at the start
  // of the DDP message, RFC 5040 §4.4/§4.8).
  bool header_present = false;
  RdmapHeader header;                  // monostate unless header_present
  ByteSpan ulp_payload;                // DDP payload after the RDMAP header
  std::size_t ulp_payload_offset = 0;  // absolute offset of ulp_payload[0]

  Opcode opcode() const { return static_cast<Opcode>(ctrl.opcode); }  // valid if opcode_known
  // Untagged RsvdULP octets 2-5 (Send with Invalidate's Invalidate STag).
  uint32_t invalidate_stag() const { return ddp.header.invalidate_stag; }
};

// REQ R5040-4-01 R5040-4.1-01 R7306-4-01 RCOMMIT-3.1-01
// Decodes DDP, then the RDMAP Control Field under `profile`, then the RDMAP
// header chosen by the opcode. Errors only on truncation (of the DDP header or
// of the RDMAP header field that runs out), with absolute offsets. A caller
// that must answer a truncated RDMAP header with a Terminate can still get
// the DDP header to echo from DecodeDdpSegment(). Note (decisions D-D1): under
// rfc5040/rfc7306 a commit Atomic Write Response (octet 0x51) reads as a Read
// Request with Rsv=01b and fails here with kTruncated "SinkSTag".
Result<RdmapMessageView> DecodeRdmapSegment(ByteSpan ulpdu, Profile profile, std::size_t base_offset = 0);

// ---------------------------------------------------------------------------
// Encoding complete segments.

// Everything that goes into one DDP segment. The RDMAP Control Field is
// ddp.rsvd_ulp0 (set it raw, or with SetRdmapControl). Spans are not owned.
struct RdmapSegment {
  DdpSegmentHeader ddp;
  RdmapHeader header;    // written right after the DDP header
  ByteSpan ulp_payload;  // written after the RDMAP header
};

void SetRdmapControl(RdmapSegment& seg, const RdmapControl& ctrl, Profile profile);

// DDP header | RDMAP header | ULP payload, exactly as given.
void EncodeSegment(const RdmapSegment& seg, Bytes& out);
Bytes EncodeSegment(const RdmapSegment& seg);

// The segment a view was decoded from (EncodeSegment(ToSegment(v)) returns
// the decoded octets for every frame this codec produces).
RdmapSegment ToSegment(const RdmapMessageView& v);

// A valid single-segment default for `op`: T flag and QN from the table,
// L=1, DV=1, RV=01b, Rsv=0, MSN=1, MO=0, TO=0, STag=0, no header, no payload.
RdmapSegment MakeSegment(Opcode op);

// Valid defaults per message (L=1, MO=0; change fields afterwards as needed).
RdmapSegment MakeRdmaWrite(uint32_t stag, uint64_t tagged_offset, ByteSpan payload);
RdmapSegment MakeReadRequest(uint32_t msn, const ReadRequestHeader& h);
RdmapSegment MakeReadResponse(uint32_t stag, uint64_t tagged_offset, ByteSpan payload);
// `op` is one of the four Send variants; invalidate_stag goes to RsvdULP octets 2-5.
RdmapSegment MakeSend(Opcode op, uint32_t msn, ByteSpan payload, uint32_t invalidate_stag = 0);
RdmapSegment MakeTerminate(uint32_t msn, const TerminateHeader& h);
RdmapSegment MakeImmediateData(uint32_t msn, uint64_t immediate_data, bool solicited_event = false);
RdmapSegment MakeAtomicRequest(uint32_t msn, const AtomicRequestHeader& h);
RdmapSegment MakeAtomicResponse(uint32_t msn, const AtomicResponseHeader& h);
RdmapSegment MakeFlushRequest(uint32_t msn, const FlushRequestHeader& h);
RdmapSegment MakeFlushResponse(uint32_t msn);
RdmapSegment MakeVerifyRequest(uint32_t msn, const VerifyRequestHeader& h);
RdmapSegment MakeVerifyResponse(uint32_t msn, ByteSpan hash_value);
RdmapSegment MakeAtomicWriteRequest(uint32_t msn, const AtomicWriteRequestHeader& h);
RdmapSegment MakeAtomicWriteResponse(uint32_t msn);

// Terminate Control (RFC 5040 Figure 8, R5040-4.8-02) as a little-endian
// host lays out the bit-fields `layer:4, etype:4, ecode:8, m:1, d:1, r:1,
// reserved:13` of one 32-bit word, as Linux siw 6.1 does on x86
// (docs/reports/siw S1): Layer and EType trade nibbles, and the third
// octet's bits come in reverse order (M, D, R in 0x01, 0x02, 0x04 instead of
// 0x80, 0x40, 0x20). The mapping is its own inverse: it turns either layout
// into the other. Does nothing unless `ulpdu` is an untagged Terminate
// segment under `profile` long enough to hold the control field; true if
// it changed it.
bool SwapTerminateControlBitfieldOrder(std::span<uint8_t> ulpdu, Profile profile);

}  // namespace rdmapct::wire
