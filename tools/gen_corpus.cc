// Generates the seed corpora of the fuzz/fuzz_<name>.cc harnesses into
// <out>/fuzz_<name>/ from the wire codecs, deterministically (no clock, no
// std:: distributions, a fixed xorshift for filler octets), so that the
// committed corpus/ can be checked for drift:
//
//   gen_corpus <out_dir>                      write the seeds
//   gen_corpus <out_dir> --expect <corpus>    write, then compare with <corpus>
//
// Every fuzz_<name>/ folder of <out_dir> is replaced as a whole; anything
// else (corpus/regressions/) is left alone. Seeds are valid frames of every
// kind plus a few deliberate malformations, named after what they hold.
// Input layouts of the harnesses with configuration octets are documented
// at the top of fuzz/fuzz_mpa_deframer.cc and fuzz/fuzz_ddp_reassembly.cc.
// Capture seeds are built in memory (capture/capture_builder.h: explicit
// byte orders, fixed timestamps), never through libpcap's file writer.
#include <pcap/pcap.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "capture/capture_builder.h"
#include "capture/pcap_writer.h"
#include "fuzz/session_builder.h"
#include "fuzz/session_seeds.h"
#include "reference/wire/ddp_segmentation.h"
#include "reference/wire/hex.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"
#include "reference/wire/ulp_convention.h"
#include "reference/wire/ulp_convention_directive.h"

namespace {

using namespace rdmapct::wire;
namespace fs = std::filesystem;

// harness directory -> file name -> octets
using Corpus = std::map<std::string, std::map<std::string, Bytes>>;

void Add(Corpus& c, const std::string& dir, const std::string& name, Bytes bytes) {
  if (!c[dir].emplace(name, std::move(bytes)).second) {
    std::fprintf(stderr, "gen_corpus: duplicate seed %s/%s\n", dir.c_str(), name.c_str());
    std::exit(2);
  }
}

// Filler octets: the same on every platform.
Bytes Filler(std::size_t n, uint32_t seed) { return rdmapct::fuzz::XorshiftOctets(n, seed * 2654435761u + 1); }

std::string Slug(const char* name) {
  std::string s;
  for (const char* p = name; *p != '\0'; ++p) {
    const char ch = *p;
    if (ch >= 'A' && ch <= 'Z')
      s += static_cast<char>(ch - 'A' + 'a');
    else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))
      s += ch;
    else if (!s.empty() && s.back() != '_')
      s += '_';
  }
  return s;
}

// ---------------------------------------------------------------------------
// RDMAP messages: one valid segment per opcode (shared by several corpora).

struct Message {
  std::string name;
  Bytes octets;
};

const ReadRequestHeader kReadRequest{0x00001a01, 0x00007f3a12340000, 4096, 0x00002b02, 0x0000000000001000};

TerminateHeader Terminate(TerminateCode code, bool with_ddp, bool tagged_echo, bool with_rdma, TerminateForm form) {
  DdpSegmentHeader echo;
  echo.tagged = tagged_echo;
  echo.rsvd_ulp0 = tagged_echo ? RdmapControlByte(Opcode::kRdmaWrite) : RdmapControlByte(Opcode::kRdmaReadRequest);
  if (tagged_echo) {
    echo.stag = 0x00001a01;
    echo.tagged_offset = 0x00007f3a12340100;
  } else {
    echo.queue_number = 1;
    echo.msn = 5;
  }
  return MakeTerminateHeader(code, with_ddp ? &echo : nullptr, with_ddp ? 46 : 0, with_rdma ? &kReadRequest : nullptr,
                             form);
}

std::vector<Message> EveryOpcode() {
  const Bytes payload = Filler(32, 1);
  const Bytes hash = Filler(32, 2);
  std::vector<Message> out;
  auto add = [&](Opcode op, const RdmapSegment& seg) { out.push_back({Slug(OpcodeName(op)), EncodeSegment(seg)}); };
  add(Opcode::kRdmaWrite, MakeRdmaWrite(0x00001a01, 0x00007f3a12340000, payload));
  add(Opcode::kRdmaReadRequest, MakeReadRequest(1, kReadRequest));
  add(Opcode::kRdmaReadResponse, MakeReadResponse(0x00002b02, 0x1000, payload));
  add(Opcode::kSend, MakeSend(Opcode::kSend, 1, payload));
  add(Opcode::kSendWithInvalidate, MakeSend(Opcode::kSendWithInvalidate, 2, payload, 0x00002e05));
  add(Opcode::kSendWithSe, MakeSend(Opcode::kSendWithSe, 3, payload));
  add(Opcode::kSendWithSeAndInvalidate, MakeSend(Opcode::kSendWithSeAndInvalidate, 4, payload, 0x00002e05));
  add(Opcode::kTerminate,
      MakeTerminate(1, Terminate(term::kRdmapInvalidStag, true, false, true, TerminateForm::kBitDriven)));
  add(Opcode::kImmediateData, MakeImmediateData(5, 0x0123456789abcdefull));
  add(Opcode::kImmediateDataWithSe, MakeImmediateData(6, 0xfedcba9876543210ull, true));
  AtomicRequestHeader cmp_swap;
  cmp_swap.atomic_opcode = static_cast<uint8_t>(AtomicOpcode::kCmpSwap);
  cmp_swap.request_identifier = 9;
  cmp_swap.remote_stag = 0x00001d04;
  cmp_swap.remote_tagged_offset = 0x00007f3a12344000;
  cmp_swap.add_or_swap_data = 42;
  cmp_swap.compare_data = 41;
  add(Opcode::kAtomicRequest, MakeAtomicRequest(2, cmp_swap));
  add(Opcode::kAtomicResponse, MakeAtomicResponse(1, {9, 41}));
  add(Opcode::kFlushRequest, MakeFlushRequest(3, {0x00001a01, 4096, 0x00007f3a12340000, kFlushToPersistence}));
  add(Opcode::kFlushResponse, MakeFlushResponse(2));
  add(Opcode::kVerifyRequest, MakeVerifyRequest(4, {0x00001a01, 4096, 0x00007f3a12340000, hash}));
  add(Opcode::kVerifyResponse, MakeVerifyResponse(3, hash));
  add(Opcode::kAtomicWriteRequest, MakeAtomicWriteRequest(5, {0x00001d04, 8, 0x00007f3a12344000, 0x1122334455667788}));
  add(Opcode::kAtomicWriteResponse, MakeAtomicWriteResponse(4));
  return out;
}

// ---------------------------------------------------------------------------
// fuzz_ddp_segment

void DdpSegmentSeeds(Corpus& c) {
  const std::string dir = "fuzz_ddp_segment";
  for (const Message& m : EveryOpcode()) Add(c, dir, m.name, m.octets);

  // Multi-segment messages: an untagged Send and a tagged Write split by
  // SegmentDdpMessage (MO / TO advance, L only on the last segment).
  const Bytes body = Filler(300, 3);
  DdpSegmentHeader send = MakeSegment(Opcode::kSend).ddp;
  auto untagged = SegmentDdpMessage(send, body, 128);
  DdpSegmentHeader write = MakeRdmaWrite(0x00001a01, 0x00007f3a12340000, {}).ddp;
  auto tagged = SegmentDdpMessage(write, body, 128);
  const std::vector<Bytes> us = EncodeDdpSegments(*untagged);
  const std::vector<Bytes> ts = EncodeDdpSegments(*tagged);
  for (std::size_t i = 0; i < us.size(); ++i) Add(c, dir, "send_segment_" + std::to_string(i), us[i]);
  for (std::size_t i = 0; i < ts.size(); ++i) Add(c, dir, "write_segment_" + std::to_string(i), ts[i]);
  // A Read Request continued past MO 0 carries no RDMAP header.
  RdmapSegment rr = MakeReadRequest(7, kReadRequest);
  rr.ddp.message_offset = 28;
  rr.header = {};
  Add(c, dir, "read_request_mo_28", EncodeSegment(rr));

  // Terminates in both forms inside a segment.
  const TerminateForm forms[] = {TerminateForm::kBitDriven, TerminateForm::kFixed};
  for (TerminateForm form : forms) {
    const char* f = form == TerminateForm::kFixed ? "fixed" : "bit_driven";
    Add(c, dir, std::string("terminate_") + f + "_tagged_echo",
        EncodeSegment(MakeTerminate(2, Terminate(term::kDdpTaggedBaseOrBoundsViolation, true, true, false, form))));
    Add(c, dir, std::string("terminate_") + f + "_no_echo",
        EncodeSegment(MakeTerminate(3, Terminate(term::kMpaCrcError, false, false, false, form))));
  }

  // Deliberate malformations a receiver must survive.
  RdmapSegment s = MakeSend(Opcode::kSend, 1, body);
  s.ddp.rsvd = 0xF;
  s.ddp.ddp_version = 0;
  s.ddp.rsvd_ulp0 = 0x33;  // RV 0, Rsv 3
  Add(c, dir, "send_reserved_bits_dv0_rv0", EncodeSegment(s));
  RdmapSegment t = MakeReadRequest(1, kReadRequest);
  t.ddp.tagged = true;  // Read Request with T = 1
  t.header = {};
  Add(c, dir, "read_request_tagged", EncodeSegment(t));
  Bytes cut = EncodeSegment(MakeAtomicRequest(1, {}));
  cut.resize(cut.size() - 9);
  Add(c, dir, "atomic_request_truncated", cut);
  Add(c, dir, "untagged_header_truncated", Bytes{0x41, 0x43, 0, 0, 0, 0, 0, 0});
  Add(c, dir, "empty", {});
}

// ---------------------------------------------------------------------------
// fuzz_terminate_header: the header as it follows the DDP header.

void TerminateSeeds(Corpus& c) {
  const std::string dir = "fuzz_terminate_header";
  struct Shape {
    const char* name;
    bool ddp, tagged, rdma;
  };
  const Shape shapes[] = {{"bare", false, false, false},         {"ddp_tagged", true, true, false},
                          {"ddp_untagged", true, false, false},  {"rdma", false, false, true},
                          {"ddp_tagged_rdma", true, true, true}, {"ddp_untagged_rdma", true, false, true}};
  for (const Shape& s : shapes) {
    for (TerminateForm form : {TerminateForm::kBitDriven, TerminateForm::kFixed}) {
      Bytes b;
      EncodeTerminateHeader(Terminate(term::kRdmapUnexpectedOpcode, s.ddp, s.tagged, s.rdma, form), b);
      Add(c, dir, std::string(form == TerminateForm::kFixed ? "fixed_" : "bit_driven_") + s.name, b);
    }
  }
  // M without D (the Segment Length alone), reserved bits, a fixed form with
  // a tagged echo tail and trailing ULP octets, and every registered code.
  TerminateHeader m_only =
      Terminate(term::kDdpUntaggedInvalidMsnRangeNotValid, false, false, false, TerminateForm::kBitDriven);
  m_only.m = m_only.has_segment_length = true;
  m_only.ddp_segment_length = 1234;
  m_only.reserved = 0x1ABC;
  Bytes b;
  EncodeTerminateHeader(m_only, b);
  Add(c, dir, "bit_driven_m_only_reserved", b);
  TerminateHeader tail = Terminate(term::kDdpTaggedToWrap, true, true, true, TerminateForm::kFixed);
  tail.fixed_ddp_area_tail = 0xdeadbeef;
  b.clear();
  EncodeTerminateHeader(tail, b);
  const Bytes trailing = Filler(20, 4);
  b.insert(b.end(), trailing.begin(), trailing.end());
  Add(c, dir, "fixed_tagged_tail_trailing", b);
  for (const TerminateCodeEntry& e : TerminateCodeTable()) {
    const TerminateCode code{e.layer, e.error_type, e.any_code ? uint8_t{0x5A} : e.error_code};
    b.clear();
    EncodeTerminateHeader(Terminate(code, e.layer != 0x2, false, e.layer == 0x0, TerminateForm::kBitDriven), b);
    Add(c, dir, "code_" + Slug(e.description), b);
  }
  Add(c, dir, "truncated_control", Bytes{0x02, 0x06});
  Add(c, dir, "truncated_rdma", Bytes{0x02, 0x06, 0x20, 0x00, 0x00, 0x00});
}

// ---------------------------------------------------------------------------
// fuzz_mpa_startup_frame

MpaStartupFrame Frame(bool reply, uint8_t rev, bool enhanced, std::size_t pd_size) {
  MpaStartupFrame f;
  f.is_reply = reply;
  f.revision = rev;
  f.crc_required = true;
  f.marker_required = reply;
  f.enhanced = enhanced;
  if (enhanced && rev >= 2) {
    f.enhanced_data = EnhancedIrdOrd{true, true, 16, false, true, 16};
    pd_size -= std::min<std::size_t>(pd_size, kMpaEnhancedDataSize);
  }
  f.private_data = Filler(pd_size, static_cast<uint32_t>(pd_size + rev));
  return f;
}

void StartupFrameSeeds(Corpus& c) {
  const std::string dir = "fuzz_mpa_startup_frame";
  for (bool reply : {false, true}) {
    const std::string kind = reply ? "reply" : "request";
    for (std::size_t pd : {0, 1, 256, 512}) {
      Add(c, dir, kind + "_rev1_pd" + std::to_string(pd), EncodeMpaStartupFrame(Frame(reply, 1, false, pd)));
      if (pd >= kMpaEnhancedDataSize) {
        Add(c, dir, kind + "_rev2_enhanced_pd" + std::to_string(pd), EncodeMpaStartupFrame(Frame(reply, 2, true, pd)));
      }
    }
    Add(c, dir, kind + "_rev2_plain", EncodeMpaStartupFrame(Frame(reply, 2, false, 8)));
    Add(c, dir, kind + "_rev1_s_set", EncodeMpaStartupFrame(Frame(reply, 1, true, 8)));
  }
  MpaStartupFrame odd = Frame(true, 2, true, 4);
  odd.reject = true;
  odd.res = 0xF;
  odd.enhanced_data = EnhancedIrdOrd{false, false, kIrdOrdNotNegotiated, false, false, kIrdOrdNotNegotiated};
  Add(c, dir, "reply_rejected_res_3fff", EncodeMpaStartupFrame(odd));
  MpaStartupFrame too_long = Frame(false, 1, false, 513);
  Add(c, dir, "request_pd513", EncodeMpaStartupFrame(too_long));
  MpaStartupFrame short_enhanced = Frame(false, 2, false, 2);
  short_enhanced.enhanced = true;
  Add(c, dir, "request_rev2_s_pd2", EncodeMpaStartupFrame(short_enhanced));
  MpaStartupFrame lying = Frame(false, 1, false, 16);
  lying.pd_length_override = 40;
  Add(c, dir, "request_pd_length_too_big", EncodeMpaStartupFrame(lying));
  Bytes bad_key = EncodeMpaStartupFrame(Frame(false, 1, false, 0));
  bad_key[9] = 'x';
  Add(c, dir, "bad_key", bad_key);
  Bytes followed = EncodeMpaStartupFrame(Frame(true, 1, false, 1));
  AppendFpdu(followed, Filler(20, 5));
  Add(c, dir, "reply_followed_by_fpdu", followed);
}

// ---------------------------------------------------------------------------
// fuzz_ulp_convention

Advertisement ExampleAdvertisement(std::size_t regions, bool previous) {
  Advertisement adv;
  adv.flags = kFlagLittleEndianAtomics | kFlagRfc7306 | kFlagCommit;
  adv.ird = 8;
  adv.ord = 8;
  adv.receive_buffer_count = 8;
  adv.receive_buffer_size = 4096;
  adv.connection_serial = 2;
  const uint8_t access[] = {0x03, 0x01, 0x02, 0x07, 0x03, 0x01, 0x03, 0x03, 0x19};
  const uint8_t attrs[] = {0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x02, 0x04, 0x00};
  for (std::size_t i = 0; i < regions; ++i) {
    adv.regions.push_back(AdvertisedRegion{static_cast<uint32_t>(0x1a01 + 0x101 * i),
                                           0x00007f3a12340000ull + 0x2000 * i, 0x1000, access[i], attrs[i],
                                           static_cast<uint16_t>(1 + i % 2), static_cast<uint32_t>(0x1000 * i)});
  }
  if (previous) {
    adv.previous = PreviousOutcome{1, ConnectionOutcome::kTerminateReceived, kOutcomeCodeKnown, 0x0, 0x2, 0x06, 2, 0};
  }
  return adv;
}

// Test-ULP 1.1: Command Records, the Suite Request extension, completions.
void UlpConventionCommandSeeds(Corpus& c, const std::string& dir) {
  CommandRecord rec;
  for (uint8_t t = 1; t <= kMaxCommandType; ++t) {
    Command cmd;
    cmd.type = static_cast<CommandType>(t);
    cmd.command_id = t;
    const uint16_t uses = CommandFieldsUsed(cmd.type);
    if (uses & kUsesLocal) cmd.local_stag = 0x1a01, cmd.local_tagged_offset = 0x00007f3a12340000ull + t;
    if (uses & kUsesLength) cmd.length = 16u * t;
    if (uses & kUsesRemoteStag) cmd.remote_stag = 0x5157e100;
    if (uses & kUsesRemoteTo) cmd.remote_tagged_offset = 0x0000530000000000ull + 8u * t;
    if (uses & kUsesModifier) cmd.modifier = 1;
    for (int k = 0; k < 4; ++k) {
      if (uses & (kUsesOperand1 << k)) cmd.operand[k] = 0x0101010101010101ull * (k + 1);
    }
    rec.commands.push_back(cmd);
  }
  Bytes b;
  (void)EncodeCommandRecord(rec, b);
  Add(c, dir, "command_record_every_type", b);
  rec.commands.resize(2);
  b.clear();
  (void)EncodeCommandRecord(rec, b);
  Add(c, dir, "command_record_write_read", b);
  Bytes req;
  EncodeSuiteRequest({1, 1, 0, CaseHash("requester/5.2/target-reads-suite-memory")}, req);
  EncodeSuiteRequestExtension({4, {{0x5157e100, 0x0000530000000000ull, 0x10000, 0x1F}}}, req);
  Add(c, dir, "suite_request_1_1_extension", req);
  Bytes ev;
  EncodeEventRecord(
      MakeCommandCompletedEvent(3, {2, CommandType::kRdmaRead, CompletionStatus::kSuccess, 0}, Filler(80, 9)), ev);
  Add(c, dir, "event_command_completed", ev);
  Bytes blk;
  EncodeCommandsBlock({0x3FFE, 7, 1, 1, 2}, blk);
  Add(c, dir, "commands_block", blk);
}

void UlpConventionSeeds(Corpus& c) {
  const std::string dir = "fuzz_ulp_convention";
  auto adv_bytes = [](const Advertisement& adv) {
    Bytes b;
    (void)EncodeAdvertisement(adv, b);
    return b;
  };
  Add(c, dir, "advertisement_no_regions", adv_bytes(ExampleAdvertisement(0, false)));
  Add(c, dir, "advertisement_9_regions", adv_bytes(ExampleAdvertisement(9, false)));
  Add(c, dir, "advertisement_8_regions_outcome", adv_bytes(ExampleAdvertisement(8, true)));
  Advertisement newer = ExampleAdvertisement(2, false);
  newer.minor_version = 2;  // newer than the decoders' 1.1
  newer.region_entry_length = 32;
  Bytes nb = adv_bytes(newer);
  nb.push_back(0xAA);  // a newer minor may append octets
  Add(c, dir, "advertisement_minor2_long_entries", nb);
  Advertisement with_commands = ExampleAdvertisement(8, true);
  with_commands.minor_version = 1;
  with_commands.commands = CommandCapabilities{0x3FFE, 3, 4, 1, 2};
  Add(c, dir, "advertisement_1_1_commands", adv_bytes(with_commands));
  UlpConventionCommandSeeds(c, dir);

  // The same advertisement as a target's MPA Reply Private Data.
  MpaStartupFrame reply = Frame(true, 2, true, 4);
  reply.private_data = adv_bytes(ExampleAdvertisement(3, true));
  Add(c, dir, "mpa_reply_with_advertisement", EncodeMpaStartupFrame(reply));

  // A Connect Directive (convention §10.2), alone and as the Private Data of
  // the rejecting Reply a target as MPA Initiator reads it from.
  Bytes directive;
  EncodeConnectDirective(
      {1, 0, kDirectiveCrc | kDirectiveEnhanced | kDirectivePeerToPeer | kDirectiveReadRtr, 8, 8, 0x12345678},
      directive);
  Add(c, dir, "connect_directive", directive);
  MpaStartupFrame reject = Frame(true, 1, false, 0);
  reject.marker_required = false;
  reject.reject = true;
  reject.private_data = directive;
  Add(c, dir, "mpa_reject_with_directive", EncodeMpaStartupFrame(reject));

  Bytes req;
  EncodeSuiteRequest({1, 0, kRequestKeepMemory, CaseHash("rfc5040/7.2/read-req-invalid-src-stag")}, req);
  Add(c, dir, "suite_request", req);
  req.clear();
  EncodeSuiteRequest({1, 2, 0x8001, 0x12345678}, req);
  req.push_back(0x77);  // a newer minor may append octets
  Add(c, dir, "suite_request_minor2_flags", req);

  const Bytes payload = Filler(100, 6);
  auto ev_bytes = [](const EventRecord& ev) {
    Bytes b;
    EncodeEventRecord(ev, b);
    return b;
  };
  Add(c, dir, "event_send_empty", ev_bytes(MakeSendEvent(1, {}, std::nullopt, std::nullopt)));
  Add(c, dir, "event_send_10", ev_bytes(MakeSendEvent(2, ByteSpan(payload).first(10), true, std::nullopt)));
  Add(c, dir, "event_send_64_invalidate", ev_bytes(MakeSendEvent(3, ByteSpan(payload).first(64), false, 0x2e05)));
  Add(c, dir, "event_send_100", ev_bytes(MakeSendEvent(4, payload, std::nullopt, std::nullopt)));
  Add(c, dir, "event_immediate_data", ev_bytes(MakeImmediateDataEvent(5, 0x0123456789abcdefull, true)));
  Add(c, dir, "event_completion_error", ev_bytes(MakeCompletionErrorEvent(6, ErrorSource::kSendQueue, 12)));
  EventRecord future = MakeSendEvent(7, ByteSpan(payload).first(4), std::nullopt, std::nullopt);
  future.minor_version = 3;
  future.type = static_cast<EventType>(9);
  Bytes fb = ev_bytes(future);
  fb.push_back(0x55);
  Add(c, dir, "event_minor3_unknown_type", fb);
}

// ---------------------------------------------------------------------------
// fuzz_mpa_deframer: config octets (see the harness) + stream.

struct DeframerSeed {
  uint8_t flags;
  uint8_t mode;  // without the chunk count
  uint32_t position;
  uint16_t max_ulpdu;
  Bytes chunks;
};

Bytes DeframerInput(const DeframerSeed& s, const Bytes& stream) {
  Bytes b;
  ByteWriter w(b);
  w.Put8(s.flags);
  w.Put8(static_cast<uint8_t>(s.mode | s.chunks.size() << 5));
  w.Put32(s.position);
  w.Put16(s.max_ulpdu);
  w.PutBytes(s.chunks);
  w.PutBytes(stream);
  return b;
}

// The ULPDUs of a short RDMAP exchange, one of them spanning several Markers.
std::vector<Bytes> Exchange() {
  std::vector<Bytes> out;
  for (const Message& m : EveryOpcode()) {
    if (out.size() < 6) out.push_back(m.octets);
  }
  out.push_back(EncodeSegment(MakeSend(Opcode::kSend, 9, Filler(1200, 7))));
  return out;
}

Bytes Stream(const std::vector<Bytes>& ulpdus, bool crc, bool markers, uint32_t position,
             const FpduEncodeOptions& last = {}) {
  Bytes out;
  MarkerInserter ins(0, position);
  for (std::size_t i = 0; i < ulpdus.size(); ++i) {
    FpduEncodeOptions o = i + 1 == ulpdus.size() ? last : FpduEncodeOptions{};
    o.crc_enabled = crc;
    if (markers)
      ins.AppendUlpdu(out, ulpdus[i], o);
    else
      AppendFpdu(out, ulpdus[i], o);
  }
  return out;
}

void DeframerSeeds(Corpus& c) {
  const std::string dir = "fuzz_mpa_deframer";
  const std::vector<Bytes> x = Exchange();
  const Bytes chunky = {3, 0x85, 0, 17};
  Add(c, dir, "crc_whole", DeframerInput({0x01, 0, 0, 0, {0xFF}}, Stream(x, true, false, 0)));
  Add(c, dir, "crc_octet_by_octet", DeframerInput({0x01, 0, 0, 0, {}}, Stream(x, true, false, 0)));
  Add(c, dir, "no_crc_chunks", DeframerInput({0x00, 0, 0, 0, chunky}, Stream(x, false, false, 0)));
  Add(c, dir, "markers_crc_pos0", DeframerInput({0x03, 0, 0, 0, chunky}, Stream(x, true, true, 0)));
  Add(c, dir, "markers_no_crc_pos508", DeframerInput({0x02, 0, 508, 0, {1, 0x81}}, Stream(x, false, true, 508)));
  Add(c, dir, "markers_crc_pos1002", DeframerInput({0x03, 0, 1002, 0, {7}}, Stream(x, true, true, 1002)));
  Add(c, dir, "markers_crc_pos_wrap",
      DeframerInput({0x03, 0, 0xFFFFFF00u, 0, chunky}, Stream(x, true, true, 0xFFFFFF00u)));
  // Errors, latched and continued.
  const Bytes bad_crc = Stream(x, true, false, 0, {.crc_xor = 1});
  Add(c, dir, "crc_error", DeframerInput({0x01, 0, 0, 0, chunky}, bad_crc));
  Add(c, dir, "crc_error_continue", DeframerInput({0x05, 0, 0, 0, chunky}, bad_crc));
  Bytes bad_marker;
  MarkerInserter liar(0, 0, {.fpduptr_xor = 0x0010});
  for (const Bytes& u : x) liar.AppendUlpdu(bad_marker, u);
  Add(c, dir, "marker_mismatch", DeframerInput({0x03, 0, 0, 0, chunky}, bad_marker));
  Add(c, dir, "marker_mismatch_continue", DeframerInput({0x0B, 0, 0, 0, chunky}, bad_marker));
  Add(c, dir, "marker_mismatch_unchecked", DeframerInput({0x43, 0, 0, 0, chunky}, bad_marker));
  Add(c, dir, "ulpdu_too_long", DeframerInput({0x01, 0, 0, 200, chunky}, Stream(x, true, false, 0)));
  Add(c, dir, "short_ulpdu_rejected", DeframerInput({0x21, 0, 0, 0, {}}, Stream({Bytes{1, 2, 3}}, true, false, 0)));
  Add(c, dir, "no_crc_computed", DeframerInput({0x80, 0, 0, 0, chunky}, Stream(x, false, false, 0)));
  // Startup frame, then Full Operation as negotiated (Markers + CRC).
  Bytes startup = EncodeMpaStartupFrame(Frame(false, 1, false, 16));
  const Bytes fpdus = Stream(x, true, true, 0);
  startup.insert(startup.end(), fpdus.begin(), fpdus.end());
  Add(c, dir, "request_then_markers_wait", DeframerInput({0x10, 0x04 | 0x08 | 0x10, 0, 0, chunky}, startup));
  Add(c, dir, "request_then_markers_configured", DeframerInput({0x13, 0x02, 0, 0, {5}}, startup));
  Add(c, dir, "request_as_reply", DeframerInput({0x10, 0x01, 0, 0, {}}, startup));
  Bytes cut = Stream(x, true, false, 0);
  cut.resize(cut.size() - 5);
  Add(c, dir, "truncated_tail", DeframerInput({0x01, 0, 0, 0, {9}}, cut));
}

// ---------------------------------------------------------------------------
// fuzz_ddp_reassembly: mode octet, then records (see the harness).

struct Piece {
  uint8_t flags;  // 0x01 L, 0x02 QN+1, 0x04 MSN+1, 0x08 T, 0x10 32-bit MO
  uint32_t mo;
  uint8_t length;
};

Bytes Pieces(uint16_t capacity, std::initializer_list<Piece> pieces) {
  Bytes b;
  ByteWriter w(b);
  w.Put8(0);
  w.Put16(capacity);
  uint32_t seed = 10;
  for (const Piece& p : pieces) {
    w.Put8(p.flags);
    if (p.flags & 0x10)
      w.Put32(p.mo);
    else if (!(p.flags & 0x08))
      w.Put16(static_cast<uint16_t>(p.mo));
    w.Put8(p.length);
    w.PutBytes(Filler(p.length, seed++));
  }
  return b;
}

Bytes Segmented(uint16_t length, uint8_t mulpdu_extra, uint8_t capacity_extra, const Bytes& order) {
  Bytes b;
  ByteWriter w(b);
  w.Put8(1);
  w.Put16(length);
  w.Put8(mulpdu_extra);
  w.Put8(capacity_extra);
  Bytes o = order;
  o.resize(16, 0);
  w.PutBytes(o);
  w.PutBytes(Filler(length, length));
  return b;
}

void ReassemblySeeds(Corpus& c) {
  const std::string dir = "fuzz_ddp_reassembly";
  Add(c, dir, "in_order", Pieces(1024, {{0, 0, 100}, {0, 100, 100}, {0x01, 200, 50}}));
  Add(c, dir, "last_first", Pieces(1024, {{0x01, 200, 50}, {0, 0, 100}, {0, 100, 100}}));
  Add(c, dir, "overlap_duplicates", Pieces(1024, {{0, 0, 120}, {0, 100, 100}, {0, 0, 10}, {0x01, 200, 50}}));
  Add(c, dir, "qn_msn_mismatch", Pieces(1024, {{0, 0, 100}, {0x02, 100, 10}, {0x04, 100, 10}, {0x01, 100, 10}}));
  Add(c, dir, "second_last_beyond_last", Pieces(1024, {{0x01, 100, 10}, {0x01, 100, 20}, {0, 110, 10}, {0, 0, 100}}));
  Add(c, dir, "earlier_last_after_higher", Pieces(1024, {{0, 300, 10}, {0x01, 100, 10}}));
  Add(c, dir, "too_long_and_tagged", Pieces(256, {{0x10, 0xFFFFFF00u, 200}, {0x08, 0, 10}, {0x01, 200, 56}}));
  Add(c, dir, "zero_length_last", Pieces(16, {{0x01, 0, 0}, {0, 0, 1}}));
  Add(c, dir, "complete_then_more", Pieces(64, {{0x01, 0, 8}, {0x01, 0, 8}}));
  Add(c, dir, "segmented_empty", Segmented(0, 0, 0, {}));
  Add(c, dir, "segmented_1_octet_per_segment", Segmented(40, 0, 0, {5, 3, 1}));
  Add(c, dir, "segmented_300_mulpdu_128", Segmented(300, 109, 10, {2, 0, 1}));
  Add(c, dir, "segmented_4096_reversed", Segmented(4096, 255, 0, Bytes(16, 0xFF)));
}

// ---------------------------------------------------------------------------
// fuzz_mpa_fpdu: CRC flag, split octet, one FPDU (+ trailing octets).

void FpduSeeds(Corpus& c) {
  const std::string dir = "fuzz_mpa_fpdu";
  auto input = [](bool crc, uint8_t split, const Bytes& fpdu) {
    Bytes b{static_cast<uint8_t>(crc ? 1 : 0), split};
    b.insert(b.end(), fpdu.begin(), fpdu.end());
    return b;
  };
  const std::vector<Message> all = EveryOpcode();
  for (std::size_t i = 0; i < all.size(); i += 3) {
    Add(c, dir, all[i].name, input(true, static_cast<uint8_t>(7 * i), EncodeFpdu(all[i].octets)));
  }
  Add(c, dir, "empty_ulpdu", input(true, 1, EncodeFpdu({})));
  Add(c, dir, "no_crc_zero_field", input(false, 2, EncodeFpdu(all[3].octets, {.crc_enabled = false})));
  Add(c, dir, "bad_crc", input(true, 3, EncodeFpdu(all[3].octets, {.crc_xor = 0x80000000u})));
  Add(c, dir, "nonzero_pad", input(true, 4, EncodeFpdu(Filler(13, 8), {.pad_octet = 0xA5})));
  Bytes two = EncodeFpdu(all[0].octets);
  AppendFpdu(two, all[1].octets);
  Add(c, dir, "two_fpdus", input(true, 200, two));
  Bytes cut = EncodeFpdu(Filler(600, 9));
  cut.resize(300);
  Add(c, dir, "truncated", input(true, 5, cut));
}

// ---------------------------------------------------------------------------
// fuzz_hex: text.

Bytes Text(const std::string& s) { return Bytes(s.begin(), s.end()); }

void HexSeeds(Corpus& c) {
  const std::string dir = "fuzz_hex";
  const std::vector<Message> all = EveryOpcode();
  Add(c, dir, "send_lines", Text(FormatHexLines(all[3].octets)));
  Add(c, dir, "read_request_8_per_line", Text(FormatHexLines(all[1].octets, 8)));
  Add(c, dir, "commented",
      Text("# MPA Request\n4d50 4120 4944 2052 6571 2046 7261 6d65  # key\r\n0x40 0x01 00 00\n\n# end\n"));
  Add(c, dir, "split_across_tokens", Text("4d5 0\t41\n20\n"));
  Add(c, dir, "odd_digits", Text("41 43 0\n"));
  Add(c, dir, "odd_line_even_total", Text("4\nd5\n0\n"));
  Add(c, dir, "invalid_digit", Text("41 4g\n"));
  Add(c, dir, "dangling_0x", Text("00 0x\n"));
}

// ---------------------------------------------------------------------------
// fuzz_stream_decode: two config octets (see the harness) + stream.

void StreamDecodeSeeds(Corpus& c) {
  const std::string dir = "fuzz_stream_decode";
  auto input = [](uint8_t a, uint8_t b, const Bytes& stream) {
    Bytes out{a, b};
    out.insert(out.end(), stream.begin(), stream.end());
    return out;
  };
  std::vector<Bytes> all;
  for (const Message& m : EveryOpcode()) all.push_back(m.octets);
  const Bytes plain = Stream(all, true, false, 0);
  const Bytes marked = Stream(all, true, true, 0);
  Add(c, dir, "rfc5040_crc", input(0x04 | 0x20, 0x02, plain));
  Add(c, dir, "rfc7306_crc_markers", input(0x01 | 0x04 | 0x08 | 0x20, 0x02 | 0x04, marked));
  Add(c, dir, "commit_crc_markers_render_all", input(0x02 | 0x04 | 0x08 | 0x20, 0x02 | 0x08, marked));
  Add(c, dir, "commit_no_crc_computed", input(0x02 | 0x20, 0x01, Stream(all, false, false, 0)));
  Bytes handshake = EncodeMpaStartupFrame(Frame(true, 2, true, 4));
  handshake.insert(handshake.end(), marked.begin(), marked.end());
  Add(c, dir, "reply_then_markers_auto", input(0x02 | 0x04 | 0x08, 0x02, handshake));
  MpaStartupFrame reply = Frame(true, 2, true, 4);
  Bytes adv;
  (void)EncodeAdvertisement(ExampleAdvertisement(3, true), adv);
  reply.private_data = adv;
  Bytes with_adv = EncodeMpaStartupFrame(reply);
  with_adv.insert(with_adv.end(), plain.begin(), plain.end());
  Add(c, dir, "reply_with_advertisement_present", input(0x02 | 0x04 | 0x10, 0x06, with_adv));
  const Bytes bad = Stream(all, true, true, 0, {.crc_xor = 1});
  Add(c, dir, "crc_error_continue", input(0x02 | 0x04 | 0x08 | 0x20 | 0x40, 0x02, bad));
  Add(c, dir, "crc_error_fatal", input(0x02 | 0x04 | 0x08 | 0x20, 0x02, bad));
  Bytes junk_ddp = Stream({Bytes{0x41, 0x41, 0, 0}}, true, false, 0);
  Add(c, dir, "truncated_ddp_header", input(0x02 | 0x04 | 0x20, 0x00, junk_ddp));
  Bytes bare;
  for (const Bytes& m : all) {
    if (m.size() > 0xFF) continue;
    bare.push_back(static_cast<uint8_t>(m.size()));
    bare.insert(bare.end(), m.begin(), m.end());
  }
  bare.push_back(3);
  bare.insert(bare.end(), {0xc1, 0x40, 0x00});
  Add(c, dir, "bare_segments_commit", input(0x80 | 0x02, 0x04, bare));
  Add(c, dir, "bare_segments_rfc5040_continue", input(0x80 | 0x40, 0x00, bare));
}

// ---------------------------------------------------------------------------
// fuzz_pcap_reader: capture files. An iWARP conversation written by the
// pcap writer's packet builder, converted to every link type the reader
// knows, plus captures that start late, lose segments, carry a bad CRC,
// reorder and repeat segments, hold unparsable frames or end early.

namespace cap = rdmapct::capture;

std::vector<cap::Packet> Conversation(bool markers, uint16_t mss, uint32_t crc_xor = 0, uint32_t gap = 0) {
  std::vector<Bytes> to_responder, to_initiator;
  for (const Message& m : EveryOpcode()) (m.octets[1] & 1 ? to_initiator : to_responder).push_back(m.octets);
  MpaStartupFrame req = Frame(false, 1, false, 8), rep = Frame(true, 1, false, 4);
  req.marker_required = rep.marker_required = markers;
  cap::TcpConnection c;
  const auto data = [&](cap::Sender s, Bytes b) {
    c.events.push_back({s, cap::TcpEventKind::kData, {}, std::move(b), 0});
  };
  data(cap::Sender::kClient, EncodeMpaStartupFrame(req));
  data(cap::Sender::kServer, EncodeMpaStartupFrame(rep));
  data(cap::Sender::kClient, Stream(to_responder, true, markers, 0, {.crc_xor = crc_xor}));
  if (gap != 0) c.events.push_back({cap::Sender::kServer, cap::TcpEventKind::kGap, {}, {}, gap});
  data(cap::Sender::kServer, Stream(to_initiator, true, markers, gap));
  c.events.push_back({cap::Sender::kClient, cap::TcpEventKind::kFin, {}, {}, 0});
  c.events.push_back({cap::Sender::kServer, cap::TcpEventKind::kFin, {}, {}, 0});
  cap::TcpCapture capture;
  capture.start = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  capture.connections.push_back(c);
  cap::PcapWriterOptions o;
  o.mss = mss;
  std::vector<cap::Packet> packets;
  std::string error;
  if (!cap::BuildPackets(capture, o, packets, error)) {
    std::fprintf(stderr, "gen_corpus: %s\n", error.c_str());
    std::exit(2);
  }
  return packets;
}

std::vector<cap::CaptureRecord> Records(const std::vector<cap::Packet>& packets) {
  std::vector<cap::CaptureRecord> out;
  for (const cap::Packet& p : packets) {
    out.push_back(
        {std::chrono::duration_cast<std::chrono::nanoseconds>(p.time.time_since_epoch()).count(), p.frame, 0});
  }
  return out;
}

// The same segments as frames of another link type (IPv6 when asked).
std::vector<cap::CaptureRecord> Relinked(const std::vector<cap::Packet>& packets, int link_type, bool v6,
                                         std::vector<uint16_t> vlans = {}, bool options = false) {
  std::vector<cap::CaptureRecord> out;
  for (const cap::CaptureRecord& r : Records(packets)) {
    cap::TcpSegment s;
    (void)cap::ParseFrame(DLT_EN10MB, r.data, static_cast<uint32_t>(r.data.size()), s);
    cap::FrameSpec spec;
    spec.source = s.source;
    spec.destination = s.destination;
    if (v6) {
      for (cap::Endpoint* e : {&spec.source, &spec.destination}) {
        const uint8_t last = e->address.octets[3];
        e->address = cap::IpAddress{6, {0x20, 0x01, 0x0d, 0xb8}};
        e->address.octets[15] = last;
      }
    }
    spec.seq = s.seq;
    spec.ack = s.ack;
    spec.flags = s.flags;
    spec.window = s.window;
    spec.payload.assign(s.payload.begin(), s.payload.end());
    spec.vlan_ids = vlans;
    spec.ip_options = options;
    out.push_back({r.time_ns, cap::BuildTcpFrame(link_type, spec), 0});
  }
  return out;
}

void PcapReaderSeeds(Corpus& c) {
  const std::string dir = "fuzz_pcap_reader";
  constexpr int kSll2 = 276;
  const std::vector<cap::Packet> plain = Conversation(false, 1460);
  Add(c, dir, "ethernet.pcap", cap::BuildPcapFile(DLT_EN10MB, Records(plain)));
  Add(c, dir, "ethernet_nanosecond.pcap", cap::BuildPcapFile(DLT_EN10MB, Records(plain), 65535, true));
  Add(c, dir, "markers_mss_200.pcapng", cap::BuildPcapngFile(DLT_EN10MB, Records(Conversation(true, 200))));
  Add(c, dir, "vlan_ipv6_ext.pcapng",
      cap::BuildPcapngFile(DLT_EN10MB, Relinked(plain, DLT_EN10MB, true, {5, 6}, true)));
  Add(c, dir, "sll_vlan.pcap", cap::BuildPcapFile(DLT_LINUX_SLL, Relinked(plain, DLT_LINUX_SLL, false, {9})));
  Add(c, dir, "sll2_ipv6.pcap", cap::BuildPcapFile(kSll2, Relinked(plain, kSll2, true)));
  Add(c, dir, "raw_ipv4_options.pcap", cap::BuildPcapFile(DLT_RAW, Relinked(plain, DLT_RAW, false, {}, true)));
  Add(c, dir, "null.pcap", cap::BuildPcapFile(DLT_NULL, Relinked(plain, DLT_NULL, false)));
  Add(c, dir, "loop_ipv6.pcapng", cap::BuildPcapngFile(DLT_LOOP, Relinked(plain, DLT_LOOP, true)));
  std::vector<cap::CaptureRecord> late = Records(Conversation(false, 100));
  late.erase(late.begin(), late.begin() + 6);
  Add(c, dir, "starts_mid_stream.pcap", cap::BuildPcapFile(DLT_EN10MB, late));
  Add(c, dir, "gap_markers.pcap", cap::BuildPcapFile(DLT_EN10MB, Records(Conversation(true, 300, 0, 700))));
  Add(c, dir, "crc_error.pcap", cap::BuildPcapFile(DLT_EN10MB, Records(Conversation(false, 1460, 0x10))));
  // Reordered and repeated segments, one repeat with different octets.
  std::vector<cap::CaptureRecord> shuffled = Records(Conversation(false, 120));
  std::swap(shuffled[6], shuffled[8]);
  shuffled.insert(shuffled.begin() + 10, shuffled[7]);
  shuffled.insert(shuffled.begin() + 12, shuffled[9]);
  shuffled[12].data.back() ^= 0x5A;
  Add(c, dir, "reordered_repeated.pcap", cap::BuildPcapFile(DLT_EN10MB, shuffled));
  // Frames that cannot be parsed or are no TCP, between good ones.
  std::vector<cap::CaptureRecord> bad = Records(plain);
  bad[3].original_length = static_cast<uint32_t>(bad[3].data.size());
  bad[3].data.resize(40);
  bad[4].data[14] = 0x95;    // IP version 9
  bad[5].data[14 + 9] = 17;  // UDP
  bad[6].data.resize(bad[6].data.size() - 5);
  bad[6].original_length = static_cast<uint32_t>(bad[6].data.size() + 5);
  Add(c, dir, "unparsable_frames.pcap", cap::BuildPcapFile(DLT_EN10MB, bad));
  Bytes cut = cap::BuildPcapFile(DLT_EN10MB, Records(plain));
  cut.resize(cut.size() - 30);
  Add(c, dir, "truncated_file.pcap", cut);
  Add(c, dir, "unsupported_link_type.pcap", cap::BuildPcapFile(147, Records(plain)));
  Add(c, dir, "not_a_capture", Bytes{'n', 'o', 't', ' ', 'p', 'c', 'a', 'p'});
}

// ---------------------------------------------------------------------------
// fuzz_tcp_reassembly: config octet, then records (see the harness).

struct SegmentRecord {
  uint8_t flags;
  uint16_t seq, ack;
  std::string payload;
};

Bytes Segments(uint8_t config, const std::vector<SegmentRecord>& records) {
  Bytes b{config};
  ByteWriter w(b);
  for (const SegmentRecord& r : records) {
    w.Put8(r.flags);
    w.Put16(r.seq);
    w.Put16(r.ack);
    w.Put8(static_cast<uint8_t>(r.payload.size()));
    b.insert(b.end(), r.payload.begin(),
             r.payload.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(8, r.payload.size())));
  }
  return b;
}

void TcpReassemblySeeds(Corpus& c) {
  const std::string dir = "fuzz_tcp_reassembly";
  constexpr uint8_t kS2C = 0x01, kSyn = 0x02, kFin = 0x04, kRst = 0x08, kAck = 0x10, kPort2 = 0x20, kNewIsn = 0x40;
  const SegmentRecord syn{kSyn, 0, 0, ""}, syn_ack{kS2C | kSyn | kAck, 0, 0, ""};
  Add(c, dir, "in_order",
      Segments(0, {syn,
                   syn_ack,
                   {kAck, 0, 0, "abcdefgh"},
                   {kAck, 8, 0, "ijklmnop"},
                   {kS2C | kAck, 0, 16, "reply"},
                   {kFin | kAck, 16, 5, ""},
                   {kS2C | kFin | kAck, 5, 17, ""}}));
  Add(c, dir, "out_of_order_retransmitted",
      Segments(0, {syn,
                   syn_ack,
                   {kAck, 16, 0, "qrstuvwx"},
                   {kAck, 8, 0, "ijklmnop"},
                   {kAck, 8, 0, "ijklmnop"},
                   {kAck, 0, 0, "abcdefgh"},
                   {kAck, 4, 0, "efghIJKL"}}));
  Add(c, dir, "gap_then_fin",
      Segments(0, {syn,
                   syn_ack,
                   {kAck, 0, 0, "abcdefgh"},
                   {kAck, 40, 0, "after gap"},
                   {kFin | kAck, 80, 0, ""},
                   {kS2C | kAck, 0, 90, ""}}));
  Add(c, dir, "wrapping_isn",
      Segments(0x04, {syn,
                      {kAck, 0, 0, std::string(200, 'w')},
                      {kAck, 200, 0, std::string(100, 'x')},
                      {kAck, 250, 0, std::string(120, 'y')}}));
  Add(c, dir, "small_cap",
      Segments(0x01,
               {syn, {kAck, 20, 0, "0123456789"}, {kAck, 40, 0, "0123456789"}, {kAck, 0, 0, "01234567890123456789"}}));
  Add(c, dir, "no_handshake_two_connections",
      Segments(0, {{kAck, 100, 0, "midstream"},
                   {kAck | kPort2, 0, 0, "other"},
                   {kAck, 90, 0, "earlier..."},
                   {kS2C | kAck, 3, 109, "answer"},
                   {kSyn | kPort2 | kNewIsn, 0, 0, ""},
                   {kAck | kPort2, 0, 0, "new"}}));
  Add(c, dir, "rst_and_after_fin",
      Segments(2, {syn,
                   {kFin | kAck, 0, 0, "last"},
                   {kAck, 4, 0, "too late"},
                   {kS2C | kRst | kAck, 0, 5, "reset text"},
                   {kAck, 3, 0, "x"}}));
}

// ---------------------------------------------------------------------------

bool WriteCorpus(const Corpus& c, const fs::path& out) {
  std::error_code ec;
  for (const auto& [dir, files] : c) {
    fs::remove_all(out / dir, ec);
    fs::create_directories(out / dir, ec);
    if (ec) {
      std::fprintf(stderr, "gen_corpus: cannot create %s: %s\n", (out / dir).c_str(), ec.message().c_str());
      return false;
    }
    for (const auto& [name, bytes] : files) {
      std::ofstream f(out / dir / name, std::ios::binary);
      f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      if (!f) {
        std::fprintf(stderr, "gen_corpus: cannot write %s\n", (out / dir / name).c_str());
        return false;
      }
    }
  }
  return true;
}

// Compares the generated corpus with the committed one, file by file.
int Compare(const Corpus& c, const fs::path& expected) {
  int problems = 0;
  for (const auto& [dir, files] : c) {
    std::map<std::string, Bytes> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(expected / dir, ec)) {
      std::ifstream f(e.path(), std::ios::binary);
      found[e.path().filename().string()] =
          Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    }
    for (const auto& [name, bytes] : files) {
      auto it = found.find(name);
      if (it == found.end()) {
        std::printf("missing in %s: %s/%s\n", expected.c_str(), dir.c_str(), name.c_str());
        ++problems;
      } else if (it->second != bytes) {
        std::printf("differs: %s/%s\n", dir.c_str(), name.c_str());
        ++problems;
      }
    }
    for (const auto& [name, bytes] : found) {
      if (!files.count(name)) {
        std::printf("not generated (stale?): %s/%s\n", dir.c_str(), name.c_str());
        ++problems;
      }
    }
  }
  if (problems != 0) {
    std::printf("%d difference(s): regenerate with gen_corpus %s and commit\n", problems, expected.c_str());
    return 1;
  }
  std::printf("corpus matches the generator\n");
  return 0;
}

// ---------------------------------------------------------------------------
// fuzz_session: binary-protobuf FuzzSessions (fuzz/session_seeds.h), a valid
// session of every message type per profile plus mixed ones.

void SessionSeeds(Corpus& c) {
  for (const rdmapct::fuzz::NamedSession& n : rdmapct::fuzz::SeedSessions()) {
    std::string octets;
    n.session.SerializeToString(&octets);
    Add(c, "fuzz_session", n.name, Bytes(octets.begin(), octets.end()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  // An output directory that starts with '-' is a mistyped option, not a place to write.
  if ((argc != 2 && !(argc == 4 && std::strcmp(argv[2], "--expect") == 0)) || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: %s <out_dir> [--expect <committed_corpus_dir>]\n", argv[0]);
    return 2;
  }
  Corpus c;
  DdpSegmentSeeds(c);
  TerminateSeeds(c);
  StartupFrameSeeds(c);
  UlpConventionSeeds(c);
  DeframerSeeds(c);
  ReassemblySeeds(c);
  FpduSeeds(c);
  HexSeeds(c);
  StreamDecodeSeeds(c);
  PcapReaderSeeds(c);
  TcpReassemblySeeds(c);
  SessionSeeds(c);
  if (!WriteCorpus(c, argv[1])) return 1;
  std::size_t files = 0, octets = 0;
  for (const auto& [dir, seeds] : c) {
    for (const auto& [name, bytes] : seeds) {
      ++files;
      octets += bytes.size();
    }
  }
  std::printf("%zu seeds, %zu octets in %zu corpora\n", files, octets, c.size());
  return argc == 4 ? Compare(c, argv[3]) : 0;
}
