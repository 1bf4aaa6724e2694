// Live statistics from outside the process: the Unix-socket server.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <algorithm>
#include <thread>

#include "memlake/memlake.h"
#include "obs/stats_server.h"
#include "support.h"

namespace memlake::test {
namespace {

// A socket directory of this test process, removed afterwards (the server
// creates it and removes only its socket).
struct PrivateDir {
  std::string path = ::testing::TempDir() + "memlake_stats_" + std::to_string(::getpid());
  ~PrivateDir() { ::rmdir(path.c_str()); }
  operator std::string() const { return path; }
};

std::vector<core::Stats> fake_stats() {
  core::Stats s;
  s.device = 0;
  s.backend = "host";
  s.uuid = "host-0";
  s.reserved.set(8 << 20);
  s.requested.set(6 << 20);
  s.num_allocs = 3;
  return {s};
}

// Sends raw bytes and returns the whole reply.
std::string raw_exchange(const std::string& path, const std::string& bytes) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strcpy(a.sun_path, path.c_str());
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  if (!bytes.empty()) ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

TEST(StatsServer, AnswersJsonPrometheusAndText) {
  PrivateDir dir;
  obs::StatsServer srv(fake_stats, dir);
  std::string j = obs::query(srv.path(), "json");
  EXPECT_NE(j.find("\"pid\":" + std::to_string(::getpid())), std::string::npos) << j;
  EXPECT_NE(j.find("\"reserved_bytes\":{\"current\":8388608"), std::string::npos) << j;
  EXPECT_NE(j.find("\"rank\":\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"gpu_uuid\":\"host-0\""), std::string::npos) << j;
  std::string p = obs::query(srv.path(), "prometheus");
  EXPECT_NE(p.find("# TYPE memlake_reserved_bytes gauge"), std::string::npos) << p;
  EXPECT_NE(p.find("memlake_reserved_bytes{pid=\"" + std::to_string(::getpid()) + "\",rank=\"" +
                   obs::escape_label(obs::process_rank()) + "\",device=\"0\",backend=\"host\",gpu_uuid=\"host-0\"} 8388608"),
            std::string::npos)
      << p;
  EXPECT_NE(p.find("memlake_utilization{"), std::string::npos);
  std::string t = obs::query(srv.path(), "text");
  EXPECT_NE(t.find("8.00 MiB"), std::string::npos) << t;
  EXPECT_EQ(srv.served(), 3u);
}

TEST(StatsServer, MalformedRequestsGetErrorsAndTheServerLivesOn) {
  PrivateDir dir;
  obs::StatsServer srv(fake_stats, dir);
  EXPECT_EQ(raw_exchange(srv.path(), "gimme\n"), "error: unknown request (expected json, prometheus or text)\n");
  EXPECT_EQ(raw_exchange(srv.path(), std::string(200, 'x')), "error: request too long\n");
  EXPECT_EQ(raw_exchange(srv.path(), std::string("\0\xff\n", 3)).rfind("error:", 0), 0u);
  EXPECT_EQ(raw_exchange(srv.path(), ""), "error: timeout waiting for a request line\n");  // 1 s
  EXPECT_EQ(srv.rejected(), 4u);
  EXPECT_NE(obs::query(srv.path(), "json").find("\"devices\""), std::string::npos) << "still serving";
}

TEST(StatsServer, APeerOfAnotherUidIsRefusedBySoPeercred) {
  // The server's own check, reached whatever user runs the test: it expects
  // a uid this process does not have.
  PrivateDir dir;
  obs::StatsServer srv(fake_stats, dir);
  srv.expect_peer_uid(::geteuid() + 1);
  EXPECT_EQ(raw_exchange(srv.path(), "json\n"), "error: permission denied\n");
  EXPECT_EQ(srv.rejected(), 1u);
  EXPECT_EQ(srv.served(), 0u);
}

TEST(StatsServer, CommandsReachTheHandlerForThisUserOnly) {
  PrivateDir dir;
  std::atomic<int> calls{0};
  obs::StatsServer srv(fake_stats, dir, 1000, [&](const std::string& req) -> std::string {
    ++calls;
    return req == "wake" ? "ok {}\n" : "";
  });
  EXPECT_EQ(obs::query(srv.path(), "wake"), "ok {}\n");
  EXPECT_EQ(raw_exchange(srv.path(), "frobnicate\n").rfind("error: unknown request", 0), 0u);
  EXPECT_EQ(calls.load(), 2);
  // Another user's sleep or wake never reaches the handler.
  srv.expect_peer_uid(::geteuid() + 1);
  EXPECT_EQ(raw_exchange(srv.path(), "sleep offload\n"), "error: permission denied\n");
  EXPECT_EQ(raw_exchange(srv.path(), "wake\n"), "error: permission denied\n");
  EXPECT_EQ(calls.load(), 2);
}

// *DeathTest: it forks, and the child starts a thread (TSan's run, which
// cannot follow a multi-threaded fork, leaves these out; the test above
// covers the check there).
TEST(StatsServerDeathTest, OtherUsersAreRefused) {
  // The old version of this test ran the client as nobody against root's 0700
  // directory: connect() failed on permissions and SO_PEERCRED was never asked.
  // Here the server runs as nobody and root connects (root passes the
  // permission checks): only the peer-credential check stands in its way.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  const uid_t nobody = 65534;
  PrivateDir dir;
  ASSERT_EQ(::mkdir(dir.path.c_str(), 0700), 0);
  ASSERT_EQ(::chown(dir.path.c_str(), nobody, nobody), 0);
  int to_parent[2], to_child[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_child), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::alarm(30);  // never hang the suite
    if (::setgid(nobody) != 0 || ::setuid(nobody) != 0) _exit(3);
    int code = 4;
    try {
      obs::StatsServer srv(fake_stats, dir);
      const std::string path = srv.path();
      (void)!::write(to_parent[1], path.data(), path.size());
      ::close(to_parent[1]);
      char c;
      (void)!::read(to_child[0], &c, 1);  // the parent is done
      code = srv.rejected() == 1 && srv.served() == 0 ? 0 : 1;
    } catch (...) {
      code = 2;
    }
    ::unlink((dir.path + "/" + std::to_string(::getpid()) + ".sock").c_str());
    _exit(code);
  }
  ::close(to_parent[1]);
  char path[4096] = {0};
  std::size_t got = 0;
  for (ssize_t r; got < sizeof path - 1 && (r = ::read(to_parent[0], path + got, sizeof path - 1 - got)) > 0;)
    got += static_cast<std::size_t>(r);
  ASSERT_GT(got, 0u) << "the child's server did not start";
  EXPECT_EQ(raw_exchange(path, "json\n"), "error: permission denied\n") << "root got another user's statistics";
  // The client side refuses that directory before connecting, too.
  EXPECT_EQ(error_of([&] { obs::query(path, "json"); }), Errc::unavailable);
  (void)!::write(to_child[1], "x", 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the server did not count exactly one refusal";
}

TEST(StatsServer, ListsLiveServersAndRemovesStaleSockets) {
  PrivateDir pd;
  const std::string dir = pd;
  obs::StatsServer srv(fake_stats, dir);
  const std::string stale = dir + "/999999999.sock";
  FILE* f = std::fopen(stale.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  auto pids = obs::list_servers(dir);
  EXPECT_EQ(pids, std::vector<int>{static_cast<int>(::getpid())});
  EXPECT_NE(::access(stale.c_str(), F_OK), 0) << "stale socket was not removed";
}

TEST(StatsServer, CApiServesEveryAllocatorThatAsks) {
  const std::string runtime = ::testing::TempDir() + "memlake_xdg_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(runtime.c_str(), 0700), 0);
  ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
  memlake_options* o = nullptr;
  ASSERT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
  memlake_options_set(o, "backend", "host");
  memlake_options_set(o, "stats_server", "1");
  memlake_allocator* a = nullptr;
  ASSERT_EQ(memlake_create(o, &a), MEMLAKE_OK) << memlake_last_error();
  const std::string path = obs::socket_dir() + "/" + std::to_string(::getpid()) + ".sock";
  void* first = nullptr;  // device 0 exists before the first query
  ASSERT_EQ(memlake_alloc(a, 1 << 20, 0, nullptr, &first), MEMLAKE_OK);
  // Under an allocation storm the server still answers.
  std::atomic<bool> stop{false};
  std::vector<std::thread> storm;
  for (int t = 0; t < 2; ++t)
    storm.emplace_back([&] {
      while (!stop) {
        void* p = nullptr;
        memlake_alloc(a, 3 << 20, 0, nullptr, &p);
        memlake_free(a, p, 0, nullptr);
      }
    });
  std::vector<double> ms;
  for (int i = 0; i < 20; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::string j = obs::query(path, "json");
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    EXPECT_NE(j.find("\"backend\":\"host\""), std::string::npos) << j;
  }
  stop = true;
  for (auto& th : storm) th.join();
  memlake_free(a, first, 0, nullptr);
  std::sort(ms.begin(), ms.end());
  std::printf("[ info ] stats query under an allocation storm: median %.3f ms, max %.3f ms\n", ms[ms.size() / 2], ms.back());
  memlake_destroy(a);
  memlake_options_destroy(o);
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "socket left behind after the last allocator went";
  ::rmdir(obs::socket_dir().c_str());
  ::rmdir(runtime.c_str());
  ::unsetenv("XDG_RUNTIME_DIR");
}

// Label values are escaped; several processes' expositions merge into one with each
// family's HELP and TYPE once, and a server's refusal is left out.
TEST(StatsServer, PrometheusLabelsAreEscapedAndMerged) {
  EXPECT_EQ(obs::escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  std::vector<core::Stats> s = fake_stats();
  s[0].uuid = "GPU-\"x\"";
  const std::string a = obs::render_prometheus(11, s), b = obs::render_prometheus(22, fake_stats());
  EXPECT_NE(a.find("gpu_uuid=\"GPU-\\\"x\\\"\""), std::string::npos) << a;
  const std::string m = obs::merge_prometheus({a, "error: permission denied\n", b});
  std::size_t types = 0;
  for (std::size_t at = m.find("# TYPE memlake_reserved_bytes "); at != std::string::npos;
       at = m.find("# TYPE memlake_reserved_bytes ", at + 1))
    ++types;
  EXPECT_EQ(types, 1u) << m;
  EXPECT_NE(m.find("memlake_reserved_bytes{pid=\"11\""), std::string::npos) << m;
  EXPECT_NE(m.find("memlake_reserved_bytes{pid=\"22\""), std::string::npos) << m;
  EXPECT_EQ(m.find("error"), std::string::npos) << m;
}

}  // namespace
}  // namespace memlake::test
