#include "fuzz/session_mutator.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rdmapct::fuzz {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

ByteMutator SeededByteMutator(uint64_t seed) {
  auto state = std::make_shared<uint64_t>(seed * 0x9e3779b97f4a7c15ull + 1);
  return [state](uint8_t* data, std::size_t size, std::size_t max_size) -> std::size_t {
    auto next = [&] {
      uint64_t& s = *state;
      s ^= s >> 12;
      s ^= s << 25;
      s ^= s >> 27;
      return s * 0x2545f4914f6cdd1dull;
    };
    const uint64_t r = next();
    switch (r % 5) {
      case 0:  // flip a bit
        if (size > 0) data[next() % size] ^= static_cast<uint8_t>(1u << (next() % 8));
        return size;
      case 1:  // a random octet
        if (size > 0) data[next() % size] = static_cast<uint8_t>(next());
        return size;
      case 2:  // insert an octet
        if (size < max_size) {
          const std::size_t at = next() % (size + 1);
          std::memmove(data + at + 1, data + at, size - at);
          data[at] = static_cast<uint8_t>(next());
          return size + 1;
        }
        return size;
      case 3:  // erase an octet
        if (size > 0) {
          const std::size_t at = next() % size;
          std::memmove(data + at, data + at + 1, size - at - 1);
          return size - 1;
        }
        return size;
      default:  // randomise everything
        for (std::size_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(next());
        return size;
    }
  };
}

SessionMutator::SessionMutator(uint64_t seed, ByteMutator bytes)
    : state_(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull), bytes_(std::move(bytes)) {}

uint64_t SessionMutator::Next() {
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return state_ * 0x2545f4914f6cdd1dull;
}

namespace {

struct Site {
  Message* msg;
  const FieldDescriptor* field;
};

// Every field of every message present in the tree (set or not).
void CollectSites(Message& m, std::vector<Site>& out) {
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    out.push_back({&m, f});
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(m, f); ++k) CollectSites(*r->MutableRepeatedMessage(&m, f, k), out);
    } else if (r->HasField(m, f)) {
      CollectSites(*r->MutableMessage(&m, f), out);
    }
  }
}

}  // namespace

uint64_t SessionMutator::MutateInteger(uint64_t v, std::size_t width) {
  const uint64_t mask = width >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * width)) - 1;
  // Small steps first: most header fields matter near their valid value
  // (an offset off by a few octets, the next MSN, a length one too long).
  switch (Below(10)) {
    case 0:
      return 0;
    case 1:
    case 2:
    case 3:
      return (v + 1 + Below(8)) & mask;
    case 4:
    case 5:
      return (v - 1 - Below(8)) & mask;
    case 6:
      return Below(2) ? mask : mask >> 1;
    case 7:
      return Below(256);
    case 8:
      return (uint64_t{1} << Below(8 * width)) & mask;
    default: {
      uint8_t buf[8];
      for (std::size_t i = 0; i < 8; ++i) buf[i] = static_cast<uint8_t>(v >> (8 * i));
      bytes_(buf, width, width);  // fixed size: whatever it does to the length is ignored
      uint64_t out = 0;
      for (std::size_t i = 0; i < 8; ++i) out |= uint64_t{buf[i]} << (8 * i);
      return out & mask;
    }
  }
}

void SessionMutator::MutateOneScalar(Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      const int32_t v = rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
      const auto n = static_cast<int32_t>(static_cast<uint32_t>(MutateInteger(static_cast<uint32_t>(v), 4)));
      rep ? r->SetRepeatedInt32(&m, f, index, n) : r->SetInt32(&m, f, n);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const uint32_t v = rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
      const auto n = static_cast<uint32_t>(MutateInteger(v, 4));
      rep ? r->SetRepeatedUInt32(&m, f, index, n) : r->SetUInt32(&m, f, n);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const int64_t v = rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
      const auto n = static_cast<int64_t>(MutateInteger(static_cast<uint64_t>(v), 8));
      rep ? r->SetRepeatedInt64(&m, f, index, n) : r->SetInt64(&m, f, n);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const uint64_t v = rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
      const uint64_t n = MutateInteger(v, 8);
      rep ? r->SetRepeatedUInt64(&m, f, index, n) : r->SetUInt64(&m, f, n);
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      const bool v = rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
      rep ? r->SetRepeatedBool(&m, f, index, !v) : r->SetBool(&m, f, !v);
      break;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* e = f->enum_type();
      const int n = e->value(static_cast<int>(Below(e->value_count())))->number();
      rep ? r->SetRepeatedEnumValue(&m, f, index, n) : r->SetEnumValue(&m, f, n);
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string s = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      const std::size_t max = std::min(kMaxBytesField, s.size() + 64);
      const std::size_t old = std::min(s.size(), max);
      s.resize(max);
      const std::size_t used = bytes_(reinterpret_cast<uint8_t*>(s.data()), old, max);
      s.resize(std::min(used, max));
      rep ? r->SetRepeatedString(&m, f, index, s) : r->SetString(&m, f, s);
      break;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
}

// Creates (if needed) and changes one field of a sub-message.
void SessionMutator::MutateAnyField(Message& m) {
  const Descriptor* d = m.GetDescriptor();
  if (d->field_count() == 0) return;
  MutateField(m, d->field(static_cast<int>(Below(d->field_count()))));
}

void SessionMutator::MutateRepeated(Message& m, const FieldDescriptor* f) {
  const Reflection* r = m.GetReflection();
  const int n = r->FieldSize(m, f);
  const bool is_msg = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
  const uint64_t op = n == 0 ? 0 : Below(5);
  if (op == 0 || op == 1) {  // add: new, or a clone of an element
    if (n >= kMaxRepeated) return;
    const int at = static_cast<int>(Below(n + 1));
    if (is_msg) {
      Message* e = r->AddMessage(&m, f);
      if (op == 1 && n > 0)
        e->CopyFrom(r->GetRepeatedMessage(m, f, static_cast<int>(Below(n))));
      else
        MutateAnyField(*e);
    } else {
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_UINT32:
          r->AddUInt32(&m, f, 0);
          break;
        case FieldDescriptor::CPPTYPE_INT32:
          r->AddInt32(&m, f, 0);
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          r->AddUInt64(&m, f, 0);
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          r->AddInt64(&m, f, 0);
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          r->AddBool(&m, f, false);
          break;
        case FieldDescriptor::CPPTYPE_ENUM:
          r->AddEnumValue(&m, f, 0);
          break;
        case FieldDescriptor::CPPTYPE_STRING:
          r->AddString(&m, f, "");
          break;
        default:
          return;
      }
      MutateOneScalar(m, f, n);
    }
    // Move the new element (last) to `at`.
    for (int k = n; k > at; --k) r->SwapElements(&m, f, k, k - 1);
  } else if (op == 2) {  // delete
    const int at = static_cast<int>(Below(n));
    for (int k = at; k + 1 < n; ++k) r->SwapElements(&m, f, k, k + 1);
    r->RemoveLast(&m, f);
  } else if (op == 3 && is_msg && n > 1) {  // copy one element over another
    const int from = static_cast<int>(Below(n)), to = static_cast<int>(Below(n));
    if (from != to) {
      std::unique_ptr<Message> tmp(r->GetRepeatedMessage(m, f, from).New());
      tmp->CopyFrom(r->GetRepeatedMessage(m, f, from));
      r->MutableRepeatedMessage(&m, f, to)->CopyFrom(*tmp);
    }
  } else if (is_msg) {  // mutate inside one element
    MutateAnyField(*r->MutableRepeatedMessage(&m, f, static_cast<int>(Below(n))));
  } else {
    MutateOneScalar(m, f, static_cast<int>(Below(n)));
  }
}

void SessionMutator::MutateField(Message& m, const FieldDescriptor* f) {
  const Reflection* r = m.GetReflection();
  if (f->is_repeated()) return MutateRepeated(m, f);
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    if (r->HasField(m, f) && Below(8) == 0) return r->ClearField(&m, f);
    return MutateAnyField(*r->MutableMessage(&m, f));
  }
  // An explicitly present scalar (proto3 `optional`, oneof member) may be cleared.
  if (f->has_presence() && r->HasField(m, f) && Below(6) == 0) return r->ClearField(&m, f);
  MutateOneScalar(m, f, -1);
}

void SessionMutator::Bound(Message& m) {
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) {
      while (r->FieldSize(m, f) > kMaxRepeated) r->RemoveLast(&m, f);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        for (int k = 0; k < r->FieldSize(m, f); ++k) Bound(*r->MutableRepeatedMessage(&m, f, k));
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && r->HasField(m, f)) {
      Bound(*r->MutableMessage(&m, f));
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING && r->HasField(m, f)) {
      std::string s = r->GetString(m, f);
      if (s.size() > kMaxBytesField) {
        s.resize(kMaxBytesField);
        r->SetString(&m, f, s);
      }
    }
  }
}

void SessionMutator::Mutate(Message& m) {
  std::vector<Site> sites;
  CollectSites(m, sites);
  if (!sites.empty()) {
    const Site s = sites[Below(sites.size())];
    MutateField(*s.msg, s.field);
  }
  Bound(m);
}

void SessionMutator::Cross(const Message& a, const Message& b, Message& out) {
  const Descriptor* d = a.GetDescriptor();
  const Reflection* r = a.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated() && f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      // a's prefix, then b's suffix.
      const int na = r->FieldSize(a, f), nb = r->FieldSize(b, f);
      const int cut_a = static_cast<int>(Below(na + 1)), cut_b = static_cast<int>(Below(nb + 1));
      r->ClearField(&out, f);
      for (int k = 0; k < cut_a; ++k) r->AddMessage(&out, f)->CopyFrom(r->GetRepeatedMessage(a, f, k));
      for (int k = cut_b; k < nb && r->FieldSize(out, f) < kMaxRepeated; ++k) {
        r->AddMessage(&out, f)->CopyFrom(r->GetRepeatedMessage(b, f, k));
      }
      continue;
    }
    const bool ha = !f->is_repeated() && r->HasField(a, f);
    const bool hb = !f->is_repeated() && r->HasField(b, f);
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && ha && hb && Below(2) == 0) {
      std::unique_ptr<Message> sub(r->GetMessage(a, f).New());
      Cross(r->GetMessage(a, f), r->GetMessage(b, f), *sub);
      r->MutableMessage(&out, f)->CopyFrom(*sub);
      continue;
    }
    const Message& from = Below(2) ? a : b;
    const bool present = f->is_repeated() ? r->FieldSize(from, f) > 0 : r->HasField(from, f);
    if (!present) {
      r->ClearField(&out, f);
      continue;
    }
    // Copy one field: through a scratch copy of `from` with only f kept.
    std::unique_ptr<Message> only(from.New());
    only->CopyFrom(from);
    std::vector<const FieldDescriptor*> all;
    r->ListFields(*only, &all);
    for (const FieldDescriptor* g : all) {
      if (g != f) r->ClearField(only.get(), g);
    }
    r->ClearField(&out, f);
    out.MergeFrom(*only);
  }
}

void SessionMutator::CrossOver(const Message& a, const Message& b, Message& out) {
  std::unique_ptr<Message> mixed(a.New());
  mixed->CopyFrom(a);
  Cross(a, b, *mixed);
  out.CopyFrom(*mixed);
  Bound(out);
}

}  // namespace rdmapct::fuzz
