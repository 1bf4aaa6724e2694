// The latest-start planner: what memlake.torch.tier() executes, and one of the
// candidates memlake's planner weighs in the simulator (memlake_planner.cpp).
//
// It plans the tensors that are persistent and used by exactly one kernel of
// the iteration (optimizer states, stepped once per iteration; in tier() every
// tensor of the profile is one): each one left off the GPU is evicted right
// after its use and restored ahead of its next one. Restores share the
// host-to-device link in FIFO order, so each one's latest start is its use
// time, or the next restore's start if earlier, less its transfer time; it is
// issued before the last kernel that starts at or before that time. What stays
// resident is chosen so that resident bytes plus the bytes in flight at any
// time (restored ahead, or still leaving) fit the room the budget leaves
// beside everything else's peak; the earliest uses stay resident (their
// restores would have the least time to hide). A restore that cannot start in
// time is a predicted stall. When no resident prefix lets every restore hide,
// every candidate is tiered and each restore is issued as early as the room
// allows on the stalled iteration's timeline (bounded prefetch), at its use
// only when nothing earlier fits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/planner.h"

namespace memlake::plan {

struct LatestStartPlan {
  std::vector<TensorId> resident;   // candidates that stay on the GPU
  std::vector<TensorId> tiered;     // candidates that leave between uses
  std::vector<int> issue;           // per tensor: the kernel its restore is issued at (-1: not tiered)
  std::vector<double> start_s;      // per tensor: its restore's latest start (from the iteration's start)
  std::uint64_t room = 0;           // GPU bytes for the candidates: gpu_bytes less everything else's peak
  std::uint64_t resident_bytes = 0;
  std::uint64_t window_bytes = 0;   // most tiered bytes on the GPU at once beyond their use
  double stall_s = 0;               // predicted: how late the earliest restore starts
  double link_s = 0;                // the tiered bytes over the slower direction
  Schedule schedule;                // the same as moves: evict after each use, prefetch at `issue`
};

// Throws Errc::out_of_memory naming the tensor and the sizes when even one
// candidate at a time does not fit beside the rest (or the rest alone does not).
LatestStartPlan plan_latest_start(const Profile& p, const Machine& m);

// What memlake_plan (the C ABI) returns, one fact per line:
//   policy NAME
//   room BYTES / resident_bytes BYTES / window_bytes BYTES / stall_s S / link_s S   (latest-start only)
//   tensor ID resident|tiered ISSUE_KERNEL START_S host|ssd|gpu               (latest-start only)
//   move evict|prefetch TENSOR AT_KERNEL TIER
//   sim iteration_s S ideal_s S stall_s S to_host B from_host B to_ssd B from_ssd B
// (the sim line: the plan run in the simulator on the same machine).
std::string plan_report(const Profile& p, const Machine& m, const std::string& policy);

// The Planner face ("latest-start"): a profile it cannot plan gets an empty
// schedule (the executor's on-demand path).
std::unique_ptr<Planner> make_latest_start_planner();

}  // namespace memlake::plan
