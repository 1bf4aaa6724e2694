// PagePool's trim of cached views, against a quiescer the test controls:
// which idle views it unmaps, and when it waits for their work.
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

}  // namespace
}  // namespace memlake::test
