// Typed decode errors and a small Result<T> shared by every codec.
//
// Parsers never throw and never read out of bounds: every malformation is a
// DecodeError naming the RFC field and the byte offset (from the start of the
// buffer the caller handed in) where it was found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace rdmapct::wire {

enum class DecodeErrorKind : uint8_t {
  kTruncated,        // fewer bytes than the field needs
  kInvalidValue,     // a field holds a value the RFC does not allow
  kReservedNonZero,  // a field that MUST be zero on receive-checked paths is not
  kLengthMismatch,   // a length field disagrees with the bytes present
  kCrcMismatch,      // MPA CRC check failed
  kMarkerMismatch,   // MPA Marker FPDUPTR disagrees with the FPDU chain
  kBadKey,           // MPA Request/Reply key is wrong
  kTooLong,          // a length exceeds a hard limit (e.g. Private Data > 512)
  kUnknownOpcode,    // opcode not defined in the selected profile
};

const char* DecodeErrorKindName(DecodeErrorKind kind);

struct DecodeError {
  DecodeErrorKind kind;
  const char* field;   // RFC field name, a string literal ("ULPDU_Length", "STag", ...)
  std::size_t offset;  // byte offset of the field in the caller's buffer
  uint64_t value = 0;  // offending value where one exists (0 otherwise)

  // One line: "<kind> in <field> at offset <n> (value 0x..)".
  std::string Describe() const;

  // Shift the offset when an inner parser ran on a sub-span.
  DecodeError At(std::size_t base) const {
    DecodeError e = *this;
    e.offset += base;
    return e;
  }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  Result(DecodeError error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const DecodeError& error() const { return std::get<1>(v_); }

  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, DecodeError> v_;
};

// Result<void> equivalent.
struct Ok {};
using Status = Result<Ok>;

}  // namespace rdmapct::wire
