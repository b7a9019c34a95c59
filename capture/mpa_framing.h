// How the MPA layer of a reassembled TCP connection is framed: which side
// is the MPA Initiator, what the Request and Reply Frames negotiated (CRC
// and Markers per direction, RFC 5044 §7.1.1), and, where the handshake
// was not captured or a gap broke the stream, where FPDUs start again.
//
// - A direction whose stream starts with the key "MPA ID Req Frame" is the
//   Initiator's, "MPA ID Rep Frame" the Responder's, on any TCP port.
// - With both frames: CRCs on if either side asked (C bit); Markers in a
//   direction if its receiver asked (the M bit of the *other* direction's
//   frame). With one frame only, what it fixes is used and the rest is
//   found by trying the first FPDUs under each possibility.
// - Resynchronising (no handshake, after a gap, after an undecodable
//   stretch): with CRCs, an offset is an FPDU boundary when the FPDU there
//   and the next one check (CRC, Markers, DDP/RDMAP versions); with Markers
//   and a known SeqStart the Markers' FPDUPTRs give the candidates; with
//   CRCs known to be off, three FPDUs in a row with plausible DDP and RDMAP
//   headers are required. Without the handshake Markers cannot be placed
//   (SeqStart is unknown), and a CRC-less stream is not guessed at.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "capture/tcp_reassembly.h"
#include "reference/wire/mpa.h"
#include "reference/wire/profile.h"

namespace rdmapct::capture {

// The MPA Request or Reply Frame at the start of a direction's stream.
struct StartupFrameSeen {
  bool present = false;  // the stream starts with "MPA ID Re" (or a 9+ octet prefix of a key)
  bool is_reply = false;
  std::optional<wire::MpaStartupFrame> frame;  // decoded (empty: `error`)
  std::optional<wire::DecodeError> error;
  uint64_t length = 0;  // octets of the frame (when decoded)
};

struct DirectionFraming {
  bool crc = true;
  bool markers = false;
  bool decided = false;  // false: no framing found; the direction is not decoded
  std::string basis;     // why: "negotiated", "the Request's C bit; Markers found by trying", ...
  // Stream offset of SeqStart (the octet after this direction's startup
  // frame): known only when that frame was captured. Markers need it.
  std::optional<uint64_t> seq_start;
};

struct ConnectionFraming {
  bool iwarp = false;            // a startup frame was seen, or FPDUs were found
  std::optional<int> initiator;  // index of the direction the MPA Initiator sends
  std::array<StartupFrameSeen, 2> startup;
  std::optional<wire::MpaNegotiation> negotiation;  // both frames decoded
  std::array<DirectionFraming, 2> directions;
  std::string note;  // a warning about the handshake (empty: none)
};

// The startup frame at stream offset 0 of `d`, if any.
StartupFrameSeen FindStartupFrame(const DirectionStream& d);

// Roles, negotiation and framing of both directions of `c`.
ConnectionFraming DetermineFraming(const ReassembledConnection& c, wire::Profile profile);

// Octets searched for an FPDU boundary: a little more than the largest FPDU
// (ULPDU_Length 65535 + PAD + CRC), so a boundary of a valid stream is in range.
inline constexpr std::size_t kResyncWindow = 2 + 65535 + 3 + 4 + 512;

// The first offset in [from, from + kResyncWindow) of `piece` (an index
// into piece.octets) where FPDUs start under `framing`; nullopt when there
// is none or the framing cannot be checked (CRCs off without Markers
// and not decided, Markers without SeqStart).
std::optional<std::size_t> FindFpduBoundary(const StreamPiece& piece, std::size_t from, const DirectionFraming& framing,
                                            wire::Profile profile);

}  // namespace rdmapct::capture
