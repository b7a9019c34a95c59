// The one error style of every command: "rdmapct <command>: error: <what>",
// one line on stderr (README "Exit status"). `command` is the subcommand path
// as typed ("conform", "fuzz repro"); warnings use the same shape with
// "warning:".
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace rdmapct::cli {

// An empty command (an error before any subcommand) gives "rdmapct: error: ...".
inline std::string ErrorText(std::string_view command, std::string_view message) {
  return fmt::format("rdmapct{}{}: error: {}\n", command.empty() ? "" : " ", command, message);
}
inline std::string WarningText(std::string_view command, std::string_view message) {
  return fmt::format("rdmapct{}{}: warning: {}\n", command.empty() ? "" : " ", command, message);
}

inline void PrintError(std::FILE* err, std::string_view command, std::string_view message) {
  std::fputs(ErrorText(command, message).c_str(), err);
}
inline void PrintWarning(std::FILE* err, std::string_view command, std::string_view message) {
  std::fputs(WarningText(command, message).c_str(), err);
}

// PrintError with a format string: Errorf(err, "decode", "cannot read {}", path).
template <typename... Args>
void Errorf(std::FILE* err, std::string_view command, fmt::format_string<Args...> f, Args&&... args) {
  PrintError(err, command, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace rdmapct::cli
