// The MPA Request expectation (MatchMpaRequest): the target as MPA Initiator
// (docs/target-convention.md §10). Every check is a rule of RFC 5044 §7.1.1
// or RFC 6581 §6/§9, named by its id in the reason.
#include <algorithm>

#include "conformance/frame_text.h"
#include "conformance/matchers.h"

namespace rdmapct::conformance {
namespace {

std::string Bit(bool b) { return b ? "1" : "0"; }

// REQ R5044-7.1.1-14 R5044-7.1.1-15 R6581-6-02 R6581-6-04 R5044-7.1.2-R01a
// The Key, PD_Length (at most 512, equal to the Private Data) and the
// enhanced word's presence are checked by decoding; these are the rest.
void CheckValid(const wire::MpaStartupFrame& r, std::vector<std::string>& bad) {
  if (r.reject) bad.push_back("R is 1 in the Request, expected 0 (R5044-7.1.1-14)");
  const unsigned res = r.res | (r.revision < 2 && r.enhanced ? 0x10u : 0u);
  if (res != 0) bad.push_back("Res is " + std::to_string(res) + ", expected 0 (R5044-7.1.1-15, R6581-6-02)");
  if (r.revision == 0 || r.revision > 2) {
    bad.push_back("Rev is " + std::to_string(r.revision) + ", expected 1, or 2 with RFC 6581 (R5044-7.1.1-17)");
  }
}

// REQ R6581-9.2-02 R6581-9.2-03 R6581-9.2-14 R6581-9.2-16
void CheckEnhanced(const proto::MpaRequestMatcher& m, const wire::MpaStartupFrame& r, std::vector<std::string>& bad) {
  if (m.has_enhanced() && m.enhanced() != r.enhanced_data.has_value()) {
    bad.push_back(m.enhanced() ? "no RFC 6581 IRD/ORD word (Rev 2, S = 1) in the Request"
                               : "an RFC 6581 enhanced Request (Rev " + std::to_string(r.revision) +
                                     ", S = 1) where no enhanced feature was wanted (R6581-10-04)");
  }
  if (!r.enhanced_data) {
    if (m.has_peer_to_peer() || m.rtr_flags_consistent()) {
      if (!m.has_enhanced() || m.enhanced()) bad.push_back("no RFC 6581 word, so no A / B / C / D flags");
    }
    return;
  }
  const wire::EnhancedIrdOrd& e = *r.enhanced_data;
  if (m.has_peer_to_peer() && m.peer_to_peer() != e.peer_to_peer) {
    bad.push_back("A is " + Bit(e.peer_to_peer) + ", expected " + Bit(m.peer_to_peer()) +
                  (m.peer_to_peer() ? " for peer-to-peer (R6581-9.2-02)" : " for client-server (R6581-9.2-14)"));
  }
  if (m.rtr_flags_consistent()) {
    const bool any = e.send_rtr || e.write_rtr || e.read_rtr;
    if (e.peer_to_peer && !any) bad.push_back("A = 1 with none of B, C, D set (R6581-9.2-03)");
    if (!e.peer_to_peer && any) bad.push_back("A = 0 with B, C or D set (R6581-9.2-16)");
  }
}

}  // namespace

MatchOutcome MatchMpaRequest(const proto::MpaRequestMatcher& m, const RequestOutcome& h, const MatchContext& ctx) {
  const std::string expected = "MPA Request " + m.ShortDebugString();
  if (!h.request) {
    // REQ R5044-7.1.1-02 R5044-7.1.1-22 R5044-7.1.1-24
    const std::string what = !h.error.empty() ? "MPA Request does not decode: " + h.error
                             : h.timed_out
                                 ? "no complete MPA Request before the deadline"
                                 : "the target closed (" + std::string(LinkStateName(h.link)) + ") without a Request";
    MatchOutcome o = MakeOutcome(VerdictForMiss(ctx.severity), what, expected, what);
    if (h.record) o.frames = {*h.record};
    return o;
  }
  const wire::MpaStartupFrame& r = *h.request;
  std::vector<std::string> bad;
  if (m.valid()) CheckValid(r, bad);
  if (!m.revision().empty() && std::count(m.revision().begin(), m.revision().end(), r.revision) == 0) {
    bad.push_back("Rev " + std::to_string(r.revision) + " is not an accepted value");
  }
  if (m.has_markers() && m.markers() != r.marker_required) bad.push_back("M is " + Bit(r.marker_required));
  if (m.has_crc() && m.crc() != r.crc_required) bad.push_back("C is " + Bit(r.crc_required));
  CheckEnhanced(m, r, bad);
  if (m.has_advertisement() && m.advertisement() != h.advertisement) {
    bad.push_back(h.advertisement ? "an Advertisement where none was expected"
                                  : "no test-ULP Advertisement in the Request Private Data (convention §10.1)");
  }
  const std::string actual = SummarizeStartupFrame(r);
  MatchOutcome o = bad.empty() ? MakeOutcome(Verdict::kPass, "", expected, actual)
                               : MakeOutcome(VerdictForMiss(ctx.severity), "MPA Request: " + bad.front(), expected,
                                             actual + "\n" + JoinLines(bad));
  if (h.record) o.frames = {*h.record};
  return o;
}

}  // namespace rdmapct::conformance
