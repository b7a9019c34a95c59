// The texts the capture decoders share: the batch decoder behind
// DecodeCaptureFile (capture_decode.cc) and the streaming one behind
// StreamCaptureFile (capture_stream.cc) word their warnings alike.
#pragma once

#include <cstdint>
#include <string>

#include "capture/capture_decode.h"
#include "capture/mpa_framing.h"
#include "capture/tcp_reassembly.h"
#include "reference/wire/result.h"

namespace rdmapct::capture {

// "1 octet", "5 octets".
std::string OctetText(uint64_t n);

// "Initiator -> Responder", or "client -> server" without a handshake.
std::string DirectionName(const ConnectionFraming& cf, int d);

// "connection 0 (10.0.0.1:49152 -> 10.0.0.2:5040, Initiator -> Responder)"
std::string Who(const ReassembledConnection& c, const ConnectionFraming& cf, int d);

// No FPDU boundary in [from, piece_end): the warning, without Who().
std::string ResyncFailedText(const DirectionFraming& f, uint64_t from, uint64_t piece_end);

// An FPDU boundary found at `to` (searched from `from`): marks the direction
// decided (and the connection iWARP) when only this showed its framing.
void AdoptFoundFraming(ConnectionFraming& cf, DirectionFraming& f, uint64_t to);

// Where the search for a boundary started and ended: the warning to give
// (empty: none). `first_piece`: the piece is the first of its direction.
struct ResyncFound {
  uint64_t from = 0, to = 0, to_frame = 0;
  bool after_error = false, first_piece = true, syn = false, crc = true;
  uint64_t piece_offset = 0;
};
std::string ResyncFoundText(const ResyncFound& r);

// A piece of the stream ends inside a frame (e: the kTruncated error).
// `gap_follows`: octets after it were not captured.
struct TruncatedText {
  IssueSeverity severity = IssueSeverity::kWarning;
  std::string message;  // without Who()
};
TruncatedText DescribeTruncated(const DirectionStream& ds, const wire::DecodeError& e, uint64_t frame,
                                bool gap_follows);

}  // namespace rdmapct::capture
