// Protocol profiles. The opcode-width contradiction between RFC 5040/7306
// (RV(2)|Rsv(2)|Opcode(4)) and draft-talpey-rdma-commit-01 (RV(2)|Rsv(1)|Opcode(5))
// cannot be resolved by reading one byte, so the user chooses (decisions D-D1,
// docs/decisions.md):
//   kRfc5040: opcodes 0x0-0x7; 0x8-0xF are Unexpected OpCode; Rsv = 2 bits, ignored.
//   kRfc7306: adds 0x8-0xB (Immediate Data, Atomics).
//   kCommit : adds 0xC-0x11 (Flush, Verify, Atomic Write); the opcode is 5 bits and Rsv 1 bit.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rdmapct::wire {

enum class Profile : uint8_t { kRfc5040, kRfc7306, kCommit };

inline constexpr std::string_view ProfileName(Profile p) {
  switch (p) {
    case Profile::kRfc5040:
      return "rfc5040";
    case Profile::kRfc7306:
      return "rfc7306";
    case Profile::kCommit:
      return "commit";
  }
  return "?";
}

inline std::optional<Profile> ParseProfile(std::string_view s) {
  if (s == "rfc5040") return Profile::kRfc5040;
  if (s == "rfc7306") return Profile::kRfc7306;
  if (s == "commit") return Profile::kCommit;
  return std::nullopt;
}

}  // namespace rdmapct::wire
