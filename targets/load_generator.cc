#include "targets/load_generator.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "reference/wire/crc32c.h"
#include "reference/wire/ddp_segmentation.h"
#include "reference/wire/hex.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"

namespace rdmapct::targets {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kMaxMessageSize = 16u << 20;
constexpr int kMaxConnections = 1024;
constexpr std::size_t kReadChunk = 64 * 1024;
// Write slots encoded per connection: more only cost memory, the target
// checks bounds the same way for each.
constexpr std::size_t kMaxWriteSlots = 64;

using wire::HexValue;

// What the target sent, for an error line.
std::string DescribeMessage(const wire::RdmapMessageView& v) {
  if (!v.opcode_known) return "an FPDU with unknown opcode " + HexValue(v.ctrl.opcode, 2);
  if (v.opcode() == wire::Opcode::kTerminate) {
    const auto* t = std::get_if<wire::TerminateHeader>(&v.header);
    if (t == nullptr) return "a Terminate with a truncated header";
    return "a Terminate " + std::to_string(t->code.layer) + "/" + std::to_string(t->code.error_type) + "/" +
           HexValue(t->code.error_code, 2) + " (" + wire::Describe(t->code) + ")";
  }
  return std::string("a ") + v.opcode_info->name;
}

// Called for every message the target sends; false with `error` ends the run.
using MessageHandler = std::function<bool(const wire::RdmapMessageView&, std::string& error)>;

// The state every worker shares: budgets, the first error, the totals.
struct Shared {
  Shared(TargetConnector& c, const LoadOptions& o) : connector(c), options(o) {}

  TargetConnector& connector;
  const LoadOptions& options;
  wire::Bytes payload;
  uint32_t payload_digest = 0;
  Clock::time_point deadline = Clock::time_point::max();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> claimed{0};
  std::mutex mu;
  LoadResult result;  // under mu

  bool Stopped() const {
    return stop.load(std::memory_order_relaxed) || Clock::now() >= deadline ||
           (options.stop && options.stop->load(std::memory_order_relaxed) > 0);
  }
  bool Exhausted() const {
    return options.max_messages != 0 && claimed.load(std::memory_order_relaxed) >= options.max_messages;
  }
  // Up to `want` messages of the budget; 0 when it is used up or the run stops.
  uint64_t Claim(uint64_t want) {
    if (Stopped()) return 0;
    if (options.max_messages == 0) return want;
    uint64_t had = claimed.load();
    while (true) {
      if (had >= options.max_messages) return 0;
      const uint64_t n = std::min(want, options.max_messages - had);
      if (claimed.compare_exchange_weak(had, had + n)) return n;
    }
  }
  void Fail(const std::string& error) {
    std::lock_guard<std::mutex> lock(mu);
    if (result.error.empty()) result.error = error;
    stop = true;
  }
  // A connection ended cleanly after `messages` messages.
  void Count(uint64_t messages, uint64_t wire_octets, uint64_t events, bool crc, bool read_back = false) {
    std::lock_guard<std::mutex> lock(mu);
    result.read_backs += read_back ? 1 : 0;
    result.messages += messages;
    result.payload_octets += messages * options.message_size;
    result.wire_octets += wire_octets;
    result.events += events;
    ++result.connections;
    if (result.crc && *result.crc != crc && result.error.empty()) {
      result.error = "the target negotiated CRCs on some connections and not on others";
      stop = true;
    }
    result.crc = crc;
  }
};

// One connection from the MPA Request to the target's FIN.
class LoadConnection {
 public:
  explicit LoadConnection(Shared& s) : s_(s), o_(s.options) {}
  ~LoadConnection() {
    if (t_ && !closed_) t_->Abort();  // an error path: do not leave it half-open
  }

  bool Open(MessageHandler handler, std::string& error);
  bool Send(wire::ByteSpan bytes, std::string& error);
  // Handles what has arrived within `timeout`; false on an error or when
  // the target closed or reset (it must wait for our FIN).
  bool Poll(milliseconds timeout, std::string& error);
  // Our FIN, then everything the target still sends, up to its FIN.
  bool Close(std::string& error);

  const wire::Advertisement& advertisement() const { return adv_; }
  bool crc() const { return crc_; }
  uint64_t wire_octets() const { return wire_octets_; }

 private:
  bool ReadReply(std::string& error);
  bool Pump(wire::ByteSpan chunk, std::string& error);

  Shared& s_;
  const LoadOptions& o_;
  std::unique_ptr<Transport> t_;
  wire::MpaDeframer deframer_{[] {
    wire::MpaDeframerConfig c;
    c.expect_startup_frame = true;
    c.startup_kind = wire::MpaFrameKind::kReply;
    return c;
  }()};
  MessageHandler handler_;
  wire::MpaStartupFrame request_;
  wire::Advertisement adv_;
  wire::Bytes in_;
  bool crc_ = false;
  bool closed_ = false;
  uint64_t wire_octets_ = 0;
};

bool LoadConnection::Open(MessageHandler handler, std::string& error) {
  handler_ = std::move(handler);
  t_ = s_.connector.Connect(o_.io_timeout, error);
  if (!t_) return false;
  request_.is_reply = false;
  request_.revision = 1;
  request_.crc_required = o_.crc;
  if (!Send(wire::EncodeMpaStartupFrame(request_), error) || !ReadReply(error)) return false;
  const wire::MpaStartupFrame& reply = *deframer_.startup_frame();
  if (reply.reject) {
    error = std::string("the target rejected the MPA Request (Reply R = 1)") +
            (o_.crc ? "" : "; it may not support CRCs off");
    return false;
  }
  if (reply.marker_required) {
    error = "the target asks for Markers (Reply M = 1); the load generator does not insert them";
    return false;
  }
  auto adv = wire::DecodeAdvertisementFromPrivateData(reply.private_data, false);
  if (!adv.ok()) {
    error = "no usable test-ULP Advertisement in the MPA Reply: " + adv.error().Describe();
    return false;
  }
  adv_ = std::move(adv.value());
  crc_ = wire::NegotiateMpa(request_, reply).crc;
  deframer_.StartFullOperation(crc_, false);
  // Octets after the Reply: the target must wait for our first FPDU.
  return Pump({}, error);
}

bool LoadConnection::ReadReply(std::string& error) {
  const Clock::time_point deadline = Clock::now() + o_.io_timeout;
  while (!deframer_.startup_frame()) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    in_.clear();
    const IoStatus st = t_->Read(in_, kReadChunk, std::max(left, milliseconds(0)));
    if (st == IoStatus::kTimeout) {
      error = "no MPA Reply within " + std::to_string(o_.io_timeout.count()) + " ms";
      return false;
    }
    if (st != IoStatus::kOk) {
      error = std::string("the target ended the connection before its MPA Reply (") + IoStatusName(st) +
              (st == IoStatus::kError ? ": " + t_->last_error() : "") + ")";
      return false;
    }
    if (!Pump(in_, error)) return false;
  }
  return true;
}

bool LoadConnection::Pump(wire::ByteSpan chunk, std::string& error) {
  std::string handler_error;
  const wire::Status st = deframer_.Feed(chunk, [&](const wire::MpaFpdu& f) {
    if (!handler_error.empty()) return;
    auto v = wire::DecodeRdmapSegment(f.ulpdu, o_.profile);
    if (!v.ok()) {
      handler_error = "an undecodable FPDU from the target: " + v.error().Describe();
      return;
    }
    handler_(v.value(), handler_error);
  });
  if (!handler_error.empty()) {
    error = handler_error;
    return false;
  }
  if (!st.ok()) {
    error = "the target's stream: " + st.error().Describe();
    return false;
  }
  return true;
}

bool LoadConnection::Send(wire::ByteSpan bytes, std::string& error) {
  const IoStatus st = t_->Write(bytes);
  if (st != IoStatus::kOk) {
    error = std::string("sending to the target: ") + IoStatusName(st) +
            (st == IoStatus::kTimeout || st == IoStatus::kError ? " (" + t_->last_error() + ")" : "");
    // Whatever the target said before it stopped reading is the better reason.
    std::string said;
    if (Poll(milliseconds(0), said) || said.empty()) return false;
    error = said;
    return false;
  }
  wire_octets_ += bytes.size();
  return true;
}

bool LoadConnection::Poll(milliseconds timeout, std::string& error) {
  in_.clear();
  const IoStatus st = t_->Read(in_, kReadChunk, timeout);
  if (st == IoStatus::kTimeout) return true;
  if (st == IoStatus::kOk) return Pump(in_, error);
  error = std::string("the target ") + (st == IoStatus::kClosed ? "closed" : "reset") +
          " the connection before the initiator did" + (st == IoStatus::kError ? " (" + t_->last_error() + ")" : "");
  return false;
}

bool LoadConnection::Close(std::string& error) {
  t_->ShutdownWrite();
  const Clock::time_point deadline = Clock::now() + o_.io_timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    in_.clear();
    const IoStatus st = t_->Read(in_, kReadChunk, std::max(left, milliseconds(0)));
    if (st == IoStatus::kClosed) break;
    if (st == IoStatus::kOk) {
      if (!Pump(in_, error)) return false;
      continue;
    }
    error =
        st == IoStatus::kTimeout
            ? "the target did not close within " + std::to_string(o_.io_timeout.count()) + " ms of the initiator's FIN"
            : std::string("the target ended the connection with ") + IoStatusName(st) + " instead of a FIN";
    return false;
  }
  closed_ = true;
  if (const wire::Status st = deframer_.Finish(); !st.ok()) {
    error = "the target's stream ends inside an FPDU: " + st.error().Describe();
    return false;
  }
  return true;
}

// The FPDUs of one message (its RDMAP header, if any, then `payload`): DDP
// segments of at most `mulpdu` octets.
bool AppendMessage(const wire::RdmapSegment& seg, wire::ByteSpan payload, std::size_t mulpdu, bool crc,
                   wire::Bytes& out, std::string& error) {
  wire::Bytes with_header;
  if (!std::holds_alternative<std::monostate>(seg.header)) {
    with_header = wire::EncodeRdmapMessageBody(seg.header, payload);
    payload = with_header;
  }
  auto plan = wire::SegmentDdpMessage(seg.ddp, payload, mulpdu);
  if (!plan.ok()) {
    error = "cannot segment a message: " + plan.error().Describe();
    return false;
  }
  wire::FpduEncodeOptions fo;
  fo.crc_enabled = crc;
  for (const wire::Bytes& ulpdu : wire::EncodeDdpSegments(plan.value())) wire::AppendFpdu(out, ulpdu, fo);
  return true;
}

std::size_t Mulpdu(const LoadOptions& o) { return o.mulpdu == 0 ? wire::kMaxMulpdu : o.mulpdu; }

// ---- RDMA Writes ------------------------------------------------------------

const wire::AdvertisedRegion* WriteRegion(const wire::Advertisement& adv, std::size_t size) {
  const auto len = static_cast<uint32_t>(size);
  if (const auto* r = wire::SelectRegion(adv, wire::RegionRole::kReadWrite, len)) return r;
  return wire::SelectRegion(adv, wire::RegionRole::kWriteOnly, len);
}

// The encoded Write of each whole-message slot of `r`, in order.
bool EncodeWriteSlots(const Shared& s, const wire::AdvertisedRegion& r, bool crc, std::vector<wire::Bytes>& slots,
                      std::string& error) {
  const std::size_t size = s.options.message_size;
  const std::size_t n = std::min<std::size_t>(r.length / size, kMaxWriteSlots);
  slots.assign(n, {});
  for (std::size_t i = 0; i < n; ++i) {
    const wire::RdmapSegment seg = wire::MakeRdmaWrite(r.stag, r.base_tagged_offset + i * size, s.payload);
    if (!AppendMessage(seg, s.payload, Mulpdu(s.options), crc, slots[i], error)) return false;
  }
  return true;
}

std::string RejectText(const wire::RdmapMessageView& v) {
  return "the target sent " + DescribeMessage(v) + " in answer to valid RDMA Writes (it must stay silent)";
}

// The read-back that ends a Write connection: one RDMA Read Request for the
// slot written last. The target answers it only after every earlier Write
// of the stream (RDMAP processes a stream's messages in order), so its
// Read Response proves that the Writes were taken, not dropped by a stream
// that failed without a Terminate, and its octets must be the payload.
// Before it is armed, anything the target sends is an error.
struct ReadBack {
  static constexpr uint32_t kSinkStag = 0x10AD0001;  // the initiator's (never checked by the target)
  bool armed = false;
  bool done = false;
  wire::Bytes data;
  std::size_t received = 0;

  bool operator()(const wire::RdmapMessageView& v, std::string& error) {
    if (!armed || done || !v.opcode_known || v.opcode() != wire::Opcode::kRdmaReadResponse) {
      error = RejectText(v);
      return false;
    }
    const wire::DdpSegmentHeader& h = v.ddp.header;
    if (h.stag != kSinkStag || h.tagged_offset > data.size() || data.size() - h.tagged_offset < v.ulp_payload.size()) {
      error = "a Read Response to STag " + HexValue(h.stag, 8) + " TO " + HexValue(h.tagged_offset, 16) +
              " outside the " + std::to_string(data.size()) + " octets requested";
      return false;
    }
    std::copy(v.ulp_payload.begin(), v.ulp_payload.end(), data.begin() + static_cast<long>(h.tagged_offset));
    received += v.ulp_payload.size();
    done = h.last;
    return true;
  }
};

// Reads back the slot at `to` of `r` and compares it with the payload.
bool ReadBackLastWrite(Shared& s, LoadConnection& c, ReadBack& rb, const wire::AdvertisedRegion& r, uint64_t to,
                       std::string& error) {
  const std::size_t size = s.options.message_size;
  rb.data.assign(size, 0);
  rb.armed = true;
  wire::ReadRequestHeader h;
  h.sink_stag = ReadBack::kSinkStag;
  h.read_message_size = static_cast<uint32_t>(size);
  h.source_stag = r.stag;
  h.source_tagged_offset = to;
  wire::Bytes fpdu;
  if (!AppendMessage(wire::MakeReadRequest(1, h), {}, Mulpdu(s.options), c.crc(), fpdu, error) ||
      !c.Send(fpdu, error)) {
    return false;
  }
  const Clock::time_point deadline = Clock::now() + s.options.io_timeout;
  while (!rb.done) {
    if (Clock::now() >= deadline) {
      error = "no Read Response to the read-back within " + std::to_string(s.options.io_timeout.count()) +
              " ms: the target did not take the Writes";
      return false;
    }
    if (!c.Poll(std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), error)) return false;
  }
  if (rb.received != size || rb.data != s.payload) {
    error = "the read-back of TO " + HexValue(to, 16) + " does not hold the payload of the last Write there";
    return false;
  }
  return true;
}

// Sends Writes until the budget or the time is used up; the TO of the last
// one in `last_to`.
bool SendWrites(Shared& s, LoadConnection& c, const std::vector<wire::Bytes>& slots, const wire::AdvertisedRegion& r,
                uint64_t& sent, uint64_t& last_to, std::string& error) {
  std::size_t next = 0;
  wire::Bytes batch;
  while (const uint64_t n = s.Claim(s.options.batch)) {
    batch.clear();
    for (uint64_t i = 0; i < n; ++i, next = (next + 1) % slots.size()) {
      batch.insert(batch.end(), slots[next].begin(), slots[next].end());
      last_to = r.base_tagged_offset + next * s.options.message_size;
    }
    if (!c.Send(batch, error) || !c.Poll(milliseconds(0), error)) return false;
    sent += n;
  }
  return true;
}

void RunWriteWorker(Shared& s) {
  LoadConnection c(s);
  ReadBack rb;
  std::string error;
  if (!c.Open([&rb](const wire::RdmapMessageView& v, std::string& e) { return rb(v, e); }, error)) {
    return s.Fail(error);
  }
  const wire::AdvertisedRegion* r = WriteRegion(c.advertisement(), s.options.message_size);
  if (r == nullptr) {
    return s.Fail("the Advertisement has no rw or wo region of at least " + std::to_string(s.options.message_size) +
                  " octets");
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.result.write_region) s.result.write_region = *r;
  }
  std::vector<wire::Bytes> slots;
  uint64_t sent = 0, last_to = 0;
  const bool read_back = r->Has(wire::kAccessRemoteRead) && c.advertisement().ird > 0;
  if (!EncodeWriteSlots(s, *r, c.crc(), slots, error) || !SendWrites(s, c, slots, *r, sent, last_to, error) ||
      (sent > 0 && read_back && !ReadBackLastWrite(s, c, rb, *r, last_to, error)) || !c.Close(error)) {
    return s.Fail(error + " (after " + std::to_string(sent) + " RDMA Writes on this connection)");
  }
  s.Count(sent, c.wire_octets(), 0, c.crc(), sent > 0 && read_back);
}

// ---- Sends ------------------------------------------------------------------

// Checks the Event Record of every Send, in order (convention §6.2).
struct EventChecker {
  const Shared* s = nullptr;
  uint32_t next = 1;  // sequence = MSN of the Send it reports

  bool operator()(const wire::RdmapMessageView& v, std::string& error) {
    if (!v.opcode_known || v.opcode() != wire::Opcode::kSend) {
      error = "the target sent " + DescribeMessage(v) + " in answer to valid Sends";
      return false;
    }
    if (!v.ddp.header.last || v.ddp.header.message_offset != 0) {
      error = "the target segmented an Event Send (records are at most 100 octets)";
      return false;
    }
    auto ev = wire::DecodeEventRecord(v.ulp_payload);
    if (!ev.ok()) {
      error = "a target Send that is not an Event Record: " + ev.error().Describe();
      return false;
    }
    const std::string which = "Event Record " + std::to_string(next) + ": ";
    if (ev->type != wire::EventType::kSendDelivered) {
      error = which + "type " + std::to_string(static_cast<int>(ev->type)) + " (value " + HexValue(ev->value, 16) +
              "), expected 1 (Send delivered)";
    } else if (ev->sequence != next) {
      error = which + "sequence number " + std::to_string(ev->sequence);
    } else if (ev->length != s->options.message_size) {
      error = which + "delivered length " + std::to_string(ev->length) + ", sent " +
              std::to_string(s->options.message_size);
    } else if (ev->digest != s->payload_digest) {
      error = which + "digest " + HexValue(ev->digest, 8) + ", the payload's is " + HexValue(s->payload_digest, 8);
    }
    ++next;
    return error.empty();
  }
};

bool SendAndClose(Shared& s, LoadConnection& c, uint64_t n, const EventChecker& events, std::string& error);

// One connection: as many Sends as the target posted buffers (or what is
// left of the budget), then close. `hint` is the buffer count the previous
// connection advertised: that many messages are claimed before connecting,
// so no connection is opened once the budget is gone (0: claim after the
// Advertisement). False when the worker must stop.
bool RunSendConnection(Shared& s, uint64_t& hint) {
  uint64_t n = hint == 0 ? 0 : s.Claim(hint);
  if (hint != 0 && n == 0) return false;
  LoadConnection c(s);
  std::string error;
  EventChecker events{&s};
  // The handler keeps a pointer: `events` outlives the connection's reads.
  if (!c.Open([&events](const wire::RdmapMessageView& v, std::string& e) { return events(v, e); }, error)) {
    s.Fail(error);
    return false;
  }
  const wire::Advertisement& adv = c.advertisement();
  if (adv.receive_buffer_count == 0 || adv.receive_buffer_size < s.options.message_size) {
    s.Fail("the target posts " + std::to_string(adv.receive_buffer_count) + " receive buffer(s) of " +
           std::to_string(adv.receive_buffer_size) + " octets: no room for " + std::to_string(s.options.message_size) +
           "-octet Sends");
    return false;
  }
  if (hint == 0) n = s.Claim(adv.receive_buffer_count);
  if (n > adv.receive_buffer_count) {  // fewer buffers than last time: give the rest back
    s.claimed -= n - adv.receive_buffer_count;
    n = adv.receive_buffer_count;
  }
  hint = adv.receive_buffer_count;
  if (!SendAndClose(s, c, n, events, error)) {
    s.Fail(error);
    return false;
  }
  s.Count(n, c.wire_octets(), n, c.crc());
  return n != 0;
}

// Sends MSN 1..n, closes, and checks that n Event Records came back.
bool SendAndClose(Shared& s, LoadConnection& c, uint64_t n, const EventChecker& events, std::string& error) {
  wire::Bytes batch;
  for (uint32_t msn = 1; msn <= n; ++msn) {
    const wire::RdmapSegment seg = wire::MakeSend(wire::Opcode::kSend, msn, s.payload);
    bool ok = AppendMessage(seg, s.payload, Mulpdu(s.options), c.crc(), batch, error);
    if (ok && (msn == n || msn % s.options.batch == 0)) {
      ok = c.Send(batch, error) && c.Poll(milliseconds(0), error);
      batch.clear();
    }
    if (!ok) {
      error += " (at Send " + std::to_string(msn) + " of " + std::to_string(n) + " on this connection)";
      return false;
    }
  }
  if (!c.Close(error)) {
    error += " (after " + std::to_string(n) + " Sends on this connection)";
    return false;
  }
  if (events.next - 1 != n) {
    error =
        "the target sent " + std::to_string(events.next - 1) + " Event Record(s) for " + std::to_string(n) + " Sends";
    return false;
  }
  return true;
}

void RunSendWorker(Shared& s) {
  uint64_t hint = 0;
  while (!s.Stopped() && !s.Exhausted() && RunSendConnection(s, hint)) {
  }
}

}  // namespace

const char* LoadOpName(LoadOp op) { return op == LoadOp::kWrite ? "write" : "send"; }

double LoadResult::MessagesPerSecond() const {
  const double s = std::chrono::duration<double>(elapsed).count();
  return s > 0 ? static_cast<double>(messages) / s : 0;
}

double LoadResult::MegabytesPerSecond() const {
  const double s = std::chrono::duration<double>(elapsed).count();
  return s > 0 ? static_cast<double>(payload_octets) / s / 1e6 : 0;
}

std::string ValidateLoadOptions(const LoadOptions& o) {
  if (o.message_size == 0 || o.message_size > kMaxMessageSize) return "message size must be 1 .. 16 MiB";
  if (o.connections < 1 || o.connections > kMaxConnections) return "connections must be 1 .. 1024";
  if (o.duration.count() <= 0 && o.max_messages == 0) return "needs a duration or a message budget";
  if (o.duration.count() < 0) return "duration must not be negative";
  if (o.batch == 0) return "batch must be at least 1";
  if (o.io_timeout.count() <= 0) return "the I/O timeout must be positive";
  if (o.mulpdu != 0 && o.mulpdu <= wire::kDdpUntaggedHeaderLength) {
    return "MULPDU must leave room for payload after the 18-octet DDP header";
  }
  return "";
}

wire::Bytes LoadPayload(std::size_t size) {
  wire::Bytes p(size);
  for (std::size_t i = 0; i < size; ++i) p[i] = static_cast<uint8_t>(~wire::PatternByte(0, i));
  return p;
}

LoadResult RunLoad(TargetConnector& connector, const LoadOptions& options) {
  Shared s(connector, options);
  if (std::string e = ValidateLoadOptions(options); !e.empty()) {
    s.result.error = e;
    return s.result;
  }
  s.payload = LoadPayload(options.message_size);
  s.payload_digest = wire::Crc32c(s.payload);
  const Clock::time_point start = Clock::now();
  if (options.duration.count() > 0) s.deadline = start + options.duration;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(options.connections));
  for (int i = 0; i < options.connections; ++i) {
    workers.emplace_back([&s] { s.options.op == LoadOp::kWrite ? RunWriteWorker(s) : RunSendWorker(s); });
  }
  for (std::thread& w : workers) w.join();
  s.result.elapsed = Clock::now() - start;
  return s.result;
}

std::string DescribeLoad(const LoadOptions& o, const LoadResult& r) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s %zu octets, crc %s, %d connection(s): %llu messages in %.3f s = %.0f msgs/s, %.2f MB/s "
                "(%llu connection(s) opened and closed cleanly)",
                LoadOpName(o.op), o.message_size, r.crc ? (*r.crc ? "on" : "off") : (o.crc ? "on?" : "off?"),
                o.connections, static_cast<unsigned long long>(r.messages),
                std::chrono::duration<double>(r.elapsed).count(), r.MessagesPerSecond(), r.MegabytesPerSecond(),
                static_cast<unsigned long long>(r.connections));
  return buf;
}

}  // namespace rdmapct::targets
