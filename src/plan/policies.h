// The planners behind make_planner (one file each).
#pragma once

#include <memory>

#include "plan/planner.h"

namespace memlake::plan {

// G10's planner; the knobs are G10's constants (memory target 99% of the
// GPU, copy-time safety factor 2.5) unless memlake's search changes them.
struct G10Knobs {
  double target_fraction = 0.99;
  double safety = 2.5;
};
std::unique_ptr<Planner> make_g10_planner(G10Knobs knobs = {});
std::unique_ptr<Planner> make_memlake_planner();

}  // namespace memlake::plan
