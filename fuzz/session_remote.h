// A fuzz session against a live target over any Transport (tcp://, a
// plugin, or the reference through its connector): the suite's octets of
// the session written as its TCP writes, everything the target sends read
// back with deadlines, and the oracles a black box allows:
//
//  no-answer   the target refuses the connection or stays silent after the
//              MPA Request (a close instead of a Reply is a differential
//              finding when the reference accepts the Request)
//  crash       the connection ends (FIN/RST) without a Terminate while the
//              fault-free reference stays open
//  hang        the reference answers the session and the target sends
//              nothing at all
//  terminate, read-response, framing
//              the invariants of session_oracle.h on the target's octets
//  differential
//              the target's reaction (frame kinds, Terminate codes,
//              closing) differs from the fault-free reference's
//              (session_twin.h), which is a divergence to look at, not
//              necessarily a violation: RFC accept-sets allow choices.
//
// Everything is bounded: every read has a deadline and the octets kept
// are capped.
//
// The fence (docs/target-convention.md §2.5): the session is run with a
// zero-length RDMA Read Request after each of its TCP writes
// (FencedSession). RDMAP ordering makes the target answer it after
// everything the write's messages caused (R5040-5.2.1-15, R5040-5.5-R12,
// R5040-5.2.2-07), so a write's answer is complete when the fence's Read
// Response arrives, or a Terminate, or the connection ends; no quiet time
// is waited for. The fault-free twin runs the same fenced session and so
// says which fences a conforming target answers. Where it answered none
// (a fence swallowed by an FPDU the session left incomplete, a write that
// ends inside an action) the step waits `settle` of quiet as before, but
// only if the twin sent anything for that write; a last write like that
// waits `settle` once before the suite's FIN.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/session_oracle.h"
#include "fuzz/session_twin.h"
#include "proto/session.pb.h"
#include "targets/transport.h"

namespace rdmapct::fuzz {

// The Data Sink STag of the fences' Read Requests; the k-th fence of a
// session (from 0) sinks at TO k.
inline constexpr uint32_t kFenceSinkStag = 0x5117fe0c;

// `s` with a fence action after every action that ends a TCP write (one
// not held for the next), sent in that write: a READ_REQUEST of size 0
// sinking at kFenceSinkStag. Remote sessions run this, and their
// reproducers should replay it.
proto::FuzzSession FencedSession(const proto::FuzzSession& s);

struct RemoteOptions {
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds reply_timeout{3000};  // MPA Reply
  // End each write's answer with a fence (see above). Off: every write
  // waits for `settle` of quiet, for targets that cannot answer a fence.
  bool fence = true;
  std::chrono::milliseconds settle{30};            // quiet time that ends an unfenced write's answer
  std::chrono::milliseconds answer_timeout{1000};  // after the last write / after FIN
  // Quiet between the target's Reply and the first FPDU, as conform
  // --pause-after-reply (a target with siw's accept race, docs/reports/siw S7).
  std::chrono::milliseconds pause_after_reply{0};
  std::size_t max_octets = 8u << 20;  // target octets kept per session
  bool differential = true;
  TargetShape target;  // from its Advertisement: the twin takes it (RunTwin)
  // A session still writing after session_time (0: no cap) ends with a
  // `resource` finding; at run_deadline it ends as `cut`, without a verdict.
  std::chrono::milliseconds session_time{0};
  std::optional<std::chrono::steady_clock::time_point> run_deadline;
};

struct RemoteResult {
  OracleResult oracles;
  bool connect_failed = false;                                   // refused / unreachable: the target may be restarting
  bool replied = false;                                          // an MPA Reply came: the target is up
  bool cut = false;                                              // ended by run_deadline: no verdict
  std::vector<std::string> target_reaction, reference_reaction;  // ReactionSummary lines
  int fenced_steps = 0;                                          // writes whose answer a fence (or the close) ended
  int settled_steps = 0;                                         // writes that waited for `settle` of quiet
};

RemoteResult RunSessionRemote(const proto::FuzzSession& s, targets::TargetConnector& connector,
                              const RemoteOptions& options);

}  // namespace rdmapct::fuzz
