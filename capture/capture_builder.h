// Hand-built captures: one TCP segment as a frame of any link type the
// reader understands (Ethernet with VLAN tags, Linux cooked v1/v2, raw IP,
// BSD loopback; IPv4 with options, IPv6 with extension headers), and pcap
// or pcapng files of such frames, built in memory with explicit byte
// orders, so tests, fuzz seeds and sample captures are the same octets on
// every machine. capture/pcap_writer.h writes whole TCP conversations
// (handshake, ACKs) through libpcap; this builds the unusual cases the
// reader must also handle.
#pragma once

#include <cstdint>
#include <vector>

#include "capture/pcap_reader.h"
#include "reference/wire/bytes.h"

namespace rdmapct::capture {

struct FrameSpec {
  Endpoint source, destination;  // address.version 4 or 6 decides the IP version
  uint32_t seq = 0, ack = 0;
  uint8_t flags = kTcpAck;
  uint16_t window = 65535;
  wire::Bytes payload;
  std::vector<uint16_t> vlan_ids;   // Ethernet, SLL, SLL2: 802.1Q tags, outermost first
  bool ip_options = false;          // IPv4: 4 octets of options (NOP x 3, EOL); IPv6: Hop-by-Hop
                                    // and Destination Options headers before TCP
  bool host_order_loopback = true;  // DLT_NULL: the family in little-endian (the capturing host's order)
};

// Link header + IP + TCP (IPv4 header and TCP checksums correct). Link types:
// DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2 (276), DLT_RAW, DLT_NULL,
// DLT_LOOP; any other gives only the IP packet.
wire::Bytes BuildTcpFrame(int link_type, const FrameSpec& spec);

struct CaptureRecord {
  int64_t time_ns = 0;
  wire::Bytes data;              // as captured
  uint32_t original_length = 0;  // on the wire; 0: data.size()
};

// A classic pcap file (magic 0xa1b2c3d4 or, nanosecond, 0xa1b23c4d; little-endian).
// `link_type` is written as given (a LINKTYPE_ value; for the types above it equals the DLT_).
wire::Bytes BuildPcapFile(int link_type, const std::vector<CaptureRecord>& records, uint32_t snaplen = 65535,
                          bool nanosecond = false);

// A pcapng file: Section Header Block, one Interface Description Block
// (if_tsresol 9: nanoseconds), one Enhanced Packet Block per record.
wire::Bytes BuildPcapngFile(int link_type, const std::vector<CaptureRecord>& records, uint32_t snaplen = 65535);

}  // namespace rdmapct::capture
