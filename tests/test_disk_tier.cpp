// The disk tier: evicted bytes move from the pinned host tier to a file and
// come back to the same address, checked; a full disk, an I/O error, a short
// write and a corrupted file are clear errors that lose nothing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

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
  // Atomic: the tier's I/O threads call these.
  std::atomic<int> fail_write{0}, fail_read{0}, fail_fallocate{0};  // errno to fail with (0: pass)
  std::atomic<bool> short_write{false}, corrupt{false}, truncated{false};
  // By file offset (-1: never): requests from there on fail with EIO, a read
  // there gets a flipped byte, a read there stops halfway and then finds the end.
  std::atomic<long long> fail_write_from{-1}, fail_read_from{-1}, corrupt_at{-1}, short_read_at{-1};
  ssize_t pwrite(int fd, const void* buf, std::size_t n, off_t off) override {
    if (fail_write) return errno = fail_write, -1;
    if (fail_write_from >= 0 && off >= fail_write_from) return errno = EIO, -1;
    if (n > DiskTier::kBlock && short_write.exchange(false)) {
      // A partial write, then the disk fills.
      const ssize_t r = FileOps::pwrite(fd, buf, DiskTier::kBlock, off);
      fail_write = ENOSPC;
      return r;
    }
    return FileOps::pwrite(fd, buf, n, off);
  }
  ssize_t pread(int fd, void* buf, std::size_t n, off_t off) override {
    if (fail_read) return errno = fail_read, -1;
    if (fail_read_from >= 0 && off >= fail_read_from) return errno = EIO, -1;
    if (truncated) return 0;
    if (short_read_at >= 0 && off > short_read_at) return 0;
    if (off == short_read_at) n /= 2;
    const ssize_t r = FileOps::pread(fd, buf, n, off);
    if ((corrupt || off == corrupt_at) && r > 10) static_cast<unsigned char*>(buf)[10] ^= 0x40;
    return r;
  }
  int fallocate(int fd, off_t off, off_t len) override { return fail_fallocate ? fail_fallocate.load() : FileOps::fallocate(fd, off, len); }
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

// The three-lane form (past 24 KiB) against the bitwise definition, at lengths around its blocks.
TEST(DiskTier, Crc32cOfLongBuffersMatchesTheBitwiseDefinition) {
  auto bitwise = [](const unsigned char* p, std::size_t n, std::uint32_t c) {
    c = ~c;
    for (; n; ++p, --n) {
      c ^= *p;
      for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
  };
  std::vector<unsigned char> b(200000);
  pattern(b.data(), b.size(), 9);
  for (std::size_t n : {24575, 24576, 24577, 49152 + 13, 200000}) {
    EXPECT_EQ(residency::crc32c(b.data() + 3, n - 3), bitwise(b.data() + 3, n - 3, 0)) << n;
    EXPECT_EQ(residency::crc32c(b.data(), n, 0x12345678u), bitwise(b.data(), n, 0x12345678u)) << n;
  }
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

// An extent of several parts moves on the I/O threads, each part with its checksum.
TEST(DiskTier, LargeExtentsMoveInCheckedParts) {
  Dir d;
  FaultyOps ops;
  DiskTier t(d.path, 0, &ops);
  const std::size_t n = (std::size_t{150} << 20) + 12345;
  Aligned a(round_up(n)), b(round_up(n));
  pattern(a.b(), n, 5);
  auto e = t.write(a.p, n);
  ASSERT_EQ(e.crc.size(), (n + DiskTier::kPart - 1) / DiskTier::kPart);
  for (std::size_t i = 0; i < e.crc.size(); ++i)
    EXPECT_EQ(e.crc[i], residency::crc32c(a.b() + i * DiskTier::kPart, std::min(DiskTier::kPart, n - i * DiskTier::kPart)));
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

// A failure in one part of an extent in flight: a clear error once the
// other requests are over, parts after it never handed on, nothing changed.
TEST(DiskTier, AFailedPartStopsThePipelineAndChangesNothing) {
  Dir d;
  FaultyOps ops;
  DiskTier t(d.path, 0, &ops);
  const std::size_t n = 5 * DiskTier::kPart + 777;
  Aligned a(round_up(n)), b(round_up(n));
  pattern(a.b(), n, 7);
  auto e = t.write(a.p, n);
  const long long at = static_cast<long long>(e.offset);
  // A write error in the third part: the extent goes back, the next write reuses it.
  ops.fail_write_from = at + 2 * static_cast<long long>(DiskTier::kPart);
  std::string msg;
  EXPECT_EQ(error_of([&] { t.write(a.p, n); }, &msg), Errc::driver);
  EXPECT_NE(msg.find(std::strerror(EIO)), std::string::npos) << msg;
  EXPECT_EQ(t.used(), e.bytes);
  ops.fail_write_from = -1;
  auto e2 = t.write(a.p, n);
  t.give(e2);
  std::vector<std::size_t> handed;
  bool meanwhile = false;
  auto read = [&] {
    handed.clear();
    meanwhile = false;
    t.read(e, b.p, [&] { meanwhile = true; }, [&](std::size_t off, std::size_t len) {
      EXPECT_EQ(off, handed.size() * DiskTier::kPart);
      EXPECT_EQ(len, std::min(DiskTier::kPart, n - off));
      handed.push_back(off);
    });
  };
  // A flipped byte in the fourth part: the first three are handed on, in order, no more.
  ops.corrupt_at = at + 3 * static_cast<long long>(DiskTier::kPart);
  EXPECT_EQ(error_of(read, &msg), Errc::driver);
  EXPECT_NE(msg.find("checksum mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(ops.corrupt_at.load())), std::string::npos) << "names the part's offset: " << msg;
  EXPECT_TRUE(meanwhile);
  EXPECT_LE(handed.size(), 3u);
  ops.corrupt_at = -1;
  // A short read in the second part, then the end of the file.
  ops.short_read_at = at + static_cast<long long>(DiskTier::kPart);
  EXPECT_EQ(error_of(read, &msg), Errc::driver);
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_LE(handed.size(), 1u);
  ops.short_read_at = -1;
  // An error from the caller's own step stops the rest too.
  EXPECT_THROW(t.read(e, b.p, [] { throw std::runtime_error("map failed"); }), std::runtime_error);
  read();
  EXPECT_EQ(handed.size(), 6u);
  EXPECT_EQ(std::memcmp(a.p, b.p, n), 0) << "intact after the errors";
  t.give(e);
  EXPECT_EQ(t.used(), 0u);
}

// Asynchronous moves: several in flight at once, reads and writes together,
// each finished in any order with its own checksums.
TEST(DiskTier, AsyncMovesRunTogetherAndMatch) {
  Dir d;
  DiskTier t(d.path, 0);
  const std::size_t n1 = 3 * DiskTier::kPart + 999, n2 = 5000, n3 = 2 * DiskTier::kPart;
  Aligned a1(round_up(n1)), a2(round_up(n2)), a3(round_up(n3)), b1(round_up(n1)), b3(round_up(n3));
  pattern(a1.b(), n1, 1);
  pattern(a2.b(), n2, 2);
  pattern(a3.b(), n3, 3);
  DiskTier::Extent e1, e2, e3;
  const auto w1 = t.start_write(a1.p, n1, e1);
  const auto w2 = t.start_write(a2.p, n2, e2);
  EXPECT_EQ(t.moving(), 2u);
  EXPECT_EQ(t.used(), e1.bytes + e2.bytes) << "placed when queued";
  t.finish_write(w2, e2);  // out of order
  t.finish_write(w1, e1);
  ASSERT_EQ(e1.crc.size(), 4u);
  EXPECT_EQ(e1.crc[3], residency::crc32c(a1.b() + 3 * DiskTier::kPart, 999));
  // A read of one extent while another is written.
  const auto r1 = t.start_read(e1, b1.p);
  const auto w3 = t.start_write(a3.p, n3, e3);
  t.wait(r1);
  EXPECT_TRUE(t.done(r1));
  t.finish_read(r1, e1);
  EXPECT_EQ(std::memcmp(a1.p, b1.p, n1), 0);
  t.finish_write(w3, e3);
  const auto r3 = t.start_read(e3, b3.p);
  t.finish_read(r3, e3);
  EXPECT_EQ(std::memcmp(a3.p, b3.p, n3), 0);
  EXPECT_EQ(t.moving(), 0u);
  EXPECT_EQ(t.bytes_written(), e1.bytes + e2.bytes + e3.bytes);
  EXPECT_EQ(t.bytes_read(), e1.bytes + e3.bytes);
  EXPECT_GT(t.write_seconds(), 0.0);
  EXPECT_GT(t.read_seconds(), 0.0);
  EXPECT_EQ(error_of([&] { t.finish_read(r3, e3); }), Errc::internal) << "finished once";
  t.give(e1);
  t.give(e2);
  t.give(e3);
  EXPECT_EQ(t.used(), 0u);
}

TEST(DiskTier, AsyncFailuresComeAtTheFinishAndChangeNothing) {
  Dir d;
  FaultyOps ops;
  DiskTier t(d.path, 16 * DiskTier::kPart, &ops);
  const std::size_t n = 3 * DiskTier::kPart + 10;
  Aligned a(round_up(n)), b(round_up(n));
  pattern(a.b(), n, 9);
  DiskTier::Extent e, bad;
  t.finish_write(t.start_write(a.p, n, e), e);
  const std::size_t used = t.used();
  // A failed part: the range goes back at the finish, with the error.
  ops.fail_write = EIO;
  const auto w = t.start_write(a.p, n, bad);
  std::string msg;
  EXPECT_EQ(error_of([&] { t.finish_write(w, bad); }, &msg), Errc::driver);
  EXPECT_NE(msg.find(std::strerror(EIO)), std::string::npos) << msg;
  EXPECT_EQ(t.used(), used);
  ops.fail_write = 0;
  // Past the limit: refused when queued, nothing in flight.
  EXPECT_EQ(error_of([&] { t.start_write(a.p, 16 * DiskTier::kPart, bad); }), Errc::out_of_memory);
  EXPECT_EQ(t.moving(), 0u);
  EXPECT_EQ(t.used(), used);
  // A corrupted part and a failed read: errors at the finish; the extent is intact after.
  ops.corrupt_at = static_cast<long long>(e.offset + DiskTier::kPart);
  EXPECT_EQ(error_of([&] { t.finish_read(t.start_read(e, b.p), e); }, &msg), Errc::driver);
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
  ops.corrupt_at = -1;
  ops.fail_read = EIO;
  EXPECT_EQ(error_of([&] { t.finish_read(t.start_read(e, b.p), e); }), Errc::driver);
  ops.fail_read = 0;
  t.finish_read(t.start_read(e, b.p), e);
  EXPECT_EQ(std::memcmp(a.p, b.p, n), 0);
  // A move never finished: the tier's end waits for its requests (no thread
  // reads the buffer, which outlives the tier, after it).
  {
    DiskTier t2(d.path, 0);
    DiskTier::Extent left;
    t2.start_write(a.p, n, left);
  }
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
  prim::FaultyBackend* faulty;
  std::unique_ptr<core::DeviceAllocator> dev;
  Rig() {
    auto h = std::make_unique<prim::HostBackend>(0, kPage, 0);
    host = h.get();
    auto f = std::make_unique<prim::FaultyBackend>(std::move(h));
    faulty = f.get();
    Options o;
    o.backend = "host";
    o.small_max = kPage / 4;
    o.handle_size = 4 * kPage;
    dev = std::make_unique<core::DeviceAllocator>(std::move(f), o);
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

// A restore from disk maps the pages while the first parts are read and
// copies each part once it matched: a failed part unmaps them again, and the
// allocation stays evicted on disk, recoverable.
TEST(DiskTierResidency, AFailedPartOfARestoreUnmapsAndKeepsTheBytesOnDisk) {
  Dir d;
  Rig r;
  FaultyOps ops;
  r.dev->set_disk_tier(d.path, 0, &ops);
  const std::size_t n = 3 * DiskTier::kPart + 5 * kPage + 3;
  void* a = r.dev->alloc(n, nullptr);
  fill(r.be(), a, n, 8);
  r.dev->evict(a, Mode::offload);
  // A write error in the second part: the bytes stay in the host tier.
  ops.fail_write_from = static_cast<long long>(DiskTier::kPart);
  EXPECT_EQ(error_of([&] { r.dev->demote(a); }), Errc::driver);
  ops.fail_write_from = -1;
  EXPECT_EQ(r.dev->residency_stats().disk_used, 0u);
  r.dev->demote(a);
  auto still_on_disk = [&] {
    const auto st = r.dev->residency_stats();
    EXPECT_EQ(st.evicted_now, 1u);
    EXPECT_GT(st.disk_used, 0u);
    EXPECT_FALSE(r.host->accessible(reinterpret_cast<std::uintptr_t>(a), kPage)) << "unmapped again";
    r.dev->check();
  };
  for (int k : {0, 2, 3}) {  // the first part, one inside, the last
    ops.corrupt_at = static_cast<long long>(k * DiskTier::kPart);
    std::string msg;
    EXPECT_EQ(error_of([&] { r.dev->restore(a); }, &msg), Errc::driver) << k;
    EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
    ops.corrupt_at = -1;
    still_on_disk();
  }
  ops.short_read_at = static_cast<long long>(DiskTier::kPart);
  EXPECT_EQ(error_of([&] { r.dev->restore(a); }), Errc::driver);
  ops.short_read_at = -1;
  still_on_disk();
  ops.fail_read_from = static_cast<long long>(2 * DiskTier::kPart);
  EXPECT_EQ(error_of([&] { r.dev->restore(a); }), Errc::driver);
  ops.fail_read_from = -1;
  still_on_disk();
  r.dev->restore(a);
  EXPECT_TRUE(holds(r.be(), a, n, 8));
  EXPECT_EQ(r.dev->residency_stats().disk_used, 0u);
  r.dev->free(a);
  r.dev->check();
}

// A failed part, and then unmapping again fails too (a driver error): the
// allocation stays mapped, resident with undefined contents, and says so.
TEST(DiskTierResidency, AFailedPartThenAFailedUnmapLeavesItResidentAndSaysSo) {
  Dir d;
  Rig r;
  FaultyOps ops;
  r.dev->set_disk_tier(d.path, 0, &ops);
  const std::size_t n = 3 * DiskTier::kPart;
  void* a = r.dev->alloc(n, nullptr);
  fill(r.be(), a, n, 9);
  r.dev->evict(a, Mode::offload);
  r.dev->demote(a);
  ops.corrupt_at = static_cast<long long>(DiskTier::kPart);
  r.faulty->fail_nth(prim::FaultSite::unmap, 1);
  std::string msg;
  EXPECT_NE(error_of([&] { r.dev->restore(a); }, &msg), Errc::ok);
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
  EXPECT_NE(msg.find("undefined contents"), std::string::npos) << msg;
  const auto st = r.dev->residency_stats();
  EXPECT_EQ(st.evicted_now, 0u);
  EXPECT_EQ(st.disk_used, 0u);
  EXPECT_TRUE(r.host->accessible(reinterpret_cast<std::uintptr_t>(a), kPage));
  r.dev->check();
  r.dev->free(a);
  r.dev->check();
}

}  // namespace

// Asynchronous demotions and read-ahead: the bytes leave the host tier once on
// disk and come back to it ahead of their restore; a restore or free while a
// move is in flight waits for it, and nothing is ever lost.
TEST(DiskTierResidency, AsyncDemoteAndReadAheadBringTheBytesBack) {
  Dir d;
  Rig r;
  r.dev->set_disk_tier(d.path, 0);
  const std::size_t na = 9 * kPage + 77, nb = 40 * kPage, nc = 3 * kPage;
  void* a = r.dev->alloc(na, nullptr);
  void* b = r.dev->alloc(nb, nullptr);
  void* c = r.dev->alloc(nc, nullptr);
  fill(r.be(), a, na, 11);
  fill(r.be(), b, nb, 12);
  fill(r.be(), c, nc, 13);
  for (void* p : {a, b, c}) r.dev->evict(p, Mode::offload);
  const auto host_used = r.dev->residency_stats().host_used;
  r.dev->demote(a, false);
  r.dev->demote(b, false);
  EXPECT_EQ(error_of([&] { r.dev->demote(a, false); }), Errc::invalid_argument) << "on its way to disk already";
  r.dev->settle(true);
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.demotions, 2u);
  EXPECT_EQ(st.disk_writing_now, 0u);
  EXPECT_LT(st.host_used, host_used) << "the host extents went back once on disk";
  EXPECT_GE(st.disk_used, na + nb);
  // Read-ahead of a: back in the host tier, off the disk; b is restored straight from disk.
  r.dev->fetch(a);
  r.dev->fetch(a);  // on its way: nothing more
  r.dev->fetch(c);  // in the host tier: nothing
  r.dev->settle(true);
  st = r.dev->residency_stats();
  EXPECT_EQ(st.fetches, 1u);
  EXPECT_LT(st.disk_used, na + nb);
  EXPECT_FALSE(r.host->accessible(reinterpret_cast<std::uintptr_t>(a), kPage)) << "still evicted";
  for (void* p : {a, b, c}) r.dev->restore(p);
  EXPECT_TRUE(holds(r.be(), a, na, 11));
  EXPECT_TRUE(holds(r.be(), b, nb, 12));
  EXPECT_TRUE(holds(r.be(), c, nc, 13));
  EXPECT_EQ(r.dev->residency_stats().disk_used, 0u);
  r.dev->check();
  // A restore right after an asynchronous demote or a read-ahead, and a free
  // during one: each waits for its move.
  for (void* p : {a, b, c}) r.dev->evict(p, Mode::offload);
  r.dev->demote(a, false);
  r.dev->restore(a);
  EXPECT_TRUE(holds(r.be(), a, na, 11));
  r.dev->demote(b);
  r.dev->fetch(b);
  r.dev->restore(b);
  EXPECT_TRUE(holds(r.be(), b, nb, 12));
  // A read-ahead while the demotion still writes (or just after): either
  // way its bytes end in the host tier and the disk holds nothing of it.
  r.dev->evict(a, Mode::offload);
  r.dev->demote(a, false);
  r.dev->fetch(a);
  r.dev->settle(true);
  EXPECT_EQ(r.dev->residency_stats().disk_used, 0u);
  r.dev->restore(a);
  EXPECT_TRUE(holds(r.be(), a, na, 11));
  r.dev->demote(c, false);
  r.dev->free(c);
  r.dev->settle(true);
  st = r.dev->residency_stats();
  EXPECT_EQ(st.disk_used, 0u);
  EXPECT_EQ(st.evicted_now, 0u);
  EXPECT_EQ(st.disk_reading_now + st.disk_writing_now, 0u);
  r.dev->free(a);
  r.dev->free(b);
  r.dev->check();
}

TEST(DiskTierResidency, AsyncMoveFailuresKeepTheBytesAndAreReportedOnce) {
  Dir d;
  Rig r;
  FaultyOps ops;
  r.dev->set_disk_tier(d.path, 0, &ops);
  const std::size_t n = 50 * kPage + 3;
  void* a = r.dev->alloc(n, nullptr);
  fill(r.be(), a, n, 21);
  r.dev->evict(a, Mode::offload);
  // A failed write: demote returned; the error comes from the next settle, once.
  ops.fail_write_from = 0;
  r.dev->demote(a, false);
  std::string msg;
  EXPECT_EQ(error_of([&] { r.dev->settle(true); }, &msg), Errc::driver);
  EXPECT_NE(msg.find("stay in the host tier"), std::string::npos) << msg;
  r.dev->settle(true);
  ops.fail_write_from = -1;
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.disk_failures, 1u);
  EXPECT_EQ(st.disk_used, 0u);
  EXPECT_EQ(st.demotions, 0u);
  // On disk now; a corrupted read-ahead leaves it there, and its restore says why.
  r.dev->demote(a, false);
  r.dev->settle(true);
  ops.corrupt = true;
  r.dev->fetch(a);
  r.dev->settle(true);  // a failed read-ahead is not an error of its own: the restore reads again
  EXPECT_EQ(r.dev->residency_stats().disk_failures, 2u);
  EXPECT_EQ(error_of([&] { r.dev->restore(a); }, &msg), Errc::driver);
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
  ops.corrupt = false;
  EXPECT_FALSE(r.host->accessible(reinterpret_cast<std::uintptr_t>(a), kPage)) << "still evicted";
  r.dev->restore(a);
  EXPECT_TRUE(holds(r.be(), a, n, 21));
  r.dev->free(a);
  r.dev->check();
}

// Random evictions (with and without a wait), demotions (with and without),
// read-aheads, restores, frees and settles, with write failures and
// corruption switched on and off: every allocation ends with its bytes, and
// each failure is a clear error that leaves it where it was.
TEST(DiskTierResidency, RandomMovesWithFaultsKeepEveryByte) {
  std::mt19937_64 rng(20261206);
  Dir d;
  Rig r;
  FaultyOps ops;
  r.dev->set_disk_tier(d.path, 0, &ops);
  struct B {
    void* p;
    std::size_t n;
    std::uint64_t seed;
    bool evicted;
  };
  std::vector<B> live;
  std::uint64_t seed = 100;
  int restored = 0, failed = 0;
  auto expect_failure = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      // A fault injected (driver), or a move refused for the state it is in (misuse).
      EXPECT_TRUE(e.code() == Errc::driver || e.code() == Errc::invalid_argument) << e.what();
      ++failed;
    }
  };
  for (int step = 0; step < 400; ++step) {
    const int op = static_cast<int>(rng() % 12);
    if (op == 0 || live.empty()) {
      const std::size_t n = kPage + rng() % (48 * kPage);
      void* p = r.dev->alloc(n, nullptr);
      fill(r.be(), p, n, seed);
      live.push_back(B{p, n, seed++, false});
      continue;
    }
    B& b = live[rng() % live.size()];
    if (op == 1) {
      r.dev->free(b.p);
      b = live.back();
      live.pop_back();
    } else if (op <= 3 && !b.evicted) {
      r.dev->evict(b.p, Mode::offload, rng() % 2 == 0);
      b.evicted = true;
    } else if (op <= 5 && b.evicted) {
      expect_failure([&] { r.dev->demote(b.p, rng() % 3 == 0); });
    } else if (op == 6 && b.evicted) {
      expect_failure([&] { r.dev->fetch(b.p); });
    } else if (op <= 8 && b.evicted) {
      try {
        r.dev->restore(b.p);
        b.evicted = false;
        EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed)) << "step " << step;
        ++restored;
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::driver) << e.what();
        ++failed;
      }
    } else if (op == 9) {
      expect_failure([&] { r.dev->settle(rng() % 2 == 0); });
    } else if (op == 10) {  // faults on or off
      ops.fail_write_from = rng() % 3 == 0 ? 0 : -1;
      ops.corrupt = rng() % 4 == 0;
    }
    if (step % 50 == 0) r.dev->check();
  }
  ops.fail_write_from = -1;
  ops.corrupt = false;
  expect_failure([&] { r.dev->settle(true); });  // a write failure still unreported
  for (B& b : live) {
    if (b.evicted) r.dev->restore(b.p);
    EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
    r.dev->free(b.p);
  }
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.disk_used, 0u);
  EXPECT_EQ(st.evicted_now, 0u);
  EXPECT_GT(restored, 15);
  EXPECT_GT(st.demotions, 10u);
  EXPECT_GT(st.fetches, 0u);
  EXPECT_GT(failed, 5);
  r.dev->check();
}

// File operations that take their time (a slow disk), so moves are still in
// flight when the caller acts.
struct SlowOps final : FileOps {
  std::atomic<int> write_ms{0}, read_ms{0}, fail_write{0};
  ssize_t pwrite(int fd, const void* b, std::size_t n, off_t off) override {
    if (write_ms) std::this_thread::sleep_for(std::chrono::milliseconds(write_ms.load()));
    if (fail_write) return errno = fail_write.load(), -1;
    return FileOps::pwrite(fd, b, n, off);
  }
  ssize_t pread(int fd, void* b, std::size_t n, off_t off) override {
    if (read_ms) std::this_thread::sleep_for(std::chrono::milliseconds(read_ms.load()));
    return FileOps::pread(fd, b, n, off);
  }
};

// A restore, a free or a read-ahead of an allocation whose demotion still
// writes stops the write (its bytes never left the host tier): nothing is
// counted as written or fetched, and the disk holds nothing of it.
TEST(DiskTierResidency, MovesStillWritingAreStoppedNotWaitedFor) {
  Dir d;
  Rig r;
  SlowOps ops;
  r.dev->set_disk_tier(d.path, 0, &ops);
  const std::size_t n = 8 * DiskTier::kPart;
  void* a = r.dev->alloc(n, nullptr);
  fill(r.be(), a, n, 31);
  ops.write_ms = 200;  // each move lasts far longer than the calls between (a loaded CI machine too)
  for (int how = 0; how < 3; ++how) {
    r.dev->evict(a, Mode::offload);
    r.dev->demote(a, false);
    if (how == 1) r.dev->fetch(a);  // stops the write; then nothing to read
    if (how == 2) {
      r.dev->free(a);
      a = r.dev->alloc(n, nullptr);
      fill(r.be(), a, n, 31);
      continue;
    }
    r.dev->restore(a);
    EXPECT_TRUE(holds(r.be(), a, n, 31));
  }
  r.dev->settle(true);
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.disk_written, 0u) << "no write finished, none counted";
  EXPECT_EQ(st.fetches, 0u);
  EXPECT_EQ(st.demotions, 0u);
  EXPECT_EQ(st.disk_used, 0u);
  // A demote of an allocation being read ahead stops the read: it stays on disk.
  ops.write_ms = 0;
  r.dev->evict(a, Mode::offload);
  r.dev->demote(a);
  ops.read_ms = 200;
  r.dev->fetch(a);
  r.dev->demote(a, false);
  st = r.dev->residency_stats();
  EXPECT_EQ(st.disk_reading_now + st.disk_writing_now, 0u);
  EXPECT_GE(st.disk_used, n);
  ops.read_ms = 0;
  r.dev->restore(a);
  EXPECT_TRUE(holds(r.be(), a, n, 31));
  r.dev->free(a);
  r.dev->check();
}

// An allocation's out-of-memory retry waits for evictions copying out, never
// for disk moves, and never reports a failed demotion's error as its own:
// that stays for settle().
TEST(DiskTierResidency, AnAllocationsRetryIgnoresDiskMoves) {
  Dir d;
  Rig r;
  SlowOps ops;
  r.dev->set_disk_tier(d.path, 0, &ops);
  r.host->set_lag(10);
  r.host->advance_clock(1);
  void* x = r.dev->alloc(4 * kPage, nullptr);
  fill(r.be(), x, 4 * kPage, 9);
  r.dev->evict(x, Mode::offload);
  ops.fail_write = EIO;
  r.dev->demote(x, false);
  void* a = r.dev->alloc(8 * kPage, nullptr);
  void* b = r.dev->alloc(8 * kPage, nullptr);
  r.dev->set_memory_cap(r.dev->stats().reserved.current);
  r.dev->evict(a, Mode::offload, false);
  void* c = r.dev->alloc(8 * kPage, nullptr);  // the retry after a's copy completes
  EXPECT_NE(c, nullptr);
  std::string msg;
  // The write fails whenever its I/O thread gets to it: the failure stays on until it is reported.
  EXPECT_EQ(error_of([&] { r.dev->settle(true); }, &msg), Errc::driver) << "reported here, once";
  EXPECT_NE(msg.find("host tier"), std::string::npos) << msg;
  ops.fail_write = 0;
  r.dev->set_memory_cap(0);
  r.dev->restore(x);
  EXPECT_TRUE(holds(r.be(), x, 4 * kPage, 9));
  for (void* p : {x, b, c}) r.dev->free(p);
  r.dev->free(a);
  r.dev->check();
}

// Tearing down with moves in flight: the engine stops them before its extents go.
TEST(DiskTierResidency, TeardownWithMovesInFlight) {
  Dir d;
  SlowOps ops;
  ops.write_ms = 10;
  ops.read_ms = 10;
  for (int k = 0; k < 3; ++k) {
    Rig r;
    r.dev->set_disk_tier(d.path, 0, &ops);
    void* a = r.dev->alloc(3 * DiskTier::kPart, nullptr);
    void* b = r.dev->alloc(3 * DiskTier::kPart, nullptr);
    r.dev->evict(a, Mode::offload);
    r.dev->evict(b, Mode::offload);
    r.dev->demote(b);
    r.dev->demote(a, false);
    r.dev->fetch(b);
  }
}


// evict(discard) of a prefetch taken back under memory pressure gives
// its host and disk extents back while a read-ahead (or a demotion) still
// moves them on an I/O thread; the entry keeps e.io with no extents.
TEST(DiskTierResidency, DiscardingATakenBackPrefetchStopsItsReadAhead) {
  Dir d;
  Rig r;
  SlowOps ops;
  r.dev->set_disk_tier(d.path, 0, &ops);
  const std::size_t n = 8 * DiskTier::kPart;
  void* a = r.dev->alloc(n, nullptr);
  fill(r.be(), a, n, 41);
  void* b = r.dev->alloc(n, nullptr);
  fill(r.be(), b, n, 42);
  r.dev->evict(a, Mode::offload);
  r.dev->restore(a, /*wait=*/false);
  r.dev->set_memory_cap(r.dev->stats().reserved.current);
  void* c = r.dev->alloc(n, nullptr);  // takes a back
  ASSERT_EQ(r.dev->residency_stats().reclaimed, 1u);
  r.dev->demote(a);  // a's bytes on disk
  ops.read_ms = 100;
  r.dev->fetch(a);  // read-ahead in flight into a host extent
  ASSERT_GT(r.dev->residency_stats().disk_reading_now, 0u);
  r.dev->evict(a, Mode::discard);  // the owner drops its prefetch
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.disk_reading_now, 0u) << "the read must stop before its extents go back";
  EXPECT_EQ(st.host_used, 0u);
  r.dev->free(c);
  r.dev->evict(b, Mode::offload);  // takes the host extent the read still writes
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the read lands
  ops.read_ms = 0;
  std::string msg;
  Errc e = error_of([&] { r.dev->restore(b); }, &msg);
  EXPECT_EQ(e, Errc::ok) << msg;
  EXPECT_TRUE(holds(r.be(), b, n, 42)) << "b's bytes were overwritten by a's read-ahead";
}


// a restore from disk that runs out of memory takes back a restore
// ahead from inside the read's mapping callback.
TEST(DiskTierResidency, ARestoreFromDiskTakesBackARestoreAhead) {
  Dir d;
  Rig r;
  r.dev->set_disk_tier(d.path, 0);
  r.host->set_lag(10);
  r.host->advance_clock(1);
  const std::size_t n = 8 * DiskTier::kPart;
  void* a = r.dev->alloc(n, nullptr);
  fill(r.be(), a, n, 51);
  void* b = r.dev->alloc(n, nullptr);
  fill(r.be(), b, n, 52);
  r.dev->set_memory_cap(r.dev->stats().reserved.current);
  r.dev->evict(a, Mode::offload);
  r.dev->demote(a);
  r.dev->evict(b, Mode::offload);
  void* c = r.dev->alloc(n, nullptr);  // a's or b's pages
  fill(r.be(), c, n, 53);
  r.dev->restore(b, /*wait=*/false);  // the last free pages
  r.dev->restore(a);                  // from disk: takes b back
  EXPECT_EQ(r.dev->residency_stats().reclaimed, 1u);
  EXPECT_TRUE(holds(r.be(), a, n, 51));
  r.dev->free(c);
  r.dev->restore_ready(b);
  r.host->advance_clock(100);
  EXPECT_TRUE(holds(r.be(), b, n, 52));
  r.dev->free(a);
  r.dev->free(b);
  r.dev->settle(true);
  EXPECT_EQ(r.dev->residency_stats().host_used, 0u);
  r.dev->check();
}

}  // namespace memlake::test
