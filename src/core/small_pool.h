// SmallPool: packs small requests into one-page slabs so that they do not
// each waste a page.
//
// Each stream tag has its own pool (a block freed on a stream is reused by
// that stream only; a whole slab returns to the page layer when it empties,
// where the cross-stream rule applies). Inside a pool, blocks are carved
// from slabs best-fit (smallest size, then lowest address), split on
// allocation and coalesced with free neighbours on free. The free blocks are
// indexed by size in LengthBuckets (no tree walk, no allocation per update)
// and block records are recycled. One empty slab per stream is kept to avoid
// churn; drop_empty() gives those back under memory pressure.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "core/length_buckets.h"
#include "core/page_pool.h"

namespace memlake::core {

// Where slabs come from: the allocator's large-allocation path.
class SlabSource {
 public:
  virtual ~SlabSource() = default;
  virtual Span acquire_slab(Tag tag) = 0;  // one page; throws on OOM
  virtual void release_slab(const Span& s, Tag tag) = 0;
};

class SmallPool {
 public:
  static constexpr std::size_t kAlign = 512;
  struct Block;

  SmallPool(SlabSource& source, std::size_t slab_size) : src_(source), slab_(slab_size) {}
  ~SmallPool();
  SmallPool(const SmallPool&) = delete;
  SmallPool& operator=(const SmallPool&) = delete;

  static std::size_t round(std::size_t size) { return (size + kAlign - 1) / kAlign * kAlign; }

  // `size` is already rounded and <= slab size. Throws what the source throws.
  Block* alloc(std::size_t size, Tag tag);
  void free(Block* b);
  std::uintptr_t ptr(const Block* b) const;
  std::size_t size(const Block* b) const;

  // Returns cached empty slabs to the page layer. Returns how many.
  std::size_t drop_empty();
  std::vector<Span> slab_spans() const;
  std::size_t slabs() const { return slabs_live_; }
  std::size_t bytes_in_use() const { return in_use_; }
  void check() const;

 private:
  struct Slab;
  // A free block in its size's bucket, ordered by address.
  struct FreeRef {
    std::uintptr_t ptr;
    Block* block;
    bool operator<(const FreeRef& o) const { return ptr < o.ptr; }
  };
  struct PerTag {
    LengthBuckets<FreeRef> free;  // by size / kAlign
    Slab* empty = nullptr;        // cached empty slab
  };
  PerTag& pool(Tag t);
  Block* carve(Block* b, std::size_t size);
  void retire(Slab* s);
  static void index(PerTag& pt, Block* b);
  static void unindex(PerTag& pt, Block* b);
  Block* new_block(std::uintptr_t ptr, std::size_t size, Block* prev, Block* next, Slab* slab);
  void drop_block(Block* b);

  SlabSource& src_;
  const std::size_t slab_;
  std::vector<PerTag> pools_;
  std::size_t slabs_live_ = 0;
  std::size_t in_use_ = 0;
  std::set<Slab*> all_;  // for check() and destruction
  std::vector<Block*> spare_;  // block records to reuse
};

}  // namespace memlake::core
