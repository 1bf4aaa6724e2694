// Replays an allocation trace through a DeviceAllocator and measures it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/stats.h"

namespace memlake::trace {

struct ReplayConfig {
  Options options;          // backend, granularity, cap, stitch...
  int device = 0;
  bool check = false;       // run the allocator's full consistency check at the end
  // Cold-cache sampling: before every cold_every-th allocation and free, read
  // cold_bytes of other memory first (out of the clock), as a framework's own work
  // between two allocations does, and time that call separately. 0 = off.
  std::uint64_t cold_every = 0;
  std::size_t cold_bytes = std::size_t{64} << 20;
  // Device lag (host backend only): the device completes work this many
  // microseconds of trace time after it was queued, so frees are pending as
  // on a GPU that trails the host (a view cannot be unmapped or repaired
  // before its work is complete). 0 = work completes at once.
  std::uint64_t device_lag_us = 0;
  std::function<void(double fraction, std::uint64_t events)> progress;  // called now and then
  // Timeline (`memlake report`): at most this many buckets of consecutive events, each with the
  // lowest and highest value of every series in it (so peaks and troughs survive any length of
  // trace); 0 = none. Buckets double in length as the trace goes on: between half and all of
  // this many at the end.
  std::size_t timeline_buckets = 0;
};

// The series a timeline samples after every event.
enum TimelineSeries : int {
  kLive = 0,             // the trace's live requested bytes (as replayed: refused allocations excluded)
  kReserved,             // memlake's reserved (physical) bytes
  kNativeReserved,       // the recording allocator's, from the trace's segment events
  kOverhead,             // memlake reserved - live
  kNativeOverhead,       // native reserved - live (0 when below)
  kTimelineSeries
};

struct TimelineBucket {
  struct Extreme {
    std::uint64_t value = 0;
    std::uint64_t event = 0;    // the event (1-based) after which the series had this value
    std::uint64_t time_us = 0;  // its trace time
  };
  std::uint64_t first_event = 0, last_event = 0;
  Extreme lo[kTimelineSeries], hi[kTimelineSeries];
};

struct Latency {
  double p50_ns = 0, p90_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0, mean_ns = 0;
};

struct ReplayResult {
  std::string trace;
  std::uint64_t events = 0, allocs = 0, frees = 0, segment_events = 0;
  std::uint64_t ooms = 0;            // allocations the allocator refused (cap)
  std::uint64_t first_oom_line = 0;  // the trace line of the first refusal (0: none)
  std::string first_oom;             // its message: request, reserved, in use, free, cap
  std::uint64_t unmatched_frees = 0; // frees of pointers the trace never allocated (or that OOMed)
  std::uint64_t recorded_failures = 0;  // "allocate failure" lines: the recording allocator refused these
  std::uint64_t peak_live = 0;       // of the trace itself: max sum of live requested sizes
  std::uint64_t native_peak_reserved = 0;  // from segment events, 0 if the trace has none
  double utilization = 0;            // peak_live / stats.reserved.peak
  double native_utilization = 0;
  // Handles mapped in the trace's second half (by events, to within 256): a workload that
  // has settled maps nothing there; one whose shapes keep changing keeps re-mapping.
  std::uint64_t late_maps = 0;
  std::uint64_t device_lag_us = 0;   // as configured
  std::uint64_t span_us = 0;         // the trace's last timestamp minus its first
  std::uint64_t first_time_us = 0;   // the trace's first timestamp
  std::vector<TimelineBucket> timeline;  // ReplayConfig::timeline_buckets > 0
  Latency alloc_latency, free_latency;
  Latency cold_alloc_latency, cold_free_latency;  // the cold-cache samples (cold_every > 0)
  double seconds = 0;
  core::Stats stats;
};

// Throws Errc::invalid_argument for an unreadable file or a malformed line
// (the message names the line), after releasing everything it allocated.
ReplayResult replay(const std::string& path, const ReplayConfig& cfg);

std::string replay_json(const ReplayResult& r);
std::string replay_text(const ReplayResult& r);

// One row per value of a swept option (`memlake replay --sweep KEY=V1,V2`):
// utilization and driver calls side by side, to choose a setting for a
// workload from its trace. rs[i] was replayed with key = values[i].
std::string sweep_text(const std::string& key, const std::vector<std::string>& values, const std::vector<ReplayResult>& rs);
std::string sweep_json(const std::string& key, const std::vector<std::string>& values, const std::vector<ReplayResult>& rs);

}  // namespace memlake::trace
