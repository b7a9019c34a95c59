#include "capture/pcap_reader.h"

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace rdmapct::capture {
namespace {

using wire::ByteSpan;
using wire::LoadBe16;
using wire::LoadBe32;

// Link types named by their numbers as well as their macros: LINKTYPE_RAW
// (101) is what the file holds; libpcap maps it to DLT_RAW, but both are accepted.
constexpr int kLinktypeRaw = 101;
constexpr int kDltIpv4 = 228, kDltIpv6 = 229;  // LINKTYPE_IPV4 / LINKTYPE_IPV6
constexpr int kDltLinuxSll2 = 276;

constexpr uint16_t kEtherIpv4 = 0x0800, kEtherIpv6 = 0x86DD;
constexpr uint16_t kEtherVlan = 0x8100, kEtherQinQ = 0x88A8, kEtherQinQOld = 0x9100;
constexpr uint8_t kIpProtoTcp = 6;

std::string Octets(std::size_t n) { return std::to_string(n) + (n == 1 ? " octet" : " octets"); }

// What a link layer hands to the network layer: an EtherType-style protocol.
struct LinkResult {
  bool ok = false;
  uint16_t protocol = 0;  // kEtherIpv4 / kEtherIpv6 / other EtherType; 0: look at the IP version nibble
  std::size_t header = 0;
  std::string problem;  // !ok: why
  std::string skipped;  // ok but not IP: what it is
};

LinkResult Cut(const char* what, std::size_t need, std::size_t have) {
  LinkResult r;
  r.problem = std::string(what) + " incomplete (" + Octets(have) + " of " + std::to_string(need) + ")";
  return r;
}

// The EtherType at `type_at`, the link header ending at `header_end`, then
// any 802.1Q / 802.1ad tags (TCI, inner EtherType) skipped.
LinkResult TaggedEtherType(ByteSpan d, std::size_t type_at, std::size_t header_end, const char* link) {
  if (d.size() < header_end) return Cut(link, header_end, d.size());
  uint16_t type = LoadBe16(&d[type_at]);
  std::size_t header = header_end;
  while (type == kEtherVlan || type == kEtherQinQ || type == kEtherQinQOld) {
    if (d.size() < header + 4) return Cut("802.1Q VLAN tag", header + 4, d.size());
    type = LoadBe16(&d[header + 2]);
    header += 4;
  }
  LinkResult r;
  r.ok = true;
  r.protocol = type;
  r.header = header;
  if (type < 0x0600) r.skipped = "802.3 frame with LLC";
  return r;
}

LinkResult BsdLoopback(ByteSpan d, bool network_order) {
  if (d.size() < 4) return Cut("BSD loopback header", 4, d.size());
  uint32_t family = network_order ? LoadBe32(d.data()) : wire::LoadLe32(d.data());
  // DLT_NULL is in the capturing host's byte order: a value too large for an
  // address family was written by a host of the other order.
  if (!network_order && family > 0xFFFF) family = LoadBe32(d.data());
  LinkResult r;
  r.ok = true;
  r.header = 4;
  // AF_INET is 2 everywhere; AF_INET6 is 10 (Linux), 24 (NetBSD, OpenBSD),
  // 28 (FreeBSD), 30 (macOS).
  if (family == 2)
    r.protocol = kEtherIpv4;
  else if (family == 10 || family == 24 || family == 28 || family == 30)
    r.protocol = kEtherIpv6;
  else
    r.skipped = "address family " + std::to_string(family);
  return r;
}

LinkResult LinkLayer(int link_type, ByteSpan d) {
  switch (link_type) {
    case DLT_EN10MB:
      return TaggedEtherType(d, 12, 14, "Ethernet header");
    case DLT_LINUX_SLL:  // packet type, ARPHRD, address length, 8 address octets, protocol
      return TaggedEtherType(d, 14, 16, "Linux cooked (SLL) header");
    case kDltLinuxSll2:  // protocol, reserved, interface, ARPHRD, packet type, address length, address
      return TaggedEtherType(d, 0, 20, "Linux cooked v2 (SLL2) header");
    case DLT_RAW:
    case kLinktypeRaw:
    case kDltIpv4:
    case kDltIpv6: {
      LinkResult r;
      r.ok = true;
      return r;  // protocol 0: the version nibble decides
    }
    case DLT_NULL:
      return BsdLoopback(d, false);
    case DLT_LOOP:
      return BsdLoopback(d, true);
    default: {
      LinkResult r;
      r.problem = "unsupported link type " + LinkTypeName(link_type);
      return r;
    }
  }
}

// Where the IP packet's TCP segment is, after the IP header(s).
struct IpResult {
  FrameKind kind = FrameKind::kMalformed;
  std::string reason;
  std::size_t tcp_at = 0;  // offset of the TCP header in the IP packet
  std::size_t ip_end = 0;  // end of the IP packet (its length field), beyond the capture if cut
};

IpResult Bad(std::string why) { return IpResult{FrameKind::kMalformed, std::move(why)}; }
IpResult Skip(std::string what) { return IpResult{FrameKind::kSkipped, std::move(what)}; }

const char* ProtocolName(uint8_t p) {
  switch (p) {
    case 1:
      return "ICMP";
    case 17:
      return "UDP";
    case 58:
      return "ICMPv6";
    case 132:
      return "SCTP";
    case 50:
      return "ESP (encrypted)";
    case 59:
      return "IPv6 No Next Header";
    default:
      return nullptr;
  }
}

IpResult Skipped(uint8_t protocol) {
  const char* n = ProtocolName(protocol);
  return Skip(n != nullptr ? n : "IP protocol " + std::to_string(protocol));
}

IpResult Ipv4(ByteSpan ip, TcpSegment& s) {
  if (ip.size() < 20) return Bad("IPv4 header incomplete (" + Octets(ip.size()) + " of 20)");
  const std::size_t ihl = (ip[0] & 0x0F) * 4u;
  const std::size_t total = LoadBe16(&ip[2]);
  if (ihl < 20) return Bad("IPv4 header length " + std::to_string(ihl) + " below 20");
  if (total < ihl)
    return Bad("IPv4 total length " + std::to_string(total) + " below the header length " + std::to_string(ihl));
  if (ip.size() < ihl) return Bad("IPv4 header incomplete (" + Octets(ip.size()) + " of " + std::to_string(ihl) + ")");
  const uint16_t frag = LoadBe16(&ip[6]);
  s.source.address = IpAddress{4, {}};
  s.destination.address = IpAddress{4, {}};
  std::copy_n(&ip[12], 4, s.source.address.octets.begin());
  std::copy_n(&ip[16], 4, s.destination.address.octets.begin());
  if ((frag & 0x3FFF) != 0) {
    if (ip[9] != kIpProtoTcp) return Skipped(ip[9]);
    return Bad("IPv4 fragment (offset " + std::to_string((frag & 0x1FFF) * 8) +
               (frag & 0x2000 ? ", more fragments" : "") + "): fragments are not reassembled");
  }
  if (ip[9] != kIpProtoTcp) return Skipped(ip[9]);
  return IpResult{FrameKind::kTcp, {}, ihl, total};
}

IpResult Ipv6(ByteSpan ip, TcpSegment& s) {
  if (ip.size() < 40) return Bad("IPv6 header incomplete (" + Octets(ip.size()) + " of 40)");
  const std::size_t payload = LoadBe16(&ip[4]);
  if (payload == 0) return Bad("IPv6 payload length 0 (jumbogram or bad length)");
  s.source.address = IpAddress{6, {}};
  s.destination.address = IpAddress{6, {}};
  std::copy_n(&ip[8], 16, s.source.address.octets.begin());
  std::copy_n(&ip[24], 16, s.destination.address.octets.begin());
  const std::size_t end = 40 + payload;
  uint8_t next = ip[6];
  std::size_t at = 40;
  // A bound on the chain, so a loop of headers cannot spin.
  for (int hops = 0; hops < 16; ++hops) {
    switch (next) {
      case kIpProtoTcp:
        return IpResult{FrameKind::kTcp, {}, at, end};
      case 0:     // Hop-by-Hop Options
      case 43:    // Routing
      case 60:    // Destination Options
      case 51: {  // Authentication Header (payload length in 4-octet units, minus 2)
        if (ip.size() < at + 2 || end < at + 2) return Bad("IPv6 extension header incomplete");
        const std::size_t len = next == 51 ? (ip[at + 1] + 2u) * 4u : (ip[at + 1] + 1u) * 8u;
        next = ip[at];
        at += len;
        if (at > end) return Bad("IPv6 extension header longer than the packet");
        break;
      }
      case 44: {  // Fragment
        if (ip.size() < at + 8 || end < at + 8) return Bad("IPv6 Fragment header incomplete");
        const uint16_t off = LoadBe16(&ip[at + 2]);
        if ((off & 0xFFF9) != 0) {
          if (ip[at] != kIpProtoTcp && off >> 3 == 0) return Skipped(ip[at]);
          return Bad("IPv6 fragment (offset " + std::to_string((off >> 3) * 8) + (off & 1 ? ", more fragments" : "") +
                     "): fragments are not reassembled");
        }
        next = ip[at];  // an atomic fragment: the whole packet
        at += 8;
        break;
      }
      default:
        return Skipped(next);
    }
  }
  return Bad("IPv6 extension header chain too long");
}

}  // namespace

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (version == 4)
    inet_ntop(AF_INET, octets.data(), buf, sizeof buf);
  else
    inet_ntop(AF_INET6, octets.data(), buf, sizeof buf);
  return buf;
}

std::string Endpoint::ToString() const {
  const std::string a = address.ToString();
  return (address.version == 6 ? "[" + a + "]" : a) + ":" + std::to_string(port);
}

bool SupportedLinkType(int t) {
  return t == DLT_EN10MB || t == DLT_LINUX_SLL || t == kDltLinuxSll2 || t == DLT_RAW || t == kLinktypeRaw ||
         t == kDltIpv4 || t == kDltIpv6 || t == DLT_NULL || t == DLT_LOOP;
}

std::string LinkTypeName(int t) {
  switch (t) {
    case DLT_EN10MB:
      return "Ethernet (DLT_EN10MB)";
    case DLT_LINUX_SLL:
      return "Linux cooked (DLT_LINUX_SLL)";
    case kDltLinuxSll2:
      return "Linux cooked v2 (DLT_LINUX_SLL2)";
    case DLT_RAW:
    case kLinktypeRaw:
      return "raw IP (DLT_RAW)";
    case kDltIpv4:
      return "raw IPv4 (DLT_IPV4)";
    case kDltIpv6:
      return "raw IPv6 (DLT_IPV6)";
    case DLT_NULL:
      return "BSD loopback (DLT_NULL)";
    case DLT_LOOP:
      return "OpenBSD loopback (DLT_LOOP)";
    default: {
      const char* name = pcap_datalink_val_to_name(t);
      return "DLT " + std::to_string(t) + (name != nullptr ? std::string(" (DLT_") + name + ")" : "");
    }
  }
}

FrameParse ParseFrame(int link_type, ByteSpan data, uint32_t original_length, TcpSegment& s) {
  const bool cut = original_length > data.size();
  const auto bad = [&](std::string why) {
    if (cut)
      why += "; frame cut by the snapshot length (" + std::to_string(data.size()) + " of " +
             std::to_string(original_length) + " octets captured)";
    return FrameParse{FrameKind::kMalformed, std::move(why)};
  };
  const LinkResult link = LinkLayer(link_type, data);
  if (!link.ok) return bad(link.problem);
  if (!link.skipped.empty()) return FrameParse{FrameKind::kSkipped, link.skipped};
  const ByteSpan ip = data.subspan(link.header);
  uint16_t protocol = link.protocol;
  if (protocol == 0) {
    if (ip.empty()) return bad("IP header missing");
    const uint8_t version = ip[0] >> 4;
    if (version != 4 && version != 6) return bad("IP version " + std::to_string(version));
    protocol = version == 4 ? kEtherIpv4 : kEtherIpv6;
  }
  IpResult r;
  if (protocol == kEtherIpv4) {
    if (!ip.empty() && ip[0] >> 4 != 4) return bad("IP version " + std::to_string(ip[0] >> 4) + " in an IPv4 frame");
    r = Ipv4(ip, s);
  } else if (protocol == kEtherIpv6) {
    if (!ip.empty() && ip[0] >> 4 != 6) return bad("IP version " + std::to_string(ip[0] >> 4) + " in an IPv6 frame");
    r = Ipv6(ip, s);
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "EtherType 0x%04x", protocol);
    return FrameParse{FrameKind::kSkipped, protocol == 0x0806 ? "ARP" : buf};
  }
  if (r.kind == FrameKind::kSkipped) return FrameParse{FrameKind::kSkipped, r.reason};
  if (r.kind == FrameKind::kMalformed) return bad(r.reason);
  // The TCP header must be captured whole; the payload may be cut.
  if (r.ip_end < r.tcp_at + 20)
    return bad("IP length leaves " + Octets(r.ip_end - std::min(r.ip_end, r.tcp_at)) +
               " for a TCP header of at least 20");
  if (ip.size() < r.tcp_at + 20)
    return bad("TCP header incomplete (" + Octets(ip.size() - std::min(ip.size(), r.tcp_at)) + " of 20)");
  const uint8_t* tcp = ip.data() + r.tcp_at;
  const std::size_t data_offset = (tcp[12] >> 4) * 4u;
  if (data_offset < 20) return bad("TCP data offset " + std::to_string(data_offset) + " below 20");
  if (r.ip_end < r.tcp_at + data_offset)
    return bad("TCP data offset " + std::to_string(data_offset) + " beyond the IP packet");
  if (ip.size() < r.tcp_at + data_offset) {
    return bad("TCP options incomplete (" + Octets(ip.size() - r.tcp_at) + " of " + std::to_string(data_offset) + ")");
  }
  s.source.port = LoadBe16(tcp);
  s.destination.port = LoadBe16(tcp + 2);
  s.seq = LoadBe32(tcp + 4);
  s.ack = LoadBe32(tcp + 8);
  s.flags = tcp[13];
  s.window = LoadBe16(tcp + 14);
  const std::size_t payload_at = r.tcp_at + data_offset;
  const std::size_t payload_size = r.ip_end - payload_at;                       // as sent
  const std::size_t captured = std::min(payload_size, ip.size() - payload_at);  // Ethernet padding dropped
  s.payload = ip.subspan(payload_at, captured);
  s.payload_missing = static_cast<uint32_t>(payload_size - captured);
  return FrameParse{FrameKind::kTcp, {}};
}

namespace {

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};

void Warn(CaptureReadSummary& summary, uint64_t frame, std::string message) {
  if (summary.warnings.size() >= kMaxStoredWarnings) {
    ++summary.warnings_dropped;
    return;
  }
  summary.warnings.push_back(CaptureWarning{frame, std::move(message)});
}

bool ReadAll(pcap_t* pc, const SegmentHandler& on_segment, CaptureReadSummary& summary) {
  summary.opened = true;
  summary.link_type = pcap_datalink(pc);
  if (!SupportedLinkType(summary.link_type)) {
    summary.error = summary.file + ": unsupported link type " + LinkTypeName(summary.link_type);
    return false;
  }
  const bool nano = pcap_get_tstamp_precision(pc) == PCAP_TSTAMP_PRECISION_NANO;
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  int rc;
  while ((rc = pcap_next_ex(pc, &hdr, &data)) == 1) {
    const uint64_t n = ++summary.frames;
    TcpSegment s;
    s.frame = n;
    // Modulo 2^64: a pcapng timestamp may not fit nanoseconds since 1970.
    s.time_ns = static_cast<int64_t>(static_cast<uint64_t>(hdr->ts.tv_sec) * 1'000'000'000u +
                                     static_cast<uint64_t>(hdr->ts.tv_usec) * (nano ? 1u : 1000u));
    const FrameParse p = ParseFrame(summary.link_type, ByteSpan(data, hdr->caplen), hdr->len, s);
    switch (p.kind) {
      case FrameKind::kSkipped:
        ++summary.skipped;
        break;
      case FrameKind::kMalformed:
        ++summary.malformed;
        Warn(summary, n, "frame " + std::to_string(n) + ": " + p.reason);
        break;
      case FrameKind::kTcp:
        ++summary.tcp_segments;
        if (s.payload_missing != 0) {
          Warn(summary, n,
               "frame " + std::to_string(n) + ": TCP payload cut by the snapshot length (" + Octets(s.payload.size()) +
                   " of " + std::to_string(s.payload.size() + s.payload_missing) + " captured)");
        }
        if (on_segment) on_segment(s);
        break;
    }
  }
  if (rc == PCAP_ERROR) {
    summary.error = summary.file + ": " + pcap_geterr(pc) + " (after frame " + std::to_string(summary.frames) + ")";
    return false;
  }
  return true;
}

}  // namespace

bool ReadCaptureFile(const std::string& path, const SegmentHandler& on_segment, CaptureReadSummary& summary) {
  summary = CaptureReadSummary{};
  summary.file = path;
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, PcapCloser> pc(
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf));
  if (!pc) {
    // libpcap's message may or may not name the file ("foo: No such file or directory").
    std::string why = errbuf;
    if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
    summary.error = path + ": " + why;
    return false;
  }
  return ReadAll(pc.get(), on_segment, summary);
}

bool ReadCaptureStream(std::FILE* file, const std::string& name, const SegmentHandler& on_segment,
                       CaptureReadSummary& summary) {
  summary = CaptureReadSummary{};
  summary.file = name;
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, PcapCloser> pc(
      pcap_fopen_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, errbuf));
  if (!pc) {
    std::fclose(file);  // libpcap closes the stream only once it has a handle
    summary.error = name + ": " + errbuf;
    return false;
  }
  return ReadAll(pc.get(), on_segment, summary);
}

}  // namespace rdmapct::capture
