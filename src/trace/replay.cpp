#include "trace/replay.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "core/device_allocator.h"
#include "core/error.h"
#include "prim/host_backend.h"
#include "trace/trace.h"

namespace memlake::trace {
namespace {

using Clock = std::chrono::steady_clock;

Latency summarize(std::vector<std::uint32_t>& ns) {
  Latency l;
  if (ns.empty()) return l;
  auto at = [&](double q) {
    std::size_t k = static_cast<std::size_t>(q * static_cast<double>(ns.size() - 1));
    std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(k), ns.end());
    return static_cast<double>(ns[k]);
  };
  double sum = 0;
  for (auto v : ns) sum += v;
  l.mean_ns = sum / static_cast<double>(ns.size());
  l.p50_ns = at(0.5);
  l.p90_ns = at(0.9);
  l.p99_ns = at(0.99);
  l.p999_ns = at(0.999);
  l.max_ns = static_cast<double>(*std::max_element(ns.begin(), ns.end()));
  return l;
}

// Reads n bytes of its own memory, one load per cache line, so that what the
// allocator touched is no longer in the CPU's caches.
class CacheEvictor {
 public:
  explicit CacheEvictor(std::size_t n) : buf_(n, 1) {}
  void run() {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < buf_.size(); i += 64) sum += buf_[i];
    sink_ = sink_ + sum;
  }

 private:
  std::vector<unsigned char> buf_;
  volatile std::uint64_t sink_ = 0;
};

std::uint32_t elapsed_ns(Clock::time_point a, Clock::time_point b) {
  auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
  return d > 0xffffffffLL ? 0xffffffffu : static_cast<std::uint32_t>(d);
}

// Samples the series after every event into at most `cap` buckets (cap even, >= 2):
// when they are all used, neighbours merge and buckets hold twice the events.
class TimelineSampler {
 public:
  explicit TimelineSampler(std::size_t cap) : cap_(std::max<std::size_t>(2, cap + (cap & 1))) { out_.reserve(cap_); }
  void add(std::uint64_t event, std::uint64_t time_us, const std::uint64_t (&v)[kTimelineSeries]) {
    if (n_ == 0) {
      cur_ = TimelineBucket{};
      cur_.first_event = event;
      for (int i = 0; i < kTimelineSeries; ++i) cur_.lo[i] = cur_.hi[i] = {v[i], event, time_us};
    } else {
      for (int i = 0; i < kTimelineSeries; ++i) {
        if (v[i] < cur_.lo[i].value) cur_.lo[i] = {v[i], event, time_us};
        if (v[i] > cur_.hi[i].value) cur_.hi[i] = {v[i], event, time_us};
      }
    }
    cur_.last_event = event;
    if (++n_ < stride_) return;
    n_ = 0;
    out_.push_back(cur_);
    if (out_.size() < cap_) return;
    for (std::size_t i = 0; i < cap_ / 2; ++i) out_[i] = merge(out_[2 * i], out_[2 * i + 1]);
    out_.resize(cap_ / 2);
    stride_ *= 2;
  }
  std::vector<TimelineBucket> finish() {
    if (n_) out_.push_back(cur_);
    n_ = 0;
    return std::move(out_);
  }

 private:
  static TimelineBucket merge(const TimelineBucket& a, const TimelineBucket& b) {
    TimelineBucket m = a;
    m.last_event = b.last_event;
    for (int i = 0; i < kTimelineSeries; ++i) {
      if (b.lo[i].value < m.lo[i].value) m.lo[i] = b.lo[i];
      if (b.hi[i].value > m.hi[i].value) m.hi[i] = b.hi[i];
    }
    return m;
  }
  std::size_t cap_;
  std::uint64_t stride_ = 1, n_ = 0;
  TimelineBucket cur_;
  std::vector<TimelineBucket> out_;
};

}  // namespace

ReplayResult replay(const std::string& path, const ReplayConfig& cfg) {
  ReplayResult r;
  r.trace = path;
  r.device_lag_us = cfg.device_lag_us;
  Reader reader(path);
  prim::HostBackend* lagged = nullptr;  // the backend whose clock follows the trace (device lag)
  auto backend = [&]() -> std::unique_ptr<prim::Backend> {
    if (cfg.device_lag_us == 0) return nullptr;
    if (cfg.options.backend != "host")
      throw_error(Errc::invalid_argument, "a device lag is emulated on the host backend only (backend '" +
                                              cfg.options.backend + "')");
    auto be = std::make_unique<prim::HostBackend>(cfg.device, cfg.options.granularity, cfg.options.host_memory_limit);
    be->set_lag(cfg.device_lag_us);
    lagged = be.get();
    return be;
  }();
  core::DeviceAllocator dev = backend ? core::DeviceAllocator(std::move(backend), cfg.options)
                                      : core::DeviceAllocator(cfg.device, cfg.options);
  std::unordered_map<std::uint64_t, std::pair<void*, std::uint64_t>> live;  // trace ptr -> (ours, size)
  std::unordered_map<std::uint64_t, prim::Stream> streams;                 // trace stream -> ours
  std::vector<std::uint32_t> alloc_ns, free_ns, cold_alloc_ns, cold_free_ns;
  std::unique_ptr<CacheEvictor> evictor;
  if (cfg.cold_every) evictor = std::make_unique<CacheEvictor>(cfg.cold_bytes);
  auto cold = [&](std::uint64_t n) { return evictor && n % cfg.cold_every == 0; };
  std::uint64_t cur_live = 0, native = 0;
  auto stream_for = [&](std::uint64_t id) -> prim::Stream {
    if (id == 0) return nullptr;
    auto it = streams.find(id);
    if (it != streams.end()) return it->second;
    return streams.emplace(id, dev.backend().create_stream()).first->second;
  };
  auto cleanup = [&] {
    for (auto& [tp, v] : live) dev.free(v.first);
    live.clear();
    for (auto& [id, s] : streams) dev.backend().destroy_stream(s);
    streams.clear();
  };
  const auto t0 = Clock::now();
  std::uint64_t first_us = 0, last_us = 0;
  Event e;
  // Maps so far after every 256 events, to find the second half's once the count is known.
  constexpr std::uint64_t kEvery = 256;
  std::vector<std::uint64_t> maps_at;
  std::unique_ptr<TimelineSampler> timeline;
  if (cfg.timeline_buckets) timeline = std::make_unique<TimelineSampler>(cfg.timeline_buckets);
  try {
    while (reader.next(e)) {
      ++r.events;
      if (cfg.progress && (r.events & 0xffff) == 0) cfg.progress(reader.progress(), r.events);
      if (r.events % kEvery == 0) maps_at.push_back(dev.stats().calls[prim::Op::map]);
      if (lagged) lagged->advance_clock(e.time_us);
      if (r.events == 1) first_us = e.time_us;
      last_us = std::max(last_us, e.time_us);
      switch (e.action) {
        case Action::allocate: {
          if (live.count(e.ptr))
            throw_error(Errc::invalid_argument, path + ":" + std::to_string(reader.line()) + ": pointer " +
                                                    hex_ptr(e.ptr) + " allocated twice without a free");
          ++r.allocs;
          prim::Stream s = stream_for(e.stream);
          void* p = nullptr;
          const bool is_cold = cold(r.allocs);
          if (is_cold) evictor->run();
          auto a = Clock::now();
          try {
            p = dev.alloc(e.size, s);
          } catch (const Error& err) {
            if (err.code() != Errc::out_of_memory) throw;
            if (r.ooms++ == 0) {
              r.first_oom_line = reader.line();
              r.first_oom = err.what();
            }
            break;
          }
          (is_cold ? cold_alloc_ns : alloc_ns).push_back(elapsed_ns(a, Clock::now()));
          live.emplace(e.ptr, std::make_pair(p, e.size));
          cur_live += e.size;
          r.peak_live = std::max(r.peak_live, cur_live);
          break;
        }
        case Action::free: {
          auto it = live.find(e.ptr);
          if (it == live.end()) {
            ++r.unmatched_frees;
            break;
          }
          ++r.frees;
          const bool is_cold = cold(r.frees);
          if (is_cold) evictor->run();
          auto a = Clock::now();
          dev.free(it->second.first);
          (is_cold ? cold_free_ns : free_ns).push_back(elapsed_ns(a, Clock::now()));
          cur_live -= it->second.second;
          live.erase(it);
          break;
        }
        case Action::segment_alloc:
          ++r.segment_events;
          native += e.size;
          r.native_peak_reserved = std::max(r.native_peak_reserved, native);
          break;
        case Action::segment_free:
          ++r.segment_events;
          native -= std::min(native, e.size);
          break;
        case Action::allocate_failure:  // RMM logs a request its allocator refused: counted, not replayed
          ++r.recorded_failures;
          break;
      }
      if (timeline) {
        const std::uint64_t reserved = dev.reserved_bytes();
        const std::uint64_t v[kTimelineSeries] = {cur_live, reserved, native, reserved - std::min(reserved, cur_live),
                                                  native - std::min(native, cur_live)};
        timeline->add(r.events, e.time_us, v);
      }
    }
  } catch (...) {
    cleanup();
    throw;
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.span_us = last_us - std::min(first_us, last_us);
  r.first_time_us = first_us;
  if (timeline) r.timeline = timeline->finish();
  if (cfg.progress) cfg.progress(1.0, r.events);
  if (cfg.check) dev.check();
  r.stats = dev.stats();
  const std::uint64_t half = r.events / 2 / kEvery;  // snapshots taken before the middle
  r.late_maps = r.stats.calls[prim::Op::map] - (half ? maps_at[half - 1] : 0);
  cleanup();
  r.alloc_latency = summarize(alloc_ns);
  r.free_latency = summarize(free_ns);
  r.cold_alloc_latency = summarize(cold_alloc_ns);
  r.cold_free_latency = summarize(cold_free_ns);
  if (r.stats.reserved.peak) r.utilization = static_cast<double>(r.peak_live) / static_cast<double>(r.stats.reserved.peak);
  if (r.native_peak_reserved)
    r.native_utilization = static_cast<double>(r.peak_live) / static_cast<double>(r.native_peak_reserved);
  return r;
}

namespace {
void put_latency(std::ostringstream& o, const char* name, const Latency& l) {
  o << "\"" << name << "\":{\"p50_ns\":" << l.p50_ns << ",\"p90_ns\":" << l.p90_ns << ",\"p99_ns\":" << l.p99_ns
    << ",\"p999_ns\":" << l.p999_ns << ",\"max_ns\":" << l.max_ns << ",\"mean_ns\":" << l.mean_ns << "}";
}
std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}
std::string fmt(double v, int decimals) { return fixed(v, decimals); }
}  // namespace

std::string replay_json(const ReplayResult& r) {
  std::ostringstream o;
  o << "{\"trace\":\"" << json_escape(r.trace) << "\",\"events\":" << r.events << ",\"allocs\":" << r.allocs
    << ",\"frees\":" << r.frees << ",\"segment_events\":" << r.segment_events << ",\"ooms\":" << r.ooms
    << ",\"first_oom_line\":" << r.first_oom_line << ",\"first_oom\":\"" << json_escape(r.first_oom) << "\""
    << ",\"unmatched_frees\":" << r.unmatched_frees << ",\"recorded_failures\":" << r.recorded_failures
    << ",\"peak_live_bytes\":" << r.peak_live
    << ",\"peak_reserved_bytes\":" << r.stats.reserved.peak << ",\"utilization\":" << fmt(r.utilization, 6)
    << ",\"native_peak_reserved_bytes\":" << r.native_peak_reserved
    << ",\"native_utilization\":" << fmt(r.native_utilization, 6) << ",\"late_maps\":" << r.late_maps
    << ",\"device_lag_us\":" << r.device_lag_us << ",\"span_us\":" << r.span_us
    << ",\"seconds\":" << fmt(r.seconds, 3)
    << ",";
  put_latency(o, "alloc_latency", r.alloc_latency);
  o << ",";
  put_latency(o, "free_latency", r.free_latency);
  if (r.cold_alloc_latency.max_ns > 0) {
    o << ",";
    put_latency(o, "cold_alloc_latency", r.cold_alloc_latency);
    o << ",";
    put_latency(o, "cold_free_latency", r.cold_free_latency);
  }
  o << ",\"allocator\":" << core::stats_json(r.stats) << "}";
  return o.str();
}

std::string replay_text(const ReplayResult& r) {
  std::ostringstream o;
  const core::Stats& s = r.stats;
  auto us = [](double ns) { return fmt(ns / 1000.0, 2) + " us"; };
  o << "trace             " << r.trace << "\n"
    << "events            " << r.events << " (" << r.allocs << " allocs, " << r.frees << " frees, " << r.segment_events
    << " segment events)\n"
    << (r.recorded_failures ? "recorded failures " + std::to_string(r.recorded_failures) +
                                  " allocations the recording allocator refused (\"allocate failure\", not replayed)\n"
                            : std::string())
    << "allocator         " << s.backend << " backend, page " << human_bytes(s.page_size) << ", cap "
    << (s.memory_cap ? human_bytes(s.memory_cap) : std::string("none"))
    << (r.device_lag_us ? ", device lag " + std::to_string(r.device_lag_us) + " us of trace time" : std::string())
    << "\n"
    << (r.device_lag_us && r.span_us == 0 ? "warning           the trace has no timestamps (Time column absent or constant): with\n"
                                              "                  --device-lag no work completes unless the allocator waits for it\n"
                                            : "")
    << "peak live         " << format_bytes(r.peak_live) << "\n"
    << "peak reserved     " << format_bytes(s.reserved.peak) << "\n"
    << "utilization       " << fmt(r.utilization, 4) << "  (peak live / peak reserved)\n";
  if (r.native_peak_reserved)
    o << "native baseline   peak reserved " << format_bytes(r.native_peak_reserved) << ", utilization "
      << fmt(r.native_utilization, 4) << "  (recording allocator's segment events)\n";
  o << "requests          " << s.small_allocs << " small, " << (r.allocs - s.small_allocs - r.ooms) << " large: "
    << s.cache_hits << " cache hits (" << s.stitch_reuses << " from stitched views), " << s.stitches
    << " stitches, " << s.repairs << " repairs, " << s.grows << " grows (" << s.pages_created << " pages)\n"
    << "slow paths        " << s.slow_paths << " requests with no cached fit at once: " << fmt(s.slow_path_ns / 1e6, 1)
    << " ms in them, backend calls included\n"
    << "host time         " << fmt(s.host_ns / 1e6, 1) << " ms inside alloc and free in all (slow paths included)\n"
    << "second half       " << r.late_maps << " handles mapped in the trace's second half (none once a workload has settled)\n";
  if (r.ooms)
    o << "out of memory     " << r.ooms << " allocations refused; the first, at line " << r.first_oom_line << ": "
      << r.first_oom << "\n";
  if (r.unmatched_frees) o << "unmatched frees   " << r.unmatched_frees << "\n";
  o << "primitive calls  ";
  for (int i = 0; i < prim::kNumOps; ++i) o << " " << prim::op_name(static_cast<prim::Op>(i)) << "=" << s.calls.calls[i];
  o << "\n"
    << "time in them      ";
  for (int i = 0; i < prim::kNumOps; ++i)
    if (s.calls.calls[i]) o << " " << prim::op_name(static_cast<prim::Op>(i)) << "=" << fmt(static_cast<double>(s.calls.ns[i]) / 1e6, 1) << " ms";
  o << "\n";
  if (r.alloc_latency.max_ns == 0)  // --cold 1: every sample is a cold one
    o << "alloc latency     none warm (every allocation and free timed cold)\n";
  else
    o << "alloc latency     p50 " << us(r.alloc_latency.p50_ns) << ", p90 " << us(r.alloc_latency.p90_ns) << ", p99 "
    << us(r.alloc_latency.p99_ns) << ", p99.9 " << us(r.alloc_latency.p999_ns) << ", max " << us(r.alloc_latency.max_ns)
    << "\n"
    << "free latency      p50 " << us(r.free_latency.p50_ns) << ", p99 " << us(r.free_latency.p99_ns) << ", max "
    << us(r.free_latency.max_ns) << "\n";
  if (r.cold_alloc_latency.max_ns > 0)
    o << "cold alloc        p50 " << us(r.cold_alloc_latency.p50_ns) << ", p90 " << us(r.cold_alloc_latency.p90_ns)
      << ", mean " << us(r.cold_alloc_latency.mean_ns) << "  (CPU caches evicted first)\n"
      << "cold free         p50 " << us(r.cold_free_latency.p50_ns) << ", p90 " << us(r.cold_free_latency.p90_ns)
      << ", mean " << us(r.cold_free_latency.mean_ns) << "\n";
  o << "replay time       " << fmt(r.seconds, 2) << " s\n";
  return o.str();
}

std::string sweep_text(const std::string& key, const std::vector<std::string>& values, const std::vector<ReplayResult>& rs) {
  std::ostringstream o;
  if (!rs.empty()) o << "trace " << rs.front().trace << ", " << rs.front().stats.backend << " backend\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %8s %14s %8s %8s %9s %7s %10s %8s %7s %10s %12s %8s\n", key.c_str(), "util",
                "peak reserved", "create", "map", "late map", "unmap", "set_access", "stitches", "repairs", "driver ms",
                "alloc p99 us", "refused");
  o << line;
  for (std::size_t i = 0; i < rs.size() && i < values.size(); ++i) {
    const core::Stats& s = rs[i].stats;
    std::snprintf(line, sizeof line, "%-14s %8.4f %14s %8llu %8llu %9llu %7llu %10llu %8llu %7llu %10.1f %12.2f %8llu\n",
                  values[i].c_str(), rs[i].utilization, human_bytes(s.reserved.peak).c_str(),
                  static_cast<unsigned long long>(s.calls[prim::Op::create]),
                  static_cast<unsigned long long>(s.calls[prim::Op::map]),
                  static_cast<unsigned long long>(rs[i].late_maps),
                  static_cast<unsigned long long>(s.calls[prim::Op::unmap]),
                  static_cast<unsigned long long>(s.calls[prim::Op::set_access]),
                  static_cast<unsigned long long>(s.stitches), static_cast<unsigned long long>(s.repairs),
                  static_cast<double>(s.calls.total_ns()) / 1e6, rs[i].alloc_latency.p99_ns / 1000.0,
                  static_cast<unsigned long long>(rs[i].ooms));
    o << line;
  }
  o << "map = handles mapped (cuMemSetAccess and cuMemUnmap cost per handle on the GPU); late map = those in the\n"
       "trace's second half (steady-state churn); driver ms = time inside the backend's calls (host mmap here; the\n"
       "driver's with --backend cuda); refused = allocations the cap refused: a row with any replayed less than\n"
       "the whole trace, its util and peak are not comparable with the others\n";
  return o.str();
}

std::string sweep_json(const std::string& key, const std::vector<std::string>& values, const std::vector<ReplayResult>& rs) {
  std::ostringstream o;
  o << "{\"key\":\"" << json_escape(key) << "\",\"runs\":[";
  for (std::size_t i = 0; i < rs.size() && i < values.size(); ++i)
    o << (i ? "," : "") << "{\"value\":\"" << json_escape(values[i]) << "\",\"replay\":" << replay_json(rs[i]) << "}";
  o << "]}";
  return o.str();
}

}  // namespace memlake::trace
