// `rdmapct version` and `rdmapct --version`: "rdmapct <version>" on stdout, exit 0.
#include <cstdio>

#include "cli/commands.h"

namespace rdmapct::cli {

void RegisterVersion(CLI::App& app, std::function<int()>& run) {
  // `rdmapct --version` prints the same line (CLI11's version flag, exit 0).
  app.set_version_flag("--version", "rdmapct " RDMAPCT_VERSION, "Print the rdmapct version and exit");
  CLI::App* sub = app.add_subcommand("version", "Print the rdmapct version");
  sub->callback([&run] {
    run = [] {
      std::printf("rdmapct %s\n", RDMAPCT_VERSION);
      return kExitOk;
    };
  });
}

}  // namespace rdmapct::cli
