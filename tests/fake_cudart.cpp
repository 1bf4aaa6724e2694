// A stand-in for libcudart.so's copy functions, for the shim test on a
// machine without CUDA: the shim must hand calls it does not take to the
// next definition (this one) with the arguments unchanged.
#include <cstddef>

extern "C" {
std::size_t fake_cudart_last_bytes = 0;
void* fake_cudart_last_stream = nullptr;
int cudaMemcpy(void*, const void*, std::size_t n, int) {
  fake_cudart_last_bytes = n;
  return 4242;
}
int cudaMemcpyAsync(void*, const void*, std::size_t n, int, void* stream) {
  fake_cudart_last_bytes = n;
  fake_cudart_last_stream = stream;
  return 4343;
}
}
