// Content ids of shared buffers: BLAKE2b (RFC 7693), unkeyed, 32-byte digest.
//
// A buffer's id is a tree hash so that the leaves are hashed in parallel:
// every leaf of kLeafBytes (the last may be shorter) is hashed with
// BLAKE2b-256, then the root is BLAKE2b-256 over "memlake-content-v1", the
// buffer's length (8 bytes, little-endian) and the leaf digests in order.
// Two buffers have the same id exactly when (up to BLAKE2b collisions) they
// have the same bytes, wherever the id was computed.
//
// Where: content_id() hashes host bytes with host threads. content_id_device()
// first asks the backend to hash the leaves on the device
// (Backend::hash_leaves: the cuda backend launches the kernel of
// hash_kernel.cu, embedded as PTX when nvcc was found at build time) and
// hashes only the root on the host; where the backend cannot (host backend,
// built without nvcc, the driver refuses the PTX) the device bytes are copied
// through pinned staging in pieces while host threads hash the previous one.
// Host and kernel share one BLAKE2b core (blake2b_core.h), so every path
// gives the same id.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace memlake::prim {
class Backend;
}

namespace memlake::daemon {

using Digest = std::array<std::uint8_t, 32>;
constexpr std::size_t kLeafBytes = std::size_t{4} << 20;

// Incremental BLAKE2b with a digest of 1..64 bytes.
class Blake2b {
 public:
  explicit Blake2b(std::size_t out_len = 32);
  void update(const void* data, std::size_t n);
  void final(std::uint8_t* out);  // out_len bytes

 private:
  void compress(bool last);
  std::uint64_t h_[8];
  std::uint64_t t_[2] = {0, 0};
  std::uint8_t buf_[128];
  std::size_t fill_ = 0;
  std::size_t out_len_;
};

// Id of host bytes (threads: 0 = one per core, at most 16).
Digest content_id(const void* data, std::size_t n, int threads = 0);
// Id of device bytes [va, va+n) of `b` (mapped, readable): leaves hashed by
// b.hash_leaves() where it can, else copied to pinned host memory in pieces
// (pinned staging of the backend, two pieces in flight) and hashed here.
Digest content_id_device(prim::Backend& b, std::uintptr_t va, std::size_t n, int threads = 0);

std::string to_hex(const Digest& d);
// False if `hex` is not 64 hexadecimal digits.
bool from_hex(const std::string& hex, Digest* out);

}  // namespace memlake::daemon
