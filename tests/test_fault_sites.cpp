// Fault injection at every primitive entry point (issue 24), each fault
// followed by the invariant audit (fault_audit.h).
//
// Allocator sites: a fixed sequence that reaches every primitive the
// allocator calls (growth, stitches, trims at a low mapped ratio, cross-stream
// reuse with held streams, waits under a cap, empty_cache) runs once per call
// of the site, failing that call; every step is checked (a driver error only
// when a fault was injected, out of memory only under the cap or for a
// failed create) and audited, and at the end everything is released.
// Other sites (streams, pinned memory, registration, copies, peers) are not
// the allocator's: a fault there must surface as a clean error of the call,
// change nothing, and leave the allocator's memory intact.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "fault_audit.h"

namespace memlake::test {
namespace {

using prim::FaultSite;
constexpr std::size_t kPage = 64 << 10;

struct Rig {
  prim::HostBackend* host;
  prim::FaultyBackend* faulty;
  std::unique_ptr<core::DeviceAllocator> dev;
  Rig() {
    auto h = std::make_unique<prim::HostBackend>(0, kPage, 0);
    host = h.get();
    auto f = std::make_unique<prim::FaultyBackend>(std::move(h));
    faulty = f.get();
    Options o;
    o.backend = "host";
    o.small_max = kPage / 4;
    o.max_mapped_ratio = 1.0;  // every slow path trims
    dev = std::make_unique<core::DeviceAllocator>(std::move(f), o);
  }
};

// What happened to the steps that met a fault, per site: "alloc: driver" etc.
using SiteOutcomes = std::map<std::string, std::map<std::string, int>>;
SiteOutcomes& outcomes() {
  static SiteOutcomes o;
  return o;
}

// Runs the sequence with the nth call of `site` failing. Returns the faults injected.
std::uint64_t run_sequence(FaultSite site, int nth) {
  SCOPED_TRACE(std::string("fault at call ") + std::to_string(nth) + " of " + prim::fault_site_name(site));
  Rig r;
  prim::Backend& be = r.dev->backend();
  const prim::Stream s1 = be.create_stream(), s2 = be.create_stream();
  LiveMap live;
  std::uint64_t next_seed = 1;
  std::size_t cap = 0;
  r.faulty->fail_nth(site, nth);
  // One step: checked, audited, its outcome recorded if it met the fault.
  auto step = [&](const char* what, const std::function<void()>& f) {
    const std::uint64_t before = r.faulty->faults_injected(), creates = r.faulty->faults_injected(FaultSite::create);
    std::string msg;
    const Errc e = error_of(f, &msg);
    const bool injected = r.faulty->faults_injected() > before;
    if (e == Errc::driver) {
      EXPECT_TRUE(injected) << what << ": driver error without a fault: " << msg;
    } else if (e == Errc::out_of_memory) {
      EXPECT_TRUE(cap || r.faulty->faults_injected(FaultSite::create) > creates) << what << ": " << msg;
    } else {
      EXPECT_EQ(e, Errc::ok) << what << ": " << msg;
    }
    if (injected) {
      if (e != Errc::ok) {
        EXPECT_NE(msg.find("injected fault"), std::string::npos) << msg;
      }
      outcomes()[prim::fault_site_name(site)][std::string(what) + (e == Errc::ok ? ": absorbed" : e == Errc::driver ? ": driver error" : ": out of memory")]++;
    }
    EXPECT_TRUE(audit(*r.dev, r.host, live, kPage)) << "after " << what;
  };
  auto alloc = [&](std::size_t n, prim::Stream s) {
    void* p = nullptr;
    step("alloc", [&] { p = r.dev->alloc(n, s); });
    if (p) {
      const std::uint64_t sd = next_seed++;
      stamp(be, p, n, sd, kPage);
      live.emplace(p, LiveBlock{n, sd});
    }
    return p;
  };
  auto free = [&](void* p) {
    if (!p) return;
    step("free", [&] { r.dev->free(p); });
    live.erase(p);
  };
  void* a = alloc(2 * kPage, s1);
  void* b = alloc(kPage, s1);
  void* c = alloc(100, s1);  // a slab
  free(a);
  r.host->hold(s1);  // a's pages stay pending for s2
  void* d = alloc(2 * kPage, s2);  // settles s1 (queries, an event), then grows; trims
  free(b);
  void* e = alloc(3 * kPage, s1);  // over s1's own free pages: a stitch, a trim
  cap = r.dev->stats().reserved.current;
  step("set_memory_cap", [&] { r.dev->set_memory_cap(cap); });
  r.host->hold(s2);
  free(d);
  void* f = alloc(2 * kPage, s1);  // at the cap: waits for s2's frees
  cap = 0;
  step("set_memory_cap", [&] { r.dev->set_memory_cap(0); });
  free(e);
  free(c);
  r.host->hold(s1);
  step("empty_cache", [&] { r.dev->empty_cache(); });
  void* g = alloc(4 * kPage, s2);
  free(f);
  free(g);
  step("trim", [&] { r.dev->empty_cache(kPage); });  // a daemon's trim: part of the cache
  step("empty_cache", [&] { r.dev->empty_cache(); });
  const std::uint64_t injected = r.faulty->faults_injected();
  r.faulty->stop_failing();
  // Nothing lost: what is left is freed and every byte given back.
  while (!live.empty()) free(live.begin()->first);
  EXPECT_NO_THROW(r.dev->empty_cache());
  EXPECT_TRUE(audit(*r.dev, r.host, live, kPage));
  EXPECT_EQ(r.host->live_handles(), 0u);
  EXPECT_EQ(r.host->live_mappings(), 0u);
  EXPECT_EQ(r.host->live_reservations(), 0u);
  be.destroy_stream(s1);
  be.destroy_stream(s2);
  return injected;
}

class AllocatorSite : public ::testing::TestWithParam<FaultSite> {};

TEST_P(AllocatorSite, EveryCallFailedOnceAuditsClean) {
  int calls = 0;
  for (int nth = 1; nth <= 64; ++nth) {
    const std::uint64_t injected = run_sequence(GetParam(), nth);
    if (HasFailure()) return;
    if (injected == 0) break;  // the sequence calls it fewer times
    ++calls;
  }
  EXPECT_GT(calls, 0) << "the sequence reaches " << prim::fault_site_name(GetParam());
  std::printf("[fault sites] %-18s %2d calls failed:", prim::fault_site_name(GetParam()), calls);
  for (const auto& [what, n] : outcomes()[prim::fault_site_name(GetParam())]) std::printf(" %s %d;", what.c_str(), n);
  std::printf("\n");
}

INSTANTIATE_TEST_SUITE_P(Sites, AllocatorSite,
                         ::testing::Values(FaultSite::reserve, FaultSite::free_reservation, FaultSite::create,
                                           FaultSite::release, FaultSite::map, FaultSite::unmap,
                                           FaultSite::set_access, FaultSite::event_record, FaultSite::event_query,
                                           FaultSite::stream_query, FaultSite::wait_event, FaultSite::destroy_event,
                                           FaultSite::synchronize_device),
                         [](const auto& p) { return std::string(prim::fault_site_name(p.param)); });

// A wait with no event to wait on (recording failed) synchronises the
// stream; when that fails too, the allocation fails cleanly.
TEST(FaultSites, SynchronizeStreamWhenNoEventCanBeRecorded) {
  for (bool sync_fails : {false, true}) {
    SCOPED_TRACE(sync_fails ? "synchronize_stream fails" : "synchronize_stream works");
    Rig r;
    prim::Backend& be = r.dev->backend();
    const prim::Stream s1 = be.create_stream(), s2 = be.create_stream();
    LiveMap live;
    void* a = r.dev->alloc(2 * kPage, s1);
    void* keep = r.dev->alloc(kPage, s2);
    stamp(be, keep, kPage, 7, kPage);
    live.emplace(keep, LiveBlock{kPage, 7});
    r.dev->free(a);
    r.host->hold(s1);
    r.dev->set_memory_cap(r.dev->stats().reserved.current);  // s2 must wait for a's pages
    r.faulty->fail_randomly(1.0, 1, {FaultSite::event_record});
    if (sync_fails) r.faulty->fail_nth(FaultSite::synchronize_stream, 1);
    void* p = nullptr;
    std::string msg;
    const Errc e = error_of([&] { p = r.dev->alloc(2 * kPage, s2); }, &msg);
    r.faulty->stop_failing();
    EXPECT_GT(r.faulty->faults_injected(FaultSite::event_record), 0u);
    if (sync_fails) {
      EXPECT_EQ(e, Errc::driver) << msg;
      EXPECT_NE(msg.find("synchronize_stream"), std::string::npos) << msg;
    } else {
      EXPECT_EQ(e, Errc::ok) << msg;
      EXPECT_EQ(r.dev->stats().calls[prim::Op::synchronize], 1u) << "one stream synchronised";
      stamp(be, p, 2 * kPage, 8, kPage);
      live.emplace(p, LiveBlock{2 * kPage, 8});
    }
    EXPECT_TRUE(audit(*r.dev, r.host, live, kPage));
    for (auto& [q, lb] : live) r.dev->free(q);
    r.dev->set_memory_cap(0);
    r.dev->empty_cache();
    EXPECT_EQ(r.host->live_handles(), 0u);
    be.destroy_stream(s1);
    be.destroy_stream(s2);
  }
}

// Sites the allocator never calls: the call fails cleanly, has no effect,
// and the allocator's live memory is untouched.
TEST(FaultSites, OtherSitesFailCleanlyAndChangeNothing) {
  Rig r;
  prim::Backend& be = r.dev->backend();
  LiveMap live;
  void* dev_mem = r.dev->alloc(2 * kPage, nullptr);
  stamp(be, dev_mem, 2 * kPage, 1, kPage);
  live.emplace(dev_mem, LiveBlock{2 * kPage, 1});
  const auto va = reinterpret_cast<std::uintptr_t>(dev_mem);
  const prim::Stream s = be.create_stream();
  std::vector<unsigned char> host_buf(4096, 0x5a);
  int checked = 0;
  // Fails `site` once around `call`; `unchanged` says the failed call had no effect; then the call works.
  auto once = [&](FaultSite site, Errc want, const std::function<void()>& call, const std::function<bool()>& unchanged) {
    SCOPED_TRACE(prim::fault_site_name(site));
    r.faulty->fail_nth(site, 1);
    std::string msg;
    EXPECT_EQ(error_of(call, &msg), want) << msg;
    r.faulty->stop_failing();
    EXPECT_EQ(r.faulty->faults_injected(site), 1u);
    EXPECT_TRUE(unchanged()) << "the failed call changed something";
    EXPECT_TRUE(audit(*r.dev, r.host, live, kPage));
    EXPECT_EQ(error_of(call), Errc::ok) << "works once the fault is gone";
    ++checked;
  };
  prim::Stream made = nullptr;
  once(FaultSite::create_stream, Errc::driver, [&] { made = be.create_stream(); }, [&] { return made == nullptr; });
  once(FaultSite::destroy_stream, Errc::driver, [&] { be.destroy_stream(made); }, [&] { return true; });
  once(FaultSite::is_capturing, Errc::driver, [&] { be.is_capturing(s); }, [] { return true; });
  void* pinned = nullptr;
  once(FaultSite::alloc_pinned, Errc::out_of_memory, [&] { pinned = be.alloc_pinned(4096); }, [&] { return pinned == nullptr; });
  once(FaultSite::free_pinned, Errc::driver, [&] { be.free_pinned(pinned); },
       [&] { return be.pointer_kind(pinned) == prim::Backend::PointerKind::pinned; });
  // Copies: a failed copy writes nothing.
  std::vector<unsigned char> before(4096), now(4096);
  be.read(before.data(), va, 4096);
  once(FaultSite::copy_to_device, Errc::driver, [&] { be.copy_to_device_async(va, host_buf.data(), 4096, s); },
       [&] { return be.read(now.data(), va, 4096), now == before; });
  be.write(va, before.data(), 4096);  // the successful retry overwrote the stamp: restore it
  std::vector<unsigned char> out(4096, 0);
  once(FaultSite::copy_to_host, Errc::driver, [&] { be.copy_to_host_async(out.data(), va, 4096, s); },
       [&] { return std::all_of(out.begin(), out.end(), [](unsigned char x) { return x == 0; }); });
  const std::uintptr_t second = va + kPage;
  std::vector<unsigned char> second_before(4096);
  be.read(second_before.data(), second + kPage / 2, 4096);
  once(FaultSite::copy_device, Errc::driver, [&] { be.copy_device_async(second + kPage / 2, va + 128, 4096, s); },
       [&] { return be.read(now.data(), second + kPage / 2, 4096), now == second_before; });
  be.write(second + kPage / 2, second_before.data(), 4096);
  const prim::Event ev = be.record_event(s);
  once(FaultSite::stream_wait, Errc::driver, [&] { be.stream_wait(s, ev); }, [] { return true; });
  be.destroy_event(ev);
  once(FaultSite::register_host, Errc::driver, [&] { be.register_host(host_buf.data(), host_buf.size()); },
       [&] { return be.pointer_kind(host_buf.data()) == prim::Backend::PointerKind::pageable; });
  once(FaultSite::unregister_host, Errc::driver, [&] { be.unregister_host(host_buf.data()); },
       [&] { return be.pointer_kind(host_buf.data()) == prim::Backend::PointerKind::pinned; });
  once(FaultSite::can_access_peer, Errc::driver, [&] { be.can_access_peer(1); }, [] { return true; });
  once(FaultSite::grant_peer, Errc::driver, [&] { be.grant_peer(va, 2 * kPage, 1); }, [] { return true; });
  EXPECT_EQ(checked, 13);
  EXPECT_TRUE(audit(*r.dev, r.host, live, kPage));
  r.dev->free(dev_mem);
  r.dev->empty_cache();
  be.destroy_stream(s);
  EXPECT_EQ(r.host->live_handles(), 0u);
}

// A destructor never lets a fault escape; what fails stays with the backend.
TEST(FaultSites, DestructionUnderFaultsDoesNotThrow) {
  for (FaultSite site : {FaultSite::synchronize_device, FaultSite::unmap, FaultSite::release, FaultSite::free_reservation,
                         FaultSite::destroy_event}) {
    SCOPED_TRACE(prim::fault_site_name(site));
    auto h = std::make_unique<prim::HostBackend>(0, kPage, 0);
    prim::HostBackend* host = h.get();
    prim::FaultyBackend faulty(std::move(h));
    Options o;
    o.backend = "host";
    o.small_max = kPage / 4;
    auto a = std::make_unique<core::Allocator>(faulty, o);
    const prim::Stream s = faulty.create_stream();
    void* x = a->alloc(3 * kPage, s);
    a->alloc(kPage, nullptr);
    a->free(x);
    host->hold(s);
    a->alloc(2 * kPage, nullptr);  // settles s: an event recorded, pending
    faulty.fail_nth(site, 1);
    EXPECT_NO_THROW(a.reset());
    EXPECT_EQ(faulty.faults_injected(site), 1u) << "the destructor called it";
    faulty.destroy_stream(s);
  }
}

}  // namespace
}  // namespace memlake::test
