// Big-endian ("network byte order") loads and stores, and a bounds-checked
// reader and an appending writer. Every iWARP header field is big-endian
// except the MPA CRC, which is sent least significant octet first (crc32c.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "reference/wire/result.h"

namespace rdmapct::wire {

using Bytes = std::vector<uint8_t>;
using ByteSpan = std::span<const uint8_t>;

inline uint16_t LoadBe16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t LoadBe32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline uint64_t LoadBe64(const uint8_t* p) { return uint64_t{LoadBe32(p)} << 32 | LoadBe32(p + 4); }
inline uint32_t LoadLe32(const uint8_t* p) {
  return uint32_t{p[3]} << 24 | uint32_t{p[2]} << 16 | uint32_t{p[1]} << 8 | p[0];
}

inline void StoreBe16(uint8_t* p, uint16_t v) {
  p[0] = v >> 8;
  p[1] = v & 0xFF;
}
inline void StoreBe32(uint8_t* p, uint32_t v) {
  p[0] = v >> 24;
  p[1] = (v >> 16) & 0xFF;
  p[2] = (v >> 8) & 0xFF;
  p[3] = v & 0xFF;
}
inline void StoreBe64(uint8_t* p, uint64_t v) {
  StoreBe32(p, v >> 32);
  StoreBe32(p + 4, v & 0xFFFFFFFF);
}
inline void StoreLe32(uint8_t* p, uint32_t v) {
  p[0] = v & 0xFF;
  p[1] = (v >> 8) & 0xFF;
  p[2] = (v >> 16) & 0xFF;
  p[3] = v >> 24;
}

// Reads fields front to back; a short read yields kTruncated naming the field.
// `base` is added to every reported offset so that inner parsers report
// offsets relative to the caller's outermost buffer.
class ByteReader {
 public:
  explicit ByteReader(ByteSpan data, std::size_t base = 0) : data_(data), base_(base) {}

  std::size_t pos() const { return pos_; }
  std::size_t offset() const { return base_ + pos_; }  // absolute offset
  std::size_t remaining() const { return data_.size() - pos_; }
  ByteSpan rest() const { return data_.subspan(pos_); }

  bool Need(std::size_t n) const { return remaining() >= n; }
  DecodeError Truncated(const char* field) const {
    return DecodeError{DecodeErrorKind::kTruncated, field, offset(), remaining()};
  }

  // Callers check Need() (or use the Read* helpers' bool) before reading.
  bool Read8(const char* field, uint8_t& out, DecodeError& err) { return ReadN(field, 1, out, err); }
  bool Read16(const char* field, uint16_t& out, DecodeError& err) { return ReadN(field, 2, out, err); }
  bool Read32(const char* field, uint32_t& out, DecodeError& err) { return ReadN(field, 4, out, err); }
  bool Read64(const char* field, uint64_t& out, DecodeError& err) { return ReadN(field, 8, out, err); }
  bool ReadSpan(const char* field, std::size_t n, ByteSpan& out, DecodeError& err) {
    if (!Need(n)) {
      err = Truncated(field);
      return false;
    }
    out = data_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

 private:
  template <class T>
  bool ReadN(const char* field, std::size_t n, T& out, DecodeError& err) {
    if (!Need(n)) {
      err = Truncated(field);
      return false;
    }
    const uint8_t* p = data_.data() + pos_;
    if constexpr (sizeof(T) == 1)
      out = p[0];
    else if constexpr (sizeof(T) == 2)
      out = LoadBe16(p);
    else if constexpr (sizeof(T) == 4)
      out = LoadBe32(p);
    else
      out = LoadBe64(p);
    pos_ += n;
    return true;
  }

  ByteSpan data_;
  std::size_t base_;
  std::size_t pos_ = 0;
};

// Appends big-endian fields to a byte vector (encoders are byte-exact).
class ByteWriter {
 public:
  explicit ByteWriter(Bytes& out) : out_(out) {}
  void Put8(uint8_t v) { out_.push_back(v); }
  void Put16(uint16_t v) {
    std::size_t n = Grow(2);
    StoreBe16(&out_[n], v);
  }
  void Put32(uint32_t v) {
    std::size_t n = Grow(4);
    StoreBe32(&out_[n], v);
  }
  void Put64(uint64_t v) {
    std::size_t n = Grow(8);
    StoreBe64(&out_[n], v);
  }
  void PutBytes(ByteSpan b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void PutZeros(std::size_t n) { out_.resize(out_.size() + n, 0); }
  std::size_t size() const { return out_.size(); }

 private:
  std::size_t Grow(std::size_t n) {
    std::size_t at = out_.size();
    out_.resize(at + n);
    return at;
  }
  Bytes& out_;
};

}  // namespace rdmapct::wire
