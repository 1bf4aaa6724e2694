// What the planners share: inactive intervals and the per-kernel estimates
// (memory, link bandwidth budgets, host occupancy) they plan against.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/machine.h"
#include "plan/profile.h"

namespace memlake::plan {

// A gap between two uses of a tensor: kernels [start, end) do not use it;
// `end` uses it again. Looped: the gap wraps past the iteration's end
// (persistent tensors), end < start.
struct Interval {
  TensorId tensor;
  int start, end;
  bool looped;
  double seconds;  // unconstrained time from start to end
  int span(const Profile& p) const {
    return looped ? end + static_cast<int>(p.kernels.size()) - start : end - start;
  }
};
std::vector<Interval> inactive_intervals(const Profile& p);

// One-way copy time estimates: latencies plus bytes over bandwidth.
double ssd_move_seconds(const Machine& m, std::uint64_t bytes);
double host_move_seconds(const Machine& m, std::uint64_t bytes);

enum class Link { HostIn, SsdIn, HostOut, SsdOut };

class PlanState {
 public:
  PlanState(const Profile& p, const Machine& m, double target_fraction);
  double target() const { return target_; }
  double mem(int k) const { return mem_[k]; }
  bool fits() const;                      // every kernel under the target
  bool over_target(int start, int end) const;  // any kernel in [start,end) (wrapping) over it
  // Bytes x seconds above the target that evicting iv's tensor would relieve,
  // between the middle of its SSD eviction and the middle of its prefetch.
  double relief_area(const Interval& iv) const;
  // Kernel in [from, to) during which unconstrained time t falls; -1 if none.
  int index_at_time(double t, int from, int to) const;
  // The same on the time line of two iterations back to back (index < 2K).
  int index_at_time_ext(double t, int from, int to) const;
  double time_ext(int k) const;
  double available(Link l, int k) const;
  bool has_room(Link l, int from, int to) const;
  // Moving `bytes` from kernel `from` on: the kernel by which it is through.
  int fwd_index(Link l, std::uint64_t bytes, int from) const;
  // Moving `bytes` to be done by kernel `need`: the kernel it must start at.
  int back_index(Link l, std::uint64_t bytes, int need) const;
  void consume(Link l, std::uint64_t bytes, int from);
  bool host_fits(std::uint64_t bytes) const;
  void host_add(std::uint64_t bytes, int start, int end);  // end may exceed K (wraps)
  // mem[k] -= bytes (or += with add) for k in [from, to).
  void relieve(std::uint64_t bytes, int from, int to, bool add = false);
  void relieve_wrapped(std::uint64_t bytes, int from, int to);  // indices mod K

 private:
  const Profile& p_;
  const Machine& m_;
  int K_;
  double target_;
  std::vector<double> mem_, host_;
  std::vector<double> used_[4];
  double host_line_;
};

}  // namespace memlake::plan
