// Content ids on every path: the shared BLAKE2b core (blake2b_core.h, used by
// the host and by the kernel) against an independent reference, RFC 7693's
// vector, the device path through Backend::hash_leaves (a host stand-in here;
// the real kernel on the cuda backend where a GPU is present), the embedded PTX.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "daemon/blake2b_core.h"
#include "daemon/content_id.h"
#include "prim/decorators.h"
#include "prim/host_backend.h"
#include "prim/kernels.h"
#include "support.h"

// hash_kernel.cu's source compiled for the host: the kernel's indexing, its
// wide loads and its alignment choice run here, one "thread" after another,
// where no GPU is. (On a GPU, TheKernelHashesLikeTheHostOnTheCudaBackend runs
// the PTX itself.)
namespace emulated {
#define __global__
#define __device__
struct ulonglong2 {
  unsigned long long x, y;
};
inline ulonglong2 __ldg(const ulonglong2* p) { return *p; }
struct Dim {
  unsigned x = 0;
};
Dim blockIdx, blockDim, threadIdx;
#include "daemon/hash_kernel.cu"
#undef __global__
#undef __device__
void launch(unsigned grid, unsigned block, const unsigned char* data, unsigned long long n, unsigned long long leaf,
            unsigned char* digests) {
  blockDim.x = block;
  for (blockIdx.x = 0; blockIdx.x < grid; ++blockIdx.x)
    for (threadIdx.x = 0; threadIdx.x < block; ++threadIdx.x) memlake_hash_leaves(data, n, leaf, digests);
}
}  // namespace emulated

namespace memlake::daemon {
namespace {

// BLAKE2b-256 written out plainly from RFC 7693 (sections 3.1-3.3), apart
// from the library: what the shared core is checked against.
std::vector<std::uint8_t> reference_blake2b(const std::vector<std::uint8_t>& in, unsigned out_len) {
  static const std::uint64_t iv[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
                                      0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
                                      0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
  static const int sigma[10][16] = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
      {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
      {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
      {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
      {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0}};
  auto rotr = [](std::uint64_t x, int n) { return (x >> n) | (x << (64 - n)); };
  std::uint64_t h[8];
  for (int i = 0; i < 8; ++i) h[i] = iv[i];
  h[0] ^= 0x01010000ULL ^ out_len;
  const std::size_t blocks = in.empty() ? 1 : (in.size() + 127) / 128;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::uint8_t block[128] = {};
    const std::size_t off = 128 * b, take = std::min<std::size_t>(128, in.size() - off);
    if (take) std::memcpy(block, in.data() + off, take);
    std::uint64_t m[16], v[16];
    for (int i = 0; i < 16; ++i) {
      m[i] = 0;
      for (int k = 0; k < 8; ++k) m[i] |= std::uint64_t{block[8 * i + k]} << (8 * k);
    }
    for (int i = 0; i < 8; ++i) v[i] = h[i], v[i + 8] = iv[i];
    const bool last = b + 1 == blocks;
    v[12] ^= static_cast<std::uint64_t>(off + take);  // inputs here stay far below 2^64 bytes
    if (last) v[14] = ~v[14];
    auto g = [&](int a, int bb, int c, int d, std::uint64_t x, std::uint64_t y) {
      v[a] = v[a] + v[bb] + x, v[d] = rotr(v[d] ^ v[a], 32), v[c] = v[c] + v[d], v[bb] = rotr(v[bb] ^ v[c], 24);
      v[a] = v[a] + v[bb] + y, v[d] = rotr(v[d] ^ v[a], 16), v[c] = v[c] + v[d], v[bb] = rotr(v[bb] ^ v[c], 63);
    };
    for (int r = 0; r < 12; ++r) {
      const int* s = sigma[r % 10];
      g(0, 4, 8, 12, m[s[0]], m[s[1]]), g(1, 5, 9, 13, m[s[2]], m[s[3]]);
      g(2, 6, 10, 14, m[s[4]], m[s[5]]), g(3, 7, 11, 15, m[s[6]], m[s[7]]);
      g(0, 5, 10, 15, m[s[8]], m[s[9]]), g(1, 6, 11, 12, m[s[10]], m[s[11]]);
      g(2, 7, 8, 13, m[s[12]], m[s[13]]), g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; ++i) h[i] ^= v[i] ^ v[i + 8];
  }
  std::vector<std::uint8_t> out(out_len);
  for (unsigned i = 0; i < out_len; ++i) out[i] = static_cast<std::uint8_t>(h[i / 8] >> (8 * (i % 8)));
  return out;
}

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& c : v) c = static_cast<std::uint8_t>(rng());
  return v;
}

std::vector<std::uint8_t> core_leaf(const std::uint8_t* p, std::size_t n) {
  std::vector<std::uint8_t> out(32);
  b2::hash_leaf(b2::BytesSource{p}, n, out.data());
  return out;
}

// The Blake2b class, fed in uneven pieces.
std::vector<std::uint8_t> streamed(const std::vector<std::uint8_t>& in) {
  Blake2b h;
  for (std::size_t off = 0, k = 1; off < in.size(); k = k * 7 % 301 + 1) {
    const std::size_t take = std::min(k, in.size() - off);
    h.update(in.data() + off, take);
    off += take;
  }
  std::vector<std::uint8_t> out(32);
  h.final(out.data());
  return out;
}

const std::size_t kSizes[] = {0, 1, 2, 63, 64, 127, 128, 129, 255, 256, 257, 1000, 4096,
                              kLeafBytes - 1, kLeafBytes, kLeafBytes + 1, (3u << 20) + 5};

TEST(ContentId, SharedCoreAndTheBlake2bClassMatchAPlainReferenceOnEverySize) {
  unsigned seed = 1;
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto in = random_bytes(n, seed++);
    const auto want = reference_blake2b(in, 32);
    EXPECT_EQ(core_leaf(in.data(), n), want);
    EXPECT_EQ(streamed(in), want);
  }
}

TEST(ContentId, SharedCoreMatchesTheRfc7693VectorForAbc) {
  // RFC 7693, appendix A: BLAKE2b-512("abc").
  const char* want =
      "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
      "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923";
  auto hex = [](const std::uint8_t* p, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "0123456789abcdef"[p[i] >> 4], s += "0123456789abcdef"[p[i] & 15];
    return s;
  };
  std::uint64_t h[8], m[16] = {};
  b2::init(h, 64);
  m[0] = 'a' | ('b' << 8) | ('c' << 16);
  b2::compress(h, m, 3, 0, true);
  std::uint8_t out[64];
  b2::digest_bytes(h, out, 64);
  EXPECT_EQ(hex(out, 64), want);
  Blake2b cls(64);
  cls.update("abc", 3);
  cls.final(out);
  EXPECT_EQ(hex(out, 64), want);
  EXPECT_EQ(reference_blake2b({'a', 'b', 'c'}, 64), std::vector<std::uint8_t>(out, out + 64));
}

// hash_leaves computed on the host from the backend's bytes: a stand-in for a
// device that hashes, to test the path around it.
class LeafHashingBackend final : public prim::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  int calls = 0;
  bool hash_leaves(std::uintptr_t va, std::size_t n, std::size_t leaf, std::uint8_t* out) override {
    ++calls;
    std::vector<std::uint8_t> bytes(n);
    read(bytes.data(), va, n);
    for (std::size_t i = 0, off = 0; off < n; ++i, off += leaf)
      b2::hash_leaf(b2::BytesSource{bytes.data() + off}, std::min(leaf, n - off), out + 32 * i);
    return true;
  }
  void* alloc_pinned(std::size_t) override { ADD_FAILURE() << "staged though the backend hashes"; return nullptr; }
};

struct Mapped {
  prim::Backend& b;
  std::size_t size;
  std::uintptr_t va;
  prim::PhysHandle h;
  Mapped(prim::Backend& be, std::size_t n) : b(be), size((n + b.granularity()) / b.granularity() * b.granularity()) {
    va = b.reserve(size, 0);
    h = b.create(size);
    b.map(va, size, h);
    b.set_access(va, size, prim::Access::read_write);
  }
  ~Mapped() {
    b.unmap(va, size);
    b.release(h);
    b.free_reservation(va, size);
  }
};

TEST(ContentId, DeviceIdsEqualHostIdsOnTheHostBackendAndThroughAHashingBackend) {
  for (std::size_t n : {std::size_t{0}, std::size_t{129}, kLeafBytes, 2 * kLeafBytes + 77}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto bytes = random_bytes(n, 7);
    const Digest want = content_id(bytes.data(), n);
    prim::HostBackend host(0, 2 << 20, 0);
    Mapped r(host, n);
    host.write(r.va, bytes.data(), n);
    EXPECT_FALSE(host.hash_leaves(r.va, n, kLeafBytes, nullptr));  // the host backend leaves it to the caller
    EXPECT_EQ(content_id_device(host, r.va, n), want);

    // Through decorators (they forward hash_leaves), the leaves hashed by the backend.
    auto hashing = std::make_unique<LeafHashingBackend>(std::make_unique<prim::HostBackend>(0, 2 << 20, 0));
    LeafHashingBackend* hb = hashing.get();
    prim::CountingBackend counted(std::make_unique<prim::FaultyBackend>(std::move(hashing)));
    Mapped r2(counted, n);
    counted.write(r2.va, bytes.data(), n);
    EXPECT_EQ(content_id_device(counted, r2.va, n), want);
    EXPECT_EQ(hb->calls, n == 0 ? 0 : 1);
  }
}

TEST(ContentId, TheEmbeddedPtxHoldsTheKernelEntry) {
  if (!prim::kHashKernelPtx) GTEST_SKIP() << "built without nvcc: no PTX embedded";
  const std::string ptx = prim::kHashKernelPtx;
  EXPECT_NE(ptx.find(".version"), std::string::npos);
  EXPECT_NE(ptx.find(std::string(".entry ") + prim::kHashKernelEntry), std::string::npos);
}

TEST(ContentId, TheKernelSourceRunOnTheHostHashesLikeTheCore) {
  const auto bytes = random_bytes(3 * kLeafBytes + 4099 + 64, 13);
  for (std::size_t shift : {0, 3, 8, 16}) {
    for (std::size_t leaf : {std::size_t{1000}, std::size_t{128}, std::size_t{4096}, kLeafBytes}) {
      const std::size_t len = leaf == kLeafBytes ? 3 * kLeafBytes + 4099 : 50 * leaf + 17;
      SCOPED_TRACE("shift " + std::to_string(shift) + ", leaf " + std::to_string(leaf));
      const std::size_t leaves = (len + leaf - 1) / leaf;
      std::vector<std::uint8_t> got(32 * leaves), want(32 * leaves);
      emulated::launch(static_cast<unsigned>((leaves + 31) / 32), 32, bytes.data() + shift, len, leaf, got.data());
      for (std::size_t i = 0; i < leaves; ++i)
        b2::hash_leaf(b2::BytesSource{bytes.data() + shift + i * leaf}, std::min(leaf, len - i * leaf), want.data() + 32 * i);
      EXPECT_EQ(got, want);
    }
  }
}

// On a GPU: the kernel's leaf digests equal the core's on the host, leaf by
// leaf (small, unaligned leaves too), and device ids equal host ids.
TEST(ContentId, TheKernelHashesLikeTheHostOnTheCudaBackend) {
  std::string why;
  if (!prim::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (!prim::kHashKernelPtx) GTEST_SKIP() << "built without nvcc: no kernel";
  prim::BackendConfig c;
  c.kind = "cuda";
  auto b = prim::make_backend(c);
  const std::size_t n = 3 * kLeafBytes + 4099;
  Mapped r(*b, n + 64);
  const auto bytes = random_bytes(n + 64, 11);
  b->write(r.va, bytes.data(), n + 64);
  for (std::size_t shift : {0, 3, 8}) {
    for (std::size_t leaf : {std::size_t{1000}, std::size_t{128}, kLeafBytes}) {
      const std::size_t len = leaf == kLeafBytes ? n : 50 * leaf + 17;
      SCOPED_TRACE("shift " + std::to_string(shift) + ", leaf " + std::to_string(leaf) + ", " + std::to_string(len) + " bytes");
      const std::size_t leaves = (len + leaf - 1) / leaf;
      std::vector<std::uint8_t> got(32 * leaves), want(32 * leaves);
      ASSERT_TRUE(b->hash_leaves(r.va + shift, len, leaf, got.data()));
      for (std::size_t i = 0; i < leaves; ++i)
        b2::hash_leaf(b2::BytesSource{bytes.data() + shift + i * leaf}, std::min(leaf, len - i * leaf), want.data() + 32 * i);
      EXPECT_EQ(got, want);
    }
    EXPECT_EQ(content_id_device(*b, r.va + shift, n), content_id(bytes.data() + shift, n));
  }
}

// The cuda backend with hash_leaves refused: content_id_device's staging path.
class StagingOnly final : public prim::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  bool hash_leaves(std::uintptr_t, std::size_t, std::size_t, std::uint8_t*) override { return false; }
};

// Not a benchmark, a record: the two paths over 1 GiB on this GPU, printed.
TEST(ContentId, KernelAndStagingTimesOnTheCudaBackend) {
  std::string why;
  if (!prim::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (!prim::kHashKernelPtx) GTEST_SKIP() << "built without nvcc: no kernel";
  prim::BackendConfig c;
  c.kind = "cuda";
  StagingOnly b(prim::make_backend(c));
  const std::size_t n = std::size_t{1} << 30;
  Mapped r(b, n);
  const auto bytes = random_bytes(64 << 20, 5);
  for (std::size_t off = 0; off < n; off += bytes.size()) b.write(r.va + off, bytes.data(), bytes.size());
  auto time = [](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    const Digest d = f();
    return std::make_pair(d, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  };
  const auto first = time([&] { return content_id_device(b.inner(), r.va, n); });  // loads the module (JIT)
  const auto kernel = time([&] { return content_id_device(b.inner(), r.va, n); });
  const auto staged = time([&] { return content_id_device(b, r.va, n); });
  EXPECT_EQ(kernel.first, staged.first);
  EXPECT_EQ(first.first, staged.first);
  std::printf("[content id] 1 GiB: kernel %.1f ms (first call, with the PTX's JIT, %.1f ms), host staging %.1f ms\n",
              kernel.second, first.second, staged.second);
}

}  // namespace
}  // namespace memlake::daemon
