#include "fuzz/session_seeds.h"

#include <cctype>

namespace rdmapct::fuzz {

namespace {

std::string Lower(const std::string& s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The last message type each profile defines.
proto::SessionMessageType LastType(proto::Profile p) {
  switch (p) {
    case proto::RFC7306:
      return proto::ATOMIC_RESPONSE;
    case proto::COMMIT:
      return proto::ATOMIC_WRITE_RESPONSE;
    default:
      return proto::TERMINATE;
  }
}

proto::SessionMessage Message(proto::SessionMessageType t) {
  proto::SessionMessage m;
  m.set_type(t);
  switch (t) {
    case proto::RDMA_WRITE:
    case proto::READ_RESPONSE:
      m.set_offset(64);
      m.set_payload_size(32);
      break;
    case proto::SEND:
    case proto::SEND_INVALIDATE:
    case proto::SEND_SE:
    case proto::SEND_SE_INVALIDATE:
    case proto::VERIFY_RESPONSE:
      m.set_payload_size(16);
      break;
    case proto::READ_REQUEST:
    case proto::FLUSH_REQUEST:
      m.set_length(128);
      break;
    case proto::VERIFY_REQUEST:
      m.set_length(128);
      m.set_payload_size(32);
      break;
    case proto::ATOMIC_FETCH_ADD:
    case proto::ATOMIC_CMP_SWAP:
    case proto::ATOMIC_WRITE_REQUEST:
      m.set_offset(8);
      break;
    default:
      break;
  }
  m.set_payload_seed(static_cast<uint32_t>(t) + 1);
  return m;
}

proto::FuzzSession Mixed(proto::Profile p) {
  proto::FuzzSession s;
  s.mutable_connection()->set_profile(p);
  *s.add_action()->mutable_message() = Message(proto::RDMA_WRITE);
  proto::SessionAction* r1 = s.add_action();
  *r1->mutable_message() = Message(proto::READ_REQUEST);
  r1->mutable_delivery()->set_hold(true);
  proto::SessionAction* r2 = s.add_action();
  *r2->mutable_message() = Message(proto::READ_REQUEST);
  r2->mutable_message()->set_offset(64);
  proto::SessionAction* send = s.add_action();
  *send->mutable_message() = Message(proto::SEND);
  send->mutable_delivery()->add_split(7);
  return s;
}

// Two-step error paths of the conformance suite that no single mutation of
// a one-message seed reaches: use of a region after a Send with Invalidate
// named it (RFC 5040 §5.3, R5040-7.2-09a), and, under COMMIT, a Flush whose
// Disposition Flags the mutator can clear (RCOMMIT-3.1.1.1-02). Valid as
// sent: the mutator makes them wrong.
proto::FuzzSession InvalidateThenWrite(proto::Profile p) {
  proto::FuzzSession s;
  s.mutable_connection()->set_profile(p);
  *s.add_action()->mutable_message() = Message(proto::SEND_INVALIDATE);
  proto::SessionMessage& w = *s.add_action()->mutable_message();
  w = Message(proto::RDMA_WRITE);
  w.set_region(proto::INVALIDATABLE);
  return s;
}

// An Atomic Write whose Data Sink Length (8, RCOMMIT-3.1.3.1-03) is an
// explicit override, so a single mutation makes it wrong.
proto::FuzzSession AtomicWriteWithLength() {
  proto::FuzzSession s;
  s.mutable_connection()->set_profile(proto::COMMIT);
  proto::SessionMessage& m = *s.add_action()->mutable_message();
  m = Message(proto::ATOMIC_WRITE_REQUEST);
  m.mutable_overrides()->set_read_message_size(8);
  return s;
}

proto::FuzzSession FlushWithFlags(uint32_t flags) {
  proto::FuzzSession s;
  s.mutable_connection()->set_profile(proto::COMMIT);
  proto::SessionMessage& m = *s.add_action()->mutable_message();
  m = Message(proto::FLUSH_REQUEST);
  m.mutable_overrides()->set_flush_disposition_flags(flags);
  return s;
}

}  // namespace

std::vector<NamedSession> SeedSessions() {
  std::vector<NamedSession> out;
  for (proto::Profile p : {proto::RFC5040, proto::RFC7306, proto::COMMIT}) {
    const std::string profile = Lower(proto::Profile_Name(p));
    for (int t = 0; t <= LastType(p); ++t) {
      const auto type = static_cast<proto::SessionMessageType>(t);
      proto::FuzzSession s;
      s.mutable_connection()->set_profile(p);
      *s.add_action()->mutable_message() = Message(type);
      out.push_back({profile + "_" + Lower(proto::SessionMessageType_Name(type)), s});
    }
    out.push_back({profile + "_mixed", Mixed(p)});
    proto::FuzzSession crc_off = Mixed(p);
    crc_off.mutable_connection()->set_crc_off(true);
    crc_off.mutable_connection()->set_target_crc_optional(true);
    out.push_back({profile + "_mixed_crc_off", crc_off});
    proto::FuzzSession markers = Mixed(p);
    markers.mutable_connection()->set_markers(true);
    markers.mutable_connection()->set_target_markers(true);
    out.push_back({profile + "_mixed_markers", markers});
    proto::FuzzSession enhanced = Mixed(p);
    enhanced.mutable_connection()->set_enhanced(true);
    enhanced.mutable_connection()->set_ird(4);
    enhanced.mutable_connection()->set_ord(4);
    enhanced.mutable_connection()->set_rtr_flags(2);
    out.push_back({profile + "_mixed_rfc6581", enhanced});
    out.push_back({profile + "_invalidate_then_write", InvalidateThenWrite(p)});
    // A Read of several MULPDUs: the Read Response's segmentation (R5040-5.2-*).
    proto::FuzzSession large;
    large.mutable_connection()->set_profile(p);
    *large.add_action()->mutable_message() = Message(proto::READ_REQUEST);
    large.mutable_action(0)->mutable_message()->set_length(16384);
    out.push_back({profile + "_read_request_large", large});
    // A short Read whose source crosses a 4 KiB offset: stacks copy small
    // payloads inline (Linux siw's siw_try_1seg, docs/reports/siw S12).
    proto::FuzzSession short_read;
    short_read.mutable_connection()->set_profile(p);
    *short_read.add_action()->mutable_message() = Message(proto::READ_REQUEST);
    short_read.mutable_action(0)->mutable_message()->set_offset(4081);
    short_read.mutable_action(0)->mutable_message()->set_length(16);
    out.push_back({profile + "_read_request_short_across_4k", short_read});
  }
  out.push_back({"commit_flush_request_global_visibility", FlushWithFlags(2)});
  out.push_back({"commit_atomic_write_request_length_8", AtomicWriteWithLength()});
  return out;
}

}  // namespace rdmapct::fuzz
