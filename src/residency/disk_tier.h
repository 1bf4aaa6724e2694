// DiskTier: evicted bytes in a file on local disk, below the pinned host tier.
//
// One unnamed file (O_TMPFILE, mode 0600; nothing is left behind when the
// process ends, even on SIGKILL) in a directory the user names, written and
// read with O_DIRECT where the file system allows it (tmpfs does not: then
// buffered I/O, and direct() says so). Bytes pass through pinned host
// extents (64 KiB-aligned, whole multiples of 4 KiB: what O_DIRECT needs).
//
// An extent moves in parts of kPart bytes, up to kDepth of them in flight at
// once on the tier's I/O threads; each part carries a CRC-32C of its bytes,
// computed by the thread that moved it and checked on every read before the
// part is handed on: a corrupted or truncated file is a clear error, never
// wrong bytes. An extent of one part moves on the caller's thread.
//
// Errors: a full disk or the tier's limit -> Errc::out_of_memory (the tier
// is full; the bytes stay where they were); an I/O error or a checksum
// mismatch -> Errc::driver with the file offset, the size and strerror.
// A failed call returns only once no request it made is still in flight, and
// changes nothing. Not thread-safe: the residency engine's caller serialises.
//
// Asynchronous moves (start_write / start_read, then done / wait and
// finish_write / finish_read) run on the same I/O threads while the caller
// goes on, parts of reads before parts of writes (a read is what a restore
// waits for). The buffer stays the caller's to keep until the finish; a
// failure is reported by the finish, which leaves nothing behind.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>
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
  static constexpr std::size_t kPart = std::size_t{2} << 20;  // one request, one checksum
  static constexpr unsigned kDepth = 4;                        // requests in flight (I/O threads)

  // dir: where the file lives (must exist); limit: bytes, 0 = what the disk holds.
  DiskTier(std::string dir, std::size_t limit, FileOps* ops = nullptr);
  ~DiskTier();
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  struct Extent {
    std::size_t offset = 0;
    std::size_t bytes = 0;  // on disk: n rounded up to kBlock
    std::size_t n = 0;      // meaningful bytes
    std::vector<std::uint32_t> crc;  // CRC-32C of each kPart of the n bytes (the last: what is left)
  };
  // Writes n bytes from `buf` (kBlock-aligned, readable up to n rounded to
  // kBlock) into a new extent.
  Extent write(const void* buf, std::size_t n);
  // Reads an extent into `buf` (kBlock-aligned, room for e.bytes), checking
  // each part. `meanwhile` (when set) runs on this thread while the first
  // requests are in flight (an extent of one part: once it has arrived and
  // matched); `part(offset, length)` (when set) runs on this thread for each
  // part in order once it has arrived and matched (lengths add up to e.n).
  // An exception from either, like a failed part, stops the requests not yet
  // issued and propagates once those in flight have finished.
  void read(const Extent& e, void* buf, const std::function<void()>& meanwhile = {},
            const std::function<void(std::size_t, std::size_t)>& part = {});
  void give(const Extent& e);

  // Queues the write of n bytes from `buf` into a new extent (placed now:
  // a full disk or limit is Errc::out_of_memory here, and nothing is
  // queued); returns the move's id. finish_write fills the extent's
  // checksums once the move is done; on a failure it gives the range back
  // and throws the move's error.
  std::uint64_t start_write(const void* buf, std::size_t n, Extent& out);
  void finish_write(std::uint64_t id, Extent& e);
  // Queues the read of an extent into `buf`; finish_read checks every part
  // (Errc::driver on an I/O error or a mismatch: `buf` then holds nothing
  // meaningful) and the extent stays the caller's either way.
  std::uint64_t start_read(const Extent& e, void* buf);
  void finish_read(std::uint64_t id, const Extent& e);
  // Stops a move: nothing more of it is issued, the requests in flight
  // finish (at most kDepth parts), errors are dropped. A write's range goes
  // back (its bytes were not needed); a read's buffer holds nothing meaningful.
  void cancel(std::uint64_t id, const Extent& e);
  bool done(std::uint64_t id);  // no request of the move is in flight any more
  void wait(std::uint64_t id);  // until done(id)
  std::size_t moving() const { return async_.size(); }  // asynchronous moves not finished

  const std::string& dir() const { return dir_; }
  bool direct() const { return direct_; }
  std::size_t used() const { return used_; }
  std::size_t file_size() const { return size_; }
  std::uint64_t bytes_written() const { return written_; }
  std::uint64_t bytes_read() const { return read_; }
  // Seconds with at least one write (read) request in flight, in all: bytes
  // over seconds is the tier's throughput, moves that overlap counted once.
  double write_seconds() const;
  double read_seconds() const;
  double busy_seconds() const { return busy_seconds(2); }  // with any request in flight

  struct Job;   // one extent's parts (disk_tier.cpp)
  struct Pool;  // the I/O threads, started at the first extent of several parts

 private:
  void open_file();
  void grow(std::size_t at_least);
  // Moves one part: its request (continued after a partial transfer) and its
  // checksum (of the n meaningful bytes of the `bytes` moved).
  std::uint32_t move(bool write, void* buf, std::size_t bytes, std::size_t n, std::size_t off);
  // Every part of an extent, on the I/O threads; `part(i)` runs on this
  // thread for each part in order once it is done.
  void run(Job& job, const std::function<void()>& meanwhile, const std::function<void(std::size_t)>& part);
  Pool& pool();
  Extent place(std::size_t n);  // a free range of the file for n bytes (grown if need be), counted as used
  void unplace(const Extent& e);
  std::uint32_t move_one(bool write, void* buf, std::size_t bytes, std::size_t n, std::size_t off);
  void check_extent(const Extent& e) const;  // Errc::internal for an extent this tier never wrote
  void check_parts(const Extent& e, const std::vector<std::uint32_t>& got, std::size_t i) const;
  std::uint64_t start(std::unique_ptr<Job> j);
  Job& async_job(std::uint64_t id);
  // Takes a move out of the tier and the pool, stopping what is not claimed
  // yet and waiting for the parts in flight; returns it (with its error, if any).
  std::unique_ptr<Job> take(std::uint64_t id);
  std::unique_ptr<Job> collect(std::uint64_t id);  // take() once the move is over

  std::string dir_;
  std::size_t limit_;
  FileOps* ops_;
  int fd_ = -1;
  bool direct_ = false;
  std::size_t size_ = 0, used_ = 0;
  std::uint64_t written_ = 0, read_ = 0;
  FreeRanges free_;
  std::unique_ptr<Pool> pool_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Job>> async_;
  std::uint64_t next_id_ = 1;
  // Busy time of each direction ([1]: writes), kept under busy_mu_ (the I/O threads end moves).
  struct Busy {
    unsigned active = 0;
    std::chrono::steady_clock::time_point since{};
    double seconds = 0;
  };
  mutable std::mutex busy_mu_;
  Busy busy_[3];  // [2]: any request, either direction
  void busy(bool write, bool begin);
  double busy_seconds(int which) const;
};

inline std::size_t round_block(std::size_t n) { return (n + DiskTier::kBlock - 1) / DiskTier::kBlock * DiskTier::kBlock; }

}  // namespace memlake::residency
