// Shared by the capture reader, reassembly and decode tests: endpoints,
// temporary capture files, and the segments a capture reads back as.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "capture/capture_builder.h"
#include "capture/pcap_reader.h"
#include "capture/tcp_reassembly.h"

namespace rdmapct::capture::test {

inline IpAddress V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) { return IpAddress{4, {a, b, c, d}}; }

// 2001:db8::<last>
inline IpAddress V6(uint8_t last) {
  IpAddress a{6, {}};
  a.octets[0] = 0x20;
  a.octets[1] = 0x01;
  a.octets[2] = 0x0d;
  a.octets[3] = 0xb8;
  a.octets[15] = last;
  return a;
}

inline Endpoint Ep(IpAddress a, uint16_t port) { return Endpoint{a, port}; }

// A fresh file path in the test's temporary directory.
inline std::filesystem::path TempPath(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "rdmapct_capture_test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path p = dir / name;
  std::filesystem::remove(p);
  return p;
}

inline std::filesystem::path WriteTemp(const std::string& name, const wire::Bytes& octets) {
  const std::filesystem::path p = TempPath(name);
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(octets.data()), static_cast<std::streamsize>(octets.size()));
  return p;
}

// A frame of one TCP segment (no VLAN tags, no IP options).
inline FrameSpec Spec(Endpoint from, Endpoint to, uint32_t seq, uint32_t ack, uint8_t flags, wire::Bytes payload,
                      uint16_t window = 100) {
  FrameSpec s;
  s.source = from;
  s.destination = to;
  s.seq = seq;
  s.ack = ack;
  s.flags = flags;
  s.window = window;
  s.payload = std::move(payload);
  return s;
}

// A segment copied out of the reader's callback.
struct Seg {
  uint64_t frame = 0;
  int64_t time_ns = 0;
  Endpoint source, destination;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0;
  uint16_t window = 0;
  wire::Bytes payload;
  uint32_t payload_missing = 0;
};

inline std::vector<Seg> ReadSegments(const std::filesystem::path& p, CaptureReadSummary& summary) {
  std::vector<Seg> out;
  ReadCaptureFile(
      p.string(),
      [&](const TcpSegment& s) {
        out.push_back(Seg{s.frame, s.time_ns, s.source, s.destination, s.seq, s.ack, s.flags, s.window,
                          wire::Bytes(s.payload.begin(), s.payload.end()), s.payload_missing});
      },
      summary);
  return out;
}

// A TcpSegment for the reassembler (payload points into `payload`).
inline TcpSegment Segment(uint64_t frame, Endpoint from, Endpoint to, uint32_t seq, uint8_t flags,
                          const wire::Bytes& payload, uint32_t ack = 0) {
  TcpSegment s;
  s.frame = frame;
  s.source = from;
  s.destination = to;
  s.seq = seq;
  s.ack = ack;
  s.flags = flags;
  s.payload = payload;
  return s;
}

inline wire::Bytes Text(const std::string& s) { return wire::Bytes(s.begin(), s.end()); }

// Every piece of a direction, concatenated.
inline wire::Bytes Joined(const DirectionStream& d) {
  wire::Bytes out;
  for (const StreamPiece& p : d.pieces) out.insert(out.end(), p.octets.begin(), p.octets.end());
  return out;
}

}  // namespace rdmapct::capture::test
