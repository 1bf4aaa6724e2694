#include "io/multipath.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <thread>

#include "core/error.h"

namespace memlake::io {

// Per GPU: its copy engine, and the staging slots it lends as a peer.
struct MultiPath::Gpu {
  prim::Backend* be = nullptr;
  std::unique_ptr<CopyEngine> engine;
  std::mutex busy;  // one share at a time through this GPU's slots
  prim::Stream link = nullptr;  // this GPU's stream for its host<->slot copies
  std::uintptr_t va = 0;        // slots: one reservation, one physical allocation
  std::size_t slot = 0, bytes = 0;
  prim::PhysHandle handle = 0;
  std::vector<int> granted;     // devices the slots are accessible from
  // Per slot: event on a target's forwarding stream after its last read of the slot.
  std::vector<prim::Event> free_after;
  std::vector<prim::Backend*> free_owner;
};

MultiPath::MultiPath(std::vector<prim::Backend*> gpus, Topology topo, const MultiPathOptions& o)
    : topo_(std::move(topo)), opts_(o) {
  topo_.validate();
  if (static_cast<int>(gpus.size()) != topo_.gpus)
    throw_error(Errc::invalid_argument, "multipath: " + std::to_string(gpus.size()) + " GPU backends for a topology of " +
                                            std::to_string(topo_.gpus));
  if (opts_.slots < 2) throw_error(Errc::invalid_argument, "multipath: needs at least 2 slots per peer");
  if (opts_.copy.threads <= 0) {
    const int cores = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 64);
    opts_.copy.threads = std::max(2, cores / topo_.gpus);
  }
  for (int i = 0; i < topo_.gpus; ++i)
    for (int j = 0; j < topo_.gpus; ++j)  // a link the devices cannot use is no link
      if (i != j && topo_.nvlink[i][j] > 0 && !(gpus[i]->can_access_peer(gpus[j]->device()) && gpus[j]->can_access_peer(gpus[i]->device())))
        topo_.nvlink[i][j] = 0;
  for (prim::Backend* b : gpus) {
    auto g = std::make_unique<Gpu>();
    g->be = b;
    g->engine = std::make_unique<CopyEngine>(*b, opts_.copy);
    g->link = b->create_stream();
    g->slot = (opts_.slot + b->granularity() - 1) / b->granularity() * b->granularity();
    g->free_after.assign(static_cast<std::size_t>(opts_.slots), 0);
    g->free_owner.assign(static_cast<std::size_t>(opts_.slots), nullptr);
    gpus_.push_back(std::move(g));
  }
  stats_.bytes_via.assign(gpus_.size(), 0);
}

MultiPath::~MultiPath() {
  try {
    for (auto& [key, s] : forward_) {
      gpus_[static_cast<std::size_t>(key.first)]->be->synchronize_stream(s);
      gpus_[static_cast<std::size_t>(key.first)]->be->destroy_stream(s);
    }
    for (auto& g : gpus_) {
      g->be->synchronize_stream(g->link);
      for (std::size_t k = 0; k < g->free_after.size(); ++k)
        if (g->free_after[k]) g->free_owner[k]->destroy_event(g->free_after[k]);
      if (g->va) {
        g->be->unmap(g->va, g->bytes);
        g->be->release(g->handle);
        g->be->free_reservation(g->va, g->bytes);
      }
      g->be->destroy_stream(g->link);
      g->engine.reset();
    }
  } catch (...) {  // the driver may be shutting down
  }
}

MultiPath::Gpu& MultiPath::gpu(int i) {
  if (i < 0 || i >= static_cast<int>(gpus_.size()))
    throw_error(Errc::invalid_argument, "multipath: no GPU " + std::to_string(i) + " of " + std::to_string(gpus_.size()));
  return *gpus_[static_cast<std::size_t>(i)];
}

CopyEngine& MultiPath::engine(int i) { return *gpu(i).engine; }

MultiPathStats MultiPath::stats() const {
  std::lock_guard<std::mutex> g(const_cast<std::mutex&>(mu_));
  return stats_;
}

void MultiPath::check_target(int target, std::uintptr_t device_ptr, std::size_t n) {
  Gpu& t = gpu(target);
  if (n > 0 && t.be->pointer_kind(reinterpret_cast<const void*>(device_ptr)) != prim::Backend::PointerKind::device)
    throw_error(Errc::invalid_argument, "multipath: " + hex_ptr(device_ptr) + " is not device memory of GPU " +
                                            std::to_string(target));
}

prim::Stream MultiPath::forward_stream(int target, int via) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = forward_.find({target, via});
  if (it != forward_.end()) return it->second;
  return forward_.emplace(std::make_pair(target, via), gpu(target).be->create_stream()).first->second;
}

void MultiPath::ensure_slots(Gpu& p, int target) {  // called with p.busy held
  if (!p.va) {
    const std::size_t bytes = p.slot * static_cast<std::size_t>(opts_.slots);
    std::uintptr_t va = p.be->reserve(bytes, 0);
    prim::PhysHandle h = 0;
    try {
      h = p.be->create(bytes);
      p.be->map(va, bytes, h);
      p.be->set_access(va, bytes, prim::Access::read_write);
    } catch (...) {
      try {
        if (h) p.be->unmap(va, bytes);
      } catch (...) {
      }
      if (h) p.be->release(h);
      p.be->free_reservation(va, bytes);
      throw;
    }
    p.va = va, p.handle = h, p.bytes = bytes;
  }
  const int dev = gpu(target).be->device();
  if (std::find(p.granted.begin(), p.granted.end(), dev) == p.granted.end()) {
    p.be->grant_peer(p.va, p.bytes, dev);  // also for the same device (loopback): set_access is idempotent
    p.granted.push_back(dev);
  }
}

prim::Event MultiPath::peer_h2d(int target, const Share& s, std::uintptr_t dst, const char* src, prim::Event start) {
  Gpu& p = gpu(s.via);
  prim::Backend& tb = *gpu(target).be;
  std::lock_guard<std::mutex> busy(p.busy);
  ensure_slots(p, target);
  prim::Stream fwd = forward_stream(target, s.via);
  tb.stream_wait(fwd, start);  // the destination may still be in use by earlier work
  try {
    std::size_t k = 0;
    for (std::size_t off = 0; off < s.bytes; off += p.slot, k = (k + 1) % p.free_after.size()) {
      const std::size_t c = std::min(p.slot, s.bytes - off);
      const std::uintptr_t slot = p.va + k * p.slot;
      if (p.free_after[k]) {  // the target's last copy out of this slot comes first
        p.be->stream_wait(p.link, p.free_after[k]);
        p.free_owner[k]->destroy_event(p.free_after[k]);
        p.free_after[k] = 0;
      }
      p.engine->to_device(slot, src + s.offset + off, c, p.link);
      prim::Event ready = p.be->record_event(p.link);
      tb.stream_wait(fwd, ready);
      p.be->destroy_event(ready);
      tb.copy_device_async(dst + s.offset + off, slot, c, fwd);
      p.free_after[k] = tb.record_event(fwd);
      p.free_owner[k] = &tb;
    }
  } catch (...) {
    tb.synchronize_stream(fwd);  // nothing of a failed share is left running
    p.be->synchronize_stream(p.link);
    throw;
  }
  return tb.record_event(fwd);
}

void MultiPath::peer_d2h(int target, const Share& s, char* dst, std::uintptr_t src, prim::Event start) {
  Gpu& p = gpu(s.via);
  prim::Backend& tb = *gpu(target).be;
  std::lock_guard<std::mutex> busy(p.busy);
  ensure_slots(p, target);
  prim::Stream fwd = forward_stream(target, s.via);
  tb.stream_wait(fwd, start);
  const std::size_t pieces = (s.bytes + p.slot - 1) / p.slot;
  std::vector<prim::Event> ready(pieces, 0);
  auto piece = [&](std::size_t i) { return std::min(p.slot, s.bytes - i * p.slot); };
  auto slot = [&](std::size_t i) { return p.va + (i % p.free_after.size()) * p.slot; };
  auto push = [&](std::size_t i) {  // target -> peer slot, over NVLink
    tb.copy_device_async(slot(i), src + s.offset + i * p.slot, piece(i), fwd);
    ready[i] = tb.record_event(fwd);
  };
  try {
    if (pieces > 0) push(0);
    for (std::size_t i = 0; i < pieces; ++i) {
      // The slot of piece i+1 was last drained by piece i+1-slots, which
      // to_host() below has finished: it returns with the data landed.
      if (i + 1 < pieces) push(i + 1);
      p.be->stream_wait(p.link, ready[i]);
      tb.destroy_event(ready[i]);
      ready[i] = 0;
      p.engine->to_host(dst + s.offset + i * p.slot, slot(i), piece(i), p.link);
    }
  } catch (...) {
    tb.synchronize_stream(fwd);
    p.be->synchronize_stream(p.link);
    for (prim::Event e : ready)
      if (e) tb.destroy_event(e);
    throw;
  }
}

template <class ShareFn, class DirectFn>
Plan MultiPath::run(int target, Direction dir, std::size_t n, prim::Stream stream, ShareFn share, DirectFn direct) {
  Plan pl = plan(topo_, target, dir, n, opts_.plan);
  prim::Backend& tb = *gpu(target).be;
  if (pl.shares.size() <= 1) {  // the direct path alone
    if (n > 0) direct(pl.shares.empty() ? Share{target, 0, n, 0} : pl.shares[0]);
  } else {
    const prim::Event start = tb.record_event(stream);
    const std::size_t m = pl.shares.size();
    std::vector<std::exception_ptr> errors(m);
    std::vector<prim::Event> done(m, 0);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < m; ++i) {
      if (pl.shares[i].via == target) continue;
      threads.emplace_back([&, i] {
        try {
          done[i] = share(pl.shares[i], start);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
    for (std::size_t i = 0; i < m; ++i) {
      if (pl.shares[i].via != target) continue;
      try {
        direct(pl.shares[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
    for (auto& t : threads) t.join();
    for (prim::Event e : done)
      if (e) {  // later work on the caller's stream waits for every share
        tb.stream_wait(stream, e);
        tb.destroy_event(e);
      }
    tb.destroy_event(start);
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }
  std::lock_guard<std::mutex> g(mu_);
  ++stats_.transfers;
  if (pl.shares.size() > 1) ++stats_.split;
  for (const Share& s : pl.shares) stats_.bytes_via[static_cast<std::size_t>(s.via)] += s.bytes;
  return pl;
}

Plan MultiPath::to_device(int target, std::uintptr_t dst, const void* src, std::size_t n, prim::Stream stream) {
  check_target(target, dst, n);
  const char* s = static_cast<const char*>(src);
  return run(
      target, Direction::h2d, n, stream,
      [&](const Share& sh, prim::Event start) { return peer_h2d(target, sh, dst, s, start); },
      [&](const Share& sh) { gpu(target).engine->to_device(dst + sh.offset, s + sh.offset, sh.bytes, stream); });
}

Plan MultiPath::to_host(int target, void* dst, std::uintptr_t src, std::size_t n, prim::Stream stream) {
  check_target(target, src, n);
  char* d = static_cast<char*>(dst);
  return run(
      target, Direction::d2h, n, stream,
      [&](const Share& sh, prim::Event start) {
        peer_d2h(target, sh, d, src, start);
        return prim::Event{0};
      },
      [&](const Share& sh) { gpu(target).engine->to_host(d + sh.offset, src + sh.offset, sh.bytes, stream); });
}

namespace {

// Device memory for measurements: one mapped, accessible range.
struct Scratch {
  prim::Backend& be;
  std::size_t bytes;
  std::uintptr_t va = 0;
  prim::PhysHandle h = 0;
  Scratch(prim::Backend& b, std::size_t n) : be(b), bytes((n + b.granularity() - 1) / b.granularity() * b.granularity()) {
    va = be.reserve(bytes, 0);
    h = be.create(bytes);
    be.map(va, bytes, h);
    be.set_access(va, bytes, prim::Access::read_write);
  }
  ~Scratch() {
    try {
      be.unmap(va, bytes);
      be.release(h);
      be.free_reservation(va, bytes);
    } catch (...) {
    }
  }
};

template <class F>
double best_gbps(prim::Backend& be, prim::Stream s, std::size_t n, F issue) {
  double best = 0;
  for (int rep = 0; rep < 4; ++rep) {  // the first run warms the path up
    auto t0 = std::chrono::steady_clock::now();
    issue();
    be.synchronize_stream(s);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0 && secs > 0) best = std::max(best, static_cast<double>(n) / secs / 1e9);
  }
  return best;
}

}  // namespace

Topology measure_topology(const std::vector<prim::Backend*>& gpus, std::size_t bytes, std::string* text) {
  if (gpus.empty()) throw_error(Errc::invalid_argument, "measure_topology: no GPUs");
  std::ostringstream d;
  d << "gpus " << gpus.size() << "\n";
  std::vector<std::unique_ptr<Scratch>> mem;
  std::vector<prim::Stream> streams;
  for (prim::Backend* b : gpus) {
    mem.push_back(std::make_unique<Scratch>(*b, bytes));
    streams.push_back(b->create_stream());
  }
  void* host = gpus[0]->alloc_pinned(bytes);
  std::memset(host, 1, bytes);
  char buf[96];
  try {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      prim::Backend& b = *gpus[i];
      const double h2d = best_gbps(b, streams[i], bytes, [&] { b.copy_to_device_async(mem[i]->va, host, bytes, streams[i]); });
      const double d2h = best_gbps(b, streams[i], bytes, [&] { b.copy_to_host_async(host, mem[i]->va, bytes, streams[i]); });
      std::snprintf(buf, sizeof buf, "pcie gpu %zu %.1f %.1f\n", i, h2d, d2h);
      d << buf;
    }
    for (std::size_t i = 0; i < gpus.size(); ++i)
      for (std::size_t j = 0; j < gpus.size(); ++j) {
        if (i == j || !gpus[j]->can_access_peer(gpus[i]->device()) || !gpus[i]->can_access_peer(gpus[j]->device())) continue;
        // i -> j, issued by j (pulling, as a target does when a peer forwards to it).
        gpus[i]->grant_peer(mem[i]->va, mem[i]->bytes, gpus[j]->device());
        const double r = best_gbps(*gpus[j], streams[j], bytes,
                                   [&] { gpus[j]->copy_device_async(mem[j]->va, mem[i]->va, bytes, streams[j]); });
        std::snprintf(buf, sizeof buf, "nvlink %zu %zu %.1f\n", i, j, r);
        d << buf;
      }
  } catch (...) {
    gpus[0]->free_pinned(host);
    for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i]->destroy_stream(streams[i]);
    throw;
  }
  gpus[0]->free_pinned(host);
  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i]->destroy_stream(streams[i]);
  if (text) *text = d.str();
  return Topology::parse(d.str());
}

}  // namespace memlake::io
