#include "capture/capture_builder.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <array>

namespace rdmapct::capture {
namespace {

using wire::Bytes;
using wire::ByteSpan;
using wire::ByteWriter;

constexpr int kDltLinuxSll2 = 276;

// RFC 1071 one's-complement sum, folded but not complemented.
uint32_t Sum(ByteSpan data, uint32_t sum) {
  std::size_t i = 0;
  for (; i + 1 < data.size(); i += 2) sum += wire::LoadBe16(&data[i]);
  if (i < data.size()) sum += uint32_t{data[i]} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum;
}

uint16_t Checksum(uint32_t folded) { return static_cast<uint16_t>(~folded & 0xFFFF); }

void PutLe16(Bytes& b, uint16_t v) { b.insert(b.end(), {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8)}); }
void PutLe32(Bytes& b, uint32_t v) {
  b.insert(b.end(), {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
                     static_cast<uint8_t>(v >> 24)});
}

Bytes TcpHeaderAndPayload(const FrameSpec& s) {
  Bytes t;
  ByteWriter w(t);
  w.Put16(s.source.port);
  w.Put16(s.destination.port);
  w.Put32(s.seq);
  w.Put32(s.ack);
  w.Put8(5 << 4);
  w.Put8(s.flags);
  w.Put16(s.window);
  w.Put16(0);  // checksum, below
  w.Put16(0);
  w.PutBytes(s.payload);
  return t;
}

Bytes IpPacket(const FrameSpec& s) {
  Bytes tcp = TcpHeaderAndPayload(s);
  const bool v6 = s.source.address.version == 6;
  const std::size_t addr = v6 ? 16 : 4;
  // Pseudo-header: addresses, then protocol and TCP length.
  Bytes pseudo(s.source.address.octets.begin(), s.source.address.octets.begin() + addr);
  pseudo.insert(pseudo.end(), s.destination.address.octets.begin(), s.destination.address.octets.begin() + addr);
  pseudo.insert(pseudo.end(),
                {0, 0, static_cast<uint8_t>(tcp.size() >> 8), static_cast<uint8_t>(tcp.size()), 0, 0, 0, 6});
  wire::StoreBe16(&tcp[16], Checksum(Sum(tcp, Sum(pseudo, 0))));
  Bytes ip;
  ByteWriter w(ip);
  if (!v6) {
    const std::size_t header = s.ip_options ? 24 : 20;
    w.Put8(static_cast<uint8_t>(0x40 | header / 4));
    w.Put8(0);
    w.Put16(static_cast<uint16_t>(header + tcp.size()));
    w.Put16(0x1234);
    w.Put16(0x4000);
    w.Put8(64);
    w.Put8(6);
    w.Put16(0);
    w.PutBytes(ByteSpan(s.source.address.octets).first(4));
    w.PutBytes(ByteSpan(s.destination.address.octets).first(4));
    if (s.ip_options) w.PutBytes(std::array<uint8_t, 4>{1, 1, 1, 0});
    wire::StoreBe16(&ip[10], Checksum(Sum(ByteSpan(ip).first(header), 0)));
  } else {
    const std::size_t ext = s.ip_options ? 16 : 0;
    w.Put32(0x60000000);
    w.Put16(static_cast<uint16_t>(ext + tcp.size()));
    w.Put8(s.ip_options ? 0 : 6);  // Hop-by-Hop first when there are extension headers
    w.Put8(64);
    w.PutBytes(s.source.address.octets);
    w.PutBytes(s.destination.address.octets);
    if (s.ip_options) {
      // Hop-by-Hop (next: Destination Options), then Destination Options
      // (next: TCP), each 8 octets of PadN.
      w.PutBytes(std::array<uint8_t, 8>{60, 0, 1, 4, 0, 0, 0, 0});
      w.PutBytes(std::array<uint8_t, 8>{6, 0, 1, 4, 0, 0, 0, 0});
    }
  }
  ip.insert(ip.end(), tcp.begin(), tcp.end());
  return ip;
}

void PutTags(ByteWriter& w, const FrameSpec& s, uint16_t ethertype) {
  if (s.vlan_ids.empty()) return w.Put16(ethertype);
  for (uint16_t vid : s.vlan_ids) {
    w.Put16(0x8100);
    w.Put16(vid & 0x0FFF);
  }
  w.Put16(ethertype);
}

}  // namespace

Bytes BuildTcpFrame(int link_type, const FrameSpec& s) {
  const Bytes ip = IpPacket(s);
  const bool v6 = s.source.address.version == 6;
  const uint16_t ethertype = v6 ? 0x86DD : 0x0800;
  Bytes f;
  ByteWriter w(f);
  switch (link_type) {
    case DLT_EN10MB:
      w.PutBytes(std::array<uint8_t, 12>{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1});
      // With tags the first EtherType slot holds TPID 0x8100 (PutTags).
      PutTags(w, s, ethertype);
      break;
    case DLT_LINUX_SLL:  // packet type 4 (sent by us), ARPHRD_ETHER, 6-octet address
      w.Put16(4);
      w.Put16(1);
      w.Put16(6);
      w.PutBytes(std::array<uint8_t, 8>{0x02, 0, 0, 0, 0, 1, 0, 0});
      PutTags(w, s, ethertype);
      break;
    case kDltLinuxSll2:
      w.Put16(s.vlan_ids.empty() ? ethertype : 0x8100);
      w.Put16(0);  // reserved
      w.Put32(2);  // interface index
      w.Put16(1);  // ARPHRD_ETHER
      w.Put8(4);   // outgoing
      w.Put8(6);
      w.PutBytes(std::array<uint8_t, 8>{0x02, 0, 0, 0, 0, 1, 0, 0});
      for (std::size_t k = 0; k < s.vlan_ids.size(); ++k) {
        w.Put16(s.vlan_ids[k] & 0x0FFF);
        w.Put16(k + 1 < s.vlan_ids.size() ? 0x8100 : ethertype);
      }
      break;
    case DLT_NULL:
      if (s.host_order_loopback)
        PutLe32(f, v6 ? 30 : 2);
      else
        w.Put32(v6 ? 30 : 2);
      break;
    case DLT_LOOP:
      w.Put32(v6 ? 24 : 2);
      break;
    default:
      break;  // raw IP
  }
  f.insert(f.end(), ip.begin(), ip.end());
  return f;
}

Bytes BuildPcapFile(int link_type, const std::vector<CaptureRecord>& records, uint32_t snaplen, bool nanosecond) {
  Bytes b;
  PutLe32(b, nanosecond ? 0xa1b23c4d : 0xa1b2c3d4);
  PutLe16(b, 2);
  PutLe16(b, 4);
  PutLe32(b, 0);  // thiszone
  PutLe32(b, 0);  // sigfigs
  PutLe32(b, snaplen);
  PutLe32(b, static_cast<uint32_t>(link_type));
  for (const CaptureRecord& r : records) {
    const int64_t unit = nanosecond ? 1 : 1000;
    PutLe32(b, static_cast<uint32_t>(r.time_ns / 1'000'000'000));
    PutLe32(b, static_cast<uint32_t>(r.time_ns % 1'000'000'000 / unit));
    PutLe32(b, static_cast<uint32_t>(r.data.size()));
    PutLe32(b, r.original_length != 0 ? r.original_length : static_cast<uint32_t>(r.data.size()));
    b.insert(b.end(), r.data.begin(), r.data.end());
  }
  return b;
}

Bytes BuildPcapngFile(int link_type, const std::vector<CaptureRecord>& records, uint32_t snaplen) {
  Bytes b;
  const auto block = [&](uint32_t type, const Bytes& body) {
    const uint32_t total = static_cast<uint32_t>(12 + body.size());
    PutLe32(b, type);
    PutLe32(b, total);
    b.insert(b.end(), body.begin(), body.end());
    PutLe32(b, total);
  };
  Bytes shb;
  PutLe32(shb, 0x1A2B3C4D);  // byte-order magic
  PutLe16(shb, 1);
  PutLe16(shb, 0);
  PutLe32(shb, 0xFFFFFFFF);  // section length unknown
  PutLe32(shb, 0xFFFFFFFF);
  block(0x0A0D0D0A, shb);
  Bytes idb;
  PutLe16(idb, static_cast<uint16_t>(link_type));
  PutLe16(idb, 0);
  PutLe32(idb, snaplen);
  PutLe16(idb, 9);  // if_tsresol: 10^-9 s
  PutLe16(idb, 1);
  idb.insert(idb.end(), {9, 0, 0, 0});
  PutLe32(idb, 0);  // opt_endofopt
  block(0x00000001, idb);
  for (const CaptureRecord& r : records) {
    Bytes epb;
    const uint64_t ts = static_cast<uint64_t>(r.time_ns);
    PutLe32(epb, 0);  // interface 0
    PutLe32(epb, static_cast<uint32_t>(ts >> 32));
    PutLe32(epb, static_cast<uint32_t>(ts));
    PutLe32(epb, static_cast<uint32_t>(r.data.size()));
    PutLe32(epb, r.original_length != 0 ? r.original_length : static_cast<uint32_t>(r.data.size()));
    epb.insert(epb.end(), r.data.begin(), r.data.end());
    epb.resize((epb.size() + 3) / 4 * 4, 0);
    block(0x00000006, epb);
  }
  return b;
}

}  // namespace rdmapct::capture
