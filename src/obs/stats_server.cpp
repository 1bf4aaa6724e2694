#include "obs/stats_server.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/error.h"

namespace memlake::obs {
namespace {

constexpr std::size_t kMaxRequest = 64;


bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

sockaddr_un address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path)
    throw_error(Errc::invalid_argument, "stats socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

double util(const core::Stats& s) {
  return s.reserved.peak ? static_cast<double>(s.requested.peak) / static_cast<double>(s.reserved.peak) : 0.0;
}

std::uint64_t driver_calls(const core::Stats& s) { return s.calls.total_calls(); }

}  // namespace

std::string socket_dir() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg && *xdg) return std::string(xdg) + "/memlake";
  return "/tmp/memlake-" + std::to_string(::geteuid());
}

std::string render_json(int pid, const std::vector<core::Stats>& s) {
  std::string o = "{\"pid\":" + std::to_string(pid) + ",\"rank\":\"";
  for (char c : process_rank()) {  // from the environment: escaped as JSON asks
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) appendf(o, "\\u%04x", static_cast<unsigned>(c));
    else o += c;
  }
  o += "\",\"devices\":[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) o += ',';
    o += core::stats_json(s[i]);
  }
  return o + "]}\n";
}

namespace {

// Numbers in the exposition format whatever the served process's LC_NUMERIC
// (printf's %f writes "0,75" under de_DE): std::to_chars, shortest round trip.
std::string prom_number(double v) {
  char b[64];
  return std::string(b, std::to_chars(b, b + sizeof b, v).ptr);
}

std::string prom_number(std::uint64_t v) {
  char b[32];
  return std::string(b, std::to_chars(b, b + sizeof b, v).ptr);
}

}  // namespace

const std::string& process_rank() {
  static const std::string rank = [] {
    for (const char* var : {"RANK", "LOCAL_RANK"})
      if (const char* v = std::getenv(var); v && *v) return std::string(v);
    return std::string();
  }();
  return rank;
}

std::string escape_label(const std::string& v) {
  std::string o;
  o.reserve(v.size());
  for (char c : v) {
    if (c == '\\') o += "\\\\";
    else if (c == '"') o += "\\\"";
    else if (c == '\n') o += "\\n";
    else o += c;
  }
  return o;
}

// Several expositions as one: each family's HELP and TYPE once, then every
// process's samples of it (a family may appear only once in an exposition).
std::string merge_prometheus(const std::vector<std::string>& replies) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, std::string>> families;  // name -> (HELP/TYPE, samples)
  for (const std::string& r : replies) {
    if (r.rfind("error", 0) == 0) continue;  // a server's refusal, not an exposition
    std::string family;
    std::size_t at = 0;
    while (at < r.size()) {
      const std::size_t nl = std::min(r.find('\n', at), r.size());
      const std::string line = r.substr(at, nl - at);
      at = nl + 1;
      if (line.empty()) continue;
      if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
        family = line.substr(7, line.find(' ', 7) - 7);
        auto [it, fresh] = families.try_emplace(family);
        if (fresh) order.push_back(family);
        if (it->second.first.find(line.substr(0, 7 + family.size() + 1)) == std::string::npos)
          it->second.first += line + "\n";
      } else if (line[0] != '#') {
        if (family.empty()) {
          family = line.substr(0, line.find_first_of("{ "));
          if (families.try_emplace(family).second) order.push_back(family);
        }
        families[family].second += line + "\n";
      }
    }
  }
  std::string o;
  for (const std::string& f : order) o += families[f].first + families[f].second;
  return o;
}

// Names follow Prometheus' conventions: base units (bytes, seconds), counters
// end in _total. One HELP and TYPE per family: `memlake stat --prometheus`
// and `memlake exporter` merge
// the families of several processes (merge_prometheus).
std::string render_prometheus(int pid, const std::vector<core::Stats>& s) {
  std::string o;
  struct Metric {
    const char* name;
    const char* help;
    const char* type;
    std::uint64_t (*get)(const core::Stats&);
    double per_unit;  // 0: an integer; else the value divided by this (nanoseconds per second)
  };
  static const Metric metrics[] = {
      {"memlake_reserved_bytes", "Physical memory held", "gauge", [](const core::Stats& x) { return x.reserved.current; }, 0},
      {"memlake_reserved_bytes_peak", "Peak physical memory held", "gauge", [](const core::Stats& x) { return x.reserved.peak; }, 0},
      {"memlake_requested_bytes", "Bytes asked for by live allocations", "gauge", [](const core::Stats& x) { return x.requested.current; }, 0},
      {"memlake_requested_bytes_peak", "Peak bytes asked for", "gauge", [](const core::Stats& x) { return x.requested.peak; }, 0},
      {"memlake_mapped_bytes", "Virtual memory mapped", "gauge", [](const core::Stats& x) { return x.mapped.current; }, 0},
      {"memlake_active_allocations", "Live allocations", "gauge", [](const core::Stats& x) { return x.active.current; }, 0},
      {"memlake_largest_free_bytes", "Largest free block", "gauge", [](const core::Stats& x) { return x.largest_free; }, 0},
      {"memlake_stitched_views", "Stitched ranges", "gauge", [](const core::Stats& x) { return x.stitched_views; }, 0},
      {"memlake_allocations_total", "Allocations served", "counter", [](const core::Stats& x) { return x.num_allocs; }, 0},
      {"memlake_stitches_total", "Stitches made", "counter", [](const core::Stats& x) { return x.stitches; }, 0},
      {"memlake_repairs_total", "Idle cached views re-mapped in part instead of a new stitch", "counter",
       [](const core::Stats& x) { return x.repairs; }, 0},
      {"memlake_slow_path_seconds_total", "Time in requests no cached view served at once (driver calls included)",
       "counter", [](const core::Stats& x) { return x.slow_path_ns; }, 1e9},
      {"memlake_host_seconds_total", "Time inside allocations and frees (slow paths and driver calls included)",
       "counter", [](const core::Stats& x) { return x.host_ns; }, 1e9},
      {"memlake_ooms_total", "Out-of-memory failures", "counter", [](const core::Stats& x) { return x.num_ooms; }, 0},
      {"memlake_driver_calls_total", "Primitive (driver) calls", "counter", [](const core::Stats& x) { return driver_calls(x); }, 0},
      {"memlake_driver_call_seconds_total", "Wall-clock time inside primitive (driver) calls", "counter",
       [](const core::Stats& x) { return x.calls.total_ns(); }, 1e9},
      {"memlake_evicted_bytes", "Bytes of live allocations off the GPU now (asleep or evicted), at their addresses",
       "gauge", [](const core::Stats& x) { return x.residency.evicted_bytes_now; }, 0},
      {"memlake_host_tier_bytes", "Pinned host memory of the residency engine's host tier", "gauge",
       [](const core::Stats& x) { return x.residency.host_tier_bytes; }, 0},
      {"memlake_evicted_bytes_total", "Bytes that left the GPU (offloaded, kept or discarded)", "counter",
       [](const core::Stats& x) { return x.residency.bytes_evicted; }, 0},
      {"memlake_restored_bytes_total", "Bytes copied back to the GPU", "counter",
       [](const core::Stats& x) { return x.residency.bytes_restored; }, 0},
      {"memlake_reclaimed_bytes_total", "Bytes restored ahead and taken back under memory pressure before their use",
       "counter", [](const core::Stats& x) { return x.residency.reclaimed_bytes; }, 0},
      {"memlake_sleeps_total", "Sleeps", "counter", [](const core::Stats& x) { return x.residency.sleeps; }, 0},
      {"memlake_wakes_total", "Wakes", "counter", [](const core::Stats& x) { return x.residency.wakes; }, 0},
      {"memlake_disk_tier_bytes", "Bytes held in the residency engine's disk tier", "gauge",
       [](const core::Stats& x) { return x.residency.disk_tier_used; }, 0},
      {"memlake_disk_tier_written_bytes_total", "Bytes written to the disk tier", "counter",
       [](const core::Stats& x) { return x.residency.disk_written; }, 0},
      {"memlake_disk_tier_read_bytes_total", "Bytes read back from the disk tier", "counter",
       [](const core::Stats& x) { return x.residency.disk_read; }, 0},
  };
  const std::string rank = escape_label(process_rank());
  auto labels = [pid, &rank](const core::Stats& x) {
    return "{pid=\"" + std::to_string(pid) + "\",rank=\"" + rank + "\",device=\"" + std::to_string(x.device) +
           "\",backend=\"" + escape_label(x.backend) + "\",gpu_uuid=\"" + escape_label(x.uuid) + "\"} ";
  };
  for (const Metric& m : metrics) {
    appendf(o, "# HELP %s %s\n# TYPE %s %s\n", m.name, m.help, m.name, m.type);
    for (const core::Stats& x : s)
      o += m.name + labels(x) + (m.per_unit ? prom_number(static_cast<double>(m.get(x)) / m.per_unit) : prom_number(m.get(x))) + "\n";
  }
  o += "# HELP memlake_utilization Peak requested / peak reserved\n# TYPE memlake_utilization gauge\n";
  for (const core::Stats& x : s) o += "memlake_utilization" + labels(x) + prom_number(util(x)) + "\n";
  return o;
}

std::string render_text(int pid, const std::vector<core::Stats>& s) {
  std::string o;
  if (s.empty()) {
    appendf(o, "%-8d (no device used yet)\n", pid);
    return o;
  }
  for (const core::Stats& x : s)
    appendf(o, "%-8d %-3d %-5s %12s %12s %6.3f %12s %6llu %9llu %6llu\n", pid, x.device, x.backend.c_str(),
            human_bytes(x.reserved.current).c_str(), human_bytes(x.requested.current).c_str(), util(x),
            human_bytes(x.largest_free).c_str(), static_cast<unsigned long long>(x.stitched_views),
            static_cast<unsigned long long>(driver_calls(x)), static_cast<unsigned long long>(x.num_ooms));
  return o;
}

std::string private_dir_problem(const std::string& dir) {
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) return std::string("cannot inspect it: ") + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != ::geteuid())
    return "it belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " + std::to_string(::geteuid()) + ")";
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    return std::string("its mode is ") + mode + ", not private (0700)";
  }
  return "";
}

void ensure_private_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw_error(Errc::unavailable, "cannot create " + dir + ": " + std::strerror(errno));
  const std::string why = private_dir_problem(dir);
  if (!why.empty())
    throw_error(Errc::unavailable, "refusing " + dir + ": " + why +
                                       " (another user may have created it; remove it, or set XDG_RUNTIME_DIR)");
}

std::string printable(const std::string& s) {
  std::string o = s;
  for (char& c : o) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u >= 0x7f) c = '?';
  }
  return o;
}

namespace {
using SteadyClock = std::chrono::steady_clock;
constexpr std::size_t kMaxClients = 64;
}  // namespace

struct StatsServer::Conn {
  int fd = -1;
  std::string in, out;
  std::size_t sent = 0;
  bool writing = false;
  SteadyClock::time_point deadline;
};

StatsServer::StatsServer(StatsProvider provider, std::string dir, int request_timeout_ms, CommandHandler commands)
    : provider_(std::move(provider)),
      commands_(std::move(commands)), timeout_ms_(request_timeout_ms > 0 ? request_timeout_ms : 1000),
      peer_uid_(static_cast<unsigned>(::geteuid())) {
  ensure_private_dir(dir);  // Errc::unavailable: the caller decides whether that is fatal
  path_ = dir + "/" + std::to_string(::getpid()) + ".sock";
  ::unlink(path_.c_str());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw_error(Errc::driver, std::string("stats server: socket: ") + std::strerror(errno));
  sockaddr_un a = address(path_);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::chmod(path_.c_str(), 0600) != 0 ||
      ::listen(listen_fd_, 64) != 0 || ::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(listen_fd_);
    throw_error(Errc::driver, "stats server: cannot listen on " + path_ + ": " + std::strerror(e));
  }
  thread_ = std::thread([this] { loop(); });
}

StatsServer::~StatsServer() {
  if (stop_pipe_[1] >= 0) {
    char c = 1;
    (void)!::write(stop_pipe_[1], &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
  ::unlink(path_.c_str());
}

// One thread, every connection in one poll: a slow or idle client holds only
// its own connection, each bounded by timeout_ms_.
void StatsServer::loop() {
  std::vector<Conn> conns;
  auto close_conn = [&](std::size_t i) {
    ::close(conns[i].fd);
    conns[i] = std::move(conns.back());
    conns.pop_back();
  };
  for (;;) {
    const auto now = SteadyClock::now();
    for (std::size_t i = conns.size(); i-- > 0;) {
      if (now < conns[i].deadline) continue;
      if (!conns[i].writing) {
        ++rejected_;
        static const char msg[] = "error: timeout waiting for a request line\n";
        (void)!::send(conns[i].fd, msg, sizeof msg - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      close_conn(i);
    }
    int wait_ms = -1;
    for (const Conn& c : conns) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count() + 1;
      wait_ms = wait_ms < 0 ? static_cast<int>(left) : std::min(wait_ms, static_cast<int>(left));
    }
    std::vector<pollfd> fds;
    fds.push_back({stop_pipe_[0], POLLIN, 0});
    fds.push_back({listen_fd_, static_cast<short>(conns.size() < kMaxClients ? POLLIN : 0), 0});
    for (const Conn& c : conns) fds.push_back({c.fd, static_cast<short>(c.writing ? POLLOUT : POLLIN), 0});
    if (::poll(fds.data(), fds.size(), wait_ms) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) break;
    // Clients first (indices shift as they close), then new connections.
    for (std::size_t k = fds.size(); k-- > 2;) {
      const std::size_t i = k - 2;
      if (!fds[k].revents) continue;
      bool keep = false;
      try {
        keep = on_readable(conns[i]);
      } catch (...) {
        ++rejected_;  // never let a request take the process down
      }
      if (!keep) close_conn(i);
    }
    if (fds[1].revents & POLLIN) {
      for (int n = 0; n < 16 && conns.size() < kMaxClients; ++n) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        Conn c;
        c.fd = fd;
        c.deadline = SteadyClock::now() + std::chrono::milliseconds(timeout_ms_);
        ucred cred{};
        socklen_t len = sizeof cred;
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != peer_uid_.load()) {
          ++rejected_;
          c.out = "error: permission denied\n";
          c.writing = true;
        }
        conns.push_back(std::move(c));
      }
    }
  }
  for (Conn& c : conns) ::close(c.fd);
}

bool StatsServer::on_readable(Conn& c) {
  if (c.writing) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c.sent += static_cast<std::size_t>(n);
    return c.sent < c.out.size();
  }
  char buf[kMaxRequest + 1];
  const ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  if (n == 0) return false;  // gone before a whole line
  c.in.append(buf, static_cast<std::size_t>(n));
  const std::size_t nl = c.in.find('\n');
  if (nl == std::string::npos && c.in.size() <= kMaxRequest) return true;
  if (nl == std::string::npos || nl > kMaxRequest) {
    ++rejected_;
    c.out = "error: request too long\n";
  } else {
    std::string req = c.in.substr(0, nl);
    if (!req.empty() && req.back() == '\r') req.pop_back();
    c.out = answer(req);
  }
  c.writing = true;
  return on_readable(c);  // most replies go out at once
}

std::string StatsServer::answer(const std::string& req) {
  const int pid = static_cast<int>(::getpid());
  std::string reply;
  if (req == "json") reply = render_json(pid, provider_());
  else if (req == "prometheus") reply = render_prometheus(pid, provider_());
  else if (req == "text") reply = render_text(pid, provider_());
  else if (commands_) reply = commands_(req);
  if (reply.empty()) {
    ++rejected_;
    return commands_ ? "error: unknown request (expected json, prometheus, text, sleep or wake)\n"
                     : "error: unknown request (expected json, prometheus or text)\n";
  }
  ++served_;
  return reply;
}

namespace {
std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}
}  // namespace

std::string query(const std::string& socket_path, const std::string& request, int timeout_ms) {
  const std::string dir = dir_of(socket_path);
  const std::string why = private_dir_problem(dir);
  if (!why.empty())
    throw_error(Errc::unavailable, "refusing " + dir + ": " + why + " (its statistics could be anyone's)");
  struct stat st{};
  if (::lstat(socket_path.c_str(), &st) != 0)
    throw_error(Errc::unavailable, "no memlake stats server at " + socket_path + ": " + std::strerror(errno));
  if (!S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid())
    throw_error(Errc::unavailable, "refusing " + socket_path + ": not a socket of this user");
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_error(Errc::unavailable, std::string("socket: ") + std::strerror(errno));
  sockaddr_un a = address(socket_path);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    int e = errno;
    ::close(fd);
    throw_error(Errc::unavailable, "no memlake stats server at " + socket_path + ": " + std::strerror(e));
  }
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::geteuid()) {
    ::close(fd);
    throw_error(Errc::unavailable, "refusing the server at " + socket_path + ": it runs as another user");
  }
  std::string out;
  bool too_big = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  if (write_all(fd, request + "\n")) {
    char buf[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      pollfd p{fd, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
      if (out.size() > kMaxReply) {
        too_big = true;
        break;
      }
    }
  }
  ::close(fd);
  if (too_big)
    throw_error(Errc::unavailable, "memlake stats server at " + socket_path + ": reply larger than " +
                                       std::to_string(kMaxReply) + " bytes (refused)");
  if (out.empty()) throw_error(Errc::unavailable, "memlake stats server at " + socket_path + " did not answer");
  return printable(out);
}

std::vector<int> list_servers(const std::string& dir, std::string* problem) {
  std::vector<int> pids;
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0 && errno == ENOENT) return pids;  // nobody serves yet
  const std::string why = private_dir_problem(dir);
  if (!why.empty()) {
    const std::string msg = "refusing " + dir + ": " + why + " (its statistics could be anyone's)";
    if (problem) *problem = msg;
    else std::fprintf(stderr, "memlake: %s\n", msg.c_str());
    return pids;
  }
  DIR* d = ::opendir(dir.c_str());
  if (!d) return pids;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".sock") != 0) continue;
    int pid = std::atoi(name.c_str());
    if (pid <= 0) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
      ::unlink((dir + "/" + name).c_str());  // stale: its process is gone
      continue;
    }
    pids.push_back(pid);
  }
  ::closedir(d);
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace memlake::obs
