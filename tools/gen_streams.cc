// gen_streams: writes the example streams of examples/streams/ with the
// project's own encoders, so that they are byte-exact and reproducible.
//
//   gen_streams <output-dir>
//
// A CTest test (tools/CMakeLists.txt) regenerates them into a temporary
// directory and compares them byte for byte with the committed files.
// Field values are chosen to be easy to spot in a hexdump: STags 0x0000xx01,
// Tagged Offsets 0x...1000 apart, ASCII payloads.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/ddp_segmentation.h"
#include "reference/wire/hex.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/profile.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"
#include "reference/wire/ulp_convention.h"

namespace {
using namespace rdmapct::wire;

ByteSpan Text(std::string_view s) { return ByteSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

// One labelled DDP segment (the ULPDU of one FPDU).
struct Segment {
  std::string label;
  Bytes octets;
};

const ReadRequestHeader kReadRequest{.sink_stag = 0x0000AA01,
                                     .sink_tagged_offset = 0x2000,
                                     .read_message_size = 4096,
                                     .source_stag = 0x0000BB01,
                                     .source_tagged_offset = 0x3000};

Segment Seg(std::string label, const RdmapSegment& s) { return {std::move(label), EncodeSegment(s)}; }

// The RDMA Read Request of every example, and the Terminate that rejects it
// (Invalid STag on the Data Source STag) echoing its DDP and RDMA headers.
RdmapSegment ReadRequestSegment() { return MakeReadRequest(1, kReadRequest); }

RdmapSegment TerminateSegment() {
  const RdmapSegment rr = ReadRequestSegment();
  const uint16_t rr_length = static_cast<uint16_t>(EncodeSegment(rr).size());
  const TerminateHeader h = MakeTerminateHeader(term::kRdmapInvalidStag, &rr.ddp, rr_length, &kReadRequest);
  return MakeTerminate(1, h);
}

void AddRfc5040(std::vector<Segment>& out) {
  static constexpr std::string_view kWrite = "RDMA Write data.";
  static constexpr std::string_view kResponse = "Read Response...";
  out.push_back(Seg("RDMA Write", MakeRdmaWrite(0x0000AB01, 0x1000, Text(kWrite))));
  out.push_back(Seg("RDMA Read Request", ReadRequestSegment()));
  out.push_back(Seg("RDMA Read Response", MakeReadResponse(0x0000AA01, 0x2000, Text(kResponse))));
  out.push_back(Seg("Send", MakeSend(Opcode::kSend, 1, Text("Send #1"))));
  out.push_back(Seg("Send with Invalidate", MakeSend(Opcode::kSendWithInvalidate, 2, Text("Send #2"), 0x0000CC01)));
  out.push_back(Seg("Send with Solicited Event", MakeSend(Opcode::kSendWithSe, 3, Text("Send #3"))));
  out.push_back(Seg("Send with Solicited Event and Invalidate",
                    MakeSend(Opcode::kSendWithSeAndInvalidate, 4, Text("Send #4"), 0x0000CC02)));
}

void AddRfc7306(std::vector<Segment>& out) {
  out.push_back(Seg("Immediate Data", MakeImmediateData(5, 0x0123456789ABCDEF)));
  out.push_back(Seg("Immediate Data with Solicited Event", MakeImmediateData(6, 0xFEDCBA9876543210, true)));
  AtomicRequestHeader fetch_add;
  fetch_add.atomic_opcode = static_cast<uint8_t>(AtomicOpcode::kFetchAdd);
  fetch_add.request_identifier = 0x00000001;
  fetch_add.remote_stag = 0x0000DD01;
  fetch_add.remote_tagged_offset = 0x4000;
  fetch_add.add_or_swap_data = 1;
  fetch_add.compare_data = 0;
  out.push_back(Seg("Atomic Request", MakeAtomicRequest(2, fetch_add)));
  out.push_back(Seg("Atomic Response", MakeAtomicResponse(1, {0x00000001, 0x0000000000000029})));
}

void AddCommit(std::vector<Segment>& out) {
  static constexpr uint8_t kHash[] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  out.push_back(Seg("RDMA Flush Request", MakeFlushRequest(3, {0x0000EE01, 4096, 0x5000, kFlushToPersistence})));
  out.push_back(Seg("RDMA Flush Response", MakeFlushResponse(2)));
  out.push_back(Seg("RDMA Verify Request", MakeVerifyRequest(4, {0x0000EE02, 4096, 0x6000, ByteSpan(kHash)})));
  out.push_back(Seg("RDMA Verify Response", MakeVerifyResponse(3, ByteSpan(kHash))));
  out.push_back(Seg("Atomic Write Request", MakeAtomicWriteRequest(5, {0x0000EE03, 8, 0x7000, 0x1122334455667788})));
  out.push_back(Seg("Atomic Write Response", MakeAtomicWriteResponse(4)));
}

std::vector<Segment> AllOpcodes(Profile p) {
  std::vector<Segment> segs;
  AddRfc5040(segs);
  if (ProfileIncludes(p, Profile::kRfc7306)) AddRfc7306(segs);
  if (ProfileIncludes(p, Profile::kCommit)) AddCommit(segs);
  // Last, as on a real stream: nothing follows a Terminate.
  segs.push_back(Seg("Terminate", TerminateSegment()));
  return segs;
}

// A Send of 1000 octets and an RDMA Write of 600 octets, segmented at MULPDU 256.
std::vector<Segment> MultiSegment() {
  static const Bytes kSendBody = [] {
    Bytes b(1000);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>('A' + i % 26);
    return b;
  }();
  static const Bytes kWriteBody = [] {
    Bytes b(600);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>('a' + i % 26);
    return b;
  }();
  std::vector<Segment> segs;
  auto add = [&](const char* what, const DdpSegmentHeader& first, ByteSpan body) {
    auto planned = SegmentDdpMessage(first, body, 256);
    const std::vector<Bytes> enc = EncodeDdpSegments(*planned);
    for (std::size_t i = 0; i < enc.size(); ++i) {
      segs.push_back(
          {std::string(what) + " segment " + std::to_string(i + 1) + " of " + std::to_string(enc.size()), enc[i]});
    }
  };
  add("Send", MakeSend(Opcode::kSend, 1, {}).ddp, kSendBody);
  add("RDMA Write", MakeRdmaWrite(0x0000AB01, 0x10000, {}).ddp, kWriteBody);
  return segs;
}

MpaStartupFrame RequestFrame(bool markers) {
  MpaStartupFrame f;
  f.is_reply = false;
  f.marker_required = markers;
  f.crc_required = true;
  f.enhanced = true;
  f.revision = 2;
  f.enhanced_data =
      EnhancedIrdOrd{.peer_to_peer = true, .send_rtr = false, .ird = 8, .write_rtr = true, .read_rtr = false, .ord = 8};
  return f;
}

// The responder's Reply: accepts, and advertises its resources (test-ULP convention).
MpaStartupFrame ReplyFrame() {
  MpaStartupFrame f = RequestFrame(false);
  f.is_reply = true;
  Advertisement a;
  a.flags = kFlagRfc7306 | kFlagCommit;
  a.ird = 8;
  a.ord = 8;
  a.receive_buffer_count = 16;
  a.receive_buffer_size = 4096;
  a.connection_serial = 1;
  a.regions = {{0x0000BB01, 0x3000, 8192, kAccessRemoteRead | kAccessRemoteWrite, 0, 1, 0},
               {0x0000BB02, 0x0, 4096, kAccessRemoteRead, 0, 2, 0},
               {0x0000BB03, 0x8000, 64, kAccessRemoteRead | kAccessRemoteAtomic, 0, 3, 0}};
  (void)EncodeAdvertisement(a, f.private_data);
  return f;
}

struct Example {
  std::string name;
  std::string summary;       // the comment header's description
  std::string decode_flags;  // how to decode it
  std::vector<std::string> labels;
  std::vector<Bytes> chunks;  // one per frame, as on the wire
  bool one_per_line = false;  // bare DDP segments: one segment per line
};

Example MpaExample(std::string name, std::string summary, const MpaStartupFrame& frame,
                   const std::vector<Segment>& segs, bool markers, Profile p) {
  Example e{std::move(name), std::move(summary), "", {}, {}, false};
  e.decode_flags = "--mpa --profile " + std::string(ProfileName(p)) + " --crc on --markers " + (markers ? "on" : "off");
  e.labels.push_back(frame.is_reply ? "MPA Reply Frame" : "MPA Request Frame");
  e.chunks.push_back(EncodeMpaStartupFrame(frame));
  // REQ R5044-4.3-10: the first Marker precedes the first FPDU (SeqStart).
  MarkerInserter markers_out(0);
  for (const Segment& s : segs) {
    Bytes fpdu;
    if (markers)
      markers_out.AppendUlpdu(fpdu, s.octets);
    else
      AppendFpdu(fpdu, s.octets);
    e.labels.push_back(s.label);
    e.chunks.push_back(std::move(fpdu));
  }
  return e;
}

std::vector<Example> Examples() {
  std::vector<Example> out;
  for (Profile p : {Profile::kRfc5040, Profile::kRfc7306, Profile::kCommit}) {
    const std::string pn(ProfileName(p));
    for (bool markers : {false, true}) {
      out.push_back(MpaExample("all-opcodes-" + pn + (markers ? "-markers" : ""),
                               "MPA Initiator to Responder: MPA Request Frame, then one FPDU per opcode of "
                               "profile " +
                                   pn + ", CRC on, Markers " + (markers ? "on" : "off") + ".",
                               RequestFrame(markers), AllOpcodes(p), markers, p));
    }
  }
  out.push_back(MpaExample("multi-segment",
                           "MPA Initiator to Responder: MPA Request Frame, then a 1000-octet Send "
                           "and a 600-octet RDMA Write, each segmented at MULPDU 256, CRC on, Markers on.",
                           RequestFrame(true), MultiSegment(), true, Profile::kCommit));
  std::vector<Segment> reply_segs;
  reply_segs.push_back(Seg("RDMA Read Response", MakeReadResponse(0x0000AA01, 0x2000, Text("Read Response..."))));
  reply_segs.push_back(Seg("Terminate", TerminateSegment()));
  out.push_back(MpaExample("responder-commit",
                           "MPA Responder to Initiator: MPA Reply Frame with a test-ULP "
                           "Advertisement, a Read Response and a Terminate, CRC on, Markers off.",
                           ReplyFrame(), reply_segs, false, Profile::kCommit));
  Example ddp{"ddp-segments",
              "Bare DDP segments (no MPA), one per line: every opcode of profile commit.",
              "--ddp --profile commit",
              {},
              {},
              true};
  for (const Segment& s : AllOpcodes(Profile::kCommit)) {
    ddp.labels.push_back(s.label);
    ddp.chunks.push_back(s.octets);
  }
  out.push_back(std::move(ddp));
  return out;
}

std::string Render(const Example& e) {
  std::string s = "# rdmapct example stream: " + e.name + "\n";
  s += "# Generated by tools/gen_streams.cc (`gen_streams examples/streams`); do not edit by hand.\n";
  s += "# " + e.summary + "\n";
  s += "# Decode: rdmapct decode " + e.decode_flags + " examples/streams/" + e.name + ".hex\n";
  std::size_t offset = 0;
  for (std::size_t i = 0; i < e.chunks.size(); ++i) {
    s += "\n# " + e.labels[i] + " (offset " + std::to_string(offset) + ", " + std::to_string(e.chunks[i].size()) +
         " octets)\n";
    const std::size_t per_line = e.one_per_line ? e.chunks[i].size() : 16;
    s += FormatHexLines(e.chunks[i], per_line);
    offset += e.chunks[i].size();
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gen_streams <output-dir>\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const Example& e : Examples()) {
    const std::filesystem::path path = dir / (e.name + ".hex");
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << Render(e);
    if (!out) {
      std::fprintf(stderr, "gen_streams: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
