// The memory daemon's protocol and policy parser under arbitrary bytes.
//  * decode(): accepts or rejects with Errc::invalid_argument; what it accepts
//    encodes back to the same bytes.
//  * Policy::parse(): accepts or rejects with a line number, never crashes.
//  * A live daemon (host backend) gets the bytes as one packet: it answers or
//    drops that connection, and still answers a status request afterwards.
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
#include "daemon/daemon.h"
#include "daemon/policy.h"
#include "daemon/protocol.h"

namespace {
using namespace memlake::daemon;

struct Served {
  std::string dir = "/tmp/memlake_fuzz_daemon_" + std::to_string(::getpid());
  std::unique_ptr<Daemon> d;
  Served() {
    ::mkdir(dir.c_str(), 0700);
    DaemonConfig c;
    c.backend = "host";
    c.pool_bytes = 64 << 20;
    c.chunk_bytes = 4 << 20;
    c.socket_path = dir + "/d.sock";
    d = std::make_unique<Daemon>(c);
    d->start();
  }
  ~Served() {
    d.reset();
    ::rmdir(dir.c_str());
  }
};

Daemon& daemon() {
  static Served s;
  return *s.d;
}

int connect_to(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::abort();  // the daemon died
  return fd;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (std::size_t max_text : {kMaxText, kMaxStatusText}) {
    try {
      const Msg m = decode(data, size, max_text);
      const std::string again = encode(m);
      if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
    } catch (const memlake::Error& e) {
      if (e.code() != memlake::Errc::invalid_argument) std::abort();
    }
  }
  try {
    (void)Policy::parse(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const memlake::Error& e) {
    if (e.code() != memlake::Errc::invalid_argument) std::abort();
  }
  Daemon& d = daemon();
  if (size > 0) {
    const int fd = connect_to(d.path());
    (void)!::send(fd, data, size, MSG_NOSIGNAL);
    Msg r;
    try {
      (void)recv_msg(fd, &r, kMaxReplyPacket, 500, kMaxStatusText);
      close_fds(r.fds);
    } catch (const memlake::Error&) {
    }
    ::close(fd);
  }
  const int fd = connect_to(d.path());
  Msg s;
  s.type = Type::status;
  if (!send_msg(fd, s)) std::abort();
  Msg r;
  if (!recv_msg(fd, &r, kMaxReplyPacket, 5000, kMaxStatusText) || r.type != Type::ok) std::abort();
  ::close(fd);
  return 0;
}
