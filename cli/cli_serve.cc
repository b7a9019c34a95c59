#include "cli/cli_serve.h"

#include <signal.h>

#include <atomic>
#include <memory>

#include "cli/cli_error.h"
#include "cli/commands.h"
#include "targets/in_process.h"
#include "targets/tcp.h"
#include "targets/tcp_initiator.h"

namespace rdmapct::cli {
namespace {

constexpr const char* kPrefix = "rdmapct serve: ";

// The server a SIGINT/SIGTERM stops. TcpServer::Stop() is one write() to
// its self-pipe, which is async-signal-safe.
std::atomic<targets::TcpServer*> g_server{nullptr};
// serve --connect polls this flag (a lock-free atomic store is async-signal-safe).
std::atomic<bool> g_stop_initiator{false};

extern "C" void OnStopSignal(int) {
  g_stop_initiator.store(true);
  if (targets::TcpServer* s = g_server.load()) s->Stop();
}

// Installs the stop handlers for the lifetime of the object and restores
// the previous ones after.
class StopSignals {
 public:
  explicit StopSignals(targets::TcpServer* server) {
    g_server.store(server);
    g_stop_initiator.store(false);
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    g_server.store(nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

const char* CrcPolicyName(CrcPolicy p) {
  switch (p) {
    case CrcPolicy::kOn:
      return "on";
    case CrcPolicy::kOptional:
      return "optional";
    case CrcPolicy::kOff:
      return "off";
  }
  return "?";
}

}  // namespace

bool MakeServeConfig(const ServeCommand& cmd, targets::ReferenceTargetConfig& config, std::string& error) {
  config = targets::ReferenceTargetConfig{};
  config.profile = cmd.profile;
  for (const std::string& name : cmd.faults) {
    if (auto bad = config.faults.AddByNames(name)) {
      error = "unknown fault \"" + std::string(*bad) + "\" (see rdmapct --list-faults)";
      return false;
    }
  }
  // --mpa-rev 1: an RFC 5044-only Responder; a Rev 2 Request is closed
  // (RFC 5044 §7.1.1 Rev). --mpa-rev 2: Rev 1 and Rev 2 with RFC 6581.
  config.mpa.accepted_revisions = cmd.mpa_rev >= 2 ? std::vector<uint8_t>{1, 2} : std::vector<uint8_t>{1};
  config.mpa.rfc6581 = cmd.mpa_rev >= 2;
  config.mpa.crc = cmd.crc == CrcPolicy::kOn;
  config.mpa.crc_supported = cmd.crc != CrcPolicy::kOff;
  config.mpa.request_markers = cmd.markers;
  // As MPA Initiator (--connect): C and M of its default Request.
  config.initiator.crc = cmd.crc == CrcPolicy::kOn;
  config.initiator.markers = cmd.markers;
  if (std::string e = targets::ValidateReferenceTargetConfig(config); !e.empty()) {
    error = "reference target: " + e;
    return false;
  }
  return true;
}

// serve --connect: the reference target as MPA Initiator (convention §10).
int RunConnect(const ServeCommand& cmd, const targets::ReferenceTargetConfig& config, std::FILE* out, std::FILE* err) {
  targets::TcpInitiatorOptions options;
  options.connect = cmd.connect;
  options.max_connections = cmd.connections;
  options.idle_timeout = std::chrono::seconds(cmd.idle_timeout_s);
  std::string host, port, error;
  if (!targets::SplitHostPort(cmd.connect, host, port, error)) {
    Errorf(err, "serve", "--connect {}: {}", cmd.connect, error);
    return kExitUsage;
  }
  targets::InitiatorLogFn log;
  if (!cmd.quiet) {
    log = [err](const std::string& line) {
      std::fprintf(err, "%s\n", line.c_str());
      std::fflush(err);
    };
  }
  // Over TCP a connection may wait in the suite's backlog while other cases
  // run; the suite takes the next one when this one has given up.
  targets::ReferenceTargetConfig tcp_config = config;
  tcp_config.initiator.reply_timeout = std::chrono::seconds(5);
  targets::ReferenceTarget target(tcp_config);
  targets::TcpInitiatorStats stats;
  std::fprintf(out, "%sconnecting to %s as MPA Initiator (%s)\n", kPrefix, cmd.connect.c_str(),
               targets::DescribeReferenceConfig(config).c_str());
  std::fflush(out);
  bool ok;
  {
    StopSignals signals(nullptr);
    ok = targets::RunTcpInitiator(target, options, g_stop_initiator, log, stats, error);
  }
  if (!ok) {
    PrintError(err, "serve", error);
    return kExitUsage;
  }
  std::fprintf(err, "%sstopped: %llu connection(s), %llu octets in, %llu out\n", kPrefix,
               static_cast<unsigned long long>(stats.connections), static_cast<unsigned long long>(stats.octets_in),
               static_cast<unsigned long long>(stats.octets_out));
  // A suite that never accepted is an unreachable address.
  return stats.connections == 0 && !g_stop_initiator.load() ? kExitUsage : kExitOk;
}

int RunServe(const ServeCommand& cmd, std::FILE* out, std::FILE* err) {
  targets::ReferenceTargetConfig config;
  std::string error;
  if (!MakeServeConfig(cmd, config, error)) {
    PrintError(err, "serve", error);
    return kExitUsage;
  }
  if (!cmd.connect.empty()) return RunConnect(cmd, config, out, err);
  targets::TcpServerOptions options;
  options.listen = cmd.listen;
  options.max_connections = static_cast<std::size_t>(cmd.max_connections);
  options.idle_timeout = std::chrono::seconds(cmd.idle_timeout_s);
  targets::TcpServer::LogFn log;
  if (!cmd.quiet) {
    log = [err](const std::string& line) {
      std::fprintf(err, "%s\n", line.c_str());
      std::fflush(err);
    };
  }
  auto target = std::make_shared<targets::ReferenceTarget>(config);
  std::unique_ptr<targets::TcpServer> server = targets::TcpServer::Create(target, options, log, error);
  if (!server) {
    PrintError(err, "serve", error);
    return kExitUsage;
  }
  {
    StopSignals signals(server.get());
    std::fprintf(out, "%slistening on %s (%s, mpa-rev %d, crc %s, markers %s)\n", kPrefix, server->address().c_str(),
                 targets::DescribeReferenceConfig(config).c_str(), cmd.mpa_rev, CrcPolicyName(cmd.crc),
                 cmd.markers ? "on" : "off");
    std::fflush(out);
    server->Run();
  }
  const targets::TcpServerStats& s = server->stats();
  std::fprintf(err,
               "%sstopped: %llu connection(s) served, %llu refused, %llu Terminate(s), "
               "%llu octets in, %llu out\n",
               kPrefix, static_cast<unsigned long long>(s.accepted), static_cast<unsigned long long>(s.refused),
               static_cast<unsigned long long>(s.terminates), static_cast<unsigned long long>(s.octets_in),
               static_cast<unsigned long long>(s.octets_out));
  return kExitOk;
}

}  // namespace rdmapct::cli
