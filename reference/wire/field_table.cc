#include "reference/wire/field_table.h"

#include <algorithm>

namespace rdmapct::wire {

uint64_t LoadField(ByteSpan data, std::size_t start, const LayoutField& f) {
  const uint8_t* p = data.data() + start + f.offset;
  switch (f.width) {
    case 1:
      return p[0];
    case 2:
      return LoadBe16(p);
    case 4:
      return LoadBe32(p);
    case 7:
      return uint64_t{p[0]} << 48 | uint64_t{LoadBe16(p + 1)} << 32 | LoadBe32(p + 3);
    default:
      return LoadBe64(p);
  }
}

void StoreField(Bytes& out, std::size_t start, const LayoutField& f, uint64_t v) {
  uint8_t* p = out.data() + start + f.offset;
  switch (f.width) {
    case 1:
      p[0] = static_cast<uint8_t>(v);
      break;
    case 2:
      StoreBe16(p, static_cast<uint16_t>(v));
      break;
    case 4:
      StoreBe32(p, static_cast<uint32_t>(v));
      break;
    case 7:
      p[0] = static_cast<uint8_t>(v >> 48);
      StoreBe16(p + 1, static_cast<uint16_t>(v >> 32));
      StoreBe32(p + 3, static_cast<uint32_t>(v));
      break;
    default:
      StoreBe64(p, v);
      break;
  }
}

DecodeError FieldError(DecodeErrorKind kind, const LayoutField& f, std::size_t start, std::size_t base,
                       uint64_t value) {
  return DecodeError{kind, f.name, base + start + f.offset, value};
}

DecodeError TruncatedField(const LayoutField& f, std::size_t start, std::size_t base, std::size_t size) {
  const std::size_t at = start + f.offset;
  return DecodeError{DecodeErrorKind::kTruncated, f.name, base + std::min(at, size), size > at ? size - at : 0};
}

std::optional<DecodeError> FirstTruncated(ByteSpan data, std::size_t start, std::size_t base,
                                          std::span<const LayoutField> fields) {
  for (const LayoutField& f : fields) {
    if (start + f.offset + f.width > data.size()) return TruncatedField(f, start, base, data.size());
  }
  return std::nullopt;
}

bool MagicMatches(ByteSpan data, const std::array<uint8_t, 4>& magic) {
  return data.size() >= magic.size() && std::equal(magic.begin(), magic.end(), data.begin());
}

}  // namespace rdmapct::wire
