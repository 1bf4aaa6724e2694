// PagePool: the mechanism under the stitching allocator.
//
// Physical memory is a set of pages, each one backend handle of k slots of
// page_size() bytes (the stitch unit; k = 1, or handle_slots for the bulk of
// growth when large handles are on). Virtual memory is a set of views: a
// view is one reserved VA range whose slots each map one slot of a page; a
// page fills k consecutive slots of every view that maps it. A page may be
// mapped in several views at once (that is what a stitched view is: pages
// borrowed from elsewhere, aliased into one contiguous range). Every count
// (reserved, free, mapped, spans) is in slots.
//
// A page is BUSY (part of a live span handed out above) or FREE. A FREE page
// carries a stream tag: kGlobal when any stream may use it, or the tag of
// the stream that freed it while that stream's work may still touch it.
//
// The free-run index holds, for every view, the maximal runs of consecutive
// slots whose pages are FREE with one tag. take_fit() is a best-fit lookup
// in that index and needs no driver call. take_stitched() builds a new view
// from free pages anywhere (plus freshly created pages if there are not
// enough) and is the only path that maps memory.
//
// Views that hold no live span are kept mapped (cached) and evicted LRU by
// trim_views(); a page left without any mapping becomes an orphan, still
// FREE and reserved, and is the first choice of the next stitch.
//
// Not thread-safe: the allocator above serialises access.
#pragma once

#include <cstdint>
#include <limits>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/inline_vec.h"
#include "core/run_index.h"
#include "prim/prim.h"

namespace memlake::core {

using PageId = std::uint32_t;
inline constexpr Tag kGlobal = 0;

// A contiguous range of slots of one view, handed out above.
struct Span {
  ViewId view = 0;
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  std::uintptr_t va = 0;
};

// Waits until the work that stream `tag` submitted before its free number
// `seq` is complete. Implemented by the stream tracker.
class Quiescer {
 public:
  virtual ~Quiescer() = default;
  virtual void wait(Tag tag, std::uint64_t seq) = 0;
  // Whether that work is complete, without blocking.
  virtual bool done(Tag tag, std::uint64_t seq) = 0;
};

// How a span was obtained, for statistics.
struct TakeInfo {
  bool stitched_view = false;   // the span lies in a view that aliases pages
  std::uint32_t pages_reused = 0;   // existing pages mapped into a new view
  std::uint32_t pages_created = 0;  // new physical pages
  bool repaired = false;            // an idle view was re-mapped in part (take_repaired)
};

class PagePool {
 public:
  // handle_slots > 1: growth creates handles of that many slots for the bulk
  // of a shortfall (fewer driver calls, larger physical handles); large_slots
  // (0 or a multiple of handle_slots): a second, larger size for shortfalls
  // worth at least two of those.
  PagePool(prim::Backend& backend, Quiescer& quiescer, std::uint32_t handle_slots = 1, std::uint32_t large_slots = 0);
  ~PagePool();  // unmaps and releases everything; caller synchronises first
  PagePool(const PagePool&) = delete;
  PagePool& operator=(const PagePool&) = delete;

  std::size_t page_size() const { return page_; }

  // Best fit: the shortest run of >= n FREE pages tagged `tag` or kGlobal.
  std::optional<Span> take_fit(std::uint32_t n, Tag tag, TakeInfo* info = nullptr);

  // Number of FREE pages `tag` may use (own tag or global, mapped or orphan).
  std::size_t usable_free_pages(Tag tag) const;

  // A new view of n slots: `reuse_max` existing usable free pages at most
  // (orphans first, then largest runs first), the rest freshly created.
  // Strong guarantee: on any failure nothing changes.
  Span take_stitched(std::uint32_t n, Tag tag, std::uint32_t reuse_max, TakeInfo* info = nullptr);

  // Extends a view at its tail: the longest free run ending at a view's
  // last slot grows to n slots by mapping n - len pages behind it (free
  // ones first, new ones for the rest). nullopt if no view qualifies.
  // Strong guarantee like take_stitched.
  std::optional<Span> take_extended(std::uint32_t n, Tag tag, std::uint32_t reuse_max, TakeInfo* info = nullptr);

  // Repairs an idle cached view instead of stitching a new one: in a window
  // of n consecutive slots of an idle view, only the slots unable to serve
  // `tag` (holes, pages busy through another view, another stream's pages)
  // are re-mapped, with free pages from elsewhere (at most `reuse_max`) or
  // new ones: r maps instead of n, and no more new pages than a stitch would
  // create. Windows are tried fewest bad slots first, up to kRepairTries of
  // them, until one's bad slots can be filled exactly. Only views whose frees
  // are complete qualify (their slots are unmapped without waiting), and
  // only a window needing fewer than min(n, max_maps) maps. nullopt if none
  // qualifies. On failure the state stays consistent (the view keeps holes)
  // and nothing is lost.
  std::optional<Span> take_repaired(std::uint32_t n, Tag tag, std::uint32_t reuse_max, std::uint32_t max_maps,
                                    TakeInfo* info = nullptr);
  // The pages take_extended(n, tag) would map, nullopt if no view qualifies
  // (it may still decline, see there).
  std::optional<std::uint32_t> extension_maps(std::uint32_t n, Tag tag) const;

  // Slots [at, at + n) of view v, for an allocation that begins inside the
  // last page of the live span ending at `at` (a page tail shared by
  // neighbours, docs/design/allocator.md): taken when they are mapped FREE
  // pages `tag` may use (covered to the end of the page holding the last
  // one); else, with may_map, when the free slots from `at` reach the view's
  // end, by extending the view as take_extended does (reuse_max free pages
  // at most, new ones for the rest). Never more than max_cover slots.
  // nullopt if neither applies; strong guarantee like take_stitched.
  std::optional<Span> take_after(ViewId v, std::uint32_t at, std::uint32_t n, std::uint32_t max_cover, Tag tag,
                                 bool may_map, std::uint32_t reuse_max, TakeInfo* info = nullptr);
  // Slots of the page mapped at slot i of view v (0: a hole or past the end).
  std::uint32_t page_slots(ViewId v, std::uint32_t i) const;

  // Pages of `s` become FREE, tagged `tag`, freed as number `seq` of it.
  // ends_span: the view counts one live span less (false when `s` is one
  // part of an allocation given back in parts; a part may be empty).
  void give_back(const Span& s, Tag tag, std::uint64_t seq, bool ends_span = true);

  // Pages freed by `tag` with a number <= done become kGlobal.
  void settle(Tag tag, std::uint64_t done);
  // Oldest free number of `tag` still unsettled, 0 if none.
  std::uint64_t oldest_unsettled(Tag tag);
  std::vector<Tag> tags_with_unsettled();

  // Unmaps idle view `v` now (after waiting for the work of its last frees)
  // and forgets it. Its pages stay reserved (orphans). With keep_va, the
  // virtual range stays reserved and is returned for free_range() later
  // (the quarantine of the memory-safety mode). If a wait or an unmap
  // fails, it throws and the view stays live and idle, its slots unmapped
  // so far holes (no longer indexed); a failed free of the range keeps it
  // stranded (no throw).
  std::pair<std::uintptr_t, std::size_t> retire_view(ViewId v, bool keep_va);
  void free_range(std::uintptr_t va, std::size_t bytes) { free_or_strand(va, bytes, nullptr); }

  // Unmaps idle views, least recently used first, until mapped slots <=
  // max_mapped: those whose last frees are complete, without waiting; while
  // mapped slots exceed twice max_mapped, also the others, waiting for their
  // work. Views left over go at a later trim. Never throws: a view whose
  // wait or unmap fails stays consistent (still mapped, or with holes no
  // longer indexed) and goes at a later trim; the allocation that called
  // this has succeeded and must not be lost.
  void trim_views(std::size_t max_mapped);
  // Release every FREE page: idle views are destroyed, free slots of live
  // views unmapped, and what failure paths kept (stranded, below) is given
  // back. Precondition: the device is synchronised and every tag settled.
  // Returns the bytes released. want: stop once that many bytes are
  // released (a trim; pages no view maps first, then idle views least
  // recently used first, then free slots of live views). On a driver
  // failure it goes on with the rest, then throws naming what failed; the
  // pool stays consistent and a later call retries (basic guarantee).
  std::size_t release_free(std::size_t want = std::numeric_limits<std::size_t>::max());

  // What the pool holds from the backend, for audits against the backend's
  // own count: physical handles (distinct), mappings (one per page and view
  // that maps it), reserved ranges; `stranded` of them are resources a
  // failure path could not give back yet (see "Failure model" in
  // docs/design/allocator.md). free_ranges: every indexed free run as
  // (address, bytes); each must be mapped read-write.
  struct Holdings {
    std::size_t handles = 0, mappings = 0, reservations = 0, stranded = 0;
    std::vector<std::pair<std::uintptr_t, std::size_t>> free_ranges;
  };
  Holdings holdings() const;

  std::size_t reserved_bytes() const { return pages_live_ * page_; }
  std::size_t mapped_bytes() const { return slots_mapped_ * page_; }
  std::size_t pages() const { return pages_live_; }
  std::size_t free_pages() const { return free_pages_; }
  std::size_t mapped_pages() const { return slots_mapped_; }
  std::size_t views() const { return views_live_; }
  std::size_t stitched_views() const;
  bool view_stitched(ViewId v) const { return views_[v].stitched; }
  std::size_t largest_free_run_bytes() const;

  void pages_of(const Span& s, std::vector<PageId>& out) const;

  // ---- Residency: a live span's pages leave and come back at the same address.
  // Precondition of evict_span: `s` is live, no device work uses it any more,
  // and its bytes are saved elsewhere (or not wanted). Its slots become holes
  // of its view: the view keeps the address range and still counts the span
  // as live, so nothing else is ever placed there. Mappings of its pages in
  // other views go too. With `release` the pages go back to the backend
  // (sleep); otherwise they stay reserved as FREE pages for others (tiering).
  // Returns the bytes that left the span. On a failed unmap nothing changed
  // for the pages not yet handled and the error is rethrown.
  std::size_t evict_span(const Span& s, bool release);
  // Maps pages at the holes of an evicted span again, with access `a`: free
  // pages that fit exactly first (at most reuse_max slots), new handles for
  // the rest, and marks them BUSY: with `coarse` in power-of-two handles of at
  // most restore_slots(), largest first (a wake: few handles, the allocation
  // stays); else as growth makes them (a tiering restore: its pages are soon
  // free again, and a large handle is taken whole by whatever takes it next).
  // Strong guarantee: on failure the slots stay holes.
  // At most `max_new` slots of new pages (a cap): Errc::out_of_memory before
  // anything is mapped when the free pages it can take leave more to create.
  void restore_span(const Span& s, std::uint32_t reuse_max, prim::Access a, TakeInfo* info = nullptr,
                    std::size_t max_new = SIZE_MAX, bool coarse = true);
  // An evicted span is freed: its slots stay holes; its view may become idle.
  void drop_evicted(const Span& s);
  // Sets the access of a live span's mappings in its own view (read-only weights).
  void protect_span(const Span& s, prim::Access a);
  // The largest handle a restore creates, in slots (set from the
  // tier_handle_size option, rounded down to a power of two).
  std::uint32_t restore_slots() const { return restore_slots_; }
  void set_restore_handle(std::size_t bytes);
  // Slots of VA a new view reserves at least (else twice its size): with page
  // tails, room for allocations made one after another to continue one view.
  void set_min_view_slots(std::uint32_t slots) { min_view_slots_ = slots; }

  // Full consistency check; throws Errc::internal naming the violation.
  void check() const;

 private:
  static constexpr PageId kHole = 0xffffffffu;
  static constexpr ViewId kNoView = 0xffffffffu;
  static constexpr std::size_t kRepairTries = 4;
  // idle views a repair tries before it gives way to a stitch
  struct MapEntry {
    ViewId view;
    std::uint32_t slot;  // the page's first slot in that view
  };
  // One cache line, its mappings included while there are at most three.
  struct alignas(64) Page {
    prim::PhysHandle handle = 0;
    std::uint64_t seq = 0;
    Tag tag = kGlobal;
    std::uint32_t mark = 0;
    std::uint32_t k = 1;  // slots
    bool live = false;
    bool busy = false;
    InlineVec<MapEntry, 3> maps;
  };
  static_assert(sizeof(Page) == 64);
  struct LastFree {
    Tag tag;
    std::uint64_t seq;
  };
  // What re-indexing an alias view reads (runs, slots, mark, window) comes
  // first and a view starts a cache line: one line per alias window.
  struct alignas(64) View {
    std::vector<RunKey> runs;  // sorted by start
    std::vector<PageId> slots;
    std::uint32_t mark = 0;    // reindex_slots: this view has a window in scratch_windows_ ...
    std::uint32_t window = 0;  // ... at this index
    bool live = false;
    bool stitched = false;
    bool in_lru = false;
    std::uint32_t spans = 0;  // live spans in this view
    std::uint32_t holes = 0;
    std::uint32_t capacity = 0;  // slots of reserved VA (>= slots.size())
    std::uintptr_t va = 0;
    InlineVec<LastFree, 2> last_free;  // per tag, for quiescing
    std::list<ViewId>::iterator lru;
  };

  // Per tag, in free order: spans whose pages were freed under that tag and
  // may still carry it, for settle(). Entries go stale harmlessly.
  struct Unsettled {
    std::uint64_t seq;
    ViewId view;
    std::uint32_t first, count;
  };
  // f(a, b) for each maximal run [a, b) within [lo, hi) of slots i of w
  // with pred(w.slots[i]); f may change the slots it is given.
  template <class Pred, class F>
  static void for_each_run(const View& w, std::uint32_t lo, std::uint32_t hi, Pred&& pred, F&& f);
  template <class F>
  static void for_each_mapped_chunk(const View& w, F&& f);
  // Slots first..first+count-1 of a view.
  struct SlotRange {
    ViewId view;
    std::uint32_t first, count;
  };
  // Appends the slots of every view that maps page pg, except view `skip`.
  static void append_slots(const Page& pg, ViewId skip, std::vector<SlotRange>& out);
  PageId new_page_id();
  ViewId new_view_id();
  // Free pages worth `want` slots (*got: their slots), none carrying `mark`;
  // with `exact`, never more than `want`.
  std::vector<PageId> choose_free(std::uint32_t want, Tag tag, std::uint32_t mark, std::uint32_t* got, bool exact = false);
  std::uint32_t slots_of(const std::vector<PageId>& pages) const;
  // coarse: new handles as large as restore_slots() allows (restores), not growth's sizes.
  std::vector<PageId> map_pages(std::uintptr_t va, std::vector<PageId> chosen, std::uint32_t n,
                                prim::Access access = prim::Access::read_write, bool coarse = false);
  // Whether slot i of view w is the first slot of its page (or a hole, or past the end).
  bool page_starts(const View& w, std::uint32_t i) const {
    return i == 0 || i >= w.slots.size() || w.slots[i] == kHole || w.slots[i - 1] != w.slots[i];
  }
  void attach(ViewId v, std::uint32_t from, const std::vector<PageId>& pages, std::uint32_t reused);
  std::optional<RunKey> best_extension(std::uint32_t n, Tag tag) const;
  // Grows free run k (ending at its view's last slot) to n slots at the view's tail.
  std::optional<Span> extend_run(const RunKey& k, std::uint32_t n, Tag tag, std::uint32_t reuse_max,
                                 std::uint32_t max_cover, TakeInfo* info);
  void reindex(ViewId v);
  // Re-index only the runs of v that touch slots [a, b), whose pages must
  // all be BUSY (!free_now) or all FREE with tag t.
  void reindex_window(ViewId v, std::uint32_t a, std::uint32_t b, bool free_now, Tag t);
  void reindex_slots(const std::vector<SlotRange>& ranges, bool free_now, Tag t);
  // Adds slots [first, first+count) of v to scratch_windows_, grouped by the views' mark m.
  void add_to_window(std::uint32_t m, ViewId v, std::uint32_t first, std::uint32_t count);
  void scan_runs(ViewId v, std::uint32_t lo, std::uint32_t hi, std::vector<RunKey>& out) const;
  // Re-index the views other than v that alias slots [first, first+n) of v.
  // Their pages are in the state free_now / t (see reindex_window).
  void reindex_aliases(ViewId v, std::uint32_t first, std::uint32_t n, bool free_now, Tag t);
  bool unsettled_page(PageId p, Tag tag, std::uint64_t seq) const;
  // Whether the work queued before w's last frees is complete (no wait).
  bool frees_complete(const View& w);
  void push_unsettled(Tag tag, const Unsettled& u);

  // Failure paths: what could not be given back to the backend while
  // undoing a failed step (a mapping, a handle, a reserved range) is kept
  // here, counted in holdings(), kept out of the way of later maps, and
  // retried by release_free() and the destructor.
  struct StrandedMap {
    std::size_t bytes;
    prim::PhysHandle handle;
  };
  bool stranded_in(std::uintptr_t va, std::size_t bytes) const;
  // Frees a reserved range (first the stranded mappings inside it); keeps
  // it stranded if that fails, appending why to *failed (if given).
  void free_or_strand(std::uintptr_t va, std::size_t bytes, std::string* failed);
  // Tries to give back everything stranded; returns what failed ("" if none).
  std::string retry_stranded();

  void destroy_view(ViewId v);
  void unmap_slots(View& view, std::uint32_t from, std::uint32_t to);
  void detach(PageId p, ViewId v);
  void release_page(PageId p);
  void idle(ViewId v);
  void unidle(ViewId v);
  Span mark_busy(ViewId v, std::uint32_t first, std::uint32_t n);
  std::uint32_t next_mark() { return ++mark_epoch_; }
  std::size_t& free_by_tag(Tag t) { return t < free_by_tag_.size() ? free_by_tag_[t] : grow_tags(t); }
  std::size_t& grow_tags(Tag t);
  void prune(Tag tag);

  prim::Backend& be_;
  Quiescer& quiescer_;
  const std::size_t page_;
  const std::uint32_t handle_slots_;
  const std::uint32_t large_slots_;  // 0: no second size
  std::uint32_t restore_slots_ = 1;
  std::uint32_t min_view_slots_ = 0;
  std::vector<Page> pages_;
  std::vector<PageId> free_page_ids_;
  std::vector<View> views_;
  std::vector<ViewId> free_view_ids_;
  RunIndex runs_;  // every view's free runs, best fit first
  std::set<std::pair<Tag, PageId>> orphans_;  // FREE pages mapped nowhere
  std::list<ViewId> lru_;                      // idle views, oldest first
  std::vector<std::vector<Unsettled>> unsettled_;
  std::vector<std::size_t> unsettled_head_;
  std::vector<std::size_t> free_by_tag_;  // FREE pages per tag
  std::map<std::uintptr_t, StrandedMap> stranded_maps_;  // by address
  std::vector<prim::PhysHandle> stranded_handles_;
  std::vector<std::pair<std::uintptr_t, std::size_t>> stranded_ranges_;
  std::size_t pages_live_ = 0, free_pages_ = 0, slots_mapped_ = 0, views_live_ = 0;
  std::uint32_t mark_epoch_ = 0;
  struct Window {
    ViewId view;
    std::uint32_t start, end;
  };
  std::vector<Window> scratch_windows_;
  std::vector<SlotRange> scratch_ranges_;
};

}  // namespace memlake::core
