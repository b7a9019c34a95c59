#include "fuzz/session_oracle.h"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <cstdio>
#include <memory>
#include <optional>

#include "fuzz/session_builder.h"
#include "fuzz/session_twin.h"
#include "reference/model/terminate_map.h"
#include "reference/wire/hex.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::fuzz {

using wire::Bytes;
using wire::ByteSpan;
using wire::Opcode;

std::string FormatFinding(const Finding& f) {
  return f.oracle + " at step " + std::to_string(f.step) + ": " + f.description;
}

std::string FindingSignature(const Finding& f) {
  // One bug, one finding: the oracle, the requirement and the shape of the
  // diverging step. Without a shape (the black-box oracles), the
  // description with its numbers taken out.
  if (!f.shape.empty()) return f.oracle + ": " + (f.requirement.empty() ? "-" : f.requirement) + ": " + f.shape;
  std::string s = f.oracle + ":";
  bool in_number = false;
  for (char c : f.description) {
    const bool digit =
        std::isxdigit(static_cast<unsigned char>(c)) && (in_number || std::isdigit(static_cast<unsigned char>(c)));
    if (digit) {
      if (!in_number) s += '#';
      in_number = true;
      continue;
    }
    in_number = false;
    s += c;
  }
  return s;
}

targets::ReferenceTargetConfig SessionTargetConfig(const proto::FuzzSession& s, const model::FaultSet& faults) {
  targets::ReferenceTargetConfig c;
  c.profile = SessionProfile(s);
  c.faults = faults;
  c.mpa.crc = !s.connection().target_crc_optional();
  c.mpa.request_markers = s.connection().target_markers();
  return c;
}

namespace {

using wire::HexValue;

struct ReadRequest {
  uint32_t sink_stag;
  uint64_t sink_to;
  uint32_t size;
};

// Everything the checks remember between steps.
class Checker {
 public:
  Checker(wire::Profile profile, bool crc, bool markers_from_target, bool markers_to_target) : profile_(profile) {
    wire::MpaDeframerConfig in{.crc_enabled = crc, .markers_enabled = markers_from_target};
    wire::MpaDeframerConfig out{.crc_enabled = crc, .markers_enabled = markers_to_target};
    from_target_.emplace(in);
    to_target_.emplace(out);
  }

  // The suite's octets: remembers its Read Requests.
  void Sent(ByteSpan octets) {
    if (!reads_reliable_) return;
    auto st = to_target_->Feed(octets, [&](const wire::MpaFpdu& f) {
      auto v = wire::DecodeRdmapSegment(f.ulpdu, profile_);
      if (!v.ok() || !v.value().header_present) return;
      if (const auto* rr = std::get_if<wire::ReadRequestHeader>(&v.value().header)) {
        requests_.push_back({rr->sink_stag, rr->sink_tagged_offset, rr->read_message_size});
      }
    });
    // Past a framing error the suite cannot tell which requests the target saw.
    if (!st.ok()) reads_reliable_ = false;
  }

  // The target's octets of one step.
  void Received(ByteSpan octets, std::size_t step, std::vector<Finding>& findings) {
    if (octets.empty()) return;
    if (terminated_) {
      Report(findings, "terminate", step, std::to_string(octets.size()) + " octets after the target's Terminate",
             "R5040-5.4-10", "octets after Terminate");
      return;
    }
    if (framing_broken_) return;
    auto st = from_target_->Feed(octets, [&](const wire::MpaFpdu& f) { OnUlpdu(f.ulpdu, step, findings); });
    if (!st.ok()) {
      framing_broken_ = true;
      Report(findings, "framing", step, "target octets do not deframe: " + st.error().Describe(), "",
             std::string("deframe/") + wire::DecodeErrorKindName(st.error().kind));
    }
  }

  static void Report(std::vector<Finding>& findings, const std::string& oracle, std::size_t step, std::string what,
                     std::string requirement = "", std::string shape = "") {
    for (const Finding& f : findings) {
      if (f.oracle == oracle) return;
    }
    findings.push_back({oracle, step, std::move(what), std::move(requirement), std::move(shape)});
  }

 private:
  void OnUlpdu(ByteSpan ulpdu, std::size_t step, std::vector<Finding>& findings) {
    if (terminated_) {
      Report(findings, "terminate", step, "an FPDU after the target's Terminate", "R5040-5.4-10",
             "FPDU after Terminate");
      return;
    }
    auto d = wire::DecodeRdmapSegment(ulpdu, profile_);
    if (!d.ok()) {
      Report(findings, "framing", step, "target ULPDU does not decode: " + d.error().Describe(), "",
             std::string("ULPDU/") + wire::DecodeErrorKindName(d.error().kind));
      return;
    }
    const wire::RdmapMessageView& v = d.value();
    if (!v.opcode_known) {
      Report(findings, "framing", step, "target sent unknown opcode " + HexValue(v.ctrl.opcode), "", "opcode");
      return;
    }
    if (v.opcode() == Opcode::kTerminate) return OnTerminate(v, step, findings);
    if (v.opcode() == Opcode::kRdmaReadResponse) return OnReadResponse(v, step, findings);
  }

  void OnTerminate(const wire::RdmapMessageView& v, std::size_t step, std::vector<Finding>& findings) {
    terminated_ = true;
    if (v.ddp.header.tagged || !v.header_present) {
      Report(findings, "terminate", step, "Terminate without a decodable Terminate header", "R5040-5.4-02",
             "Terminate/header");
    } else if (v.ddp.header.queue_number != 2) {
      Report(findings, "terminate", step, "Terminate on QN " + std::to_string(v.ddp.header.queue_number),
             "R5040-5.4-03", "Terminate/QN");
    } else if (v.ddp.header.msn <= last_terminate_msn_) {
      Report(findings, "terminate", step, "Terminate MSN " + std::to_string(v.ddp.header.msn) + " not ascending",
             "R5040-5.4-04", "Terminate/MSN");
    }
    last_terminate_msn_ = v.ddp.header.msn;
  }

  void OnReadResponse(const wire::RdmapMessageView& v, std::size_t step, std::vector<Finding>& findings) {
    const wire::DdpSegmentHeader& h = v.ddp.header;
    if (!reads_reliable_) return;
    if (!open_) {
      // A new response: the first request from the cursor on that it answers.
      auto it =
          std::find_if(requests_.begin() + static_cast<std::ptrdiff_t>(cursor_), requests_.end(),
                       [&](const ReadRequest& r) { return r.sink_stag == h.stag && r.sink_to == h.tagged_offset; });
      if (it == requests_.end()) {
        const bool earlier =
            std::any_of(requests_.begin(), requests_.begin() + static_cast<std::ptrdiff_t>(cursor_),
                        [&](const ReadRequest& r) { return r.sink_stag == h.stag && r.sink_to == h.tagged_offset; });
        Report(findings, "read-response", step,
               std::string(earlier ? "Read Response out of request order"
                                   : "Read Response without a matching Read Request") +
                   " (STag " + HexValue(h.stag) + ", TO " + HexValue(h.tagged_offset) + ")",
               earlier ? "R5040-5.5-R20a" : "R5040-4.4-02",
               earlier ? "RDMA Read Response/order" : "RDMA Read Response/unrequested");
        reads_reliable_ = false;
        return;
      }
      cursor_ = static_cast<std::size_t>(it - requests_.begin()) + 1;
      open_ = true;
      next_to_ = it->sink_to;
      remaining_ = it->size;
    }
    const std::size_t n = v.ddp.payload.size();
    if (h.tagged_offset != next_to_ || h.stag != requests_[cursor_ - 1].sink_stag || n > remaining_) {
      Report(findings, "read-response", step,
             "Read Response segment at TO " + HexValue(h.tagged_offset) + " with " + std::to_string(n) +
                 " octets does not continue its response (expected TO " + HexValue(next_to_) + ", " +
                 std::to_string(remaining_) + " octets left)",
             "", "RDMA Read Response/segment");
      reads_reliable_ = false;
      return;
    }
    next_to_ += n;
    remaining_ -= static_cast<uint32_t>(n);
    if (h.last) {
      open_ = false;
      if (remaining_ != 0) {
        Report(findings, "read-response", step,
               "Read Response ends " + std::to_string(remaining_) + " octets short of the requested length", "",
               "RDMA Read Response/length");
        reads_reliable_ = false;
      }
    }
  }

  wire::Profile profile_;
  std::optional<wire::MpaDeframer> from_target_, to_target_;
  std::vector<ReadRequest> requests_;
  bool reads_reliable_ = true;
  bool framing_broken_ = false;
  bool terminated_ = false;
  uint32_t last_terminate_msn_ = 0;
  std::size_t cursor_ = 0;  // requests before it are answered or skipped
  bool open_ = false;       // a multi-segment response is in progress
  uint64_t next_to_ = 0;
  uint32_t remaining_ = 0;
};

// The targets a thread has run sessions against, one per configuration,
// Reset before each session: building a ReferenceTarget (layout,
// validation) for every session was a large part of its cost.
class TargetCache {
 public:
  // Makes room for `n` more targets (before the Gets of one session, so
  // that no Get destroys a target an earlier one returned).
  void Reserve(std::size_t n) {
    if (entries_.size() + n > kMaxEntries) entries_.clear();
  }

  // `twin`: the fault-free twin, a target of its own even when the target
  // under test has no faults either (they must not share Connection Serials).
  targets::ReferenceTarget& Get(const proto::FuzzSession& s, const model::FaultSet& faults, bool twin) {
    Key key{SessionProfile(s), s.connection().target_crc_optional(), s.connection().target_markers(), twin, {}};
    for (std::size_t i = 0; i < model::kFaultCount; ++i) key.faults[i] = faults.Has(static_cast<model::Fault>(i));
    for (Entry& e : entries_) {
      if (e.key == key) {
        e.target->Reset();
        return *e.target;
      }
    }
    targets::ReferenceTargetConfig config = SessionTargetConfig(s, faults);
    config.hand_back_memory = false;  // one connection per Reset: nobody reads it back
    entries_.push_back({key, std::make_unique<targets::ReferenceTarget>(std::move(config))});
    return *entries_.back().target;
  }

 private:
  // Everything SessionTargetConfig reads.
  struct Key {
    wire::Profile profile;
    bool crc_optional, markers, twin;
    std::bitset<model::kFaultCount> faults;
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    Key key;
    std::unique_ptr<targets::ReferenceTarget> target;
  };
  static constexpr std::size_t kMaxEntries = 32;
  std::vector<Entry> entries_;
};

// The class of a frame kind or ReactionSummary line: "Terminate 0/2/06" ->
// "Terminate", every Read, Atomic, Flush, Verify or Atomic Write Response
// -> "response" (one bug that serves what it should refuse is one finding,
// whichever request it served).
std::string Class(const std::string& kind) {
  if (kind.rfind("Terminate", 0) == 0) return "Terminate";
  if (kind.find("Response") != std::string::npos) return "response";
  return kind;
}

// Each FPDU of a stream as (frame kind, DDP header octets, RDMAP header
// octets, payload octets), Event Record Sends included.
struct Frame {
  std::string kind;
  Bytes ddp, rdmap, payload;
};

std::vector<Frame> Frames(ByteSpan octets, wire::Profile profile, bool crc, bool markers) {
  std::vector<Frame> out;
  wire::MpaDeframer deframer(wire::MpaDeframerConfig{.crc_enabled = crc, .markers_enabled = markers});
  (void)deframer.Feed(octets, [&](const wire::MpaFpdu& f) {
    auto d = wire::DecodeRdmapSegment(f.ulpdu, profile);
    if (!d.ok() || !d.value().opcode_known) return out.push_back({"undecodable FPDU", {}, {}, {}});
    const wire::RdmapMessageView& v = d.value();
    const std::size_t ddp = v.ddp.header.HeaderLength(), payload = v.ddp.payload.size();
    const std::size_t rdmap = f.ulpdu.size() - ddp - payload;
    std::string kind = wire::OpcodeName(v.opcode());
    if (wire::HasEventRecordMagic(v.ulp_payload)) kind = "Event Record";
    out.push_back({kind, Bytes(f.ulpdu.begin(), f.ulpdu.begin() + static_cast<std::ptrdiff_t>(ddp)),
                   Bytes(f.ulpdu.begin() + static_cast<std::ptrdiff_t>(ddp),
                         f.ulpdu.begin() + static_cast<std::ptrdiff_t>(ddp + rdmap)),
                   Bytes(v.ddp.payload.begin(), v.ddp.payload.end())});
  });
  return out;
}

// The shape of the first divergence between the target's stream and the
// fault-free reference's: which frame kind, which field class.
std::string DivergenceShape(ByteSpan a, ByteSpan b, wire::Profile profile, bool crc, bool markers) {
  const auto la = ReactionSummary(a, profile, crc, markers), lb = ReactionSummary(b, profile, crc, markers);
  std::size_t i = 0;
  while (i < la.size() && i < lb.size() && la[i] == lb[i]) ++i;
  if (i < la.size() || i < lb.size()) {
    const std::string ka = i < la.size() ? Class(la[i]) : "nothing", kb = i < lb.size() ? Class(lb[i]) : "nothing";
    if (ka == "Terminate" && kb == "Terminate") return "Terminate/code";
    if (ka == kb && std::is_permutation(la.begin(), la.end(), lb.begin(), lb.end())) return ka + "/order";
    return ka == kb ? ka + "/kind" : ka + " instead of " + kb;
  }
  const auto fa = Frames(a, profile, crc, markers), fb = Frames(b, profile, crc, markers);
  for (std::size_t k = 0; k < fa.size() && k < fb.size(); ++k) {
    const Frame &x = fa[k], &y = fb[k];
    if (x.kind == y.kind && x.ddp == y.ddp && x.rdmap == y.rdmap && x.payload == y.payload) continue;
    if (x.kind != y.kind) return Class(x.kind) + " instead of " + Class(y.kind);
    // What the reference sent elsewhere: the responses were reordered
    // (tagged: same DDP header; untagged: same RDMAP header and payload).
    const bool elsewhere = std::any_of(fb.begin(), fb.end(), [&](const Frame& z) {
      return &z != &y && z.kind == x.kind &&
             (x.ddp[0] & 0x80 ? z.ddp == x.ddp : z.rdmap == x.rdmap && z.payload == x.payload);
    });
    if (elsewhere) return Class(x.kind) + "/order";
    return Class(x.kind) + (x.ddp != y.ddp || x.rdmap != y.rdmap ? "/header" : "/payload");
  }
  if (fa.size() != fb.size())
    return fa.size() > fb.size() ? Class(fa[fb.size()].kind) + " instead of nothing"
                                 : "nothing instead of " + Class(fb[fa.size()].kind);
  return "octets";
}

// The first requirement id of a target's first violation, if any.
std::string FirstRequirement(const targets::ReferenceTargetConnection& t) {
  const model::RdmapEndpoint* e = t.endpoint();
  if (!e || !e->first_violation()) return "";
  const std::string ids = model::RuleFor(e->first_violation()->kind).requirement_ids;
  return ids.substr(0, ids.find(' '));
}

// The same octets into the target under test and a fault-free twin.
class Pair {
 public:
  Pair(const proto::FuzzSession& s, const model::FaultSet& faults)
      : dut_((Cache().Reserve(2), Cache().Get(s, faults, false))),
        ref_(Cache().Get(s, {}, true)),
        a_(dut_.Accept()),
        b_(ref_.Accept()) {}

  Bytes Step(ByteSpan in, bool fin, std::size_t step, std::vector<Finding>& findings) {
    Bytes out_a, out_b;
    if (fin) {
      a_->OnPeerClosed(out_a);
      b_->OnPeerClosed(out_b);
    } else {
      a_->OnBytes(in, out_a);
      b_->OnBytes(in, out_b);
    }
    if (framing_) {
      stream_a_.insert(stream_a_.end(), out_a.begin(), out_a.end());
      stream_b_.insert(stream_b_.end(), out_b.begin(), out_b.end());
    }
    if (out_a != out_b) {
      std::size_t i = 0;
      while (i < out_a.size() && i < out_b.size() && out_a[i] == out_b[i]) ++i;
      Checker::Report(findings, "differential", step,
                      "target sent " + std::to_string(out_a.size()) + " octets, fault-free reference " +
                          std::to_string(out_b.size()) + ", first difference at octet " + std::to_string(i),
                      Requirement(),
                      !framing_
                          ? "MPA startup"
                          : DivergenceShape(stream_a_, stream_b_, framing_->profile, framing_->crc, framing_->markers));
    } else if (a_->wants_close() != b_->wants_close()) {
      Checker::Report(
          findings, "differential", step,
          std::string("target ") + (a_->wants_close() ? "closed" : "stayed open") + ", fault-free reference did not",
          Requirement(), "close");
    } else {
      CompareMemory(step, findings);
    }
    return out_a;
  }

  targets::ReferenceTargetConnection& dut() { return *a_; }

  // How the FPDUs after the Reply are framed (for the shape of a divergence).
  void SetFraming(wire::Profile profile, bool crc, bool markers) { framing_ = Framing{profile, crc, markers}; }

 private:
  void CompareMemory(std::size_t step, std::vector<Finding>& findings) {
    const auto& adv = b_->advertisement();
    if (!adv) return;
    if (SameObjects()) return;
    for (const wire::AdvertisedRegion& r : adv->regions) {
      const auto ma = a_->PeekMemory(r.stag, r.base_tagged_offset, r.length);
      const auto mb = b_->PeekMemory(r.stag, r.base_tagged_offset, r.length);
      if (ma.size() == mb.size() && std::equal(ma.begin(), ma.end(), mb.begin())) continue;
      Checker::Report(findings, "differential", step,
                      "memory of region STag " + HexValue(r.stag) + " differs from the fault-free reference's",
                      Requirement(), "memory");
      return;
    }
  }

  // Every memory object equal: then so is every region over them (one pass
  // over the objects instead of over the overlapping regions). Only when
  // they differ are the regions compared, to name the one that shows it.
  bool SameObjects() const {
    const model::RdmapEndpoint* ea = a_->endpoint();
    const model::RdmapEndpoint* eb = b_->endpoint();
    if (!ea || !eb || dut_.layout().memory_objects.size() != ref_.layout().memory_objects.size()) return false;
    for (uint32_t i = 0; i < ref_.layout().memory_objects.size(); ++i) {
      const auto x = ea->resources().ObjectBytes(i);
      const auto y = eb->resources().ObjectBytes(i);
      // Written by neither: both still read the one shared initial pattern
      // (model::Resources copies an object on its first write).
      if (x.data() == y.data() && x.size() == y.size()) continue;
      if (x.size() != y.size() || !std::equal(x.begin(), x.end(), y.begin())) return false;
    }
    return true;
  }

  static TargetCache& Cache() {
    thread_local TargetCache cache;
    return cache;
  }

  // The rule the fault-free reference applied, else the one the target did.
  std::string Requirement() const {
    std::string id = FirstRequirement(*b_);
    return id.empty() ? FirstRequirement(*a_) : id;
  }

  struct Framing {
    wire::Profile profile;
    bool crc, markers;
  };
  targets::ReferenceTarget& dut_;
  targets::ReferenceTarget& ref_;
  std::unique_ptr<targets::ReferenceTargetConnection> a_, b_;
  std::optional<Framing> framing_;
  Bytes stream_a_, stream_b_;  // each side's octets since the Reply
};

}  // namespace

struct InvariantChecker::Impl {
  Checker checker;
};

InvariantChecker::InvariantChecker(wire::Profile profile, bool crc, bool markers_from_target, bool markers_to_target)
    : impl_(new Impl{Checker(profile, crc, markers_from_target, markers_to_target)}) {}
InvariantChecker::~InvariantChecker() = default;
void InvariantChecker::Sent(ByteSpan octets) { impl_->checker.Sent(octets); }
void InvariantChecker::Received(ByteSpan octets, std::size_t step, std::vector<Finding>& findings) {
  impl_->checker.Received(octets, step, findings);
}

OracleResult RunSessionOracles(const proto::FuzzSession& s, const model::FaultSet& faults) {
  OracleResult result;
  Pair pair(s, faults);
  const wire::MpaStartupFrame request = BuildRequest(s);
  const Bytes reply_octets = pair.Step(wire::EncodeMpaStartupFrame(request), false, 0, result.findings);
  result.steps = 1;
  auto reply = wire::DecodeMpaStartupFrame(reply_octets, {wire::MpaFrameKind::kReply});
  if (!reply.ok() || reply.value().reject) return result;
  auto adv = wire::DecodeAdvertisementFromPrivateData(reply.value().private_data, false);
  if (!adv.ok()) return result;

  const SessionContext ctx = MakeSessionContext(s, request, reply.value(), adv.value());
  Checker checker(ctx.profile, ctx.crc, request.marker_required, ctx.markers_to_target);
  pair.SetFraming(ctx.profile, ctx.crc, request.marker_required);
  // Octets after the Reply in the same step (none from a correct target).
  checker.Received(ByteSpan(reply_octets).subspan(std::min(reply_octets.size(), reply.value().EncodedSize())), 0,
                   result.findings);

  const std::vector<SessionWrite> writes = BuildSessionWrites(s, ctx);
  std::size_t step = 1;
  for (const SessionWrite& w : writes) {
    checker.Sent(w.octets);
    const Bytes out = pair.Step(w.octets, false, step, result.findings);
    checker.Received(out, step, result.findings);
    ++step;
  }
  const Bytes out = pair.Step({}, true, step, result.findings);
  checker.Received(out, step, result.findings);
  result.steps = step + 1;
  return result;
}

}  // namespace rdmapct::fuzz
