// The profile as a text file a person can read, and the one format that
// memlake.torch.tier() writes and `memlake tier profile` / `memlake sim
// --profile` read (docs/design/tiering.md):
//
//   memlake-profile 1
//   name llama-3b-tier                 (optional)
//   machine gpu_bytes=25769803776      (optional, any number: machine_set keys,
//   machine pcie=46.6                   applied over the reader's base machine)
//   tensor NAME BYTES persistent|transient     (ids 0, 1, ... in order)
//   kernel NAME SECONDS [TENSOR_ID ...]       (in order of execution)
//   move evict|prefetch TENSOR_ID KERNEL [host|ssd]   (optional, after the kernels:
//                                       the plan the run executed, issued before KERNEL)
//
// '#' starts a comment; names have no blanks. Errors name the file and line.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "plan/machine.h"
#include "plan/planner.h"
#include "plan/profile.h"

namespace memlake::plan {

struct ProfileFile {
  Profile profile;                    // finalized
  std::vector<std::string> machine;   // its "machine" lines' KEY=VALUE, in order
  std::vector<Move> moves;            // its "move" lines: what the profiled run executed (may be empty)
  // Those moves as a schedule (anything they do not cover is left on demand).
  Schedule recorded() const {
    Schedule s;
    s.moves = moves;
    s.sort();
    return s;
  }
};

// Throws Errc::invalid_argument "FILE:LINE: what" on any malformed line.
ProfileFile read_profile_text(std::istream& in, const std::string& file);
ProfileFile read_profile_file(const std::string& path);
std::string profile_text(const Profile& p, const std::vector<std::string>& machine = {});

}  // namespace memlake::plan
