// fuzz/session_oracle: valid sessions give no finding against the
// fault-free reference target; hand-written sessions make each oracle fire
// against a reference target with the fault it is meant to see.
#include "fuzz/session_oracle.h"

#include <gtest/gtest.h>

#include "fuzz/session_seeds.h"

namespace rdmapct::fuzz {
namespace {

using model::Fault;

std::string Describe(const OracleResult& r) {
  std::string s;
  for (const Finding& f : r.findings) s += FormatFinding(f) + "\n";
  return s;
}

bool Has(const OracleResult& r, const std::string& oracle) {
  for (const Finding& f : r.findings) {
    if (f.oracle == oracle) return true;
  }
  return false;
}

proto::FuzzSession OneMessage(proto::Profile p, proto::SessionMessageType t, uint64_t offset, uint32_t payload = 0) {
  proto::FuzzSession s;
  s.mutable_connection()->set_profile(p);
  proto::SessionMessage* m = s.add_action()->mutable_message();
  m->set_type(t);
  m->set_offset(offset);
  m->set_payload_size(payload);
  return s;
}

TEST(SessionOracle, SeedsGiveNoFindingWithoutFaults) {
  for (const NamedSession& n : SeedSessions()) {
    const OracleResult r = RunSessionOracles(n.session, {});
    EXPECT_TRUE(r.findings.empty()) << n.name << ":\n" << Describe(r);
    EXPECT_GE(r.steps, 2u) << n.name;
  }
}

TEST(SessionOracle, WriteOutOfBoundsIsADifferentialFinding) {
  // rw is 0x6000 octets: 32 octets at 0x5ff0 cross its end.
  const proto::FuzzSession s = OneMessage(proto::RFC5040, proto::RDMA_WRITE, 0x5ff0, 32);
  EXPECT_TRUE(RunSessionOracles(s, {}).findings.empty());
  const OracleResult r = RunSessionOracles(s, {Fault::kSkipBoundsCheck});
  EXPECT_TRUE(Has(r, "differential")) << Describe(r);
  EXPECT_EQ(r.findings.at(0).step, 1u);
  const OracleResult w = RunSessionOracles(s, {Fault::kWrongTerminateCode});
  EXPECT_TRUE(Has(w, "differential")) << Describe(w);
}

TEST(SessionOracle, MisalignedAtomic) {
  const proto::FuzzSession s = OneMessage(proto::RFC7306, proto::ATOMIC_FETCH_ADD, 4);
  EXPECT_TRUE(RunSessionOracles(s, {}).findings.empty());
  const OracleResult r = RunSessionOracles(s, {Fault::kExecuteMisalignedAtomic});
  EXPECT_TRUE(Has(r, "differential")) << Describe(r);
}

TEST(SessionOracle, ReadResponsesOutOfOrder) {
  for (const NamedSession& n : SeedSessions()) {
    if (n.name != "rfc5040_mixed") continue;
    const OracleResult r = RunSessionOracles(n.session, {Fault::kReadResponsesOutOfOrder});
    EXPECT_TRUE(Has(r, "read-response")) << Describe(r);
    EXPECT_TRUE(Has(r, "differential")) << Describe(r);
    return;
  }
  FAIL() << "no rfc5040_mixed seed";
}

TEST(SessionOracle, NothingAfterTerminate) {
  // Two Writes out of bounds in one TCP write: the target terminates on the first.
  proto::FuzzSession s = OneMessage(proto::RFC5040, proto::RDMA_WRITE, 0x5ff0, 32);
  s.mutable_action(0)->mutable_delivery()->set_hold(true);
  *s.add_action() = s.action(0);
  s.mutable_action(1)->mutable_message()->set_type(proto::READ_REQUEST);
  s.mutable_action(1)->mutable_message()->set_offset(0);
  EXPECT_TRUE(RunSessionOracles(s, {}).findings.empty()) << Describe(RunSessionOracles(s, {}));
  const OracleResult r = RunSessionOracles(s, {Fault::kAnswerAfterTerminate});
  EXPECT_FALSE(r.findings.empty()) << Describe(r);
}

// REQ R5040-5.4-10
// Issue 17's input (corpus/regressions/fuzz_session/
// second_terminate_after_read_failed_in_flush): a Read Request held with
// five Sends with Invalidate of the Read's Data Source. The second
// invalidates an invalid STag; before its Terminate the pending Read is
// served, fails on its invalidated source and sends the Terminate itself.
// The reference then sent a second Terminate for the Send: one only.
TEST(SessionOracle, ReadFailingWhileFlushedBeforeATerminateSendsTheOnlyTerminate) {
  proto::FuzzSession s;
  s.mutable_connection()->set_profile(proto::COMMIT);
  proto::SessionAction* read = s.add_action();
  read->mutable_message()->set_type(proto::READ_REQUEST);
  read->mutable_message()->set_region(proto::INVALIDATABLE);
  read->mutable_message()->set_length(128);
  read->mutable_message()->set_payload_seed(2);
  read->mutable_delivery()->set_hold(true);
  proto::SessionAction* inv = s.add_action();
  inv->mutable_message()->set_type(proto::SEND_INVALIDATE);
  inv->mutable_message()->set_offset(4081);
  inv->mutable_message()->set_length(16);
  inv->mutable_message()->set_payload_seed(2);
  inv->set_repeat(4);
  const OracleResult r = RunSessionOracles(s, {});
  EXPECT_TRUE(r.findings.empty()) << Describe(r);
  // The oracle still sees a second Terminate where a fault lets it through.
  const OracleResult a = RunSessionOracles(s, {Fault::kAnswerAfterTerminate});
  EXPECT_FALSE(a.findings.empty()) << Describe(a);
}

TEST(SessionOracle, MalformedSessionsNeverThrow) {
  proto::FuzzSession s;
  s.mutable_connection()->set_mpa_revision(9);  // rejected: no Reply
  EXPECT_TRUE(RunSessionOracles(s, {}).findings.empty());
  proto::FuzzSession raw;
  raw.add_action()->set_raw(std::string(100, '\xff'));
  EXPECT_TRUE(RunSessionOracles(raw, {}).findings.empty()) << Describe(RunSessionOracles(raw, {}));
}

}  // namespace
}  // namespace rdmapct::fuzz
