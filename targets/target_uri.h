// Target URIs: how a user names the target a run talks to.
//
//   reference                     the in-process reference target
//   reference?QUERY               ... configured, e.g. reference?fault=skip-bounds-check&profile=rfc7306
//   plugin:PATH[?CONFIG]          a target plugin (CONFIG goes to rdmapct_plugin_open)
//   tcp://HOST:PORT               a target listening on TCP (IPv4, IPv6 as [addr]:port, or a name)
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "reference/model/faults.h"
#include "reference/wire/profile.h"
#include "targets/reference_query.h"
#include "targets/reference_target.h"
#include "targets/transport.h"

namespace rdmapct::targets {

struct ConnectorOptions {
  // reference: the starting configuration (default ReferenceTargetConfig{}),
  // then the URI query, then `profile` and `faults` below.
  std::optional<ReferenceTargetConfig> reference{};
  std::optional<wire::Profile> profile{};
  model::FaultSet faults{};  // added to the URI's faults
  // plugin: the config string when the URI has no '?CONFIG'.
  std::string plugin_config{};
  // tcp: how long one Write may wait for the peer's window.
  std::chrono::milliseconds write_timeout{10000};
};

// A connector for `uri`; nullptr with a one-line reason in `error` (unknown
// scheme, bad query, plugin load error, unresolvable host, ...).
std::unique_ptr<TargetConnector> MakeConnector(std::string_view uri, const ConnectorOptions& options,
                                               std::string& error);

}  // namespace rdmapct::targets
