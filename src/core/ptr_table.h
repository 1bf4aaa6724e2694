// PtrTable<V>: the allocator's live allocations by address, an open-addressing
// hash table (linear probing, deletion by backward shift: no tombstones).
//
// Why. Every allocation inserts a record and every free looks one up and
// erases it. A std::unordered_map allocates a node per record (malloc and
// free on every tensor) and reads a bucket array and the node: cold lines in
// a framework's process. Here a record lives in its slot, a lookup is one
// cache line (two at a cluster's end), and nothing allocates except growth.
//
// Keys are addresses, never 0 (0 marks an empty slot). The table only grows
// (at half full, doubling), so an insertion after reserve_one() neither
// allocates nor throws: the allocator reserves before it takes memory.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace memlake::core {

template <class V>
class PtrTable {
  static_assert(std::is_trivially_copyable_v<V>);

 public:
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return mask_ + 1; }

  // Room for one more insertion without growth; may throw std::bad_alloc.
  void reserve_one() {
    if (2 * (size_ + 1) > capacity()) grow();
  }
  // Precondition: k != 0, not present, and reserve_one() since the last insertion.
  void insert(std::uintptr_t k, const V& v) {
    std::size_t i = home(k);
    while (slots_[i].key) i = (i + 1) & mask_;
    slots_[i].key = k;
    slots_[i].val = v;
    ++size_;
  }
  V* find(std::uintptr_t k) {
    const std::size_t i = index_of(k);
    return i == kNone ? nullptr : &slots_[i].val;
  }
  const V* find(std::uintptr_t k) const {
    const std::size_t i = index_of(k);
    return i == kNone ? nullptr : &slots_[i].val;
  }
  bool contains(std::uintptr_t k) const { return index_of(k) != kNone; }
  // Removes k and copies its value to *out; false (nothing changed) if absent.
  bool take(std::uintptr_t k, V* out) {
    std::size_t i = index_of(k);
    if (i == kNone) return false;
    *out = slots_[i].val;
    // Backward shift: later members of the cluster that may sit in the hole move up.
    for (std::size_t j = (i + 1) & mask_; slots_[j].key; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].key);
      // slot j may move to i unless its home lies cyclically in (i, j]
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].key = 0;
    --size_;
    return true;
  }
  // f(key, value) for every entry, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    if (!slots_) return;
    for (std::size_t i = 0; i <= mask_; ++i)
      if (slots_[i].key) f(slots_[i].key, slots_[i].val);
  }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  struct alignas(64) Slot {
    std::uintptr_t key;
    V val;
  };
  std::size_t home(std::uintptr_t k) const {
    // Fibonacci hashing: addresses are 512-byte or page aligned, the product's high bits mix them.
    return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  std::size_t index_of(std::uintptr_t k) const {
    if (!slots_ || !k) return kNone;
    for (std::size_t i = home(k);; i = (i + 1) & mask_) {
      if (slots_[i].key == k) return i;
      if (!slots_[i].key) return kNone;
    }
  }
  void grow() {
    const std::size_t cap = slots_ ? 2 * capacity() : 64;
    std::unique_ptr<Slot[]> fresh(new Slot[cap]());
    std::unique_ptr<Slot[]> old = std::move(slots_);
    const std::size_t old_cap = old ? capacity() : 0;
    slots_ = std::move(fresh);
    mask_ = cap - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(cap));
    size_ = 0;
    for (std::size_t i = 0; i < old_cap; ++i)
      if (old[i].key) insert(old[i].key, old[i].val);
  }

  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace memlake::core
