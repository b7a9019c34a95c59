// Decoding a capture of iWARP traffic: read it (pcap_reader.h), reassemble
// every TCP connection (tcp_reassembly.h), find each connection's MPA
// framing (mpa_framing.h) and decode both directions with the wire layer's
// stream decoder and describer (wire::DecodeMpaStream, wire::Describe*):
// every MPA Request/Reply Frame and FPDU with its DDP Segment and RDMAP
// message, each field by its RFC name, each frame tagged with the capture
// frame where it started, its connection and its direction.
//
// What is reported, besides the frames:
//   warnings: frames that could not be parsed, TCP gaps, conflicting
//     overlaps, dropped out-of-order octets, streams that cannot be
//     resynchronised, a capture ending inside a frame, non-iWARP connections;
//   errors: what the stream decoder reports (CRC or Marker mismatch, an
//     undecodable DDP/RDMAP header, a bad startup frame), a sender closing
//     its stream inside a frame, and a capture file that is cut short.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/mpa_framing.h"
#include "capture/pcap_reader.h"
#include "capture/tcp_reassembly.h"
#include "reference/wire/describe.h"
#include "reference/wire/profile.h"
#include "reference/wire/stream_decode.h"

namespace rdmapct::capture {

struct CaptureDecodeOptions {
  wire::Profile profile = wire::Profile::kCommit;
  std::optional<std::size_t> connection;  // decode and report only this connection
  ReassemblyOptions reassembly;
  // false: no field trees are built (CaptureFrame::tree and the connection
  // tree stay empty), for callers that only want OnUnit (an audit).
  bool describe = true;
  // An interrupt request (SIGINT / SIGTERM in `rdmapct replay`): once it is
  // non-zero, segments still read are dropped and no further connection is
  // decoded; the summary says `interrupted`.
  const std::atomic<int>* stop = nullptr;
};

enum class IssueSeverity : uint8_t { kWarning, kError };

struct CaptureIssue {
  IssueSeverity severity = IssueSeverity::kWarning;
  std::string message;                     // one line, without "warning: " / "error: "
  std::optional<std::size_t> connection;   // the connection concerned
  int direction = -1;                      // 0 client -> server, 1 server -> client, -1 none
  uint64_t capture_frame = 0;              // 0: none
  uint64_t frame = 0;                      // the decoded frame ("Frame N") it belongs to, 0: none
  std::optional<wire::DecodeError> error;  // a decoding error (offset: stream offset)
};

// One decoded MPA frame (startup frame or FPDU).
struct CaptureFrame {
  uint64_t number = 0;  // 1, 2, ... in output order
  std::size_t connection = 0;
  int direction = 0;           // 0 client -> server, 1 server -> client
  std::string direction_name;  // "Initiator -> Responder", or "client -> server" without a handshake
  uint64_t capture_frame = 0;  // where its first octet was captured
  uint64_t offset = 0;         // stream offset of its first octet
  // wire::DescribeStartupFrame / DescribeSegment's tree, named "Frame
  // <number>", with a first child "Capture" (frame, connection, addresses,
  // direction).
  wire::Field tree;
};

struct ConnectionDecode {
  const ReassembledConnection* connection = nullptr;
  const ConnectionFraming* framing = nullptr;
  std::array<uint64_t, 2> frames{};  // decoded per direction
  // "Connection N": addresses, roles, MPA revision and framing per direction,
  // octets, gaps and frames per direction.
  wire::Field tree;
};

// What a direction's decoder found, in stream order, as it finds it (before
// the frames of both directions are merged in capture order): the raw
// octets an auditor feeds to a protocol model.
struct CapturedUnit {
  enum class Kind : uint8_t { kStartupFrame, kSegment, kError };
  Kind kind = Kind::kSegment;
  std::size_t connection = 0;
  int direction = 0;                // 0 client -> server, 1 server -> client
  uint64_t offset = 0;              // stream offset of the first octet (kError: of the error)
  uint64_t length = 0;              // octets on the wire (FPDU or startup frame)
  uint64_t capture_frame = 0;       // frame of the first octet
  uint64_t last_capture_frame = 0;  // frame of the last octet: when the receiver had all of it
  // kStartupFrame: the frame; kSegment: the ULPDU (DDP header + payload,
  // Markers removed). Valid during the call only.
  wire::ByteSpan octets;
  // The octets lie in the reassembled stream as they are (no Markers were
  // removed), so they stay valid until DecodeCaptureFile / DecodeConnections
  // returns. Always false from the streaming decoder (capture_stream.h).
  bool stable = false;
  const wire::DecodedSegment* segment = nullptr;  // kSegment
  std::optional<wire::DecodeError> error;         // kError (offset: stream offset)
};

// Receives the results in output order: the capture's warnings, then per
// connection OnConnection, its warnings, and its frames each followed by
// its errors.
class CaptureDecodeSink {
 public:
  virtual ~CaptureDecodeSink() = default;
  virtual void OnConnection(const ConnectionDecode& connection) = 0;
  virtual void OnFrame(const CaptureFrame& frame) = 0;
  virtual void OnIssue(const CaptureIssue& issue) = 0;
  // Every startup frame, segment and stream-decoding error of a connection,
  // per direction in stream order, called before that connection's
  // OnConnection (which gives its framing). Default: ignored.
  virtual void OnUnit(const CapturedUnit&) {}
};

struct CaptureDecodeSummary {
  CaptureReadSummary read;      // read.opened false: nothing could be read (read.error says why)
  std::size_t connections = 0;  // TCP connections in the capture
  std::size_t iwarp_connections = 0;
  bool connection_missing = false;  // options.connection names no connection
  uint64_t frames = 0;              // frames reported
  uint64_t warnings = 0;
  uint64_t errors = 0;       // decoding errors (and a cut-short file)
  bool interrupted = false;  // options.stop was set: what was reported is partial
  // Streaming (StreamCaptureFile): the most octets held at once for
  // reassembly and decoding, all connections together.
  std::size_t peak_buffered_octets = 0;
};

// Reads, reassembles and decodes `path`.
CaptureDecodeSummary DecodeCaptureFile(const std::string& path, const CaptureDecodeOptions& options,
                                       CaptureDecodeSink& sink);

// The decoding part on connections already reassembled (Finish() called),
// for tests and callers with their own segments. Adds to `summary`.
void DecodeConnections(const TcpReassembler& reassembler, const CaptureDecodeOptions& options, CaptureDecodeSink& sink,
                       CaptureDecodeSummary& summary);

}  // namespace rdmapct::capture
