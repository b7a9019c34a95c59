// Builds the DDP segments of one `send` step from its Message template
// (proto/case.proto): every field starts at its valid default (the opcode's
// T flag and QN, the queue's next MSN, MO 0, RV=01b, DV=1, STag/TO from the
// region the case names through the Advertisement), then `set` overrides
// any header field, valid or not; the message is cut into segments
// (MULPDU, explicit sizes, transmission order, per-segment overrides).
// MPA framing (CRC, Markers, corruption) is the connection's job.
//
// Errors here are errors of the case file (a field that the message type
// does not have, sizes that do not add up); they become an `error` verdict.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conformance/matchers.h"
#include "proto/case.pb.h"
#include "reference/wire/bytes.h"
#include "reference/wire/profile.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::conformance {

// The suite's own Data Sink STag for RDMA Read Requests: any value works,
// the suite parses the Read Responses itself (docs/target-convention.md §4).
inline constexpr uint32_t kSuiteSinkStag = 0x5157e000;
// Sink TOs start here on every connection and advance by each RDMARDSZ, so
// every Read Response names the request it answers.
inline constexpr uint64_t kSuiteSinkBase = 0x0000510000000000;

// Region roles (proto::Region) mapped to the Advertisement's regions: the
// first region filling the role with at least the length `needs` asks for.
class RegionMap {
 public:
  RegionMap() = default;
  RegionMap(const wire::Advertisement& adv, const proto::Needs& needs);
  const wire::AdvertisedRegion* Find(proto::Region role) const;

 private:
  std::array<std::optional<wire::AdvertisedRegion>, wire::kRegionRoleCount + 1> regions_;
};

// A place in target memory: the STag to name and the Tagged Offset.
struct ResolvedRef {
  uint32_t stag = 0;
  uint64_t tagged_offset = 0;
  const wire::AdvertisedRegion* region = nullptr;  // nullptr for a literal STag
};

// nullopt with `error` set when the role has no region.
std::optional<ResolvedRef> ResolveRef(const proto::RegionRef& ref, const RegionMap& regions, std::string& error);

// The per-connection sending state a template's defaults come from.
struct SendState {
  std::array<uint32_t, 4> next_msn = {1, 1, 1, 1};  // QN 0..3
  uint64_t next_sink_to = kSuiteSinkBase;
  uint32_t next_request_identifier = 1;
};

struct BuildContext {
  wire::Profile profile = wire::Profile::kRfc5040;
  const RegionMap* regions = nullptr;
  std::size_t mulpdu = 1448;  // MULPDU of the suite -> target direction
  SendState* state = nullptr;
  std::size_t target_mulpdu = 1454;  // MULPDU of the target -> suite direction (Message.length_from_mulpdu)
  // The largest MULPDU the target may use: the suite's view of the
  // connection's EMSS can be smaller than the target's (a proxy or middlebox
  // between them ends one TCP connection and starts another; decisions
  // D-G14). 0: target_mulpdu.
  std::size_t target_mulpdu_max = 0;
};

// An RDMA Write the suite expects to have landed (for its memory model).
struct MemoryWrite {
  uint16_t memory_object = 0;
  uint64_t object_offset = 0;
  wire::Bytes data;
};

struct BuiltMessage {
  std::vector<wire::Bytes> ulpdus;  // DDP segments, in transmission order
  SentMessage sent;
  std::optional<ReadRequestSent> read;  // RDMA Read Requests
  std::optional<MemoryWrite> write;     // plain RDMA Writes to a writable region
};

// The payload octets of `p` (COMPLEMENT_OF_PATTERN needs `destination`).
std::optional<wire::Bytes> BuildPayload(const proto::Payload& p, const ResolvedRef* destination, std::string& error);

std::optional<BuiltMessage> BuildMessage(const proto::Send& send, BuildContext& ctx, std::string& error);

// Raw octets of a send step with `raw` (DDP_SEGMENT and FPDU layers only).
std::optional<wire::Bytes> RawOctets(const proto::RawBytes& raw, std::string& error);

}  // namespace rdmapct::conformance
