// TCP reassembly (capture/tcp_reassembly.h) on structured segments.
//
// Input layout:
//   octet 0   out-of-order cap: 0 -> 16 MiB, 1 -> 8, 2 -> 64, 3 -> 1024 octets
//             (low two bits); 0x04: the client's ISN is near 2^32 (its
//             sequence numbers wrap)
//   records, each:
//     octet  flags: 0x01 server -> client (else client -> server), 0x02 SYN,
//            0x04 FIN, 0x08 RST, 0x10 ACK, 0x20 the second client port
//            (another connection), 0x40 a new ISN (the SYN starts anew)
//     2 octets  sequence offset from the sender's ISN + 1
//     2 octets  acknowledgement offset from the peer's ISN + 1
//     1 octet   payload length, then the payload (one octet repeated
//               after the first 8, so long segments stay cheap to write)
// Oracles:
//  - never more octets out than in, per direction;
//  - pieces ascend without overlapping; the gaps list the holes between
//    them, each from the end of a piece to the start of the next;
//  - frame marks ascend, lie inside pieces, name a frame of that direction
//    and every piece starts with a known frame;
//  - every octet out is the octet its frame carried at that sequence number
//    (the frame map and the stream agree with the input);
//  - no more than the cap waits out of order after any segment;
//  - notes are single lines, at most kMaxStoredNotes, naming real frames.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "capture/tcp_reassembly.h"
#include "fuzz/support.h"

namespace {

using namespace rdmapct::capture;
using rdmapct::fuzz::InputSplitter;
using rdmapct::wire::Bytes;

struct Sent {
  std::size_t connection = 0;
  int direction = 0;
  uint32_t seq = 0;  // of the first payload octet
  Bytes payload;
};

IpAddress Address(uint8_t last) { return IpAddress{4, {10, 0, 0, last}}; }

void CheckDirection(const DirectionStream& d, std::size_t c, int dir, const std::map<uint64_t, Sent>& sent) {
  FUZZ_CHECK(d.octets_out <= d.octets_in);
  uint64_t total = 0;
  for (std::size_t i = 0; i < d.pieces.size(); ++i) {
    const StreamPiece& p = d.pieces[i];
    FUZZ_CHECK(!p.octets.empty());
    if (i > 0) FUZZ_CHECK(p.offset > d.pieces[i - 1].end());
    total += p.octets.size();
    FUZZ_CHECK(d.FrameAt(p.offset) != 0);
  }
  FUZZ_CHECK(total == d.octets_out);
  // Holes between pieces are gaps (a gap may also end the stream).
  std::size_t g = 0;
  for (std::size_t i = 0; i + 1 < d.pieces.size(); ++i) {
    while (g < d.gaps.size() && d.gaps[g].offset < d.pieces[i].end()) ++g;
    FUZZ_CHECK(g < d.gaps.size() && d.gaps[g].offset == d.pieces[i].end() &&
               d.gaps[g].offset + d.gaps[g].length == d.pieces[i + 1].offset);
  }
  for (std::size_t i = 0; i < d.frames.size(); ++i) {
    const FrameMark& m = d.frames[i];
    if (i > 0) FUZZ_CHECK(m.offset > d.frames[i - 1].offset);
    auto it = sent.find(m.frame);
    FUZZ_CHECK(it != sent.end() && it->second.connection == c && it->second.direction == dir);
  }
  // Every octet is what its frame carried at that sequence number.
  for (const StreamPiece& p : d.pieces) {
    for (std::size_t k = 0; k < p.octets.size(); ++k) {
      const uint64_t offset = p.offset + k;
      const Sent& s = sent.at(d.FrameAt(offset));
      const uint32_t index = d.first_seq + static_cast<uint32_t>(offset) - s.seq;
      FUZZ_CHECK(index < s.payload.size() && s.payload[index] == p.octets[k]);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  InputSplitter in(data, size);
  const uint8_t config = in.U8();
  static constexpr std::size_t kCaps[] = {std::size_t{16} << 20, 8, 64, 1024};
  ReassemblyOptions options;
  options.max_out_of_order = kCaps[config & 3];
  TcpReassembler r(options);
  const Endpoint server{Address(2), 5040};
  const Endpoint clients[2] = {{Address(1), 49152}, {Address(1), 49153}};
  uint32_t isn[2][2] = {{(config & 4) ? 0xFFFFFF00u : 1000u, 5000u}, {7000u, 9000u}};  // [port][direction]
  std::map<uint64_t, Sent> sent;
  uint64_t frame = 0;
  while (!in.empty() && frame < 4096) {
    const uint8_t flags = in.U8();
    const uint16_t seq_off = in.U16();
    const uint16_t ack_off = in.U16();
    const std::size_t length = in.U8();
    Bytes payload;
    for (std::size_t k = 0; k < length && !in.empty(); ++k) payload.push_back(k < 8 ? in.U8() : payload[k % 8]);
    const int dir = flags & 0x01;
    const int port = (flags >> 5) & 1;
    if (flags & 0x40) isn[port][dir] += 0x10000000u;  // a fresh ISN
    TcpSegment s;
    s.frame = ++frame;
    s.source = dir == 0 ? clients[port] : server;
    s.destination = dir == 0 ? server : clients[port];
    s.flags = static_cast<uint8_t>(((flags & 0x02) ? kTcpSyn : 0) | ((flags & 0x04) ? kTcpFin : 0) |
                                   ((flags & 0x08) ? kTcpRst : 0) | ((flags & 0x10) ? kTcpAck : 0));
    const bool syn = (flags & 0x02) != 0;
    s.seq = syn ? isn[port][dir] : isn[port][dir] + 1 + seq_off;
    s.ack = isn[port][1 - dir] + 1 + ack_off;
    s.payload = payload;
    r.Add(s);
    // Which connection it went to: the last one with this client port.
    std::size_t c = 0;
    for (const ReassembledConnection& rc : r.connections()) {
      if (rc.client == clients[port] || rc.server == clients[port]) c = rc.index;
    }
    const int d = r.connections()[c].directions[0].source == s.source ? 0 : 1;
    sent[s.frame] = Sent{c, d, syn ? s.seq + 1 : s.seq, payload};
    for (std::size_t k = 0; k < r.connections().size(); ++k) {
      FUZZ_CHECK(r.Waiting(k, 0) <= options.max_out_of_order && r.Waiting(k, 1) <= options.max_out_of_order);
    }
  }
  r.Finish();
  FUZZ_CHECK(r.notes().size() <= kMaxStoredNotes);
  for (const ReassemblyNote& n : r.notes()) {
    FUZZ_CHECK(!n.message.empty() && n.message.find('\n') == std::string::npos);
    FUZZ_CHECK(n.frame <= frame && n.connection < r.connections().size());
  }
  for (const ReassembledConnection& c : r.connections()) {
    FUZZ_CHECK(c.first_frame <= c.last_frame && c.last_frame <= frame);
    for (int d = 0; d < 2; ++d) CheckDirection(c.directions[d], c.index, d, sent);
  }
  return 0;
}
