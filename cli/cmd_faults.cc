// `rdmapct --list-faults` (the spelling the docs use) and `rdmapct faults`:
// every fault switch of the reference target with its description and the
// requirement ids it violates (reference/model/faults.h).
#include <cstdio>

#include "cli/cli_conform.h"
#include "cli/commands.h"

namespace rdmapct::cli {

void RegisterListFaults(CLI::App& app, std::function<int()>& run) {
  app.add_flag_callback(
      "--list-faults", [&run] { run = [] { return RunListFaults(stdout); }; },
      "List the reference target's fault switches (for conform --fault) and exit");
  CLI::App* sub = app.add_subcommand("faults", "List the reference target's fault switches (same as --list-faults)");
  sub->callback([&run] { run = [] { return RunListFaults(stdout); }; });
}

}  // namespace rdmapct::cli
