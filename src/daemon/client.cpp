#include "daemon/client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "daemon/daemon.h"
#include "obs/stats_server.h"

namespace memlake::daemon {
namespace {

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Connects to the daemon's socket after checking that it can be trusted.
int connect_to(const std::string& path) {
  const std::string dir = dir_of(path);
  struct stat dst{};
  if (::lstat(dir.c_str(), &dst) != 0)
    throw_error(Errc::unavailable, "no memlake daemon at " + path + ": " + std::strerror(errno));
  const std::string why = socket_dir_problem(dir, dst.st_uid);
  if (!why.empty()) throw_error(Errc::unavailable, "refusing the daemon socket directory " + dir + ": " + why);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw_error(Errc::invalid_argument, "daemon socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_error(Errc::unavailable, std::string("socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const int e = errno;
    ::close(fd);
    throw_error(Errc::unavailable, "no memlake daemon at " + path + ": " + std::strerror(e) +
                                       " (start one with `memlake daemon`)");
  }
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
      (cred.uid != ::geteuid() && cred.uid != 0 && cred.uid != dst.st_uid)) {
    ::close(fd);
    throw_error(Errc::unavailable, "refusing the daemon at " + path + ": it runs as uid " + std::to_string(cred.uid) +
                                       ", neither this user, root nor the owner of " + dir);
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

[[noreturn]] void raise(const Msg& r, const std::string& socket) {
  Errc code = static_cast<Errc>(r.a);
  if (r.a < 1 || r.a > 5) code = Errc::internal;
  throw_error(code, "memlake daemon (" + socket + "): " + obs::printable(r.text));
}

}  // namespace

DaemonClient::DaemonClient(Config cfg) : cfg_(std::move(cfg)) {
  if (cfg_.socket.empty()) cfg_.socket = default_socket_path();
  std::lock_guard<std::mutex> g(mu_);
  fd_ = connect_to(cfg_.socket);
  try {
    hello_locked();
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

void DaemonClient::stop_listening() {
  if (listener_.joinable()) {
    const char c = 1;
    (void)!::write(stop_pipe_[1], &c, 1);
    listener_.join();
  }
}

DaemonClient::~DaemonClient() {
  stop_listening();
  for (int fd : {fd_, listen_fd_, stop_pipe_[0], stop_pipe_[1]})
    if (fd >= 0) ::close(fd);
}

void DaemonClient::hello_locked() {
  Msg h;
  h.type = Type::hello;
  h.seq = ++seq_;
  h.a = cfg_.min;
  h.b = cfg_.max;
  h.text = cfg_.name.substr(0, 64);
  if (!send_msg(fd_, h)) throw_error(Errc::unavailable, "memlake daemon at " + cfg_.socket + " closed the connection");
  Msg r;
  if (!recv_msg(fd_, &r, kMaxReplyPacket, cfg_.timeout_ms, kMaxStatusText))
    throw_error(Errc::unavailable, "memlake daemon at " + cfg_.socket + " closed the connection (refused?)");
  close_fds(r.fds);
  if (r.type == Type::error) raise(r, cfg_.socket);
  if (r.type != Type::ok || r.a == 0 || (r.a & (r.a - 1)))
    throw_error(Errc::unavailable, "memlake daemon at " + cfg_.socket + ": unexpected hello reply");
  gran_ = r.a;
  id_ = r.b;
  token_ = r.c;
  backend_ = r.text;
}

// One request, its reply and the descriptors that come with it (in the reply
// and the `fds` packets after it, until `c` of them arrived).
Msg DaemonClient::call(Msg req, std::vector<int>* fds, std::size_t) {
  std::lock_guard<std::mutex> g(mu_);
  for (int attempt = 0;; ++attempt) {
    if (fd_ < 0) {
      fd_ = connect_to(cfg_.socket);
      try {
        hello_locked();
      } catch (...) {
        ::close(fd_);
        fd_ = -1;
        throw;
      }
    }
    req.seq = ++seq_;
    Msg r;
    bool ok = send_msg(fd_, req);
    if (ok) ok = recv_msg(fd_, &r, kMaxReplyPacket, cfg_.timeout_ms, kMaxStatusText);
    if (!ok) {
      ::close(fd_);
      fd_ = -1;
      if (attempt == 0) continue;  // the daemon restarted: once more on a new connection
      throw_error(Errc::unavailable, "memlake daemon at " + cfg_.socket + " went away");
    }
    if (r.seq != req.seq) {
      close_fds(r.fds);
      ::close(fd_);
      fd_ = -1;
      throw_error(Errc::unavailable, "memlake daemon at " + cfg_.socket + ": reply out of order");
    }
    if (r.type == Type::error) {
      close_fds(r.fds);
      return r;
    }
    if (fds) {
      *fds = std::move(r.fds);
      r.fds.clear();
      const std::size_t want = (r.type == Type::shared || r.type == Type::create) ? r.c : (r.type == Type::page ? 1 : 0);
      if (want > kMaxChunks) {
        close_fds(*fds);
        throw_error(Errc::unavailable, "memlake daemon: implausible reply");
      }
      while (fds->size() < want) {
        Msg more;
        if (!recv_msg(fd_, &more, kMaxReplyPacket, cfg_.timeout_ms, kMaxStatusText) || more.type != Type::fds ||
            more.fds.empty()) {
          close_fds(more.fds);
          close_fds(*fds);
          ::close(fd_);
          fd_ = -1;
          throw_error(Errc::unavailable, "memlake daemon at " + cfg_.socket + ": descriptors missing from a reply");
        }
        fds->insert(fds->end(), more.fds.begin(), more.fds.end());
        more.fds.clear();
      }
      if (fds->size() != want) {
        close_fds(*fds);
        throw_error(Errc::unavailable, "memlake daemon: more descriptors than announced");
      }
    } else {
      close_fds(r.fds);
    }
    return r;
  }
}

namespace {
std::string id_bytes(const Digest& d) { return std::string(reinterpret_cast<const char*>(d.data()), d.size()); }
}  // namespace

DaemonClient::Grant DaemonClient::publish(const Digest& id, std::uint64_t bytes) {
  Msg m;
  m.type = Type::publish;
  m.id = id_bytes(id);
  m.a = bytes;
  Grant g;
  Msg r = call(m, &g.fds);
  if (r.type == Type::error) raise(r, cfg_.socket);
  g.kind = r.type;
  g.bytes = r.a;
  g.chunk = r.b;
  if (g.kind != Type::busy && g.kind != Type::shared && g.kind != Type::create)
    throw_error(Errc::unavailable, "memlake daemon: unexpected reply to publish");
  return g;
}

void DaemonClient::seal(const Digest& id) {
  Msg m;
  m.type = Type::seal;
  m.id = id_bytes(id);
  Msg r = call(m, nullptr);
  if (r.type == Type::error) raise(r, cfg_.socket);
}

DaemonClient::Grant DaemonClient::attach(const Digest& id, bool remap) {
  Msg m;
  m.type = Type::attach;
  m.id = id_bytes(id);
  m.a = remap ? 1 : 0;
  Grant g;
  Msg r = call(m, &g.fds);
  if (r.type == Type::error) raise(r, cfg_.socket);
  if (r.type != Type::shared) throw_error(Errc::unavailable, "memlake daemon: unexpected reply to attach");
  g.kind = r.type;
  g.bytes = r.a;
  g.chunk = r.b;
  return g;
}

void DaemonClient::detach(const Digest& id) {
  Msg m;
  m.type = Type::detach;
  m.id = id_bytes(id);
  Msg r = call(m, nullptr);
  if (r.type == Type::error) raise(r, cfg_.socket);
}

DaemonClient::PageGrant DaemonClient::alloc(std::uint64_t bytes) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.retry_ms);
  for (;;) {
    Msg m;
    m.type = Type::alloc;
    m.a = bytes;
    std::vector<int> fds;
    Msg r = call(m, &fds);
    if (r.type == Type::page && fds.size() == 1 && r.b == bytes) return {r.a, r.b, fds[0]};
    close_fds(fds);
    if (r.type != Type::error) throw_error(Errc::unavailable, "memlake daemon: unexpected reply to alloc");
    // Others were asked to trim: ask again a moment later, until retry_ms.
    if (r.b == 1 && std::chrono::steady_clock::now() < deadline) {
      ::usleep(2000);
      continue;
    }
    raise(r, cfg_.socket);
  }
}

void DaemonClient::free_page(std::uint64_t page) {
  Msg m;
  m.type = Type::free;
  m.a = page;
  Msg r = call(m, nullptr);
  if (r.type == Type::error) raise(r, cfg_.socket);
}

std::string DaemonClient::status() {
  Msg m;
  m.type = Type::status;
  Msg r = call(m, nullptr);
  if (r.type == Type::error) raise(r, cfg_.socket);
  return obs::printable(r.text);
}

void DaemonClient::listen(std::function<void(std::uint64_t)> on_trim) {
  std::lock_guard<std::mutex> g(mu_);
  if (listener_.joinable()) throw_error(Errc::invalid_argument, "daemon client: already listening");
  listen_fd_ = connect_to(cfg_.socket);
  Msg m;
  m.type = Type::listen;
  m.a = id_;
  m.b = token_;
  Msg r;
  if (!send_msg(listen_fd_, m) || !recv_msg(listen_fd_, &r, kMaxReplyPacket, cfg_.timeout_ms, kMaxStatusText) ||
      r.type != Type::ok) {
    close_fds(r.fds);
    ::close(listen_fd_);
    listen_fd_ = -1;
    throw_error(Errc::unavailable, "memlake daemon: listen refused" + (r.type == Type::error ? ": " + r.text : std::string()));
  }
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) throw_error(Errc::driver, "pipe2 failed");
  listener_ = std::thread([this, on_trim = std::move(on_trim)] {
    for (;;) {
      pollfd p[2] = {{stop_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      if (::poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[0].revents) return;
      Msg t;
      try {
        if (!recv_msg(listen_fd_, &t, kMaxReplyPacket, 0, kMaxStatusText)) return;  // the daemon went away
      } catch (...) {
        return;
      }
      close_fds(t.fds);
      if (t.type == Type::trim) {
        try {
          on_trim(t.a);
        } catch (...) {
        }
      }
    }
  });
}

std::string daemon_status(const std::string& socket, int timeout_ms, bool text) {
  const std::string path = socket.empty() ? default_socket_path() : socket;
  const int fd = connect_to(path);
  Msg m;
  m.type = Type::status;
  m.seq = 1;
  m.a = text ? 1 : 0;
  Msg r;
  bool ok = send_msg(fd, m);
  try {
    if (ok) ok = recv_msg(fd, &r, kMaxReplyPacket, timeout_ms, kMaxStatusText);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  close_fds(r.fds);
  if (!ok) throw_error(Errc::unavailable, "memlake daemon at " + path + " did not answer");
  if (r.type == Type::error) raise(r, path);
  return obs::printable(r.text);
}

// ---- mappings ----------------------------------------------------------

SharedMapping map_grant(prim::Backend& b, DaemonClient::Grant& g, prim::Access access) {
  const std::size_t gran = b.granularity();
  SharedMapping m;
  m.bytes = g.bytes;
  m.mapped = (g.bytes + gran - 1) / gran * gran;
  const std::size_t n = g.fds.size();
  if (n == 0 || g.chunk == 0 || g.chunk % gran || (n - 1) * g.chunk >= m.mapped || m.mapped - (n - 1) * g.chunk > g.chunk)
    throw_error(Errc::unavailable, "memlake daemon: a shared buffer's chunks do not fit this process's granularity (" +
                                       std::to_string(gran) + ")");
  m.va = b.reserve(m.mapped, 0);
  std::size_t mapped_to = 0;
  try {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t size = i + 1 < n ? g.chunk : m.mapped - (n - 1) * g.chunk;
      const prim::PhysHandle h = b.import_fd(g.fds[i], size);
      m.handles.push_back(h);
      b.map(m.va + i * g.chunk, size, h);
      mapped_to += size;
    }
    b.set_access(m.va, m.mapped, access);
  } catch (...) {
    if (mapped_to) {
      try {
        b.unmap(m.va, mapped_to);
      } catch (...) {
      }
    }
    for (prim::PhysHandle h : m.handles) {
      try {
        b.release(h);
      } catch (...) {
      }
    }
    b.free_reservation(m.va, m.mapped);
    close_fds(g.fds);
    throw;
  }
  close_fds(g.fds);
  return m;
}

void unmap_shared(prim::Backend& b, SharedMapping& m) {
  if (!m.va) return;
  b.unmap(m.va, m.mapped);
  for (prim::PhysHandle h : m.handles) b.release(h);
  b.free_reservation(m.va, m.mapped);
  m.va = 0;
  m.handles.clear();
}

SharedMapping share(DaemonClient& c, prim::Backend& b, std::uintptr_t src, std::size_t n, const Digest* given,
                    int busy_wait_ms) {
  if (n == 0) throw_error(Errc::invalid_argument, "share: nothing to share (0 bytes)");
  const Digest id = given ? *given : content_id_device(b, src, n);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_wait_ms);
  for (;;) {
    DaemonClient::Grant g = c.publish(id, n);
    if (g.kind == Type::busy) {  // another process is filling it: its bytes will do
      if (std::chrono::steady_clock::now() > deadline)
        throw_error(Errc::unavailable, "share: another process has been filling " + to_hex(id) + " for too long");
      ::usleep(2000);
      continue;
    }
    if (g.kind == Type::shared) {
      SharedMapping m = map_grant(b, g, prim::Access::read);
      m.id = id;
      return m;
    }
    // The first publisher: fill, make read-only, seal.
    SharedMapping m;
    try {
      m = map_grant(b, g, prim::Access::read_write);
      m.id = id;
      prim::Stream s = b.create_stream();
      try {
        b.copy_device_async(m.va, src, n, s);
        b.synchronize_stream(s);
      } catch (...) {
        b.destroy_stream(s);
        throw;
      }
      b.destroy_stream(s);
      c.seal(id);
      // From now on this process maps the pages as everyone does: through
      // read-only descriptors (on the host backend no mprotect can make them
      // writable again), at the same address.
      DaemonClient::Grant ro = c.attach(id, true);
      b.unmap(m.va, m.mapped);
      for (prim::PhysHandle h : m.handles) b.release(h);
      m.handles.clear();
      std::size_t done = 0;
      try {
        for (std::size_t i = 0; i < ro.fds.size(); ++i) {
          const std::size_t size = i + 1 < ro.fds.size() ? ro.chunk : m.mapped - i * ro.chunk;
          m.handles.push_back(b.import_fd(ro.fds[i], size));
          b.map(m.va + i * ro.chunk, size, m.handles.back());
          done += size;
        }
        if (done != m.mapped) throw_error(Errc::unavailable, "memlake daemon: a re-attached buffer changed size");
        b.set_access(m.va, m.mapped, prim::Access::read);
      } catch (...) {
        if (done) b.unmap(m.va, done);
        for (prim::PhysHandle h : m.handles) b.release(h);
        m.handles.clear();
        b.free_reservation(m.va, m.mapped);
        m.va = 0;
        throw;
      }
    } catch (...) {
      try {
        unmap_shared(b, m);
        c.detach(id);  // abandons the unsealed buffer
      } catch (...) {
      }
      throw;
    }
    return m;
  }
}

SharedMapping attach(DaemonClient& c, prim::Backend& b, const Digest& id) {
  DaemonClient::Grant g = c.attach(id);
  SharedMapping m;
  try {
    m = map_grant(b, g, prim::Access::read);
  } catch (...) {
    try {
      c.detach(id);
    } catch (...) {
    }
    throw;
  }
  m.id = id;
  return m;
}

void unshare(DaemonClient& c, prim::Backend& b, SharedMapping& m) {
  unmap_shared(b, m);
  c.detach(m.id);
}

// ---- the pool ----------------------------------------------------------

DaemonPoolBackend::DaemonPoolBackend(std::unique_ptr<prim::Backend> inner, std::shared_ptr<DaemonClient> client)
    : ForwardingBackend(std::move(inner)), client_(std::move(client)) {
  if (client_->granularity() != this->inner().granularity())
    throw_error(Errc::invalid_argument, "daemon pool: the daemon's pages are " + std::to_string(client_->granularity()) +
                                            " bytes, this backend's " + std::to_string(this->inner().granularity()));
}

prim::PhysHandle DaemonPoolBackend::create(std::size_t size) {
  DaemonClient::PageGrant p = client_->alloc(size);
  prim::PhysHandle h = 0;
  try {
    h = inner().import_fd(p.fd, size);
  } catch (...) {
    ::close(p.fd);
    try {
      client_->free_page(p.page);
    } catch (...) {
    }
    throw;
  }
  ::close(p.fd);
  std::lock_guard<std::mutex> g(mu_);
  page_of_[h] = p.page;
  return h;
}

void DaemonPoolBackend::release(prim::PhysHandle h) {
  std::uint64_t page = 0;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = page_of_.find(h);
    if (it == page_of_.end()) return inner().release(h);
    page = it->second;
  }
  inner().release(h);
  {
    std::lock_guard<std::mutex> g(mu_);
    page_of_.erase(h);
  }
  try {
    client_->free_page(page);
  } catch (const Error&) {
    // The daemon went away (it took the page back when the connection closed).
  }
}

std::uint64_t DaemonPoolBackend::pages() const {
  std::lock_guard<std::mutex> g(mu_);
  return page_of_.size();
}

}  // namespace memlake::daemon
