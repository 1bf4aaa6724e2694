#include "bench/path_bench.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "core/device_allocator.h"
#include "core/error.h"
#include "io/copy_engine.h"
#include "io/multipath.h"

namespace memlake::bench {
namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double best_seconds(int reps, F&& once) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t = Clock::now();
    once();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
  }
  return best;
}

double gbps(std::size_t n, double s) { return s > 0 ? static_cast<double>(n) / s / 1e9 : 0; }

io::CopyOptions engine_options(const Options& o) {
  io::CopyOptions c;
  c.threads = o.copy_threads;
  c.chunk = o.copy_chunk;
  c.h2d_streams = o.copy_h2d_streams;
  return c;
}

// Page-touched pageable memory with a pattern, so faults are not measured.
std::vector<unsigned char> pageable(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i >> 12) ^ (i * 131) ^ seed);
  return v;
}

}  // namespace

std::string run_registration_bench(const PathBenchConfig& cfg, bool* ok) {
  *ok = true;
  core::DeviceAllocator dev(0, cfg.options);
  prim::Backend& be = dev.backend();
  io::CopyEngine staged(be, engine_options(cfg.options));
  prim::Stream s = be.create_stream();
  void* d = dev.alloc(cfg.max_bytes, nullptr);
  const auto D = reinterpret_cast<std::uintptr_t>(d);
  std::string o;
  appendf(o, "registration: pageable buffer registered once, then copied by DMA (engine: %d threads when staged)\n",
          staged.stats().threads);
  appendf(o, "%10s %12s %12s %11s %11s %11s %11s %10s\n", "size", "register ms", "register GB/s", "staged H2D", "reg. H2D",
          "staged D2H", "reg. D2H", "pays after");
  for (std::size_t n = cfg.min_bytes; n <= cfg.max_bytes; n *= 4) {
    auto host = pageable(n, 3);
    const double st_h2d = best_seconds(cfg.reps, [&] {
      staged.to_device(D, host.data(), n, s);
      be.synchronize_stream(s);
    });
    const double st_d2h = best_seconds(cfg.reps, [&] { staged.to_host(host.data(), D, n, s); });
    // Registration cost, measured on its own (register + unregister, as the cache would on eviction).
    const double reg = best_seconds(cfg.reps, [&] {
      be.register_host(host.data(), n);
      be.unregister_host(host.data());
    });
    be.register_host(host.data(), n);
    const double rg_h2d = best_seconds(cfg.reps, [&] {
      be.copy_to_device_async(D, host.data(), n, s);
      be.synchronize_stream(s);
    });
    const double rg_d2h = best_seconds(cfg.reps, [&] {
      be.copy_to_host_async(host.data(), D, n, s);
      be.synchronize_stream(s);
    });
    be.unregister_host(host.data());
    std::vector<unsigned char> check(std::min<std::size_t>(n, 1 << 20));
    be.read(check.data(), D + n - check.size(), check.size());
    *ok = *ok && std::memcmp(check.data(), host.data() + n - check.size(), check.size()) == 0;
    const double saved = (st_h2d - rg_h2d + st_d2h - rg_d2h) / 2;  // per copy, both directions averaged
    char pays[32];
    if (saved > 0) std::snprintf(pays, sizeof pays, "%.0f copies", reg / saved);
    else std::snprintf(pays, sizeof pays, "never");
    appendf(o, "%10s %12.1f %12.1f %11.1f %11.1f %11.1f %11.1f %10s\n", human_bytes(n).c_str(), reg * 1e3, gbps(n, reg),
            gbps(n, st_h2d), gbps(n, rg_h2d), gbps(n, st_d2h), gbps(n, rg_d2h), pays);
  }
  dev.free(d);
  be.destroy_stream(s);
  return o;
}

std::string run_multipath_bench(const PathBenchConfig& cfg, bool* ok) {
  *ok = true;
  const bool host = cfg.options.backend == "host";
  int gpus = cfg.loopback > 0 ? cfg.loopback + 1 : (host ? 4 : prim::cuda_device_count());
  if (gpus < 1) throw_error(Errc::unavailable, "multipath bench: no GPU");
  std::vector<std::unique_ptr<core::DeviceAllocator>> devs;
  std::vector<prim::Backend*> raw;
  for (int g = 0; g < gpus; ++g) {
    const int ordinal = cfg.loopback > 0 && !host ? 0 : g;
    devs.push_back(std::make_unique<core::DeviceAllocator>(ordinal, cfg.options));
    raw.push_back(&devs.back()->backend());
  }
  std::string o, text;
  io::Topology topo = io::measure_topology(raw, std::size_t{256} << 20, &text);
  appendf(o, "measured topology (%s%s):\n%s", cfg.options.backend.c_str(),
          cfg.loopback > 0 ? ", loopback: every peer is GPU 0 again" : "", text.c_str());
  io::MultiPathOptions mo;
  mo.copy = engine_options(cfg.options);
  io::MultiPath multi(raw, topo, mo);
  mo.plan.max_paths = 1;
  io::MultiPath direct(raw, topo, mo);
  prim::Backend& tb = *raw[0];
  prim::Stream s = tb.create_stream();
  void* d = devs[0]->alloc(cfg.max_bytes, nullptr);
  const auto D = reinterpret_cast<std::uintptr_t>(d);
  auto page = pageable(cfg.max_bytes, 5);
  auto* pin = static_cast<unsigned char*>(tb.alloc_pinned(cfg.max_bytes));
  std::memcpy(pin, page.data(), cfg.max_bytes);
  std::vector<unsigned char> back(cfg.max_bytes);
  appendf(o, "%-4s %-9s %10s %8s %12s %12s %7s %s\n", "dir", "host", "size", "paths", "direct GB/s", "multi GB/s", "ratio",
          "bytes");
  for (const char* kind : {"pinned", "pageable"}) {
    unsigned char* src = std::strcmp(kind, "pinned") == 0 ? pin : page.data();
    for (std::size_t n = cfg.min_bytes; n <= cfg.max_bytes; n *= 4) {
      std::size_t paths = 1;
      const double t_dir = best_seconds(cfg.reps, [&] {
        direct.to_device(0, D, src, n, s);
        tb.synchronize_stream(s);
      });
      const double t_mul = best_seconds(cfg.reps, [&] {
        paths = multi.to_device(0, D, src, n, s).shares.size();
        tb.synchronize_stream(s);
      });
      std::vector<unsigned char> check(std::min<std::size_t>(n, 4 << 20));
      bool good = true;
      for (std::size_t at : {std::size_t{0}, n / 2, n - check.size()}) {  // start, middle (another path), end
        at = std::min(at, n - check.size());
        tb.read(check.data(), D + at, check.size());
        good = good && std::memcmp(check.data(), src + at, check.size()) == 0;
      }
      appendf(o, "%-4s %-9s %10s %8zu %12.1f %12.1f %7.2f %s\n", "h2d", kind, human_bytes(n).c_str(), paths, gbps(n, t_dir),
              gbps(n, t_mul), t_mul > 0 ? t_dir / t_mul : 0, good ? "ok" : "MISMATCH");
      *ok = *ok && good;
      unsigned char* dst = std::strcmp(kind, "pinned") == 0 ? pin : back.data();
      const double d_dir = best_seconds(cfg.reps, [&] { direct.to_host(0, dst, D, n, s); });
      const double d_mul = best_seconds(cfg.reps, [&] { paths = multi.to_host(0, dst, D, n, s).shares.size(); });
      good = std::memcmp(dst, page.data(), n) == 0;
      appendf(o, "%-4s %-9s %10s %8zu %12.1f %12.1f %7.2f %s\n", "d2h", kind, human_bytes(n).c_str(), paths, gbps(n, d_dir),
              gbps(n, d_mul), d_mul > 0 ? d_dir / d_mul : 0, good ? "ok" : "MISMATCH");
      *ok = *ok && good;
    }
  }
  tb.free_pinned(pin);
  devs[0]->free(d);
  tb.destroy_stream(s);
  return o;
}

}  // namespace memlake::bench
