#include "plan/simulator.h"

#include <algorithm>
#include <deque>
#include <limits>

#include "core/error.h"

namespace memlake::plan {
namespace {

enum class Loc : std::uint8_t { None, Gpu, Host, Ssd };
enum Queue { HostIn, SsdIn, HostOut, SsdOut, kQueues };

struct Xfer {
  TensorId t;
  double latency_left;
  double bytes_left;
  bool demand;
};

struct TState {
  Loc loc = Loc::None;
  std::int8_t moving = 0;  // +1 coming to the GPU, -1 leaving it
  bool pending = false;    // a prefetch waits for room
  long long stamp = -1;    // last use (global kernel counter), for LRU
};

class Sim {
 public:
  Sim(const Profile& p, const Machine& m, const Schedule& s) : p_(p), m_(m), s_(s), st_(p.tensors.size()) {
    cap_ = s.unlimited_gpu ? (std::uint64_t{1} << 62) : m.gpu_bytes;
    at_.resize(p.kernels.size());
    for (std::size_t i = 0; i < s.moves.size(); ++i) {
      const Move& mv = s.moves[i];
      if (mv.at < 0 || mv.at >= static_cast<int>(p.kernels.size()) || mv.tensor < 0 ||
          mv.tensor >= static_cast<TensorId>(p.tensors.size()))
        throw_error(Errc::invalid_argument, "schedule move out of range");
      at_[mv.at].push_back(static_cast<int>(i));
    }
  }

  SimResult run() {
    place_persistent();
    const int K = static_cast<int>(p_.kernels.size());
    double iter_start = 0;
    for (int iter = 0; iter < 2; ++iter) {
      measuring_ = iter == 1;
      iter_start = now_;
      for (int k = 0; k < K; ++k) step(k, static_cast<long long>(iter) * K + k);
    }
    r_.iteration_s = now_ - iter_start;
    r_.ideal_s = p_.ideal_seconds();

    return r_;
  }

 private:
  const Profile& p_;
  const Machine& m_;
  const Schedule& s_;
  std::vector<TState> st_;
  std::vector<std::vector<int>> at_;
  std::deque<Xfer> q_[kQueues];
  std::deque<TensorId> pending_;
  std::uint64_t cap_ = 0, gpu_used_ = 0, host_used_ = 0;
  double now_ = 0;
  int cur_k_ = 0;
  bool all_but_arrivals_ = false;
  bool measuring_ = false;
  SimResult r_;
  std::vector<char> needed_;  // tensors of the current kernel


  std::uint64_t bytes(TensorId t) const { return p_.tensors[t].bytes; }
  // Signed: with UVM pipelining a fetch may start before its room is free.
  std::int64_t free_bytes() const { return static_cast<std::int64_t>(cap_) - static_cast<std::int64_t>(gpu_used_); }

  void note_gpu() { r_.peak_gpu_bytes = std::max(r_.peak_gpu_bytes, gpu_used_); }
  void note_host() { r_.peak_host_bytes = std::max(r_.peak_host_bytes, host_used_); }

  void place_persistent() {
    for (std::size_t t = 0; t < p_.tensors.size(); ++t) {
      if (!p_.tensors[t].persistent) continue;
      const std::uint64_t b = p_.tensors[t].bytes;
      if (free_bytes() >= static_cast<std::int64_t>(b)) {
        st_[t].loc = Loc::Gpu;
        gpu_used_ += b;
      } else if (m_.host_bytes - host_used_ >= b) {
        st_[t].loc = Loc::Host;
        host_used_ += b;
      } else {
        st_[t].loc = Loc::Ssd;
      }
    }
    note_gpu();
    note_host();
  }

  // ---- copies --------------------------------------------------------------
  void rates(double r[kQueues]) const {
    for (int d = 0; d < 2; ++d) {
      const int host = d == 0 ? HostIn : HostOut, ssd = d == 0 ? SsdIn : SsdOut;
      const double link = d == 0 ? m_.pcie_bps : m_.pcie_out_bps;
      const double ssd_bw = std::min(d == 0 ? m_.ssd_read_bps : m_.ssd_write_bps, link);
      r[ssd] = q_[ssd].empty() ? 0 : ssd_bw;
      r[host] = q_[host].empty() ? 0 : link - r[ssd];
    }
  }

  // Advances copies to `target`, or to the first completion if `stop_at_completion`.
  // Returns false if it reached `target` (or nothing was moving) without a completion.
  bool advance(double target, bool stop_at_completion) {
    for (;;) {
      double r[kQueues];
      rates(r);
      double best = std::numeric_limits<double>::infinity();
      int which = -1;
      for (int q = 0; q < kQueues; ++q) {
        if (q_[q].empty() || r[q] <= 0) continue;
        const Xfer& x = q_[q].front();
        double dt = x.latency_left + x.bytes_left / r[q];
        if (dt < best) best = dt, which = q;
      }
      if (which < 0) {
        if (target > now_) now_ = target;
        return false;
      }
      const bool done = now_ + best <= target;
      const double dt = done ? best : target - now_;
      if (dt > 0) progress(dt, r);
      if (!done) {
        now_ = target;
        return false;
      }
      now_ += best;
      complete(which);
      if (stop_at_completion) return true;
    }
  }

  void progress(double dt, const double r[kQueues]) {
    for (int q = 0; q < kQueues; ++q) {
      if (q_[q].empty() || r[q] <= 0) continue;
      Xfer& x = q_[q].front();
      double left = dt;
      const double lat = std::min(left, x.latency_left);
      x.latency_left -= lat;
      left -= lat;
      x.bytes_left = std::max(0.0, x.bytes_left - left * r[q]);
    }
  }

  void complete(int q) {
    Xfer x = q_[q].front();
    q_[q].pop_front();
    TState& s = st_[x.t];
    const std::uint64_t b = bytes(x.t);
    s.moving = 0;
    if (q == HostIn || q == SsdIn) {
      s.loc = Loc::Gpu;
      if (q == HostIn) host_used_ -= b;
      if (measuring_) {
        (q == HostIn ? r_.from_host : r_.from_ssd) += b;
        if (x.demand) r_.demand_fetch_bytes += b;
      }
    } else {
      s.loc = q == HostOut ? Loc::Host : Loc::Ssd;
      gpu_used_ -= b;
      if (measuring_) {
        (q == HostOut ? r_.to_host : r_.to_ssd) += b;
        if (x.demand) r_.demand_evict_bytes += b;
      }
    }
    start_pending();
  }

  void enqueue(int q, TensorId t, bool demand) {
    const bool ssd = q == SsdIn || q == SsdOut;
    const bool in = q == HostIn || q == SsdIn;
    double lat = m_.pcie_latency_s + (ssd ? (in ? m_.ssd_read_latency_s : m_.ssd_write_latency_s) : 0);
    Xfer x{t, lat, static_cast<double>(bytes(t)), demand};
    auto& d = q_[q];
    if (demand && in) {
      // A fault is served before any prefetch, even one already moving (which
      // pauses and resumes after): G10's batcher empties its page-fault queues
      // before its prefetch queues in every PCIe batch, so a faulted tensor
      // never waits behind a prefetch's remaining bytes. Faults keep their order.
      auto it = d.begin();
      while (it != d.end() && it->demand) ++it;
      d.insert(it, x);
    } else if (demand && !d.empty()) {
      // A demand eviction goes right behind the one already moving: G10 evicts
      // for a fault in the same batch as its planned evictions, which go first.
      d.insert(d.begin() + 1, x);
    } else {
      d.push_back(x);
    }
  }

  void start_out(TensorId t, Tier tier, bool demand) {
    TState& s = st_[t];
    const std::uint64_t b = bytes(t);
    if (tier == Tier::Host && m_.host_bytes - host_used_ < b) tier = Tier::Ssd;
    s.moving = -1;
    if (tier == Tier::Host) {
      host_used_ += b;
      note_host();
    }
    enqueue(tier == Tier::Host ? HostOut : SsdOut, t, demand);
  }

  void start_in(TensorId t, bool demand) {
    TState& s = st_[t];
    s.moving = 1;
    s.pending = false;
    gpu_used_ += bytes(t);
    note_gpu();
    enqueue(s.loc == Loc::Host ? HostIn : SsdIn, t, demand);
  }

  // Starts waiting prefetches in order while there is room. One whose
  // tensor is still on its way out stays queued until it has arrived there.
  void start_pending() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      TensorId t = *it;
      TState& s = st_[t];
      if (!s.pending || s.moving > 0 || (s.moving == 0 && s.loc != Loc::Host && s.loc != Loc::Ssd)) {
        s.pending = false;
        it = pending_.erase(it);
        continue;
      }
      if (s.moving < 0) {
        ++it;
        continue;
      }
      if (free_bytes() < static_cast<std::int64_t>(bytes(t))) {
        // UVM-style: a prefetch makes room by evicting victims.
        if (!s_.prefetch_evicts) return;
        if (free_bytes() + static_cast<std::int64_t>(leaving()) >= static_cast<std::int64_t>(bytes(t))) {
          if (!m_.overlap_arrivals) return;
        } else {
          TensorId v = pick_victim(cur_k_);
          if (v < 0) return;
          start_out(v, Tier::Host, true);
          continue;
        }
        it = pending_.erase(it);
        start_in(t, false);
        continue;
      }
      it = pending_.erase(it);
      start_in(t, false);
    }
  }

  // ---- on demand ------------------------------------------------------------
  bool alive(TensorId t, int k) const { return p_.alive(t, k); }

  TensorId pick_victim(int k) const {
    TensorId best = -1;
    long long best_key = std::numeric_limits<long long>::min();
    const int K = static_cast<int>(p_.kernels.size());
    for (std::size_t i = 0; i < st_.size(); ++i) {
      const TState& s = st_[i];
      if (s.loc != Loc::Gpu || s.moving || needed_[i]) continue;
      const TensorId t = static_cast<TensorId>(i);
      long long key;
      if (s_.victim == VictimRule::LeastRecentlyUsed) {
        key = -s.stamp;
      } else {
        int nu = p_.next_use(t, k);
        key = nu >= 0 ? nu - k : (p_.tensors[t].persistent ? p_.first_use(t) + K - k : 2LL * K);
      }
      if (key > best_key) best_key = key, best = t;
    }
    return best;
  }

  std::uint64_t leaving() const {
    std::uint64_t b = 0;
    for (int q : {HostOut, SsdOut})
      for (const Xfer& x : q_[q]) b += bytes(x.t);
    return b;
  }

  bool anything_moving() const {
    for (int q = 0; q < kQueues; ++q)
      if (!q_[q].empty()) return true;
    return false;
  }

  [[noreturn]] void no_room(int k, std::uint64_t want) const {
    std::string m;
    std::uint64_t resident = 0, in_flight = 0;
    for (std::size_t t = 0; t < st_.size(); ++t) {
      if (st_[t].loc == Loc::Gpu && !st_[t].moving) resident += bytes(static_cast<TensorId>(t));
      if (st_[t].moving) in_flight += bytes(static_cast<TensorId>(t));
    }
    appendf(m, "kernel %d (%s) cannot run: it needs %s more on the GPU, and nothing there can leave "
            "(its working set %s, GPU %s, resident %s, in flight %s, accounted %s)",
            k, p_.kernels[k].name.c_str(), format_bytes(want).c_str(), format_bytes(p_.working_set(k)).c_str(),
            format_bytes(cap_).c_str(), format_bytes(resident).c_str(), format_bytes(in_flight).c_str(),
            format_bytes(gpu_used_).c_str());
    throw_error(Errc::out_of_memory, m);
  }

  // Room for `want` more bytes. With UVM semantics, pages are freed as the
  // victims' copies progress, so a fetch may start against bytes that are
  // still leaving (memory is pipelined page by page, as in G10's simulator).
  // Room for tensor `for_t` (want bytes); done early if a prefetch brought
  // it meanwhile.
  void make_room(std::uint64_t want, int k, TensorId for_t) {
    while (free_bytes() < static_cast<std::int64_t>(want)) {
      if (st_[for_t].moving > 0 || (st_[for_t].loc == Loc::Gpu && !st_[for_t].moving)) return;
      if (free_bytes() + static_cast<std::int64_t>(leaving()) < static_cast<std::int64_t>(want)) {
        TensorId v = pick_victim(k);
        if (v >= 0) {
          start_out(v, Tier::Host, true);
          continue;
        }
      } else if (m_.overlap_arrivals) {
        return;
      }
      if (!anything_moving()) no_room(k, want);
      advance(std::numeric_limits<double>::infinity(), true);
    }
  }

  // ---- one kernel -------------------------------------------------------------
  void step(int k, long long g) {
    cur_k_ = k;
    const auto& used = p_.used_by(k);
    needed_.assign(p_.tensors.size(), 0);
    for (TensorId t : used) needed_[t] = 1;
    for (int mi : at_[k]) {
      const Move& mv = s_.moves[mi];
      TState& s = st_[mv.tensor];
      if (mv.kind == Move::Evict) {
        if (s.loc != Loc::Gpu || s.moving || needed_[mv.tensor] || !alive(mv.tensor, k)) continue;
        start_out(mv.tensor, mv.tier, false);
      } else {
        const bool leaving_gpu = s.moving < 0;
        if (s.pending || s.moving > 0 || (!leaving_gpu && s.loc != Loc::Host && s.loc != Loc::Ssd)) continue;
        s.pending = true;
        s.stamp = g;
        pending_.push_back(mv.tensor);
      }
    }
    start_pending();
    const double ready = now_;
    bool faulted = false;
    for (;;) {
      bool all = true;
      for (TensorId t : used) {
        TState& s = st_[t];
        if (s.loc == Loc::Gpu && !s.moving) continue;
        all_but_arrivals_ = all;
        all = false;
        if (s.moving > 0 && m_.overlap_arrivals) {
          all = all_but_arrivals_;  // runs while it arrives
          continue;
        }
        if (s.moving) {
          continue;  // wait for it
        }
        if (!faulted && s.loc != Loc::None) {
          faulted = true;
          if (measuring_) ++r_.faults;
          advance(now_ + m_.fault_latency_s, false);
        }
        if (s.loc == Loc::None) {
          make_room(bytes(t), k, t);
          s.loc = Loc::Gpu;
          gpu_used_ += bytes(t);
          note_gpu();
        } else {
          make_room(bytes(t), k, t);
          if (s.loc == Loc::Gpu) continue;  // arrived meanwhile
          if (!s.moving) start_in(t, true);
        }
      }
      if (all) break;
      // Every missing tensor is now allocated or on its way: wait for a copy
      // if one of them is still moving.
      bool wait = false;
      for (TensorId t : used) wait |= st_[t].moving < 0 || (st_[t].moving > 0 && !m_.overlap_arrivals);
      if (!wait && m_.overlap_arrivals) break;
      if (wait) advance(std::numeric_limits<double>::infinity(), true);
    }
    if (measuring_) r_.stall_s += now_ - ready;

    for (TensorId t : used) {
      st_[t].stamp = g;
      if (st_[t].loc != Loc::Gpu || st_[t].moving) ++r_.launched_missing;
    }
    advance(now_ + p_.kernels[k].seconds, false);
    // UVM: the kernel also ends no earlier than its inputs' arrival.
    const double run_end = now_;
    for (;;) {
      bool arriving = false;
      for (TensorId t : used) arriving |= st_[t].moving > 0;
      if (!arriving) break;
      advance(std::numeric_limits<double>::infinity(), true);
    }
    if (measuring_) r_.stall_s += now_ - run_end;
    // Free what dies here.
    for (TensorId t : used) {
      if (p_.tensors[t].persistent || p_.last_use(t) != k) continue;
      TState& s = st_[t];
      if (s.loc == Loc::Gpu && !s.moving) gpu_used_ -= bytes(t);
      s.loc = Loc::None;
      s.pending = false;
    }
    start_pending();
  }
};

}  // namespace

SimResult simulate(const Profile& p, const Machine& m, const Schedule& s) {
  if (p.kernels.empty()) throw_error(Errc::invalid_argument, "simulate: empty profile");
  if (!s.unlimited_gpu) {
    for (std::size_t k = 0; k < p.kernels.size(); ++k)
      if (p.working_set(static_cast<int>(k)) > m.gpu_bytes) {
        std::string msg;
        appendf(msg, "%s cannot run with %s of GPU memory: kernel %zu (%s) alone needs %s at once", p.name.c_str(),
                format_bytes(m.gpu_bytes).c_str(), k, p.kernels[k].name.c_str(),
                format_bytes(p.working_set(static_cast<int>(k))).c_str());
        throw_error(Errc::out_of_memory, msg);
      }
  }
  Sim sim(p, m, s);
  return sim.run();
}

}  // namespace memlake::plan
