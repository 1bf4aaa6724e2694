// G10's planner (MICRO'23, section 4 "smart tensor migrations"), written
// from the paper and its artifact's observable behaviour.
//
// 1. Every gap between two uses of a tensor is an "inactive interval"
//    (weights: also the gap across the iteration boundary).
// 2. The memory each kernel would need with every tensor resident from birth
//    to death is estimated; kernels above 99% of GPU memory are "pressure".
// 3. Greedily, the interval that relieves the most pressure (bytes x time
//    spent above the line between the middle of its eviction and the middle
//    of its prefetch) is taken first. A long enough interval goes to SSD,
//    or to host memory when the SSD link is already full during its
//    eviction; a shorter one that still covers a host round trip goes to host.
//    Eviction and prefetch are placed against per-kernel bandwidth budgets
//    (bytes each link can move while that kernel runs), which they consume.
// 4. Finally each prefetch is moved as early as the memory estimate allows.
// What is not planned is left to the executor's LRU on demand.
#include <algorithm>
#include <queue>

#include "plan/planner_util.h"
#include "plan/policies.h"

namespace memlake::plan {
namespace {

class G10Planner final : public Planner {
 public:
  explicit G10Planner(G10Knobs k) : k_(k) {}
  const char* name() const override { return "g10"; }
  Schedule plan(const Profile& p, const Machine& m) const override {
    Schedule s;
    s.victim = VictimRule::LeastRecentlyUsed;
    s.prefetch_evicts = true;
    PlanState ps(p, m, k_.target_fraction);
    if (ps.fits()) return s;
    auto intervals = inactive_intervals(p);
    struct Rec {
      int interval, prefetch, clear;
    };
    std::vector<Rec> local;
    // Lazy greedy: the pressure an interval can relieve only shrinks as
    // others are taken, so a stale key is an upper bound.
    using Key = std::pair<double, double>;  // (area, time x bytes)
    std::priority_queue<std::pair<Key, int>> heap;
    for (std::size_t i = 0; i < intervals.size(); ++i) {
      const auto& iv = intervals[i];
      heap.push({{ps.relief_area(iv), iv.seconds * static_cast<double>(p.tensors[iv.tensor].bytes)},
                 static_cast<int>(i)});
    }
    // Once no interval relieves pressure in its middle, G10 still walks the
    // rest (in no particular order; here: longest x largest first).
    std::vector<int> rest;
    bool zero = false;
    std::size_t rest_pos = 0;
    while (!ps.fits()) {
      int i;
      if (!zero) {
        if (heap.empty()) break;
        auto [key, top] = heap.top();
        heap.pop();
        const double area = ps.relief_area(intervals[top]);
        if (area < key.first && !heap.empty() && Key{area, key.second} < heap.top().first) {
          heap.push({{area, key.second}, top});
          continue;
        }
        if (area <= 0) {
          zero = true;
          heap.push({key, top});
          while (!heap.empty()) rest.push_back(heap.top().second), heap.pop();
          std::stable_sort(rest.begin(), rest.end(), [&](int a, int b) {
            return intervals[a].seconds * static_cast<double>(p.tensors[intervals[a].tensor].bytes) >
                   intervals[b].seconds * static_cast<double>(p.tensors[intervals[b].tensor].bytes);
          });
          continue;
        }
        i = top;
      } else {
        if (rest_pos == rest.size()) break;
        i = rest[rest_pos++];
      }
      const Interval& iv = intervals[i];
      if (!ps.over_target(iv.start, iv.end) || iv.span(p) == 1) continue;
      const std::uint64_t b = p.tensors[iv.tensor].bytes;
      const double ssd_move = ssd_move_seconds(m, b);
      const double cpu_move = host_move_seconds(m, b);
      const double ssd_safe = k_.safety * ssd_move, cpu_safe = k_.safety * cpu_move;
      if (iv.seconds > ssd_safe) {
        if (!iv.looped) {
          const int ideal_clear = ps.index_at_time(p.start(iv.start) + ssd_move, iv.start, iv.end);
          const bool ssd_crowded = !ps.has_room(Link::SsdOut, iv.start, ideal_clear);
          Tier tier = Tier::Ssd;
          if (ssd_crowded && ps.host_fits(b)) tier = Tier::Host;
          const Link in = tier == Tier::Host ? Link::HostIn : Link::SsdIn;
          const Link out = tier == Tier::Host ? Link::HostOut : Link::SsdOut;
          const int prefetch = ps.back_index(in, b, iv.end);
          const int clear = ps.fwd_index(out, b, iv.start);
          if (prefetch <= clear) continue;
          s.moves.push_back({Move::Evict, iv.tensor, iv.start, tier});
          local.push_back({i, prefetch, clear});
          ps.consume(in, b, prefetch);
          ps.consume(out, b, iv.start);
          if (tier == Tier::Host) ps.host_add(b, iv.start, iv.end);
          ps.relieve(b, clear + 1, prefetch);
        } else {
          plan_looped(p, ps, s, iv, ssd_move, Tier::Ssd);
        }
      } else if (iv.seconds > cpu_safe) {
        if (!ps.host_fits(b)) continue;
        if (!iv.looped) {
          const int clear = ps.fwd_index(Link::HostOut, b, iv.start);
          const int prefetch = ps.back_index(Link::HostIn, b, iv.end);
          if (prefetch > clear) {
            s.moves.push_back({Move::Evict, iv.tensor, iv.start, Tier::Host});
            local.push_back({i, prefetch, clear});
            ps.consume(Link::HostIn, b, prefetch);
            ps.consume(Link::HostOut, b, iv.start);
          }
          // Like G10's artifact, the estimate counts the relief even when
          // the bandwidth budget refused the move.
          ps.relieve(b, clear + 1, prefetch);
        } else {
          plan_looped(p, ps, s, iv, cpu_move, Tier::Host);
        }
        ps.host_add(b, iv.start, iv.end + (iv.looped ? static_cast<int>(p.kernels.size()) : 0));
      }
    }
    // Prefetch as early as the memory estimate allows.
    std::sort(local.begin(), local.end(), [](const Rec& a, const Rec& b) { return a.prefetch < b.prefetch; });
    for (const Rec& r : local) {
      const Interval& iv = intervals[r.interval];
      const std::uint64_t b = p.tensors[iv.tensor].bytes;
      int at = r.prefetch;
      while (at > r.clear + 1 && ps.mem(at - 1) < ps.target()) --at;
      s.moves.push_back({Move::Prefetch, iv.tensor, at, Tier::Gpu});
      ps.relieve(b, at, r.prefetch, /*add=*/true);
    }
    s.sort();
    return s;
  }

 private:
  G10Knobs k_;
  // A weight's gap across the iteration boundary: timed by latency and
  // bandwidth alone (no budget), as G10 does.
  static void plan_looped(const Profile& p, PlanState& ps, Schedule& s, const Interval& iv, double move, Tier tier) {
    const int K = static_cast<int>(p.kernels.size());
    const int clear = ps.index_at_time_ext(p.start(iv.start) + move, iv.start, iv.end + K);
    const int prefetch = ps.index_at_time_ext(ps.time_ext(iv.end + K) - 1.5 * move, iv.start, iv.end + K);
    if (prefetch < 0 || clear < 0) return;
    if (prefetch != iv.start) {
      s.moves.push_back({Move::Evict, iv.tensor, iv.start, tier});
      s.moves.push_back({Move::Prefetch, iv.tensor, prefetch % K, Tier::Gpu});
    }
    ps.relieve_wrapped(p.tensors[iv.tensor].bytes, clear + 1, prefetch);
  }
};

}  // namespace

std::unique_ptr<Planner> make_g10_planner(G10Knobs knobs) { return std::make_unique<G10Planner>(knobs); }

}  // namespace memlake::plan
