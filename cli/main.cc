// rdmapct: conformance test suite and protocol fuzzer for iWARP RDMAP.
#include <cstdio>
#include <functional>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace rdmapct::cli;
  CLI::App app{"rdmapct: conformance test suite and protocol fuzzer for iWARP RDMAP "
               "(RFC 5040, RFC 7306, draft-talpey-rdma-commit-01 over DDP/MPA/TCP)"};
  // At most one subcommand: `rdmapct --list-faults` runs without one.
  app.require_subcommand(0, 1);
  // Bad flags: one line naming the problem (exit status 2 below).
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("rdmapct: ") + e.what() + " (see --help)\n";
  });
  std::function<int()> run;
  RegisterVersion(app, run);
  RegisterDecode(app, run);
  RegisterReplay(app, run);
  RegisterConform(app, run);
  RegisterServe(app, run);
  RegisterLoad(app, run);
  RegisterFuzz(app, run);
  RegisterReport(app, run);
  RegisterListFaults(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (!run) {
    std::fputs(app.help().c_str(), stderr);
    return kExitUsage;
  }
  return run();
}
