#include "io/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/error.h"

namespace memlake::io {
namespace {

[[noreturn]] void bad(int line, const std::string& what) {
  throw_error(Errc::invalid_argument, "topology line " + std::to_string(line) + ": " + what);
}

// Bandwidths and counts: finite, 0..1e9 (inf or 1e300 GB/s made the plan's
// byte split NaN, and its conversion to an integer undefined).
double number(const std::string& s, int line) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v >= 0) || !(v <= 1e9)) bad(line, "'" + s + "' is not a number in 0..1e9");
  return v;
}

int gpu_index(const std::string& s, int gpus, int line) {
  double v = number(s, line);
  // Range first: converting a double out of int's range is undefined behaviour.
  if (!(v < gpus) || v != std::floor(v)) bad(line, "'" + s + "' is not a GPU index below " + std::to_string(gpus));
  return static_cast<int>(v);
}

}  // namespace

Topology Topology::parse(const std::string& text) {
  Topology t;
  std::string all = text;
  std::replace(all.begin(), all.end(), ';', '\n');
  std::istringstream in(all);
  std::string raw;
  int line = 0;
  auto need_gpus = [&](int l) {
    if (t.gpus <= 0) bad(l, "'gpus N' must come first");
  };
  while (std::getline(in, raw)) {
    ++line;
    auto hash = raw.find('#');
    if (hash != std::string::npos) raw.resize(hash);
    std::istringstream ls(raw);
    std::vector<std::string> w;
    for (std::string x; ls >> x;) w.push_back(x);
    if (w.empty()) continue;
    const std::string& k = w[0];
    if (k == "gpus") {
      if (w.size() != 2) bad(line, "expected 'gpus N'");
      double n = number(w[1], line);
      if (n < 1 || n > 1024 || n != std::floor(n)) bad(line, "GPU count must be 1..1024");
      t.gpus = static_cast<int>(n);
      t.pcie_h2d.assign(t.gpus, 0);
      t.pcie_d2h.assign(t.gpus, 0);
      t.pcie_group.resize(t.gpus);
      for (int i = 0; i < t.gpus; ++i) t.pcie_group[i] = i;
      t.group_h2d.assign(t.gpus, 0);
      t.group_d2h.assign(t.gpus, 0);
      t.nvlink.assign(t.gpus, std::vector<double>(t.gpus, 0));
    } else if (k == "pcie") {
      need_gpus(line);
      // "pcie H2D [D2H]" for every GPU, or "pcie gpu I H2D [D2H]" for one.
      std::vector<int> which;
      std::size_t i = 1;
      if (w.size() > 2 && w[1] == "gpu") {
        which.push_back(gpu_index(w[2], t.gpus, line));
        i = 3;
      } else {
        for (int g = 0; g < t.gpus; ++g) which.push_back(g);
      }
      if (w.size() != i + 1 && w.size() != i + 2) bad(line, "expected 'pcie [gpu I] H2D [D2H]'");
      double h2d = number(w[i], line), d2h = w.size() == i + 2 ? number(w[i + 1], line) : h2d;
      for (int g : which) {
        t.pcie_h2d[g] = h2d;
        t.pcie_d2h[g] = d2h;
      }
    } else if (k == "group") {
      need_gpus(line);
      // "group G0 G1 ... [uplink H2D [D2H]]": the PCIe switch of each GPU.
      auto up = std::find(w.begin(), w.end(), "uplink");
      std::size_t n = static_cast<std::size_t>(up - w.begin()) - 1;
      if (n != static_cast<std::size_t>(t.gpus)) bad(line, "expected one group id per GPU (" + std::to_string(t.gpus) + ")");
      for (int g = 0; g < t.gpus; ++g) t.pcie_group[g] = gpu_index(w[1 + g], t.gpus, line);
      if (up != w.end()) {
        std::size_t rest = static_cast<std::size_t>(w.end() - up) - 1;
        if (rest != 1 && rest != 2) bad(line, "expected 'uplink H2D [D2H]'");
        double h2d = number(*(up + 1), line), d2h = rest == 2 ? number(*(up + 2), line) : h2d;
        for (int g = 0; g < t.gpus; ++g) {
          t.group_h2d[t.pcie_group[g]] = h2d;
          t.group_d2h[t.pcie_group[g]] = d2h;
        }
      }
    } else if (k == "nvlink") {
      need_gpus(line);
      if (w.size() == 3 && w[1] == "all") {
        double v = number(w[2], line);
        for (int i = 0; i < t.gpus; ++i)
          for (int j = 0; j < t.gpus; ++j) t.nvlink[i][j] = i == j ? 0 : v;
      } else if (w.size() == 4 || (w.size() == 5 && w[4] == "both")) {
        int i = gpu_index(w[1], t.gpus, line), j = gpu_index(w[2], t.gpus, line);
        if (i == j) bad(line, "a GPU has no NVLink to itself");
        t.nvlink[i][j] = number(w[3], line);
        if (w.size() == 5) t.nvlink[j][i] = t.nvlink[i][j];
      } else {
        bad(line, "expected 'nvlink all GBPS' or 'nvlink I J GBPS [both]'");
      }
    } else {
      bad(line, "unknown statement '" + k + "' (expected gpus, pcie, group, nvlink)");
    }
  }
  t.validate();
  return t;
}

void Topology::validate() const {
  if (gpus <= 0) throw_error(Errc::invalid_argument, "topology: no GPUs");
  for (int g = 0; g < gpus; ++g)
    if (pcie_h2d[g] <= 0 || pcie_d2h[g] <= 0)
      throw_error(Errc::invalid_argument, "topology: GPU " + std::to_string(g) + " has no PCIe bandwidth");
}

Plan plan(const Topology& t, int target, Direction dir, std::size_t bytes, const PlanOptions& o) {
  t.validate();
  if (target < 0 || target >= t.gpus)
    throw_error(Errc::invalid_argument, "plan: no GPU " + std::to_string(target) + " in a topology of " + std::to_string(t.gpus));
  const bool h2d = dir == Direction::h2d;
  auto pcie = [&](int g) { return h2d ? t.pcie_h2d[g] : t.pcie_d2h[g]; };
  auto uplink = [&](int grp) { return h2d ? t.group_h2d[grp] : t.group_d2h[grp]; };
  auto nv = [&](int peer) { return h2d ? t.nvlink[peer][target] : t.nvlink[target][peer]; };

  Plan p;
  p.target = target;
  p.dir = dir;
  p.bytes = bytes;
  p.direct_gbps = pcie(target);

  // Candidate paths, fastest first; the direct path always comes first.
  struct Cand {
    int via;
    double rate;
  };
  std::vector<Cand> cand{{target, pcie(target)}};
  if (o.use_peers)
    for (int g = 0; g < t.gpus; ++g)
      if (g != target && nv(g) > 0) cand.push_back({g, std::min(pcie(g), nv(g))});
  std::stable_sort(cand.begin() + 1, cand.end(), [](const Cand& a, const Cand& b) { return a.rate > b.rate; });

  // Paths behind one PCIe switch share its uplink (when it is described).
  std::vector<double> used(t.gpus, 0);
  std::vector<Cand> chosen;
  for (const Cand& c : cand) {
    if (o.max_paths > 0 && static_cast<int>(chosen.size()) >= o.max_paths) break;
    const int grp = t.pcie_group[c.via];
    double rate = c.rate;
    if (uplink(grp) > 0) rate = std::min(rate, uplink(grp) - used[grp]);
    if (rate <= 0) continue;
    used[grp] += rate;
    chosen.push_back({c.via, rate});
  }
  // A path is worth it only if its share is at least min_share: drop the
  // slowest until every share qualifies (small copies take the direct path).
  while (chosen.size() > 1) {
    double total = 0;
    for (const Cand& c : chosen) total += c.rate;
    if (static_cast<double>(bytes) * chosen.back().rate / total >= static_cast<double>(o.min_share)) break;
    chosen.pop_back();
  }

  // Split proportionally to rate, at `align` boundaries; the direct path
  // takes the remainder so the shares cover every byte.
  double total = 0;
  for (const Cand& c : chosen) total += c.rate;
  std::vector<std::size_t> sizes(chosen.size(), 0);
  std::size_t assigned = 0;
  const std::size_t align = std::max<std::size_t>(o.align, 1);
  for (std::size_t i = 1; i < chosen.size(); ++i) {
    auto s = static_cast<std::size_t>(static_cast<double>(bytes) * chosen[i].rate / total);
    s = s / align * align;
    sizes[i] = s;
    assigned += s;
  }
  sizes[0] = bytes - assigned;
  std::size_t off = 0;
  double worst = 0;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (sizes[i] == 0 && i != 0) continue;
    p.shares.push_back({chosen[i].via, off, sizes[i], chosen[i].rate});
    off += sizes[i];
    worst = std::max(worst, static_cast<double>(sizes[i]) / chosen[i].rate);
  }
  // Shares in offset order with the direct path first is what the engine wants.
  p.predicted_gbps = worst > 0 ? static_cast<double>(bytes) / worst : p.direct_gbps;
  return p;
}

std::string describe(const Plan& p) {
  std::ostringstream o;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %s GPU %d: %zu bytes over %zu path(s), predicted %.1f GB/s (direct %.1f)\n",
                p.dir == Direction::h2d ? "H2D" : "D2H", p.dir == Direction::h2d ? "to" : "from", p.target, p.bytes,
                p.shares.size(), p.predicted_gbps, p.direct_gbps);
  o << buf;
  for (const Share& s : p.shares) {
    std::snprintf(buf, sizeof buf, "  via GPU %d%s: [%zu, %zu) %.1f GB/s\n", s.via, s.via == p.target ? " (direct)" : "",
                  s.offset, s.offset + s.bytes, s.gbps);
    o << buf;
  }
  return o.str();
}

}  // namespace memlake::io
