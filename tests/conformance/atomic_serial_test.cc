// SerialOrderProblem (conformance/atomic_serial.h): the check behind
// `serial_atomics`, REQ R7306-5-01 R7306-5.3-01 R7306-5.4-R2. Every test
// states a history by hand: what each connection's atomics returned.
#include "conformance/atomic_serial.h"

#include <gtest/gtest.h>

namespace rdmapct::conformance {
namespace {

ObservedAtomic FetchAdd(const std::string& label, uint32_t conn, uint64_t add, uint64_t original) {
  ObservedAtomic a{label, conn, {}, original};
  a.request.atomic_opcode = static_cast<uint8_t>(wire::AtomicOpcode::kFetchAdd);
  a.request.add_or_swap_data = add;
  a.request.add_or_swap_mask = 0;
  return a;
}

ObservedAtomic CmpSwap(const std::string& label, uint32_t conn, uint64_t compare, uint64_t swap, uint64_t original) {
  ObservedAtomic a{label, conn, {}, original};
  a.request.atomic_opcode = static_cast<uint8_t>(wire::AtomicOpcode::kCmpSwap);
  a.request.compare_data = compare;
  a.request.add_or_swap_data = swap;
  return a;
}

TEST(AtomicSerial, InterleavedFetchAddsFitOneOrder) {
  // A: +1, +2; B: +4, +8 from 100, run A1 B1 B2 A2.
  const std::vector<ObservedAtomic> ops = {FetchAdd("a1", 0, 1, 100), FetchAdd("a2", 0, 2, 113),
                                           FetchAdd("b1", 1, 4, 101), FetchAdd("b2", 1, 8, 105)};
  std::vector<std::string> order;
  EXPECT_EQ(SerialOrderProblem(ops, 100, 115, &order), "");
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1", "b2", "a2"}));
}

TEST(AtomicSerial, ALostUpdateIsADuplicateOriginal) {
  // B's FetchAdd read the word before A's sum was written.
  const std::vector<ObservedAtomic> ops = {FetchAdd("a1", 0, 1, 100), FetchAdd("b1", 1, 1, 100)};
  const std::string p = SerialOrderProblem(ops, 100, 101);
  EXPECT_NE(p.find("both returned the original"), std::string::npos) << p;
}

TEST(AtomicSerial, AFinalWordThatMissesASumFails) {
  const std::vector<ObservedAtomic> ops = {FetchAdd("a1", 0, 1, 100), FetchAdd("b1", 1, 1, 101)};
  EXPECT_EQ(SerialOrderProblem(ops, 100, 102), "");
  const std::string p = SerialOrderProblem(ops, 100, 101);
  EXPECT_NE(p.find("word read back"), std::string::npos) << p;
}

TEST(AtomicSerial, ConnectionOrderIsKept) {
  // a2 returned the word before a1 ran: no order keeps A's own order (RFC 7306 §5.4 rule 8).
  const std::vector<ObservedAtomic> ops = {FetchAdd("a1", 0, 1, 101), FetchAdd("a2", 0, 1, 100)};
  EXPECT_NE(SerialOrderProblem(ops, 100, 102), "");
}

TEST(AtomicSerial, CmpSwapRaceHasOneWinnerPerValue) {
  // Both try 0->1 and then 1->2; A wins the first, B the second.
  const std::vector<ObservedAtomic> ops = {CmpSwap("a1", 0, 0, 1, 0), CmpSwap("a2", 0, 1, 2, 2),
                                           CmpSwap("b1", 1, 0, 1, 1), CmpSwap("b2", 1, 1, 2, 1)};
  EXPECT_EQ(SerialOrderProblem(ops, 0, 2), "");
  // Both "won" 0->1: the second saw 0 after the first had swapped.
  const std::vector<ObservedAtomic> lost = {CmpSwap("a1", 0, 0, 1, 0), CmpSwap("b1", 1, 0, 1, 0)};
  EXPECT_NE(SerialOrderProblem(lost, 0, 1), "");
}

TEST(AtomicSerial, MaskedFetchAddIsNotModelled) {
  ObservedAtomic a = FetchAdd("a1", 0, 1, 0);
  EXPECT_EQ(SerialCheckUnsupported(a), "");
  a.request.add_or_swap_mask = 0x80000000;
  EXPECT_NE(SerialCheckUnsupported(a), "");
  EXPECT_EQ(AtomicEffect(CmpSwap("c", 0, 5, 9, 0).request, 5), 9u);
  EXPECT_EQ(AtomicEffect(CmpSwap("c", 0, 5, 9, 0).request, 6), 6u);
}

}  // namespace
}  // namespace rdmapct::conformance
