// Live statistics from outside the process.
//
// StatsServer serves one process's statistics on a Unix socket,
// <dir>/<pid>.sock, where <dir> is $XDG_RUNTIME_DIR/memlake (or
// /tmp/memlake-<uid>), created 0700. Both sides use the directory only
// once it is verified private: a directory (not a symbolic link, lstat),
// owned by the effective uid, no group or other permission bits. One
// pre-created by another user is refused with a message saying so (the
// server does not serve, clients do not read from it). Only peers with the
// same uid are answered (SO_PEERCRED). Protocol: one request line, one
// reply, then close.
//   "json\n"        -> {"pid":..,"devices":[...]} (the stats JSON)
//   "prometheus\n"  -> text exposition format
//   "text\n"        -> a human-readable table
//   anything else   -> the command handler's reply, when one is given
//                      (memlake's: "sleep MODE [TAG...]", "wake"), else an error
// A request is at most 64 bytes and must arrive within 1 s; anything else
// gets "error: ..." and the connection is closed. Connections are served
// concurrently by one poll loop (at most 64 open; a client that connects
// and sends nothing delays nobody), each bounded to 1 s. The serving thread
// never throws and never blocks the allocator beyond one stats snapshot.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/stats.h"

namespace memlake::obs {

using StatsProvider = std::function<std::vector<core::Stats>()>;
// Answers a request line that is not a statistics request ("" = unknown).
// Runs on the serving thread, for peers of this user only.
using CommandHandler = std::function<std::string(const std::string& request)>;

std::string socket_dir();  // where servers put their sockets
// "" if `dir` is a private directory of this user (see above), else why not.
std::string private_dir_problem(const std::string& dir);
// Creates `dir` 0700 if absent, then verifies it; throws Errc::unavailable
// ("refusing DIR: WHY") if it is not private.
void ensure_private_dir(const std::string& dir);
std::string render_json(int pid, const std::vector<core::Stats>& s);
// Labels: pid, rank (process_rank()), device, backend, gpu_uuid (Stats::uuid),
// values escaped as the exposition format asks.
std::string render_prometheus(int pid, const std::vector<core::Stats>& s);
// Several processes' render_prometheus() replies as one valid exposition: each
// family's HELP and TYPE once, then every process's samples of it. Replies that
// are not an exposition ("error: ...") are skipped.
std::string merge_prometheus(const std::vector<std::string>& replies);
// This process's rank in a distributed job: $RANK, else $LOCAL_RANK, read once
// (at the first call); "" when neither is set.
const std::string& process_rank();
// A label value escaped for the exposition format (backslash, quote, newline).
std::string escape_label(const std::string& v);
std::string render_text(int pid, const std::vector<core::Stats>& s);

class StatsServer {
 public:
  // Throws Errc::unavailable if `dir` is not private, Errc::driver if the
  // socket cannot be created. request_timeout_ms bounds each connection.
  explicit StatsServer(StatsProvider provider, std::string dir = socket_dir(), int request_timeout_ms = 1000,
                       CommandHandler commands = {});
  ~StatsServer();
  StatsServer(const StatsServer&) = delete;
  StatsServer& operator=(const StatsServer&) = delete;
  const std::string& path() const { return path_; }
  std::uint64_t served() const { return served_.load(); }
  std::uint64_t rejected() const { return rejected_.load(); }
  // Tests: the uid a peer must have (default: this process's effective uid),
  // to exercise the SO_PEERCRED refusal without a second user.
  void expect_peer_uid(unsigned uid) { peer_uid_ = uid; }

 private:
  struct Conn;
  void loop();
  bool on_readable(Conn& c);  // false: close it
  std::string answer(const std::string& request);

  StatsProvider provider_;
  CommandHandler commands_;
  std::string path_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  int timeout_ms_;
  std::thread thread_;
  std::atomic<std::uint64_t> served_{0}, rejected_{0};
  std::atomic<unsigned> peer_uid_;
};

// Client side: one request to a server's socket. The socket's directory must
// be private and the socket and the server's peer credentials this user's;
// the reply is bounded (kMaxReply, timeout_ms in all) and comes back with
// control characters other than newline and tab replaced by '?', so that
// printing it cannot drive the terminal. Throws Errc::unavailable if
// nothing (trustworthy) answers.
constexpr std::size_t kMaxReply = std::size_t{1} << 20;
std::string query(const std::string& socket_path, const std::string& request, int timeout_ms = 2000);
// PIDs with a live server in `dir`; stale sockets of dead processes are
// removed. A directory that is not private lists nothing: why goes to
// *problem, or to stderr when problem is null.
std::vector<int> list_servers(const std::string& dir = socket_dir(), std::string* problem = nullptr);
// Bytes outside printable ASCII, newline and tab become '?'.
std::string printable(const std::string& s);

}  // namespace memlake::obs
