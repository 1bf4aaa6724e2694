// The tensor-behaviour profile of one training iteration: the planner's and
// the simulator's only input about the workload.
//
// A profile is an ordered list of kernels, each with its measured time and the
// tensors it reads and writes, plus every tensor's size. Persistent tensors
// (weights, optimizer state) live across iterations; every other tensor is
// born at its first use and dies after its last. Everything the planner needs
// (liveness, the gaps between two uses of a tensor) is derived here once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memlake::plan {

using TensorId = std::int32_t;

struct Tensor {
  std::string name;
  std::uint64_t bytes = 0;
  bool persistent = false;  // weights and the like: alive across iterations
};

struct Kernel {
  std::string name;
  double seconds = 0;               // measured execution time
  std::vector<TensorId> reads;      // inputs
  std::vector<TensorId> writes;     // outputs (may repeat an input: in-place)
};

class Profile {
 public:
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Kernel> kernels;

  TensorId add_tensor(std::string tensor_name, std::uint64_t bytes, bool persistent);
  // Throws InvalidArgument naming the first inconsistency (unknown tensor,
  // negative time, empty profile).
  void validate() const;
  // Derives uses, liveness and prefix times; call after the last change.
  void finalize();

  // ---- derived (valid after finalize) -----------------------------------
  // Kernels that use tensor t (read or write), ascending, no duplicates.
  const std::vector<int>& uses(TensorId t) const { return uses_[t]; }
  // Tensors kernel k uses, no duplicates.
  const std::vector<TensorId>& used_by(int k) const { return used_by_[k]; }
  int first_use(TensorId t) const { return uses_[t].empty() ? -1 : uses_[t].front(); }
  int last_use(TensorId t) const { return uses_[t].empty() ? -1 : uses_[t].back(); }
  // Start time of kernel k in an unconstrained run; start(kernels.size()) is
  // the iteration time.
  double start(int k) const { return start_[k]; }
  double ideal_seconds() const { return start_.empty() ? 0 : start_.back(); }
  // Bytes that must be on the GPU while kernel k runs.
  std::uint64_t working_set(int k) const { return working_set_[k]; }
  std::uint64_t total_bytes() const { return total_bytes_; }
  std::uint64_t persistent_bytes() const { return persistent_bytes_; }
  // Bytes alive during kernel k with every tensor resident from birth to death.
  std::uint64_t live_bytes(int k) const { return live_[k]; }
  std::uint64_t peak_live_bytes() const;
  // The next kernel at or after k that uses t, or -1 (no wrap-around).
  int next_use(TensorId t, int k) const;
  // Is tensor t allocated during kernel k when kept from birth to death.
  bool alive(TensorId t, int k) const {
    return tensors[t].persistent || (k >= first_use(t) && k <= last_use(t));
  }

 private:
  std::vector<std::vector<int>> uses_;
  std::vector<std::vector<TensorId>> used_by_;
  std::vector<double> start_;
  std::vector<std::uint64_t> working_set_;
  std::vector<std::uint64_t> live_;
  std::uint64_t total_bytes_ = 0;
  std::uint64_t persistent_bytes_ = 0;
};

}  // namespace memlake::plan
