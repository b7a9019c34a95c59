#include "reference/wire/opcodes.h"

namespace rdmapct::wire {
namespace {

// The table is indexed by opcode value; FindOpcode() relies on it.
constexpr bool RowsInOpcodeOrder() {
  for (std::size_t i = 0; i < kOpcodeTable.size(); ++i) {
    if (static_cast<std::size_t>(kOpcodeTable[i].opcode) != i) return false;
  }
  return true;
}
static_assert(RowsInOpcodeOrder(), "kOpcodeTable row i must describe opcode i");

// A response is a row of its own that asks for nothing, comes with the same
// profile as its request, and travels on the queue responses use: tagged
// (RDMA Read Response) or QN 3 (RFC 7306 §8, COMMIT §3.1).
constexpr bool ResponsesAreConsistent() {
  for (const OpcodeInfo& row : kOpcodeTable) {
    if (!row.response) continue;
    const OpcodeInfo& r = kOpcodeTable[static_cast<std::size_t>(*row.response)];
    if (r.response || r.min_profile != row.min_profile || !row.remote_region) return false;
    if (!(r.tagged || r.queue_number == 3)) return false;
  }
  return true;
}
static_assert(ResponsesAreConsistent(), "kOpcodeTable: a response column names an inconsistent row");
static_assert(*kOpcodeTable[1].response == Opcode::kRdmaReadResponse);

// Every tagged message names a remote region (its Data Sink).
constexpr bool TaggedMessagesTargetARegion() {
  for (const OpcodeInfo& row : kOpcodeTable) {
    if (row.tagged && !row.remote_region) return false;
  }
  return true;
}
static_assert(TaggedMessagesTargetARegion());

}  // namespace
}  // namespace rdmapct::wire
