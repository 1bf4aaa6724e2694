// memlake stat [PID...], memlake top: live statistics of processes that serve
// them (MEMLAKE_STATS_SERVER=1). top refreshes every --interval seconds until
// --iterations are done, 'q' is pressed (on a terminal) or it is interrupted.
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "core/error.h"
#include "daemon/client.h"
#include "obs/stats_server.h"

namespace memlake::cli {
namespace {

const char* kStatHeader = "PID      DEV BACK      RESERVED    ALLOCATED   UTIL   LARGEST FREE STITCH   DRIVER   OOMS\n";

// Prints the servers' replies; returns how many answered.
int print_stats(const std::vector<int>& pids, const std::string& request) {
  const std::string dir = obs::socket_dir();
  std::vector<std::string> replies;
  for (int pid : pids) {
    try {
      replies.push_back(obs::query(dir + "/" + std::to_string(pid) + ".sock", request));
    } catch (const Error& e) {
      std::fprintf(stderr, "memlake stat: %d: %s\n", pid, e.what());
    }
  }
  if (request == "prometheus") {
    std::fputs(obs::merge_prometheus(replies).c_str(), stdout);
  } else {
    if (request == "text") std::fputs(kStatHeader, stdout);
    for (const std::string& r : replies) std::fputs(r.c_str(), stdout);
  }
  return static_cast<int>(replies.size());
}

// The terminal in single-key mode while top runs (stdin a terminal only), restored
// at the end, on SIGINT/SIGTERM/SIGHUP too.
struct termios g_saved;
volatile sig_atomic_t g_raw = 0;

void restore_terminal() {
  if (g_raw) {
    tcsetattr(STDIN_FILENO, TCSANOW, &g_saved);
    g_raw = 0;
  }
}

void on_signal(int sig) {
  restore_terminal();
  signal(sig, SIG_DFL);
  raise(sig);
}

bool keys_from_terminal() {
  if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &g_saved) != 0) return false;
  struct termios raw = g_saved;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  raw.c_cc[VMIN] = 0;
  raw.c_cc[VTIME] = 0;
  if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) != 0) return false;
  g_raw = 1;
  std::atexit(restore_terminal);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, on_signal);
  return true;
}

// Waits `seconds`; true when 'q' was pressed meanwhile.
bool wait_for_quit(double seconds, bool keys) {
  if (!keys) {
    usleep(static_cast<useconds_t>(seconds * 1e6));
    return false;
  }
  struct pollfd p{STDIN_FILENO, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(seconds * 1000)) > 0) {
    char c = 0;
    while (read(STDIN_FILENO, &c, 1) == 1)
      if (c == 'q' || c == 'Q') return true;
  }
  return false;
}

struct StatArgs {
  std::vector<std::string> pids;
  bool json = false, prometheus = false;
  std::string interval = "1";
  long iterations = -1;
  bool daemon = false;
  std::string daemon_socket;
};

constexpr double kMinInterval = 0.1;  // seconds: top's fastest refresh

int run_stat(const StatArgs& a, bool top) {
  const std::string request = a.prometheus ? "prometheus" : a.json ? "json" : "text";
  char* end = nullptr;
  const double interval = std::strtod(a.interval.c_str(), &end);
  if (a.interval.empty() || *end != '\0' || !std::isfinite(interval) || interval < kMinInterval || interval > 86400)
    return usage_error("--interval expects seconds between 0.1 and 86400, got '" + a.interval + "'");
  std::vector<int> pids;
  for (const std::string& s : a.pids) {
    try {
      std::size_t used = 0;
      const int pid = std::stoi(s, &used);
      if (used != s.size() || pid <= 0) throw std::invalid_argument(s);
      pids.push_back(pid);
    } catch (const std::exception&) {
      return usage_error("bad value for " + s + " (a process id)");
    }
  }
  const bool all = pids.empty();
  if (a.daemon && !pids.empty()) return usage_error("--daemon shows the daemon's view: no PID");
  if (a.daemon && a.prometheus) return usage_error("--daemon: text or --json");
  const bool keys = top && keys_from_terminal();
  for (long it = 0; a.iterations < 0 || it < a.iterations; ++it) {
    std::vector<int> targets = all && !a.daemon ? obs::list_servers() : pids;
    if (top) std::fputs("\x1b[H\x1b[2J", stdout);
    if (a.daemon) {
      try {
        std::fputs(daemon::daemon_status(a.daemon_socket, 2000, !a.json).c_str(), stdout);
      } catch (const Error& e) {
        std::fprintf(top ? stdout : stderr, "memlake: %s\n", e.what());
        if (!top) return 1;
      }
    } else if (targets.empty()) {
      std::fprintf(top ? stdout : stderr,
                   "no process is serving memlake statistics in %s (run it with MEMLAKE_STATS_SERVER=1)\n",
                   obs::socket_dir().c_str());
      if (!top) return 1;
    } else if (print_stats(targets, request) == 0 && !top) {
      return 1;
    }
    if (keys) std::fputs("(q quits)\n", stdout);
    std::fflush(stdout);
    if (!top) return 0;
    if (a.iterations >= 0 && it + 1 >= a.iterations) break;
    if (wait_for_quit(interval, keys)) break;
  }
  restore_terminal();
  return 0;
}

CLI::App* add_stat_options(CLI::App* sub, StatArgs& a) {
  sub->add_option("PID", a.pids, "processes to ask (default: every one serving statistics)");
  sub->add_flag("--json", a.json, "machine-readable output");
  sub->add_flag("--prometheus", a.prometheus, "Prometheus text exposition format");
  sub->add_option("--interval", a.interval, "top: seconds between refreshes, 0.1 to 86400 (default 1)");
  sub->add_option("--iterations", a.iterations, "top: refreshes before it exits (default: until q or Ctrl-C)")
      ->check(CLI::Range(1L, 1000000000L));
  sub->add_flag("--daemon", a.daemon, "the memory daemon's view: clients, quotas, shared buffers, savings");
  sub->add_option("--daemon-socket", a.daemon_socket, "with --daemon: its socket (default: the daemon's default path)");
  return sub;
}

Action setup_stat(CLI::App& app) {
  auto a = std::make_shared<StatArgs>();
  add_stat_options(app.add_subcommand("stat", "live statistics of processes serving them (MEMLAKE_STATS_SERVER=1)"), *a);
  return [a] { return run_stat(*a, false); };
}

Action setup_top(CLI::App& app) {
  auto a = std::make_shared<StatArgs>();
  add_stat_options(app.add_subcommand("top", "the same as stat, refreshed every --interval seconds; q quits"), *a);
  return [a] { return run_stat(*a, true); };
}

}  // namespace

MEMLAKE_CLI_COMMAND(30, setup_stat);
MEMLAKE_CLI_COMMAND(40, setup_top);

}  // namespace memlake::cli
