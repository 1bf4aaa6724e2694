// The stitching allocator's behaviour, on both backends.
#include <algorithm>
#include <set>

#include "support.h"

namespace memlake::test {
namespace {

class AllocatorTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    dev = std::make_unique<core::DeviceAllocator>(0, options());
    page = dev->stats().page_size;
  }
  core::Stats st() { return dev->stats(); }
  std::unique_ptr<core::DeviceAllocator> dev;
  std::size_t page = 0;
};

TEST_P(AllocatorTest, LargeAllocationsArePageAlignedAndUsable) {
  void* p = dev->alloc(3 * page + 17, nullptr);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % page, 0u);
  fill(dev->backend(), p, 3 * page + 17, 1);
  EXPECT_TRUE(holds(dev->backend(), p, 3 * page + 17, 1));
  EXPECT_EQ(st().allocated.current, 4 * page);
  EXPECT_EQ(st().requested.current, 3 * page + 17);
  dev->free(p);
  EXPECT_EQ(st().allocated.current, 0u);
  dev->check();
}

TEST_P(AllocatorTest, FreedBlockIsReusedWithoutDriverCalls) {
  void* p = dev->alloc(4 * page, nullptr);
  EXPECT_EQ(st().slow_paths, 1u) << "growth is the slow path";
  const std::uint64_t slow_ns = st().slow_path_ns;
  EXPECT_GT(slow_ns, 0u);
  dev->free(p);
  auto before = st().calls;
  void* q = dev->alloc(4 * page, nullptr);
  EXPECT_EQ(q, p);
  auto after = st().calls;
  for (auto op : {prim::Op::create, prim::Op::map, prim::Op::set_access, prim::Op::reserve})
    EXPECT_EQ(after[op], before[op]) << prim::op_name(op);
  EXPECT_EQ(st().cache_hits, 1u);
  EXPECT_EQ(st().slow_paths, 1u) << "a cache hit is not timed";
  EXPECT_EQ(st().slow_path_ns, slow_ns);
  const std::uint64_t host = st().host_ns;
  EXPECT_GT(host, 0u) << "every operation's time is counted";
  dev->free(q);
  EXPECT_GT(st().host_ns, host) << "the free too";
}

TEST_P(AllocatorTest, LargerFreeRunIsSplit) {
  Options o = options();
  o.handle_size = 0;  // one page per handle: any page boundary can split
  core::DeviceAllocator one(0, o);
  void* p = one.alloc(8 * page, nullptr);
  one.free(p);
  void* a = one.alloc(3 * page, nullptr);
  void* b = one.alloc(5 * page, nullptr);
  EXPECT_EQ(one.stats().reserved.current, 8 * page) << "both halves come from the freed 8 pages";
  std::set<std::uintptr_t> ends{reinterpret_cast<std::uintptr_t>(a), reinterpret_cast<std::uintptr_t>(b)};
  EXPECT_EQ(ends.size(), 2u);
  one.check();
  one.free(a);
  one.free(b);
  one.check();
}

TEST_P(AllocatorTest, TheDefaultHandleIs8MiBWherePagesAreSmaller) {
  // The default (handle_size=auto): growth creates 8 MiB handles when the page divides 8 MiB.
  const std::size_t handle = std::size_t{8} << 20;
  const bool large = page < handle && handle % page == 0;
  const std::size_t k = large ? handle / page : 1;
  const auto creates = [&] { return st().calls[prim::Op::create]; };
  void* p = dev->alloc(2 * k * page, nullptr);
  EXPECT_EQ(creates(), large ? 2u : 2 * k);
  EXPECT_EQ(st().reserved.current, 2 * k * page);
  dev->free(p);
  dev->check();
  Options o = options();
  EXPECT_EQ(o.handle_size, Options::kAutoHandleSize);
  o.set("handle_size", "0");
  EXPECT_EQ(o.get("handle_size"), "0");
  o.set("handle_size", "auto");
  EXPECT_EQ(o.get("handle_size"), "auto");
}

TEST_P(AllocatorTest, StitchedRangeAliasesTheFreedPages) {
  // Four single-page blocks; free the 1st and 3rd: two free pages that no
  // contiguous range holds. A two-page request must stitch them, not grow.
  void* b[4];
  for (int i = 0; i < 4; ++i) b[i] = dev->alloc(page, nullptr);
  const auto reserved = st().reserved.current;
  fill(dev->backend(), b[1], page, 101);
  fill(dev->backend(), b[3], page, 103);
  void* a0 = b[0];
  void* a2 = b[2];
  dev->free(b[0]);
  dev->free(b[2]);
  void* s = dev->alloc(2 * page, nullptr);
  EXPECT_EQ(st().reserved.current, reserved) << "stitching must not create memory";
  EXPECT_EQ(st().stitches, 1u);
  // Write through the stitched view, read through the original views of the
  // two freed blocks: they are the same physical pages.
  fill(dev->backend(), s, 2 * page, 55);
  auto expect = pattern(2 * page, 55);
  std::vector<unsigned char> first(page), second(page);
  dev->backend().read(first.data(), reinterpret_cast<std::uintptr_t>(a0), page);
  dev->backend().read(second.data(), reinterpret_cast<std::uintptr_t>(a2), page);
  std::vector<unsigned char> both(first);
  both.insert(both.end(), second.begin(), second.end());
  std::vector<unsigned char> swapped(second);
  swapped.insert(swapped.end(), first.begin(), first.end());
  EXPECT_TRUE(both == expect || swapped == expect) << "stitched view does not alias the freed pages";
  // The live neighbours are untouched.
  EXPECT_TRUE(holds(dev->backend(), b[1], page, 101));
  EXPECT_TRUE(holds(dev->backend(), b[3], page, 103));
  dev->check();
  // Free and ask again: the cached stitched view is reused.
  dev->free(s);
  void* s2 = dev->alloc(2 * page, nullptr);
  EXPECT_EQ(s2, s);
  EXPECT_EQ(st().stitch_reuses, 1u);
  dev->free(s2);
  dev->free(b[1]);
  dev->free(b[3]);
  dev->check();
}

TEST_P(AllocatorTest, StitchTopsUpWithNewPagesOnlyForTheShortfall) {
  void* b[3];
  for (auto& x : b) x = dev->alloc(page, nullptr);
  dev->free(b[0]);
  dev->free(b[2]);
  void* s = dev->alloc(4 * page, nullptr);  // 2 free pages + 2 new
  EXPECT_EQ(st().reserved.current, 5 * page);
  fill(dev->backend(), s, 4 * page, 9);
  EXPECT_TRUE(holds(dev->backend(), s, 4 * page, 9));
  dev->free(s);
  dev->free(b[1]);
  dev->check();
}

TEST_P(AllocatorTest, AnIdleViewIsRepairedInsteadOfStitchedAgain) {
  void* u = nullptr;
  void* w = idle_view_half_busy(*dev, page, &u);
  ASSERT_NE(u, w);
  fill(dev->backend(), u, 2 * page, 77);
  const auto before = st();
  // 4 pages: no free run fits and no view can grow at its tail; W has 2
  // free slots, so re-mapping its 2 busy ones costs 2 maps where a new
  // stitch would cost 4.
  void* v = dev->alloc(4 * page, nullptr);
  const auto after = st();
  EXPECT_EQ(v, w) << "W itself serves the request";
  EXPECT_EQ(after.repairs, before.repairs + 1);
  EXPECT_EQ(after.stitches, before.stitches);
  EXPECT_EQ(after.calls[prim::Op::map] - before.calls[prim::Op::map], 2u);
  EXPECT_EQ(after.calls[prim::Op::unmap] - before.calls[prim::Op::unmap], 1u) << "the two busy slots, one range";
  EXPECT_EQ(after.calls[prim::Op::create] - before.calls[prim::Op::create], 2u) << "as many new pages as a stitch";
  EXPECT_EQ(after.calls[prim::Op::reserve], before.calls[prim::Op::reserve]) << "no new view";
  EXPECT_EQ(after.reserved.current, 6 * page);
  dev->check();
  fill(dev->backend(), v, 4 * page, 5);
  EXPECT_TRUE(holds(dev->backend(), v, 4 * page, 5));
  EXPECT_TRUE(holds(dev->backend(), u, 2 * page, 77)) << "the pages re-mapped away from W still hold their data";
  dev->free(v);
  dev->free(u);
  dev->check();
  void* again = dev->alloc(4 * page, nullptr);
  EXPECT_EQ(again, w) << "the repaired view is cached like any other";
  dev->free(again);
  dev->check();
}

// A second, larger growth handle (large_handle_size): a shortfall worth two
// or more of them gets them for its bulk, then the ordinary large handles,
// then single pages; smaller shortfalls never get it. Data and consistency
// hold across stitches over pages of all three sizes.
TEST_P(AllocatorTest, ASecondLargerHandleServesBigShortfallsOnly) {
  Options o = options();
  o.handle_size = 2 * page;
  o.large_handle_size = 4 * page;
  core::DeviceAllocator tiered(0, o);
  auto creates = [&] { return tiered.stats().calls[prim::Op::create]; };
  void* a = tiered.alloc(11 * page, nullptr);  // two 4-page handles; 3 pages left, under two 2-page handles: pages
  EXPECT_EQ(creates(), 5u);
  EXPECT_EQ(tiered.stats().calls[prim::Op::map], 5u);
  EXPECT_EQ(tiered.stats().reserved.current, 11 * page);
  void* b = tiered.alloc(7 * page, nullptr);  // under two 4-page handles: three 2-page handles and one page
  EXPECT_EQ(creates(), 9u);
  EXPECT_EQ(tiered.stats().reserved.current, 18 * page);
  fill(tiered.backend(), a, 11 * page, 7);
  fill(tiered.backend(), b, 7 * page, 8);
  tiered.check();
  tiered.free(a);
  void* c = tiered.alloc(3 * page, nullptr);  // a 4-page handle, taken whole
  EXPECT_EQ(tiered.stats().allocated.current, 11 * page);
  tiered.free(c);
  tiered.free(b);
  void* all = tiered.alloc(18 * page, nullptr);  // a stitch over every page, no new memory
  EXPECT_EQ(tiered.stats().reserved.current, 18 * page);
  EXPECT_EQ(creates(), 9u);
  fill(tiered.backend(), all, 18 * page, 9);
  EXPECT_TRUE(holds(tiered.backend(), all, 18 * page, 9));
  tiered.check();
  tiered.free(all);
  for (std::size_t bad : {3 * page, 2 * page, page}) {  // not a multiple of the handle, or not larger
    o.large_handle_size = bad;
    std::string msg;
    EXPECT_EQ(error_of([&] { core::DeviceAllocator x(0, o); }, &msg), Errc::invalid_argument) << bad;
    EXPECT_NE(msg.find("large_handle_size"), std::string::npos) << msg;
  }
}

TEST_P(AllocatorTest, LargeHandlesServeGrowthAndRoundOnlyWhenTakenWhole) {
  Options o = options();
  o.handle_size = 4 * page;
  core::DeviceAllocator big(0, o);
  auto calls = [&](prim::Op op) { return big.stats().calls[op]; };
  void* a = big.alloc(9 * page, nullptr);  // growth: two 4-page handles and one single page
  EXPECT_EQ(calls(prim::Op::create), 3u);
  EXPECT_EQ(calls(prim::Op::map), 3u);
  EXPECT_EQ(big.stats().reserved.current, 9 * page);
  EXPECT_EQ(big.stats().allocated.current, 9 * page);
  fill(big.backend(), a, 9 * page, 3);
  EXPECT_TRUE(holds(big.backend(), a, 9 * page, 3));
  big.free(a);
  // The cached view holds handles of 4, 4 and 1 pages; requests take them whole.
  void* b = big.alloc(4 * page, nullptr);  // exactly one large handle
  EXPECT_EQ(big.stats().allocated.current, 4 * page);
  void* c = big.alloc(3 * page, nullptr);  // the other large handle, taken whole
  EXPECT_EQ(big.stats().allocated.current, 8 * page);
  EXPECT_EQ(big.stats().requested.current, 7 * page);
  void* d = big.alloc(page, nullptr);  // the single page: no growth
  EXPECT_EQ(big.stats().reserved.current, 9 * page);
  EXPECT_EQ(calls(prim::Op::create), 3u);
  fill(big.backend(), b, 4 * page, 4);
  fill(big.backend(), c, 3 * page, 5);
  fill(big.backend(), d, page, 6);
  EXPECT_TRUE(holds(big.backend(), b, 4 * page, 4));
  EXPECT_TRUE(holds(big.backend(), c, 3 * page, 5));
  EXPECT_TRUE(holds(big.backend(), d, page, 6));
  big.check();
  big.free(c);
  big.free(b);
  big.free(d);
  // A stitch over free handles of both sizes: 9 pages again, no new memory.
  void* e = big.alloc(9 * page, nullptr);
  EXPECT_EQ(big.stats().reserved.current, 9 * page);
  big.free(e);
  big.check();
  EXPECT_EQ(big.empty_cache(), 9 * page);
  Options bad = options();
  bad.handle_size = page + page / 2;
  EXPECT_EQ(error_of([&] { core::DeviceAllocator x(0, bad); }), Errc::invalid_argument);
}

TEST_P(AllocatorTest, SmallRequestsShareAPage) {
  std::vector<void*> v;
  for (int i = 0; i < 64; ++i) v.push_back(dev->alloc(1000 + i, nullptr));
  EXPECT_EQ(st().reserved.current, page) << "64 small blocks fit in one page";
  std::set<std::uintptr_t> uniq;
  for (void* p : v) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 512, 0u);
    uniq.insert(reinterpret_cast<std::uintptr_t>(p));
  }
  EXPECT_EQ(uniq.size(), v.size());
  for (std::size_t i = 0; i < v.size(); ++i) fill(dev->backend(), v[i], 1000 + i, i);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_TRUE(holds(dev->backend(), v[i], 1000 + i, i));
  dev->check();
  for (void* p : v) dev->free(p);
  dev->check();
}

TEST_P(AllocatorTest, SmallBlocksAreBestFitLowestAddressFirst) {
  auto at = [](void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  void* a = dev->alloc(512, nullptr);  // carved in order from one slab
  void* b = dev->alloc(2048, nullptr);
  void* c = dev->alloc(512, nullptr);
  void* d = dev->alloc(1024, nullptr);
  void* e = dev->alloc(512, nullptr);
  ASSERT_EQ(at(b), at(a) + 512);
  ASSERT_EQ(at(e), at(d) + 1024);
  dev->free(b);  // holes of 2048 and 1024 bytes
  dev->free(d);
  EXPECT_EQ(dev->alloc(1000, nullptr), d) << "the smallest hole that holds it";
  void* f = dev->alloc(512, nullptr);
  EXPECT_EQ(f, b) << "the 2048-byte hole is split";
  void* g = dev->alloc(1536, nullptr);
  EXPECT_EQ(at(g), at(b) + 512) << "its remainder, exactly";
  dev->free(a);  // two 512-byte holes
  dev->free(c);
  EXPECT_EQ(dev->alloc(512, nullptr), a) << "equal sizes: the lowest address";
  dev->check();
  for (void* p : {a, d, f, g, e}) dev->free(p);
  dev->check();
  EXPECT_EQ(st().small_slabs, 1u) << "freed blocks coalesce back into one empty slab";
  void* whole = dev->alloc(options().small_max, nullptr);
  EXPECT_EQ(at(whole), at(a)) << "the slab's first block is the whole slab again";
  dev->free(whole);
}

TEST_P(AllocatorTest, EmptySlabPagesReturnToLargeAllocations) {
  std::vector<void*> v;
  for (int i = 0; i < 8; ++i) v.push_back(dev->alloc(page / 2, nullptr));  // 4 slabs
  EXPECT_EQ(st().reserved.current, 4 * page);
  for (void* p : v) dev->free(p);
  void* big = dev->alloc(4 * page, nullptr);
  EXPECT_EQ(st().reserved.current, 4 * page) << "emptied slabs must be reusable as large memory";
  dev->free(big);
  dev->check();
}

TEST_P(AllocatorTest, EmptyCacheReleasesEveryFreePage) {
  void* keep = dev->alloc(2 * page, nullptr);
  void* a = dev->alloc(5 * page, nullptr);
  void* small = dev->alloc(100, nullptr);
  dev->free(a);
  dev->free(small);
  dev->empty_cache();
  EXPECT_EQ(st().reserved.current, 2 * page);
  fill(dev->backend(), keep, 2 * page, 4);
  EXPECT_TRUE(holds(dev->backend(), keep, 2 * page, 4));
  dev->check();
  dev->free(keep);
  dev->empty_cache();
  EXPECT_EQ(st().reserved.current, 0u);
  EXPECT_EQ(st().mapped.current, 0u);
  dev->check();
}

TEST_P(AllocatorTest, EmptyCacheWithABoundReleasesThatMuchAndKeepsTheRestCached) {
  // A trim the daemon asks for: the shortfall goes back, the rest of the cache stays.
  void* keep = dev->alloc(2 * page, nullptr);
  fill(dev->backend(), keep, 2 * page, 6);
  std::vector<void*> v;
  for (int i = 0; i < 4; ++i) v.push_back(dev->alloc(3 * page, nullptr));
  for (void* p : v) dev->free(p);
  const std::size_t before = st().reserved.current;
  ASSERT_EQ(before, 14 * page);
  const std::size_t released = dev->empty_cache(4 * page);
  EXPECT_GE(released, 4 * page);
  EXPECT_LT(released, 12 * page) << "a bounded trim must not empty the whole cache";
  EXPECT_EQ(st().reserved.current, before - released);
  dev->check();
  const auto created = st().pages_created;
  void* again = dev->alloc(3 * page, nullptr);  // served from what stayed cached
  EXPECT_EQ(st().pages_created, created);
  dev->free(again);
  EXPECT_TRUE(holds(dev->backend(), keep, 2 * page, 6));
  EXPECT_EQ(dev->empty_cache(0), 0u) << "nothing asked, nothing released";
  dev->empty_cache();
  EXPECT_EQ(st().reserved.current, 2 * page);
  dev->check();
  dev->free(keep);
}

TEST_P(AllocatorTest, CapGivesOutOfMemoryAndKeepsState) {
  dev->set_memory_cap(4 * page);
  void* a = dev->alloc(3 * page, nullptr);
  fill(dev->backend(), a, 3 * page, 5);
  std::string msg;
  EXPECT_EQ(error_of([&] { dev->alloc(2 * page, nullptr); }, &msg), Errc::out_of_memory);
  EXPECT_NE(msg.find("cap"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(2 * page)), std::string::npos) << "message names the request size: " << msg;
  EXPECT_EQ(st().num_ooms, 1u);
  EXPECT_TRUE(holds(dev->backend(), a, 3 * page, 5));
  dev->check();
  void* b = dev->alloc(page, nullptr);  // still fits
  dev->free(b);
  dev->free(a);
  dev->check();
}

TEST_P(AllocatorTest, LoweringTheCapReleasesFreeMemory) {
  void* a = dev->alloc(6 * page, nullptr);
  void* b = dev->alloc(2 * page, nullptr);
  dev->free(a);
  dev->set_memory_cap(4 * page);
  EXPECT_EQ(st().reserved.current, 2 * page);
  dev->free(b);
  dev->check();
}

TEST_P(AllocatorTest, BadInputGivesClearErrorsAndChangesNothing) {
  void* a = dev->alloc(page, nullptr);
  void* s = dev->alloc(64, nullptr);
  fill(dev->backend(), a, page, 8);
  auto before = st();
  std::string msg;
  EXPECT_EQ(dev->alloc(0, nullptr), nullptr) << "size 0 gives a null pointer";
  dev->free(nullptr);  // no-op
  EXPECT_EQ(error_of([&] { dev->free(reinterpret_cast<char*>(a) + 512); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("not a live allocation"), std::string::npos) << msg;
  int local = 0;
  EXPECT_EQ(error_of([&] { dev->free(&local); }), Errc::invalid_argument) << "foreign pointer";
  EXPECT_EQ(error_of([&] { dev->alloc(std::size_t{1} << 60, nullptr); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("larger than any device"), std::string::npos) << msg;
  dev->free(s);
  EXPECT_EQ(error_of([&] { dev->free(s); }, &msg), Errc::invalid_argument) << "double free";
  EXPECT_NE(msg.find("double free"), std::string::npos) << msg;
  auto after = st();
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  EXPECT_EQ(after.active.current, before.active.current - 1);
  EXPECT_EQ(after.reserved.current, before.reserved.current);
  EXPECT_TRUE(holds(dev->backend(), a, page, 8));
  dev->check();
  dev->free(a);
}

TEST_P(AllocatorTest, PeaksAndReset) {
  void* a = dev->alloc(10 * page, nullptr);
  dev->free(a);
  EXPECT_EQ(st().allocated.peak, 10 * page);
  dev->reset_peaks();
  EXPECT_EQ(st().allocated.peak, 0u);
  EXPECT_EQ(st().reserved.peak, 10 * page) << "reserved is still held, so its peak resets to the current value";
}

TEST_P(AllocatorTest, CrossStreamReuseIsSafe) {
  prim::Stream s1 = dev->backend().create_stream();
  prim::Stream s2 = dev->backend().create_stream();
  void* a = dev->alloc(4 * page, s1);
  dev->free(a);
  void* b = dev->alloc(4 * page, s2);  // s1's work is complete here (nothing pending)
  dev->check();
  dev->free(b);
  dev->empty_cache();
  dev->backend().destroy_stream(s1);
  dev->backend().destroy_stream(s2);
}

MEMLAKE_INSTANTIATE_BACKENDS(AllocatorTest);

// Cross-stream rule with work still pending: only the host backend can hold
// a stream's work back deterministically.
class HostStreams : public ::testing::Test {
 protected:
  void SetUp() override {
    auto be = std::make_unique<prim::HostBackend>(0, 64 << 10, 0);
    host = be.get();
    Options o;
    o.backend = "host";
    o.small_max = 16 << 10;
    dev = std::make_unique<core::DeviceAllocator>(std::move(be), o);
    page = 64 << 10;
  }
  prim::HostBackend* host;
  std::unique_ptr<core::DeviceAllocator> dev;
  std::size_t page;
};

TEST_F(HostStreams, PendingFreeIsNotReusedByAnotherStream) {
  prim::Stream s1 = host->create_stream(), s2 = host->create_stream();
  void* a = dev->alloc(4 * page, s1);
  host->hold(s1);  // kernels on s1 still use a
  dev->free(a);
  void* same = dev->alloc(4 * page, s1);
  EXPECT_EQ(same, a) << "the freeing stream reuses at once";
  host->hold(s1);
  dev->free(same);
  void* other = dev->alloc(4 * page, s2);
  EXPECT_NE(other, a) << "another stream must not get memory s1 may still touch";
  EXPECT_EQ(dev->stats().reserved.current, 8 * page);
  dev->free(other);
  dev->check();
  host->synchronize_stream(s1);  // s1's work completes
  void* again = dev->alloc(8 * page, s2);
  EXPECT_EQ(dev->stats().reserved.current, 8 * page) << "after completion s2 may stitch s1's pages";
  dev->free(again);
  dev->check();
}

TEST_F(HostStreams, AViewWithPendingWorkIsNotRepaired) {
  // As AllocatorTest.AnIdleViewIsRepairedInsteadOfStitchedAgain, but the
  // view's last free is still pending on its stream: its slots cannot be
  // unmapped without waiting, so a new view is stitched instead.
  prim::Stream s1 = host->create_stream();
  void* u = nullptr;
  void* w = idle_view_half_busy(*dev, page, &u, s1, [&] { host->hold(s1); });  // kernels on s1 still use W
  const auto before = dev->stats();
  void* v = dev->alloc(4 * page, s1);
  EXPECT_NE(v, w);
  EXPECT_EQ(dev->stats().repairs, before.repairs);
  EXPECT_EQ(dev->stats().stitches, before.stitches + 1);
  EXPECT_EQ(dev->stats().calls[prim::Op::unmap], before.calls[prim::Op::unmap]) << "nothing unmapped under pending work";
  dev->check();
  dev->free(v);
  dev->free(u);
  host->synchronize_stream(s1);
  dev->check();
}

TEST_F(HostStreams, IdleViewsWithPendingWorkAreUnmappedLaterNotWaitedFor) {
  // Unmapping a cached view needs the work queued before its last frees to be
  // complete. The trim after a slow path does not block the host for it (the
  // bound itself is tested on the page pool, test_page_pool.cpp).
  auto be = std::make_unique<prim::HostBackend>(0, 64 << 10, 0);
  prim::HostBackend* h = be.get();
  Options o;
  o.backend = "host";
  o.small_max = 16 << 10;
  o.handle_size = 0;         // one page per handle
  o.max_mapped_ratio = 1.0;  // mapped <= reserved: every alias is over the bound
  core::DeviceAllocator d(std::move(be), o);
  prim::Stream s = h->create_stream();
  auto waits = [&] { return d.stats().calls[prim::Op::synchronize]; };
  void* a = d.alloc(2 * page, s);
  void* b = d.alloc(2 * page, s);
  h->hold(s);  // kernels on s still use a and b
  d.free(a);
  d.free(b);
  void* c = d.alloc(4 * page, s);  // one view extended with the other's pages, which it now aliases
  EXPECT_EQ(d.stats().views, 2u) << "the idle view stays while its work is pending";
  EXPECT_EQ(d.stats().mapped.current, 6 * page) << "over the bound (4 pages reserved)";
  EXPECT_EQ(waits(), 0u) << "trimming did not block the host";
  EXPECT_FALSE(h->query_stream(s)) << "the stream's work is still pending";
  fill(d.backend(), c, 4 * page, 7);
  d.check();

  d.free(c);
  h->synchronize_stream(s);  // the work completes
  void* e = d.alloc(5 * page, s);  // a slow path (one new page): its trim unmaps the complete views
  EXPECT_EQ(d.stats().views, 1u);
  EXPECT_EQ(d.stats().mapped.current, 5 * page);
  EXPECT_EQ(waits(), 0u) << "no wait for work known complete";
  EXPECT_TRUE(holds(d.backend(), e, 4 * page, 7)) << "c's pages, in e's view";
  d.check();
  d.free(e);
  h->destroy_stream(s);
}

TEST_F(HostStreams, CapMakesTheAllocatorWaitForOtherStreams) {
  prim::Stream s1 = host->create_stream(), s2 = host->create_stream();
  dev->set_memory_cap(4 * page);
  void* a = dev->alloc(4 * page, s1);
  host->hold(s1);
  dev->free(a);
  void* b = dev->alloc(4 * page, s2);  // must wait for s1 instead of failing
  EXPECT_EQ(b, a);
  EXPECT_GE(dev->stats().calls[prim::Op::event_record], 1u);
  dev->free(b);
  dev->check();
}

TEST_F(HostStreams, SmallBlocksStayWithTheirStream) {
  prim::Stream s1 = host->create_stream(), s2 = host->create_stream();
  void* keep = dev->alloc(100, s1);
  void* a = dev->alloc(100, s1);
  host->hold(s1);
  dev->free(a);
  void* b = dev->alloc(100, s2);
  EXPECT_NE(b, a);
  EXPECT_EQ(dev->stats().small_slabs, 2u);
  dev->free(b);
  dev->free(keep);
  dev->check();
}

}  // namespace
}  // namespace memlake::test
