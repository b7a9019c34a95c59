// proto/message_type.h: the case format's Message.Type and wire::Opcode are
// paired by name (its static_asserts check the order at compile time; this
// checks the names, which the compiler cannot).
#include "proto/message_type.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace rdmapct::proto {
namespace {

// "RDMA Read Request" -> "RDMA_READ_REQUEST"; "Send with Solicited Event" ->
// "SEND_WITH_SOLICITED_EVENT" (case.proto abbreviates it SE).
std::string EnumSpelling(std::string name) {
  for (char& c : name) c = c == ' ' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string from : {"SOLICITED_EVENT"}) {
    if (auto at = name.find(from); at != std::string::npos) name.replace(at, from.size(), "SE");
  }
  for (const std::string from : {"RDMA_FLUSH", "RDMA_VERIFY"}) {
    if (name.rfind(from, 0) == 0) name.erase(0, 5);
  }
  return name;
}

TEST(MessageType, PairsEachOpcodeWithTheTypeOfItsName) {
  for (const wire::OpcodeInfo& row : wire::kOpcodeTable) {
    const Message::Type type = MessageTypeOf(row.opcode);
    EXPECT_EQ(Message::Type_Name(type), EnumSpelling(row.name)) << row.name;
    EXPECT_EQ(OpcodeOf(type), row.opcode) << row.name;
  }
}

}  // namespace
}  // namespace rdmapct::proto
