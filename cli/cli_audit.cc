// `rdmapct replay FILE --audit`: prints what replay::AuditCaptureFile found.
// The level of each violation (MUST, SHOULD, ...) is the level of its
// requirement id in the catalog (requirements.tsv).
#include <nlohmann/json.hpp>

#include "cli/cli_error.h"
#include "cli/cli_interrupt.h"
#include "cli/cli_replay.h"
#include "cli/commands.h"
#include "conformance/catalog.h"
#include "replay/audit.h"

namespace rdmapct::cli {
namespace {

using replay::AuditFinding;
using replay::AuditReport;
using replay::ConnectionAudit;

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string Level(const std::optional<conformance::Catalog>& catalog, const std::string& id) {
  if (!catalog) return "?";
  const conformance::Requirement* r = catalog->Find(id);
  return r == nullptr ? "?" : std::string(conformance::LevelName(r->level));
}

// "connection 0, Initiator -> Responder (10.0.0.1:49152 -> 10.0.0.2:5040),
// frame 9, stream offset 112: MUST R5040-5.2.1-09 [read-source-...]: ..."
std::string FindingLine(const AuditFinding& f, const std::string& level) {
  std::string where = f.capture_frame != 0 ? "frame " + std::to_string(f.capture_frame) + ", stream offset "
                                           : "end of stream, stream offset ";
  return "connection " + std::to_string(f.connection) + ", " + f.direction_name + " (" + f.flow + "), " + where +
         std::to_string(f.offset) + ": " + level + " " + f.requirement + " [" + f.check + "]: " + f.detail;
}

std::string DirectionSummary(const ConnectionAudit& c, int d) {
  return Plural(c.segments[d], "ULPDU", "ULPDUs") + " (" + Plural(c.octets[d], "octet", "octets") + ")";
}

std::string ConnectionLine(const ConnectionAudit& c) {
  std::string s = "connection " + std::to_string(c.index) + ": " + c.client + " -> " + c.server;
  if (c.initiator) {
    const int i = *c.initiator;
    s += ", MPA Initiator " + std::string(i == 0 ? c.client : c.server) + "; Initiator -> Responder " +
         DirectionSummary(c, i) + ", Responder -> Initiator " + DirectionSummary(c, 1 - i);
  } else {
    s += " (MPA handshake not captured); client -> server " + DirectionSummary(c, 0) + ", server -> client " +
         DirectionSummary(c, 1);
  }
  s += c.advertisement ? "; the Responder's resources from its Advertisement" : "; resources inferred from the traffic";
  return s + "; " + Plural(c.findings, "violation", "violations");
}

nlohmann::ordered_json FindingJson(const AuditFinding& f, const std::string& level) {
  return {{"connection", f.connection},
          {"direction", f.direction_name},
          {"flow", f.flow},
          {"capture_frame", f.capture_frame},
          {"stream_offset", f.offset},
          {"requirement", f.requirement},
          {"level", level},
          {"check", f.check},
          {"detail", f.detail}};
}

nlohmann::ordered_json ConnectionJson(const ConnectionAudit& c) {
  nlohmann::ordered_json j = {{"connection", c.index}, {"client", c.client}, {"server", c.server}};
  j["initiator"] = c.initiator ? nlohmann::ordered_json(*c.initiator == 0 ? c.client : c.server) : nullptr;
  j["ulpdus"] = {c.segments[0], c.segments[1]};
  j["octets"] = {c.octets[0], c.octets[1]};
  j["advertisement"] = c.advertisement;
  j["violations"] = c.findings;
  return j;
}

void PrintJson(const ReplayCommand& cmd, const AuditReport& r, const std::optional<conformance::Catalog>& catalog,
               std::FILE* out) {
  nlohmann::ordered_json j;
  j["file"] = cmd.file;
  j["profile"] = std::string(wire::ProfileName(cmd.profile));
  j["violations"] = nlohmann::ordered_json::array();
  for (const AuditFinding& f : r.findings) j["violations"].push_back(FindingJson(f, Level(catalog, f.requirement)));
  j["connections"] = nlohmann::ordered_json::array();
  for (const ConnectionAudit& c : r.connections) j["connections"].push_back(ConnectionJson(c));
  nlohmann::ordered_json warnings = nlohmann::ordered_json::array(), errors = nlohmann::ordered_json::array();
  for (const capture::CaptureIssue& i : r.issues) {
    if (i.error && (i.error->kind == wire::DecodeErrorKind::kCrcMismatch ||
                    i.error->kind == wire::DecodeErrorKind::kMarkerMismatch)) {
      continue;  // in "violations"
    }
    nlohmann::ordered_json w = {{"message", i.message}};
    if (i.capture_frame != 0) w["capture_frame"] = i.capture_frame;
    (i.severity == capture::IssueSeverity::kError ? errors : warnings).push_back(std::move(w));
  }
  if (!r.read.error.empty()) errors.push_back({{"message", r.read.error}});
  j["warnings"] = std::move(warnings);
  j["errors"] = std::move(errors);
  j["summary"] = {{"tcp_connections", r.tcp_connections},
                  {"iwarp_connections", r.connections.size()},
                  {"ulpdus", r.segments},
                  {"octets", r.octets},
                  {"violations", r.findings.size()},
                  {"complete", r.read.error.empty()}};
  std::fprintf(out, "%s\n", j.dump(2).c_str());
}

void PrintText(const AuditReport& r, const std::optional<conformance::Catalog>& catalog, const std::string& file,
               std::FILE* out) {
  std::size_t next = 0;
  for (const ConnectionAudit& c : r.connections) {
    for (; next < r.findings.size() && r.findings[next].connection == c.index; ++next) {
      const AuditFinding& f = r.findings[next];
      std::fprintf(out, "%s\n", FindingLine(f, Level(catalog, f.requirement)).c_str());
    }
    std::fprintf(out, "%s\n", ConnectionLine(c).c_str());
  }
  std::fprintf(out, "audit: %s: %s of %s, %s, %s\n", file.c_str(),
               Plural(r.connections.size(), "iWARP connection", "iWARP connections").c_str(),
               Plural(r.tcp_connections, "TCP connection", "TCP connections").c_str(),
               Plural(r.segments, "ULPDU", "ULPDUs").c_str(),
               Plural(r.findings.size(), "violation", "violations").c_str());
}

}  // namespace

int RunReplayAudit(const ReplayCommand& cmd, std::FILE* out, std::FILE* err) {
  replay::AuditOptions options;
  options.profile = cmd.profile;
  options.connection = cmd.connection;
  InterruptScope interrupt("rdmapct replay");
  options.stop = &interrupt.level();
  const AuditReport r = replay::AuditCaptureFile(cmd.file, options);
  if (!r.read.opened || !r.link_type_supported) {
    PrintError(err, "replay", r.read.error);
    return kExitUsage;
  }
  if (r.connection_missing) {
    Errorf(err, "replay", "--connection {}: {} has {} TCP connection{}", *cmd.connection, cmd.file, r.tcp_connections,
           r.tcp_connections == 1 ? "" : "s");
    return kExitUsage;
  }
  for (const capture::CaptureIssue& i : r.issues) {
    // CRC and Marker errors are violations of their sender, printed as such.
    if (i.error && (i.error->kind == wire::DecodeErrorKind::kCrcMismatch ||
                    i.error->kind == wire::DecodeErrorKind::kMarkerMismatch)) {
      continue;
    }
    if (i.severity == capture::IssueSeverity::kError)
      PrintError(err, "replay", i.message);
    else
      PrintWarning(err, "replay", i.message);
  }
  conformance::CatalogLoad load = conformance::Catalog::LoadDefault();
  if (!load.ok()) PrintWarning(err, "replay", "levels unknown: " + load.error.Describe());
  if (cmd.json) {
    PrintJson(cmd, r, load.catalog, out);
  } else {
    PrintText(r, load.catalog, cmd.file, out);
  }
  std::fflush(out);
  if (!r.read.error.empty()) {
    // A file cut short is malformed input: status 1, as with --decode (the
    // frames before the cut were audited and printed).
    Errorf(err, "replay", "{} (the audit covers the frames before it only)", r.read.error);
    return kExitFail;
  }
  if (r.interrupted) {
    std::fprintf(err, "rdmapct replay: INTERRUPTED, partial: the audit covers the connections above only\n");
    return kExitInterrupted;
  }
  return r.findings.empty() ? kExitOk : kExitFail;
}

}  // namespace rdmapct::cli
