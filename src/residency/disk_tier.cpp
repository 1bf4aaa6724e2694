#include "residency/disk_tier.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

#include "core/error.h"

namespace memlake::residency {
namespace {

FileOps& default_ops() {
  static FileOps ops;
  return ops;
}

std::uint32_t crc_table(std::size_t i) {
  static const auto table = [] {
    struct T {
      std::uint32_t v[256];
    } t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t.v[n] = c;
    }
    return t;
  }();
  return table.v[i];
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_hw(const unsigned char* p, std::size_t n, std::uint32_t c) {
  std::uint64_t c64 = c;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c64 = __builtin_ia32_crc32di(c64, v);
  }
  c = static_cast<std::uint32_t>(c64);
  for (; n; ++p, --n) c = __builtin_ia32_crc32qi(c, *p);
  return c;
}
#endif

}  // namespace

ssize_t FileOps::pwrite(int fd, const void* buf, std::size_t n, off_t off) { return ::pwrite(fd, buf, n, off); }
ssize_t FileOps::pread(int fd, void* buf, std::size_t n, off_t off) { return ::pread(fd, buf, n, off); }
int FileOps::fallocate(int fd, off_t off, off_t len) { return ::posix_fallocate(fd, off, len); }

std::uint32_t crc32c(const void* data, std::size_t n, std::uint32_t crc) {
  auto p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
#if defined(__x86_64__)
  static const bool hw = __builtin_cpu_supports("sse4.2");
  if (hw) return ~crc32c_hw(p, n, c);
#endif
  for (; n; ++p, --n) c = crc_table((c ^ *p) & 0xFF) ^ (c >> 8);
  return ~c;
}

DiskTier::DiskTier(std::string dir, std::size_t limit, FileOps* ops)
    : dir_(std::move(dir)), limit_(limit), ops_(ops ? ops : &default_ops()) {}

DiskTier::~DiskTier() {
  if (fd_ >= 0) ::close(fd_);
}

void DiskTier::open_file() {
  if (fd_ >= 0) return;
  if (dir_.empty()) throw_error(Errc::invalid_argument, "disk tier: no directory (set the disk_tier option)");
  // Unnamed (O_TMPFILE), private (0600), and never a name an attacker could
  // pre-create or link elsewhere.
  int fd = ::open(dir_.c_str(), O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
  direct_ = fd >= 0;
  if (fd < 0 && errno == EINVAL) fd = ::open(dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);  // no O_DIRECT here (tmpfs)
  if (fd < 0)
    throw_error(Errc::driver, "disk tier: cannot create a file in " + dir_ + ": " + std::strerror(errno) +
                                  (errno == EOPNOTSUPP ? " (the file system has no O_TMPFILE)" : ""));
  fd_ = fd;
}

void DiskTier::grow(std::size_t at_least) {
  const std::size_t more = std::max(round_block(at_least), kGrow);
  std::size_t want = more;
  if (limit_) {
    if (size_ + round_block(at_least) > limit_)
      throw_error(Errc::out_of_memory, "disk tier: " + format_bytes(used_) + " used of the limit of " +
                                           format_bytes(limit_) + "; " + format_bytes(round_block(at_least)) +
                                           " more do not fit");
    want = std::min(more, limit_ - size_);
  }
  // Reserve the blocks now, so a full disk is an error here and not a short
  // write halfway through an eviction.
  const int err = ops_->fallocate(fd_, static_cast<off_t>(size_), static_cast<off_t>(want));
  if (err)
    throw_error(err == ENOSPC ? Errc::out_of_memory : Errc::driver,
                "disk tier: cannot grow the file in " + dir_ + " from " + format_bytes(size_) + " by " +
                    format_bytes(want) + ": " + std::strerror(err));
  free_.add(size_, want);
  size_ += want;
}

void DiskTier::io(bool write, void* buf, std::size_t n, std::size_t off, std::atomic<std::size_t>* progress) {
  std::size_t done = 0;
  while (done < n) {
    const std::size_t len = std::min<std::size_t>(n - done, kChunk);
    const ssize_t r = write ? ops_->pwrite(fd_, static_cast<char*>(buf) + done, len, static_cast<off_t>(off + done))
                            : ops_->pread(fd_, static_cast<char*>(buf) + done, len, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int e = r < 0 ? errno : 0;
      throw_error(e == ENOSPC ? Errc::out_of_memory : Errc::driver,
                  std::string("disk tier: ") + (write ? "write" : "read") + " of " + format_bytes(n) + " at offset " +
                      std::to_string(off) + " in " + dir_ + " failed after " + std::to_string(done) + " bytes: " +
                      (r < 0 ? std::strerror(e) : "end of file (the file was truncated)"));
    }
    done += static_cast<std::size_t>(r);
    if (progress) progress->store(done, std::memory_order_release);
  }
}

std::uint32_t DiskTier::io_with_crc(bool write, void* buf, std::size_t bytes, std::size_t n, std::size_t off) {
  // Small, or a read of one request (its checksum can only follow it): no second thread.
  if (bytes <= kOverlapMin || (!write && bytes <= kChunk)) {
    if (write) {
      const std::uint32_t c = crc32c(buf, n);
      io(true, buf, bytes, off);
      return c;
    }
    io(false, buf, bytes, off);
    return crc32c(buf, n);
  }
  std::atomic<std::size_t> done{0};
  std::exception_ptr err;
  std::thread t([&] {
    try {
      io(write, buf, bytes, off, &done);
    } catch (...) {
      err = std::current_exception();
    }
    done.store(SIZE_MAX, std::memory_order_release);  // finished (or failed)
  });
  std::uint32_t c = 0;
  const auto* p = static_cast<const unsigned char*>(buf);
  for (std::size_t at = 0; at < n;) {
    std::size_t upto = n;
    if (!write) {  // only what has arrived
      const std::size_t d = done.load(std::memory_order_acquire);
      if (d == SIZE_MAX && err) break;
      upto = std::min(n, d);
      if (upto <= at) {
        std::this_thread::yield();
        continue;
      }
    }
    const std::size_t len = std::min(upto - at, kChunk);
    c = crc32c(p + at, len, c);
    at += len;
  }
  t.join();
  if (err) std::rethrow_exception(err);
  return c;
}

DiskTier::Extent DiskTier::write(const void* buf, std::size_t n) {
  open_file();
  const std::size_t bytes = round_block(std::max<std::size_t>(n, 1));
  auto off = free_.take(bytes);
  if (!off) {
    grow(bytes);
    off = free_.take(bytes);
  }
  Extent e{*off, bytes, n, 0};
  const auto t0 = std::chrono::steady_clock::now();
  try {
    e.crc = io_with_crc(true, const_cast<void*>(buf), bytes, n, e.offset);
  } catch (...) {
    free_.give(e.offset, e.bytes);
    throw;
  }
  write_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  used_ += bytes;
  written_ += bytes;
  return e;
}

void DiskTier::read(const Extent& e, void* buf) {
  if (fd_ < 0 || e.offset + e.bytes > size_ || e.n > e.bytes)
    throw_error(Errc::internal, "disk tier: read of an extent it never wrote");
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint32_t got = io_with_crc(false, buf, e.bytes, e.n, e.offset);
  read_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  read_ += e.bytes;
  if (got != e.crc)
    throw_error(Errc::driver, "disk tier: checksum mismatch in " + format_bytes(e.n) + " at offset " +
                                  std::to_string(e.offset) + " in " + dir_ + " (the file was corrupted): not restored");
}

void DiskTier::give(const Extent& e) {
  if (e.offset + e.bytes > size_ || e.bytes > used_) throw_error(Errc::internal, "disk tier: extent returned that it never handed out");
  free_.give(e.offset, e.bytes);
  used_ -= e.bytes;
}

}  // namespace memlake::residency
