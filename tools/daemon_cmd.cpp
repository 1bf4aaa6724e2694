// memlake daemon: memlaked, the memory daemon (docs/design/daemon.md).
//   memlake daemon [--socket PATH] [--backend cuda|host] [--device N] [--pool SIZE]
//                  [--chunk SIZE] [--policy FILE]      serve until SIGTERM / SIGINT
//   memlake daemon --status [--json]                    the daemon's view (as `memlake stat --daemon`)
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli.h"
#include "core/error.h"
#include "core/options.h"
#include "daemon/client.h"
#include "daemon/daemon.h"

namespace memlake::cli {
namespace {

daemon::Daemon* g_daemon = nullptr;
void on_stop(int) {
  if (g_daemon) g_daemon->stop();
}

struct DaemonArgs {
  std::string socket, backend = "cuda", pool = "0", chunk = "1G", policy;
  int device = 0;
  bool status = false, json = false;
};

int run_daemon(const DaemonArgs& a) {
  if (a.status) {
    try {
      std::fputs(daemon::daemon_status(a.socket, 2000, !a.json).c_str(), stdout);
      return 0;
    } catch (const Error& e) {
      std::fprintf(stderr, "memlake daemon --status: %s\n", e.what());
      return 1;
    }
  }
  daemon::DaemonConfig c;
  c.socket_path = a.socket;
  c.backend = a.backend;
  c.device = a.device;
  c.policy_path = a.policy;
  // systemd socket activation (packaging/systemd/memlaked.socket): one descriptor, fd 3.
  const char* lpid = std::getenv("LISTEN_PID");
  const char* lfds = std::getenv("LISTEN_FDS");
  if (lpid && lfds && std::atol(lpid) == static_cast<long>(::getpid()) && std::atoi(lfds) == 1) c.listen_fd = 3;
  try {
    c.pool_bytes = parse_size(a.pool);
    c.chunk_bytes = parse_size(a.chunk);
  } catch (const Error& e) {
    return usage_error(e.what());
  }
  if (a.backend != "cuda" && a.backend != "host") return usage_error("--backend expects cuda or host");
  std::unique_ptr<daemon::Daemon> d;
  try {
    d = std::make_unique<daemon::Daemon>(c);
  } catch (const Error& e) {
    std::fprintf(stderr, "memlake daemon: %s\n", e.what());
    return e.code() == Errc::invalid_argument ? 2 : 1;
  }
  g_daemon = d.get();
  struct sigaction sa{};
  sa.sa_handler = on_stop;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::fprintf(stderr, "memlake daemon: serving %s (%s device %d, pool %s, policy %s)\n", d->path().c_str(),
               d->backend().name().c_str(), d->backend().device(), human_bytes(d->pool_bytes()).c_str(),
               a.policy.empty() ? "none: this user and root only" : a.policy.c_str());
  std::fflush(stderr);
  d->run();
  g_daemon = nullptr;
  std::fprintf(stderr, "memlake daemon: stopped\n");
  return 0;
}

Action setup_daemon(CLI::App& app) {
  auto a = std::make_shared<DaemonArgs>();
  auto* sub = app.add_subcommand("daemon", "memlaked: shared read-only buffers and a page pool for many processes");
  sub->add_option("--socket", a->socket, "socket path (default $XDG_RUNTIME_DIR/memlake/daemon.sock or /tmp/memlake-UID/daemon.sock)");
  sub->add_option("--backend", a->backend, "where pages live: cuda (default) or host");
  sub->add_option("--device", a->device, "GPU ordinal (default 0)")->check(CLI::Range(0, 1023));
  sub->add_option("--pool", a->pool, "most bytes of pages handed out, shared and pooled (default 90% of the GPU; host 1G)");
  sub->add_option("--chunk", a->chunk, "handle size of shared buffers (default 1G)");
  sub->add_option("--policy", a->policy, "who may publish, attach, use the pool, see everything; quotas (see docs/design/daemon.md)");
  sub->add_flag("--status", a->status, "print the running daemon's view and exit");
  sub->add_flag("--json", a->json, "with --status: JSON");
  return [a] { return run_daemon(*a); };
}

}  // namespace

MEMLAKE_CLI_COMMAND(45, setup_daemon);

}  // namespace memlake::cli
