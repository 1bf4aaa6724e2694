// memlaked on the host backend: memfd pages and SCM_RIGHTS descriptor passing
// are real, so the processes below (fork) really share pages.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "daemon/client.h"
#include "daemon/content_id.h"
#include "daemon/daemon.h"
#include "daemon/policy.h"
#include "daemon/protocol.h"
#include "prim/host_backend.h"

namespace memlake::daemon {
namespace {

constexpr std::size_t kGran = 2 << 20;

// Children of a multi-threaded process start threads here (hashing, the daemon's
// listener): ThreadSanitizer does not support that, so those tests run in the
// other builds only (.ci/run runs this suite plain, under ASan+UBSan and TSan).
#if defined(__SANITIZE_THREAD__)
#define MEMLAKE_SKIP_FORK_UNDER_TSAN() GTEST_SKIP() << "forks a multi-threaded process (unsupported under TSan)"
#else
#define MEMLAKE_SKIP_FORK_UNDER_TSAN() (void)0
#endif

std::uint64_t json_num(const std::string& j, const std::string& key, std::size_t from = 0) {
  const std::size_t at = j.find("\"" + key + "\":", from);
  if (at == std::string::npos) return UINT64_MAX;
  return std::strtoull(j.c_str() + at + key.size() + 3, nullptr, 10);
}

// A private directory for one test's socket.
struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/memlake_daemon_test_XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { std::system(("rm -rf " + path).c_str()); }
};

struct Served {
  TempDir dir;
  std::unique_ptr<Daemon> d;
  // start = false: the socket is bound (clients may connect; their requests wait), the
  // daemon's thread not yet started: call d->start() once the test has forked its children.
  explicit Served(std::uint64_t pool = 256 << 20, const std::string& policy = "", std::uint64_t chunk = 4 << 20,
                  bool start = true) {
    DaemonConfig c;
    c.socket_path = dir.path + "/daemon.sock";
    c.backend = "host";
    c.pool_bytes = pool;
    c.chunk_bytes = chunk;
    if (!policy.empty()) {
      c.policy_path = dir.path + "/policy";
      std::ofstream(c.policy_path) << policy;
    }
    d = std::make_unique<Daemon>(c);
    if (start) d->start();
  }
  std::string sock() const { return d->path(); }
  std::string status() const { return daemon_status(d->path()); }
};

DaemonClient::Config cfg(const std::string& sock, std::uint64_t min = 0, std::uint64_t max = 0) {
  DaemonClient::Config c;
  c.socket = sock;
  c.name = "test";
  c.min = min;
  c.max = max;
  c.retry_ms = 300;
  return c;
}

// Device memory of a host backend holding `n` bytes of pattern `seed`.
struct Region {
  prim::Backend& b;
  std::uintptr_t va = 0;
  std::size_t size = 0;
  prim::PhysHandle h = 0;
  Region(prim::Backend& be, std::size_t n, int seed) : b(be) {
    size = (n + kGran - 1) / kGran * kGran;
    va = b.reserve(size, 0);
    h = b.create(size);
    b.map(va, size, h);
    b.set_access(va, size, prim::Access::read_write);
    std::vector<std::uint8_t> bytes(n);
    for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::uint8_t>(i * 31 + seed);
    b.write(va, bytes.data(), n);
  }
  ~Region() {
    b.unmap(va, size);
    b.release(h);
    b.free_reservation(va, size);
  }
};

bool holds_pattern(prim::Backend& b, std::uintptr_t va, std::size_t n, int seed) {
  std::vector<std::uint8_t> got(n);
  b.read(got.data(), va, n);
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != static_cast<std::uint8_t>(i * 31 + seed)) return false;
  return true;
}

// Children not yet waited for; killed when the test process exits, so a test
// that stops at a failed assertion leaves no child behind to hold ctest's
// output open (a child waiting on a pipe the test never closes).
struct Children {
  std::vector<pid_t> live;
  ~Children() {
    for (const pid_t p : live) {
      ::kill(p, SIGKILL);
      ::waitpid(p, nullptr, 0);
    }
  }
};
Children& children() {
  static Children c;
  return c;
}

// Runs f in a child process.
template <class F>
pid_t spawn(F&& f) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int rc = 1;
    try {
      rc = f();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      rc = 3;
    }
    ::_exit(rc);
  }
  if (pid > 0) children().live.push_back(pid);
  return pid;
}

// Forks n children, all before any of them does anything, then lets them
// run f(k): the daemon's thread is idle in poll() at every fork. (A fork
// while it serves an earlier child can copy a lock some other thread holds,
// e.g. the sanitizer's allocator lock, and hang the child.)
template <class F>
std::vector<pid_t> spawn_all(int n, F&& f) {
  int gate[2];
  if (::pipe(gate) != 0) return {};
  std::vector<pid_t> kids;
  for (int k = 0; k < n; ++k)
    kids.push_back(spawn([&, k] {
      ::close(gate[1]);
      char x;
      (void)!::read(gate[0], &x, 1);  // EOF once the parent has forked them all
      ::close(gate[0]);
      return f(k);
    }));
  ::close(gate[0]);
  ::close(gate[1]);
  return kids;
}

// Waits for a child; returns its wait status.
int wait_for(pid_t pid) {
  int st = 0;
  ::waitpid(pid, &st, 0);
  auto& l = children().live;
  l.erase(std::remove(l.begin(), l.end(), pid), l.end());
  return st;
}

// Polls p until it holds. The limit only bounds a failing test: the
// sanitizer builds on two loaded cores are many times slower than a plain one.
template <class Pred>
bool eventually(Pred p, int ms = 60000) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (p()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return p();
}

TEST(ContentId, Blake2bMatchesTheRfcVector) {
  Blake2b h(64);
  h.update("abc", 3);
  std::uint8_t out[64];
  h.final(out);
  Digest first{};
  std::memcpy(first.data(), out, 32);
  EXPECT_EQ(to_hex(first), "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1");
}

TEST(ContentId, SameBytesSameIdWhateverTheThreadsOneByteChangesIt) {
  std::vector<std::uint8_t> a(3 * kLeafBytes + 12345);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i * 7);
  const Digest one = content_id(a.data(), a.size(), 1), four = content_id(a.data(), a.size(), 4);
  EXPECT_EQ(one, four);
  a[a.size() - 1] ^= 1;
  EXPECT_NE(content_id(a.data(), a.size(), 4), one);
  Digest back;
  ASSERT_TRUE(from_hex(to_hex(one), &back));
  EXPECT_EQ(back, one);
  EXPECT_FALSE(from_hex("xyz", &back));
}

TEST(ContentId, DeviceBytesHashLikeHostBytes) {
  prim::HostBackend b(0, kGran, 0);
  const std::size_t n = 70 << 20;  // more than one 64 MiB piece
  Region r(b, n, 5);
  std::vector<std::uint8_t> host(n);
  b.read(host.data(), r.va, n);
  EXPECT_EQ(content_id_device(b, r.va, n), content_id(host.data(), n));
}

TEST(SharePrim, AnExportedHandleAliasesInAnotherBackendAndReadOnlyExportsRefuseWrites) {
  prim::HostBackend a(0, kGran, 0), other(0, kGran, 0);
  const prim::PhysHandle h = a.create_shareable(kGran);
  const std::uintptr_t va = a.reserve(kGran, 0);
  a.map(va, kGran, h);
  a.set_access(va, kGran, prim::Access::read_write);
  const char msg[] = "shared bytes";
  a.write(va, msg, sizeof msg);
  const int rw = a.export_fd(h, false), ro = a.export_fd(h, true);
  const prim::PhysHandle h2 = other.import_fd(ro, kGran), h3 = other.import_fd(rw, kGran);
  ::close(rw);
  ::close(ro);
  const std::uintptr_t v2 = other.reserve(2 * kGran, 0);
  other.map(v2, kGran, h2);
  other.map(v2 + kGran, kGran, h3);
  other.set_access(v2, kGran, prim::Access::read);
  char got[sizeof msg];
  other.read(got, v2, sizeof msg);
  EXPECT_STREQ(got, msg);
  try {
    other.set_access(v2, kGran, prim::Access::read_write);
    ADD_FAILURE() << "read-write access to a read-only import";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
  }
  other.set_access(v2 + kGran, kGran, prim::Access::read_write);  // the writable export
  other.write(v2 + kGran, "X", 1);
  a.read(got, va, 1);
  EXPECT_EQ(got[0], 'X');
  EXPECT_THROW(other.import_fd(-1, kGran), Error);
  const int wrong = a.export_fd(h, true);
  EXPECT_THROW(other.import_fd(wrong, 2 * kGran), Error);  // its size is one granule
  ::close(wrong);
  EXPECT_THROW(a.export_fd(a.create(kGran), false), Error);  // not created shareable
  other.unmap(v2, 2 * kGran);
  other.release(h2);
  other.release(h3);
  other.free_reservation(v2, 2 * kGran);
  a.unmap(va, kGran);
  a.release(h);
  a.free_reservation(va, kGran);
}

TEST(Protocol, RoundTripsAndRejectsMalformedPackets) {
  Msg m;
  m.type = Type::publish;
  m.seq = 7;
  m.a = 1ull << 40;
  m.id = std::string(32, 'i');
  m.text = "name";
  const std::string e = encode(m);
  const Msg d = decode(e.data(), e.size());
  EXPECT_EQ(d.type, Type::publish);
  EXPECT_EQ(d.seq, 7u);
  EXPECT_EQ(d.a, 1ull << 40);
  EXPECT_EQ(d.id, m.id);
  EXPECT_EQ(d.text, "name");
  auto rejects = [](std::string bytes, const char* why) {
    try {
      decode(bytes.data(), bytes.size());
      ADD_FAILURE() << "accepted: " << why;
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), Errc::invalid_argument);
      EXPECT_NE(std::string(err.what()).find("malformed daemon message"), std::string::npos);
    }
  };
  rejects(e.substr(0, 10), "truncated header");
  rejects(e.substr(0, e.size() - 1), "truncated payload");
  rejects(e + "x", "trailing byte");
  std::string bad = e;
  bad[0] = 'Z';
  rejects(bad, "magic");
  bad = e;
  bad[6] = 99;
  rejects(bad, "type");
  bad = e;
  bad[kHeaderBytes + 24] = 5;
  rejects(bad, "id length");
  Msg big;
  big.text = std::string(kMaxText + 1, 't');
  rejects(encode(big), "text over the request limit");
}

TEST(Policy, ParsesRulesAndRefusesMalformedLinesByNumber) {
  const Policy p = Policy::parse("# test\nallow uid:1001 attach\nallow gid:50 publish,attach\nquota * 1G 4G\nquota uid:1001 2G 8G\n");
  EXPECT_EQ(p.rights(1001, 1), static_cast<unsigned>(kAttach));
  EXPECT_EQ(p.rights(1002, 50), static_cast<unsigned>(kPublish | kAttach));
  EXPECT_EQ(p.rights(1003, 51), 0u);
  EXPECT_EQ(p.rights(::geteuid(), 0), static_cast<unsigned>(kAll));
  EXPECT_EQ(p.quota(1001, 1).max, 8ull << 30);
  EXPECT_EQ(p.quota(7, 7).min, 1ull << 30);
  for (const char* bad : {"allow", "deny * all", "allow uid:x attach", "allow * fly", "quota * 4G 1G", "quota * 1G",
                          "allow user:no_such_user_hopefully attach"}) {
    try {
      Policy::parse(std::string("\n") + bad + "\n");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("policy line 2"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(Policy::parse(std::string(70000, '#')), Error);
}

TEST(Daemon, ProcessesPublishingTheSameBytesShareOneCopyAndAKilledHolderLetsGo) {
  MEMLAKE_SKIP_FORK_UNDER_TSAN();
  // The daemon's thread starts only after the four forks: a fork while any other thread runs
  // can copy a lock that thread holds (under ASan, its allocator's or thread registry's) and
  // hang the child, as it did here once (a child connected, then never published).
  Served s(256 << 20, "", 4 << 20, /*start=*/false);
  const std::size_t n = 10 << 20;  // 5 granules, 3 chunks of 4 MiB
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  const std::vector<pid_t> kids = spawn_all(4, [&](int) {
      ::close(go[1]);
      prim::HostBackend b(0, kGran, 0);
      Region r(b, n, 9);
      DaemonClient c(cfg(s.sock()));
      SharedMapping m = share(c, b, r.va, n, nullptr);
      if (!holds_pattern(b, m.va, n, 9)) return 4;
      char x;
      (void)!::read(go[0], &x, 1);  // hold until the parent has looked
      if (!holds_pattern(b, m.va, n, 9)) return 5;
      unshare(c, b, m);
      return 0;
  });
  ::close(go[0]);
  s.d->start();
  ASSERT_TRUE(eventually([&] { return json_num(s.status(), "holders") == 4; })) << s.status();
  std::string st = s.status();
  EXPECT_EQ(json_num(st, "shared_bytes"), n);  // one copy for four processes
  EXPECT_EQ(json_num(st, "saved_bytes"), 3 * n);
  EXPECT_EQ(json_num(st, "chunks"), 3u);
  ::kill(kids[0], SIGKILL);
  EXPECT_TRUE(WIFSIGNALED(wait_for(kids[0])));
  EXPECT_TRUE(eventually([&] { return json_num(s.status(), "holders") == 3; }));
  ::close(go[1]);  // the rest detach and exit
  for (std::size_t k = 1; k < kids.size(); ++k) {
    const int w = wait_for(kids[k]);
    EXPECT_TRUE(WIFEXITED(w) && WEXITSTATUS(w) == 0) << "child " << k << " status " << w;
  }
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0; }));
  st = s.status();
  EXPECT_EQ(json_num(st, "shared_bytes"), 0u);
  EXPECT_EQ(s.d->live_handles(), 0u);
}

TEST(Daemon, AWriteToASharedBufferFaultsInTheWriterOnlyAndChangesNothing) {
  MEMLAKE_SKIP_FORK_UNDER_TSAN();
  Served s;
  const std::size_t n = 4 << 20;
  prim::HostBackend b(0, kGran, 0);
  Region r(b, n, 3);
  DaemonClient c(cfg(s.sock()));
  SharedMapping m = share(c, b, r.va, n, nullptr);
  EXPECT_THROW(b.set_access(m.va, m.mapped, prim::Access::read_write), Error);
  const Digest id = m.id;
  const pid_t writer = spawn([&] {
    prim::HostBackend mine(0, kGran, 0);
    DaemonClient c2(cfg(s.sock()));
    SharedMapping w = attach(c2, mine, id);
    // Even a process that bypasses memlake cannot make the pages writable: the descriptor is read-only.
    if (::mprotect(reinterpret_cast<void*>(w.va), w.mapped, PROT_READ | PROT_WRITE) == 0) return 7;
    ::signal(SIGSEGV, SIG_DFL);  // a plain fault, also under sanitizers (which catch SIGSEGV)
    *reinterpret_cast<volatile char*>(w.va) = 1;  // SIGSEGV here
    return 0;
  });
  const int w = wait_for(writer);
  EXPECT_TRUE(WIFSIGNALED(w) && WTERMSIG(w) == SIGSEGV) << "status " << w;
  EXPECT_TRUE(holds_pattern(b, m.va, n, 3));
  unshare(c, b, m);
}

TEST(Daemon, AttachFindsPublishedBytesAndAnUnknownIdIsAClearError) {
  Served s;
  prim::HostBackend b(0, kGran, 0);
  DaemonClient c(cfg(s.sock()));
  Digest none{};
  try {
    attach(c, b, none);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unavailable);
    EXPECT_NE(std::string(e.what()).find("nothing is published"), std::string::npos);
  }
  Region r(b, 3 << 20, 1);
  SharedMapping m = share(c, b, r.va, 3 << 20, nullptr);
  prim::HostBackend b2(0, kGran, 0);
  DaemonClient c2(cfg(s.sock()));
  SharedMapping m2 = attach(c2, b2, m.id);
  EXPECT_EQ(m2.bytes, std::size_t{3} << 20);
  EXPECT_TRUE(holds_pattern(b2, m2.va, 3 << 20, 1));
  unshare(c2, b2, m2);
  unshare(c, b, m);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0; }));
}

TEST(Daemon, AProcessHoldingABufferTwiceKeepsItUntilItsLastUnshare) {
  Served s;
  prim::HostBackend b(0, kGran, 0);
  Region r(b, 4 << 20, 8);
  DaemonClient c(cfg(s.sock()));
  SharedMapping first = share(c, b, r.va, 4 << 20, nullptr);  // the filler
  SharedMapping second = share(c, b, r.va, 4 << 20, nullptr);  // the same bytes again: mapped, not copied
  SharedMapping third = attach(c, b, first.id);
  EXPECT_NE(first.va, second.va);
  EXPECT_EQ(json_num(s.status(), "holders"), 1u);  // one client
  unshare(c, b, first);
  unshare(c, b, second);
  EXPECT_EQ(json_num(s.status(), "shared_bytes"), std::uint64_t{4} << 20);  // still held once
  EXPECT_TRUE(holds_pattern(b, third.va, 4 << 20, 8));
  unshare(c, b, third);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0; }));
  EXPECT_THROW(c.detach(first.id), Error);  // nothing left to detach
}

TEST(Daemon, PoolQuotasTrimsAndAKilledClientsPagesComeBack) {
  MEMLAKE_SKIP_FORK_UNDER_TSAN();
  // 64 MiB pool; each client guaranteed 8 MiB, at most 48 MiB.
  Served s(64 << 20, "quota * 8M 48M\n");
  std::vector<DaemonClient::PageGrant> mine;  // before a: a's listener uses them until a is gone
  std::mutex mine_mu;                         // a's listener frees from its own thread
  DaemonClient a(cfg(s.sock()));
  for (int i = 0; i < 24; ++i) mine.push_back(a.alloc(kGran));  // 48 MiB: its maximum
  try {
    a.alloc(kGran);
    ADD_FAILURE() << "past the maximum";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::out_of_memory);
    EXPECT_NE(std::string(e.what()).find("maximum"), std::string::npos) << e.what();
  }
  // b's guaranteed 8 MiB are there although a holds 48 of 64.
  DaemonClient b(cfg(s.sock()));
  std::vector<DaemonClient::PageGrant> theirs;
  for (int i = 0; i < 4; ++i) theirs.push_back(b.alloc(kGran));
  // Pages of a pool are real memory: b writes, a sees nothing of it.
  // More for b: a is above its minimum, so it is asked to trim; it gives back 8 MiB.
  std::atomic<std::uint64_t> asked{0};
  auto held_by_a = [&] {
    std::lock_guard<std::mutex> g(mine_mu);
    return mine.size();
  };
  a.listen([&](std::uint64_t bytes) {
    asked += bytes;
    std::lock_guard<std::mutex> g(mine_mu);
    for (int i = 0; i < 4 && !mine.empty(); ++i) {
      a.free_page(mine.back().page);
      ::close(mine.back().fd);
      mine.pop_back();
    }
  });
  for (int i = 0; i < 8; ++i) theirs.push_back(b.alloc(kGran));  // 24 MiB for b now
  EXPECT_GT(asked.load(), 0u);
  const std::string st = s.status();
  EXPECT_NE(json_num(st, "trims"), 0u);
  EXPECT_LE(s.d->pool_used(), s.d->pool_bytes());
  // A client killed with SIGKILL: its pages come back. (a may trim more for
  // it, asynchronously: the pool then holds exactly what a and b still hold.)
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t victim = spawn([&] {
    DaemonClient c(cfg(s.sock(), 0, 0));
    for (int i = 0; i < 2; ++i) (void)c.alloc(kGran);
    (void)!::write(ready[1], "r", 1);
    ::pause();
    return 0;
  });
  char x;
  ASSERT_EQ(::read(ready[0], &x, 1), 1);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == (held_by_a() + theirs.size() + 2) * kGran; }))
      << s.d->pool_used();
  ::kill(victim, SIGKILL);
  wait_for(victim);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == (held_by_a() + theirs.size()) * kGran; }))
      << s.d->pool_used();
  ::close(ready[0]);
  ::close(ready[1]);
  std::lock_guard<std::mutex> g(mine_mu);
  for (auto& p : mine) ::close(p.fd);
  for (auto& p : theirs) ::close(p.fd);
}

TEST(Daemon, AnotherUserIsRefusedWithoutAPolicyThatAllowsIt) {
  MEMLAKE_SKIP_FORK_UNDER_TSAN();
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as a second uid";
  // The daemon's thread starts after the fork: a fork beside a running thread can copy a lock
  // it holds (the sanitizer's allocator lock) and hang the child (seen once under ASan).
  Served s(256 << 20, "", 4 << 20, /*start=*/false);
  ::chmod(s.dir.path.c_str(), 0755);  // others may reach the socket; the policy decides
  const std::string sock = s.sock();
  const pid_t other = spawn([&] {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 9;
    try {
      DaemonClient c(cfg(sock));
      return 10;  // accepted: wrong
    } catch (const Error& e) {
      return std::string(e.what()).find("permission denied") != std::string::npos ? 0 : 11;
    }
  });
  s.d->start();
  const int w = wait_for(other);
  EXPECT_TRUE(WIFEXITED(w) && WEXITSTATUS(w) == 0) << "status " << w;
  EXPECT_GT(s.d->rejected(), 0u);
}

TEST(Daemon, SixtyFourClientsAttachAndDetachForABoundedTimeWithoutALeak) {
  MEMLAKE_SKIP_FORK_UNDER_TSAN();
  Served s(512 << 20);
  prim::HostBackend b(0, kGran, 0);
  Region r(b, 6 << 20, 2);
  DaemonClient owner(cfg(s.sock()));
  SharedMapping m = share(owner, b, r.va, 6 << 20, nullptr);
  const Digest id = m.id;
  const std::vector<pid_t> kids = spawn_all(64, [&](int k) {
      prim::HostBackend mine(0, kGran, 0);
      DaemonClient c(cfg(s.sock()));
      const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
      int rounds = 0;
      while (std::chrono::steady_clock::now() < end) {
        SharedMapping x = attach(c, mine, id);
        if (!holds_pattern(mine, x.va, 4096, 2)) return 4;
        unshare(c, mine, x);
        if (k % 8 == 0) {  // some take and give pool pages too
          auto p = c.alloc(kGran);
          ::close(p.fd);
          c.free_page(p.page);
        }
        ++rounds;
      }
      return rounds > 0 ? 0 : 5;
  });
  for (pid_t p : kids) {
    const int w = wait_for(p);
    EXPECT_TRUE(WIFEXITED(w) && WEXITSTATUS(w) == 0) << "status " << w;
  }
  // Only the owner's buffer is left, once.
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == (6u << 20); }));
  EXPECT_EQ(s.d->live_handles(), 2u);  // 6 MiB in 4 MiB chunks
  EXPECT_EQ(json_num(s.status(), "holders"), 1u);
  unshare(owner, b, m);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0 && s.d->live_handles() == 0; }));
}

int raw_connect(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
  return fd;
}

TEST(Daemon, MalformedOversizedAndAbandonedRequestsGetErrorsAndTheDaemonServesOn) {
  Served s;
  for (const std::string& junk : {std::string("hello"), std::string(kMaxRequest + 100, 'x'), std::string(20, '\0')}) {
    const int fd = raw_connect(s.sock());
    ASSERT_GE(fd, 0);
    ASSERT_GT(::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL), 0);
    Msg r;
    ASSERT_TRUE(recv_msg(fd, &r, kMaxReplyPacket, 2000, kMaxStatusText));
    EXPECT_EQ(r.type, Type::error);
    EXPECT_NE(r.text.find("malformed"), std::string::npos) << r.text;
    ::close(fd);
  }
  // Requests before hello, and a client gone before reading its reply.
  {
    const int fd = raw_connect(s.sock());
    Msg m;
    m.type = Type::alloc;
    m.a = kGran;
    ASSERT_TRUE(send_msg(fd, m));
    Msg r;
    ASSERT_TRUE(recv_msg(fd, &r, kMaxReplyPacket, 2000, kMaxStatusText));
    EXPECT_NE(r.text.find("hello first"), std::string::npos);
    DaemonClient c(cfg(s.sock()));
    m.type = Type::publish;
    m.id = std::string(32, 'a');
    m.a = 4 << 20;
    const int fd2 = raw_connect(s.sock());
    Msg h;
    h.type = Type::hello;
    ASSERT_TRUE(send_msg(fd2, h));
    ASSERT_TRUE(recv_msg(fd2, &r, kMaxReplyPacket, 2000, kMaxStatusText));
    ASSERT_TRUE(send_msg(fd2, m));
    ::close(fd2);  // gone mid-request: the buffer it was to fill is dropped
    ::close(fd);
  }
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0 && s.d->live_handles() == 0; }));
  EXPECT_GT(s.d->rejected(), 0u);
  DaemonClient c(cfg(s.sock()));
  EXPECT_NE(c.status().find("\"backend\":\"host\""), std::string::npos);
}

TEST(Daemon, StaleSocketsAreReplacedLiveOnesAndForeignDirectoriesRefused) {
  TempDir dir;
  DaemonConfig c;
  c.backend = "host";
  c.pool_bytes = 64 << 20;
  c.socket_path = dir.path + "/daemon.sock";
  {
    // A stale socket file: bound, then its process gone.
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, c.socket_path.c_str(), c.socket_path.size() + 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
  }
  Daemon d(c);
  d.start();
  try {
    Daemon second(c);
    ADD_FAILURE() << "two daemons on one socket";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already serves"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(daemon_status(c.socket_path));
  TempDir open;
  ::chmod(open.path.c_str(), 0777);
  DaemonConfig o = c;
  o.socket_path = open.path + "/daemon.sock";
  try {
    Daemon bad(o);
    ADD_FAILURE() << "served from a directory anyone may write";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unavailable);
    EXPECT_NE(std::string(e.what()).find("others may write"), std::string::npos) << e.what();
  }
  EXPECT_THROW(daemon_status(o.socket_path), Error);
}

TEST(Daemon, ServesASocketHandedOverBySystemdAndLeavesItsFileAlone) {
  TempDir dir;
  const std::string path = dir.path + "/activated.sock";
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  DaemonConfig c;
  c.backend = "host";
  c.pool_bytes = 64 << 20;
  c.socket_path = path;
  c.listen_fd = fd;
  {
    Daemon d(c);
    d.start();
    EXPECT_NE(daemon_status(path).find("\"backend\":\"host\""), std::string::npos);
  }
  struct stat st{};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0);  // systemd's to remove
  DaemonConfig bad = c;
  bad.listen_fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  EXPECT_THROW(Daemon d2(bad), Error);
  ::close(bad.listen_fd);
}

TEST(Daemon, ClientsKeepTheirSharedPagesWhenTheDaemonRestarts) {
  TempDir dir;
  DaemonConfig c;
  c.backend = "host";
  c.pool_bytes = 64 << 20;
  c.chunk_bytes = 4 << 20;
  c.socket_path = dir.path + "/daemon.sock";
  prim::HostBackend b(0, kGran, 0);
  Region r(b, 4 << 20, 6);
  auto d = std::make_unique<Daemon>(c);
  d->start();
  DaemonClient client(cfg(c.socket_path));
  SharedMapping m = share(client, b, r.va, 4 << 20, nullptr);
  d.reset();  // the daemon goes away
  EXPECT_TRUE(holds_pattern(b, m.va, 4 << 20, 6));
  EXPECT_THROW(client.status(), Error);  // nobody serves: a clear error
  d = std::make_unique<Daemon>(c);
  d->start();
  EXPECT_NE(client.status().find("\"clients\""), std::string::npos);  // reconnected
  EXPECT_TRUE(holds_pattern(b, m.va, 4 << 20, 6));
  // The new daemon does not know the old buffer: detaching it is a clear error; the mapping goes.
  EXPECT_THROW(unshare(client, b, m), Error);
  EXPECT_EQ(b.live_mappings(), 1u);  // the Region's only
}

}  // namespace
}  // namespace memlake::daemon

#include "memlake/memlake.h"

namespace memlake::daemon {
namespace {

memlake_allocator* make_alloc(const std::string& sock, bool pool) {
  memlake_options* o = nullptr;
  EXPECT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
  memlake_options_set(o, "backend", "host");
  memlake_options_set(o, "daemon_socket", sock.c_str());
  if (pool) memlake_options_set(o, "daemon_pool", "1");
  memlake_allocator* a = nullptr;
  EXPECT_EQ(memlake_create(o, &a), MEMLAKE_OK) << memlake_last_error();
  memlake_options_destroy(o);
  return a;
}

TEST(DaemonCApi, ShareAttachUnshareAndStatus) {
  MEMLAKE_SKIP_FORK_UNDER_TSAN();
  Served s;
  memlake_allocator* a = make_alloc(s.sock(), false);
  void* p = nullptr;
  const std::size_t n = 5 << 20;
  ASSERT_EQ(memlake_alloc(a, n, 0, nullptr, &p), MEMLAKE_OK);
  std::vector<std::uint8_t> bytes(n, 0x5a);
  ASSERT_EQ(memlake_copy(a, p, bytes.data(), n, 0, nullptr), MEMLAKE_OK) << memlake_last_error();
  char id[65];
  ASSERT_EQ(memlake_content_id(a, p, n, 0, id), MEMLAKE_OK) << memlake_last_error();
  EXPECT_EQ(std::string(id), to_hex(content_id(bytes.data(), n)));
  void* shared = nullptr;
  ASSERT_EQ(memlake_share(a, p, n, 0, nullptr, &shared), MEMLAKE_OK) << memlake_last_error();
  ASSERT_EQ(memlake_free(a, p, 0, nullptr), MEMLAKE_OK);
  const pid_t kid = spawn([&] {
    memlake_allocator* b = make_alloc(s.sock(), false);
    void* q = nullptr;
    std::size_t got = 0;
    if (memlake_attach(b, id, 0, &q, &got) != MEMLAKE_OK || got != n) return 4;
    if (static_cast<std::uint8_t*>(q)[n - 1] != 0x5a) return 5;
    if (memlake_unshare(b, q) != MEMLAKE_OK) return 6;
    memlake_destroy(b);
    return 0;
  });
  const int w = wait_for(kid);
  EXPECT_TRUE(WIFEXITED(w) && WEXITSTATUS(w) == 0) << w;
  char buf[8192];
  const std::size_t len = memlake_daemon_status(s.sock().c_str(), buf, sizeof buf);
  ASSERT_GT(len, 0u) << memlake_last_error();
  EXPECT_NE(std::string(buf).find(id), std::string::npos);
  EXPECT_EQ(memlake_attach(a, "not hex", 0, &shared, nullptr), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_unshare(a, buf), MEMLAKE_ERROR_INVALID_ARGUMENT);
  memlake_destroy(a);  // unshares what is left
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0; }));
  EXPECT_EQ(memlake_daemon_status((s.dir.path + "/nobody.sock").c_str(), buf, sizeof buf), 0u);
  EXPECT_NE(std::string(memlake_last_error()).find("no memlake daemon"), std::string::npos);
}

// No fork: runs under TSan too (the trim arrives on the cached allocator's listener
// thread, which empties its cache while the other allocates).
TEST(DaemonCApi, TwoAllocatorsOfOneProcessTrimEachOtherThroughTheDaemon) {
  Served s(64 << 20);
  memlake_allocator* a = make_alloc(s.sock(), true);
  memlake_allocator* b = make_alloc(s.sock(), true);
  for (int round = 0; round < 3; ++round) {
    void* p = nullptr;
    ASSERT_EQ(memlake_alloc(a, 48 << 20, 0, nullptr, &p), MEMLAKE_OK) << memlake_last_error();
    ASSERT_EQ(memlake_free(a, p, 0, nullptr), MEMLAKE_OK);  // cached by a
    void* q = nullptr;
    ASSERT_EQ(memlake_alloc(b, 32 << 20, 0, nullptr, &q), MEMLAKE_OK) << memlake_last_error();  // a trims
    std::memset(q, round, 32 << 20);
    ASSERT_EQ(memlake_free(b, q, 0, nullptr), MEMLAKE_OK);
    ASSERT_EQ(memlake_empty_cache(b, 0), MEMLAKE_OK);
  }
  EXPECT_LE(s.d->pool_used(), s.d->pool_bytes());
  memlake_destroy(a);
  memlake_destroy(b);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0; }));
  EXPECT_NE(json_num(s.status(), "trims"), 0u);
}

TEST(DaemonCApi, ATrimGivesBackTheShortfallAndTheTrimmedAllocatorKeepsTheRestOfItsCache) {
  Served s(96 << 20);
  memlake_allocator* a = make_alloc(s.sock(), true);
  memlake_allocator* b = make_alloc(s.sock(), true);
  void* p[3] = {};
  for (void*& x : p) ASSERT_EQ(memlake_alloc(a, 24 << 20, 0, nullptr, &x), MEMLAKE_OK) << memlake_last_error();
  for (void* x : p) ASSERT_EQ(memlake_free(a, x, 0, nullptr), MEMLAKE_OK);  // a caches 72 MiB
  void* q = nullptr;
  ASSERT_EQ(memlake_alloc(b, 40 << 20, 0, nullptr, &q), MEMLAKE_OK) << memlake_last_error();  // 16 MiB short
  std::memset(q, 7, 40 << 20);
  // a gave back about the shortfall, not its whole cache: at least 24 of its 72 MiB stay.
  EXPECT_GE(s.d->pool_used(), std::uint64_t{64} << 20) << s.d->pool_used();
  EXPECT_LE(s.d->pool_used(), s.d->pool_bytes());
  void* again = nullptr;  // and a serves a request from what it kept
  ASSERT_EQ(memlake_alloc(a, 16 << 20, 0, nullptr, &again), MEMLAKE_OK) << memlake_last_error();
  ASSERT_EQ(memlake_free(a, again, 0, nullptr), MEMLAKE_OK);
  ASSERT_EQ(memlake_free(b, q, 0, nullptr), MEMLAKE_OK);
  memlake_destroy(a);
  memlake_destroy(b);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0; }));
}

TEST(DaemonCApi, AnAllocatorOnThePoolTakesPagesFromTheDaemonAndAKilledOneGivesThemBack) {
  MEMLAKE_SKIP_FORK_UNDER_TSAN();
  Served s(128 << 20);
  memlake_allocator* a = make_alloc(s.sock(), true);
  void* p = nullptr;
  ASSERT_EQ(memlake_alloc(a, 20 << 20, 0, nullptr, &p), MEMLAKE_OK) << memlake_last_error();
  EXPECT_GE(s.d->pool_used(), std::uint64_t{20} << 20);
  std::memset(p, 1, 20 << 20);  // real memory
  ASSERT_EQ(memlake_free(a, p, 0, nullptr), MEMLAKE_OK);
  ASSERT_EQ(memlake_empty_cache(a, 0), MEMLAKE_OK);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0; })) << s.d->pool_used();
  // Over the pool: out of memory from memlake_alloc, as from a full GPU.
  EXPECT_EQ(memlake_alloc(a, 200 << 20, 0, nullptr, &p), MEMLAKE_ERROR_OUT_OF_MEMORY);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t victim = spawn([&] {
    memlake_allocator* b = make_alloc(s.sock(), true);
    void* q = nullptr;
    if (memlake_alloc(b, 64 << 20, 0, nullptr, &q) != MEMLAKE_OK) return 4;
    (void)!::write(ready[1], "r", 1);
    ::pause();
    return 0;
  });
  char x;
  ASSERT_EQ(::read(ready[0], &x, 1), 1);
  EXPECT_GE(s.d->pool_used(), std::uint64_t{64} << 20);
  ::kill(victim, SIGKILL);
  wait_for(victim);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0; }));
  // An idle process's cached pages are reclaimed when another needs them.
  ASSERT_EQ(memlake_alloc(a, 100 << 20, 0, nullptr, &p), MEMLAKE_OK) << memlake_last_error();
  ASSERT_EQ(memlake_free(a, p, 0, nullptr), MEMLAKE_OK);  // cached, not returned
  EXPECT_GE(s.d->pool_used(), std::uint64_t{100} << 20);
  const pid_t other = spawn([&] {
    memlake_allocator* b = make_alloc(s.sock(), true);
    void* q = nullptr;
    return memlake_alloc(b, 100 << 20, 0, nullptr, &q) == MEMLAKE_OK ? 0 : 4;
  });
  const int w = wait_for(other);
  EXPECT_TRUE(WIFEXITED(w) && WEXITSTATUS(w) == 0) << w;
  memlake_destroy(a);
  EXPECT_TRUE(eventually([&] { return s.d->pool_used() == 0; }));
}

}  // namespace
}  // namespace memlake::daemon
