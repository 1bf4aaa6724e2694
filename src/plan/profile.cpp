#include "plan/profile.h"

#include <algorithm>

#include "core/error.h"

namespace memlake::plan {

TensorId Profile::add_tensor(std::string tensor_name, std::uint64_t bytes, bool persistent) {
  tensors.push_back(Tensor{std::move(tensor_name), bytes, persistent});
  return static_cast<TensorId>(tensors.size() - 1);
}

void Profile::validate() const {
  if (kernels.empty()) throw_error(Errc::invalid_argument, "profile '" + name + "' has no kernels");
  const auto n = static_cast<TensorId>(tensors.size());
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const Kernel& kr = kernels[k];
    if (!(kr.seconds >= 0)) {
      std::string m;
      appendf(m, "profile '%s': kernel %zu (%s) has a negative or invalid time", name.c_str(), k, kr.name.c_str());
      throw_error(Errc::invalid_argument, m);
    }
    for (const auto* list : {&kr.reads, &kr.writes})
      for (TensorId t : *list)
        if (t < 0 || t >= n) {
          std::string m;
          appendf(m, "profile '%s': kernel %zu (%s) uses tensor %d, but there are %d tensors", name.c_str(), k,
                  kr.name.c_str(), t, n);
          throw_error(Errc::invalid_argument, m);
        }
  }
}

void Profile::finalize() {
  validate();
  const std::size_t nt = tensors.size(), nk = kernels.size();
  uses_.assign(nt, {});
  used_by_.assign(nk, {});
  for (std::size_t k = 0; k < nk; ++k) {
    auto& ub = used_by_[k];
    for (TensorId t : kernels[k].reads) ub.push_back(t);
    for (TensorId t : kernels[k].writes) ub.push_back(t);
    std::sort(ub.begin(), ub.end());
    ub.erase(std::unique(ub.begin(), ub.end()), ub.end());
    for (TensorId t : ub) uses_[t].push_back(static_cast<int>(k));
  }
  start_.assign(nk + 1, 0.0);
  for (std::size_t k = 0; k < nk; ++k) start_[k + 1] = start_[k] + kernels[k].seconds;
  working_set_.assign(nk, 0);
  for (std::size_t k = 0; k < nk; ++k)
    for (TensorId t : used_by_[k]) working_set_[k] += tensors[t].bytes;
  total_bytes_ = persistent_bytes_ = 0;
  std::vector<std::int64_t> delta(nk + 1, 0);
  for (std::size_t t = 0; t < nt; ++t) {
    total_bytes_ += tensors[t].bytes;
    if (tensors[t].persistent) {
      persistent_bytes_ += tensors[t].bytes;
    } else if (!uses_[t].empty()) {
      delta[uses_[t].front()] += static_cast<std::int64_t>(tensors[t].bytes);
      delta[uses_[t].back() + 1] -= static_cast<std::int64_t>(tensors[t].bytes);
    }
  }
  live_.assign(nk, 0);
  std::int64_t cur = 0;
  for (std::size_t k = 0; k < nk; ++k) {
    cur += delta[k];
    live_[k] = persistent_bytes_ + static_cast<std::uint64_t>(cur);
  }
}

std::uint64_t Profile::peak_live_bytes() const {
  return live_.empty() ? 0 : *std::max_element(live_.begin(), live_.end());
}

int Profile::next_use(TensorId t, int k) const {
  const auto& u = uses_[t];
  auto it = std::lower_bound(u.begin(), u.end(), k);
  return it == u.end() ? -1 : *it;
}

}  // namespace memlake::plan
