// DiskTier: evicted bytes in a file on local disk, below the pinned host tier.
//
// One unnamed file (O_TMPFILE, mode 0600; nothing is left behind when the
// process ends, even on SIGKILL) in a directory the user names, written and
// read with O_DIRECT where the file system allows it (tmpfs does not: then
// buffered I/O, and direct() says so). Bytes pass through pinned host
// extents (64 KiB-aligned, whole multiples of 4 KiB: what O_DIRECT needs).
// Every extent carries a CRC-32C of its bytes, checked on every read: a
// corrupted or truncated file is a clear error, never wrong bytes.
//
// Errors: a full disk or the tier's limit -> Errc::out_of_memory (the tier
// is full; the bytes stay where they were); an I/O error or a checksum
// mismatch -> Errc::driver with the file offset, the size and strerror.
// Nothing is changed by a failed call. Not thread-safe: the residency
// engine's caller serialises.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>

#include "residency/free_ranges.h"

namespace memlake::residency {

// The system calls the tier makes, replaceable by tests (faults, corruption).
struct FileOps {
  virtual ~FileOps() = default;
  virtual ssize_t pwrite(int fd, const void* buf, std::size_t n, off_t off);
  virtual ssize_t pread(int fd, void* buf, std::size_t n, off_t off);
  virtual int fallocate(int fd, off_t off, off_t len);  // 0 or an errno
};

std::uint32_t crc32c(const void* data, std::size_t n, std::uint32_t crc = 0);

class DiskTier {
 public:
  static constexpr std::size_t kBlock = 4096;  // O_DIRECT's unit
  static constexpr std::size_t kGrow = std::size_t{1} << 30;  // the file grows (fallocate) by this much at least

  // dir: where the file lives (must exist); limit: bytes, 0 = what the disk holds.
  DiskTier(std::string dir, std::size_t limit, FileOps* ops = nullptr);
  ~DiskTier();
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  struct Extent {
    std::size_t offset = 0;
    std::size_t bytes = 0;  // on disk: n rounded up to kBlock
    std::size_t n = 0;      // meaningful bytes
    std::uint32_t crc = 0;
  };
  // Writes n bytes from `buf` (kBlock-aligned, readable up to n rounded to
  // kBlock) into a new extent.
  Extent write(const void* buf, std::size_t n);
  // Reads an extent into `buf` (kBlock-aligned, room for e.bytes) and
  // checks its checksum.
  void read(const Extent& e, void* buf);
  void give(const Extent& e);

  const std::string& dir() const { return dir_; }
  bool direct() const { return direct_; }
  std::size_t used() const { return used_; }
  std::size_t file_size() const { return size_; }
  std::uint64_t bytes_written() const { return written_; }
  std::uint64_t bytes_read() const { return read_; }
  double write_seconds() const { return write_s_; }  // in write()'s and read()'s file I/O, in all
  double read_seconds() const { return read_s_; }

 private:
  void open_file();
  void grow(std::size_t at_least);
  // Moves n bytes in requests of kChunk; `progress` (when set) gets the
  // bytes done so far after each request.
  void io(bool write, void* buf, std::size_t n, std::size_t off, std::atomic<std::size_t>* progress = nullptr);
  // Runs the file I/O on a second thread while this one computes the
  // checksum of the bytes (written: all of them at once; read: as far as
  // they have arrived), so the checksum costs no time beside the disk.
  std::uint32_t io_with_crc(bool write, void* buf, std::size_t bytes, std::size_t n, std::size_t off);
  static constexpr std::size_t kChunk = std::size_t{64} << 20;
  // Below this a write's checksum runs before it on this thread (a thread costs more than the
  // overlap saves); above it, beside the write, whatever its size (a 32 MiB piece, one request,
  // spent about a fifth of its demote time on the checksum when it ran first).
  static constexpr std::size_t kOverlapMin = std::size_t{1} << 20;

  std::string dir_;
  std::size_t limit_;
  FileOps* ops_;
  int fd_ = -1;
  bool direct_ = false;
  std::size_t size_ = 0, used_ = 0;
  std::uint64_t written_ = 0, read_ = 0;
  double write_s_ = 0, read_s_ = 0;
  FreeRanges free_;
};

inline std::size_t round_block(std::size_t n) { return (n + DiskTier::kBlock - 1) / DiskTier::kBlock * DiskTier::kBlock; }

}  // namespace memlake::residency
