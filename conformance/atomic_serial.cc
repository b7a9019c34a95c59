#include "conformance/atomic_serial.h"

#include <deque>
#include <map>

#include "conformance/frame_text.h"

namespace rdmapct::conformance {
namespace {

bool IsFetchAdd(const wire::AtomicRequestHeader& op) {
  return op.atomic_opcode == static_cast<uint8_t>(wire::AtomicOpcode::kFetchAdd);
}

// Two FetchAdds that returned the same original: one of them did not see
// the other's sum (the lost update RFC 7306 §5.3 rules out).
std::string DuplicateOriginal(std::span<const ObservedAtomic> ops) {
  std::map<uint64_t, const ObservedAtomic*> seen;
  for (const ObservedAtomic& op : ops) {
    if (!IsFetchAdd(op.request) || op.request.add_or_swap_data == 0) continue;
    auto [it, fresh] = seen.emplace(op.original, &op);
    if (!fresh) {
      return "FetchAdds '" + it->second->label + "' and '" + op.label + "' both returned the original " +
             Hex64(op.original) + ": one of them ran on a word that missed the other's sum (a lost update)";
    }
  }
  return "";
}

std::string HeadsText(const std::map<uint32_t, std::deque<const ObservedAtomic*>>& queues) {
  std::string out;
  for (const auto& [conn, q] : queues) {
    if (q.empty()) continue;
    out += (out.empty() ? "" : ", ") + std::string("'") + q.front()->label + "' on connection " +
           std::string(1, static_cast<char>('A' + conn)) + " returned " + Hex64(q.front()->original);
  }
  return out;
}

}  // namespace

std::string SerialCheckUnsupported(const ObservedAtomic& op) {
  if (IsFetchAdd(op.request)) {
    return op.request.add_or_swap_mask == 0 ? "" : "'" + op.label + "': a FetchAdd with a non-zero Add Mask";
  }
  if (op.request.atomic_opcode == static_cast<uint8_t>(wire::AtomicOpcode::kCmpSwap)) return "";
  return "'" + op.label + "': not a FetchAdd or CmpSwap";
}

// REQ R7306-5.1.1-06 R7306-5.1.2-04
uint64_t AtomicEffect(const wire::AtomicRequestHeader& op, uint64_t word) {
  if (IsFetchAdd(op)) return word + op.add_or_swap_data;
  if (((op.compare_data ^ word) & op.compare_mask) != 0) return word;
  return (word & ~op.add_or_swap_mask) | (op.add_or_swap_data & op.add_or_swap_mask);
}

// REQ R7306-5-01 R7306-5.3-01 R7306-5.4-R2 R7306-5.4-R8a
// Greedy: an operation that leaves the word as it is (a CmpSwap whose
// compare fails) can always go first; otherwise the one whose original is
// the current word. With no recurring values that choice is forced.
std::string SerialOrderProblem(std::span<const ObservedAtomic> ops, uint64_t initial, uint64_t final_word,
                               std::vector<std::string>* order) {
  if (std::string dup = DuplicateOriginal(ops); !dup.empty()) return dup;
  std::map<uint32_t, std::deque<const ObservedAtomic*>> queues;
  for (const ObservedAtomic& op : ops) queues[op.connection].push_back(&op);
  uint64_t word = initial;
  for (std::size_t done = 0; done < ops.size(); ++done) {
    const ObservedAtomic* next = nullptr;
    for (auto& [conn, q] : queues) {
      if (q.empty() || q.front()->original != word) continue;
      const bool idle = AtomicEffect(q.front()->request, word) == word;
      if (!next || idle) next = q.front();
      if (idle) break;
    }
    if (!next) {
      return "no serial order: after " + std::to_string(done) + " operation(s) the word holds " + Hex64(word) +
             ", but the next of each connection returned another original (" + HeadsText(queues) + ")";
    }
    queues[next->connection].pop_front();
    word = AtomicEffect(next->request, word);
    if (order) order->push_back(next->label);
  }
  if (word != final_word) {
    return "the word read back is " + Hex64(final_word) + ", but the serial order of the responses leaves " +
           Hex64(word) + " (an update was lost or one was applied twice)";
  }
  return "";
}

}  // namespace rdmapct::conformance
