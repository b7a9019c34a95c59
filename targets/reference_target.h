// The reference target: the reference RDMAP model (reference/model) behind
// MPA as the Responder, running the test-ULP convention 1.0
// (docs/target-convention.md). The conformance suite, the fuzzer and
// `rdmapct serve` all talk to it; so does the example plugin.
//
// Sans-I/O: no sockets, threads or clock. A ReferenceTargetConnection is one
// TCP connection: octets from the suite go in (OnBytes), octets for the
// suite come out, and wants_close() says when the target sends its FIN.
// A transport (in_process.h, the plugin, serve) only moves the octets.
//
// Lifetimes: a ReferenceTarget outlives its connections. It owns what the
// convention carries from one connection to the next: the memory objects
// (Keep Memory, convention §2.4), the Connection Serial (§2.1) and the
// previous-connection outcome (§3.4). Each Accept() gives a connection that
// starts from fresh state. The target must outlive its connections.
//
// What a connection does, in order:
//  1. Startup (RFC 5044 §7.1.2, RFC 6581): collects the MPA Request (at most
//     20 + 512 octets), validates it against the MPA policy, negotiates
//     IRD/ORD and RTR, sets up memory, receive buffers and regions, and sends
//     the Reply with the Advertisement. A Request it cannot accept closes the
//     connection without a Reply (see CloseReason).
//  2. Sends nothing more until the first FPDU from the suite (R5044-7.1.2-R04).
//  3. Full Operation: deframes FPDUs (CRC as negotiated, Markers if its
//     Reply asked for them), hands each ULPDU to the RdmapEndpoint, frames
//     what the endpoint sends (Markers if the Request asked for them) and
//     reports ULP events as Event Record Sends.
//  4. After a Terminate, sent or received, it closes gracefully (FIN). It
//     also closes when the suite closes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "reference/model/decision_options.h"
#include "reference/model/endpoint.h"
#include "reference/model/faults.h"
#include "reference/model/reactions.h"
#include "reference/wire/bytes.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/profile.h"
#include "reference/wire/ulp_convention.h"
#include "reference/wire/ulp_convention_directive.h"

namespace rdmapct::targets {

// How the Responder answers MPA Requests (RFC 5044 §7.1.1, RFC 6581 §9;
// decisions D-G1, D-G3, D-G8, D-H3).
struct MpaPolicy {
  // Request Revs the target accepts; any other Rev closes the connection
  // without a Reply (RFC 5044 §7.1.1 Rev: "MUST close the connection").
  // Rev 0 (pre-standard, permissive) makes the stream use DDP/RDMAP version 0.
  std::vector<uint8_t> accepted_revisions = {1, 2};
  // C bit of the Reply. RFC 5044 §4.4: CRCs are on by default (decisions D-G1).
  bool crc = true;
  // false: a target that cannot do CRCs at all. CRCs are used if either side
  // sets C (RFC 5044 §7.1.1), so it answers a Request with C = 1 with a
  // rejecting Reply (R = 1, no Private Data) and closes. Needs crc = false.
  bool crc_supported = true;
  // M bit of the Reply: Markers wanted in suite -> target FPDUs.
  bool request_markers = false;
  // RFC 6581: answer Rev >= 2, S = 1 Requests with the IRD/ORD word. Off:
  // such a Request is "improperly formatted" and closes (RFC 6581 §10).
  bool rfc6581 = true;
  // RTR indications the target accepts (RFC 6581 §9.2 B, C, D). With
  // rfc6581 at least one must be on (R6581-9.2: "MUST support at least one").
  bool rtr_send = true;
  bool rtr_write = true;
  bool rtr_read = true;
  // Largest Request Private Data accepted (<= 512; RFC 5044 rule 9 lets a
  // receiver have a smaller buffer, e.g. siw's 256, decisions D-G12).
  std::size_t max_private_data = wire::kMpaMaxPrivateDataLength;
};

// How the target asks as MPA Initiator (docs/target-convention.md §10) when
// no Connect Directive says otherwise; the Rev and RTR types it accepts and
// supports are MpaPolicy's.
struct InitiatorPolicy {
  bool crc = true;            // C of its Request
  bool markers = false;       // M of its Request
  bool rfc6581 = false;       // S = 1 with the IRD/ORD word (R6581-10-04: only when wanted)
  bool peer_to_peer = false;  // A, with every RTR type of MpaPolicy
  // The largest IRD it can raise to after a Reply (RFC 6581 §9.1): a Reply
  // ORD above it gets TERM 2/0/0x06 (R6581-9.1-10).
  uint16_t max_ird = 64;
  // With no Reply after this long it closes (R5044-7.1.2-R10a).
  std::chrono::milliseconds reply_timeout{1000};
};

struct TargetMemoryObject {
  uint16_t id = 0;    // the Memory Object id the Advertisement uses (pattern m)
  uint32_t size = 0;  // octets
};

// The memory objects and the regions over them, in Advertisement order.
// Region rules are the convention's (§3.2): foreign STags are registered for
// another stream, deregistered ones are not registered at all.
struct TargetLayout {
  std::vector<TargetMemoryObject> memory_objects;
  std::vector<wire::AdvertisedRegion> regions;
};

// Everything the full suite needs under `profile` (convention §3.5): rw
// (also flush + verify under commit), ro, wo, atomic (rfc7306 and commit),
// invalidatable + alias, foreign, deregistered. Seven or eight regions, so
// the outcome block fits.
TargetLayout DefaultTargetLayout(wire::Profile profile);

struct ReferenceTargetConfig {
  wire::Profile profile = wire::Profile::kRfc5040;
  model::FaultSet faults{};
  model::DecisionOptions decisions{};
  MpaPolicy mpa{};
  InitiatorPolicy initiator{};
  // The target's IRD/ORD before any RFC 6581 negotiation.
  uint16_t ird = 8;
  uint16_t ord = 8;
  // QN 0 receive buffers, posted once per connection (convention §5).
  uint16_t receive_buffer_count = 8;
  uint32_t receive_buffer_size = 4096;
  // nullopt: DefaultTargetLayout(profile).
  std::optional<TargetLayout> layout{};
  // Largest ULPDU the target sends. 0: derived from `emss` (RFC 5044 §4.5,
  // wire::Mulpdu) with or without Markers, as the connection negotiated.
  std::size_t mulpdu = 0;
  std::size_t emss = 1460;
  // Largest ULPDU_Length accepted from the suite; bounds reassembly.
  std::size_t max_inbound_ulpdu = wire::kMaxUlpduLength;
  // Test-ULP options (convention §2.4, §3.4, §6.2, §2.2).
  bool keep_memory = true;       // honour Keep Memory; advertises flag 0x0010
  bool report_outcome = true;    // the previous-connection outcome block
  bool report_solicited = true;  // Event Records say whether SE was set
  bool report_send_rtr = false;  // an Event Record for a Send RTR (SHOULD NOT)
  // Test-ULP 1.1 command records (§7): advertise flag 0x0020 and carry out
  // the commands the suite sends. false: a 1.0 target.
  bool commands = true;
  // Hand each connection's memory back to the target when it closes, for
  // the next Keep Memory connection and MemorySnapshot. A harness that runs
  // one connection per target and then Resets it (the connection fuzzer) turns
  // it off: copying the memory back was a fifth of a fuzz connection's cost.
  // Off, every connection starts from the pattern.
  bool hand_back_memory = true;
  // With fault late-fpdu-hand-off: how long after the Reply arriving octets
  // stay unread (the fault's description says 100 ms; tests shorten it).
  std::chrono::milliseconds late_hand_off{100};
  // Convention 1.2 §11: advertise flag 0x0040 (Minor Version 2). Every
  // connection is its own protection domain: a connection opened while
  // others are open gets slot k > 0, and its STags are StagForSlot(stag, k),
  // so no STag is valid on two open connections.
  bool concurrent_connections = true;
  // Convention 1.3 §12 (with concurrent_connections): the default layout's
  // `atomic` region (under rfc5040 an added read/write region, STag
  // 0x00001d04) lies in a memory object of its own that concurrent
  // connections share, advertised with the shared attribute (Minor Version
  // 3) under one STag on every connection.
  bool shared_regions = true;
};

// The layout a target with `config` serves: config.layout, else
// DefaultTargetLayout with the shared region of `shared_regions`.
TargetLayout ConfiguredLayout(const ReferenceTargetConfig& config);

// The STag a layout region has on a connection in `slot` (0 for the first
// open connection, so one connection at a time sees the layout's STags).
// XOR keeps the mapping one-to-one and leaves the key octet alone.
inline uint32_t StagForSlot(uint32_t stag, uint32_t slot) { return stag ^ (slot << 24); }
// A layout region's STag on a connection in `slot`: a shared region (§12)
// has the same STag on every connection.
inline uint32_t SlotStag(const wire::AdvertisedRegion& r, uint32_t slot) {
  return (r.attributes & wire::kAttrShared) ? r.stag : StagForSlot(r.stag, slot);
}

// "" when usable, else one line naming the problem (layout too large for
// the Advertisement, a region outside its memory object, no RTR type with
// RFC 6581, ...). MakeConnector refuses such a config.
std::string ValidateReferenceTargetConfig(const ReferenceTargetConfig& config);

// Why a connection closed (for logs and tests).
enum class CloseReason : uint8_t {
  kNone,               // still open
  kBadRequest,         // malformed MPA Request: wrong Key, PD_Length > limit, truncated at FIN
  kRevisionRejected,   // Rev not in the policy
  kEnhancedRejected,   // Rev >= 2, S = 1 with RFC 6581 off
  kCrcRejected,        // C = 1 in the Request, crc_supported off: rejecting Reply sent
  kConfigError,        // the config cannot produce an Advertisement
  kTerminateSent,      // the target sent a Terminate
  kTerminateReceived,  // the suite sent a Terminate
  kStreamError,        // the stream failed without a Terminate (malformed Terminate, LLP)
  kPeerClosed,         // the suite closed (FIN)
  kPeerReset,          // the suite reset (RST)
  // Initiator role (reference_initiator.cc)
  kBadReply,       // malformed MPA Reply: wrong Key, PD_Length > 512, a Rev it cannot use
  kReplyRejected,  // the Reply had R = 1 (with or without a Connect Directive)
  kReplyTimeout,   // no Reply before InitiatorPolicy::reply_timeout
};
const char* CloseReasonName(CloseReason r);

enum class ConnectionPhase : uint8_t {
  kAwaitingRequest,    // collecting the MPA Request
  kAwaitingFirstFpdu,  // Reply sent; nothing is sent until the suite's first FPDU
  kFullOperation,
  kClosed,         // the target's side is closed (FIN)
  kAwaitingReply,  // Initiator: Request sent, collecting the MPA Reply
};
const char* ConnectionPhaseName(ConnectionPhase p);

class ReferenceTargetConnection;

class ReferenceTarget {
 public:
  explicit ReferenceTarget(ReferenceTargetConfig config = {});
  ReferenceTarget(const ReferenceTarget&) = delete;
  ReferenceTarget& operator=(const ReferenceTarget&) = delete;

  // A new connection (TCP accept): the next Connection Serial.
  std::unique_ptr<ReferenceTargetConnection> Accept();
  // A connection the target opens as MPA Initiator (convention §10): the
  // next Connection Serial; the Request is the connection's first output
  // (ReferenceTargetConnection::Start), with the options of the pending
  // Connect Directive if there is one (it is used up), else config().initiator.
  std::unique_ptr<ReferenceTargetConnection> Connect();

  const ReferenceTargetConfig& config() const { return config_; }
  const TargetLayout& layout() const { return layout_; }
  // "" when the config is usable (ValidateReferenceTargetConfig).
  const std::string& config_error() const { return config_error_; }
  uint32_t connections_accepted() const;
  // What the next Advertisement reports (convention §3.4).
  wire::PreviousOutcome previous_outcome() const;
  // The previous connection's commands, for the next Commands block (§7.4).
  wire::CommandCapabilities previous_commands() const;
  // The memory object as the last finished connection left it (empty if unknown).
  wire::Bytes MemorySnapshot(uint16_t memory_object) const;
  // Back to the state right after construction: Connection Serial 0, memory
  // patterned, no previous outcome. A harness that runs many connections (the
  // connection fuzzer) reuses its targets instead of building new ones. No
  // connection of this target may be alive.
  void Reset();

 private:
  friend class ReferenceTargetConnection;
  // Connection hooks, all under mu_.
  // The memory objects for a connection that is starting: the kept
  // contents (a copy), or the shared pattern (convention §4), which the
  // model copies only when the connection first writes.
  std::vector<std::shared_ptr<const wire::Bytes>> LoadMemory(uint32_t serial, bool keep);
  // Whether `serial` is the last connection that loaded memory (only its
  // memory is worth storing).
  bool OwnsMemory(uint32_t serial) const;
  // Takes a finished connection's memory back, unless a later connection
  // has loaded memory since (it owns the newer contents).
  void StoreMemory(uint32_t serial, std::vector<wire::Bytes> objects);
  void RecordOutcome(const wire::PreviousOutcome& outcome);
  void SetDirective(const wire::ConnectDirective& d);
  std::optional<wire::ConnectDirective> TakeDirective();
  void RecordCommands(const wire::CommandCapabilities& commands);
  // Concurrent connections (§11): the lowest slot no open connection holds.
  // `peer` is the Suite Request's Case Hash: connections of one case.
  uint32_t AcquireSlot(uint32_t serial, uint32_t peer);
  void ReleaseSlot(uint32_t serial);
  // Fault terminate-tears-down-others: every other open connection of the
  // same peer ends. In-process, parallel cases share one target, so "the
  // same peer" is the same Case Hash: the fault then hits only the case's
  // own connections, and the fault matrix stays deterministic.
  void TearDownOthers(uint32_t serial);
  bool TornDown(uint32_t serial) const;
  // Convention §12: the memory of layout object `index` when a region in it
  // is shared; the same octets for every open connection of `peer` (the
  // Case Hash, as for TearDownOthers, so that parallel in-process cases do
  // not race on one word), starting as `initial`. nullptr when the object
  // is not shared or `peer` is 0 (no Suite Request: shared with nobody).
  std::shared_ptr<wire::Bytes> SharedMemory(uint32_t serial, uint32_t peer, std::size_t index,
                                            const std::shared_ptr<const wire::Bytes>& initial);
  // Fault invalidate-shared-stag: notes that `peer` invalidated shared
  // `stag` (when `invalidated`); returns whether it has.
  bool ShareInvalidation(uint32_t peer, uint32_t stag, bool invalidated);

  const ReferenceTargetConfig config_;
  const TargetLayout layout_;
  const std::string config_error_;
  mutable std::mutex mu_;
  uint32_t serial_ = 0;
  uint32_t memory_owner_ = 0;  // serial of the last connection that loaded memory
  // The convention's pattern of each memory object, parallel to
  // layout_.memory_objects; computed once per process (shared by every
  // target with the same objects, e.g. the fuzzer's target and its twin).
  std::vector<std::shared_ptr<const wire::Bytes>> pattern_;
  // What the last finished connection left, parallel to
  // layout_.memory_objects; empty while that is still the pattern.
  std::vector<wire::Bytes> memory_;
  wire::PreviousOutcome previous_;
  std::optional<wire::ConnectDirective> directive_;
  wire::CommandCapabilities previous_commands_;
  struct OpenConnection {
    uint32_t slot = 0;
    uint32_t peer = 0;
  };
  std::map<uint32_t, OpenConnection> slots_;  // serial -> each open connection
  std::set<uint32_t> torn_down_;              // serials ended by another connection (fault)
  std::atomic<bool> any_torn_down_{false};    // torn_down_ was ever non-empty (TornDown's fast path)
  std::vector<bool> shared_objects_;          // parallel to layout_.memory_objects
  std::map<std::pair<uint32_t, std::size_t>, std::weak_ptr<wire::Bytes>> shared_memory_;  // (peer, index)
  std::set<std::pair<uint32_t, uint32_t>> shared_invalidated_;                            // (peer, STag), fault
};

// An Event the endpoint reports to its ULP when a request it sent completed
// (Read, Atomic, COMMIT).
bool IsRequesterCompletion(model::UlpEventKind k);

class ReferenceTargetConnection {
 public:
  ReferenceTargetConnection(ReferenceTarget& target, uint32_t serial, bool initiator = false);
  ~ReferenceTargetConnection();
  // The TCP MSS of the connection this connection serves (TCP_MAXSEG, options
  // excluded): the MULPDU follows the smaller of it and the configured EMSS
  // (RFC 5044 §4.5, decisions D-G14). Call before the first octet.
  void SetEffectiveMss(std::size_t mss) { effective_mss_ = mss; }
  ReferenceTargetConnection(const ReferenceTargetConnection&) = delete;
  ReferenceTargetConnection& operator=(const ReferenceTargetConnection&) = delete;

  // Initiator role: the MPA Request (the first octets of the connection).
  void Start(wire::Bytes& out);
  // Initiator role: checks the Reply timeout (InitiatorPolicy::reply_timeout)
  // at `now` (the connection reads no clock but its own hand-off); a transport
  // calls it while it waits, once timer() (when set) has passed.
  void OnTimer(std::chrono::steady_clock::time_point now, wire::Bytes& out);
  std::optional<std::chrono::steady_clock::time_point> timer() const;
  bool initiator() const { return initiator_; }

  // Octets from the suite, in stream order, cut anywhere. Whatever the target
  // sends in response is appended to `out`. After the target closed its
  // side, input is still consumed (a faulty target may keep placing, see
  // keep-placing-after-terminate) but nothing more is appended.
  void OnBytes(wire::ByteSpan in, wire::Bytes& out);
  // The suite closed its side (FIN): the target closes too.
  void OnPeerClosed(wire::Bytes& out);
  // The suite reset the connection: everything is discarded.
  void OnPeerReset();

  // The target has closed (or wants to close) its sending side: send what
  // was appended to `out`, then FIN.
  bool wants_close() const { return phase_ == ConnectionPhase::kClosed || target_.TornDown(serial_); }
  // Both sides are done: the connection can be released.
  bool closed() const { return wants_close() && peer_closed_; }
  ConnectionPhase phase() const { return phase_; }
  CloseReason close_reason() const { return close_reason_; }
  uint32_t connection_serial() const { return serial_; }
  // Concurrent-connection slot (§11): 0 unless others were open at accept.
  uint32_t slot() const { return slot_; }

  // Set once the Request was accepted.
  const std::optional<wire::MpaStartupFrame>& request() const { return request_; }
  const std::optional<wire::MpaStartupFrame>& reply() const { return reply_; }
  const std::optional<wire::Advertisement>& advertisement() const { return advertisement_; }
  bool keep_memory_requested() const { return keep_memory_; }
  // The endpoint (nullptr before the Request was accepted), e.g. to peek
  // memory in tests. Mutating it bypasses the connection.
  const model::RdmapEndpoint* endpoint() const { return endpoint_ ? &*endpoint_ : nullptr; }
  model::RdmapEndpoint* endpoint() { return endpoint_ ? &*endpoint_ : nullptr; }
  // Octets of a registered region (empty if unknown, out of range or before startup).
  std::span<const uint8_t> PeekMemory(uint32_t stag, uint64_t tagged_offset, std::size_t length) const;
  uint32_t events_sent() const { return events_sent_; }
  // Octets held for reassembly (the partial Request, a partial FPDU): bounded
  // by 20 + 512 and by max_inbound_ulpdu plus its framing, whatever arrives.
  std::size_t buffered() const;
  // One line for serve's per-connection log.
  std::string log_line() const;

 private:
  void FeedStartup(wire::ByteSpan& in, wire::Bytes& out);
  // reference_initiator.cc
  void FeedReply(wire::ByteSpan& in, wire::Bytes& out);
  bool OnReply(const wire::MpaStartupFrame& reply, wire::Bytes& out);
  void SendFirstFpdu(const wire::IrdOrdOutcome& o, wire::Bytes& out);
  bool SendReadRtr(wire::Bytes& out);
  void AbortSetup(wire::TerminateCode code, wire::Bytes& out);
  wire::MpaStartupFrame BuildRequest();
  bool Accept(const wire::MpaStartupFrame& request, wire::Bytes& out);
  bool RejectForCrc(const wire::MpaStartupFrame& request, wire::Bytes& out);
  std::optional<wire::EnhancedIrdOrd> NegotiateEnhanced(const wire::EnhancedIrdOrd& req);
  void SetUpEndpoint(uint8_t version);
  void PrepareFraming();
  bool BuildAdvertisement(wire::Advertisement& adv) const;
  void FeedFpdus(wire::ByteSpan in, wire::Bytes& out);
  void OnUlpdu(wire::ByteSpan ulpdu, wire::Bytes& out);
  bool IsRtrOrNoneOwed(wire::ByteSpan ulpdu) const;
  void SendPendingResponses(wire::Bytes& out);
  void AcceptHeaderOnly(std::size_t private_data_to_come, wire::Bytes& out);
  bool HeldUntilHandOff(wire::ByteSpan in, wire::Bytes& out);
  void Drain(wire::Bytes& out);
  void ReportEvents(wire::Bytes& out);
  void FrameSegments(const model::Reactions& r, wire::Bytes& out);
  void NoteOutcome();
  // Command records (reference_commands.cc, convention §7).
  struct CommandSlot {
    enum State : uint8_t { kQueued, kInFlight, kDone };
    wire::Command command;
    State state = kQueued;
    wire::CompletionStatus status = wire::CompletionStatus::kSuccess;
    wire::Bytes moved;  // the octets it moved (its completion's data)
  };
  uint32_t SupportedCommands() const;
  bool TakeCommandRecord(const model::UlpEvent& e);
  void CompleteRequest(const model::UlpEvent& e);
  bool LocalOctets(const wire::Command& c, wire::Bytes& out) const;
  model::PostStatus PostCommand(CommandSlot& s);
  void PumpCommands(wire::Bytes& out);
  void SettleCommands();
  void Close(CloseReason reason);
  void Finish(bool release = false);

  ReferenceTarget& target_;
  const ReferenceTargetConfig& config_;
  const uint32_t serial_;
  const bool initiator_;
  std::optional<wire::ConnectDirective> directive_;  // Initiator: the options of this connection
  std::chrono::steady_clock::time_point reply_deadline_{};
  uint32_t slot_ = 0;
  bool holds_slot_ = false;
  void ReleaseSlot();
  void SyncSharedInvalidations();
  ConnectionPhase phase_ = ConnectionPhase::kAwaitingRequest;
  CloseReason close_reason_ = CloseReason::kNone;
  bool peer_closed_ = false;
  wire::Bytes startup_;          // the Request so far (<= 20 + 512 octets)
  std::size_t skip_octets_ = 0;  // Request Private Data dropped by reply-before-request-complete
  // late-fpdu-hand-off: when the hand-off after the Reply ends, and the
  // octets that arrived before it, unread until more octets or the FIN come.
  std::chrono::steady_clock::time_point hand_off_at_{};
  wire::Bytes held_;
  std::optional<wire::MpaStartupFrame> request_;
  std::optional<wire::MpaStartupFrame> reply_;
  std::size_t effective_mss_ = 0;  // 0: unknown (in-process)
  std::optional<wire::Advertisement> advertisement_;
  bool keep_memory_ = false;
  uint32_t case_hash_ = 0;
  bool crc_ = true;
  bool markers_in_ = false;   // suite -> target (the Reply's M)
  bool markers_out_ = false;  // target -> suite (the Request's M)
  bool send_rtr_offered_ = false;
  uint16_t ird_ = 0;
  uint16_t ord_ = 0;
  std::optional<wire::MpaDeframer> deframer_;
  std::optional<wire::MarkerInserter> inserter_;
  std::optional<model::RdmapEndpoint> endpoint_;
  model::Reactions reactions_;
  model::Reactions posted_;
  wire::Bytes record_;
  std::optional<wire::DecodeError> llp_error_;
  std::optional<wire::PreviousOutcome> outcome_;
  uint32_t events_sent_ = 0;
  uint32_t completion_errors_ = 0;
  std::deque<CommandSlot> commands_;          // this connection's, in posting order
  wire::CommandCapabilities command_counts_;  // completed / failed / flushed so far
  uint32_t next_request_id_ = 1;              // Atomic Request Identifiers
  std::optional<uint16_t> suite_ird_;         // from the Suite Request extension (§2.4)
  uint64_t octets_in_ = 0;
  uint64_t octets_out_ = 0;
  uint64_t fpdus_in_ = 0;
  uint64_t fpdus_out_ = 0;
  std::string detail_;  // why it closed, for log_line
};

}  // namespace rdmapct::targets
