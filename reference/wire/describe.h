// Field trees: every field of a decoded frame by its RFC name, with its
// value, stream offset and length, and a text renderer in the spirit of
// `tshark -V`. Pure functions of already decoded frames (stream_decode.h,
// rdmap.h); used by `rdmapct decode` and meant for conformance failure
// reports and pcap decoding. JSON rendering lives above the wire layer
// (cli/), which keeps this layer free of third-party dependencies.
//
// Shape of a frame's tree (RFC names, RFC 5044 / RFC 5041 / RFC 5040 /
// RFC 7306 / draft-talpey-rdma-commit-01 figures):
//   Frame N                        value: one-line summary
//     MPA Request Frame | MPA Reply Frame | MPA FPDU
//     DDP Segment                  DDP Control (T, L, Rsvd, DV), RsvdULP, STag+TO | QN+MSN+MO
//     RDMAP                        RDMAP Control Field (RV, Rsv, Opcode), Invalidate STag, header
//     ULP Payload                  octets (hexdump)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/ddp.h"
#include "reference/wire/profile.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/stream_decode.h"

namespace rdmapct::wire {

struct Field {
  std::string name;                // RFC name, e.g. "ULPDU_Length", "SinkSTag (Data Sink STag)"
  std::string value;               // display text, e.g. "22 (0x0016)", "RDMA Write"
  std::optional<uint64_t> number;  // the raw value when the field is a number
  uint64_t offset = 0;             // stream offset of the first octet
  uint64_t length = 0;             // octets covered (the containing octets for a bit field)
  // A bit field inside the `length` octets at `offset`: bits
  // [bit_shift, bit_shift + bit_width) counted from the least significant
  // bit of that big-endian container. bit_width 0: whole octets.
  uint8_t bit_shift = 0;
  uint8_t bit_width = 0;
  std::optional<Bytes> octets;  // raw octets to hexdump (payload, Private Data, hash)
  bool problem = false;         // CRC/Marker mismatch, unknown opcode, undecodable part
  std::vector<Field> children;

  Field& Add(Field child) {
    // A layer has a handful of fields: one allocation for them, no moves.
    if (children.empty()) children.reserve(8);
    children.push_back(std::move(child));
    return children.back();
  }
  // The first descendant (depth first, this node included) named `name`.
  const Field* Find(std::string_view name) const;
};

// ---- frames ----------------------------------------------------------------

// "Frame N" with the MPA Request/Reply Frame (and a test-ULP Advertisement
// in its Private Data, when there is one).
Field DescribeStartupFrame(const DecodedStartupFrame& frame);

// "Frame N" with the MPA FPDU (when segment.fpdu is set), the DDP Segment,
// RDMAP and the ULP Payload.
Field DescribeSegment(const DecodedSegment& segment, Profile profile);

// ---- building blocks (usable on their own) -----------------------------------

// "MPA Request Frame"/"MPA Reply Frame" at `offset` (the frame's octets).
Field DescribeMpaStartupFrame(const MpaStartupFrame& frame, ByteSpan octets, uint64_t offset);

// "MPA FPDU": ULPDU_Length, PAD, CRC (received / computed / verdict), Markers.
Field DescribeFpdu(const DecodedFpdu& fpdu);

// "DDP Segment": the DDP header at map.At(0).
Field DescribeDdpHeader(const DdpSegmentHeader& header, const StreamOffsetMap& map, std::string name = "DDP Segment");

// "RDMAP": the Control Field, Invalidate STag (untagged) and the RDMAP header
// of a decoded segment (offsets inside `view` are indexes for `map`).
Field DescribeRdmap(const RdmapMessageView& view, Profile profile, const StreamOffsetMap& map);

// The RDMAP header alone (e.g. in a conformance report); `map.At(0)` is its
// first octet. `profile` decodes the RDMAP Control Field of a Terminated DDP Header.
Field DescribeRdmapHeader(const RdmapHeader& header, Profile profile, const StreamOffsetMap& map);

// "RDMAP Control Field" (RV, Rsv, Opcode with its RFC name) of the octet at `offset`.
Field DescribeRdmapControlField(uint8_t control, Profile profile, uint64_t offset);

// The name of an RFC 7306 Atomic Operation Code (Figure 5).
const char* AtomicOpcodeName(uint8_t aopcode);

// ---- text --------------------------------------------------------------------

struct TextRenderOptions {
  std::size_t max_octets = 32;  // hexdump limit per field; SIZE_MAX for all (-v)
  bool show_offsets = false;    // append "[offset n, length m]" to each field
};

// One block: "Frame 2: RDMA Write, FPDU at offset 40, 32 octets" and the
// layers indented by 4 per level, bit fields with their bit pattern
// ("1... .... = T (Tagged flag): 1"), octets as a hexdump.
std::string RenderText(const Field& root, const TextRenderOptions& options = {});

// "0001 .... = Layer" style mask text for a bit field; empty otherwise.
std::string BitPattern(const Field& field);

}  // namespace rdmapct::wire
