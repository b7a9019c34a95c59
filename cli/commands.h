// Subcommand registration. Each cmd_<name>.cc defines one Register<Name>()
// that adds its CLI11 subcommand and binds it to a library entry point.
#pragma once

#include <CLI/CLI.hpp>

namespace rdmapct::cli {

// Exit statuses shared by every subcommand (README "Exit status", and the
// top-level --help footer, cli_help.cc kMainFooter).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFail = 1;   // a check failed / input is malformed
inline constexpr int kExitUsage = 2;  // usage error, unreadable input, target error

// Each Register* returns the subcommand; `run` is set to the action to run.
void RegisterVersion(CLI::App& app, std::function<int()>& run);
// `rdmapct help [COMMAND...]` (also --man, --bash-completion for the build).
void RegisterHelp(CLI::App& app, std::function<int()>& run);
void RegisterDecode(CLI::App& app, std::function<int()>& run);
void RegisterReplay(CLI::App& app, std::function<int()>& run);
void RegisterConform(CLI::App& app, std::function<int()>& run);
void RegisterServe(CLI::App& app, std::function<int()>& run);
void RegisterLoad(CLI::App& app, std::function<int()>& run);
void RegisterFuzz(CLI::App& app, std::function<int()>& run);
void RegisterReport(CLI::App& app, std::function<int()>& run);
// `rdmapct --list-faults` (a top-level flag) and `rdmapct faults`.
void RegisterListFaults(CLI::App& app, std::function<int()>& run);

}  // namespace rdmapct::cli
