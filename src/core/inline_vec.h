// InlineVec<T, N>: a vector of trivially copyable T that keeps up to N
// elements inside itself and moves them to the heap only beyond that.
//
// Why. A page's list of mappings is read on every allocation and free whose
// pages other views alias (the page pool re-indexes those views); as a
// std::vector it is a second cache line per page, cold in a framework's
// process by the time the next tensor comes. Nearly every page has at most
// a few mappings (cached views are bounded by max_mapped_ratio), so with N
// inline the list shares the page record's line.
//
// Order is kept (erase shifts), iterators are pointers, invalidated by any
// insertion or erase. Not thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace memlake::core {

template <class T, std::uint32_t N>
class InlineVec {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  static_assert(N >= 1);

 public:
  InlineVec() = default;
  InlineVec(const InlineVec& o) { assign(o); }
  InlineVec(InlineVec&& o) noexcept : n_(o.n_) {
    std::memcpy(static_cast<void*>(&u_), &o.u_, sizeof u_);  // steals the heap block, if any
    o.n_ = 0;
  }
  InlineVec& operator=(const InlineVec& o) {
    if (this != &o) {
      clear_storage();
      assign(o);
    }
    return *this;
  }
  InlineVec& operator=(InlineVec&& o) noexcept {
    if (this != &o) {
      clear_storage();
      n_ = o.n_;
      std::memcpy(static_cast<void*>(&u_), &o.u_, sizeof u_);
      o.n_ = 0;
    }
    return *this;
  }
  ~InlineVec() { clear_storage(); }

  std::uint32_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T* begin() { return data(); }
  T* end() { return data() + n_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + n_; }
  T& operator[](std::uint32_t i) { return data()[i]; }
  const T& operator[](std::uint32_t i) const { return data()[i]; }

  // Strong guarantee: on std::bad_alloc nothing changed.
  void push_back(const T& x) {
    if (n_ < N) {
      u_.inl[n_++] = x;
      return;
    }
    if (n_ == N) {  // spill: inline -> heap
      T* p = allocate(2 * N);
      std::memcpy(static_cast<void*>(p), u_.inl, sizeof(T) * N);
      u_.heap = Heap{p, 2 * N};
    } else if (n_ > N && n_ == u_.heap.cap) {
      T* p = allocate(2 * n_);
      std::memcpy(static_cast<void*>(p), u_.heap.ptr, sizeof(T) * n_);
      ::operator delete(u_.heap.ptr);
      u_.heap = Heap{p, 2 * n_};
    }
    u_.heap.ptr[n_++] = x;
  }
  void clear() { clear_storage(); }
  // Removes *it, keeping the others' order; it must point into this vector.
  void erase(T* it) {
    T* d = data();
    std::memmove(static_cast<void*>(it), it + 1, sizeof(T) * static_cast<std::size_t>(d + n_ - it - 1));
    if (--n_ == N) {  // back inline
      T* p = u_.heap.ptr;
      std::memcpy(static_cast<void*>(u_.inl), p, sizeof(T) * N);
      ::operator delete(p);
    }
  }

 private:
  struct Heap {
    T* ptr;
    std::uint32_t cap;
  };
  T* data() { return n_ > N ? u_.heap.ptr : u_.inl; }
  const T* data() const { return n_ > N ? u_.heap.ptr : u_.inl; }
  static T* allocate(std::uint32_t cap) { return static_cast<T*>(::operator new(sizeof(T) * cap)); }
  void clear_storage() {
    if (n_ > N) ::operator delete(u_.heap.ptr);
    n_ = 0;
  }
  void assign(const InlineVec& o) {  // precondition: empty, inline
    if (o.n_ > N) {
      T* p = allocate(o.n_);
      std::memcpy(static_cast<void*>(p), o.u_.heap.ptr, sizeof(T) * o.n_);
      u_.heap = Heap{p, o.n_};
    } else {
      std::memcpy(static_cast<void*>(u_.inl), o.u_.inl, sizeof(T) * o.n_);
    }
    n_ = o.n_;
  }

  union U {
    T inl[N];
    Heap heap;
  } u_;
  std::uint32_t n_ = 0;
};

}  // namespace memlake::core
