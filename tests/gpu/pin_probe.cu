// Can a pageable copy skip the staging pass? The copy engine stages pageable
// memory through pinned buffers: every byte crosses host memory three times
// (the lanes read it and write it, the DMA reads or writes it), and on the
// H200 host H2D stays at 35-40 GB/s at 256 MiB against 55 pinned (session 13).
// The other way is to page-lock the caller's own pages piece by piece
// (cuMemHostRegister), let the DMA read them where they are, and unlock them
// once it is done: one crossing, no host memcpy. A whole 1 GiB registration
// takes 68 ms (15 GB/s, anchors.md), too slow on one thread; this probe
// measures whether registration runs in parallel on several threads and
// whether pieces registered, copied and unregistered in a pipeline beat the
// staged path.
//
//   nvcc -O2 -o pin_probe tests/gpu/pin_probe.cu -lcuda
//   ./pin_probe [size_MiB=256] [sections=register,pipeline,contended]
//
// Sections:
//   register  GB/s of cuMemHostRegister and of cuMemHostUnregister over the
//             buffer, T threads each on its own pieces of P MiB
//   pipeline  end-to-end GB/s of H2D and D2H pinned in place (T threads,
//             P MiB pieces, two pieces in flight per thread), next to a
//             pinned copy and the driver's pageable copy in the same run;
//             `fresh` uses a buffer never registered before (first touch
//             done before the clock starts), `reused` one registered before
//   Each with and without transparent huge pages (madvise) on the buffer.
//   contended pinned H2D and D2H over 1, 2 and 4 streams (the transfer split
//             in 8 MiB pieces, round robin) while T host threads copy
//             memory to memory with non-temporal stores, as the engine's
//             lanes do: how much the host's memory traffic slows the DMA,
//             and whether more copy engines at once win it back
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <emmintrin.h>

#include "probe.cuh"

namespace {

using probe::kMiB;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A touched anonymous mapping, with or without huge pages.
char *host_buffer(size_t n, bool thp) {
  void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  madvise(p, n, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  auto *c = static_cast<char *>(p);
  for (size_t i = 0; i < n; i += 4096)
    c[i] = static_cast<char>(i / 4096 * 131 + 7);
  return c;
}

// Hands out [off, off+len) pieces of n in order to whichever thread asks.
struct Pieces {
  size_t n, piece;
  std::atomic<size_t> next{0};
  bool take(size_t *off, size_t *len) {
    size_t o = next.fetch_add(piece);
    if (o >= n)
      return false;
    *off = o, *len = std::min(piece, n - o);
    return true;
  }
};

void run_threads(int t, const std::function<void(int)> &f) {
  std::vector<std::thread> ts;
  for (int i = 0; i < t; ++i)
    ts.emplace_back(f, i);
  for (auto &x : ts)
    x.join();
}

void register_rates(char *buf, size_t n, int threads, size_t piece,
                    unsigned flags, double *reg_gbps, double *unreg_gbps) {
  Pieces ps{n, piece};
  auto t0 = Clock::now();
  run_threads(threads, [&](int) {
    size_t off, len;
    while (ps.take(&off, &len))
      RK(cudaHostRegister(buf + off, len, flags));
  });
  double reg = seconds_since(t0);
  Pieces us{n, piece};
  t0 = Clock::now();
  run_threads(threads, [&](int) {
    size_t off, len;
    while (us.take(&off, &len))
      RK(cudaHostUnregister(buf + off));
  });
  double unreg = seconds_since(t0);
  *reg_gbps = n / reg / 1e9, *unreg_gbps = n / unreg / 1e9;
}

// H2D (to_device) or D2H with the host pages locked piece by piece in place.
double pinned_in_place(char *host, char *dev, size_t n, int threads,
                       size_t piece, bool to_device, unsigned flags) {
  Pieces ps{n, piece};
  std::vector<cudaStream_t> streams(threads);
  for (auto &s : streams)
    RK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto t0 = Clock::now();
  run_threads(threads, [&](int i) {
    struct Piece {
      char *p;
      cudaEvent_t done;
    };
    std::deque<Piece> q;
    auto retire = [&] {
      RK(cudaEventSynchronize(q.front().done));
      RK(cudaEventDestroy(q.front().done));
      RK(cudaHostUnregister(q.front().p));
      q.pop_front();
    };
    size_t off, len;
    while (ps.take(&off, &len)) {
      RK(cudaHostRegister(host + off, len, flags));
      if (to_device)
        RK(cudaMemcpyAsync(dev + off, host + off, len, cudaMemcpyHostToDevice,
                           streams[i]));
      else
        RK(cudaMemcpyAsync(host + off, dev + off, len, cudaMemcpyDeviceToHost,
                           streams[i]));
      cudaEvent_t e;
      RK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      RK(cudaEventRecord(e, streams[i]));
      q.push_back({host + off, e});
      if (q.size() > 1)
        retire();
    }
    while (!q.empty())
      retire();
  });
  double s = seconds_since(t0);
  for (auto &x : streams)
    RK(cudaStreamDestroy(x));
  return n / s / 1e9;
}

double plain_copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind) {
  auto t0 = Clock::now();
  RK(cudaMemcpy(dst, src, n, kind));
  return n / seconds_since(t0) / 1e9;
}

bool same(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i += 4096)
    if (a[i] != b[i])
      return false;
  return std::memcmp(a + n - 64, b + n - 64, 64) == 0;
}

double best_of(int reps, const std::function<double()> &f) {
  double b = 0;
  for (int i = 0; i < reps; ++i)
    b = std::max(b, f());
  return b;
}

// The lanes' kind of memory traffic: 64 MiB copies with streaming stores.
void hammer(const std::atomic<bool> &stop, std::atomic<size_t> *bytes) {
  const size_t n = 64 * kMiB;
  std::vector<char> a(n, 1), b(n, 2);
  size_t done = 0;
  while (!stop) {
    for (size_t i = 0; i < n && !stop; i += 64) {
      const __m128i *s = reinterpret_cast<const __m128i *>(a.data() + i);
      __m128i *d = reinterpret_cast<__m128i *>(b.data() + i);
      _mm_stream_si128(d, _mm_loadu_si128(s));
      _mm_stream_si128(d + 1, _mm_loadu_si128(s + 1));
      _mm_stream_si128(d + 2, _mm_loadu_si128(s + 2));
      _mm_stream_si128(d + 3, _mm_loadu_si128(s + 3));
      done += 64;
    }
  }
  *bytes += done;
}

// Pinned copy of n bytes split into 8 MiB pieces over `streams` streams; GB/s.
double split_copy(char *dev, char *pinned, size_t n, int streams,
                  bool to_device) {
  std::vector<cudaStream_t> ss(streams);
  for (auto &x : ss)
    RK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  auto t0 = Clock::now();
  size_t k = 0;
  for (size_t off = 0; off < n; off += 8 * kMiB, ++k) {
    const size_t len = std::min(8 * kMiB, n - off);
    if (to_device)
      RK(cudaMemcpyAsync(dev + off, pinned + off, len, cudaMemcpyHostToDevice,
                         ss[k % streams]));
    else
      RK(cudaMemcpyAsync(pinned + off, dev + off, len, cudaMemcpyDeviceToHost,
                         ss[k % streams]));
  }
  for (auto &x : ss)
    RK(cudaStreamSynchronize(x));
  double s = seconds_since(t0);
  for (auto &x : ss)
    RK(cudaStreamDestroy(x));
  return n / s / 1e9;
}

void contended(char *dev, char *pinned, size_t n) {
  std::printf("\n== contended (pinned GB/s, median of 5, while T host threads "
              "copy with streaming stores)\n");
  std::printf("%9s %7s %8s %8s %14s\n", "host thr", "streams", "H2D", "D2H",
              "host copy GB/s");
  for (int t : {0, 8, 15}) {
    std::atomic<bool> stop{false};
    std::atomic<size_t> bytes{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < t; ++i)
      ts.emplace_back(hammer, std::cref(stop), &bytes);
    std::this_thread::sleep_for(
        std::chrono::milliseconds(t ? 200 : 0)); // let them start
    const auto t0 = Clock::now();
    const size_t b0 = bytes;
    for (int s : {1, 2, 4}) {
      std::vector<double> h, d;
      for (int r = 0; r < 5; ++r) {
        h.push_back(split_copy(dev, pinned, n, s, true));
        d.push_back(split_copy(dev, pinned, n, s, false));
      }
      std::sort(h.begin(), h.end());
      std::sort(d.begin(), d.end());
      std::printf("%9d %7d %8.1f %8.1f\n", t, s, h[2], d[2]);
    }
    stop = true;
    for (auto &x : ts)
      x.join();
    if (t)
      std::printf("%9d %7s %8s %8s %14.1f\n", t, "", "", "",
                  (bytes - b0) / seconds_since(t0) / 1e9);
  }
}

} // namespace

int main(int argc, char **argv) {
  const size_t n =
      (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256) * kMiB;
  const std::string sections =
      argc > 2 ? argv[2] : "register,pipeline,contended";
  auto want = [&](const char *s) {
    return sections.find(s) != std::string::npos;
  };
  RK(cudaSetDevice(0));
  RK(cudaFree(nullptr));
  {
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string s;
    std::getline(thp, s);
    std::printf("size %zu MiB, THP: %s, cores %u\n", n / kMiB, s.c_str(),
                std::thread::hardware_concurrency());
  }
  char *dev = nullptr;
  RK(cudaMalloc(&dev, n));
  char *pinned = nullptr;
  RK(cudaMallocHost(&pinned, n));
  std::memset(pinned, 3, n);

  if (want("contended"))
    contended(dev, pinned, n);
  if (want("register")) {
    std::printf("\n== register (GB/s of pages locked / unlocked; best of 3)\n");
    std::printf("%-4s %7s %6s %9s %12s %14s\n", "thp", "threads", "piece",
                "flags", "register", "unregister");
    for (bool thp : {false, true}) {
      char *buf = host_buffer(n, thp);
      for (unsigned flags : {unsigned{cudaHostRegisterDefault},
                             unsigned{cudaHostRegisterReadOnly}})
        for (int t : {1, 4, 8, 16})
          for (size_t p : {2 * kMiB, 8 * kMiB, 32 * kMiB}) {
            double r = 0, u = 0;
            for (int rep = 0; rep < 3; ++rep) {
              double r1, u1;
              register_rates(buf, n, t, p, flags, &r1, &u1);
              r = std::max(r, r1), u = std::max(u, u1);
            }
            std::printf("%-4s %7d %4zuM %9s %12.1f %14.1f\n",
                        thp ? "on" : "off", t, p / kMiB,
                        flags ? "read-only" : "default", r, u);
          }
      munmap(buf, n);
    }
  }

  if (want("pipeline")) {
    std::printf("\n== pipeline (GB/s end to end; reused: best of 5; fresh: one "
                "new buffer each)\n");
    std::printf("%-4s %7s %6s %7s %8s %8s %9s %9s %9s %9s\n", "thp", "threads",
                "piece", "buffer", "H2D", "D2H", "pinnedH2D", "pinnedD2H",
                "plainH2D", "plainD2H");
    for (bool thp : {false, true}) {
      char *buf = host_buffer(n, thp);
      const double ph = best_of(3, [&] {
        return plain_copy(dev, pinned, n, cudaMemcpyHostToDevice);
      });
      const double pd = best_of(3, [&] {
        return plain_copy(pinned, dev, n, cudaMemcpyDeviceToHost);
      });
      const double gh = best_of(
          2, [&] { return plain_copy(dev, buf, n, cudaMemcpyHostToDevice); });
      const double gd = best_of(
          2, [&] { return plain_copy(buf, dev, n, cudaMemcpyDeviceToHost); });
      for (int t : {2, 4, 8, 16})
        for (size_t p : {4 * kMiB, 16 * kMiB, 64 * kMiB}) {
          if (p * t > n * 2)
            continue;
          double h = best_of(5, [&] {
            return pinned_in_place(buf, dev, n, t, p, true,
                                   cudaHostRegisterReadOnly);
          });
          std::vector<char> want(buf,
                                 buf + n); // check the H2D landed: copy back
                                           // through the pinned buffer
          RK(cudaMemcpy(pinned, dev, n, cudaMemcpyDeviceToHost));
          const bool ok_h = same(pinned, want.data(), n);
          RK(cudaMemset(dev, 0x5a, n));
          double d = best_of(5, [&] {
            return pinned_in_place(buf, dev, n, t, p, false,
                                   cudaHostRegisterDefault);
          });
          const bool ok_d =
              buf[0] == 0x5a && buf[n - 1] == 0x5a && buf[n / 2] == 0x5a;
          for (size_t i = 0; i < n; i += 4096)
            buf[i] = static_cast<char>(i / 4096 * 131 + 7);
          std::printf(
              "%-4s %7d %4zuM %7s %8.1f %8.1f %9.1f %9.1f %9.1f %9.1f %s\n",
              thp ? "on" : "off", t, p / kMiB, "reused", h, d, ph, pd, gh, gd,
              ok_h && ok_d ? "ok" : "MISMATCH");
          char *fresh = host_buffer(n, thp);
          double fh = pinned_in_place(fresh, dev, n, t, p, true,
                                      cudaHostRegisterReadOnly);
          munmap(fresh, n);
          fresh = host_buffer(n, thp);
          double fd = pinned_in_place(fresh, dev, n, t, p, false,
                                      cudaHostRegisterDefault);
          munmap(fresh, n);
          std::printf("%-4s %7d %4zuM %7s %8.1f %8.1f\n", thp ? "on" : "off", t,
                      p / kMiB, "fresh", fh, fd);
        }
      munmap(buf, n);
    }
  }
  RK(cudaFreeHost(pinned));
  RK(cudaFree(dev));
  return 0;
}
