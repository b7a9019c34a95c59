// The case driver's connect, send, pause and close steps (case_driver.h);
// the expectations are in case_driver_expect.cc.
#include "conformance/case_driver.h"

#include <algorithm>
#include <thread>

#include "conformance/case_driver_internal.h"
#include "conformance/frame_text.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::conformance {
namespace {

// The case's Request options that a target may legitimately not support
// (convention §2.2: such cases are skipped, not failed).
std::vector<std::string> NonDefaultOptions(const proto::Connect& c) {
  std::vector<std::string> out;
  if (c.has_request_hex()) out.push_back("a custom Request Frame");
  if (c.has_revision()) out.push_back("Rev " + std::to_string(c.revision()));
  if (c.has_crc() && !c.crc()) out.push_back("C=0");
  if (c.request_markers()) out.push_back("M=1");
  if (c.has_rfc6581()) out.push_back("RFC 6581 enhanced setup");
  if (c.has_private_data_hex()) out.push_back("custom Private Data");
  return out;
}

std::string Joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// Matcher information about raw octets a case sent as one DDP segment.
SentMessage SentFromUlpdu(const std::string& label, wire::ByteSpan ulpdu, wire::Profile profile) {
  SentMessage s;
  s.label = label;
  s.ulpdu_length = static_cast<uint32_t>(ulpdu.size());
  auto ddp = wire::DecodeDdpSegment(ulpdu);
  if (!ddp.ok()) return s;
  s.ddp_header = ddp->header;
  s.ddp_header_octets.assign(ulpdu.begin(), ulpdu.begin() + ddp->header.HeaderLength());
  s.payload_length = static_cast<uint32_t>(ddp->payload.size());
  auto view = wire::DecodeRdmapSegment(ulpdu, profile);
  if (!view.ok()) return s;
  if (view->opcode_known) s.opcode = view->opcode();
  if (const auto* r = std::get_if<wire::ReadRequestHeader>(&view->header)) {
    s.read_request = *r;
    s.rdma_header_octets.assign(ddp->payload.begin(), ddp->payload.begin() + wire::kReadRequestHeaderLength);
  }
  s.ulp_payload.assign(view->ulp_payload.begin(), view->ulp_payload.end());
  return s;
}

// The case's MPA corruption for the k-th FPDU of a send step, if any.
const proto::Framing* FramingFor(const proto::Send& s, std::size_t k) {
  if (!s.has_framing()) return nullptr;
  const auto& which = s.framing().fpdu();
  return which.empty() || std::count(which.begin(), which.end(), k) ? &s.framing() : nullptr;
}

}  // namespace

CaseRun RunCase(const LoadedCase& c, targets::TargetConnector& connector, const CaseDriverOptions& options) {
  CaseDriver driver(c, connector, options);
  return driver.Run();
}

std::optional<MpaRequest> BuildMpaRequest(const proto::Connect& c, const std::string& case_id, std::string& error,
                                          const wire::SuiteRequestExtension* extension) {
  MpaRequest req;
  if (c.has_request_hex()) {
    std::optional<wire::Bytes> octets = ParseHexString(c.request_hex());
    if (!octets) {
      error = "request_hex does not parse";
      return std::nullopt;
    }
    req.octets = *octets;
    auto decoded = wire::DecodeMpaStartupFrame(req.octets, {.expect = wire::MpaFrameKind::kEither});
    req.decodable = decoded.ok();
    if (decoded.ok())
      req.frame = *decoded;
    else
      req.frame.crc_required = true;
    return req;
  }
  wire::MpaStartupFrame& f = req.frame;
  f.is_reply = false;
  f.revision = static_cast<uint8_t>(c.has_revision() ? c.revision() : c.has_rfc6581() ? 2 : 1);
  f.crc_required = c.has_crc() ? c.crc() : true;
  f.marker_required = c.request_markers();
  f.enhanced = c.has_rfc6581();
  if (c.has_private_data_hex()) {
    std::optional<wire::Bytes> pd = ParseHexString(c.private_data_hex());
    if (!pd) {
      error = "private_data_hex does not parse";
      return std::nullopt;
    }
    f.private_data = *pd;
  } else {
    if (c.has_rfc6581()) {
      const proto::Rfc6581& r = c.rfc6581();
      wire::EnhancedIrdOrd e;
      e.peer_to_peer = r.peer_to_peer();
      e.ird = static_cast<uint16_t>(r.has_ird() ? r.ird() : 8);
      e.ord = static_cast<uint16_t>(r.has_ord() ? r.ord() : 8);
      e.send_rtr = r.rtr() == proto::Rfc6581::RTR_SEND;
      e.write_rtr = r.rtr() == proto::Rfc6581::RTR_WRITE;
      e.read_rtr = r.rtr() == proto::Rfc6581::RTR_READ;
      f.enhanced_data = e;
    }
    wire::SuiteRequest sreq;
    sreq.flags = c.keep_memory() ? wire::kRequestKeepMemory : 0;
    sreq.case_hash = wire::CaseHash(case_id);
    if (extension) sreq.minor_version = wire::kUlpConventionCommandsMinorVersion;
    wire::EncodeSuiteRequest(sreq, f.private_data);
    if (extension) wire::EncodeSuiteRequestExtension(*extension, f.private_data);
  }
  req.octets = wire::EncodeMpaStartupFrame(f);
  return req;
}

void MemoryModel::Write(const MemoryWrite& w) {
  auto& object = written_[w.memory_object];
  for (std::size_t i = 0; i < w.data.size(); ++i) object[w.object_offset + i] = w.data[i];
}

wire::Bytes MemoryModel::Expected(const wire::AdvertisedRegion& region, uint64_t to, std::size_t length) const {
  wire::Bytes out = wire::RegionPattern(region, to, length);
  auto it = written_.find(region.memory_object);
  if (it == written_.end()) return out;
  const uint64_t first = region.ObjectOffsetOf(to);
  for (auto w = it->second.lower_bound(first); w != it->second.end() && w->first < first + length; ++w) {
    out[w->first - first] = w->second;
  }
  return out;
}

CaseDriver::CaseDriver(const LoadedCase& c, targets::TargetConnector& connector, const CaseDriverOptions& options)
    : case_(c),
      connector_(connector),
      options_(options),
      start_(Clock::now()),
      case_deadline_(start_ + options.case_timeout),
      recorder_(run_.result.frames, start_, options.limits.max_recorded_octets, options.profile),
      reactions_(options.reactions ? options.reactions : std::make_shared<ReactionClock>()) {}

CaseRun CaseDriver::Run() {
  CaseResult& r = run_.result;
  const proto::Case& p = case_.proto;
  r.id = p.id();
  r.title = p.title();
  r.document = IdComponent(p.id(), 0);
  r.section = IdComponent(p.id(), 1);
  r.requirements.assign(p.requirement().begin(), p.requirement().end());
  r.level = p.level();
  r.tags.assign(p.tag().begin(), p.tag().end());
  r.sweep_case = case_.sweep_case;
  r.sweep_parameter = case_.sweep_parameter;
  r.sweep_value = case_.sweep_value;
  r.start = std::chrono::system_clock::now();
  if (!case_.AppliesTo(options_.profile)) {
    r.verdict = Verdict::kSkip;
    r.reason = "not in profile " + std::string(wire::ProfileName(options_.profile));
    return std::move(run_);
  }
  std::vector<std::pair<const proto::Step*, int>> steps;
  proto::Step implicit;
  if (p.step().empty() || (!p.step(0).has_connect() && !p.step(0).has_listen())) {
    implicit.mutable_connect();
    steps.push_back({&implicit, -1});
  }
  for (int i = 0; i < p.step_size(); ++i) steps.push_back({&p.step(i), i});
  for (std::size_t k = 0; k < steps.size(); ++k) {
    r.steps.push_back(Execute(*steps[k].first, steps[k].second));
    const Verdict v = r.steps.back().verdict;
    if (v == Verdict::kFail || v == Verdict::kError || v == Verdict::kSkip) {
      if (k + 1 < steps.size()) {
        r.messages.push_back(std::to_string(steps.size() - k - 1) + " later step(s) not run");
      }
      break;
    }
  }
  Finish();
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const Verdict v = r.steps[i].verdict;
    if (v != Verdict::kPass && (r.deciding_step < 0 || Worse(r.verdict, v) != r.verdict)) {
      r.verdict = v;
      r.deciding_step = static_cast<int>(i);
      r.reason = r.steps[i].reason;
    }
    for (const AcceptChoice& c : r.steps[i].choices) r.choices.push_back(c);
  }
  if (!r.steps.empty() && r.steps.back().verdict == Verdict::kSkip) r.verdict = Verdict::kSkip;
  r.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start_);
  return std::move(run_);
}

void CaseDriver::SwapActive(ConnectionSlot& slot) {
  std::swap(conn_, slot.conn);
  std::swap(request_, slot.request);
  std::swap(handshake_, slot.handshake);
  std::swap(have_advertisement_, slot.have_advertisement);
  std::swap(adv_, slot.adv);
  std::swap(regions_, slot.regions);
  std::swap(send_state_, slot.send_state);
  std::swap(send_rtr_used_, slot.send_rtr_used);
  std::swap(reads_, slot.reads);
  std::swap(memory_, slot.memory);
  std::swap(peer_, slot.peer);
}

bool CaseDriver::SelectConnection(uint32_t k, std::string& error) {
  if (k >= kMaxConcurrentConnections) {
    error = "case error: connection " + std::to_string(k) + " (a case has connections 0 and 1)";
    return false;
  }
  if (k == active_) return true;
  if (!held_.empty()) {
    error = "case error: a held send cannot be completed on another connection";
    return false;
  }
  SwapActive(slots_[active_]);
  SwapActive(slots_[k]);
  active_ = k;
  return true;
}

StepResult CaseDriver::Execute(const proto::Step& step, int index) {
  const Clock::time_point began = Clock::now();
  StepResult sr;
  if (std::string error; !SelectConnection(step.connection(), error)) {
    sr.action = "connection";
    sr.verdict = Verdict::kError;
    sr.reason = error;
    sr.index = index;
    return sr;
  }
  switch (step.action_case()) {
    case proto::Step::kConnect:
      sr = DoConnect(step.connect(), index);
      break;
    case proto::Step::kSend:
      sr = DoSend(step.send(), index);
      break;
    case proto::Step::kExpect:
      sr = DoExpect(step.expect(), index);
      break;
    case proto::Step::kPause:
      sr = DoPause(step.pause(), index);
      break;
    case proto::Step::kListen:
      sr = DoListen(step.listen(), index);
      break;
    case proto::Step::kReply:
      sr = DoReply(step.reply(), index);
      break;
    case proto::Step::kTarget:
      sr = DoTarget(step.target(), index);
      break;
    case proto::Step::kClose:
      sr.action = "close";
      if (!conn_) {
        sr.verdict = Verdict::kError;
        sr.reason = "no connection to close";
      } else {
        conn_->Close(step.close().kind());
      }
      break;
    default:
      sr.action = "target";
      sr.verdict = Verdict::kError;
      sr.reason = "case error: target actions are not defined in test-ULP convention 1.0";
  }
  if (step.connection() != 0) sr.notes.push_back("on connection B");
  sr.index = index;
  sr.note = step.note();
  if (sr.requirements.empty()) sr.requirements = run_.result.requirements;
  if (sr.severity == proto::LEVEL_UNSPECIFIED) sr.severity = case_.proto.level();
  sr.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - began);
  return sr;
}

// The case's next connection, over `transport`.
std::unique_ptr<Connection> CaseDriver::NewConnection(std::unique_ptr<targets::Transport> transport) {
  auto c =
      std::make_unique<Connection>(std::move(transport), connections_++, recorder_, options_.limits, reactions_.get());
  if (options_.undo_terminate_bitfield_order) c->UndoTerminateBitfieldOrder();
  return c;
}

StepResult CaseDriver::DoConnect(const proto::Connect& c, int index) {
  StepResult sr;
  sr.action = "connect";
  if (conn_) {
    conn_->CloseGracefully(std::min(Clock::now() + options_.close_timeout, case_deadline_));
    conn_.reset();
  }
  std::string error;
  const wire::SuiteRequestExtension extension = SuiteExtension(c);
  std::optional<MpaRequest> req = BuildMpaRequest(c, case_.id(), error, UsesCommands() ? &extension : nullptr);
  if (!req) {
    sr.verdict = Verdict::kError;
    sr.reason = "case error: " + error;
    return sr;
  }
  std::unique_ptr<targets::Transport> transport = connector_.Connect(options_.connect_timeout, error);
  if (!transport) {
    sr.verdict = Verdict::kError;
    sr.reason = "cannot connect to the target: " + error;
    if (connections_ == 0) run_.connect_failed = true;
    return sr;
  }
  const std::size_t first_record = run_.result.frames.size();
  conn_ = NewConnection(std::move(transport));
  handshake_ = conn_->Handshake(req->octets, Deadline(options_.reply_timeout), c.request_write_size());
  request_ = req;
  reply_pending_ = false;
  send_state_ = SendState{};
  reads_.clear();
  ResetPeer();
  peer_.suite_ird = extension.suite_ird;
  send_rtr_used_ = false;
  if (!c.keep_memory()) memory_.Reset();
  for (std::size_t i = first_record; i < run_.result.frames.size(); ++i) {
    sr.frames.push_back(i);
    sr.actual += (sr.actual.empty() ? "" : "\n") + run_.result.frames[i].summary;
  }
  // A following `expect { mpa_reply {...} }` grades the Reply itself.
  const proto::Step* next = index + 1 < case_.proto.step_size() ? &case_.proto.step(index + 1) : nullptr;
  const bool graded =
      next && next->has_expect() &&
      (next->expect().has_mpa_reply() ||
       std::any_of(next->expect().any_of().alternative().begin(), next->expect().any_of().alternative().end(),
                   [](const proto::Expect& a) { return a.has_mpa_reply(); }));
  const bool accepted = handshake_.reply && !handshake_.reply->reject;
  if (!graded && !CheckReply(c, *req, handshake_, sr)) return sr;
  if (!accepted) return sr;
  if (!TakeAdvertisement(*handshake_.reply, sr)) return sr;
  if (options_.pause_after_reply.count() > 0 && !c.first_fpdu_at_once()) {
    std::this_thread::sleep_for(options_.pause_after_reply);
  }
  StartFraming(c, *req, *handshake_.reply);
  SendRtr(c, *req, *handshake_.reply);
  if (!needs_checked_) {
    needs_checked_ = true;
    if (std::vector<std::string> missing = MissingNeeds(); !missing.empty()) {
      sr.verdict = Verdict::kSkip;
      sr.reason = "the target lacks: " + Joined(missing, ", ");
    }
  }
  return sr;
}

bool CaseDriver::CheckReply(const proto::Connect& c, const MpaRequest& req, const HandshakeOutcome& h, StepResult& sr) {
  const std::vector<std::string> options = NonDefaultOptions(c);
  auto refuse = [&](std::string what, bool may_skip) {
    if (may_skip && !options.empty()) {
      sr.verdict = Verdict::kSkip;
      sr.reason = "the target does not accept an MPA Request with " + Joined(options, ", ") + " (" + what + ")";
    } else {
      sr.verdict = Verdict::kError;
      sr.reason = what;
    }
    return false;
  };
  // A target that never answers, answers garbage or rejects the suite's
  // default Request is as dead as one that refuses the connection: no case
  // can run, so the runner stops after a few of these in a row. A case's
  // own Request options may legitimately be refused (a skip, not counted).
  if (connections_ == 1 && (!h.reply || h.reply->reject) && (h.timed_out || options.empty())) {
    run_.connect_failed = true;
  }
  if (!h.reply) {
    if (h.timed_out)
      return refuse("no MPA Reply within " + std::to_string(options_.reply_timeout.count()) + " ms", false);
    if (!h.reply_error.empty()) return refuse("the target's MPA Reply does not decode: " + h.reply_error, false);
    return refuse("the target closed the connection (" + std::string(LinkStateName(h.link)) + ") without an MPA Reply",
                  true);
  }
  const wire::MpaStartupFrame& reply = *h.reply;
  if (reply.reject) return refuse("the target rejected the MPA Request (R=1)", true);
  if (c.has_crc() && !c.crc() && reply.crc_required) {
    return refuse("it insists on CRCs (Reply C=1)", true);
  }
  if (req.frame.enhanced && req.frame.revision >= 2 && !reply.enhanced_data) {
    return refuse("its Reply has no RFC 6581 IRD/ORD word", true);
  }
  if (c.has_rfc6581() && c.rfc6581().rtr() != proto::Rfc6581::RTR_NONE) {
    const wire::IrdOrdOutcome o = wire::NegotiateIrdOrd(req.frame, reply);
    const proto::Rfc6581::Rtr t = c.rfc6581().rtr();
    const bool ok =
        o.applies && ((t == proto::Rfc6581::RTR_SEND && o.rtr_send) ||
                      (t == proto::Rfc6581::RTR_WRITE && o.rtr_write) || (t == proto::Rfc6581::RTR_READ && o.rtr_read));
    if (!ok) return refuse("no " + proto::Rfc6581::Rtr_Name(t) + " was negotiated", true);
  }
  return true;
}

bool CaseDriver::TakeAdvertisement(const wire::MpaStartupFrame& reply, StepResult& sr) {
  have_advertisement_ = false;
  regions_ = RegionMap();
  if (!wire::HasAdvertisementMagic(reply.private_data)) return true;
  auto adv = wire::DecodeAdvertisement(reply.private_data);
  if (!adv.ok()) {
    const wire::DecodeError& e = adv.error();
    sr.verdict = Verdict::kError;
    if (e.kind == wire::DecodeErrorKind::kInvalidValue && std::string(e.field) == "Major Version") {
      const wire::Bytes& pd = reply.private_data;
      sr.reason = "target speaks test-ULP convention " + std::to_string(pd[4]) + "." +
                  std::to_string(pd.size() > 5 ? pd[5] : 0) + "; this suite implements 1.1";
      run_.abort_run = true;
      run_.abort_reason = sr.reason;
    } else {
      sr.reason = "target broke the test-ULP convention: malformed Advertisement: " + e.Describe();
    }
    return false;
  }
  adv_ = std::move(*adv);
  have_advertisement_ = true;
  regions_ = RegionMap(adv_, case_.proto.needs());
  if (!run_.target_info.empty()) return true;
  std::vector<std::string>& info = run_.target_info;
  info.push_back(SummarizeStartupFrame(reply));
  info.push_back("test-ULP convention " + std::to_string(adv_.major_version) + "." +
                 std::to_string(adv_.minor_version) + ": IRD " + std::to_string(adv_.ird) + ", ORD " +
                 std::to_string(adv_.ord) + ", " + std::to_string(adv_.receive_buffer_count) + " receive buffers of " +
                 std::to_string(adv_.receive_buffer_size) + " octets, flags " + Hex32(adv_.flags));
  for (const wire::AdvertisedRegion& g : adv_.regions) {
    info.push_back("region STag " + Hex32(g.stag) + " TO " + Hex64(g.base_tagged_offset) + " length " +
                   std::to_string(g.length) + " access " + Hex32(g.access) + " attributes " + Hex32(g.attributes));
  }
  for (const std::string& m : wire::MissingForFullSuite(adv_, options_.profile == wire::Profile::kRfc7306,
                                                        options_.profile == wire::Profile::kCommit)) {
    info.push_back("for the full suite the target lacks " + m);
  }
  return true;
}

std::vector<std::string> CaseDriver::MissingNeeds() const {
  const proto::Needs& n = case_.proto.needs();
  const bool wants = n.region_size() || n.receive_buffers() || n.receive_buffer_size() || n.ird() ||
                     n.previous_outcome() || n.solicited_known() || n.advertisement() || n.keep_memory() ||
                     UsesCommands() || n.concurrent_connections();
  if (!have_advertisement_) {
    if (wants) return {"a test-ULP Advertisement (its MPA Reply carries none)"};
    return {};
  }
  std::vector<std::string> out;
  for (const proto::RegionNeed& r : n.region()) {
    const auto role = static_cast<wire::RegionRole>(r.role() - 1);
    if (!wire::SelectRegion(adv_, role, r.min_length())) {
      // Convention 1.3 (§12): name the capability, as for flag 0x0040.
      const bool shared = role == wire::RegionRole::kShared || role == wire::RegionRole::kSharedAtomic;
      out.push_back((shared ? "a shared region (convention 1.3 attribute 0x08): " : "") + std::string("region ") +
                    std::string(wire::RegionRoleName(role)) +
                    (r.min_length() ? " of >= " + std::to_string(r.min_length()) + " octets" : ""));
    }
  }
  const uint32_t buffers = adv_.receive_buffer_count - (send_rtr_used_ && adv_.receive_buffer_count ? 1 : 0);
  if (buffers < n.receive_buffers()) out.push_back(std::to_string(n.receive_buffers()) + " receive buffers");
  if (adv_.receive_buffer_size < n.receive_buffer_size()) {
    out.push_back("receive buffers of >= " + std::to_string(n.receive_buffer_size()) + " octets");
  }
  if (adv_.ird < n.ird()) out.push_back("IRD >= " + std::to_string(n.ird()));
  if (n.previous_outcome() && !adv_.previous) out.push_back("the previous-connection outcome block");
  if (n.keep_memory() && !(adv_.flags & wire::kFlagKeepMemory)) out.push_back("Keep Memory (flag 0x0010)");
  for (std::string& m : MissingCommands()) out.push_back(std::move(m));
  if (n.concurrent_connections() && !(adv_.flags & wire::kFlagConcurrentConnections)) {
    out.push_back("concurrent connections (flag 0x0040)");
  }
  // A case only for the extensions needs the target to implement them.
  if (!case_.AppliesTo(wire::Profile::kRfc5040)) {
    if (options_.profile == wire::Profile::kRfc7306 && !(adv_.flags & wire::kFlagRfc7306)) {
      out.push_back("RFC 7306 (flag 0x0004)");
    }
    if (options_.profile == wire::Profile::kCommit && !(adv_.flags & wire::kFlagCommit)) {
      out.push_back("the COMMIT draft (flag 0x0008)");
    }
  }
  return out;
}

void CaseDriver::StartFraming(const proto::Connect& c, const MpaRequest& req, const wire::MpaStartupFrame& reply) {
  // REQ R5044-7.1.1-06 R5044-7.1.1-07 R5044-7.1.1-11: Markers toward the
  // Initiator iff its Request had M=1, toward the Responder iff the Reply
  // had M=1; CRCs if either side asked.
  const wire::MpaNegotiation n = wire::NegotiateMpa(req.frame, reply);
  bool to_target = n.markers_initiator_to_responder;
  if (c.send_markers() == proto::Connect::ALWAYS) to_target = true;
  if (c.send_markers() == proto::Connect::NEVER) to_target = false;
  conn_->StartFullOperation(n.crc, n.markers_responder_to_initiator, to_target);
}

void CaseDriver::SendRtr(const proto::Connect& c, const MpaRequest& req, const wire::MpaStartupFrame& reply) {
  if (!c.has_rfc6581() || c.rfc6581().rtr() == proto::Rfc6581::RTR_NONE) return;
  const wire::IrdOrdOutcome o = wire::NegotiateIrdOrd(req.frame, reply);
  wire::RdmapSegment seg;
  switch (c.rfc6581().rtr()) {
    case proto::Rfc6581::RTR_SEND:
      if (!o.rtr_send) return;
      seg = wire::MakeSend(wire::Opcode::kSend, send_state_.next_msn[0]++, {});
      send_rtr_used_ = true;
      conn_->IgnoreSendRtrEvent();
      break;
    case proto::Rfc6581::RTR_WRITE: {
      if (!o.rtr_write) return;
      const wire::AdvertisedRegion* rw = regions_.Find(proto::RW);
      seg = wire::MakeRdmaWrite(rw ? rw->stag : 0, rw ? rw->base_tagged_offset : 0, {});
      break;
    }
    default:
      if (!o.rtr_read) return;
      seg = wire::MakeReadRequest(send_state_.next_msn[1]++, {kSuiteSinkStag, send_state_.next_sink_to++, 0, 0, 0});
      conn_->IgnoreReadRtrResponse(kSuiteSinkStag);
  }
  const wire::Bytes ulpdu = wire::EncodeSegment(seg);
  const wire::Bytes octets = conn_->FrameUlpdu(ulpdu, nullptr, "RTR: " + SummarizeUlpdu(ulpdu, options_.profile));
  conn_->Write(octets, Deadline(options_.expect_timeout));
}

StepResult CaseDriver::DoSend(const proto::Send& s, int index) {
  StepResult sr;
  sr.action = "send";
  if (!conn_) {
    sr.verdict = Verdict::kError;
    sr.reason = "no connection to send on";
    return sr;
  }
  const std::size_t first_record = run_.result.frames.size();
  std::string error;
  wire::Bytes octets;
  std::optional<SentMessage> sent;
  if (!(s.has_message() ? FrameMessage(s, octets, sent, error) : FrameRaw(s, octets, sent, error))) {
    sr.verdict = Verdict::kError;
    sr.reason = "case error: " + error;
    return sr;
  }
  if (sent) {
    sent->connection = active_;
    if (!s.label().empty()) labels_[s.label()] = *sent;
    last_send_ = sent;
  }
  for (std::size_t i = first_record; i < run_.result.frames.size(); ++i) {
    sr.frames.push_back(i);
    sr.actual += (sr.actual.empty() ? "" : "\n") + run_.result.frames[i].summary;
  }
  Transmit(octets, s.tcp(), sr);
  return sr;
}

bool CaseDriver::FrameMessage(const proto::Send& s, wire::Bytes& octets, std::optional<SentMessage>& sent,
                              std::string& error) {
  // An STag of another connection (RegionRef.connection): resolved in that
  // connection's Advertisement; what it writes is not this stream's memory.
  const proto::RegionRef& remote = s.message().remote();
  const bool cross = remote.has_connection() && remote.connection() != active_;
  if (cross && remote.connection() >= kMaxConcurrentConnections) {
    error = "remote.connection " + std::to_string(remote.connection()) + " (a case has connections 0 and 1)";
    return false;
  }
  const RegionMap* regions = cross ? &slots_[remote.connection()].regions : &regions_;
  // decisions D-G14: the EMSS in use on this connection, else the default.
  const std::size_t emss = conn_->EffectiveMss().value_or(options_.emss);
  BuildContext ctx{options_.profile, regions, wire::Mulpdu(emss, conn_->markers_to_target()), &send_state_,
                   wire::Mulpdu(emss, conn_->markers_from_target())};
  // A middlebox may give the target a larger EMSS than the suite sees; the
  // configured EMSS (1460, Ethernet) bounds it (LengthFromMulpdu).
  ctx.target_mulpdu_max = wire::Mulpdu(std::max(emss, options_.emss), conn_->markers_from_target());
  std::optional<BuiltMessage> built = BuildMessage(s, ctx, error);
  if (!built) return false;
  for (std::size_t k = 0; k < built->ulpdus.size(); ++k) {
    wire::ByteSpan ulpdu = built->ulpdus[k];
    if (s.has_cut_ulpdu()) ulpdu = ulpdu.first(std::min<std::size_t>(ulpdu.size(), s.cut_ulpdu()));
    const wire::Bytes b = conn_->FrameUlpdu(ulpdu, FramingFor(s, k), "");
    octets.insert(octets.end(), b.begin(), b.end());
  }
  sent = built->sent;
  if (built->read) {
    ReadRecord rr{*built->read, std::nullopt, 0};
    rr.request.what = "Read Request " + std::to_string(reads_.size() + 1);
    std::string ignored;
    if (auto ref = ResolveRef(s.message().remote(), *regions, ignored); ref && ref->region) {
      rr.source = *ref->region;
      rr.source_tagged_offset = ref->tagged_offset;
    }
    reads_.push_back(std::move(rr));
  }
  if (built->write && !cross) memory_.Write(*built->write);
  return true;
}

bool CaseDriver::FrameRaw(const proto::Send& s, wire::Bytes& octets, std::optional<SentMessage>& sent,
                          std::string& error) {
  std::optional<wire::Bytes> raw = RawOctets(s.raw(), error);
  if (!raw) return false;
  switch (s.raw().layer()) {
    case proto::RawBytes::DDP_SEGMENT:
      octets = conn_->FrameUlpdu(*raw, FramingFor(s, 0), "");
      sent = SentFromUlpdu(s.label(), *raw, options_.profile);
      break;
    case proto::RawBytes::FPDU: {
      octets = conn_->FrameWholeFpdu(*raw);
      auto fpdu = wire::DecodeFpdu(*raw, false);
      if (fpdu.ok()) sent = SentFromUlpdu(s.label(), fpdu->ulpdu, options_.profile);
      break;
    }
    default:
      octets = conn_->RawTcp(*raw);
  }
  return true;
}

bool CaseDriver::Transmit(const wire::Bytes& octets, const proto::TcpWrites& tcp, StepResult& sr) {
  held_.insert(held_.end(), octets.begin(), octets.end());
  if (tcp.hold()) {
    sr.notes.push_back("held: sent together with the next send step");
    return true;
  }
  const wire::Bytes all = std::move(held_);
  held_.clear();
  if (all.empty()) return true;
  std::size_t at = 0;
  for (int i = 0; at < all.size(); ++i) {
    const std::size_t n =
        i < tcp.write_size_size() ? std::min<std::size_t>(tcp.write_size(i), all.size() - at) : all.size() - at;
    if (n == 0) continue;
    if (i > 0 && tcp.delay_ms() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(tcp.delay_ms()));
    const targets::IoStatus st = conn_->Write(wire::ByteSpan(all).subspan(at, n), Deadline(options_.expect_timeout));
    if (st != targets::IoStatus::kOk) {
      sr.notes.push_back("write of " + std::to_string(all.size() - at) + " octets ended with " +
                         targets::IoStatusName(st) + " (the target may have closed)");
      return false;
    }
    at += n;
  }
  return true;
}

StepResult CaseDriver::DoPause(const proto::Pause& p, int index) {
  StepResult sr;
  sr.action = "pause";
  const Clock::time_point deadline = Deadline(std::chrono::milliseconds(p.ms()));
  while (conn_ && conn_->Pump(deadline)) {
  }
  std::this_thread::sleep_until(deadline);
  return sr;
}

void CaseDriver::Finish() {
  held_.clear();
  for (uint32_t k = 0; k < kMaxConcurrentConnections; ++k) {
    std::string ignored;
    SelectConnection(k, ignored);
    if (!conn_) continue;
    conn_->CloseGracefully(std::min(Clock::now() + options_.close_timeout, case_deadline_ + options_.close_timeout));
    conn_.reset();
  }
}

Clock::time_point CaseDriver::Deadline(std::chrono::milliseconds timeout) const {
  return std::min(Clock::now() + timeout, case_deadline_);
}

proto::Level CaseDriver::Level(proto::Level expect_severity) const {
  return expect_severity == proto::LEVEL_UNSPECIFIED ? case_.proto.level() : expect_severity;
}

}  // namespace rdmapct::conformance
