// fuzz/session_mutator: with a fixed seed the mutator sets every field of
// session.proto within a bounded number of mutations, its outputs always
// serialize and parse back, and sizes stay bounded; crossover too.
#include "fuzz/session_mutator.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "proto/session.pb.h"

namespace rdmapct::fuzz {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Every field of `d` and of the message types below it.
void AllFields(const Descriptor* d, std::set<std::string>& out, std::set<const Descriptor*>& seen) {
  if (!seen.insert(d).second) return;
  for (int i = 0; i < d->field_count(); ++i) {
    out.insert(d->field(i)->full_name());
    if (d->field(i)->message_type()) AllFields(d->field(i)->message_type(), out, seen);
  }
}

// Fields set (present or non-default) anywhere in the tree.
void SetFields(const Message& m, std::set<std::string>& out) {
  std::vector<const FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    out.insert(f->full_name());
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int k = 0; k < m.GetReflection()->FieldSize(m, f); ++k) {
        SetFields(m.GetReflection()->GetRepeatedMessage(m, f, k), out);
      }
    } else {
      SetFields(m.GetReflection()->GetMessage(m, f), out);
    }
  }
}

constexpr std::size_t kMaxSerialized = 64 * 1024;

void ExpectSane(const proto::FuzzSession& s) {
  std::string wire;
  ASSERT_TRUE(s.SerializeToString(&wire));
  EXPECT_LE(wire.size(), kMaxSerialized);
  EXPECT_LE(s.action_size(), kMaxRepeated);
  proto::FuzzSession back;
  ASSERT_TRUE(back.ParseFromString(wire));
  EXPECT_EQ(back.SerializeAsString(), wire);
}

TEST(SessionMutator, ReachesEveryFieldWithAFixedSeed) {
  std::set<std::string> all, seen;
  std::set<const Descriptor*> types;
  AllFields(proto::FuzzSession::descriptor(), all, types);
  SessionMutator m(1, SeededByteMutator(1));
  proto::FuzzSession s;
  int n = 0;
  for (; n < 5000 && seen.size() < all.size(); ++n) {
    m.Mutate(s);
    SetFields(s, seen);
  }
  for (const std::string& f : all) EXPECT_TRUE(seen.count(f)) << f << " never set in " << n << " mutations";
  std::printf("all %zu fields set within %d mutations\n", all.size(), n);
}

TEST(SessionMutator, OutputsParseAndStayBounded) {
  SessionMutator m(7, SeededByteMutator(7));
  proto::FuzzSession s;
  for (int i = 0; i < 5000; ++i) {
    m.Mutate(s);
    ExpectSane(s);
    if (HasFailure()) return;
  }
  EXPECT_GT(s.action_size(), 0);
}

TEST(SessionMutator, IsDeterministic) {
  proto::FuzzSession a, b;
  SessionMutator ma(3, SeededByteMutator(3)), mb(3, SeededByteMutator(3));
  for (int i = 0; i < 500; ++i) {
    ma.Mutate(a);
    mb.Mutate(b);
  }
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
}

TEST(SessionMutator, CrossOverMixesBothAndStaysBounded) {
  SessionMutator m(11, SeededByteMutator(11));
  proto::FuzzSession a, b;
  for (int i = 0; i < 300; ++i) {
    m.Mutate(a);
    m.Mutate(b);
  }
  a.mutable_connection()->set_ird(1111);
  b.mutable_connection()->set_ird(2222);
  bool from_a = false, from_b = false;
  for (int i = 0; i < 200; ++i) {
    proto::FuzzSession out;
    m.CrossOver(a, b, out);
    ExpectSane(out);
    from_a |= out.connection().ird() == 1111;
    from_b |= out.connection().ird() == 2222;
  }
  EXPECT_TRUE(from_a);
  EXPECT_TRUE(from_b);
}

}  // namespace
}  // namespace rdmapct::fuzz
