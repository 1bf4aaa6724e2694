// InlineVec against std::vector: random pushes and erases that cross the
// inline/heap boundary both ways keep the same elements in the same order,
// and copies and moves are independent of their source.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/inline_vec.h"

namespace memlake::test {
namespace {

struct E {
  std::uint32_t a, b;
  bool operator==(const E&) const = default;
};
using Vec = core::InlineVec<E, 3>;

std::vector<E> items(const Vec& v) { return std::vector<E>(v.begin(), v.end()); }

TEST(InlineVec, MatchesAVectorAcrossTheInlineLimit) {
  std::mt19937 rng(7);
  Vec v;
  std::vector<E> ref;
  for (int step = 0; step < 20000; ++step) {
    // Grow to about 12, shrink to 0, again: every size crosses 3 <-> 4 many times.
    const bool grow = ref.empty() || (ref.size() < 12 && rng() % 100 < (step / 500 % 2 ? 35 : 65));
    if (grow) {
      const E e{static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(step)};
      v.push_back(e);
      ref.push_back(e);
    } else {
      const std::size_t i = rng() % ref.size();
      v.erase(v.begin() + i);
      ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(i));
    }
    ASSERT_EQ(v.size(), ref.size());
    ASSERT_EQ(v.empty(), ref.empty());
    ASSERT_EQ(items(v), ref) << "step " << step;
  }
}

TEST(InlineVec, CopiesAndMovesAreIndependent) {
  for (std::uint32_t n : {0u, 2u, 3u, 4u, 9u}) {
    Vec v;
    for (std::uint32_t i = 0; i < n; ++i) v.push_back(E{i, i * 10});
    const std::vector<E> ref = items(v);
    Vec copy(v);
    Vec assigned;
    assigned.push_back(E{99, 99});
    assigned = v;
    if (n) v[0] = E{1000, 1000};  // the copies keep their own elements
    EXPECT_EQ(items(copy), ref);
    EXPECT_EQ(items(assigned), ref);
    Vec moved(std::move(copy));
    EXPECT_EQ(items(moved), ref);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    Vec move_assigned;
    for (std::uint32_t i = 0; i < 5; ++i) move_assigned.push_back(E{i, i});
    move_assigned = std::move(moved);
    EXPECT_EQ(items(move_assigned), ref);
    copy.push_back(E{5, 5});  // a moved-from vector is usable
    EXPECT_EQ(copy.size(), 1u);
  }
}

TEST(InlineVec, StaysOneCacheLineInThePageRecord) {
  EXPECT_EQ(sizeof(Vec), 32u);  // 3 x 8 bytes inline, or a heap pointer and capacity; the count
}

}  // namespace
}  // namespace memlake::test
