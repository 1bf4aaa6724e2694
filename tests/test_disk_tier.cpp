// The disk tier: evicted bytes move from the pinned host tier to a file and
// come back to the same address, checked; a full disk, an I/O error, a short
// write and a corrupted file are clear errors that lose nothing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "prim/decorators.h"
#include "residency/disk_tier.h"
#include "support.h"

namespace memlake::test {
namespace {

using residency::DiskTier;
using residency::FileOps;
using residency::Mode;
constexpr std::size_t kPage = 64 << 10;

// A private directory for one test, removed with it.
struct Dir {
  std::string path;
  explicit Dir(const std::string& base = ::testing::TempDir()) {
    std::string t = base + (base.empty() || base.back() == '/' ? "" : "/") + "memlake_disk_XXXXXX";
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp " + t + ": " + std::strerror(errno));
    path = t;
  }
  ~Dir() { ::rmdir(path.c_str()); }  // the tier's file is unnamed: nothing else is in it
};

// File operations that fail on command, write short, or flip a byte on disk.
struct FaultyOps final : FileOps {
  int fail_write = 0, fail_read = 0, fail_fallocate = 0;  // errno to fail with (0: pass)
  bool short_write = false, corrupt = false, truncated = false;
  ssize_t pwrite(int fd, const void* buf, std::size_t n, off_t off) override {
    if (fail_write) return errno = fail_write, -1;
    if (short_write && n > DiskTier::kBlock) {
      // A partial write, then the disk fills.
      const ssize_t r = FileOps::pwrite(fd, buf, DiskTier::kBlock, off);
      short_write = false;
      fail_write = ENOSPC;
      return r;
    }
    return FileOps::pwrite(fd, buf, n, off);
  }
  ssize_t pread(int fd, void* buf, std::size_t n, off_t off) override {
    if (fail_read) return errno = fail_read, -1;
    if (truncated) return 0;
    const ssize_t r = FileOps::pread(fd, buf, n, off);
    if (corrupt && r > 10) static_cast<unsigned char*>(buf)[10] ^= 0x40;
    return r;
  }
  int fallocate(int fd, off_t off, off_t len) override { return fail_fallocate ? fail_fallocate : FileOps::fallocate(fd, off, len); }
};

struct Aligned {
  void* p = nullptr;
  explicit Aligned(std::size_t n) {
    if (::posix_memalign(&p, 1 << 16, n)) throw std::bad_alloc();
  }
  ~Aligned() { std::free(p); }
  unsigned char* b() { return static_cast<unsigned char*>(p); }
};

std::size_t round_up(std::size_t n) { return (n + (1 << 16) - 1) >> 16 << 16; }

void pattern(unsigned char* p, std::size_t n, unsigned seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>((i * 131 + seed * 7) ^ (i >> 9));
}

TEST(DiskTier, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(residency::crc32c("123456789", 9), 0xE3069283u);  // RFC 3720's check value
  EXPECT_EQ(residency::crc32c("", 0), 0u);
}

TEST(DiskTier, WritesReadsAndReusesExtents) {
  Dir d;
  DiskTier t(d.path, 0);
  Aligned a(1 << 20), b(1 << 20);
  pattern(a.b(), 300000, 1);
  auto e1 = t.write(a.p, 300000);
  EXPECT_EQ(e1.bytes % DiskTier::kBlock, 0u);
  pattern(a.b(), 5000, 2);
  auto e2 = t.write(a.p, 5000);
  EXPECT_EQ(t.used(), e1.bytes + e2.bytes);
  t.read(e2, b.p);
  Aligned want(1 << 20);
  pattern(want.b(), 5000, 2);
  EXPECT_EQ(std::memcmp(b.p, want.p, 5000), 0);
  t.read(e1, b.p);
  pattern(want.b(), 300000, 1);
  EXPECT_EQ(std::memcmp(b.p, want.p, 300000), 0);
  t.give(e1);
  auto e3 = t.write(a.p, 100);
  EXPECT_EQ(e3.offset, e1.offset) << "a freed extent is reused";
  t.give(e2);
  t.give(e3);
  EXPECT_EQ(t.used(), 0u);
  EXPECT_EQ(error_of([&] { t.give(e3); }), Errc::internal) << "a double give is caught";
}

// Past 64 MiB the file I/O runs on a second thread beside the checksum.
TEST(DiskTier, LargeExtentsOverlapTheChecksumWithTheIo) {
  Dir d;
  FaultyOps ops;
  DiskTier t(d.path, 0, &ops);
  const std::size_t n = (std::size_t{150} << 20) + 12345;
  Aligned a(round_up(n)), b(round_up(n));
  pattern(a.b(), n, 5);
  auto e = t.write(a.p, n);
  EXPECT_EQ(e.crc, residency::crc32c(a.p, n));
  t.read(e, b.p);
  EXPECT_EQ(std::memcmp(a.p, b.p, n), 0);
  ops.corrupt = true;
  EXPECT_EQ(error_of([&] { t.read(e, b.p); }), Errc::driver);
  ops.corrupt = false;
  ops.fail_read = EIO;
  EXPECT_EQ(error_of([&] { t.read(e, b.p); }), Errc::driver);
  ops.fail_read = 0;
  ops.short_write = true;
  EXPECT_EQ(error_of([&] { t.write(a.p, n); }), Errc::out_of_memory);
  ops.fail_write = 0;
  EXPECT_EQ(t.used(), e.bytes) << "the failed write's extent went back";
  t.read(e, b.p);
  EXPECT_EQ(std::memcmp(a.p, b.p, n), 0);
  t.give(e);
}

TEST(DiskTier, TheFileIsUnnamedAndPrivate) {
  Dir d;
  DiskTier t(d.path, 0);
  Aligned a(1 << 16);
  t.write(a.p, 100);
  // Nothing in the directory: the file has no name, nobody can open it.
  EXPECT_EQ(::rmdir(d.path.c_str()), 0) << "the directory is empty";
  EXPECT_EQ(::mkdir(d.path.c_str(), 0700), 0);
}

// tmpfs: O_DIRECT on Linux 6.6 and later, buffered I/O before.
TEST(DiskTier, WorksOnTmpfs) {
  struct stat st{};
  if (::stat("/dev/shm", &st) != 0) GTEST_SKIP() << "no /dev/shm";
  Dir d("/dev/shm");
  DiskTier t(d.path, 0);
  Aligned a(1 << 16), b(1 << 16);
  pattern(a.b(), 9000, 3);
  auto e = t.write(a.p, 9000);
  t.read(e, b.p);
  EXPECT_EQ(std::memcmp(a.p, b.p, 9000), 0);
  t.give(e);
}

TEST(DiskTier, ErrorsAreClearAndChangeNothing) {
  Dir d;
  FaultyOps ops;
  DiskTier t(d.path, 3 * DiskTier::kBlock, &ops);
  Aligned a(1 << 16), b(1 << 16);
  pattern(a.b(), 2 * DiskTier::kBlock, 4);
  auto e = t.write(a.p, 2 * DiskTier::kBlock);
  // The limit: out of memory, with the sizes in the message.
  std::string msg;
  EXPECT_EQ(error_of([&] { t.write(a.p, 2 * DiskTier::kBlock); }, &msg), Errc::out_of_memory);
  EXPECT_NE(msg.find("limit"), std::string::npos) << msg;
  // An I/O error on write: a driver error; the extent goes back.
  ops.fail_write = EIO;
  EXPECT_EQ(error_of([&] { t.write(a.p, 100); }, &msg), Errc::driver);
  EXPECT_NE(msg.find(std::strerror(EIO)), std::string::npos) << msg;
  EXPECT_EQ(t.used(), e.bytes);
  ops.fail_write = 0;
  // A full disk while writing: out of memory.
  ops.fail_write = ENOSPC;
  EXPECT_EQ(error_of([&] { t.write(a.p, 100); }), Errc::out_of_memory);
  ops.fail_write = 0;
  // Read errors, a truncated file, a flipped bit: errors, never wrong bytes.
  ops.fail_read = EIO;
  EXPECT_EQ(error_of([&] { t.read(e, b.p); }), Errc::driver);
  ops.fail_read = 0;
  ops.truncated = true;
  EXPECT_EQ(error_of([&] { t.read(e, b.p); }, &msg), Errc::driver);
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  ops.truncated = false;
  ops.corrupt = true;
  EXPECT_EQ(error_of([&] { t.read(e, b.p); }, &msg), Errc::driver);
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
  ops.corrupt = false;
  t.read(e, b.p);
  EXPECT_EQ(std::memcmp(a.p, b.p, 2 * DiskTier::kBlock), 0) << "the extent is intact after the errors";
  // A disk that cannot grow.
  Dir d2;
  FaultyOps full;
  full.fail_fallocate = ENOSPC;
  DiskTier t2(d2.path, 0, &full);
  EXPECT_EQ(error_of([&] { t2.write(a.p, 100); }, &msg), Errc::out_of_memory);
  EXPECT_NE(msg.find("cannot grow"), std::string::npos) << msg;
  EXPECT_EQ(t2.used(), 0u);
}

TEST(DiskTier, AMissingDirectoryIsADriverErrorNamingIt) {
  DiskTier t("/nonexistent/memlake-disk", 0);
  Aligned a(1 << 16);
  std::string msg;
  EXPECT_EQ(error_of([&] { t.write(a.p, 10); }, &msg), Errc::driver);
  EXPECT_NE(msg.find("/nonexistent/memlake-disk"), std::string::npos) << msg;
}

struct Rig {
  prim::HostBackend* host;
  std::unique_ptr<core::DeviceAllocator> dev;
  Rig() {
    auto h = std::make_unique<prim::HostBackend>(0, kPage, 0);
    host = h.get();
    Options o;
    o.backend = "host";
    o.small_max = kPage / 4;
    o.handle_size = 4 * kPage;
    dev = std::make_unique<core::DeviceAllocator>(std::move(h), o);
  }
  prim::Backend& be() { return dev->backend(); }
};

TEST(DiskTierResidency, EvictDemoteRestoreBringsTheBytesBackAtTheSameAddress) {
  Dir d;
  Rig r;
  r.dev->set_disk_tier(d.path, 0);
  void* a = r.dev->alloc(9 * kPage + 77, nullptr);
  void* b = r.dev->alloc(3 * kPage, nullptr);
  fill(r.be(), a, 9 * kPage + 77, 1);
  fill(r.be(), b, 3 * kPage, 2);
  r.dev->evict(a, Mode::offload);
  const auto host_used = r.dev->residency_stats().host_used;
  r.dev->demote(a);
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.demotions, 1u);
  EXPECT_LT(st.host_used, host_used) << "the host extent is free once the bytes are on disk";
  EXPECT_GE(st.disk_used, 9 * kPage + 77);
  EXPECT_EQ(st.evicted_now, 1u);
  EXPECT_FALSE(r.host->accessible(reinterpret_cast<std::uintptr_t>(a), kPage));
  EXPECT_EQ(error_of([&] { r.dev->demote(a); }), Errc::invalid_argument) << "on disk already";
  EXPECT_EQ(error_of([&] { r.dev->demote(b); }), Errc::invalid_argument) << "not evicted";
  r.dev->restore(a);
  EXPECT_TRUE(holds(r.be(), a, 9 * kPage + 77, 1));
  EXPECT_TRUE(holds(r.be(), b, 3 * kPage, 2));
  st = r.dev->residency_stats();
  EXPECT_EQ(st.disk_used, 0u);
  EXPECT_EQ(st.evicted_now, 0u);
  EXPECT_GE(st.disk_read, 9 * kPage + 77);
  EXPECT_GT(st.disk_write_s, 0.0) << "the tier times its own I/O";
  EXPECT_GT(st.disk_read_s, 0.0);
  r.dev->check();
  // Again, and a discarded allocation has nothing to demote.
  r.dev->evict(a, Mode::offload);
  r.dev->demote(a);
  r.dev->restore(a);
  EXPECT_TRUE(holds(r.be(), a, 9 * kPage + 77, 1));
  r.dev->evict(b, Mode::discard);
  EXPECT_EQ(error_of([&] { r.dev->demote(b); }), Errc::invalid_argument);
  r.dev->restore(b);
  r.dev->free(a);
  r.dev->free(b);
  r.dev->check();
}

TEST(DiskTierResidency, FreeingADemotedAllocationFreesItsDiskExtent) {
  Dir d;
  Rig r;
  r.dev->set_disk_tier(d.path, 0);
  void* a = r.dev->alloc(5 * kPage, nullptr);
  fill(r.be(), a, 5 * kPage, 3);
  r.dev->evict(a, Mode::offload);
  r.dev->demote(a);
  EXPECT_GT(r.dev->residency_stats().disk_used, 0u);
  r.dev->free(a);
  EXPECT_EQ(r.dev->residency_stats().disk_used, 0u);
  EXPECT_EQ(r.dev->residency_stats().evicted_now, 0u);
  r.dev->check();
}

TEST(DiskTierResidency, WithoutADiskTierDemoteIsMisuse) {
  Rig r;
  void* a = r.dev->alloc(5 * kPage, nullptr);
  r.dev->evict(a, Mode::offload);
  std::string msg;
  EXPECT_EQ(error_of([&] { r.dev->demote(a); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("disk_tier"), std::string::npos) << msg;
  r.dev->restore(a);
  r.dev->free(a);
}

TEST(DiskTierResidency, AFullDiskKeepsTheBytesInTheHostTier) {
  Dir d;
  Rig r;
  r.dev->set_disk_tier(d.path, 6 * kPage);
  void* a = r.dev->alloc(4 * kPage, nullptr);
  void* b = r.dev->alloc(4 * kPage, nullptr);
  fill(r.be(), a, 4 * kPage, 4);
  fill(r.be(), b, 4 * kPage, 5);
  r.dev->evict(a, Mode::offload);
  r.dev->evict(b, Mode::offload);
  r.dev->demote(a);
  EXPECT_EQ(error_of([&] { r.dev->demote(b); }), Errc::out_of_memory) << "past the limit";
  r.dev->restore(b);  // from the host tier: nothing was lost
  r.dev->restore(a);
  EXPECT_TRUE(holds(r.be(), a, 4 * kPage, 4));
  EXPECT_TRUE(holds(r.be(), b, 4 * kPage, 5));
  r.dev->check();
}

TEST(DiskTierResidency, IoErrorsAndCorruptionLeaveTheAllocationEvictedAndRecoverable) {
  Dir d;
  Rig r;
  FaultyOps ops;
  r.dev->set_disk_tier(d.path, 0, &ops);
  void* a = r.dev->alloc(7 * kPage + 5, nullptr);
  fill(r.be(), a, 7 * kPage + 5, 6);
  r.dev->evict(a, Mode::offload);
  // A short write, then a full disk: the bytes stay in the host tier.
  ops.short_write = true;
  EXPECT_EQ(error_of([&] { r.dev->demote(a); }), Errc::out_of_memory);
  ops.fail_write = 0;
  EXPECT_EQ(r.dev->residency_stats().disk_used, 0u);
  r.dev->demote(a);
  // A read error and a corrupted file: the restore fails before anything is
  // mapped, the allocation stays evicted with its bytes on disk.
  ops.fail_read = EIO;
  EXPECT_EQ(error_of([&] { r.dev->restore(a); }), Errc::driver);
  ops.fail_read = 0;
  ops.corrupt = true;
  std::string msg;
  EXPECT_EQ(error_of([&] { r.dev->restore(a); }, &msg), Errc::driver);
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
  ops.corrupt = false;
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.evicted_now, 1u);
  EXPECT_GT(st.disk_used, 0u);
  EXPECT_FALSE(r.host->accessible(reinterpret_cast<std::uintptr_t>(a), kPage)) << "nothing mapped";
  r.dev->check();
  r.dev->restore(a);
  EXPECT_TRUE(holds(r.be(), a, 7 * kPage + 5, 6));
  r.dev->free(a);
  r.dev->check();
}

}  // namespace
}  // namespace memlake::test
