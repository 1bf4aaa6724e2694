// The BLAKE2b core (RFC 7693), shared by host C++ and CUDA device code so
// that the two cannot drift: the compression function F, the parameter
// block of an unkeyed hash, and the one-shot hash of a leaf that both the
// host (content_id.cpp) and the kernel (hash_kernel.cu) use for content ids.
//
// Plain C++17, no std:: containers and no library calls: everything here
// is MEMLAKE_HD (__host__ __device__ under nvcc, nothing otherwise).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define MEMLAKE_HD __host__ __device__
#define MEMLAKE_UNROLL _Pragma("unroll")
#else
#define MEMLAKE_HD
#define MEMLAKE_UNROLL
#endif

namespace memlake::daemon::b2 {

constexpr std::size_t kBlockBytes = 128;

MEMLAKE_HD inline std::uint64_t iv(int i) {
  constexpr std::uint64_t k[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
                                  0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
                                  0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
  return k[i];
}

MEMLAKE_HD inline std::uint64_t rotr(std::uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

// Little-endian 64-bit word at p (any alignment, any host byte order).
MEMLAKE_HD inline std::uint64_t load64_le(const std::uint8_t* p) {
#if !defined(__CUDA_ARCH__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  std::uint64_t v;  // one unaligned load: g++ does not merge the byte loop below (0.6x the speed)
  __builtin_memcpy(&v, p, 8);
  return v;
#else
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
#endif
}

// h: the chaining state of an unkeyed hash with an out_len-byte digest (1..64).
MEMLAKE_HD inline void init(std::uint64_t h[8], unsigned out_len) {
  MEMLAKE_UNROLL
  for (int i = 0; i < 8; ++i) h[i] = iv(i);
  h[0] ^= 0x01010000ULL ^ out_len;  // depth 1, fanout 1, no key
}

// F: compresses the block m into h; t = (t0, t1) bytes hashed so far
// including this block; last marks the final block.
MEMLAKE_HD inline void compress(std::uint64_t h[8], const std::uint64_t m[16], std::uint64_t t0, std::uint64_t t1,
                                bool last) {
  constexpr std::uint8_t sigma[12][16] = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
      {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
      {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
      {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
      {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};
  std::uint64_t v[16];
  MEMLAKE_UNROLL
  for (int i = 0; i < 8; ++i) v[i] = h[i], v[i + 8] = iv(i);
  v[12] ^= t0;
  v[13] ^= t1;
  if (last) v[14] = ~v[14];
#define MEMLAKE_B2_G(a, b, c, d, x, y) \
  v[a] = v[a] + v[b] + (x);            \
  v[d] = rotr(v[d] ^ v[a], 32);        \
  v[c] = v[c] + v[d];                  \
  v[b] = rotr(v[b] ^ v[c], 24);        \
  v[a] = v[a] + v[b] + (y);            \
  v[d] = rotr(v[d] ^ v[a], 16);        \
  v[c] = v[c] + v[d];                  \
  v[b] = rotr(v[b] ^ v[c], 63);
  MEMLAKE_UNROLL
  for (int r = 0; r < 12; ++r) {
    const std::uint8_t* s = sigma[r];
    MEMLAKE_B2_G(0, 4, 8, 12, m[s[0]], m[s[1]])
    MEMLAKE_B2_G(1, 5, 9, 13, m[s[2]], m[s[3]])
    MEMLAKE_B2_G(2, 6, 10, 14, m[s[4]], m[s[5]])
    MEMLAKE_B2_G(3, 7, 11, 15, m[s[6]], m[s[7]])
    MEMLAKE_B2_G(0, 5, 10, 15, m[s[8]], m[s[9]])
    MEMLAKE_B2_G(1, 6, 11, 12, m[s[10]], m[s[11]])
    MEMLAKE_B2_G(2, 7, 8, 13, m[s[12]], m[s[13]])
    MEMLAKE_B2_G(3, 4, 9, 14, m[s[14]], m[s[15]])
  }
#undef MEMLAKE_B2_G
  MEMLAKE_UNROLL
  for (int i = 0; i < 8; ++i) h[i] ^= v[i] ^ v[i + 8];
}

// The first out_len bytes of the state, little-endian: the digest.
MEMLAKE_HD inline void digest_bytes(const std::uint64_t h[8], std::uint8_t* out, unsigned out_len) {
  for (unsigned i = 0; i < out_len; ++i) out[i] = static_cast<std::uint8_t>(h[i / 8] >> (8 * (i % 8)));
}

// Reads a leaf through `src`: src.block(off, m) loads the 16 words of the
// whole block at byte offset off; src.byte(i) returns byte i (the partial
// last block only). Device code supplies wide, aligned loads; the host, bytes.
struct BytesSource {
  const std::uint8_t* p;
  MEMLAKE_HD void block(std::uint64_t off, std::uint64_t m[16]) const {
    MEMLAKE_UNROLL
    for (int i = 0; i < 16; ++i) m[i] = load64_le(p + off + 8 * i);
  }
  MEMLAKE_HD std::uint8_t byte(std::uint64_t i) const { return p[i]; }
};

// BLAKE2b-256 of the n bytes of `src` into out[0..32): one leaf of a content id.
// One compress call site (inlined once per source); m is only ever indexed
// by constants after unrolling, so device code keeps it in registers.
template <class Source>
MEMLAKE_HD inline void hash_leaf(const Source& src, std::uint64_t n, std::uint8_t out[32]) {
  std::uint64_t h[8], m[16];
  init(h, 32);
  for (std::uint64_t off = 0;; off += kBlockBytes) {
    // A full block is compressed as non-final only when more bytes follow it.
    const bool last = n - off <= kBlockBytes;
    if (!last) {
      src.block(off, m);
    } else {  // the last block, zero-padded (n == 0: one block of zeros)
      MEMLAKE_UNROLL
      for (int w = 0; w < 16; ++w) {
        std::uint64_t x = 0;
        MEMLAKE_UNROLL
        for (int k = 0; k < 8; ++k) {
          const std::uint64_t i = off + 8 * w + k;
          if (i < n) x |= static_cast<std::uint64_t>(src.byte(i)) << (8 * k);
        }
        m[w] = x;
      }
    }
    compress(h, m, last ? n : off + kBlockBytes, 0, last);
    if (last) break;
  }
  digest_bytes(h, out, 32);
}

}  // namespace memlake::daemon::b2
