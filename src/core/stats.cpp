#include "core/stats.h"

#include "core/error.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace memlake::core {

void StatsRecorder::on_gauges(const Gauges& g) {
  s_.reserved.set(g.reserved);
  s_.mapped.set(g.mapped);
  s_.page_size = g.page_size;
  s_.memory_cap = g.memory_cap;
  s_.small_slabs = g.small_slabs;
  s_.views = g.views;
}

void StatsRecorder::on_alloc(std::size_t size, const AllocInfo& info, const Gauges& g) {
  if (info.path == Path::zero) return;
  ++s_.num_allocs;
  s_.requested.add(size);
  s_.allocated.add(info.rounded);
  mark_ = std::max(mark_, s_.allocated.current);
  s_.active.add(1);
  switch (info.path) {
    case Path::small: ++s_.small_allocs; break;
    case Path::fit: ++s_.cache_hits; break;
    case Path::fit_stitched:
      ++s_.cache_hits;
      ++s_.stitch_reuses;
      break;
    case Path::stitched:
    case Path::grown:
    case Path::zero: break;
  }
  if (info.stitch_made) ++s_.stitches;
  if (info.repaired) ++s_.repairs;
  if (info.slow_ns) {
    ++s_.slow_paths;
    s_.slow_path_ns += info.slow_ns;
  }
  if (info.pages_created) {
    ++s_.grows;
    s_.pages_created += info.pages_created;
  }
  on_gauges(g);
}

void StatsRecorder::on_free(const FreeInfo& info, const Gauges& g) {
  if (info.rounded == 0) return;
  ++s_.num_frees;
  s_.requested.sub(info.requested);
  s_.allocated.sub(info.rounded);
  s_.active.sub(1);
  on_gauges(g);
}

void StatsRecorder::reset_peaks() {
  for (Stat* st : {&s_.requested, &s_.allocated, &s_.reserved, &s_.mapped, &s_.active}) st->peak = st->current;
}

namespace {
void put_stat(std::string& o, const char* name, const Stat& s) {
  appendf(o, "\"%s\":{\"current\":%llu,\"peak\":%llu},", name, static_cast<unsigned long long>(s.current),
          static_cast<unsigned long long>(s.peak));
}
}  // namespace

// Built with snprintf, not iostreams: this runs inside host processes
// (Python, PyTorch) whose C++ runtime state is not ours to touch.
std::string stats_json(const Stats& s) {
  using ull = unsigned long long;
  std::string o;
  o.reserve(1024);
  // backend and uuid come from the backends: plain ASCII names and hex, nothing to escape.
  appendf(o, "{\"device\":%d,\"backend\":\"%s\",\"gpu_uuid\":\"%s\",\"page_size\":%llu,\"memory_cap\":%llu,", s.device,
          s.backend.c_str(), s.uuid.c_str(), static_cast<ull>(s.page_size), static_cast<ull>(s.memory_cap));
  put_stat(o, "requested_bytes", s.requested);
  put_stat(o, "allocated_bytes", s.allocated);
  put_stat(o, "reserved_bytes", s.reserved);
  put_stat(o, "mapped_bytes", s.mapped);
  put_stat(o, "active_blocks", s.active);
  double util = s.reserved.peak ? static_cast<double>(s.requested.peak) / static_cast<double>(s.reserved.peak) : 0.0;
  o += "\"utilization\":" + fixed(util, 6) + ",";
  appendf(o, "\"num_allocs\":%llu,\"num_frees\":%llu,\"num_ooms\":%llu,\"small_allocs\":%llu,",
          static_cast<ull>(s.num_allocs), static_cast<ull>(s.num_frees), static_cast<ull>(s.num_ooms),
          static_cast<ull>(s.small_allocs));
  appendf(o, "\"cache_hits\":%llu,\"stitch_reuses\":%llu,\"stitches\":%llu,\"grows\":%llu,\"pages_created\":%llu,\"repairs\":%llu,\"slow_paths\":%llu,\"slow_path_ns\":%llu,\"host_ns\":%llu,",
          static_cast<ull>(s.cache_hits), static_cast<ull>(s.stitch_reuses), static_cast<ull>(s.stitches),
          static_cast<ull>(s.grows), static_cast<ull>(s.pages_created), static_cast<ull>(s.repairs),
          static_cast<ull>(s.slow_paths), static_cast<ull>(s.slow_path_ns), static_cast<ull>(s.host_ns));
  appendf(o, "\"views\":%llu,\"stitched_views\":%llu,\"small_slabs\":%llu,\"largest_free_bytes\":%llu,",
          static_cast<ull>(s.views), static_cast<ull>(s.stitched_views), static_cast<ull>(s.small_slabs),
          static_cast<ull>(s.largest_free));
  auto per_op = [&](const char* key, const auto& values) {  // {"reserve":N,...}
    appendf(o, "\"%s\":{", key);
    for (int i = 0; i < prim::kNumOps; ++i)
      appendf(o, "%s\"%s\":%llu", i ? "," : "", prim::op_name(static_cast<prim::Op>(i)), static_cast<ull>(values[i]));
    o += "}";
  };
  per_op("primitive_calls", s.calls.calls);
  o += ",";
  per_op("primitive_ns", s.calls.ns);
  const Stats::Residency& r = s.residency;
  appendf(o, ",\"residency\":{\"asleep\":%s,\"sleeps\":%llu,\"wakes\":%llu,\"evictions\":%llu,\"restores\":%llu,"
             "\"bytes_evicted\":%llu,\"bytes_restored\":%llu,\"evicted_now\":%llu,\"evicted_bytes_now\":%llu,"
             "\"host_tier_bytes\":%llu,\"host_tier_used\":%llu,\"demotions\":%llu,\"disk_tier_used\":%llu,"
             "\"disk_written\":%llu,\"disk_read\":%llu,\"reclaimed_bytes\":%llu}",
          r.asleep ? "true" : "false", static_cast<ull>(r.sleeps), static_cast<ull>(r.wakes), static_cast<ull>(r.evictions),
          static_cast<ull>(r.restores), static_cast<ull>(r.bytes_evicted), static_cast<ull>(r.bytes_restored),
          static_cast<ull>(r.evicted_now), static_cast<ull>(r.evicted_bytes_now), static_cast<ull>(r.host_tier_bytes),
          static_cast<ull>(r.host_tier_used), static_cast<ull>(r.demotions), static_cast<ull>(r.disk_tier_used),
          static_cast<ull>(r.disk_written), static_cast<ull>(r.disk_read), static_cast<ull>(r.reclaimed_bytes));
  o += "}";
  return o;
}

}  // namespace memlake::core
