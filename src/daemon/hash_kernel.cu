// The content-id leaf kernel: one thread hashes one leaf of a device buffer
// (BLAKE2b-256, the core of blake2b_core.h that the host uses too) into its
// 32-byte slot of a digest array. The root is hashed on the host.
//
// Built to PTX by nvcc at build time (CMake option MEMLAKE_DEVICE_HASH) and
// embedded in the library as text; the cuda backend loads it with
// cuModuleLoadData and launches the entry below (prim/kernels.h names it).
// No runtime API: only the driver API launches it.
#include "daemon/blake2b_core.h"

namespace {

using memlake::daemon::b2::hash_leaf;

// One leaf. At a 16-byte-aligned address (every leaf of a mapped range is):
// 128-bit loads through the read-only data path and an L2 prefetch a few
// blocks ahead, inside the leaf only. Elsewhere (C API callers may pass any
// pointer): byte loads. One source type, so the compression is inlined once.
struct DeviceSource {
  const unsigned char* p;
  unsigned long long n;
  bool wide;
  __device__ void block(std::uint64_t off, std::uint64_t m[16]) const {
    if (!wide) {
      MEMLAKE_UNROLL
      for (int i = 0; i < 16; ++i) m[i] = memlake::daemon::b2::load64_le(p + off + 8 * i);
      return;
    }
#if defined(__CUDA_ARCH__)  // (tests/test_content_id.cpp runs this file on the host too)
    constexpr unsigned long long kAhead = 8 * 128;
    if (off + kAhead + 128 <= n) asm volatile("prefetch.global.L2 [%0];" ::"l"(p + off + kAhead));
#endif
    const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p + off);
    MEMLAKE_UNROLL
    for (int i = 0; i < 8; ++i) {
      const ulonglong2 w = __ldg(q + i);
      m[2 * i] = w.x;  // the GPU is little-endian, as BLAKE2b's words
      m[2 * i + 1] = w.y;
    }
  }
  __device__ std::uint8_t byte(std::uint64_t i) const { return p[i]; }
};

}  // namespace

// digests: ceil(n / leaf_bytes) * 32 bytes; leaf i covers
// [data + i * leaf_bytes, data + min(n, (i + 1) * leaf_bytes)).
extern "C" __global__ void memlake_hash_leaves(const unsigned char* data, unsigned long long n,
                                               unsigned long long leaf_bytes, unsigned char* digests) {
  const unsigned long long leaves = (n + leaf_bytes - 1) / leaf_bytes;
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= leaves) return;
  const unsigned long long off = i * leaf_bytes;
  const unsigned long long len = n - off < leaf_bytes ? n - off : leaf_bytes;
  const unsigned char* p = data + off;
  const bool wide = (reinterpret_cast<unsigned long long>(p) & 15) == 0;
  hash_leaf(DeviceSource{p, len, wide}, len, digests + 32 * i);
}
