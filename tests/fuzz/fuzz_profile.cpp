// The profile reader (memlake tier profile / sim --profile / memlake_plan) on
// arbitrary bytes; a profile it accepts is planned (latest-start) and
// simulated on a machine whose GPU size comes from the input. Every outcome
// is a plan or Errc::invalid_argument / Errc::out_of_memory.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/error.h"
#include "plan/latest_start.h"
#include "plan/profile_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  using namespace memlake::plan;
  try {
    std::istringstream s(in);
    ProfileFile f = read_profile_text(s, "fuzz");
    if (f.profile.kernels.size() > 256 || f.profile.tensors.size() > 256) return 0;
    Machine m = Machine::h200();
    for (const auto& kv : f.machine) machine_set(m, kv);
    const std::string rep = plan_report(f.profile, m, "latest-start");
    if (rep.rfind("policy latest-start\n", 0) != 0) std::abort();
    // The text form reads back to the same profile.
    std::istringstream again(profile_text(f.profile, f.machine));
    ProfileFile g = read_profile_text(again, "again");
    if (g.profile.kernels.size() != f.profile.kernels.size() || g.profile.tensors.size() != f.profile.tensors.size())
      std::abort();
  } catch (const memlake::Error& e) {
    if (e.code() != memlake::Errc::invalid_argument && e.code() != memlake::Errc::out_of_memory) std::abort();
  }
  return 0;
}
