// What the GPU probes share: error checks (the failing call, its file and
// line, the driver's or runtime's error name; then exit(1)), a streaming-read
// kernel, and the allocation and access descriptions of device memory.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                           \
  do {                                                                                  \
    CUresult r_ = (x);                                                                  \
    if (r_ != CUDA_SUCCESS) {                                                           \
      const char* s_ = nullptr;                                                         \
      cuGetErrorName(r_, &s_);                                                          \
      std::fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)
#define RK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t r_ = (x);                                                                      \
    if (r_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(r_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

namespace probe {

constexpr size_t kMiB = size_t{1} << 20;

// Reads n float4 and keeps the reads (the store never happens on zeroed memory).
__global__ void stream_read(const float4* p, size_t n, float* out) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    float4 v = p[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.f) out[0] = acc;
}

// Physical memory on device 0, as cuMemCreate takes it.
inline CUmemAllocationProp device_prop() {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  return prop;
}

// Read-write access for that device, as cuMemSetAccess takes it.
inline CUmemAccessDesc device_rw() {
  CUmemAccessDesc acc{};
  acc.location = device_prop().location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return acc;
}

}  // namespace probe
