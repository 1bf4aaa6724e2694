// Device code the cuda backend can launch, embedded in the library at build
// time as PTX text (nvcc -ptx, CMake option MEMLAKE_DEVICE_HASH) and loaded
// with cuModuleLoadData; the driver compiles it for the GPU at first use.
#pragma once

namespace memlake::prim {

// PTX of src/daemon/hash_kernel.cu, NUL-terminated; nullptr when memlake
// was built without nvcc (then Backend::hash_leaves answers false).
extern const char* const kHashKernelPtx;
// Its entry: BLAKE2b-256 of each leaf of a device range (Backend::hash_leaves).
inline constexpr char kHashKernelEntry[] = "memlake_hash_leaves";

}  // namespace memlake::prim
