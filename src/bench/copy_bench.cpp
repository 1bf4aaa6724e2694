#include "bench/copy_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/device_allocator.h"
#include "core/error.h"
#include "io/copy_engine.h"
#include "report/chart.h"

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
  eo.threads = cfg.options.copy_threads;
  eo.chunk = cfg.options.copy_chunk;
  eo.h2d_streams = cfg.options.copy_h2d_streams;
  eo.streaming_stores = cfg.streaming_stores;
  eo.ramp = cfg.ramp;
  eo.min_piece = cfg.min_piece;
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
      // The engine's lane times over one measurement (staged copies only).
      auto measured = [&](auto&& once, CopySample& x) {
        const io::CopyStats before = engine.stats();
        x.memlake_gbps = median_gbps(n, reps, once);
        const io::CopyStats after = engine.stats();
        const double copy = static_cast<double>(after.lane_copy_ns - before.lane_copy_ns);
        const double wait = static_cast<double>(after.lane_wait_ns - before.lane_wait_ns);
        if (after.staged > before.staged && copy > 0) {
          x.lane_copy_share = copy / (copy + wait);
          x.lane_gbps = static_cast<double>((after.staged - before.staged) * n) / copy;  // bytes per ns = GB/s
        }
      };
      CopySample h{"h2d", host, n, median_gbps(n, reps, plain_h2d), 0, false};
      measured(ml_h2d, h);
      std::vector<unsigned char> check(std::min<std::size_t>(n, 1 << 20));
      be.read(check.data(), D1 + n - check.size(), check.size());
      h.verified = std::memcmp(check.data(), a + n - check.size(), check.size()) == 0;
      out.push_back(h);
      CopySample d{"d2h", host, n, median_gbps(n, reps, plain_d2h), 0, false};
      measured(ml_d2h, d);
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
      out.push_back({"both", host, n, both(plain_h2d, plain_d2h), both(ml_h2d, ml_d2h), h.verified && d.verified, -1, 0});
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
  appendf(o, "%-5s %-9s %12s %10s %10s %8s %6s %12s %s\n", "dir", "host", "size", "plain", "memlake", "ratio", "copy%",
          "lane GB/s", "bytes");
  for (const CopySample& x : s) {
    std::string share = "-", lane = "-";
    if (x.lane_copy_share >= 0) share.clear(), appendf(share, "%.0f", 100 * x.lane_copy_share);
    if (x.lane_gbps > 0) lane.clear(), appendf(lane, "%.1f", x.lane_gbps);
    appendf(o, "%-5s %-9s %12s %10.2f %10.2f %8.2f %6s %12s %s\n", x.direction.c_str(), x.host.c_str(),
            human_bytes(x.bytes).c_str(), x.plain_gbps, x.memlake_gbps, x.plain_gbps > 0 ? x.memlake_gbps / x.plain_gbps : 0.0,
            share.c_str(), lane.c_str(), x.verified ? "ok" : "MISMATCH");
  }
  o += "copy%: share of the lanes' time in the host memcpy of staged copies (the rest waited for staging\n"
       "buffers or their DMA); lane GB/s: one lane's memcpy speed\n";
  return o;
}

std::string copy_json(const std::vector<CopySample>& s, int threads) {
  std::string o = "{\"threads\":" + std::to_string(threads) + ",\"samples\":[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const CopySample& x = s[i];
    appendf(o,
            "%s{\"direction\":\"%s\",\"host\":\"%s\",\"bytes\":%zu,\"plain_gbps\":%.3f,\"memlake_gbps\":%.3f,"
            "\"lane_copy_share\":%.4f,\"lane_gbps\":%.3f,\"verified\":%s}",
            i ? "," : "", x.direction.c_str(), x.host.c_str(), x.bytes, x.plain_gbps, x.memlake_gbps, x.lane_copy_share,
            x.lane_gbps, x.verified ? "true" : "false");
  }
  return o + "]}";
}

std::string copy_svg(const std::vector<CopySample>& s, const std::string& title) {
  report::Chart c;
  c.title = title;
  c.x_label = "copy size";
  c.y_label = "GB/s";
  double ymax = 1, xmin = 1e30, xmax = 0;
  for (const CopySample& x : s) {
    ymax = std::max({ymax, x.plain_gbps, x.memlake_gbps});
    xmin = std::min(xmin, std::log2(static_cast<double>(x.bytes)));
    xmax = std::max(xmax, std::log2(static_cast<double>(x.bytes)));
  }
  if (xmax <= xmin) xmax = xmin + 1;
  c.x_min = xmin;
  c.x_max = xmax;
  c.y_max = ymax * 1.1;
  double step = 1;
  for (double v : report::nice_ticks(0, c.y_max, 5, &step)) c.y_ticks.push_back({v, report::tick_label(v, step)});
  for (double lg = std::ceil(xmin); lg <= xmax; lg += 2)
    c.x_ticks.push_back({lg, human_bytes(static_cast<std::uint64_t>(std::exp2(lg)))});
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
  int k = 0;
  for (const char* dir : {"h2d", "d2h", "both"})
    for (const char* host : {"pageable", "pinned"}) {
      for (int impl = 0; impl < 2; ++impl) {
        report::Line l;
        l.label = std::string(dir) + " " + host + (impl ? " memlake" : " plain");
        l.css_class = impl ? "memlake" : "plain";
        l.color = colors[k % 6];
        l.dashed = !impl;
        for (const CopySample& x : s)
          if (x.direction == dir && x.host == host)
            l.points.emplace_back(std::log2(static_cast<double>(x.bytes)), impl ? x.memlake_gbps : x.plain_gbps);
        if (!l.points.empty()) c.lines.push_back(std::move(l));
      }
      c.legend.push_back({std::string(dir) + " " + host, colors[k % 6], false});
      ++k;
    }
  c.notes.push_back("solid: memlake, dashed: plain");
  return report::svg(c);
}

}  // namespace memlake::bench
