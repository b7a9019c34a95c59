// One MPA connection of a conformance case, seen from the suite (the MPA
// Initiator): the MPA Request/Reply exchange, framing of what the suite
// sends (CRC, Markers, deliberate corruption), deframing of what the target
// sends into a frame queue and an Event Record queue, and a record of every
// frame for the report.
//
// Every wait takes a deadline and every buffer is bounded (ConnectionLimits):
// a silent, slow, flooding or garbage-sending target ends a wait, never
// hangs it, and never grows memory without bound. A Transport::Read that
// returns kTimeout means the wait is over (the in-process transport says so
// at once when the synchronous target has nothing more to say).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conformance/fence.h"
#include "conformance/matchers.h"
#include "conformance/result.h"
#include "proto/case.pb.h"
#include "reference/wire/bytes.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/profile.h"
#include "targets/reaction_clock.h"
#include "targets/transport.h"

namespace rdmapct::conformance {

using Clock = std::chrono::steady_clock;
using targets::ReactionClock;

struct ConnectionLimits {
  std::size_t read_chunk = 64 * 1024;           // octets per Transport::Read
  std::size_t max_received_octets = 32u << 20;  // per connection, then "flood"
  std::size_t max_queued = 4096;                // unconsumed frames + events, then "flood"
  std::size_t max_recorded_octets = 4u << 20;   // raw octets kept per case for reports
};

// Appends FrameRecords to a case's result, keeping at most a budget of raw
// octets (later records keep their summary, with `truncated` set).
class Recorder {
 public:
  Recorder(std::vector<FrameRecord>& frames, Clock::time_point start, std::size_t budget, wire::Profile profile);
  std::size_t Add(FrameRecord record);
  // A record of an FPDU / DDP segment with its summary and field tree.
  std::size_t AddSegment(uint32_t connection, Direction d, uint64_t offset, wire::ByteSpan raw, wire::ByteSpan ulpdu,
                         bool event_record, std::string summary = {});
  std::size_t AddStartupFrame(uint32_t connection, Direction d, uint64_t offset, wire::ByteSpan raw,
                              const std::optional<wire::MpaStartupFrame>& frame, bool responder_role = false);
  wire::Profile profile() const { return profile_; }

 private:
  std::vector<FrameRecord>& frames_;
  Clock::time_point start_;
  std::size_t budget_;
  wire::Profile profile_;
};

class Connection {
 public:
  // `reactions`: where the target's reaction times go, if anywhere: from each
  // suite write to the first octets read after it (reaction_clock.h).
  Connection(std::unique_ptr<targets::Transport> transport, uint32_t index, Recorder& recorder,
             const ConnectionLimits& limits, ReactionClock* reactions = nullptr);
  ~Connection();

  // Sends the MPA Request octets and reads the Reply (never beyond it).
  // `write_size` > 0 writes the Request in pieces of that many octets and
  // counts what the target sends before the last one (early_octets).
  HandshakeOutcome Handshake(wire::ByteSpan request, Clock::time_point deadline, std::size_t write_size = 0);

  // The suite as MPA Responder (the target connected to it, convention §10):
  // reads exactly the target's Request (20 octets, then PD_Length more; a
  // PD_Length above 512 or a wrong Key stops after the header).
  RequestOutcome ReadRequest(Clock::time_point deadline);
  // Records the suite's Reply (as decoded, or raw) and returns its octets;
  // the caller writes them (Write), alone or with what follows.
  wire::Bytes RecordReply(wire::ByteSpan reply);

  // Full Operation framing: CRC as negotiated, Markers in what the target
  // sends iff the Request had M=1, in what the suite sends as chosen.
  void StartFullOperation(bool crc, bool markers_from_target, bool markers_to_target);
  // CaseDriverOptions::undo_terminate_bitfield_order: Terminates from the
  // target are matched with their control field's bit-field order undone
  // (the recorded octets stay as they came).
  void UndoTerminateBitfieldOrder() { undo_terminate_bitfield_order_ = true; }
  bool crc() const { return crc_; }
  bool markers_to_target() const { return markers_to_target_; }
  bool markers_from_target() const { return markers_from_target_; }
  // The transport's EMSS (TCP_MAXSEG), nullopt in-process (decisions D-G14).
  std::optional<std::size_t> EffectiveMss() const { return transport_->EffectiveMss(); }

  // Frames one ULPDU as an FPDU (Markers inserted as negotiated; `mods`
  // corrupts it as a case asks) and records it; returns the wire octets.
  wire::Bytes FrameUlpdu(wire::ByteSpan ulpdu, const proto::Framing* mods, const std::string& summary);
  // A whole FPDU as given (length, PAD, CRC untouched), Markers added.
  wire::Bytes FrameWholeFpdu(wire::ByteSpan fpdu);
  // Raw TCP octets: recorded, and counted in the Marker positions.
  wire::Bytes RawTcp(wire::ByteSpan octets);

  // One TCP write; while the target's window is full, reads to drain it.
  targets::IoStatus Write(wire::ByteSpan octets, Clock::time_point deadline);

  // One read, waiting until `deadline`; returns false when the wait is over
  // (timeout, the link ended, or reading stopped at a bound).
  bool Pump(Clock::time_point deadline);

  // What has arrived and not been consumed.
  Observation Observe() const;
  void Consume(std::size_t frames, std::size_t events);

  // FIN (ShutdownWrite) or RST (Abort).
  void Close(proto::Close::Kind kind);
  // FIN, then wait (bounded) for the target's FIN.
  void CloseGracefully(Clock::time_point deadline);

  // "" unless the target started an FPDU that has not completed: then
  // "the target left an incomplete FPDU (ULPDU_Length 65535, 100 of 65541
  // octets)", for the reason of a wait that ran out (a stalled target).
  std::string IncompleteFpdu() const;

  LinkState link() const { return link_; }
  uint32_t index() const { return index_; }
  // Frames and Event Sends received so far on this connection.
  std::size_t received_frames() const { return frames_.size() + events_.size(); }

  // The convention's RTR echoes to drop (docs/target-convention.md §2.2): the
  // Event Record of a zero-length Send RTR, the Read Response of a Read RTR.
  void IgnoreSendRtrEvent() { ignore_rtr_event_ = true; }
  void IgnoreReadRtrResponse(uint32_t sink_stag) { ignore_rtr_response_ = sink_stag; }

  // The suite's fence (fence.h, convention §2.5): only a transport that waits
  // in wall time needs one (the in-process target answers at once).
  bool WaitsInWallTime() const { return transport_->WaitsInWallTime(); }
  FenceTracker& fence() { return fence_; }
  bool fin_sent() const { return fin_sent_; }

 private:
  void NoteReaction();
  void Process(wire::ByteSpan chunk);
  void OnFpdu(const wire::MpaFpdu& f);
  void Flood(std::string why);
  void EndLink(LinkState state, const std::string& detail);
  bool ReadStartupFrame(wire::Bytes& buf, const wire::MpaFrameDecodeOptions& options, Clock::time_point deadline);
  uint64_t rx_offset() const { return reply_octets_ + rx_consumed_; }

  std::unique_ptr<targets::Transport> transport_;
  uint32_t index_;
  Recorder& recorder_;
  ConnectionLimits limits_;
  wire::Profile profile_;
  bool undo_terminate_bitfield_order_ = false;
  bool responder_role_ = false;  // ReadRequest: the suite is the MPA Responder

  // suite -> target
  uint64_t tx_offset_ = 0;
  uint32_t tx_position_ = 0;  // Marker-space position of the next FPDU octet
  bool crc_ = true;
  bool markers_to_target_ = false;
  bool markers_from_target_ = false;
  bool fin_sent_ = false;

  // target -> suite
  uint64_t reply_octets_ = 0;
  std::unique_ptr<wire::MpaDeframer> deframer_;
  wire::Bytes rx_pending_;    // octets fed but not yet attributed to an FPDU
  uint64_t rx_consumed_ = 0;  // deframer stream offset of rx_pending_[0]
  uint64_t received_ = 0;
  bool stop_reading_ = false;
  bool deframe_failed_ = false;
  LinkState link_ = LinkState::kOpen;
  std::optional<StreamProblem> problem_;
  std::vector<ReceivedFrame> frames_;
  std::vector<ReceivedEvent> events_;
  std::size_t frames_consumed_ = 0;
  std::size_t events_consumed_ = 0;
  bool ignore_rtr_event_ = false;
  std::optional<uint32_t> ignore_rtr_response_;
  FenceTracker fence_;
  ReactionClock* reactions_ = nullptr;
  std::optional<Clock::time_point> unanswered_write_;  // the last write no octets followed yet
};

}  // namespace rdmapct::conformance
