// memlaked: one process that owns shared GPU memory for many (see
// docs/design/daemon.md and protocol.h).
//
// It serves a SOCK_SEQPACKET Unix socket with one poll loop. Every
// connection's peer credentials (SO_PEERCRED) are checked against the policy
// (policy.h) on every request. The daemon creates every page it hands out
// (shareable handles of its backend: CUDA POSIX-fd allocations, or memfds on
// the host backend) and keeps its own reference, so:
//   * deduplication: a buffer published under a content id is filled once by
//     its first publisher and then mapped read-only by everyone who publishes
//     or attaches the same id; it is freed when its last holder detaches or dies;
//   * the pool: clients take pages under quotas (a guaranteed minimum kept
//     free for each, a burst maximum); under pressure the daemon asks clients
//     above their minimum to trim their caches;
//   * a client that dies, even by SIGKILL, has its connection closed by the
//     kernel: its pages go back to the pool and its holds are dropped at once.
// No page is ever handed to two owners: a pool page belongs to exactly one
// connection; shared buffers are read-only once sealed.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/policy.h"
#include "prim/prim.h"

namespace memlake::daemon {

struct DaemonConfig {
  std::string socket_path;            // "" = default_socket_path()
  std::string backend = "cuda";       // where the pages live
  int device = 0;
  std::uint64_t pool_bytes = 0;       // most bytes of pages (pool and shared); 0 = 90 % of the device (cuda), 1 GiB (host)
  std::uint64_t chunk_bytes = std::uint64_t{1} << 30;  // handle size of shared buffers
  std::string policy_path;            // "" = nobody but this user and root
  std::size_t max_connections = 1024;
  int listen_fd = -1;  // a listening SOCK_SEQPACKET socket handed over (systemd socket activation); -1: bind socket_path
};

// $XDG_RUNTIME_DIR/memlake/daemon.sock or /tmp/memlake-<uid>/daemon.sock.
std::string default_socket_path();
// "" if the socket's directory is safe to trust (a real directory owned by
// `owner` or root, writable by nobody else), else why not.
std::string socket_dir_problem(const std::string& dir, uid_t owner);

class Daemon {
 public:
  // Listens at once; throws Errc::unavailable for an unsafe directory or a
  // live daemon on the socket (a stale socket file is replaced).
  explicit Daemon(DaemonConfig cfg, std::unique_ptr<prim::Backend> backend = nullptr);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  void run();    // serves until stop(); never throws for a client's doing
  void start();  // run() on a thread of its own
  void stop();   // async-signal-safe
  const std::string& path() const { return path_; }

  // A JSON view of the daemon. full: every client and buffer; else only
  // those of `uid`.
  std::string status_json(bool full, uid_t uid) const;
  std::string status_text(bool full, uid_t uid) const;  // the same, as `memlake stat --daemon` prints it
  // Counters, for tests and the status view.
  std::uint64_t pool_used() const { return used_.load(); }
  std::uint64_t pool_bytes() const { return cfg_.pool_bytes; }
  std::uint64_t rejected() const { return rejected_.load(); }
  std::size_t live_handles() const { return live_handles_.load(); }
  prim::Backend& backend() { return *backend_; }

 private:
  struct Client;
  struct Buffer;
  struct Page {
    prim::PhysHandle h = 0;
    std::uint64_t bytes = 0;
    std::uint64_t owner = 0;  // client id
  };
  void serve_one(Client& c);
  void handle(Client& c, struct Msg& m);
  void reply_error(Client& c, std::uint32_t seq, int errc, const std::string& why);
  void drop_client(std::size_t i);
  void release_buffer(const std::string& id);
  bool send_grant(Client& c, std::uint32_t seq, Buffer& b, bool writable);
  std::uint64_t reserved_for_others(const Client& c) const;
  void ask_to_trim(const Client& asking, std::uint64_t deficit);
  Client* client_by_id(std::uint64_t id);

  DaemonConfig cfg_;
  Policy policy_;
  std::unique_ptr<prim::Backend> backend_;
  std::string path_;
  int listen_fd_ = -1;
  bool own_path_ = true;  // false: systemd made the socket and removes it
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::map<std::string, std::unique_ptr<Buffer>> buffers_;
  std::map<std::uint64_t, Page> pages_;
  std::uint64_t next_client_ = 1, next_page_ = 1;
  std::atomic<std::uint64_t> used_{0}, rejected_{0}, served_{0}, trims_{0}, reclaimed_{0};
  std::atomic<std::size_t> live_handles_{0};
  std::uint64_t shared_bytes_ = 0, saved_bytes_ = 0;
  std::uint64_t started_ns_ = 0;
  mutable std::string status_cache_;
};

}  // namespace memlake::daemon
