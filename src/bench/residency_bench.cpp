#include "bench/residency_bench.h"

#include <algorithm>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <tuple>
#include <vector>

#include "core/device_allocator.h"
#include "core/error.h"
#include "residency/disk_tier.h"

namespace memlake::bench {
namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double timed(F&& f) {
  const auto t = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The bytes one piece holds: the shared pattern with the piece's identity
// stamped at both ends, so a piece restored into another's place shows.
void stamp(std::vector<unsigned char>& buf, std::uint64_t id) {
  std::memcpy(buf.data(), &id, sizeof id);
  std::memcpy(buf.data() + buf.size() - sizeof id, &id, sizeof id);
}

// Compares a piece's first and last `window` bytes (all of it when small).
bool intact(prim::Backend& be, void* p, std::vector<unsigned char>& want, std::uint64_t id) {
  stamp(want, id);
  const std::size_t n = want.size(), window = std::min<std::size_t>(n / 2, std::size_t{1} << 20);
  std::vector<unsigned char> got(window);
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  for (std::size_t off : {std::size_t{0}, n - window}) {
    be.read(got.data(), base + off, window);
    if (std::memcmp(got.data(), want.data() + off, window) != 0) return false;
  }
  return true;
}

// Plain O_DIRECT file I/O of `bytes` from/to a pinned ring, in requests of
// `chunk` bytes, `depth` of them in flight (one thread each): the disk's
// ceiling for the disk tier. Returns {write, read} GB/s.
std::pair<double, double> plain_disk(const std::string& dir, unsigned char* ring, std::size_t ring_bytes, std::size_t bytes,
                                     std::size_t chunk, unsigned depth) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
  if (fd < 0) fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) throw_error(Errc::driver, "bench residency: cannot create a file in " + dir + ": " + std::strerror(errno));
  chunk = std::min(chunk, ring_bytes);
  auto io = [&](bool w) {
    std::atomic<std::size_t> next{0};
    std::atomic<int> err{0};
    auto loop = [&] {
      for (std::size_t off; !err && (off = next.fetch_add(chunk)) < bytes;) {
        const std::size_t n = std::min(chunk, bytes - off);
        unsigned char* b = ring + off % (ring_bytes / chunk * chunk);
        const ssize_t r = w ? ::pwrite(fd, b, n, static_cast<off_t>(off)) : ::pread(fd, b, n, static_cast<off_t>(off));
        if (r != static_cast<ssize_t>(n)) err = r < 0 ? errno : EIO;
      }
    };
    std::vector<std::thread> ts;
    for (unsigned i = 1; i < depth; ++i) ts.emplace_back(loop);
    loop();
    for (auto& t : ts) t.join();
    if (err) {
      ::close(fd);
      throw_error(Errc::driver, std::string("bench residency: plain file ") + (w ? "write" : "read") + " failed: " + std::strerror(err));
    }
  };
  const double wr = static_cast<double>(bytes) / timed([&] { io(true); ::fdatasync(fd); }) / 1e9;
  const double rd = static_cast<double>(bytes) / timed([&] { io(false); }) / 1e9;
  ::close(fd);
  return {wr, rd};
}

std::string short_size(std::size_t b) {
  return b >= (std::size_t{1} << 30) ? fixed(static_cast<double>(b) / (1 << 30), 2) + " GiB"
                                      : fixed(static_cast<double>(b) / (1 << 20), 1) + " MiB";
}

}  // namespace

std::vector<ResidencySample> run_residency_bench(const ResidencyBenchConfig& cfg) {
  if (cfg.sizes.empty() || cfg.piece == 0 || cfg.reps < 1)
    throw_error(Errc::invalid_argument, "bench residency: sizes, piece and reps must be positive");
  std::vector<ResidencySample> out;
  for (std::size_t size : cfg.sizes) {
    core::DeviceAllocator dev(0, cfg.options);
    prim::Backend& be = dev.backend();
    const std::size_t piece = std::min(cfg.piece, size), n = std::max<std::size_t>(size / piece, 1);
    ResidencySample s;
    s.bytes = n * piece;
    s.pieces = n;
    // Two sets that trade places (one leaves while the other comes back),
    // a scratch set for the plain copies, and their pinned host buffers
    // (a ring of at most 2 GiB each way: past a few hundred MiB the plain
    // copy's rate does not depend on the size).
    std::vector<void*> set[2], scratch;
    std::vector<unsigned char> pat(piece);
    for (std::size_t i = 0; i < piece; ++i) pat[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    for (int k = 0; k < 2; ++k)
      for (std::size_t i = 0; i < n; ++i) {
        void* p = dev.alloc(piece, nullptr);
        stamp(pat, k * n + i + 1);
        be.write(reinterpret_cast<std::uintptr_t>(p), pat.data(), piece);
        set[k].push_back(p);
      }
    for (std::size_t i = 0; i < n; ++i) scratch.push_back(dev.alloc(piece, nullptr));
    const std::size_t ring = std::min(s.bytes, std::size_t{2} << 30) / piece * piece;
    auto* hx = static_cast<unsigned char*>(be.alloc_pinned(ring));
    auto* hy = static_cast<unsigned char*>(be.alloc_pinned(ring));
    std::memset(hx, 1, ring);
    std::memset(hy, 2, ring);
    prim::Stream s1 = be.create_stream(), s2 = be.create_stream();
    dev.reserve_host_tier(2 * s.bytes + (std::size_t{64} << 20));
    // Set 1 starts evicted, so its pages are in the pool: the timed restores
    // map pages the pool holds, as a tiering budget does.
    for (void* p : set[1]) dev.evict(p, residency::Mode::offload);
    std::vector<double> pd, ph, pb, me, mr, mb;
    auto plain = [&](bool d2h, bool h2d) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto d = reinterpret_cast<std::uintptr_t>(scratch[i]);
        const std::size_t off = i * piece % ring;
        if (d2h) be.copy_to_host_async(hx + off, d, piece, s1);
        if (h2d) be.copy_to_device_async(d, hy + off, piece, s2);
      }
      be.synchronize_stream(s1);
      be.synchronize_stream(s2);
    };
    int in = 0;  // the set on the GPU now
    for (int r = 0; r < cfg.reps; ++r) {
      const double bytes = static_cast<double>(s.bytes);
      pd.push_back(bytes / timed([&] { plain(true, false); }) / 1e9);
      me.push_back(bytes / timed([&] {
                     for (void* p : set[in]) dev.evict(p, residency::Mode::offload, /*wait=*/false);
                     dev.settle(true);
                   }) / 1e9);
      ph.push_back(bytes / timed([&] { plain(false, true); }) / 1e9);
      mr.push_back(bytes / timed([&] {
                     for (void* p : set[in]) dev.restore(p);
                     be.synchronize_device();
                   }) / 1e9);
      pb.push_back(2 * bytes / timed([&] { plain(true, true); }) / 1e9);
      mb.push_back(2 * bytes / timed([&] {
                     for (std::size_t i = 0; i < n; ++i) {
                       dev.evict(set[in][i], residency::Mode::offload, false);
                       dev.restore(set[1 - in][i]);
                     }
                     dev.settle(true);
                     be.synchronize_device();
                   }) / 1e9);
      in = 1 - in;
    }
    if (!cfg.options.disk_tier.empty()) {
      // set[1 - in] is evicted, in the host tier.
      s.disk = true;
      // The ceiling: the better of one 64 MiB request at a time and the tier's own shape
      // (requests of a part, as many in flight as it keeps), each way.
      const auto big = plain_disk(cfg.options.disk_tier, hx, ring, s.bytes, std::size_t{64} << 20, 1);
      const auto parts = plain_disk(cfg.options.disk_tier, hx, ring, s.bytes, residency::DiskTier::kPart, residency::DiskTier::kDepth);
      s.plain_write = std::max(big.first, parts.first);
      s.plain_read = std::max(big.second, parts.second);
      s.demote = static_cast<double>(s.bytes) / timed([&] {
                   for (void* p : set[1 - in]) dev.demote(p);
                 }) / 1e9;
      s.disk_direct = dev.residency_stats().disk_direct;
      s.disk_restore = static_cast<double>(s.bytes) / timed([&] {
                         for (void* p : set[1 - in]) dev.restore(p);
                         be.synchronize_device();
                       }) / 1e9;
      for (void* p : set[1 - in]) dev.evict(p, residency::Mode::offload);
      // The same across calls: every piece's move queued at once, on the tier's I/O threads.
      s.demote_async = static_cast<double>(s.bytes) / timed([&] {
                         for (void* p : set[1 - in]) dev.demote(p, /*wait=*/false);
                         dev.settle(true);
                       }) / 1e9;
      s.fetch = static_cast<double>(s.bytes) / timed([&] {
                  for (void* p : set[1 - in]) dev.fetch(p);
                  dev.settle(true);
                }) / 1e9;
    }
    for (void* p : set[1 - in]) dev.restore(p);
    be.synchronize_device();
    dev.settle(true);
    s.verified = true;
    for (int k = 0; k < 2; ++k)
      for (std::size_t i = 0; i < n; ++i) s.verified = s.verified && intact(be, set[k][i], pat, k * n + i + 1);
    s.plain_d2h = median(pd), s.plain_h2d = median(ph), s.plain_both = median(pb);
    s.evict = median(me), s.restore = median(mr), s.both = median(mb);
    be.destroy_stream(s1);
    be.destroy_stream(s2);
    be.free_pinned(hx);
    be.free_pinned(hy);
    for (int k = 0; k < 2; ++k)
      for (void* p : set[k]) dev.free(p);
    for (void* p : scratch) dev.free(p);
    out.push_back(s);
  }
  return out;
}

namespace {
// "12.3 (0.95)": a rate and its ratio to the plain baseline.
std::string rate(double v, double plain, int digits) { return fixed(v, digits) + " (" + fixed(v / plain, 2) + ")"; }
}  // namespace

std::string residency_table(const std::vector<ResidencySample>& v) {
  std::string o =
      "evict and restore through the pinned host tier (GB/s, median of the repeats; 'both': both directions at once, "
      "bytes moved in total per second)\n"
      "size        pieces  plain d2h  evict (x)       plain h2d  restore (x)     plain both  both (x)        verified\n";
  for (const auto& s : v) {
    char b[256];
    std::snprintf(b, sizeof b, "%-11s %6zu  %9s  %-14s  %9s  %-14s  %10s  %-14s  %s\n", short_size(s.bytes).c_str(),
                  s.pieces, fixed(s.plain_d2h, 1).c_str(),
                  rate(s.evict, s.plain_d2h, 1).c_str(), fixed(s.plain_h2d, 1).c_str(),
                  rate(s.restore, s.plain_h2d, 1).c_str(),
                  fixed(s.plain_both, 1).c_str(), rate(s.both, s.plain_both, 1).c_str(),
                  s.verified ? "yes" : "NO");
    o += b;
  }
  bool disk = false;
  for (const auto& s : v) disk = disk || s.disk;
  if (!disk) return o;
  o += "\nthe disk tier (GB/s, once; plain: O_DIRECT file writes and reads of as many bytes from pinned memory, the better of "
       "64 MiB requests one at a time and the tier's parts as many in flight as it keeps)\n"
       "size        plain write  demote (x)      async (x)       plain read  restore from disk (x)  read-ahead (x)  O_DIRECT\n";
  for (const auto& s : v) {
    char b[256];
    std::snprintf(b, sizeof b, "%-11s %11s  %-14s  %-14s  %10s  %-21s  %-14s  %s\n", short_size(s.bytes).c_str(),
                  fixed(s.plain_write, 2).c_str(), rate(s.demote, s.plain_write, 2).c_str(),
                  rate(s.demote_async, s.plain_write, 2).c_str(),
                  fixed(s.plain_read, 2).c_str(),
                  rate(s.disk_restore, s.plain_read, 2).c_str(),
                  rate(s.fetch, s.plain_read, 2).c_str(), s.disk_direct ? "yes" : "no");
    o += b;
  }
  return o;
}

std::string residency_json(const std::vector<ResidencySample>& v) {
  std::string o = "[";
  for (const auto& s : v) {
    if (o.size() > 1) o += ",";
    o += "{\"bytes\":" + std::to_string(s.bytes) + ",\"pieces\":" + std::to_string(s.pieces) +
         ",\"plain_d2h_gbps\":" + fixed(s.plain_d2h, 3) + ",\"evict_gbps\":" + fixed(s.evict, 3) +
         ",\"plain_h2d_gbps\":" + fixed(s.plain_h2d, 3) + ",\"restore_gbps\":" + fixed(s.restore, 3) +
         ",\"plain_both_gbps\":" + fixed(s.plain_both, 3) + ",\"both_gbps\":" + fixed(s.both, 3) +
         (s.disk ? ",\"plain_write_gbps\":" + fixed(s.plain_write, 3) + ",\"demote_gbps\":" + fixed(s.demote, 3) +
                       ",\"plain_read_gbps\":" + fixed(s.plain_read, 3) + ",\"disk_restore_gbps\":" + fixed(s.disk_restore, 3) +
                       ",\"demote_async_gbps\":" + fixed(s.demote_async, 3) + ",\"fetch_gbps\":" + fixed(s.fetch, 3) +
                       ",\"disk_direct\":" + (s.disk_direct ? "true" : "false")
                 : std::string()) +
         ",\"verified\":" + (s.verified ? "true" : "false") + "}";
  }
  return o + "]";
}

}  // namespace memlake::bench
