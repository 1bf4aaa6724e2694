#include "bench/copy_bench.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/device_allocator.h"
#include "core/error.h"
#include "io/copy_engine.h"

namespace memlake::bench {
namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double median_gbps(std::size_t bytes, int reps, F&& once) {
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    auto t = Clock::now();
    once();
    double s = std::chrono::duration<double>(Clock::now() - t).count();
    v.push_back(static_cast<double>(bytes) / s / 1e9);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<CopySample> run_copy_bench(const CopyBenchConfig& cfg, int* threads_used) {
  core::DeviceAllocator dev(0, cfg.options);
  prim::Backend& be = dev.backend();
  io::CopyOptions eo;
  eo.threads = cfg.threads;
  io::CopyEngine engine(be, eo);
  if (threads_used) *threads_used = engine.stats().threads;
  const std::size_t max = cfg.max_bytes;
  // Two device buffers and host buffers of each kind, touched once so that
  // page faults are not measured.
  void* d1 = dev.alloc(max, nullptr);
  void* d2 = dev.alloc(max, nullptr);
  std::vector<unsigned char> page1(max), page2(max);
  for (std::size_t i = 0; i < max; i += 4096) page1[i] = static_cast<unsigned char>(i >> 12), page2[i] = 1;
  auto* pin1 = static_cast<unsigned char*>(be.alloc_pinned(max));
  auto* pin2 = static_cast<unsigned char*>(be.alloc_pinned(max));
  std::memcpy(pin1, page1.data(), max);
  prim::Stream s1 = be.create_stream(), s2 = be.create_stream();
  const auto D1 = reinterpret_cast<std::uintptr_t>(d1), D2 = reinterpret_cast<std::uintptr_t>(d2);
  std::vector<CopySample> out;
  for (const char* host : {"pageable", "pinned"}) {
    unsigned char* a = std::strcmp(host, "pinned") == 0 ? pin1 : page1.data();
    unsigned char* b = std::strcmp(host, "pinned") == 0 ? pin2 : page2.data();
    for (std::size_t n = cfg.min_bytes; n <= max; n *= 4) {
      const int reps = n >= (std::size_t{256} << 20) ? std::max(2, cfg.reps / 2) : cfg.reps;
      auto plain_h2d = [&] { be.copy_to_device_async(D1, a, n, s1); be.synchronize_stream(s1); };
      auto plain_d2h = [&] { be.copy_to_host_async(b, D1, n, s2); be.synchronize_stream(s2); };
      auto ml_h2d = [&] { engine.to_device(D1, a, n, s1); be.synchronize_stream(s1); };
      auto ml_d2h = [&] { engine.to_host(b, D2, n, s2); };
      CopySample h{"h2d", host, n, median_gbps(n, reps, plain_h2d), median_gbps(n, reps, ml_h2d), false};
      std::vector<unsigned char> check(std::min<std::size_t>(n, 1 << 20));
      be.read(check.data(), D1 + n - check.size(), check.size());
      h.verified = std::memcmp(check.data(), a + n - check.size(), check.size()) == 0;
      out.push_back(h);
      CopySample d{"d2h", host, n, median_gbps(n, reps, plain_d2h), median_gbps(n, reps, ml_d2h), false};
      std::vector<unsigned char> expect(check.size());
      be.read(expect.data(), D2 + n - check.size(), check.size());
      d.verified = std::memcmp(expect.data(), b + n - check.size(), check.size()) == 0;
      out.push_back(d);
      auto both = [&](auto up, auto down) {
        return median_gbps(2 * n, reps, [&] {
          std::thread t(down);
          up();
          t.join();
        });
      };
      out.push_back({"both", host, n, both(plain_h2d, plain_d2h), both(ml_h2d, ml_d2h), h.verified && d.verified});
    }
  }
  be.destroy_stream(s1);
  be.destroy_stream(s2);
  be.free_pinned(pin1);
  be.free_pinned(pin2);
  dev.free(d1);
  dev.free(d2);
  return out;
}

std::string copy_table(const std::vector<CopySample>& s, int threads) {
  std::string o;
  appendf(o, "copy bandwidth, GB/s (median); memlake engine with %d host threads\n", threads);
  appendf(o, "%-5s %-9s %12s %10s %10s %8s %s\n", "dir", "host", "size", "plain", "memlake", "ratio", "bytes");
  for (const CopySample& x : s)
    appendf(o, "%-5s %-9s %12s %10.2f %10.2f %8.2f %s\n", x.direction.c_str(), x.host.c_str(), human_bytes(x.bytes).c_str(),
            x.plain_gbps, x.memlake_gbps, x.plain_gbps > 0 ? x.memlake_gbps / x.plain_gbps : 0.0,
            x.verified ? "ok" : "MISMATCH");
  return o;
}

std::string copy_json(const std::vector<CopySample>& s, int threads) {
  std::string o = "{\"threads\":" + std::to_string(threads) + ",\"samples\":[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const CopySample& x = s[i];
    appendf(o, "%s{\"direction\":\"%s\",\"host\":\"%s\",\"bytes\":%zu,\"plain_gbps\":%.3f,\"memlake_gbps\":%.3f,\"verified\":%s}",
            i ? "," : "", x.direction.c_str(), x.host.c_str(), x.bytes, x.plain_gbps, x.memlake_gbps,
            x.verified ? "true" : "false");
  }
  return o + "]}";
}

}  // namespace memlake::bench
