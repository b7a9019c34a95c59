// The fault-free reference target's run of a fuzz session, kept step by
// step (what it sent after each TCP write, whether it closed), and a
// target-independent summary of a reaction (frame kinds and Terminate
// codes, not STags or octets). Reproducers (session_repro.h) turn the run
// into expectations; the remote fuzzer (session_remote.h) compares a live
// target's reaction with it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fuzz/session_builder.h"
#include "proto/session.pb.h"
#include "reference/wire/mpa.h"
#include "reference/wire/ulp_convention.h"
#include "targets/reference_target.h"

namespace rdmapct::fuzz {

struct TwinWrite {
  std::size_t action = 0;  // SessionWrite::action
  wire::Bytes out;         // what the reference sent after this write
  bool closed = false;     // it had closed after it
};

struct TwinRun {
  bool connected = false;        // an accepted Reply with an Advertisement
  bool closed_at_setup = false;  // closed (or rejected) instead
  wire::MpaStartupFrame request, reply;
  SessionContext ctx;
  std::vector<TwinWrite> writes;
  wire::Bytes after_fin;  // what it sent after the suite's FIN
  bool closed() const { return closed_at_setup || (!writes.empty() && writes.back().closed); }
};

// What the twin takes from a live target's Advertisement, so that a
// conforming target that made other legal choices does not diverge from it
// (docs/reports/siw E2: at the reference's IRD 8 a session with 9 to 16
// outstanding Reads was a divergence from siw, which holds 16; and a
// session's region index names the target's region, not the reference's).
struct TargetShape {
  std::optional<uint16_t> ird;                  // unset: the reference's own
  std::optional<targets::TargetLayout> layout;  // its regions and memory objects
};

// The shape `adv` describes: its IRD, and its regions over memory objects
// sized to hold them.
TargetShape ShapeOf(const wire::Advertisement& adv);

// The reference configured for `s`, shaped like the target where the
// reference can be (a shape it cannot take, e.g. too many regions, is
// left out whole).
targets::ReferenceTargetConfig TwinConfig(const proto::FuzzSession& s, const TargetShape& like);

TwinRun RunTwin(const proto::FuzzSession& s, const TargetShape& like = {});

// One line per non-event frame in `octets` (the target's FPDUs after the
// Reply): "Terminate 0/2/06", "RDMA Read Response L=1", "Atomic Response", ...
// Event Record Sends are left out (targets may report differently).
std::vector<std::string> ReactionSummary(wire::ByteSpan octets, wire::Profile profile, bool crc, bool markers);

}  // namespace rdmapct::fuzz
