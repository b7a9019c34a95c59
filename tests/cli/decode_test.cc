// `rdmapct decode` end to end: runs the built binary (RDMAPCT_BINARY) on the
// committed example streams and on corrupted copies, and checks stdout,
// stderr and the exit status.
//
// Golden files: tests/cli/golden/<stream>.txt hold the text output of each
// example stream decoded with the command in its "# Decode:" header line.
// After an intended output change, regenerate them with
//   RDMAPCT_UPDATE_GOLDEN=1 build/tests/cli_test --gtest_filter='DecodeGolden.*'
// and review the diff.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "reference/wire/crc32c.h"
#include "reference/wire/hex.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/profile.h"
#include "tests/cli/cli_test_util.h"

#ifndef RDMAPCT_BINARY
#error "RDMAPCT_BINARY (path of the rdmapct executable) must be defined by the build"
#endif

namespace rdmapct::cli {
namespace {

using test_util::Quote;
using test_util::ReadFile;
using test_util::SourceDir;
using test_util::WriteFile;

namespace fs = std::filesystem;
using wire::Bytes;

struct RunResult : test_util::Outcome {
  int Frames() const {
    int n = 0;
    for (std::size_t at = 0; (at = out.find("\nFrame ", at)) != std::string::npos; ++at) ++n;
    return n + (out.rfind("Frame ", 0) == 0 ? 1 : 0);
  }
};

// Runs `rdmapct <args>` in the source directory (so relative example paths
// work as in the README); `stdin_data` is fed to standard input.
RunResult Rdmapct(const std::string& args, const std::string& stdin_data = "") {
  return RunResult{test_util::RunRdmapct(args, stdin_data)};
}

fs::path Streams() { return fs::path(SourceDir()) / "examples" / "streams"; }

// Octets of a committed example stream.
Bytes StreamOctets(const std::string& name) {
  auto r = wire::ParseHex(ReadFile(Streams() / (name + ".hex")));
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : Bytes{};
}

// Writes `data` to a temporary file and returns its path.
std::string TempFile(const std::string& name, const Bytes& data) {
  const fs::path p = fs::path(::testing::TempDir()) / ("rdmapct_decode_" + std::to_string(::getpid()) + "_" + name);
  WriteFile(p, std::string(data.begin(), data.end()));
  return p.string();
}

// The flags in a stream's "# Decode: rdmapct decode <flags> <path>" line.
std::string DecodeLine(const fs::path& stream) {
  std::istringstream in(ReadFile(stream));
  for (std::string line; std::getline(in, line);) {
    const std::string tag = "# Decode: rdmapct decode ";
    if (line.rfind(tag, 0) == 0) return line.substr(tag.size());
  }
  return {};
}

nlohmann::json Json(const RunResult& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 400);
  return j;
}

// The first descendant of `node` (depth first) called `name`.
const nlohmann::json* Find(const nlohmann::json& node, const std::string& name) {
  if (node.contains("name") && node["name"] == name) return &node;
  if (node.contains("children")) {
    for (const auto& c : node["children"]) {
      if (const auto* f = Find(c, name)) return f;
    }
  }
  return nullptr;
}

const nlohmann::json& Get(const nlohmann::json& node, const std::string& name) {
  const nlohmann::json* f = Find(node, name);
  static const nlohmann::json kNull = nlohmann::json::object();
  EXPECT_NE(f, nullptr) << "no field " << name;
  return f != nullptr ? *f : kNull;
}

// ---- golden output -------------------------------------------------------------

TEST(DecodeGolden, EveryExampleStreamMatchesItsGoldenText) {
  const bool update = std::getenv("RDMAPCT_UPDATE_GOLDEN") != nullptr;
  std::vector<fs::path> streams;
  for (const auto& e : fs::directory_iterator(Streams())) {
    if (e.path().extension() == ".hex") streams.push_back(e.path());
  }
  ASSERT_GE(streams.size(), 9u);
  for (const fs::path& s : streams) {
    SCOPED_TRACE(s.filename().string());
    const std::string line = DecodeLine(s);
    ASSERT_FALSE(line.empty()) << "no '# Decode:' line";
    const RunResult r = Rdmapct("decode " + line);  // exactly the documented command
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const fs::path golden = fs::path(SourceDir()) / "tests" / "cli" / "golden" / (s.stem().string() + ".txt");
    if (update) {
      WriteFile(golden, r.out);
      continue;
    }
    EXPECT_EQ(r.out, ReadFile(golden)) << "regenerate with RDMAPCT_UPDATE_GOLDEN=1 if intended";
  }
}

// The README's main command, verbatim.
TEST(DecodeGolden, ReadmeMainCommand) {
  const RunResult r = Rdmapct("decode --mpa --markers off --crc on examples/streams/all-opcodes-commit.hex");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.Frames(), 19);  // the Request Frame and one FPDU for each of the 18 opcodes
}

// ---- every opcode, by name, in each profile -------------------------------------------

TEST(DecodeOpcodes, EveryOpcodeOfEveryProfileAppearsWithItsRfcName) {
  for (wire::Profile p : {wire::Profile::kRfc5040, wire::Profile::kRfc7306, wire::Profile::kCommit}) {
    const std::string pn(wire::ProfileName(p));
    SCOPED_TRACE(pn);
    const RunResult r = Rdmapct("decode --json --profile " + pn + " examples/streams/all-opcodes-" + pn + ".hex");
    ASSERT_EQ(r.status, 0) << r.err;
    std::set<std::string> seen;
    const nlohmann::json j = Json(r);
    for (const auto& frame : j["frames"]) {
      if (const auto* rdmap = Find(frame, "RDMAP")) {
        seen.insert((*rdmap)["value"].get<std::string>());
        const auto& op = Get(*rdmap, "Opcode");
        EXPECT_NE(op["value"].get<std::string>().find((*rdmap)["value"].get<std::string>()), std::string::npos);
      }
    }
    std::set<std::string> expected;
    for (const wire::OpcodeInfo& info : wire::kOpcodeTable) {
      if (wire::ProfileIncludes(p, info.min_profile)) expected.insert(info.name);
    }
    EXPECT_EQ(seen, expected);
    EXPECT_EQ(r.out.find("Unknown opcode"), std::string::npos);
    // The text output names every opcode too.
    const RunResult text = Rdmapct("decode --profile " + pn + " examples/streams/all-opcodes-" + pn + ".hex");
    for (const std::string& name : expected) {
      EXPECT_NE(text.out.find("(" + name + ")\n"), std::string::npos) << name;
    }
  }
}

// ---- JSON, field by field --------------------------------------------------------------

TEST(DecodeJson, FieldsOfTheCommitStream) {
  const RunResult r = Rdmapct("decode --json examples/streams/all-opcodes-commit.hex");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = Json(r);
  EXPECT_EQ(j["options"]["profile"], "commit");
  EXPECT_EQ(j["options"]["crc"], true);
  EXPECT_EQ(j["errors"].size(), 0u);
  const auto& frames = j["frames"];
  ASSERT_EQ(frames.size(), 19u);
  // Frame 1: the MPA Request Frame.
  EXPECT_EQ(Get(frames[0], "Key")["value"], "\"MPA ID Req Frame\"");
  EXPECT_EQ(Get(frames[0], "Rev")["number"], 2);
  EXPECT_EQ(Get(frames[0], "C (CRC flag)")["number"], 1);
  EXPECT_EQ(Get(frames[0], "IRD")["number"], 8);
  // Frame 3: RDMA Read Request at stream offset 60 (24 + 36).
  const auto& rr = frames[2];
  EXPECT_EQ(Get(rr, "MPA FPDU")["offset"], 60);
  EXPECT_EQ(Get(rr, "ULPDU_Length")["number"], 46);
  EXPECT_EQ(Get(rr, "QN (Queue Number)")["number"], 1);
  const auto& sink = Get(rr, "SinkSTag (Data Sink STag)");
  EXPECT_EQ(sink["number"], 0xAA01);
  EXPECT_EQ(sink["offset"], 60 + 2 + 18);
  EXPECT_EQ(sink["length"], 4);
  EXPECT_EQ(Get(rr, "RDMARDSZ (RDMA Read Message Size)")["number"], 4096);
  EXPECT_EQ(Get(rr, "SrcTO (Data Source Tagged Offset)")["number"], 0x3000);
  // Its CRC: received equals computed, and equals CRC-32C of the FPDU octets.
  const Bytes octets = StreamOctets("all-opcodes-commit");
  const uint32_t crc = wire::Crc32c(wire::ByteSpan(octets).subspan(60, 48));
  EXPECT_EQ(Get(rr, "CRC")["number"], crc);
  EXPECT_EQ(Get(rr, "CRC")["offset"], 108);
  EXPECT_EQ(Get(rr, "Computed CRC")["number"], crc);
  // Bit fields carry their position.
  const auto& t = Get(frames[1], "T (Tagged flag)");
  EXPECT_EQ(t["number"], 1);
  EXPECT_EQ(t["bit_shift"], 7);
  EXPECT_EQ(t["bit_width"], 1);
  // The Terminate (last frame) echoes the Read Request.
  const auto& term = frames[18];
  EXPECT_EQ(Get(term, "Terminate Header")["value"], "RDMAP / Remote Protection Error / Invalid STag");
  EXPECT_EQ(Get(term, "D (DDP Header Included)")["number"], 1);
  EXPECT_EQ(Get(term, "R (RDMAP Header Included)")["number"], 1);
  EXPECT_EQ(Get(term, "DDP Segment Length")["number"], 46);
  EXPECT_NE(Get(Get(term, "Terminated DDP Header"), "Opcode")["value"].get<std::string>().find("RDMA Read Request"),
            std::string::npos);
  EXPECT_EQ(Get(Get(term, "Terminated RDMA Header"), "SrcSTag (Data Source STag)")["number"], 0xBB01);
  // Payload octets as hex.
  EXPECT_EQ(Get(frames[1], "ULP Payload")["octets"], "52 44 4d 41 20 57 72 69 74 65 20 64 61 74 61 2e");
}

TEST(DecodeJson, MarkersAndResponderAdvertisement) {
  const RunResult m = Rdmapct("decode --json --markers on examples/streams/multi-segment.hex");
  ASSERT_EQ(m.status, 0) << m.err;
  int markers = 0;
  const nlohmann::json mj = Json(m);
  for (const auto& frame : mj["frames"]) {
    if (const auto* ms = Find(frame, "Markers")) {
      for (const auto& mk : (*ms)["children"]) {
        EXPECT_EQ((mk["offset"].get<uint64_t>() - 24) % 512, 0u);  // SeqStart = 24, after the Request Frame
        const auto& ptr = Get(mk, "FPDUPTR");
        EXPECT_EQ(ptr["number"].get<uint64_t>(),
                  mk["offset"].get<uint64_t>() == Get(frame, "MPA FPDU")["offset"].get<uint64_t>()
                      ? 0u
                      : mk["offset"].get<uint64_t>() - Get(frame, "ULPDU_Length")["offset"].get<uint64_t>());
        ++markers;
      }
    }
  }
  EXPECT_GE(markers, 4);
  const RunResult a = Rdmapct("decode --json examples/streams/responder-commit.hex");
  ASSERT_EQ(a.status, 0) << a.err;
  const nlohmann::json aj = Json(a);
  const auto& reply = aj["frames"][0];
  EXPECT_NE(Find(reply, "MPA Reply Frame"), nullptr);
  EXPECT_EQ(Get(reply, "Region Count")["number"], 3);
  EXPECT_EQ(Get(Get(reply, "Region 2"), "STag")["number"], 0xBB03);
}

// ---- framing options -------------------------------------------------------------------

TEST(DecodeFraming, MarkersOnAndOff) {
  const RunResult on = Rdmapct("decode --markers on examples/streams/all-opcodes-commit-markers.hex");
  EXPECT_EQ(on.status, 0) << on.err;
  EXPECT_NE(on.out.find("FPDUPTR"), std::string::npos);
  EXPECT_EQ(on.Frames(), 19);
  // Read without Markers, the leading Marker's zeros are taken for ULPDU_Length 0.
  const RunResult off = Rdmapct("decode --markers off examples/streams/all-opcodes-commit-markers.hex");
  EXPECT_EQ(off.status, 1);
  EXPECT_EQ(off.err.rfind("rdmapct decode: error: ", 0), 0u) << off.err;
  EXPECT_EQ(off.out.find("FPDUPTR"), std::string::npos);
}

TEST(DecodeFraming, CrcOnAndOff) {
  Bytes octets = StreamOctets("all-opcodes-rfc5040");
  octets[24 + 36 + 52 - 1] ^= 0xFF;  // last CRC octet of frame 3 (RDMA Read Request)
  const std::string file = TempFile("crc_off.bin", octets);
  const RunResult off = Rdmapct("decode --crc off " + Quote(file));
  EXPECT_EQ(off.status, 0) << off.err;
  EXPECT_EQ(off.err, "");
  EXPECT_NE(off.out.find("[not checked: CRCs off]"), std::string::npos);
  EXPECT_EQ(off.out.find("[ok]"), std::string::npos);
  const RunResult on = Rdmapct("decode --crc on " + Quote(file));
  EXPECT_EQ(on.status, 1);
  EXPECT_NE(on.out.find("[MISMATCH]"), std::string::npos);
}

TEST(DecodeFraming, DdpSegmentsHexAndBinary) {
  const RunResult hex = Rdmapct("decode --ddp examples/streams/ddp-segments.hex");
  EXPECT_EQ(hex.status, 0) << hex.err;
  EXPECT_EQ(hex.Frames(), 18);
  EXPECT_EQ(hex.out.find("MPA FPDU"), std::string::npos);
  // A binary file is one segment.
  auto lines = wire::ParseHexLines(ReadFile(Streams() / "ddp-segments.hex"));
  ASSERT_TRUE(lines.ok());
  const RunResult bin = Rdmapct("decode --ddp --format binary " + Quote(TempFile("seg.bin", (*lines)[1].octets)));
  EXPECT_EQ(bin.status, 0) << bin.err;
  EXPECT_EQ(bin.Frames(), 1);
  EXPECT_NE(bin.out.find("RDMA Read Request"), std::string::npos);
}

TEST(DecodeInput, BinaryFileStdinAndHexArgumentGiveTheSameFrames) {
  const Bytes octets = StreamOctets("all-opcodes-rfc7306");
  const RunResult ref = Rdmapct("decode examples/streams/all-opcodes-rfc7306.hex");
  ASSERT_EQ(ref.status, 0);
  const RunResult bin = Rdmapct("decode " + Quote(TempFile("stream_no_ext", octets)));  // sniffed as binary
  EXPECT_EQ(bin.out, ref.out);
  const RunResult in = Rdmapct("decode --format binary -", std::string(octets.begin(), octets.end()));
  EXPECT_EQ(in.out, ref.out);
  const RunResult arg = Rdmapct("decode --hex " + Quote("0x" + wire::HexOctets(octets)));
  EXPECT_EQ(arg.out, ref.out);
}

TEST(DecodeInput, OffsetsOfEveryField) {
  const RunResult r = Rdmapct("decode --offsets examples/streams/all-opcodes-commit.hex");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("    MPA FPDU: offset 24, 36 octets on the wire [offset 24, length 36]\n"), std::string::npos);
  EXPECT_NE(r.out.find("        STag: 0x0000ab01 [offset 28, length 4]\n"), std::string::npos);
}

TEST(DecodeInput, VerboseDumpsEveryPayloadOctet) {
  const RunResult brief = Rdmapct("decode --markers on examples/streams/multi-segment.hex");
  EXPECT_NE(brief.out.find("more octets (-v shows all)"), std::string::npos);
  const RunResult all = Rdmapct("decode -v --markers on examples/streams/multi-segment.hex");
  EXPECT_EQ(all.out.find("more octets"), std::string::npos);
  EXPECT_NE(all.out.find("00e0  "), std::string::npos);  // the last row of a 238-octet payload
}

// ---- bad input --------------------------------------------------------------------------

TEST(DecodeErrors, BadHexDigitAndOddCount) {
  const RunResult r = Rdmapct("decode --hex '4d 50 4x'");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "rdmapct decode: error: invalid hex digit 'x' at offset 7 (line 1, column 8) in --hex\n");
  const std::string file = TempFile("odd.hex", Bytes{'#', ' ', 'x', '\n', '4', 'd', ' ', '5'});
  const RunResult odd = Rdmapct("decode " + Quote(file));
  EXPECT_EQ(odd.status, 1);
  EXPECT_EQ(odd.err,
            "rdmapct decode: error: odd number of hex digits (3), the last one at offset 7 (line 2, column 4) in " +
                file + "\n");
}

// REQ R5044-6-04: the stream ends inside an FPDU; everything before is printed.
TEST(DecodeErrors, TruncatedFpduAfterTheFramesBeforeIt) {
  Bytes octets = StreamOctets("all-opcodes-rfc5040");
  octets.resize(octets.size() - 10);  // cut into the Terminate at offset 276
  const RunResult r = Rdmapct("decode " + Quote(TempFile("trunc.bin", octets)));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "rdmapct decode: error: truncated in FPDU at offset 276 (value 0x42)\n");
  EXPECT_EQ(r.Frames(), 8);
  EXPECT_NE(r.out.find("Frame 8: Send with Solicited Event and Invalidate"), std::string::npos);
}

// REQ R5044-4.4-15: a bad CRC stops decoding at the CRC field's offset.
TEST(DecodeErrors, BadCrcWithTheExactOffset_R5044_4_4_15) {
  Bytes octets = StreamOctets("all-opcodes-rfc5040");
  octets[148 + 2 + 12] ^= 0x01;  // frame 5 (Send at offset 148): MSN 1 becomes 257
  const std::string file = TempFile("badcrc.bin", octets);
  const RunResult r = Rdmapct("decode " + Quote(file));
  EXPECT_EQ(r.status, 1);
  const uint32_t received = wire::LoadCrc32c(octets.data() + 148 + 28);
  const uint32_t computed = wire::Crc32c(wire::ByteSpan(octets).subspan(148, 28));
  char expect[200];
  std::snprintf(expect, sizeof expect,
                "rdmapct decode: error: CRC mismatch in CRC at offset 176: received CRC 0x%08x, computed "
                "0x%08x (frame 5)\n",
                received, computed);
  EXPECT_EQ(r.err, expect);
  EXPECT_EQ(r.Frames(), 5);  // frames 1-4 and the bad FPDU itself
  EXPECT_NE(r.out.find("Frame 5: Send (QN 0, MSN 257, MO 0), FPDU at offset 148, 32 octets, CRC MISMATCH"),
            std::string::npos);
  // The JSON document stays valid after a fatal error and carries it.
  const RunResult fatal = Rdmapct("decode --json " + Quote(file));
  EXPECT_EQ(fatal.status, 1);
  const auto fj = Json(fatal);
  EXPECT_EQ(fj["frames"].size(), 5u);
  ASSERT_EQ(fj["errors"].size(), 1u);
  EXPECT_EQ(fj["errors"][0]["fatal"], true);
  EXPECT_EQ(fj["errors"][0]["field"], "CRC");
  EXPECT_EQ(Get(fj["frames"][4], "CRC")["problem"], true);
  const RunResult go_on = Rdmapct("decode --continue " + Quote(file));
  EXPECT_EQ(go_on.status, 1);
  EXPECT_EQ(go_on.err, r.err);
  EXPECT_EQ(go_on.Frames(), 9);
  const RunResult json = Rdmapct("decode --json --continue " + Quote(file));
  const auto j = Json(json);
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"][0]["offset"], 176);
  EXPECT_EQ(j["errors"][0]["kind"], "CRC mismatch");
  EXPECT_EQ(j["errors"][0]["fatal"], false);
  EXPECT_EQ(j["frames"].size(), 9u);
}

// REQ R5044-7.1.1-03: a wrong Key octet, at its offset.
TEST(DecodeErrors, BadMpaKey_R5044_7_1_1_03) {
  Bytes octets = StreamOctets("all-opcodes-rfc5040");
  octets[13] = 'o';
  const RunResult r = Rdmapct("decode --handshake yes " + Quote(TempFile("badkey.bin", octets)));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(
      r.err,
      "rdmapct decode: error: bad MPA key in Key (expected \"MPA ID Req Frame\" or \"MPA ID Rep Frame\") at offset 13 "
      "(value 0x6f) (frame 1)\n");
}

TEST(DecodeErrors, UnknownOpcodesAreShownNotFatal) {
  // RFC 7306 opcodes under rfc5040: Unexpected OpCode, shown and flagged.
  const RunResult r = Rdmapct("decode --profile rfc5040 examples/streams/all-opcodes-rfc7306.hex");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Frame 9: Unknown opcode 0x08 (QN 0, MSN 5, MO 0)"), std::string::npos);
  EXPECT_NE(r.out.find("Opcode: 0x0b (unknown: not defined by profile rfc5040, Unexpected OpCode; Atomic "
                       "Response under rfc7306) [!]"),
            std::string::npos);
  // A 5-bit opcode nobody defines (0x1f) under commit, as a bare segment.
  const std::string undefined =
      "415f"
      "00000000"
      "00000000"
      "00000001"
      "00000000";  // QN 0, MSN 1, MO 0
  const RunResult u = Rdmapct("decode --ddp --hex " + undefined);
  EXPECT_EQ(u.status, 0) << u.err;
  EXPECT_NE(u.out.find("Frame 1: Unknown opcode 0x1f"), std::string::npos);
}

TEST(DecodeErrors, UndecodableSegmentThenExit1) {
  // A Read Request header cut after 2 octets of SinkSTag.
  const RunResult r = Rdmapct(
      "decode --ddp --hex 'c1400000000000000000000000000011 # write\n"
      "414100000000000000010000000100000000 aa01'");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.Frames(), 2);
  EXPECT_EQ(r.err, "rdmapct decode: error: truncated in SinkSTag at offset 34 (value 0x2) (frame 2)\n");
}

// ---- exit status 2 ----------------------------------------------------------------------

TEST(DecodeUsage, UnreadableInputAndBadFlagsExit2) {
  EXPECT_EQ(Rdmapct("decode /nonexistent/stream.hex").status, 2);
  EXPECT_EQ(Rdmapct("decode /nonexistent/stream.hex").err,
            "rdmapct decode: error: cannot read /nonexistent/stream.hex: No such file or directory\n");
  EXPECT_EQ(Rdmapct("decode").status, 2);                                             // no input
  EXPECT_EQ(Rdmapct("decode --hex 00 examples/streams/ddp-segments.hex").status, 2);  // two inputs
  EXPECT_EQ(Rdmapct("decode --crc maybe examples/streams/ddp-segments.hex").status, 2);
  EXPECT_EQ(Rdmapct("decode --profile rfc9999 examples/streams/ddp-segments.hex").status, 2);
  EXPECT_EQ(Rdmapct("decode --mpa --ddp examples/streams/ddp-segments.hex").status, 2);
  EXPECT_EQ(Rdmapct("decode --ddp --markers on examples/streams/ddp-segments.hex").status, 2);
  const RunResult help = Rdmapct("decode --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("Exit status"), std::string::npos);
}

}  // namespace
}  // namespace rdmapct::cli
