#include "core/page_pool.h"

#include <algorithm>
#include <map>

#include "core/debug.h"
#include "core/error.h"

namespace memlake::core {
namespace {

[[noreturn]] void broken(const std::string& what) { throw_error(Errc::internal, "page pool invariant violated: " + what); }

// Appends one failure to a list of what a failure path could not do.
void note(std::string& failed, const char* what) {
  if (!failed.empty()) failed += "; ";
  failed += what;
}

// Rethrows the exception being handled, with `failed` (what undoing it
// could not do) appended to its message when it is a memlake::Error.
[[noreturn]] void rethrow_with(const std::string& failed) {
  if (failed.empty()) throw;
  try {
    throw;
  } catch (const Error& e) {
    throw_error(e.code(), std::string(e.what()) + "; rolling back failed too (" + failed +
                              "): what was not undone is kept and retried by empty_cache");
  }
}

}  // namespace

PagePool::PagePool(prim::Backend& backend, Quiescer& quiescer, std::uint32_t handle_slots, std::uint32_t large_slots)
    : be_(backend),
      quiescer_(quiescer),
      page_(backend.granularity()),
      handle_slots_(std::max<std::uint32_t>(handle_slots, 1)),
      large_slots_(large_slots > handle_slots_ && large_slots % handle_slots_ == 0 ? large_slots : 0) {
  set_restore_handle(std::size_t{256} << 20);
}

PagePool::~PagePool() {
  // Destruction must not throw: whatever fails stays with the backend.
  for (View& w : views_) {
    if (!w.live) continue;
    for_each_mapped_chunk(w, [&](std::uint32_t a, std::uint32_t b) {
      try {
        be_.unmap(w.va + a * page_, (b - a) * page_);
      } catch (...) {
      }
    });
    try {
      free_or_strand(w.va, static_cast<std::size_t>(w.capacity) * page_, nullptr);
    } catch (...) {
    }
  }
  for (Page& p : pages_) {
    if (!p.live) continue;
    try {
      be_.release(p.handle);
    } catch (...) {
    }
  }
  try {
    retry_stranded();
  } catch (...) {
  }
}

namespace {
// Takes a recycled index from `free_ids`, or appends a new element.
template <class Vec, class Id>
Id take_index(Vec& items, std::vector<Id>& free_ids) {
  if (!free_ids.empty()) {
    Id id = free_ids.back();
    free_ids.pop_back();
    return id;
  }
  items.emplace_back();
  return static_cast<Id>(items.size() - 1);
}
}  // namespace

PageId PagePool::new_page_id() { return take_index(pages_, free_page_ids_); }
ViewId PagePool::new_view_id() { return take_index(views_, free_view_ids_); }

template <class Pred, class F>
void PagePool::for_each_run(const View& w, std::uint32_t lo, std::uint32_t hi, Pred&& pred, F&& f) {
  for (std::uint32_t a = lo; a < hi;) {
    if (!pred(w.slots[a])) {
      ++a;
      continue;
    }
    std::uint32_t b = a;
    while (b < hi && pred(w.slots[b])) ++b;
    f(a, b);
    a = b;
  }
}

template <class F>
void PagePool::for_each_mapped_chunk(const View& w, F&& f) {
  for_each_run(w, 0, static_cast<std::uint32_t>(w.slots.size()), [](PageId p) { return p != kHole; }, f);
}

inline void PagePool::append_slots(const Page& pg, ViewId skip, std::vector<SlotRange>& out) {
  for (auto [v, s0] : pg.maps)
    if (v != skip) out.push_back(SlotRange{v, s0, pg.k});  // a page's k slots, one range
}

void PagePool::scan_runs(ViewId v, std::uint32_t lo, std::uint32_t hi, std::vector<RunKey>& out) const {
  const View& w = views_[v];
  for (std::uint32_t i = lo; i < hi;) {
    PageId p = w.slots[i];
    if (p == kHole || pages_[p].busy) {
      ++i;
      continue;
    }
    const Tag t = pages_[p].tag;
    std::uint32_t j = i + 1;
    while (j < hi && w.slots[j] != kHole && !pages_[w.slots[j]].busy && pages_[w.slots[j]].tag == t) ++j;
    out.push_back(RunKey{t, j - i, v, i});
    i = j;
  }
}

void PagePool::reindex(ViewId v) {
  View& w = views_[v];
  for (const RunKey& k : w.runs) runs_.erase(k);
  w.runs.clear();
  scan_runs(v, 0, static_cast<std::uint32_t>(w.slots.size()), w.runs);
  for (const RunKey& k : w.runs) runs_.insert(k);
}

void PagePool::reindex_window(ViewId v, std::uint32_t a, std::uint32_t b, bool free_now, Tag t) {
  // Precondition: slots [a, b) of v are mapped and their pages are in one
  // state, all BUSY (!free_now) or all FREE with tag t (every caller changes
  // a span's pages together, and says which state: an alias view's slots
  // and pages are not read here, they are a cold call's cache misses). Then
  // only the runs touching [a, b] change, and the parts of them outside
  // [a, b) are still maximal runs unless they join the window. No page is
  // looked at: O(log runs) whatever the run lengths (the rescan this
  // replaces was O(run), 1-2 us next to a long free run).
  View& w = views_[v];
  auto& runs = w.runs;
  ML_DEBUG_ASSERT(std::all_of(w.slots.begin() + a, w.slots.begin() + b, [&](PageId p) {
    return p != kHole && pages_[p].busy == !free_now && (!free_now || pages_[p].tag == t);
  }));
  // w.runs is sorted by start and disjoint: [first, last) are the runs that
  // overlap [a, b), or touch it and join the window's run. A run that only
  // touches it and does not join stays as it is, in both indexes.
  const bool may_join = free_now;
  RunKey* const rb = runs.data();
  const auto size = static_cast<std::uint32_t>(runs.size());
  std::uint32_t first = static_cast<std::uint32_t>(
      std::lower_bound(rb, rb + size, a, [](const RunKey& k, std::uint32_t x) { return k.start + k.len < x; }) - rb);
  if (first < size && rb[first].start + rb[first].len == a && !(may_join && rb[first].tag == t)) ++first;
  std::uint32_t last = first;
  std::uint32_t lo = a, hi = b;  // the window's own run, if it is free
  // The new runs: at most one run touched starts left of a and one ends right
  // of b (they are disjoint and end at a or later), so at most three (left
  // part, the window's own run, right part).
  RunKey fresh[3];
  std::uint32_t nf = 0;
  for (; last < size && (rb[last].start < b || (rb[last].start == b && may_join && rb[last].tag == t)); ++last) {
    const RunKey r = rb[last];
    const std::uint32_t end = r.start + r.len;
    const bool joins = free_now && r.tag == t;
    runs_.erase(r);
    if (r.start < a) {  // the part left of the window
      if (joins)
        lo = r.start;
      else
        fresh[nf++] = RunKey{r.tag, std::min(end, a) - r.start, v, r.start};
    }
    if (end > b) {  // the part right of the window
      const std::uint32_t s = std::max(r.start, b);
      if (joins)
        hi = end;
      else
        fresh[nf++] = RunKey{r.tag, end - s, v, s};
    }
  }
  if (free_now) fresh[nf++] = RunKey{t, hi - lo, v, lo};
  for (std::uint32_t i = 1; i < nf; ++i)
    for (std::uint32_t j = i; j > 0 && fresh[j].start < fresh[j - 1].start; --j) std::swap(fresh[j], fresh[j - 1]);
  // Replace [first, last) by the new runs, shifting the tail by hand (a few runs).
  const std::uint32_t old_n = last - first;
  if (nf > old_n) {
    runs.resize(size + nf - old_n);
    RunKey* d = runs.data();
    for (std::uint32_t i = size; i-- > last;) d[i + nf - old_n] = d[i];
  } else if (nf < old_n) {
    RunKey* d = runs.data();
    for (std::uint32_t i = last; i < size; ++i) d[i - (old_n - nf)] = d[i];
    runs.resize(size - (old_n - nf));
  }
  RunKey* d = runs.data() + first;
  for (std::uint32_t i = 0; i < nf; ++i) {
    d[i] = fresh[i];
    runs_.insert(fresh[i]);
  }
}

inline void PagePool::add_to_window(std::uint32_t m, ViewId v, std::uint32_t first, std::uint32_t count) {
  // A range extends its view's latest window when it is next to it, else
  // opens a new one (no sorting). The pages of each window must be in one
  // state (reindex_window's precondition); windows of one view may touch.
  View& w = views_[v];
  if (w.mark == m) {
    Window& win = scratch_windows_[w.window];
    if (win.end == first) {
      win.end += count;
      return;
    }
    if (win.start == first + count) {
      win.start = first;
      return;
    }
  }
  w.mark = m;
  w.window = static_cast<std::uint32_t>(scratch_windows_.size());
  scratch_windows_.push_back(Window{v, first, first + count});
}

void PagePool::reindex_slots(const std::vector<SlotRange>& ranges, bool free_now, Tag t) {
  // Groups slot ranges into windows of consecutive slots in one pass.
  const std::uint32_t m = next_mark();
  scratch_windows_.clear();
  for (const SlotRange& r : ranges) add_to_window(m, r.view, r.first, r.count);
  for (const Window& win : scratch_windows_) reindex_window(win.view, win.start, win.end, free_now, t);
}

void PagePool::idle(ViewId v) {
  View& w = views_[v];
  // A view with holes can never serve its whole range again: evict it first.
  w.lru = w.holes ? lru_.insert(lru_.begin(), v) : lru_.insert(lru_.end(), v);
  w.in_lru = true;
}

void PagePool::unidle(ViewId v) {
  View& w = views_[v];
  if (w.in_lru) {
    lru_.erase(w.lru);
    w.in_lru = false;
  }
}

Span PagePool::mark_busy(ViewId v, std::uint32_t first, std::uint32_t n) {
  View& w = views_[v];
  bool aliased = false;
  for (std::uint32_t i = first; i < first + n; ++i) {
    Page& pg = pages_[w.slots[i]];
    pg.busy = true;
    --free_pages_;
    --free_by_tag(pg.tag);
    aliased |= pg.maps.size() > 1;
  }
  if (w.spans++ == 0) unidle(v);
  reindex_window(v, first, first + n, false, kGlobal);
  if (aliased) reindex_aliases(v, first, n, false, kGlobal);
  return Span{v, first, n, w.va + first * page_};
}

void PagePool::reindex_aliases(ViewId v, std::uint32_t first, std::uint32_t n, bool free_now, Tag t) {
  // The other views' slots that map these pages, grouped into windows as
  // they are found (reindex_slots without the list of ranges between).
  const std::uint32_t m = next_mark();
  scratch_windows_.clear();
  const PageId* slots = views_[v].slots.data();
  for (std::uint32_t i = first; i < first + n;) {  // spans hold whole pages
    const Page& pg = pages_[slots[i]];
    const std::uint32_t k = pg.k;
    for (auto [u, s0] : pg.maps)
      if (u != v) add_to_window(m, u, s0, k);  // a page's k slots, one range
    i += k;
  }
  for (const Window& win : scratch_windows_) reindex_window(win.view, win.start, win.end, free_now, t);
}

std::optional<Span> PagePool::take_fit(std::uint32_t n, Tag tag, TakeInfo* info) {
  // Best fit. Whole pages are taken from a run's start, so with pages of
  // several slots a run may cover n only with some overshoot: the least
  // overshoot wins, then the shorter run; only the few shortest runs that
  // fit are looked at. With single-slot pages: the shortest run.
  std::optional<RunKey> best;
  std::uint32_t best_c = 0;
  auto cover = [&](const RunKey& k) {  // slots taken from k for n
    // A page's slots are consecutive in a view and a view maps a page once: a page ends
    // where the slot's page id changes. The run starts on a page boundary, so the cover
    // ends where the page holding slot n-1 ends: a scan of that page's slots only (at
    // most k - 1), not of all n. Reading the view's slots alone keeps the up to 16
    // candidates' Page records out of the cache.
    const View& w = views_[k.view];
    const PageId* slot = w.slots.data() + k.start;
    const std::size_t end = w.slots.size() - k.start;
    const PageId p = slot[n - 1];
    std::uint32_t c = n;
    while (c < end && slot[c] == p) ++c;
    return c;
  };
  auto consider = [&](Tag t) {
    int looked = 0;
    runs_.visit(t, n, [&](const RunKey& k) {
      // Runs hold whole pages, so a run of exactly n slots is covered exactly.
      const std::uint32_t c = handle_slots_ == 1 || k.len == n ? n : cover(k);
      if (!best || c < best_c || (c == best_c && k.len < best->len)) best = k, best_c = c;
      return c != n && ++looked < 16;  // exact: later runs of this tag are longer
    });
  };
  consider(tag);
  if (tag != kGlobal) consider(kGlobal);
  if (!best) return std::nullopt;
  const RunKey k = *best;
  if (info) *info = TakeInfo{views_[k.view].stitched, 0, 0};
  return mark_busy(k.view, k.start, best_c);
}

std::size_t& PagePool::grow_tags(Tag t) {
  free_by_tag_.resize(t + 1, 0);
  return free_by_tag_[t];
}

std::size_t PagePool::usable_free_pages(Tag tag) const {
  std::size_t n = free_by_tag_.empty() ? 0 : free_by_tag_[kGlobal];
  if (tag != kGlobal && tag < free_by_tag_.size()) n += free_by_tag_[tag];
  return n;
}

std::vector<PageId> PagePool::choose_free(std::uint32_t want, Tag tag, std::uint32_t mark, std::uint32_t* got,
                                          bool exact) {
  // Orphans first (nobody else can use them), then the largest free runs
  // (few source views, long runs kept whole rather than nibbled). Pages
  // already carrying `mark` are excluded. A first pass takes only pages
  // that fit in what is still wanted; unless `exact`, a second pass covers
  // the rest with larger pages (overshoot rather than new memory). An exact
  // fill with pages of several sizes takes large pages first and keeps the
  // single ones for the remainder, which only they can fill (bin packing,
  // largest first): filled in run order, a repair's last chunks often found
  // only large pages left and the repair gave way to a whole new stitch.
  std::vector<PageId> chosen;
  std::uint32_t have = 0;
  bool large_only = false;
  auto take = [&](PageId p, bool fit_only) {
    Page& pg = pages_[p];
    if (pg.mark == mark || (fit_only && have + pg.k > want) || (large_only && pg.k == 1)) return;
    pg.mark = mark;
    chosen.push_back(p);
    have += pg.k;
  };
  const Tag tags[2] = {tag, kGlobal};
  const int ntags = tag == kGlobal ? 1 : 2;
  std::vector<RunKey> cand;
  bool listed = false;
  // Passes: -1 large pages that fit (exact fills with large handles only), 0 any page that
  // fits, 1 any page (not for exact fills).
  for (int pass = exact && handle_slots_ > 1 ? -1 : 0; pass < (exact ? 1 : 2) && have < want; ++pass) {
    const bool fit_only = pass <= 0;
    large_only = pass < 0;
    for (int ti = 0; ti < ntags && have < want; ++ti)
      for (auto it = orphans_.lower_bound({tags[ti], 0}); it != orphans_.end() && it->first == tags[ti] && have < want; ++it)
        take(it->second, fit_only);
    if (have >= want) break;
    if (!listed) {
      for (int ti = 0; ti < ntags; ++ti)
        runs_.visit(tags[ti], 0, [&](const RunKey& k) { return cand.push_back(k), true; });
      std::stable_sort(cand.begin(), cand.end(), [](const RunKey& x, const RunKey& y) { return x.len > y.len; });
      listed = true;
    }
    for (const RunKey& k : cand) {
      const View& w = views_[k.view];
      for (std::uint32_t s = k.start; s < k.start + k.len && have < want;) {  // runs start on page boundaries
        const PageId p = w.slots[s];
        take(p, fit_only);
        s += pages_[p].k;
      }
      if (have >= want) break;
    }
  }
  *got = have;
  return chosen;
}

std::uint32_t PagePool::slots_of(const std::vector<PageId>& pages) const {
  std::uint32_t n = 0;
  for (PageId p : pages) n += pages_[p].k;
  return n;
}

std::vector<PageId> PagePool::map_pages(std::uintptr_t va, std::vector<PageId> chosen, std::uint32_t n,
                                        prim::Access access, bool coarse) {
  // Creates the slots `chosen` lacks, maps all n slots at va, sets access
  // once. A shortfall worth at least two large handles (a big tensor) gets
  // large handles for its bulk; the rest, and smaller shortfalls, single
  // pages: large handles for small requests would be taken whole and waste
  // (llama1b-gen replay with 8 MiB handles: 0.964 utilization when every
  // shortfall got them, 0.974 with this rule). With a second, larger size,
  // the same rule applies to it first. On failure everything done here is
  // undone and the error rethrown.
  const std::uint32_t have = slots_of(chosen);
  const std::uint32_t missing = n - have;
  std::vector<std::uint32_t> sizes;  // slots of each new handle
  if (coarse) {
    // A restore: the span is taken whole, so few handles win (each costs a
    // create, a map, its share of set-access, and later an unmap and a
    // release), in power-of-two sizes: on the H200, handles of odd sizes
    // (one per remainder) made the sleep cheaper, but the wakes after them
    // 20 % slower than the first (the driver's physical memory fragments);
    // power-of-two ones kept every wake at link speed. Largest first, up to
    // restore_slots().
    std::uint32_t left = missing;
    for (std::uint32_t k = restore_slots(); left > 0; k /= 2)
      for (; left >= k; left -= k) sizes.push_back(k);
  } else {
    const std::uint32_t larger = large_slots_ && missing >= 2 * large_slots_ ? missing / large_slots_ : 0;
    const std::uint32_t rest = missing - larger * large_slots_;
    const std::uint32_t big = handle_slots_ > 1 && rest >= 2 * handle_slots_ ? rest / handle_slots_ : 0;
    sizes.reserve(larger + big + rest % handle_slots_);
    sizes.insert(sizes.end(), larger, large_slots_);
    sizes.insert(sizes.end(), big, handle_slots_);
    sizes.insert(sizes.end(), rest - big * handle_slots_, 1);
  }
  std::vector<std::pair<prim::PhysHandle, std::uint32_t>> fresh;  // (handle, slots)
  fresh.reserve(sizes.size());
  std::uint32_t mapped = 0;  // slots
  try {
    for (std::uint32_t k : sizes) fresh.emplace_back(be_.create(k * page_), k);
    auto map_one = [&](prim::PhysHandle h, std::uint32_t k) {
      be_.map(va + static_cast<std::size_t>(mapped) * page_, k * page_, h);
      mapped += k;
    };
    for (PageId p : chosen) map_one(pages_[p].handle, pages_[p].k);
    for (auto [h, k] : fresh) map_one(h, k);
    be_.set_access(va, static_cast<std::size_t>(n) * page_, access);
  } catch (...) {
    // Undo each mapping and handle on its own: one that fails is kept
    // (stranded) for a retry and named in the error, the others still go.
    std::string failed;
    std::uint32_t at = 0;
    auto undo = [&](prim::PhysHandle h, std::uint32_t k) {
      if (at >= mapped) return;
      const std::uintptr_t a = va + static_cast<std::size_t>(at) * page_;
      at += k;
      try {
        be_.unmap(a, k * page_);
      } catch (const Error& x) {
        note(failed, x.what());
        stranded_maps_[a] = StrandedMap{k * page_, h};
      }
    };
    for (PageId p : chosen) undo(pages_[p].handle, pages_[p].k);
    for (auto [h, k] : fresh) undo(h, k);
    for (auto [h, k] : fresh) {
      try {
        be_.release(h);  // allowed while a stranded mapping holds it
      } catch (const Error& x) {
        note(failed, x.what());
        stranded_handles_.push_back(h);
      }
    }
    rethrow_with(failed);
  }
  for (auto [h, k] : fresh) {
    PageId id = new_page_id();
    Page& pg = pages_[id];
    pg = Page{};
    pg.handle = h;
    pg.k = k;
    pg.live = true;
    pg.tag = kGlobal;
    pages_live_ += k;
    free_pages_ += k;
    free_by_tag(kGlobal) += k;
    chosen.push_back(id);
  }
  return chosen;
}

void PagePool::attach(ViewId v, std::uint32_t from, const std::vector<PageId>& pages, std::uint32_t reused) {
  View& w = views_[v];
  std::uint32_t slot = from;
  for (std::uint32_t i = 0; i < pages.size(); ++i) {
    Page& pg = pages_[pages[i]];
    if (pg.maps.empty() && i < reused) orphans_.erase({pg.tag, pages[i]});
    pg.maps.push_back(MapEntry{v, slot});
    slots_mapped_ += pg.k;
    for (std::uint32_t j = 0; j < pg.k; ++j, ++slot) {
      if (slot < w.slots.size()) {  // into a hole (take_repaired)
        w.slots[slot] = pages[i];
        --w.holes;
      } else {
        w.slots.push_back(pages[i]);
      }
    }
  }
  if (reused) w.stitched = true;
}

Span PagePool::take_stitched(std::uint32_t n, Tag tag, std::uint32_t reuse_max, TakeInfo* info) {
  if (n == 0) throw_error(Errc::invalid_argument, "page pool: empty stitch");
  std::uint32_t reused = 0;  // slots
  std::vector<PageId> chosen = choose_free(std::min(reuse_max, n), tag, next_mark(), &reused);
  const auto reused_pages = static_cast<std::uint32_t>(chosen.size());
  n = std::max(n, reused);  // free pages larger than the rest of the request: the span takes them whole
  // Reserve twice the range: a later, larger request may extend this view
  // at its tail (take_extended) instead of stitching a whole new one.
  const std::uint32_t capacity = n <= (1u << 30) ? std::max(2 * n, min_view_slots_) : n;
  // With large handles, views start on a large handle's boundary, so that the
  // large handles a growth maps first lie aligned to their size.
  const std::size_t handle = static_cast<std::size_t>(handle_slots_) * page_;
  const std::size_t align = handle_slots_ > 1 && (handle & (handle - 1)) == 0 ? handle : 0;
  const std::uintptr_t va = be_.reserve(static_cast<std::size_t>(capacity) * page_, align);
  try {
    chosen = map_pages(va, std::move(chosen), n);
  } catch (...) {
    std::string failed;
    free_or_strand(va, static_cast<std::size_t>(capacity) * page_, &failed);
    rethrow_with(failed);
  }
  const ViewId v = new_view_id();
  View& w = views_[v];
  w = View{};
  w.live = true;
  w.va = va;
  w.capacity = capacity;
  w.slots.reserve(n);
  ++views_live_;
  attach(v, 0, chosen, reused_pages);
  if (info) *info = TakeInfo{reused > 0, reused, n - reused};
  return mark_busy(v, 0, n);
}

std::optional<RunKey> PagePool::best_extension(std::uint32_t n, Tag tag) const {
  // The longest free run that ends at a view's last mapped slot and whose
  // view has room for n slots from the run's start: only n - len pages
  // need mapping (and setting access), instead of n.
  std::optional<RunKey> best;
  const Tag tags[2] = {tag, kGlobal};
  for (int ti = 0; ti < (tag == kGlobal ? 1 : 2); ++ti)
    runs_.visit(tags[ti], 0, [&](const RunKey& k) {
      const View& w = views_[k.view];
      if (k.len < n && k.start + k.len == w.slots.size() && w.holes == 0 && k.start + n <= w.capacity &&
          (!best || k.len > best->len) && !stranded_in(w.va, static_cast<std::size_t>(w.capacity) * page_))
        best = k;
      return true;
    });
  return best;
}

std::optional<std::uint32_t> PagePool::extension_maps(std::uint32_t n, Tag tag) const {
  const std::optional<RunKey> best = best_extension(n, tag);
  return best ? std::optional<std::uint32_t>(n - best->len) : std::nullopt;
}

std::optional<Span> PagePool::take_extended(std::uint32_t n, Tag tag, std::uint32_t reuse_max, TakeInfo* info) {
  const std::optional<RunKey> best = best_extension(n, tag);
  if (!best) return std::nullopt;
  return extend_run(*best, n, tag, reuse_max, std::numeric_limits<std::uint32_t>::max(), info);
}

std::optional<Span> PagePool::extend_run(const RunKey& k, std::uint32_t n, Tag tag, std::uint32_t reuse_max,
                                         std::uint32_t max_cover, TakeInfo* info) {
  const std::uint32_t extra = n - k.len;
  View& w0 = views_[k.view];
  const std::uint32_t m = next_mark();
  // A view maps each page at most once: none of its own pages may join it.
  for (PageId p : w0.slots) pages_[p].mark = m;
  std::uint32_t reused = 0;  // slots
  std::vector<PageId> chosen = choose_free(std::min(reuse_max, extra), tag, m, &reused);
  // Never create pages while usable free pages exist: if some are left out
  // only because this view already maps them, a fresh stitch is better.
  if (reused < std::min(reuse_max, extra) && usable_free_pages(tag) > k.len + reused) return std::nullopt;
  const std::uint32_t ext = std::max(extra, reused);  // a larger free page is taken whole
  if (k.start + k.len + ext > w0.capacity || k.len + ext > max_cover) return std::nullopt;
  const std::uint32_t from = static_cast<std::uint32_t>(w0.slots.size());
  const auto reused_pages = static_cast<std::uint32_t>(chosen.size());
  chosen = map_pages(w0.va + static_cast<std::size_t>(from) * page_, std::move(chosen), ext);
  attach(k.view, from, chosen, reused_pages);
  if (info) *info = TakeInfo{views_[k.view].stitched, reused, ext - reused};
  return mark_busy(k.view, k.start, k.len + ext);
}

std::uint32_t PagePool::page_slots(ViewId v, std::uint32_t i) const {
  const View& w = views_[v];
  return i < w.slots.size() && w.slots[i] != kHole ? pages_[w.slots[i]].k : 0;
}

std::optional<Span> PagePool::take_after(ViewId v, std::uint32_t at, std::uint32_t n, std::uint32_t max_cover, Tag tag,
                                         bool may_map, std::uint32_t reuse_max, TakeInfo* info) {
  const View& w = views_[v];
  const auto size = static_cast<std::uint32_t>(w.slots.size());
  if (!w.live || n == 0 || n > max_cover || at > size || !page_starts(w, at)) return std::nullopt;
  // The free run starting at `at`, if `tag` may use it (a view's runs are sorted by start).
  const auto it = std::lower_bound(w.runs.begin(), w.runs.end(), at,
                                   [](const RunKey& k, std::uint32_t x) { return k.start < x; });
  const std::uint32_t len =
      it != w.runs.end() && it->start == at && (it->tag == tag || it->tag == kGlobal) ? it->len : 0;
  if (len >= n) {  // mapped already: taken to the end of the page holding its last slot (runs hold whole pages)
    std::uint32_t c = n;
    while (at + c < size && w.slots[at + c] == w.slots[at + n - 1]) ++c;
    if (c > max_cover) return std::nullopt;
    if (info) *info = TakeInfo{w.stitched, 0, 0};
    return mark_busy(v, at, c);
  }
  // Only a free run reaching the view's end grows, as take_extended grows one.
  if (!may_map || at + len != size || w.holes != 0 || at + n > w.capacity ||
      stranded_in(w.va, static_cast<std::size_t>(w.capacity) * page_))
    return std::nullopt;
  return extend_run(RunKey{tag, len, v, at}, n, tag, reuse_max, max_cover, info);
}

std::optional<Span> PagePool::take_repaired(std::uint32_t n, Tag tag, std::uint32_t reuse_max, std::uint32_t max_maps,
                                            TakeInfo* info) {
  if (n == 0) return std::nullopt;
  auto serves = [&](PageId p) {
    return p != kHole && !pages_[p].busy && (pages_[p].tag == tag || pages_[p].tag == kGlobal);
  };
  // Idle view windows by how few slots cannot serve (sliding count over each
  // view's slots; views with live spans are left alone, their busy pages may be
  // their own). A window starts and ends on page boundaries.
  struct Candidate {
    std::uint32_t bad;
    ViewId view;
    std::uint32_t start;
  };
  std::vector<Candidate> cands;
  const std::uint32_t limit = std::min(n, max_maps);
  for (ViewId v = 0; v < views_.size(); ++v) {
    const View& w = views_[v];
    const auto size = static_cast<std::uint32_t>(w.slots.size());
    if (!w.live || w.spans != 0 || size < n || stranded_in(w.va, static_cast<std::size_t>(w.capacity) * page_)) continue;
    std::uint32_t bad = 0;
    for (std::uint32_t i = 0; i < n; ++i) bad += !serves(w.slots[i]);
    std::uint32_t least = n, at = 0;  // least == n: no window yet
    for (std::uint32_t i = 0;; ++i) {
      if (bad < least && page_starts(w, i) && page_starts(w, i + n)) {
        least = bad, at = i;
        if (least == 0) break;
      }
      if (i + n >= size) break;
      bad = bad + !serves(w.slots[i + n]) - !serves(w.slots[i]);
    }
    if (least < limit) cands.push_back({least, v, at});
  }
  std::stable_sort(cands.begin(), cands.end(), [](const Candidate& x, const Candidate& y) { return x.bad < y.bad; });
  // Never create more pages than a new stitch would: free pages of a view
  // outside its window cannot join it, but could join a new view.
  const std::size_t stitch_creates = n - std::min<std::size_t>({reuse_max, n, usable_free_pages(tag)});
  // The first few candidates whose bad chunks free pages from elsewhere fill
  // exactly (with pages of several sizes the fewest bad slots may not fit).
  const Candidate* pick = nullptr;
  std::uint32_t reused = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> chunks;  // slots to re-map
  std::vector<std::vector<PageId>> parts;
  std::size_t tries = 0;
  for (std::size_t ci = 0; ci < cands.size() && tries < kRepairTries && !pick; ++ci) {
    const Candidate& c = cands[ci];
    View& w = views_[c.view];
    if (!frees_complete(w)) continue;  // kernels may still use memory freed through it
    ++tries;
    chunks.clear();
    parts.clear();
    for_each_run(w, c.start, c.start + n, [&](PageId p) { return !serves(p); },
                 [&](std::uint32_t a, std::uint32_t b) { chunks.emplace_back(a, b); });
    // A view maps each page at most once.
    const std::uint32_t m = next_mark();
    for (PageId p : w.slots)
      if (p != kHole) pages_[p].mark = m;
    std::uint32_t got_all = 0, budget = std::min(reuse_max, c.bad);
    for (auto [a, b] : chunks) {
      std::uint32_t got = 0;
      parts.push_back(choose_free(std::min(b - a, budget), tag, m, &got, /*exact=*/true));
      budget -= got;
      got_all += got;
    }
    if (c.bad - got_all <= stitch_creates) pick = &c, reused = got_all;
  }
  if (!pick) return std::nullopt;
  const ViewId best = pick->view;
  View& w = views_[best];
  std::uint32_t created = 0;
  try {
    for (auto [a, b] : chunks)  // holes stay holes; mapped slots are unmapped
      for_each_run(w, a, b, [](PageId p) { return p != kHole; }, [&](std::uint32_t x, std::uint32_t y) { unmap_slots(w, x, y); });
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const auto [a, b] = chunks[c];
      const auto r = static_cast<std::uint32_t>(parts[c].size());
      created += b - a - slots_of(parts[c]);
      std::vector<PageId> mapped = map_pages(w.va + static_cast<std::size_t>(a) * page_, std::move(parts[c]), b - a);
      attach(best, a, mapped, r);
    }
  } catch (...) {
    reindex(best);  // the view keeps holes where mapping failed
    throw;
  }
  reindex(best);
  if (info) *info = TakeInfo{w.stitched, reused, created, true};
  return mark_busy(best, pick->start, n);
}

void PagePool::push_unsettled(Tag tag, const Unsettled& u) {
  if (tag >= unsettled_.size()) {
    unsettled_.resize(tag + 1);
    unsettled_head_.resize(tag + 1, 0);
  }
  unsettled_[tag].push_back(u);
}

void PagePool::give_back(const Span& s, Tag tag, std::uint64_t seq, bool ends_span) {
  View& w = views_[s.view];
  if (!w.live || w.spans == 0 || s.first + s.count > w.slots.size()) broken("give_back of a span that is not live");
  if (s.count == 0) {  // a span whose pages all went to a neighbour (page tails): only its count ends
    if (ends_span && --w.spans == 0) idle(s.view);
    return;
  }
  bool aliased = false;
  for (std::uint32_t i = s.first; i < s.first + s.count; ++i) {
    Page& pg = pages_[w.slots[i]];
    pg.busy = false;
    pg.tag = tag;
    pg.seq = seq;
    aliased |= pg.maps.size() > 1;
  }
  free_pages_ += s.count;
  free_by_tag(tag) += s.count;
  if (tag != kGlobal) push_unsettled(tag, Unsettled{seq, s.view, s.first, s.count});
  auto lf = std::find_if(w.last_free.begin(), w.last_free.end(), [&](const LastFree& e) { return e.tag == tag; });
  if (lf == w.last_free.end())
    w.last_free.push_back(LastFree{tag, seq});
  else
    lf->seq = seq;
  if (ends_span && --w.spans == 0) idle(s.view);
  reindex_window(s.view, s.first, s.first + s.count, true, tag);
  if (aliased) reindex_aliases(s.view, s.first, s.count, true, tag);
}

bool PagePool::unsettled_page(PageId p, Tag tag, std::uint64_t seq) const {
  const Page& pg = pages_[p];
  return pg.live && !pg.busy && pg.tag == tag && pg.seq == seq;
}

void PagePool::prune(Tag tag) {
  if (tag >= unsettled_.size()) return;
  auto& q = unsettled_[tag];
  std::size_t& h = unsettled_head_[tag];
  auto live_entry = [&](const Unsettled& u) {
    const View& w = views_[u.view];
    if (!w.live || u.first + u.count > w.slots.size()) return false;
    for (std::uint32_t i = u.first; i < u.first + u.count; ++i)
      if (w.slots[i] != kHole && unsettled_page(w.slots[i], tag, u.seq)) return true;
    return false;
  };
  while (h < q.size() && !live_entry(q[h])) ++h;
  if (h == q.size()) {
    q.clear();
    h = 0;
  } else if (h > 1024 && h * 2 > q.size()) {
    q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(h));
    h = 0;
  }
}

void PagePool::settle(Tag tag, std::uint64_t done) {
  if (tag == kGlobal || tag >= unsettled_.size()) return;
  std::vector<PageId> changed;
  auto retag = [&](PageId p) {
    Page& pg = pages_[p];
    free_by_tag(tag) -= pg.k;
    free_by_tag(kGlobal) += pg.k;
    if (pg.maps.empty()) {
      orphans_.erase({tag, p});
      orphans_.insert({kGlobal, p});
    }
    pg.tag = kGlobal;
    changed.push_back(p);
  };
  auto& q = unsettled_[tag];
  std::size_t& h = unsettled_head_[tag];
  for (; h < q.size() && q[h].seq <= done; ++h) {
    const Unsettled u = q[h];
    const View& w = views_[u.view];
    if (!w.live || u.first + u.count > w.slots.size()) continue;  // stale entry
    for (std::uint32_t i = u.first; i < u.first + u.count; ++i)
      if (w.slots[i] != kHole && unsettled_page(w.slots[i], tag, u.seq)) retag(w.slots[i]);
  }
  // Orphans lost the view their entry named.
  std::vector<PageId> orphaned;
  for (auto it = orphans_.lower_bound({tag, 0}); it != orphans_.end() && it->first == tag; ++it)
    if (pages_[it->second].seq <= done) orphaned.push_back(it->second);
  for (PageId p : orphaned) retag(p);
  prune(tag);
  // Every changed page is now FREE and global: windows of them are uniform.
  auto& ranges = scratch_ranges_;
  ranges.clear();
  for (PageId p : changed) append_slots(pages_[p], kNoView, ranges);
  reindex_slots(ranges, true, kGlobal);
}

std::uint64_t PagePool::oldest_unsettled(Tag tag) {
  prune(tag);
  std::uint64_t oldest = 0;
  if (tag < unsettled_.size() && !unsettled_[tag].empty()) oldest = unsettled_[tag][unsettled_head_[tag]].seq;
  auto it = orphans_.lower_bound({tag, 0});
  for (; it != orphans_.end() && it->first == tag; ++it)
    if (!oldest || pages_[it->second].seq < oldest) oldest = pages_[it->second].seq;
  return oldest;
}

std::vector<Tag> PagePool::tags_with_unsettled() {
  std::vector<Tag> out;
  for (Tag t = 1; t < unsettled_.size(); ++t)
    if (oldest_unsettled(t)) out.push_back(t);
  return out;
}

void PagePool::detach(PageId p, ViewId v) {
  auto& maps = pages_[p].maps;
  auto it = std::find_if(maps.begin(), maps.end(), [&](const MapEntry& e) { return e.view == v; });
  maps.erase(it);
  slots_mapped_ -= pages_[p].k;
  const Page& pg = pages_[p];
  if (maps.empty()) {
    if (pg.busy) broken("a busy page lost its last mapping");
    orphans_.insert({pg.tag, p});
  }
}

void PagePool::unmap_slots(View& w, std::uint32_t from, std::uint32_t to) {
  be_.unmap(w.va + from * page_, (to - from) * page_);
  const ViewId v = static_cast<ViewId>(&w - views_.data());
  for (std::uint32_t i = from; i < to;) {  // [from, to) holds whole pages
    const PageId p = w.slots[i];
    const Page& pg = pages_[p];
    if (!pg.busy && pg.tag != kGlobal && pg.maps.size() > 1) {
      // Its settle entry may name this view: name one of its other views.
      const MapEntry other = pg.maps[0].view == v ? pg.maps[1] : pg.maps[0];
      push_unsettled(pg.tag, Unsettled{pg.seq, other.view, other.slot, pg.k});
    }
    detach(p, v);
    for (std::uint32_t j = 0; j < pg.k; ++j) w.slots[i + j] = kHole;
    w.holes += pg.k;
    i += pg.k;
  }
}

void PagePool::destroy_view(ViewId v) { retire_view(v, false); }

std::pair<std::uintptr_t, std::size_t> PagePool::retire_view(ViewId v, bool keep_va) {
  View& w = views_[v];
  if (!w.live || w.spans != 0) broken("destroying a view with live spans");
  // Kernels may still use memory freed through this view: wait for them.
  for (auto [tag, seq] : w.last_free) quiescer_.wait(tag, seq);
  w.last_free.clear();
  try {
    for_each_mapped_chunk(w, [&](std::uint32_t a, std::uint32_t b) { unmap_slots(w, a, b); });
  } catch (...) {
    // The chunks unmapped so far are holes: their runs leave the index (a
    // fit there would hand out unmapped memory). The view stays idle.
    reindex(v);
    throw;
  }
  for (const RunKey& k : w.runs) runs_.erase(k);
  w.runs.clear();
  const std::pair<std::uintptr_t, std::size_t> range{w.va, static_cast<std::size_t>(w.capacity) * page_};
  if (!keep_va) free_or_strand(range.first, range.second, nullptr);
  unidle(v);
  w.live = false;
  w.slots.clear();
  w.slots.shrink_to_fit();
  --views_live_;
  free_view_ids_.push_back(v);
  return range;
}

bool PagePool::frees_complete(const View& w) {
  for (auto [t, seq] : w.last_free)
    if (!quiescer_.done(t, seq)) return false;
  return true;
}

void PagePool::trim_views(std::size_t max_mapped) {
  // Waiting blocks the host until the device has run everything queued
  // before the view's last frees (for the allocating stream, usually its
  // whole queue: one event covers every free so far). Views whose work is
  // known complete go without a wait; the others wait for a later trim,
  // unless mapped slots exceed twice the bound. After one wait, the views
  // freed before it are complete too.
  const std::size_t hard = max_mapped > SIZE_MAX / 2 ? SIZE_MAX : 2 * max_mapped;
  for (auto it = lru_.begin(); slots_mapped_ > max_mapped && it != lru_.end();) {
    const ViewId v = *it++;  // destroy_view erases v's own entry only
    try {
      if (slots_mapped_ > hard || frees_complete(views_[v])) destroy_view(v);
    } catch (const Error& e) {
      if (e.code() == Errc::internal) throw;  // a broken invariant is a bug, not a fault to absorb
      return;  // v stays consistent (retire_view); the rest waits for a later trim
    }
  }
}

void PagePool::release_page(PageId p) {
  Page& pg = pages_[p];
  be_.release(pg.handle);
  orphans_.erase({pg.tag, p});
  free_pages_ -= pg.k;
  free_by_tag(pg.tag) -= pg.k;
  pages_live_ -= pg.k;
  pg = Page{};
  free_page_ids_.push_back(p);
}

std::size_t PagePool::release_free(std::size_t want) {
  // Best effort: a step that fails leaves its part consistent (retire_view,
  // unmap_slots and release_page change nothing when their driver call
  // fails) and the others still run; the failures are reported at the end.
  // With a bound (a trim), the cheapest first: pages no view maps, then idle
  // views, least recently used first, then the free slots of live views,
  // stopping once `want` bytes are released.
  std::string failed;
  Errc code = Errc::ok;
  auto attempt = [&](auto&& step) {
    try {
      step();
    } catch (const Error& e) {
      if (e.code() == Errc::internal) throw;  // a broken invariant is a bug, not a fault to absorb
      if (code == Errc::ok) code = e.code();
      note(failed, e.what());
    }
  };
  std::size_t released = 0;
  auto enough = [&] { return released >= want; };
  std::set<PageId> refused;  // orphans whose release failed in this call: not retried (nor reported) again
  auto release_orphans = [&] {
    const std::vector<std::pair<Tag, PageId>> orphans(orphans_.begin(), orphans_.end());
    for (auto [tag, p] : orphans) {
      if (enough()) return;
      if (refused.count(p)) continue;
      attempt([&, p = p] {
        const std::size_t bytes = pages_[p].k * page_;
        refused.insert(p);  // until it is released
        release_page(p);
        refused.erase(p);
        released += bytes;
      });
    }
  };
  const bool bounded = want != std::numeric_limits<std::size_t>::max();
  if (bounded) release_orphans();  // unbounded: once, at the end
  const std::vector<ViewId> idle_views(lru_.begin(), lru_.end());
  for (ViewId v : idle_views) {
    if (enough()) break;
    attempt([&] { destroy_view(v); });
    if (bounded) release_orphans();
  }
  for (ViewId v = 0; v < views_.size() && !enough(); ++v) {
    View& w = views_[v];
    if (!w.live) continue;
    bool changed = false;
    for_each_run(w, 0, static_cast<std::uint32_t>(w.slots.size()),
                 [&](PageId p) { return p != kHole && !pages_[p].busy; }, [&](std::uint32_t a, std::uint32_t b) {
                   if (enough()) return;
                   attempt([&] {
                     unmap_slots(w, a, b);
                     changed = true;
                   });
                   if (bounded) release_orphans();
                 });
    if (changed) reindex(v);
  }
  release_orphans();
  const std::string again = retry_stranded();
  if (!again.empty()) {
    if (code == Errc::ok) code = Errc::driver;
    note(failed, again.c_str());
  }
  if (code != Errc::ok)
    throw_error(code, "releasing free memory: " + format_bytes(released) + " released, the rest kept after a failure (" +
                          failed + "); a later empty_cache retries");
  return released;
}

bool PagePool::stranded_in(std::uintptr_t va, std::size_t bytes) const {
  if (stranded_maps_.empty()) return false;
  auto it = stranded_maps_.lower_bound(va);
  return it != stranded_maps_.end() && it->first < va + bytes;
}

void PagePool::free_or_strand(std::uintptr_t va, std::size_t bytes, std::string* failed) {
  try {
    for (auto it = stranded_maps_.lower_bound(va); it != stranded_maps_.end() && it->first < va + bytes;) {
      be_.unmap(it->first, it->second.bytes);
      it = stranded_maps_.erase(it);
    }
    be_.free_reservation(va, bytes);
  } catch (const Error& e) {
    if (failed) note(*failed, e.what());
    stranded_ranges_.emplace_back(va, bytes);
  }
}

std::string PagePool::retry_stranded() {
  std::string failed;
  for (auto it = stranded_maps_.begin(); it != stranded_maps_.end();) {
    try {
      be_.unmap(it->first, it->second.bytes);
      it = stranded_maps_.erase(it);
    } catch (const Error& e) {
      note(failed, e.what());
      ++it;
    }
  }
  for (std::size_t i = 0; i < stranded_handles_.size();) {
    try {
      be_.release(stranded_handles_[i]);
      stranded_handles_.erase(stranded_handles_.begin() + static_cast<std::ptrdiff_t>(i));
    } catch (const Error& e) {
      note(failed, e.what());
      ++i;
    }
  }
  for (std::size_t i = 0; i < stranded_ranges_.size();) {
    const auto [va, bytes] = stranded_ranges_[i];
    try {
      if (stranded_in(va, bytes)) throw_error(Errc::driver, "a mapping inside it could not be unmapped");
      be_.free_reservation(va, bytes);
      stranded_ranges_.erase(stranded_ranges_.begin() + static_cast<std::ptrdiff_t>(i));
    } catch (const Error& e) {
      note(failed, e.what());
      ++i;
    }
  }
  return failed;
}

PagePool::Holdings PagePool::holdings() const {
  Holdings h;
  std::set<prim::PhysHandle> handles(stranded_handles_.begin(), stranded_handles_.end());
  for (const auto& [va, m] : stranded_maps_) handles.insert(m.handle);
  for (const Page& pg : pages_)
    if (pg.live) {
      handles.insert(pg.handle);
      h.mappings += pg.maps.size();
    }
  h.handles = handles.size();
  h.mappings += stranded_maps_.size();
  h.reservations = views_live_ + stranded_ranges_.size();
  h.stranded = stranded_maps_.size() + stranded_handles_.size() + stranded_ranges_.size();
  for (const RunKey& k : runs_.all())
    h.free_ranges.emplace_back(views_[k.view].va + static_cast<std::size_t>(k.start) * page_, static_cast<std::size_t>(k.len) * page_);
  return h;
}

void PagePool::set_restore_handle(std::size_t bytes) {
  // A power of two of at most 1024 slots (the page record's limit). With
  // single-slot growth pages, restores use them too: take_fit then reads
  // single-slot pages.
  if (handle_slots_ == 1) return;
  std::uint32_t k = 1;
  while (k < 1024 && static_cast<std::size_t>(k) * 2 * page_ <= bytes) k *= 2;
  restore_slots_ = k;
}

std::size_t PagePool::evict_span(const Span& s, bool release) {
  View& w = views_[s.view];
  if (!w.live || w.spans == 0 || s.first + s.count > w.slots.size()) broken("evict of a span that is not live");
  // Other views' mappings of these pages go first (they are BUSY, so no free
  // run changes): the pages must leave every address but the span's own.
  for (std::uint32_t i = s.first; i < s.first + s.count;) {
    const PageId p = w.slots[i];
    if (p == kHole || !pages_[p].busy) broken("evict of a span whose pages are not all busy");
    while (pages_[p].maps.size() > 1) {
      const MapEntry other = pages_[p].maps[0].view == s.view ? pages_[p].maps[1] : pages_[p].maps[0];
      View& ow = views_[other.view];
      unmap_slots(ow, other.slot, other.slot + pages_[p].k);
      if (ow.spans == 0 && ow.in_lru) {  // a view with holes goes first at the next trim
        unidle(other.view);
        idle(other.view);
      }
    }
    i += pages_[p].k;
  }
  // One unmap for the span's own range (the driver charges per handle).
  be_.unmap(s.va, static_cast<std::size_t>(s.count) * page_);
  std::size_t bytes = 0;
  for (std::uint32_t i = s.first; i < s.first + s.count;) {
    const PageId p = w.slots[i];
    Page& pg = pages_[p];
    const std::uint32_t k = pg.k;
    pg.maps.clear();
    slots_mapped_ -= k;
    for (std::uint32_t j = 0; j < k; ++j) w.slots[i + j] = kHole;
    w.holes += k;
    bytes += static_cast<std::size_t>(k) * page_;
    // The page is FREE and global now: nothing can have work queued on it.
    pg.busy = false;
    pg.tag = kGlobal;
    pg.seq = 0;
    free_pages_ += k;
    free_by_tag(kGlobal) += k;
    orphans_.insert({kGlobal, p});
    if (release) {
      try {
        release_page(p);
      } catch (const Error&) {
        // The handle stays ours, a FREE orphan: consistent, released later.
      }
    }
    i += k;
  }
  return bytes;
}

void PagePool::restore_span(const Span& s, std::uint32_t reuse_max, prim::Access a, TakeInfo* info,
                            std::size_t max_new, bool coarse) {
  View& w = views_[s.view];
  if (!w.live || w.spans == 0 || s.first + s.count > w.slots.size() ||
      std::any_of(w.slots.begin() + s.first, w.slots.begin() + s.first + s.count, [](PageId p) { return p != kHole; }))
    broken("restore of a span that is not evicted");
  // Mappings an earlier failed restore could not undo (stranded) go first:
  // nothing can be mapped over them. If that fails, nothing changed.
  const std::size_t bytes = static_cast<std::size_t>(s.count) * page_;
  for (auto it = stranded_maps_.lower_bound(s.va); it != stranded_maps_.end() && it->first < s.va + bytes;) {
    be_.unmap(it->first, it->second.bytes);
    it = stranded_maps_.erase(it);
  }
  // A view maps each page at most once.
  const std::uint32_t m = next_mark();
  for (PageId p : w.slots)
    if (p != kHole) pages_[p].mark = m;
  std::uint32_t reused = 0;
  std::vector<PageId> chosen = choose_free(std::min(reuse_max, s.count), kGlobal, m, &reused, /*exact=*/true);
  // The free count can promise more than an exact fill takes (pages this view
  // maps already, pages larger than what is left to fill).
  if (s.count - std::min(reused, s.count) > max_new)
    throw_error(Errc::out_of_memory, "restore needs " + format_bytes(static_cast<std::size_t>(s.count - reused) * page_) +
                                         " of new memory, " + format_bytes(max_new * page_) + " left under the cap");
  const auto reused_pages = static_cast<std::uint32_t>(chosen.size());
  chosen = map_pages(s.va, std::move(chosen), s.count, a, coarse);
  attach(s.view, s.first, chosen, reused_pages);
  --w.spans;  // mark_busy counts the span again
  mark_busy(s.view, s.first, s.count);
  if (info) *info = TakeInfo{w.stitched, reused, s.count - reused};
}

void PagePool::drop_evicted(const Span& s) {
  View& w = views_[s.view];
  if (!w.live || w.spans == 0) broken("drop of an evicted span that is not live");
  if (--w.spans == 0) idle(s.view);
}

void PagePool::protect_span(const Span& s, prim::Access a) {
  be_.set_access(s.va, static_cast<std::size_t>(s.count) * page_, a);
}

std::size_t PagePool::stitched_views() const {
  std::size_t n = 0;
  for (const View& w : views_) n += w.live && w.stitched;
  return n;
}

std::size_t PagePool::largest_free_run_bytes() const {
  return std::size_t{runs_.longest()} * page_;
}

void PagePool::pages_of(const Span& s, std::vector<PageId>& out) const {
  const View& w = views_[s.view];
  for (std::uint32_t i = s.first; i < s.first + s.count; i += pages_[w.slots[i]].k) out.push_back(w.slots[i]);
}

void PagePool::check() const {
  std::size_t live = 0, free = 0, mapped = 0, views = 0;
  std::vector<std::size_t> by_tag(free_by_tag_.size(), 0);
  for (PageId p = 0; p < pages_.size(); ++p) {
    const Page& pg = pages_[p];
    if (!pg.live) continue;
    if (pg.k == 0 || pg.k > std::max({handle_slots_, large_slots_, restore_slots()})) broken("page " + std::to_string(p) + " has " + std::to_string(pg.k) + " slots");
    live += pg.k;
    if (!pg.busy) {
      free += pg.k;
      if (pg.tag >= by_tag.size()) broken("free page with an uncounted tag");
      by_tag[pg.tag] += pg.k;
    }
    for (std::uint32_t i = 0; i < pg.maps.size(); ++i) {
      auto [v, slot] = pg.maps[i];
      if (v >= views_.size() || !views_[v].live || slot + pg.k > views_[v].slots.size() ||
          std::any_of(views_[v].slots.begin() + slot, views_[v].slots.begin() + slot + pg.k, [&](PageId x) { return x != p; }) ||
          (slot > 0 && views_[v].slots[slot - 1] == p))
        broken("page " + std::to_string(p) + " lists a mapping its view does not have");
      for (std::uint32_t j = 0; j < i; ++j)
        if (pg.maps[j].view == v) broken("page " + std::to_string(p) + " is mapped twice in one view");
    }
    const bool orphan = orphans_.count({pg.tag, p}) > 0;
    if (orphan != (pg.maps.empty() && !pg.busy)) broken("orphan set disagrees with page " + std::to_string(p));
    if (pg.busy && pg.maps.empty()) broken("busy page without a mapping");
  }
  std::set<RunKey> expect;
  std::map<ViewId, std::vector<RunKey>> per_view;
  std::size_t idle = 0;
  for (ViewId v = 0; v < views_.size(); ++v) {
    const View& w = views_[v];
    if (!w.live) continue;
    ++views;
    std::uint32_t holes = 0;
    for (std::uint32_t i = 0; i < w.slots.size();) {
      PageId p = w.slots[i];
      if (p == kHole) {
        ++holes;
        ++i;
        continue;
      }
      if (p >= pages_.size() || !pages_[p].live) broken("view slot maps a dead page");
      const auto& maps = pages_[p].maps;
      if (std::count_if(maps.begin(), maps.end(), [&](const MapEntry& e) { return e.view == v && e.slot == i; }) != 1) broken("view slot not listed by its page");
      mapped += pages_[p].k;
      i += pages_[p].k;  // its other slots were checked from the page's side
    }
    if (holes != w.holes) broken("hole count of view " + std::to_string(v));
    if (w.in_lru != (w.spans == 0)) broken("view " + std::to_string(v) + " idle state disagrees with its span count");
    idle += w.in_lru;
    const std::uint32_t n = static_cast<std::uint32_t>(w.slots.size());
    for (std::uint32_t i = 0; i < n;) {
      PageId p = w.slots[i];
      if (p == kHole || pages_[p].busy) {
        ++i;
        continue;
      }
      std::uint32_t j = i + 1;
      while (j < n && w.slots[j] != kHole && !pages_[w.slots[j]].busy && pages_[w.slots[j]].tag == pages_[p].tag) ++j;
      expect.insert(RunKey{pages_[p].tag, j - i, v, i});
      i = j;
    }
    std::set<RunKey> mine(w.runs.begin(), w.runs.end());
    for (const RunKey& k : mine)
      if (!runs_.contains(k)) broken("view run missing from the index");
  }
  const std::vector<RunKey> indexed = runs_.all();
  if (!std::equal(expect.begin(), expect.end(), indexed.begin(), indexed.end()) || indexed.size() != runs_.size())
    broken("free-run index differs from a recomputation");
  if (idle != lru_.size()) broken("LRU list size");
  if (live != pages_live_ || free != free_pages_ || mapped != slots_mapped_ || views != views_live_)
    broken("counters: pages " + std::to_string(live) + "/" + std::to_string(pages_live_) + " free " +
           std::to_string(free) + "/" + std::to_string(free_pages_) + " mapped " + std::to_string(mapped) + "/" +
           std::to_string(slots_mapped_));
  for (std::size_t t = 0; t < by_tag.size(); ++t)
    if (by_tag[t] != free_by_tag_[t]) broken("free count of tag " + std::to_string(t));
}

}  // namespace memlake::core
