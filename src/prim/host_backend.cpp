#include "prim/host_backend.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace memlake::prim {
namespace {

[[noreturn]] void sys_fail(const char* what) {
  int e = errno;
  throw_error(Errc::driver, std::string("host backend: ") + what + " failed: " + std::strerror(e));
}

[[noreturn]] void misuse(const std::string& what) {
  throw_error(Errc::invalid_argument, "host backend: " + what);
}

#ifdef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;  // Linux 5.14
#endif

int access_prot(Access a) {
  switch (a) {
    case Access::none: return PROT_NONE;
    case Access::read: return PROT_READ;
    case Access::read_write: return PROT_READ | PROT_WRITE;
  }
  return PROT_NONE;
}

// Live host backends, so a copy can check that the peer memory it touches
// was granted to its device.
std::mutex g_live_mu;
std::set<const HostBackend*>& live_backends() {
  static std::set<const HostBackend*> s;
  return s;
}

}  // namespace

HostBackend::HostBackend(int device, std::size_t granularity, std::size_t memory_limit)
    : device_(device), gran_(granularity ? granularity : (2u << 20)), limit_(memory_limit) {
  long page = sysconf(_SC_PAGESIZE);
  if (gran_ % static_cast<std::size_t>(page) != 0 || (gran_ & (gran_ - 1)) != 0)
    misuse("granularity " + std::to_string(gran_) + " must be a power of two multiple of the " +
           std::to_string(page) + "-byte host page");
  fd_ = static_cast<int>(memfd_create("memlake-host", MFD_CLOEXEC));
  if (fd_ < 0) sys_fail("memfd_create");
  std::lock_guard<std::mutex> g(g_live_mu);
  live_backends().insert(this);
}

HostBackend::~HostBackend() {
  {
    std::lock_guard<std::mutex> g(g_live_mu);
    live_backends().erase(this);
  }
  // Unmap whatever the user left behind so the process does not keep it.
  for (auto& [va, size] : reservations_) munmap(reinterpret_cast<void*>(va), size);
  for (auto& [h, rec] : handles_)
    if (rec.fd >= 0) close(rec.fd);
  if (fd_ >= 0) close(fd_);
}

void HostBackend::check_aligned(const char* op, std::uintptr_t va, std::size_t size) const {
  if (size == 0 || size % gran_ != 0 || va % gran_ != 0)
    misuse(std::string(op) + "(" + hex_ptr(va) + ", " + std::to_string(size) +
           "): address and size must be non-zero multiples of the granularity " +
           std::to_string(gran_));
}

std::uintptr_t HostBackend::reserve(std::size_t size, std::size_t align) {
  if (align == 0) align = gran_;
  check_aligned("reserve", 0, size);
  if (align % gran_ != 0 || (align & (align - 1)) != 0)
    misuse("reserve: alignment " + std::to_string(align) + " is not a power-of-two multiple of the granularity");
  std::size_t span = size + align;
  void* p = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    if (errno == ENOMEM) throw_error(Errc::out_of_memory, "host backend: no virtual address space for " + format_bytes(size));
    sys_fail("mmap(reserve)");
  }
  auto base = reinterpret_cast<std::uintptr_t>(p);
  std::uintptr_t aligned = (base + align - 1) & ~(align - 1);
  if (aligned > base) munmap(p, aligned - base);
  std::uintptr_t end = base + span, aend = aligned + size;
  if (end > aend) munmap(reinterpret_cast<void*>(aend), end - aend);
  std::lock_guard<std::mutex> g(mu_);
  reservations_[aligned] = size;
  return aligned;
}

void HostBackend::free_reservation(std::uintptr_t va, std::size_t size) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = reservations_.find(va);
  if (it == reservations_.end() || it->second != size)
    misuse("free_reservation(" + hex_ptr(va) + ", " + std::to_string(size) + "): not a reservation");
  auto m = mappings_.lower_bound(va);
  if (m != mappings_.end() && m->first < va + size)
    misuse("free_reservation(" + hex_ptr(va) + "): range still has mappings");
  munmap(reinterpret_cast<void*>(va), size);
  reservations_.erase(it);
}

std::size_t HostBackend::alloc_extent(std::size_t size) {
  for (auto it = free_extents_.begin(); it != free_extents_.end(); ++it) {
    if (it->second >= size) {
      std::size_t off = it->first, rest = it->second - size;
      free_extents_.erase(it);
      if (rest) free_extents_[off + size] = rest;
      return off;
    }
  }
  std::size_t off = file_size_;
  if (ftruncate(fd_, static_cast<off_t>(file_size_ + size)) != 0) sys_fail("ftruncate");
  file_size_ += size;
  return off;
}

void HostBackend::free_extent(std::size_t offset, std::size_t size) {
  // Give the pages back to the kernel; the extent reads as zeros afterwards.
  fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
            static_cast<off_t>(size));
  auto it = free_extents_.emplace(offset, size).first;
  auto next = std::next(it);
  if (next != free_extents_.end() && it->first + it->second == next->first) {
    it->second += next->second;
    free_extents_.erase(next);
  }
  if (it != free_extents_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      free_extents_.erase(it);
    }
  }
}

PhysHandle HostBackend::create(std::size_t size) {
  check_aligned("create", 0, size);
  std::lock_guard<std::mutex> g(mu_);
  if (limit_ && live_bytes_ + size > limit_)
    throw_error(Errc::out_of_memory, "host backend: creating " + format_bytes(size) +
                                         " would exceed the host memory limit of " + format_bytes(limit_));
  std::size_t off = alloc_extent(size);
  PhysHandle h = next_handle_++;
  handles_[h] = Handle{off, size};
  live_bytes_ += size;
  return h;
}

void HostBackend::maybe_drop(PhysHandle h) {
  auto it = handles_.find(h);
  if (it->second.released && it->second.maps == 0) {
    if (it->second.fd >= 0) ::close(it->second.fd);  // the pages live on while another process holds them
    else free_extent(it->second.offset, it->second.size);
    if (it->second.counted) live_bytes_ -= it->second.size;
    handles_.erase(it);
  }
}

PhysHandle HostBackend::create_shareable(std::size_t size) {
  check_aligned("create_shareable", 0, size);
  std::lock_guard<std::mutex> g(mu_);
  if (limit_ && live_bytes_ + size > limit_)
    throw_error(Errc::out_of_memory, "host backend: creating " + format_bytes(size) +
                                         " would exceed the host memory limit of " + format_bytes(limit_));
  const int fd = static_cast<int>(memfd_create("memlake-shared", MFD_CLOEXEC));
  if (fd < 0) sys_fail("memfd_create");
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    sys_fail("ftruncate");
  }
  PhysHandle h = next_handle_++;
  Handle rec{0, size};
  rec.fd = fd;
  handles_[h] = rec;
  live_bytes_ += size;
  return h;
}

int HostBackend::export_fd(PhysHandle h, bool read_only) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = handles_.find(h);
  if (it == handles_.end() || it->second.released) misuse("export_fd: unknown or released handle " + std::to_string(h));
  if (it->second.fd < 0) misuse("export_fd: handle " + std::to_string(h) + " was not created shareable");
  int fd = -1;
  if (read_only) {
    const std::string proc = "/proc/self/fd/" + std::to_string(it->second.fd);
    fd = ::open(proc.c_str(), O_RDONLY | O_CLOEXEC);
  } else {
    fd = ::fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);
  }
  if (fd < 0) sys_fail("export_fd");
  return fd;
}

PhysHandle HostBackend::import_fd(int fd, std::size_t size) {
  check_aligned("import_fd", 0, size);
  struct stat st{};
  if (fd < 0 || ::fstat(fd, &st) != 0) misuse("import_fd: " + std::to_string(fd) + " is not an open file descriptor");
  if (!S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) != size)
    misuse("import_fd: the descriptor holds " + std::to_string(st.st_size) + " bytes, not the " + std::to_string(size) +
           " expected");
  const int flags = ::fcntl(fd, F_GETFL);
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (flags < 0 || own < 0) sys_fail("import_fd");
  std::lock_guard<std::mutex> g(mu_);
  PhysHandle h = next_handle_++;
  Handle rec{0, size};
  rec.fd = own;
  rec.read_only = (flags & O_ACCMODE) == O_RDONLY;
  rec.counted = false;
  handles_[h] = rec;
  return h;
}

void HostBackend::release(PhysHandle h) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = handles_.find(h);
  if (it == handles_.end() || it->second.released) misuse("release: unknown or already released handle " + std::to_string(h));
  it->second.released = true;
  maybe_drop(h);
}

void HostBackend::map(std::uintptr_t va, std::size_t size, PhysHandle h) {
  check_aligned("map", va, size);
  std::lock_guard<std::mutex> g(mu_);
  auto hit = handles_.find(h);
  if (hit == handles_.end() || hit->second.released) misuse("map: unknown or released handle " + std::to_string(h));
  if (hit->second.size != size)
    misuse("map: size " + std::to_string(size) + " differs from the handle's " + std::to_string(hit->second.size) +
           " (a handle is only ever mapped whole)");
  auto r = reservations_.upper_bound(va);
  if (r == reservations_.begin() || (--r, va + size > r->first + r->second))
    misuse("map(" + hex_ptr(va) + "): range is not inside a reservation");
  auto m = mappings_.lower_bound(va);
  if ((m != mappings_.end() && m->first < va + size) ||
      (m != mappings_.begin() && std::prev(m)->first + std::prev(m)->second.size > va))
    misuse("map(" + hex_ptr(va) + "): range is already mapped");
  const int file = hit->second.fd >= 0 ? hit->second.fd : fd_;
  void* p = mmap(reinterpret_cast<void*>(va), size, PROT_NONE, MAP_SHARED | MAP_FIXED, file,
                 static_cast<off_t>(hit->second.offset));
  if (p == MAP_FAILED) sys_fail("mmap(map)");
  mappings_[va] = Mapping{size, h, Access::none};
  hit->second.maps++;
}

void HostBackend::unmap(std::uintptr_t va, std::size_t size) {
  check_aligned("unmap", va, size);
  std::lock_guard<std::mutex> g(mu_);
  // The range must be exactly a sequence of whole, adjacent mappings.
  auto first = mappings_.find(va);
  if (first == mappings_.end()) misuse("unmap(" + hex_ptr(va) + "): no mapping starts there");
  std::uintptr_t at = va;
  auto it = first;
  while (at < va + size) {
    if (it == mappings_.end() || it->first != at || at + it->second.size > va + size)
      misuse("unmap(" + hex_ptr(va) + ", " + std::to_string(size) + "): range does not cover whole mappings");
    at += it->second.size;
    ++it;
  }
  void* p = mmap(reinterpret_cast<void*>(va), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) sys_fail("mmap(unmap)");
  for (auto gi = grants_.begin(); gi != grants_.end();)  // access goes with the mapping
    if (gi->first < va + size && gi->first + gi->second.size > va) gi = grants_.erase(gi);
    else ++gi;
  for (auto m = first; m != it;) {
    PhysHandle h = m->second.handle;
    m = mappings_.erase(m);
    handles_[h].maps--;
    maybe_drop(h);
  }
}

void HostBackend::set_access(std::uintptr_t va, std::size_t size, Access a) {
  check_aligned("set_access", va, size);
  std::lock_guard<std::mutex> g(mu_);
  if (!covered(va, size, Access::none)) misuse("set_access(" + hex_ptr(va) + "): range is not fully mapped");
  if (a == Access::read_write)
    for (auto m = mappings_.find(va); m != mappings_.end() && m->first < va + size; ++m)
      if (handles_[m->second.handle].read_only)
        misuse("set_access(" + hex_ptr(va) + "): read-write access to memory shared read-only");
  if (mprotect(reinterpret_cast<void*>(va), size, access_prot(a)) != 0) sys_fail("mprotect");
  for (auto m = mappings_.find(va); m != mappings_.end() && m->first < va + size; ++m) m->second.access = a;
}

bool HostBackend::covered(std::uintptr_t va, std::size_t n, Access need) const {
  auto m = mappings_.upper_bound(va);
  if (m == mappings_.begin()) return false;
  --m;
  std::uintptr_t at = va;
  while (at < va + n) {
    if (m == mappings_.end() || m->first > at || m->first + m->second.size <= at) return false;
    if (need == Access::read_write && m->second.access != Access::read_write) return false;
    if (need == Access::read && m->second.access == Access::none) return false;
    at = m->first + m->second.size;
    ++m;
  }
  return true;
}

Stream HostBackend::create_stream() {
  std::lock_guard<std::mutex> g(mu_);
  next_stream_ += 0x10;
  streams_.insert(next_stream_);
  return reinterpret_cast<Stream>(next_stream_);
}

void HostBackend::destroy_stream(Stream s) {
  std::lock_guard<std::mutex> g(mu_);
  if (!streams_.erase(reinterpret_cast<std::uintptr_t>(s))) misuse("destroy_stream: unknown stream");
  held_.erase(reinterpret_cast<std::uintptr_t>(s));
  drained_.erase(reinterpret_cast<std::uintptr_t>(s));
}

void HostBackend::hold(Stream s) {
  std::lock_guard<std::mutex> g(mu_);
  held_[reinterpret_cast<std::uintptr_t>(s)] = ++hold_gen_;
}

void HostBackend::set_lag(std::uint64_t lag) {
  std::lock_guard<std::mutex> g(mu_);
  lag_ = lag;
}

void HostBackend::advance_clock(std::uint64_t now) {
  std::lock_guard<std::mutex> g(mu_);
  if (now <= clock_) return;
  prev_clock_ = clock_;
  clock_ = now;
}

bool HostBackend::lag_done(Stream s, std::uint64_t at) const {
  if (lag_ == 0 || clock_ >= at + lag_ || at <= drained_all_) return true;
  auto d = drained_.find(reinterpret_cast<std::uintptr_t>(s));
  return d != drained_.end() && at <= d->second;
}

bool HostBackend::lag_idle(Stream s) const {
  // The last work was queued at the previous clock value, after that
  // value's calls: a drain then did not cover it, a drain since did.
  return prev_clock_ == clock_ ? lag_done(s, clock_) : lag_done(s, prev_clock_ + 1);
}

Event HostBackend::record_event(Stream s) {
  std::lock_guard<std::mutex> g(mu_);
  auto h = held_.find(reinterpret_cast<std::uintptr_t>(s));
  Event e = next_event_++;
  events_[e] = EventRec{s, h == held_.end() ? 0 : h->second, clock_};
  return e;
}

bool HostBackend::query_event(Event e) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = events_.find(e);
  if (it == events_.end()) misuse("query_event: unknown event");
  const EventRec& r = it->second;
  if (r.hold_gen != 0) {
    auto h = held_.find(reinterpret_cast<std::uintptr_t>(r.stream));
    // Complete once the hold it was recorded under has been lifted.
    if (h != held_.end() && h->second == r.hold_gen) return false;
  }
  return lag_done(r.stream, r.at);
}

bool HostBackend::query_stream(Stream s) {
  std::lock_guard<std::mutex> g(mu_);
  return held_.find(reinterpret_cast<std::uintptr_t>(s)) == held_.end() && lag_idle(s);
}

void HostBackend::wait_event(Event e) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = events_.find(e);
  if (it == events_.end()) misuse("wait_event: unknown event");
  const EventRec& r = it->second;
  auto h = held_.find(reinterpret_cast<std::uintptr_t>(r.stream));
  if (h != held_.end() && h->second == r.hold_gen) held_.erase(h);
  std::uint64_t& d = drained_[reinterpret_cast<std::uintptr_t>(r.stream)];
  d = std::max(d, r.at);
}

void HostBackend::destroy_event(Event e) {
  std::lock_guard<std::mutex> g(mu_);
  if (!events_.erase(e)) misuse("destroy_event: unknown event");
}

void HostBackend::synchronize_stream(Stream s) {
  std::lock_guard<std::mutex> g(mu_);
  held_.erase(reinterpret_cast<std::uintptr_t>(s));
  drained_[reinterpret_cast<std::uintptr_t>(s)] = clock_;
}

void HostBackend::synchronize_device() {
  std::lock_guard<std::mutex> g(mu_);
  held_.clear();
  drained_all_ = clock_;
}

void HostBackend::write(std::uintptr_t dst, const void* src, std::size_t n) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!covered(dst, n, Access::read_write)) misuse("write(" + hex_ptr(dst) + ", " + std::to_string(n) + "): not mapped read-write");
  }
  if (n >= (std::size_t{1} << 20)) {
    // Device memory takes a copy at once; here the first write of freshly mapped pages faulted
    // once a 4 KiB page (most of a restore's copy time). The page tables are filled in one call
    // first: best effort (before Linux 5.14 the faults stay).
    const std::uintptr_t a = dst & ~std::uintptr_t{4095}, b = (dst + n + 4095) & ~std::uintptr_t{4095};
    ::madvise(reinterpret_cast<void*>(a), b - a, kPopulateWrite);
  }
  if (n) std::memcpy(reinterpret_cast<void*>(dst), src, n);  // an empty buffer's data() may be null
}

void HostBackend::read(void* dst, std::uintptr_t src, std::size_t n) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!covered(src, n, Access::read)) misuse("read(" + hex_ptr(src) + ", " + std::to_string(n) + "): not mapped readable");
  }
  if (n) std::memcpy(dst, reinterpret_cast<const void*>(src), n);
}

void* HostBackend::alloc_pinned(std::size_t n) {
  void* p = std::aligned_alloc(4096, (n + 4095) / 4096 * 4096);
  if (!p) throw_error(Errc::out_of_memory, "host backend: no memory for " + format_bytes(n) + " of pinned staging");
  std::lock_guard<std::mutex> g(mu_);
  pinned_[reinterpret_cast<std::uintptr_t>(p)] = n;
  return p;
}

void HostBackend::free_pinned(void* p) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!pinned_.erase(reinterpret_cast<std::uintptr_t>(p))) misuse("free_pinned: not pinned memory of this backend");
  }
  std::free(p);
}

bool HostBackend::in(const std::map<std::uintptr_t, std::size_t>& ranges, std::uintptr_t a) {
  auto it = ranges.upper_bound(a);
  return it != ranges.begin() && (--it, a < it->first + it->second);
}

Backend::PointerKind HostBackend::pointer_kind(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard<std::mutex> g(mu_);
  if (covered(a, 1, Access::none)) return PointerKind::device;
  if (in(pinned_, a) || in(registered_, a)) return PointerKind::pinned;
  return PointerKind::pageable;
}

void HostBackend::copy_to_device_async(std::uintptr_t dst, const void* src, std::size_t n, Stream) { write(dst, src, n); }
void HostBackend::copy_to_host_async(void* dst, std::uintptr_t src, std::size_t n, Stream) { read(dst, src, n); }

void HostBackend::register_host(void* p, std::size_t n) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (!p || n == 0) misuse("register_host: null pointer or empty range");
  std::lock_guard<std::mutex> g(mu_);
  if (covered(a, 1, Access::none)) misuse("register_host(" + hex_ptr(a) + "): device memory");
  for (const auto* m : {&pinned_, &registered_}) {
    auto it = m->lower_bound(a);
    bool overlaps = (it != m->end() && it->first < a + n) || (it != m->begin() && (--it, it->first + it->second > a));
    if (overlaps) misuse("register_host(" + hex_ptr(a) + ", " + std::to_string(n) + "): overlaps memory that is already pinned");
  }
  registered_[a] = n;
}

void HostBackend::unregister_host(void* p) {
  std::lock_guard<std::mutex> g(mu_);
  if (!registered_.erase(reinterpret_cast<std::uintptr_t>(p)))
    misuse("unregister_host(" + hex_ptr(reinterpret_cast<std::uintptr_t>(p)) + "): not a registered address");
}

void HostBackend::grant_peer(std::uintptr_t va, std::size_t size, int peer) {
  check_aligned("grant_peer", va, size);
  std::lock_guard<std::mutex> g(mu_);
  if (!covered(va, size, Access::read_write))
    misuse("grant_peer(" + hex_ptr(va) + ", " + std::to_string(size) + "): not mapped read-write here");
  grants_.insert({va, Grant{size, peer}});
}

bool HostBackend::granted_to(std::uintptr_t va, std::size_t n, int device) const {
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = grants_.begin(); it != grants_.end() && it->first <= va; ++it)
    if (it->second.peer == device && va + n <= it->first + it->second.size) return covered(va, n, Access::read_write);
  return false;
}

bool HostBackend::reachable(std::uintptr_t va, std::size_t n) const {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (covered(va, n, Access::read)) return true;
  }
  std::lock_guard<std::mutex> g(g_live_mu);
  for (const HostBackend* b : live_backends())
    if (b != this && b->granted_to(va, n, device_)) return true;
  return false;
}

void HostBackend::copy_device_async(std::uintptr_t dst, std::uintptr_t src, std::size_t n, Stream) {
  if (n == 0) return;
  if (!reachable(dst, n) || !reachable(src, n))
    misuse("copy_device_async(" + hex_ptr(dst) + " <- " + hex_ptr(src) + ", " + std::to_string(n) +
           "): a side is neither mapped here nor granted to device " + std::to_string(device_));
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
}

std::size_t HostBackend::live_handles() const {
  std::lock_guard<std::mutex> g(mu_);
  return handles_.size();
}
std::size_t HostBackend::live_reservations() const {
  std::lock_guard<std::mutex> g(mu_);
  return reservations_.size();
}
std::size_t HostBackend::live_mappings() const {
  std::lock_guard<std::mutex> g(mu_);
  return mappings_.size();
}
bool HostBackend::accessible(std::uintptr_t va, std::size_t n) const {
  std::lock_guard<std::mutex> g(mu_);
  return covered(va, n, Access::read_write);
}
std::size_t HostBackend::physical_bytes() const {
  std::lock_guard<std::mutex> g(mu_);
  return live_bytes_;
}

}  // namespace memlake::prim
