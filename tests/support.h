// Shared test support: suites are written once and instantiated for each
// backend; the cuda instance skips, saying why, where no GPU is present.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/device_allocator.h"
#include "core/error.h"
#include "prim/host_backend.h"
#include "prim/prim.h"

namespace memlake::test {

inline void skip_unless_available(const std::string& backend) {
  if (backend == "cuda") {
    std::string why;
    if (!prim::cuda_available(&why)) GTEST_SKIP() << "cuda backend skipped: " << why;
  }
}

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { skip_unless_available(GetParam()); }
  bool is_host() const { return GetParam() == "host"; }
  std::unique_ptr<prim::Backend> make_backend(std::size_t granularity = 0) {
    prim::BackendConfig c;
    c.kind = GetParam();
    c.granularity = granularity;
    return prim::make_backend(c);
  }
  Options options() const {
    Options o;
    o.backend = GetParam();
    return o;
  }
};

inline std::string backend_name(const ::testing::TestParamInfo<std::string>& p) { return p.param; }

#define MEMLAKE_INSTANTIATE_BACKENDS(Suite) \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite, ::testing::Values("host", "cuda"), ::memlake::test::backend_name)

// Deterministic byte pattern of an allocation, by seed.
inline std::vector<unsigned char> pattern(std::size_t n, std::uint64_t seed) {
  std::vector<unsigned char> v(n);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v[i] = static_cast<unsigned char>(x);
  }
  return v;
}

inline void fill(prim::Backend& be, const void* p, std::size_t n, std::uint64_t seed) {
  auto v = pattern(n, seed);
  be.write(reinterpret_cast<std::uintptr_t>(p), v.data(), n);
}

inline bool holds(prim::Backend& be, const void* p, std::size_t n, std::uint64_t seed) {
  std::vector<unsigned char> got(n);
  be.read(got.data(), reinterpret_cast<std::uintptr_t>(p), n);
  return got == pattern(n, seed);
}

// Runs f and returns the memlake::Error code it threw (ok if none).
template <class F>
Errc error_of(F&& f, std::string* msg = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (msg) *msg = e.what();
    return e.code();
  }
  return Errc::ok;
}

// Builds an idle 4-page view W (a view extended with another's pages) whose
// last two slots are busy through that other view (*other, allocated last),
// all on `stream`; before_free runs just before W's allocation is freed.
// Returns W's address. The repair tests start from this state.
inline void* idle_view_half_busy(core::DeviceAllocator& dev, std::size_t page, void** other,
                                 prim::Stream stream = nullptr, const std::function<void()>& before_free = {}) {
  void* x = dev.alloc(2 * page, stream);
  void* y = dev.alloc(2 * page, stream);
  dev.free(x);
  dev.free(y);
  void* w = dev.alloc(4 * page, stream);  // one of the two views, extended with the other's pages
  if (before_free) before_free();
  dev.free(w);
  *other = dev.alloc(2 * page, stream);  // best fit: the 2-page view, whose pages W maps too
  return w;
}

}  // namespace memlake::test
