// The planners behind make_planner (one file each).
#pragma once

#include <memory>

#include "plan/planner.h"

namespace memlake::plan {

std::unique_ptr<Planner> make_g10_planner();
std::unique_ptr<Planner> make_memlake_planner();

}  // namespace memlake::plan
