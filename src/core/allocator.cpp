#include "core/allocator.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>

#include "core/error.h"
#include "core/fault_report.h"

namespace memlake::core {

namespace {
// Options::handle_size in pages (slots) of this backend; 0 means one page, auto 8 MiB where it is
// a multiple of a smaller page (at most kMaxSlots of them).
std::uint32_t handle_slots(const Options& o, const prim::Backend& be) {
  const std::size_t page = be.granularity();
  constexpr std::size_t kMaxSlots = 1024;
  if (o.handle_size == Options::kAutoHandleSize) {
    const std::size_t k = Options::kAutoHandleBytes / page;
    return k > 1 && k <= kMaxSlots && Options::kAutoHandleBytes % page == 0 ? static_cast<std::uint32_t>(k) : 1;
  }
  if (o.handle_size == 0) return 1;
  if (o.handle_size % page != 0 || o.handle_size / page > kMaxSlots)
    throw_error(Errc::invalid_argument, "handle_size (" + format_bytes(o.handle_size) +
                                            ") must be a multiple of the page size (" + format_bytes(page) +
                                            ") and at most 1024 pages");
  return static_cast<std::uint32_t>(o.handle_size / page);
}
// Options::large_handle_size in pages, 0 when off; a multiple of the handle size.
std::uint32_t large_handle_slots(const Options& o, const prim::Backend& be) {
  if (o.large_handle_size == 0) return 0;
  const std::size_t page = be.granularity(), handle = handle_slots(o, be) * page;
  if (o.large_handle_size <= handle || o.large_handle_size % handle != 0 || o.large_handle_size / page > 1024)
    throw_error(Errc::invalid_argument, "large_handle_size (" + format_bytes(o.large_handle_size) +
                                            ") must be a multiple of the handle size (" + format_bytes(handle) +
                                            "), larger than it, and at most 1024 pages");
  return static_cast<std::uint32_t>(o.large_handle_size / page);
}
}  // namespace

Allocator::Allocator(prim::Backend& backend, const Options& opts)
    : be_(backend),
      opts_(opts),
      tracker_(backend),
      pool_(backend, tracker_, handle_slots(opts, backend), large_handle_slots(opts, backend)),
      small_(*this, backend.granularity()),
      // Safety modes give each allocation its own view and unmap it on free: nothing to keep.
      parked_(4, opts.guard || opts.quarantine > 0 ? 0 : static_cast<std::size_t>(std::max(0, opts.recent_spans))),
      cap_(opts.memory_cap),
      safe_(opts.guard || opts.quarantine > 0) {
  if (safe_ && backend.name() == "host") fault::install();
  pool_.set_restore_handle(opts.tier_handle_size);
  unparked_.reserve(parked_.capacity() + 1);  // a free pushes out at most one; unpark() drains all
  if (opts_.small_max >= pool_.page_size())
    throw_error(Errc::invalid_argument, "small_max (" + std::to_string(opts_.small_max) +
                                            ") must be smaller than the page size (" +
                                            std::to_string(pool_.page_size()) + ")");
}

Allocator::~Allocator() {
  try {
    be_.synchronize_device();
  } catch (...) {
    // Destruction goes on: nothing may throw out of a destructor.
  }
  for (auto [va, bytes] : quarantined_) {
    fault::remove(va);
    pool_.free_range(va, bytes);  // never throws: a failure keeps the range stranded
  }
}

void* Allocator::alloc_tagged(std::size_t size, Tag tag, AllocInfo* out, std::uint16_t label) {
  AllocInfo info;
  if (size == 0) {
    if (out) *out = info;
    return nullptr;
  }
  if (size > kMaxAlloc)
    throw_error(Errc::invalid_argument, "alloc of " + format_bytes(size) + ": larger than any device (limit " +
                                            format_bytes(kMaxAlloc) + ")");
  records_.reserve_one();  // no growth (and no throw) after the memory is taken
  if (safe_) {
    void* p = alloc_safe(size, tag, info);
    if (out) *out = info;
    return p;
  }
  if (size <= opts_.small_max) {
    const std::size_t r = SmallPool::round(size);
    const std::size_t slabs = small_.slabs();
    SmallPool::Block* b = small_.alloc(r, tag);  // a new slab goes through acquire()
    info.rounded = r;
    info.path = Path::small;
    if (small_.slabs() > slabs) info.pages_created = last_slab_created_;
    const std::uintptr_t p = small_.ptr(b);
    records_.insert(p, Record{size, tag, b, Span{}, label});
    if (out) *out = info;
    return reinterpret_cast<void*>(p);
  }
  const std::size_t page = pool_.page_size();
  const std::size_t pages = (size + page - 1) / page;
  if (pages > std::numeric_limits<std::uint32_t>::max())
    throw_error(Errc::invalid_argument, "alloc of " + format_bytes(size) + ": too many pages");
  Span s;
  if (auto e = parked_.take(static_cast<std::uint32_t>(pages), tag)) {  // freed a moment ago by this stream
    s = e->span;
    info.path = pool_.view_stitched(s.view) ? Path::fit_stitched : Path::fit;
  } else {
    s = acquire(static_cast<std::uint32_t>(pages), tag, size, info);
  }
  info.rounded = static_cast<std::size_t>(s.count) * page;  // whole pages: large handles may round further
  records_.insert(s.va, Record{size, tag, nullptr, s, label});
  if (out) *out = info;
  return reinterpret_cast<void*>(s.va);
}

bool Allocator::settle_others(Tag tag, bool block) {
  const std::size_t before = pool_.usable_free_pages(tag);
  if (tracker_.frozen()) block = false;  // a wait would invalidate a capture in progress
  for (Tag t : pool_.tags_with_unsettled()) {
    if (t == tag || tracker_.held(t)) continue;  // our own frees are usable already; a graph pool's stay apart
    std::uint64_t done;
    if (block) {
      tracker_.wait(t, tracker_.current(t));
      done = tracker_.current(t);
    } else {
      done = tracker_.poll(t, tracker_.current(t));
    }
    pool_.settle(t, done);
  }
  return pool_.usable_free_pages(tag) > before;
}

bool Allocator::unpark() {
  if (parked_.empty()) return false;
  parked_.drain(unparked_);
  give_back_all(unparked_);
  return true;
}

void Allocator::give_back_all(std::vector<SpanCache::Entry>& es) {
  for (const SpanCache::Entry& e : es) pool_.give_back(e.span, e.tag, e.seq);
  es.clear();
}

void* Allocator::alloc_safe(std::size_t size, Tag tag, AllocInfo& info) {
  // Its own view, with the allocation's end (512-byte aligned) at the end of
  // the mapped pages; the view's next slot is never mapped (views reserve
  // twice their size), so an overrun past that point faults.
  const std::size_t page = pool_.page_size();
  const std::size_t r = SmallPool::round(size);
  const std::size_t pages = (r + page - 1) / page;
  if (pages > std::numeric_limits<std::uint32_t>::max())
    throw_error(Errc::invalid_argument, "alloc of " + format_bytes(size) + ": too many pages");
  Span s = acquire(static_cast<std::uint32_t>(pages), tag, size, info, /*fresh=*/true);
  info.rounded = static_cast<std::size_t>(s.count) * page;
  const std::uintptr_t end = s.va + info.rounded;
  const std::uintptr_t p = opts_.guard ? end - r : s.va;
  if (opts_.guard) fault::add_guard(end, end + page, p, size);
  records_.insert(p, Record{size, tag, nullptr, s});
  return reinterpret_cast<void*>(p);
}

void Allocator::free_safe(std::uintptr_t ptr, const Record& r) {
  const std::uintptr_t end = r.span.va + static_cast<std::size_t>(r.span.count) * pool_.page_size();
  if (opts_.guard) fault::remove(end);
  pool_.give_back(r.span, r.tag, tracker_.note_free(r.tag));
  // Unmap now: nothing may reach this memory through this range any more.
  std::pair<std::uintptr_t, std::size_t> range;
  try {
    range = pool_.retire_view(r.span.view, opts_.quarantine > 0);
  } catch (const Error&) {
    // The free itself is done; the view stays idle (consistent, perhaps with
    // holes) and a later trim unmaps it.
    fault::set_free_count(++frees_);
    return;
  }
  fault::set_free_count(++frees_);
  if (opts_.quarantine == 0) return;
  fault::add_freed(range.first, range.first + range.second, ptr, r.requested, frees_);
  quarantined_.push_back(range);
  while (quarantined_.size() > opts_.quarantine) {
    fault::remove(quarantined_.front().first);
    pool_.free_range(quarantined_.front().first, quarantined_.front().second);
    quarantined_.pop_front();
  }
}

Span Allocator::acquire(std::uint32_t n, Tag tag, std::size_t request, AllocInfo& info, bool fresh) {
  TakeInfo ti;
  auto fit = [&]() -> std::optional<Span> {
    if (fresh) return std::nullopt;
    auto s = pool_.take_fit(n, tag, &ti);
    if (s) info.path = ti.stitched_view ? Path::fit_stitched : Path::fit;
    return s;
  };
  if (auto s = fit()) return *s;
  if (capture_guard_ && !tracker_.held(tag)) refuse_unannounced_capture(tag);
  // The slow path is timed (its driver calls included); the hot path above is not.
  struct SlowTimer {
    AllocInfo& info;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~SlowTimer() {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
      info.slow_ns = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(ns));  // 0 means the hot path
    }
  } timer{info};
  // Recently freed spans go back to the pool before anything costs a map or new memory.
  if (unpark())
    if (auto s = fit()) return *s;
  if (settle_others(tag, false))
    if (auto s = fit()) return *s;

  const std::size_t page = pool_.page_size();
  auto new_pages = [&]() -> std::size_t {
    if (!opts_.stitch) return n;
    const std::size_t usable = pool_.usable_free_pages(tag);
    return n > usable ? n - usable : 0;
  };
  auto over_cap = [&] { return cap_ && pool_.reserved_bytes() + new_pages() * page > cap_; };

  if (new_pages() > 0 && small_.drop_empty() > 0)
    if (auto s = fit()) return *s;
  if (over_cap()) {
    // Wait for other streams' frees; without stitching, also give free
    // pages back so that new ones fit under the cap.
    if (settle_others(tag, true))
      if (auto s = fit()) return *s;
    if (over_cap() && !opts_.stitch && pool_.free_pages() > 0 && !capturing()) empty_cache();
    if (over_cap())
      oom(request, tag, "the request needs " + format_bytes(new_pages() * page) + " of new memory beyond the cap");
  }
  const std::uint32_t reuse = opts_.stitch ? n : 0;
  Span s;
  try {
    // The cheapest of: re-mapping part of an idle view, extending a view at
    // its tail, stitching a new view. Costs per page on the H200 (anchors.md):
    // a page mapped is about 38 us (cuMemMap and its share of
    // cuMemSetAccess), a page re-mapped by a repair about 59 us (cuMemUnmap
    // first): a repair of r pages wins when 59 r < 38 x the alternative,
    // i.e. r < about 2/3 of it.
    std::optional<Span> ext;
    if (opts_.stitch && !fresh && !tracker_.frozen()) {  // a repair unmaps: not during a capture
      const std::uint32_t extension = pool_.extension_maps(n, tag).value_or(n);
      const auto repair_limit = static_cast<std::uint32_t>((std::uint64_t{extension} * 2 + 2) / 3);
      ext = pool_.take_repaired(n, tag, reuse, repair_limit, &ti);
      if (!ext) ext = pool_.take_extended(n, tag, reuse, &ti);
    }
    s = ext ? *ext : pool_.take_stitched(n, tag, reuse, &ti);
  } catch (const Error& e) {
    if (e.code() != Errc::out_of_memory) throw;
    // The device itself is full: other streams' frees are the last resort.
    if (!settle_others(tag, true)) oom(request, tag, e.what());
    try {
      s = pool_.take_stitched(n, tag, reuse, &ti);
    } catch (const Error& e2) {
      if (e2.code() == Errc::out_of_memory) oom(request, tag, e2.what());
      throw;
    }
  }
  info.pages_created = ti.pages_created;
  info.pages_reused = ti.pages_reused;
  info.stitch_made = ti.pages_reused > 0;
  info.repaired = ti.repaired;
  info.path = ti.pages_created ? Path::grown : Path::stitched;
  if (!tracker_.frozen())  // unmapping during a capture could invalidate it: the next allocation after it trims
    pool_.trim_views(static_cast<std::size_t>(std::min(opts_.max_mapped_ratio * static_cast<double>(pool_.pages()), 1e18)));
  return s;
}

void Allocator::refuse_unannounced_capture(Tag tag) {
  const prim::Stream s = tracker_.stream_of(tag);
  if (std::find(capturing_.begin(), capturing_.end(), s) != capturing_.end()) return;
  if (be_.is_capturing(s))
    throw_error(Errc::invalid_argument,
                "allocation on a stream under CUDA graph capture that memlake was not told about "
                "(memlake_capture_begin; memlake.torch wraps torch.cuda.CUDAGraph to call it): memory freed "
                "before the capture could be reused while the graph still uses it");
}

void Allocator::set_capturing(prim::Stream s, bool on) {
  auto it = std::find(capturing_.begin(), capturing_.end(), s);
  if (on && it == capturing_.end()) capturing_.push_back(s);
  if (!on && it != capturing_.end()) capturing_.erase(it);
  tracker_.set_frozen(!capturing_.empty());
}

void Allocator::release_graph_tag(Tag t) {
  tracker_.complete(t);
  pool_.settle(t, std::numeric_limits<std::uint64_t>::max());
  tracker_.unhold(t);
}

void Allocator::oom(std::size_t request, Tag tag, const std::string& why) {
  std::string msg = "out of memory: cannot allocate " + format_bytes(request) + " on device " +
                    std::to_string(be_.device()) + " (" + be_.name() + " backend): " + why + "; reserved " +
                    format_bytes(pool_.reserved_bytes()) + ", in use " +
                    format_bytes(pool_.reserved_bytes() - pool_.free_pages() * pool_.page_size()) + ", free " +
                    format_bytes(pool_.usable_free_pages(tag) * pool_.page_size()) + " usable by this stream, cap " +
                    (cap_ ? format_bytes(cap_) : std::string("none"));
  throw_error(Errc::out_of_memory, msg);
}

Span Allocator::acquire_slab(Tag tag) {
  AllocInfo info;
  Span s = acquire(1, tag, pool_.page_size(), info);
  last_slab_created_ = info.pages_created;
  return s;
}

void Allocator::release_slab(const Span& s, Tag tag) { pool_.give_back(s, tag, tracker_.current(tag)); }

FreeInfo Allocator::free(void* ptr) {
  if (!ptr) return {};
  Record r;
  if (!records_.take(reinterpret_cast<std::uintptr_t>(ptr), &r))
    throw_error(Errc::invalid_argument, "free(" + hex_ptr(reinterpret_cast<std::uintptr_t>(ptr)) +
                                            "): not a live allocation of this allocator on device " +
                                            std::to_string(be_.device()) + " (double free or foreign pointer)");
  if (safe_) {
    free_safe(reinterpret_cast<std::uintptr_t>(ptr), r);
    return FreeInfo{r.requested, static_cast<std::size_t>(r.span.count) * pool_.page_size()};
  }
  if (r.evicted) {  // no pages to give back: its address becomes free with its view
    pool_.drop_evicted(r.span);
    return FreeInfo{r.requested, static_cast<std::size_t>(r.span.count) * pool_.page_size(), true};
  }
  if (r.readonly) pool_.protect_span(r.span, prim::Access::read_write);  // its pages serve others next
  const std::uint64_t seq = tracker_.note_free(r.tag);
  FreeInfo fi{r.requested, 0};
  if (r.block) {
    fi.rounded = small_.size(r.block);
    small_.free(r.block);
  } else {
    fi.rounded = static_cast<std::size_t>(r.span.count) * pool_.page_size();
    if (parked_.enabled()) {
      parked_.put(SpanCache::Entry{r.span, r.tag, seq}, unparked_);
      give_back_all(unparked_);  // what the cache pushed out
    } else {
      pool_.give_back(r.span, r.tag, seq);
    }
  }
  return fi;
}

std::size_t Allocator::size_of(const void* ptr) const {
  const Record* r = records_.find(reinterpret_cast<std::uintptr_t>(ptr));
  return r ? r->requested : 0;
}

prim::Stream Allocator::stream_of(const void* ptr) const {
  const Record* r = records_.find(reinterpret_cast<std::uintptr_t>(ptr));
  return r ? tracker_.stream_of(r->tag) : nullptr;
}

std::size_t Allocator::empty_cache(std::size_t want) {
  if (capturing())
    throw_error(Errc::invalid_argument, "empty_cache during CUDA graph capture (it would synchronise the device)");
  unpark();
  small_.drop_empty();
  be_.synchronize_device();  // no kernel can touch freed memory any more
  tracker_.mark_all_complete();
  for (Tag t : pool_.tags_with_unsettled())
    if (!tracker_.held(t)) pool_.settle(t, std::numeric_limits<std::uint64_t>::max());
  return pool_.release_free(want);
}

void Allocator::set_memory_cap(std::size_t bytes) {
  cap_ = bytes;
  if (cap_ && pool_.reserved_bytes() > cap_) empty_cache();
}

Allocator::Record& Allocator::large_record(void* ptr, const char* what) {
  Record* r = records_.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (!r)
    throw_error(Errc::invalid_argument, std::string(what) + "(" + hex_ptr(reinterpret_cast<std::uintptr_t>(ptr)) +
                                            "): not a live allocation of this allocator on device " +
                                            std::to_string(be_.device()));
  if (r->block || safe_)
    throw_error(Errc::invalid_argument, std::string(what) + "(" + hex_ptr(reinterpret_cast<std::uintptr_t>(ptr)) +
                                            "): a " + format_bytes(r->requested) +
                                            (safe_ ? " allocation in a memory-safety mode" : " allocation shares a slab") +
                                            ": only large allocations (over small_max) change residency");
  return *r;
}

Resident Allocator::as_resident(const Record& r) const {
  return Resident{r.span.va, r.requested, static_cast<std::size_t>(r.span.count) * pool_.page_size(), r.label,
                  r.evicted, r.readonly, tracker_.stream_of(r.tag)};
}

void Allocator::residents(std::vector<Resident>& out) const {
  records_.for_each([&](std::uintptr_t, const Record& r) {
    if (!r.block && !safe_) out.push_back(as_resident(r));
  });
}

std::size_t Allocator::evict(void* ptr, bool release) {
  Record& r = large_record(ptr, "evict");
  if (r.evicted) throw_error(Errc::invalid_argument, "evict(" + hex_ptr(r.span.va) + "): already evicted");
  // A read-only span needs no access change first: evict_span unmaps its whole range, and
  // whatever maps its pages again (a restore, another view) sets the access it needs.
  // (The driver charges about 0.1 ms a call: a third of a repeat sleep of 20 GiB of weights.)
  const std::size_t bytes = pool_.evict_span(r.span, release);
  r.evicted = true;
  r.readonly = false;
  return bytes;
}

void Allocator::restore(void* ptr) {
  Record& r = large_record(ptr, "restore");
  if (!r.evicted) throw_error(Errc::invalid_argument, "restore(" + hex_ptr(r.span.va) + "): not evicted");
  const std::size_t page = pool_.page_size();
  // Free pages first; new memory for the rest, within the cap (restore_span
  // counts what its fill really takes). When the device (or the cap) is
  // full, the cache goes back to the driver first.
  auto attempt = [&] {
    const std::size_t left = cap_ ? (cap_ - std::min(cap_, pool_.reserved_bytes())) / page : SIZE_MAX;
    pool_.restore_span(r.span, r.span.count, prim::Access::read_write, nullptr, left);
  };
  unpark();
  try {
    attempt();
  } catch (const Error& e) {
    if (e.code() != Errc::out_of_memory) throw;
    empty_cache();
    try {
      attempt();
    } catch (const Error& e2) {
      if (e2.code() != Errc::out_of_memory) throw;
      oom(r.requested, kGlobal, std::string("restoring an evicted allocation: ") + e2.what());
    }
  }
  r.evicted = false;
}

void Allocator::set_readonly(void* ptr, bool readonly) {
  Record& r = large_record(ptr, "set_readonly");
  if (r.evicted) throw_error(Errc::invalid_argument, "set_readonly(" + hex_ptr(r.span.va) + "): evicted");
  if (r.readonly == readonly) return;
  pool_.protect_span(r.span, readonly ? prim::Access::read : prim::Access::read_write);
  r.readonly = readonly;
}

Resident Allocator::resident(void* ptr) { return as_resident(large_record(ptr, "resident")); }

Gauges Allocator::gauges() const {
  Gauges g;
  g.page_size = pool_.page_size();
  g.reserved = pool_.reserved_bytes();
  g.mapped = pool_.mapped_bytes();
  g.free_page_bytes = (pool_.free_pages() + parked_.slots()) * pool_.page_size();  // parked spans are free memory
  g.views = pool_.views();
  g.active_blocks = records_.size();
  g.small_slabs = small_.slabs();
  g.memory_cap = cap_;
  return g;
}

PagePool::Holdings Allocator::holdings() const {
  PagePool::Holdings h = pool_.holdings();
  h.reservations += quarantined_.size();
  return h;
}

void Allocator::check() const {
  pool_.check();
  small_.check();
  // Every busy page belongs to exactly one live span (allocation or slab).
  std::vector<Span> spans = small_.slab_spans();
  records_.for_each([&](std::uintptr_t p, const Record& r) {
    if (r.block) {
      if (small_.ptr(r.block) != p) throw_error(Errc::internal, "record key differs from its block");
    } else {
      const std::uintptr_t end = r.span.va + static_cast<std::size_t>(r.span.count) * pool_.page_size();
      if (safe_ ? (p < r.span.va || p >= end) : r.span.va != p)
        throw_error(Errc::internal, "record key differs from its span");
      if (!r.evicted) spans.push_back(r.span);  // an evicted span holds no pages
    }
  });
  for (const SpanCache::Entry& e : parked_.entries()) spans.push_back(e.span);  // BUSY in the pool, owned by no record
  std::set<PageId> seen;
  std::size_t total = 0;
  std::vector<PageId> ids;
  for (const Span& s : spans) {
    ids.clear();
    pool_.pages_of(s, ids);
    for (PageId id : ids)
      if (!seen.insert(id).second) throw_error(Errc::internal, "a page belongs to two live spans");
    total += s.count;
  }
  if (total != pool_.pages() - pool_.free_pages())
    throw_error(Errc::internal, "busy pages (" + std::to_string(pool_.pages() - pool_.free_pages()) +
                                    ") differ from pages in live spans (" + std::to_string(total) + ")");
}

}  // namespace memlake::core
