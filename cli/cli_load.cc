#include "cli/cli_load.h"

#include <memory>

#include "cli/cli_error.h"
#include "cli/cli_interrupt.h"
#include "cli/commands.h"
#include "targets/target_uri.h"

namespace rdmapct::cli {

int RunLoadCommand(const LoadCommand& cmd, std::FILE* out, std::FILE* err) {
  constexpr const char* kPrefix = "rdmapct load: ";
  if (std::string e = targets::ValidateLoadOptions(cmd.options); !e.empty()) {
    PrintError(err, "load", e);
    return kExitUsage;
  }
  targets::ConnectorOptions connector_options;
  connector_options.profile = cmd.options.profile;
  connector_options.write_timeout = cmd.options.io_timeout;
  std::string error;
  auto connector = targets::MakeConnector(cmd.target, connector_options, error);
  if (!connector) {
    PrintError(err, "load", error);
    return kExitUsage;
  }
  InterruptScope interrupt("rdmapct load");
  targets::LoadOptions options = cmd.options;
  options.stop = &interrupt.level();
  const targets::LoadResult r = targets::RunLoad(*connector, options);
  // A run that failed before any connection ended cleanly has no figures.
  const char* partial = interrupt.interrupted() ? "INTERRUPTED, partial: " : "";
  if (r.ok() || r.connections > 0) {
    std::fprintf(out, "%s%s%s\n", kPrefix, partial, targets::DescribeLoad(cmd.options, r).c_str());
    std::fflush(out);
  }
  if (r.crc && *r.crc != cmd.options.crc) {
    std::fprintf(err, "%snote: asked for CRCs %s, the target's Reply made them %s\n", kPrefix,
                 cmd.options.crc ? "on" : "off", *r.crc ? "on" : "off");
  }
  if (!r.ok()) {
    PrintError(err, "load", r.error);
    return interrupt.interrupted() ? kExitInterrupted : kExitUsage;
  }
  return interrupt.interrupted() ? kExitInterrupted : kExitOk;
}

}  // namespace rdmapct::cli
