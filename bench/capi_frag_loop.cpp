// The C ABI's allocation loop in the state the shim probe leaves
// (tests/gpu/shim_probe.cu): 96 blocks of 24..120 MiB, every other one
// freed, 12 stitched 640 MiB blocks, all freed, 64 MiB on a second stream;
// then N pairs of memlake_alloc+memlake_free of one size. For instruction
// counts, which a noisy machine cannot blur:
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
#include <vector>

#include "memlake/memlake.h"

int main(int argc, char** argv) {
  const std::size_t size = static_cast<std::size_t>(argc > 1 ? std::atoll(argv[1]) : 64) << 20;
  const long pairs = argc > 2 ? std::atol(argv[2]) : 200000;
  memlake_options* mo = nullptr;
  memlake_allocator* a = nullptr;
  memlake_options_create(&mo, 1);
  if (!std::getenv("MEMLAKE_BACKEND")) memlake_options_set(mo, "backend", "host");
  if (memlake_create(mo, &a) != MEMLAKE_OK) {
    std::fprintf(stderr, "memlake_frag_loop: %s\n", memlake_last_error());
    return 1;
  }
  memlake_options_destroy(mo);
  auto take = [&](std::size_t bytes, void* stream) {
    void* p = nullptr;
    if (memlake_alloc(a, bytes, 0, stream, &p) != MEMLAKE_OK) {
      std::fprintf(stderr, "memlake_frag_loop: %s\n", memlake_last_error());
      std::exit(1);
    }
    return p;
  };
  std::vector<void*> blocks, big;
  for (int i = 0; i < 96; ++i) blocks.push_back(take(std::size_t(24 + (i * 37) % 97) << 20, nullptr));
  for (int i = 0; i < 96; i += 2) memlake_free(a, blocks[i], 0, nullptr);
  for (int i = 0; i < 12; ++i) big.push_back(take(std::size_t(640) << 20, nullptr));
  for (int i = 1; i < 96; i += 2) memlake_free(a, blocks[i], 0, nullptr);
  for (void* p : big) memlake_free(a, p, 0, nullptr);
  void* side = reinterpret_cast<void*>(0x1230);  // a second stream (the host backend accepts any handle)
  memlake_free(a, take(std::size_t(64) << 20, side), 0, side);
  memlake_free(a, take(size, nullptr), 0, nullptr);
  const auto t = std::chrono::steady_clock::now();
  for (long i = 0; i < pairs; ++i) memlake_free(a, take(size, nullptr), 0, nullptr);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t).count();
  std::printf("%zu MiB: %ld pairs, %.0f ns per pair\n", size >> 20, pairs, pairs ? ns / static_cast<double>(pairs) : 0.0);
  memlake_destroy(a);
  return 0;
}
