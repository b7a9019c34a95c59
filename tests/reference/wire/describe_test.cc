#include "reference/wire/describe.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/ulp_convention.h"
#include "tests/reference/wire/mpa_figures.h"

namespace rdmapct::wire {
namespace {

// Decodes `stream` and describes every frame.
std::vector<Field> DescribeAll(ByteSpan stream, const StreamDecodeOptions& options = {}) {
  struct Sink : StreamDecodeSink {
    Profile profile;
    std::vector<Field> frames;
    void OnStartupFrame(const DecodedStartupFrame& f) override { frames.push_back(DescribeStartupFrame(f)); }
    void OnSegment(const DecodedSegment& s) override { frames.push_back(DescribeSegment(s, profile)); }
    void OnError(const StreamError&) override {}
  } sink;
  sink.profile = options.profile;
  (void)DecodeMpaStream(stream, options, sink);
  return std::move(sink.frames);
}

// The RDMAP node of one bare segment.
Field RdmapOf(const Bytes& segment, Profile profile = Profile::kCommit) {
  auto v = DecodeRdmapSegment(segment, profile, 0);
  if (!v.ok()) {
    ADD_FAILURE() << v.error().Describe();
    return Field{};
  }
  return DescribeRdmap(*v, profile, StreamOffsetMap{});
}

// A valid segment of `op` with its RDMAP header (all-zero fields).
Bytes ValidSegment(Opcode op) {
  switch (InfoFor(op).header) {
    case HeaderKind::kNone:
      return EncodeSegment(MakeSegment(op));
    case HeaderKind::kReadRequest:
      return EncodeSegment(MakeReadRequest(1, {}));
    case HeaderKind::kTerminate:
      return EncodeSegment(MakeTerminate(1, MakeTerminateHeader(term::kRdmapInvalidStag, nullptr, 0, nullptr)));
    case HeaderKind::kImmediateData:
      return EncodeSegment(MakeImmediateData(1, 5, op == Opcode::kImmediateDataWithSe));
    case HeaderKind::kAtomicRequest:
      return EncodeSegment(MakeAtomicRequest(1, {}));
    case HeaderKind::kAtomicResponse:
      return EncodeSegment(MakeAtomicResponse(1, {}));
    case HeaderKind::kFlushRequest:
      return EncodeSegment(MakeFlushRequest(1, {}));
    case HeaderKind::kVerifyRequest:
      return EncodeSegment(MakeVerifyRequest(1, {}));
    case HeaderKind::kVerifyResponse:
      return EncodeSegment(MakeVerifyResponse(1, {}));
    case HeaderKind::kAtomicWriteRequest:
      return EncodeSegment(MakeAtomicWriteRequest(1, {}));
  }
  return {};
}

const Field& Get(const Field& root, std::string_view name) {
  const Field* f = root.Find(name);
  EXPECT_NE(f, nullptr) << "no field " << name;
  static const Field kNone;
  return f != nullptr ? *f : kNone;
}

// ---- MPA ----------------------------------------------------------------------

// REQ R5044-4.4-T01: Figure 5 field by field at the offsets the figure shows.
TEST(DescribeFpdu, Figure5FieldsAtTheirOffsets_R5044_4_4_T01) {
  const auto frames = DescribeAll(testing::Figure5(), {.markers_enabled = true, .handshake = HandshakeMode::kAbsent});
  ASSERT_EQ(frames.size(), 1u);
  const Field& mpa = Get(frames[0], "MPA FPDU");
  EXPECT_EQ(mpa.offset, 0u);
  EXPECT_EQ(mpa.length, 0x34u);
  const Field& len = Get(mpa, "ULPDU_Length");
  EXPECT_EQ(len.offset, 4u);
  EXPECT_EQ(len.number, 42u);
  const Field& crc = Get(mpa, "CRC");
  EXPECT_EQ(crc.offset, 0x30u);
  EXPECT_EQ(crc.number, 0x83992352u);
  EXPECT_EQ(crc.value, "0x83992352 [ok]");
  EXPECT_EQ(Get(crc, "Computed CRC").number, 0x83992352u);
  const Field& marker = Get(mpa, "Marker");
  EXPECT_EQ(marker.offset, 0u);
  EXPECT_EQ(Get(marker, "FPDUPTR").number, 0u);
  const Field& msn = Get(frames[0], "MSN (Message Sequence Number)");
  EXPECT_EQ(msn.offset, 0x10u);
  EXPECT_EQ(msn.number, 1u);
  EXPECT_EQ(Get(frames[0], "RDMAP").value, "Send");
  EXPECT_EQ(Get(frames[0], "ULP Payload").offset, 0x18u);
}

TEST(DescribeFpdu, CrcVerdicts) {
  DecodedFpdu d;
  d.received_crc = 0x11111111;
  d.computed_crc = 0x22222222;
  d.crc_checked = true;
  d.crc_computed = true;
  d.crc_ok = false;
  Field f = DescribeFpdu(d);
  EXPECT_EQ(Get(f, "CRC").value, "0x11111111 [MISMATCH]");
  EXPECT_TRUE(Get(f, "CRC").problem);
  d.crc_checked = false;
  d.crc_ok = true;
  f = DescribeFpdu(d);
  EXPECT_EQ(Get(f, "CRC").value, "0x11111111 [not checked: CRCs off]");
  EXPECT_EQ(Get(f, "Computed CRC").number, 0x22222222u);
}

// REQ R6581-9-01: every bit of the enhanced word by name; the
// Advertisement in the Reply's Private Data.
TEST(DescribeStartupFrame, ReplyWithRfc6581WordAndAdvertisement_R6581_9_01) {
  MpaStartupFrame f;
  f.is_reply = true;
  f.crc_required = true;
  f.enhanced = true;
  f.revision = 2;
  f.enhanced_data = EnhancedIrdOrd{.peer_to_peer = true,
                                   .send_rtr = false,
                                   .ird = 5,
                                   .write_rtr = false,
                                   .read_rtr = true,
                                   .ord = kIrdOrdNotNegotiated};
  Advertisement a;
  a.ird = 5;
  a.regions = {{0xCAFE0001, 0x1000, 4096, kAccessRemoteRead, kAttrInvalidatable, 7, 16}};
  ASSERT_TRUE(EncodeAdvertisement(a, f.private_data).ok());
  const Bytes octets = EncodeMpaStartupFrame(f);
  const Field root = DescribeMpaStartupFrame(f, octets, 100);
  EXPECT_EQ(root.name, "MPA Reply Frame");
  EXPECT_EQ(Get(root, "Key").value, "\"MPA ID Rep Frame\"");
  EXPECT_EQ(Get(root, "R (Rejected Connection)").value, "0 (connection accepted)");
  EXPECT_EQ(Get(root, "C (CRC flag)").number, 1u);
  EXPECT_EQ(Get(root, "PD_Length").number, octets.size() - 20);
  const Field& word = Get(root, "RFC 6581 IRD/ORD");
  EXPECT_EQ(word.offset, 120u);
  EXPECT_EQ(Get(word, "A (peer-to-peer)").number, 1u);
  EXPECT_EQ(Get(word, "IRD").number, 5u);
  EXPECT_EQ(Get(word, "D (zero-length RDMA Read RTR)").number, 1u);
  EXPECT_EQ(Get(word, "ORD").value, "16383 (0x3fff) (no automatic negotiation)");
  EXPECT_EQ(BitPattern(Get(word, "IRD")), "..00 0000 0000 0101 .... .... .... ....");
  const Field& adv = Get(root, "Test-ULP Advertisement");
  EXPECT_EQ(adv.offset, 124u);
  EXPECT_EQ(Get(adv, "IRD").number, 5u);
  const Field& region = Get(adv, "Region 0");
  EXPECT_EQ(region.offset, 124u + 24);
  EXPECT_EQ(Get(region, "STag").number, 0xCAFE0001u);
  EXPECT_EQ(Get(region, "Attributes").value, "0x01 (invalidatable)");
}

TEST(DescribeStartupFrame, BadAdvertisementIsAProblemNotAFailure) {
  MpaStartupFrame f;
  f.is_reply = true;
  f.private_data = {0x52, 0x50, 0x43, 0x41, 0x09};  // magic, then a wrong major version, cut short
  const Bytes octets = EncodeMpaStartupFrame(f);
  const Field root = DescribeMpaStartupFrame(f, octets, 0);
  const Field& adv = Get(root, "Test-ULP Advertisement");
  EXPECT_TRUE(adv.problem);
  EXPECT_NE(adv.value.find("undecodable"), std::string::npos);
}

// ---- DDP / RDMAP ------------------------------------------------------------------

// REQ R5041-4.1-01: T, L, Rsvd, DV as bit fields of the DDP Control octet.
TEST(DescribeDdpHeader, ControlBitsAndTaggedFields_R5041_4_1_01) {
  DdpSegmentHeader h;
  h.tagged = true;
  h.last = false;
  h.rsvd = 0x5;
  h.ddp_version = 2;
  h.stag = 0x01020304;
  h.tagged_offset = 0x1122334455667788;
  StreamOffsetMap m;
  m.start = 40;
  const Field f = DescribeDdpHeader(h, m);
  const Field& ctrl = Get(f, "DDP Control");
  EXPECT_EQ(ctrl.number, 0x96u);
  EXPECT_EQ(BitPattern(Get(ctrl, "T (Tagged flag)")), "1... ....");
  EXPECT_EQ(BitPattern(Get(ctrl, "L (Last flag)")), ".0.. ....");
  EXPECT_EQ(BitPattern(Get(ctrl, "Rsvd")), "..01 01..");
  EXPECT_EQ(BitPattern(Get(ctrl, "DV (DDP Version)")), ".... ..10");
  EXPECT_TRUE(Get(ctrl, "DV (DDP Version)").problem);
  EXPECT_EQ(Get(f, "STag").offset, 42u);
  EXPECT_EQ(Get(f, "TO (Tagged Offset)").offset, 46u);
  EXPECT_EQ(Get(f, "TO (Tagged Offset)").value, "0x1122334455667788");
}

// Every opcode of every profile appears with its RFC name (RFC 5040 Fig. 4,
// RFC 7306 Fig. 2, COMMIT Table 1); outside its profile it is shown as unknown.
TEST(DescribeRdmap, EveryOpcodeByItsRfcNameInEveryProfile) {
  for (const OpcodeInfo& info : kOpcodeTable) {
    for (Profile p : {Profile::kRfc5040, Profile::kRfc7306, Profile::kCommit}) {
      if (info.opcode >= Opcode::kAtomicWriteRequest && p != Profile::kCommit) continue;  // 5-bit opcodes
      const Field r = RdmapOf(ValidSegment(info.opcode), p);
      const Field& op = Get(r, "Opcode");
      SCOPED_TRACE(std::string(info.name) + " under " + std::string(ProfileName(p)));
      EXPECT_EQ(op.number, static_cast<uint8_t>(info.opcode));
      if (ProfileIncludes(p, info.min_profile)) {
        EXPECT_EQ(r.value, info.name);
        EXPECT_NE(op.value.find(std::string("(") + info.name + ")"), std::string::npos) << op.value;
        EXPECT_FALSE(op.problem);
      } else {
        EXPECT_EQ(r.value.rfind("Unknown opcode", 0), 0u) << r.value;
        EXPECT_NE(op.value.find("not defined by profile"), std::string::npos);
        EXPECT_TRUE(op.problem);
      }
    }
  }
}

TEST(DescribeRdmap, ControlFieldWidthFollowsTheProfile_D1) {
  const Bytes seg = ValidSegment(Opcode::kAtomicWriteRequest);  // control octet 0x50
  EXPECT_EQ(BitPattern(Get(RdmapOf(seg, Profile::kCommit), "Opcode")), "...1 0000");
  EXPECT_EQ(BitPattern(Get(RdmapOf(seg, Profile::kCommit), "Rsv")), "..0. ....");
  const Field legacy = RdmapOf(seg, Profile::kRfc7306);
  EXPECT_EQ(BitPattern(Get(legacy, "Opcode")), ".... 0000");
  EXPECT_EQ(Get(legacy, "Rsv").number, 1u);
  EXPECT_EQ(legacy.value, "RDMA Write");
  // Untagged RDMA Write: the T flag disagrees with the opcode (decisions D-D1).
  EXPECT_NE(Get(legacy, "Note").value.find("Tagged Buffer Model"), std::string::npos);
}

// REQ R5040-4.2-T02: Figure 6 names at offsets 0, 4, 12, 16, 20 of the header.
TEST(DescribeRdmap, ReadRequestHeaderByFigure6Names_R5040_4_2_T02) {
  const ReadRequestHeader h{0xA1, 0xB2, 4096, 0xC3, 0xD4};
  const Field r = RdmapOf(EncodeSegment(MakeReadRequest(1, h)));
  const Field& hdr = Get(r, "RDMA Read Request Header");
  EXPECT_EQ(hdr.offset, 18u);
  EXPECT_EQ(Get(hdr, "SinkSTag (Data Sink STag)").number, 0xA1u);
  EXPECT_EQ(Get(hdr, "SinkTO (Data Sink Tagged Offset)").offset, 22u);
  EXPECT_EQ(Get(hdr, "RDMARDSZ (RDMA Read Message Size)").value, "4096 (0x00001000)");
  EXPECT_EQ(Get(hdr, "SrcSTag (Data Source STag)").offset, 34u);
  EXPECT_EQ(Get(hdr, "SrcTO (Data Source Tagged Offset)").number, 0xD4u);
  EXPECT_EQ(Get(r, "Invalidate STag").offset, 2u);
}

// REQ R5040-4.8-03: Terminate Control bits, names from the registry, the
// terminated DDP header (with its opcode) and RDMA header decoded.
TEST(DescribeRdmap, TerminateEchoingAReadRequest_R5040_4_8_03) {
  const ReadRequestHeader rrh{0xA1, 0xB2, 64, 0xC3, 0xD4};
  const RdmapSegment rr = MakeReadRequest(7, rrh);
  const TerminateHeader th = MakeTerminateHeader(term::kRdmapAccessRightsViolation, &rr.ddp, 46, &rrh);
  const Field r = RdmapOf(EncodeSegment(MakeTerminate(1, th)));
  const Field& t = Get(r, "Terminate Header");
  EXPECT_EQ(t.value, "RDMAP / Remote Protection Error / Access rights violation");
  const Field& ctrl = Get(t, "Terminate Control");
  EXPECT_EQ(ctrl.number, 0x0102E000u);
  EXPECT_EQ(Get(ctrl, "Layer").value, "0x0 (RDMAP)");
  EXPECT_EQ(Get(ctrl, "EType (Error Type)").value, "0x1 (Remote Protection Error)");
  EXPECT_EQ(Get(ctrl, "Error Code").value, "0x02 (Access rights violation)");
  EXPECT_EQ(BitPattern(Get(ctrl, "D (DDP Header Included)")), ".... .... .... .... .1.. .... .... ....");
  EXPECT_EQ(Get(t, "DDP Segment Length").offset, 18u + 4);
  const Field& tddp = Get(t, "Terminated DDP Header");
  EXPECT_EQ(tddp.offset, 18u + 6);
  EXPECT_EQ(Get(tddp, "MSN (Message Sequence Number)").number, 7u);
  EXPECT_NE(Get(tddp, "Opcode").value.find("RDMA Read Request"), std::string::npos);
  const Field& trdma = Get(t, "Terminated RDMA Header");
  EXPECT_EQ(trdma.offset, 18u + 24);
  EXPECT_EQ(Get(trdma, "SrcSTag (Data Source STag)").number, 0xC3u);
}

TEST(DescribeRdmap, FixedFormTerminateWithTaggedEcho) {
  const RdmapSegment w = MakeRdmaWrite(0x77, 0x88, {});
  TerminateHeader th = MakeTerminateHeader(term::kDdpTaggedInvalidStag, &w.ddp, 14, nullptr, TerminateForm::kFixed);
  th.fixed_ddp_area_tail = 0xDEADBEEF;
  const Field r = RdmapOf(EncodeSegment(MakeTerminate(1, th)));
  const Field& t = Get(r, "Terminate Header");
  EXPECT_NE(Get(t, "Layout").value.find("fixed 52 octets"), std::string::npos);
  EXPECT_EQ(Get(t, "Terminated DDP Header").value, "tagged (14-octet header)");
  EXPECT_EQ(Get(t, "DDP Header area tail").number, 0xDEADBEEFu);
  EXPECT_EQ(Get(t, "DDP Header area tail").offset, 18u + 6 + 14);
  EXPECT_EQ(Get(t, "Terminated RDMA Header").offset, 18u + 24);
}

TEST(DescribeRdmap, UnassignedTerminateCodeIsFlagged) {
  TerminateHeader th = MakeTerminateHeader({0x0, 0x2, 0x42}, nullptr, 0, nullptr);
  const Field r = RdmapOf(EncodeSegment(MakeTerminate(1, th)));
  EXPECT_EQ(Get(r, "Error Code").value, "0x42 (Unassigned)");
  EXPECT_TRUE(Get(r, "Error Code").problem);
}

// RFC 7306 Figures 4 and 5.
TEST(DescribeRdmap, AtomicRequestFieldsAndAOpCodeNames_R7306_4_2_T03) {
  AtomicRequestHeader h;
  h.atomic_opcode = static_cast<uint8_t>(AtomicOpcode::kCmpSwap);
  h.request_identifier = 9;
  h.remote_stag = 0xABCD;
  h.compare_data = 5;
  const Field r = RdmapOf(EncodeSegment(MakeAtomicRequest(1, h)));
  const Field& a = Get(r, "Atomic Request Header");
  EXPECT_EQ(Get(a, "AOpCode (Atomic Operation Code)").value, "0x2 (CmpSwap)");
  EXPECT_EQ(Get(a, "Request Identifier").offset, 18u + 4);
  EXPECT_EQ(Get(a, "Remote STag").number, 0xABCDu);
  EXPECT_EQ(Get(a, "Compare Data").offset, 18u + 36);
  EXPECT_EQ(Get(a, "Compare Mask").offset, 18u + 44);
  h.atomic_opcode = 1;
  const Field bad = RdmapOf(EncodeSegment(MakeAtomicRequest(1, h)));
  EXPECT_EQ(Get(bad, "AOpCode (Atomic Operation Code)").value, "0x1 (Reserved)");
  EXPECT_TRUE(Get(bad, "AOpCode (Atomic Operation Code)").problem);
}

// COMMIT §3.1.1-3.1.3.
TEST(DescribeRdmap, CommitHeaders_RCOMMIT_3_1_T07) {
  const Field flush = RdmapOf(EncodeSegment(MakeFlushRequest(1, {0xE1, 512, 0x40, 0x3})));
  EXPECT_EQ(Get(flush, "Data Sink Length").number, 512u);
  EXPECT_EQ(Get(flush, "G (Flush to Global Visibility)").number, 1u);
  EXPECT_EQ(Get(flush, "P (Flush to Persistence)").number, 1u);
  const uint8_t hash[] = {1, 2, 3};
  const Field verify = RdmapOf(EncodeSegment(MakeVerifyRequest(1, {0xE2, 8, 0, ByteSpan(hash)})));
  EXPECT_EQ(Get(verify, "Hash Value").offset, 18u + 16);
  EXPECT_EQ(*Get(verify, "Hash Value").octets, Bytes({1, 2, 3}));
  const Field aw = RdmapOf(EncodeSegment(MakeAtomicWriteRequest(1, {0xE3, 8, 0x80, 0x0102030405060708})));
  EXPECT_EQ(Get(aw, "Data").value, "0x0102030405060708");
  EXPECT_EQ(Get(aw, "Data").offset, 18u + 16);
}

TEST(DescribeSegment, UndecodableSegmentKeepsTheDdpHeaderAndTheOctets) {
  Bytes rr = EncodeSegment(MakeReadRequest(1, {}));
  rr.resize(20);
  struct Sink : StreamDecodeSink {
    std::vector<Field> frames;
    void OnStartupFrame(const DecodedStartupFrame&) override {}
    void OnSegment(const DecodedSegment& s) override { frames.push_back(DescribeSegment(s, Profile::kCommit)); }
    void OnError(const StreamError&) override {}
  } sink;
  const std::vector<ByteSpan> segs = {rr};
  (void)DecodeDdpSegments(segs, {}, sink);
  ASSERT_EQ(sink.frames.size(), 1u);
  const Field& f = sink.frames[0];
  EXPECT_EQ(f.value, "undecodable DDP Segment, DDP Segment at offset 0, 20 octets");
  EXPECT_EQ(Get(f, "MSN (Message Sequence Number)").number, 1u);
  EXPECT_NE(Get(f, "Opcode").value.find("RDMA Read Request"), std::string::npos);
  EXPECT_EQ(Get(f, "Undecodable").value, "truncated in SinkSTag at offset 18 (value 0x2)");
  EXPECT_EQ(Get(f, "ULPDU").octets->size(), 20u);
}

// ---- text ------------------------------------------------------------------------

TEST(RenderText, TsharkStyleBlock) {
  const Bytes seg = EncodeSegment(MakeRdmaWrite(0xAB01, 0x1000, Bytes{0x41, 0x42}));
  struct Sink : StreamDecodeSink {
    std::string text;
    void OnStartupFrame(const DecodedStartupFrame&) override {}
    void OnSegment(const DecodedSegment& s) override { text = RenderText(DescribeSegment(s, Profile::kCommit)); }
    void OnError(const StreamError&) override {}
  } sink;
  const std::vector<ByteSpan> segs = {seg};
  (void)DecodeDdpSegments(segs, {}, sink);
  EXPECT_EQ(sink.text,
            "Frame 1: RDMA Write (STag 0x0000ab01, TO 0x1000), DDP Segment at offset 0, 16 octets\n"
            "    DDP Segment: tagged (14-octet header)\n"
            "        DDP Control: 0xc1\n"
            "            1... .... = T (Tagged flag): 1 (Tagged Buffer Model)\n"
            "            .1.. .... = L (Last flag): 1 (last segment of the DDP Message)\n"
            "            ..00 00.. = Rsvd: 0\n"
            "            .... ..01 = DV (DDP Version): 1\n"
            "        RsvdULP: 0x40 (RDMAP Control Field)\n"
            "        STag: 0x0000ab01\n"
            "        TO (Tagged Offset): 0x0000000000001000\n"
            "    RDMAP: RDMA Write\n"
            "        RDMAP Control Field: 0x40\n"
            "            01.. .... = RV (RDMA Version): 1\n"
            "            ..0. .... = Rsv: 0\n"
            "            ...0 0000 = Opcode: 0x00 (RDMA Write)\n"
            "    ULP Payload: 2 octets\n"
            "        0000  41 42                                             AB\n");
}

TEST(RenderText, HexdumpLimitAndOffsets) {
  Field f;
  f.name = "ULP Payload";
  f.value = "40 octets";
  f.offset = 7;
  f.length = 40;
  f.octets = Bytes(40, 0x61);
  const std::string cut = RenderText(f, {.max_octets = 16});
  EXPECT_NE(cut.find("... 24 more octets (-v shows all)"), std::string::npos) << cut;
  EXPECT_EQ(cut.find("0010 "), std::string::npos);
  const std::string all = RenderText(f, {.max_octets = SIZE_MAX, .show_offsets = true});
  EXPECT_NE(all.find("0020  61"), std::string::npos);
  EXPECT_EQ(all.rfind("ULP Payload: 40 octets [offset 7, length 40]\n", 0), 0u) << all;
}

}  // namespace
}  // namespace rdmapct::wire
