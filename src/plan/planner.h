// The planner interface the simulator and the tiering engine share: from a
// profile, a GPU memory budget and each tier's bandwidth per direction, a
// schedule of migrations for one iteration (repeated every iteration).
//
// A schedule is a list of moves. Each is issued when kernel `at` is about to
// start (before its launch):
//   Evict    tensor leaves the GPU for `tier`; its GPU memory is free once the
//            copy is done. Never issued for a tensor kernel `at` uses.
//   Prefetch tensor comes back from wherever it is, to be there by its next use.
// Anything the schedule does not cover is handled on demand by the executor:
// a kernel that needs a tensor that is not on the GPU fetches it (stalling),
// and one that needs room evicts victims chosen by `victim`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plan/machine.h"
#include "plan/profile.h"

namespace memlake::plan {

enum class Tier : std::uint8_t { Gpu, Host, Ssd };
const char* tier_name(Tier t);

struct Move {
  enum Kind : std::uint8_t { Evict, Prefetch } kind;
  TensorId tensor;
  int at;     // issued before kernel `at` starts
  Tier tier;  // Evict: destination; Prefetch: ignored (from wherever the tensor is)
};

// How the executor picks a victim when it must make room on demand.
enum class VictimRule : std::uint8_t {
  LeastRecentlyUsed,  // UVM's LRU (what G10's simulator falls back to)
  FurthestNextUse,    // Belady: the tensor needed last (the profile says when)
};

struct Schedule {
  std::vector<Move> moves;  // sorted by `at`
  VictimRule victim = VictimRule::LeastRecentlyUsed;
  bool unlimited_gpu = false;  // the "ideal" reference: no memory limit at all
  // A prefetch that finds no room evicts victims (UVM behaviour) instead of
  // waiting for room.
  bool prefetch_evicts = false;
  void sort();
};

class Planner {
 public:
  virtual ~Planner() = default;
  virtual const char* name() const = 0;
  virtual Schedule plan(const Profile& p, const Machine& m) const = 0;
};

// "ideal", "lru", "g10", "memlake"; InvalidArgument naming the known ones.
std::unique_ptr<Planner> make_planner(const std::string& name);
std::vector<std::string> planner_names();

}  // namespace memlake::plan
