// Tests of the test-ULP convention codec (docs/target-convention.md). The
// known-answer octets are written by hand from the layout tables of the
// document, field by field, not produced by the encoder.
#include "reference/wire/ulp_convention.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference/wire/crc32c.h"

namespace rdmapct::wire {
namespace {

// The example of docs/target-convention.md §3.6: 8 regions + outcome block.
Advertisement ExampleAdvertisement() {
  Advertisement adv;
  adv.flags = kFlagLittleEndianAtomics | kFlagRfc7306 | kFlagKeepMemory;
  adv.ird = 8;
  adv.ord = 8;
  adv.receive_buffer_count = 8;
  adv.receive_buffer_size = 4096;
  adv.connection_serial = 2;
  adv.regions = {
      {0x00001a01, 0x00007f3a12340000, 0x6000, 0x03, 0x00, 1, 0x0000},  // rw
      {0x00001b02, 0x00007f3a12342000, 0x1000, 0x01, 0x00, 1, 0x2000},  // ro
      {0x00001c03, 0x0000000000000000, 0x1000, 0x02, 0x00, 1, 0x3000},  // wo, zero-based
      {0x00001d04, 0x00007f3a12344000, 0x0040, 0x07, 0x00, 1, 0x4000},  // atomic
      {0x00002e05, 0x00007f3a12350000, 0x1000, 0x03, 0x01, 2, 0x0000},  // invalidatable
      {0x00002f06, 0x0000000000000000, 0x1000, 0x01, 0x00, 2, 0x0000},  // alias of it
      {0x00003007, 0x00007f3a12345000, 0x0800, 0x03, 0x02, 1, 0x5000},  // foreign
      {0x00003108, 0x00007f3a12345800, 0x0800, 0x03, 0x04, 1, 0x5800},  // deregistered
  };
  adv.previous = PreviousOutcome{1, ConnectionOutcome::kTerminateReceived, kOutcomeCodeKnown, 0x0, 0x2, 0x06, 2, 0};
  return adv;
}

// One row of octets per field group, as the comments lay them out.
// clang-format off
const Bytes kExampleBytes = {
    // header: magic "RPCA", 1.0, flags 0x0017, IRD 8, ORD 8, 8 buffers,
    // 8 regions of 24 octets, buffers of 4096 octets, connection serial 2
    0x52, 0x50, 0x43, 0x41, 0x01, 0x00, 0x00, 0x17, 0x00, 0x08, 0x00, 0x08,
    0x00, 0x08, 0x08, 0x18, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x02,
    // STag      | base Tagged Offset                    | Length          | Ac  At | Obj    | Obj offset
    0x00, 0x00, 0x1a, 0x01, 0x00, 0x00, 0x7f, 0x3a, 0x12, 0x34, 0x00, 0x00, 0x00, 0x00, 0x60, 0x00,
    0x03, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x1b, 0x02, 0x00, 0x00, 0x7f, 0x3a, 0x12, 0x34, 0x20, 0x00, 0x00, 0x00, 0x10, 0x00,
    0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x20, 0x00,
    0x00, 0x00, 0x1c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
    0x02, 0x00, 0x00, 0x01, 0x00, 0x00, 0x30, 0x00,
    0x00, 0x00, 0x1d, 0x04, 0x00, 0x00, 0x7f, 0x3a, 0x12, 0x34, 0x40, 0x00, 0x00, 0x00, 0x00, 0x40,
    0x07, 0x00, 0x00, 0x01, 0x00, 0x00, 0x40, 0x00,
    0x00, 0x00, 0x2e, 0x05, 0x00, 0x00, 0x7f, 0x3a, 0x12, 0x35, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
    0x03, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x2f, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
    0x01, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x30, 0x07, 0x00, 0x00, 0x7f, 0x3a, 0x12, 0x34, 0x50, 0x00, 0x00, 0x00, 0x08, 0x00,
    0x03, 0x02, 0x00, 0x01, 0x00, 0x00, 0x50, 0x00,
    0x00, 0x00, 0x31, 0x08, 0x00, 0x00, 0x7f, 0x3a, 0x12, 0x34, 0x58, 0x00, 0x00, 0x00, 0x08, 0x00,
    0x03, 0x04, 0x00, 0x01, 0x00, 0x00, 0x58, 0x00,
    // outcome: serial 1, Terminate received, code known, L=0 ET=2 EC=0x06, 2 events, 0 errors
    0x00, 0x00, 0x00, 0x01, 0x03, 0x01, 0x02, 0x06, 0x00, 0x02, 0x00, 0x00,
};
// clang-format on

// Field boundaries of the example (docs §3.1, §3.2, §3.4), for truncation.
struct FieldAt {
  std::string name;
  std::size_t offset;
  std::size_t width;
};

std::vector<FieldAt> ExampleFields() {
  std::vector<FieldAt> f = {{"Advertisement Magic", 0, 4},
                            {"Major Version", 4, 1},
                            {"Minor Version", 5, 1},
                            {"Flags", 6, 2},
                            {"IRD", 8, 2},
                            {"ORD", 10, 2},
                            {"Receive Buffer Count", 12, 2},
                            {"Region Count", 14, 1},
                            {"Region Entry Length", 15, 1},
                            {"Receive Buffer Size", 16, 4},
                            {"Connection Serial", 20, 4}};
  for (std::size_t i = 0; i < 8; ++i) {
    std::size_t e = 24 + 24 * i;
    for (FieldAt g : std::vector<FieldAt>{{"STag", 0, 4},
                                          {"Base Tagged Offset", 4, 8},
                                          {"Length", 12, 4},
                                          {"Access", 16, 1},
                                          {"Attributes", 17, 1},
                                          {"Memory Object", 18, 2},
                                          {"Object Offset", 20, 4}}) {
      f.push_back({g.name, e + g.offset, g.width});
    }
  }
  for (FieldAt g : std::vector<FieldAt>{{"Outcome Connection Serial", 0, 4},
                                        {"Outcome", 4, 1},
                                        {"Outcome Flags", 5, 1},
                                        {"Outcome Layer/EType", 6, 1},
                                        {"Outcome Error Code", 7, 1},
                                        {"Events Sent", 8, 2},
                                        {"Completion Errors", 10, 2}}) {
    f.push_back({g.name, 216 + g.offset, g.width});
  }
  return f;
}

void ExpectError(const DecodeError& e, DecodeErrorKind kind, const std::string& field, std::size_t offset) {
  EXPECT_EQ(e.kind, kind) << e.Describe();
  EXPECT_EQ(std::string(e.field), field) << e.Describe();
  EXPECT_EQ(e.offset, offset) << e.Describe();
}

void ExpectAdvError(const Bytes& b, DecodeErrorKind kind, const std::string& field, std::size_t offset) {
  Result<Advertisement> r = DecodeAdvertisement(b);
  ASSERT_FALSE(r.ok()) << field;
  ExpectError(r.error(), kind, field, offset);
}

Bytes Encode(const Advertisement& adv) {
  Bytes out;
  Status st = EncodeAdvertisement(adv, out);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().Describe());
  return out;
}

// ---------------------------------------------------------------------------
// Advertisement: known answer, round trips, limits

TEST(UlpConventionAdvertisement, ExampleEncodesToKnownBytes) {
  EXPECT_EQ(Encode(ExampleAdvertisement()), kExampleBytes);
  EXPECT_EQ(kExampleBytes.size(), 228u);
}

TEST(UlpConventionAdvertisement, ExampleDecodesFromKnownBytes) {
  Result<Advertisement> r = DecodeAdvertisement(kExampleBytes);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, ExampleAdvertisement());
  EXPECT_EQ(r->flags & kFlagPreviousOutcome, 0);  // carried by `previous`
  EXPECT_EQ(r->regions[3].stag, 0x00001d04u);
  EXPECT_EQ(r->previous->error_code, 0x06);
}

TEST(UlpConventionAdvertisement, AppendsAfterExistingOctets) {
  Bytes out = {0xAA};
  ASSERT_TRUE(EncodeAdvertisement(ExampleAdvertisement(), out).ok());
  ASSERT_EQ(out.size(), 229u);
  EXPECT_EQ(Bytes(out.begin() + 1, out.end()), kExampleBytes);
}

TEST(UlpConventionAdvertisement, RoundTripsEveryRegionCountUpToTheLimit) {
  for (bool with_outcome : {false, true}) {
    std::size_t max = with_outcome ? kMaxRegionsWithOutcome : kMaxRegions;
    for (std::size_t n = 0; n <= max; ++n) {
      Advertisement adv;
      adv.ird = 0x3FFE;
      adv.ord = 1;
      adv.receive_buffer_count = 0xFFFF;
      adv.receive_buffer_size = 0xFFFFFFFF;
      adv.connection_serial = 0x89ABCDEF;
      for (std::size_t i = 0; i < n; ++i) {
        adv.regions.push_back({static_cast<uint32_t>(0x80000000u + i), 0xFFFFFFFF00000000ull + i * 0x10000, 0xFFFF,
                               kKnownAccessBits, static_cast<uint8_t>(i % 2 ? kAttrInvalidatable : 0),
                               static_cast<uint16_t>(0xFFFF - i), 0xFFFFFFFFu - 0xFFFF});
      }
      if (with_outcome) adv.previous = PreviousOutcome{};
      Bytes b = Encode(adv);
      EXPECT_EQ(b.size(), 24 + 24 * n + (with_outcome ? 12 : 0));
      EXPECT_LE(b.size(), kAdvertisementMaxLength);
      Result<Advertisement> r = DecodeAdvertisement(b);
      ASSERT_TRUE(r.ok()) << r.error().Describe();
      EXPECT_EQ(*r, adv);
    }
  }
}

TEST(UlpConventionAdvertisement, EncoderRefusesMoreThan248Octets) {
  Advertisement adv;
  adv.regions.resize(kMaxRegions + 1);
  Bytes out;
  Status st = EncodeAdvertisement(adv, out);
  ASSERT_FALSE(st.ok());
  ExpectError(st.error(), DecodeErrorKind::kTooLong, "Advertisement", 248);
  EXPECT_EQ(st.error().value, 24u + 24 * 10);
  EXPECT_TRUE(out.empty());

  adv.regions.resize(kMaxRegions);
  adv.previous = PreviousOutcome{};
  st = EncodeAdvertisement(adv, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().value, 24u + 24 * 9 + 12);
}

TEST(UlpConventionAdvertisement, EncoderRefusesShortEntriesAndWideTerminateFields) {
  Advertisement adv;
  adv.region_entry_length = 23;
  Bytes out;
  Status st = EncodeAdvertisement(adv, out);
  ASSERT_FALSE(st.ok());
  ExpectError(st.error(), DecodeErrorKind::kInvalidValue, "Region Entry Length", 15);

  adv = ExampleAdvertisement();
  adv.previous->layer = 0x10;
  st = EncodeAdvertisement(adv, out);
  ASSERT_FALSE(st.ok());
  ExpectError(st.error(), DecodeErrorKind::kInvalidValue, "Outcome Layer/EType", 222);
}

// ---------------------------------------------------------------------------
// Advertisement: every truncation and every invalid value

TEST(UlpConventionAdvertisement, EveryTruncationNamesTheMissingField) {
  const std::vector<FieldAt> fields = ExampleFields();
  for (std::size_t len = 0; len < kExampleBytes.size(); ++len) {
    const FieldAt* want = nullptr;
    for (const FieldAt& f : fields) {
      if (f.offset + f.width > len) {
        want = &f;
        break;
      }
    }
    ASSERT_NE(want, nullptr);
    Bytes b(kExampleBytes.begin(), kExampleBytes.begin() + len);
    Result<Advertisement> r = DecodeAdvertisement(b);
    ASSERT_FALSE(r.ok()) << "length " << len;
    ExpectError(r.error(), DecodeErrorKind::kTruncated, want->name, want->offset);
    EXPECT_EQ(r.error().value, len - want->offset) << "length " << len;
  }
}

TEST(UlpConventionAdvertisement, HeaderInvalidValues) {
  Bytes b = kExampleBytes;
  b[3] = 0x42;  // "RPCB"
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Advertisement Magic", 0);
  EXPECT_FALSE(HasAdvertisementMagic(b));

  b = kExampleBytes;
  b[4] = 2;  // unknown major: the suite must refuse the target
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Major Version", 4);
  ExpectAdvError(Bytes(b.begin(), b.begin() + 5), DecodeErrorKind::kInvalidValue, "Major Version", 4);
  b[4] = 0;
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Major Version", 4);

  b = kExampleBytes;
  b[6] = 0x80;  // reserved flag bit under 1.0
  ExpectAdvError(b, DecodeErrorKind::kReservedNonZero, "Flags", 6);
  b = kExampleBytes;
  b[7] = 0x37;
  ExpectAdvError(b, DecodeErrorKind::kReservedNonZero, "Flags", 6);

  b = kExampleBytes;
  b[15] = 23;
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Region Entry Length", 15);
  b[15] = 28;  // longer entries only from a newer minor version
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Region Entry Length", 15);
}

TEST(UlpConventionAdvertisement, RegionInvalidValues) {
  Bytes b = kExampleBytes;
  b[24 + 24 + 16] = 0x21;  // region 2: reserved access bit
  ExpectAdvError(b, DecodeErrorKind::kReservedNonZero, "Access", 64);

  b = kExampleBytes;
  b[24 + 17] = 0x08;  // region 1: reserved attribute bit
  ExpectAdvError(b, DecodeErrorKind::kReservedNonZero, "Attributes", 41);

  b = kExampleBytes;
  b[24 + 24 * 6 + 17] = kAttrForeign | kAttrDeregistered;  // region 7
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Attributes", 24 + 24 * 6 + 17);

  b = kExampleBytes;  // region 1: base 0xFFFFFFFFFFFFF000 + 0x6000 wraps
  for (int i = 0; i < 6; ++i) b[24 + 4 + i] = 0xFF;
  b[24 + 10] = 0xF0;
  b[24 + 11] = 0x00;
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Length", 36);
  b[24 + 14] = 0x10;  // length 0x1000 ends exactly at 2^64 - 1: no wrap
  b[24 + 15] = 0x00;
  EXPECT_TRUE(DecodeAdvertisement(b).ok());

  b = kExampleBytes;  // region 3 repeats region 2's STag
  b[24 + 48 + 2] = 0x1b;
  b[24 + 48 + 3] = 0x02;
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "STag", 72);
}

TEST(UlpConventionAdvertisement, OutcomeInvalidValues) {
  Bytes b = kExampleBytes;
  b[220] = 5;  // Outcome
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Outcome", 220);

  b = kExampleBytes;
  b[221] = 0x03;  // reserved outcome flag
  ExpectAdvError(b, DecodeErrorKind::kReservedNonZero, "Outcome Flags", 221);

  b = kExampleBytes;
  b[220] = static_cast<uint8_t>(ConnectionOutcome::kClosed);  // no Terminate, yet a triple
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Outcome Flags", 221);

  b = kExampleBytes;
  b[221] = 0;  // triple not known, yet non-zero
  ExpectAdvError(b, DecodeErrorKind::kInvalidValue, "Outcome Layer/EType", 222);
  b[222] = 0;
  b[223] = 0;
  EXPECT_TRUE(DecodeAdvertisement(b).ok());
}

TEST(UlpConventionAdvertisement, TrailingOctetsAndOverlongInput) {
  Bytes b = kExampleBytes;
  b.push_back(0);
  ExpectAdvError(b, DecodeErrorKind::kLengthMismatch, "Advertisement", 228);

  b = kExampleBytes;
  b[7] = 0x15;  // no outcome flag: the 12 outcome octets are now trailing
  ExpectAdvError(b, DecodeErrorKind::kLengthMismatch, "Advertisement", 216);

  b.assign(249, 0);
  std::copy(kExampleBytes.begin(), kExampleBytes.begin() + 24, b.begin());
  ExpectAdvError(b, DecodeErrorKind::kTooLong, "Advertisement", 248);
}

// A 1.1 target may append fields and use bits 1.0 reserves; a 1.0 suite
// reads what it knows and ignores the rest.
TEST(UlpConventionAdvertisement, NewerMinorVersionExtensionsAreIgnored) {
  Advertisement adv = ExampleAdvertisement();
  adv.minor_version = 7;
  adv.flags |= 0x8000;
  adv.region_entry_length = 28;
  adv.regions.resize(7);
  adv.regions[0].access |= 0x80;
  adv.regions[0].attributes |= 0x40;
  adv.previous->outcome = static_cast<ConnectionOutcome>(9);  // a 1.7 outcome
  Bytes b = Encode(adv);
  ASSERT_EQ(b.size(), 24u + 7 * 28 + 12);
  EXPECT_EQ(b[24 + 24], 0);  // padding of entry 1
  b.push_back(0x5A);         // a trailing 1.7 block
  Result<Advertisement> r = DecodeAdvertisement(b);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, adv);

  // Still truncated when a longer entry is cut short.
  b.resize(24 + 28 + 26);
  ExpectAdvError(b, DecodeErrorKind::kTruncated, "Region Entry", 24 + 28);
}

TEST(UlpConventionAdvertisement, PrivateDataWithAndWithoutRfc6581Word) {
  Bytes pd = {0x80, 0x08, 0x00, 0x08};  // A=1, IRD 8, ORD 8 (not interpreted here)
  pd.insert(pd.end(), kExampleBytes.begin(), kExampleBytes.end());
  Result<Advertisement> r = DecodeAdvertisementFromPrivateData(pd, true);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, ExampleAdvertisement());

  r = DecodeAdvertisementFromPrivateData(kExampleBytes, false);
  ASSERT_TRUE(r.ok());

  // Offsets are relative to the Private Data, word included.
  pd.resize(4 + 30);
  r = DecodeAdvertisementFromPrivateData(pd, true);
  ASSERT_FALSE(r.ok());
  ExpectError(r.error(), DecodeErrorKind::kTruncated, "Base Tagged Offset", 4 + 28);

  r = DecodeAdvertisementFromPrivateData(Bytes{0x80, 0x08, 0x00}, true);
  ASSERT_FALSE(r.ok());
  ExpectError(r.error(), DecodeErrorKind::kTruncated, "RFC 6581 IRD/ORD", 0);

  // A target that does not run the convention: no magic at all.
  r = DecodeAdvertisementFromPrivateData(Bytes{}, false);
  ASSERT_FALSE(r.ok());
  ExpectError(r.error(), DecodeErrorKind::kTruncated, "Advertisement Magic", 0);
  EXPECT_FALSE(HasAdvertisementMagic(Bytes{0x52, 0x50, 0x43}));
  EXPECT_TRUE(HasAdvertisementMagic(kExampleBytes));
}

// ---------------------------------------------------------------------------
// Suite Request

const Bytes kKeepMemoryRequest = {
    0x52, 0x50, 0x43, 0x52,  // "RPCR"
    0x01, 0x00,              // version 1.0
    0x00, 0x01,              // Keep Memory
    0xb7, 0xa3, 0x84, 0x34,  // CRC-32C("rfc5040/7.2/read-req-invalid-src-stag")
};

TEST(UlpConventionSuiteRequest, KnownAnswerAndRoundTrip) {
  EXPECT_EQ(CaseHash("rfc5040/7.2/read-req-invalid-src-stag"), 0xb7a38434u);
  EXPECT_EQ(CaseHash(""), 0u);
  SuiteRequest req{1, 0, kRequestKeepMemory, CaseHash("rfc5040/7.2/read-req-invalid-src-stag")};
  Bytes out;
  EncodeSuiteRequest(req, out);
  EXPECT_EQ(out, kKeepMemoryRequest);
  Result<SuiteRequest> r = DecodeSuiteRequest(kKeepMemoryRequest);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, req);

  // Octets after the 12 are not the request's business.
  Bytes longer = kKeepMemoryRequest;
  longer.push_back(0x99);
  EXPECT_TRUE(DecodeSuiteRequest(longer).ok());
}

TEST(UlpConventionSuiteRequest, EveryTruncationAndInvalidValue) {
  const std::vector<FieldAt> fields = {{"Request Magic", 0, 4},
                                       {"Major Version", 4, 1},
                                       {"Minor Version", 5, 1},
                                       {"Request Flags", 6, 2},
                                       {"Case Hash", 8, 4}};
  for (std::size_t len = 0; len < kKeepMemoryRequest.size(); ++len) {
    const FieldAt* want = nullptr;
    for (const FieldAt& f : fields) {
      if (f.offset + f.width > len) {
        want = &f;
        break;
      }
    }
    Result<SuiteRequest> r = DecodeSuiteRequest(Bytes(kKeepMemoryRequest.begin(), kKeepMemoryRequest.begin() + len), 4);
    ASSERT_FALSE(r.ok()) << len;
    ExpectError(r.error(), DecodeErrorKind::kTruncated, want->name, 4 + want->offset);
  }
  Bytes b = kKeepMemoryRequest;
  b[3] = 0x41;  // an advertisement is not a request
  Result<SuiteRequest> r = DecodeSuiteRequest(b);
  ASSERT_FALSE(r.ok());
  ExpectError(r.error(), DecodeErrorKind::kInvalidValue, "Request Magic", 0);

  b = kKeepMemoryRequest;
  b[4] = 2;
  r = DecodeSuiteRequest(b);
  ASSERT_FALSE(r.ok());
  ExpectError(r.error(), DecodeErrorKind::kInvalidValue, "Major Version", 4);

  b = kKeepMemoryRequest;
  b[7] = 0x03;
  r = DecodeSuiteRequest(b);
  ASSERT_FALSE(r.ok());
  ExpectError(r.error(), DecodeErrorKind::kReservedNonZero, "Request Flags", 6);
  b[5] = kUlpConventionKnownMinorVersion + 1;  // a newer minor may define the bit
  r = DecodeSuiteRequest(b);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->flags, 0x0003);
}

// ---------------------------------------------------------------------------
// Memory pattern and region roles

TEST(UlpConventionPattern, KnownBytes) {
  // (0x9D*x + 0x3B*(x>>8) + 0x65*m + 0x11) mod 256, by hand.
  EXPECT_EQ(PatternByte(0, 0), 0x11);
  EXPECT_EQ(PatternByte(0, 1), 0xAE);
  EXPECT_EQ(PatternByte(0, 2), 0x4B);
  EXPECT_EQ(PatternByte(0, 255), 0x74);
  EXPECT_EQ(PatternByte(0, 256), 0x4C);
  EXPECT_EQ(PatternByte(0, 257), 0xE9);
  EXPECT_EQ(PatternByte(1, 0), 0x76);
  EXPECT_EQ(PatternByte(2, 0), 0xDB);
  EXPECT_EQ(PatternByte(1, 0x2000), 0xD6);
}

TEST(UlpConventionPattern, ConsecutiveBlocksDifferSoShiftedDataIsVisible) {
  // Every 256-octet block is a permutation, and neighbouring blocks differ.
  for (uint64_t block = 0; block < 64; ++block) {
    bool seen[256] = {};
    for (uint64_t i = 0; i < 256; ++i) seen[PatternByte(1, block * 256 + i)] = true;
    for (bool s : seen) EXPECT_TRUE(s);
    EXPECT_NE(PatternByte(1, block * 256), PatternByte(1, (block + 1) * 256));
  }
}

TEST(UlpConventionPattern, AliasesAgreeThroughTheMemoryObjectOffset) {
  Advertisement adv = ExampleAdvertisement();
  const AdvertisedRegion& rw = adv.regions[0];
  const AdvertisedRegion& ro = adv.regions[1];
  const AdvertisedRegion& wo = adv.regions[2];
  EXPECT_EQ(RegionPattern(ro, ro.base_tagged_offset, 300), RegionPattern(rw, rw.base_tagged_offset + 0x2000, 300));
  EXPECT_EQ(RegionPattern(wo, 0x10, 16), RegionPattern(rw, rw.base_tagged_offset + 0x3010, 16));
  Bytes p = RegionPattern(adv.regions[4], adv.regions[4].base_tagged_offset + 1, 2);
  EXPECT_EQ(p, (Bytes{PatternByte(2, 1), PatternByte(2, 2)}));
  EXPECT_EQ(RegionPattern(adv.regions[5], 1, 2), p);
}

TEST(UlpConventionRoles, ExampleFillsEveryRole) {
  const Advertisement adv = ExampleAdvertisement();
  const std::pair<RegionRole, uint32_t> want[] = {
      {RegionRole::kReadWrite, 0x1a01}, {RegionRole::kReadOnly, 0x1b02},      {RegionRole::kWriteOnly, 0x1c03},
      {RegionRole::kAtomic, 0x1d04},    {RegionRole::kInvalidatable, 0x2e05}, {RegionRole::kAlias, 0x2f06},
      {RegionRole::kForeign, 0x3007},   {RegionRole::kDeregistered, 0x3108}};
  for (auto [role, stag] : want) {
    const AdvertisedRegion* r = SelectRegion(adv, role);
    ASSERT_NE(r, nullptr) << RegionRoleName(role);
    EXPECT_EQ(r->stag, stag) << RegionRoleName(role);
  }
  EXPECT_EQ(SelectRegion(adv, RegionRole::kFlush), nullptr);
  EXPECT_EQ(SelectRegion(adv, RegionRole::kVerify), nullptr);
  EXPECT_EQ(SelectRegion(adv, RegionRole::kReadWrite, 0x6001), nullptr);
  EXPECT_EQ(SelectRegion(adv, RegionRole::kReadWrite, 0x6000)->stag, 0x1a01u);
  EXPECT_TRUE(MissingForFullSuite(adv, true, false).empty());
  std::vector<std::string> commit = MissingForFullSuite(adv, true, true);
  EXPECT_EQ(commit, (std::vector<std::string>{"region flush of >= 1024 octets", "region verify of >= 1024 octets",
                                              "COMMIT flag"}));
}

TEST(UlpConventionRoles, SelectionRulesExcludeSpecialRegions) {
  Advertisement adv;
  // An invalidatable R/W region is never "rw"; a misaligned atomic region is
  // never "atomic"; a foreign R/W region is never "rw".
  adv.regions = {
      {1, 0x1000, 4096, kAccessRemoteRead | kAccessRemoteWrite, kAttrInvalidatable, 1, 0},
      {2, 0x2004, 64, kAccessRemoteRead | kAccessRemoteWrite | kAccessRemoteAtomic, 0, 2, 4},
      {3, 0x3000, 4096, kAccessRemoteRead | kAccessRemoteWrite, kAttrForeign, 3, 0},
      {4, 0x4000, 2048, kAccessRemoteRead, 0, 1, 0},  // covers half of region 1 only
  };
  EXPECT_EQ(SelectRegion(adv, RegionRole::kReadWrite)->stag, 2u);
  EXPECT_EQ(SelectRegion(adv, RegionRole::kAtomic), nullptr);
  EXPECT_EQ(SelectRegion(adv, RegionRole::kInvalidatable)->stag, 1u);
  EXPECT_EQ(SelectRegion(adv, RegionRole::kAlias), nullptr);
  adv.regions[3].length = 4096;
  EXPECT_EQ(SelectRegion(adv, RegionRole::kAlias)->stag, 4u);
  EXPECT_EQ(SelectRegion(adv, RegionRole::kForeign)->stag, 3u);
  EXPECT_EQ(SelectRegion(adv, RegionRole::kReadOnly)->stag, 4u);

  std::vector<std::string> missing = MissingForFullSuite(adv, false, false);
  EXPECT_EQ(missing, (std::vector<std::string>{"region rw of >= 4096 octets", "region wo of >= 1024 octets",
                                               "region deregistered", "4 to 64 receive buffers (has 0)",
                                               "receive buffers of >= 1024 octets (has 0)", "IRD >= 4 (has 0)",
                                               "Keep Memory flag", "previous-connection outcome block"}));
}

TEST(UlpConventionRoles, ReadableViewCoversTheWholeRange) {
  const Advertisement adv = ExampleAdvertisement();
  // The foreign STag's memory is readable through rw (object 1).
  EXPECT_EQ(FindReadableView(adv, 1, 0x5000, 0x800)->stag, 0x1a01u);
  // The invalidatable region's memory only through its alias (object 2).
  EXPECT_EQ(FindReadableView(adv, 2, 0, 0x1000)->stag, 0x2f06u);
  EXPECT_EQ(FindReadableView(adv, 2, 0x800, 0x801), nullptr);
  EXPECT_EQ(FindReadableView(adv, 1, 0x5fff, 2), nullptr);
  EXPECT_EQ(FindReadableView(adv, 3, 0, 1), nullptr);
}

TEST(UlpConventionRoles, NamesRoundTrip) {
  for (std::size_t i = 0; i < kRegionRoleCount; ++i) {
    RegionRole role = static_cast<RegionRole>(i);
    EXPECT_EQ(ParseRegionRole(RegionRoleName(role)), role);
  }
  EXPECT_EQ(RegionRoleName(RegionRole::kReadWrite), "rw");
  EXPECT_EQ(RegionRoleName(RegionRole::kAlias), "alias");
  EXPECT_FALSE(ParseRegionRole("RW"));
}

// ---------------------------------------------------------------------------
// Event Records

const Bytes kHelloEvent = {
    0x52, 0x50, 0x43, 0x45,                          // "RPCE"
    0x01, 0x00,                                      // version 1.0
    0x01,                                            // Send delivered
    0x00,                                            // SE not known, no Invalidate
    0x00, 0x00, 0x00, 0x01,                          // sequence 1
    0x00, 0x00, 0x00, 0x05,                          // 5 octets delivered
    0x00, 0x00, 0x00, 0x00,                          // no invalidated STag
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // value
    0x9a, 0x71, 0xbb, 0x4c,                          // CRC-32C("hello"), big-endian
    0x00, 0x05, 0x00, 0x00,                          // prefix length 5, reserved
    0x68, 0x65, 0x6c, 0x6c, 0x6f,                    // "hello"
};

Bytes Hello() { return Bytes{'h', 'e', 'l', 'l', 'o'}; }

Bytes EncodeEv(const EventRecord& ev) {
  Bytes out;
  EncodeEventRecord(ev, out);
  return out;
}

void ExpectEvError(const Bytes& b, DecodeErrorKind kind, const std::string& field, std::size_t offset) {
  Result<EventRecord> r = DecodeEventRecord(b);
  ASSERT_FALSE(r.ok()) << field;
  ExpectError(r.error(), kind, field, offset);
}

TEST(UlpConventionEvent, SendEventKnownAnswer) {
  EventRecord ev = MakeSendEvent(1, Hello(), std::nullopt, std::nullopt);
  EXPECT_EQ(ev.digest, 0x9a71bb4cu);
  EXPECT_EQ(EncodeEv(ev), kHelloEvent);
  Result<EventRecord> r = DecodeEventRecord(kHelloEvent);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, ev);
  EXPECT_TRUE(HasEventRecordMagic(kHelloEvent));
  EXPECT_FALSE(HasEventRecordMagic(kExampleBytes));
}

TEST(UlpConventionEvent, SendWithSolicitedEventAndInvalidateKnownAnswer) {
  EventRecord ev = MakeSendEvent(7, Bytes{}, true, 0x00002e05);
  const Bytes want = {0x52, 0x50, 0x43, 0x45, 0x01, 0x00, 0x01, 0x07, 0x00, 0x00, 0x00, 0x07,
                      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2e, 0x05, 0x00, 0x00, 0x00, 0x00,
                      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(EncodeEv(ev), want);
  Result<EventRecord> r = DecodeEventRecord(want);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, ev);
  EXPECT_EQ(MakeSendEvent(1, Bytes{}, false, std::nullopt).flags, kEventSolicitedKnown);
}

TEST(UlpConventionEvent, ImmediateDataAndCompletionErrorKnownAnswers) {
  const Bytes imm = {0x52, 0x50, 0x43, 0x45, 0x01, 0x00, 0x02, 0x03, 0x00, 0x00, 0x00, 0x02,
                     0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x23, 0x45, 0x67,
                     0x89, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(EncodeEv(MakeImmediateDataEvent(2, 0x0123456789abcdefull, true)), imm);
  ASSERT_TRUE(DecodeEventRecord(imm).ok());

  const Bytes err = {0x52, 0x50, 0x43, 0x45, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x03,
                     0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
                     0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(EncodeEv(MakeCompletionErrorEvent(3, ErrorSource::kReceiveQueue, 10)), err);
  Result<EventRecord> r = DecodeEventRecord(err);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->value >> 56, 1u);
  EXPECT_EQ(r->value & 0xFFFFFFFF, 10u);
}

TEST(UlpConventionEvent, LongPayloadKeepsA64OctetPrefixAndTheFullDigest) {
  Bytes payload(1000);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  EventRecord ev = MakeSendEvent(4, payload, std::nullopt, std::nullopt);
  EXPECT_EQ(ev.prefix, Bytes(payload.begin(), payload.begin() + 64));
  EXPECT_EQ(ev.digest, Crc32c(payload));
  Bytes b = EncodeEv(ev);
  EXPECT_EQ(b.size(), 36u + 64);
  Result<EventRecord> r = DecodeEventRecord(b, 100);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(*r, ev);
}

TEST(UlpConventionEvent, EveryTruncationNamesTheMissingField) {
  const std::vector<FieldAt> fields = {
      {"Event Magic", 0, 4}, {"Major Version", 4, 1},   {"Minor Version", 5, 1},     {"Event Type", 6, 1},
      {"Event Flags", 7, 1}, {"Sequence Number", 8, 4}, {"Delivered Length", 12, 4}, {"Invalidated STag", 16, 4},
      {"Value", 20, 8},      {"Digest", 28, 4},         {"Prefix Length", 32, 2},    {"Reserved", 34, 2},
      {"Data Prefix", 36, 5}};
  for (std::size_t len = 0; len < kHelloEvent.size(); ++len) {
    const FieldAt* want = nullptr;
    for (const FieldAt& f : fields) {
      if (f.offset + f.width > len) {
        want = &f;
        break;
      }
    }
    Bytes b(kHelloEvent.begin(), kHelloEvent.begin() + len);
    Result<EventRecord> r = DecodeEventRecord(b, 10);
    ASSERT_FALSE(r.ok()) << "length " << len;
    ExpectError(r.error(), DecodeErrorKind::kTruncated, want->name, 10 + want->offset);
    EXPECT_EQ(r.error().value, len - want->offset);
  }
}

struct EventMutation {
  const char* what;
  std::size_t at;  // octet to overwrite in kHelloEvent (or a copy of `base`)
  uint8_t value;
  DecodeErrorKind kind;
  const char* field;
  std::size_t offset;
};

TEST(UlpConventionEvent, InvalidValuesOfASendEvent) {
  const EventMutation cases[] = {
      {"magic", 0, 0x00, DecodeErrorKind::kInvalidValue, "Event Magic", 0},
      {"major 2", 4, 0x02, DecodeErrorKind::kInvalidValue, "Major Version", 4},
      {"type 0", 6, 0x00, DecodeErrorKind::kInvalidValue, "Event Type", 6},
      {"type 4", 6, 0x04, DecodeErrorKind::kInvalidValue, "Event Type", 6},
      {"reserved flag", 7, 0x08, DecodeErrorKind::kReservedNonZero, "Event Flags", 7},
      {"SE without known", 7, 0x02, DecodeErrorKind::kInvalidValue, "Event Flags", 7},
      {"sequence 0", 11, 0x00, DecodeErrorKind::kInvalidValue, "Sequence Number", 8},
      {"STag without flag", 19, 0x01, DecodeErrorKind::kInvalidValue, "Invalidated STag", 16},
      {"value on a Send", 27, 0x01, DecodeErrorKind::kInvalidValue, "Value", 20},
      {"digest", 31, 0x4d, DecodeErrorKind::kCrcMismatch, "Digest", 28},
      {"prefix length", 33, 0x04, DecodeErrorKind::kLengthMismatch, "Prefix Length", 32},
      {"reserved", 35, 0x01, DecodeErrorKind::kReservedNonZero, "Reserved", 34},
      {"length", 15, 0x06, DecodeErrorKind::kLengthMismatch, "Prefix Length", 32},
  };
  for (const EventMutation& c : cases) {
    Bytes b = kHelloEvent;
    b[c.at] = c.value;
    SCOPED_TRACE(c.what);
    ExpectEvError(b, c.kind, c.field, c.offset);
  }
  Bytes b = kHelloEvent;
  b.push_back(0);
  ExpectEvError(b, DecodeErrorKind::kLengthMismatch, "Event Record", 41);
}

TEST(UlpConventionEvent, InvalidValuesOfOtherTypes) {
  const Bytes imm = EncodeEv(MakeImmediateDataEvent(2, 5, std::nullopt));
  const Bytes err = EncodeEv(MakeCompletionErrorEvent(3, ErrorSource::kAsyncEvent, 1));
  struct Case {
    const char* what;
    const Bytes& base;
    std::size_t at;
    uint8_t value;
    DecodeErrorKind kind;
    const char* field;
    std::size_t offset;
  } const cases[] = {
      {"Invalidate on Immediate Data", imm, 7, 0x04, DecodeErrorKind::kInvalidValue, "Event Flags", 7},
      {"length on Immediate Data", imm, 15, 0x01, DecodeErrorKind::kInvalidValue, "Delivered Length", 12},
      {"digest on Immediate Data", imm, 31, 0x01, DecodeErrorKind::kInvalidValue, "Digest", 28},
      {"prefix on Immediate Data", imm, 33, 0x01, DecodeErrorKind::kLengthMismatch, "Prefix Length", 32},
      {"flags on an error", err, 7, 0x01, DecodeErrorKind::kInvalidValue, "Event Flags", 7},
      {"error source 0", err, 20, 0x00, DecodeErrorKind::kInvalidValue, "Value", 20},
      {"error source 4", err, 20, 0x04, DecodeErrorKind::kInvalidValue, "Value", 20},
      {"error reserved bits", err, 22, 0x01, DecodeErrorKind::kReservedNonZero, "Value", 20},
  };
  for (const Case& c : cases) {
    Bytes b = c.base;
    b[c.at] = c.value;
    SCOPED_TRACE(c.what);
    ExpectEvError(b, c.kind, c.field, c.offset);
  }
}

TEST(UlpConventionEvent, NewerMinorVersionMayAddTypesAndOctets) {
  Bytes b = kHelloEvent;
  b[5] = 4;     // minor 4 (newer than the decoder's 1.3)
  b[6] = 0x09;  // a type 1.0 does not know
  b[7] |= 0x80;
  b[35] = 0x01;
  b.push_back(0xEE);
  Result<EventRecord> r = DecodeEventRecord(b);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(static_cast<uint8_t>(r->type), 0x09);
  EXPECT_EQ(r->minor_version, 4);
  EXPECT_EQ(r->prefix, Hello());

  b[6] = 0;  // type 0 is never valid
  ExpectEvError(b, DecodeErrorKind::kInvalidValue, "Event Type", 6);
}

// Convention §11: the concurrent-connections flag is a 1.2 bit. A 1.2
// Advertisement carries it; a 1.0 or 1.1 one that sets it breaks the convention.
TEST(UlpConventionAdvertisement, ConcurrentConnectionsFlagNeedsMinorOne) {
  Advertisement adv = ExampleAdvertisement();
  adv.flags |= kFlagConcurrentConnections;
  adv.minor_version = kConcurrentMinorVersion;
  Result<Advertisement> r = DecodeAdvertisement(Encode(adv));
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_TRUE(r->flags & kFlagConcurrentConnections);

  adv.minor_version = 1;
  Result<Advertisement> old = DecodeAdvertisement(Encode(adv));
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().kind, DecodeErrorKind::kReservedNonZero);
}

}  // namespace
}  // namespace rdmapct::wire
