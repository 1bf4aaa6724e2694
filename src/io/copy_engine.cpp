#include "io/copy_engine.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "io/stream_copy.h"

namespace memlake::io {

class CopyEngine::Lease {
 public:
  explicit Lease(CopyEngine& e, bool wait = true) : e_(e), b_(e.acquire(wait)) {}
  ~Lease() {
    if (b_) e_.release(b_, pending_);
  }
  explicit operator bool() const { return b_ != nullptr; }
  void* data() const { return b_->p; }
  void done_after(prim::Event ev) { pending_ = ev; }

 private:
  CopyEngine& e_;
  Buffer* b_;
  prim::Event pending_ = 0;
};

// A lane's time in the host copy and in waiting (for a staging buffer or its
// DMA), added to the engine's statistics when the lane ends.
class CopyEngine::LaneClock {
 public:
  explicit LaneClock(CopyEngine& e) : e_(e) {}
  ~LaneClock() { e_.add_lane_time(copy_ns_, wait_ns_); }
  void start() { t_ = Clock::now(); }
  void waited() { wait_ns_ += lap(); }
  void copied() { copy_ns_ += lap(); }

 private:
  using Clock = std::chrono::steady_clock;
  std::uint64_t lap() {
    const auto now = Clock::now();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - t_).count();
    t_ = now;
    return static_cast<std::uint64_t>(ns);
  }
  CopyEngine& e_;
  Clock::time_point t_ = Clock::now();
  std::uint64_t copy_ns_ = 0, wait_ns_ = 0;
};

struct CopyEngine::Task {
  std::function<void(const std::atomic<bool>&)> lane;
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable cv;
  std::size_t queued = 0;  // lanes handed to workers and not yet finished
  std::exception_ptr error;

  void run() {
    try {
      lane(failed);
    } catch (...) {
      std::lock_guard<std::mutex> g(mu);
      if (!error) error = std::current_exception();
      failed = true;
    }
  }
};

CopyEngine::CopyEngine(prim::Backend& backend, const CopyOptions& opts)
    : be_(backend), opts_(opts), reg_(backend, opts.registration) {
  int threads = opts_.threads;
  if (threads <= 0) threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 16);
  if (opts_.buffers <= 0) opts_.buffers = 2 * threads;
  if (opts_.chunk == 0 || opts_.buffers < 2)
    throw_error(Errc::invalid_argument, "copy engine: needs a chunk size and at least 2 staging buffers");
  if (opts_.min_piece < 4096 || opts_.min_piece % 4096 != 0)
    throw_error(Errc::invalid_argument,
                "copy engine: smallest piece " + std::to_string(opts_.min_piece) + " is not a multiple of 4 KiB");
  if (opts_.h2d_streams < 1 || opts_.h2d_streams > 16)
    throw_error(Errc::invalid_argument,
                "copy engine: " + std::to_string(opts_.h2d_streams) + " host-to-device streams (1..16)");
  stats_.threads = threads;
  try {
    d2h_ = be_.create_stream();
    for (int i = 0; i < opts_.h2d_streams; ++i) h2d_.push_back(be_.create_stream());
    pool_.resize(static_cast<std::size_t>(opts_.buffers));
    for (Buffer& b : pool_) b.p = be_.alloc_pinned(opts_.chunk);
  } catch (...) {
    for (Buffer& b : pool_)
      if (b.p) be_.free_pinned(b.p);
    for (prim::Stream s : h2d_) be_.destroy_stream(s);
    if (d2h_) be_.destroy_stream(d2h_);
    throw;
  }
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { run_workers(); });  // the caller is one more
}

CopyEngine::~CopyEngine() {
  {
    std::lock_guard<std::mutex> g(jobs_mu_);
    stop_ = true;
  }
  jobs_cv_.notify_all();
  for (auto& t : workers_) t.join();
  try {
    for (prim::Stream s : h2d_) be_.synchronize_stream(s);
    be_.synchronize_stream(d2h_);
    for (Buffer& b : pool_) {
      if (b.pending) be_.destroy_event(b.pending);
      be_.free_pinned(b.p);
    }
    for (prim::Stream s : h2d_) be_.destroy_stream(s);
    be_.destroy_stream(d2h_);
  } catch (...) {
  }
}

void CopyEngine::count(std::uint64_t CopyStats::*kind, std::size_t bytes, std::size_t chunks) {
  std::lock_guard<std::mutex> g(mu_);
  ++stats_.copies;
  ++(stats_.*kind);
  stats_.bytes += bytes;
  stats_.chunks += chunks;
}

void CopyEngine::add_lane_time(std::uint64_t copy_ns, std::uint64_t wait_ns) {
  std::lock_guard<std::mutex> g(mu_);
  stats_.lane_copy_ns += copy_ns;
  stats_.lane_wait_ns += wait_ns;
}

CopyStats CopyEngine::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

CopyEngine::Buffer* CopyEngine::acquire(bool wait) {
  Buffer* b = nullptr;
  {
    std::unique_lock<std::mutex> g(mu_);
    auto any_free = [&] {
      for (Buffer& x : pool_)
        if (!x.busy) return true;
      return false;
    };
    // Only a caller holding no buffer may wait: one that holds some must
    // drain them first, or two callers could wait on each other forever.
    if (!wait && !any_free()) return nullptr;
    cv_.wait(g, any_free);
    for (Buffer& x : pool_)
      if (!x.busy) {
        b = &x;
        break;
      }
    b->busy = true;
  }
  if (b->pending) {  // its last DMA must be done before the buffer is rewritten
    // A failed wait or destroy fails this copy, never the pool: the buffer
    // goes back (still pending when the wait failed, so the next taker waits
    // again), and no later caller blocks on a buffer nobody holds.
    try {
      be_.wait_event(b->pending);
    } catch (...) {
      release(b, b->pending);
      throw;
    }
    const prim::Event done = b->pending;
    b->pending = 0;
    try {
      be_.destroy_event(done);
    } catch (...) {
      release(b, 0);
      throw;
    }
  }
  return b;
}

void CopyEngine::release(Buffer* b, prim::Event pending) {
  {
    std::lock_guard<std::mutex> g(mu_);
    b->pending = pending;
    b->busy = false;
  }
  cv_.notify_one();
}

void CopyEngine::run_workers() {
  for (;;) {
    std::shared_ptr<Task> t;
    {
      std::unique_lock<std::mutex> g(jobs_mu_);
      jobs_cv_.wait(g, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping
      t = std::move(jobs_.front());
      jobs_.pop_front();
    }
    t->run();
    {
      std::lock_guard<std::mutex> g(t->mu);
      --t->queued;
    }
    t->cv.notify_all();
  }
}

void CopyEngine::run_lanes(std::size_t lanes, const std::function<void(const std::atomic<bool>&)>& lane) {
  auto t = std::make_shared<Task>();
  t->lane = lane;
  const std::size_t extra = std::min(workers_.size(), lanes > 0 ? lanes - 1 : 0);
  if (extra > 0) {
    t->queued = extra;
    {
      std::lock_guard<std::mutex> g(jobs_mu_);
      for (std::size_t i = 0; i < extra; ++i) jobs_.push_back(t);
    }
    jobs_cv_.notify_all();
  }
  t->run();  // the caller is a lane too: the copy progresses even when every worker is busy elsewhere
  if (extra > 0) {
    std::size_t unstarted = 0;  // lanes no worker took yet: there is nothing left for them
    {
      std::lock_guard<std::mutex> g(jobs_mu_);
      for (auto it = jobs_.begin(); it != jobs_.end();)
        if (*it == t) it = jobs_.erase(it), ++unstarted;
        else ++it;
    }
    std::unique_lock<std::mutex> g(t->mu);
    t->queued -= unstarted;
    t->cv.wait(g, [&] { return t->queued == 0; });
  }
  // The error moves to the caller before it is thrown: a worker may still
  // hold the task and drop it last, and the exception must not be destroyed
  // by a worker while the caller reads it (TSan sees that as a race, since
  // exception_ptr counts its references inside the uninstrumented libstdc++).
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> g(t->mu);
    error = std::move(t->error);
    t->error = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

// Hands out the pieces of one staged copy to its lanes (guided
// self-scheduling): each piece is a share of what is left, between min_piece
// (1 MiB by default) and the staging buffer size, so pieces are large (few
// driver calls) in the middle and shrink towards the end, when a large piece
// would leave the other lanes idle and the DMA queue full behind it. With
// `ramp`, a lane's first pieces are small too (min_piece, then doubling): the
// DMA engine starts after one small piece instead of waiting for every lane's
// first full buffer.
class CopyEngine::Pieces {
 public:
  Pieces(std::size_t n, std::size_t lanes, std::size_t max_piece, std::size_t min_piece, bool ramp)
      : n_(n), lanes_(std::max<std::size_t>(lanes, 1)), max_(max_piece), min_(min_piece), ramp_(ramp) {}
  // `mine`: how many pieces the calling lane has taken so far (lane-local).
  bool take(std::size_t* off, std::size_t* len, unsigned* mine) {
    std::size_t cur = next_.load();
    const std::size_t lo = std::min(min_, max_);
    const std::size_t cap = ramp_ && *mine < 16 ? std::min(max_, lo << *mine) : max_;
    for (;;) {
      if (cur >= n_) return false;
      const std::size_t share = ((n_ - cur) / (2 * lanes_) + 4095) / 4096 * 4096;
      const std::size_t l = std::min(n_ - cur, std::clamp(share, lo, std::max(lo, cap)));
      if (next_.compare_exchange_weak(cur, cur + l)) {
        *off = cur, *len = l;
        ++taken_;
        ++*mine;
        return true;
      }
    }
  }
  std::size_t taken() const { return taken_.load(); }

 private:
  const std::size_t n_, lanes_, max_, min_;
  const bool ramp_;
  std::atomic<std::size_t> next_{0}, taken_{0};
};

std::size_t CopyEngine::lanes_for(std::size_t n) const {
  return std::clamp<std::size_t>(n >> 20, 1, static_cast<std::size_t>(stats_.threads));  // about 1 MiB per lane at least
}

void CopyEngine::start_after(const std::vector<prim::Stream>& waiters, prim::Stream signaller) {
  prim::Event e = be_.record_event(signaller);
  for (prim::Stream w : waiters) be_.stream_wait(w, e);
  be_.destroy_event(e);  // the waits are queued; the event is no longer needed
}

void CopyEngine::finish_before(prim::Stream waiter, const std::vector<prim::Stream>& signallers) {
  for (prim::Stream s : signallers) {
    prim::Event e = be_.record_event(s);
    be_.stream_wait(waiter, e);
    be_.destroy_event(e);
  }
}

void CopyEngine::host_copy(void* dst, const void* src, std::size_t n) const {
  if (opts_.streaming_stores) stream_copy(dst, src, n);
  else std::memcpy(dst, src, n);
}

bool CopyEngine::try_registered_to_device(std::uintptr_t dst, const void* src, std::size_t n, prim::Stream stream) {
  RegistrationCache::Hold h = reg_.use(src, n);
  if (!h) return false;
  be_.copy_to_device_async(dst, src, n, stream);
  prim::Event e = be_.record_event(stream);
  be_.wait_event(e);  // the caller treats the source as pageable: reusable on return
  be_.destroy_event(e);
  count(&CopyStats::registered, n, 0);
  return true;
}

bool CopyEngine::try_registered_to_host(void* dst, std::uintptr_t src, std::size_t n, prim::Stream stream) {
  RegistrationCache::Hold h = reg_.use(dst, n);
  if (!h) return false;
  be_.copy_to_host_async(dst, src, n, stream);
  be_.synchronize_stream(stream);
  count(&CopyStats::registered, n, 0);
  return true;
}

void CopyEngine::to_device(std::uintptr_t dst, const void* src, std::size_t n, prim::Stream stream) {
  if (n == 0) return;
  const auto kind = be_.pointer_kind(src);
  if (kind == prim::Backend::PointerKind::device)
    throw_error(Errc::invalid_argument, "copy to device: source " + hex_ptr(reinterpret_cast<std::uintptr_t>(src)) +
                                            " is device memory (use a device-to-device copy)");
  // Memory the registration cache pinned is still the caller's pageable memory.
  const bool ours = kind == prim::Backend::PointerKind::pinned && reg_.overlaps(src, n);
  const bool pinned = kind == prim::Backend::PointerKind::pinned && !ours;
  if (pinned || n < opts_.direct_below) {
    be_.copy_to_device_async(dst, src, n, stream);
    if (ours) {  // the driver sees pinned memory and will not stage it: wait, as for pageable memory
      prim::Event e = be_.record_event(stream);
      be_.wait_event(e);
      be_.destroy_event(e);
    }
    count(pinned ? &CopyStats::pinned : &CopyStats::direct, n, 0);
    return;
  }
  if (try_registered_to_device(dst, src, n, stream)) return;
  // Start after the caller's earlier work (the destination may still be in use).
  start_after(h2d_, stream);
  const std::size_t lanes = lanes_for(n);
  Pieces pieces(n, lanes, opts_.chunk, opts_.min_piece, opts_.ramp);
  std::atomic<std::size_t> lane_ids{0};
  auto lane = [&](const std::atomic<bool>& failed) {
    const prim::Stream dma = h2d_[lane_ids++ % h2d_.size()];
    unsigned mine = 0;
    LaneClock clock(*this);
    for (;;) {
      clock.start();
      Lease b(*this);  // holds no other buffer, so it may wait
      clock.waited();
      std::size_t off = 0, len = 0;
      if (failed || !pieces.take(&off, &len, &mine)) return;
      host_copy(b.data(), static_cast<const char*>(src) + off, len);
      clock.copied();
      be_.copy_to_device_async(dst + off, b.data(), len, dma);
      b.done_after(be_.record_event(dma));
    }
  };
  std::exception_ptr failure;
  try {
    run_lanes(lanes, lane);
  } catch (...) {
    failure = std::current_exception();
  }
  // The caller's later work starts after the last piece (after those queued, if a lane failed).
  finish_before(stream, h2d_);
  if (failure) std::rethrow_exception(failure);
  count(&CopyStats::staged, n, pieces.taken());
}

void CopyEngine::to_host(void* dst, std::uintptr_t src, std::size_t n, prim::Stream stream) {
  if (n == 0) return;
  const auto kind = be_.pointer_kind(dst);
  if (kind == prim::Backend::PointerKind::device)
    throw_error(Errc::invalid_argument, "copy to host: destination " + hex_ptr(reinterpret_cast<std::uintptr_t>(dst)) +
                                            " is device memory");
  const bool pinned = kind == prim::Backend::PointerKind::pinned && !reg_.overlaps(dst, n);
  if (pinned || n < opts_.direct_below) {
    be_.copy_to_host_async(dst, src, n, stream);
    be_.synchronize_stream(stream);  // to_host returns with the data in place
    count(pinned ? &CopyStats::pinned : &CopyStats::direct, n, 0);
    return;
  }
  if (try_registered_to_host(dst, src, n, stream)) return;
  start_after({d2h_}, stream);
  const std::size_t lanes = lanes_for(n);
  Pieces pieces(n, lanes, opts_.chunk, opts_.min_piece, opts_.ramp);
  // Each lane keeps up to two chunks in flight: the DMA fills one buffer
  // while the lane copies the previous one out.
  auto lane = [&](const std::atomic<bool>& failed) {
    struct InFlight {
      std::unique_ptr<Lease> lease;
      std::size_t off, len;
      prim::Event ev;
    };
    std::deque<InFlight> q;
    unsigned mine = 0;
    LaneClock clock(*this);
    auto issue = [&](bool wait) {
      auto lease = std::make_unique<Lease>(*this, wait);  // only a lane holding nothing may wait
      std::size_t off = 0, len = 0;
      if (!*lease || failed || !pieces.take(&off, &len, &mine)) return false;
      be_.copy_to_host_async(lease->data(), src + off, len, d2h_);
      q.push_back({std::move(lease), off, len, 0});
      q.back().ev = be_.record_event(d2h_);
      return true;
    };
    try {
      for (;;) {
        clock.start();
        if (q.empty() && !issue(true)) return;
        if (q.size() < 2) issue(false);
        InFlight& f = q.front();
        be_.wait_event(f.ev);
        be_.destroy_event(f.ev);
        f.ev = 0;
        clock.waited();
        host_copy(static_cast<char*>(dst) + f.off, f.lease->data(), f.len);
        clock.copied();
        q.pop_front();
      }
    } catch (...) {
      for (auto& f : q) {
        if (f.ev) {
          be_.wait_event(f.ev);  // no DMA may still write a buffer going back to the pool
          be_.destroy_event(f.ev);
        } else {
          be_.synchronize_stream(d2h_);  // queued, but its event was never recorded
        }
      }
      throw;
    }
  };
  run_lanes(lanes, lane);
  count(&CopyStats::staged, n, pieces.taken());
}

}  // namespace memlake::io
