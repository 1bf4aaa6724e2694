// memlake exporter [--listen HOST:PORT]: one Prometheus endpoint (HTTP, GET
// /metrics) for every memlake process of this user that serves statistics
// (MEMLAKE_STATS_SERVER=1). Each scrape asks each process over its Unix socket
// at request time (obs::list_servers, obs::query) and merges their replies into
// one exposition (obs::merge_prometheus: each family's HELP/TYPE once; labels
// pid, rank, device, backend, gpu_uuid come from the processes' own rendering).
//
// The server: one thread, one poll loop, at most kMaxClients connections, one
// request per connection (Connection: close). A request's headers must arrive
// within kIdleTimeoutMs and fit in kMaxHeader bytes (else 400, closed); a
// client that sends nothing or reads nothing is dropped at its deadline
// without holding the others. GET or HEAD /metrics: 200; another path: 404;
// another method: 405. SIGINT/SIGTERM: it stops accepting, closes and exits 0.
// It binds only where --listen says (default loopback); port 0 picks a free
// one. The first line on stdout is "listening on http://HOST:PORT/metrics".
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "core/error.h"
#include "obs/stats_server.h"

namespace memlake::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxHeader = 8192;    // request line and headers
constexpr std::size_t kMaxClients = 64;
constexpr int kIdleTimeoutMs = 5000;        // to send the request; to take each part of the reply
constexpr int kQueryTimeoutMs = 2000;       // each process's reply
constexpr int kDrainMs = 1000;              // after a reply: the client's last bytes, then close
constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

int g_stop_pipe[2] = {-1, -1};

void on_stop(int) {
  const char c = 1;
  (void)!::write(g_stop_pipe[1], &c, 1);
}

struct Endpoint {
  std::string host, port;
};

// "HOST:PORT", HOST a name, an IPv4 address or a bracketed IPv6 one ("[::1]:9464").
// "" when well-formed, else why not.
std::string parse_endpoint(const std::string& s, Endpoint* out) {
  const std::size_t colon = s.rfind(':');
  if (colon == std::string::npos) return "expects HOST:PORT, e.g. 127.0.0.1:9464";
  std::string host = s.substr(0, colon);
  const std::string port = s.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos) return "an IPv6 address goes in brackets, e.g. [::1]:9464";
  if (host.empty()) return "no host in '" + s + "' (HOST:PORT; 0.0.0.0 for every interface)";
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535)
    return "the port in '" + s + "' is not a number from 0 to 65535";
  if (out) *out = Endpoint{host, port};
  return "";
}

std::string address_text(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    port = ntohs(v4->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
  ::inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
  port = ntohs(v6->sin6_port);
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

// The first address HOST:PORT resolves to that takes a listening socket; -1 and
// *why otherwise.
int listen_on(const Endpoint& e, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (const int rc = ::getaddrinfo(e.host.c_str(), e.port.c_str(), &hints, &res); rc != 0) {
    *why = "cannot resolve " + e.host + ": " + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      *why = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
      *why = "cannot listen on " + e.host + ":" + e.port + ": " + std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  return fd;
}

// Every live process's exposition, merged, and the exporter's own two gauges.
std::string scrape() {
  const std::string dir = obs::socket_dir();
  std::string problem;
  const std::vector<int> pids = obs::list_servers(dir, &problem);
  if (!problem.empty()) std::fprintf(stderr, "memlake exporter: %s\n", problem.c_str());
  std::vector<std::string> replies;
  int errors = 0;
  for (int pid : pids) {
    try {
      std::string r = obs::query(dir + "/" + std::to_string(pid) + ".sock", "prometheus", kQueryTimeoutMs);
      if (r.rfind("error", 0) == 0) throw Error(Errc::unavailable, r.substr(0, r.find('\n')));
      replies.push_back(std::move(r));
    } catch (const Error& e) {
      ++errors;  // gone between the listing and the query, or refused: not in this scrape
      std::fprintf(stderr, "memlake exporter: %d: %s\n", pid, e.what());
    }
  }
  std::string o = obs::merge_prometheus(replies);
  o += "# HELP memlake_exporter_processes Processes whose statistics this scrape holds\n"
       "# TYPE memlake_exporter_processes gauge\nmemlake_exporter_processes " +
       std::to_string(replies.size()) +
       "\n# HELP memlake_exporter_scrape_errors Processes listed that did not answer this scrape\n"
       "# TYPE memlake_exporter_scrape_errors gauge\nmemlake_exporter_scrape_errors " +
       std::to_string(errors) + "\n";
  return o;
}

std::string response(int code, const char* reason, const std::string& body, bool head = false,
                     const char* type = "text/plain; charset=utf-8", const char* extra = "") {
  std::string o = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + type +
                  "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
                  "Connection: close\r\n\r\n";
  if (!head) o += body;
  return o;
}

// The reply to one request (`in`: its line and headers).
std::string answer(const std::string& in) {
  const std::size_t eol = in.find('\n');
  std::string line = in.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // METHOD SP TARGET SP HTTP/1.x, nothing else.
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  const bool well_formed = sp1 != std::string::npos && sp1 > 0 && sp2 != std::string::npos && sp2 > sp1 + 1 &&
                           line.find(' ', sp2 + 1) == std::string::npos &&
                           (line.compare(sp2 + 1, std::string::npos, "HTTP/1.0") == 0 ||
                            line.compare(sp2 + 1, std::string::npos, "HTTP/1.1") == 0) &&
                           std::all_of(line.begin(), line.end(), [](char c) {
                             const auto u = static_cast<unsigned char>(c);
                             return u >= 0x20 && u < 0x7f;
                           });
  if (!well_formed) return response(400, "Bad Request", "bad request line\n");
  const std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  if (target != "/metrics") return response(404, "Not Found", "not found: the metrics are at /metrics\n");
  if (method != "GET" && method != "HEAD")
    return response(405, "Method Not Allowed", "GET or HEAD /metrics\n", false, "text/plain; charset=utf-8",
                    "Allow: GET, HEAD\r\n");
  return response(200, "OK", scrape(), method == "HEAD", kContentType);
}

struct Conn {
  int fd = -1;
  std::string in, out;
  std::size_t sent = 0;
  bool writing = false;
  bool draining = false;  // reply sent and write side shut: discards what the client still sends
  Clock::time_point deadline;
};

// false: close it.
bool on_ready(Conn& c) {
  if (c.draining) {
    char buf[4096];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR));
  }
  if (!c.writing) {
    char buf[4096];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (n == 0) return false;  // gone before a whole request
    c.in.append(buf, static_cast<std::size_t>(n));
    std::size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) end = c.in.find("\n\n");
    if (end == std::string::npos && c.in.size() <= kMaxHeader) return true;
    c.out = end == std::string::npos || end > kMaxHeader
                ? response(400, "Bad Request", "request headers larger than 8 KiB\n")
                : answer(c.in);
    c.writing = true;
    c.deadline = Clock::now() + std::chrono::milliseconds(kIdleTimeoutMs);
  }
  const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  c.sent += static_cast<std::size_t>(n);
  c.deadline = Clock::now() + std::chrono::milliseconds(kIdleTimeoutMs);  // progress
  if (c.sent < c.out.size()) return true;
  // Closing with unread input would reset the connection and could lose the reply
  // (an oversized request): shut the write side, read to the client's end, briefly.
  ::shutdown(c.fd, SHUT_WR);
  c.draining = true;
  c.deadline = Clock::now() + std::chrono::milliseconds(kDrainMs);
  return true;
}

int serve(int listen_fd) {
  std::vector<Conn> conns;
  auto close_conn = [&](std::size_t i) {
    ::close(conns[i].fd);
    conns[i] = std::move(conns.back());
    conns.pop_back();
  };
  for (;;) {
    const auto now = Clock::now();
    for (std::size_t i = conns.size(); i-- > 0;)
      if (now >= conns[i].deadline) close_conn(i);  // sent nothing, or reads nothing
    int wait_ms = -1;
    for (const Conn& c : conns) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count() + 1;
      wait_ms = wait_ms < 0 ? static_cast<int>(left) : std::min(wait_ms, static_cast<int>(left));
    }
    std::vector<pollfd> fds;
    fds.push_back({g_stop_pipe[0], POLLIN, 0});
    fds.push_back({listen_fd, static_cast<short>(conns.size() < kMaxClients ? POLLIN : 0), 0});
    for (const Conn& c : conns) fds.push_back({c.fd, static_cast<short>(c.writing && !c.draining ? POLLOUT : POLLIN), 0});
    if (::poll(fds.data(), fds.size(), wait_ms) < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "memlake exporter: poll: %s\n", std::strerror(errno));
      break;
    }
    if (fds[0].revents) break;  // SIGINT or SIGTERM
    for (std::size_t k = fds.size(); k-- > 2;) {
      if (!fds[k].revents) continue;
      bool keep = false;
      try {
        keep = on_ready(conns[k - 2]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "memlake exporter: %s\n", e.what());  // never let a request end the server
      }
      if (!keep) close_conn(k - 2);
    }
    if (fds[1].revents & POLLIN) {
      for (int n = 0; n < 16 && conns.size() < kMaxClients; ++n) {
        const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        Conn c;
        c.fd = fd;
        c.deadline = Clock::now() + std::chrono::milliseconds(kIdleTimeoutMs);
        conns.push_back(std::move(c));
      }
    }
  }
  for (Conn& c : conns) ::close(c.fd);
  return 0;
}

int run_exporter(const std::string& listen) {
  Endpoint e;
  if (const std::string why = parse_endpoint(listen, &e); !why.empty()) return usage_error("--listen " + why);
  std::string why;
  const int fd = listen_on(e, &why);
  if (fd < 0) {
    std::fprintf(stderr, "memlake exporter: %s\n", why.c_str());
    return 1;
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  if (::pipe2(g_stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::fprintf(stderr, "memlake exporter: pipe: %s\n", std::strerror(errno));
    ::close(fd);
    return 1;
  }
  struct sigaction sa{};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  std::printf("listening on http://%s/metrics\n", address_text(bound).c_str());
  std::fflush(stdout);
  const int rc = serve(fd);
  ::close(fd);
  ::close(g_stop_pipe[0]);
  ::close(g_stop_pipe[1]);
  return rc;
}

Action setup_exporter(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "exporter", "serve every memlake process's statistics to Prometheus over HTTP (GET /metrics)");
  auto listen = std::make_shared<std::string>("127.0.0.1:9464");
  sub->add_option("--listen", *listen,
                  "HOST:PORT to serve on (default 127.0.0.1:9464, loopback only; port 0: a free one, printed "
                  "first on stdout; 0.0.0.0:PORT for every interface)")
      ->type_name("HOST:PORT")
      ->check(CLI::Validator([](std::string& s) { return parse_endpoint(s, nullptr); }, "", "endpoint"));
  return [listen] { return run_exporter(*listen); };
}

}  // namespace

MEMLAKE_CLI_COMMAND(42, setup_exporter);

}  // namespace memlake::cli
