#include "targets/target_uri.h"

#include "targets/in_process.h"
#include "targets/plugin_loader.h"
#include "targets/tcp.h"

namespace rdmapct::targets {

namespace {

std::unique_ptr<TargetConnector> MakeReference(std::string_view query, const ConnectorOptions& options,
                                               std::string& error) {
  ReferenceTargetConfig config = options.reference.value_or(ReferenceTargetConfig{});
  if (!ApplyReferenceQuery(query, config, error)) return nullptr;
  if (options.profile) config.profile = *options.profile;
  for (const model::FaultInfo& f : model::AllFaults()) {
    if (options.faults.Has(f.fault)) config.faults.Add(f.fault);
  }
  if (std::string e = ValidateReferenceTargetConfig(config); !e.empty()) {
    error = "reference target: " + e;
    return nullptr;
  }
  return std::make_unique<InProcessConnector>(std::make_shared<ReferenceTarget>(config));
}

}  // namespace

std::unique_ptr<TargetConnector> MakeConnector(std::string_view uri, const ConnectorOptions& options,
                                               std::string& error) {
  constexpr std::string_view kReference = "reference";
  constexpr std::string_view kPlugin = "plugin:";
  constexpr std::string_view kTcp = "tcp://";
  if (uri == kReference) return MakeReference({}, options, error);
  if (uri.starts_with(kReference) && uri.size() > kReference.size() && uri[kReference.size()] == '?') {
    return MakeReference(uri.substr(kReference.size() + 1), options, error);
  }
  if (uri.starts_with(kPlugin)) {
    std::string_view rest = uri.substr(kPlugin.size());
    const std::size_t q = rest.find('?');
    const std::string path(rest.substr(0, q));
    const std::string config = q == std::string_view::npos ? options.plugin_config : std::string(rest.substr(q + 1));
    if (path.empty()) {
      error = "plugin URI without a path (plugin:/path/to/libtarget.so)";
      return nullptr;
    }
    return PluginConnector::Load(path, config, error);
  }
  if (uri.starts_with(kTcp)) {
    TcpOptions tcp;
    tcp.write_timeout = options.write_timeout;
    return TcpConnector::Create(uri.substr(kTcp.size()), tcp, error);
  }
  error =
      "unknown target \"" + std::string(uri) + "\" (use reference[?options], plugin:PATH[?config] or tcp://HOST:PORT)";
  return nullptr;
}

}  // namespace rdmapct::targets
