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
  // Page tails: 64 slots (128 MiB with 2 MiB pages) was the best of 2n / 64 / 128 / 512 on the
  // recorded traces (docs/design/allocator.md). Not in the safety modes (a view per allocation).
  if (opts.tail_share && !safe_) pool_.set_min_view_slots(64);
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
  // Page tails: after a recent allocation of this stream whose last page has room, where the
  // pages after it are free (no driver call; the slow path below may grow its view instead).
  // Not under a graph pool's tag: the pool reuses a kept block for any request of its rounded
  // size, which assumes whole pages of its own.
  const bool tails = opts_.tail_share && !tracker_.held(tag);
  if (tails && !tails_.empty())
    if (const std::uintptr_t p = alloc_in_tail(size, tag, false, info, label)) {
      if (out) *out = info;
      return reinterpret_cast<void*>(p);
    }
  Span s;
  TailRequest tail{label};
  if (auto e = parked_.take(static_cast<std::uint32_t>(pages), tag)) {  // freed a moment ago by this stream
    s = e->span;
    info.path = pool_.view_stitched(s.view) ? Path::fit_stitched : Path::fit;
  } else {
    s = acquire(static_cast<std::uint32_t>(pages), tag, size, info, false, tails ? &tail : nullptr);
    if (tail.ptr) {
      if (out) *out = info;
      return reinterpret_cast<void*>(tail.ptr);
    }
  }
  info.rounded = static_cast<std::size_t>(s.count) * page;  // whole pages: large handles may round further
  Record rec{size, tag, nullptr, s, label};
  rec.slots = s.count;
  records_.insert(s.va, rec);
  if (tails) push_tail(s.va);
  if (out) *out = info;
  return reinterpret_cast<void*>(s.va);
}

namespace {
constexpr std::uintptr_t kTailAlign = 512;  // where an allocation in a page tail begins (PyTorch's alignment)
std::uintptr_t tail_start(std::uintptr_t ptr, std::size_t requested) {
  return (ptr + requested + kTailAlign - 1) & ~(kTailAlign - 1);
}
}  // namespace

Span Allocator::slots_span(const Span& in, std::uint32_t first, std::uint32_t count) const {
  const std::uintptr_t view_va = in.va - static_cast<std::uintptr_t>(in.first) * pool_.page_size();
  return Span{in.view, first, count, view_va + static_cast<std::uintptr_t>(first) * pool_.page_size()};
}

Span Allocator::alone(const Record& r) const {
  return r.next ? slots_span(r.span, r.span.first, r.tail_first - r.span.first) : r.span;
}

std::uintptr_t Allocator::tail_of(std::uintptr_t ptr, const Record& r) const {
  // Where a neighbour may begin: past its bytes, inside its last page (a span
  // that overshoots by more, through a large free page taken whole, shares nothing).
  if (r.block || r.evicted || r.span.count == 0) return 0;
  const std::size_t page = pool_.page_size();
  const std::uintptr_t end = r.span.va + static_cast<std::size_t>(r.span.count) * page;
  const std::uintptr_t last = end - static_cast<std::size_t>(pool_.page_slots(r.span.view, r.span.first + r.span.count - 1)) * page;
  const std::uintptr_t start = tail_start(ptr, r.requested);
  return start > last && start < end ? start : 0;
}

void Allocator::push_tail(std::uintptr_t ptr) {
  if (!opts_.tail_share) return;
  const Record* r = records_.find(ptr);
  if (!r || !tail_of(ptr, *r)) return;  // no tail to share
  tails_.erase(std::remove(tails_.begin(), tails_.end(), ptr), tails_.end());
  if (tails_.size() == kTails) tails_.erase(tails_.begin());
  tails_.push_back(ptr);
}

std::uintptr_t Allocator::alloc_in_tail(std::size_t size, Tag tag, bool may_map, AllocInfo& info, std::uint16_t label) {
  // The newest candidates first: an allocation made just before this one on
  // the same stream (a model's weights as they load, a step's activations)
  // ends where this one can begin. One that saves no page is not taken.
  const std::size_t page = pool_.page_size();
  const auto n = static_cast<std::uint32_t>((size + page - 1) / page);
  for (std::size_t i = tails_.size(); i-- > 0;) {
    const std::uintptr_t a = tails_[i];
    Record* r = records_.find(a);
    const std::uintptr_t start = r && !r->next ? tail_of(a, *r) : 0;
    if (!start) {  // its tail is gone (freed, taken, unmapped)
      tails_.erase(tails_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    const std::size_t room = r->span.va + static_cast<std::size_t>(r->span.count) * page - start;
    // A request that would lie inside the tail is left to the slabs or a page of its own.
    if (r->readonly || r->tag != tag || size <= room) continue;
    const auto m = static_cast<std::uint32_t>((size - room + page - 1) / page);
    if (m >= n) continue;
    TakeInfo ti;
    const auto s = pool_.take_after(r->span.view, r->span.first + r->span.count, m, n - 1, tag, may_map,
                                    may_map && opts_.stitch ? m : 0, &ti);
    if (!s) continue;
    r->next = start;  // before the insert, which may move records
    r->tail_first = r->span.first + r->span.count - pool_.page_slots(r->span.view, r->span.first + r->span.count - 1);
    Record rec{size, tag, nullptr, *s, label};
    rec.prev = a;
    rec.slots = s->count;
    records_.insert(start, rec);
    tails_.erase(tails_.begin() + static_cast<std::ptrdiff_t>(i));
    push_tail(start);
    info.rounded = static_cast<std::size_t>(s->count) * page;
    info.pages_created = ti.pages_created;
    info.pages_reused = ti.pages_reused;
    info.path = ti.pages_created ? Path::grown : may_map ? Path::stitched : ti.stitched_view ? Path::fit_stitched : Path::fit;
    return start;
  }
  return 0;
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
  Record rec{size, tag, nullptr, s};
  rec.slots = s.count;
  records_.insert(p, rec);
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

Span Allocator::acquire(std::uint32_t n, Tag tag, std::size_t request, AllocInfo& info, bool fresh, TailRequest* tail) {
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
    // Growing the view of a recent allocation behind it first: the new pages
    // continue its page tail (page tails; maps no more than an extension).
    if (tail && !fresh && (tail->ptr = alloc_in_tail(request, tag, true, info, tail->label)) != 0) return Span{};
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
  if (!r.block) return free_large(r);
  tracker_.note_free(r.tag);
  FreeInfo fi{r.requested, small_.size(r.block)};
  small_.free(r.block);
  return fi;
}

FreeInfo Allocator::free_large(Record& r) {
  const FreeInfo fi{r.requested, static_cast<std::size_t>(r.slots) * pool_.page_size(), r.evicted};
  // Page tails: the last page goes to the allocation that begins in it; the
  // one this began in has its tail back. Links first: whatever throws below
  // (a driver failure) leaves no neighbour pointing at this record.
  const Span a = alone(r);
  std::uint32_t ev_end = r.ev_first + r.ev_count;
  if (r.next) {
    Record* n = records_.find(r.next);
    const std::uint32_t shared = r.span.count - a.count;
    n->span = slots_span(r.span, a.first + a.count, n->span.count + shared);
    n->prev = 0;
    if (r.evicted && ev_end > a.first + a.count) {  // the shared page left with both: it is n's hole now
      n->ev_first -= shared;
      n->ev_count += shared;
      ev_end = a.first + a.count;
    }
  }
  if (r.prev) {
    records_.find(r.prev)->next = 0;
    push_tail(r.prev);
  }
  if (r.readonly && r.ro_count)  // its pages serve others next
    pool_.protect_span(slots_span(r.span, r.ro_first, r.ro_count), prim::Access::read_write);
  if (r.evicted) {
    // Its evicted slots are holes; what it holds mapped besides (a page taken
    // over from `prev` since, its last page if `next` is gone) goes back.
    const Span e = slots_span(r.span, r.ev_first, ev_end - r.ev_first);
    const Span before = slots_span(r.span, a.first, e.first - a.first);
    const Span after = slots_span(r.span, e.first + e.count, a.first + a.count - (e.first + e.count));
    if (before.count || after.count) {
      const std::uint64_t seq = tracker_.note_free(r.tag);
      pool_.give_back(before, r.tag, seq, false);
      pool_.give_back(after, r.tag, seq, false);
    }
    pool_.drop_evicted(e);  // its address becomes free with its view
    return fi;
  }
  const std::uint64_t seq = tracker_.note_free(r.tag);
  if (parked_.enabled() && a.count == r.span.count) {
    parked_.put(SpanCache::Entry{a, r.tag, seq}, unparked_);
    give_back_all(unparked_);  // what the cache pushed out
  } else {
    pool_.give_back(a, r.tag, seq);  // may be empty: its one page went to `next`
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

Resident Allocator::as_resident(std::uintptr_t ptr, const Record& r) const {
  return Resident{ptr, r.requested, static_cast<std::size_t>(r.span.count) * pool_.page_size(), r.label,
                  r.evicted, r.readonly, tracker_.stream_of(r.tag)};
}

void Allocator::residents(std::vector<Resident>& out) const {
  records_.for_each([&](std::uintptr_t p, const Record& r) {
    if (!r.block && !safe_) out.push_back(as_resident(p, r));
  });
}

std::size_t Allocator::evict(void* ptr, bool release) {
  Record& r = large_record(ptr, "evict");
  if (r.evicted) throw_error(Errc::invalid_argument, "evict(" + hex_ptr(reinterpret_cast<std::uintptr_t>(ptr)) + "): already evicted");
  // A read-only span needs no access change first: evict_span unmaps its whole range, and
  // whatever maps its pages again (a restore, another view) sets the access it needs.
  // (The driver charges about 0.1 ms a call: a third of a repeat sleep of 20 GiB of weights.)
  // Page tails: only the pages it holds alone leave (the last one stays while `next` begins in
  // it; the protected ones are among them); the caller copies its bytes out and back whole.
  // The page it shares with `next` leaves too once next is evicted as well.
  const Record* n = r.next ? records_.find(r.next) : nullptr;
  // (Only while next's evicted slots begin at its span's start, so that a free of this one can
  // hand the hole over with them; a partly restored next keeps it mapped.)
  const Span a = n && n->evicted && n->ev_first == n->span.first ? r.span : alone(r);
  std::size_t bytes = a.count ? pool_.evict_span(a, release) : 0;
  r.ev_first = a.first;
  r.ev_count = a.count;
  r.evicted = true;
  r.readonly = false;
  if (r.prev) {  // the page it began in, kept mapped for it by an evicted prev, leaves now
    Record& p = *records_.find(r.prev);
    const std::uint32_t end = p.span.first + p.span.count;
    if (p.evicted && p.ev_first + p.ev_count == p.tail_first) {
      try {
        bytes += pool_.evict_span(slots_span(p.span, p.tail_first, end - p.tail_first), release);
        p.ev_count = end - p.ev_first;
      } catch (const Error&) {
        // Still mapped, and consistent: this eviction is done all the same.
      }
    }
  }
  return bytes;
}

void Allocator::restore(void* ptr, bool coarse) {
  Record& r = large_record(ptr, "restore");
  if (!r.evicted) throw_error(Errc::invalid_argument, "restore(" + hex_ptr(reinterpret_cast<std::uintptr_t>(ptr)) + "): not evicted");
  const std::size_t page = pool_.page_size();
  // Free pages first; new memory for the rest, within the cap (restore_span
  // counts what its fill really takes). When the device (or the cap) is
  // full, the cache goes back to the driver first.
  auto room = [&] { return cap_ ? (cap_ - std::min(cap_, pool_.reserved_bytes())) / page : SIZE_MAX; };
  auto attempt = [&] {
    // Page tails: the page it begins in, if an evicted prev let it go with it, comes back first
    // (prev's again, mapped while prev stays evicted: its bytes there come with prev's restore).
    if (r.prev) {
      Record& p = *records_.find(r.prev);
      const std::uint32_t end = p.span.first + p.span.count;
      if (p.evicted && p.ev_first + p.ev_count == end && p.tail_first < end) {
        pool_.restore_span(slots_span(p.span, p.tail_first, end - p.tail_first), end - p.tail_first,
                           prim::Access::read_write, nullptr, room(), coarse);
        p.ev_count = p.tail_first - p.ev_first;
      }
    }
    // Pages never straddle tail_first (what it shares with next leaves and comes back on its own):
    // its evicted slots come back in two parts where they cross it.
    // A part restored stays restored if the next one fails (the evicted slots shrink).
    while (r.ev_count) {
      const std::uint32_t first = r.ev_first, end = r.ev_first + r.ev_count;
      const std::uint32_t to = r.next && first < r.tail_first && r.tail_first < end ? r.tail_first : end;
      pool_.restore_span(slots_span(r.span, first, to - first), to - first, prim::Access::read_write, nullptr, room(),
                         coarse);
      r.ev_first = to;
      r.ev_count = end - to;
    }
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
  if (r.evicted) throw_error(Errc::invalid_argument, "set_readonly(" + hex_ptr(reinterpret_cast<std::uintptr_t>(ptr)) + "): evicted");
  if (r.readonly == readonly) return;
  // Page tails: the pages it holds alone (a page shared with a neighbour stays writable; no
  // allocation begins in a read-only one's tail).
  const Span a = readonly ? alone(r) : slots_span(r.span, r.ro_first, r.ro_count);
  if (a.count) pool_.protect_span(a, readonly ? prim::Access::read : prim::Access::read_write);
  r.ro_first = a.first;
  r.ro_count = a.count;
  r.readonly = readonly;
}

Resident Allocator::resident(void* ptr) {
  return as_resident(reinterpret_cast<std::uintptr_t>(ptr), large_record(ptr, "resident"));
}

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
      const std::size_t page = pool_.page_size();
      const std::uintptr_t end = r.span.va + static_cast<std::size_t>(r.span.count) * page;
      bool at = safe_ ? p >= r.span.va && p < end : r.span.va == p;
      if (!safe_ && r.prev) {  // page tails: it begins in prev's last page, its span after it
        const Record* q = records_.find(r.prev);
        at = q && q->next == p && q->span.view == r.span.view && q->span.first + q->span.count == r.span.first &&
             p > r.prev && p < r.span.va && p >= tail_start(r.prev, q->requested);
      } else if (!safe_ && p != r.span.va) {  // it took over the page(s) it began in
        at = p > r.span.va && p < end;
      }
      if (!at) throw_error(Errc::internal, "record key differs from its span");
      if (r.next) {
        const Record* q = records_.find(r.next);
        if (!q || q->prev != p) throw_error(Errc::internal, "page tails: a neighbour's link is not mutual");
      }
      // Every byte it owns is mapped unless evicted; the page it began in stays mapped for it.
      if (!safe_ && r.prev && pool_.page_slots(r.span.view, r.span.first - 1) == 0 &&
          !(r.evicted && records_.find(r.prev)->evicted))
        throw_error(Errc::internal, "page tails: the page an allocation begins in is not mapped");
      if (!safe_ && r.next && (r.tail_first < r.span.first || r.tail_first >= r.span.first + r.span.count))
        throw_error(Errc::internal, "page tails: the shared page lies outside the span");
      if (!safe_ && r.next && r.evicted && r.ev_first + r.ev_count == r.span.first + r.span.count &&
          r.tail_first >= r.ev_first) {  // the shared page left: next must be evicted from its first slot
        const Record* q = records_.find(r.next);
        if (!q->evicted || q->ev_first != q->span.first)
          throw_error(Errc::internal, "page tails: a shared page left while its neighbour needs it");
      }
      for (std::uint32_t i = r.span.first; !safe_ && i < r.span.first + r.span.count; ++i) {
        const bool hole = pool_.page_slots(r.span.view, i) == 0;
        if (hole != (r.evicted && i >= r.ev_first && i < r.ev_first + r.ev_count))
          throw_error(Errc::internal, "page tails: a slot of " + hex_ptr(p) + (hole ? " is not mapped" : " evicted is mapped"));
      }
      if (!r.evicted) {
        spans.push_back(r.span);
      } else {  // the evicted slots hold no pages; what it holds mapped besides does
        spans.push_back(slots_span(r.span, r.span.first, r.ev_first - r.span.first));
        spans.push_back(slots_span(r.span, r.ev_first + r.ev_count, r.span.first + r.span.count - (r.ev_first + r.ev_count)));
      }
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
