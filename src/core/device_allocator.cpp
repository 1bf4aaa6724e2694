#include "core/device_allocator.h"

#include <algorithm>

#include "core/error.h"
#include "core/labels.h"

namespace memlake::core {
namespace {

std::unique_ptr<prim::Backend> backend_for(int device, const Options& o) {
  prim::BackendConfig c;
  c.kind = o.backend;
  c.device = device;
  c.granularity = o.granularity;
  c.host_memory_limit = o.host_memory_limit;
  return prim::make_backend(c);
}

}  // namespace

DeviceAllocator::DeviceAllocator(int device, const Options& opts) : DeviceAllocator(backend_for(device, opts), opts) {}

DeviceAllocator::DeviceAllocator(std::unique_ptr<prim::Backend> backend, const Options& opts)
    : device_(backend->device()),
      counting_(std::make_unique<prim::CountingBackend>(std::move(backend))),
      alloc_(*counting_, opts),
      res_(*counting_, alloc_, opts.host_tier) {
  if (!opts.disk_tier.empty()) res_.set_disk(opts.disk_tier, opts.disk_tier_limit);
  rec_.on_gauges(alloc_.gauges());
}

struct DeviceAllocator::GraphPool {
  std::uint64_t id = 0;
  Tag tag = 0;
  int graphs = 0;      // captures begun and not released
  int capturing = 0;   // captures in progress
  std::size_t live = 0;  // blocks of this pool not freed for real
  // Freed blocks kept for reuse, by (stream, rounded size).
  std::map<std::pair<prim::Stream, std::size_t>, std::vector<void*>> free;
};

DeviceAllocator::~DeviceAllocator() = default;

// Times one operation under the lock for the statistics (host_ns): the
// allocator's work, statistics, tracing and driver calls, not the wait for
// the lock. Two TSC reads: a few ns.
class DeviceAllocator::OpTimer {
 public:
  explicit OpTimer(StatsRecorder& r) : r_(r), t0_(TickClock::now()) {}
  ~OpTimer() { r_.on_time(TickClock::now() - t0_); }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  StatsRecorder& r_;
  std::uint64_t t0_;
};

void* DeviceAllocator::alloc(std::size_t size, prim::Stream stream) {
  std::lock_guard<std::mutex> g(mu_);
  OpTimer timer(rec_);
  if (!capturing_.empty() && size > 0)
    if (GraphPool* gp = capture_pool(stream)) return pool_alloc(*gp, size, stream);
  AllocInfo info;
  try {
    // Out of memory: pages of evictions still copying out come back once
    // their copies complete; then allocations restored ahead and not used
    // yet give theirs back (their host copies are still true), then spare
    // ones (copied out).
    void* p = res_.retry_oom(size, [&] { return alloc_.alloc(size, stream, &info, current_label()); });
    rec_.on_alloc(size, info, alloc_.gauges());
    if (tracer_ && p) tracer_->allocated(p, size, stream);
    return p;
  } catch (const Error& e) {
    if (e.code() == Errc::out_of_memory) rec_.on_oom();
    rec_.on_gauges(alloc_.gauges());
    throw;
  }
}

FreeInfo DeviceAllocator::free_locked(void* ptr, prim::Stream stream) {
  FreeInfo fi;
  if (!pool_blocks_.empty() && pool_free(ptr, &fi)) return fi;
  return free_now(ptr, stream);
}

FreeInfo DeviceAllocator::free_now(void* ptr, prim::Stream stream) {
  res_.before_free(ptr);
  FreeInfo fi = alloc_.free(ptr);
  res_.on_free(ptr);
  rec_.on_free(fi, alloc_.gauges());
  if (tracer_ && fi.requested) tracer_->freed(ptr, fi.requested, stream);
  return fi;
}

void DeviceAllocator::free(void* ptr) {
  std::lock_guard<std::mutex> g(mu_);
  OpTimer timer(rec_);
  free_locked(ptr, tracer_ ? alloc_.stream_of(ptr) : nullptr);  // only tracing needs the stream
}

bool DeviceAllocator::free_if_owned(void* ptr, Lookup* out) {
  std::lock_guard<std::mutex> g(mu_);
  OpTimer timer(rec_);
  if (!alloc_.owns(ptr)) return false;
  const prim::Stream stream = alloc_.stream_of(ptr);
  const FreeInfo fi = free_locked(ptr, stream);
  if (out) *out = {fi.requested, stream};
  return true;
}

std::size_t DeviceAllocator::size_of(const void* ptr) const {
  std::lock_guard<std::mutex> g(mu_);
  return alloc_.size_of(ptr);
}

bool DeviceAllocator::lookup(const void* ptr, Lookup* out) const {
  std::lock_guard<std::mutex> g(mu_);
  if (!alloc_.owns(ptr)) return false;
  *out = {alloc_.size_of(ptr), alloc_.stream_of(ptr)};
  return true;
}

// ---- Graph pools

DeviceAllocator::GraphPool* DeviceAllocator::capture_pool(prim::Stream s) const {
  for (const auto& [stream, gp] : capturing_)
    if (stream == s) return gp;
  return nullptr;
}

void* DeviceAllocator::pool_alloc(GraphPool& gp, std::size_t size, prim::Stream stream) {
  const std::size_t rounded = alloc_.rounded_size(size);
  auto it = gp.free.find({stream, rounded});
  if (it != gp.free.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    pool_blocks_.at(reinterpret_cast<std::uintptr_t>(p)).free = false;
    return p;  // still live in the allocator and in the statistics
  }
  AllocInfo info;
  try {
    pool_blocks_.reserve(pool_blocks_.size() + 1);  // no throw after the memory is taken
    void* p = alloc_.alloc_tagged(size, gp.tag, &info, current_label());
    rec_.on_alloc(size, info, alloc_.gauges());
    pool_blocks_.emplace(reinterpret_cast<std::uintptr_t>(p), PoolBlock{&gp, stream, rounded, false});
    ++gp.live;
    if (tracer_) tracer_->allocated(p, size, stream);
    return p;
  } catch (const Error& e) {
    if (e.code() == Errc::out_of_memory) rec_.on_oom();
    rec_.on_gauges(alloc_.gauges());
    throw;
  }
}

bool DeviceAllocator::pool_free(void* ptr, FreeInfo* fi) {
  auto it = pool_blocks_.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == pool_blocks_.end()) return false;
  res_.before_free(ptr);  // a block kept for its pool is reused too: not under a copy still arriving
  PoolBlock& b = it->second;
  if (b.free)
    throw_error(Errc::invalid_argument, "free(" + hex_ptr(reinterpret_cast<std::uintptr_t>(ptr)) +
                                            "): already freed (a block of CUDA graph pool " +
                                            std::to_string(b.pool->id) + ")");
  GraphPool* gp = b.pool;
  if (gp->graphs > 0) {  // the pool's graphs may still use it: the pool keeps it
    b.free = true;
    gp->free[{b.stream, b.rounded}].push_back(ptr);
    *fi = FreeInfo{};
    return true;
  }
  // A released pool's allocation: an ordinary free now (its tag follows the capture stream).
  const prim::Stream stream = b.stream;
  pool_blocks_.erase(it);
  *fi = free_now(ptr, stream);
  if (--gp->live == 0)
    released_.erase(std::find_if(released_.begin(), released_.end(), [&](const auto& u) { return u.get() == gp; }));
  return true;
}

void DeviceAllocator::capture_begin(prim::Stream stream, std::uint64_t pool) {
  std::lock_guard<std::mutex> g(mu_);
  if (capture_pool(stream))
    throw_error(Errc::invalid_argument, "capture_begin: stream " + hex_ptr(reinterpret_cast<std::uintptr_t>(stream)) +
                                            " is being captured already");
  capturing_.reserve(capturing_.size() + 1);
  auto it = pools_.find(pool);
  if (it == pools_.end()) {
    auto gp = std::make_unique<GraphPool>();
    gp->id = pool;
    gp->tag = alloc_.graph_tag(stream);
    it = pools_.emplace(pool, std::move(gp)).first;
  }
  GraphPool& gp = *it->second;
  ++gp.graphs;
  ++gp.capturing;
  capturing_.emplace_back(stream, &gp);
  alloc_.set_capturing(stream, true);
}

void DeviceAllocator::capture_end(prim::Stream stream) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = std::find_if(capturing_.begin(), capturing_.end(), [&](const auto& c) { return c.first == stream; });
  if (it == capturing_.end())
    throw_error(Errc::invalid_argument, "capture_end: stream " + hex_ptr(reinterpret_cast<std::uintptr_t>(stream)) +
                                            " is not being captured");
  --it->second->capturing;
  capturing_.erase(it);
  alloc_.set_capturing(stream, false);
}

void DeviceAllocator::graph_pool_release(std::uint64_t pool) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = pools_.find(pool);
  if (it == pools_.end())
    throw_error(Errc::invalid_argument, "graph_pool_release: no CUDA graph pool " + std::to_string(pool));
  GraphPool& gp = *it->second;
  if (gp.capturing > 0)
    throw_error(Errc::invalid_argument, "graph_pool_release: pool " + std::to_string(pool) + " is being captured into");
  if (gp.graphs > 1) {
    --gp.graphs;
    return;
  }
  // Replays of its graphs may still run on any stream: none may be left.
  counting_->synchronize_device();  // throws if it fails: nothing changed
  gp.graphs = 0;
  try {
    for (auto& [key, ptrs] : gp.free)
      while (!ptrs.empty()) {
        void* p = ptrs.back();
        pool_blocks_.erase(reinterpret_cast<std::uintptr_t>(p));
        ptrs.pop_back();
        --gp.live;
        free_now(p, key.first);
      }
  } catch (const Error&) {
    rec_.on_gauges(alloc_.gauges());
    throw;  // a driver failure inside a free; what is left stays the pool's, freed as its users free it
  }
  gp.free.clear();
  alloc_.release_graph_tag(gp.tag);
  std::unique_ptr<GraphPool> owned = std::move(it->second);
  pools_.erase(it);
  if (owned->live > 0) released_.push_back(std::move(owned));
  rec_.on_gauges(alloc_.gauges());
}

void DeviceAllocator::set_capture_guard(bool on) {
  std::lock_guard<std::mutex> g(mu_);
  alloc_.set_capture_guard(on);
  capture_guard_.store(on, std::memory_order_relaxed);
}

DeviceAllocator::GraphStats DeviceAllocator::graph_stats() const {
  std::lock_guard<std::mutex> g(mu_);
  GraphStats s;
  s.pools = pools_.size() + released_.size();
  s.capturing = capturing_.size();
  for (const auto& [p, b] : pool_blocks_) (b.free ? s.free_blocks : s.held_blocks)++;
  return s;
}

std::size_t DeviceAllocator::empty_cache(std::size_t want) {
  std::lock_guard<std::mutex> g(mu_);
  try {
    std::size_t n = alloc_.empty_cache(want);
    rec_.on_gauges(alloc_.gauges());
    return n;
  } catch (const Error&) {
    rec_.on_gauges(alloc_.gauges());  // part may have been released before the failure
    throw;
  }
}

void DeviceAllocator::set_memory_cap(std::size_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  try {
    alloc_.set_memory_cap(bytes);
  } catch (const Error&) {
    rec_.on_gauges(alloc_.gauges());
    throw;
  }
  rec_.on_gauges(alloc_.gauges());
}

// Runs f under the lock; the gauges follow whatever part of it happened, even when it throws.
template <class F>
auto DeviceAllocator::gauged(F&& f) -> decltype(f()) {
  std::lock_guard<std::mutex> g(mu_);
  struct After {
    DeviceAllocator& d;
    ~After() { d.rec_.on_gauges(d.alloc_.gauges()); }
  } after{*this};
  return f();
}

residency::SleepReport DeviceAllocator::sleep(const std::vector<residency::Residency::Select>& what) {
  return gauged([&] { return res_.sleep(what); });
}

residency::WakeReport DeviceAllocator::wake() {
  return gauged([&] { return res_.wake(); });
}

void DeviceAllocator::evict(void* ptr, residency::Mode mode, bool wait) {
  gauged([&] { res_.evict(ptr, mode, wait); });
}

std::size_t DeviceAllocator::settle(bool wait) {
  return gauged([&] { return res_.settle(wait); });
}

void DeviceAllocator::demote(void* ptr, bool wait) {
  gauged([&] { res_.demote(ptr, wait); });
}

void DeviceAllocator::fetch(void* ptr) {
  gauged([&] { res_.fetch(ptr); });
}

void DeviceAllocator::set_disk_tier(const std::string& dir, std::size_t limit, residency::FileOps* ops) {
  std::lock_guard<std::mutex> g(mu_);
  res_.set_disk(dir, limit, ops);
}

void DeviceAllocator::restore(void* ptr, bool wait) {
  gauged([&] { res_.restore(ptr, wait); });
}

void DeviceAllocator::restore_ready(void* ptr) {
  gauged([&] {
    if (ptr)
      res_.ready(ptr);
    else
      res_.ready_all();
  });
}

void DeviceAllocator::mark_spare(void* ptr) {
  std::lock_guard<std::mutex> g(mu_);
  res_.mark_spare(ptr);
}

void DeviceAllocator::reserve_host_tier(std::size_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  res_.reserve_host(bytes);
}

residency::ResidencyStats DeviceAllocator::residency_stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return res_.stats();
}

std::uint64_t DeviceAllocator::reserved_bytes() const {
  std::lock_guard<std::mutex> g(mu_);
  return rec_.reserved();
}

Stats DeviceAllocator::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  Stats s = rec_.stats();
  s.device = device_;
  s.backend = counting_->name();
  s.uuid = counting_->uuid();
  s.stitched_views = alloc_.stitched_views();
  s.largest_free = alloc_.largest_free_bytes();
  s.calls = counting_->counts();
  const residency::ResidencyStats r = res_.stats();
  s.residency = Stats::Residency{r.sleeps,       r.wakes,         r.evictions,     r.restores,
                                 r.bytes_evicted, r.bytes_restored, r.evicted_now,   r.evicted_bytes_now,
                                 r.host_capacity, r.host_used,      r.demotions,     r.disk_used,
                                 r.disk_written,  r.disk_read,      r.asleep,        r.reclaimed_bytes};
  return s;
}

void DeviceAllocator::reset_peaks() {
  std::lock_guard<std::mutex> g(mu_);
  rec_.reset_peaks();
}

Stat DeviceAllocator::watermark(bool reset) {
  std::lock_guard<std::mutex> g(mu_);
  return rec_.watermark(reset);
}

void DeviceAllocator::check() const {
  std::lock_guard<std::mutex> g(mu_);
  alloc_.check();
  const Stats& s = rec_.stats();
  const Gauges gg = alloc_.gauges();
  if (s.active.current != gg.active_blocks) throw_error(Errc::internal, "stats: active blocks differ from records");
  if (s.reserved.current != gg.reserved || s.mapped.current != gg.mapped)
    throw_error(Errc::internal, "stats: reserved or mapped bytes differ from the pool's");
}

PagePool::Holdings DeviceAllocator::holdings() const {
  std::lock_guard<std::mutex> g(mu_);
  return alloc_.holdings();
}

}  // namespace memlake::core
