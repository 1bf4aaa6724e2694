// Host memcpy for staging copies.
//
// The copy engine's host side moves gigabytes through pinned staging
// buffers that no CPU will read again soon: the DMA engine reads them (H2D)
// or the caller's buffer is the end of the line (D2H). Ordinary stores
// first read every destination line into the cache (read-for-ownership),
// so a copy costs three memory transfers per byte; non-temporal stores skip
// that read and leave the caches alone, so a copy costs two.
#pragma once

#include <cstddef>

namespace memlake::io {

// memcpy(dst, src, n) for non-overlapping ranges; large copies use
// non-temporal stores where the CPU has them (x86-64: SSE2) and end with a
// store fence, so the data is globally visible when it returns (before the
// caller hands the buffer to the DMA engine). Any alignment, any size.
void stream_copy(void* dst, const void* src, std::size_t n);

}  // namespace memlake::io
