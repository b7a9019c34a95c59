#include "targets/reference_query.h"

#include <charconv>
#include <limits>
#include <vector>

namespace rdmapct::targets {

namespace {

bool ParseNumber(std::string_view key, std::string_view value, uint64_t max, uint64_t& out, std::string& error) {
  const auto r = std::from_chars(value.data(), value.data() + value.size(), out);
  if (r.ec != std::errc{} || r.ptr != value.data() + value.size() || out > max) {
    error = "bad value for " + std::string(key) + ": \"" + std::string(value) + "\" (0.." + std::to_string(max) + ")";
    return false;
  }
  return true;
}

bool ParseFlag(std::string_view key, std::string_view value, bool& out, std::string& error) {
  uint64_t v = 0;
  if (!ParseNumber(key, value, 1, v, error)) return false;
  out = v != 0;
  return true;
}

bool ParseRevisions(std::string_view value, std::vector<uint8_t>& revs, std::string& error) {
  revs.clear();
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    uint64_t rev = 0;
    if (!ParseNumber("revs", value.substr(0, comma), 255, rev, error)) return false;
    revs.push_back(static_cast<uint8_t>(rev));
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
  }
  return true;
}

// One key=value pair of a reference query.
bool ApplyKey(std::string_view key, std::string_view value, ReferenceTargetConfig& c, std::string& error) {
  uint64_t n = 0;
  if (key == "profile") {
    auto p = wire::ParseProfile(value);
    if (!p) error = "unknown profile \"" + std::string(value) + "\" (rfc5040, rfc7306, commit)";
    if (p) c.profile = *p;
    return p.has_value();
  }
  if (key == "fault") {
    if (auto bad = c.faults.AddByNames(value)) {
      error = "unknown fault \"" + std::string(*bad) + "\" (see rdmapct --list-faults)";
      return false;
    }
    return true;
  }
  if (key == "crc") return ParseFlag(key, value, c.mpa.crc, error);
  if (key == "markers") return ParseFlag(key, value, c.mpa.request_markers, error);
  if (key == "rfc6581") return ParseFlag(key, value, c.mpa.rfc6581, error);
  if (key == "keep_memory") return ParseFlag(key, value, c.keep_memory, error);
  // commands=0: a test-ULP 1.0 target (no command records, convention §7).
  if (key == "commands") return ParseFlag(key, value, c.commands, error);
  // concurrent=1: the target advertises concurrent connections (convention §11).
  if (key == "concurrent") return ParseFlag(key, value, c.concurrent_connections, error);
  // shared=0: concurrent connections share no region (a 1.2 target, §12).
  if (key == "shared") return ParseFlag(key, value, c.shared_regions, error);
  if (key == "revs") return ParseRevisions(value, c.mpa.accepted_revisions, error);
  const uint64_t u16 = std::numeric_limits<uint16_t>::max();
  const uint64_t u32 = std::numeric_limits<uint32_t>::max();
  if (key == "ird" || key == "ord" || key == "buffers") {
    if (!ParseNumber(key, value, u16, n, error)) return false;
    uint16_t& field = key == "ird" ? c.ird : key == "ord" ? c.ord : c.receive_buffer_count;
    field = static_cast<uint16_t>(n);
    return true;
  }
  if (key == "buffer_size") {
    if (!ParseNumber(key, value, u32, n, error)) return false;
    c.receive_buffer_size = static_cast<uint32_t>(n);
    return true;
  }
  if (key == "mulpdu") {
    if (!ParseNumber(key, value, u32, n, error)) return false;
    c.mulpdu = n;
    return true;
  }
  error = "unknown reference option \"" + std::string(key) +
          "\" (profile, fault, crc, markers, rfc6581, revs, ird, ord, buffers, buffer_size, "
          "keep_memory, commands, concurrent, shared, mulpdu)";
  return false;
}

}  // namespace

bool ApplyReferenceQuery(std::string_view query, ReferenceTargetConfig& config, std::string& error) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      error = "reference option \"" + std::string(pair) + "\" needs a value (key=value)";
      return false;
    }
    if (!ApplyKey(pair.substr(0, eq), pair.substr(eq + 1), config, error)) return false;
  }
  return true;
}

}  // namespace rdmapct::targets
