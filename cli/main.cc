// rdmapct: conformance test suite and protocol fuzzer for iWARP RDMAP.
#include <cstdio>
#include <functional>

#include "cli/cli_error.h"
#include "cli/cli_help.h"
#include "cli/commands.h"

namespace {

// "conform", "fuzz repro": the subcommands the command line selected.
std::string SelectedCommand(const CLI::App* app) {
  std::string path;
  for (std::vector<CLI::App*> subs = app->get_subcommands(); !subs.empty(); subs = subs.front()->get_subcommands()) {
    path += (path.empty() ? "" : " ") + subs.front()->get_name();
  }
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rdmapct::cli;
  CLI::App app{
      "rdmapct: conformance test suite and protocol fuzzer for iWARP RDMAP "
      "(RFC 5040, RFC 7306, draft-talpey-rdma-commit-01 over DDP/MPA/TCP)"};
  // At most one subcommand: `rdmapct --list-faults` runs without one.
  app.require_subcommand(0, 1);
  // Bad flags: one line naming the problem (exit status 2 below).
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    const std::string command = SelectedCommand(a);
    return ErrorText(command,
                     e.what() + std::string(" (see rdmapct ") + (command.empty() ? "" : command + " ") + "--help)");
  });
  std::function<int()> run;
  RegisterVersion(app, run);
  RegisterHelp(app, run);
  RegisterDecode(app, run);
  RegisterReplay(app, run);
  RegisterConform(app, run);
  RegisterServe(app, run);
  RegisterLoad(app, run);
  RegisterFuzz(app, run);
  RegisterReport(app, run);
  RegisterListFaults(app, run);
  // After the subcommands: CLI11 copies a parent's footer into subcommands
  // created later.
  app.footer(kMainFooter);
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
