// Auditing captured iWARP traffic (`rdmapct replay FILE --audit`): every
// connection of a capture is decoded by the capture layer as the capture
// streams in (capture::StreamCaptureFile, CaptureStreamSink::OnUnit gives
// the raw ULPDUs per direction as they are decoded) and both of its
// endpoints are run as passive reference models
// (model::EndpointConfig::passive):
//
//   - the model of the receiver checks what it receives against the
//     receiver's rules of RFC 5040/5041/7306/COMMIT (DV/RV/QN/opcode,
//     MSN and MO, DDP bounds where the STags are known, Read Request
//     source, IRD, Read Responses against the Read Requests...), and says
//     which Terminate the receiver must then send;
//   - the model of the sender checks what it sends (header fields, MSN
//     order, responses in request order matching their requests, nothing
//     after its own Terminate);
//   - a Terminate the receiver sends is compared with the Terminate the
//     rule requires (its accept-set, and the M/D/R shape of RFC 5040
//     Figure 10 with the echoed DDP header), and a required Terminate that
//     never came is reported;
//   - an FPDU whose CRC or Markers are wrong is a violation of its sender
//     (RFC 5044), is not handed to DDP, and requires a Terminate too.
//
// Both directions of a connection are interleaved in capture order: a
// ULPDU counts as received in the capture frame that carried its last
// octet. What an endpoint's resources are is inferred from the traffic
// (passive mode: unknown STags are accepted, receives of unknown size are
// assumed) except where the Responder announced them in a test-ULP
// Advertisement (docs/target-convention.md) in its MPA Reply: then its
// regions (STag, bounds, access, attributes), receive buffers and IRD are
// known and checked. This layer does no printing; the CLI prints.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture_decode.h"
#include "reference/wire/profile.h"

namespace rdmapct::replay {

struct AuditOptions {
  wire::Profile profile = wire::Profile::kCommit;
  std::optional<std::size_t> connection;  // audit only this connection
  // Also the cap on ULPDU octets waiting per connection for their turn in
  // capture order (max_out_of_order; beyond it, a warning and decoding order).
  capture::ReassemblyOptions reassembly;
  const std::atomic<int>* stop = nullptr;  // capture::CaptureStreamOptions::stop
};

// One protocol violation.
struct AuditFinding {
  std::size_t connection = 0;
  int direction = 0;           // whose octets broke the rule: 0 client -> server, 1 server -> client
  std::string direction_name;  // "Initiator -> Responder", ...
  std::string flow;            // "10.0.0.1:49152 -> 10.0.0.2:5040" (that direction)
  uint64_t capture_frame = 0;  // where the offending octets start (0: none)
  uint64_t offset = 0;         // their TCP stream offset in that direction
  std::string requirement;     // requirements.tsv id
  std::string check;           // kebab-case: a model::ViolationKindName or an audit check
  std::string detail;          // one line: what was seen, and what was expected
};

struct ConnectionAudit {
  std::size_t index = 0;
  std::string client, server;  // "addr:port"
  bool iwarp = false;
  std::optional<int> initiator;        // direction the MPA Initiator sends
  std::array<uint64_t, 2> segments{};  // ULPDUs audited per direction
  std::array<uint64_t, 2> octets{};    // stream octets per direction
  bool advertisement = false;          // the Responder's resources were known from its Advertisement
  uint64_t findings = 0;
};

struct AuditReport {
  capture::CaptureReadSummary read;  // read.opened false: nothing read (read.error says why)
  bool link_type_supported = true;
  bool connection_missing = false;  // options.connection names no connection
  std::size_t tcp_connections = 0;
  std::vector<ConnectionAudit> connections;   // the iWARP ones audited
  std::vector<AuditFinding> findings;         // in capture order per connection
  std::vector<capture::CaptureIssue> issues;  // the capture layer's warnings and errors
  uint64_t octets = 0;                        // stream octets of the audited connections
  uint64_t segments = 0;                      // ULPDUs audited
  bool interrupted = false;                   // options.stop was set: the audit covers part of the capture
  // The most octets held at once: for TCP reassembly and MPA decoding
  // (capture::CaptureDecodeSummary::peak_buffered_octets), and ULPDUs
  // waiting for their turn in capture order.
  std::size_t peak_buffered_octets = 0;
  std::size_t peak_waiting_octets = 0;
};

// Reads `path` and audits every iWARP connection in it, as the capture
// streams in (capture::StreamCaptureFile): memory is bounded per
// connection, not by the size of the capture.
AuditReport AuditCaptureFile(const std::string& path, const AuditOptions& options);

// The same audit on segments handed in one by one, for tests and
// benchmarks that build their conversations in memory.
class SegmentAudit {
 public:
  explicit SegmentAudit(const AuditOptions& options = {});
  ~SegmentAudit();
  SegmentAudit(const SegmentAudit&) = delete;
  SegmentAudit& operator=(const SegmentAudit&) = delete;

  // Segments in capture order (frame numbers from 1).
  void Add(const capture::TcpSegment& segment);
  // Octets held now for reassembly and decoding.
  std::size_t buffered_octets() const;
  // Audits what is left; call once.
  AuditReport Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rdmapct::replay
