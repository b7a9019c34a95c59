#include "conformance/connection.h"

#include <algorithm>
#include <thread>

#include "conformance/frame_text.h"
#include "reference/wire/crc32c.h"
#include "reference/wire/describe.h"
#include "reference/wire/hex.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/stream_decode.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::conformance {
namespace {

std::chrono::milliseconds Remaining(Clock::time_point deadline) {
  // Rounded up, so that a wait that times out has reached its deadline.
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(left, std::chrono::milliseconds(0));
}

// Field tree text of a DDP segment for failure details.
std::string SegmentDetail(wire::ByteSpan ulpdu, uint64_t offset, wire::Profile profile) {
  wire::DecodedSegment seg;
  seg.ulpdu = ulpdu;
  seg.map.start = offset;
  auto view = wire::DecodeRdmapSegment(ulpdu, profile);
  if (view.ok())
    seg.rdmap = *view;
  else
    seg.error = view.error();
  return wire::RenderText(wire::DescribeSegment(seg, profile));
}

// Wire index of every logical FPDU octet when Markers are interleaved from
// Marker-space position `p0` on.
std::vector<std::size_t> LogicalToWire(uint32_t p0, std::size_t wire_size, bool markers) {
  std::vector<std::size_t> map;
  map.reserve(wire_size);
  for (std::size_t i = 0; i < wire_size;) {
    if (markers && wire::IsMarkerPosition(static_cast<uint32_t>(p0 + i))) {
      i += wire::kMarkerSize;
      continue;
    }
    map.push_back(i++);
  }
  return map;
}

// REQ R5044-3-05 R5044-4.1-03 R5044-4.2-02 R5044-4.2-05
// The sender's duties in an FPDU that receivers must ignore (PAD content,
// Marker RESERVED, FPDUPTR's low bits) and so never show up as a deframing
// error: checked on every target FPDU. `raw` starts at Marker-space
// position `p0` (the target's first FPDU is position 0).
using wire::HexValue;

std::string SenderFramingProblem(uint32_t p0, wire::ByteSpan raw, bool markers, uint16_t ulpdu_length) {
  if (ulpdu_length > wire::kMaxPostedUlpduLength) {
    return "ULPDU_Length " + std::to_string(ulpdu_length) + " exceeds 64768 (R5044-3-05)";
  }
  const std::vector<std::size_t> at = LogicalToWire(p0, raw.size(), markers);
  const std::size_t pad_begin = wire::kUlpduLengthSize + ulpdu_length;
  const std::size_t pad_end = pad_begin + wire::FpduPadLength(ulpdu_length);
  for (std::size_t i = pad_begin; i < pad_end && i < at.size(); ++i) {
    if (raw[at[i]] != 0) return "PAD octet " + HexValue(raw[at[i]], 2) + " is not zero (R5044-4.1-03)";
  }
  for (std::size_t i = 0; markers && i + wire::kMarkerSize <= raw.size(); ++i) {
    if (!wire::IsMarkerPosition(static_cast<uint32_t>(p0 + i))) continue;
    const uint16_t reserved = wire::LoadBe16(&raw[i]);
    const uint16_t fpduptr = wire::LoadBe16(&raw[i + 2]);
    if (reserved != 0) return "Marker RESERVED is " + HexValue(reserved, 4) + ", not zero (R5044-4.2-02)";
    if (fpduptr & 0x3) return "Marker FPDUPTR " + HexValue(fpduptr, 4) + " has its two low bits set (R5044-4.2-05)";
    i += wire::kMarkerSize - 1;
  }
  return {};
}

}  // namespace

Recorder::Recorder(std::vector<FrameRecord>& frames, Clock::time_point start, std::size_t budget, wire::Profile profile)
    : frames_(frames), start_(start), budget_(budget), profile_(profile) {}

std::size_t Recorder::Add(FrameRecord r) {
  r.at = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start_);
  if (r.raw.size() > budget_) {
    r.raw.resize(budget_);
    r.truncated = true;
    r.detail.clear();
  }
  budget_ -= r.raw.size();
  frames_.push_back(std::move(r));
  return frames_.size() - 1;
}

std::size_t Recorder::AddSegment(uint32_t connection, Direction d, uint64_t offset, wire::ByteSpan raw,
                                 wire::ByteSpan ulpdu, bool event_record, std::string summary) {
  FrameRecord r;
  r.connection = connection;
  r.direction = d;
  r.kind = FrameKind::kFpdu;
  r.stream_offset = offset;
  r.raw.assign(raw.begin(), raw.end());
  r.event_record = event_record;
  r.summary = summary.empty() ? SummarizeUlpdu(ulpdu, profile_) : std::move(summary);
  if (raw.size() <= budget_) r.detail = SegmentDetail(ulpdu, offset + wire::kUlpduLengthSize, profile_);
  return Add(std::move(r));
}

std::size_t Recorder::AddStartupFrame(uint32_t connection, Direction d, uint64_t offset, wire::ByteSpan raw,
                                      const std::optional<wire::MpaStartupFrame>& frame, bool responder_role) {
  FrameRecord r;
  r.connection = connection;
  r.direction = d;
  r.kind = frame ? (frame->is_reply ? FrameKind::kMpaReply : FrameKind::kMpaRequest) : FrameKind::kRaw;
  r.stream_offset = offset;
  r.raw.assign(raw.begin(), raw.end());
  if (frame) {
    r.summary = SummarizeStartupFrame(*frame);
    wire::DecodedStartupFrame f{1, offset, raw, *frame};
    r.detail = wire::RenderText(wire::DescribeStartupFrame(f));
  } else {
    // On a listen connection the suite sends the Reply and the target the Request.
    const bool reply = (d == Direction::kToTarget) == responder_role;
    r.summary = std::string(reply ? "MPA Reply" : "MPA Request") + " octets that do not decode";
  }
  return Add(std::move(r));
}

Connection::Connection(std::unique_ptr<targets::Transport> transport, uint32_t index, Recorder& recorder,
                       const ConnectionLimits& limits, ReactionClock* reactions)
    : transport_(std::move(transport)),
      index_(index),
      recorder_(recorder),
      limits_(limits),
      profile_(recorder.profile()),
      fence_(recorder.profile()),
      reactions_(reactions) {
  StartFullOperation(true, false, false);
}

Connection::~Connection() = default;

HandshakeOutcome Connection::Handshake(wire::ByteSpan request, Clock::time_point deadline, std::size_t write_size) {
  HandshakeOutcome out;
  auto decoded = wire::DecodeMpaStartupFrame(request);
  recorder_.AddStartupFrame(index_, Direction::kToTarget, 0, request,
                            decoded.ok() ? std::optional(*decoded) : std::nullopt);
  tx_offset_ = request.size();
  wire::Bytes buf;
  const std::size_t piece = write_size == 0 ? request.size() : write_size;
  for (std::size_t at = 0; at < request.size(); at += piece) {
    const wire::ByteSpan part = request.subspan(at, std::min(piece, request.size() - at));
    if (targets::IoStatus st = Write(part, deadline); st != targets::IoStatus::kOk) {
      out.link = link_ == LinkState::kOpen ? LinkState::kError : link_;
      out.timed_out = st == targets::IoStatus::kTimeout;
      return out;
    }
    // REQ R5044-7.1.2-R02a: nothing may come back before the Request is whole.
    if (at + part.size() < request.size() && buf.size() < wire::kMpaStartupHeaderSize &&
        transport_->Read(buf, wire::kMpaStartupHeaderSize - buf.size(), std::chrono::milliseconds(1)) ==
            targets::IoStatus::kOk) {
      out.early_octets = buf.size();
    }
  }
  // Read exactly the Reply: 20 octets, then PD_Length more (at most 512).
  out.timed_out = ReadStartupFrame(buf, {.expect = wire::MpaFrameKind::kReply}, deadline);
  reply_octets_ = buf.size();
  received_ = buf.size();
  auto reply = wire::DecodeMpaStartupFrame(buf, {.expect = wire::MpaFrameKind::kReply});
  if (reply.ok()) {
    out.reply = *reply;
    out.advertisement = wire::HasAdvertisementMagic(reply->private_data);
  } else if (!buf.empty() && (reply.error().kind != wire::DecodeErrorKind::kTruncated || !out.timed_out)) {
    out.reply_error = reply.error().Describe();
  }
  if (!buf.empty()) {
    out.record = recorder_.AddStartupFrame(index_, Direction::kFromTarget, 0, buf,
                                           reply.ok() ? std::optional(*reply) : std::nullopt);
  }
  out.link = link_;
  return out;
}

// Reads exactly one MPA Request or Reply into `buf`: the 20-octet header,
// then PD_Length more, stopping early at octets that cannot start one (the
// caller decodes and reports them). True when the deadline passed first; a
// close or reset ends the link.
bool Connection::ReadStartupFrame(wire::Bytes& buf, const wire::MpaFrameDecodeOptions& options,
                                  Clock::time_point deadline) {
  while (true) {
    const std::size_t need = wire::MpaStartupFrameLength(buf);
    if (buf.size() >= need) return false;
    if (!buf.empty()) {
      auto early = wire::DecodeMpaStartupFrame(buf, options);
      if (!early.ok() && early.error().kind != wire::DecodeErrorKind::kTruncated) return false;
    }
    const targets::IoStatus st = transport_->Read(buf, need - buf.size(), Remaining(deadline));
    if (st == targets::IoStatus::kOk) {
      NoteReaction();
      continue;
    }
    if (st == targets::IoStatus::kTimeout) return true;
    EndLink(st == targets::IoStatus::kClosed  ? LinkState::kFin
            : st == targets::IoStatus::kReset ? LinkState::kReset
                                              : LinkState::kError,
            transport_->last_error());
    return false;
  }
}

RequestOutcome Connection::ReadRequest(Clock::time_point deadline) {
  RequestOutcome out;
  wire::Bytes buf;
  const wire::MpaFrameDecodeOptions options{wire::MpaFrameKind::kRequest, wire::kMpaMaxPrivateDataLength};
  out.timed_out = ReadStartupFrame(buf, options, deadline);
  responder_role_ = true;
  fence_.Taint("the target is the MPA Initiator");
  // The target's stream starts with its Request; its FPDUs follow.
  reply_octets_ = buf.size();
  received_ = buf.size();
  auto request = wire::DecodeMpaStartupFrame(buf, options);
  if (request.ok()) {
    out.request = *request;
    out.advertisement = wire::HasAdvertisementMagic(request->private_data);
  } else if (!buf.empty() && (request.error().kind != wire::DecodeErrorKind::kTruncated || !out.timed_out)) {
    out.error = request.error().Describe();
  }
  if (!buf.empty()) {
    out.record = recorder_.AddStartupFrame(index_, Direction::kFromTarget, 0, buf,
                                           request.ok() ? std::optional(*request) : std::nullopt, true);
  }
  out.link = link_;
  return out;
}

wire::Bytes Connection::RecordReply(wire::ByteSpan reply) {
  auto decoded = wire::DecodeMpaStartupFrame(reply, {.expect = wire::MpaFrameKind::kEither});
  recorder_.AddStartupFrame(index_, Direction::kToTarget, tx_offset_, reply,
                            decoded.ok() ? std::optional(*decoded) : std::nullopt, true);
  tx_offset_ += reply.size();
  return wire::Bytes(reply.begin(), reply.end());
}

void Connection::StartFullOperation(bool crc, bool markers_from_target, bool markers_to_target) {
  crc_ = crc;
  markers_to_target_ = markers_to_target;
  markers_from_target_ = markers_from_target;
  wire::MpaDeframerConfig cfg;
  cfg.crc_enabled = crc;
  cfg.markers_enabled = markers_from_target;
  cfg.wait_for_full_operation = false;
  deframer_ = std::make_unique<wire::MpaDeframer>(cfg);
}

wire::Bytes Connection::FrameUlpdu(wire::ByteSpan ulpdu, const proto::Framing* mods, const std::string& summary) {
  wire::Bytes logical;
  wire::AppendFpdu(logical, ulpdu, {.crc_enabled = false});
  const std::size_t pad = wire::FpduPadLength(ulpdu.size());
  if (mods) {
    uint16_t length = static_cast<uint16_t>(ulpdu.size());
    if (mods->has_ulpdu_length()) length = static_cast<uint16_t>(mods->ulpdu_length());
    if (mods->has_ulpdu_length_delta()) length = static_cast<uint16_t>(length + mods->ulpdu_length_delta());
    wire::StoreBe16(logical.data(), length);
    if (mods->has_pad_hex()) {
      const wire::Bytes p = ParseHexString(mods->pad_hex()).value_or(wire::Bytes{});
      std::copy_n(p.begin(), std::min(p.size(), pad), logical.begin() + 2 + ulpdu.size());
    }
  }
  const uint32_t p0 = tx_position_;
  wire::Bytes out;
  if (markers_to_target_) {
    wire::MarkerInserterOptions opts;
    if (mods && mods->has_marker_reserved()) opts.reserved = static_cast<uint16_t>(mods->marker_reserved());
    wire::MarkerInserter inserter(0, p0, opts);
    inserter.AppendFpdu(out, logical, {.crc_enabled = false});
    tx_position_ = inserter.next_seq();
    if (mods && mods->has_fpdu_ptr_delta()) {
      for (std::size_t i = 0; i + wire::kMarkerSize <= out.size(); ++i) {
        if (!wire::IsMarkerPosition(static_cast<uint32_t>(p0 + i))) continue;
        wire::StoreBe16(&out[i + 2], static_cast<uint16_t>(wire::LoadBe16(&out[i + 2]) + mods->fpdu_ptr_delta()));
      }
    }
  } else {
    out = logical;
    tx_position_ += static_cast<uint32_t>(out.size());
  }
  // REQ R5044-4.4-10 R5044-4.4-11: the CRC covers every wire octet of the
  // FPDU before the CRC field, Markers included; sent least significant first.
  const std::vector<std::size_t> at = LogicalToWire(p0, out.size(), markers_to_target_);
  const std::size_t crc_first = at[at.size() - wire::kCrc32cSize];
  uint32_t crc = crc_ ? wire::Crc32c(wire::ByteSpan(out).first(crc_first)) : 0;
  if (mods && mods->has_crc())
    crc = mods->crc();
  else if (mods && mods->corrupt_crc())
    crc = ~crc;
  uint8_t field[wire::kCrc32cSize];
  wire::StoreCrc32c(field, crc);
  for (std::size_t k = 0; k < wire::kCrc32cSize; ++k) out[at[at.size() - wire::kCrc32cSize + k]] = field[k];
  recorder_.AddSegment(index_, Direction::kToTarget, tx_offset_, out, ulpdu, false, summary);
  tx_offset_ += out.size();
  fence_.OnSent(ulpdu, mods != nullptr);
  return out;
}

wire::Bytes Connection::FrameWholeFpdu(wire::ByteSpan fpdu) {
  wire::Bytes out;
  if (markers_to_target_) {
    wire::MarkerInserter inserter(0, tx_position_);
    inserter.AppendFpdu(out, fpdu, {.crc_enabled = false});
    tx_position_ = inserter.next_seq();
  } else {
    out.assign(fpdu.begin(), fpdu.end());
    tx_position_ += static_cast<uint32_t>(out.size());
  }
  const wire::ByteSpan ulpdu =
      fpdu.size() >= wire::kFpduOverhead
          ? fpdu.subspan(2, std::min<std::size_t>(wire::LoadBe16(fpdu.data()), fpdu.size() - 6))
          : wire::ByteSpan{};
  recorder_.AddSegment(index_, Direction::kToTarget, tx_offset_, out, ulpdu, false,
                       "raw FPDU: " + SummarizeUlpdu(ulpdu, profile_));
  tx_offset_ += out.size();
  fence_.Taint("the case sent a hand-built FPDU");
  return out;
}

wire::Bytes Connection::RawTcp(wire::ByteSpan octets) {
  FrameRecord r;
  r.connection = index_;
  r.direction = Direction::kToTarget;
  r.kind = FrameKind::kRaw;
  r.stream_offset = tx_offset_;
  r.raw.assign(octets.begin(), octets.end());
  r.summary = "raw TCP octets (" + std::to_string(octets.size()) + ")";
  recorder_.Add(std::move(r));
  tx_offset_ += octets.size();
  tx_position_ += static_cast<uint32_t>(octets.size());
  fence_.Taint("the case sent raw TCP octets (the target may be inside an FPDU)");
  return wire::Bytes(octets.begin(), octets.end());
}

targets::IoStatus Connection::Write(wire::ByteSpan octets, Clock::time_point deadline) {
  while (true) {
    const targets::IoStatus st = transport_->Write(octets);
    if (st == targets::IoStatus::kOk) unanswered_write_ = Clock::now();
    if (st != targets::IoStatus::kTimeout) {
      if (st == targets::IoStatus::kReset) EndLink(LinkState::kReset, transport_->last_error());
      return st;
    }
    // The target's window is full: read what it sent so it can go on.
    if (Clock::now() >= deadline) return st;
    if (!Pump(deadline) && stop_reading_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

bool Connection::Pump(Clock::time_point deadline) {
  if (link_ != LinkState::kOpen || stop_reading_) return false;
  wire::Bytes chunk;
  const targets::IoStatus st = transport_->Read(chunk, limits_.read_chunk, Remaining(deadline));
  switch (st) {
    case targets::IoStatus::kOk:
      NoteReaction();
      Process(chunk);
      return true;
    case targets::IoStatus::kTimeout:
      return false;
    case targets::IoStatus::kClosed:
      EndLink(LinkState::kFin, "");
      return false;
    case targets::IoStatus::kReset:
      EndLink(LinkState::kReset, transport_->last_error());
      return false;
    case targets::IoStatus::kError:
      EndLink(LinkState::kError, transport_->last_error());
      return false;
  }
  return false;
}

// The first octets after a suite write: one reaction of the target. Later
// octets of the same answer, and octets nothing was written for, are none.
void Connection::NoteReaction() {
  if (reactions_ && unanswered_write_) reactions_->Observe(Clock::now() - *unanswered_write_);
  unanswered_write_.reset();
}

void Connection::EndLink(LinkState state, const std::string& detail) {
  if (link_ != LinkState::kOpen) return;
  link_ = state;
  FrameRecord r;
  r.connection = index_;
  r.direction = Direction::kFromTarget;
  r.kind = state == LinkState::kFin ? FrameKind::kFin : FrameKind::kRst;
  r.stream_offset = rx_offset();
  r.summary = std::string(state == LinkState::kFin     ? "target closed (FIN)"
                          : state == LinkState::kReset ? "connection reset (RST)"
                                                       : "transport error") +
              (detail.empty() ? "" : ": " + detail);
  recorder_.Add(std::move(r));
}

void Connection::Flood(std::string why) {
  stop_reading_ = true;
  if (!problem_) problem_ = StreamProblem{Verdict::kError, "target flood: " + why, std::nullopt};
}

void Connection::Process(wire::ByteSpan chunk) {
  received_ += chunk.size();
  if (received_ > limits_.max_received_octets) {
    Flood("more than " + std::to_string(limits_.max_received_octets) + " octets on one connection");
    return;
  }
  if (deframe_failed_) return;  // after the first undecodable octet, only a close matters
  rx_pending_.insert(rx_pending_.end(), chunk.begin(), chunk.end());
  const wire::Status st = deframer_->Feed(chunk, [this](const wire::MpaFpdu& f) { OnFpdu(f); });
  if (st.ok()) {
    const uint64_t done = deframer_->octets_fed() - deframer_->buffered();
    rx_pending_.erase(rx_pending_.begin(), rx_pending_.begin() + static_cast<std::ptrdiff_t>(done - rx_consumed_));
    rx_consumed_ = done;
    return;
  }
  deframe_failed_ = true;
  FrameRecord r;
  r.connection = index_;
  r.direction = Direction::kFromTarget;
  r.kind = FrameKind::kRaw;
  r.stream_offset = rx_offset();
  r.raw = std::move(rx_pending_);
  const std::string why = wire::DescribeStreamError(st.error().At(reply_octets_));
  r.summary = "octets that are no valid FPDU: " + why;
  const std::size_t record = recorder_.Add(std::move(r));
  if (!problem_)
    problem_ = StreamProblem{Verdict::kFail, "target sent octets that are no valid FPDU (" + why + ")", record};
}

std::string Connection::IncompleteFpdu() const {
  if (deframe_failed_ || rx_pending_.empty()) return {};
  const std::string n = std::to_string(rx_pending_.size());
  // With Markers a Marker may sit in the first octets; only count then.
  if (markers_from_target_ || rx_pending_.size() < wire::kUlpduLengthSize) {
    return "the target left an incomplete FPDU (" + n + " octets)";
  }
  const uint16_t length = wire::LoadBe16(rx_pending_.data());
  const std::size_t whole = wire::kUlpduLengthSize + length + wire::FpduPadLength(length) + wire::kCrc32cSize;
  return "the target left an incomplete FPDU (ULPDU_Length " + std::to_string(length) + ", " + n + " of " +
         std::to_string(whole) + " octets)";
}

void Connection::OnFpdu(const wire::MpaFpdu& f) {
  const wire::ByteSpan raw = wire::ByteSpan(rx_pending_).subspan(f.offset - rx_consumed_, f.wire_length);
  const uint64_t offset = reply_octets_ + f.offset;
  const std::string sender_problem =
      SenderFramingProblem(static_cast<uint32_t>(f.offset), raw, markers_from_target_, f.ulpdu_length);
  auto view = wire::DecodeRdmapSegment(f.ulpdu, profile_);
  const bool send = view.ok() && view->opcode_known && view->opcode() == wire::Opcode::kSend &&
                    !view->ddp.header.tagged && view->ddp.header.queue_number == 0 && view->ddp.header.last &&
                    view->ddp.header.message_offset == 0;
  std::size_t last_record = 0;
  // Convention §6.3: a target Send carrying an Event Record goes to the
  // event queue, never to the frame expectations.
  if (send && wire::HasEventRecordMagic(view->ulp_payload)) {
    ReceivedEvent ev;
    ev.msn = view->ddp.header.msn;
    auto rec = wire::DecodeEventRecord(view->ulp_payload);
    if (rec.ok())
      ev.event = *rec;
    else
      ev.error = "Event Record does not decode: " + rec.error().Describe();
    const std::string summary =
        "Send QN 0 MSN " + std::to_string(ev.msn) + ": " + (ev.event ? SummarizeEvent(*ev.event) : ev.error);
    ev.record = recorder_.AddSegment(index_, Direction::kFromTarget, offset, raw, f.ulpdu, true, summary);
    last_record = ev.record;
    // Convention §2.2: the first event of a connection that used a Send RTR
    // may be the RTR's own zero-length delivery; it is not the case's.
    const bool rtr_echo = ignore_rtr_event_ && events_.empty() && ev.event &&
                          ev.event->type == wire::EventType::kSendDelivered && ev.event->length == 0;
    ignore_rtr_event_ = false;
    // The fence Send's record is the suite's, not the case's (fence.h).
    if (!rtr_echo && !fence_.OnReceivedEvent(ev.event)) events_.push_back(std::move(ev));
  } else {
    const std::size_t record = recorder_.AddSegment(index_, Direction::kFromTarget, offset, raw, f.ulpdu, false);
    last_record = record;
    // A fence's Read Response is the suite's, not the case's (fence.h).
    const bool fence_answer = view.ok() && fence_.OnReceivedFrame(*view);
    const bool rtr_response = ignore_rtr_response_ && view.ok() && view->opcode_known &&
                              view->opcode() == wire::Opcode::kRdmaReadResponse &&
                              view->ddp.header.stag == *ignore_rtr_response_ && view->ulp_payload.empty();
    if (rtr_response) {
      ignore_rtr_response_.reset();
    } else if (!fence_answer) {
      wire::Bytes ulpdu(f.ulpdu.begin(), f.ulpdu.end());
      if (undo_terminate_bitfield_order_) wire::SwapTerminateControlBitfieldOrder(ulpdu, profile_);
      frames_.push_back(ReceivedFrame{record, std::move(ulpdu)});
    }
  }
  if (!sender_problem.empty() && !problem_) {
    problem_ = StreamProblem{
        Verdict::kFail, "target FPDU at stream offset " + std::to_string(offset) + ": " + sender_problem, last_record};
  }
  if ((frames_.size() - frames_consumed_) + (events_.size() - events_consumed_) > limits_.max_queued) {
    Flood("more than " + std::to_string(limits_.max_queued) + " unconsumed frames");
  }
}

Observation Connection::Observe() const {
  Observation o;
  o.frames = std::span<const ReceivedFrame>(frames_).subspan(frames_consumed_);
  o.events = std::span<const ReceivedEvent>(events_).subspan(events_consumed_);
  o.link = link_;
  o.problem = problem_;
  return o;
}

void Connection::Consume(std::size_t frames, std::size_t events) {
  frames_consumed_ = std::min(frames_.size(), frames_consumed_ + frames);
  events_consumed_ = std::min(events_.size(), events_consumed_ + events);
}

void Connection::Close(proto::Close::Kind kind) {
  FrameRecord r;
  r.connection = index_;
  r.direction = Direction::kToTarget;
  r.stream_offset = tx_offset_;
  if (kind == proto::Close::RST) {
    transport_->Abort();
    r.kind = FrameKind::kRst;
    r.summary = "suite reset the connection (RST)";
    recorder_.Add(std::move(r));
    link_ = link_ == LinkState::kOpen ? LinkState::kReset : link_;
    return;
  }
  if (fin_sent_) return;
  fin_sent_ = true;
  transport_->ShutdownWrite();
  r.kind = FrameKind::kFin;
  r.summary = "suite closed its side (FIN)";
  recorder_.Add(std::move(r));
}

void Connection::CloseGracefully(Clock::time_point deadline) {
  if (link_ == LinkState::kReset || link_ == LinkState::kError) return;
  Close(proto::Close::FIN);
  while (Pump(deadline)) {
  }
}

}  // namespace rdmapct::conformance
