// memlake's planner: placeholder (G10's plan, Belady victims).
#include "plan/policies.h"

namespace memlake::plan {
namespace {
class MemlakePlanner final : public Planner {
 public:
  const char* name() const override { return "memlake"; }
  Schedule plan(const Profile& p, const Machine& m) const override {
    Schedule s = make_g10_planner()->plan(p, m);
    s.victim = VictimRule::FurthestNextUse;
    return s;
  }
};
}  // namespace
std::unique_ptr<Planner> make_memlake_planner() { return std::make_unique<MemlakePlanner>(); }
}  // namespace memlake::plan
