// VirtualTensor: one reserved virtual range whose pages get physical memory
// one by one, at addresses that never move.
//
// The mechanism under the KV cache (docs/design/kv_cache.md): a tensor is
// reserved at its largest size once; physical pages are mapped only where
// data lives (a sequence's tokens) and given back when it goes. Kernels see
// one plain, contiguous (or strided) tensor and never a page table.
//
// Every page of the range is, at any time, in one of three states:
//   PRIVATE  its own physical page, zero-filled when it was mapped;
//   ZERO     the tensor's one shared zero page, mapped at this address: a
//            region that holds no data yet but that kernels may read
//            (attention over the whole maximum length reads positions that
//            hold no token). Mapped read-write, because tools rewrite bytes
//            they read (torch.compile's autotuner saves a mutated tensor's
//            whole storage and copies it back: a read-only mapping fails
//            that copy); nothing may write anything but zeros there;
//   SINK     the tensor's one shared scratch page, mapped read-write at this
//            address: a region whose writes nobody reads (a batch row that
//            holds no sequence still gets the step's writes). Its contents
//            are whatever was written last.
// A range starts all ZERO. The same two shared pages back any number of
// addresses (VMM maps one handle at many addresses), so a page of the range
// costs physical memory only while it is PRIVATE; the two shared pages are
// counted in the statistics.
//
// Page state changes unmap memory that kernels may still read (the shared
// mapping that a PRIVATE page replaces, or the PRIVATE page itself), so
// map() and unmap() first wait for the work queued on the given stream
// (only when some mapping is replaced); work on other streams is the
// caller's to order. New private pages are zeroed by a device copy from the
// zero page queued on that stream.
//
// Errors (src/core/error.h): a page range outside the tensor is
// invalid_argument; map() beyond the memory limit or the device's memory is
// out_of_memory and changes nothing (strong guarantee); a driver failure is
// driver (the tensor stays consistent: every page keeps a valid state).
// Not thread-safe: callers serialise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "prim/prim.h"

namespace memlake::vt {

// hole: unmapped, only after a driver failure left it so (a kernel reading it
// faults); the next map() or unmap() of it maps it again.
enum class PageState : std::uint8_t { zero = 0, sink = 1, priv = 2, hole = 3 };

struct VirtualTensorStats {
  std::size_t bytes = 0;           // reserved virtual bytes (the tensor's size, rounded up to pages)
  std::size_t page_size = 0;
  std::size_t pages = 0;           // pages of the range
  std::size_t private_pages = 0;   // pages with their own physical memory now
  std::size_t zero_pages = 0;      // addresses backed by the shared zero page
  std::size_t sink_pages = 0;      // addresses backed by the shared sink page
  std::size_t hole_pages = 0;      // unmapped after a driver failure (normally 0)
  std::size_t physical_bytes = 0;  // private pages plus the two shared pages
  std::size_t physical_peak = 0;
  std::size_t memory_limit = 0;    // 0: none
  std::uint64_t pages_mapped = 0;    // private pages mapped so far
  std::uint64_t pages_unmapped = 0;  // private pages given back so far
  std::uint64_t syncs = 0;           // waits for the stream before a remap
};

class VirtualTensor {
 public:
  // Reserves `bytes` (rounded up to the backend's granularity) of virtual
  // memory, creates the two shared pages and maps every page ZERO.
  // memory_limit (0 = none) caps physical_bytes.
  VirtualTensor(prim::Backend& be, std::size_t bytes, std::size_t memory_limit = 0);
  ~VirtualTensor();  // unmaps and releases everything; the caller synchronises first
  VirtualTensor(const VirtualTensor&) = delete;
  VirtualTensor& operator=(const VirtualTensor&) = delete;

  std::uintptr_t base() const { return base_; }
  std::size_t size() const { return pages_ * page_; }
  std::size_t page_size() const { return page_; }
  std::size_t pages() const { return pages_; }
  PageState state(std::size_t page) const;

  // Pages [first, first+count) become PRIVATE (those already PRIVATE keep
  // their memory and contents), new ones zero-filled on `stream`.
  void map(std::size_t first, std::size_t count, prim::Stream stream = nullptr);
  // Pages [first, first+count) become `backing` (ZERO or SINK); PRIVATE
  // ones give their memory back.
  void unmap(std::size_t first, std::size_t count, PageState backing = PageState::zero,
             prim::Stream stream = nullptr);
  // The pages that cover bytes [offset, offset+len).
  void map_bytes(std::size_t offset, std::size_t len, prim::Stream stream = nullptr);
  void unmap_bytes(std::size_t offset, std::size_t len, PageState backing = PageState::zero,
                   prim::Stream stream = nullptr);
  void set_memory_limit(std::size_t bytes) { limit_ = bytes; }

  VirtualTensorStats stats() const;

 private:
  void check_range(std::size_t first, std::size_t count, const char* what) const;
  std::uintptr_t va(std::size_t page) const { return base_ + page * page_; }
  prim::PhysHandle shared(PageState s) const { return s == PageState::zero ? zero_ : sink_; }
  static prim::Access access(PageState) { return prim::Access::read_write; }
  // Maps the shared page of state s at pages [a, b) (unmapped now).
  void map_shared(std::size_t a, std::size_t b, PageState s);
  void note_physical();
  void set_state(std::size_t p, PageState s);

  prim::Backend& be_;
  std::size_t page_ = 0, pages_ = 0, limit_ = 0;
  std::uintptr_t base_ = 0;     // pages_ + 1 pages reserved: the last is the zero source
  prim::PhysHandle zero_ = 0, sink_ = 0;
  std::vector<PageState> state_;
  std::vector<prim::PhysHandle> handle_;  // PRIVATE pages' handles
  std::size_t private_ = 0, zero_n_ = 0, sink_n_ = 0, peak_ = 0;
  std::uint64_t mapped_ = 0, unmapped_ = 0, syncs_ = 0;
};

}  // namespace memlake::vt
