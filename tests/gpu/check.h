// Error checks shared by the GPU probes: the failing call, its file and line,
// and the driver's or runtime's error name; then exit(1).
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
