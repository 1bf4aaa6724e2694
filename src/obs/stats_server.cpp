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
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
  std::string o = "{\"pid\":" + std::to_string(pid) + ",\"devices\":[";
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

// Names follow Prometheus' conventions: base units (bytes, seconds), counters
// end in _total. One HELP and TYPE per family: `memlake stat --prometheus`
// merges the families of several processes (tools/stat_cmd.cpp).
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
  };
  auto labels = [pid](const core::Stats& x) {
    return "{pid=\"" + std::to_string(pid) + "\",device=\"" + std::to_string(x.device) + "\",backend=\"" + x.backend + "\"} ";
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

StatsServer::StatsServer(StatsProvider provider, std::string dir) : provider_(std::move(provider)) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw_error(Errc::driver, "stats server: cannot create " + dir + ": " + std::strerror(errno));
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077))
    throw_error(Errc::driver, "stats server: " + dir + " is not a private directory of this user");
  path_ = dir + "/" + std::to_string(::getpid()) + ".sock";
  ::unlink(path_.c_str());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw_error(Errc::driver, std::string("stats server: socket: ") + std::strerror(errno));
  sockaddr_un a = address(path_);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::chmod(path_.c_str(), 0600) != 0 ||
      ::listen(listen_fd_, 16) != 0 || ::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
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

void StatsServer::loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    try {
      serve(fd);
    } catch (...) {
      ++rejected_;  // never let a request take the process down
    }
    ::close(fd);
  }
}

void StatsServer::serve(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::geteuid()) {
    ++rejected_;
    write_all(fd, "error: permission denied\n");
    return;
  }
  std::string req;
  char buf[kMaxRequest + 1];
  while (req.find('\n') == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) {
      ++rejected_;
      write_all(fd, "error: timeout waiting for a request line\n");
      return;
    }
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    req.append(buf, static_cast<std::size_t>(n));
    if (req.size() > kMaxRequest) {
      ++rejected_;
      write_all(fd, "error: request too long\n");
      return;
    }
  }
  req.resize(req.find('\n'));
  if (!req.empty() && req.back() == '\r') req.pop_back();
  std::string reply;
  const int pid = static_cast<int>(::getpid());
  if (req == "json") reply = render_json(pid, provider_());
  else if (req == "prometheus") reply = render_prometheus(pid, provider_());
  else if (req == "text") reply = render_text(pid, provider_());
  else {
    ++rejected_;
    write_all(fd, "error: unknown request (expected json, prometheus or text)\n");
    return;
  }
  ++served_;
  write_all(fd, reply);
}

std::string query(const std::string& socket_path, const std::string& request, int timeout_ms) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_error(Errc::unavailable, std::string("socket: ") + std::strerror(errno));
  sockaddr_un a = address(socket_path);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    int e = errno;
    ::close(fd);
    throw_error(Errc::unavailable, "no memlake stats server at " + socket_path + ": " + std::strerror(e));
  }
  std::string out;
  if (write_all(fd, request + "\n")) {
    char buf[4096];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) break;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  if (out.empty()) throw_error(Errc::unavailable, "memlake stats server at " + socket_path + " did not answer");
  return out;
}

std::vector<int> list_servers(const std::string& dir) {
  std::vector<int> pids;
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
