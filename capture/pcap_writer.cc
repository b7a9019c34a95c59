#include "capture/pcap_writer.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>

namespace rdmapct::capture {
namespace {

constexpr std::size_t kEthernetHeaderSize = 14;
constexpr std::size_t kIpv4HeaderSize = 20;
constexpr std::size_t kTcpHeaderSize = 20;
constexpr std::size_t kMssOptionSize = 4;
constexpr int kSnapLength = 65535;

constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;

// Locally administered unicast MACs (bit 1 of the first octet set): they
// belong to no vendor, like the addresses they stand for.
constexpr std::array<uint8_t, 6> kClientMac{0x02, 0x00, 0x0a, 0x00, 0x00, 0x01};
constexpr std::array<uint8_t, 6> kServerMac{0x02, 0x00, 0x0a, 0x00, 0x00, 0x02};

// RFC 1071 one's-complement sum, folded but not complemented, so sums over
// several pieces (pseudo-header, header, payload) can be chained.
uint32_t SumWords(wire::ByteSpan data, uint32_t sum) {
  std::size_t i = 0;
  for (; i + 1 < data.size(); i += 2) sum += wire::LoadBe16(&data[i]);
  if (i < data.size()) sum += uint32_t{data[i]} << 8;  // odd length: pad with a zero octet
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum;
}

uint16_t Complement(uint32_t folded_sum) { return static_cast<uint16_t>(~folded_sum & 0xFFFF); }

// One direction of a connection as its sender sees it.
struct HalfState {
  uint32_t next_seq = 0;       // sequence number of the next octet (or FIN)
  uint32_t acked_by_peer = 0;  // highest acknowledgement the peer sent
  uint32_t last_ack_sent = 0;  // acknowledgement this side last sent
  uint16_t ip_id = 0;
  bool fin_sent = false;
};

struct Segment {
  uint8_t flags = 0;
  wire::ByteSpan payload;
  bool mss_option = false;
};

class ConnectionBuilder {
 public:
  ConnectionBuilder(const TcpConnection& conn, uint16_t client_port, std::size_t index,
                    std::chrono::system_clock::time_point start, const PcapWriterOptions& options,
                    std::vector<Packet>& out)
      : conn_(conn), client_port_(client_port), index_(index), start_(start), options_(options), out_(out) {}

  bool Build(std::string& error);

 private:
  HalfState& Half(Sender s) { return s == Sender::kClient ? client_ : server_; }
  const HalfState& Half(Sender s) const { return s == Sender::kClient ? client_ : server_; }
  static Sender Peer(Sender s) { return s == Sender::kClient ? Sender::kServer : Sender::kClient; }

  void Handshake();
  bool Apply(std::size_t i, std::string& error);
  void SendData(Sender from, wire::ByteSpan payload);
  void PureAck(Sender from);
  bool PeerPiggybacks(std::size_t i) const;
  void Emit(Sender from, const Segment& seg);
  wire::Bytes Frame(Sender from, const Segment& seg, uint32_t seq, uint32_t ack) const;

  const TcpConnection& conn_;
  const uint16_t client_port_;
  const std::size_t index_;
  const std::chrono::system_clock::time_point start_;
  const PcapWriterOptions& options_;
  std::vector<Packet>& out_;
  HalfState client_, server_;
  std::chrono::microseconds now_{0};
  bool reset_ = false;
};

bool ConnectionBuilder::Build(std::string& error) {
  if (conn_.events.empty()) return true;  // never opened: nothing to show
  now_ = std::max(conn_.events.front().at, std::chrono::microseconds{0});
  Handshake();
  for (std::size_t i = 0; i < conn_.events.size(); ++i) {
    if (!Apply(i, error)) return false;
  }
  return true;
}

void ConnectionBuilder::Handshake() {
  client_.next_seq = conn_.client_isn;
  server_.next_seq = conn_.server_isn;
  Emit(Sender::kClient, Segment{kSyn, {}, true});
  client_.next_seq += 1;  // the SYN takes one sequence number
  Emit(Sender::kServer, Segment{kSyn | kAck, {}, true});
  server_.next_seq += 1;
  Emit(Sender::kClient, Segment{kAck, {}, false});
}

bool ConnectionBuilder::Apply(std::size_t i, std::string& error) {
  const TcpEvent& ev = conn_.events[i];
  const auto fail = [&](const char* why) {
    error = "connection " + std::to_string(index_) + " event " + std::to_string(i) + ": " + why;
    return false;
  };
  if (reset_) return fail("event after the connection was reset");
  now_ = std::max(now_, ev.at);
  HalfState& half = Half(ev.sender);
  switch (ev.kind) {
    case TcpEventKind::kData:
      if (half.fin_sent) return fail("data after that side's FIN");
      if (ev.payload.empty()) return true;
      SendData(ev.sender, ev.payload);
      break;
    case TcpEventKind::kGap:
      if (half.fin_sent) return fail("gap after that side's FIN");
      half.next_seq += ev.gap;
      return true;  // no packet; the next segment or ACK shows the jump
    case TcpEventKind::kFin:
      if (half.fin_sent) return fail("second FIN from the same side");
      Emit(ev.sender, Segment{kFin | kAck, {}, false});
      half.next_seq += 1;  // the FIN takes one sequence number
      half.fin_sent = true;
      break;
    case TcpEventKind::kRst:
      Emit(ev.sender, Segment{kRst | kAck, {}, false});
      reset_ = true;
      return true;
  }
  if (!PeerPiggybacks(i)) PureAck(Peer(ev.sender));
  return true;
}

// The peer's next event carries the acknowledgement itself.
bool ConnectionBuilder::PeerPiggybacks(std::size_t i) const {
  if (i + 1 >= conn_.events.size()) return false;
  const TcpEvent& me = conn_.events[i];
  const TcpEvent& next = conn_.events[i + 1];
  if (next.sender == me.sender) return false;
  switch (next.kind) {
    case TcpEventKind::kData:
      return !next.payload.empty() && !Half(next.sender).fin_sent;
    case TcpEventKind::kFin:
    case TcpEventKind::kRst:
      return true;
    case TcpEventKind::kGap:
      return false;
  }
  return false;
}

void ConnectionBuilder::SendData(Sender from, wire::ByteSpan payload) {
  HalfState& half = Half(from);
  while (!payload.empty()) {
    const std::size_t n = std::min<std::size_t>(payload.size(), options_.mss);
    // The receiver acknowledges before the sender would overrun its window.
    if (static_cast<uint32_t>(half.next_seq - half.acked_by_peer) + n > options_.window) PureAck(Peer(from));
    const bool last = n == payload.size();
    Emit(from, Segment{static_cast<uint8_t>(kAck | (last ? kPsh : 0)), payload.first(n), false});
    half.next_seq += static_cast<uint32_t>(n);
    payload = payload.subspan(n);
  }
}

void ConnectionBuilder::PureAck(Sender from) {
  if (Half(from).last_ack_sent == Half(Peer(from)).next_seq) return;  // nothing new to acknowledge
  Emit(from, Segment{kAck, {}, false});
}

void ConnectionBuilder::Emit(Sender from, const Segment& seg) {
  HalfState& half = Half(from);
  HalfState& peer = Half(Peer(from));
  const bool has_ack = (seg.flags & kAck) != 0;
  const uint32_t ack = has_ack ? peer.next_seq : 0;
  out_.push_back(Packet{start_ + now_, Frame(from, seg, half.next_seq, ack)});
  ++half.ip_id;
  if (has_ack) {
    half.last_ack_sent = ack;
    peer.acked_by_peer = ack;
  }
}

wire::Bytes ConnectionBuilder::Frame(Sender from, const Segment& seg, uint32_t seq, uint32_t ack) const {
  const bool client = from == Sender::kClient;
  const std::size_t tcp_size = kTcpHeaderSize + (seg.mss_option ? kMssOptionSize : 0) + seg.payload.size();
  wire::Bytes f;
  f.reserve(kEthernetHeaderSize + kIpv4HeaderSize + tcp_size);
  wire::ByteWriter w(f);
  const bool at_client_address = client != conn_.hosts_swapped;
  w.PutBytes(at_client_address ? kServerMac : kClientMac);  // destination
  w.PutBytes(at_client_address ? kClientMac : kServerMac);  // source
  w.Put16(0x0800);                                          // EtherType IPv4

  const std::array<uint8_t, 4>& src = at_client_address ? options_.client_address : options_.server_address;
  const std::array<uint8_t, 4>& dst = at_client_address ? options_.server_address : options_.client_address;
  const std::size_t ip_at = f.size();
  w.Put8(0x45);  // version 4, IHL 5 (no options)
  w.Put8(0);     // DSCP / ECN
  w.Put16(static_cast<uint16_t>(kIpv4HeaderSize + tcp_size));
  w.Put16(Half(from).ip_id);
  w.Put16(0x4000);  // DF, fragment offset 0
  w.Put8(64);       // TTL
  w.Put8(6);        // protocol TCP
  w.Put16(0);       // header checksum, filled below
  w.PutBytes(src);
  w.PutBytes(dst);
  wire::StoreBe16(&f[ip_at + 10], Complement(SumWords(wire::ByteSpan(f).subspan(ip_at, kIpv4HeaderSize), 0)));

  const std::size_t tcp_at = f.size();
  w.Put16(client ? client_port_ : options_.server_port);
  w.Put16(client ? options_.server_port : client_port_);
  w.Put32(seq);
  w.Put32(ack);
  w.Put8(static_cast<uint8_t>(((kTcpHeaderSize + (seg.mss_option ? kMssOptionSize : 0)) / 4) << 4));
  w.Put8(seg.flags);
  w.Put16(options_.window);
  w.Put16(0);  // checksum, filled below
  w.Put16(0);  // urgent pointer
  if (seg.mss_option) {
    w.Put8(2);  // kind: Maximum Segment Size
    w.Put8(4);
    w.Put16(options_.mss);
  }
  w.PutBytes(seg.payload);

  // Pseudo-header: source, destination, zero, protocol, TCP length.
  std::array<uint8_t, 12> pseudo{};
  std::copy(src.begin(), src.end(), pseudo.begin());
  std::copy(dst.begin(), dst.end(), pseudo.begin() + 4);
  pseudo[9] = 6;
  wire::StoreBe16(&pseudo[10], static_cast<uint16_t>(tcp_size));
  const uint32_t sum = SumWords(wire::ByteSpan(f).subspan(tcp_at), SumWords(pseudo, 0));
  wire::StoreBe16(&f[tcp_at + 16], Complement(sum));
  return f;
}

std::string CheckOptions(const PcapWriterOptions& o) {
  if (o.mss == 0 || o.mss > kMaxMss) return "MSS " + std::to_string(o.mss) + " outside 1.." + std::to_string(kMaxMss);
  if (o.window < o.mss) return "window " + std::to_string(o.window) + " smaller than the MSS";
  return {};
}

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};
struct DumperCloser {
  void operator()(pcap_dumper_t* d) const { pcap_dump_close(d); }
};

}  // namespace

bool BuildPackets(const TcpCapture& capture, const PcapWriterOptions& options, std::vector<Packet>& packets,
                  std::string& error) {
  if (std::string e = CheckOptions(options); !e.empty()) {
    error = e;
    return false;
  }
  std::vector<uint16_t> ports;
  std::vector<Packet> out;
  for (std::size_t i = 0; i < capture.connections.size(); ++i) {
    const TcpConnection& conn = capture.connections[i];
    const uint16_t port =
        conn.client_port != 0 ? conn.client_port : static_cast<uint16_t>(options.first_client_port + i);
    if (std::find(ports.begin(), ports.end(), port) != ports.end()) {
      error = "connection " + std::to_string(i) + ": client port " + std::to_string(port) + " used twice";
      return false;
    }
    ports.push_back(port);
    if (!ConnectionBuilder(conn, port, i, capture.start, options, out).Build(error)) return false;
  }
  // Connections may overlap in time; a capture lists packets as they occur.
  std::stable_sort(out.begin(), out.end(), [](const Packet& a, const Packet& b) { return a.time < b.time; });
  packets = std::move(out);
  return true;
}

bool WritePcapFile(const std::filesystem::path& path, const std::vector<Packet>& packets, std::string& error) {
  std::unique_ptr<pcap_t, PcapCloser> dead(pcap_open_dead(DLT_EN10MB, kSnapLength));
  if (!dead) {
    error = path.string() + ": libpcap could not open a capture handle";
    return false;
  }
  std::unique_ptr<pcap_dumper_t, DumperCloser> dumper(pcap_dump_open(dead.get(), path.c_str()));
  if (!dumper) {
    // pcap_geterr names the path and the system error ("...: Permission denied").
    error = std::string(pcap_geterr(dead.get()));
    if (error.find(path.string()) == std::string::npos) error = path.string() + ": " + error;
    return false;
  }
  errno = 0;  // so a failed write below names its own cause
  for (const Packet& p : packets) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(p.time.time_since_epoch()).count();
    pcap_pkthdr hdr{};
    hdr.ts.tv_sec = static_cast<time_t>(us / 1'000'000);
    hdr.ts.tv_usec = static_cast<suseconds_t>(us % 1'000'000);
    hdr.caplen = static_cast<bpf_u_int32>(p.frame.size());
    hdr.len = hdr.caplen;
    pcap_dump(reinterpret_cast<u_char*>(dumper.get()), &hdr, p.frame.data());
  }
  // pcap_dump reports nothing; a full disk shows in the flush or the stream.
  const bool failed = pcap_dump_flush(dumper.get()) != 0 || std::ferror(pcap_dump_file(dumper.get())) != 0;
  const int saved = errno;
  dumper.reset();
  if (failed) {
    error = path.string() + ": write failed" + (saved != 0 ? std::string(": ") + std::strerror(saved) : "");
    return false;
  }
  return true;
}

bool WriteTcpCapture(const std::filesystem::path& path, const TcpCapture& capture, const PcapWriterOptions& options,
                     std::string& error) {
  std::vector<Packet> packets;
  return BuildPackets(capture, options, packets, error) && WritePcapFile(path, packets, error);
}

}  // namespace rdmapct::capture
