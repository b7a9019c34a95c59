// Streaming MPA receiver for one direction of a connection (RFC 5044 §4, §6).
//
// Feed it the TCP payload octets of one direction in order, cut anywhere
// (one octet at a time works; R5044-5.1-05, R5044-A.4-01). It
//  - optionally decodes the MPA Request or Reply Frame first;
//  - finds each FPDU by ULPDU_Length chaining (R5044-5.2-01, R5044-6-03) and
//    waits until the whole FPDU is present (R5044-6-04);
//  - with Markers, removes them and checks each FPDUPTR against the FPDU
//    chain (low two bits treated as zero, R5044-4.3-09) - checking is
//    OPTIONAL for an in-order receiver (R5044-8-05) and on by default here;
//  - with CRCs, checks the CRC over the exact octets on the wire, Markers
//    included where the RFC assigns them (R5044-4.4-11/12/14);
//  - does not check PAD contents (R5044-4.1-04) nor Marker RESERVED (R5044-4.2-03);
//  - calls back once per FPDU with a lightweight MpaFpdu (R5044-4.3-15:
//    the ULPDU without Markers, header, PAD or CRC).
//
// Output: a callback, `void(const MpaFpdu&)`, invoked synchronously from
// Feed in stream order. MpaFpdu::ulpdu is only valid during the callback:
// it points into the chunk passed to Feed when the ULPDU lies inside that
// chunk and no Marker splits it (zero copy), otherwise into a buffer owned
// by the deframer. The callback costs one indirect call per FPDU; nothing is
// virtual or called per octet, and no allocation happens per FPDU once the
// internal buffers have grown to the largest FPDU seen.
//
// Errors: Feed returns the first error. It carries the absolute stream
// offset (octets from the first octet ever fed) and is latched: every later
// Feed returns it again and delivers nothing (R5044-8-09: no FPDU is passed
// on after an error). Kinds:
//   startup frame: as DecodeMpaStartupFrame (kBadKey, kTooLong, ...);
//   kTooLong "ULPDU_Length" (value = length) above max_ulpdu_length, at
//     the ULPDU_Length field, reported as soon as the field is present;
//   kInvalidValue "ULPDU_Length" below 14 if reject_shorter_than_ddp_header;
//   kCrcMismatch "CRC" at the CRC field, value = received << 32 | computed;
//   kMarkerMismatch "FPDUPTR" at the Marker's first octet, value = the
//     FPDUPTR received. The CRC is checked first: a Marker error is only
//     reported for an FPDU whose CRC is good or not checked (R5044-8-T03).
// An auditor can keep going instead: continue_after_crc_error and
// continue_after_marker_mismatch deliver the FPDU with crc_ok / marker_ok
// false (trusting ULPDU_Length) and do not latch.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>

#include "reference/wire/bytes.h"
#include "reference/wire/mpa.h"
#include "reference/wire/result.h"

namespace rdmapct::wire {

struct MpaDeframerConfig {
  // The smallest DDP header (tagged, RFC 5041 §4.2): a shorter ULPDU cannot
  // be a DDP Segment. MPA itself allows it, so by default it is only flagged.
  static constexpr uint16_t kSmallestDdpHeader = 14;

  bool crc_enabled = true;
  bool markers_enabled = false;
  // Marker-space position of the first FPDU octet fed:
  // (SeqNum of that octet - SeqStart) mod 2^32; 0 when feeding starts with
  // the first FPDU of Full Operation. Must be a multiple of 4 for a
  // conformant stream, but any value is handled. Not used with
  // expect_startup_frame: SeqStart is then the octet after the frame
  // (R5044-4.3-10, R5044-7.1.2-R07).
  uint32_t first_position = 0;
  // The stream starts with an MPA Request/Reply Frame of this kind.
  bool expect_startup_frame = false;
  MpaFrameKind startup_kind = MpaFrameKind::kEither;
  // After the startup frame, hold the following octets until
  // StartFullOperation() gives the negotiated CRC/Marker use (which needs
  // the *other* direction's frame). false: go on with crc_enabled and
  // markers_enabled as configured here.
  bool wait_for_full_operation = true;
  std::size_t max_ulpdu_length = 0xFFFF;  // bounds the reassembly buffer
  bool check_markers = true;              // R5044-5.2-02, R5044-8-05
  bool reject_shorter_than_ddp_header = false;
  bool continue_after_crc_error = false;
  bool continue_after_marker_mismatch = false;
  // With CRCs off the field is not checked (R5044-4.1-07); compute it anyway
  // so an auditor can see whether the peer still generates it (R5044-4.4-08).
  bool compute_crc_when_disabled = false;
};

struct MpaFpdu {
  uint64_t offset = 0;         // first octet: the leading Marker if one precedes ULPDU_Length
  uint64_t header_offset = 0;  // the ULPDU_Length field (where FPDUPTRs point)
  uint32_t wire_length = 0;    // octets from `offset` through the CRC, Markers included
  uint16_t ulpdu_length = 0;
  uint16_t markers = 0;       // Markers removed, the leading one included
  ByteSpan ulpdu;             // valid during the callback only
  uint32_t received_crc = 0;  // CRC field, least significant octet first
  uint32_t computed_crc = 0;  // 0 unless computed
  bool crc_checked = false;
  bool crc_ok = true;                    // false only with continue_after_crc_error
  bool marker_ok = true;                 // false only with continue_after_marker_mismatch
  uint64_t bad_marker_offset = 0;        // first wrong Marker when !marker_ok
  bool zero_copy = false;                // ulpdu points into the caller's chunk
  bool shorter_than_ddp_header = false;  // ulpdu_length < 14
};

class MpaDeframer {
 public:
  explicit MpaDeframer(const MpaDeframerConfig& config = {});

  // Processes `chunk`; `on_fpdu(const MpaFpdu&)` runs for every complete
  // FPDU. Returns the (latched) error, if any. An empty chunk is allowed
  // (it processes octets held for StartFullOperation).
  template <class F>
  Status Feed(ByteSpan chunk, F&& on_fpdu) {
    using Fn = std::remove_reference_t<F>;
    Sink sink{const_cast<void*>(static_cast<const void*>(std::addressof(on_fpdu))),
              [](void* ctx, const MpaFpdu& f) { (*static_cast<Fn*>(ctx))(f); }};
    return FeedImpl(chunk, sink);
  }

  // Sets the negotiated CRC and Marker use (NegotiateMpa) and releases the
  // octets held after the startup frame; they are parsed by the next Feed.
  // Also usable before the frame is complete, or without a startup frame
  // (between Feed calls) to change the framing of what follows.
  void StartFullOperation(bool crc_enabled, bool markers_enabled);

  // At the end of the stream: the latched error, or kTruncated ("MPA
  // Request/Reply Frame" or "FPDU", value = octets present) when an
  // incomplete frame or FPDU remains; Ok otherwise.
  Status Finish() const;

  const std::optional<MpaStartupFrame>& startup_frame() const { return startup_frame_; }
  bool awaiting_full_operation() const { return phase_ == Phase::kHeld; }
  const std::optional<DecodeError>& error() const { return error_; }
  const MpaDeframerConfig& config() const { return config_; }
  uint64_t octets_fed() const { return fed_; }
  uint64_t fpdu_count() const { return fpdus_; }
  std::size_t buffered() const { return pending_.size() + held_.size(); }
  // Marker-space position of the next FPDU octet to parse.
  uint32_t position() const { return position_; }

 private:
  struct Sink {
    void* ctx;
    void (*fn)(void*, const MpaFpdu&);
  };
  enum class Phase : uint8_t { kStartup, kHeld, kFpdus, kFailed };
  // Outcome of one parse attempt on a contiguous buffer.
  struct Step {
    std::size_t consumed = 0;  // > 0: one unit parsed
    std::size_t need = 0;      // consumed == 0: octets needed from the unit's start
    bool failed = false;       // error_ has been set
  };
  struct Layout;

  Status FeedImpl(ByteSpan chunk, const Sink& sink);
  bool FeedFpdus(ByteSpan chunk, const Sink& sink);
  bool DrainPending(ByteSpan& chunk, const Sink& sink);
  Step ParseStartupFrame(ByteSpan data);
  Step ParseFpdu(const uint8_t* p, std::size_t n, bool in_chunk, const Sink& sink);
  bool CheckHeader(uint16_t ulpdu_length, uint64_t header_offset);
  void CheckMarkers(const uint8_t* p, const Layout& l, MpaFpdu& f);
  bool Judge(MpaFpdu& f, uint64_t crc_offset, uint16_t bad_fpduptr);
  ByteSpan Ulpdu(const uint8_t* p, const Layout& l, bool& contiguous);
  bool Fail(DecodeError e);

  MpaDeframerConfig config_;
  Phase phase_;
  bool full_operation_configured_;
  std::optional<MpaStartupFrame> startup_frame_;
  std::optional<DecodeError> error_;
  Bytes pending_;  // an incomplete frame or FPDU, starting at stream offset consumed_
  std::size_t pending_need_ = 0;
  Bytes held_;             // octets after the startup frame, awaiting StartFullOperation
  Bytes ulpdu_buf_;        // ULPDUs gathered around Markers
  uint64_t consumed_ = 0;  // stream offset of the next unparsed octet
  uint64_t fed_ = 0;
  uint64_t fpdus_ = 0;
  uint32_t position_;  // Marker-space position of stream offset consumed_
};

}  // namespace rdmapct::wire
