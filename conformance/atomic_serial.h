// Whether Atomic Responses from several connections fit one serial order
// (RFC 7306 §5, §5.3): the check behind the `serial_atomics` expectation.
// Pure: no I/O, no driver state, so the rule is unit-tested on its own.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "reference/wire/rdmap.h"

namespace rdmapct::conformance {

// One Atomic Request the suite sent and the Original Remote Data Value its
// Atomic Response returned.
struct ObservedAtomic {
  std::string label;
  uint32_t connection = 0;  // Step.connection it was sent on
  wire::AtomicRequestHeader request;
  uint64_t original = 0;
};

// "" when an operation is one the check can model (FetchAdd with Add Mask 0,
// CmpSwap with any masks, RFC 7306 §5.1.1, §5.1.2), else why not.
std::string SerialCheckUnsupported(const ObservedAtomic& op);

// The word after `op` ran on a word holding `word` (RFC 7306 §5.1.1 with Add
// Mask 0; §5.1.2: the masked compare, then the masked swap).
uint64_t AtomicEffect(const wire::AtomicRequestHeader& op, uint64_t word);

// Looks for a serial order of `ops` that keeps each connection's operations
// in the order given (RFC 7306 §5.4 rule 8: a Responder processes one
// stream's Atomic Requests in order), starts from `initial`, gives every
// operation the original it returned, and ends at `final_word`. Returns ""
// and the order in `order` (labels) when there is one, else the reason.
// Exact when no value of the word recurs (the cases only add, or swap
// upwards); with recurring values it may miss an order that exists.
std::string SerialOrderProblem(std::span<const ObservedAtomic> ops, uint64_t initial, uint64_t final_word,
                               std::vector<std::string>* order = nullptr);

}  // namespace rdmapct::conformance
