#include "daemon/daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "core/error.h"
#include "daemon/content_id.h"
#include "daemon/protocol.h"
#include "obs/stats_server.h"

namespace memlake::daemon {
namespace {

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

sockaddr_un address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw_error(Errc::invalid_argument, "daemon socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : obs::printable(s)) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n' || c == '\t') c = ' ';
    o += c;
  }
  return o + "\"";
}

}  // namespace

std::string default_socket_path() { return obs::socket_dir() + "/daemon.sock"; }

std::string socket_dir_problem(const std::string& dir, uid_t owner) {
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) return std::string("cannot inspect it: ") + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != owner && st.st_uid != 0)
    return "it belongs to uid " + std::to_string(st.st_uid) + ", not to uid " + std::to_string(owner) + " or root";
  if (st.st_mode & 022) return "others may write to it (mode " + std::to_string(st.st_mode & 0777) + " octal-decimal)";
  return "";
}

struct Daemon::Client {
  int fd = -1;
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  unsigned rights = 0;
  Quota quota;
  std::string name;
  std::uint64_t id = 0, token = 0;
  bool hello = false;
  bool listener = false;       // carries trims for client `listens_for`
  std::uint64_t listens_for = 0;
  std::uint64_t used = 0;      // pool bytes held
  std::uint64_t peak = 0;
  std::uint64_t trims_sent = 0;
  // The trim in flight: the client was asked to come down to `trim_target`
  // bytes at `trim_at`; until it has (or a moment has passed) it is not asked
  // again, so a refused client's retries do not multiply what it gives back.
  std::uint64_t trim_target = 0;
  std::chrono::steady_clock::time_point trim_at{};
  std::set<std::uint64_t> pages;
  std::map<std::string, int> holds;  // sealed buffers it maps: how many times
  std::set<std::string> filling;  // buffers it must fill and seal
  std::uint64_t since_ns = 0;
};

struct Daemon::Buffer {
  std::string id;
  std::uint64_t bytes = 0;      // as asked
  std::uint64_t rounded = 0;    // whole chunks / granules
  std::uint64_t chunk = 0;
  std::vector<prim::PhysHandle> handles;
  std::vector<int> ro_fds, rw_fds;  // exported once, duplicated by each send
  bool sealed = false;
  std::uint64_t filler = 0;
  std::set<std::uint64_t> holders;
  uid_t publisher_uid = 0;
  pid_t publisher_pid = 0;
  std::uint64_t attaches = 0;
};

Daemon::Daemon(DaemonConfig cfg, std::unique_ptr<prim::Backend> backend) : cfg_(std::move(cfg)) {
  if (!cfg_.policy_path.empty()) policy_ = Policy::load(cfg_.policy_path);
  if (!backend) {
    prim::BackendConfig bc;
    bc.kind = cfg_.backend;
    bc.device = cfg_.device;
    if (bc.kind == "host") bc.host_memory_limit = 0;  // the pool accounting bounds it
    backend = prim::make_backend(bc);
  }
  backend_ = std::move(backend);
  const std::uint64_t g = backend_->granularity();
  if (cfg_.pool_bytes == 0)
    cfg_.pool_bytes = backend_->total_memory() ? backend_->total_memory() / 10 * 9 : (std::uint64_t{1} << 30);
  cfg_.pool_bytes = cfg_.pool_bytes / g * g;
  if (cfg_.chunk_bytes == 0 || cfg_.chunk_bytes % g)
    throw_error(Errc::invalid_argument, "daemon: chunk size " + std::to_string(cfg_.chunk_bytes) +
                                            " is not a multiple of the granularity " + std::to_string(g));
  path_ = cfg_.socket_path.empty() ? default_socket_path() : cfg_.socket_path;
  if (cfg_.listen_fd >= 0) {  // socket activation: systemd bound it, with its directory
    int type = 0;
    socklen_t len = sizeof type;
    if (::getsockopt(cfg_.listen_fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET)
      throw_error(Errc::invalid_argument, "daemon: the socket handed over is not a SOCK_SEQPACKET socket");
    listen_fd_ = cfg_.listen_fd;
    own_path_ = false;
    ::fcntl(listen_fd_, F_SETFL, ::fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
    ::fcntl(listen_fd_, F_SETFD, FD_CLOEXEC);
    if (::pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) throw_error(Errc::driver, "daemon: pipe2 failed");
    started_ns_ = now_ns();
    return;
  }
  const std::string dir = dir_of(path_);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw_error(Errc::unavailable, "daemon: cannot create " + dir + ": " + std::strerror(errno));
  const std::string why = socket_dir_problem(dir, ::geteuid());
  if (!why.empty()) throw_error(Errc::unavailable, "daemon: refusing " + dir + ": " + why);
  // A socket file already there: a live daemon (refuse) or a stale one (replace).
  struct stat st{};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw_error(Errc::unavailable, "daemon: " + path_ + " exists and is not a socket");
    const int probe = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a = address(path_);
    const bool live = probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (probe >= 0) ::close(probe);
    if (live) throw_error(Errc::unavailable, "daemon: another daemon already serves " + path_);
    ::unlink(path_.c_str());
  }
  listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw_error(Errc::driver, std::string("daemon: socket: ") + std::strerror(errno));
  sockaddr_un a = address(path_);
  // Anyone may connect (0666): the policy decides on every request.
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::chmod(path_.c_str(), 0666) != 0 ||
      ::listen(listen_fd_, 128) != 0 || ::pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int e = errno;
    ::close(listen_fd_);
    throw_error(Errc::driver, "daemon: cannot listen on " + path_ + ": " + std::strerror(e));
  }
  started_ns_ = now_ns();
}

Daemon::~Daemon() {
  stop();
  if (thread_.joinable()) thread_.join();
  while (!clients_.empty()) drop_client(clients_.size() - 1);
  while (!buffers_.empty()) release_buffer(buffers_.begin()->first);
  for (auto& [id, p] : pages_) {
    try {
      backend_->release(p.h);
    } catch (...) {
    }
  }
  ::close(listen_fd_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
  if (own_path_) ::unlink(path_.c_str());
}

void Daemon::stop() {
  const char c = 1;
  if (stop_pipe_[1] >= 0) (void)!::write(stop_pipe_[1], &c, 1);
}

void Daemon::start() {
  thread_ = std::thread([this] { run(); });
}

void Daemon::run() {
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({stop_pipe_[0], POLLIN, 0});
    fds.push_back({listen_fd_, static_cast<short>(clients_.size() < cfg_.max_connections ? POLLIN : 0), 0});
    for (const auto& c : clients_) fds.push_back({c->fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) return;
    for (std::size_t k = fds.size(); k-- > 2;) {
      const std::size_t i = k - 2;
      if (!fds[k].revents) continue;
      if (fds[k].revents & (POLLHUP | POLLERR) && !(fds[k].revents & POLLIN)) {
        drop_client(i);
        continue;
      }
      Msg m;
      bool open = false;
      try {
        open = recv_msg(clients_[i]->fd, &m, kMaxRequest, 0);
      } catch (const Error& e) {
        ++rejected_;
        reply_error(*clients_[i], 0, static_cast<int>(e.code()), e.what());
        drop_client(i);  // a malformed packet ends the connection
        continue;
      } catch (...) {
        drop_client(i);
        continue;
      }
      if (!open) {
        drop_client(i);
        continue;
      }
      close_fds(m.fds);  // clients never send memory to the daemon
      try {
        handle(*clients_[i], m);
      } catch (const Error& e) {
        ++rejected_;
        reply_error(*clients_[i], m.seq, static_cast<int>(e.code()), e.what());
      } catch (const std::exception& e) {
        ++rejected_;
        reply_error(*clients_[i], m.seq, static_cast<int>(Errc::internal), e.what());
      }
    }
    if (fds[1].revents & POLLIN) {
      for (int n = 0; n < 64 && clients_.size() < cfg_.max_connections; ++n) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) break;
        auto c = std::make_unique<Client>();
        c->fd = fd;
        c->since_ns = now_ns();
        ucred cred{};
        socklen_t len = sizeof cred;
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
          ::close(fd);
          ++rejected_;
          continue;
        }
        c->pid = cred.pid;
        c->uid = cred.uid;
        c->gid = cred.gid;
        c->rights = policy_.rights(cred.uid, cred.gid);
        c->quota = policy_.quota(cred.uid, cred.gid);
        // A bounded send: a client that never reads cannot stall the loop.
        timeval tv{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        clients_.push_back(std::move(c));
      }
    }
  }
}

void Daemon::reply_error(Client& c, std::uint32_t seq, int errc, const std::string& why) {
  Msg r;
  r.type = Type::error;
  r.seq = seq;
  r.a = static_cast<std::uint64_t>(errc);
  r.text = why.substr(0, kMaxText);
  (void)send_msg(c.fd, r);
}

Daemon::Client* Daemon::client_by_id(std::uint64_t id) {
  for (auto& c : clients_)
    if (c->id == id && !c->listener) return c.get();
  return nullptr;
}

void Daemon::release_buffer(const std::string& id) {
  auto it = buffers_.find(id);
  if (it == buffers_.end()) return;
  Buffer& b = *it->second;
  close_fds(b.ro_fds);
  close_fds(b.rw_fds);
  for (prim::PhysHandle h : b.handles) {
    try {
      backend_->release(h);
    } catch (...) {
    }
    --live_handles_;
  }
  used_ -= b.rounded;
  shared_bytes_ -= b.rounded;
  buffers_.erase(it);
}

void Daemon::drop_client(std::size_t i) {
  std::unique_ptr<Client> c = std::move(clients_[i]);
  clients_[i] = std::move(clients_.back());
  clients_.pop_back();
  ::close(c->fd);
  if (c->listener) return;
  // Everything the client held goes back at once (a SIGKILL lands here too).
  std::uint64_t back = 0;
  for (std::uint64_t pid : c->pages) {
    auto it = pages_.find(pid);
    if (it == pages_.end()) continue;
    try {
      backend_->release(it->second.h);
    } catch (...) {
    }
    --live_handles_;
    back += it->second.bytes;
    pages_.erase(it);
  }
  used_ -= back;
  reclaimed_ += back;
  for (const std::string& id : c->filling) release_buffer(id);
  for (const auto& [id, n] : c->holds) {
    auto it = buffers_.find(id);
    if (it == buffers_.end()) continue;
    it->second->holders.erase(c->id);
    if (it->second->holders.empty()) release_buffer(id);
  }
}

bool Daemon::send_grant(Client& c, std::uint32_t seq, Buffer& b, bool writable) {
  std::vector<int>& cache = writable ? b.rw_fds : b.ro_fds;
  if (cache.empty())
    for (prim::PhysHandle h : b.handles) cache.push_back(backend_->export_fd(h, !writable));
  Msg r;
  r.type = writable ? Type::create : Type::shared;
  r.seq = seq;
  r.a = b.bytes;
  r.b = b.chunk;
  r.c = b.handles.size();
  r.id = b.id;
  std::size_t at = 0;
  do {
    const std::size_t n = std::min<std::size_t>(kMaxFdsPerPacket, cache.size() - at);
    r.fds.assign(cache.begin() + static_cast<std::ptrdiff_t>(at), cache.begin() + static_cast<std::ptrdiff_t>(at + n));
    if (!send_msg(c.fd, r)) return false;
    at += n;
    r.type = Type::fds;
    r.id.clear();
  } while (at < cache.size());
  if (writable) close_fds(cache);  // one filler only
  return true;
}

std::uint64_t Daemon::reserved_for_others(const Client& c) const {
  std::uint64_t r = 0;
  for (const auto& o : clients_)
    if (o.get() != &c && o->hello && !o->listener && o->quota.min > o->used) r += o->quota.min - o->used;
  return r;
}

void Daemon::ask_to_trim(const Client& asking, std::uint64_t deficit) {
  // Clients above their guaranteed minimum, the most above first.
  std::vector<Client*> over;
  for (auto& o : clients_)
    if (o.get() != &asking && o->hello && !o->listener && o->used > o->quota.min) over.push_back(o.get());
  std::sort(over.begin(), over.end(), [](Client* x, Client* y) { return x->used - x->quota.min > y->used - y->quota.min; });
  const auto now = std::chrono::steady_clock::now();
  for (Client* o : over) {
    if (deficit == 0) break;
    const bool asked = o->trim_at != std::chrono::steady_clock::time_point{};  // a target of 0 is a target too
    if (asked && o->used > o->trim_target && now - o->trim_at < std::chrono::milliseconds(200)) {
      deficit -= std::min(deficit, o->used - o->trim_target);  // already coming down by that much
      continue;
    }
    const std::uint64_t ask = std::min(deficit, o->used - o->quota.min);
    for (auto& l : clients_) {
      if (!l->listener || l->listens_for != o->id) continue;
      Msg t;
      t.type = Type::trim;
      t.a = ask;
      const std::string bytes = encode(t);
      if (::send(l->fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL) > 0) {
        ++o->trims_sent;
        ++trims_;
        o->trim_target = o->used - ask;
        o->trim_at = now;
      }
    }
    deficit -= ask;
  }
}

void Daemon::handle(Client& c, Msg& m) {
  if (!is_request(m.type)) throw_error(Errc::invalid_argument, std::string("'") + type_name(m.type) + "' is not a request");
  const std::uint64_t g = backend_->granularity();
  auto need = [&](unsigned right, const char* what) {
    if (!(c.rights & right))
      throw_error(Errc::invalid_argument, "permission denied: uid " + std::to_string(c.uid) + " may not " + what +
                                              " (the daemon's policy)");
  };
  auto need_hello = [&] {
    if (!c.hello) throw_error(Errc::invalid_argument, "say hello first");
  };
  auto need_id = [&] {
    if (m.id.size() != 32) throw_error(Errc::invalid_argument, "a content id of 32 bytes is required");
  };
  Msg r;
  r.type = Type::ok;
  r.seq = m.seq;
  switch (m.type) {
    case Type::hello: {
      if (c.hello || c.listener) throw_error(Errc::invalid_argument, "hello twice");
      if (c.rights == 0)
        throw_error(Errc::invalid_argument,
                    "permission denied: uid " + std::to_string(c.uid) + " may not use this daemon (the daemon's policy)");
      c.hello = true;
      c.id = next_client_++;
      c.token = std::random_device{}() | (static_cast<std::uint64_t>(std::random_device{}()) << 32);
      c.name = obs::printable(m.text.substr(0, 64));
      if (m.a) c.quota.min = std::min(c.quota.min, m.a);
      if (m.b) c.quota.max = std::min(c.quota.max, m.b);
      c.quota.max = std::min<std::uint64_t>(c.quota.max, cfg_.pool_bytes);
      c.quota.min = std::min(c.quota.min, c.quota.max);
      r.a = g;
      r.b = c.id;
      r.c = c.token;
      r.text = backend_->name();
      break;
    }
    case Type::listen: {
      if (c.hello || c.listener) throw_error(Errc::invalid_argument, "listen on a connection already in use");
      Client* owner = client_by_id(m.a);
      if (!owner || owner->token != m.b || owner->pid != c.pid)
        throw_error(Errc::invalid_argument, "listen: no such client of this process");
      c.listener = true;
      c.listens_for = m.a;
      break;
    }
    case Type::publish: {
      need_hello();
      need(kPublish, "publish");
      need_id();
      if (m.a == 0 || m.a > cfg_.pool_bytes)
        throw_error(Errc::invalid_argument, "publish: " + std::to_string(m.a) + " bytes is not between 1 and the pool's " +
                                                std::to_string(cfg_.pool_bytes));
      auto it = buffers_.find(m.id);
      if (it != buffers_.end()) {
        Buffer& b = *it->second;
        if (!b.sealed) {
          if (b.filler == c.id) throw_error(Errc::invalid_argument, "publish: this client is filling that buffer already");
          r.type = Type::busy;
          break;
        }
        if (b.bytes != m.a) throw_error(Errc::invalid_argument, "publish: the id is published with another size");
        if (!send_grant(c, m.seq, b, false)) return;
        b.holders.insert(c.id);
        ++b.attaches;
        ++c.holds[b.id];
        ++served_;
        return;
      }
      const std::uint64_t rounded = (m.a + g - 1) / g * g;
      const std::uint64_t chunks = (rounded + cfg_.chunk_bytes - 1) / cfg_.chunk_bytes;
      if (chunks > kMaxChunks) throw_error(Errc::invalid_argument, "publish: too many chunks");
      if (used_ + rounded + reserved_for_others(c) > cfg_.pool_bytes) {
        ask_to_trim(c, used_ + rounded + reserved_for_others(c) - cfg_.pool_bytes);
        throw_error(Errc::out_of_memory, "publish: the pool has " + format_bytes(cfg_.pool_bytes - std::min<std::uint64_t>(cfg_.pool_bytes, used_)) +
                                             " free, not " + format_bytes(rounded));
      }
      auto b = std::make_unique<Buffer>();
      b->id = m.id;
      b->bytes = m.a;
      b->rounded = rounded;
      b->chunk = cfg_.chunk_bytes;
      b->filler = c.id;
      b->publisher_uid = c.uid;
      b->publisher_pid = c.pid;
      Buffer& ref = *b;
      buffers_[m.id] = std::move(b);
      used_ += rounded;
      shared_bytes_ += rounded;
      try {
        for (std::uint64_t left = rounded; left > 0;) {
          const std::uint64_t n = std::min(left, cfg_.chunk_bytes);
          ref.handles.push_back(backend_->create_shareable(n));
          ++live_handles_;
          left -= n;
        }
      } catch (...) {
        release_buffer(m.id);
        throw;
      }
      c.filling.insert(m.id);
      if (!send_grant(c, m.seq, ref, true)) return;
      ++served_;
      return;
    }
    case Type::seal: {
      need_hello();
      need_id();
      auto it = buffers_.find(m.id);
      if (it == buffers_.end() || it->second->sealed || it->second->filler != c.id)
        throw_error(Errc::invalid_argument, "seal: this client is filling no buffer of that id");
      it->second->sealed = true;
      it->second->holders.insert(c.id);
      c.filling.erase(m.id);
      ++c.holds[m.id];
      break;
    }
    case Type::attach: {
      need_hello();
      need(kAttach, "attach");
      need_id();
      auto it = buffers_.find(m.id);
      if (it == buffers_.end() || !it->second->sealed)
        throw_error(Errc::unavailable, "attach: nothing is published under " + to_hex(*reinterpret_cast<const Digest*>(m.id.data())));
      Buffer& b = *it->second;
      // a = 1: the filler's re-mapping after its seal, read-only: no new hold.
      const bool remap = m.a == 1;
      if (remap && !c.holds.count(m.id)) throw_error(Errc::invalid_argument, "attach: a re-map of a buffer this client does not hold");
      if (!send_grant(c, m.seq, b, false)) return;
      if (!remap) {
        b.holders.insert(c.id);
        ++b.attaches;
        ++c.holds[b.id];
      }
      ++served_;
      return;
    }
    case Type::detach: {
      need_hello();
      need_id();
      if (c.filling.erase(m.id)) {  // abandoned before it was sealed
        release_buffer(m.id);
        break;
      }
      auto h = c.holds.find(m.id);
      if (h == c.holds.end()) throw_error(Errc::invalid_argument, "detach: this client holds no buffer of that id");
      if (--h->second > 0) break;  // it maps the buffer elsewhere still
      c.holds.erase(h);
      auto it = buffers_.find(m.id);
      if (it != buffers_.end()) {
        it->second->holders.erase(c.id);
        if (it->second->holders.empty()) release_buffer(m.id);
      }
      break;
    }
    case Type::alloc: {
      need_hello();
      need(kPool, "take pages from the pool");
      if (m.a == 0 || m.a % g || m.a > cfg_.pool_bytes)
        throw_error(Errc::invalid_argument, "alloc: " + std::to_string(m.a) + " bytes is not a non-zero multiple of " +
                                                std::to_string(g) + " within the pool");
      if (c.used + m.a > c.quota.max)
        throw_error(Errc::out_of_memory, "pool: " + format_bytes(m.a) + " more would exceed this client's maximum of " +
                                             format_bytes(c.quota.max) + " (" + format_bytes(c.used) + " held)");
      const std::uint64_t others = reserved_for_others(c);
      if (used_ + m.a + others > cfg_.pool_bytes) {
        ask_to_trim(c, used_ + m.a + others - cfg_.pool_bytes);
        Msg e;
        e.type = Type::error;
        e.seq = m.seq;
        e.a = static_cast<std::uint64_t>(Errc::out_of_memory);
        e.b = 1;  // others were asked to trim: asking again may succeed
        e.text = "pool: " + format_bytes(m.a) + " asked, " +
                 format_bytes(cfg_.pool_bytes - std::min<std::uint64_t>(cfg_.pool_bytes, used_ + others)) +
                 " free beyond the other clients' guaranteed minimums";
        ++rejected_;
        (void)send_msg(c.fd, e);
        return;
      }
      const prim::PhysHandle h = backend_->create_shareable(m.a);  // out of memory: the error reply
      ++live_handles_;
      int fd = -1;
      try {
        fd = backend_->export_fd(h, false);
      } catch (...) {
        backend_->release(h);
        --live_handles_;
        throw;
      }
      const std::uint64_t id = next_page_++;
      pages_[id] = Page{h, m.a, c.id};
      c.pages.insert(id);
      c.used += m.a;
      c.peak = std::max(c.peak, c.used);
      used_ += m.a;
      r.type = Type::page;
      r.a = id;
      r.b = m.a;
      r.fds = {fd};
      const bool sent = send_msg(c.fd, r);
      ::close(fd);
      if (!sent) return;  // the connection's end gives the page back
      ++served_;
      return;
    }
    case Type::free: {
      need_hello();
      auto it = pages_.find(m.a);
      if (it == pages_.end() || it->second.owner != c.id)
        throw_error(Errc::invalid_argument, "free: page " + std::to_string(m.a) + " is not this client's");
      backend_->release(it->second.h);
      --live_handles_;
      c.used -= it->second.bytes;
      used_ -= it->second.bytes;
      c.pages.erase(m.a);
      pages_.erase(it);
      break;
    }
    case Type::status: {
      r.text = m.a == 1 ? status_text((c.rights & kStatus) != 0, c.uid) : status_json((c.rights & kStatus) != 0, c.uid);
      if (r.text.size() > kMaxStatusText) r.text = "{\"error\":\"status larger than the protocol carries\"}";
      break;
    }
    default: throw_error(Errc::invalid_argument, "unexpected message");
  }
  ++served_;
  (void)send_msg(c.fd, r);
}

std::string Daemon::status_json(bool full, uid_t uid) const {
  std::string o = "{\"pid\":" + std::to_string(::getpid()) + ",\"backend\":" + json_str(backend_->name()) +
                  ",\"device\":" + std::to_string(backend_->device()) + ",\"socket\":" + json_str(path_) +
                  ",\"pool_bytes\":" + std::to_string(cfg_.pool_bytes) + ",\"used_bytes\":" + std::to_string(used_.load()) +
                  ",\"shared_bytes\":" + std::to_string(shared_bytes_) + ",\"uptime_s\":" +
                  std::to_string((now_ns() - started_ns_) / 1000000000ULL) + ",\"served\":" + std::to_string(served_.load()) +
                  ",\"rejected\":" + std::to_string(rejected_.load()) + ",\"trims\":" + std::to_string(trims_.load()) +
                  ",\"reclaimed_bytes\":" + std::to_string(reclaimed_.load());
  std::uint64_t saved = 0, mapped = 0;
  std::string bufs;
  std::size_t shown = 0, hidden = 0;
  for (const auto& [id, b] : buffers_) {
    const std::uint64_t holders = b->holders.size();
    mapped += b->rounded * holders;
    if (holders > 1) saved += b->rounded * (holders - 1);
    if (!full && b->publisher_uid != uid) {
      ++hidden;
      continue;
    }
    if (shown++ >= 200) continue;
    if (!bufs.empty()) bufs += ',';
    bufs += "{\"id\":\"" + to_hex(*reinterpret_cast<const Digest*>(id.data())) + "\",\"bytes\":" + std::to_string(b->bytes) +
            ",\"chunks\":" + std::to_string(b->handles.size()) + ",\"sealed\":" + (b->sealed ? "true" : "false") +
            ",\"holders\":" + std::to_string(holders) + ",\"attaches\":" + std::to_string(b->attaches) +
            ",\"publisher_pid\":" + std::to_string(b->publisher_pid) + "}";
  }
  o += ",\"mapped_shared_bytes\":" + std::to_string(mapped) + ",\"saved_bytes\":" + std::to_string(saved);
  o += ",\"buffers\":[" + bufs + "],\"buffers_not_shown\":" + std::to_string(hidden + (shown > 200 ? shown - 200 : 0));
  std::string cl;
  std::size_t cshown = 0, chidden = 0;
  for (const auto& c : clients_) {
    if (!c->hello) continue;
    if (!full && c->uid != uid) {
      ++chidden;
      continue;
    }
    if (cshown++ >= 200) continue;
    if (!cl.empty()) cl += ',';
    cl += "{\"id\":" + std::to_string(c->id) + ",\"pid\":" + std::to_string(c->pid) + ",\"uid\":" + std::to_string(c->uid) +
          ",\"name\":" + json_str(c->name) + ",\"rights\":" + json_str(Policy::rights_str(c->rights)) +
          ",\"quota_min\":" + std::to_string(c->quota.min) + ",\"quota_max\":" + std::to_string(c->quota.max) +
          ",\"pool_bytes\":" + std::to_string(c->used) + ",\"pool_peak\":" + std::to_string(c->peak) +
          ",\"pages\":" + std::to_string(c->pages.size()) + ",\"holds\":" + std::to_string(c->holds.size()) +
          ",\"trims\":" + std::to_string(c->trims_sent) + "}";
  }
  o += ",\"clients\":[" + cl + "],\"clients_not_shown\":" + std::to_string(chidden + (cshown > 200 ? cshown - 200 : 0)) + "}\n";
  return o;
}

std::string Daemon::status_text(bool full, uid_t uid) const {
  std::string o;
  std::uint64_t saved = 0;
  for (const auto& [id, b] : buffers_)
    if (b->holders.size() > 1) saved += b->rounded * (b->holders.size() - 1);
  appendf(o, "memlaked pid %d on %s device %d, socket %s\n", static_cast<int>(::getpid()), backend_->name().c_str(),
          backend_->device(), path_.c_str());
  appendf(o, "pool %s: %s used (%s shared buffers, %s pool pages), %s saved by sharing; %llu served, %llu refused, %llu trims, %s reclaimed from ended clients\n",
          human_bytes(cfg_.pool_bytes).c_str(), human_bytes(used_.load()).c_str(), human_bytes(shared_bytes_).c_str(),
          human_bytes(used_.load() - shared_bytes_).c_str(), human_bytes(saved).c_str(),
          static_cast<unsigned long long>(served_.load()), static_cast<unsigned long long>(rejected_.load()),
          static_cast<unsigned long long>(trims_.load()), human_bytes(reclaimed_.load()).c_str());
  appendf(o, "\nCLIENT PID      UID    NAME             RIGHTS                    MIN        MAX       HELD       PEAK  HOLDS TRIMS\n");
  std::size_t n = 0;
  for (const auto& c : clients_) {
    if (!c->hello || (!full && c->uid != uid)) continue;
    if (++n > 100) break;
    appendf(o, "%-6llu %-8d %-6u %-16.16s %-20s %10s %10s %10s %10s %6zu %5llu\n", static_cast<unsigned long long>(c->id),
            static_cast<int>(c->pid), static_cast<unsigned>(c->uid), c->name.c_str(), Policy::rights_str(c->rights).c_str(),
            human_bytes(c->quota.min).c_str(), human_bytes(c->quota.max).c_str(), human_bytes(c->used).c_str(),
            human_bytes(c->peak).c_str(), c->holds.size(), static_cast<unsigned long long>(c->trims_sent));
  }
  appendf(o, "\nBUFFER           BYTES      CHUNKS HOLDERS ATTACHES SEALED PUBLISHER\n");
  n = 0;
  for (const auto& [id, b] : buffers_) {
    if (!full && b->publisher_uid != uid) continue;
    if (++n > 100) break;
    appendf(o, "%-16.16s %-10s %6zu %7zu %8llu %-6s %d\n", to_hex(*reinterpret_cast<const Digest*>(id.data())).c_str(),
            human_bytes(b->bytes).c_str(), b->handles.size(), b->holders.size(), static_cast<unsigned long long>(b->attaches),
            b->sealed ? "yes" : "no", static_cast<int>(b->publisher_pid));
  }
  if (!full) appendf(o, "(this user's clients and buffers only: the policy's `status` right shows all)\n");
  return o;
}

}  // namespace memlake::daemon
