// memlake sleep PID, memlake wake PID: another process of this user, run
// with MEMLAKE_STATS_SERVER=1, gives its GPU memory back (keeping every
// pointer) or takes it again, through its stats socket (docs/design/residency.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "core/error.h"
#include "obs/stats_server.h"

namespace memlake::cli {
namespace {

struct ResidencyArgs {
  int pid = 0;
  std::string mode = "offload";
  std::vector<std::string> tags;
};

int send(int pid, const std::string& request) {
  const std::string sock = obs::socket_dir() + "/" + std::to_string(pid) + ".sock";
  std::string reply;
  try {
    reply = obs::query(sock, request, 120000);  // moving tens of GiB takes seconds
  } catch (const Error& e) {
    std::fprintf(stderr, "memlake: %d: %s\n", pid, e.what());
    return 1;
  }
  std::fputs(obs::printable(reply).c_str(), reply.rfind("ok ", 0) == 0 ? stdout : stderr);
  return reply.rfind("ok ", 0) == 0 ? 0 : 1;
}

void add_pid(CLI::App* sub, ResidencyArgs& a) {
  sub->add_option("PID", a.pid, "the process (run with MEMLAKE_STATS_SERVER=1, same user)")
      ->required()
      ->check(CLI::Range(1, 1 << 30));
}

Action setup_sleep(CLI::App& app) {
  auto a = std::make_shared<ResidencyArgs>();
  auto* sub = app.add_subcommand("sleep", "another process gives its GPU memory back, keeping every pointer");
  add_pid(sub, *a);
  sub->add_option("--mode", a->mode, "offload (bytes kept in pinned host memory) or discard (default offload)")
      ->check(CLI::IsMember({"offload", "discard"}));
  sub->add_option("--tag", a->tags, "only allocations made under this tag (repeatable; default: all)");
  return [a] {
    std::string req = "sleep " + a->mode;
    for (const std::string& t : a->tags) {
      if (t.empty() || t.find_first_of(" \n\r") != std::string::npos)
        return usage_error("--tag '" + t + "': a tag name has no spaces");
      req += " " + t;
    }
    if (req.size() > 64) return usage_error("the request is over 64 bytes: fewer or shorter tags");
    return send(a->pid, req);
  };
}

Action setup_wake(CLI::App& app) {
  auto a = std::make_shared<ResidencyArgs>();
  auto* sub = app.add_subcommand("wake", "another process takes back the GPU memory `memlake sleep` gave away");
  add_pid(sub, *a);
  return [a] { return send(a->pid, "wake"); };
}

}  // namespace

MEMLAKE_CLI_COMMAND(35, setup_sleep);
MEMLAKE_CLI_COMMAND(36, setup_wake);

}  // namespace memlake::cli
