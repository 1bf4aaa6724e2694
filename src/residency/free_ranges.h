// FreeRanges: the free byte ranges of one extent of storage (a pinned chunk
// of the host tier, the disk tier's file), first fit, coalesced on return.
// Every offset and length is a multiple of the caller's unit. Giving back a
// range that overlaps a free one (returned twice, never handed out) throws
// Errc::internal and changes nothing.
#pragma once

#include <cstddef>
#include <map>
#include <optional>

namespace memlake::residency {

class FreeRanges {
 public:
  // A range that was never part of the storage becomes free (growth).
  void add(std::size_t offset, std::size_t len) { give(offset, len); }
  // The lowest free range of at least `len` bytes: its first `len` bytes.
  std::optional<std::size_t> take(std::size_t len);
  void give(std::size_t offset, std::size_t len);
  std::size_t largest() const;
  bool empty() const { return free_.empty(); }

 private:
  std::map<std::size_t, std::size_t> free_;  // offset -> length, disjoint, coalesced
};

}  // namespace memlake::residency
