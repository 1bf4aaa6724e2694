// The stats socket against a hostile user: a runtime directory someone else
// made (or left open), fake servers with huge or escape-laden replies, idle
// clients. Nothing is believed, nothing blocks, memlake_create still works.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "memlake/memlake.h"
#include "obs/stats_server.h"
#include "support.h"

namespace memlake::test {
namespace {

std::string tmp(const std::string& name) { return ::testing::TempDir() + "memlake_hostile_" + std::to_string(::getpid()) + "_" + name; }

std::vector<core::Stats> one_device() {
  core::Stats s;
  s.backend = "host";
  s.reserved.set(8 << 20);
  return {s};
}

// A fake server: answers every connection with `reply` (connections: how many).
struct FakeServer {
  std::string path;
  int fd = -1;
  std::thread th;
  FakeServer(const std::string& p, std::string reply, int connections) : path(p) {
    fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, path.c_str());
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::chmod(path.c_str(), 0600);
    EXPECT_EQ(::listen(fd, 4), 0);
    th = std::thread([this, reply, connections] {
      for (int i = 0; i < connections; ++i) {
        int c = ::accept(fd, nullptr, nullptr);
        if (c < 0) return;
        char buf[64];
        (void)!::recv(c, buf, sizeof buf, 0);
        for (std::size_t off = 0; off < reply.size();) {
          ssize_t n = ::send(c, reply.data() + off, reply.size() - off, MSG_NOSIGNAL);
          if (n <= 0) break;
          off += static_cast<std::size_t>(n);
        }
        ::close(c);
      }
    });
  }
  ~FakeServer() {
    th.join();
    ::close(fd);
    ::unlink(path.c_str());
  }
};

TEST(StatsHostile, ADirectoryOpenToOthersIsRefusedByClients) {
  // /tmp/memlake-UID pre-created by another user (here: left 0777) with a fake
  // server in it: `memlake stat` printed its statistics and escape sequences.
  const std::string dir = tmp("open");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  std::string problem;
  {
    FakeServer fake(dir + "/4242.sock", "{\"pid\":4242,\"devices\":[]}\n\x1b]0;owned\x07", 0);
    EXPECT_TRUE(obs::list_servers(dir, &problem).empty());
    EXPECT_NE(problem.find("refusing " + dir + ": its mode is 777"), std::string::npos) << problem;
    std::string msg;
    EXPECT_EQ(error_of([&] { obs::query(dir + "/4242.sock", "json"); }, &msg), Errc::unavailable);
    EXPECT_NE(msg.find("its mode is 777"), std::string::npos) << msg;
    ::shutdown(fake.fd, SHUT_RDWR);
  }
  // A server refuses to put its socket there, with a message saying why.
  std::string msg;
  EXPECT_EQ(error_of([&] { obs::StatsServer s(one_device, dir); }, &msg), Errc::unavailable);
  EXPECT_NE(msg.find("another user may have created it"), std::string::npos) << msg;
  ::rmdir(dir.c_str());
}

TEST(StatsHostile, ASymlinkedOrForeignDirectoryIsRefused) {
  const std::string real = tmp("real"), link = tmp("link");
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  EXPECT_NE(obs::private_dir_problem(link).find("symbolic link"), std::string::npos);
  EXPECT_EQ(error_of([&] { obs::StatsServer s(one_device, link); }), Errc::unavailable);
  EXPECT_EQ(obs::private_dir_problem(real), "");
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(real.c_str(), 65534, 65534), 0);
    EXPECT_NE(obs::private_dir_problem(real).find("belongs to uid 65534"), std::string::npos) << obs::private_dir_problem(real);
  }
  ::unlink(link.c_str());
  ::rmdir(real.c_str());
}

TEST(StatsHostile, RepliesAreBoundedAndControlCharactersStripped) {
  const std::string dir = tmp("bounded");
  obs::ensure_private_dir(dir);
  {
    FakeServer fake(dir + "/1.sock", std::string("pid 1 \x1b[2J\x1b]0;title\x07 ok\tx\n") + "\x9b" "31m", 1);
    const std::string r = obs::query(dir + "/1.sock", "text");
    EXPECT_EQ(r.find('\x1b'), std::string::npos) << r;
    EXPECT_EQ(r.find('\x07'), std::string::npos) << r;
    EXPECT_EQ(r.find('\x9b'), std::string::npos) << r;
    EXPECT_EQ(r, "pid 1 ?[2J?]0;title? ok\tx\n?31m");
  }
  {
    // A 1 GiB reply used to be read whole; past 1 MiB the client stops.
    FakeServer fake(dir + "/2.sock", std::string((obs::kMaxReply * 3), 'x'), 1);
    std::string msg;
    EXPECT_EQ(error_of([&] { obs::query(dir + "/2.sock", "json"); }, &msg), Errc::unavailable);
    EXPECT_NE(msg.find("reply larger than 1048576 bytes"), std::string::npos) << msg;
  }
  ::rmdir(dir.c_str());
}

TEST(StatsHostile, AnIdleClientDoesNotBlockOthers) {
  const std::string dir = tmp("idle");
  // A long request timeout: the idle connection stays open for the whole test.
  obs::StatsServer srv(one_device, dir, 60000);
  int idle = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strcpy(a.sun_path, srv.path().c_str());
  ASSERT_EQ(::connect(idle, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  // Served while the idle client (accepted first) still waits: the old server
  // answered one connection at a time, so this waited for the idle one's timeout.
  for (int i = 0; i < 3; ++i) EXPECT_NE(obs::query(srv.path(), "json", 30000).find("\"devices\""), std::string::npos);
  char c;
  EXPECT_EQ(::recv(idle, &c, 1, MSG_DONTWAIT), -1) << "the idle client was answered (timed out) first";
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_EQ(srv.served(), 3u);
  ::close(idle);
}

TEST(StatsHostile, MemlakeCreateSucceedsBesideAForeignDirectory) {
  // The same pre-created directory made memlake_create fail (a denial of service).
  const std::string runtime = tmp("xdg");
  ASSERT_EQ(::mkdir(runtime.c_str(), 0700), 0);
  const std::string bad = runtime + "/memlake";
  ASSERT_EQ(::mkdir(bad.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(bad.c_str(), 0777), 0);
  ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
  memlake_options* o = nullptr;
  ASSERT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
  memlake_options_set(o, "backend", "host");
  memlake_options_set(o, "stats_server", "1");
  memlake_allocator* al = nullptr;
  ::testing::internal::CaptureStderr();
  const memlake_status st = memlake_create(o, &al);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(st, MEMLAKE_OK) << memlake_last_error();
  EXPECT_NE(err.find("memlake: stats server not started: refusing " + bad), std::string::npos) << err;
  void* p = nullptr;
  EXPECT_EQ(memlake_alloc(al, 1 << 20, 0, nullptr, &p), MEMLAKE_OK);
  EXPECT_EQ(memlake_free(al, p, 0, nullptr), MEMLAKE_OK);
  EXPECT_NE(::access((bad + "/" + std::to_string(::getpid()) + ".sock").c_str(), F_OK), 0) << "served from a foreign directory";
  memlake_destroy(al);
  memlake_options_destroy(o);
  ::unsetenv("XDG_RUNTIME_DIR");
  ::rmdir(bad.c_str());
  ::rmdir(runtime.c_str());
}

}  // namespace
}  // namespace memlake::test
