// The case format's message types (case.proto Message.Type) and the wire
// opcodes they name: one table, tied to wire::Opcode at compile time, instead
// of `type - 1` / `opcode + 1` arithmetic at each use.
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "proto/case.pb.h"
#include "reference/wire/opcodes.h"

namespace rdmapct::proto {

// One row per opcode, in opcode order, written by name.
inline constexpr std::array<std::pair<Message::Type, wire::Opcode>, wire::kOpcodeCount> kMessageTypeOpcodes = {{
    {Message::RDMA_WRITE, wire::Opcode::kRdmaWrite},
    {Message::RDMA_READ_REQUEST, wire::Opcode::kRdmaReadRequest},
    {Message::RDMA_READ_RESPONSE, wire::Opcode::kRdmaReadResponse},
    {Message::SEND, wire::Opcode::kSend},
    {Message::SEND_WITH_INVALIDATE, wire::Opcode::kSendWithInvalidate},
    {Message::SEND_WITH_SE, wire::Opcode::kSendWithSe},
    {Message::SEND_WITH_SE_AND_INVALIDATE, wire::Opcode::kSendWithSeAndInvalidate},
    {Message::TERMINATE, wire::Opcode::kTerminate},
    {Message::IMMEDIATE_DATA, wire::Opcode::kImmediateData},
    {Message::IMMEDIATE_DATA_WITH_SE, wire::Opcode::kImmediateDataWithSe},
    {Message::ATOMIC_REQUEST, wire::Opcode::kAtomicRequest},
    {Message::ATOMIC_RESPONSE, wire::Opcode::kAtomicResponse},
    {Message::FLUSH_REQUEST, wire::Opcode::kFlushRequest},
    {Message::FLUSH_RESPONSE, wire::Opcode::kFlushResponse},
    {Message::VERIFY_REQUEST, wire::Opcode::kVerifyRequest},
    {Message::VERIFY_RESPONSE, wire::Opcode::kVerifyResponse},
    {Message::ATOMIC_WRITE_REQUEST, wire::Opcode::kAtomicWriteRequest},
    {Message::ATOMIC_WRITE_RESPONSE, wire::Opcode::kAtomicWriteResponse},
}};

namespace message_type_detail {
// Row i names opcode i and the type after TYPE_UNSPECIFIED's i-th successor,
// so both lookups below are by index; and every type has a row.
constexpr bool RowsInOrder() {
  for (std::size_t i = 0; i < kMessageTypeOpcodes.size(); ++i) {
    if (static_cast<std::size_t>(kMessageTypeOpcodes[i].second) != i) return false;
    if (static_cast<std::size_t>(kMessageTypeOpcodes[i].first) != i + 1) return false;
  }
  return true;
}
static_assert(RowsInOrder(), "kMessageTypeOpcodes: row i must pair opcode i with Message.Type i + 1");
static_assert(Message::Type_MIN == Message::TYPE_UNSPECIFIED && Message::Type_ARRAYSIZE == wire::kOpcodeCount + 1,
              "case.proto Message.Type must have one value per wire::Opcode after TYPE_UNSPECIFIED");
}  // namespace message_type_detail

// The opcode of a message type; `type` must not be TYPE_UNSPECIFIED.
constexpr wire::Opcode OpcodeOf(Message::Type type) {
  return kMessageTypeOpcodes[static_cast<std::size_t>(type) - 1].second;
}

constexpr Message::Type MessageTypeOf(wire::Opcode op) {
  return kMessageTypeOpcodes[static_cast<std::size_t>(op)].first;
}

}  // namespace rdmapct::proto
