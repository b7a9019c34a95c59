// `rdmapct help [COMMAND...]` prints the help of the program or of a command
// on stdout and exits 0; `help --man` and `help --bash-completion` print the
// man page and completion script the build installs (cli/cli_help.h).
#include <cstdio>
#include <memory>

#include "cli/cli_error.h"
#include "cli/cli_help.h"
#include "cli/commands.h"

namespace rdmapct::cli {

void RegisterHelp(CLI::App& app, std::function<int()>& run) {
  CLI::App* sub = app.add_subcommand("help", "Print the help of rdmapct or of a command (rdmapct help conform)");
  struct State {
    std::vector<std::string> words;
    bool man = false, completion = false;
  };
  auto st = std::make_shared<State>();
  sub->add_option("command", st->words, "the command, e.g. conform or fuzz repro");
  sub->add_flag("--man", st->man, "print the man page (roff) instead")->group("");
  sub->add_flag("--bash-completion", st->completion, "print the bash completion script instead")->group("");
  sub->callback([st, &app, &run] {
    run = [st, &app] {
      if (st->man) return std::fputs(RenderManPage(app, RDMAPCT_VERSION).c_str(), stdout) < 0 ? kExitUsage : kExitOk;
      if (st->completion) return std::fputs(RenderBashCompletion(app).c_str(), stdout) < 0 ? kExitUsage : kExitOk;
      const CLI::App* target = &app;
      std::string path;
      for (const std::string& w : st->words) {
        path += (path.empty() ? "" : " ") + w;
        const CLI::App* next = nullptr;
        for (const CLI::App* s : target->get_subcommands([](const CLI::App*) { return true; })) {
          if (s->get_name() == w) next = s;
        }
        if (next == nullptr) {
          PrintError(stderr, "help", "no command \"" + path + "\" (see rdmapct --help)");
          return kExitUsage;
        }
        target = next;
      }
      // The formatter, not App::help(): that prints the help of the
      // selected subcommand, which is `help` itself.
      const std::string name = path.empty() ? app.get_name() : "rdmapct " + path;
      std::fputs(target->get_formatter()->make_help(target, name, CLI::AppFormatMode::Normal).c_str(), stdout);
      return kExitOk;
    };
  });
}

}  // namespace rdmapct::cli
