#include <cstdio>

#include "cli/commands.h"

namespace rdmapct::cli {

void RegisterVersion(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub = app.add_subcommand("version", "Print the rdmapct version");
  sub->callback([&run] {
    run = [] {
      std::printf("rdmapct 0.1.0\n");
      return kExitOk;
    };
  });
}

}  // namespace rdmapct::cli
