#include "residency/free_ranges.h"

#include <algorithm>
#include <iterator>

#include "core/error.h"

namespace memlake::residency {

std::optional<std::size_t> FreeRanges::take(std::size_t len) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < len) continue;
    const std::size_t off = it->first, left = it->second - len;
    free_.erase(it);
    if (left) free_.emplace(off + len, left);
    return off;
  }
  return std::nullopt;
}

void FreeRanges::give(std::size_t offset, std::size_t len) {
  if (len == 0) return;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first < offset + len) throw_error(Errc::internal, "free ranges: a range returned twice");
  auto prev = next == free_.begin() ? free_.end() : std::prev(next);
  if (prev != free_.end() && prev->first + prev->second > offset)
    throw_error(Errc::internal, "free ranges: a range returned twice");
  std::size_t off = offset, n = len;
  if (prev != free_.end() && prev->first + prev->second == offset) {
    off = prev->first;
    n += prev->second;
    free_.erase(prev);
  }
  if (next != free_.end() && next->first == offset + len) {
    n += next->second;
    free_.erase(next);
  }
  free_.emplace(off, n);
}

std::size_t FreeRanges::largest() const {
  std::size_t best = 0;
  for (const auto& [off, len] : free_) best = std::max(best, len);
  return best;
}

}  // namespace memlake::residency
