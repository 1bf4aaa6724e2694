// A deliberately buggy CUDA program: its kernel writes past the end of an
// allocation, or into one already freed. Run it under the shim with
// MEMLAKE_GUARD=1 / MEMLAKE_QUARANTINE=N (scripts/gpu_suite.sh) and without:
//   guard_probe overrun|uaf   -> prints "RESULT {json}"
// With the safety mode on, the write hits an unmapped range and the device
// reports an illegal address at the next synchronisation; without it, the
// write silently lands in memory that belongs to someone else (the next
// allocation's, or a reused block). The program then asks memlake (when the
// shim is loaded) to name the allocation behind the address it wrote.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

__global__ void poke(unsigned char* p, size_t off, unsigned char v) { p[off] = v; }

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "overrun";
  unsigned char *a = nullptr, *b = nullptr;
  size_t off = 0;
  if (mode == "overrun") {
    cudaMalloc(&a, 1000);
    cudaMalloc(&b, 1000);  // a neighbour the overrun could corrupt
    off = 1024 + 64;       // past round_up(1000, 512): the guard page under MEMLAKE_GUARD=1
  } else {
    cudaMalloc(&a, 1 << 20);
    cudaFree(a);  // quarantined under MEMLAKE_QUARANTINE=N
    off = 10;
  }
  const unsigned long long addr = reinterpret_cast<unsigned long long>(a) + off;
  poke<<<1, 1>>>(a, off, 0xAB);
  cudaError_t e = cudaDeviceSynchronize();
  std::string named;
  using Describe = size_t (*)(unsigned long long, char*, size_t);
  if (auto describe = reinterpret_cast<Describe>(dlsym(RTLD_DEFAULT, "memlake_describe_address"))) {
    char buf[256];
    if (describe(addr, buf, sizeof buf) > 0) named = buf;
  }
  std::printf("RESULT {\"mode\":\"%s\",\"sync_error\":\"%s\",\"address\":\"0x%llx\",\"memlake\":\"%s\"}\n", mode.c_str(),
              cudaGetErrorName(e), addr, named.c_str());
  return 0;
}
