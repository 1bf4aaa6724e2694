// Allocator: the stitching caching allocator of one device (policy).
//
//   size 0                  -> nullptr, nothing else happens
//   size <= small_max       -> SmallPool (512-byte blocks in one-page slabs)
//   larger                  -> ceil(size / page) whole pages, found by
//     1. best-fit run of free pages in a cached view (no driver call),
//     2. after settling other streams' completed frees, the same again,
//     3. a stitched view over free pages from anywhere, plus new pages only
//        for what free pages cannot cover (cap and device permitting).
// See docs/design/allocator.md for why.
//
// Not thread-safe (see DeviceAllocator for the locked, measured wrapper).
// Every failure leaves the allocator consistent; check() verifies that.
#pragma once

#include <deque>
#include <limits>
#include <memory>

#include "core/options.h"
#include "core/page_pool.h"
#include "core/ptr_table.h"
#include "core/small_pool.h"
#include "core/span_cache.h"
#include "core/stream_tracker.h"
#include "prim/prim.h"

namespace memlake::core {

// How one allocation was served, for the statistics layer.
enum class Path : std::uint8_t { zero, small, fit, fit_stitched, stitched, grown };

struct AllocInfo {
  std::size_t rounded = 0;
  Path path = Path::zero;
  std::uint32_t pages_created = 0;
  std::uint32_t pages_reused = 0;  // existing pages mapped into a new view
  bool stitch_made = false;        // a new view aliasing existing pages
  bool repaired = false;           // an idle cached view re-mapped in part instead
  std::uint64_t slow_ns = 0;       // time after the first fit missed (0 on the hot path)
};

struct FreeInfo {
  std::size_t requested = 0;
  std::size_t rounded = 0;
  bool evicted = false;  // its bytes lived in a lower tier (the residency layer drops them)
};

// A large allocation as the residency layer sees it.
struct Resident {
  std::uintptr_t ptr = 0;
  std::size_t requested = 0;
  std::size_t bytes = 0;  // whole pages
  std::uint16_t label = 0;
  bool evicted = false;
  bool readonly = false;
  prim::Stream stream = nullptr;
};

// Instantaneous state, read by the statistics layer.
struct Gauges {
  std::size_t page_size = 0;
  std::size_t reserved = 0;
  std::size_t mapped = 0;
  std::size_t free_page_bytes = 0;
  std::size_t views = 0;
  std::size_t active_blocks = 0;
  std::size_t small_slabs = 0;
  std::size_t memory_cap = 0;
};

class Allocator final : private SlabSource {
 public:
  static constexpr std::size_t kMaxAlloc = std::size_t{1} << 48;

  Allocator(prim::Backend& backend, const Options& opts);
  ~Allocator() override;
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // label: the residency label of the allocation (memlake_tag), 0 = none.
  void* alloc(std::size_t size, prim::Stream stream, AllocInfo* info = nullptr, std::uint16_t label = 0) {
    return alloc_tagged(size, tracker_.tag_of(stream), info, label);
  }
  // The same under a given tag (a graph pool's, graph_tag()).
  void* alloc_tagged(std::size_t size, Tag tag, AllocInfo* info = nullptr, std::uint16_t label = 0);

  // ---- CUDA graph capture (docs/design/graphs.md). A graph pool's
  // allocations are made under a tag of its own: they take only pages every
  // stream may use, and its frees are never settled for others until
  // release_graph_tag(), after the device was synchronised.
  Tag graph_tag(prim::Stream capture_stream) { return tracker_.held_tag(capture_stream); }
  // Frees made under `t` so far are complete (the caller synchronised the
  // device); from now on `t` follows its capture stream, like any stream's tag.
  void release_graph_tag(Tag t);
  // Streams being captured on this device: while any is, no event or stream
  // is queried or synchronised, and no cached view is unmapped.
  void set_capturing(prim::Stream s, bool on);
  bool capturing() const { return !capturing_.empty(); }
  // Slow paths ask the driver whether the stream is being captured without
  // set_capturing() having said so, and refuse (Errc::invalid_argument).
  void set_capture_guard(bool on) { capture_guard_ = on; }
  // Throws Errc::invalid_argument for a pointer that is not a live allocation.
  FreeInfo free(void* ptr);
  // What alloc(size) hands out: 512-byte blocks up to small_max, whole pages above.
  std::size_t rounded_size(std::size_t size) const {
    if (size <= opts_.small_max) return SmallPool::round(size);
    const std::size_t page = pool_.page_size();
    return (size + page - 1) / page * page;
  }
  // Size requested for a live allocation, 0 if `ptr` is not one.
  std::size_t size_of(const void* ptr) const;
  bool owns(const void* ptr) const { return records_.contains(reinterpret_cast<std::uintptr_t>(ptr)); }
  // Stream a live allocation was made on (nullptr if none or not live).
  prim::Stream stream_of(const void* ptr) const;

  // Synchronise the device and release every free page to the driver (or,
  // with `want`, free pages until that many bytes are released: a trim the
  // daemon asks for). On a driver failure it releases what it can, throws,
  // and stays consistent.
  std::size_t empty_cache(std::size_t want = std::numeric_limits<std::size_t>::max());
  // 0 removes the cap. Lowering it below what is reserved releases free pages.
  void set_memory_cap(std::size_t bytes);

  // ---- Residency: the allocator's side of evicting an allocation's pages
  // while its address stays reserved, and of restoring them (the residency
  // engine moves the bytes and orders the device work; see docs/design/residency.md).
  // The large allocations (small ones share slabs and never leave the GPU).
  void residents(std::vector<Resident>& out) const;
  // Precondition: the bytes are saved (or not wanted) and no device work
  // uses the allocation. Its pages leave its address (release: back to the
  // driver; otherwise FREE for other allocations). Errc::invalid_argument for
  // an unknown pointer, a small allocation or one already evicted.
  std::size_t evict(void* ptr, bool release);
  // Maps pages at an evicted allocation's address again, read-write
  // (contents undefined until the caller copies them back). Out of memory
  // like alloc: the allocation stays evicted (with page tails, the parts
  // already mapped stay mapped and a later restore maps the rest). New pages:
  // a wake's few large handles (coarse), else growth's (PagePool::restore_span).
  void restore(void* ptr, bool coarse = true);
  // Maps a resident large allocation read-only (device writes then fault) or
  // read-write again. Frees and evictions make its pages writable first.
  void set_readonly(void* ptr, bool readonly);
  // One large allocation; Errc::invalid_argument as evict() says.
  Resident resident(void* ptr);

  Gauges gauges() const;
  std::size_t stitched_views() const { return pool_.stitched_views(); }
  std::size_t largest_free_bytes() const { return pool_.largest_free_run_bytes(); }
  prim::Backend& backend() { return be_; }
  const Options& options() const { return opts_; }

  void check() const;  // throws Errc::internal on any inconsistency
  // What is held from the backend (audits compare it with the backend's count).
  PagePool::Holdings holdings() const;

 private:
  struct Record {
    std::size_t requested;
    Tag tag;
    SmallPool::Block* block;  // small allocation, or
    Span span;                // large allocation
    std::uint16_t label = 0;
    bool evicted = false;     // pages unmapped, address kept
    bool readonly = false;    // mapped read-only (restored weights)
    // Page tails (tail_share, docs/design/allocator.md): `prev` is the live allocation in whose
    // last page this one begins (its span then starts at the page after it); `next` the one that
    // begins in this one's last page (that page stays this span's; it goes to `next` when this
    // one is freed). 0: none.
    std::uintptr_t prev = 0, next = 0;
    std::uint32_t tail_first = 0;  // with `next`: the first slot of the page(s) it shares with next
    std::uint32_t slots = 0;  // slots taken at alloc (the statistics' rounded size)
    std::uint32_t ev_first = 0, ev_count = 0;  // evicted: the slots it held alone, unmapped
    std::uint32_t ro_first = 0, ro_count = 0;  // readonly: the slots it held alone, protected
  };
  Record& large_record(void* ptr, const char* what);
  Resident as_resident(std::uintptr_t ptr, const Record& r) const;
  // Page tails: an allocation that begins in the last page of a recent one of
  // the same stream, taking the pages after it (may_map: extending its view).
  // 0 if no candidate saves a page.
  std::uintptr_t alloc_in_tail(std::size_t size, Tag tag, bool may_map, AllocInfo& info, std::uint16_t label);
  void push_tail(std::uintptr_t ptr);
  // Where an allocation may begin in r's last page (0: nowhere).
  std::uintptr_t tail_of(std::uintptr_t ptr, const Record& r) const;
  // Slots [first, first + count) of the view of `in` (first may lie before in.first).
  Span slots_span(const Span& in, std::uint32_t first, std::uint32_t count) const;
  // The slots of r's span it holds alone (all but the shared last page while `next` begins in it).
  Span alone(const Record& r) const;
  FreeInfo free_large(Record& r);

  // fresh: a new view of its own (memory-safety modes), never a cached one.
  // tail: before stitching, a page tail may be continued instead (alloc_in_tail
  // with may_map): then tail->ptr is the allocation, made and recorded, and the
  // returned span is empty.
  struct TailRequest {
    std::uint16_t label = 0;
    std::uintptr_t ptr = 0;
  };
  Span acquire(std::uint32_t pages, Tag tag, std::size_t request, AllocInfo& info, bool fresh = false,
               TailRequest* tail = nullptr);
  void* alloc_safe(std::size_t size, Tag tag, AllocInfo& info);
  void free_safe(std::uintptr_t ptr, const Record& r);
  bool settle_others(Tag tag, bool block);
  void refuse_unannounced_capture(Tag tag);
  // Gives every recently freed span (SpanCache) back to the pool; true if there were any.
  bool unpark();
  void give_back_all(std::vector<SpanCache::Entry>& es);
  [[noreturn]] void oom(std::size_t request, Tag tag, const std::string& why);
  Span acquire_slab(Tag tag) override;
  void release_slab(const Span& s, Tag tag) override;

  prim::Backend& be_;
  Options opts_;
  StreamTracker tracker_;
  PagePool pool_;
  SmallPool small_;
  PtrTable<Record> records_;  // live allocations by address
  SpanCache parked_;                          // large spans freed a moment ago, still BUSY in the pool
  std::vector<SpanCache::Entry> unparked_;    // scratch: what goes back to the pool
  std::size_t cap_;
  std::uint32_t last_slab_created_ = 0;
  // Memory-safety modes (guard, quarantine): each allocation has its own view.
  const bool safe_;
  std::deque<std::pair<std::uintptr_t, std::size_t>> quarantined_;  // VA kept unmapped, oldest first
  std::uint64_t frees_ = 0;
  std::vector<prim::Stream> capturing_;  // streams under capture (set_capturing)
  std::vector<std::uintptr_t> tails_;    // page tails: recent large allocations, newest last (kTails at most)
  static constexpr std::size_t kTails = 8;
  bool capture_guard_ = false;
};

}  // namespace memlake::core
