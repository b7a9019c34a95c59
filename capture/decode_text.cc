#include "capture/decode_text.h"

#include <algorithm>

namespace rdmapct::capture {

std::string OctetText(uint64_t n) { return std::to_string(n) + (n == 1 ? " octet" : " octets"); }

std::string DirectionName(const ConnectionFraming& cf, int d) {
  if (!cf.initiator) return d == 0 ? "client -> server" : "server -> client";
  return d == *cf.initiator ? "Initiator -> Responder" : "Responder -> Initiator";
}

std::string Who(const ReassembledConnection& c, const ConnectionFraming& cf, int d) {
  const DirectionStream& ds = c.directions[d];
  return "connection " + std::to_string(c.index) + " (" + ds.source.ToString() + " -> " + ds.destination.ToString() +
         ", " + DirectionName(cf, d) + ")";
}

std::string ResyncFailedText(const DirectionFraming& f, uint64_t from, uint64_t piece_end) {
  std::string why;
  if (f.markers && !f.seq_start) {
    why = "Markers are in use but this direction's startup frame was not captured, so their positions are unknown";
  } else if (!f.decided) {
    why =
        "no FPDU with a valid CRC followed by another one (the MPA handshake was not captured; Markers or CRCs "
        "off cannot be recognised without it)";
  } else {
    why = std::string("no FPDU boundary where ") +
          (f.crc ? "the CRCs of two FPDUs in a row check" : "three FPDUs in a row have plausible headers (CRCs off)");
  }
  const uint64_t searched = std::min<uint64_t>(piece_end - from, kResyncWindow);
  return "cannot resynchronise at stream offset " + std::to_string(from) + ": " + why + " in " + OctetText(searched) +
         "; " + OctetText(piece_end - from) + " up to offset " + std::to_string(piece_end) + " not decoded";
}

void AdoptFoundFraming(ConnectionFraming& cf, DirectionFraming& f, uint64_t to) {
  if (f.decided) return;
  f.decided = true;
  f.basis = "an FPDU with a valid CRC found at stream offset " + std::to_string(to) +
            " (the MPA handshake was not captured); Markers assumed off";
  cf.iwarp = true;
}

std::string ResyncFoundText(const ResyncFound& r) {
  std::string what;
  if (r.to != r.from) {
    what = "resynchronised at stream offset " + std::to_string(r.to) + " (capture frame " + std::to_string(r.to_frame) +
           "): " + OctetText(r.to - r.from) + " from offset " + std::to_string(r.from) + " skipped";
  } else if (!r.after_error && (!r.first_piece || r.piece_offset > 0 || !r.syn)) {
    what = "decoding starts at stream offset " + std::to_string(r.to) + " on an FPDU boundary found by " +
           (r.crc ? "its CRC" : "plausible headers");
  }
  if (what.empty()) return what;
  if (r.first_piece && !r.after_error && r.piece_offset == 0 && !r.syn) {
    what += " (the capture starts after the MPA handshake)";
  } else if (!r.after_error) {
    what += " (after a gap)";
  }
  return what;
}

TruncatedText DescribeTruncated(const DirectionStream& ds, const wire::DecodeError& e, uint64_t frame,
                                bool gap_follows) {
  const std::string where = "incomplete " + std::string(e.field) + " at stream offset " + std::to_string(e.offset) +
                            " (" + OctetText(e.value) + " there, capture frame " + std::to_string(frame) + ")";
  if (gap_follows) return {IssueSeverity::kWarning, "a frame continues into octets that were not captured: " + where};
  if (ds.fin_offset) {
    return {IssueSeverity::kError, "the sender closed its stream (FIN in capture frame " +
                                       std::to_string(ds.fin_frame) + ") inside a frame: " + where};
  }
  if (ds.rst_frame != 0) {
    return {IssueSeverity::kWarning,
            "the connection was reset (capture frame " + std::to_string(ds.rst_frame) + ") inside a frame: " + where};
  }
  return {IssueSeverity::kWarning, "the capture ends inside a frame: " + where};
}

}  // namespace rdmapct::capture
