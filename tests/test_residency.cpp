// Residency: allocations leave the device and come back at the same address
// with the same bytes (sleep/wake, evict/restore), on real aliasing memory
// (the host backend's memfd pages), with faults injected at the primitives.
#include <algorithm>
#include <array>
#include <random>

#include "core/labels.h"
#include "prim/decorators.h"
#include "core/allocator.h"
#include "support.h"

namespace memlake::test {
namespace {

using residency::Mode;
constexpr std::size_t kPage = 64 << 10;

// A host backend whose pinned allocations can be made to fail (host memory short).
class PinLimit final : public prim::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  std::size_t limit = SIZE_MAX, pinned = 0;
  void* alloc_pinned(std::size_t n) override {
    if (pinned + n > limit) throw_error(Errc::out_of_memory, "test: pinned memory limit");
    pinned += n;
    return inner().alloc_pinned(n);
  }
};

struct Rig {
  prim::HostBackend* host;
  PinLimit* pins;
  prim::FaultyBackend* faulty;
  std::unique_ptr<core::DeviceAllocator> dev;
  explicit Rig(std::size_t handle_pages = 4, bool tail_share = false) {
    auto h = std::make_unique<prim::HostBackend>(0, kPage, 0);
    host = h.get();
    auto p = std::make_unique<PinLimit>(std::move(h));
    pins = p.get();
    auto f = std::make_unique<prim::FaultyBackend>(std::move(p));
    faulty = f.get();
    Options o;
    o.backend = "host";
    o.small_max = kPage / 4;
    o.handle_size = handle_pages * kPage;
    o.tail_share = tail_share;
    dev = std::make_unique<core::DeviceAllocator>(std::move(f), o);
  }
  prim::Backend& be() { return dev->backend(); }
  std::size_t reserved() const { return dev->stats().reserved.current; }
};

struct Buf {
  void* p;
  std::size_t n;
  std::uint64_t seed;
};

std::uint16_t tag(const char* name, unsigned flags = 0) { return core::label_id(name, flags); }

// Allocates n bytes under `label` and fills them.
Buf make(Rig& r, std::size_t n, std::uint16_t label, std::uint64_t seed) {
  const std::uint16_t prev = core::set_current_label(label);
  void* p = r.dev->alloc(n, nullptr);
  core::set_current_label(prev);
  fill(r.be(), p, n, seed);
  return Buf{p, n, seed};
}

// A device whose work completes 10 ticks after it is queued, N buffers of 8
// pages (seeds 1..N) and a memory cap at what they reserve: the set-up of
// the out-of-memory paths' tests.
template <std::size_t N>
std::array<Buf, N> lagged_at_cap(Rig& r) {
  r.host->set_lag(10);
  r.host->advance_clock(1);
  std::array<Buf, N> bufs;
  for (std::size_t i = 0; i < N; ++i) bufs[i] = make(r, 8 * kPage, 0, i + 1);
  r.dev->set_memory_cap(r.reserved());
  return bufs;
}

TEST(Residency, OffloadSleepGivesEverythingBackAndWakeRestoresAtTheSameAddress) {
  Rig r;
  const std::uint16_t w = tag("test-weights");
  std::vector<Buf> bufs;
  for (std::size_t n : {kPage + 1, 5 * kPage, 37 * kPage + 100, 3 * kPage}) bufs.push_back(make(r, n, w, bufs.size() + 1));
  void* small = r.dev->alloc(100, nullptr);  // small allocations share slabs and stay
  fill(r.be(), small, 100, 99);
  const std::size_t maps_before = r.host->live_mappings();
  const auto rep = r.dev->sleep(Mode::offload);
  EXPECT_EQ(rep.allocations, bufs.size());
  std::size_t total = 0;
  for (const Buf& b : bufs) total += b.n;
  EXPECT_EQ(rep.offloaded, total);
  EXPECT_EQ(rep.discarded, 0u);
  EXPECT_EQ(r.reserved(), kPage) << "only the small allocation's slab stays";
  EXPECT_LT(r.host->live_mappings(), maps_before);
  EXPECT_TRUE(r.dev->residency_stats().asleep);
  const core::Stats st = r.dev->stats();  // the statistics layer shows it too
  EXPECT_EQ(st.residency.evicted_now, bufs.size());
  EXPECT_EQ(st.residency.evicted_bytes_now, total);
  EXPECT_NE(core::stats_json(st).find("\"residency\":{\"asleep\":true"), std::string::npos) << core::stats_json(st);
  r.dev->check();
  // The addresses are still reserved: nothing new lands on them.
  void* other = r.dev->alloc(5 * kPage, nullptr);
  for (const Buf& b : bufs) EXPECT_TRUE(other < b.p || other >= static_cast<char*>(b.p) + b.n);
  r.dev->free(other);
  const auto wr = r.dev->wake();
  EXPECT_EQ(wr.allocations, bufs.size());
  EXPECT_EQ(wr.restored, total);
  for (const Buf& b : bufs) EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed)) << b.n;
  EXPECT_TRUE(holds(r.be(), small, 100, 99));
  EXPECT_FALSE(r.dev->residency_stats().asleep);
  r.dev->check();
  for (const Buf& b : bufs) r.dev->free(b.p);
  r.dev->free(small);
  EXPECT_EQ(r.dev->residency_stats().host_used, 0u);
  r.dev->empty_cache();
  EXPECT_EQ(r.host->live_handles(), 0u);
}

TEST(Residency, DiscardDropsBytesAndWakeMapsWritableMemory) {
  Rig r;
  const std::uint16_t kv = tag("test-kv");
  Buf b = make(r, 9 * kPage, kv, 5);
  const auto rep = r.dev->sleep({{kv, Mode::discard}});
  EXPECT_EQ(rep.discarded, b.n);
  EXPECT_EQ(rep.offloaded, 0u);
  EXPECT_EQ(r.dev->residency_stats().host_capacity, 0u) << "discard pins nothing";
  EXPECT_EQ(r.reserved(), 0u);
  const auto wr = r.dev->wake();
  EXPECT_EQ(wr.refilled, b.n);
  fill(r.be(), b.p, b.n, 6);
  EXPECT_TRUE(holds(r.be(), b.p, b.n, 6));
  r.dev->free(b.p);
  r.dev->check();
}

TEST(Residency, TagsSelectWhatSleeps) {
  Rig r;
  const std::uint16_t w = tag("test-w2"), kv = tag("test-kv2");
  Buf a = make(r, 4 * kPage, w, 1), b = make(r, 8 * kPage, kv, 2);
  r.dev->sleep({{kv, Mode::offload}});
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed)) << "an unselected tag stays on the device, usable";
  fill(r.be(), a.p, a.n, 11);
  r.dev->wake();
  EXPECT_TRUE(holds(r.be(), a.p, a.n, 11));
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->check();
}

TEST(Residency, OneSleepMixesModesAndMoreTagsMaySleepWhileAsleep) {
  Rig r;
  const std::uint16_t w = tag("test-mix-w"), kv = tag("test-mix-kv"), act = tag("test-mix-act");
  Buf a = make(r, 7 * kPage, w, 1), b = make(r, 11 * kPage, kv, 2), c = make(r, 3 * kPage, act, 3);
  const auto rep = r.dev->sleep({{w, Mode::offload}, {kv, Mode::discard}});
  EXPECT_EQ(rep.offloaded, a.n);
  EXPECT_EQ(rep.discarded, b.n);
  EXPECT_TRUE(holds(r.be(), c.p, c.n, c.seed));
  EXPECT_EQ(r.dev->sleep({{act, Mode::offload}}).offloaded, c.n);
  EXPECT_EQ(r.reserved(), 0u);
  EXPECT_EQ(error_of([&] { r.dev->sleep({{w, Mode::offload}}); }), Errc::invalid_argument);
  const auto wr = r.dev->wake();
  EXPECT_EQ(wr.restored, a.n + c.n);
  EXPECT_EQ(wr.refilled, b.n);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_TRUE(holds(r.be(), c.p, c.n, c.seed));
  r.dev->check();
}

TEST(Residency, ReadOnlyWeightsKeepTheirHostCopyAndAreNotCopiedAgain) {
  Rig r;
  const std::uint16_t w = tag("test-ro", core::kLabelReadonly);
  Buf a = make(r, 6 * kPage + 7, w, 3);
  EXPECT_EQ(r.dev->sleep({{w, Mode::offload}}).offloaded, a.n);
  r.dev->wake();
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  // Mapped read-only now: a write faults (the host backend refuses it).
  std::vector<unsigned char> junk(16, 0xff);
  EXPECT_NE(error_of([&] { r.be().write(reinterpret_cast<std::uintptr_t>(a.p), junk.data(), junk.size()); }), Errc::ok);
  const auto again = r.dev->sleep({{w, Mode::offload}});
  EXPECT_EQ(again.offloaded, 0u);
  EXPECT_EQ(again.kept, a.n);
  EXPECT_EQ(r.reserved(), 0u);
  r.dev->wake();
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  // Freed, its pages serve others writable again.
  r.dev->free(a.p);
  EXPECT_EQ(r.dev->residency_stats().host_used, 0u);
  Buf b = make(r, 6 * kPage, 0, 4);
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->check();
}

// A sleep that selects nothing still gives the cache back, and wake() ends
// it (it said "not asleep" after a successful sleep before; the C ABI
// call-sequence fuzzer found it).
TEST(Residency, ASleepThatSelectsNothingIsEndedByWake) {
  Rig r;
  void* small = r.dev->alloc(100, nullptr);
  const auto rep = r.dev->sleep(Mode::offload);
  EXPECT_EQ(rep.allocations, 0u);
  EXPECT_TRUE(r.dev->residency_stats().asleep);
  EXPECT_EQ(r.dev->wake().restored, 0u);
  EXPECT_FALSE(r.dev->residency_stats().asleep);
  r.dev->free(small);
}

// Evicting or sleeping while a CUDA graph is being captured on the device
// is refused (its copies and events would be captured), and nothing moves.
TEST(Residency, EvictionDuringACaptureIsRefused) {
  Rig r;
  Buf a = make(r, 8 * kPage, 0, 1);
  prim::Stream s = r.be().create_stream();
  r.dev->capture_begin(s, 1);
  std::string msg;
  EXPECT_EQ(error_of([&] { r.dev->evict(a.p, Mode::offload); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("capture"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { r.dev->sleep(Mode::offload); }), Errc::invalid_argument);
  EXPECT_EQ(r.dev->residency_stats().evicted_now, 0u);
  r.dev->capture_end(s);
  r.dev->evict(a.p, Mode::offload);
  r.dev->capture_begin(s, 1);
  EXPECT_EQ(error_of([&] { r.dev->restore(a.p); }), Errc::invalid_argument) << "its copy would go into the graph";
  r.dev->capture_end(s);
  r.dev->restore(a.p);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  r.dev->graph_pool_release(1);
  r.be().destroy_stream(s);
  r.dev->check();
}

TEST(Residency, MisuseIsRefusedWithClearErrors) {
  Rig r;
  std::string msg;
  EXPECT_EQ(error_of([&] { r.dev->wake(); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("not asleep"), std::string::npos) << msg;
  Buf a = make(r, 3 * kPage, 0, 1);
  r.dev->sleep(Mode::offload);
  EXPECT_EQ(error_of([&] { r.dev->sleep(Mode::offload); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("already asleep"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { r.dev->evict(a.p, Mode::offload); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { r.dev->restore(a.p); }), Errc::invalid_argument) << "wake() restores what sleep took";
  r.dev->wake();
  void* small = r.dev->alloc(64, nullptr);
  EXPECT_EQ(error_of([&] { r.dev->evict(small, Mode::offload); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("slab"), std::string::npos) << msg;
  int x = 0;
  EXPECT_EQ(error_of([&] { r.dev->evict(&x, Mode::offload); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { r.dev->restore(a.p); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([] { core::label_id("", 0); }), Errc::invalid_argument);
  EXPECT_EQ(error_of([] { core::set_current_label(core::kMaxLabels); }), Errc::invalid_argument);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  r.dev->check();
}

TEST(Residency, FreesAndAllocationsWhileAsleepStayConsistent) {
  Rig r;
  Buf a = make(r, 4 * kPage, 0, 1), b = make(r, 12 * kPage, 0, 2);
  r.dev->sleep(Mode::offload);
  r.dev->free(a.p);  // asleep, freed: its host copy goes, its address becomes free
  Buf c = make(r, 4 * kPage, 0, 3);
  r.dev->check();
  r.dev->wake();
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  EXPECT_TRUE(holds(r.be(), c.p, c.n, c.seed));
  EXPECT_EQ(r.dev->residency_stats().host_used, 0u);
  r.dev->free(b.p);
  r.dev->free(c.p);
  r.dev->empty_cache();
  EXPECT_EQ(r.host->live_handles(), 0u);
  EXPECT_EQ(r.host->live_mappings(), 0u);
  r.dev->check();
}

TEST(Residency, ShortHostMemoryFailsBeforeAnythingMoves) {
  Rig r;
  Buf a = make(r, 8 * kPage, 0, 1), b = make(r, 8 * kPage, 0, 2);
  r.pins->limit = 10 * kPage;
  std::string msg;
  EXPECT_EQ(error_of([&] { r.dev->sleep(Mode::offload); }, &msg), Errc::out_of_memory);
  EXPECT_NE(msg.find("host tier"), std::string::npos) << msg;
  EXPECT_FALSE(r.dev->residency_stats().asleep);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->check();
  r.pins->limit = SIZE_MAX;
  r.dev->sleep(Mode::offload);
  r.dev->wake();
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
}

TEST(Residency, EvictKeepsPagesInThePoolAndRestoreBringsTheBytesBack) {
  Rig r;
  Buf a = make(r, 8 * kPage, 0, 1);
  const std::size_t reserved = r.reserved();
  r.dev->evict(a.p, Mode::offload);
  EXPECT_EQ(r.reserved(), reserved) << "tiering keeps the pages for other allocations";
  Buf b = make(r, 8 * kPage, 0, 2);  // takes the evicted allocation's pages
  EXPECT_EQ(r.reserved(), reserved);
  r.dev->restore(a.p);  // needs new pages
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->check();
  r.dev->evict(b.p, Mode::discard);
  r.dev->free(b.p);
  r.dev->check();
}

// The watermark counts allocations, not residency: an evicted allocation is
// still allocated, so evictions and restores inside a stretch of work leave
// peak - start alone and only what the stretch allocates counts (activation
// tiering's measure of a module's transient in its eager profile iteration).
TEST(Residency, TheWatermarkCountsAllocationsWhereverTheirBytesAre) {
  Rig r;
  Buf a = make(r, 8 * kPage, 0, 1);
  const core::Stat start = r.dev->watermark(true);
  EXPECT_EQ(start.current, 8 * kPage);
  r.dev->evict(a.p, Mode::offload, false);  // leaving, then gone: still allocated
  r.dev->settle(true);
  EXPECT_EQ(r.dev->watermark(false).peak, start.current);
  Buf b = make(r, 4 * kPage, 0, 2);  // the stretch's own transient, on the evicted one's pages
  r.dev->free(b.p);
  r.dev->restore(a.p);
  const core::Stat w = r.dev->watermark(true);
  EXPECT_EQ(w.current, start.current);
  EXPECT_EQ(w.peak - start.current, 4 * kPage);
  EXPECT_EQ(r.dev->watermark(false).peak, w.current);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  r.dev->free(a.p);
  r.dev->check();
}

// Asynchronous eviction: the copy is queued and the allocation is *leaving*
// (mapped, bytes intact) until its copy completes; the host backend's device
// lag keeps the copy's event pending until the clock moves on.
TEST(Residency, AnAsyncEvictionLeavesOnlyOnceItsCopyCompletes) {
  Rig r;
  r.host->set_lag(10);
  r.host->advance_clock(1);
  Buf a = make(r, 8 * kPage + 3, 0, 1);
  Buf b = make(r, 5 * kPage, 0, 2);
  r.dev->evict(a.p, Mode::offload, /*wait=*/false);
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.leaving_now, 1u);
  EXPECT_EQ(st.leaving_bytes_now, 8 * kPage + 3);
  EXPECT_EQ(st.evicted_now, 0u);
  EXPECT_TRUE(r.host->accessible(reinterpret_cast<std::uintptr_t>(a.p), kPage)) << "still mapped while its copy runs";
  EXPECT_EQ(r.dev->settle(false), 0u) << "its copy has not completed";
  EXPECT_EQ(error_of([&] { r.dev->evict(a.p, Mode::offload); }), Errc::invalid_argument) << "already leaving";
  r.host->advance_clock(20);
  EXPECT_EQ(r.dev->settle(false), 1u);
  st = r.dev->residency_stats();
  EXPECT_EQ(st.leaving_now, 0u);
  EXPECT_EQ(st.leaving_bytes_now, 0u);
  EXPECT_EQ(st.evicted_now, 1u);
  EXPECT_FALSE(r.host->accessible(reinterpret_cast<std::uintptr_t>(a.p), kPage));
  r.dev->check();
  // Both directions at once: b leaves while a comes back.
  r.dev->evict(b.p, Mode::offload, /*wait=*/false);
  r.dev->restore(a.p);
  EXPECT_EQ(r.dev->settle(true), 1u);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  r.dev->restore(b.p);
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->check();
}

// Which streams were made to wait for which events (the host backend's
// stream_wait does nothing: its copies are done when queued).
class WaitLog final : public prim::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  std::vector<std::pair<prim::Stream, prim::Event>> waits;
  std::vector<prim::Event> recorded;
  std::vector<prim::Event> host_waits;
  std::size_t copies_out = 0;
  void wait_event(prim::Event e) override {
    host_waits.push_back(e);
    inner().wait_event(e);
  }
  void copy_to_host_async(void* dst, std::uintptr_t src, std::size_t n, prim::Stream s) override {
    ++copies_out;
    inner().copy_to_host_async(dst, src, n, s);
  }
  void stream_wait(prim::Stream s, prim::Event e) override {
    waits.emplace_back(s, e);
    inner().stream_wait(s, e);
  }
  prim::Event record_event(prim::Stream s) override {
    prim::Event e = inner().record_event(s);
    recorded.push_back(e);
    return e;
  }
  bool waited(prim::Stream s, prim::Event e) const {
    return std::find(waits.begin(), waits.end(), std::make_pair(s, e)) != waits.end();
  }
};

// A restore without a wait queues its copy and leaves the allocation's stream
// alone until ready(): a prefetch overlaps the work queued in between. A free
// or an evict before ready() still orders after the copy.
TEST(Residency, ARestoreWithoutAWaitMakesTheStreamWaitOnlyWhenReady) {
  auto h = std::make_unique<prim::HostBackend>(0, kPage, 0);
  prim::HostBackend* host = h.get();
  auto w = std::make_unique<WaitLog>(std::move(h));
  WaitLog* log = w.get();
  Options o;
  o.backend = "host";
  o.small_max = kPage / 4;
  core::DeviceAllocator dev(std::move(w), o);
  host->set_lag(10);
  host->advance_clock(1);
  prim::Stream s = dev.backend().create_stream();
  auto make_on = [&](std::size_t n, std::uint64_t seed) {
    void* p = dev.alloc(n, s);
    fill(dev.backend(), p, n, seed);
    return Buf{p, n, seed};
  };
  Buf a = make_on(8 * kPage, 1), b = make_on(4 * kPage, 2), c = make_on(4 * kPage, 3);
  for (Buf* x : {&a, &b, &c}) dev.evict(x->p, Mode::offload);
  // a: restored ahead, ready later.
  dev.restore(a.p, /*wait=*/false);
  const prim::Event copy = log->recorded.back();
  EXPECT_FALSE(log->waited(s, copy)) << "nothing waits for a prefetch when it is issued";
  EXPECT_TRUE(holds(dev.backend(), a.p, a.n, a.seed));  // the host backend's copy is done when queued
  dev.restore_ready(a.p);
  EXPECT_TRUE(log->waited(s, copy)) << "ready(): the allocation's stream waits for its copy";
  const std::size_t n = log->waits.size();
  dev.restore_ready(a.p);
  EXPECT_EQ(log->waits.size(), n) << "a second ready() has nothing to wait for";
  // b: freed before ready(): its stream waits for the copy before the free.
  dev.restore(b.p, /*wait=*/false);
  const prim::Event copy_b = log->recorded.back();
  dev.free(b.p);
  EXPECT_TRUE(log->waited(s, copy_b));
  // c: evicted again before ready(): its host copy is still its bytes, so
  // nothing is copied out; the pages go once the copy in is complete.
  dev.restore(c.p, /*wait=*/false);
  const prim::Event copy_c = log->recorded.back();
  const std::size_t out_before = log->copies_out;
  dev.evict(c.p, Mode::offload);
  EXPECT_EQ(log->copies_out, out_before) << "a prefetch never used is evicted without a copy";
  EXPECT_NE(std::find(log->host_waits.begin(), log->host_waits.end(), copy_c), log->host_waits.end())
      << "its copy in completes before its pages are unmapped";
  dev.restore(c.p);
  EXPECT_TRUE(holds(dev.backend(), c.p, c.n, c.seed));
  // A copy that completed before ready(): nothing left to wait for.
  dev.evict(a.p, Mode::offload);
  dev.restore(a.p, /*wait=*/false);
  const prim::Event copy_a2 = log->recorded.back();
  host->advance_clock(100);
  dev.restore_ready(a.p);
  EXPECT_FALSE(log->waited(s, copy_a2)) << "its copy had completed";
  EXPECT_TRUE(holds(dev.backend(), a.p, a.n, a.seed));
  EXPECT_EQ(error_of([&] { dev.restore_ready(reinterpret_cast<void*>(0x10)); }), Errc::invalid_argument);
  // Every pending copy at once (what memlake.torch does before a graph capture begins).
  dev.evict(a.p, Mode::offload);
  dev.evict(c.p, Mode::offload);
  dev.restore(a.p, /*wait=*/false);
  const prim::Event ca = log->recorded.back();
  dev.restore(c.p, /*wait=*/false);
  const prim::Event cc = log->recorded.back();
  dev.restore_ready(nullptr);
  EXPECT_TRUE(log->waited(s, ca) && log->waited(s, cc));
  dev.check();
  dev.free(a.p);
  dev.free(c.p);
  dev.backend().destroy_stream(s);
}

// Under a cap, an allocation or a restore that needs the pages of evictions
// still copying out waits for those copies instead of failing.
TEST(Residency, OutOfMemoryWaitsForLeavingPages) {
  Rig r;
  auto [a, b] = lagged_at_cap<2>(r);
  r.dev->evict(a.p, Mode::offload, /*wait=*/false);
  EXPECT_EQ(r.dev->residency_stats().leaving_now, 1u);
  Buf c = make(r, 8 * kPage, 0, 3);  // a's pages, once its copy completed
  EXPECT_EQ(r.dev->residency_stats().leaving_now, 0u);
  EXPECT_EQ(r.dev->residency_stats().evicted_now, 1u);
  r.dev->free(c.p);
  r.dev->restore(a.p);
  r.dev->evict(b.p, Mode::offload);  // evicted, its pages free in the pool
  Buf d = make(r, 8 * kPage, 0, 4);  // takes them: the cap is reached
  r.dev->evict(a.p, Mode::offload, false);
  EXPECT_EQ(r.dev->residency_stats().leaving_now, 1u);
  r.dev->restore(b.p);  // needs a's pages: waits for a's copy
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.leaving_now, 0u);
  EXPECT_EQ(st.evicted_now, 1u);
  EXPECT_EQ(error_of([&] { make(r, 8 * kPage, 0, 5); }), Errc::out_of_memory) << "nothing leaving: a plain out of memory";
  r.dev->free(d.p);
  r.dev->restore(a.p);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->check();
}

// Restored ahead and not ready() yet: an allocation (or a restore) that runs
// out of memory takes such allocations back, the latest restored first,
// instead of failing; ready() brings one so taken back again, waiting, and
// an evict of it is where it already is. Nothing is copied out and no byte
// changes.
TEST(Residency, OutOfMemoryTakesBackRestoresAheadAndReadyBringsThemAgain) {
  Rig r;
  Buf a = make(r, 8 * kPage, 0, 1);
  Buf b = make(r, 8 * kPage, 0, 2);
  Buf c = make(r, 8 * kPage, 0, 3);
  r.dev->set_memory_cap(r.reserved());
  for (Buf* x : {&a, &b, &c}) r.dev->evict(x->p, Mode::offload);
  r.dev->restore(a.p, /*wait=*/false);
  r.dev->restore(b.p, /*wait=*/false);
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.ahead_now, 2u);
  EXPECT_EQ(st.ahead_bytes_now, 16 * kPage);
  // 16 pages needed, 8 free: b (restored last) gives its pages back, then a.
  Buf d = make(r, 16 * kPage, 0, 4);
  st = r.dev->residency_stats();
  EXPECT_EQ(st.reclaimed, 2u);
  EXPECT_EQ(st.reclaimed_bytes, 16 * kPage);
  EXPECT_EQ(st.ahead_now, 0u);
  EXPECT_EQ(st.evicted_now, 3u);
  EXPECT_EQ(r.dev->stats().residency.reclaimed_bytes, 16 * kPage);
  r.dev->check();
  // Nothing left to take back: a plain out of memory, nothing changed.
  EXPECT_EQ(error_of([&] { make(r, 16 * kPage, 0, 5); }), Errc::out_of_memory);  // c's 8 pages are free
  EXPECT_TRUE(holds(r.be(), d.p, d.n, d.seed));
  // b's owner evicts it again (a prefetch not used): it is evicted already, which is fine.
  r.dev->evict(b.p, Mode::offload);
  r.dev->free(d.p);
  // a's owner is ready for it: restored now, its stream waits, its bytes are its own.
  r.dev->restore_ready(a.p);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_EQ(r.dev->residency_stats().evicted_now, 2u);
  // A restore that runs out of memory takes back a restore ahead too.
  r.dev->restore(b.p, /*wait=*/false);
  Buf f = make(r, 8 * kPage, 0, 7);  // the cap is reached: a, b, f
  r.dev->restore(c.p);                // needs b's pages
  st = r.dev->residency_stats();
  EXPECT_EQ(st.reclaimed, 3u);
  EXPECT_TRUE(holds(r.be(), c.p, c.n, c.seed));
  // ready_all() brings back what was taken (before a graph capture): it needs room.
  EXPECT_EQ(error_of([&] { r.dev->restore_ready(b.p); }), Errc::out_of_memory) << "no room, and b is not ahead";
  EXPECT_EQ(r.dev->residency_stats().evicted_now, 1u) << "b stays evicted, its bytes in the host tier";
  r.dev->free(c.p);
  r.dev->restore_ready(nullptr);
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  st = r.dev->residency_stats();
  EXPECT_EQ(st.evicted_now, 0u);
  EXPECT_EQ(st.ahead_now, 0u);
  // A prefetch taken back and then freed leaves nothing behind.
  r.dev->evict(a.p, Mode::offload);
  r.dev->restore(a.p, /*wait=*/false);
  Buf e = make(r, 8 * kPage, 0, 6);  // a's pages
  EXPECT_EQ(r.dev->residency_stats().reclaimed, 4u);
  r.dev->free(a.p);
  r.dev->settle(false);  // extents of completed restores
  st = r.dev->residency_stats();
  EXPECT_EQ(st.evicted_now, 0u);
  EXPECT_EQ(st.host_used, 0u) << "the host copy went with the free";
  EXPECT_TRUE(holds(r.be(), e.p, e.n, e.seed));
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  EXPECT_TRUE(holds(r.be(), f.p, f.n, f.seed));
  r.dev->check();
}

// A restore ahead whose copy is still in flight is taken back only once the
// copy has written its pages; a failure to unmap leaves it resident and whole.
TEST(Residency, TakingBackARestoreAheadWaitsForItsCopyAndSurvivesAFault) {
  Rig r;
  auto [a, b] = lagged_at_cap<2>(r);
  r.dev->evict(a.p, Mode::offload);
  r.dev->restore(a.p, /*wait=*/false);  // its copy completes 10 ticks later
  Buf c = make(r, 8 * kPage, 0, 3);     // waits for it, then takes a's pages
  EXPECT_EQ(r.dev->residency_stats().reclaimed, 1u);
  r.dev->free(c.p);
  r.dev->restore_ready(a.p);
  r.host->advance_clock(100);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  // The unmap fails: a stays resident (its bytes arrived), the allocation fails as out of memory.
  r.dev->evict(a.p, Mode::offload);
  r.dev->restore(a.p, /*wait=*/false);
  r.host->advance_clock(100);
  r.faulty->fail_nth(prim::Op::unmap, 1);
  EXPECT_EQ(error_of([&] { make(r, 8 * kPage, 0, 4); }), Errc::out_of_memory);
  r.faulty->stop_failing();
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.ahead_now, 0u);
  EXPECT_EQ(st.evicted_now, 0u);
  r.dev->restore_ready(a.p);  // nothing to wait for
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->check();
}

// A restore takes new pages as growth does (handles of handle_size, single
// pages for the rest), not a wake's few large handles: once the restored
// allocation is freed, a smaller one that takes its pages takes a handle
// whole, so a large one would waste most of itself.
TEST(Residency, ARestoreMakesHandlesAsGrowthDoes) {
  Rig r;  // handles of four pages
  Buf a = make(r, 40 * kPage, 0, 1);
  r.dev->evict(a.p, Mode::offload);  // its pages FREE for others
  Buf b = make(r, 40 * kPage, 0, 2);  // takes them
  const std::size_t before = r.host->live_handles();
  r.dev->restore(a.p);  // 40 new pages
  EXPECT_EQ(r.host->live_handles() - before, 10u) << "ten handles of four pages, not 32 + 8";
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  r.dev->free(a.p);
  const std::size_t allocated = r.dev->stats().allocated.current;
  Buf c = make(r, 5 * kPage, 0, 3);  // from a's free pages
  EXPECT_LE(r.dev->stats().allocated.current - allocated, 8 * kPage) << "at most two handles of four, not one of 8 or 32";
  EXPECT_EQ(r.host->live_handles() - before, 10u) << "no new memory";
  for (Buf* x : {&b, &c}) r.dev->free(x->p);
  r.dev->check();
}

// An out-of-memory retry waits for the evictions in flight only until its
// request's bytes are back, oldest first, not for every copy still running.
TEST(Residency, OutOfMemoryWaitsOnlyForTheLeavingPagesItNeeds) {
  Rig r;
  auto [a, b, c] = lagged_at_cap<3>(r);
  for (Buf* x : {&a, &b, &c}) r.dev->evict(x->p, Mode::offload, /*wait=*/false);
  EXPECT_EQ(r.dev->residency_stats().leaving_now, 3u);
  Buf d = make(r, 8 * kPage, 0, 4);  // a's pages
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.leaving_now, 2u) << "b's and c's copies go on";
  EXPECT_EQ(st.evicted_now, 1u);
  EXPECT_EQ(st.pressure_waits, 1u);
  EXPECT_GE(st.pressure_s, 0.0);
  Buf e = make(r, 16 * kPage, 0, 5);  // b's and c's
  EXPECT_EQ(r.dev->residency_stats().leaving_now, 0u);
  r.dev->free(d.p);
  r.dev->free(e.p);
  for (Buf* x : {&a, &b, &c}) {
    r.dev->restore(x->p);
    EXPECT_TRUE(holds(r.be(), x->p, x->n, x->seed));
  }
  r.dev->check();
}

// A restore under a cap creates no page beyond it, even when the free count
// promises pages its exact fill cannot take (a free handle larger than what
// is left to fill): the cache goes back to the driver first.
TEST(Residency, ARestoreUnderACapNeverCreatesPagesBeyondIt) {
  Rig r(/*handle_pages=*/4);
  Buf a = make(r, 3 * kPage, 0, 1);    // three single pages
  Buf big = make(r, 8 * kPage, 0, 2);  // handles of four pages
  const std::size_t cap = r.reserved();
  r.dev->set_memory_cap(cap);
  r.dev->evict(a.p, Mode::offload);
  Buf b = make(r, 3 * kPage, 0, 3);  // a's three pages, the only free ones
  r.dev->free(big.p);                // free pages in handles of four
  r.dev->restore(a.p);  // that handle cannot serve three pages exactly: it goes back to the driver first
  EXPECT_LE(r.reserved(), cap);
  EXPECT_LE(r.dev->stats().reserved.peak, cap);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->check();
}

// A spare allocation (kept until its owner's ready()) is evicted under
// memory pressure, its bytes copied out after the work on its stream, after
// the restores ahead and the first marked first; ready() brings it back, or
// just ends the mark. Evicts, frees and sleeps end the mark too.
TEST(Residency, SpareAllocationsGiveWayUnderPressureAndComeBackAtReady) {
  Rig r;
  auto [a, b, c] = lagged_at_cap<3>(r);
  r.dev->mark_spare(a.p);
  r.dev->mark_spare(b.p);
  r.dev->mark_spare(b.p);  // once is enough
  auto st = r.dev->residency_stats();
  EXPECT_EQ(st.spare_now, 2u);
  EXPECT_EQ(st.spare_bytes_now, 16 * kPage);
  Buf d = make(r, 8 * kPage, 0, 4);  // a (marked first) gives way, copied out
  st = r.dev->residency_stats();
  EXPECT_EQ(st.spare_now, 1u);
  EXPECT_EQ(st.reclaimed, 1u);
  EXPECT_EQ(st.evicted_now, 1u);
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  EXPECT_TRUE(holds(r.be(), d.p, d.n, d.seed));
  // b's owner is done with it: the mark ends, nothing moves.
  r.dev->restore_ready(b.p);
  EXPECT_EQ(r.dev->residency_stats().spare_now, 0u);
  EXPECT_EQ(error_of([&] { make(r, 8 * kPage, 0, 5); }), Errc::out_of_memory) << "nothing spare left";
  EXPECT_EQ(error_of([&] { r.dev->mark_spare(a.p); }), Errc::invalid_argument) << "evicted";
  r.dev->free(d.p);
  r.dev->restore_ready(a.p);  // taken under pressure: back, its stream waits
  r.host->advance_clock(100);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  st = r.dev->residency_stats();
  EXPECT_EQ(st.evicted_now, 0u);
  // An evict by the owner, a free and a sleep end the mark.
  r.dev->mark_spare(a.p);
  r.dev->evict(a.p, Mode::offload);
  EXPECT_EQ(r.dev->residency_stats().spare_now, 0u);
  r.dev->restore(a.p);
  r.dev->mark_spare(c.p);
  r.dev->free(c.p);
  EXPECT_EQ(r.dev->residency_stats().spare_now, 0u);
  r.dev->mark_spare(b.p);
  r.dev->sleep({{0, Mode::offload}});
  EXPECT_EQ(r.dev->residency_stats().spare_now, 0u);
  r.dev->wake();
  r.host->advance_clock(100);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->settle(true);
  EXPECT_EQ(r.dev->residency_stats().host_used, 0u);
  r.dev->check();
}

// A spare allocation whose copy out fails stays resident, spare and whole,
// its host extent given back; the allocation that asked fails as out of memory.
TEST(Residency, ASpareWhoseCopyOutFailsStaysWhole) {
  for (prim::Op op : {prim::Op::event_record, prim::Op::synchronize}) {
    Rig r;
    Buf a = make(r, 8 * kPage, 0, 1);
    r.dev->set_memory_cap(r.reserved());
    r.dev->mark_spare(a.p);
    r.faulty->fail_nth(op, 1);
    EXPECT_EQ(error_of([&] { make(r, 8 * kPage, 0, 2); }), Errc::out_of_memory) << prim::op_name(op);
    r.faulty->stop_failing();
    auto st = r.dev->residency_stats();
    EXPECT_EQ(st.spare_now, 1u) << prim::op_name(op);
    EXPECT_EQ(st.evicted_now, 0u);
    EXPECT_EQ(st.host_used, 0u);
    EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
    Buf b = make(r, 8 * kPage, 0, 3);  // no fault now: a gives way
    EXPECT_EQ(r.dev->residency_stats().reclaimed, 1u);
    r.dev->free(b.p);
    r.dev->restore_ready(a.p);
    EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
    r.dev->check();
  }
}

TEST(Residency, RestoringOrFreeingALeavingAllocationCancelsItsEviction) {
  Rig r;
  r.host->set_lag(10);
  r.host->advance_clock(1);
  Buf a = make(r, 8 * kPage, 0, 1);
  Buf b = make(r, 6 * kPage, 0, 2);
  r.dev->evict(a.p, Mode::offload, false);
  r.dev->restore(a.p);  // the bytes never left
  EXPECT_EQ(r.dev->residency_stats().leaving_now, 0u);
  EXPECT_EQ(r.dev->residency_stats().evicted_now, 0u);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  fill(r.be(), a.p, a.n, 7);  // writable again
  a.seed = 7;
  r.dev->evict(b.p, Mode::discard, false);
  EXPECT_EQ(r.dev->residency_stats().leaving_bytes_now, 6 * kPage);
  r.dev->free(b.p);
  EXPECT_EQ(r.dev->residency_stats().leaving_bytes_now, 0u) << "a freed allocation's eviction is no longer in flight";
  r.dev->check();
  r.host->advance_clock(30);
  r.dev->settle(true);
  EXPECT_EQ(r.dev->residency_stats().evicted_now, 0u);
  // The extents of cancelled evictions go back to the host tier.
  r.dev->evict(a.p, Mode::offload);
  r.dev->restore(a.p);
  r.dev->settle(true);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  r.dev->free(a.p);
  r.dev->check();
}

TEST(Residency, ASleepFinishesEvictionsInFlightAndWakeLeavesThemEvicted) {
  Rig r;
  r.host->set_lag(10);
  r.host->advance_clock(1);
  Buf a = make(r, 4 * kPage, 0, 1);
  Buf b = make(r, 4 * kPage, 0, 2);
  r.dev->evict(a.p, Mode::offload, false);
  r.dev->sleep(Mode::offload);
  r.dev->wake();
  EXPECT_EQ(r.dev->residency_stats().evicted_now, 1u) << "the tiering eviction is not the sleep's to undo";
  EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  r.dev->restore(a.p);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  r.dev->check();
}

// An asynchronous eviction failing at any primitive leaves the allocation
// resident and intact (or cleanly evicted once settled), and nothing leaks.
TEST(Residency, AsyncEvictionsSurviveAFaultAtEveryCall) {
  std::uint64_t injected = 0;
  for (prim::Op op : {prim::Op::event_record, prim::Op::synchronize, prim::Op::unmap, prim::Op::event_query}) {
    for (int nth = 1; nth <= 4; ++nth) {
      Rig r;
      std::vector<Buf> bufs;
      for (int i = 0; i < 4; ++i) bufs.push_back(make(r, (2 + 3 * i) * kPage + 11, 0, 40 + i));
      r.faulty->fail_nth(op, nth);
      for (const Buf& b : bufs) (void)error_of([&] { r.dev->evict(b.p, Mode::offload, false); });
      (void)error_of([&] { r.dev->settle(true); });
      r.dev->check();
      injected += r.faulty->faults_injected();
      r.faulty->stop_failing();
      r.dev->settle(true);
      for (const Buf& b : bufs)
        if (!r.host->accessible(reinterpret_cast<std::uintptr_t>(b.p), kPage)) r.dev->restore(b.p);
      for (const Buf& b : bufs) ASSERT_TRUE(holds(r.be(), b.p, b.n, b.seed)) << prim::op_name(op) << " #" << nth;
      for (const Buf& b : bufs) r.dev->free(b.p);
      r.dev->check();
      r.dev->empty_cache();
      EXPECT_EQ(r.host->live_mappings(), 0u);
    }
  }
  EXPECT_GT(injected, 0u);
}

// Every primitive the residency paths call, failing at its n-th call: the
// operation reports the error, every allocation is intact or cleanly asleep,
// nothing is leaked, and a retry completes.
class ResidencyFault : public ::testing::TestWithParam<prim::Op> {};

TEST_P(ResidencyFault, SleepAndWakeSurviveAFaultAtEveryCall) {
  std::uint64_t injected = 0;
  for (int nth = 1; nth <= 6; ++nth) {
    Rig r;
    const std::uint16_t w = tag("test-fault-w", core::kLabelReadonly), kv = tag("test-fault-kv");
    std::vector<Buf> bufs;
    for (int i = 0; i < 6; ++i) bufs.push_back(make(r, (1 + 3 * i) * kPage + 5, i % 2 ? w : kv, 10 + i));
    r.faulty->fail_nth(GetParam(), nth);
    Errc e = error_of([&] { r.dev->sleep(Mode::offload); });
    r.dev->check();
    if (e == Errc::ok) {
      e = error_of([&] { r.dev->wake(); });
      r.dev->check();
    }
    injected += r.faulty->faults_injected();
    r.faulty->stop_failing();
    if (r.dev->residency_stats().asleep) r.dev->wake();
    for (const Buf& b : bufs) ASSERT_TRUE(holds(r.be(), b.p, b.n, b.seed)) << prim::op_name(GetParam()) << " #" << nth;
    // A full cycle still works.
    r.dev->sleep(Mode::offload);
    r.dev->wake();
    for (const Buf& b : bufs) ASSERT_TRUE(holds(r.be(), b.p, b.n, b.seed));
    for (const Buf& b : bufs) r.dev->free(b.p);
    r.dev->check();
    r.dev->empty_cache();
    EXPECT_EQ(r.host->live_mappings(), 0u);
  }
  RecordProperty("faults_injected", static_cast<int>(injected));
}

INSTANTIATE_TEST_SUITE_P(Ops, ResidencyFault,
                         ::testing::Values(prim::Op::create, prim::Op::map, prim::Op::set_access, prim::Op::unmap,
                                           prim::Op::release, prim::Op::synchronize, prim::Op::event_record),
                         [](const auto& p) { return std::string(prim::op_name(p.param)); });

// Random operations against a reference: what each buffer must hold.
TEST(Residency, RandomRoundTripsKeepEveryByte) {
  std::mt19937_64 rng(20261204);
  Rig r;
  const std::uint16_t labels[] = {0, tag("test-rnd-a"), tag("test-rnd-ro", core::kLabelReadonly)};
  std::vector<Buf> live;
  std::uint64_t seed = 1;
  int sleeps = 0;
  for (int step = 0; step < 300; ++step) {
    const int op = static_cast<int>(rng() % 10);
    const bool asleep = r.dev->residency_stats().asleep;
    if (op < 3 || live.empty()) {
      const std::size_t n = kPage / 2 + rng() % (8 * kPage);
      live.push_back(make(r, n, labels[rng() % 3], seed++));
    } else if (op < 5) {
      const std::size_t i = rng() % live.size();
      r.dev->free(live[i].p);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op < 8 && !asleep) {
      r.dev->sleep(rng() % 4 ? Mode::offload : Mode::discard);
      ++sleeps;
      if (r.dev->residency_stats().asleep) {
        // Discarded contents are undefined after wake: refill those.
        r.dev->wake();
        for (Buf& b : live)
          if (!holds(r.be(), b.p, b.n, b.seed)) {
            b.seed = seed++;
            if (r.dev->size_of(b.p) > kPage / 4) {
              // read-only ones were offloaded, never discarded... unless the mode was discard
              try {
                fill(r.be(), b.p, b.n, b.seed);
              } catch (const Error&) {
                // read-only after wake: evict and restore makes it writable
                r.dev->evict(b.p, Mode::discard);
                r.dev->restore(b.p);
                fill(r.be(), b.p, b.n, b.seed);
              }
            }
          }
      }
    } else if (!asleep) {
      Buf& b = live[rng() % live.size()];
      if (b.n > kPage / 4) {
        r.dev->evict(b.p, Mode::offload);
        r.dev->restore(b.p);
      }
    }
    if (step % 50 == 0) r.dev->check();
  }
  for (const Buf& b : live) EXPECT_TRUE(holds(r.be(), b.p, b.n, b.seed));
  EXPECT_GT(sleeps, 30);
  r.dev->check();
}

// Page tails (docs/design/allocator.md): an allocation begins in the last
// page of the one made before it, where the pages after that one are free.
TEST(PageTails, NeighboursShareABoundaryPageAndEachKeepsItsBytes) {
  Rig r(1, true);
  const std::size_t n = 2 * kPage + kPage / 4;
  Buf a = make(r, n, 0, 1), b = make(r, n, 0, 2), c = make(r, n, 0, 3);
  const auto pa = reinterpret_cast<std::uintptr_t>(a.p);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.p), pa + n) << "b begins where a ends";
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c.p), pa + 2 * n);
  EXPECT_EQ(r.dev->stats().allocated.current, 7 * kPage) << "3 x 2.25 pages in 7 pages, not 9";
  fill(r.be(), a.p, a.n, a.seed);  // b's fill wrote into a's last page only past a's end
  for (const Buf& x : {a, b, c}) EXPECT_TRUE(holds(r.be(), x.p, x.n, x.seed));
  r.dev->check();
  r.dev->free(b.p);  // b's own pages go back; its last page (c's first) stays c's
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  EXPECT_TRUE(holds(r.be(), c.p, c.n, c.seed));
  r.dev->check();
  r.dev->free(a.p);
  EXPECT_TRUE(holds(r.be(), c.p, c.n, c.seed));
  r.dev->check();
  r.dev->free(c.p);
  r.dev->check();
  EXPECT_EQ(r.dev->stats().allocated.current, 0u);
}

TEST(PageTails, OffWhenDisabledAndNotAcrossStreams) {
  Rig r(1, true);
  const std::size_t n = 2 * kPage + kPage / 4;
  void* a = r.dev->alloc(n, nullptr);
  void* b = r.dev->alloc(n, reinterpret_cast<prim::Stream>(0x1));  // another stream: a page of its own
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % kPage, 0u);
  r.dev->free(a);
  r.dev->free(b);
  r.dev->check();
  Options o;
  o.backend = "host";
  o.small_max = kPage / 4;
  o.handle_size = 0;
  o.tail_share = false;
  core::DeviceAllocator d(std::make_unique<prim::HostBackend>(0, kPage, 0), o);
  void* x = d.alloc(n, nullptr);
  void* y = d.alloc(n, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(y) % kPage, 0u);
  EXPECT_EQ(d.stats().allocated.current, 6 * kPage);
  d.free(x);
  d.free(y);
  d.check();
}

TEST(PageTails, EvictingANeighbourLeavesTheSharedPageAndEveryByte) {
  Rig r(1, true);
  const std::size_t n = 2 * kPage + kPage / 4;
  Buf a = make(r, n, 0, 1), b = make(r, n, 0, 2), c = make(r, n, 0, 3);
  fill(r.be(), a.p, a.n, a.seed);
  auto all_hold = [&](std::initializer_list<const Buf*> xs) {
    for (const Buf* x : xs) EXPECT_TRUE(holds(r.be(), x->p, x->n, x->seed));
  };
  r.dev->evict(b.p, Mode::offload);  // its pages alone leave: a's last page (its first bytes) stays
  all_hold({&a, &c});
  r.dev->check();
  r.dev->restore(b.p);
  all_hold({&a, &b, &c});
  r.dev->evict(a.p, Mode::offload);  // a's last page stays for b
  all_hold({&b, &c});
  r.dev->free(b.p);  // b's last page goes to c; a keeps its (mapped) last page while evicted
  all_hold({&c});
  r.dev->check();
  r.dev->restore(a.p);
  all_hold({&a, &c});
  r.dev->evict(c.p, Mode::offload);  // c holds the page it began in now: it leaves too
  r.dev->free(a.p);
  r.dev->check();
  r.dev->restore(c.p);
  all_hold({&c});
  r.dev->evict(c.p, Mode::discard);
  r.dev->free(c.p);  // freed while evicted
  r.dev->check();
  EXPECT_EQ(r.dev->stats().allocated.current, 0u);
}

TEST(PageTails, RandomNeighboursKeepEveryByteThroughMovesAndFrees) {
  std::mt19937_64 rng(20261207);
  for (std::size_t handle_pages : {1, 4}) {
    Rig r(handle_pages, true);
    struct B {
      Buf b;
      bool out = false;
    };
    std::vector<B> live;
    std::uint64_t seed = 1;
    for (int step = 0; step < 600; ++step) {
      const int op = static_cast<int>(rng() % 10);
      SCOPED_TRACE("handle pages " + std::to_string(handle_pages) + " step " + std::to_string(step) + " op " +
                   std::to_string(op));
      if (op < 4 || live.empty()) {
        const std::size_t n = kPage / 2 + rng() % (6 * kPage);
        live.push_back({make(r, n, 0, seed++)});
      } else if (op < 6) {
        const std::size_t i = rng() % live.size();
        r.dev->free(live[i].b.p);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (op < 8) {
        B& x = live[rng() % live.size()];
        if (x.out) {
          r.dev->restore(x.b.p);
          x.out = false;
        } else if (x.b.n > kPage / 4) {
          r.dev->evict(x.b.p, Mode::offload);
          x.out = true;
        }
      } else if (op == 8) {
        B& x = live[rng() % live.size()];
        if (!x.out) {
          x.b.seed = seed++;
          fill(r.be(), x.b.p, x.b.n, x.b.seed);
        }
      } else if (rng() % 4 == 0) {
        r.dev->sleep(Mode::offload);
        r.dev->wake();
      }
      for (const B& x : live)
        if (!x.out) ASSERT_TRUE(holds(r.be(), x.b.p, x.b.n, x.b.seed));
      std::string why;
      ASSERT_EQ(error_of([&] { r.dev->check(); }, &why), Errc::ok) << why;
    }
    for (B& x : live) {
      if (x.out) r.dev->restore(x.b.p);
      EXPECT_TRUE(holds(r.be(), x.b.p, x.b.n, x.b.seed));
      r.dev->free(x.b.p);
    }
    r.dev->check();
  }
}

// Regressions found in review: an allocator alone, on the host backend.
Options tail_options() {
  Options o;
  o.backend = "host";
  o.small_max = kPage / 4;
  o.handle_size = 0;
  o.tail_share = true;
  return o;
}

struct TailAlloc {
  prim::HostBackend be{0, kPage, 0};
  std::unique_ptr<core::Allocator> a = std::make_unique<core::Allocator>(be, tail_options());
};

TEST(PageTails, AReadOnlyAllocationWithNoPageOfItsOwnIsFreedCleanly) {
  TailAlloc t;
  void* a = t.a->alloc(kPage / 2, nullptr);
  void* b = t.a->alloc(kPage + kPage / 4, nullptr);  // begins in a's page, which is all a has
  EXPECT_EQ(static_cast<char*>(b) - static_cast<char*>(a), static_cast<std::ptrdiff_t>(kPage / 2));
  t.a->set_readonly(a, true);  // nothing held alone: nothing protected
  t.a->free(a);
  t.a->check();
  t.a->free(b);
  t.a->check();
}

TEST(PageTails, APartlyRestoredNeighbourKeepsThePageItBeginsIn) {
  TailAlloc t;
  const std::size_t n = 2 * kPage + kPage / 4;
  void* a = t.a->alloc(n, nullptr);
  void* b = t.a->alloc(n, nullptr);
  void* c = t.a->alloc(n, nullptr);
  ASSERT_EQ(static_cast<char*>(c), static_cast<char*>(a) + 2 * n);
  t.a->evict(a, true);
  t.a->evict(c, true);
  t.a->evict(b, true);  // every page gone, the shared ones too
  t.a->check();
  t.a->set_memory_cap(t.a->gauges().reserved + 2 * kPage);
  EXPECT_EQ(error_of([&] { t.a->restore(b); }), Errc::out_of_memory);  // a's page and b's first part come back
  t.a->check();
  t.a->set_memory_cap(0);
  t.a->restore(a);
  t.a->evict(a, false);  // b is partly mapped: the page b begins in stays
  t.a->check();
  t.a->free(a);  // that page goes to b, mapped
  t.a->check();
  t.a->restore(b);
  t.a->check();
  t.a->free(b);
  t.a->free(c);
  t.a->check();
}

TEST(PageTails, NotUnderAGraphPoolsTag) {
  core::DeviceAllocator d(std::make_unique<prim::HostBackend>(0, kPage, 0), tail_options());
  auto s = reinterpret_cast<prim::Stream>(0x10);
  d.capture_begin(s, 7);  // a kept block serves any request of its rounded size: whole pages only
  void* a = d.alloc(2 * kPage + kPage / 4, s);
  void* b = d.alloc(2 * kPage + kPage / 4, s);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % kPage, 0u);
  d.free(a);
  d.free(b);
  d.capture_end(s);
  d.graph_pool_release(7);
  d.check();
}

// The same round trip on every backend (the cuda instance runs on a GPU).
class ResidencyBackend : public BackendTest {};

TEST_P(ResidencyBackend, SleepWakeRoundTrip) {
  core::DeviceAllocator dev(0, options());
  std::vector<Buf> bufs;
  for (std::size_t n : {std::size_t{3} << 20, std::size_t{37} << 20, (std::size_t{1} << 20) + 4096}) {
    void* p = dev.alloc(n, nullptr);
    fill(dev.backend(), p, n, n);
    bufs.push_back(Buf{p, n, n});
  }
  dev.reserve_host_tier(std::size_t{64} << 20);
  const auto rep = dev.sleep(Mode::offload);
  EXPECT_EQ(rep.allocations, bufs.size());
  EXPECT_EQ(dev.stats().reserved.current, 0u);
  dev.wake();
  for (const Buf& b : bufs) EXPECT_TRUE(holds(dev.backend(), b.p, b.n, b.seed));
  for (const Buf& b : bufs) dev.free(b.p);
  dev.check();
}


// ---- Restores ahead under pressure: teardown, ordering, faults (a review's tests)

class EventCount final : public prim::ForwardingBackend {
 public:
  EventCount(std::unique_ptr<prim::Backend> b, long* live) : ForwardingBackend(std::move(b)), live_(live) {}
  prim::Event record_event(prim::Stream s) override {
    prim::Event e = inner().record_event(s);
    ++*live_;
    return e;
  }
  void destroy_event(prim::Event e) override {
    inner().destroy_event(e);
    --*live_;
  }
  long* live_;
};

// a restore ahead never ready()'d: its event (owned by arriving_ now,
// no longer by pending_) is never destroyed at teardown.
TEST(Residency, TeardownDestroysTheEventsOfRestoresAhead) {
  for (bool wait : {true, false}) {
    long live = 0;
    {
      auto h = std::make_unique<prim::HostBackend>(0, kPage, 0);
      auto w = std::make_unique<EventCount>(std::move(h), &live);
      Options o;
      o.backend = "host";
      o.small_max = kPage / 4;
      core::DeviceAllocator dev(std::move(w), o);
      void* a = dev.alloc(8 * kPage, nullptr);
      fill(dev.backend(), a, 8 * kPage, 1);
      dev.evict(a, Mode::offload);
      dev.restore(a, wait);
    }
    EXPECT_EQ(live, 0) << "wait=" << wait;
  }
}

// a restore ahead that runs out of memory takes back an earlier
// restore ahead (needed sooner); ready() of that one then takes back the later
// one: each prefetch undoes the other, and the second use fails anyway.
TEST(Residency, ARestoreAheadNeverTakesBackAnother) {
  Rig r;
  Buf a = make(r, 8 * kPage, 0, 1);
  Buf b = make(r, 8 * kPage, 0, 2);
  Buf c = make(r, 8 * kPage, 0, 3);
  r.dev->set_memory_cap(r.reserved());
  r.dev->evict(a.p, Mode::offload);
  r.dev->evict(b.p, Mode::offload);
  Buf d = make(r, 8 * kPage, 0, 4);  // room for one more now
  r.dev->restore(a.p, /*wait=*/false);  // prefetch for the next use
  EXPECT_EQ(error_of([&] { r.dev->restore(b.p, /*wait=*/false); }), Errc::out_of_memory)
      << "a later prefetch should not undo an earlier one";
  EXPECT_EQ(r.dev->residency_stats().reclaimed, 0u);
  r.dev->restore_ready(a.p);
  EXPECT_EQ(r.dev->residency_stats().reclaimed, 0u);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  (void)c;
  (void)d;
}

// evict(wait=false) of a prefetch not used blocks the host on its copy in.
TEST(Residency, AnAsyncEvictOfAnUnusedPrefetchDoesNotBlockTheHost) {
  auto h = std::make_unique<prim::HostBackend>(0, kPage, 0);
  prim::HostBackend* host = h.get();
  auto w = std::make_unique<WaitLog>(std::move(h));
  WaitLog* log = w.get();
  Options o;
  o.backend = "host";
  o.small_max = kPage / 4;
  core::DeviceAllocator dev(std::move(w), o);
  host->set_lag(10);
  host->advance_clock(1);
  void* a = dev.alloc(8 * kPage, nullptr);
  fill(dev.backend(), a, 8 * kPage, 1);
  dev.evict(a, Mode::offload);
  dev.restore(a, /*wait=*/false);
  const prim::Event copy = log->recorded.back();
  dev.evict(a, Mode::offload, /*wait=*/false);
  EXPECT_EQ(std::find(log->host_waits.begin(), log->host_waits.end(), copy), log->host_waits.end())
      << "evict(wait=false) waited on the host for the copy in";
  host->advance_clock(100);
  dev.restore(a);
  EXPECT_TRUE(holds(dev.backend(), a, 8 * kPage, 1));
  dev.free(a);
}


// random evict/restore-ahead/ready/ready_all/free/alloc under a cap,
// with lag; every byte and the counters at the end.
TEST(Residency, RandomPrefetchesUnderPressureKeepEveryByte) {
  for (std::uint64_t run = 1; run <= 20; ++run) {
    std::mt19937_64 rng(run);
    Rig r;
    r.host->set_lag(5);
    std::uint64_t clock = 1;
    r.host->advance_clock(clock);
    struct B {
      Buf b;
      bool out = false, ahead = false;
    };
    std::vector<B> live;
    std::uint64_t seed = 1;
    for (int i = 0; i < 6; ++i) live.push_back({make(r, (1 + rng() % 8) * kPage, 0, seed++)});
    r.dev->set_memory_cap(r.reserved() + 8 * kPage);
    for (int step = 0; step < 400; ++step) {
      const int op = static_cast<int>(rng() % 12);
      SCOPED_TRACE("run " + std::to_string(run) + " step " + std::to_string(step) + " op " + std::to_string(op));
      if (op == 0) {
        try {
          live.push_back({make(r, (1 + rng() % 8) * kPage, 0, seed++)});
        } catch (const Error& e) {
          ASSERT_EQ(e.code(), Errc::out_of_memory);
        }
      } else if (op == 1 && live.size() > 2) {
        const std::size_t i = rng() % live.size();
        r.dev->free(live[i].b.p);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (op <= 4 && !live.empty()) {
        B& x = live[rng() % live.size()];
        if (x.out) continue;
        r.dev->evict(x.b.p, Mode::offload, rng() % 2);
        x.out = true;
        x.ahead = false;
      } else if (op <= 7 && !live.empty()) {
        B& x = live[rng() % live.size()];
        if (!x.out) continue;
        const bool wait = rng() % 3 == 0;
        try {
          r.dev->restore(x.b.p, wait);
        } catch (const Error& e) {
          ASSERT_EQ(e.code(), Errc::out_of_memory);
          continue;
        }
        x.out = false;
        x.ahead = !wait;
      } else if (op == 8 && !live.empty()) {
        B& x = live[rng() % live.size()];
        if (x.out) continue;
        try {
          r.dev->restore_ready(x.b.p);
        } catch (const Error& e) {
          ASSERT_EQ(e.code(), Errc::out_of_memory);
          continue;
        }
        x.ahead = false;
        if (rng() % 2) {
          ASSERT_TRUE(holds(r.be(), x.b.p, x.b.n, x.b.seed));
          x.b.seed = seed++;
          fill(r.be(), x.b.p, x.b.n, x.b.seed);
        }
      } else if (op == 9) {
        try {
          r.dev->restore_ready(nullptr);
          for (B& x : live) x.ahead = false;
        } catch (const Error& e) {
          ASSERT_EQ(e.code(), Errc::out_of_memory);
        }
      } else if (op == 10) {
        r.host->advance_clock(clock += rng() % 8);
      } else if (op == 11 && rng() % 4 == 0) {
        r.dev->sleep(Mode::offload);
        r.dev->wake();
      }
      auto st = r.dev->residency_stats();
      std::size_t ahead = 0, out = 0;
      for (B& x : live) ahead += x.ahead, out += x.out;
      ASSERT_LE(st.ahead_now, ahead);
      ASSERT_GE(st.evicted_now + st.leaving_now, out);
      ASSERT_LE(st.evicted_now + st.leaving_now, out + ahead);
      if (std::string why; error_of([&] { r.dev->check(); }, &why) != Errc::ok) {
        ADD_FAILURE() << "check failed at run " << run << " step " << step << " op " << op << ": " << why;
        return;
      }
    }
    r.dev->set_memory_cap(0);
    r.dev->restore_ready(nullptr);
    for (B& x : live) {
      if (x.out) r.dev->restore(x.b.p);
      EXPECT_TRUE(holds(r.be(), x.b.p, x.b.n, x.b.seed)) << "run " << run;
    }
    auto st = r.dev->residency_stats();
    EXPECT_EQ(st.evicted_now, 0u);
    EXPECT_EQ(st.ahead_now, 0u);
    for (B& x : live) r.dev->free(x.b.p);
    r.host->advance_clock(clock + 1000);
    r.dev->settle(true);
    st = r.dev->residency_stats();
    EXPECT_EQ(st.host_used, 0u) << "run " << run;
    EXPECT_EQ(st.evicted_now, 0u);
    EXPECT_EQ(st.evicted_bytes_now, 0u);
    EXPECT_EQ(st.ahead_bytes_now, 0u);
    r.dev->check();
    if (::testing::Test::HasFailure()) break;
  }
}


// ready() of a prefetch taken back maps it again, but
// DeviceAllocator::restore_ready does not refresh the gauges (not gauged()).
TEST(Residency, ReadyOfATakenBackPrefetchKeepsTheGauges) {
  Rig r;
  Buf a = make(r, 8 * kPage, 0, 1);
  Buf b = make(r, 8 * kPage, 0, 2);
  r.dev->set_memory_cap(r.reserved());
  r.dev->evict(a.p, Mode::offload);
  r.dev->restore(a.p, /*wait=*/false);
  Buf c = make(r, 8 * kPage, 0, 3);  // takes a back
  ASSERT_EQ(r.dev->residency_stats().reclaimed, 1u);
  r.dev->free(c.p);
  r.dev->empty_cache();
  r.dev->set_memory_cap(0);
  r.dev->check();
  r.dev->restore_ready(a.p);  // maps a again, on new handles
  EXPECT_EQ(error_of([&] { r.dev->check(); }), Errc::ok);
  EXPECT_TRUE(holds(r.be(), a.p, a.n, a.seed));
  (void)b;
}


// restores ahead, taking back and ready() with a fault at every call.
TEST(Residency, PrefetchPathsSurviveAFaultAtEveryCall) {
  std::uint64_t injected = 0;
  for (prim::Op op : {prim::Op::event_record, prim::Op::event_query, prim::Op::synchronize, prim::Op::unmap,
                      prim::Op::map, prim::Op::create, prim::Op::set_access}) {
    for (int nth = 1; nth <= 8; ++nth) {
      SCOPED_TRACE(std::string(prim::op_name(op)) + " #" + std::to_string(nth));
      Rig r;
      r.host->set_lag(10);
      std::uint64_t clock = 1;
      r.host->advance_clock(clock);
      Buf a = make(r, 8 * kPage, 0, 1), b = make(r, 8 * kPage, 0, 2), c = make(r, 8 * kPage, 0, 3);
      r.dev->set_memory_cap(r.reserved());
      r.dev->evict(a.p, Mode::offload);
      r.dev->evict(b.p, Mode::offload);
      r.faulty->fail_nth(op, nth);
      void* d = nullptr;
      (void)error_of([&] { r.dev->restore(a.p, false); });
      (void)error_of([&] { r.dev->restore(b.p, false); });
      (void)error_of([&] { d = r.dev->alloc(8 * kPage, nullptr); });
      (void)error_of([&] { r.dev->evict(c.p, Mode::offload, false); });
      (void)error_of([&] { r.dev->restore_ready(a.p); });
      (void)error_of([&] { r.dev->evict(b.p, Mode::offload, false); });
      (void)error_of([&] { r.dev->restore_ready(b.p); });
      (void)error_of([&] { r.dev->restore_ready(nullptr); });
      injected += r.faulty->faults_injected();
      r.faulty->stop_failing();
      ASSERT_EQ(error_of([&] { r.dev->check(); }), Errc::ok);
      if (d) r.dev->free(d);
      r.dev->set_memory_cap(0);
      r.host->advance_clock(clock += 100);
      r.dev->settle(true);
      r.dev->restore_ready(nullptr);
      for (Buf* x : {&a, &b, &c})
        if (!r.host->accessible(reinterpret_cast<std::uintptr_t>(x->p), kPage)) r.dev->restore(x->p);
      r.dev->restore_ready(nullptr);
      for (Buf* x : {&a, &b, &c}) EXPECT_TRUE(holds(r.be(), x->p, x->n, x->seed)) << x->seed;
      auto st = r.dev->residency_stats();
      EXPECT_EQ(st.evicted_now, 0u);
      EXPECT_EQ(st.ahead_now, 0u);
      EXPECT_EQ(st.leaving_now, 0u);
      for (Buf* x : {&a, &b, &c}) r.dev->free(x->p);
      r.host->advance_clock(clock += 100);
      r.dev->settle(true);
      st = r.dev->residency_stats();
      EXPECT_EQ(st.host_used, 0u);
      EXPECT_EQ(st.evicted_bytes_now, 0u);
      EXPECT_EQ(st.ahead_bytes_now, 0u);
      r.dev->check();
      r.dev->empty_cache();
      EXPECT_EQ(r.host->live_mappings(), 0u);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(injected, 0u);
}

MEMLAKE_INSTANTIATE_BACKENDS(ResidencyBackend);

}  // namespace
}  // namespace memlake::test
