// Live statistics from outside the process.
//
// StatsServer serves one process's statistics on a Unix socket,
// <dir>/<pid>.sock, where <dir> is $XDG_RUNTIME_DIR/memlake (or
// /tmp/memlake-<uid>), created 0700. Only peers with the same uid are
// answered (SO_PEERCRED). Protocol: one request line, one reply, then close.
//   "json\n"        -> {"pid":..,"devices":[...]} (the stats JSON)
//   "prometheus\n"  -> text exposition format
//   "text\n"        -> a human-readable table
// A request is at most 64 bytes and must arrive within 1 s; anything else
// gets "error: ..." and the connection is closed. The serving thread never
// throws and never blocks the allocator beyond one stats snapshot.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/stats.h"

namespace memlake::obs {

using StatsProvider = std::function<std::vector<core::Stats>()>;

std::string socket_dir();  // where servers put their sockets
std::string render_json(int pid, const std::vector<core::Stats>& s);
std::string render_prometheus(int pid, const std::vector<core::Stats>& s);
std::string render_text(int pid, const std::vector<core::Stats>& s);

class StatsServer {
 public:
  // Throws Errc::driver if the socket cannot be created.
  explicit StatsServer(StatsProvider provider, std::string dir = socket_dir());
  ~StatsServer();
  StatsServer(const StatsServer&) = delete;
  StatsServer& operator=(const StatsServer&) = delete;
  const std::string& path() const { return path_; }
  std::uint64_t served() const { return served_.load(); }
  std::uint64_t rejected() const { return rejected_.load(); }

 private:
  void loop();
  void serve(int fd);

  StatsProvider provider_;
  std::string path_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<std::uint64_t> served_{0}, rejected_{0};
};

// Client side: one request to the server of `pid` (or to a socket path).
// Returns the reply; throws Errc::unavailable if nothing answers.
std::string query(const std::string& socket_path, const std::string& request, int timeout_ms = 2000);
// PIDs with a live server in `dir`; stale sockets of dead processes are removed.
std::vector<int> list_servers(const std::string& dir = socket_dir());

}  // namespace memlake::obs
