// Shared helpers for the model tests. Terminates are parsed here BY HAND from
// RFC 5040 Figures 7/8 (not with the wire decoder), so the tests check the
// octets against the RFC rather than against the codec the model uses.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "reference/model/endpoint.h"
#include "reference/wire/bytes.h"
#include "reference/wire/rdmap.h"

namespace rdmapct::model::testing {

using wire::Bytes;
using wire::Opcode;

inline constexpr uint32_t kStream = 1;
inline constexpr uint32_t kOtherStream = 2;

// Encodes a segment built with wire::Make*.
inline Bytes Encode(const wire::RdmapSegment& s) { return wire::EncodeSegment(s); }

inline Bytes Pattern(std::size_t n, uint8_t seed = 1) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7);
  return b;
}

// A Terminate as RFC 5040 §4.8 lays it out, parsed octet by octet.
struct RawTerminate {
  // Untagged DDP header of the Terminate itself (Figure 3, RFC 5041 Fig. 4).
  uint8_t ddp_control = 0;
  uint8_t rdmap_control = 0;
  uint32_t invalidate_stag = 0;
  uint32_t qn = 0, msn = 0, mo = 0;
  // Terminate Control (Figure 8).
  uint8_t layer = 0, etype = 0, code = 0;
  bool m = false, d = false, r = false;
  uint16_t reserved = 0;
  std::optional<uint16_t> ddp_segment_length;
  Bytes terminated_ddp_header;   // 14 or 18 octets when D
  Bytes terminated_rdma_header;  // 28 octets when R
  std::size_t total_length = 0;
  bool trailing_garbage = false;
};

// Bit-driven form (the model's default, decisions.md): the fields are
// present exactly when M/D/R say so.
inline RawTerminate ParseRawTerminate(wire::ByteSpan u) {
  RawTerminate t;
  t.total_length = u.size();
  EXPECT_GE(u.size(), 22u) << "Terminate shorter than DDP header + Terminate Control";
  if (u.size() < 22) return t;
  t.ddp_control = u[0];
  t.rdmap_control = u[1];
  t.invalidate_stag = wire::LoadBe32(&u[2]);
  t.qn = wire::LoadBe32(&u[6]);
  t.msn = wire::LoadBe32(&u[10]);
  t.mo = wire::LoadBe32(&u[14]);
  const uint32_t w = wire::LoadBe32(&u[18]);
  t.layer = w >> 28;
  t.etype = (w >> 24) & 0xF;
  t.code = (w >> 16) & 0xFF;
  t.m = (w >> 15) & 1;
  t.d = (w >> 14) & 1;
  t.r = (w >> 13) & 1;
  t.reserved = w & 0x1FFF;
  std::size_t at = 22;
  if (t.m || t.d) {
    EXPECT_GE(u.size(), at + 2);
    if (u.size() < at + 2) return t;
    t.ddp_segment_length = wire::LoadBe16(&u[at]);
    at += 2;
  }
  if (t.d) {
    const std::size_t n = (u[at] & 0x80) ? 14 : 18;
    EXPECT_GE(u.size(), at + n);
    if (u.size() < at + n) return t;
    t.terminated_ddp_header.assign(u.begin() + at, u.begin() + at + n);
    at += n;
  }
  if (t.r) {
    EXPECT_GE(u.size(), at + 28);
    if (u.size() < at + 28) return t;
    t.terminated_rdma_header.assign(u.begin() + at, u.begin() + at + 28);
    at += 28;
  }
  t.trailing_garbage = at != u.size();
  return t;
}

// The first `n` octets of an encoded segment (its DDP header, for echo checks).
inline Bytes Prefix(const Bytes& b, std::size_t n) { return Bytes(b.begin(), b.begin() + n); }

// Checks that `t` is a well-formed Terminate of this endpoint: T=0, L=1,
// DV=1, RV=01b, opcode 7, QN 2, MSN `msn`, MO 0, Invalidate STag 0,
// reserved 0 (RFC 5040 §4.1, §4.8, §5.4).
// REQ R5040-4.1-01 R5040-4.1-04 R5040-4.1-T08 R5040-5.4-02 R5040-5.4-03 R5040-4.8-01
// REQ R5040-4.8-02 R5040-4.8-08 R5041-4.1-01 R5041-4.1-09 R5041-4.1-11
inline void ExpectTerminateFrame(const RawTerminate& t, uint32_t msn = 1) {
  EXPECT_EQ(t.ddp_control, 0x41);    // T=0 L=1 Rsvd=0 DV=1
  EXPECT_EQ(t.rdmap_control, 0x47);  // RV=01b Rsv=0 Opcode=0x7
  EXPECT_EQ(t.invalidate_stag, 0u);
  EXPECT_EQ(t.qn, 2u);
  EXPECT_EQ(t.msn, msn);
  EXPECT_EQ(t.mo, 0u);
  EXPECT_EQ(t.reserved, 0u);
  EXPECT_FALSE(t.trailing_garbage);
}

// Expects exactly one segment in `r`, a Terminate with this code, the
// offending ULPDU's header echoed (D=1, M=1, length = its ULPDU_Length) and,
// for Read Requests, its RDMA header (R=1).
inline RawTerminate ExpectSingleTerminate(const Reactions& r, uint8_t layer, uint8_t etype, uint8_t code) {
  EXPECT_EQ(r.segments().size(), 1u);
  if (r.segments().empty()) return {};
  RawTerminate t = ParseRawTerminate(r.segments().back());
  ExpectTerminateFrame(t);
  EXPECT_EQ(t.layer, layer);
  EXPECT_EQ(t.etype, etype);
  EXPECT_EQ(t.code, code);
  return t;
}

// REQ R5040-4.8-05 R5040-4.8-06 R5040-4.8-07 R5040-4.8-10 R5040-4.8-11 R5040-4.8-12
// REQ R5040-4.8-T19 R5040-7.1-02 R5041-7.1-02 R5041-6.2.2-01
inline void ExpectEcho(const RawTerminate& t, const Bytes& offending, bool rdma_header) {
  const std::size_t hlen = (offending[0] & 0x80) ? 14 : 18;
  EXPECT_TRUE(t.m);
  EXPECT_TRUE(t.d);
  EXPECT_EQ(t.r, rdma_header);
  ASSERT_TRUE(t.ddp_segment_length.has_value());
  EXPECT_EQ(*t.ddp_segment_length, offending.size());  // decisions D-E: ULPDU_Length
  EXPECT_EQ(t.terminated_ddp_header, Prefix(offending, hlen));
  if (rdma_header) {
    EXPECT_EQ(t.terminated_rdma_header, Bytes(offending.begin() + 18, offending.begin() + 46));
  }
}

// An endpoint with one registered region and some receives, and a Reactions.
struct Peer {
  explicit Peer(EndpointConfig c = {}) : ep(std::move(c)) {}
  RdmapEndpoint ep;
  Reactions r;

  const Reactions& Feed(const Bytes& ulpdu) {
    r.Clear();
    ep.OnSegment(ulpdu, r);
    return r;
  }
  const Reactions& Feed(const wire::RdmapSegment& s) { return Feed(Encode(s)); }
};

inline EndpointConfig Config(wire::Profile p = wire::Profile::kRfc5040) {
  EndpointConfig c;
  c.profile = p;
  c.stream_id = kStream;
  return c;
}

}  // namespace rdmapct::model::testing
