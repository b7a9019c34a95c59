// The pcap view of a run: each case's FrameRecords rebuilt into TCP
// connections (capture/pcap_writer.h) and written as one capture file per
// case, which Wireshark / tshark dissect as iWARP (MPA, DDP, RDMAP).
//
// Per connection of a case, the records' raw octets in order are each
// direction's TCP stream (result.h). The suite is the client 10.0.0.1
// (ports 49152, 49153, ... for connections 0, 1, ...), the target the
// server 10.0.0.2:5040; on a connection the target opened to the listening
// suite (convention §10) the target is the client, 10.0.0.2 with the port,
// and the suite the server, 10.0.0.1:5040. Where a direction's stream_offset jumps past what
// was recorded (the recording bound truncated a frame), the capture skips
// the same sequence numbers, so Wireshark reports the octets as not
// captured instead of splicing streams together. Records a TCP could not
// have sent (octets after that side's FIN, anything after a reset) are left
// out: those octets never reached the wire.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "capture/pcap_writer.h"
#include "conformance/result.h"

namespace rdmapct::conformance {

// Directory name for the captures of failing cases when no --pcap-dir is
// given (the CLI puts it next to the first report file, else in the
// current directory).
inline constexpr std::string_view kFailurePcapDirName = "rdmapct-failures";

// "rfc5040/7.2/read-req-invalid-src-stag" ->
// "rfc5040_7.2_read-req-invalid-src-stag.pcap": every character other than
// [A-Za-z0-9._-] becomes '_' (a case id from a --script file is free text).
std::string PcapFileName(std::string_view case_id);

// The TCP connections of one case, in connection order; timestamps are the
// case start plus each record's `at`.
capture::TcpCapture CaseCapture(const CaseResult& c);

// One case's capture into `file`; false with a one-line `error`.
bool WriteCasePcap(const std::filesystem::path& file, const CaseResult& c, std::string& error);

// Every case of `run` into dir/PcapFileName(id) (a case without frames gets
// a capture without packets). `dir` is created if missing. Goes on after a
// failed file; false with the first error (and how many more failed).
bool WriteRunPcaps(const std::filesystem::path& dir, const RunResult& run, std::string& error);

// Installs WriteRunPcaps as the report layer's pcap writer (SetPcapWriter in
// report_common.h), so WriteCasePcaps writes captures.
void InstallPcapWriter();

// The cases that must get a capture even without --pcap-dir: those that
// failed or ended in an error after exchanging at least one frame (a case
// that never connected has nothing to show). The rest of `run` is copied.
RunResult CasesNeedingFailurePcap(const RunResult& run);

}  // namespace rdmapct::conformance
