// The latest-start planner (latest_start.h; docs/design/tiering.md).
#include "plan/latest_start.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "plan/simulator.h"

namespace memlake::plan {
namespace {

struct Candidate {
  TensorId t;
  int kernel;  // its one use
  double at;   // the use's start time in the iteration
  std::uint64_t bytes;
};

struct Timing {
  std::vector<int> issue;       // per candidate index (tiered only)
  std::vector<double> start;
  double stall = 0;
};

// Latest starts of the tiered candidates' restores (FIFO on one link,
// latest first), their issue kernels and the predicted stall.
Timing schedule(const std::vector<double>& starts, const std::vector<Candidate>& c,
                const std::vector<std::size_t>& tiered, const std::vector<double>& in_s_per_byte) {
  Timing tm;
  tm.issue.assign(c.size(), -1);
  tm.start.assign(c.size(), 0);
  double latest = std::numeric_limits<double>::infinity();
  for (auto it = tiered.rbegin(); it != tiered.rend(); ++it) {
    const std::size_t i = *it;
    const double finish = std::min(c[i].at, latest);
    const double st = finish - static_cast<double>(c[i].bytes) * in_s_per_byte[i];
    latest = st;
    tm.start[i] = st;
    // The last kernel before the use that starts at or before st (else the first).
    const auto first = starts.begin(), end = starts.begin() + c[i].kernel;
    const int q = static_cast<int>(std::upper_bound(first, end, st) - first) - 1;
    tm.issue[i] = std::max(q, 0);
    if (st < 0) tm.stall = std::max(tm.stall, -st);
  }
  return tm;
}

// Most tiered bytes on the GPU at once beyond their use: restored ahead (from
// the issue to the use) or leaving (from the use until the copy is done).
std::uint64_t window(const Profile& p, const std::vector<Candidate>& c, const std::vector<std::size_t>& tiered,
                     const Timing& tm, const std::vector<double>& out_s_per_byte) {
  std::vector<std::pair<double, std::int64_t>> ev;
  ev.reserve(2 * tiered.size());
  for (std::size_t i : tiered) {
    const auto b = static_cast<std::int64_t>(c[i].bytes);
    ev.emplace_back(p.start(tm.issue[i]), b);
    ev.emplace_back(c[i].at + static_cast<double>(b) * out_s_per_byte[i], -b);
  }
  std::sort(ev.begin(), ev.end());  // at one time, frees (negative) first
  std::int64_t cur = 0, peak = 0;
  for (const auto& e : ev) peak = std::max(peak, cur += e.second);
  return static_cast<std::uint64_t>(peak);
}

std::string gib(std::uint64_t b) {
  std::string s;
  appendf(s, "%llu bytes (%.2f GiB)", static_cast<unsigned long long>(b), static_cast<double>(b) / (1u << 30));
  return s;
}

}  // namespace

LatestStartPlan plan_latest_start(const Profile& p, const Machine& m) {
  const int K = static_cast<int>(p.kernels.size());
  std::vector<Candidate> c;
  std::uint64_t cand_bytes = 0;
  for (std::size_t ti = 0; ti < p.tensors.size(); ++ti) {
    const auto t = static_cast<TensorId>(ti);
    if (!p.tensors[t].persistent || p.uses(t).size() != 1) continue;
    const int k = p.uses(t).front();
    c.push_back({t, k, p.start(k), p.tensors[t].bytes});
    cand_bytes += p.tensors[t].bytes;
  }
  std::stable_sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) { return a.kernel < b.kernel; });
  const std::uint64_t rest = p.peak_live_bytes() - cand_bytes;  // candidates are alive at every kernel
  if (rest > m.gpu_bytes)
    throw_error(Errc::out_of_memory, "the iteration needs " + gib(rest) + " at its peak beside the tensors that can "
                                     "move, more than the " + gib(m.gpu_bytes) + " the budget gives");
  LatestStartPlan out;
  out.room = m.gpu_bytes - rest;
  out.issue.assign(p.tensors.size(), -1);
  out.start_s.assign(p.tensors.size(), 0);
  const std::uint64_t room = out.room;
  const double out_spb = 1.0 / m.pcie_out_bps;
  const double host_spb = 1.0 / m.pcie_bps, ssd_spb = 1.0 / std::min(m.ssd_read_bps, m.pcie_bps);
  const double ssd_out_spb = 1.0 / std::min(m.ssd_write_bps, m.pcie_out_bps);
  std::vector<double> starts(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) starts[k] = p.start(k);
  std::vector<std::uint64_t> prefix(c.size() + 1, 0);
  for (std::size_t i = 0; i < c.size(); ++i) prefix[i + 1] = prefix[i] + c[i].bytes;

  // Tiers of a tiered set: the host while it has room, in order of use, then SSD.
  std::vector<double> in_spb(c.size(), host_spb), out_spb_v(c.size(), out_spb);
  std::vector<char> on_ssd(c.size(), 0);
  auto assign_tiers = [&](const std::vector<std::size_t>& tiered) {
    std::uint64_t host = 0;
    for (std::size_t i : tiered) {
      on_ssd[i] = host + c[i].bytes > m.host_bytes;
      if (!on_ssd[i]) host += c[i].bytes;
      in_spb[i] = on_ssd[i] ? ssd_spb : host_spb;
      out_spb_v[i] = on_ssd[i] ? ssd_out_spb : out_spb;
    }
  };
  std::vector<std::size_t> tiered;
  Timing tm;
  bool found = false;
  for (std::size_t k = c.size() + 1; k-- > 0;) {  // keep candidates [0, k) resident
    if (prefix[k] > room) continue;
    tiered.clear();
    for (std::size_t i = k; i < c.size(); ++i)
      if (c[i].bytes > 0) tiered.push_back(i);
    assign_tiers(tiered);
    tm = schedule(starts, c, tiered, in_spb);
    const std::uint64_t w = window(p, c, tiered, tm, out_spb_v);
    if (prefix[k] + w <= room) {
      out.resident_bytes = prefix[k];
      out.window_bytes = w;
      out.stall_s = tm.stall;
      found = true;
      break;
    }
  }
  if (!found) {
    // Even with every candidate tiered the restores ahead do not fit: each
    // one comes back only at its own use (no lookahead), one at a time.
    std::size_t big = 0;
    for (std::size_t i = 0; i < c.size(); ++i)
      if (c[i].bytes > c[big].bytes) big = i;
    if (c[big].bytes > room)
      throw_error(Errc::out_of_memory, "tensor " + p.tensors[c[big].t].name + " needs " + gib(c[big].bytes) +
                                           " on the GPU at its use, more than the " + gib(room) +
                                           " the budget leaves for the tensors that move");
    tiered.clear();
    for (std::size_t i = 0; i < c.size(); ++i)
      if (c[i].bytes > 0) tiered.push_back(i);
    assign_tiers(tiered);
    tm = Timing{};
    tm.issue.assign(c.size(), -1);
    tm.start.assign(c.size(), 0);
    for (std::size_t i : tiered) {
      tm.issue[i] = c[i].kernel;
      tm.start[i] = c[i].at;
      out.stall_s += static_cast<double>(c[i].bytes) * in_spb[i];
    }
    out.resident_bytes = 0;
    out.window_bytes = c[big].bytes;
  }
  std::vector<char> is_tiered(c.size(), 0);
  for (std::size_t i : tiered) is_tiered[i] = 1;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!is_tiered[i]) {
      out.resident.push_back(c[i].t);
      continue;
    }
    out.tiered.push_back(c[i].t);
    out.issue[c[i].t] = tm.issue[i];
    out.start_s[c[i].t] = tm.start[i];
    out.link_s += static_cast<double>(c[i].bytes) * std::max(in_spb[i], out_spb_v[i]);
    if (K > 1)
      out.schedule.moves.push_back({Move::Evict, c[i].t, (c[i].kernel + 1) % K, on_ssd[i] ? Tier::Ssd : Tier::Host});
    out.schedule.moves.push_back({Move::Prefetch, c[i].t, tm.issue[i], Tier::Gpu});
  }
  out.schedule.victim = VictimRule::FurthestNextUse;
  out.schedule.sort();
  return out;
}

std::string plan_report(const Profile& p, const Machine& m, const std::string& policy) {
  std::string s = "policy " + policy + "\n";
  Schedule sched;
  if (policy == "latest-start") {
    LatestStartPlan lp = plan_latest_start(p, m);
    appendf(s, "room %llu\nresident_bytes %llu\nwindow_bytes %llu\nstall_s %.9g\nlink_s %.9g\n",
            static_cast<unsigned long long>(lp.room), static_cast<unsigned long long>(lp.resident_bytes),
            static_cast<unsigned long long>(lp.window_bytes), lp.stall_s, lp.link_s);
    std::vector<Tier> dest(p.tensors.size(), Tier::Gpu);
    for (const Move& mv : lp.schedule.moves)
      if (mv.kind == Move::Evict) dest[mv.tensor] = mv.tier;
    for (TensorId t : lp.resident) appendf(s, "tensor %d resident -1 0 gpu\n", t);
    for (TensorId t : lp.tiered)
      appendf(s, "tensor %d tiered %d %.9g %s\n", t, lp.issue[t], lp.start_s[t], tier_name(dest[t]));
    sched = std::move(lp.schedule);
  } else {
    sched = make_planner(policy)->plan(p, m);
  }
  for (const Move& mv : sched.moves)
    appendf(s, "move %s %d %d %s\n", mv.kind == Move::Evict ? "evict" : "prefetch", mv.tensor, mv.at,
            tier_name(mv.tier));
  const SimResult r = simulate(p, m, sched);
  appendf(s, "sim iteration_s %.9g ideal_s %.9g stall_s %.9g to_host %llu from_host %llu to_ssd %llu from_ssd %llu\n",
          r.iteration_s, r.ideal_s, r.stall_s, static_cast<unsigned long long>(r.to_host),
          static_cast<unsigned long long>(r.from_host), static_cast<unsigned long long>(r.to_ssd),
          static_cast<unsigned long long>(r.from_ssd));
  return s;
}

namespace {

class LatestStartPlanner final : public Planner {
 public:
  const char* name() const override { return "latest-start"; }
  Schedule plan(const Profile& p, const Machine& m) const override {
    try {
      return plan_latest_start(p, m).schedule;
    } catch (const Error& e) {
      if (e.code() != Errc::out_of_memory) throw;
      Schedule s;
      s.victim = VictimRule::FurthestNextUse;
      return s;
    }
  }
};

}  // namespace

std::unique_ptr<Planner> make_latest_start_planner() { return std::make_unique<LatestStartPlanner>(); }

}  // namespace memlake::plan
