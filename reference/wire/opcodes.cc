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

}  // namespace
}  // namespace rdmapct::wire
