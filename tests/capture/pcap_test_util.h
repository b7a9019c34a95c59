// Test-side reader of the captures capture/pcap_writer.h writes: opens the
// file with libpcap (pcap_open_offline), decodes Ethernet / IPv4 / TCP by
// hand and verifies the checksums independently of the writer (here by
// summing the header with its checksum field in place: a valid header sums
// to 0xFFFF). Also rebuilds each direction's stream from the segments,
// checking that the sequence numbers are continuous. Shared by the capture
// and conformance tests; header-only so each test binary compiles its copy.
#pragma once

#include <pcap/pcap.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rdmapct::capture::pcap_test {

struct ParsedPacket {
  int64_t ts_us = 0;  // capture time, microseconds since the epoch
  std::size_t caplen = 0, len = 0;
  uint16_t ethertype = 0;
  uint8_t ip_version = 0, ip_ihl = 0, ip_protocol = 0, ttl = 0;
  uint16_t ip_total_length = 0, ip_id = 0, ip_flags_fragment = 0;
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t src_port = 0, dst_port = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t tcp_header_length = 0, flags = 0;
  uint16_t window = 0;
  std::optional<uint16_t> mss;  // MSS option, if present
  std::vector<uint8_t> payload;
  bool ip_checksum_ok = false, tcp_checksum_ok = false;

  bool syn() const { return flags & 0x02; }
  bool fin() const { return flags & 0x01; }
  bool rst() const { return flags & 0x04; }
  bool psh() const { return flags & 0x08; }
  bool ack_flag() const { return flags & 0x10; }
};

struct ParsedCapture {
  std::string error;  // empty when the file was read and every packet decoded
  int linktype = -1;
  int snaplen = 0;
  std::vector<ParsedPacket> packets;
};

inline uint16_t Be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t Be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// Sum of 16-bit big-endian words in 64-bit arithmetic, folded at the end.
inline uint16_t FoldedSum(const std::vector<const std::vector<uint8_t>*>& pieces) {
  uint64_t sum = 0;
  for (const auto* piece : pieces) {
    std::vector<uint8_t> even = *piece;
    if (even.size() % 2) even.push_back(0);
    for (std::size_t i = 0; i < even.size(); i += 2) sum += Be16(&even[i]);
  }
  while (sum > 0xFFFF) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

inline std::string DecodePacket(const uint8_t* d, std::size_t n, ParsedPacket& p) {
  if (n < 14 + 20 + 20) return "frame shorter than Ethernet + IPv4 + TCP";
  p.ethertype = Be16(d + 12);
  const uint8_t* ip = d + 14;
  p.ip_version = ip[0] >> 4;
  p.ip_ihl = ip[0] & 0x0F;
  p.ip_total_length = Be16(ip + 2);
  p.ip_id = Be16(ip + 4);
  p.ip_flags_fragment = Be16(ip + 6);
  p.ttl = ip[8];
  p.ip_protocol = ip[9];
  p.src_ip = Be32(ip + 12);
  p.dst_ip = Be32(ip + 16);
  if (p.ip_ihl != 5 || 14u + p.ip_total_length != n) return "unexpected IPv4 header length or total length";
  const std::vector<uint8_t> ip_header(ip, ip + 20);
  p.ip_checksum_ok = FoldedSum({&ip_header}) == 0xFFFF;
  const uint8_t* tcp = ip + 20;
  const std::size_t tcp_len = p.ip_total_length - 20u;
  p.src_port = Be16(tcp);
  p.dst_port = Be16(tcp + 2);
  p.seq = Be32(tcp + 4);
  p.ack = Be32(tcp + 8);
  p.tcp_header_length = static_cast<uint8_t>((tcp[12] >> 4) * 4);
  p.flags = tcp[13];
  p.window = Be16(tcp + 14);
  if (p.tcp_header_length < 20 || p.tcp_header_length > tcp_len) return "bad TCP data offset";
  for (std::size_t o = 20; o + 1 < p.tcp_header_length;) {
    if (tcp[o] == 0) break;
    if (tcp[o] == 1) {
      ++o;
      continue;
    }
    if (tcp[o] == 2 && tcp[o + 1] == 4) p.mss = Be16(tcp + o + 2);
    o += tcp[o + 1] ? tcp[o + 1] : 1;
  }
  p.payload.assign(tcp + p.tcp_header_length, tcp + tcp_len);
  std::vector<uint8_t> pseudo(ip + 12, ip + 20);
  pseudo.insert(pseudo.end(), {0, 6, static_cast<uint8_t>(tcp_len >> 8), static_cast<uint8_t>(tcp_len & 0xFF)});
  const std::vector<uint8_t> segment(tcp, tcp + tcp_len);
  p.tcp_checksum_ok = FoldedSum({&pseudo, &segment}) == 0xFFFF;
  return {};
}

inline ParsedCapture ReadCapture(const std::filesystem::path& path) {
  ParsedCapture out;
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* pc = pcap_open_offline(path.c_str(), errbuf);
  if (pc == nullptr) {
    out.error = errbuf;
    return out;
  }
  out.linktype = pcap_datalink(pc);
  out.snaplen = pcap_snapshot(pc);
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  int rc;
  while ((rc = pcap_next_ex(pc, &hdr, &data)) == 1) {
    ParsedPacket p;
    p.ts_us = int64_t{hdr->ts.tv_sec} * 1'000'000 + hdr->ts.tv_usec;
    p.caplen = hdr->caplen;
    p.len = hdr->len;
    if (std::string e = DecodePacket(data, hdr->caplen, p); !e.empty() && out.error.empty()) {
      out.error = "packet " + std::to_string(out.packets.size() + 1) + ": " + e;
    }
    out.packets.push_back(std::move(p));
  }
  if (rc == -1 && out.error.empty()) out.error = pcap_geterr(pc);
  pcap_close(pc);
  return out;
}

// One direction of one connection rebuilt from its segments.
struct Stream {
  std::string error;  // first discontinuity, empty when the stream is clean
  uint32_t isn = 0;
  std::vector<uint8_t> bytes;
  bool fin = false, rst = false;
  std::size_t segments = 0;  // packets of this direction, SYN and pure ACKs included
};

// The stream of packets from (src_ip, src_port) to (dst_ip, dst_port): a
// SYN first, then every segment's sequence number exactly where the last
// one ended (SYN and FIN count one), no data after FIN or anything after RST.
// `gaps` lists (stream offset, length) pairs the stream may skip.
inline Stream Reassemble(const std::vector<ParsedPacket>& packets, uint32_t src_ip, uint16_t src_port, uint32_t dst_ip,
                         uint16_t dst_port, const std::vector<std::pair<uint64_t, uint32_t>>& gaps = {}) {
  Stream s;
  bool started = false, ended = false;
  uint32_t next = 0;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    const ParsedPacket& p = packets[i];
    if (p.src_ip != src_ip || p.src_port != src_port || p.dst_ip != dst_ip || p.dst_port != dst_port) continue;
    ++s.segments;
    const auto fail = [&](const std::string& why) {
      if (s.error.empty()) s.error = "packet " + std::to_string(i + 1) + ": " + why;
    };
    if (!started) {
      if (!p.syn()) fail("first packet of the direction is no SYN");
      started = true;
      s.isn = p.seq;
      next = p.seq + 1;
      continue;
    }
    if (ended) fail("packet after RST");
    for (const auto& [at, len] : gaps) {
      if (at == s.bytes.size() && p.seq == next + len) {
        next += len;
        s.bytes.resize(s.bytes.size() + len, 0);
      }
    }
    if (p.seq != next) fail("sequence " + std::to_string(p.seq) + ", expected " + std::to_string(next));
    if (s.fin && !p.payload.empty()) fail("data after FIN");
    s.bytes.insert(s.bytes.end(), p.payload.begin(), p.payload.end());
    next += static_cast<uint32_t>(p.payload.size());
    if (p.fin()) {
      if (s.fin) fail("second FIN");
      s.fin = true;
      next += 1;
    }
    if (p.rst()) {
      s.rst = true;
      ended = true;
    }
  }
  if (!started && s.error.empty()) s.error = "no packet in this direction";
  return s;
}

inline uint32_t Ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return uint32_t{a} << 24 | uint32_t{b} << 16 | uint32_t{c} << 8 | d;
}

// Runs a shell command; its stdout, or nullopt when it could not run.
inline std::optional<std::string> RunCommand(const std::string& cmd, int* status = nullptr) {
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return std::nullopt;
  std::string out;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  if (status) *status = rc;
  return out;
}

inline bool HaveTshark() {
  int status = -1;
  const auto out = RunCommand("tshark --version >/dev/null 2>&1", &status);
  return out && status == 0;
}

}  // namespace rdmapct::capture::pcap_test
