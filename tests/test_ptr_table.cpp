// PtrTable against std::unordered_map: random inserts, lookups and removals
// of page-aligned and 512-byte-aligned addresses (clusters that wrap around
// the table's end included) agree at every step, across growth.
#include <random>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "core/ptr_table.h"

namespace memlake::test {
namespace {

struct Rec {
  std::uint64_t a;
  std::uint32_t b;
};

TEST(PtrTable, MatchesAnUnorderedMap) {
  for (std::uintptr_t align : {std::uintptr_t{512}, std::uintptr_t{2} << 20}) {
    std::mt19937_64 rng(11);
    core::PtrTable<Rec> t;
    std::unordered_map<std::uintptr_t, Rec> ref;
    std::vector<std::uintptr_t> keys;
    for (int step = 0; step < 60000; ++step) {
      const bool grow = keys.empty() || rng() % 100 < (step / 5000 % 2 ? 40 : 60);
      if (grow) {
        std::uintptr_t k;
        do k = (rng() % (1u << 20) + 1) * align;
        while (ref.count(k));
        t.reserve_one();
        const Rec r{rng(), static_cast<std::uint32_t>(step)};
        t.insert(k, r);
        ref[k] = r;
        keys.push_back(k);
      } else {
        const std::size_t i = rng() % keys.size();
        Rec out{};
        ASSERT_TRUE(t.take(keys[i], &out));
        EXPECT_EQ(out.a, ref[keys[i]].a);
        ref.erase(keys[i]);
        keys[i] = keys.back();
        keys.pop_back();
      }
      ASSERT_EQ(t.size(), ref.size());
      if (step % 97 == 0) {  // every live key is found with its value, and absent ones are not
        for (std::uintptr_t k : keys) {
          const Rec* r = t.find(k);
          ASSERT_NE(r, nullptr);
          ASSERT_EQ(r->b, ref[k].b);
        }
        EXPECT_FALSE(t.contains(align * ((std::uintptr_t{1} << 20) + 5)));
        std::size_t seen = 0;
        t.for_each([&](std::uintptr_t k, const Rec& r) {
          ++seen;
          EXPECT_EQ(ref.at(k).b, r.b);
        });
        EXPECT_EQ(seen, ref.size());
        EXPECT_LE(2 * t.size(), t.capacity());
      }
    }
  }
}

TEST(PtrTable, AbsentKeysAreRefusedWithoutChange) {
  core::PtrTable<Rec> t;
  Rec out{7, 7};
  EXPECT_FALSE(t.take(4096, &out));  // empty table, never grown
  EXPECT_EQ(t.find(4096), nullptr);
  EXPECT_FALSE(t.contains(0));
  t.reserve_one();
  t.insert(4096, Rec{1, 2});
  EXPECT_FALSE(t.take(8192, &out));
  EXPECT_EQ(out.a, 7u);
  EXPECT_EQ(t.size(), 1u);
  ASSERT_TRUE(t.take(4096, &out));
  EXPECT_EQ(out.b, 2u);
  EXPECT_EQ(t.size(), 0u);
}

}  // namespace
}  // namespace memlake::test
