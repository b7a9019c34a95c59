// The endpoint's memory: memory objects (byte arrays), Tagged Buffers named by
// STag (regions over an object; two regions may alias the same octets), and
// the Untagged Buffers of QN 0 posted by the ULP, with the per-message
// reassembly state that lets segments of one message arrive in any MO order
// (RFC 5041 §5.3, decisions D-F5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::model {

// Access rights of a Tagged Buffer (bit set).
enum AccessRight : uint8_t {
  kRemoteRead = 0x01,
  kRemoteWrite = 0x02,
  kRemoteAtomic = 0x04,
  kRemoteFlush = 0x08,   // COMMIT "Flushable"
  kRemoteVerify = 0x10,  // COMMIT "Verifiable"
};
inline constexpr uint8_t kAllAccess = 0x1F;

struct MemoryRegion {
  uint32_t stag = 0;
  uint64_t base_tagged_offset = 0;   // first legal TO
  uint64_t length = 0;               // legal TOs: [base, base + length)
  uint8_t access = kAllAccess;       // AccessRight bits
  uint32_t stream_id = 0;            // stream / protection domain it is associated with
  bool valid = true;                 // false once invalidated
  bool remote_invalidatable = true;  // Send with Invalidate may invalidate it
  bool shared = false;               // shared by concurrent streams (convention §12)
  uint32_t memory_object = 0;        // which byte array
  uint64_t object_offset = 0;        // where TO == base lands in that array

  bool Has(AccessRight r) const { return (access & r) != 0; }
  // The end of the region, saturating (a region never wraps).
  uint64_t EndTaggedOffset() const { return base_tagged_offset + length; }
};

// The region a test-ULP Advertisement entry describes, as the endpoint that
// advertised it registered it: `stream_id` is that endpoint's stream (a
// foreign region belongs to another one), `memory_object` the model object
// holding the entry's memory object. The convention's Access bits are the
// model's AccessRight bits.
MemoryRegion RegionFromAdvertisement(const wire::AdvertisedRegion& region, uint32_t stream_id, uint32_t memory_object);

// Received octet ranges of one message, merged ([begin, end) pairs). Small:
// in-order arrival keeps exactly one range.
class ByteRangeSet {
 public:
  // Returns the number of octets not covered before.
  uint64_t Insert(uint64_t begin, uint64_t end);
  uint64_t covered() const { return covered_; }
  uint64_t end() const { return ranges_.empty() ? 0 : ranges_.back().second; }  // highest end
  bool CoversPrefix(uint64_t end) const;                                        // [0, end) fully present
  void Clear() {
    ranges_.clear();
    covered_ = 0;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
  uint64_t covered_ = 0;
};

// One ULP receive buffer on QN 0 and the message being placed into it.
struct ReceiveBuffer {
  uint64_t receive_id = 0;  // handle returned by PostReceive
  uint32_t capacity = 0;    // octets the ULP posted
  // The octets placed so far: grown on placement (never beyond capacity),
  // so posting a buffer allocates nothing; octets not placed read as zero.
  wire::Bytes data;
  ByteRangeSet received;
  bool started = false;                    // a segment of its message has been placed
  std::optional<uint32_t> message_length;  // MO + length of the L=1 segment
  uint8_t rdmap_control = 0;               // RsvdULP[0] of the MO=0 segment (or the first seen)
  uint32_t invalidate_stag = 0;            // RsvdULP octets 2-5
  uint64_t immediate_data = 0;             // Immediate Data messages (not placed into data)
  bool have_first_segment = false;         // MO = 0 seen
  bool unbounded = false;                  // passive audit: size unknown, nothing stored
  bool Complete() const {
    return message_length && received.CoversPrefix(*message_length) && received.covered() == *message_length;
  }
};

class Resources {
 public:
  // --- memory ---------------------------------------------------------------
  // A zero-filled byte array; returns its id.
  uint32_t CreateMemoryObject(std::size_t size);
  // An object holding `contents` (taken over, not copied); returns its id.
  uint32_t CreateMemoryObject(wire::Bytes contents);
  // An object that starts as `initial`, shared and never written: the first
  // mutable access (ObjectBytes, RegionBytes of a non-const Resources)
  // copies it. A session that only reads memory copies nothing.
  uint32_t CreateMemoryObject(std::shared_ptr<const wire::Bytes> initial);
  // An object whose octets are `memory` itself, shared with whoever else
  // holds it (convention §12: a memory object that concurrent connections
  // share); writes go straight to it, nothing is copied.
  uint32_t CreateSharedMemoryObject(std::shared_ptr<wire::Bytes> memory);
  // Moves an object's octets out (the object becomes empty; a shared one is
  // copied and stays): for an owner
  // that is done with these resources.
  wire::Bytes ReleaseObjectBytes(uint32_t memory_object);
  std::span<uint8_t> ObjectBytes(uint32_t memory_object);
  std::span<const uint8_t> ObjectBytes(uint32_t memory_object) const;

  // Adds or replaces the region named region.stag. The region must lie inside
  // its memory object (returns false otherwise).
  bool RegisterRegion(const MemoryRegion& region);
  // Convenience: a new object of `length` octets and one region over it.
  MemoryRegion& AddRegion(uint32_t stag, uint64_t base_tagged_offset, uint64_t length, uint8_t access,
                          uint32_t stream_id);
  const MemoryRegion* FindRegion(uint32_t stag) const;
  MemoryRegion* FindRegion(uint32_t stag);
  bool Invalidate(uint32_t stag);  // false if unknown

  // Octets [to, to + length) of a region, clipped to the region's memory
  // object (shorter or empty when out of range, e.g. with skip-bounds-check).
  std::span<uint8_t> RegionBytes(const MemoryRegion& region, uint64_t tagged_offset, std::size_t length);
  std::span<const uint8_t> RegionBytes(const MemoryRegion& region, uint64_t tagged_offset, std::size_t length) const;

  // --- QN 0 receive buffers ---------------------------------------------------
  uint64_t PostReceive(uint32_t size);
  // Passive audit: a buffer of unknown size (no capacity check, octets not kept).
  uint64_t PostUnboundedReceive();
  std::size_t posted_receives() const { return receives_.size(); }
  // The i-th posted buffer (0 = the one the next expected MSN consumes).
  ReceiveBuffer* Receive(std::size_t i) { return i < receives_.size() ? &receives_[i] : nullptr; }
  // Removes the head buffer (its message was delivered) and returns it.
  ReceiveBuffer PopReceive();

 private:
  // Its own octets, or (until the first mutable access) `shared`.
  struct MemoryObject {
    wire::Bytes own;
    std::shared_ptr<const wire::Bytes> shared;
    std::shared_ptr<wire::Bytes> common;  // CreateSharedMemoryObject
    std::span<const uint8_t> view() const {
      if (common) return *common;
      return shared ? std::span<const uint8_t>(*shared) : own;
    }
  };
  std::vector<MemoryObject> objects_;
  std::unordered_map<uint32_t, MemoryRegion> regions_;
  std::deque<ReceiveBuffer> receives_;
  uint64_t next_receive_id_ = 1;
};

}  // namespace rdmapct::model
