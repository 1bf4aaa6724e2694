// The client side of memlaked: what libmemlake in each process uses.
//
// DaemonClient is one connection (SOCK_SEQPACKET) to the daemon, checked
// before use: the socket's directory must be a real directory writable only
// by its owner, and the daemon's peer credentials must be this user's, root's
// or the directory owner's. Calls are serialised; a connection the daemon
// closed (it restarted) is made again at the next call, once: memory mapped
// from the previous daemon stays mapped and valid (this process holds its
// own references), the new daemon just does not know it.
//
// share()/attach() map shared buffers read-only; DaemonPoolBackend takes the
// pages of an allocator from the daemon's pool instead of the driver.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "daemon/content_id.h"
#include "daemon/protocol.h"
#include "prim/decorators.h"

namespace memlake::daemon {

class DaemonClient {
 public:
  struct Config {
    std::string socket;      // "" = default_socket_path()
    std::string name;        // shown in the daemon's status
    std::uint64_t min = 0;   // pool quota asked (0: the policy's)
    std::uint64_t max = 0;
    int timeout_ms = 10000;  // per reply
    int retry_ms = 2000;     // alloc: how long to ask again while others trim
  };
  explicit DaemonClient(Config cfg);  // connects and says hello; throws Errc::unavailable
  ~DaemonClient();
  DaemonClient(const DaemonClient&) = delete;
  DaemonClient& operator=(const DaemonClient&) = delete;

  std::size_t granularity() const { return gran_; }
  const std::string& backend() const { return backend_; }
  std::uint64_t id() const { return id_; }
  const std::string& socket() const { return cfg_.socket; }

  struct Grant {
    Type kind = Type::busy;  // shared (read-only), create (fill, then seal) or busy
    std::uint64_t bytes = 0, chunk = 0;
    std::vector<int> fds;
    Grant() = default;
    Grant(Grant&& o) noexcept : kind(o.kind), bytes(o.bytes), chunk(o.chunk), fds(std::move(o.fds)) { o.fds.clear(); }
    Grant& operator=(Grant&&) = delete;
    ~Grant() { close_fds(fds); }
  };
  Grant publish(const Digest& id, std::uint64_t bytes);
  void seal(const Digest& id);
  // Errc::unavailable when nothing is published under id. Each attach (or
  // publish) is a hold, released by one detach. remap: the filler's read-only
  // re-mapping after seal (no new hold).
  Grant attach(const Digest& id, bool remap = false);
  void detach(const Digest& id);   // also abandons a buffer this client was filling

  struct PageGrant {
    std::uint64_t page = 0, bytes = 0;
    int fd = -1;  // the caller closes it
  };
  PageGrant alloc(std::uint64_t bytes);  // Errc::out_of_memory past the quota or pool
  void free_page(std::uint64_t page);
  std::string status();
  // Starts a thread on a second connection that receives the daemon's trim
  // requests and calls on_trim(bytes wanted).
  void listen(std::function<void(std::uint64_t)> on_trim);
  void stop_listening();  // joins that thread (idempotent)

 private:
  Msg call(Msg req, std::vector<int>* fds, std::size_t expect_fds_from_c = 0);
  int connect_checked();
  void hello_locked();

  Config cfg_;
  std::mutex mu_;
  int fd_ = -1;
  std::uint32_t seq_ = 0;
  std::size_t gran_ = 0;
  std::string backend_;
  std::uint64_t id_ = 0, token_ = 0;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread listener_;
};

// A one-shot status request (no hello): what the policy lets this user see.
std::string daemon_status(const std::string& socket, int timeout_ms = 2000, bool text = false);

// A shared buffer mapped in this process.
struct SharedMapping {
  std::uintptr_t va = 0;
  std::size_t bytes = 0;   // as published
  std::size_t mapped = 0;  // whole granules
  std::vector<prim::PhysHandle> handles;
  Digest id{};
};
// Maps a grant's chunks contiguously with `access`; consumes its descriptors.
SharedMapping map_grant(prim::Backend& b, DaemonClient::Grant& g, prim::Access access);
void unmap_shared(prim::Backend& b, SharedMapping& m);

// Publishes the n device bytes at src under id (computed from the bytes when
// null) and returns them mapped read-only: the first publisher's bytes are
// copied once into the daemon's pages; everyone after maps those pages.
SharedMapping share(DaemonClient& c, prim::Backend& b, std::uintptr_t src, std::size_t n, const Digest* id,
                    int busy_wait_ms = 120000);
SharedMapping attach(DaemonClient& c, prim::Backend& b, const Digest& id);
void unshare(DaemonClient& c, prim::Backend& b, SharedMapping& m);

// Physical pages from the daemon's pool: create() takes a page (an fd,
// imported), release() gives it back. Other calls go to the inner backend.
class DaemonPoolBackend final : public prim::ForwardingBackend {
 public:
  DaemonPoolBackend(std::unique_ptr<prim::Backend> inner, std::shared_ptr<DaemonClient> client);
  prim::PhysHandle create(std::size_t size) override;
  void release(prim::PhysHandle h) override;
  std::uint64_t pages() const;

 private:
  std::shared_ptr<DaemonClient> client_;
  mutable std::mutex mu_;
  std::unordered_map<prim::PhysHandle, std::uint64_t> page_of_;
};

}  // namespace memlake::daemon
