// SpanCache (recently freed large spans kept for a same-size reuse) on its
// own, and the allocator with it on: a same-size allocation on the same
// stream gets the span back without the pool, another stream does not, and
// parked spans go back to the pool before memory grows or a cap is hit.
#include "core/span_cache.h"
#include "support.h"

namespace memlake::test {
namespace {

using core::Span;
using core::SpanCache;

SpanCache::Entry entry(std::uint32_t count, core::Tag tag, std::uint64_t seq, core::ViewId view = 0) {
  return SpanCache::Entry{Span{view, 0, count, 0}, tag, seq};
}

TEST(SpanCache, TakesTheMostRecentOfItsSizeAndStream) {
  SpanCache c(4, 8);
  std::vector<SpanCache::Entry> out;
  c.put(entry(3, 0, 1, 10), out);
  c.put(entry(3, 0, 2, 11), out);
  c.put(entry(3, 1, 3, 12), out);
  c.put(entry(5, 0, 4, 13), out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(c.slots(), 14u);
  auto e = c.take(3, 0);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->span.view, 11u) << "the most recent of that size and tag";
  EXPECT_EQ(e->seq, 2u);
  EXPECT_FALSE(c.take(4, 0)) << "no other size";
  EXPECT_FALSE(c.take(5, 1)) << "no other stream";
  EXPECT_EQ(c.take(3, 1)->span.view, 12u);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.slots(), 8u);
}

TEST(SpanCache, BoundsPushOutTheOldest) {
  SpanCache c(2, 3);
  std::vector<SpanCache::Entry> out;
  c.put(entry(1, 0, 1, 1), out);
  c.put(entry(1, 0, 2, 2), out);
  c.put(entry(1, 0, 3, 3), out);  // a third of one size: the oldest of that size goes
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].span.view, 1u);
  c.put(entry(2, 0, 4, 4), out);  // three in all
  c.put(entry(4, 0, 5, 5), out);  // a fourth: the oldest overall goes
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].span.view, 2u);
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.slots(), 7u);
  std::vector<SpanCache::Entry> all;
  c.drain(all);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].span.view, 3u) << "oldest first";
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.slots(), 0u);
  EXPECT_FALSE(SpanCache(4, 0).enabled());
}

class RecentSpansTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    Options o = options();
    o.recent_spans = 8;
    o.handle_size = 0;  // one page per handle: page counts are exact
    dev = std::make_unique<core::DeviceAllocator>(0, o);
    page = dev->stats().page_size;
  }
  std::unique_ptr<core::DeviceAllocator> dev;
  std::size_t page = 0;
};

TEST_P(RecentSpansTest, ASameSizeAllocationOnTheSameStreamGetsTheSpanBack) {
  void* a = dev->alloc(3 * page, nullptr);
  void* b = dev->alloc(5 * page, nullptr);
  fill(dev->backend(), b, 5 * page, 9);
  dev->free(a);
  const auto before = dev->stats();
  void* c = dev->alloc(3 * page - 100, nullptr);
  EXPECT_EQ(c, a);
  EXPECT_EQ(dev->stats().cache_hits, before.cache_hits + 1);
  EXPECT_EQ(dev->stats().calls.total_calls(), before.calls.total_calls()) << "no backend call";
  EXPECT_TRUE(holds(dev->backend(), b, 5 * page, 9));
  dev->check();
  prim::Stream s = dev->backend().create_stream();
  dev->free(c);
  const auto parked = dev->stats();
  void* d = dev->alloc(3 * page, s);
  // Another stream never takes the parked span directly: it goes back to the pool first
  // (the slow path), whose stream rules then decide (here the first stream's work is
  // complete, so the pages may serve it).
  EXPECT_EQ(dev->stats().slow_paths, parked.slow_paths + 1);
  dev->free(d);
  dev->free(b);
  dev->check();
  dev->backend().destroy_stream(s);
}

TEST_P(RecentSpansTest, ParkedSpansGoBackBeforeMemoryGrows) {
  void* a = dev->alloc(4 * page, nullptr);
  void* b = dev->alloc(4 * page, nullptr);
  dev->free(a);
  dev->free(b);
  const std::size_t reserved = dev->stats().reserved.current;
  void* c = dev->alloc(8 * page, nullptr);  // no parked span of 8 pages: the two go back and are stitched
  EXPECT_EQ(dev->stats().reserved.current, reserved) << "the parked pages served it; nothing was created";
  dev->check();
  dev->free(c);
  dev->set_memory_cap(8 * page);
  void* d = dev->alloc(2 * page, nullptr);  // under the cap only with the parked pages
  EXPECT_LE(dev->stats().reserved.current, 8 * page);
  dev->free(d);
  dev->empty_cache();
  EXPECT_EQ(dev->stats().reserved.current, 0u) << "empty_cache releases parked spans too";
  dev->check();
}

MEMLAKE_INSTANTIATE_BACKENDS(RecentSpansTest);

}  // namespace
}  // namespace memlake::test
