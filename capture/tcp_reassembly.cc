#include "capture/tcp_reassembly.h"

#include <algorithm>
#include <iterator>

namespace rdmapct::capture {
namespace {

using wire::ByteSpan;

std::string Octets(uint64_t n) { return std::to_string(n) + (n == 1 ? " octet" : " octets"); }

std::string Where(uint32_t seq, uint64_t offset) {
  return "seq " + std::to_string(seq) + ", stream offset " + std::to_string(offset);
}

}  // namespace

uint64_t FrameAtMarks(const std::vector<FrameMark>& frames, uint64_t offset) {
  auto it = std::upper_bound(frames.begin(), frames.end(), offset,
                             [](uint64_t o, const FrameMark& m) { return o < m.offset; });
  return it == frames.begin() ? 0 : std::prev(it)->frame;
}

uint64_t DirectionStream::FrameAt(uint64_t offset) const { return FrameAtMarks(frames, offset); }

TcpReassembler::TcpReassembler(const ReassemblyOptions& options) : options_(options) {}
TcpReassembler::~TcpReassembler() = default;

std::size_t TcpReassembler::Waiting(std::size_t c, int d) const { return state_.at(c).state.at(d).pending_octets; }

uint64_t TcpReassembler::FirstWaitingFrame(std::size_t c, int d) const {
  const auto& frames = state_.at(c).state.at(d).pending_frames;
  return frames.empty() ? 0 : frames.begin()->first;
}

namespace {

void CountFrame(std::map<uint64_t, std::size_t>& frames, uint64_t frame, bool add) {
  if (add) {
    ++frames[frame];
  } else if (auto it = frames.find(frame); it != frames.end() && --it->second == 0) {
    frames.erase(it);
  }
}

}  // namespace

bool TcpReassembler::FinClosed(std::size_t c) const {
  for (int d = 0; d < 2; ++d) {
    const std::optional<uint64_t>& fin = connections_[c].directions[d].fin_offset;
    if (!fin || state_[c].state[d].next < *fin) return false;
    // Octets still waiting (captured before a FIN that came with a lower
    // sequence number) come out at Finish, after a gap: not closed yet.
    if (!state_[c].state[d].pending.empty()) return false;
  }
  return true;
}

void TcpReassembler::Held(std::ptrdiff_t delta) {
  buffered_ = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(buffered_) + delta);
  peak_buffered_ = std::max(peak_buffered_, buffered_);
}

void TcpReassembler::Note(ReassemblyNoteKind kind, std::size_t c, int d, uint64_t frame, uint64_t offset,
                          uint64_t length, const std::string& what) {
  if (notes_.size() >= kMaxStoredNotes) {
    ++notes_dropped_;
    return;
  }
  const DirectionStream& ds = connections_[c].directions[d];
  std::string m =
      "connection " + std::to_string(c) + " (" + ds.source.ToString() + " -> " + ds.destination.ToString() + "): ";
  if (frame != 0) m += "frame " + std::to_string(frame) + ": ";
  notes_.push_back(ReassemblyNote{kind, c, d, frame, offset, length, m + what});
}

std::size_t TcpReassembler::NewConnection(const TcpSegment& s) {
  ReassembledConnection conn;
  conn.index = connections_.size();
  // A SYN-ACK seen first: its destination opened the connection.
  const bool syn_ack = (s.flags & (kTcpSyn | kTcpAck)) == (kTcpSyn | kTcpAck);
  conn.client = syn_ack ? s.destination : s.source;
  conn.server = syn_ack ? s.source : s.destination;
  conn.first_frame = s.frame;
  conn.directions[0].source = conn.client;
  conn.directions[0].destination = conn.server;
  conn.directions[1].source = conn.server;
  conn.directions[1].destination = conn.client;
  connections_.push_back(std::move(conn));
  state_.emplace_back();
  by_tuple_[std::minmax(s.source, s.destination)] = connections_.size() - 1;
  return connections_.size() - 1;
}

std::size_t TcpReassembler::ConnectionFor(const TcpSegment& s, int& direction) {
  auto it = by_tuple_.find(std::minmax(s.source, s.destination));
  std::size_t c = it == by_tuple_.end() ? NewConnection(s) : it->second;
  direction = connections_[c].client == s.source ? 0 : 1;
  if ((s.flags & (kTcpSyn | kTcpAck)) != kTcpSyn || it == by_tuple_.end()) return c;
  // A SYN on a 4-tuple in use: the same SYN again, or a new connection.
  const DirectionStream& d = connections_[c].directions[direction];
  const bool same_syn = direction == 0 && d.syn && d.first_seq == s.seq + 1;
  const bool unused = !connections_[c].directions[0].started && !connections_[c].directions[1].started;
  if (same_syn || unused) return c;
  c = NewConnection(s);
  direction = 0;
  return c;
}

int64_t TcpReassembler::OffsetOf(std::size_t c, int d, uint32_t seq) const {
  const DirectionStream& ds = connections_[c].directions[d];
  const uint64_t next = state_[c].state[d].next;
  const uint32_t next_seq = ds.first_seq + static_cast<uint32_t>(next);
  return static_cast<int64_t>(next) + static_cast<int32_t>(seq - next_seq);
}

void TcpReassembler::Add(const TcpSegment& s) {
  AddSegment(s);
  if (listener_ == nullptr || state_[last_connection_].closed) return;
  const ReassembledConnection& conn = connections_[last_connection_];
  if (conn.directions[0].rst_frame != 0 || conn.directions[1].rst_frame != 0 || FinClosed(last_connection_)) {
    CloseHistory(last_connection_);
  }
}

// Keeps the last `keep` octets of the history of (c, d), and frees the rest.
void TcpReassembler::Forget(std::size_t c, int d, std::size_t keep) {
  DirectionState& st = state_[c].state[d];
  if (st.history.size() <= keep) return;
  const std::size_t drop = st.history.size() - keep;
  wire::Bytes tail(st.history.end() - static_cast<std::ptrdiff_t>(keep), st.history.end());
  st.history.swap(tail);  // frees the old buffer
  st.history_offset += drop;
  Held(-static_cast<std::ptrdiff_t>(drop));
  auto first = std::upper_bound(st.history_frames.begin(), st.history_frames.end(), st.history_offset,
                                [](uint64_t o, const FrameMark& m) { return o < m.offset; });
  if (first != st.history_frames.begin()) --first;
  st.history_frames.erase(st.history_frames.begin(), first);
}

void TcpReassembler::CloseHistory(std::size_t c) {
  state_[c].closed = true;
  for (int d = 0; d < 2; ++d) {
    Forget(c, d, kClosedHistory);
    closed_octets_ += state_[c].state[d].history.size();
  }
  closed_.push_back(c);
  state_[c].in_line = true;
  ForgetOldestClosed();
}

// Octets delivered after the close (behind an RST, or a FIN's octets seen
// late) join the closed connection's tail like the rest, so that a
// retransmission of them is compared with them, as the batch reassembler
// compares it. A connection whose tail was forgotten gets in line again.
void TcpReassembler::RememberAfterClose(std::size_t c, int d, uint64_t offset, ByteSpan octets, uint64_t frame) {
  DirectionState& st = state_[c].state[d];
  closed_octets_ -= st.history.size();
  Remember(st, offset, octets, frame);
  Forget(c, d, kClosedHistory);
  closed_octets_ += st.history.size();
  if (!state_[c].in_line) {
    closed_.push_back(c);
    state_[c].in_line = true;
  }
  ForgetOldestClosed();
}

// Beyond kClosedHistoryBudget, the oldest closed connections forget their tails.
void TcpReassembler::ForgetOldestClosed() {
  while (closed_octets_ > kClosedHistoryBudget && closed_next_ < closed_.size()) {
    const std::size_t old = closed_[closed_next_++];
    state_[old].in_line = false;
    for (int d = 0; d < 2; ++d) {
      closed_octets_ -= state_[old].state[d].history.size();
      Forget(old, d, 0);
    }
  }
}

void TcpReassembler::AddSegment(const TcpSegment& s) {
  int d = 0;
  const std::size_t c = ConnectionFor(s, d);
  last_connection_ = c;
  ReassembledConnection& conn = connections_[c];
  DirectionStream& ds = conn.directions[d];
  conn.last_frame = s.frame;
  ++ds.segments;
  ds.octets_in += s.payload.size();
  uint32_t data_seq = s.seq;
  if (s.flags & kTcpSyn) {
    data_seq = s.seq + 1;  // the SYN takes one sequence number
    if (!ds.started) {
      ds.syn = true;
      ds.syn_frame = s.frame;
      ds.started = true;
      ds.first_seq = s.seq + 1;
    } else if (!(ds.syn && ds.first_seq == s.seq + 1)) {
      Note(ReassemblyNoteKind::kUnexpectedSyn, c, d, s.frame, 0, 0,
           "SYN with seq " + std::to_string(s.seq) + " in the middle of the stream ignored");
      return;
    }
  }
  // The peer acknowledges what it received of the other direction.
  DirectionStream& peer = conn.directions[1 - d];
  if ((s.flags & kTcpAck) && peer.started) {
    const int64_t acked = OffsetOf(c, 1 - d, s.ack);
    std::optional<uint64_t>& a = state_[c].state[1 - d].acked;
    if (acked > 0 && (!a || static_cast<uint64_t>(acked) > *a)) a = static_cast<uint64_t>(acked);
  }
  if (s.flags & kTcpRst) {
    if (ds.rst_frame == 0) ds.rst_frame = s.frame;
    return;  // an RST's payload is diagnostic text at most, never stream data
  }
  if (!ds.started) {
    if (s.payload.empty() && !(s.flags & kTcpFin)) return;  // a pure ACK says nothing of this direction yet
    ds.started = true;
    ds.first_seq = s.seq;
  }
  const int64_t offset = OffsetOf(c, d, data_seq);
  const uint64_t next = state_[c].state[d].next;
  // A keep-alive: one octet already received, its content meaningless.
  const bool keepalive = s.payload.size() == 1 && offset + 1 == static_cast<int64_t>(next) && !(s.flags & kTcpFin);
  if (!s.payload.empty() && !keepalive) Data(c, d, offset, s.payload, s.frame);
  if ((s.flags & kTcpFin) && !ds.fin_offset) {
    const int64_t fin = offset + static_cast<int64_t>(s.payload.size());
    if (fin >= 0) {
      ds.fin_offset = static_cast<uint64_t>(fin);
      ds.fin_frame = s.frame;
    }
  }
}

void TcpReassembler::Data(std::size_t c, int d, int64_t offset, ByteSpan octets, uint64_t frame) {
  DirectionStream& ds = connections_[c].directions[d];
  const uint32_t seq = ds.first_seq + static_cast<uint32_t>(offset);
  if (offset < 0) {
    const uint64_t before = std::min<uint64_t>(octets.size(), static_cast<uint64_t>(-offset));
    Note(ReassemblyNoteKind::kBeforeStart, c, d, frame, 0, before,
         Octets(before) + " at seq " + std::to_string(seq) + " lie before the start of the stream (seq " +
             std::to_string(ds.first_seq) + ": the capture began after them) and are ignored");
    octets = octets.subspan(before);
    offset = 0;
  }
  uint64_t at = static_cast<uint64_t>(offset);
  if (ds.fin_offset && at + octets.size() > *ds.fin_offset) {
    const uint64_t keep = at >= *ds.fin_offset ? 0 : *ds.fin_offset - at;
    Note(ReassemblyNoteKind::kAfterFin, c, d, frame, *ds.fin_offset, octets.size() - keep,
         Octets(octets.size() - keep) + " after the FIN (" +
             Where(ds.first_seq + static_cast<uint32_t>(*ds.fin_offset), *ds.fin_offset) + ", FIN in frame " +
             std::to_string(ds.fin_frame) + ") ignored");
    octets = octets.first(keep);
  }
  if (octets.empty()) return;
  // Octets already delivered: compare with the first copy, then drop.
  const uint64_t next = state_[c].state[d].next;
  if (at < next) {
    const uint64_t old = std::min<uint64_t>(octets.size(), next - at);
    CompareDelivered(c, d, at, octets.first(old), frame);
    octets = octets.subspan(old);
    at += old;
  }
  if (octets.empty()) return;
  if (at == next && state_[c].state[d].pending.empty()) {
    Deliver(c, d, at, octets, frame);  // in order: straight through, no copy waits
    return;
  }
  Insert(c, d, at, octets, frame);
  Drain(c, d);
  if (state_[c].state[d].pending_octets > options_.max_out_of_order) Evict(c, d, frame);
}

// Octets at [at, at + size) were delivered already: compare with the first copy.
void TcpReassembler::CompareDelivered(std::size_t c, int d, uint64_t at, ByteSpan octets, uint64_t frame) {
  if (listener_ != nullptr) return CompareHistory(c, d, at, octets, frame);
  const DirectionStream& ds = connections_[c].directions[d];
  const uint64_t end = at + octets.size();
  for (const StreamPiece& p : ds.pieces) {
    if (p.end() <= at || p.offset >= end) continue;
    const uint64_t from = std::max(at, p.offset), to = std::min(end, p.end());
    Compare(c, d, from, octets.subspan(from - at, to - from), ByteSpan(p.octets).subspan(from - p.offset, to - from),
            ds.FrameAt(from), frame);
  }
}

// Streaming: only the history is left to compare with.
void TcpReassembler::CompareHistory(std::size_t c, int d, uint64_t at, ByteSpan octets, uint64_t frame) {
  DirectionState& st = state_[c].state[d];
  const uint64_t end = at + octets.size();
  if (at < st.history_offset && !st.beyond_history_noted) {
    st.beyond_history_noted = true;
    const uint64_t n = std::min(end, st.history_offset) - at;
    Note(ReassemblyNoteKind::kBeyondHistory, c, d, frame, at, n,
         Octets(n) + " retransmitted from stream offset " + std::to_string(at) + ", before the last " +
             Octets(options_.history) + " kept, not compared with their first copy (reported once per direction)");
  }
  const uint64_t from = std::max(at, st.history_offset);
  const uint64_t to = std::min(end, st.history_offset + st.history.size());  // a closed connection's is frozen
  if (from >= to) return;
  Compare(c, d, from, octets.subspan(from - at, to - from),
          ByteSpan(st.history).subspan(from - st.history_offset, to - from), FrameAtMarks(st.history_frames, from),
          frame);
}

// Stores the octets not already waiting, comparing those that are.
void TcpReassembler::Insert(std::size_t c, int d, uint64_t at, ByteSpan octets, uint64_t frame) {
  DirectionState& st = state_[c].state[d];
  const uint64_t end = at + octets.size();
  uint64_t cur = at;
  auto it = st.pending.upper_bound(cur);
  if (it != st.pending.begin()) --it;  // may overlap from before `at`
  while (cur < end) {
    while (it != st.pending.end() && it->first + it->second.octets.size() <= cur) ++it;
    const uint64_t next_start = it == st.pending.end() ? end : std::min<uint64_t>(it->first, end);
    if (next_start > cur) {
      Pending p{wire::Bytes(octets.begin() + static_cast<std::ptrdiff_t>(cur - at),
                            octets.begin() + static_cast<std::ptrdiff_t>(next_start - at)),
                frame};
      st.pending_octets += p.octets.size();
      Held(static_cast<std::ptrdiff_t>(p.octets.size()));
      CountFrame(st.pending_frames, frame, true);
      it = std::next(st.pending.emplace(cur, std::move(p)).first);
      cur = next_start;
      continue;
    }
    // `it` starts at or before `cur` and overlaps it.
    const uint64_t to = std::min<uint64_t>(end, it->first + it->second.octets.size());
    Compare(c, d, cur, octets.subspan(cur - at, to - cur),
            ByteSpan(it->second.octets).subspan(cur - it->first, to - cur), it->second.frame, frame);
    cur = to;
  }
}

void TcpReassembler::Compare(std::size_t c, int d, uint64_t offset, ByteSpan octets, ByteSpan first,
                             uint64_t first_frame, uint64_t frame) {
  std::size_t i = 0;
  while (i < octets.size() && octets[i] == first[i]) ++i;
  if (i == octets.size()) return;  // a retransmission: identical
  std::size_t differing = 0;
  for (std::size_t k = i; k < octets.size(); ++k) differing += octets[k] != first[k];
  const DirectionStream& ds = connections_[c].directions[d];
  Note(ReassemblyNoteKind::kConflictingOverlap, c, d, frame, offset + i, octets.size() - i,
       "conflicting overlap at " + Where(ds.first_seq + static_cast<uint32_t>(offset + i), offset + i) + ": " +
           std::to_string(differing) + " of " + std::to_string(octets.size()) +
           " overlapping octets differ from the copy in frame " + std::to_string(first_frame) +
           "; the first copy is kept");
}

void TcpReassembler::Drain(std::size_t c, int d) {
  DirectionState& st = state_[c].state[d];
  while (!st.pending.empty() && st.pending.begin()->first == st.next) {
    auto node = st.pending.extract(st.pending.begin());
    st.pending_octets -= node.mapped().octets.size();
    Held(-static_cast<std::ptrdiff_t>(node.mapped().octets.size()));
    CountFrame(st.pending_frames, node.mapped().frame, false);
    Deliver(c, d, node.key(), node.mapped().octets, node.mapped().frame);
  }
}

// Over the cap: the octets furthest ahead go first.
void TcpReassembler::Evict(std::size_t c, int d, uint64_t frame) {
  DirectionState& st = state_[c].state[d];
  const DirectionStream& ds = connections_[c].directions[d];
  uint64_t dropped = 0, lowest = 0;
  while (st.pending_octets > options_.max_out_of_order) {
    auto last = std::prev(st.pending.end());
    const std::size_t over = st.pending_octets - options_.max_out_of_order;
    Pending& p = last->second;
    const std::size_t n = std::min(over, p.octets.size());
    p.octets.resize(p.octets.size() - n);
    st.pending_octets -= n;
    Held(-static_cast<std::ptrdiff_t>(n));
    dropped += n;
    lowest = last->first + p.octets.size();
    if (p.octets.empty()) {
      CountFrame(st.pending_frames, p.frame, false);
      st.pending.erase(last);
    }
  }
  Note(ReassemblyNoteKind::kBufferFull, c, d, frame, lowest, dropped,
       "out-of-order buffer full (" + Octets(options_.max_out_of_order) + " waiting): " + Octets(dropped) + " from " +
           Where(ds.first_seq + static_cast<uint32_t>(lowest), lowest) + " on dropped");
}

void TcpReassembler::Deliver(std::size_t c, int d, uint64_t offset, ByteSpan octets, uint64_t frame) {
  DirectionStream& ds = connections_[c].directions[d];
  ds.delivered_end = offset + octets.size();
  if (listener_ != nullptr) {
    ds.octets_out += octets.size();
    state_[c].state[d].next = offset + octets.size();
    if (state_[c].closed)
      RememberAfterClose(c, d, offset, octets, frame);
    else
      Remember(state_[c].state[d], offset, octets, frame);
    listener_->OnOctets(c, d, offset, octets, frame);
    return;
  }
  if (ds.pieces.empty() || ds.pieces.back().end() != offset) ds.pieces.push_back(StreamPiece{offset, {}});
  ds.pieces.back().octets.insert(ds.pieces.back().octets.end(), octets.begin(), octets.end());
  if (ds.frames.empty() || ds.frames.back().frame != frame) ds.frames.push_back(FrameMark{offset, frame});
  ds.octets_out += octets.size();
  state_[c].state[d].next = offset + octets.size();
}

// Streaming: keeps the last octets (at least options_.history of them).
void TcpReassembler::Remember(DirectionState& st, uint64_t offset, ByteSpan octets, uint64_t frame) {
  if (options_.history == 0) return;
  if (st.history_offset + st.history.size() != offset) {  // after a gap (at Finish): start again
    Held(-static_cast<std::ptrdiff_t>(st.history.size()));
    st.history.clear();
    st.history_frames.clear();
    st.history_offset = offset;
  }
  if (st.history_frames.empty() || st.history_frames.back().frame != frame) {
    st.history_frames.push_back(FrameMark{offset, frame});
  }
  st.history.insert(st.history.end(), octets.begin(), octets.end());
  Held(static_cast<std::ptrdiff_t>(octets.size()));
  if (st.history.size() <= 2 * options_.history) return;
  // Drop the oldest in one go, so that the copying stays linear.
  const std::size_t drop = st.history.size() - options_.history;
  st.history.erase(st.history.begin(), st.history.begin() + static_cast<std::ptrdiff_t>(drop));
  st.history_offset += drop;
  Held(-static_cast<std::ptrdiff_t>(drop));
  auto keep = std::upper_bound(st.history_frames.begin(), st.history_frames.end(), st.history_offset,
                               [](uint64_t o, const FrameMark& m) { return o < m.offset; });
  if (keep != st.history_frames.begin()) --keep;  // the mark covering the new first octet
  st.history_frames.erase(st.history_frames.begin(), keep);
}

void TcpReassembler::FinishDirection(std::size_t c, int d) {
  DirectionState& st = state_[c].state[d];
  DirectionStream& ds = connections_[c].directions[d];
  while (!st.pending.empty()) {
    const uint64_t resume = st.pending.begin()->first;
    const uint64_t frame = st.pending.begin()->second.frame;
    ds.gaps.push_back(StreamGap{st.next, resume - st.next, frame});
    Note(ReassemblyNoteKind::kGap, c, d, frame, st.next, resume - st.next,
         Octets(resume - st.next) + " never captured at " +
             Where(ds.first_seq + static_cast<uint32_t>(st.next), st.next) + "; the stream resumes at offset " +
             std::to_string(resume));
    st.next = resume;
    Drain(c, d);
  }
  // The FIN, or else the peer's acknowledgements, show where the stream ended.
  uint64_t sent = st.next;
  std::string how;
  if (ds.fin_offset && *ds.fin_offset > sent) {
    sent = *ds.fin_offset;
    how = "before the FIN (frame " + std::to_string(ds.fin_frame) + ")";
  } else if (!ds.fin_offset && st.acked && *st.acked > sent) {
    sent = *st.acked;
    how = "acknowledged by the peer";
  }
  if (sent > st.next) {
    ds.gaps.push_back(StreamGap{st.next, sent - st.next, 0});
    Note(ReassemblyNoteKind::kGap, c, d, 0, st.next, sent - st.next,
         Octets(sent - st.next) + " " + how + " never captured at the end of the stream (" +
             Where(ds.first_seq + static_cast<uint32_t>(st.next), st.next) + ")");
  }
}

void TcpReassembler::Finish() {
  if (finished_) return;
  finished_ = true;
  for (std::size_t c = 0; c < connections_.size(); ++c) {
    for (int d = 0; d < 2; ++d) FinishDirection(c, d);
  }
}

}  // namespace rdmapct::capture
