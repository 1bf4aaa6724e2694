// Built without nvcc (MEMLAKE_DEVICE_HASH off): no device code is embedded.
#include "prim/kernels.h"

namespace memlake::prim {
const char* const kHashKernelPtx = nullptr;
}  // namespace memlake::prim
