#include "daemon/content_id.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "core/error.h"
#include "prim/prim.h"

namespace memlake::daemon {
namespace {

constexpr std::uint64_t kIv[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
                                  0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
                                  0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
constexpr std::uint8_t kSigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

inline std::uint64_t rotr(std::uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }
inline std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);  // little-endian host (x86-64, aarch64)
  return v;
}

}  // namespace

Blake2b::Blake2b(std::size_t out_len) : out_len_(out_len) {
  if (out_len == 0 || out_len > 64) throw_error(Errc::invalid_argument, "BLAKE2b digest length must be 1..64");
  std::memcpy(h_, kIv, sizeof h_);
  h_[0] ^= 0x01010000ULL ^ out_len;  // no key
}

void Blake2b::compress(bool last) {
  std::uint64_t v[16], m[16];
  for (int i = 0; i < 8; ++i) v[i] = h_[i], v[i + 8] = kIv[i];
  v[12] ^= t_[0];
  v[13] ^= t_[1];
  if (last) v[14] = ~v[14];
  for (int i = 0; i < 16; ++i) m[i] = load64(buf_ + 8 * i);
  auto g = [&](int a, int b, int c, int d, std::uint64_t x, std::uint64_t y) {
    v[a] = v[a] + v[b] + x;
    v[d] = rotr(v[d] ^ v[a], 32);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 24);
    v[a] = v[a] + v[b] + y;
    v[d] = rotr(v[d] ^ v[a], 16);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 63);
  };
  for (int r = 0; r < 12; ++r) {
    const std::uint8_t* s = kSigma[r];
    g(0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (int i = 0; i < 8; ++i) h_[i] ^= v[i] ^ v[i + 8];
}

void Blake2b::update(const void* data, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (n > 0) {
    if (fill_ == 128) {  // a full block is compressed only once more input follows
      t_[0] += 128;
      if (t_[0] < 128) ++t_[1];
      compress(false);
      fill_ = 0;
    }
    const std::size_t take = std::min(n, 128 - fill_);
    std::memcpy(buf_ + fill_, p, take);
    fill_ += take;
    p += take;
    n -= take;
  }
}

void Blake2b::final(std::uint8_t* out) {
  t_[0] += fill_;
  if (t_[0] < fill_) ++t_[1];
  std::memset(buf_ + fill_, 0, 128 - fill_);
  compress(true);
  std::uint8_t full[64];
  std::memcpy(full, h_, 64);
  std::memcpy(out, full, out_len_);
}

namespace {

int thread_count(int threads) {
  if (threads > 0) return std::min(threads, 64);
  const unsigned hc = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hc, 1u, 16u));
}

// Leaf digests of [p, p+n) (n a multiple of kLeafBytes except at the very end) into out.
void hash_leaves(const std::uint8_t* p, std::size_t n, Digest* out, int threads) {
  const std::size_t leaves = (n + kLeafBytes - 1) / kLeafBytes;
  auto work = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      Blake2b h;
      const std::size_t off = i * kLeafBytes;
      h.update(p + off, std::min(kLeafBytes, n - off));
      h.final(out[i].data());
    }
  };
  const std::size_t t = std::min<std::size_t>(static_cast<std::size_t>(threads), leaves);
  if (t <= 1) return work(0, leaves);
  std::vector<std::thread> pool;
  const std::size_t per = (leaves + t - 1) / t;
  for (std::size_t k = 0; k < t; ++k) {
    const std::size_t a = k * per, b = std::min(leaves, a + per);
    if (a < b) pool.emplace_back(work, a, b);
  }
  for (auto& th : pool) th.join();
}

Digest root(std::size_t n, const std::vector<Digest>& leaves) {
  Blake2b h;
  static const char tag[] = "memlake-content-v1";
  h.update(tag, sizeof tag - 1);
  std::uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(n) >> (8 * i));
  h.update(len, 8);
  for (const Digest& d : leaves) h.update(d.data(), d.size());
  Digest out;
  h.final(out.data());
  return out;
}

}  // namespace

Digest content_id(const void* data, std::size_t n, int threads) {
  std::vector<Digest> leaves((n + kLeafBytes - 1) / kLeafBytes);
  hash_leaves(static_cast<const std::uint8_t*>(data), n, leaves.data(), thread_count(threads));
  return root(n, leaves);
}

Digest content_id_device(prim::Backend& b, std::uintptr_t va, std::size_t n, int threads) {
  constexpr std::size_t kPiece = 16 * kLeafBytes;  // 64 MiB per copy
  std::vector<Digest> leaves((n + kLeafBytes - 1) / kLeafBytes);
  if (n == 0) return root(0, leaves);
  const int t = thread_count(threads);
  const std::size_t piece = std::min(kPiece, n);
  struct Pinned {
    prim::Backend& b;
    void* p;
    ~Pinned() { b.free_pinned(p); }
  };
  Pinned buf0{b, b.alloc_pinned(piece)};
  Pinned buf1{b, b.alloc_pinned(piece)};
  std::uint8_t* bufs[2] = {static_cast<std::uint8_t*>(buf0.p), static_cast<std::uint8_t*>(buf1.p)};
  prim::Stream s = b.create_stream();
  struct StreamGuard {
    prim::Backend& b;
    prim::Stream s;
    ~StreamGuard() {
      try {
        b.synchronize_stream(s);
        b.destroy_stream(s);
      } catch (...) {
      }
    }
  } sg{b, s};
  // Copy piece k+1 while the threads hash piece k.
  std::future<void> hashing;
  for (std::size_t off = 0, k = 0; off < n; off += piece, ++k) {
    const std::size_t len = std::min(piece, n - off);
    std::uint8_t* dst = bufs[k & 1];
    b.copy_to_host_async(dst, va + off, len, s);
    b.synchronize_stream(s);
    if (hashing.valid()) hashing.get();
    hashing = std::async(std::launch::async, [&leaves, dst, len, off, t] {
      hash_leaves(dst, len, leaves.data() + off / kLeafBytes, t);
    });
  }
  if (hashing.valid()) hashing.get();
  return root(n, leaves);
}

std::string to_hex(const Digest& d) {
  static const char* x = "0123456789abcdef";
  std::string s;
  for (std::uint8_t c : d) s += x[c >> 4], s += x[c & 15];
  return s;
}

bool from_hex(const std::string& hex, Digest* out) {
  if (hex.size() != 64) return false;
  auto val = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < 32; ++i) {
    const int hi = val(hex[2 * i]), lo = val(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return true;
}

}  // namespace memlake::daemon
