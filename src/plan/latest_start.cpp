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
  std::uint64_t window = 0;  // bounded(): its own timeline's most bytes beyond their use
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

// When no resident prefix lets every restore hide, each restore is issued as
// early as the room allows: in use order, at the earliest kernel (no earlier
// than the previous restore's, no later than its use) from which its bytes
// fit beside the tiered bytes already on the GPU beyond their use (restored
// ahead, or leaving) until its own copy out is done. Its use is always a
// choice (the restore on demand). Times are those of the stalled iteration:
// each link runs its copies in order, a restore that arrives late pushes
// compute (and every later use) back, and the copies out of earlier uses
// finish during that wait. The stall is how far the last use is pushed back.
Timing bounded(const Profile& p, const std::vector<Candidate>& c, const std::vector<std::size_t>& tiered,
               const std::vector<double>& in_spb, const std::vector<double>& out_spb, std::uint64_t room) {
  Timing tm;
  tm.issue.assign(c.size(), -1);
  tm.start.assign(c.size(), 0);
  struct Span {
    double from, to;
    std::uint64_t bytes;
  };
  std::vector<Span> placed;
  // The most bytes of `placed` on the GPU at once within [a, b).
  auto load = [&](double a, double b) {
    auto at = [&](double t) {
      std::uint64_t x = 0;
      for (const Span& q : placed)
        if (q.from <= t && t < q.to) x += q.bytes;
      return x;
    };
    std::uint64_t best = at(a);
    for (const Span& q : placed)
      if (q.from > a && q.from < b) best = std::max(best, at(q.from));
    return best;
  };
  // Compute's delay from kernel `k` on: the delay after the last use at or before it.
  std::vector<std::pair<int, double>> delays;  // (use kernel, delay from its use on), in order
  auto delay_at = [&](int k) {
    auto it = std::upper_bound(delays.begin(), delays.end(), k, [](int x, const auto& d) { return x < d.first; });
    return it == delays.begin() ? 0.0 : std::prev(it)->second;
  };
  int lo = 0;
  double in_free = 0, out_free = 0, shift = 0;
  for (std::size_t i : tiered) {
    const int use = c[i].kernel;
    const double b = static_cast<double>(c[i].bytes);
    struct Try {
      double issue_t, begin, done, shift, end;
    };
    // Issued at kernel k; `room_at`: when its bytes find room (its issue, or
    // later for a restore at its use that waits for copies out to finish).
    auto attempt = [&](int k, double room_at = -1) {
      Try t;
      t.issue_t = std::max(p.start(k) + delay_at(k), room_at);
      t.begin = std::max(t.issue_t, in_free);
      t.done = t.begin + b * in_spb[i];
      t.shift = std::max(shift, t.done - c[i].at);
      t.end = std::max(c[i].at + t.shift, out_free) + b * out_spb[i];
      return t;
    };
    auto fits = [&](int k) {
      const Try t = attempt(k);
      return load(t.issue_t, t.end) + c[i].bytes <= room;
    };
    int k = use;
    if (lo < use) {
      if (fits(lo)) {
        k = lo;
      } else {  // the earliest issue that fits: a later one holds less
        int a = lo, z = use;
        while (z - a > 1) {
          const int mid = a + (z - a) / 2;
          (fits(mid) ? z : a) = mid;
        }
        k = z;
      }
    }
    lo = k;
    double room_at = -1;
    if (k == use && !fits(k)) {
      // Not even at its use: it waits (the runtime's out-of-memory retry) until
      // enough copies out have finished. Every span placed began no later than
      // this issue, so from here the bytes on the GPU only fall.
      const double from = attempt(k).issue_t;
      std::vector<double> ends;
      for (const Span& q : placed)
        if (q.to > from) ends.push_back(q.to);
      std::sort(ends.begin(), ends.end());
      for (double e : ends)
        if (load(e, e) + c[i].bytes <= room) {
          room_at = e;
          break;
        }
    }
    const Try t = attempt(k, room_at);
    tm.issue[i] = k;
    tm.start[i] = t.begin;
    placed.push_back(Span{t.issue_t, t.end, c[i].bytes});
    in_free = t.done;
    out_free = t.end;
    shift = t.shift;
    delays.emplace_back(use, shift);
  }
  tm.stall = shift;
  for (const Span& q : placed) tm.window = std::max(tm.window, load(q.from, q.from));
  return tm;
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
    // Even with every candidate tiered the restores ahead do not all fit:
    // each is issued as early as the room allows (bounded), at its own use
    // when nothing else fits.
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
    tm = bounded(p, c, tiered, in_spb, out_spb_v, room);
    out.stall_s = tm.stall;
    out.resident_bytes = 0;
    // What is on the GPU beyond its use (a restore at its use that found no
    // room waited for copies out in bounded(), so this stays within the room).
    out.window_bytes = std::max(tm.window, c[big].bytes);
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
