#include "io/stream_copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#define MEMLAKE_HAVE_SSE2_STREAM 1
#endif

namespace memlake::io {

void stream_copy(void* dst, const void* src, std::size_t n) {
#ifdef MEMLAKE_HAVE_SSE2_STREAM
  // Below this, the destination probably stays in cache and is read soon
  // enough that ordinary stores win.
  constexpr std::size_t kStreamAbove = std::size_t{256} << 10;
  if (n < kStreamAbove) {
    std::memcpy(dst, src, n);
    return;
  }
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  // Non-temporal stores need a 16-byte aligned destination; loads may be unaligned.
  const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15;
  std::memcpy(d, s, head);
  d += head, s += head, n -= head;
  const std::size_t body = n & ~std::size_t{63};
  for (std::size_t i = 0; i < body; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + body, s + body, n - body);
  _mm_sfence();  // streamed stores are weakly ordered: make them visible before the DMA is queued
#else
  std::memcpy(dst, src, n);
#endif
}

}  // namespace memlake::io
