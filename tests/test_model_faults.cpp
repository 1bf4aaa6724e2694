// Randomised model test with injected faults (issue 24): thousands of random
// allocations, frees, stitch-inducing frees, trims (a low mapped ratio makes
// every slow path trim), empty_cache, caps and held streams, while faults are
// injected at random primitives (one armed fault in a quarter of the steps,
// bursts of several in a few). Checked against a reference model (live
// pointer -> size and byte pattern): after every step the audit of
// fault_audit.h passes; a success is usable memory; a failure is clean (a
// driver error only when a fault was injected, out of memory only under a cap
// or for an injected create fault) and loses nothing. At the end everything is
// freed and the pool releases all memory. Seeded and deterministic: the seed
// is in every failure message, MEMLAKE_MODEL_SEED=N replays one.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <random>

#include "fault_audit.h"

namespace memlake::test {
namespace {

using prim::FaultSite;

// Every site the allocator calls.
constexpr FaultSite kAllocatorSites[] = {
    FaultSite::reserve,       FaultSite::free_reservation, FaultSite::create,       FaultSite::release,
    FaultSite::map,           FaultSite::unmap,            FaultSite::set_access,   FaultSite::event_record,
    FaultSite::event_query,   FaultSite::stream_query,     FaultSite::wait_event,   FaultSite::destroy_event,
    FaultSite::synchronize_stream, FaultSite::synchronize_device,
};

struct Config {
  const char* name;
  bool stitch;
  std::size_t handle_pages;
  int recent_spans;
  std::uint64_t lag;  // host backend: work completes `lag` steps after it was queued
  double mapped_ratio;
};

// Outcomes of the steps in which faults were injected, per site (a burst of
// several sites counts under "burst").
struct Outcomes {
  std::uint64_t injected = 0, steps = 0, failed_driver = 0, failed_oom = 0, absorbed = 0;
};
struct Tally {
  std::map<std::string, Outcomes> by_site;
  std::uint64_t operations = 0, faults = 0;
};
Tally& total() {
  static Tally t;
  return t;
}

enum class Kind { alloc, free, stitch, empty_cache, cap, hold, churn };

void run(const std::string& backend, const Config& c, std::uint64_t seed, int steps) {
  SCOPED_TRACE(std::string("config ") + c.name + ", seed " + std::to_string(seed) +
               " (replay: MEMLAKE_MODEL_SEED=" + std::to_string(seed) + ")");
  const bool host_be = backend == "host";
  const std::size_t g = host_be ? (64 << 10) : 0;
  prim::BackendConfig bc;
  bc.kind = backend;
  bc.granularity = g;
  std::unique_ptr<prim::Backend> inner = prim::make_backend(bc);
  auto* host = dynamic_cast<prim::HostBackend*>(inner.get());
  if (host) host->set_lag(c.lag);
  auto f = std::make_unique<prim::FaultyBackend>(std::move(inner));
  prim::FaultyBackend* faulty = f.get();
  Options o;
  o.backend = backend;
  o.granularity = g;
  o.stitch = c.stitch;
  o.handle_size = c.handle_pages * g;
  o.recent_spans = c.recent_spans;
  o.max_mapped_ratio = c.mapped_ratio;
  if (host_be) o.small_max = g / 4;  // small pages: thousands of steps fragment for real
  core::DeviceAllocator dev(std::move(f), o);
  const std::size_t page = dev.stats().page_size;
  prim::Stream streams[3] = {nullptr, dev.backend().create_stream(), dev.backend().create_stream()};
  std::mt19937_64 rng(seed);
  LiveMap live;
  std::vector<void*> order;  // live pointers by age: random picks must not depend on addresses (ASLR)
  std::size_t live_bytes = 0, cap = 0;
  std::uint64_t next_seed = 1;
  Tally tally;
  auto pick_size = [&]() -> std::size_t {
    switch (rng() % 4) {
      case 0: return 1 + rng() % 4096;
      case 1: return 1 + rng() % (page / 4);
      case 2: return page / 4 + 1 + rng() % (3 * page);
      default: return page * (1 + rng() % 12) - rng() % 100;
    }
  };
  // A successful allocation: distinct from every live one, usable, stamped.
  auto adopt = [&](void* p, std::size_t n) -> ::testing::AssertionResult {
    if (!p) return ::testing::AssertionFailure() << "null pointer for " << n << " bytes";
    auto it = live.upper_bound(p);
    if (it != live.end() && static_cast<char*>(p) + n > static_cast<char*>(it->first))
      return ::testing::AssertionFailure() << "overlaps the next live allocation";
    if (it != live.begin() && (--it, static_cast<char*>(it->first) + it->second.size > static_cast<char*>(p)))
      return ::testing::AssertionFailure() << "overlaps the previous live allocation";
    const std::uint64_t sd = next_seed++;
    try {
      stamp(dev.backend(), p, n, sd, page);
    } catch (const Error& e) {
      return ::testing::AssertionFailure() << "allocation reported success but is not usable: " << e.what();
    }
    live.emplace(p, LiveBlock{n, sd});
    order.push_back(p);
    live_bytes += n;
    return ::testing::AssertionSuccess();
  };
  auto release = [&](LiveMap::iterator it) {
    ASSERT_TRUE(stamped(dev.backend(), it->first, it->second.size, it->second.seed, page)) << "contents changed";
    ASSERT_EQ(error_of([&] { dev.free(it->first); }), Errc::ok) << "free never fails";
    live_bytes -= it->second.size;
    order.erase(std::find(order.begin(), order.end(), it->first));
    live.erase(it);
  };
  auto random_live = [&] { return live.find(order[rng() % order.size()]); };

  for (int step = 0; step < steps; ++step) {
    if (host) host->advance_clock(static_cast<std::uint64_t>(step) + 1);
    // Arm faults for this step: one site's n-th next call, or a burst.
    const std::uint64_t arm = rng() % 32;
    std::string armed;
    if (arm < 8) {
      const FaultSite s = kAllocatorSites[rng() % std::size(kAllocatorSites)];
      faulty->fail_nth(s, 1 + static_cast<int>(rng() % 3));
      armed = prim::fault_site_name(s);
    } else if (arm == 8) {
      faulty->fail_randomly(0.3, rng(), std::vector<FaultSite>(std::begin(kAllocatorSites), std::end(kAllocatorSites)));
      armed = "burst";
    }
    std::array<std::uint64_t, prim::kNumFaultSites> before{};
    for (int i = 0; i < prim::kNumFaultSites; ++i) before[i] = faulty->faults_injected(static_cast<FaultSite>(i));
    const std::uint64_t creates_before = before[static_cast<int>(FaultSite::create)];

    const int r = static_cast<int>(rng() % 100);
    Kind kind = r < 46 || live.empty() ? Kind::alloc
                : r < 76               ? Kind::free
                : r < 84               ? Kind::stitch
                : r < 88               ? Kind::empty_cache
                : r < 91               ? Kind::cap
                : r < 94               ? Kind::hold
                                       : Kind::churn;
    Errc e = Errc::ok;
    std::string msg;
    switch (kind) {
      case Kind::alloc: {
        const std::size_t n = pick_size();
        void* p = nullptr;
        e = error_of([&] { p = dev.alloc(n, streams[rng() % 3]); }, &msg);
        if (e == Errc::ok) {
          ASSERT_TRUE(adopt(p, n)) << "step " << step;
        }
        break;
      }
      case Kind::free:
        release(random_live());
        break;
      case Kind::stitch: {
        // Free a few scattered allocations, then ask for about their sum:
        // served by a stitch, a repair or an extension over their pages.
        std::size_t sum = 0;
        for (int i = 0; i < 4 && !live.empty(); ++i) {
          auto it = random_live();
          sum += it->second.size;
          release(it);
          if (::testing::Test::HasFatalFailure()) return;
        }
        const std::size_t n = std::max(sum, page + 1);
        void* p = nullptr;
        e = error_of([&] { p = dev.alloc(n, streams[rng() % 3]); }, &msg);
        if (e == Errc::ok) {
          ASSERT_TRUE(adopt(p, n)) << "step " << step;
        }
        break;
      }
      case Kind::empty_cache:
        e = error_of([&] { dev.empty_cache(); }, &msg);
        break;
      case Kind::cap: {
        const std::size_t reserved = dev.stats().reserved.current;
        cap = rng() % 3 ? 0 : reserved + page * (rng() % 8);
        e = error_of([&] { dev.set_memory_cap(cap); }, &msg);
        break;
      }
      case Kind::hold:
        if (host) host->hold(streams[rng() % 3]);  // its work stays pending until waited for
        break;
      case Kind::churn: {
        // A large allocation freed at once: new views, and trims of the idle ones.
        void* p = nullptr;
        const std::size_t n = page * (8 + rng() % 24);
        e = error_of([&] { p = dev.alloc(n, streams[rng() % 3]); }, &msg);
        if (e == Errc::ok) {
          ASSERT_TRUE(adopt(p, n)) << "step " << step;
          release(live.find(p));
        }
        break;
      }
    }
    if (::testing::Test::HasFatalFailure()) return;
    faulty->stop_failing();
    std::uint64_t injected = 0;
    std::string site;
    for (int i = 0; i < prim::kNumFaultSites; ++i) {
      const std::uint64_t d = faulty->faults_injected(static_cast<FaultSite>(i)) - before[i];
      injected += d;
      if (d) site = prim::fault_site_name(static_cast<FaultSite>(i));
    }
    const bool create_fault = faulty->faults_injected(FaultSite::create) > creates_before;
    // Failures are clean and distinguished.
    if (e == Errc::driver) {
      ASSERT_GT(injected, 0u) << "step " << step << ": a driver error without an injected fault: " << msg;
    } else if (e == Errc::out_of_memory) {
      ASSERT_TRUE(cap != 0 || create_fault) << "step " << step << ": out of memory with no cap and no failed create: " << msg;
    } else {
      ASSERT_EQ(e, Errc::ok) << "step " << step << ": " << msg;
    }
    if (injected) {
      Outcomes& out = tally.by_site[armed == "burst" ? "burst" : site];
      out.injected += injected;
      ++out.steps;
      if (e == Errc::driver) ++out.failed_driver;
      else if (e == Errc::out_of_memory) ++out.failed_oom;
      else ++out.absorbed;
      tally.faults += injected;
    }
    // The audit: structures and holdings every step; the bytes of every live
    // allocation after every step that met a fault, and every 8th step.
    if (injected || step % 8 == 0) {
      ASSERT_TRUE(audit(dev, host, live, page)) << "step " << step << " (" << (injected ? site : "no fault") << ")";
    } else {
      ASSERT_TRUE(audit(dev, host, {}, page)) << "step " << step;
    }
    const auto st = dev.stats();
    ASSERT_EQ(st.requested.current, live_bytes) << "step " << step;
    ASSERT_EQ(st.active.current, live.size()) << "step " << step;
  }
  tally.operations = static_cast<std::uint64_t>(steps);
  // Nothing lost: with faults off, everything is freed and given back.
  ASSERT_TRUE(audit(dev, host, live, page));
  while (!live.empty()) {
    release(live.begin());
    if (::testing::Test::HasFatalFailure()) return;
  }
  dev.set_memory_cap(0);
  ASSERT_NO_THROW(dev.empty_cache());
  ASSERT_TRUE(audit(dev, host, live, page));
  EXPECT_EQ(dev.stats().reserved.current, 0u);
  const core::PagePool::Holdings h = dev.holdings();
  EXPECT_EQ(h.handles + h.mappings + h.reservations, 0u) << "all memory released";
  if (host) {
    EXPECT_EQ(host->live_handles(), 0u);
    EXPECT_EQ(host->live_mappings(), 0u);
    EXPECT_EQ(host->live_reservations(), 0u);
  }
  EXPECT_GT(tally.faults, 0u);
  for (int i = 1; i < 3; ++i) dev.backend().destroy_stream(streams[i]);
  std::uint64_t failed = 0, absorbed = 0;
  for (const auto& [s, out] : tally.by_site) failed += out.failed_driver + out.failed_oom, absorbed += out.absorbed;
  std::printf("[model+faults] %s/%s seed %llu: %d operations, %llu faults injected in %llu steps (%llu failed cleanly, %llu absorbed), %zu sites hit\n",
              backend.c_str(), c.name, static_cast<unsigned long long>(seed), steps,
              static_cast<unsigned long long>(tally.faults), static_cast<unsigned long long>(failed + absorbed),
              static_cast<unsigned long long>(failed), static_cast<unsigned long long>(absorbed), tally.by_site.size());
  Tally& t = total();
  t.operations += tally.operations;
  t.faults += tally.faults;
  for (const auto& [s, out] : tally.by_site) {
    Outcomes& o2 = t.by_site[s];
    o2.injected += out.injected;
    o2.steps += out.steps;
    o2.failed_driver += out.failed_driver;
    o2.failed_oom += out.failed_oom;
    o2.absorbed += out.absorbed;
  }
}

class ModelFaultsTest : public BackendTest {};

std::vector<std::uint64_t> seeds(std::initializer_list<std::uint64_t> defaults) {
  if (const char* s = std::getenv("MEMLAKE_MODEL_SEED")) return {std::strtoull(s, nullptr, 10)};
  return defaults;
}

constexpr Config kConfigs[] = {
    {"stitch-trim", true, 0, 0, 0, 1.0},      // every slow path trims
    {"lagging", true, 0, 0, 12, 1.0},         // frees pending: events recorded, queried, waited for
    {"large-handles", true, 4, 0, 4, 2.0},    // handles of 4 pages, repairs and extensions mixing sizes
    {"recent-spans", true, 0, 4, 6, 1.5},     // parked spans given back before slow paths
    {"no-stitch", false, 0, 0, 0, 2.0},       // empty_cache on the cap path
};

TEST_P(ModelFaultsTest, RandomOperationsWithRandomFaults) {
  const int steps = is_host() ? 2500 : 800;
  for (const Config& c : kConfigs) {
    for (std::uint64_t seed : seeds({101, 202})) {
      run(GetParam(), c, seed, steps);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  const Tally& t = total();
  std::printf("[model+faults] %s total: %llu operations, %llu faults injected\n", GetParam().c_str(),
              static_cast<unsigned long long>(t.operations), static_cast<unsigned long long>(t.faults));
  for (const auto& [s, o] : t.by_site)
    std::printf("[model+faults]   %-18s injected %5llu in %5llu steps: failed driver %5llu, failed oom %4llu, absorbed %5llu\n",
                s.c_str(), static_cast<unsigned long long>(o.injected), static_cast<unsigned long long>(o.steps),
                static_cast<unsigned long long>(o.failed_driver), static_cast<unsigned long long>(o.failed_oom),
                static_cast<unsigned long long>(o.absorbed));
}

MEMLAKE_INSTANTIATE_BACKENDS(ModelFaultsTest);

}  // namespace
}  // namespace memlake::test
