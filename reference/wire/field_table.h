// Fixed byte layouts as tables of named fields: the codecs of the test-ULP
// convention (ulp_convention.cc, ulp_convention_commands.cc) describe every
// block as the byte-layout tables of docs/target-convention.md (name, offset,
// width), and read, write and bounds-check fields through these helpers, so
// code and document name the same fields at the same offsets and a decode
// error names the field. Big-endian, no state.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "reference/wire/bytes.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

// One field of a fixed layout (describe.h's Field is a decoded field, for display).
struct LayoutField {
  const char* name;    // the document's name, reported by decode errors
  std::size_t offset;  // octets from the start of its block
  std::size_t width;   // octets: 1, 2, 4, 7 or 8
};

// The field of the block at `start` of `data`; the caller has checked that
// it is present (FirstTruncated).
uint64_t LoadField(ByteSpan data, std::size_t start, const LayoutField& f);
// Writes `v` (its low `width` octets) into the block at `start` of `out`,
// which already holds it.
void StoreField(Bytes& out, std::size_t start, const LayoutField& f, uint64_t v);

// An error in the field of the block at `start`; `base` is added to the
// reported offset (the caller's outermost buffer).
DecodeError FieldError(DecodeErrorKind kind, const LayoutField& f, std::size_t start, std::size_t base, uint64_t value);

// kTruncated for a field that `size` octets of data cannot hold. It is
// reported where the data ends when the field would start beyond it (an
// entry stride larger than the data), so an error offset always points into
// the decoded octets or just after them; the value is the octets present.
DecodeError TruncatedField(const LayoutField& f, std::size_t start, std::size_t base, std::size_t size);

// The first field, in table order, that the data does not fully hold.
std::optional<DecodeError> FirstTruncated(ByteSpan data, std::size_t start, std::size_t base,
                                          std::span<const LayoutField> fields);

// The data starts with the 4-octet magic that opens a convention block.
bool MagicMatches(ByteSpan data, const std::array<uint8_t, 4>& magic);

// One block of a buffer: its data, where it starts, and the base added to
// reported offsets; the helpers above without repeating those three.
class FieldBlock {
 public:
  FieldBlock(ByteSpan data, std::size_t start, std::size_t base) : data_(data), start_(start), base_(base) {}

  std::optional<DecodeError> FirstTruncated(std::span<const LayoutField> fields) const {
    return wire::FirstTruncated(data_, start_, base_, fields);
  }
  uint64_t Get(const LayoutField& f) const { return LoadField(data_, start_, f); }
  DecodeError Error(DecodeErrorKind kind, const LayoutField& f, uint64_t value) const {
    return FieldError(kind, f, start_, base_, value);
  }

 private:
  ByteSpan data_;
  std::size_t start_;
  std::size_t base_;
};

}  // namespace rdmapct::wire
