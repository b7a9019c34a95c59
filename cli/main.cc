// rdmapct: conformance test suite and protocol fuzzer for iWARP RDMAP.
#include <cstdio>
#include <functional>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace rdmapct::cli;
  CLI::App app{"rdmapct: conformance test suite and protocol fuzzer for iWARP RDMAP "
               "(RFC 5040, RFC 7306, draft-talpey-rdma-commit-01 over DDP/MPA/TCP)"};
  app.require_subcommand(1);
  std::function<int()> run;
  RegisterVersion(app, run);
  RegisterDecode(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  return run ? run() : kExitUsage;
}
