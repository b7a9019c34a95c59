// Turns a FuzzSession (proto/session.proto) into the octets the suite side
// writes: the MPA Request, then every action framed as the connection
// negotiated and cut into TCP writes. No libFuzzer, no target: what the
// builder needs of the target (regions, negotiated CRC and Markers) comes
// in a SessionContext taken from the target's Reply.
//
// Valid unless asked otherwise: the MSN is the next one of the message's
// queue (1, 2, ... per QN, advancing whatever overrides say), ULPDU_Length
// and the CRC are computed after every override, Markers (if the Reply asked
// for them) are placed by position, raw actions included.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "proto/session.pb.h"
#include "reference/wire/bytes.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/profile.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::fuzz {

// The Data Sink STag of the suite's Read Requests (its own memory); the
// n-th Read Request (from 0) sinks at TO n << 16.
inline constexpr uint32_t kSuiteSinkStag = 0x5117e001;
// Caps that keep any session's octets bounded.
inline constexpr std::size_t kMaxPayload = 8192;
inline constexpr std::size_t kMaxSplits = 8;
inline constexpr uint32_t kMaxRepeat = 15;

// `n` octets of the xorshift32 generator (shifts 13, 17, 5) started at
// `state`, one low octet per step: the same on every platform. The one filler
// generator of the tree (SessionFiller, tools/gen_corpus).
wire::Bytes XorshiftOctets(std::size_t n, uint32_t state);

// The payload octets of a message (payload_size, payload_seed).
wire::Bytes SessionFiller(std::size_t n, uint32_t seed);

wire::Profile SessionProfile(const proto::FuzzSession& s);
// The opcode of a message type (both atomic types: Atomic Request).
wire::Opcode SessionOpcode(proto::SessionMessageType t);
// The region role a message of this type uses unless it names one.
wire::RegionRole DefaultRegionRole(proto::SessionMessageType t);
// The Request of the session's Connection (Rev, C, M, RFC 6581 word).
wire::MpaStartupFrame BuildRequest(const proto::FuzzSession& s);

// What the Reply told the suite.
struct SessionContext {
  wire::Profile profile = wire::Profile::kRfc5040;
  wire::Advertisement advertisement;
  bool crc = true;                 // CRCs in use (either side's C)
  bool markers_to_target = false;  // the Reply's M
};

// What the Reply to the session's Request says: CRCs if either side asked
// (RFC 5044 §7.1.2), Markers towards the target if its Reply asked.
SessionContext MakeSessionContext(const proto::FuzzSession& s, const wire::MpaStartupFrame& request,
                                  const wire::MpaStartupFrame& reply, wire::Advertisement advertisement);

// One TCP write and the index of the last action it carries octets of.
struct SessionWrite {
  wire::Bytes octets;
  std::size_t action = 0;
};

class SessionBuilder {
 public:
  explicit SessionBuilder(SessionContext context);

  // The RDMAP segment of a message action before framing (MSN consumed).
  wire::RdmapSegment BuildSegment(const proto::SessionMessage& m, wire::Bytes& payload_storage);
  // The octets of one action: a framed message or its raw octets, repeated.
  wire::Bytes BuildAction(const proto::SessionAction& a);
  // Every action of the session cut into TCP writes (Delivery).
  std::vector<SessionWrite> BuildWrites(const proto::FuzzSession& s);

 private:
  const wire::AdvertisedRegion* PickRegion(const proto::SessionMessage& m) const;
  wire::Bytes Frame(wire::ByteSpan ulpdu, const proto::SessionFraming& f);

  SessionContext ctx_;
  std::array<uint32_t, 4> next_msn_{1, 1, 1, 1};
  uint32_t next_request_id_ = 1;
  uint32_t next_read_ = 0;
  std::optional<wire::MarkerInserter> inserter_;
};

// Convenience: SessionBuilder(ctx).BuildWrites(s).
std::vector<SessionWrite> BuildSessionWrites(const proto::FuzzSession& s, const SessionContext& ctx);

}  // namespace rdmapct::fuzz
