// A hand-built MPA Initiator for the target tests: it builds the Request
// with the wire encoders, frames FPDUs (CRC and Markers as negotiated) and
// deframes what the target sends, so every test talks to the target exactly
// as a suite would over TCP.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/crc32c.h"
#include "reference/wire/mpa.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/mpa_markers.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"
#include "targets/reference_target.h"

namespace rdmapct::targets::testing {

using wire::Bytes;
using wire::ByteSpan;
using wire::Opcode;

struct InitiatorOptions {
  uint8_t revision = 1;
  bool crc = true;
  bool markers = false;                            // M: Markers wanted in target -> suite FPDUs
  std::optional<wire::EnhancedIrdOrd> enhanced{};  // Rev 2, S = 1 when set
  std::optional<wire::SuiteRequest> suite_request{};
  // Test-ULP 1.1: appended after the Suite Request (give it minor 1).
  std::optional<wire::SuiteRequestExtension> extension{};
};

inline wire::MpaStartupFrame MakeRequest(const InitiatorOptions& o) {
  wire::MpaStartupFrame f;
  f.is_reply = false;
  f.revision = o.revision;
  f.crc_required = o.crc;
  f.marker_required = o.markers;
  f.enhanced = o.enhanced.has_value();
  f.enhanced_data = o.enhanced;
  if (o.suite_request) wire::EncodeSuiteRequest(*o.suite_request, f.private_data);
  if (o.extension) wire::EncodeSuiteRequestExtension(*o.extension, f.private_data);
  return f;
}

// Drives one connection the way the suite would over TCP.
class Initiator {
 public:
  Initiator(ReferenceTarget& target, InitiatorOptions options = {}) : reference_(target.Accept()), options_(options) {}

  ReferenceTargetConnection& reference() { return *reference_; }

  // Sends the Request and decodes the Reply; false (with a gtest failure)
  // if there is none.
  bool Start() {
    Bytes out;
    reference_->OnBytes(wire::EncodeMpaStartupFrame(MakeRequest(options_)), out);
    auto reply = wire::DecodeMpaStartupFrame(out, {wire::MpaFrameKind::kReply});
    EXPECT_TRUE(reply.ok()) << (reply.ok() ? "" : reply.error().Describe());
    if (!reply.ok()) return false;
    reply_ = reply.value();
    EXPECT_EQ(out.size(), reply_->EncodedSize()) << "octets after the Reply (R5044-7.1.2-R04)";
    // The decoder already took the RFC 6581 word out of private_data.
    auto adv = wire::DecodeAdvertisementFromPrivateData(reply_->private_data, false);
    EXPECT_TRUE(adv.ok()) << (adv.ok() ? "" : adv.error().Describe());
    if (!adv.ok()) return false;
    advertisement_ = adv.value();
    crc_ = options_.crc || reply_->crc_required;
    wire::MpaDeframerConfig dc;
    dc.crc_enabled = crc_;
    dc.markers_enabled = options_.markers;
    deframer_.emplace(dc);
    if (reply_->marker_required) inserter_.emplace(0);
    return true;
  }

  const wire::MpaStartupFrame& reply() const { return *reply_; }
  const wire::Advertisement& advertisement() const { return *advertisement_; }
  const wire::AdvertisedRegion& Region(wire::RegionRole role) const {
    const wire::AdvertisedRegion* r = wire::SelectRegion(*advertisement_, role);
    EXPECT_NE(r, nullptr) << wire::RegionRoleName(role);
    static const wire::AdvertisedRegion kNone{};
    return r ? *r : kNone;
  }

  // Frames a ULPDU as this initiator must (CRC, Markers if the Reply asked).
  Bytes Frame(ByteSpan ulpdu, uint32_t crc_xor = 0) {
    wire::FpduEncodeOptions o{.crc_enabled = crc_, .crc_xor = crc_xor};
    Bytes b;
    if (inserter_) {
      inserter_->AppendUlpdu(b, ulpdu, o);
    } else {
      wire::AppendFpdu(b, ulpdu, o);
    }
    return b;
  }

  // Sends raw octets; returns what the target sent back (also deframed).
  Bytes SendRaw(ByteSpan bytes) {
    Bytes out;
    reference_->OnBytes(bytes, out);
    Collect(out);
    return out;
  }
  Bytes Send(const wire::RdmapSegment& seg, uint32_t crc_xor = 0) {
    return SendRaw(Frame(wire::EncodeSegment(seg), crc_xor));
  }
  Bytes Close() {
    Bytes out;
    reference_->OnPeerClosed(out);
    Collect(out);
    return out;
  }

  // ULPDUs the target sent so far (Event Sends included), in order.
  const std::vector<Bytes>& received() const { return received_; }
  std::vector<wire::RdmapMessageView> Decoded(wire::Profile p = wire::Profile::kRfc5040) const {
    std::vector<wire::RdmapMessageView> v;
    for (const Bytes& u : received_) {
      auto d = wire::DecodeRdmapSegment(u, p);
      EXPECT_TRUE(d.ok());
      if (d.ok()) v.push_back(d.value());
    }
    return v;
  }
  const std::vector<wire::MpaFpdu>& fpdus() const { return fpdus_; }
  const std::optional<wire::DecodeError>& deframe_error() const { return deframe_error_; }

 private:
  void Collect(const Bytes& out) {
    if (!deframer_ || out.empty()) return;
    auto st = deframer_->Feed(out, [&](const wire::MpaFpdu& f) {
      received_.emplace_back(f.ulpdu.begin(), f.ulpdu.end());
      fpdus_.push_back(f);
      fpdus_.back().ulpdu = {};
    });
    if (!st.ok()) deframe_error_ = st.error();
  }

  std::unique_ptr<ReferenceTargetConnection> reference_;
  InitiatorOptions options_;
  std::optional<wire::MpaStartupFrame> reply_;
  std::optional<wire::Advertisement> advertisement_;
  bool crc_ = true;
  std::optional<wire::MpaDeframer> deframer_;
  std::optional<wire::MarkerInserter> inserter_;
  std::vector<Bytes> received_;
  std::vector<wire::MpaFpdu> fpdus_;
  std::optional<wire::DecodeError> deframe_error_;
};

// The bitwise complement of the pattern: what cases write (convention §4).
inline Bytes ComplementOfPattern(const wire::AdvertisedRegion& r, uint64_t to, std::size_t n) {
  Bytes b = wire::RegionPattern(r, to, n);
  for (uint8_t& x : b) x = static_cast<uint8_t>(~x);
  return b;
}

}  // namespace rdmapct::targets::testing
