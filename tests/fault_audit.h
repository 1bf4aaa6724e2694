// The invariant audit run after every injected fault (issue 24): the
// allocator's structures are consistent (check(): no page owned twice, the
// free-run index recomputes), what it believes it holds equals what the host
// backend has (no handle, mapping or reservation leaked or forgotten), every
// indexed free run and every live allocation is mapped read-write (no free
// range over unmapped memory), and every live allocation's bytes are intact.
#pragma once

#include <map>
#include <string>

#include "prim/decorators.h"
#include "support.h"

namespace memlake::test {

// A live allocation of the reference model: its size and byte pattern.
struct LiveBlock {
  std::size_t size;
  std::uint64_t seed;
};
using LiveMap = std::map<void*, LiveBlock>;

// Stamps each page of an allocation (its first 64 bytes) and its last 64
// bytes: any page re-mapped, unmapped or shared under a live allocation
// shows, at a fraction of a full pattern's cost.
inline void stamp(prim::Backend& be, void* p, std::size_t n, std::uint64_t seed, std::size_t page) {
  for (std::size_t off = 0; off < n; off += page) fill(be, static_cast<char*>(p) + off, std::min<std::size_t>(64, n - off), seed + off);
  if (n > 128) fill(be, static_cast<char*>(p) + n - 64, 64, seed ^ 0xabcdef);
}
inline bool stamped(prim::Backend& be, void* p, std::size_t n, std::uint64_t seed, std::size_t page) {
  // The tail stamp may overwrite part of the last page's stamp: check it first.
  if (n > 128 && !holds(be, static_cast<char*>(p) + n - 64, 64, seed ^ 0xabcdef)) return false;
  for (std::size_t off = 0; off < n; off += page) {
    const std::size_t len = std::min<std::size_t>(64, n - off);
    const std::size_t tail = n > 128 ? n - 64 : n;  // bytes past this were re-stamped by the tail
    if (off >= tail) continue;
    if (!holds(be, static_cast<char*>(p) + off, std::min(len, tail - off), seed + off)) return false;
  }
  return true;
}

// host: the backend under the allocator (nullptr on the cuda backend: then
// only check() and the bytes are audited).
inline ::testing::AssertionResult audit(core::DeviceAllocator& dev, const prim::HostBackend* host, const LiveMap& live,
                                        std::size_t page) {
  try {
    dev.check();
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << "check(): " << e.what();
  }
  const core::PagePool::Holdings h = dev.holdings();
  if (host) {
    if (h.handles != host->live_handles())
      return ::testing::AssertionFailure() << "handles: allocator holds " << h.handles << ", backend has " << host->live_handles();
    if (h.mappings != host->live_mappings())
      return ::testing::AssertionFailure() << "mappings: allocator holds " << h.mappings << ", backend has " << host->live_mappings();
    if (h.reservations != host->live_reservations())
      return ::testing::AssertionFailure() << "reservations: allocator holds " << h.reservations << ", backend has "
                                           << host->live_reservations();
    for (auto [va, bytes] : h.free_ranges)
      if (!host->accessible(va, bytes))
        return ::testing::AssertionFailure() << "free run at " << hex_ptr(va) << " (" << bytes << " bytes) is not mapped";
    for (const auto& [p, b] : live)
      if (!host->accessible(reinterpret_cast<std::uintptr_t>(p) / page * page, (b.size + reinterpret_cast<std::uintptr_t>(p) % page + page - 1) / page * page))
        return ::testing::AssertionFailure() << "live allocation " << p << " (" << b.size << " bytes) is not mapped";
  }
  for (const auto& [p, b] : live) {
    bool ok = false;
    try {
      ok = stamped(dev.backend(), p, b.size, b.seed, page);
    } catch (const Error& e) {
      return ::testing::AssertionFailure() << "live allocation " << p << " unreadable: " << e.what();
    }
    if (!ok) return ::testing::AssertionFailure() << "live allocation " << p << " (" << b.size << " bytes) lost its contents";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace memlake::test
