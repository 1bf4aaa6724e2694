// The C ABI's allocation loop in the state the shim probe leaves
// (tests/gpu/shim_probe.cu; the pattern is bench::fragment_like_shim_probe,
// the same as `memlake bench alloc --fragmented`), then N pairs of
// memlake_alloc+memlake_free of one size. For instruction counts, which a
// noisy machine cannot blur:
//
//   valgrind --tool=callgrind build/bench/memlake_frag_loop 64 20000
//   valgrind --tool=callgrind build/bench/memlake_frag_loop 64 0     (setup only)
//
// (instructions per pair = the difference / 20000). Without valgrind it
// prints the wall-clock time per pair. Host backend unless MEMLAKE_BACKEND
// says otherwise. Arguments: size in MiB (64), pairs (200000).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "bench/alloc_bench.h"
#include "core/error.h"

int main(int argc, char** argv) {
  const std::size_t size = static_cast<std::size_t>(argc > 1 ? std::atoll(argv[1]) : 64) << 20;
  const long pairs = argc > 2 ? std::atol(argv[2]) : 200000;
  try {
    memlake::Options o = memlake::Options::from_env();
    if (!std::getenv("MEMLAKE_BACKEND")) o.backend = "host";
    memlake_options* mo = nullptr;
    memlake_allocator* a = nullptr;
    memlake_options_create(&mo, 1);
    memlake_options_set(mo, "backend", o.backend.c_str());
    const memlake_status st = memlake_create(mo, &a);
    memlake_options_destroy(mo);
    if (st != MEMLAKE_OK) throw memlake::Error(memlake::Errc::unavailable, memlake_last_error());
    auto side = std::make_unique<memlake::bench::SideStream>(o);  // outlives the allocator
    memlake::bench::fragment_like_shim_probe(a, side->get());
    auto pair = [&] {
      void* p = nullptr;
      if (memlake_alloc(a, size, 0, nullptr, &p) != MEMLAKE_OK)
        throw memlake::Error(memlake::Errc::out_of_memory, memlake_last_error());
      memlake_free(a, p, 0, nullptr);
    };
    pair();
    const auto t = std::chrono::steady_clock::now();
    for (long i = 0; i < pairs; ++i) pair();
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t).count();
    std::printf("%zu MiB: %ld pairs, %.0f ns per pair\n", size >> 20, pairs, pairs ? ns / static_cast<double>(pairs) : 0.0);
    memlake_destroy(a);
    return 0;
  } catch (const memlake::Error& e) {
    std::fprintf(stderr, "memlake_frag_loop: %s\n", e.what());
    return 1;
  }
}
