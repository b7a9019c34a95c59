// MPA Request and Reply Frames (RFC 5044 §7.1.1, Figure 8) with the RFC 6581
// enhanced connection establishment data (RFC 6581 §6, §9), and the pure
// functions that derive the negotiated connection parameters from them.
//
// Layout (decisions D-CONV, "MPA"):
//   octets 0..15  Key  "MPA ID Req Frame" / "MPA ID Rep Frame"
//   octet  16     M (0x80) C (0x40) R (0x20) S (0x10, RFC 6581) Res (0x0F)
//   octet  17     Rev
//   octets 18..19 PD_Length (big-endian)
//   octets 20..   Private Data (PD_Length octets, at most 512)
// With Rev >= 2 and S = 1 the first 4 Private Data octets are the RFC 6581
// word A|B|IRD|C|D|ORD (big-endian); the rest is the ULP's Private Data.
//
// Policy stays with the caller: the decoder reports Rev as a value (0, 1, 2
// and anything else), does not check Res (R5044-7.1.1-16, R6581-6-03) and
// does not check R in a Request (R5044-7.1.1-14). It rejects only what makes
// a frame unparseable: truncation, a wrong Key, PD_Length > 512.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "reference/wire/bytes.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

inline constexpr std::size_t kMpaKeySize = 16;
inline constexpr std::size_t kMpaStartupHeaderSize = 20;  // Key + flags + Rev + PD_Length
inline constexpr std::size_t kMpaMaxPrivateDataLength = 512;
inline constexpr std::size_t kMpaEnhancedDataSize = 4;

// "MPA ID Req Frame" and "MPA ID Rep Frame" (R5044-7.1.1-02, R5044-7.1.1-04).
inline constexpr std::array<uint8_t, kMpaKeySize> kMpaRequestKey = {0x4D, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
                                                                    0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6D, 0x65};
inline constexpr std::array<uint8_t, kMpaKeySize> kMpaReplyKey = {0x4D, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
                                                                  0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6D, 0x65};

// Octet 16 bits.
inline constexpr uint8_t kMpaFlagM = 0x80;
inline constexpr uint8_t kMpaFlagC = 0x40;
inline constexpr uint8_t kMpaFlagR = 0x20;
inline constexpr uint8_t kMpaFlagS = 0x10;
inline constexpr uint8_t kMpaResMask = 0x0F;

// RFC 6581 §9.1: 0x3FFF = "automatic IRD/ORD negotiation not desired".
inline constexpr uint16_t kIrdOrdNotNegotiated = 0x3FFF;
inline constexpr uint16_t kIrdOrdMask = 0x3FFF;

// RFC 6581 §9 enhanced RDMA connection establishment data.
// Flag letters as in RFC 6581 §9 (the catalog row R6581-9-03 agrees):
// B = zero-length FULPDU (Send) RTR, C = zero-length RDMA Write RTR,
// D = zero-length RDMA Read RTR.
struct EnhancedIrdOrd {
  bool peer_to_peer = false;  // A: 1 peer-to-peer, 0 client-server
  bool send_rtr = false;      // B
  uint16_t ird = 0;           // 14 bits
  bool write_rtr = false;     // C
  bool read_rtr = false;      // D
  uint16_t ord = 0;           // 14 bits

  friend bool operator==(const EnhancedIrdOrd&, const EnhancedIrdOrd&) = default;
};

// REQ R6581-9-01: network byte order, IRD and ORD as 14-bit unsigned integers.
// A = w>>31, B = (w>>30)&1, IRD = (w>>16)&0x3FFF, C = (w>>15)&1, D = (w>>14)&1,
// ORD = w&0x3FFF. Encoding masks IRD/ORD to 14 bits.
uint32_t EncodeEnhancedWord(const EnhancedIrdOrd& e);
EnhancedIrdOrd DecodeEnhancedWord(uint32_t w);

struct MpaStartupFrame {
  bool is_reply = false;         // Key: Reply ("MPA ID Rep Frame") or Request
  bool marker_required = false;  // M
  bool crc_required = false;     // C
  bool reject = false;           // R (Reply: Rejected Connection; Request: not checked)
  bool enhanced = false;         // S (RFC 6581), as found in octet 16
  uint8_t res = 0;               // Res bits 0x0F; zero on send unless a tester sets them
  uint8_t revision = 1;          // Rev
  // Decoded only when Rev >= 2 and S = 1 (decisions D-H3, D-H8); with S = 1 and
  // Rev < 2 the 4 octets stay in private_data (an RFC 5044 receiver's view).
  // On encode it is written in front of private_data whenever present,
  // independently of `enhanced`, so a tester can build inconsistent frames.
  std::optional<EnhancedIrdOrd> enhanced_data;
  Bytes private_data;  // the ULP's Private Data (after the enhanced word)
  // Encode only: write this PD_Length instead of the true length (to build a
  // frame whose PD_Length disagrees with its Private Data, R5044-7.1.1-22).
  std::optional<uint16_t> pd_length_override;

  // Frame size on the wire (20 + PD_Length as encoded, override ignored).
  std::size_t EncodedSize() const;
};

enum class MpaFrameKind : uint8_t { kRequest, kReply, kEither };

struct MpaFrameDecodeOptions {
  MpaFrameKind expect = MpaFrameKind::kEither;
  std::size_t max_private_data = kMpaMaxPrivateDataLength;  // R5044-7.1.1-22
};

// Octets a complete frame needs, from what has arrived so far: 20 while
// fewer than 20 octets are present, then 20 + PD_Length. A streaming caller
// waits until it has that many, then calls DecodeMpaStartupFrame. Octets
// after the frame are the first FPDU octets (not Private Data, R5044-7.1.2-R09c).
std::size_t MpaStartupFrameLength(ByteSpan prefix);

// Decodes the frame at the start of `data`. Errors (offsets from data[0]):
//   kTruncated   "Key" / "M C R S Res" / "Rev" / "PD_Length" / "Private Data"
//                (value = octets available from that field on);
//   kBadKey      field names the expected key; offset = first differing key
//                octet, value = that octet. Checked on any prefix, so a
//                wrong key is reported before all 16 octets have arrived;
//   kTooLong     "PD_Length", offset 18, value = PD_Length (> max_private_data),
//                reported as soon as the 20-octet header is present;
//   kInvalidValue "PD_Length" when Rev >= 2, S = 1 and PD_Length < 4
//                (R6581-6-08: the Private Data must begin with the enhanced data).
Result<MpaStartupFrame> DecodeMpaStartupFrame(ByteSpan data, const MpaFrameDecodeOptions& options = {});

// Byte-exact encoder: Key from is_reply, octet 16 from the flags and `res`
// (masked to 0x0F), Rev, PD_Length, enhanced word, Private Data. Private Data
// beyond 65535 octets cannot be described by PD_Length and is cut there.
Bytes EncodeMpaStartupFrame(const MpaStartupFrame& frame);
void AppendMpaStartupFrame(Bytes& out, const MpaStartupFrame& frame);

// ---- negotiation (pure functions of the two frames) -------------------------

struct MpaNegotiation {
  bool crc = false;                             // both directions (R5044-7.1.1-11/12)
  bool markers_initiator_to_responder = false;  // Reply's M (R5044-7.1.1-07)
  bool markers_responder_to_initiator = false;  // Request's M (R5044-7.1.1-06)
  bool rejected = false;                        // Reply R = 1: MPA exits (R5044-7.1.2-R03c)
};

MpaNegotiation NegotiateMpa(const MpaStartupFrame& request, const MpaStartupFrame& reply);

// RFC 6581 §9.1/§9.2 outcome. `applies` is false unless both frames carry
// decoded enhanced data (Rev >= 2, S = 1).
struct IrdOrdOutcome {
  bool applies = false;
  // Values after negotiation. The responder's are the ones in its Reply. The
  // initiator raises its IRD to at least the responder ORD and lowers its ORD
  // to at most the responder IRD (R6581-9.1-09); 0x3FFF from the responder
  // leaves the initiator's value unchanged (R6581-9.1-15, R6581-9.1-17).
  uint16_t initiator_ird = 0;
  uint16_t initiator_ord = 0;
  uint16_t responder_ird = 0;
  uint16_t responder_ord = 0;
  // The initiator has to grow its IRD beyond what it offered; if it cannot,
  // it sends TERM 0x2/0x0/0x06 (R6581-9.1-10/11).
  bool initiator_ird_increased = false;
  // Reply violations a checker reports.
  bool responder_ord_exceeds_initiator_ird = false;  // R6581-9.1-06
  bool responder_ird_not_3fff = false;               // R6581-9.1-14 (initiator ORD 0x3FFF)
  bool responder_ord_not_3fff = false;               // R6581-9.1-16 (initiator IRD 0x3FFF)
  // §9.2: peer-to-peer only if the Request has A = 1 (then the Reply must too,
  // R6581-9.2-05); with A = 0 the B/C/D flags are ignored (R6581-9.2-17).
  bool peer_to_peer = false;
  bool reply_a_mismatch = false;  // R6581-9.2-05 / R6581-9.2-15
  // RTR types both requested and offered; the initiator must send one of
  // them (R6581-9.2-11) or, if it can generate none of the responder's
  // offers, TERM 0x2/0x0/0x07 (R6581-9.2-12/13).
  bool rtr_send = false;
  bool rtr_write = false;
  bool rtr_read = false;
  bool reply_offers_no_rtr = false;  // R6581-9.2-08 / R6581-9.2-10
};

IrdOrdOutcome NegotiateIrdOrd(const MpaStartupFrame& request, const MpaStartupFrame& reply);

}  // namespace rdmapct::wire
