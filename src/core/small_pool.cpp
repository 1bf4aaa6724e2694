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

bool SmallPool::BySize::operator()(const Block* a, const Block* b) const {
  return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
}

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
}

SmallPool::PerTag& SmallPool::pool(Tag t) {
  if (t >= pools_.size()) pools_.resize(t + 1);
  return pools_[t];
}

std::uintptr_t SmallPool::ptr(const Block* b) const { return b->ptr; }
std::size_t SmallPool::size(const Block* b) const { return b->size; }

SmallPool::Block* SmallPool::carve(Block* b, std::size_t size) {
  PerTag& pt = pool(b->slab->tag);
  pt.free.erase(b);
  if (b->size - size >= kAlign) {
    Block* rest = new Block{b->ptr + size, b->size - size, true, b, b->next, b->slab};
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    pt.free.insert(rest);
  }
  b->free = false;
  if (b->slab->live++ == 0 && pt.empty == b->slab) pt.empty = nullptr;
  in_use_ += b->size;
  return b;
}

SmallPool::Block* SmallPool::alloc(std::size_t size, Tag tag) {
  PerTag& pt = pool(tag);
  Block key{0, size, true, nullptr, nullptr, nullptr};
  auto it = pt.free.lower_bound(&key);
  if (it != pt.free.end()) return carve(*it, size);
  Span span = src_.acquire_slab(tag);  // may throw: nothing changed yet
  Slab* s = new Slab{span, tag, nullptr, 0};
  s->head = new Block{span.va, slab_, true, nullptr, nullptr, s};
  all_.insert(s);
  ++slabs_live_;
  pt.free.insert(s->head);
  return carve(s->head, size);
}

void SmallPool::free(Block* b) {
  Slab* s = b->slab;
  PerTag& pt = pool(s->tag);
  in_use_ -= b->size;
  b->free = true;
  if (Block* n = b->next; n && n->free) {
    pt.free.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    delete n;
  }
  if (Block* p = b->prev; p && p->free) {
    pt.free.erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    delete b;
    b = p;
  }
  pt.free.insert(b);
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
  pt.free.erase(s->head);
  src_.release_slab(s->span, s->tag);
  delete s->head;
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
      if (b->free != (fs.count(const_cast<Block*>(b)) == 1)) throw_error(Errc::internal, "small pool: free index");
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
