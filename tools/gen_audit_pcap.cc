// gen_audit_pcap: writes pcaps/audit_violations.pcap, a capture of four
// iWARP connections in which the endpoints break RFC rules on purpose, so
// that `rdmapct replay --audit` has something to find (its golden output is
// tests/cli/golden/replay/audit_violations.audit.txt). Every octet comes
// from the project's encoders and the pcap writer (fixed time, fixed ISNs),
// so the file is the same on every machine; CTest audit_pcap_reproducible
// regenerates it and compares.
//
//   gen_audit_pcap <output-file>
//
// The violations (what the RFC text requires, not what a model says):
//   connection 0: the Responder advertises (test-ULP Advertisement) a 4096-
//     octet region; the Initiator writes 16 octets at TO 4090 (out of
//     bounds, RFC 5041 §7.1 G4: Terminate 1/1/0x01 with the segment's DDP
//     header); the Responder answers 0/1/0x00 with M = D = 0.
//   connection 1: a Read Request for 64 octets answered by a Read Response
//     of 48 octets with L = 1 (RFC 5040 §4.4: the response carries exactly
//     the octets requested).
//   connection 2: the Responder sends an FPDU with a wrong CRC (RFC 5044
//     §4.4); the Initiator answers correctly with Terminate 2/0/0x02.
//   connection 3: the Initiator sends Sends with MSN 1 then 3 (RFC 5041
//     §4.3: MSNs increase by one), then a Terminate and, after it, another
//     Send (RFC 5040 §5.4: nothing after a Terminate).
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "capture/pcap_writer.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"
#include "reference/wire/ulp_convention.h"

namespace {

using namespace rdmapct;
using capture::Sender;
using capture::TcpConnection;
using capture::TcpEvent;
using capture::TcpEventKind;
using wire::Bytes;

wire::ByteSpan Text(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

class ConnectionBuilder {
 public:
  explicit ConnectionBuilder(TcpConnection& c) : c_(c) {}
  void Send(Sender who, Bytes octets) {
    at_ += std::chrono::microseconds(100);
    c_.events.push_back(TcpEvent{who, TcpEventKind::kData, at_, std::move(octets), 0});
  }
  void Fpdu(Sender who, const wire::RdmapSegment& s, uint32_t crc_xor = 0) {
    wire::FpduEncodeOptions o;
    o.crc_xor = crc_xor;
    Send(who, wire::EncodeFpdu(wire::EncodeSegment(s), o));
  }
  void Handshake(const Bytes& reply_private_data = {}) {
    wire::MpaStartupFrame req;
    req.crc_required = true;
    Send(Sender::kClient, wire::EncodeMpaStartupFrame(req));
    wire::MpaStartupFrame rep;
    rep.is_reply = true;
    rep.crc_required = true;
    rep.private_data = reply_private_data;
    Send(Sender::kServer, wire::EncodeMpaStartupFrame(rep));
  }
  void Close() {
    at_ += std::chrono::microseconds(100);
    c_.events.push_back(TcpEvent{Sender::kClient, TcpEventKind::kFin, at_, {}, 0});
    at_ += std::chrono::microseconds(100);
    c_.events.push_back(TcpEvent{Sender::kServer, TcpEventKind::kFin, at_, {}, 0});
  }

 private:
  TcpConnection& c_;
  std::chrono::microseconds at_{0};
};

Bytes Advertisement() {
  wire::Advertisement adv;
  adv.ird = 4;
  adv.ord = 4;
  adv.receive_buffer_count = 4;
  adv.receive_buffer_size = 1024;
  adv.connection_serial = 1;
  wire::AdvertisedRegion rw;
  rw.stag = 0x00001A01;
  rw.base_tagged_offset = 0;
  rw.length = 4096;
  rw.access = wire::kAccessRemoteRead | wire::kAccessRemoteWrite;
  adv.regions.push_back(rw);
  Bytes out;
  if (!wire::EncodeAdvertisement(adv, out).ok()) std::fprintf(stderr, "gen_audit_pcap: advertisement not encoded\n");
  return out;
}

void OutOfBoundsWriteWrongTerminate(TcpConnection& c) {
  ConnectionBuilder b(c);
  b.Handshake(Advertisement());
  const wire::RdmapSegment write = wire::MakeRdmaWrite(0x00001A01, 4090, Text("sixteen octets!!"));
  b.Fpdu(Sender::kClient, write);
  // Wrong: RDMAP Invalid STag instead of DDP Base or bounds violation, and
  // no DDP Segment Length / Terminated DDP Header.
  b.Fpdu(Sender::kServer,
         wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::term::kRdmapInvalidStag, nullptr, 0, nullptr)));
  b.Close();
}

void ShortReadResponse(TcpConnection& c) {
  ConnectionBuilder b(c);
  b.Handshake();
  const wire::ReadRequestHeader rr{.sink_stag = 0x0000AA01,
                                   .sink_tagged_offset = 0x2000,
                                   .read_message_size = 64,
                                   .source_stag = 0x0000BB01,
                                   .source_tagged_offset = 0x3000};
  b.Fpdu(Sender::kClient, wire::MakeReadRequest(1, rr));
  const std::string data(48, 'r');  // RdmapSegment only points at its payload
  b.Fpdu(Sender::kServer, wire::MakeReadResponse(0x0000AA01, 0x2000, Text(data)));  // L = 1 after 48 of 64 octets
  b.Close();
}

void BadCrcAnsweredCorrectly(TcpConnection& c) {
  ConnectionBuilder b(c);
  b.Handshake();
  b.Fpdu(Sender::kClient, wire::MakeSend(wire::Opcode::kSend, 1, Text("hello")));
  b.Fpdu(Sender::kServer, wire::MakeSend(wire::Opcode::kSend, 1, Text("reply")), 0xDEADBEEF);
  b.Fpdu(Sender::kClient,
         wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::term::kMpaCrcError, nullptr, 0, nullptr)));
  b.Close();
}

void MsnGapAndSendAfterTerminate(TcpConnection& c) {
  ConnectionBuilder b(c);
  b.Handshake();
  b.Fpdu(Sender::kClient, wire::MakeSend(wire::Opcode::kSend, 1, Text("first")));
  b.Fpdu(Sender::kClient, wire::MakeSend(wire::Opcode::kSend, 3, Text("third")));
  b.Fpdu(Sender::kClient,
         wire::MakeTerminate(1, wire::MakeTerminateHeader(wire::term::kRdmapLocalCatastrophic, nullptr, 0, nullptr)));
  b.Fpdu(Sender::kClient, wire::MakeSend(wire::Opcode::kSend, 4, Text("after")));
  b.Close();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gen_audit_pcap <output-file>\n");
    return 2;
  }
  capture::TcpCapture cap;
  cap.start = std::chrono::system_clock::time_point(std::chrono::seconds(1767225600));  // 2026-01-01 00:00:00 UTC
  cap.connections.resize(4);
  OutOfBoundsWriteWrongTerminate(cap.connections[0]);
  ShortReadResponse(cap.connections[1]);
  BadCrcAnsweredCorrectly(cap.connections[2]);
  MsnGapAndSendAfterTerminate(cap.connections[3]);
  std::string error;
  if (!capture::WriteTcpCapture(argv[1], cap, {}, error)) {
    std::fprintf(stderr, "gen_audit_pcap: %s\n", error.c_str());
    return 2;
  }
  return 0;
}
