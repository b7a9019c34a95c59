#include "reference/wire/terminate_codes.h"

namespace rdmapct::wire {

// Stub for the API commit; the table follows in the next commit.
std::span<const TerminateCodeEntry> TerminateCodeTable() { return {}; }
const TerminateCodeEntry* FindTerminateCode(TerminateCode) { return nullptr; }
bool IsRegistered(TerminateCode) { return false; }
const char* Describe(TerminateCode) { return "Unassigned"; }
const char* TerminateLayerName(uint8_t) { return "undefined"; }

}  // namespace rdmapct::wire
