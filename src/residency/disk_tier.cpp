#include "residency/disk_tier.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
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
// One crc32 instruction a cycle, three cycles of latency: three independent
// streams (lanes of kLane bytes) keep it busy (one stream waits out the latency).
// The register after a||b is M(state after a) ^ crc(0, b), where M
// (linear) runs the register over kLane zero bytes; a 4 x 256 table applies M.
constexpr std::size_t kLane = 8192;

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

struct LaneShift {
  std::uint32_t t[4][256];
  std::uint32_t operator()(std::uint32_t x) const {
    return t[0][x & 0xFF] ^ t[1][(x >> 8) & 0xFF] ^ t[2][(x >> 16) & 0xFF] ^ t[3][x >> 24];
  }
};

const LaneShift& lane_shift() {
  static const LaneShift s = [] {
    static const unsigned char zeros[kLane] = {};
    std::uint32_t col[32];  // M of each bit
    for (int i = 0; i < 32; ++i) col[i] = crc32c_hw(zeros, kLane, std::uint32_t{1} << i);
    LaneShift m{};
    for (int k = 0; k < 4; ++k)
      for (std::uint32_t b = 0; b < 256; ++b)
        for (int j = 0; j < 8; ++j)
          if (b >> j & 1) m.t[k][b] ^= col[8 * k + j];
    return m;
  }();
  return s;
}

__attribute__((target("sse4.2"))) std::uint32_t crc32c_hw3(const unsigned char* p, std::size_t n, std::uint32_t c) {
  const LaneShift& shift = lane_shift();
  for (; n >= 3 * kLane; p += 3 * kLane, n -= 3 * kLane) {
    std::uint64_t a = c, b = 0, d = 0;
    for (std::size_t i = 0; i < kLane; i += 8) {
      std::uint64_t va, vb, vd;
      std::memcpy(&va, p + i, 8);
      std::memcpy(&vb, p + kLane + i, 8);
      std::memcpy(&vd, p + 2 * kLane + i, 8);
      a = __builtin_ia32_crc32di(a, va);
      b = __builtin_ia32_crc32di(b, vb);
      d = __builtin_ia32_crc32di(d, vd);
    }
    c = shift(shift(static_cast<std::uint32_t>(a)) ^ static_cast<std::uint32_t>(b)) ^ static_cast<std::uint32_t>(d);
  }
  return crc32c_hw(p, n, c);
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
  if (hw) return ~crc32c_hw3(p, n, c);
#endif
  for (; n; ++p, --n) c = crc_table((c ^ *p) & 0xFF) ^ (c >> 8);
  return ~c;
}

DiskTier::DiskTier(std::string dir, std::size_t limit, FileOps* ops)
    : dir_(std::move(dir)), limit_(limit), ops_(ops ? ops : &default_ops()) {}

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

// One extent's parts in flight on the pool. The fields below `parts` are
// guarded by the pool's mutex; a worker moves a part it claimed unlocked.
struct DiskTier::Job {
  Job(bool w, void* b, std::size_t o, std::size_t n_, std::size_t bytes_)
      : write(w), buf(static_cast<char*>(b)), off(o), n(n_), bytes(bytes_), parts((bytes_ + kPart - 1) / kPart),
        crc(parts), done(parts) {}
  std::size_t part_bytes(std::size_t i) const { return std::min(kPart, bytes - i * kPart); }
  std::size_t part_n(std::size_t i) const { return std::min(kPart, n - i * kPart); }  // > 0: bytes rounds n up to kBlock
  // Nothing of it is in flight and nothing more will be claimed.
  bool over() const { return finished == next && (stop || next == parts); }
  const bool write;
  char* const buf;
  const std::size_t off, n, bytes, parts;
  std::size_t next = 0, finished = 0;  // parts claimed, parts over (moved or failed)
  bool stop = false;                   // claim nothing more
  bool started = false, ended = false;  // its first part was claimed; its busy time is counted
  std::vector<std::uint32_t> crc;
  std::vector<char> done;
  std::exception_ptr err;  // the failure of the lowest part that failed
  std::size_t err_part = SIZE_MAX;
};

struct DiskTier::Pool {
  std::mutex mu;
  std::condition_variable work, progress;
  std::deque<Job*> queue[2];  // jobs with parts left to claim: [0] reads (first), [1] writes
  bool quit = false;
  std::vector<std::thread> threads;

  explicit Pool(DiskTier& t) {
    try {
      for (unsigned i = 0; i < kDepth; ++i) threads.emplace_back([this, &t] { loop(t); });
    } catch (...) {
      stop_all();
      throw;
    }
  }
  ~Pool() { stop_all(); }
  void stop_all() {
    {
      std::lock_guard<std::mutex> g(mu);
      quit = true;
    }
    work.notify_all();
    for (auto& th : threads) th.join();
  }
  // Under mu.
  Job* claimable() {
    for (auto& q : queue) {
      while (!q.empty() && (q.front()->stop || q.front()->next == q.front()->parts)) q.pop_front();
      if (!q.empty()) return q.front();
    }
    return nullptr;
  }
  // A read the caller waits for (a restore) goes before the read-aheads queued.
  void push(Job& j, bool front = false) {
    auto& q = queue[j.write];
    if (front)
      q.push_front(&j);
    else
      q.push_back(&j);
    work.notify_all();
  }
  // Busy from the first part claimed (not while queued behind others) to the last one over.
  static void claim(DiskTier& t, Job& j) {
    if (j.next++ == 0) {
      j.started = true;
      t.busy(j.write, true);
    }
  }
  void unqueue(Job& j) {
    auto& q = queue[j.write];
    q.erase(std::remove(q.begin(), q.end(), &j), q.end());
  }
  static void end_if_over(DiskTier& t, Job& j) {
    if (j.ended || !j.over()) return;
    j.ended = true;
    if (j.started) t.busy(j.write, false);
  }
  // Under mu (l): nothing more of j is claimed, the parts in flight finish,
  // and j leaves the queue (its caller may free it and its buffer then).
  void drain(DiskTier& t, Job& j, std::unique_lock<std::mutex>& l) {
    j.stop = true;
    progress.wait(l, [&] { return j.finished == j.next; });
    unqueue(j);
    end_if_over(t, j);
  }
  void loop(DiskTier& t) {
    std::unique_lock<std::mutex> l(mu);
    for (;;) {
      Job* jp = nullptr;
      work.wait(l, [&] { return quit || (jp = claimable()) != nullptr; });
      if (quit) return;
      Job& j = *jp;
      const std::size_t i = j.next;
      claim(t, j);
      l.unlock();
      std::uint32_t c = 0;
      std::exception_ptr e;
      try {
        c = t.move(j.write, j.buf + i * kPart, j.part_bytes(i), j.part_n(i), j.off + i * kPart);
      } catch (...) {
        e = std::current_exception();
      }
      l.lock();
      if (e) {
        if (i < j.err_part) j.err = e, j.err_part = i;
        j.stop = true;
      } else {
        j.crc[i] = c;
        j.done[i] = 1;
      }
      ++j.finished;
      end_if_over(t, j);
      progress.notify_all();
    }
  }
};

void DiskTier::busy(bool write, bool begin) {
  std::lock_guard<std::mutex> g(busy_mu_);
  const auto now = std::chrono::steady_clock::now();
  for (Busy* b : {&busy_[write], &busy_[2]}) {
    if (begin) {
      if (b->active++ == 0) b->since = now;
    } else if (--b->active == 0) {
      b->seconds += std::chrono::duration<double>(now - b->since).count();
    }
  }
}

double DiskTier::busy_seconds(int which) const {
  std::lock_guard<std::mutex> g(busy_mu_);
  const Busy& b = busy_[which];
  return b.seconds +
         (b.active ? std::chrono::duration<double>(std::chrono::steady_clock::now() - b.since).count() : 0.0);
}

double DiskTier::write_seconds() const { return busy_seconds(true); }
double DiskTier::read_seconds() const { return busy_seconds(false); }

DiskTier::~DiskTier() {
  if (pool_) {  // moves still in flight stop (their callers forgot them): none is left writing a buffer
    std::unique_lock<std::mutex> l(pool_->mu);
    for (auto& kv : async_) pool_->drain(*this, *kv.second, l);
  }
  pool_.reset();  // the I/O threads end
  if (fd_ >= 0) ::close(fd_);
}

DiskTier::Pool& DiskTier::pool() {
  if (!pool_) pool_ = std::make_unique<Pool>(*this);
  return *pool_;
}

std::uint32_t DiskTier::move(bool write, void* buf, std::size_t bytes, std::size_t n, std::size_t off) {
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t len = bytes - done;
    const ssize_t r = write ? ops_->pwrite(fd_, static_cast<char*>(buf) + done, len, static_cast<off_t>(off + done))
                            : ops_->pread(fd_, static_cast<char*>(buf) + done, len, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int e = r < 0 ? errno : 0;
      throw_error(e == ENOSPC ? Errc::out_of_memory : Errc::driver,
                  std::string("disk tier: ") + (write ? "write" : "read") + " of " + format_bytes(bytes) + " at offset " +
                      std::to_string(off) + " in " + dir_ + " failed after " + std::to_string(done) + " bytes: " +
                      (r < 0 ? std::strerror(e) : "end of file (the file was truncated)"));
    }
    done += static_cast<std::size_t>(r);
  }
  // A write's source is stable: its checksum follows the request here, beside the other parts' I/O.
  return crc32c(buf, n);
}

void DiskTier::run(Job& j, const std::function<void()>& meanwhile, const std::function<void(std::size_t)>& part) {
  Pool& p = pool();
  std::unique_lock<std::mutex> l(p.mu);
  p.push(j, /*front=*/!j.write);
  std::exception_ptr err;
  try {
    if (meanwhile) {
      l.unlock();
      meanwhile();
      l.lock();
    }
    for (std::size_t i = 0; i < j.parts; ++i) {
      p.progress.wait(l, [&] { return j.done[i] || j.stop; });
      if (j.stop) break;
      if (part) {
        l.unlock();
        part(i);
        l.lock();
      }
    }
  } catch (...) {
    err = std::current_exception();
  }
  if (!l.owns_lock()) l.lock();
  p.drain(*this, j, l);  // the requests in flight finish before the buffer goes back to the caller
  if (!err) err = j.err;
  if (err) std::rethrow_exception(err);
}

DiskTier::Extent DiskTier::place(std::size_t n) {
  open_file();
  const std::size_t bytes = round_block(std::max<std::size_t>(n, 1));
  auto off = free_.take(bytes);
  if (!off) {
    grow(bytes);
    off = free_.take(bytes);
  }
  used_ += bytes;
  return Extent{*off, bytes, n, {}};
}

void DiskTier::unplace(const Extent& e) {
  free_.give(e.offset, e.bytes);
  used_ -= e.bytes;
}

std::uint32_t DiskTier::move_one(bool write, void* buf, std::size_t bytes, std::size_t n, std::size_t off) {
  // One part, on the caller's thread: busy while it moves.
  busy(write, true);  // (not through the pool: its busy count is shared, under busy_mu_)
  struct End {
    DiskTier& t;
    bool w;
    ~End() { t.busy(w, false); }
  } end{*this, write};
  return move(write, buf, bytes, n, off);
}

void DiskTier::check_parts(const Extent& e, const std::vector<std::uint32_t>& got, std::size_t i) const {
  if (got[i] != e.crc[i])
    throw_error(Errc::driver, "disk tier: checksum mismatch in " + format_bytes(std::min(kPart, e.n - i * kPart)) +
                                  " at offset " + std::to_string(e.offset + i * kPart) + " in " + dir_ +
                                  " (the file was corrupted): not restored");
}

void DiskTier::check_extent(const Extent& e) const {
  if (fd_ < 0 || e.offset + e.bytes > size_ || e.n > e.bytes || e.crc.size() != (e.bytes + kPart - 1) / kPart)
    throw_error(Errc::internal, "disk tier: read of an extent it never wrote");
}

DiskTier::Extent DiskTier::write(const void* buf, std::size_t n) {
  Extent e = place(n);
  try {
    Job j(true, const_cast<void*>(buf), e.offset, n, e.bytes);
    if (j.parts == 1)
      j.crc[0] = move_one(true, j.buf, e.bytes, n, e.offset);
    else
      run(j, {}, {});
    e.crc = std::move(j.crc);
  } catch (...) {
    unplace(e);
    throw;
  }
  written_ += e.bytes;
  return e;
}

void DiskTier::read(const Extent& e, void* buf, const std::function<void()>& meanwhile,
                    const std::function<void(std::size_t, std::size_t)>& part) {
  check_extent(e);
  Job j(false, buf, e.offset, e.n, e.bytes);
  // A part is handed on only once its bytes match the checksum written with them.
  auto check = [&](std::size_t i) {
    check_parts(e, j.crc, i);
    if (part) part(i * kPart, j.part_n(i));
  };
  if (j.parts == 1) {
    j.crc[0] = move_one(false, buf, e.bytes, e.n, e.offset);
    if (j.crc[0] == e.crc[0] && meanwhile) meanwhile();
    check(0);
  } else {
    run(j, meanwhile, check);
  }
  read_ += e.bytes;
}

std::uint64_t DiskTier::start(std::unique_ptr<Job> j) {
  Pool& p = pool();
  const std::uint64_t id = next_id_++;
  Job& job = *j;
  async_.emplace(id, std::move(j));
  std::lock_guard<std::mutex> g(p.mu);
  p.push(job);
  return id;
}

std::uint64_t DiskTier::start_write(const void* buf, std::size_t n, Extent& out) {
  Extent e = place(n);
  try {
    const std::uint64_t id = start(std::make_unique<Job>(true, const_cast<void*>(buf), e.offset, n, e.bytes));
    out = std::move(e);
    return id;
  } catch (...) {
    unplace(e);
    throw;
  }
}

std::uint64_t DiskTier::start_read(const Extent& e, void* buf) {
  check_extent(e);
  return start(std::make_unique<Job>(false, buf, e.offset, e.n, e.bytes));
}

DiskTier::Job& DiskTier::async_job(std::uint64_t id) {
  auto it = async_.find(id);
  if (it == async_.end()) throw_error(Errc::internal, "disk tier: no move " + std::to_string(id) + " in flight");
  return *it->second;
}

bool DiskTier::done(std::uint64_t id) {
  Job& j = async_job(id);
  std::lock_guard<std::mutex> g(pool_->mu);
  return j.over();
}

void DiskTier::wait(std::uint64_t id) {
  Job& j = async_job(id);
  std::unique_lock<std::mutex> l(pool_->mu);
  pool_->progress.wait(l, [&] { return j.over(); });
}

std::unique_ptr<DiskTier::Job> DiskTier::take(std::uint64_t id) {
  auto it = async_.find(id);
  if (it == async_.end()) throw_error(Errc::internal, "disk tier: no move " + std::to_string(id) + " in flight");
  std::unique_ptr<Job> j = std::move(it->second);
  async_.erase(it);
  std::unique_lock<std::mutex> l(pool_->mu);
  pool_->drain(*this, *j, l);
  return j;
}

std::unique_ptr<DiskTier::Job> DiskTier::collect(std::uint64_t id) {
  wait(id);
  return take(id);
}

void DiskTier::cancel(std::uint64_t id, const Extent& e) {
  if (take(id)->write) unplace(e);  // stopped: only the parts in flight finished
}

void DiskTier::finish_write(std::uint64_t id, Extent& e) {
  const std::unique_ptr<Job> j = collect(id);
  if (j->err) {
    unplace(e);
    std::rethrow_exception(j->err);
  }
  e.crc = j->crc;
  written_ += e.bytes;
}

void DiskTier::finish_read(std::uint64_t id, const Extent& e) {
  const std::unique_ptr<Job> j = collect(id);
  if (j->err) std::rethrow_exception(j->err);
  for (std::size_t i = 0; i < j->parts; ++i) check_parts(e, j->crc, i);
  read_ += e.bytes;
}

void DiskTier::give(const Extent& e) {
  if (e.offset + e.bytes > size_ || e.bytes > used_) throw_error(Errc::internal, "disk tier: extent returned that it never handed out");
  unplace(e);
}

}  // namespace memlake::residency
