// Field trees for MPA (RFC 5044 §4, §7.1; RFC 6581 §9), whole frames, the
// test-ULP Advertisement (docs/target-convention.md §3) and the text renderer.
#include "reference/wire/describe.h"

#include <algorithm>

#include "reference/wire/crc32c.h"
#include "reference/wire/describe_internal.h"
#include "reference/wire/hex.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::wire {
namespace {
using namespace describe_detail;

// ---- MPA Request/Reply Frame ----------------------------------------------------

Field StartupFlags(uint8_t b, bool is_reply, uint64_t at) {
  Field f = Num("M C R S Res", b, HexValue(b, 2), at, 1);
  const bool m = b & kMpaFlagM, c = b & kMpaFlagC, r = b & kMpaFlagR, s = b & kMpaFlagS;
  f.Add(Bits("M (Marker flag)", m, m ? "1 (the sender asks for Markers)" : "0", at, 1, 7, 1));
  f.Add(Bits("C (CRC flag)", c, c ? "1 (the sender asks for CRCs)" : "0", at, 1, 6, 1));
  f.Add(Bits(
      "R (Rejected Connection)", r,
      is_reply ? (r ? "1 (connection rejected)" : "0 (connection accepted)") : (r ? "1 (not used in a Request)" : "0"),
      at, 1, 5, 1));
  f.Add(Bits("S (RFC 6581 enhanced setup)", s, YesNo(s), at, 1, 4, 1));
  f.Add(Bits("Res", b & kMpaResMask, std::to_string(b & kMpaResMask), at, 1, 0, 4));
  return f;
}

// REQ R6581-9-01: A|B|IRD(14)|C|D|ORD(14), big-endian.
Field EnhancedWord(uint32_t w, uint64_t at) {
  const EnhancedIrdOrd e = DecodeEnhancedWord(w);
  Field f = Num("RFC 6581 IRD/ORD", w, HexValue(w, 8), at, 4);
  auto ird_ord = [](uint16_t v) {
    return DecHex(v, 4) + (v == kIrdOrdNotNegotiated ? " (no automatic negotiation)" : "");
  };
  f.Add(Bits("A (peer-to-peer)", e.peer_to_peer, YesNo(e.peer_to_peer), at, 4, 31, 1));
  f.Add(Bits("B (zero-length Send RTR)", e.send_rtr, YesNo(e.send_rtr), at, 4, 30, 1));
  f.Add(Bits("IRD", e.ird, ird_ord(e.ird), at, 4, 16, 14));
  f.Add(Bits("C (zero-length RDMA Write RTR)", e.write_rtr, YesNo(e.write_rtr), at, 4, 15, 1));
  f.Add(Bits("D (zero-length RDMA Read RTR)", e.read_rtr, YesNo(e.read_rtr), at, 4, 14, 1));
  f.Add(Bits("ORD", e.ord, ird_ord(e.ord), at, 4, 0, 14));
  return f;
}

// ---- test-ULP Advertisement ------------------------------------------------------

Field RegionFields(const AdvertisedRegion& r, std::size_t index, uint64_t at) {
  Field f = Node("Region " + std::to_string(index), HexValue(r.stag, 8), at, kRegionEntryLength);
  f.Add(Num("STag", r.stag, HexValue(r.stag, 8), at, 4));
  f.Add(Num("Base Tagged Offset", r.base_tagged_offset, HexValue(r.base_tagged_offset, 16), at + 4, 8));
  f.Add(Num("Length", r.length, DecHex(r.length, 8), at + 12, 4));
  std::string access;
  static constexpr std::pair<uint8_t, const char*> kAccess[] = {{kAccessRemoteRead, "read"},
                                                                {kAccessRemoteWrite, "write"},
                                                                {kAccessRemoteAtomic, "atomic"},
                                                                {kAccessFlush, "flush"},
                                                                {kAccessVerify, "verify"}};
  for (auto [bit, word] : kAccess) {
    if (r.access & bit) access += (access.empty() ? "" : ", ") + std::string(word);
  }
  f.Add(Num("Access", r.access, HexValue(r.access, 2) + " (" + (access.empty() ? "none" : access) + ")", at + 16, 1));
  std::string attrs;
  static constexpr std::pair<uint8_t, const char*> kAttrs[] = {{kAttrInvalidatable, "invalidatable"},
                                                               {kAttrForeign, "foreign"},
                                                               {kAttrDeregistered, "deregistered"},
                                                               {kAttrShared, "shared"}};
  for (auto [bit, word] : kAttrs) {
    if (r.attributes & bit) attrs += (attrs.empty() ? "" : ", ") + std::string(word);
  }
  f.Add(Num("Attributes", r.attributes, HexValue(r.attributes, 2) + (attrs.empty() ? "" : " (" + attrs + ")"), at + 17,
            1));
  f.Add(Num("Memory Object", r.memory_object, std::to_string(r.memory_object), at + 18, 2));
  f.Add(Num("Object Offset", r.object_offset, DecHex(r.object_offset, 8), at + 20, 4));
  return f;
}

Field AdvertisementFields(ByteSpan data, uint64_t at) {
  auto r = DecodeAdvertisement(data, 0);
  if (!r) {
    return Problem("Test-ULP Advertisement", "undecodable: " + r.error().At(at).Describe(), at, data.size());
  }
  const Advertisement& a = *r;
  Field f = Node("Test-ULP Advertisement",
                 "version " + std::to_string(a.major_version) + "." + std::to_string(a.minor_version), at, data.size());
  f.Add(Node("Advertisement Magic", "\"RPCA\"", at, 4));
  f.Add(Num("Major Version", a.major_version, std::to_string(a.major_version), at + 4, 1));
  f.Add(Num("Minor Version", a.minor_version, std::to_string(a.minor_version), at + 5, 1));
  std::string flags;
  static constexpr std::pair<uint16_t, const char*> kFlags[] = {{kFlagLittleEndianAtomics, "little-endian atomics"},
                                                                {kFlagPreviousOutcome, "previous outcome"},
                                                                {kFlagRfc7306, "RFC 7306"},
                                                                {kFlagCommit, "COMMIT"}};
  for (auto [bit, word] : kFlags) {
    if (a.flags & bit) flags += (flags.empty() ? "" : ", ") + std::string(word);
  }
  f.Add(Num("Flags", a.flags, HexValue(a.flags, 4) + (flags.empty() ? "" : " (" + flags + ")"), at + 6, 2));
  f.Add(Num("IRD", a.ird, std::to_string(a.ird), at + 8, 2));
  f.Add(Num("ORD", a.ord, std::to_string(a.ord), at + 10, 2));
  f.Add(Num("Receive Buffer Count", a.receive_buffer_count, std::to_string(a.receive_buffer_count), at + 12, 2));
  f.Add(Num("Region Count", a.regions.size(), std::to_string(a.regions.size()), at + 14, 1));
  f.Add(Num("Region Entry Length", a.region_entry_length, std::to_string(a.region_entry_length), at + 15, 1));
  f.Add(Num("Receive Buffer Size", a.receive_buffer_size, std::to_string(a.receive_buffer_size), at + 16, 4));
  f.Add(Num("Connection Serial", a.connection_serial, std::to_string(a.connection_serial), at + 20, 4));
  uint64_t entry = at + kAdvertisementHeaderLength;
  for (std::size_t i = 0; i < a.regions.size(); ++i, entry += a.region_entry_length) {
    f.Add(RegionFields(a.regions[i], i, entry));
  }
  if (a.previous) {
    const PreviousOutcome& p = *a.previous;
    Field& o = f.Add(Node("Previous-connection Outcome", "", entry, kPreviousOutcomeLength));
    o.Add(Num("Outcome Connection Serial", p.connection_serial, std::to_string(p.connection_serial), entry, 4));
    o.Add(Num("Outcome", static_cast<uint8_t>(p.outcome), std::to_string(static_cast<int>(p.outcome)), entry + 4, 1));
    o.Add(Num("Outcome Flags", p.flags, HexValue(p.flags, 2), entry + 5, 1));
    const TerminateCode code{p.layer, p.error_type, p.error_code};
    o.Add(Node("Outcome Terminate", Describe(code), entry + 6, 2));
    o.Add(Num("Events Sent", p.events_sent, std::to_string(p.events_sent), entry + 8, 2));
    o.Add(Num("Completion Errors", p.completion_errors, std::to_string(p.completion_errors), entry + 10, 2));
    entry += kPreviousOutcomeLength;
  }
  if (a.commands) {  // 1.1, docs/target-convention.md §7.4
    const CommandCapabilities& c = *a.commands;
    Field& b = f.Add(Node("Commands", "test-ULP 1.1 command records", entry, kCommandsBlockLength));
    std::string types;
    for (uint8_t t = 1; t <= kMaxCommandType; ++t) {
      if (c.Supports(static_cast<CommandType>(t))) {
        types += (types.empty() ? "" : ", ") + std::string(CommandTypeName(static_cast<CommandType>(t)));
      }
    }
    b.Add(Num("Supported Commands", c.supported, HexValue(c.supported, 8) + " (" + types + ")", entry, 4));
    b.Add(Num("Failed Command Id", c.failed_command_id, std::to_string(c.failed_command_id), entry + 4, 4));
    b.Add(Num("Commands Completed", c.completed, std::to_string(c.completed), entry + 8, 2));
    b.Add(Num("Commands Failed", c.failed, std::to_string(c.failed), entry + 10, 2));
    b.Add(Num("Commands Flushed", c.flushed, std::to_string(c.flushed), entry + 12, 2));
  }
  return f;
}

// ---- text rendering --------------------------------------------------------------

// Appends to `out` in place: a tree has a field per line and a decode
// renders every frame, so no line is built from temporary strings.
void RenderField(const Field& f, int depth, const TextRenderOptions& options, std::string& out) {
  const std::size_t indent = static_cast<std::size_t>(depth) * 4;
  out.append(indent, ' ');
  if (const std::string bits = BitPattern(f); !bits.empty()) {
    out += bits;
    out += " = ";
  }
  out += f.name;
  if (!f.value.empty()) {
    out += ": ";
    out += f.value;
  }
  if (f.problem) out += " [!]";
  if (options.show_offsets) {
    out += " [offset ";
    out += std::to_string(f.offset);
    out += ", length ";
    out += std::to_string(f.length);
    out += ']';
  }
  out += '\n';
  if (f.octets && !f.octets->empty()) {
    const std::size_t shown = std::min(options.max_octets, f.octets->size());
    for (const std::string& line : HexDumpLines(ByteSpan(*f.octets).first(shown))) {
      out.append(indent + 4, ' ');
      out += line;
      out += '\n';
    }
    if (shown < f.octets->size()) {
      out.append(indent + 4, ' ');
      out += "... " + Plural(f.octets->size() - shown, "more octet") + " (-v shows all)\n";
    }
  }
  for (const Field& c : f.children) RenderField(c, depth + 1, options, out);
}

std::string Summary(const DecodedSegment& s) {
  std::string what;
  if (s.rdmap) {
    const RdmapMessageView& v = *s.rdmap;
    const DdpSegmentHeader& h = v.ddp.header;
    what = v.opcode_known ? v.opcode_info->name : "Unknown opcode " + HexValue(v.ctrl.opcode, 2);
    what += h.tagged ? " (STag " + HexValue(h.stag, 8) + ", TO " + HexValue(h.tagged_offset, 1)
                     : " (QN " + std::to_string(h.queue_number) + ", MSN " + std::to_string(h.msn) + ", MO " +
                           std::to_string(h.message_offset);
    what += h.last ? ")" : ", not last)";
  } else {
    what = "undecodable DDP Segment";
  }
  if (s.fpdu != nullptr) {
    what += ", FPDU at offset " + std::to_string(s.fpdu->offset) + ", " + Plural(s.fpdu->wire_length, "octet");
    if (!s.fpdu->crc_ok) what += ", CRC MISMATCH";
    if (!s.fpdu->marker_ok) what += ", MARKER MISMATCH";
  } else {
    what += ", DDP Segment at offset " + std::to_string(s.map.At(0)) + ", " + Plural(s.ulpdu.size(), "octet");
  }
  return what;
}

}  // namespace

const Field* Field::Find(std::string_view wanted) const {
  if (name == wanted) return this;
  for (const Field& c : children) {
    if (const Field* f = c.Find(wanted)) return f;
  }
  return nullptr;
}

std::string BitPattern(const Field& f) {
  if (f.bit_width == 0 || !f.number) return {};
  const unsigned total = static_cast<unsigned>(f.length * 8);
  // Every bit a '.', most significant first, a space after each nibble;
  // then the field's own bits in their places.
  std::string s;
  s.reserve(total + total / 4);
  for (unsigned nibble = 0; nibble < total / 4; ++nibble) s += nibble == 0 ? "...." : " ....";
  const unsigned end = std::min(total, unsigned{f.bit_shift} + f.bit_width);
  for (unsigned bit = f.bit_shift; bit < end; ++bit) {
    const unsigned i = total - 1 - bit;  // position from the most significant bit
    s[i + i / 4] = ((*f.number >> (bit - f.bit_shift)) & 1) ? '1' : '0';
  }
  return s;
}

std::string RenderText(const Field& root, const TextRenderOptions& options) {
  std::string out;
  RenderField(root, 0, options, out);
  return out;
}

Field DescribeMpaStartupFrame(const MpaStartupFrame& frame, ByteSpan octets, uint64_t offset) {
  Field f = Node(frame.is_reply ? "MPA Reply Frame" : "MPA Request Frame",
                 "offset " + std::to_string(offset) + ", " + Plural(octets.size(), "octet"), offset, octets.size());
  const std::size_t n = std::min(octets.size(), kMpaKeySize);
  f.Add(Node("Key", "\"" + std::string(octets.begin(), octets.begin() + static_cast<std::ptrdiff_t>(n)) + "\"", offset,
             kMpaKeySize));
  if (octets.size() < kMpaStartupHeaderSize) return f;
  f.Add(StartupFlags(octets[16], frame.is_reply, offset + 16));
  const std::string rev_note = frame.revision == 1 ? " (RFC 5044)" : frame.revision == 2 ? " (RFC 6581)" : "";
  f.Add(Num("Rev", frame.revision, std::to_string(frame.revision) + rev_note, offset + 17, 1));
  const uint16_t pd_length = LoadBe16(octets.data() + 18);
  f.Add(Num("PD_Length", pd_length, std::to_string(pd_length), offset + 18, 2));
  uint64_t pd_at = offset + kMpaStartupHeaderSize;
  if (frame.enhanced_data) {
    f.Add(EnhancedWord(EncodeEnhancedWord(*frame.enhanced_data), pd_at));
    pd_at += kMpaEnhancedDataSize;
  }
  Field& pd = f.Add(Octets("Private Data", frame.private_data, pd_at));
  if (HasAdvertisementMagic(frame.private_data)) pd.Add(AdvertisementFields(frame.private_data, pd_at));
  return f;
}

Field DescribeStartupFrame(const DecodedStartupFrame& s) {
  Field root = Node("Frame " + std::to_string(s.number),
                    std::string(s.frame.is_reply ? "MPA Reply Frame" : "MPA Request Frame") + " at offset " +
                        std::to_string(s.offset) + ", " + Plural(s.octets.size(), "octet"),
                    s.offset, s.octets.size());
  root.Add(DescribeMpaStartupFrame(s.frame, s.octets, s.offset));
  return root;
}

// REQ R5044-4.1-05 R5044-4.4-10 R5044-4.2-04
Field DescribeFpdu(const DecodedFpdu& d) {
  Field f =
      Node("MPA FPDU", "offset " + std::to_string(d.offset) + ", " + Plural(d.wire_length, "octet") + " on the wire",
           d.offset, d.wire_length);
  f.Add(Num("ULPDU_Length", d.ulpdu_length, DecHex(d.ulpdu_length, 4), d.header_offset, 2));
  const uint64_t pad_logical = kUlpduLengthSize + uint64_t{d.ulpdu_length};
  const ByteSpan pad(d.pad, d.pad_length);
  f.Add(Node("PAD", Plural(d.pad_length, "octet") + (pad.empty() ? "" : " (" + HexOctets(pad) + ")"),
             d.map.At(pad_logical), d.pad_length));
  // The received value first (the field), the verdict next to it, the
  // computed value as a child so that JSON readers get it as a number.
  const char* verdict = !d.crc_checked ? "not checked: CRCs off" : d.crc_ok ? "ok" : "MISMATCH";
  Field& crc =
      f.Add(Num("CRC", d.received_crc, HexValue(d.received_crc, 8) + " [" + verdict + "]", d.crc_offset, kCrc32cSize));
  crc.problem = !d.crc_ok;
  if (d.crc_computed)
    crc.Add(Num("Computed CRC", d.computed_crc, HexValue(d.computed_crc, 8), d.crc_offset, kCrc32cSize));
  if (!d.markers.empty()) {
    Field& ms = f.Add(Node("Markers", std::to_string(d.markers.size()), d.markers.front().offset,
                           d.markers.back().offset + kMarkerSize - d.markers.front().offset));
    ms.problem = !d.marker_ok;
    for (const MarkerSeen& m : d.markers) {
      Field& mk =
          ms.Add(Node("Marker",
                      "offset " + std::to_string(m.offset) +
                          (m.ok() ? " [ok]" : " [MISMATCH: FPDUPTR should be " + DecHex(m.expected_fpduptr, 4) + "]"),
                      m.offset, kMarkerSize));
      mk.problem = !m.ok();
      mk.Add(Num("RESERVED", m.reserved, HexValue(m.reserved, 4), m.offset, 2));
      mk.Add(Num("FPDUPTR", m.fpduptr, DecHex(m.fpduptr, 4), m.offset + 2, 2));
    }
  }
  return f;
}

Field DescribeSegment(const DecodedSegment& s, Profile profile) {
  const uint64_t offset = s.fpdu != nullptr ? s.fpdu->offset : s.map.At(0);
  const uint64_t length = s.fpdu != nullptr ? s.fpdu->wire_length : s.ulpdu.size();
  Field root = Node("Frame " + std::to_string(s.number), Summary(s), offset, length);
  if (s.fpdu != nullptr) root.Add(DescribeFpdu(*s.fpdu));
  if (s.rdmap) {
    const RdmapMessageView& v = *s.rdmap;
    root.Add(DescribeDdpHeader(v.ddp.header, s.map));
    root.Add(DescribeRdmap(v, profile, s.map));
    root.Add(Octets("ULP Payload", v.ulp_payload, s.map.At(v.ulp_payload_offset)));
    return root;
  }
  // What can still be shown of an undecodable segment: the DDP header if it
  // is complete, the RDMAP Control Field, the error and the raw octets.
  if (auto ddp = DecodeDdpSegment(s.ulpdu, 0)) {
    root.Add(DescribeDdpHeader(ddp->header, s.map));
    Field& r = root.Add(Node("RDMAP", "", s.map.At(1), s.ulpdu.size() - 1));
    r.Add(DescribeRdmapControlField(ddp->header.rsvd_ulp0, profile, s.map.At(1)));
  }
  const std::string why = s.error ? DescribeStreamError(*s.error) : "undecodable";
  Field bad = Problem("Undecodable", why, s.map.At(0), s.ulpdu.size());
  root.Add(std::move(bad));
  root.Add(Octets("ULPDU", s.ulpdu, s.map.At(0)));
  return root;
}

}  // namespace rdmapct::wire
