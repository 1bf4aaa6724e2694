#include "daemon/content_id.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "core/error.h"
#include "daemon/blake2b_core.h"
#include "prim/prim.h"

namespace memlake::daemon {

Blake2b::Blake2b(std::size_t out_len) : out_len_(out_len) {
  if (out_len == 0 || out_len > 64) throw_error(Errc::invalid_argument, "BLAKE2b digest length must be 1..64");
  b2::init(h_, static_cast<unsigned>(out_len));
}

void Blake2b::compress(bool last) {
  std::uint64_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = b2::load64_le(buf_ + 8 * i);
  b2::compress(h_, m, t_[0], t_[1], last);
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
  b2::digest_bytes(h_, out, static_cast<unsigned>(out_len_));
}

namespace {

int thread_count(int threads) {
  if (threads > 0) return std::min(threads, 64);
  const unsigned hc = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hc, 1u, 16u));
}

// Leaf digests (32 bytes each) of [p, p+n) (n a multiple of kLeafBytes except
// at the very end) into out: the shared core's hash_leaf, as the kernel's.
void hash_leaves(const std::uint8_t* p, std::size_t n, std::uint8_t* out, int threads) {
  const std::size_t leaves = (n + kLeafBytes - 1) / kLeafBytes;
  auto work = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      const std::size_t off = i * kLeafBytes;
      b2::hash_leaf(b2::BytesSource{p + off}, std::min(kLeafBytes, n - off), out + 32 * i);
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

// The root over the leaf digests (32 bytes each, in order).
Digest root(std::size_t n, const std::vector<std::uint8_t>& leaf_digests) {
  Blake2b h;
  static const char tag[] = "memlake-content-v1";
  h.update(tag, sizeof tag - 1);
  std::uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(n) >> (8 * i));
  h.update(len, 8);
  h.update(leaf_digests.data(), leaf_digests.size());
  Digest out;
  h.final(out.data());
  return out;
}

std::size_t leaf_count(std::size_t n) { return (n + kLeafBytes - 1) / kLeafBytes; }

}  // namespace

Digest content_id(const void* data, std::size_t n, int threads) {
  std::vector<std::uint8_t> leaves(32 * leaf_count(n));
  hash_leaves(static_cast<const std::uint8_t*>(data), n, leaves.data(), thread_count(threads));
  return root(n, leaves);
}

Digest content_id_device(prim::Backend& b, std::uintptr_t va, std::size_t n, int threads) {
  constexpr std::size_t kPiece = 16 * kLeafBytes;  // 64 MiB per copy
  std::vector<std::uint8_t> leaves(32 * leaf_count(n));
  if (n == 0) return root(0, leaves);
  // The device hashes the leaves where the backend can (cuda with the
  // embedded kernel); only the root is hashed here.
  if (b.hash_leaves(va, n, kLeafBytes, leaves.data())) return root(n, leaves);
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
      hash_leaves(dst, len, leaves.data() + 32 * (off / kLeafBytes), t);
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
