#include "reference/wire/terminate_codes.h"

#include <gtest/gtest.h>

#include <string>

namespace rdmapct::wire {
namespace {

// One row of the RFC 6580 registry, written out by hand.
// kAnyCode marks rows whose code column is "any"/"ALL"; kOther marks the
// "unassigned" catch-all rows (every other code of that Layer/EType, or the
// undefined layers).
constexpr int kAnyCode = -1;
struct TsvRow {
  uint8_t layer;
  uint8_t etype;
  int code;
  bool registered;
  const char* description;  // expected Describe() for a listed code
};

// R5040-4.8-03, R5040-4.8-T01..T16, R5041-7.2-T01..T13, R5044-8-T01..T04, R6581-8-T01..T03.
constexpr TsvRow kTsv[] = {
    {0x0, 0x0, kAnyCode, true, "RDMAP / Local Catastrophic Error"},
    {0x0, 0x1, 0x00, true, "RDMAP / Remote Protection Error / Invalid STag"},
    {0x0, 0x1, 0x01, true, "RDMAP / Remote Protection Error / Base or bounds violation"},
    {0x0, 0x1, 0x02, true, "RDMAP / Remote Protection Error / Access rights violation"},
    {0x0, 0x1, 0x03, true, "RDMAP / Remote Protection Error / STag not associated with RDMAP Stream"},
    {0x0, 0x1, 0x04, true, "RDMAP / Remote Protection Error / TO wrap"},
    {0x0, 0x1, 0x09, true, "RDMAP / Remote Protection Error / STag cannot be Invalidated"},
    {0x0, 0x1, 0xFF, true, "RDMAP / Remote Protection Error / Unspecified Error"},
    {0x0, 0x2, 0x05, true, "RDMAP / Remote Operation Error / Invalid RDMAP version"},
    {0x0, 0x2, 0x06, true, "RDMAP / Remote Operation Error / Unexpected OpCode"},
    {0x0, 0x2, 0x07, true, "RDMAP / Remote Operation Error / Catastrophic error, localized to RDMAP Stream"},
    {0x0, 0x2, 0x08, true, "RDMAP / Remote Operation Error / Catastrophic error, global"},
    {0x0, 0x2, 0x09, true, "RDMAP / Remote Operation Error / STag cannot be Invalidated"},
    {0x0, 0x2, 0xFF, true, "RDMAP / Remote Operation Error / Unspecified Error"},
    {0x1, 0x0, 0x00, true, "DDP / Local Catastrophic"},
    {0x1, 0x1, 0x00, true, "DDP / Tagged Buffer Error / Invalid STag"},
    {0x1, 0x1, 0x01, true, "DDP / Tagged Buffer Error / Base or bounds violation"},
    {0x1, 0x1, 0x02, true, "DDP / Tagged Buffer Error / STag not associated with DDP Stream"},
    {0x1, 0x1, 0x03, true, "DDP / Tagged Buffer Error / TO wrap"},
    {0x1, 0x1, 0x04, true, "DDP / Tagged Buffer Error / Invalid DDP version"},
    {0x1, 0x2, 0x01, true, "DDP / Untagged Buffer Error / Invalid QN"},
    {0x1, 0x2, 0x02, true, "DDP / Untagged Buffer Error / Invalid MSN - no buffer available"},
    {0x1, 0x2, 0x03, true, "DDP / Untagged Buffer Error / Invalid MSN - MSN range is not valid"},
    {0x1, 0x2, 0x04, true, "DDP / Untagged Buffer Error / Invalid MO"},
    {0x1, 0x2, 0x05, true, "DDP / Untagged Buffer Error / DDP Message too long for available buffer"},
    {0x1, 0x2, 0x06, true, "DDP / Untagged Buffer Error / Invalid DDP version"},
    {0x1, 0x3, kAnyCode, true, "DDP / Reserved for the use by the LLP"},
    {0x2, 0x0, 0x01, true, "LLP / MPA Error / TCP connection closed, terminated, or lost"},
    {0x2, 0x0, 0x02, true, "LLP / MPA Error / MPA CRC error"},
    {0x2, 0x0, 0x03, true, "LLP / MPA Error / MPA Marker and ULPDU Length field mismatch"},
    {0x2, 0x0, 0x04, true, "LLP / MPA Error / Invalid MPA Request or Reply Frame"},
    {0x2, 0x0, 0x05, true, "LLP / MPA Error / Local catastrophic"},
    {0x2, 0x0, 0x06, true, "LLP / MPA Error / Insufficient IRD resources"},
    {0x2, 0x0, 0x07, true, "LLP / MPA Error / No matching RTR option"},
};

TEST(TerminateCodes, EveryListedRowIsRegisteredAndNamed) {
  for (const TsvRow& row : kTsv) {
    const int first = row.code == kAnyCode ? 0 : row.code;
    const int last = row.code == kAnyCode ? 0xFF : row.code;
    for (int c = first; c <= last; ++c) {
      const TerminateCode code{row.layer, row.etype, static_cast<uint8_t>(c)};
      SCOPED_TRACE(std::string(row.description) + " code " + std::to_string(c));
      EXPECT_EQ(IsRegistered(code), row.registered);
      EXPECT_STREQ(Describe(code), row.description);
    }
  }
}

// Checks every one of the 16 * 16 * 256 possible triples against the rows
// above: the "unassigned" catch-all rows of the TSV (RDMAP other, DDP other,
// LLP other, Layers 0x3-0xF) are exactly the triples no row lists.
TEST(TerminateCodes, EverythingElseIsUnassigned) {
  int registered = 0;
  for (int layer = 0; layer < 16; ++layer) {
    for (int etype = 0; etype < 16; ++etype) {
      for (int c = 0; c < 256; ++c) {
        const TerminateCode code{static_cast<uint8_t>(layer), static_cast<uint8_t>(etype), static_cast<uint8_t>(c)};
        bool listed = false;
        for (const TsvRow& row : kTsv) {
          listed |= row.layer == layer && row.etype == etype && (row.code == kAnyCode || row.code == c);
        }
        ASSERT_EQ(IsRegistered(code), listed) << layer << "/" << etype << "/" << c;
        if (!listed) {
          ASSERT_STREQ(Describe(code), "Unassigned");
        }
        registered += listed ? 1 : 0;
      }
    }
  }
  // RDMAP: 256 (EType 0) + 7 + 6; DDP: 1 + 5 + 6 + 256 (EType 3); MPA: 7.
  EXPECT_EQ(registered, 269 + 268 + 7);
}

TEST(TerminateCodes, SpecificUnassignedExamplesFromTheNotes) {
  EXPECT_FALSE(IsRegistered({0x0, 0x2, 0x00}));  // irdma's 0x0/0x2/0x00
  EXPECT_FALSE(IsRegistered({0x2, 0x3, 0x02}));  // irdma's CRC error code
  EXPECT_FALSE(IsRegistered({0x1, 0x0, 0x01}));  // DDP Local Catastrophic takes only 0x00
  EXPECT_FALSE(IsRegistered({0x1, 0x2, 0x00}));  // untagged codes start at 0x01
  EXPECT_FALSE(IsRegistered({0x2, 0x0, 0x00}));
  EXPECT_FALSE(IsRegistered({0x2, 0x0, 0x08}));
  EXPECT_FALSE(IsRegistered({0x3, 0x0, 0x00}));  // Layers 0x3-0xF are not defined
}

TEST(TerminateCodes, NamedConstantsHaveTheRfcValues) {
  EXPECT_EQ(term::kRdmapInvalidStag, (TerminateCode{0, 1, 0x00}));
  EXPECT_EQ(term::kRdmapToWrap, (TerminateCode{0, 1, 0x04}));
  EXPECT_EQ(term::kRdmapProtectionStagCannotBeInvalidated, (TerminateCode{0, 1, 0x09}));
  EXPECT_EQ(term::kRdmapOperationStagCannotBeInvalidated, (TerminateCode{0, 2, 0x09}));
  EXPECT_EQ(term::kRdmapInvalidRdmapVersion, (TerminateCode{0, 2, 0x05}));
  EXPECT_EQ(term::kRdmapUnexpectedOpcode, (TerminateCode{0, 2, 0x06}));
  EXPECT_EQ(term::kRdmapCatastrophicLocalizedToStream, (TerminateCode{0, 2, 0x07}));
  EXPECT_EQ(term::kRdmapOperationUnspecified, (TerminateCode{0, 2, 0xFF}));
  EXPECT_EQ(term::kDdpTaggedInvalidDdpVersion, (TerminateCode{1, 1, 0x04}));
  EXPECT_EQ(term::kDdpUntaggedInvalidQn, (TerminateCode{1, 2, 0x01}));
  EXPECT_EQ(term::kDdpUntaggedMessageTooLong, (TerminateCode{1, 2, 0x05}));
  EXPECT_EQ(term::kDdpUntaggedInvalidDdpVersion, (TerminateCode{1, 2, 0x06}));
  EXPECT_EQ(term::kMpaCrcError, (TerminateCode{2, 0, 0x02}));
  EXPECT_EQ(term::kMpaNoMatchingRtrOption, (TerminateCode{2, 0, 0x07}));
  // Every named constant is a registered code.
  for (TerminateCode c : {term::kRdmapLocalCatastrophic,
                          term::kRdmapBaseOrBoundsViolation,
                          term::kRdmapAccessRightsViolation,
                          term::kRdmapStagNotAssociatedWithRdmapStream,
                          term::kRdmapProtectionUnspecified,
                          term::kRdmapCatastrophicGlobal,
                          term::kDdpLocalCatastrophic,
                          term::kDdpTaggedInvalidStag,
                          term::kDdpTaggedBaseOrBoundsViolation,
                          term::kDdpTaggedStagNotAssociatedWithDdpStream,
                          term::kDdpTaggedToWrap,
                          term::kDdpUntaggedInvalidMsnNoBufferAvailable,
                          term::kDdpUntaggedInvalidMsnRangeNotValid,
                          term::kDdpUntaggedInvalidMo,
                          term::kDdpReservedForLlp,
                          term::kMpaTcpConnectionLost,
                          term::kMpaMarkerMismatch,
                          term::kMpaInvalidRequestOrReply,
                          term::kMpaLocalCatastrophic,
                          term::kMpaInsufficientIrdResources}) {
    EXPECT_TRUE(IsRegistered(c)) << Describe(c);
  }
}

TEST(TerminateCodes, TableAndLookupAgree) {
  EXPECT_EQ(TerminateCodeTable().size(), 34u);  // 38 TSV rows minus 4 catch-alls
  for (const TerminateCodeEntry& e : TerminateCodeTable()) {
    EXPECT_EQ(FindTerminateCode({e.layer, e.error_type, e.error_code}), &e);
  }
  EXPECT_STREQ(FindTerminateCode(term::kDdpUntaggedInvalidMo)->error_code_name, "Invalid MO");
  EXPECT_STREQ(FindTerminateCode(term::kRdmapUnexpectedOpcode)->error_type_name, "Remote Operation Error");
  EXPECT_STREQ(TerminateLayerName(0), "RDMAP");
  EXPECT_STREQ(TerminateLayerName(2), "LLP");
  EXPECT_STREQ(TerminateLayerName(7), "undefined");
}

}  // namespace
}  // namespace rdmapct::wire
