// A small structure-aware mutator over google::protobuf::Reflection (what
// libprotobuf-mutator does, in the size this project needs; it is not
// packaged for the build machines). It works on any message, so the
// session schema (proto/session.proto) can grow without touching it.
//
// One Mutate() call makes one change somewhere in the tree, chosen
// uniformly among all fields of all (sub)messages present:
//  - a scalar (integer, enum, bool, string/bytes) is changed through the
//    caller's byte mutator (LLVMFuzzerMutate in the harness, a seeded RNG in
//    tests), or set to an interesting value; an `optional` field may be
//    cleared again; an unset sub-message is created and one of its fields set;
//  - a repeated field gets an element added (new or a clone of another),
//    deleted, copied over another, or one element mutated.
// CrossOver() mixes two messages field by field, splicing repeated fields.
// Sizes stay bounded: at most kMaxRepeated elements per repeated field,
// kMaxBytesField octets per string/bytes field.
#pragma once

#include <google/protobuf/message.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace rdmapct::fuzz {

inline constexpr int kMaxRepeated = 24;
inline constexpr std::size_t kMaxBytesField = 512;

// Mutates data[0, size) in place into at most max_size octets; returns the
// new size (LLVMFuzzerMutate's contract).
using ByteMutator = std::function<std::size_t(uint8_t* data, std::size_t size, std::size_t max_size)>;

// A deterministic ByteMutator for tests and replays: flips, sets, inserts or
// erases octets with its own xorshift.
ByteMutator SeededByteMutator(uint64_t seed);

class SessionMutator {
 public:
  SessionMutator(uint64_t seed, ByteMutator bytes);

  void Mutate(google::protobuf::Message& m);
  // `out` becomes a mix of `a` and `b` (same type as both).
  void CrossOver(const google::protobuf::Message& a, const google::protobuf::Message& b,
                 google::protobuf::Message& out);

  uint64_t Next();  // the RNG (xorshift64*)
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  void MutateField(google::protobuf::Message& m, const google::protobuf::FieldDescriptor* f);
  void MutateRepeated(google::protobuf::Message& m, const google::protobuf::FieldDescriptor* f);
  void MutateOneScalar(google::protobuf::Message& m, const google::protobuf::FieldDescriptor* f, int index);
  uint64_t MutateInteger(uint64_t v, std::size_t width);
  void MutateAnyField(google::protobuf::Message& m);
  void Bound(google::protobuf::Message& m);
  void Cross(const google::protobuf::Message& a, const google::protobuf::Message& b, google::protobuf::Message& out);

  uint64_t state_;
  ByteMutator bytes_;
};

}  // namespace rdmapct::fuzz
