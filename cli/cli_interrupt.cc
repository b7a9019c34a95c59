#include "cli/cli_interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace rdmapct::cli {
namespace {

std::atomic<int> g_level{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free counter");

// The lines the handler writes, prepared before it is installed (it may
// only call async-signal-safe functions such as write()).
char g_finish_line[256];
char g_abandon_line[256];
char g_term_line[256];
struct sigaction g_old_int, g_old_term;
// Scopes may nest (a fuzz campaign replaying a reproducer through conform):
// the outermost one owns the handlers and the level.
int g_depth = 0;

void Write(const char* line) {
  const ssize_t ignored = ::write(STDERR_FILENO, line, std::strlen(line));
  (void)ignored;
}

// SIGTERM comes from a supervisor (a CI job's timeout, systemd) that will
// not wait long: it abandons the work in flight at once.
extern "C" void OnInterrupt(int sig) {
  int n = g_level.fetch_add(1) + 1;
  if (sig == SIGTERM && n == 1) {
    g_level.store(2);
    Write(g_term_line);
    return;
  }
  if (n == 1)
    Write(g_finish_line);
  else if (n == 2)
    Write(g_abandon_line);
  else
    _exit(kExitInterrupted);
}

}  // namespace

InterruptScope::InterruptScope(const char* command) {
  if (g_depth++ > 0) return;
  g_level = 0;
  std::snprintf(g_finish_line, sizeof g_finish_line,
                "\n%s: interrupted: finishing the work in flight, then writing the reports (again to abandon it)\n",
                command);
  std::snprintf(g_abandon_line, sizeof g_abandon_line,
                "%s: interrupted again: abandoning the work in flight (a third time exits at once)\n", command);
  std::snprintf(g_term_line, sizeof g_term_line,
                "\n%s: terminated (SIGTERM): abandoning the work in flight, then writing the reports\n", command);
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptScope::~InterruptScope() {
  if (--g_depth > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

const std::atomic<int>& InterruptScope::level() const { return g_level; }

}  // namespace rdmapct::cli
