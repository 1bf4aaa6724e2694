// TickClock: a cheap monotonic tick for timing every allocation and free
// (the statistics' host_ns). On x86-64 with an invariant time-stamp counter
// it reads the TSC (a few ns; clock_gettime costs 20-40 ns in a VM, as much
// as a tenth of a hot-path allocation); elsewhere steady_clock's ns.
// TickRate converts ticks to ns from the rate measured over its own lifetime,
// so no calibration pause is needed at start-up (early readings, within the
// first millisecond, are approximate).
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace memlake::core {

class TickClock {
 public:
  static std::uint64_t now() {
#if defined(__x86_64__)
    if (tsc()) return __rdtsc();
#endif
    return steady_ns();
  }
  static std::uint64_t steady_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
  }
  // Whether ticks are TSC cycles (else they are ns).
  static bool tsc() {
#if defined(__x86_64__)
    static const bool invariant = [] {
      unsigned a = 0, b = 0, c = 0, d = 0;
      if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
      __cpuid(0x80000007u, a, b, c, d);
      return (d & (1u << 8)) != 0;  // invariant TSC: constant rate, runs in every C-state
    }();
    return invariant;
#else
    return false;
#endif
  }
};

class TickRate {
 public:
  TickRate() : tick0_(TickClock::now()), ns0_(TickClock::steady_ns()) {}
  double ns(std::uint64_t ticks) const {
    if (!TickClock::tsc()) return static_cast<double>(ticks);
    const std::uint64_t dt = TickClock::now() - tick0_, dns = TickClock::steady_ns() - ns0_;
    return dt == 0 ? 0.0 : static_cast<double>(ticks) * static_cast<double>(dns) / static_cast<double>(dt);
  }

 private:
  std::uint64_t tick0_, ns0_;
};

}  // namespace memlake::core
