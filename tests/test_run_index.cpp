// RunIndex against the std::set<RunKey> it replaced: after random inserts and
// erases (lengths across bitmap word and summary boundaries), it visits the
// same runs in the same order from any length, finds the same longest run,
// and knows the same members.
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "core/run_index.h"

namespace memlake::test {
namespace {

using core::RunIndex;
using core::RunKey;

std::vector<RunKey> from_set(const std::set<RunKey>& s, core::Tag tag, std::uint32_t min_len) {
  std::vector<RunKey> out;
  for (auto it = s.lower_bound(RunKey{tag, min_len, 0, 0}); it != s.end() && it->tag == tag; ++it) out.push_back(*it);
  return out;
}

std::vector<RunKey> from_index(const RunIndex& x, core::Tag tag, std::uint32_t min_len) {
  std::vector<RunKey> out;
  x.visit(tag, min_len, [&](const RunKey& k) { return out.push_back(k), true; });
  return out;
}

TEST(RunIndex, MatchesAnOrderedSetUnderRandomUpdates) {
  std::mt19937_64 rng(7);
  const std::uint32_t lens[] = {1, 2, 63, 64, 65, 127, 128, 4095, 4096, 4097, 8191, 8192, 12000};
  RunIndex x;
  std::set<RunKey> s;
  std::vector<RunKey> live;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 100 < 55) {
      RunKey k{static_cast<core::Tag>(rng() % 3),
               rng() % 3 == 0 ? lens[rng() % std::size(lens)] : static_cast<std::uint32_t>(1 + rng() % 300),
               static_cast<core::ViewId>(rng() % 50), static_cast<std::uint32_t>(rng() % 5000)};
      if (!s.insert(k).second) continue;
      x.insert(k);
      live.push_back(k);
    } else {
      const std::size_t i = rng() % live.size();
      x.erase(live[i]);
      s.erase(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
    if (step % 500 == 0 || step > 19900) {
      ASSERT_EQ(x.size(), s.size());
      for (core::Tag t = 0; t < 4; ++t)
        for (std::uint32_t m : {0u, 1u, 64u, 65u, 200u, 4096u, 4097u, 9000u, 20000u})
          ASSERT_EQ(from_index(x, t, m), from_set(s, t, m)) << "tag " << t << " from length " << m;
      std::uint32_t longest = 0;
      for (const RunKey& k : s) longest = std::max(longest, k.len);
      ASSERT_EQ(x.longest(), longest);
      ASSERT_EQ(x.all(), std::vector<RunKey>(s.begin(), s.end()));
    }
  }
  for (const RunKey& k : live) EXPECT_TRUE(x.contains(k));
  EXPECT_FALSE(x.contains(RunKey{9, 1, 0, 0}));
  EXPECT_FALSE(x.contains(RunKey{0, 999999, 0, 0}));
}

TEST(RunIndex, VisitStopsWhenAsked) {
  RunIndex x;
  for (std::uint32_t len : {5u, 70u, 5000u}) x.insert(RunKey{0, len, 1, 0});
  int seen = 0;
  x.visit(0, 6, [&](const RunKey& k) {
    ++seen;
    EXPECT_EQ(k.len, 70u);
    return false;
  });
  EXPECT_EQ(seen, 1);
  x.erase(RunKey{0, 5000, 1, 0});
  EXPECT_EQ(x.longest(), 70u);
  x.erase(RunKey{0, 70, 1, 0});
  x.erase(RunKey{0, 5, 1, 0});
  EXPECT_EQ(x.longest(), 0u);
  EXPECT_EQ(x.size(), 0u);
  EXPECT_TRUE(x.all().empty());
}

// Buckets are put back in order only when a visit reaches them: crowded
// buckets (few lengths, many runs each), updates in random order, and visits
// that stop after a few runs from random lengths, so that every state (a
// bucket appended to, swap-erased, sorted, then changed again) is looked at.
TEST(RunIndex, VisitsSeeTheSetsOrderBetweenAnyUpdates) {
  std::mt19937_64 rng(11);
  RunIndex x;
  std::set<RunKey> s;
  std::vector<RunKey> live;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 100 < 52) {
      RunKey k{static_cast<core::Tag>(rng() % 2), static_cast<std::uint32_t>(1 + rng() % 6),
               static_cast<core::ViewId>(rng() % 40), static_cast<std::uint32_t>(rng() % 64)};
      if (!s.insert(k).second) continue;
      x.insert(k);
      live.push_back(k);
    } else {
      const std::size_t i = rng() % live.size();
      x.erase(live[i]);
      s.erase(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
    const auto t = static_cast<core::Tag>(rng() % 2);
    const auto from = static_cast<std::uint32_t>(rng() % 7);
    const std::size_t want = 1 + rng() % 12;
    std::vector<RunKey> got;
    x.visit(t, from, [&](const RunKey& k) { return got.push_back(k), got.size() < want; });
    std::vector<RunKey> expect = from_set(s, t, from);
    if (expect.size() > want) expect.resize(want);
    ASSERT_EQ(got, expect) << "step " << step;
    if (!live.empty()) {
      ASSERT_TRUE(x.contains(live[rng() % live.size()]));
    }
  }
  ASSERT_EQ(x.all(), std::vector<RunKey>(s.begin(), s.end()));
}

}  // namespace
}  // namespace memlake::test
