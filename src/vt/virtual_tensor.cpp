#include "vt/virtual_tensor.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace memlake::vt {

VirtualTensor::VirtualTensor(prim::Backend& be, std::size_t bytes, std::size_t memory_limit)
    : be_(be), page_(be.granularity()), limit_(memory_limit) {
  if (bytes == 0) throw_error(Errc::invalid_argument, "virtual tensor: size 0");
  if (bytes > (std::size_t{1} << 48)) throw_error(Errc::invalid_argument, "virtual tensor: size " + format_bytes(bytes) + " is absurd");
  pages_ = (bytes + page_ - 1) / page_;
  if (limit_ && limit_ < 2 * page_)
    throw_error(Errc::out_of_memory, "virtual tensor: memory limit " + format_bytes(limit_) +
                                         " is below its two shared pages (" + format_bytes(2 * page_) + ")");
  const std::size_t reserved = (pages_ + 1) * page_;
  base_ = be_.reserve(reserved, 0);
  std::size_t mapped_upto = 0;  // pages [0, mapped_upto) mapped to zero; plus the source page once zero_src
  bool zero_src = false;
  try {
    zero_ = be_.create(page_);
    sink_ = be_.create(page_);
    // The zero source: the extra last page, read-write, zeroed once; never handed out.
    be_.map(va(pages_), page_, zero_);
    zero_src = true;
    be_.set_access(va(pages_), page_, prim::Access::read_write);
    std::vector<unsigned char> zeros(page_, 0);
    be_.write(va(pages_), zeros.data(), page_);
    for (; mapped_upto < pages_; ++mapped_upto) be_.map(va(mapped_upto), page_, zero_);
    be_.set_access(base_, pages_ * page_, access(PageState::zero));
  } catch (...) {
    try {
      if (mapped_upto) be_.unmap(base_, mapped_upto * page_);
      if (zero_src) be_.unmap(va(pages_), page_);
      if (zero_) be_.release(zero_);
      if (sink_) be_.release(sink_);
      be_.free_reservation(base_, reserved);
    } catch (...) {
    }
    throw;
  }
  state_.assign(pages_, PageState::zero);
  zero_n_ = pages_;
  handle_.assign(pages_, 0);
  note_physical();
}

VirtualTensor::~VirtualTensor() {
  // Every page is mapped except holes (after a driver failure): unmap the runs.
  for (std::size_t i = 0; i < pages_;) {
    std::size_t b = i + 1;
    if (state_[i] != PageState::hole) {
      while (b < pages_ && state_[b] != PageState::hole) ++b;
      try {
        be_.unmap(va(i), (b - i) * page_);
      } catch (...) {
      }
    }
    i = b;
  }
  try {
    be_.unmap(va(pages_), page_);  // the zero source
  } catch (...) {
  }
  for (prim::PhysHandle h : handle_) {
    if (!h) continue;
    try {
      be_.release(h);
    } catch (...) {
    }
  }
  try {
    be_.release(zero_);
    be_.release(sink_);
    be_.free_reservation(base_, (pages_ + 1) * page_);
  } catch (...) {
  }
}

PageState VirtualTensor::state(std::size_t page) const {
  check_range(page, 1, "state");
  return state_[page];
}

void VirtualTensor::check_range(std::size_t first, std::size_t count, const char* what) const {
  if (first > pages_ || count > pages_ - first)
    throw_error(Errc::invalid_argument, std::string("virtual tensor ") + what + ": pages [" + std::to_string(first) +
                                            ", " + std::to_string(first) + "+" + std::to_string(count) +
                                            ") lie outside its " + std::to_string(pages_) + " pages (" +
                                            format_bytes(pages_ * page_) + " reserved)");
}

void VirtualTensor::note_physical() {
  peak_ = std::max(peak_, (private_ + 2) * page_);
}

void VirtualTensor::map_shared(std::size_t a, std::size_t b, PageState s) {
  std::size_t i = a;
  try {
    for (; i < b; ++i) be_.map(va(i), page_, shared(s));
    be_.set_access(va(a), (b - a) * page_, access(s));
  } catch (...) {
    if (i > a) {
      try {
        be_.unmap(va(a), (i - a) * page_);
      } catch (...) {
      }
    }
    throw;
  }
}

void VirtualTensor::set_state(std::size_t p, PageState s) {
  auto count = [&](PageState st, int d) {
    if (st == PageState::priv) private_ += d;
    if (st == PageState::sink) sink_n_ += d;
    if (st == PageState::zero) zero_n_ += d;
  };
  count(state_[p], -1);
  state_[p] = s;
  count(s, +1);
}

void VirtualTensor::map(std::size_t first, std::size_t count, prim::Stream stream) {
  check_range(first, count, "map");
  std::vector<std::size_t> need;
  for (std::size_t i = first; i < first + count; ++i)
    if (state_[i] != PageState::priv) need.push_back(i);
  if (need.empty()) return;
  const std::size_t after = (private_ + need.size() + 2) * page_;
  if (limit_ && after > limit_)
    throw_error(Errc::out_of_memory, "virtual tensor: mapping " + std::to_string(need.size()) + " more pages needs " +
                                         format_bytes(after) + ", over its memory limit of " + format_bytes(limit_) +
                                         " (" + std::to_string(private_) + " pages private now)");
  std::vector<prim::PhysHandle> made;
  made.reserve(need.size());
  try {
    for (std::size_t k = 0; k < need.size(); ++k) made.push_back(be_.create(page_));
  } catch (...) {
    for (prim::PhysHandle h : made) {
      try {
        be_.release(h);
      } catch (...) {
      }
    }
    throw;
  }
  // Every page needing memory is mapped to a shared page now, which kernels
  // queued on the stream may still read: wait for them before unmapping.
  std::size_t used = 0;  // handles of `made` placed so far
  auto release_unused = [&] {
    for (std::size_t k = used; k < made.size(); ++k) {
      try {
        be_.release(made[k]);
      } catch (...) {
      }
    }
  };
  try {
    be_.synchronize_stream(stream);
  } catch (...) {
    release_unused();
    throw;
  }
  ++syncs_;
  std::size_t k = 0;
  while (k < need.size()) {
    // A run of consecutive pages in one state.
    std::size_t e = k + 1;
    while (e < need.size() && need[e] == need[e - 1] + 1 && state_[need[e]] == state_[need[k]]) ++e;
    const std::size_t a = need[k], b = need[e - 1] + 1;
    const PageState was = state_[a];
    if (was != PageState::hole) {
      try {
        be_.unmap(va(a), (b - a) * page_);  // on failure nothing changed
      } catch (...) {
        release_unused();
        note_physical();
        throw;
      }
    }
    std::size_t i = a;
    try {
      for (; i < b; ++i) {
        be_.map(va(i), page_, made[used]);
        handle_[i] = made[used];
        set_state(i, PageState::priv);
        ++used;
        ++mapped_;
      }
      be_.set_access(va(a), (b - a) * page_, prim::Access::read_write);
      for (std::size_t p = a; p < b; ++p) be_.copy_device_async(va(p), va(pages_), page_, stream);
    } catch (...) {
      // Pages [a, i) are private (make them usable); [i, b) go back to their shared page.
      try {
        if (i > a) be_.set_access(va(a), (i - a) * page_, prim::Access::read_write);
      } catch (...) {
      }
      if (i < b && was != PageState::hole) {
        try {
          map_shared(i, b, was);
        } catch (...) {
          for (std::size_t p = i; p < b; ++p) set_state(p, PageState::hole);
        }
      }
      release_unused();
      note_physical();
      throw;
    }
    k = e;
  }
  note_physical();
}

void VirtualTensor::unmap(std::size_t first, std::size_t count, PageState backing, prim::Stream stream) {
  check_range(first, count, "unmap");
  if (backing != PageState::zero && backing != PageState::sink)
    throw_error(Errc::invalid_argument, "virtual tensor unmap: the backing must be zero or sink");
  bool any = false;
  for (std::size_t i = first; i < first + count && !any; ++i) any = state_[i] != backing;
  if (!any) return;
  be_.synchronize_stream(stream);
  ++syncs_;
  std::size_t i = first;
  const std::size_t end = first + count;
  while (i < end) {
    const PageState was = state_[i];
    if (was == backing) {
      ++i;
      continue;
    }
    std::size_t b = i + 1;
    while (b < end && state_[b] == was) ++b;
    if (was != PageState::hole) be_.unmap(va(i), (b - i) * page_);  // on failure nothing changed
    for (std::size_t p = i; p < b; ++p) {
      if (state_[p] == PageState::priv) {
        try {
          be_.release(handle_[p]);
        } catch (...) {
        }
        handle_[p] = 0;
        ++unmapped_;
      }
      set_state(p, PageState::hole);
    }
    // Left as holes (a kernel reading them would fault) if this fails; the
    // error says so, and a later map() or unmap() of them maps them again.
    map_shared(i, b, backing);
    for (std::size_t p = i; p < b; ++p) set_state(p, backing);
    i = b;
  }
}

void VirtualTensor::map_bytes(std::size_t offset, std::size_t len, prim::Stream stream) {
  if (len == 0) return;
  if (offset > size() || len > size() - offset)
    throw_error(Errc::invalid_argument, "virtual tensor map_bytes: [" + std::to_string(offset) + ", +" +
                                            std::to_string(len) + ") lies outside its " + format_bytes(size()));
  const std::size_t a = offset / page_, b = (offset + len + page_ - 1) / page_;
  map(a, b - a, stream);
}

void VirtualTensor::unmap_bytes(std::size_t offset, std::size_t len, PageState backing, prim::Stream stream) {
  if (len == 0) return;
  if (offset > size() || len > size() - offset)
    throw_error(Errc::invalid_argument, "virtual tensor unmap_bytes: [" + std::to_string(offset) + ", +" +
                                            std::to_string(len) + ") lies outside its " + format_bytes(size()));
  const std::size_t a = offset / page_, b = (offset + len + page_ - 1) / page_;
  unmap(a, b - a, backing, stream);
}

VirtualTensorStats VirtualTensor::stats() const {
  VirtualTensorStats s;
  s.bytes = size();
  s.page_size = page_;
  s.pages = pages_;
  s.private_pages = private_;
  s.zero_pages = zero_n_;
  s.sink_pages = sink_n_;
  s.hole_pages = pages_ - private_ - zero_n_ - sink_n_;
  s.physical_bytes = (private_ + 2) * page_;
  s.physical_peak = peak_;
  s.memory_limit = limit_;
  s.pages_mapped = mapped_;
  s.pages_unmapped = unmapped_;
  s.syncs = syncs_;
  return s;
}

}  // namespace memlake::vt
