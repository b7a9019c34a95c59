// Synthetic TCP captures: turns TCP connections given as byte streams
// (who sent which octets when, and where a side closed or reset) into
// Ethernet + IPv4 + TCP packets and writes them with libpcap, so Wireshark
// and tshark can dissect what was exchanged (MPA, DDP, RDMAP) even when it
// never crossed a network (the in-process reference target, a plugin).
//
// What the packets look like:
//   - every connection opens with SYN / SYN-ACK / ACK (MSS option on the
//     SYN and SYN-ACK) at the time of its first event;
//   - sequence and acknowledgement numbers are consistent in both
//     directions from the configured ISNs, modulo 2^32 (an ISN near 2^32
//     wraps during the connection);
//   - a data event is cut into segments of at most `mss` octets, PSH on the
//     last; every segment acknowledges everything the other side sent;
//   - the receiver answers with a pure ACK after each data or FIN event
//     unless the other side's next event (data, FIN, RST) carries that
//     acknowledgement, and before a sender would exceed the receive window;
//   - a FIN event sends FIN|ACK (one sequence number), an RST event RST|ACK
//     and ends the connection;
//   - a gap event advances the sender's sequence numbers without a packet
//     (octets that were sent but not recorded): Wireshark reports "previous
//     segment not captured" there, which is the truth;
//   - IPv4 header and TCP checksums are correct.
// Addresses and ports are only written into the file, never used.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "reference/wire/bytes.h"

namespace rdmapct::capture {

// The side that sends a segment: the client opened the connection (the
// suite, MPA Initiator), the server accepted it (the target, MPA Responder).
enum class Sender : uint8_t { kClient, kServer };

enum class TcpEventKind : uint8_t {
  kData,  // `payload` octets, the next ones of the sender's stream
  kGap,   // `gap` octets of the sender's stream that were not recorded
  kFin,   // the sender closed its direction
  kRst,   // the sender reset the connection; no later event is allowed
};

struct TcpEvent {
  Sender sender = Sender::kClient;
  TcpEventKind kind = TcpEventKind::kData;
  std::chrono::microseconds at{0};  // since TcpCapture::start; clamped to never go back
  wire::Bytes payload;              // kData only
  uint32_t gap = 0;                 // kGap only
};

struct TcpConnection {
  uint16_t client_port = 0;  // 0: PcapWriterOptions::first_client_port + index in the capture
  uint32_t client_isn = 0x2c6d4000;
  uint32_t server_isn = 0x7e1f8000;
  // The client sits at server_address and the server at client_address: a
  // connection the target opened to the listening suite keeps the suite at
  // client_address and the target at server_address.
  bool hosts_swapped = false;
  std::vector<TcpEvent> events;  // in the order they happened
};

struct TcpCapture {
  std::chrono::system_clock::time_point start{};  // packet time = start + event.at
  std::vector<TcpConnection> connections;
};

struct PcapWriterOptions {
  std::array<uint8_t, 4> client_address{10, 0, 0, 1};
  std::array<uint8_t, 4> server_address{10, 0, 0, 2};
  // No port is registered for iWARP and no Wireshark dissector claims this
  // one, so Wireshark's MPA heuristic recognises the streams.
  uint16_t server_port = 5040;
  uint16_t first_client_port = 49152;  // first of the IANA dynamic range
  uint16_t mss = 1460;                 // 1 .. kMaxMss
  uint16_t window = 65535;             // advertised by both sides (no scaling)
};

// The largest MSS whose packets fit the 65535-octet snapshot length.
inline constexpr uint16_t kMaxMss = 65535 - 14 - 20 - 20;

// One Ethernet frame (no FCS) and its capture time.
struct Packet {
  std::chrono::system_clock::time_point time{};
  wire::Bytes frame;
};

// Every packet of every connection, ordered by time (ties keep connection
// and generation order). False with a one-line `error` naming the
// connection and event when the events are not a possible TCP exchange
// (data or FIN after that side's FIN, anything after an RST), when two
// connections share a client port, or when the options are out of range.
bool BuildPackets(const TcpCapture& capture, const PcapWriterOptions& options, std::vector<Packet>& packets,
                  std::string& error);

// Writes `packets` as a pcap file (link type Ethernet, snapshot length
// 65535, microsecond timestamps) through libpcap. False with a one-line
// `error` ("<path>: <reason>") when the file cannot be created or written.
bool WritePcapFile(const std::filesystem::path& path, const std::vector<Packet>& packets, std::string& error);

// BuildPackets then WritePcapFile.
bool WriteTcpCapture(const std::filesystem::path& path, const TcpCapture& capture, const PcapWriterOptions& options,
                     std::string& error);

}  // namespace rdmapct::capture
