// Executes a schedule on a machine model, one kernel after the other, and
// times it: the cost model behind `memlake sim`.
//
// Model (tensor-granular; see docs/design/planner.md):
// - A kernel starts when every tensor it uses is on the GPU, then runs for its
//   measured time. Copies overlap with kernels.
// - Four copy queues: host->GPU, SSD->GPU, GPU->host, GPU->SSD, each FIFO,
//   the head of each moving at the same time. Per direction the PCIe link is
//   shared: the SSD stream gets its own bandwidth (at most the link's), the
//   host stream the rest. Each copy first pays its latency.
// - A prefetch takes GPU memory when it starts; if there is no room it waits,
//   or (schedule.prefetch_evicts, as UVM) evicts victims. An evicted tensor's
//   memory is free when its copy ends.
// - On demand: a kernel that needs a tensor elsewhere fetches it ahead of
//   every prefetch, the one already moving included (it pauses and resumes
//   after: G10's batcher serves page faults before prefetches in every PCIe
//   batch), and pays the fault latency once; when it needs room it evicts
//   victims (schedule.victim) to host, or to SSD when host is full.
// - Machine::overlap_arrivals (UVM, G10's simulator): a kernel may start while
//   its inputs arrive and ends when they have; a fetch may start against
//   pages still leaving. Off (strict): inputs first, memory never over.
// - Tensors are allocated at first use and freed after last use; persistent
//   ones survive the iteration. Two iterations run; the second is measured.
#pragma once

#include <cstdint>
#include <string>

#include "plan/planner.h"

namespace memlake::plan {

struct SimResult {
  double iteration_s = 0;  // the measured (second) iteration
  double ideal_s = 0;      // sum of kernel times
  double stall_s = 0;      // time kernels waited for data or room
  std::uint64_t to_host = 0, from_host = 0, to_ssd = 0, from_ssd = 0;  // bytes moved
  std::uint64_t demand_fetch_bytes = 0;  // part of from_* fetched on demand
  std::uint64_t demand_evict_bytes = 0;  // part of to_* evicted on demand
  std::uint64_t faults = 0;              // kernels that found a tensor missing
  std::uint64_t peak_gpu_bytes = 0;
  std::uint64_t peak_host_bytes = 0;
  // Audits (both iterations): kernels launched with a tensor not on the GPU
  // (only possible with overlap_arrivals), and whether GPU memory ever went
  // over its size (only with overlap_arrivals, where pages are pipelined).
  std::uint64_t launched_missing = 0;
  double fraction_of_ideal() const { return iteration_s > 0 ? ideal_s / iteration_s : 0; }
};

// Throws OutOfMemory (naming the kernel and sizes) when a kernel's own
// tensors do not fit the GPU, or the host and SSD cannot take what must leave.
SimResult simulate(const Profile& p, const Machine& m, const Schedule& s);

}  // namespace memlake::plan
