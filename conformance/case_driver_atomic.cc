// The case driver's atomicity expectations across concurrent connections
// (convention §12, RFC 7306 §5, §5.3): `atomic_responses` records the
// originals the target returned on one connection, `serial_atomics` reads
// the word back and asks whether one serial order explains them all.
#include <algorithm>

#include "conformance/atomic_serial.h"
#include "conformance/case_driver_internal.h"
#include "conformance/frame_text.h"
#include "reference/wire/opcodes.h"

namespace rdmapct::conformance {
namespace {

// The problem with frame `f` as the Atomic Response to `expected_id`, or "".
// REQ R7306-5.2.2-03 R7306-5.4-R8b
std::string AtomicResponseProblem(const ReceivedFrame& f, uint32_t expected_id, wire::Profile profile,
                                  uint64_t& original) {
  auto view = wire::DecodeRdmapSegment(f.ulpdu, profile);
  if (!view.ok()) return "a frame that does not decode: " + view.error().Describe();
  const auto* resp = std::get_if<wire::AtomicResponseHeader>(&view->header);
  if (!view->opcode_known || view->opcode() != wire::Opcode::kAtomicResponse || !resp) {
    return "not an Atomic Response: " + SummarizeUlpdu(f.ulpdu, profile);
  }
  if (view->ddp.header.queue_number != 3)
    return "an Atomic Response on QN " + std::to_string(view->ddp.header.queue_number);
  if (resp->original_request_identifier != expected_id) {
    return "Original Request Identifier " + Hex32(resp->original_request_identifier) + ", expected " +
           Hex32(expected_id) + " (responses in request order, RFC 7306 §5.4 rule 8)";
  }
  original = resp->original_remote_data_value;
  return "";
}

Evaluation Decided(Verdict v, std::string reason, std::string expected, std::string actual) {
  Evaluation e;
  e.decided = true;
  e.outcome = MakeOutcome(v, std::move(reason), std::move(expected), std::move(actual));
  return e;
}

}  // namespace

Evaluation CaseDriver::Atomics(const proto::Expect& e, const MatchContext& ctx, Clock::time_point deadline,
                               std::string& error) {
  if (e.has_atomic_responses()) return AtomicResponses(e.atomic_responses(), ctx, deadline, error);
  return SerialAtomics(e.serial_atomics(), ctx, deadline, error);
}

// REQ R7306-5-01 R7306-5.3-01
Evaluation CaseDriver::AtomicResponses(const proto::AtomicResponses& m, const MatchContext& ctx,
                                       Clock::time_point deadline, std::string& error) {
  std::vector<ObservedAtomic> want;
  for (const std::string& label : m.label()) {
    auto it = labels_.find(label);
    if (it == labels_.end() || !it->second.atomic_request || it->second.connection != active_) {
      error = "'" + label + "' is not an Atomic Request sent on this connection";
      return Decided(Verdict::kError, "", "", "");
    }
    want.push_back({label, active_, *it->second.atomic_request, 0});
  }
  const std::string expected = std::to_string(want.size()) + " Atomic Responses on QN 3, in request order";
  Evaluation ev = WaitFor(
      [&](const Observation& obs, bool passed) {
        const std::size_t have = std::min(obs.frames.size(), want.size());
        for (std::size_t i = 0; i < have; ++i) {
          const std::string p =
              AtomicResponseProblem(obs.frames[i], want[i].request.request_identifier, ctx.profile, want[i].original);
          if (!p.empty()) {
            Evaluation e = Decided(VerdictForMiss(ctx.severity),
                                   "response " + std::to_string(i + 1) + " ('" + want[i].label + "'): " + p, expected,
                                   SummarizeUlpdu(obs.frames[i].ulpdu, ctx.profile));
            e.outcome.frames.push_back(obs.frames[i].record);
            e.frames_used = i + 1;
            return e;
          }
        }
        if (have == want.size()) {
          Evaluation e = Decided(Verdict::kPass, "", expected, "");
          for (std::size_t i = 0; i < have; ++i) e.outcome.frames.push_back(obs.frames[i].record);
          e.frames_used = have;
          return e;
        }
        if (!passed && obs.link == LinkState::kOpen) return Evaluation{};
        return Decided(VerdictForMiss(ctx.severity),
                       std::to_string(have) + " of " + std::to_string(want.size()) + " Atomic Responses arrived",
                       expected, std::string(LinkStateName(obs.link)));
      },
      deadline);
  if (ev.outcome.verdict == Verdict::kPass) {
    for (ObservedAtomic& a : want) atomics_[a.label] = a;
  }
  return ev;
}

// The 8-octet word at `at`, read back with an RDMA Read on this connection.
std::optional<uint64_t> CaseDriver::ReadWord(const proto::RegionRef& at, const MatchContext& ctx,
                                             Clock::time_point deadline, Evaluation& ev, std::string& error) {
  std::optional<ResolvedRef> ref = ResolveRef(at, regions_, error);
  if (!ref || !ref->region) {
    if (error.empty()) error = "serial_atomics names its word by region";
    return std::nullopt;
  }
  ReadRequestSent req{kSuiteSinkStag, send_state_.next_sink_to, 8, std::nullopt,
                      "the word at " + Hex64(ref->tagged_offset)};
  send_state_.next_sink_to += 8;
  const wire::Bytes ulpdu = wire::EncodeSegment(wire::MakeReadRequest(
      send_state_.next_msn[1]++, {req.sink_stag, req.sink_tagged_offset, req.size, ref->stag, ref->tagged_offset}));
  conn_->Write(conn_->FrameUlpdu(ulpdu, nullptr, "word read-back: " + SummarizeUlpdu(ulpdu, options_.profile)),
               deadline);
  std::vector<wire::Bytes> data;
  ev = WaitFor(
      [&](const Observation& obs, bool passed) {
        Observation o = obs;
        o.deadline_passed = passed;
        return EvaluateReadResponses({&req, 1}, o, ctx, &data);
      },
      deadline);
  if (ev.outcome.verdict != Verdict::kPass || data.empty() || data[0].size() != 8) return std::nullopt;
  const bool le = adv_.flags & wire::kFlagLittleEndianAtomics;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{data[0][i]} << (le ? 8 * i : 56 - 8 * i);
  return v;
}

// REQ R7306-5-01 R7306-5.3-01 R7306-5.4-R2
Evaluation CaseDriver::SerialAtomics(const proto::SerialAtomics& m, const MatchContext& ctx, Clock::time_point deadline,
                                     std::string& error) {
  std::vector<ObservedAtomic> ops;
  for (const std::string& label : m.label()) {
    auto it = atomics_.find(label);
    if (it == atomics_.end()) {
      error = "no atomic_responses step recorded the response to '" + label + "'";
      return Decided(Verdict::kError, "", "", "");
    }
    if (std::string u = SerialCheckUnsupported(it->second); !u.empty()) {
      error = u;
      return Decided(Verdict::kError, "", "", "");
    }
    ops.push_back(it->second);
  }
  Evaluation ev;
  const std::optional<uint64_t> word = ReadWord(m.at(), ctx, deadline, ev, error);
  if (!word) return ev;
  std::string originals;
  for (const ObservedAtomic& op : ops) {
    originals += (originals.empty() ? "" : ", ") + op.label + "=" + Hex64(op.original);
  }
  const std::string expected = "one serial order of " + std::to_string(ops.size()) + " atomics from " +
                               Hex64(m.initial()) +
                               " (RFC 7306 §5.3): each original the word before it, the last "
                               "word read back";
  const std::string actual = "originals " + originals + "; word read back " + Hex64(*word);
  std::vector<std::string> order;
  if (std::string p = SerialOrderProblem(ops, m.initial(), *word, &order); !p.empty()) {
    return Decided(VerdictForMiss(ctx.severity), p, expected, actual);
  }
  Evaluation ok = Decided(Verdict::kPass, "", expected, actual);
  std::string text;
  for (const std::string& l : order) text += (text.empty() ? "" : " ") + l;
  ok.outcome.notes.push_back("serial order: " + text);
  return ok;
}

}  // namespace rdmapct::conformance
