// memlake tier profile FILE: a profile written by memlake.torch.tier()
// (save_profile) and its plan (the moves the run recorded, when the file has
// them; else the one the latest-start planner makes of it), readable:
// what stays on the GPU, what leaves, where each restore is issued, and what
// the simulator predicts for the iteration (docs/design/tiering.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "core/error.h"
#include "plan/latest_start.h"
#include "plan/profile_text.h"
#include "plan/simulator.h"

namespace memlake::cli {
namespace {

struct TierArgs {
  std::string file, machine = "h200";
  std::vector<std::string> sets;
};

double mib(std::uint64_t b) { return static_cast<double>(b) / (1 << 20); }

int print_profile(const TierArgs& a) {
  using namespace plan;
  ProfileFile f = read_profile_file(a.file);
  Machine m = a.machine == "g10" ? Machine::g10_default() : Machine::h200();
  for (const auto& kv : f.machine) machine_set(m, kv);
  for (const auto& kv : a.sets) machine_set(m, kv);
  const Profile& p = f.profile;
  std::printf("profile %s: %zu kernels, %zu tensors, %.1f MiB, ideal %.3f ms\n", p.name.c_str(), p.kernels.size(),
              p.tensors.size(), mib(p.total_bytes()), p.ideal_seconds() * 1e3);
  std::printf("machine %s\n", describe(m).c_str());
  // The plan: the run's own (its "move" lines, when the profile has them), else latest-start's.
  Schedule sched;
  if (!f.moves.empty()) {
    sched = f.recorded();
    std::size_t ev = 0;
    for (const Move& mv : sched.moves) ev += mv.kind == Move::Evict;
    std::printf("plan (recorded: the moves the run executed): %zu evictions, %zu restores\n", ev,
                sched.moves.size() - ev);
  } else {
    LatestStartPlan lp = plan_latest_start(p, m);
    std::printf("plan (latest-start): %zu tiered, %zu resident (%.1f MiB), room %.1f MiB, window %.1f MiB, "
                "predicted stall %.3f ms\n", lp.tiered.size(), lp.resident.size(), mib(lp.resident_bytes), mib(lp.room),
                mib(lp.window_bytes), lp.stall_s * 1e3);
    sched = lp.schedule;
  }
  const SimResult r = simulate(p, m, sched);
  std::printf("simulated: iteration %.3f ms (%.3f of ideal), %.1f MiB to host, %.1f MiB to SSD, %.1f MiB on demand\n\n",
              r.iteration_s * 1e3, r.fraction_of_ideal(), mib(r.to_host), mib(r.to_ssd), mib(r.demand_fetch_bytes));
  std::vector<std::string> where(p.tensors.size(), "gpu");
  for (const Move& mv : sched.moves)
    if (mv.kind == Move::Evict) where[mv.tensor] = tier_name(mv.tier);
  // Moves issued before each kernel.
  std::vector<std::vector<TensorId>> issued(p.kernels.size()), leave(p.kernels.size());
  for (const Move& mv : sched.moves) (mv.kind == Move::Prefetch ? issued : leave)[mv.at].push_back(mv.tensor);
  std::printf("%5s %10s %10s %10s  %-5s %s\n", "k", "start ms", "ms", "uses MiB", "tier",
              "kernel (<- restores, -> evictions issued before it)");
  for (std::size_t k = 0; k < p.kernels.size(); ++k) {
    std::uint64_t b = 0;
    std::string tier = "-";
    for (TensorId t : p.used_by(static_cast<int>(k))) b += p.tensors[t].bytes, tier = where[t];
    std::string line = p.kernels[k].name;
    if (!issued[k].empty()) {
      line += "  <-";
      for (TensorId t : issued[k]) line += " " + p.tensors[t].name;
    }
    if (!leave[k].empty()) {
      line += "  ->";
      for (TensorId t : leave[k]) line += " " + p.tensors[t].name;
    }
    std::printf("%5zu %10.3f %10.3f %10.1f  %-5s %s\n", k, p.start(static_cast<int>(k)) * 1e3,
                p.kernels[k].seconds * 1e3, mib(b), tier.c_str(), line.c_str());
  }
  return 0;
}

Action setup_tier(CLI::App& app) {
  auto a = std::make_shared<TierArgs>();
  auto* sub = app.add_subcommand("tier", "profiles of memlake.torch.tier() and their plans");
  sub->require_subcommand(1);
  auto* prof = sub->add_subcommand("profile", "print a profile (save_profile's file) and its plan (recorded, or latest-start's)");
  prof->add_option("FILE", a->file, "the profile (text, 'memlake-profile 1')")->required();
  prof->add_option("--machine", a->machine, "base machine before the profile's machine lines (default h200)")
      ->check(CLI::IsMember({"h200", "g10"}));
  prof->add_option("--set", a->sets, "KEY=VALUE over the profile's machine (e.g. gpu_bytes=..., pcie=46)");
  return [a] {
    try {
      return print_profile(*a);
    } catch (const Error& e) {
      std::fprintf(stderr, "memlake tier profile: %s\n", e.what());
      return e.code() == Errc::invalid_argument ? 2 : 1;
    }
  };
}

}  // namespace

MEMLAKE_CLI_COMMAND(46, setup_tier);

}  // namespace memlake::cli
