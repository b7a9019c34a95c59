#include "reference/wire/result.h"

#include <cstdio>

namespace rdmapct::wire {

const char* DecodeErrorKindName(DecodeErrorKind kind) {
  switch (kind) {
    case DecodeErrorKind::kTruncated:
      return "truncated";
    case DecodeErrorKind::kInvalidValue:
      return "invalid value";
    case DecodeErrorKind::kReservedNonZero:
      return "reserved field not zero";
    case DecodeErrorKind::kLengthMismatch:
      return "length mismatch";
    case DecodeErrorKind::kCrcMismatch:
      return "CRC mismatch";
    case DecodeErrorKind::kMarkerMismatch:
      return "Marker mismatch";
    case DecodeErrorKind::kBadKey:
      return "bad MPA key";
    case DecodeErrorKind::kTooLong:
      return "too long";
    case DecodeErrorKind::kUnknownOpcode:
      return "unknown opcode";
  }
  return "unknown error";
}

std::string DecodeError::Describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s in %s at offset %zu (value 0x%llx)", DecodeErrorKindName(kind), field, offset,
                static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace rdmapct::wire
