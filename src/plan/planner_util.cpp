#include "plan/planner_util.h"

#include <algorithm>

namespace memlake::plan {

std::vector<Interval> inactive_intervals(const Profile& p) {
  std::vector<Interval> out;
  const int K = static_cast<int>(p.kernels.size());
  for (std::size_t ti = 0; ti < p.tensors.size(); ++ti) {
    const TensorId t = static_cast<TensorId>(ti);
    const auto& u = p.uses(t);
    if (u.empty()) continue;
    for (std::size_t i = 0; i + 1 < u.size(); ++i)
      if (u[i + 1] > u[i] + 1) out.push_back({t, u[i] + 1, u[i + 1], false, p.start(u[i + 1]) - p.start(u[i] + 1)});
    if (!p.tensors[t].persistent) continue;
    const int start = u.back() + 1, first = u.front();
    if (start == K) {
      if (first > 0) out.push_back({t, 0, first, false, p.start(first)});
    } else {
      out.push_back({t, start, first, true, p.ideal_seconds() - p.start(start) + p.start(first)});
    }
  }
  return out;
}

double ssd_move_seconds(const Machine& m, std::uint64_t bytes) {
  return m.fault_latency_s + m.pcie_latency_s + m.ssd_write_latency_s + static_cast<double>(bytes) / m.ssd_write_bps;
}

double host_move_seconds(const Machine& m, std::uint64_t bytes) {
  return m.fault_latency_s + static_cast<double>(bytes) / m.pcie_bps;
}

PlanState::PlanState(const Profile& p, const Machine& m, double target_fraction)
    : p_(p), m_(m), K_(static_cast<int>(p.kernels.size())) {
  target_ = target_fraction * static_cast<double>(m.gpu_bytes);
  mem_.resize(K_);
  for (int k = 0; k < K_; ++k) mem_[k] = static_cast<double>(p.live_bytes(k));
  host_.assign(K_, 0.0);
  for (auto& u : used_) u.assign(K_, 0.0);
  host_line_ = static_cast<double>(m.host_bytes);
}

bool PlanState::fits() const {
  for (double x : mem_)
    if (x > target_) return false;
  return true;
}

bool PlanState::over_target(int start, int end) const {
  if (end < start) end += K_;
  for (int j = start; j < end; ++j)
    if (mem_[j % K_] > target_) return true;
  return false;
}

double PlanState::relief_area(const Interval& iv) const {
  const double b = static_cast<double>(p_.tensors[iv.tensor].bytes);
  double area = 0;
  if (!iv.looped) {
    const int om = fwd_index(Link::SsdOut, p_.tensors[iv.tensor].bytes / 2, iv.start);
    const int pm = back_index(Link::SsdIn, p_.tensors[iv.tensor].bytes / 2, iv.end);
    for (int j = om; j < pm; ++j)
      if (mem_[j] > target_) area += b * p_.kernels[j].seconds;
  } else {
    for (int j = iv.start; j < iv.end + K_; ++j)
      if (mem_[j % K_] > target_) area += b * p_.kernels[j % K_].seconds;
  }
  return area;
}

int PlanState::index_at_time(double t, int from, int to) const {
  // Largest j with start(j) <= t.
  int lo = 0, hi = K_;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (p_.start(mid) <= t) lo = mid;
    else hi = mid - 1;
  }
  if (lo >= K_ || !(t < p_.start(lo + 1))) return -1;
  return lo >= from && lo < to ? lo : -1;
}

double PlanState::time_ext(int k) const { return k <= K_ ? p_.start(k) : p_.ideal_seconds() + p_.start(k - K_); }

int PlanState::index_at_time_ext(double t, int from, int to) const {
  int lo = 0, hi = 2 * K_;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (time_ext(mid) <= t) lo = mid;
    else hi = mid - 1;
  }
  if (lo >= 2 * K_ || !(t < time_ext(lo + 1))) return -1;
  return lo >= from && lo < to ? lo : -1;
}

double PlanState::available(Link l, int k) const {
  const double dt = p_.kernels[k].seconds;
  const bool in = l == Link::HostIn || l == Link::SsdIn;
  const auto& host = used_[in ? static_cast<int>(Link::HostIn) : static_cast<int>(Link::HostOut)];
  const auto& ssd = used_[in ? static_cast<int>(Link::SsdIn) : static_cast<int>(Link::SsdOut)];
  const double link = m_.pcie_bps * dt - host[k] - ssd[k];
  if (l == Link::HostIn || l == Link::HostOut) return std::max(0.0, link);
  const double ssd_cap = (in ? m_.ssd_read_bps : m_.ssd_write_bps) * dt - ssd[k];
  return std::max(0.0, std::min(ssd_cap, link));
}

bool PlanState::has_room(Link l, int from, int to) const {
  for (int k = std::max(from, 0); k < std::min(to, K_); ++k)
    if (available(l, k) > 0) return true;
  return false;
}

int PlanState::fwd_index(Link l, std::uint64_t bytes, int from) const {
  double rest = static_cast<double>(bytes);
  int k = std::min(std::max(from, 0), K_ - 1);
  for (;;) {
    rest -= available(l, k);
    if (rest <= 0 || k == K_ - 1) return k;
    ++k;
  }
}

int PlanState::back_index(Link l, std::uint64_t bytes, int need) const {
  double rest = static_cast<double>(bytes);
  int k = std::min(std::max(need - 1, 0), K_ - 1);
  for (;;) {
    rest -= available(l, k);
    if (rest <= 0 || k == 0) return k;
    --k;
  }
}

void PlanState::consume(Link l, std::uint64_t bytes, int from) {
  double rest = static_cast<double>(bytes);
  for (int k = std::max(from, 0); rest > 0 && k < K_; ++k) {
    const double take = std::min(available(l, k), rest);
    used_[static_cast<int>(l)][k] += take;
    rest -= take;
  }
}

bool PlanState::host_fits(std::uint64_t bytes) const {
  const double top = *std::max_element(host_.begin(), host_.end());
  return top + static_cast<double>(bytes) <= host_line_;
}

void PlanState::host_add(std::uint64_t bytes, int start, int end) {
  for (int j = start; j < end; ++j) host_[j % K_] += static_cast<double>(bytes);
}

void PlanState::relieve(std::uint64_t bytes, int from, int to, bool add) {
  const double b = static_cast<double>(bytes);
  for (int j = std::max(from, 0); j < std::min(to, K_); ++j) mem_[j] += add ? b : -b;
}

void PlanState::relieve_wrapped(std::uint64_t bytes, int from, int to) {
  for (int j = from; j < to; ++j) mem_[((j % K_) + K_) % K_] -= static_cast<double>(bytes);
}

}  // namespace memlake::plan
