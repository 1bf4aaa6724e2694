// The stats protocol from both ends. Server: arbitrary request bytes over a
// real socket get one bounded reply (or none) and the server lives on.
// Client: printable() of arbitrary reply bytes leaves nothing a terminal acts on.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "core/error.h"
#include "obs/stats_server.h"

namespace {
std::vector<memlake::core::Stats> stats() {
  memlake::core::Stats s;
  s.backend = "host";
  s.reserved.set(8 << 20);
  return {s};
}

struct Served {
  std::string dir = "/tmp/memlake_fuzz_" + std::to_string(::getpid());
  std::unique_ptr<memlake::obs::StatsServer> srv = std::make_unique<memlake::obs::StatsServer>(stats, dir, 200);
  ~Served() {
    srv.reset();  // removes its socket
    ::rmdir(dir.c_str());
  }
};

memlake::obs::StatsServer& server() {
  static Served s;
  return *s.srv;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  const std::string shown = memlake::obs::printable(in);
  for (unsigned char c : shown)
    if ((c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f) std::abort();
  const std::string& path = server().path();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::abort();  // the server died
  (void)!::send(fd, data, size, MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);  // no more request bytes: the server must not wait for its timeout
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
    reply.append(buf, static_cast<std::size_t>(n));
    if (reply.size() > memlake::obs::kMaxReply) std::abort();
  }
  ::close(fd);
  return 0;
}
