// Capture reader: opens a pcap or pcapng file with libpcap
// (pcap_open_offline / pcap_next_ex; libpcap owns the file formats) and
// turns every frame into a TCP segment view, or a reason why it is none.
//
// Link layers: Ethernet (802.1Q / 802.1ad VLAN tags skipped), Linux cooked
// v1 (SLL) and v2 (SLL2), raw IP (DLT_RAW, LINKTYPE_IPV4 / IPV6), BSD
// loopback (DLT_NULL in either byte order, DLT_LOOP). Network layers: IPv4
// (options skipped) and IPv6 (Hop-by-Hop, Routing, Destination Options and
// AH extension headers skipped). Only TCP is returned.
//
// Nothing in a frame can crash the reader: a frame that cannot be parsed
// (cut by the snapshot length inside a header, an unknown link type,
// inconsistent lengths, an IP fragment) is a warning naming its 1-based
// capture frame number, as Wireshark counts them. A frame that is not TCP
// (ARP, UDP, ICMP, ...) is skipped silently and counted. A TCP payload cut
// by the snapshot length is returned as far as it was captured, with a
// warning; the missing octets become a gap of the reassembled stream.
// Ethernet padding is removed using the IP length.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "reference/wire/bytes.h"

namespace rdmapct::capture {

// An IPv4 or IPv6 address.
struct IpAddress {
  uint8_t version = 4;               // 4 or 6
  std::array<uint8_t, 16> octets{};  // IPv4: the first 4

  friend bool operator==(const IpAddress&, const IpAddress&) = default;
  friend auto operator<=>(const IpAddress&, const IpAddress&) = default;
  // "10.0.0.1", "2001:db8::1" (RFC 5952 text form).
  std::string ToString() const;
};

struct Endpoint {
  IpAddress address;
  uint16_t port = 0;

  friend bool operator==(const Endpoint&, const Endpoint&) = default;
  friend auto operator<=>(const Endpoint&, const Endpoint&) = default;
  // "10.0.0.1:49152", "[2001:db8::1]:5040".
  std::string ToString() const;
};

inline constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04, kTcpPsh = 0x08, kTcpAck = 0x10;

// One TCP segment of a capture. `payload` points into the frame (valid
// during the callback only).
struct TcpSegment {
  uint64_t frame = 0;   // capture frame number, 1-based
  int64_t time_ns = 0;  // capture time, nanoseconds since the epoch
  Endpoint source, destination;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0;  // kTcp* bits (CWR/ECE/URG are not used)
  uint16_t window = 0;
  wire::ByteSpan payload;        // as captured (may be shorter than sent, see above)
  uint32_t payload_missing = 0;  // octets of payload cut by the snapshot length
};

enum class FrameKind : uint8_t {
  kTcp,        // `segment` is filled
  kSkipped,    // not TCP (or not IP): counted, no warning
  kMalformed,  // `reason` says why it could not be parsed: a warning
};

struct FrameParse {
  FrameKind kind = FrameKind::kMalformed;
  std::string reason;  // kSkipped: what it was ("ARP", "UDP"); kMalformed: the problem
};

// Parses one captured frame of link type `link_type` (a DLT_ value as
// pcap_datalink returns it). `original_length` is the frame's length on the
// wire (pcap_pkthdr::len): when larger than data.size() the frame was cut by
// the snapshot length. Fills segment.source .. payload_missing (not frame
// or time_ns). Pure: no libpcap call, usable on hand-built frames.
FrameParse ParseFrame(int link_type, wire::ByteSpan data, uint32_t original_length, TcpSegment& segment);

// True for the link types ParseFrame understands.
bool SupportedLinkType(int link_type);

// "Ethernet (DLT_EN10MB)", "Linux cooked v2 (DLT_LINUX_SLL2)", "DLT 147".
std::string LinkTypeName(int link_type);

struct CaptureWarning {
  uint64_t frame = 0;  // 0: not about one frame
  std::string message;
};

struct CaptureReadSummary {
  std::string file;     // as given, for messages
  bool opened = false;  // false: `error` says why nothing was read
  int link_type = -1;
  uint64_t frames = 0;  // frames read
  uint64_t tcp_segments = 0;
  uint64_t skipped = 0;  // not TCP
  uint64_t malformed = 0;
  // The first kMaxStoredWarnings warnings; `warnings_dropped` counts the rest.
  std::vector<CaptureWarning> warnings;
  uint64_t warnings_dropped = 0;
  // One line "<file>: <problem>" when the file could not be opened or could
  // not be read to its end (a truncated file: the frames before it count).
  std::string error;
};

inline constexpr std::size_t kMaxStoredWarnings = 1000;

using SegmentHandler = std::function<void(const TcpSegment&)>;

// Reads every frame of the capture at `path` and calls `on_segment` for
// each TCP segment, in capture order. Returns summary.error.empty().
bool ReadCaptureFile(const std::string& path, const SegmentHandler& on_segment, CaptureReadSummary& summary);

// The same on an open stream (e.g. fmemopen); libpcap takes ownership of
// `file` and closes it, also on failure. `name` is used in messages.
bool ReadCaptureStream(std::FILE* file, const std::string& name, const SegmentHandler& on_segment,
                       CaptureReadSummary& summary);

}  // namespace rdmapct::capture
