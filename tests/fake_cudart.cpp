// A stand-in for libcudart.so's copy and allocation functions, for the shim
// tests on a machine without CUDA: the shim must hand calls it does not
// take to the next definition (this one) with the arguments unchanged.
#include <dlfcn.h>

#include <cstddef>

extern "C" {
std::size_t fake_cudart_last_bytes = 0;
void* fake_cudart_last_stream = nullptr;
void* fake_cudart_last_freed = nullptr;
int fake_cudart_mallocs = 0, fake_cudart_frees = 0;
constexpr int kInvalidValue = 1;
void* const kRuntimeBlock = reinterpret_cast<void*>(0x7f0000abc000);  // what this runtime "allocates"

int cudaMemcpy(void*, const void*, std::size_t n, int) {
  fake_cudart_last_bytes = n;
  return 4242;
}
int cudaMemcpyAsync(void*, const void*, std::size_t n, int, void* stream) {
  fake_cudart_last_bytes = n;
  fake_cudart_last_stream = stream;
  return 4343;
}
int cudaMalloc(void** p, std::size_t n) {
  ++fake_cudart_mallocs;
  fake_cudart_last_bytes = n;
  *p = kRuntimeBlock;
  return 0;
}
int cudaMallocAsync(void** p, std::size_t n, void* stream) {
  fake_cudart_last_stream = stream;
  return cudaMalloc(p, n);
}
int cudaFree(void* p) {
  ++fake_cudart_frees;
  fake_cudart_last_freed = p;
  if (!p) {  // the runtime's idiom for "initialise": its primary context becomes current
    if (auto* ctx = static_cast<int*>(dlsym(RTLD_DEFAULT, "fake_cuda_context"))) *ctx = 1;
    return 0;
  }
  return p == kRuntimeBlock ? 0 : kInvalidValue;
}
int cudaFreeAsync(void* p, void* stream) {
  fake_cudart_last_stream = stream;
  return cudaFree(p);
}
}
