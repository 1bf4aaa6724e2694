// PagePool's trim of cached views, against a quiescer the test controls:
// which idle views it unmaps, and when it waits for their work; and its
// free-run index under random aliasing, against a rescan of every view.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/page_pool.h"
#include "prim/host_backend.h"

namespace memlake::test {
namespace {

// Frees numbered <= complete are done; wait() completes exactly what it is asked.
struct ManualQuiescer final : core::Quiescer {
  std::uint64_t complete = 0;
  int waits = 0;
  void wait(core::Tag, std::uint64_t seq) override {
    if (seq <= complete) return;
    ++waits;
    complete = seq;
  }
  bool done(core::Tag t, std::uint64_t seq) override { return t == core::kGlobal || seq <= complete; }
};

constexpr core::Tag kStream = 1;

TEST(PagePoolTrim, WaitsOnlyPastTwiceTheBoundAndUnmapsCompleteViewsLater) {
  prim::HostBackend be(0, 64 << 10, 0);
  ManualQuiescer q;
  core::PagePool pool(be, q);
  // Four views over the same two pages: three idle (freed as 1, 2, 3), one live.
  core::Span live = pool.take_stitched(2, kStream, 0);
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    pool.give_back(live, kStream, seq);
    live = pool.take_stitched(2, kStream, 2);
  }
  ASSERT_EQ(pool.views(), 4u);
  ASSERT_EQ(pool.pages(), 2u);
  ASSERT_EQ(pool.mapped_pages(), 8u);

  pool.trim_views(4);  // over the bound, not over twice it
  EXPECT_EQ(pool.views(), 4u) << "no idle view's work is complete: all stay";
  EXPECT_EQ(q.waits, 0);

  pool.trim_views(3);  // 8 slots mapped > 2 x 3: wait for the oldest
  EXPECT_EQ(q.waits, 1);
  EXPECT_EQ(q.complete, 1u) << "the oldest view's last free";
  EXPECT_EQ(pool.views(), 3u);
  EXPECT_EQ(pool.mapped_pages(), 6u) << "within twice the bound: no further wait";
  pool.check();

  q.complete = 3;  // the device ran the rest
  pool.trim_views(3);
  EXPECT_EQ(q.waits, 1) << "complete views go without a wait";
  EXPECT_EQ(pool.views(), 1u) << "down to the live view";
  EXPECT_EQ(pool.mapped_pages(), 2u);
  EXPECT_EQ(pool.pages(), 2u) << "trimming never releases memory";
  pool.check();
  pool.give_back(live, kStream, 4);
}

TEST(PagePoolTrim, ACompleteViewGoesBeforeAnOlderPendingOne) {
  prim::HostBackend be(0, 64 << 10, 0);
  ManualQuiescer q;
  core::PagePool pool(be, q);
  core::Span a = pool.take_stitched(2, kStream, 0);
  core::Span b = pool.take_stitched(2, kStream, 0);
  pool.give_back(a, kStream, 5);  // idle first, its work pending
  pool.give_back(b, core::kGlobal, 0);  // idle later, nothing pending
  core::Span c = pool.take_stitched(4, kStream, 4);
  ASSERT_EQ(pool.mapped_pages(), 8u);
  pool.trim_views(5);
  EXPECT_EQ(q.waits, 0);
  EXPECT_EQ(pool.views(), 2u) << "b's view went, a's (older, pending) stayed";
  EXPECT_EQ(pool.mapped_pages(), 6u);
  pool.check();
  pool.give_back(c, kStream, 6);
}

// Many views over few pages, two streams and a lagging device: every take and
// give re-indexes the windows of the views aliasing its pages (touching runs
// of other tags, joins on both sides, settles that retag aliased pages). After
// every step, check() compares the incrementally kept runs of every view and
// the best-fit index with a rescan of every slot, so a window left stale, a
// run dropped or kept twice fails at the step that did it.
void random_aliasing(std::uint32_t handle_slots, std::uint64_t seed) {
  prim::HostBackend be(0, 64 << 10, 0);
  ManualQuiescer q;
  core::PagePool pool(be, q, handle_slots);
  std::mt19937_64 rng(seed);
  struct Held {
    core::Span span;
    core::Tag tag;
  };
  std::vector<Held> live;
  std::uint64_t seq = 0;
  std::size_t aliased_takes = 0, most_views = 0;
  for (int step = 0; step < 4000; ++step) {
    const auto op = rng() % 100;
    if (live.empty() || (op < 50 && live.size() < 24)) {
      const auto n = static_cast<std::uint32_t>(1 + rng() % (rng() % 4 == 0 ? 24 : 6));
      const core::Tag tag = 1 + rng() % 2;
      core::TakeInfo info;
      std::optional<core::Span> s = pool.take_fit(n, tag, &info);
      if (!s && rng() % 3 == 0) s = pool.take_extended(n, tag, n, &info);
      if (!s && rng() % 2 == 0) s = pool.take_repaired(n, tag, n, n, &info);
      // Reuse at most what exists, so that stitches alias pages instead of growing.
      if (!s) s = pool.take_stitched(n, tag, rng() % 4 == 0 ? 0 : n, &info);
      ASSERT_GE(s->count, n);
      aliased_takes += info.stitched_view;
      live.push_back({*s, tag});
    } else if (op < 90) {
      const std::size_t i = rng() % live.size();
      // Mostly the stream's own tag (pending until settled), sometimes global.
      const core::Tag tag = rng() % 4 == 0 ? core::kGlobal : live[i].tag;
      pool.give_back(live[i].span, tag, tag == core::kGlobal ? 0 : ++seq);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op < 97) {
      q.complete = std::max(q.complete, seq - std::min<std::uint64_t>(seq, rng() % 3));  // the device trails the host a little
      for (core::Tag t : {core::Tag{1}, core::Tag{2}}) pool.settle(t, q.complete);
    } else {
      pool.trim_views(pool.pages() * (2 + rng() % 4));
    }
    most_views = std::max(most_views, pool.views());
    ASSERT_NO_THROW(pool.check()) << "step " << step << ", seed " << seed;
  }
  EXPECT_GT(aliased_takes, 100u) << "the sequence must exercise aliased views";
  EXPECT_GT(most_views, 8u);
  for (const Held& h : live) pool.give_back(h.span, core::kGlobal, 0);
  pool.check();
}

TEST(PagePoolAliases, RunsFollowEveryAliasedTakeAndGive) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) random_aliasing(1, seed);
}

TEST(PagePoolAliases, RunsFollowEveryAliasedTakeAndGiveWithLargeHandles) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) random_aliasing(4, seed);
}

// With pages of several slots a fit takes whole pages from a run's start: it
// ends where the page holding the request's last slot ends.
TEST(PagePoolFit, TakesWholePagesUpToTheEndOfThePageHoldingTheLastSlot) {
  prim::HostBackend be(0, 64 << 10, 0);
  ManualQuiescer q;
  core::PagePool pool(be, q, 4);
  // 9 new slots: two 4-slot handles and one single page, in that order.
  const core::Span all = pool.take_stitched(9, core::kGlobal, 0);
  ASSERT_EQ(all.count, 9u);
  pool.give_back(all, core::kGlobal, 0);
  const std::uint64_t page = pool.page_size();
  struct Case {
    std::uint32_t n, count;
  };
  for (const Case c : {Case{1, 4}, Case{4, 4}, Case{5, 8}, Case{7, 8}, Case{8, 8}, Case{9, 9}}) {
    const std::optional<core::Span> s = pool.take_fit(c.n, core::kGlobal);
    ASSERT_TRUE(s) << c.n;
    EXPECT_EQ(s->count, c.count) << c.n;
    EXPECT_EQ(s->va, all.va) << c.n;
    if (c.count < 9) {  // the rest of the run is still free, starting right after
      const std::optional<core::Span> rest = pool.take_fit(9 - c.count, core::kGlobal);
      ASSERT_TRUE(rest) << c.n;
      EXPECT_EQ(rest->va, all.va + c.count * page) << c.n;
      EXPECT_EQ(rest->count, 9 - c.count) << c.n;
      pool.give_back(*rest, core::kGlobal, 0);
    }
    pool.give_back(*s, core::kGlobal, 0);
    pool.check();
  }
}

// A restore's exact fill cannot take a free page larger than what is left to
// fill, so the free count can promise pages it does not use: with a limit on
// new pages (the allocator's cap) it fails before mapping anything.
TEST(PagePoolRestore, NewPagesBeyondTheLimitFailBeforeAnythingIsMapped) {
  prim::HostBackend be(0, 64 << 10, 0);
  ManualQuiescer q;
  core::PagePool pool(be, q, 4);
  const core::Span a = pool.take_stitched(3, core::kGlobal, 0);  // three single pages
  pool.evict_span(a, false);                                      // ... free, mapped nowhere
  const core::Span b = pool.take_stitched(3, core::kGlobal, 3);  // takes them
  const core::Span c = pool.take_stitched(8, core::kGlobal, 0);  // two 4-slot handles
  pool.give_back(c, core::kGlobal, 0);
  ASSERT_EQ(pool.usable_free_pages(core::kGlobal), 8u);
  const std::size_t reserved = pool.reserved_bytes();
  EXPECT_THROW(
      try { pool.restore_span(a, a.count, prim::Access::read_write, nullptr, /*max_new=*/0); } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::out_of_memory);
        throw;
      },
      Error);
  EXPECT_EQ(pool.reserved_bytes(), reserved) << "nothing created";
  pool.check();
  pool.restore_span(a, a.count, prim::Access::read_write, nullptr, /*max_new=*/3);
  EXPECT_EQ(pool.reserved_bytes(), reserved + 3 * pool.page_size());
  pool.check();
  pool.give_back(a, core::kGlobal, 0);
  pool.give_back(b, core::kGlobal, 0);
  pool.check();
}

}  // namespace
}  // namespace memlake::test
