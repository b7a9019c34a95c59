#include "reference/wire/opcodes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

namespace rdmapct::wire {
namespace {

constexpr uint8_t NA = kNoQueueNumber;
using P = Profile;
using H = HeaderKind;
using I = InvalidateStagUse;

// Written by hand from RFC 5040 Figures 4-5, RFC 7306 Figures 2-3 and 6,
// COMMIT §3.1 tables and figures (opcodes.tsv), not copied from opcodes.h.
struct Expected {
  uint8_t opcode;
  std::string_view name;
  Profile min_profile;
  bool tagged;
  uint8_t qn;
  HeaderKind header;
  uint8_t header_length;
  bool ulp_payload;
  InvalidateStagUse inv;
};
constexpr Expected kExpected[] = {
    {0x0, "RDMA Write", P::kRfc5040, true, NA, H::kNone, 0, true, I::kNoField},
    {0x1, "RDMA Read Request", P::kRfc5040, false, 1, H::kReadRequest, 28, false, I::kZero},
    {0x2, "RDMA Read Response", P::kRfc5040, true, NA, H::kNone, 0, true, I::kNoField},
    {0x3, "Send", P::kRfc5040, false, 0, H::kNone, 0, true, I::kZero},
    {0x4, "Send with Invalidate", P::kRfc5040, false, 0, H::kNone, 0, true, I::kValid},
    {0x5, "Send with Solicited Event", P::kRfc5040, false, 0, H::kNone, 0, true, I::kZero},
    {0x6, "Send with Solicited Event and Invalidate", P::kRfc5040, false, 0, H::kNone, 0, true, I::kValid},
    {0x7, "Terminate", P::kRfc5040, false, 2, H::kTerminate, 4, false, I::kZero},
    {0x8, "Immediate Data", P::kRfc7306, false, 0, H::kImmediateData, 8, false, I::kZero},
    {0x9, "Immediate Data with Solicited Event", P::kRfc7306, false, 0, H::kImmediateData, 8, false, I::kZero},
    {0xA, "Atomic Request", P::kRfc7306, false, 1, H::kAtomicRequest, 52, false, I::kZero},
    {0xB, "Atomic Response", P::kRfc7306, false, 3, H::kAtomicResponse, 12, false, I::kZero},
    {0xC, "RDMA Flush Request", P::kCommit, false, 1, H::kFlushRequest, 20, false, I::kOptional},
    {0xD, "RDMA Flush Response", P::kCommit, false, 3, H::kNone, 0, false, I::kZero},
    {0xE, "RDMA Verify Request", P::kCommit, false, 1, H::kVerifyRequest, 16, false, I::kOptional},
    {0xF, "RDMA Verify Response", P::kCommit, false, 3, H::kVerifyResponse, 0, false, I::kZero},
    {0x10, "Atomic Write Request", P::kCommit, false, 1, H::kAtomicWriteRequest, 24, false, I::kOptional},
    {0x11, "Atomic Write Response", P::kCommit, false, 3, H::kNone, 0, false, I::kZero},
};

// R5040-4.1-T01..T08, R5040-4.2-T01..T08, R7306-4.1-T01..T04, R7306-4.2-T01..T04,
// RCOMMIT-3.1-T01..T12 (header lengths: RCOMMIT-3.1-T07/T09/T11; Atomic
// Response 12 octets per RFC 7306 Figure 6, decisions D-C1).
TEST(OpcodeTable, EveryRowMatchesTheRfcTables) {
  static_assert(std::size(kExpected) == kOpcodeCount);
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    const OpcodeInfo& row = kOpcodeTable[e.opcode];
    EXPECT_EQ(static_cast<uint8_t>(row.opcode), e.opcode);
    EXPECT_EQ(std::string_view(row.name), e.name);
    EXPECT_EQ(row.min_profile, e.min_profile);
    EXPECT_EQ(row.tagged, e.tagged);
    EXPECT_EQ(row.queue_number, e.qn);
    EXPECT_EQ(row.header, e.header);
    EXPECT_EQ(row.header_length, e.header_length);
    EXPECT_EQ(row.ulp_payload_allowed, e.ulp_payload);
    EXPECT_EQ(row.invalidate_stag, e.inv);
    EXPECT_EQ(&InfoFor(row.opcode), &row);
  }
}

TEST(OpcodeTable, VariableHeadersAndSolicitedEvents) {
  EXPECT_TRUE(InfoFor(Opcode::kTerminate).header_variable);
  EXPECT_TRUE(InfoFor(Opcode::kVerifyRequest).header_variable);
  EXPECT_TRUE(InfoFor(Opcode::kVerifyResponse).header_variable);
  EXPECT_FALSE(InfoFor(Opcode::kRdmaReadRequest).header_variable);
  int se = 0;
  for (const OpcodeInfo& row : kOpcodeTable) se += row.solicited_event ? 1 : 0;
  EXPECT_EQ(se, 3);  // Send with SE, Send with SE and Invalidate, Immediate Data with SE
  EXPECT_TRUE(InfoFor(Opcode::kImmediateDataWithSe).solicited_event);
}

// R5040-4.1-T09 (0x8-0xF reserved in RFC 5040), R7306-4.1-02, RCOMMIT-3.1-04.
// RFC 5040 §4.4/4.5 (Read), RFC 7306 §5.2 (Atomic), COMMIT §3.1.1-3.1.3
// (Flush, Verify, Atomic Write): each request and the response it asks for.
TEST(OpcodeTable, RequestsNameTheirResponses) {
  const std::pair<Opcode, Opcode> kPairs[] = {
      {Opcode::kRdmaReadRequest, Opcode::kRdmaReadResponse},
      {Opcode::kAtomicRequest, Opcode::kAtomicResponse},
      {Opcode::kFlushRequest, Opcode::kFlushResponse},
      {Opcode::kVerifyRequest, Opcode::kVerifyResponse},
      {Opcode::kAtomicWriteRequest, Opcode::kAtomicWriteResponse},
  };
  int requests = 0;
  for (const OpcodeInfo& row : kOpcodeTable) {
    if (!row.response) continue;
    ++requests;
    const auto* pair =
        std::find_if(std::begin(kPairs), std::end(kPairs), [&](const auto& p) { return p.first == row.opcode; });
    ASSERT_NE(pair, std::end(kPairs)) << row.name;
    EXPECT_EQ(*row.response, pair->second) << row.name;
  }
  EXPECT_EQ(requests, 5);
}

// Which messages name a region of the peer's memory (STag + TO): the tagged
// ones and the requests with a Data Source / target STag; not Sends (an
// Invalidate STag is no access), Terminate, Immediate Data or responses on QN 3.
TEST(OpcodeTable, RemoteRegionMessages) {
  std::vector<Opcode> remote;
  for (const OpcodeInfo& row : kOpcodeTable) {
    if (row.remote_region) remote.push_back(row.opcode);
  }
  EXPECT_EQ(remote, (std::vector<Opcode>{Opcode::kRdmaWrite, Opcode::kRdmaReadRequest, Opcode::kRdmaReadResponse,
                                         Opcode::kAtomicRequest, Opcode::kFlushRequest, Opcode::kVerifyRequest,
                                         Opcode::kAtomicWriteRequest}));
}

TEST(FindOpcode, ProfilesAreCumulative) {
  for (unsigned op = 0; op < 0x40; ++op) {
    SCOPED_TRACE(op);
    const bool in5040 = op <= 0x7;
    const bool in7306 = op <= 0xB;
    const bool inCommit = op <= 0x11;
    EXPECT_EQ(FindOpcode(static_cast<uint8_t>(op), Profile::kRfc5040) != nullptr, in5040);
    EXPECT_EQ(FindOpcode(static_cast<uint8_t>(op), Profile::kRfc7306) != nullptr, in7306);
    EXPECT_EQ(FindOpcode(static_cast<uint8_t>(op), Profile::kCommit) != nullptr, inCommit);
  }
  EXPECT_EQ(FindOpcode(0xA, Profile::kCommit)->opcode, Opcode::kAtomicRequest);
  static_assert(FindOpcode(0x10, Profile::kCommit) == &kOpcodeTable[0x10]);
}

TEST(OpcodeName, UsesRfcSpelling) {
  EXPECT_STREQ(OpcodeName(Opcode::kRdmaReadRequest), "RDMA Read Request");
  EXPECT_STREQ(OpcodeName(Opcode::kSendWithSeAndInvalidate), "Send with Solicited Event and Invalidate");
  EXPECT_STREQ(OpcodeName(Opcode::kAtomicWriteResponse), "Atomic Write Response");
}

// R5040-4.1-02: RV bits 24-25, Rsv 26-27, Opcode 28-31 (octet 0x41 = RV 01b, Read Request).
TEST(RdmapControl, DecodesRfc5040Layout) {
  EXPECT_EQ(DecodeRdmapControl(0x41, Profile::kRfc5040), (RdmapControl{1, 0, 0x1}));
  EXPECT_EQ(DecodeRdmapControl(0x47, Profile::kRfc7306), (RdmapControl{1, 0, 0x7}));
  EXPECT_EQ(DecodeRdmapControl(0x7A, Profile::kRfc7306), (RdmapControl{1, 3, 0xA}));
  EXPECT_EQ(DecodeRdmapControl(0xC3, Profile::kRfc5040), (RdmapControl{3, 0, 0x3}));
  EXPECT_EQ(DecodeRdmapControl(0x03, Profile::kRfc5040), (RdmapControl{0, 0, 0x3}));
}

// RCOMMIT-3.1-01 (decisions D-D1): the same octet means different things per profile.
TEST(RdmapControl, AtomicWriteOctetDiffersBetweenProfiles) {
  // 0x50 = 01 01 0000b: rfc7306 -> RV=01b, Rsv=01b, opcode 0x0 (RDMA Write);
  //                     commit  -> RV=01b, Rsv=0,   opcode 0x10 (Atomic Write Request).
  EXPECT_EQ(DecodeRdmapControl(0x50, Profile::kRfc7306), (RdmapControl{1, 1, 0x0}));
  EXPECT_EQ(DecodeRdmapControl(0x50, Profile::kRfc5040), (RdmapControl{1, 1, 0x0}));
  EXPECT_EQ(DecodeRdmapControl(0x50, Profile::kCommit), (RdmapControl{1, 0, 0x10}));
  // 0x51: rfc7306 reads a Read Request with Rsv=01b; commit an Atomic Write Response.
  EXPECT_EQ(DecodeRdmapControl(0x51, Profile::kRfc7306), (RdmapControl{1, 1, 0x1}));
  EXPECT_EQ(DecodeRdmapControl(0x51, Profile::kCommit), (RdmapControl{1, 0, 0x11}));
  // 0x7F: the 1-bit Rsv of commit is bit 26 only.
  EXPECT_EQ(DecodeRdmapControl(0x7F, Profile::kCommit), (RdmapControl{1, 1, 0x1F}));
  EXPECT_EQ(FindOpcode(0x1F, Profile::kCommit), nullptr);
  EXPECT_EQ(RdmapControlByte(Opcode::kAtomicWriteRequest, Profile::kCommit), 0x50);
  EXPECT_EQ(RdmapControlByte(Opcode::kAtomicWriteResponse, Profile::kCommit), 0x51);
  EXPECT_EQ(RdmapControlByte(Opcode::kTerminate, Profile::kRfc5040), 0x47);
}

TEST(RdmapControl, EncodeInvertsDecodeForEveryOctetAndProfile) {
  for (Profile p : {Profile::kRfc5040, Profile::kRfc7306, Profile::kCommit}) {
    for (unsigned b = 0; b < 256; ++b) {
      const RdmapControl c = DecodeRdmapControl(static_cast<uint8_t>(b), p);
      EXPECT_EQ(EncodeRdmapControl(c, p), b) << ProfileName(p) << " " << b;
    }
  }
  // Out-of-range fields are masked to their width, never spill into neighbours.
  EXPECT_EQ(EncodeRdmapControl(RdmapControl{1, 3, 0x10}, Profile::kRfc7306), 0x70);
  EXPECT_EQ(EncodeRdmapControl(RdmapControl{1, 3, 0x10}, Profile::kCommit), 0x70);
  EXPECT_EQ(EncodeRdmapControl(RdmapControl{5, 0, 0x3}, Profile::kRfc5040), 0x43);
  EXPECT_EQ(OpcodeBits(Profile::kCommit), 5u);
  EXPECT_EQ(OpcodeBits(Profile::kRfc7306), 4u);
}

}  // namespace
}  // namespace rdmapct::wire
