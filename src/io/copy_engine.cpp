#include "io/copy_engine.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

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

CopyEngine::CopyEngine(prim::Backend& backend, const CopyOptions& opts) : be_(backend), opts_(opts) {
  if (opts_.chunk == 0 || opts_.buffers < 2)
    throw_error(Errc::invalid_argument, "copy engine: needs a chunk size and at least 2 staging buffers");
  int threads = opts_.threads;
  if (threads <= 0) threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 2, 1, 8);
  stats_.threads = threads;
  h2d_ = be_.create_stream();
  d2h_ = be_.create_stream();
  try {
    pool_.resize(static_cast<std::size_t>(opts_.buffers));
    for (Buffer& b : pool_) b.p = be_.alloc_pinned(opts_.chunk);
  } catch (...) {
    for (Buffer& b : pool_)
      if (b.p) be_.free_pinned(b.p);
    be_.destroy_stream(h2d_);
    be_.destroy_stream(d2h_);
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
    be_.synchronize_stream(h2d_);
    be_.synchronize_stream(d2h_);
    for (Buffer& b : pool_) {
      if (b.pending) be_.destroy_event(b.pending);
      be_.free_pinned(b.p);
    }
    be_.destroy_stream(h2d_);
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
    be_.wait_event(b->pending);
    be_.destroy_event(b->pending);
    b->pending = 0;
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
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> g(jobs_mu_);
      jobs_cv_.wait(g, [&] { return stop_ || !jobs_.empty(); });
      if (stop_ && jobs_.empty()) return;
      job = std::move(jobs_.back());
      jobs_.pop_back();
    }
    job();
    {
      std::lock_guard<std::mutex> g(jobs_mu_);
      --jobs_left_;
    }
    done_cv_.notify_all();
  }
}

void CopyEngine::parallel_memcpy(void* dst, const void* src, std::size_t n) {
  const std::size_t parts = workers_.empty() ? 1 : std::min<std::size_t>(workers_.size() + 1, std::max<std::size_t>(1, n >> 20));
  if (parts == 1) {
    std::memcpy(dst, src, n);
    return;
  }
  const std::size_t slice = (n / parts + 4095) / 4096 * 4096;
  // One copy at a time uses the workers (copies from several callers queue here).
  std::lock_guard<std::mutex> serial(memcpy_mu_);
  {
    std::lock_guard<std::mutex> g(jobs_mu_);
    for (std::size_t i = 1; i < parts && i * slice < n; ++i) {
      const std::size_t off = i * slice, len = std::min(slice, n - off);
      jobs_.push_back([=] { std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, len); });
      ++jobs_left_;
    }
  }
  jobs_cv_.notify_all();
  std::memcpy(dst, src, std::min(slice, n));
  std::unique_lock<std::mutex> g(jobs_mu_);
  done_cv_.wait(g, [&] { return jobs_left_ == 0; });
}

void CopyEngine::to_device(std::uintptr_t dst, const void* src, std::size_t n, prim::Stream stream) {
  if (n == 0) return;
  const auto kind = be_.pointer_kind(src);
  if (kind == prim::Backend::PointerKind::device)
    throw_error(Errc::invalid_argument, "copy to device: source " + hex_ptr(reinterpret_cast<std::uintptr_t>(src)) +
                                            " is device memory (use a device-to-device copy)");
  if (kind == prim::Backend::PointerKind::pinned || n < opts_.direct_below) {
    be_.copy_to_device_async(dst, src, n, stream);
    count(kind == prim::Backend::PointerKind::pinned ? &CopyStats::pinned : &CopyStats::direct, n, 0);
    return;
  }
  // Start after the caller's earlier work (the destination may still be in use).
  prim::Event start = be_.record_event(stream);
  be_.stream_wait(h2d_, start);
  be_.destroy_event(start);  // the wait is queued; the event is no longer needed
  std::size_t chunks = 0;
  for (std::size_t off = 0; off < n; off += opts_.chunk, ++chunks) {
    const std::size_t len = std::min(opts_.chunk, n - off);
    Lease b(*this);
    parallel_memcpy(b.data(), static_cast<const char*>(src) + off, len);
    be_.copy_to_device_async(dst + off, b.data(), len, h2d_);
    b.done_after(be_.record_event(h2d_));
  }
  // The caller's later work starts after the last chunk.
  prim::Event end = be_.record_event(h2d_);
  be_.stream_wait(stream, end);
  be_.destroy_event(end);
  count(&CopyStats::staged, n, chunks);
}

void CopyEngine::to_host(void* dst, std::uintptr_t src, std::size_t n, prim::Stream stream) {
  if (n == 0) return;
  const auto kind = be_.pointer_kind(dst);
  if (kind == prim::Backend::PointerKind::device)
    throw_error(Errc::invalid_argument, "copy to host: destination " + hex_ptr(reinterpret_cast<std::uintptr_t>(dst)) +
                                            " is device memory");
  if (kind == prim::Backend::PointerKind::pinned || n < opts_.direct_below) {
    be_.copy_to_host_async(dst, src, n, stream);
    be_.synchronize_stream(stream);  // to_host returns with the data in place
    count(kind == prim::Backend::PointerKind::pinned ? &CopyStats::pinned : &CopyStats::direct, n, 0);
    return;
  }
  prim::Event start = be_.record_event(stream);
  be_.stream_wait(d2h_, start);
  be_.destroy_event(start);
  // Chunks in flight ahead of the host copy-out: as many as staging buffers
  // can be had, at least one.
  struct InFlight {
    std::unique_ptr<Lease> lease;
    std::size_t off, len;
    prim::Event ev;
  };
  std::vector<InFlight> q;
  std::size_t next = 0, chunks = 0, done = 0;
  auto issue = [&](bool wait) {
    auto lease = std::make_unique<Lease>(*this, wait);
    if (!*lease) return false;
    const std::size_t len = std::min(opts_.chunk, n - next);
    be_.copy_to_host_async(lease->data(), src + next, len, d2h_);
    q.push_back({std::move(lease), next, len, be_.record_event(d2h_)});
    next += len;
    return true;
  };
  try {
    while (done < q.size() || next < n) {
      if (done == q.size()) issue(true);  // nothing in flight: may wait for a buffer
      while (next < n && issue(false)) {
      }
      InFlight& f = q[done++];
      be_.wait_event(f.ev);
      be_.destroy_event(f.ev);
      f.ev = 0;
      parallel_memcpy(static_cast<char*>(dst) + f.off, f.lease->data(), f.len);
      f.lease.reset();
      ++chunks;
    }
  } catch (...) {
    for (auto& f : q)
      if (f.ev) {
        be_.wait_event(f.ev);  // no DMA may still write a buffer going back to the pool
        be_.destroy_event(f.ev);
      }
    throw;
  }
  count(&CopyStats::staged, n, chunks);
}

}  // namespace memlake::io
