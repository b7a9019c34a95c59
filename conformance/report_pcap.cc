#include "conformance/report_pcap.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <system_error>

#include "conformance/report_common.h"

namespace rdmapct::conformance {
namespace {

namespace fs = std::filesystem;
using capture::Sender;
using capture::TcpEvent;
using capture::TcpEventKind;

// Builds one connection's events while tracking where each direction's
// stream has reached and whether that direction can still send.
class ConnectionEvents {
 public:
  explicit ConnectionEvents(capture::TcpConnection& conn) : conn_(conn) {}

  void Add(const FrameRecord& r) {
    if (reset_) return;  // nothing leaves a reset connection
    // The side whose octets come first opened the connection: the suite's
    // Request, or the target's when the target is the MPA Initiator (a
    // listen step, convention §10), which makes the target the TCP client.
    if (!started_) {
      started_ = true;
      conn_.hosts_swapped = target_is_client_ = r.direction == Direction::kFromTarget;
    }
    const int d = r.direction == Direction::kToTarget ? 0 : 1;
    const Sender sender = (d == 0) != target_is_client_ ? Sender::kClient : Sender::kServer;
    if (r.kind == FrameKind::kRst) {  // allowed after a FIN too (an abort after a close)
      conn_.events.push_back(TcpEvent{sender, TcpEventKind::kRst, r.at, {}, 0});
      reset_ = true;
      return;
    }
    if (fin_[d]) return;  // the octets were never sent: the side had closed
    SkipUnrecorded(d, sender, r);
    if (r.kind == FrameKind::kFin) {
      conn_.events.push_back(TcpEvent{sender, TcpEventKind::kFin, r.at, {}, 0});
      fin_[d] = true;
      return;
    }
    // A record starting before the stream's end repeats octets already
    // placed; only the new ones go on.
    const uint64_t overlap = std::min<uint64_t>(next_[d] - std::min(next_[d], r.stream_offset), r.raw.size());
    if (overlap == r.raw.size()) return;
    conn_.events.push_back(TcpEvent{sender, TcpEventKind::kData, r.at,
                                    wire::Bytes(r.raw.begin() + static_cast<std::ptrdiff_t>(overlap), r.raw.end()), 0});
    next_[d] += r.raw.size() - overlap;
  }

 private:
  // Octets the recording bound dropped: the sequence numbers jump as far.
  void SkipUnrecorded(int d, Sender sender, const FrameRecord& r) {
    if (r.stream_offset <= next_[d]) return;
    uint64_t gap = r.stream_offset - next_[d];
    while (gap > 0) {
      const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(gap, 0x40000000));  // well inside 2^31
      conn_.events.push_back(TcpEvent{sender, TcpEventKind::kGap, r.at, {}, n});
      gap -= n;
    }
    next_[d] = r.stream_offset;
  }

  capture::TcpConnection& conn_;
  uint64_t next_[2] = {0, 0};
  bool fin_[2] = {false, false};
  bool reset_ = false;
  bool started_ = false;
  bool target_is_client_ = false;
};

}  // namespace

std::string PcapFileName(std::string_view case_id) {
  std::string name;
  name.reserve(case_id.size() + 5);
  for (char ch : case_id) {
    const bool keep = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-';
    name += keep ? ch : '_';
  }
  if (name.empty() || name == "." || name == "..") name = "case" + name;  // never a directory name
  return name + ".pcap";
}

capture::TcpCapture CaseCapture(const CaseResult& c) {
  capture::TcpCapture cap;
  cap.start = c.start;
  std::map<uint32_t, capture::TcpConnection> by_index;
  std::map<uint32_t, ConnectionEvents> events;
  for (const FrameRecord& r : c.frames) {
    auto [it, fresh] = by_index.try_emplace(r.connection);
    if (fresh) events.try_emplace(r.connection, it->second);
    events.at(r.connection).Add(r);
  }
  const capture::PcapWriterOptions defaults;
  for (auto& [index, conn] : by_index) {
    // Port by connection number, so "connection 2" of the report is port
    // 49154 whatever connections recorded nothing.
    if (index <= 0xFFFFu - defaults.first_client_port) {
      conn.client_port = static_cast<uint16_t>(defaults.first_client_port + index);
    }
    cap.connections.push_back(std::move(conn));
  }
  return cap;
}

bool WriteCasePcap(const fs::path& file, const CaseResult& c, std::string& error) {
  return capture::WriteTcpCapture(file, CaseCapture(c), capture::PcapWriterOptions{}, error);
}

bool WriteRunPcaps(const fs::path& dir, const RunResult& run, std::string& error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    error = dir.string() + ": cannot create the capture directory" + (ec ? ": " + ec.message() : "");
    return false;
  }
  std::string first;
  std::size_t failed = 0;
  for (const CaseResult& c : run.cases) {
    std::string e;
    if (WriteCasePcap(dir / PcapFileName(c.id), c, e)) continue;
    if (failed++ == 0) first = e;
  }
  if (failed == 0) return true;
  error = first + (failed > 1 ? " (and " + std::to_string(failed - 1) + " more capture(s) not written)" : "");
  return false;
}

void InstallPcapWriter() { SetPcapWriter(WriteRunPcaps); }

RunResult CasesNeedingFailurePcap(const RunResult& run) {
  RunResult out;
  out.target = run.target;
  out.profile = run.profile;
  out.target_info = run.target_info;
  out.start = run.start;
  out.duration = run.duration;
  out.aborted = run.aborted;
  out.abort_reason = run.abort_reason;
  for (const CaseResult& c : run.cases) {
    const bool problem = c.verdict == Verdict::kFail || c.verdict == Verdict::kError;
    if (problem && !c.frames.empty()) out.cases.push_back(c);
  }
  out.counts = CountVerdicts(out.cases);
  return out;
}

}  // namespace rdmapct::conformance
