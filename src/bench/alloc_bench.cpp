#include "bench/alloc_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/device_allocator.h"
#include "core/error.h"
#include "memlake/memlake.h"

namespace memlake::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point t) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t).count();
}

std::uint64_t total_calls(const core::Stats& s) { return s.calls.total_calls(); }

Sample summarize(std::string name, const Options& o, std::size_t param, std::vector<double>& v, double calls) {
  std::sort(v.begin(), v.end());
  Sample s{std::move(name), o.backend, param, v[v.size() / 2], v[v.size() * 9 / 10], v.size(), calls};
  return s;
}

}  // namespace

Sample hot_path(const Options& o, std::size_t size, std::size_t reps) {
  core::DeviceAllocator dev(0, o);
  std::vector<void*> keep;
  for (int i = 0; i < 64; ++i) keep.push_back(dev.alloc(size, nullptr));
  dev.free(dev.alloc(size, nullptr));
  const std::uint64_t c0 = total_calls(dev.stats());
  // Time batches of 64 so that the clock's own cost does not dominate.
  std::vector<double> v;
  for (std::size_t r = 0; r < reps; ++r) {
    auto t = Clock::now();
    for (int i = 0; i < 64; ++i) dev.free(dev.alloc(size, nullptr));
    v.push_back(ns_since(t) / 64);
  }
  const double calls = static_cast<double>(total_calls(dev.stats()) - c0) / static_cast<double>(reps * 64);
  for (void* p : keep) dev.free(p);
  return summarize("hot_path", o, size, v, calls);
}

namespace {

void* capi_take(memlake_allocator* a, std::size_t bytes, prim::Stream stream) {
  void* p = nullptr;
  if (memlake_alloc(a, bytes, 0, stream, &p) != MEMLAKE_OK) throw_error(Errc::out_of_memory, memlake_last_error());
  return p;
}

}  // namespace

SideStream::SideStream(const Options& o)
    : backend_(prim::make_backend(prim::BackendConfig{o.backend, 0, o.granularity, 0})),
      stream_(backend_->create_stream()) {}

SideStream::~SideStream() { backend_->destroy_stream(stream_); }

void fragment_like_shim_probe(memlake_allocator* a, prim::Stream side) {
  std::vector<void*> blocks, big;
  for (int i = 0; i < 96; ++i) blocks.push_back(capi_take(a, std::size_t(24 + (i * 37) % 97) << 20, nullptr));
  for (int i = 0; i < 96; i += 2) memlake_free(a, blocks[i], 0, nullptr);
  for (int i = 0; i < 12; ++i) big.push_back(capi_take(a, std::size_t(640) << 20, nullptr));
  for (int i = 1; i < 96; i += 2) memlake_free(a, blocks[i], 0, nullptr);
  for (void* p : big) memlake_free(a, p, 0, nullptr);
  memlake_free(a, capi_take(a, std::size_t(64) << 20, side), 0, side);  // the probe's cudaMallocAsync on its own stream
}

namespace {

Sample capi_hot_path(const Options& o, std::size_t size, std::size_t reps, bool fragmented) {
  // The same loop through the C ABI (what the shim and Python call): the
  // reference for the LD_PRELOAD shim's overhead. `fragmented`: first the
  // shim probe's allocation pattern (fragment_like_shim_probe), so that the
  // loop runs in the state the probe's loop does.
  memlake_options* mo = nullptr;
  memlake_allocator* a = nullptr;
  memlake_options_create(&mo, 0);
  memlake_options_set(mo, "backend", o.backend.c_str());
  memlake_options_set(mo, "granularity", std::to_string(o.granularity).c_str());
  const memlake_status st = memlake_create(mo, &a);
  memlake_options_destroy(mo);
  if (st != MEMLAKE_OK) throw_error(Errc::unavailable, std::string("bench: ") + memlake_last_error());
  auto one = [&] { return capi_take(a, size, nullptr); };
  std::unique_ptr<SideStream> side;  // outlives the allocator
  if (fragmented) {
    side = std::make_unique<SideStream>(o);
    fragment_like_shim_probe(a, side->get());
  }
  std::vector<void*> keep;
  for (int i = 0; i < (fragmented ? 0 : 64); ++i) keep.push_back(one());
  memlake_free(a, one(), 0, nullptr);
  std::vector<double> v;
  for (std::size_t r = 0; r < reps; ++r) {
    auto t = Clock::now();
    for (int i = 0; i < 64; ++i) memlake_free(a, one(), 0, nullptr);
    v.push_back(ns_since(t) / 64);
  }
  for (void* p : keep) memlake_free(a, p, 0, nullptr);
  memlake_destroy(a);  // synchronises before the stream goes
  side.reset();
  return summarize(fragmented ? "capi_frag" : "capi_hot", o, size, v, 0);
}

}  // namespace

Sample stitch(const Options& base, std::size_t pages, std::size_t reps) {
  Options o = base;
  o.max_mapped_ratio = 1e9;  // measure the stitch, not eviction
  std::vector<double> v;
  double calls = 0;
  for (std::size_t r = 0; r < reps; ++r) {
    core::DeviceAllocator dev(0, o);
    const std::size_t page = dev.stats().page_size;
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < 2 * pages; ++i) blocks.push_back(dev.alloc(page, nullptr));
    for (std::size_t i = 0; i < 2 * pages; i += 2) dev.free(blocks[i]);
    const std::uint64_t c0 = total_calls(dev.stats());
    auto t = Clock::now();
    void* s = dev.alloc(pages * page, nullptr);
    v.push_back(ns_since(t));
    calls += static_cast<double>(total_calls(dev.stats()) - c0);
    if (dev.stats().stitches != 1) throw_error(Errc::internal, "stitch benchmark: request was not stitched");
    dev.free(s);
    for (std::size_t i = 1; i < 2 * pages; i += 2) dev.free(blocks[i]);
  }
  return summarize("stitch", o, pages, v, calls / static_cast<double>(reps));
}

Sample grow(const Options& o, std::size_t pages, std::size_t reps) {
  std::vector<double> v;
  double calls = 0;
  for (std::size_t r = 0; r < reps; ++r) {
    core::DeviceAllocator dev(0, o);
    const std::size_t page = dev.stats().page_size;
    auto t = Clock::now();
    void* p = dev.alloc(pages * page, nullptr);
    v.push_back(ns_since(t));
    calls += static_cast<double>(total_calls(dev.stats()));
    dev.free(p);
  }
  return summarize("grow", o, pages, v, calls / static_cast<double>(reps));
}

std::vector<Sample> run_all(const Options& o, bool quick, bool with_fragmented) {
  std::vector<Sample> out;
  const std::size_t hot_reps = quick ? 200 : 2000, rep = quick ? 3 : 10;
  for (std::size_t size : {std::size_t{512}, std::size_t{64} << 10, std::size_t{4} << 20, std::size_t{64} << 20,
                           std::size_t{1} << 30})
    out.push_back(hot_path(o, size, size >= (std::size_t{1} << 30) ? hot_reps / 10 : hot_reps));
  for (std::size_t size : {std::size_t{512}, std::size_t{4} << 20, std::size_t{64} << 20})
    out.push_back(capi_hot_path(o, size, hot_reps, false));
  if (with_fragmented)
    for (std::size_t size : {std::size_t{512}, std::size_t{4} << 20, std::size_t{64} << 20})
      out.push_back(capi_hot_path(o, size, hot_reps, true));
  for (std::size_t n : {2, 8, 32, 128, 512}) out.push_back(stitch(o, n, rep));
  for (std::size_t n : {1, 8, 64, 512}) out.push_back(grow(o, n, rep));
  return out;
}

std::string samples_table(const std::vector<Sample>& s) {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "%-9s %-6s %14s %12s %12s %8s %12s\n", "scenario", "backend", "size/pages",
                "median", "p90", "reps", "calls/op");
  o << line;
  for (const Sample& x : s) {
    std::string param = x.name == "hot_path" || x.name.rfind("capi_", 0) == 0 ? human_bytes(x.param) : std::to_string(x.param) + " pages";
    auto t = [](double ns) {
      char b[32];
      if (ns < 10000) std::snprintf(b, sizeof b, "%.0f ns", ns);
      else if (ns < 1e7) std::snprintf(b, sizeof b, "%.1f us", ns / 1e3);
      else std::snprintf(b, sizeof b, "%.2f ms", ns / 1e6);
      return std::string(b);
    };
    std::snprintf(line, sizeof line, "%-9s %-6s %14s %12s %12s %8zu %12.2f\n", x.name.c_str(), x.backend.c_str(),
                  param.c_str(), t(x.median_ns).c_str(), t(x.p90_ns).c_str(), x.reps, x.calls_per_op);
    o << line;
  }
  return o.str();
}

std::string samples_json(const std::vector<Sample>& s) {
  std::ostringstream o;
  o << "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const Sample& x = s[i];
    o << (i ? "," : "") << "{\"scenario\":\"" << x.name << "\",\"backend\":\"" << x.backend << "\",\"param\":" << x.param
      << ",\"median_ns\":" << x.median_ns << ",\"p90_ns\":" << x.p90_ns << ",\"reps\":" << x.reps
      << ",\"calls_per_op\":" << x.calls_per_op << "}";
  }
  o << "]";
  return o.str();
}

}  // namespace memlake::bench
