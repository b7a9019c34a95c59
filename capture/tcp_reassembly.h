// TCP reassembly: the segments of a capture (pcap_reader.h) in, per
// connection and per direction the byte stream the receiver's TCP handed
// up, with the capture frame every octet came from.
//
// Connections are told apart by their 4-tuple; a SYN (without ACK) with a
// new ISN on a 4-tuple in use starts a new connection. The client is the
// side that sent the SYN, or, in a capture that starts after the
// handshake, the sender of the first segment seen; stream offset 0 is the
// octet after the SYN, or the first octet of the first segment seen.
// Sequence numbers are compared modulo 2^32 (they may wrap), stream
// offsets are 64-bit.
//
// - Out-of-order segments wait until the octets before them arrive.
// - Octets received twice (retransmissions, overlapping segments) are kept
//   from their first copy; a later copy that differs is a conflicting
//   overlap, reported with its frame and sequence number.
// - At Finish(), octets that never arrived before buffered ones are a gap:
//   reported, and the stream resumes after it (a new StreamPiece), so a
//   decoder can resynchronise. Octets the FIN or the peer's ACKs show were
//   sent but that were not captured are a gap at the end.
// - At most ReassemblyOptions::max_out_of_order octets wait per direction;
//   beyond that the octets furthest ahead are dropped, and reported.
// - Octets before stream offset 0 (the capture began after them), after
//   the FIN, and the payload of an RST are not part of the stream
//   (reported, except for the RST payload and 1-octet keep-alives).
// - Streaming (SetListener): contiguous octets go to the listener as they
//   arrive instead of into DirectionStream::pieces / frames, so memory is
//   bounded by the out-of-order cap and the retransmission history
//   (ReassemblyOptions::history), not by the capture. A retransmission of
//   octets older than the history cannot be compared with its first copy:
//   reported once per direction. Once a connection is closed (both FINs
//   delivered, or an RST) it keeps only the last kClosedHistory octets per
//   direction, and all closed connections together at most
//   kClosedHistoryBudget (the oldest closed are forgotten first); octets
//   that still arrive after the close are not kept (nor compared).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "capture/pcap_reader.h"
#include "reference/wire/bytes.h"

namespace rdmapct::capture {

struct ReassemblyOptions {
  std::size_t max_out_of_order = std::size_t{16} << 20;  // octets waiting per direction
  // Streaming only: the last octets of each direction kept to compare
  // retransmissions with (TCP retransmits what is unacknowledged: the window).
  std::size_t history = std::size_t{4} << 20;
};

inline constexpr std::size_t kClosedHistory = std::size_t{16} << 10;
inline constexpr std::size_t kClosedHistoryBudget = std::size_t{16} << 20;

// Receives each direction's octets in stream order as they become
// contiguous (streaming mode). `octets` is valid during the call only.
class ReassemblyListener {
 public:
  virtual ~ReassemblyListener() = default;
  virtual void OnOctets(std::size_t connection, int direction, uint64_t offset, wire::ByteSpan octets,
                        uint64_t frame) = 0;
};

// Octets [offset, next mark's offset) of a direction came from capture frame `frame`.
struct FrameMark {
  uint64_t offset = 0;
  uint64_t frame = 0;
  friend bool operator==(const FrameMark&, const FrameMark&) = default;
};

// The frame of the octet at `offset` under `frames` (ascending marks); 0: none before it.
uint64_t FrameAtMarks(const std::vector<FrameMark>& frames, uint64_t offset);

// Contiguous octets of a direction's stream.
struct StreamPiece {
  uint64_t offset = 0;
  wire::Bytes octets;
  uint64_t end() const { return offset + octets.size(); }
};

// Octets of the stream that were never captured.
struct StreamGap {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t frame = 0;  // the frame whose octets follow the gap (0: the gap ends the stream)
  friend bool operator==(const StreamGap&, const StreamGap&) = default;
};

struct DirectionStream {
  Endpoint source, destination;
  bool syn = false;  // the SYN of this direction was captured
  uint64_t syn_frame = 0;
  bool started = false;             // stream offset 0 is known (a SYN or a first segment)
  uint32_t first_seq = 0;           // sequence number of stream offset 0
  std::vector<StreamPiece> pieces;  // ascending, separated by `gaps`
  std::vector<StreamGap> gaps;
  std::vector<FrameMark> frames;       // ascending offsets, one mark where the frame changes
  std::optional<uint64_t> fin_offset;  // stream offset of the FIN
  uint64_t fin_frame = 0;
  uint64_t rst_frame = 0;      // 0: no RST from this side
  uint64_t segments = 0;       // segments of this direction (pure ACKs included)
  uint64_t octets_in = 0;      // payload octets captured, copies included
  uint64_t octets_out = 0;     // octets in `pieces` (streaming: handed to the listener)
  uint64_t delivered_end = 0;  // one past the last octet delivered

  // The capture frame of the octet at `offset` (0 when there is none before it).
  uint64_t FrameAt(uint64_t offset) const;
  // One past the last octet of the stream (the end of the last piece).
  uint64_t end() const { return pieces.empty() ? delivered_end : pieces.back().end(); }
  // A gap starts at stream offset `offset` (octets from there were not
  // captured): a frame that runs to it continues into them.
  bool GapAt(uint64_t offset) const {
    for (const StreamGap& g : gaps) {
      if (g.offset == offset) return true;
    }
    return false;
  }
};

struct ReassembledConnection {
  std::size_t index = 0;  // in order of first appearance, from 0
  Endpoint client, server;
  uint64_t first_frame = 0, last_frame = 0;
  std::array<DirectionStream, 2> directions;  // [0] client -> server, [1] server -> client
};

enum class ReassemblyNoteKind : uint8_t {
  kConflictingOverlap,  // a later copy of octets differs from the first
  kGap,                 // octets never captured (also at the end of a stream)
  kBufferFull,          // out-of-order octets dropped at the cap
  kBeforeStart,         // octets before stream offset 0
  kAfterFin,            // octets after the FIN
  kUnexpectedSyn,       // a SYN in the middle of a stream
  kBeyondHistory,       // streaming: a retransmission older than the history, not compared
};

struct ReassemblyNote {
  ReassemblyNoteKind kind = ReassemblyNoteKind::kGap;
  std::size_t connection = 0;
  int direction = 0;
  uint64_t frame = 0;   // the frame concerned (0: none)
  uint64_t offset = 0;  // stream offset concerned
  uint64_t length = 0;  // octets concerned
  std::string message;  // one line, naming the connection, frame, sequence number and offset
};

inline constexpr std::size_t kMaxStoredNotes = 1000;

class TcpReassembler {
 public:
  explicit TcpReassembler(const ReassemblyOptions& options = {});
  ~TcpReassembler();
  TcpReassembler(const TcpReassembler&) = delete;
  TcpReassembler& operator=(const TcpReassembler&) = delete;

  // Segments in capture order.
  void Add(const TcpSegment& segment);
  // Resolves what is still waiting (gaps) and the ends of the streams.
  // Call once, after the last Add.
  void Finish();

  const std::vector<ReassembledConnection>& connections() const { return connections_; }
  std::vector<ReassembledConnection>& connections() { return connections_; }
  // The first kMaxStoredNotes notes, in the order found; `notes_dropped` counts the rest.
  const std::vector<ReassemblyNote>& notes() const { return notes_; }
  uint64_t notes_dropped() const { return notes_dropped_; }
  // Octets waiting out of order in direction `d` of connection `c` now.
  std::size_t Waiting(std::size_t c, int d) const;
  // The connection the last Add was about.
  std::size_t last_connection() const { return last_connection_; }
  // Both directions delivered up to their FIN: no octet of connection c can
  // be delivered any more (streaming or not).
  bool FinClosed(std::size_t c) const;
  // The smallest capture frame of the octets waiting in (c, d); 0: none wait.
  uint64_t FirstWaitingFrame(std::size_t c, int d) const;

  // Streaming mode: set before the first Add; `listener` outlives the reassembler.
  void SetListener(ReassemblyListener* listener) { listener_ = listener; }
  // Octets held now (out of order, and the streaming history) and the most
  // ever held at once, over all connections: what reassembly costs in memory.
  std::size_t buffered_octets() const { return buffered_; }
  std::size_t peak_buffered_octets() const { return peak_buffered_; }

 private:
  struct Pending {
    wire::Bytes octets;
    uint64_t frame = 0;
  };
  struct DirectionState {
    std::map<uint64_t, Pending> pending;             // non-overlapping, all beyond `next`
    std::map<uint64_t, std::size_t> pending_frames;  // frame -> entries of `pending` from it
    std::size_t pending_octets = 0;
    uint64_t next = 0;              // offset of the next octet expected
    std::optional<uint64_t> acked;  // highest offset the peer acknowledged
    // Streaming: the last delivered octets, from stream offset history_offset.
    wire::Bytes history;
    uint64_t history_offset = 0;
    std::vector<FrameMark> history_frames;
    bool beyond_history_noted = false;
  };
  struct Conn {
    std::array<DirectionState, 2> state;
    bool closed = false;   // streaming: both FINs delivered, or an RST
    bool in_line = false;  // in closed_ at or after closed_next_ (its tail is kept)
  };

  std::size_t ConnectionFor(const TcpSegment& s, int& direction);
  std::size_t NewConnection(const TcpSegment& s);
  void Data(std::size_t c, int d, int64_t offset, wire::ByteSpan octets, uint64_t frame);
  void Insert(std::size_t c, int d, uint64_t offset, wire::ByteSpan octets, uint64_t frame);
  void Compare(std::size_t c, int d, uint64_t offset, wire::ByteSpan octets, wire::ByteSpan first, uint64_t first_frame,
               uint64_t frame);
  void Drain(std::size_t c, int d);
  void Evict(std::size_t c, int d, uint64_t frame);
  void Deliver(std::size_t c, int d, uint64_t offset, wire::ByteSpan octets, uint64_t frame);
  void Remember(DirectionState& st, uint64_t offset, wire::ByteSpan octets, uint64_t frame);
  void CompareDelivered(std::size_t c, int d, uint64_t at, wire::ByteSpan octets, uint64_t frame);
  void CompareHistory(std::size_t c, int d, uint64_t at, wire::ByteSpan octets, uint64_t frame);
  void Held(std::ptrdiff_t delta);
  void AddSegment(const TcpSegment& segment);
  void CloseHistory(std::size_t c);
  void RememberAfterClose(std::size_t c, int d, uint64_t offset, wire::ByteSpan octets, uint64_t frame);
  void ForgetOldestClosed();
  void Forget(std::size_t c, int d, std::size_t keep);
  void FinishDirection(std::size_t c, int d);
  int64_t OffsetOf(std::size_t c, int d, uint32_t seq) const;
  void Note(ReassemblyNoteKind kind, std::size_t c, int d, uint64_t frame, uint64_t offset, uint64_t length,
            const std::string& what);

  ReassemblyOptions options_;
  std::vector<ReassembledConnection> connections_;
  std::vector<Conn> state_;
  std::map<std::pair<Endpoint, Endpoint>, std::size_t> by_tuple_;  // (lower, higher endpoint) -> connection
  std::vector<ReassemblyNote> notes_;
  uint64_t notes_dropped_ = 0;
  bool finished_ = false;
  ReassemblyListener* listener_ = nullptr;
  std::size_t buffered_ = 0, peak_buffered_ = 0;
  std::size_t last_connection_ = 0;
  // Streaming: closed connections keep the tail of their history for late
  // retransmissions, oldest dropped first beyond kClosedHistoryBudget.
  std::vector<std::size_t> closed_;
  std::size_t closed_next_ = 0;  // closed_[closed_next_] is the oldest still holding history
  std::size_t closed_octets_ = 0;
};

}  // namespace rdmapct::capture
