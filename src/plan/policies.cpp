// The reference policies and the planner registry.
#include <algorithm>

#include "core/error.h"
#include "plan/planner.h"
#include "plan/latest_start.h"
#include "plan/policies.h"

namespace memlake::plan {

const char* tier_name(Tier t) {
  switch (t) {
    case Tier::Gpu: return "gpu";
    case Tier::Host: return "host";
    case Tier::Ssd: return "ssd";
  }
  return "?";
}

void Schedule::sort() {
  std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) { return a.at < b.at; });
}

namespace {

// Infinite GPU memory: the iteration is the sum of its kernels.
class IdealPlanner final : public Planner {
 public:
  const char* name() const override { return "ideal"; }
  Schedule plan(const Profile&, const Machine&) const override {
    Schedule s;
    s.unlimited_gpu = true;
    return s;
  }
};

// No plan: every tensor is fetched when a kernel faults on it, victims are
// the least recently used (UVM without hints, at tensor granularity).
class LruPlanner final : public Planner {
 public:
  const char* name() const override { return "lru"; }
  Schedule plan(const Profile&, const Machine&) const override { return Schedule{}; }
};

}  // namespace

std::vector<std::string> planner_names() { return {"ideal", "lru", "g10", "latest-start", "memlake"}; }

std::unique_ptr<Planner> make_planner(const std::string& name) {
  if (name == "ideal") return std::make_unique<IdealPlanner>();
  if (name == "lru") return std::make_unique<LruPlanner>();
  if (name == "g10") return make_g10_planner();
  if (name == "memlake") return make_memlake_planner();
  if (name == "latest-start") return make_latest_start_planner();
  std::string known;
  for (const auto& n : planner_names()) known += (known.empty() ? "" : ", ") + n;
  throw_error(Errc::invalid_argument, "unknown policy '" + name + "' (known: " + known + ")");
}

}  // namespace memlake::plan
