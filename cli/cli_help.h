// `rdmapct help [COMMAND...]`, and the man page and bash completion that the
// build generates from the same CLI11 definitions (`rdmapct help --man`,
// `rdmapct help --bash-completion`), so the documentation cannot drift from
// the flags.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace rdmapct::cli {

// Top-level --help footer: environment, files, exit statuses.
extern const char* const kMainFooter;

// roff man page (section 1) of `app` and all its subcommands.
std::string RenderManPage(const CLI::App& app, const std::string& version);
// A bash completion script for `app`: subcommands and their flags.
std::string RenderBashCompletion(const CLI::App& app);

}  // namespace rdmapct::cli
