#include "core/small_pool.h"

#include "core/error.h"

namespace memlake::core {

struct SmallPool::Slab {
  Span span;
  Tag tag;
  Block* head;  // block at offset 0
  std::size_t live = 0;
};

struct SmallPool::Block {
  std::uintptr_t ptr;
  std::size_t size;
  bool free;
  Block* prev;
  Block* next;
  Slab* slab;
};

SmallPool::~SmallPool() {
  // The page pool underneath is torn down by the allocator; only free nodes.
  for (Slab* s : all_) {
    for (Block* b = s->head; b;) {
      Block* n = b->next;
      delete b;
      b = n;
    }
    delete s;
  }
  for (Block* b : spare_) delete b;
}

void SmallPool::index(PerTag& pt, Block* b) {
  pt.free.insert(static_cast<std::uint32_t>(b->size / kAlign), FreeRef{b->ptr, b});
}

void SmallPool::unindex(PerTag& pt, Block* b) {
  pt.free.erase(static_cast<std::uint32_t>(b->size / kAlign), FreeRef{b->ptr, b});
}

SmallPool::Block* SmallPool::new_block(std::uintptr_t ptr, std::size_t size, Block* prev, Block* next, Slab* slab) {
  if (spare_.empty()) return new Block{ptr, size, true, prev, next, slab};
  Block* b = spare_.back();
  spare_.pop_back();
  *b = Block{ptr, size, true, prev, next, slab};
  return b;
}

void SmallPool::drop_block(Block* b) {
  try {
    spare_.push_back(b);
  } catch (...) {
    delete b;  // no room to keep it: free it instead
  }
}

SmallPool::PerTag& SmallPool::pool(Tag t) {
  if (t >= pools_.size()) pools_.resize(t + 1);
  return pools_[t];
}

std::uintptr_t SmallPool::ptr(const Block* b) const { return b->ptr; }
std::size_t SmallPool::size(const Block* b) const { return b->size; }

SmallPool::Block* SmallPool::carve(Block* b, std::size_t size) {
  PerTag& pt = pool(b->slab->tag);
  if (b->size - size >= kAlign) {
    Block* rest = new_block(b->ptr + size, b->size - size, b, b->next, b->slab);  // may throw: nothing changed yet
    unindex(pt, b);
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    index(pt, rest);
  } else {
    unindex(pt, b);
  }
  b->free = false;
  if (b->slab->live++ == 0 && pt.empty == b->slab) pt.empty = nullptr;
  in_use_ += b->size;
  return b;
}

SmallPool::Block* SmallPool::alloc(std::size_t size, Tag tag) {
  PerTag& pt = pool(tag);
  Block* fit = nullptr;  // best fit: the smallest free block that holds size, lowest address first
  pt.free.visit(static_cast<std::uint32_t>(size / kAlign), [&](std::uint32_t, const FreeRef& r) {
    fit = r.block;
    return false;
  });
  if (fit) return carve(fit, size);
  Span span = src_.acquire_slab(tag);  // may throw: nothing changed yet
  Slab* s = new Slab{span, tag, nullptr, 0};
  s->head = new_block(span.va, slab_, nullptr, nullptr, s);
  all_.insert(s);
  ++slabs_live_;
  index(pt, s->head);
  return carve(s->head, size);
}

void SmallPool::free(Block* b) {
  Slab* s = b->slab;
  PerTag& pt = pool(s->tag);
  in_use_ -= b->size;
  b->free = true;
  if (Block* n = b->next; n && n->free) {
    unindex(pt, n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    drop_block(n);
  }
  if (Block* p = b->prev; p && p->free) {
    unindex(pt, p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    drop_block(b);
    b = p;
  }
  index(pt, b);
  if (--s->live == 0) {
    // Keep one empty slab per stream; hand back any other.
    if (pt.empty == nullptr)
      pt.empty = s;
    else
      retire(s);
  }
}

void SmallPool::retire(Slab* s) {
  PerTag& pt = pool(s->tag);
  unindex(pt, s->head);
  src_.release_slab(s->span, s->tag);
  drop_block(s->head);
  all_.erase(s);
  delete s;
  --slabs_live_;
}

std::size_t SmallPool::drop_empty() {
  std::size_t n = 0;
  for (PerTag& pt : pools_)
    if (pt.empty) {
      Slab* s = pt.empty;
      pt.empty = nullptr;
      retire(s);
      ++n;
    }
  return n;
}

std::vector<Span> SmallPool::slab_spans() const {
  std::vector<Span> out;
  for (const Slab* s : all_) out.push_back(s->span);
  return out;
}

void SmallPool::check() const {
  std::size_t in_use = 0;
  for (const Slab* s : all_) {
    std::size_t total = 0, live = 0;
    const Block* prev = nullptr;
    for (const Block* b = s->head; b; b = b->next) {
      if (b->prev != prev) throw_error(Errc::internal, "small pool: broken block list");
      if (prev && prev->free && b->free) throw_error(Errc::internal, "small pool: two adjacent free blocks");
      if (b->ptr != s->span.va + total) throw_error(Errc::internal, "small pool: block not contiguous");
      const auto& fs = pools_[s->tag].free;
      if (b->free != fs.contains(static_cast<std::uint32_t>(b->size / kAlign), FreeRef{b->ptr, const_cast<Block*>(b)}))
        throw_error(Errc::internal, "small pool: free index");
      if (!b->free) {
        ++live;
        in_use += b->size;
      }
      total += b->size;
      prev = b;
    }
    if (total != slab_) throw_error(Errc::internal, "small pool: slab blocks do not cover the slab");
    if (live != s->live) throw_error(Errc::internal, "small pool: live count");
  }
  if (in_use != in_use_) throw_error(Errc::internal, "small pool: bytes in use");
}

}  // namespace memlake::core
