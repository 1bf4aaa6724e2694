// libmemlake_preload.so: memlake under an unmodified CUDA program.
//
//   LD_PRELOAD=/path/to/libmemlake_preload.so ./program
//
// Where it hooks. The CUDA runtime (shared or linked statically, as nvcc
// does by default) never calls the driver through the dynamic linker: it
// dlopen()s libcuda.so.1, looks up cuGetProcAddress with dlsym() and asks
// it for every other entry point. Interposing cudaMalloc itself would miss
// every statically linked program, so the shim sits one level down, on the
// driver's entry points, reached three ways:
//   * dlsym(handle, "cuGetProcAddress[_v2]" or a hooked name) returns the
//     shim's function (this file defines dlsym and forwards to glibc's);
//   * cuGetProcAddress("cuMemAlloc", ...) returns the shim's cuMemAlloc_v2
//     when the requested ABI is the one it implements (version >= 3020, and
//     the _ptsz variants when per-thread default stream is asked for);
//   * programs linked with -lcuda bind to the shim's exported symbols.
// cudaMalloc -> cuMemAlloc_v2, cudaFree -> cuMemFree_v2, cudaMallocAsync ->
// cuMemAllocAsync, cudaFreeAsync -> cuMemFreeAsync, cudaMemGetInfo ->
// cuMemGetInfo_v2, so those are the functions hooked. Everything else (and
// all of these with MEMLAKE_SHIM=0, or a pointer memlake did not allocate)
// goes to the real driver untouched. Where the runtime is a shared library
// (PyTorch, most Python packages, `nvcc -cudart shared`), cudaMalloc,
// cudaFree, cudaMallocAsync and cudaFreeAsync (and their _ptsz variants)
// are also taken at the runtime's own symbols, which saves the runtime's
// work in front of the driver call; what memlake does not take goes to the
// runtime unchanged.
//
// Semantics kept: cuMemFree waits for the device's queued work before the
// memory can be reused (the driver's does; MEMLAKE_SHIM_SYNC_FREE=0 drops
// the wait); cuMemFreeAsync on another stream than the allocation's waits
// for that stream; cuMemGetInfo reports the driver's free memory plus what
// memlake holds unallocated, so a program sizing itself by free memory sees
// memlake's cache as free.
//
// Copies (opt-in, MEMLAKE_SHIM_COPY=1): cudaMemcpy/cudaMemcpyAsync between
// pageable host memory and the device are taken at the runtime's own entry
// points where the runtime is a shared library, and at the driver's
// cuMemcpyHtoD/DtoH[Async] (_v2, and the per-thread-stream variants) and
// unified cuMemcpy[Async] for callers of the driver API; copies of 8 MiB or more with a pageable host side go
// through memlake's copy engine (memlake_copy: staged by several threads)
// with the driver's semantics kept: an H2D returns once the source may be
// reused, a D2H returns with the data in place, both ordered on the given
// stream. Pinned host memory, device-to-device copies, small copies and
// anything memlake_copy refuses go to the driver.
//
// Like the prim layer, this file includes cuda.h: it implements the
// driver's own ABI.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "memlake/memlake.h"

// cuda.h renames these with macros; the shim defines the exact symbols.
#undef cuGetProcAddress
#undef cuMemAlloc
#undef cuMemFree
#undef cuMemGetInfo
#undef cuMemcpyHtoD
#undef cuMemcpyDtoH
#undef cuMemcpyHtoDAsync
#undef cuMemcpyDtoHAsync
#undef cuMemcpy
#undef cuMemcpyAsync

#define SHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using DlsymFn = void* (*)(void*, const char*);
using GetProcV1 = CUresult (*)(const char*, void**, int, cuuint64_t);
using GetProcV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using AllocFn = CUresult (*)(CUdeviceptr*, size_t);
using FreeFn = CUresult (*)(CUdeviceptr);
using AllocAsyncFn = CUresult (*)(CUdeviceptr*, size_t, CUstream);
using FreeAsyncFn = CUresult (*)(CUdeviceptr, CUstream);
using MemInfoFn = CUresult (*)(size_t*, size_t*);
using CtxGetDeviceFn = CUresult (*)(CUdevice*);
using SyncFn = CUresult (*)();
using StreamSyncFn = CUresult (*)(CUstream);
using PtrAttrFn = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
using IsCapturingFn = CUresult (*)(CUstream, CUstreamCaptureStatus*);
using HtoDFn = CUresult (*)(CUdeviceptr, const void*, size_t);
using DtoHFn = CUresult (*)(void*, CUdeviceptr, size_t);
using HtoDAsyncFn = CUresult (*)(CUdeviceptr, const void*, size_t, CUstream);
using DtoHAsyncFn = CUresult (*)(void*, CUdeviceptr, size_t, CUstream);
using CopyFn = CUresult (*)(CUdeviceptr, CUdeviceptr, size_t);
using CopyAsyncFn = CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream);

DlsymFn real_dlsym() {
  static DlsymFn fn = [] {
    // glibc >= 2.34 versions dlsym GLIBC_2.34 on x86-64; older ones GLIBC_2.2.5.
    for (const char* v : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"})
      if (void* p = dlvsym(RTLD_NEXT, "dlsym", v)) return reinterpret_cast<DlsymFn>(p);
    return static_cast<DlsymFn>(nullptr);
  }();
  return fn;
}

// The real driver's functions, found once.
struct Real {
  void* lib = nullptr;
  GetProcV1 get_proc_v1 = nullptr;
  GetProcV2 get_proc_v2 = nullptr;
  AllocFn alloc = nullptr;
  FreeFn free = nullptr;
  AllocAsyncFn alloc_async = nullptr, alloc_async_ptsz = nullptr;
  FreeAsyncFn free_async = nullptr, free_async_ptsz = nullptr;
  MemInfoFn mem_info = nullptr;
  CtxGetDeviceFn ctx_get_device = nullptr;
  SyncFn ctx_sync = nullptr;
  StreamSyncFn stream_sync = nullptr;
  PtrAttrFn ptr_attr = nullptr;
  IsCapturingFn is_capturing = nullptr;
  // Copies; [1] is the per-thread default stream variant.
  HtoDFn htod[2] = {};
  DtoHFn dtoh[2] = {};
  HtoDAsyncFn htod_async[2] = {};
  DtoHAsyncFn dtoh_async[2] = {};
  CopyFn copy[2] = {};
  CopyAsyncFn copy_async[2] = {};
};

const Real& real() {
  static Real r;
  static std::once_flag once;
  std::call_once(once, [] {
    DlsymFn sym = real_dlsym();
    r.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!r.lib || !sym) return;
    auto get = [&](const char* name) { return sym(r.lib, name); };
    r.get_proc_v1 = reinterpret_cast<GetProcV1>(get("cuGetProcAddress"));
    r.get_proc_v2 = reinterpret_cast<GetProcV2>(get("cuGetProcAddress_v2"));
    r.alloc = reinterpret_cast<AllocFn>(get("cuMemAlloc_v2"));
    r.free = reinterpret_cast<FreeFn>(get("cuMemFree_v2"));
    r.alloc_async = reinterpret_cast<AllocAsyncFn>(get("cuMemAllocAsync"));
    r.alloc_async_ptsz = reinterpret_cast<AllocAsyncFn>(get("cuMemAllocAsync_ptsz"));
    r.free_async = reinterpret_cast<FreeAsyncFn>(get("cuMemFreeAsync"));
    r.free_async_ptsz = reinterpret_cast<FreeAsyncFn>(get("cuMemFreeAsync_ptsz"));
    r.mem_info = reinterpret_cast<MemInfoFn>(get("cuMemGetInfo_v2"));
    r.ctx_get_device = reinterpret_cast<CtxGetDeviceFn>(get("cuCtxGetDevice"));
    r.ctx_sync = reinterpret_cast<SyncFn>(get("cuCtxSynchronize"));
    r.stream_sync = reinterpret_cast<StreamSyncFn>(get("cuStreamSynchronize"));
    r.ptr_attr = reinterpret_cast<PtrAttrFn>(get("cuPointerGetAttribute"));
    r.is_capturing = reinterpret_cast<IsCapturingFn>(get("cuStreamIsCapturing"));
    r.htod[0] = reinterpret_cast<HtoDFn>(get("cuMemcpyHtoD_v2"));
    r.htod[1] = reinterpret_cast<HtoDFn>(get("cuMemcpyHtoD_v2_ptds"));
    r.dtoh[0] = reinterpret_cast<DtoHFn>(get("cuMemcpyDtoH_v2"));
    r.dtoh[1] = reinterpret_cast<DtoHFn>(get("cuMemcpyDtoH_v2_ptds"));
    r.htod_async[0] = reinterpret_cast<HtoDAsyncFn>(get("cuMemcpyHtoDAsync_v2"));
    r.htod_async[1] = reinterpret_cast<HtoDAsyncFn>(get("cuMemcpyHtoDAsync_v2_ptsz"));
    r.dtoh_async[0] = reinterpret_cast<DtoHAsyncFn>(get("cuMemcpyDtoHAsync_v2"));
    r.dtoh_async[1] = reinterpret_cast<DtoHAsyncFn>(get("cuMemcpyDtoHAsync_v2_ptsz"));
    r.copy[0] = reinterpret_cast<CopyFn>(get("cuMemcpy"));
    r.copy[1] = reinterpret_cast<CopyFn>(get("cuMemcpy_ptds"));
    r.copy_async[0] = reinterpret_cast<CopyAsyncFn>(get("cuMemcpyAsync"));
    r.copy_async[1] = reinterpret_cast<CopyAsyncFn>(get("cuMemcpyAsync_ptsz"));
  });
  return r;
}

// Configuration, read once from memlake's option table.
struct Config {
  bool on = true;
  bool sync_free = true;
  bool copy = false;            // route large pageable copies to the copy engine
  bool registration = false;    // the copy engine's registration cache is on
  bool log = false;             // MEMLAKE_SHIM_LOG: entry points looked up, copy decisions
};

const Config& config() {
  static Config c = [] {
    Config x;
    memlake_options* o = nullptr;
    if (memlake_options_create(&o, 1) != MEMLAKE_OK) {
      std::fprintf(stderr, "memlake preload: bad MEMLAKE_* setting (%s); passing everything to the driver\n",
                   memlake_last_error());
      x.on = false;
      return x;
    }
    char buf[16];
    memlake_options_get(o, "shim", buf, sizeof buf);
    x.on = std::strcmp(buf, "1") == 0;
    memlake_options_get(o, "shim_sync_free", buf, sizeof buf);
    x.sync_free = std::strcmp(buf, "1") == 0;
    memlake_options_get(o, "shim_copy", buf, sizeof buf);
    x.copy = std::strcmp(buf, "1") == 0;
    memlake_options_get(o, "shim_log", buf, sizeof buf);
    x.log = std::strcmp(buf, "1") == 0;
    memlake_options_get(o, "copy_register_after", buf, sizeof buf);
    x.registration = std::strcmp(buf, "0") != 0;
    memlake_options_destroy(o);
    return x;
  }();
  return c;
}

// memlake's allocator, or null (then everything passes through). A failure
// to create it is reported once.
memlake_allocator* allocator() {
  if (!config().on) return nullptr;
  static memlake_allocator* a = [] {
    memlake_allocator* x = memlake_default();
    if (!x) std::fprintf(stderr, "memlake preload: %s; passing everything to the driver\n", memlake_last_error());
    return x;
  }();
  return a;
}

CUresult to_cu(memlake_status s) {
  switch (s) {
    case MEMLAKE_OK: return CUDA_SUCCESS;
    case MEMLAKE_ERROR_OUT_OF_MEMORY: return CUDA_ERROR_OUT_OF_MEMORY;
    case MEMLAKE_ERROR_INVALID_ARGUMENT: return CUDA_ERROR_INVALID_VALUE;
    case MEMLAKE_ERROR_UNAVAILABLE: return CUDA_ERROR_NOT_INITIALIZED;
    default: return CUDA_ERROR_UNKNOWN;
  }
}

// The device of the calling thread's current context.
CUresult current_device(int* dev) {
  CUdevice d = 0;
  CUresult r = real().ctx_get_device ? real().ctx_get_device(&d) : CUDA_ERROR_NOT_INITIALIZED;
  *dev = static_cast<int>(d);
  return r;
}

CUresult alloc_on(CUdeviceptr* dptr, size_t n, CUstream stream, bool* handled) {
  *handled = false;
  memlake_allocator* a = allocator();
  if (!a || !dptr || n == 0) return CUDA_SUCCESS;  // the driver answers (and reports misuse) itself
  int dev = 0;
  if (current_device(&dev) != CUDA_SUCCESS) return CUDA_SUCCESS;  // no context: the driver reports it
  *handled = true;
  void* p = nullptr;
  CUresult r = to_cu(memlake_alloc(a, n, dev, stream, &p));
  if (r == CUDA_SUCCESS) *dptr = reinterpret_cast<CUdeviceptr>(p);
  return r;
}

// Frees ptr if memlake owns it (*handled); otherwise leaves it to the driver.
CUresult free_on(CUdeviceptr ptr, CUstream stream, bool async, bool* handled) {
  *handled = false;
  memlake_allocator* a = allocator();
  if (!a || ptr == 0) return CUDA_SUCCESS;
  int dev = 0;
  if (current_device(&dev) != CUDA_SUCCESS) return CUDA_SUCCESS;
  void* p = reinterpret_cast<void*>(ptr);
  if (!async) {
    // memlake reuses a freed block in its allocation's stream order, but a
    // synchronous free allows reuse by anyone at once: wait for all work
    // first (the driver's cuMemFree waits too, foreign pointers included,
    // so the wait comes before we know whose pointer it is). Then one call
    // frees it if it is ours (one lock; no separate lookup).
    if (config().sync_free) {
      CUresult r = real().ctx_sync();
      if (r != CUDA_SUCCESS) {
        // Sticky error: keep the memory rather than reuse it unsafely.
        *handled = memlake_lookup(a, p, dev, nullptr, nullptr) == MEMLAKE_OK;
        return *handled ? r : CUDA_SUCCESS;
      }
    }
    *handled = memlake_free_if_owned(a, p, dev, nullptr) == MEMLAKE_OK;
    return CUDA_SUCCESS;
  }
  void* owner = nullptr;
  if (memlake_lookup(a, p, dev, nullptr, &owner) != MEMLAKE_OK) return CUDA_SUCCESS;  // not ours
  *handled = true;
  // A free queued on another stream than the allocation's must wait for it.
  if (stream != static_cast<CUstream>(owner)) {
    CUresult r = real().stream_sync(stream);
    if (r != CUDA_SUCCESS) return r;
  }
  return to_cu(memlake_free(a, p, dev, owner));
}

// ---- copies

constexpr size_t kCopyMin = size_t{8} << 20;  // below this the driver's own staging is as fast (measured)

// CU_MEMORYTYPE_* of a pointer, 0 for memory CUDA does not know (pageable).
unsigned mem_type(const void* p) {
  unsigned t = 0;
  if (!real().ptr_attr || real().ptr_attr(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS)
    return 0;
  return t;
}

// A host<->device copy through memlake's copy engine, if it is one the shim
// takes (*handled); `sync`: the driver's synchronous variant, which for
// pinned memory returns only when the copy is done.
// With MEMLAKE_SHIM_LOG=1: the first copies' decisions, to stderr.
void log_copy(const char* what, size_t n, bool taken, const char* why) {
  static std::atomic<int> logged{0};
  if (!config().log || logged.fetch_add(1, std::memory_order_relaxed) >= 64) return;
  std::fprintf(stderr, "memlake preload: %s of %zu bytes -> %s (%s)\n", what, n, taken ? "memlake" : "driver", why);
}

CUresult copy_on(void* dst, const void* src, size_t n, CUstream stream, bool sync, bool* handled) {
  *handled = false;
  if (!config().copy) return CUDA_SUCCESS;
  if (n < kCopyMin || !dst || !src) {
    log_copy("copy", n, false, "below 8 MiB");
    return CUDA_SUCCESS;
  }
  const unsigned dt = mem_type(dst), st = mem_type(src);
  const bool to_dev = dt == CU_MEMORYTYPE_DEVICE && st != CU_MEMORYTYPE_DEVICE;
  const bool to_host = st == CU_MEMORYTYPE_DEVICE && dt != CU_MEMORYTYPE_DEVICE;
  if (!to_dev && !to_host) {  // device-device or host-host: the driver's
    log_copy("copy", n, false, "not between host and device");
    return CUDA_SUCCESS;
  }
  const bool pinned = (to_dev ? st : dt) != 0;   // page-locked host side
  // Pinned memory goes to the driver, unless the registration cache may
  // have pinned it: then it is the program's pageable memory, which the
  // engine treats as such.
  if (pinned && !config().registration) {
    log_copy(to_dev ? "H2D" : "D2H", n, false, "pinned host memory");
    return CUDA_SUCCESS;
  }
  // A stream being captured into a graph gets the driver's copy: the
  // engine's host-side staging cannot be part of a graph.
  CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!real().is_capturing || real().is_capturing(stream, &cap) != CUDA_SUCCESS || cap != CU_STREAM_CAPTURE_STATUS_NONE) {
    log_copy(to_dev ? "H2D" : "D2H", n, false, "stream capturing or its state unknown");
    return CUDA_SUCCESS;
  }
  memlake_allocator* a = allocator();
  int dev = 0;
  if (!a || current_device(&dev) != CUDA_SUCCESS) return CUDA_SUCCESS;
  memlake_status s = memlake_copy(a, dst, src, n, dev, stream);
  if (s == MEMLAKE_ERROR_INVALID_ARGUMENT) {  // refused before copying: let the driver answer
    log_copy(to_dev ? "H2D" : "D2H", n, false, memlake_last_error());
    return CUDA_SUCCESS;
  }
  log_copy(to_dev ? "H2D" : "D2H", n, true, pinned ? "registered pageable memory" : "pageable host memory");
  *handled = true;
  if (s == MEMLAKE_OK && sync && pinned && real().stream_sync) return real().stream_sync(stream);
  return to_cu(s);
}

CUstream per_thread(CUstream s) { return s ? s : CU_STREAM_PER_THREAD; }
CUstream legacy(CUstream s) { return s; }  // stream 0 of a non-_ptsz call is the legacy default stream

}  // namespace

// ---- driver entry points --------------------------------------------------

// cuMemcpy* hooks: NAME, the real function slot, [1] = per-thread variant.
#define SHIM_COPY_HOOKS(SYM, IDX, STREAM_OF)                                                                       \
  SHIM_EXPORT CUresult shim_htod##IDX(CUdeviceptr d, const void* h, size_t n) __asm__("cuMemcpyHtoD_v2" SYM);      \
  CUresult shim_htod##IDX(CUdeviceptr d, const void* h, size_t n) {                                                \
    bool handled;                                                                                                  \
    CUresult r = copy_on(reinterpret_cast<void*>(d), h, n, STREAM_OF(nullptr), true, &handled);                   \
    if (handled) return r;                                                                                         \
    return real().htod[IDX] ? real().htod[IDX](d, h, n) : CUDA_ERROR_NOT_INITIALIZED;                              \
  }                                                                                                                \
  SHIM_EXPORT CUresult shim_dtoh##IDX(void* h, CUdeviceptr d, size_t n) __asm__("cuMemcpyDtoH_v2" SYM);            \
  CUresult shim_dtoh##IDX(void* h, CUdeviceptr d, size_t n) {                                                      \
    bool handled;                                                                                                  \
    CUresult r = copy_on(h, reinterpret_cast<void*>(d), n, STREAM_OF(nullptr), true, &handled);                   \
    if (handled) return r;                                                                                         \
    return real().dtoh[IDX] ? real().dtoh[IDX](h, d, n) : CUDA_ERROR_NOT_INITIALIZED;                              \
  }                                                                                                                \
  SHIM_EXPORT CUresult shim_copy##IDX(CUdeviceptr d, CUdeviceptr s, size_t n) __asm__("cuMemcpy" SYM);             \
  CUresult shim_copy##IDX(CUdeviceptr d, CUdeviceptr s, size_t n) {                                                \
    bool handled;                                                                                                  \
    CUresult r = copy_on(reinterpret_cast<void*>(d), reinterpret_cast<void*>(s), n, STREAM_OF(nullptr), true,     \
                         &handled);                                                                                \
    if (handled) return r;                                                                                         \
    return real().copy[IDX] ? real().copy[IDX](d, s, n) : CUDA_ERROR_NOT_INITIALIZED;                              \
  }

#define SHIM_COPY_ASYNC_HOOKS(SYM, IDX, STREAM_OF)                                                                 \
  SHIM_EXPORT CUresult shim_htod_async##IDX(CUdeviceptr d, const void* h, size_t n, CUstream st)                  \
      __asm__("cuMemcpyHtoDAsync_v2" SYM);                                                                         \
  CUresult shim_htod_async##IDX(CUdeviceptr d, const void* h, size_t n, CUstream st) {                             \
    bool handled;                                                                                                  \
    CUresult r = copy_on(reinterpret_cast<void*>(d), h, n, STREAM_OF(st), false, &handled);                        \
    if (handled) return r;                                                                                         \
    return real().htod_async[IDX] ? real().htod_async[IDX](d, h, n, st) : CUDA_ERROR_NOT_INITIALIZED;              \
  }                                                                                                                \
  SHIM_EXPORT CUresult shim_dtoh_async##IDX(void* h, CUdeviceptr d, size_t n, CUstream st)                        \
      __asm__("cuMemcpyDtoHAsync_v2" SYM);                                                                         \
  CUresult shim_dtoh_async##IDX(void* h, CUdeviceptr d, size_t n, CUstream st) {                                   \
    bool handled;                                                                                                  \
    CUresult r = copy_on(h, reinterpret_cast<void*>(d), n, STREAM_OF(st), false, &handled);                        \
    if (handled) return r;                                                                                         \
    return real().dtoh_async[IDX] ? real().dtoh_async[IDX](h, d, n, st) : CUDA_ERROR_NOT_INITIALIZED;              \
  }                                                                                                                \
  SHIM_EXPORT CUresult shim_copy_async##IDX(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)                  \
      __asm__("cuMemcpyAsync" SYM);                                                                                \
  CUresult shim_copy_async##IDX(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {                             \
    bool handled;                                                                                                  \
    CUresult r = copy_on(reinterpret_cast<void*>(d), reinterpret_cast<void*>(s), n, STREAM_OF(st), false,         \
                         &handled);                                                                                \
    if (handled) return r;                                                                                         \
    return real().copy_async[IDX] ? real().copy_async[IDX](d, s, n, st) : CUDA_ERROR_NOT_INITIALIZED;              \
  }

SHIM_COPY_HOOKS("", 0, legacy)
SHIM_COPY_HOOKS("_ptds", 1, per_thread)
SHIM_COPY_ASYNC_HOOKS("", 0, legacy)
SHIM_COPY_ASYNC_HOOKS("_ptsz", 1, per_thread)

SHIM_EXPORT CUresult shim_cuMemAlloc_v2(CUdeviceptr* dptr, size_t n) __asm__("cuMemAlloc_v2");
CUresult shim_cuMemAlloc_v2(CUdeviceptr* dptr, size_t n) {
  bool handled;
  CUresult r = alloc_on(dptr, n, nullptr, &handled);
  if (handled) return r;
  return real().alloc ? real().alloc(dptr, n) : CUDA_ERROR_NOT_INITIALIZED;
}

SHIM_EXPORT CUresult shim_cuMemFree_v2(CUdeviceptr p) __asm__("cuMemFree_v2");
CUresult shim_cuMemFree_v2(CUdeviceptr p) {
  bool handled;
  CUresult r = free_on(p, nullptr, false, &handled);
  if (handled) return r;
  return real().free ? real().free(p) : CUDA_ERROR_NOT_INITIALIZED;
}

SHIM_EXPORT CUresult shim_cuMemAllocAsync(CUdeviceptr* dptr, size_t n, CUstream s) __asm__("cuMemAllocAsync");
CUresult shim_cuMemAllocAsync(CUdeviceptr* dptr, size_t n, CUstream s) {
  bool handled;
  CUresult r = alloc_on(dptr, n, s, &handled);
  if (handled) return r;
  return real().alloc_async ? real().alloc_async(dptr, n, s) : CUDA_ERROR_NOT_SUPPORTED;
}

// Per-thread default stream variants: stream 0 means this thread's stream.
SHIM_EXPORT CUresult shim_cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t n, CUstream s) __asm__("cuMemAllocAsync_ptsz");
CUresult shim_cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t n, CUstream s) {
  bool handled;
  CUresult r = alloc_on(dptr, n, s ? s : CU_STREAM_PER_THREAD, &handled);
  if (handled) return r;
  return real().alloc_async_ptsz ? real().alloc_async_ptsz(dptr, n, s) : CUDA_ERROR_NOT_SUPPORTED;
}

SHIM_EXPORT CUresult shim_cuMemFreeAsync(CUdeviceptr p, CUstream s) __asm__("cuMemFreeAsync");
CUresult shim_cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  bool handled;
  CUresult r = free_on(p, s, true, &handled);
  if (handled) return r;
  return real().free_async ? real().free_async(p, s) : CUDA_ERROR_NOT_SUPPORTED;
}

SHIM_EXPORT CUresult shim_cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) __asm__("cuMemFreeAsync_ptsz");
CUresult shim_cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) {
  bool handled;
  CUresult r = free_on(p, s ? s : CU_STREAM_PER_THREAD, true, &handled);
  if (handled) return r;
  return real().free_async_ptsz ? real().free_async_ptsz(p, s) : CUDA_ERROR_NOT_SUPPORTED;
}

SHIM_EXPORT CUresult shim_cuMemGetInfo_v2(size_t* free_b, size_t* total_b) __asm__("cuMemGetInfo_v2");
CUresult shim_cuMemGetInfo_v2(size_t* free_b, size_t* total_b) {
  if (!real().mem_info) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real().mem_info(free_b, total_b);
  memlake_allocator* a = allocator();
  int dev = 0;
  if (r != CUDA_SUCCESS || !a || !free_b || current_device(&dev) != CUDA_SUCCESS) return r;
  memlake_stats st{};
  st.struct_size = sizeof st;
  if (memlake_get_stats(a, dev, &st) == MEMLAKE_OK && st.reserved_bytes.current > st.allocated_bytes.current)
    *free_b += st.reserved_bytes.current - st.allocated_bytes.current;  // memlake's cache is free to this program
  return r;
}

namespace {

// The shim's replacement for a driver symbol the runtime asks for, or null.
void* hook_for(const char* name, int version, cuuint64_t flags);

void log_lookup(const char* how, const char* symbol, int version, unsigned long long flags, bool hooked) {
  if (config().log)
    std::fprintf(stderr, "memlake preload: %s(%s, version %d, flags %llu) -> %s\n", how, symbol, version, flags,
                 hooked ? "memlake" : "driver");
}

}  // namespace

SHIM_EXPORT CUresult shim_cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                              CUdriverProcAddressQueryResult* status) __asm__("cuGetProcAddress_v2");
CUresult shim_cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult* status) {
  if (!real().get_proc_v2) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real().get_proc_v2(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && pfn && *pfn && symbol) {
    void* h = hook_for(symbol, version, flags);
    if (h) *pfn = h;
    log_lookup("cuGetProcAddress_v2", symbol, version, flags, h != nullptr);
  }
  return r;
}

SHIM_EXPORT CUresult shim_cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) __asm__("cuGetProcAddress");
CUresult shim_cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  if (!real().get_proc_v1) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real().get_proc_v1(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && pfn && *pfn && symbol) {
    void* h = hook_for(symbol, version, flags);
    if (h) *pfn = h;
    log_lookup("cuGetProcAddress", symbol, version, flags, h != nullptr);
  }
  return r;
}

namespace {

void* hook_for(const char* name, int version, cuuint64_t flags) {
  const bool ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  if (std::strcmp(name, "cuGetProcAddress") == 0)
    return version >= 12000 ? reinterpret_cast<void*>(&shim_cuGetProcAddress_v2) : reinterpret_cast<void*>(&shim_cuGetProcAddress);
  if (version < 3020) return nullptr;  // the 32-bit-size ABI of CUDA 3.1 and older: the driver's own
  if (std::strcmp(name, "cuMemAlloc") == 0) return reinterpret_cast<void*>(&shim_cuMemAlloc_v2);
  if (std::strcmp(name, "cuMemFree") == 0) return reinterpret_cast<void*>(&shim_cuMemFree_v2);
  if (std::strcmp(name, "cuMemGetInfo") == 0) return reinterpret_cast<void*>(&shim_cuMemGetInfo_v2);
  if (std::strcmp(name, "cuMemAllocAsync") == 0)
    return ptsz ? reinterpret_cast<void*>(&shim_cuMemAllocAsync_ptsz) : reinterpret_cast<void*>(&shim_cuMemAllocAsync);
  if (std::strcmp(name, "cuMemFreeAsync") == 0)
    return ptsz ? reinterpret_cast<void*>(&shim_cuMemFreeAsync_ptsz) : reinterpret_cast<void*>(&shim_cuMemFreeAsync);
  // Copies (hooked always; each passes to the driver unless MEMLAKE_SHIM_COPY=1).
  // `since`: the version whose ABI the shim's function implements. The
  // statically linked runtime asks for the HtoD/DtoH copies of the legacy
  // stream with version 3020 (their _v2 ABI) and for the per-thread ones
  // with 7000 (seen on the H200 with MEMLAKE_SHIM_LOG=1, CUDA 13).
  struct {
    const char* name;
    int since;
    void* fn[2];
  } static const copies[] = {
      {"cuMemcpyHtoD", 3020, {reinterpret_cast<void*>(&shim_htod0), reinterpret_cast<void*>(&shim_htod1)}},
      {"cuMemcpyDtoH", 3020, {reinterpret_cast<void*>(&shim_dtoh0), reinterpret_cast<void*>(&shim_dtoh1)}},
      {"cuMemcpy", 4000, {reinterpret_cast<void*>(&shim_copy0), reinterpret_cast<void*>(&shim_copy1)}},
      {"cuMemcpyHtoDAsync", 3020, {reinterpret_cast<void*>(&shim_htod_async0), reinterpret_cast<void*>(&shim_htod_async1)}},
      {"cuMemcpyDtoHAsync", 3020, {reinterpret_cast<void*>(&shim_dtoh_async0), reinterpret_cast<void*>(&shim_dtoh_async1)}},
      {"cuMemcpyAsync", 4000, {reinterpret_cast<void*>(&shim_copy_async0), reinterpret_cast<void*>(&shim_copy_async1)}},
  };
  for (const auto& c : copies)
    if (version >= c.since && std::strcmp(name, c.name) == 0) return c.fn[ptsz ? 1 : 0];
  return nullptr;
}

// Exact exported names -> the shim's functions, for dlsym.
void* hook_for_symbol(const char* name) {
  struct {
    const char* name;
    void* fn;
  } static const table[] = {
      {"cuGetProcAddress", reinterpret_cast<void*>(&shim_cuGetProcAddress)},
      {"cuGetProcAddress_v2", reinterpret_cast<void*>(&shim_cuGetProcAddress_v2)},
      {"cuMemAlloc_v2", reinterpret_cast<void*>(&shim_cuMemAlloc_v2)},
      {"cuMemFree_v2", reinterpret_cast<void*>(&shim_cuMemFree_v2)},
      {"cuMemGetInfo_v2", reinterpret_cast<void*>(&shim_cuMemGetInfo_v2)},
      {"cuMemAllocAsync", reinterpret_cast<void*>(&shim_cuMemAllocAsync)},
      {"cuMemAllocAsync_ptsz", reinterpret_cast<void*>(&shim_cuMemAllocAsync_ptsz)},
      {"cuMemFreeAsync", reinterpret_cast<void*>(&shim_cuMemFreeAsync)},
      {"cuMemFreeAsync_ptsz", reinterpret_cast<void*>(&shim_cuMemFreeAsync_ptsz)},
      {"cuMemcpyHtoD_v2", reinterpret_cast<void*>(&shim_htod0)},
      {"cuMemcpyHtoD_v2_ptds", reinterpret_cast<void*>(&shim_htod1)},
      {"cuMemcpyDtoH_v2", reinterpret_cast<void*>(&shim_dtoh0)},
      {"cuMemcpyDtoH_v2_ptds", reinterpret_cast<void*>(&shim_dtoh1)},
      {"cuMemcpy", reinterpret_cast<void*>(&shim_copy0)},
      {"cuMemcpy_ptds", reinterpret_cast<void*>(&shim_copy1)},
      {"cuMemcpyHtoDAsync_v2", reinterpret_cast<void*>(&shim_htod_async0)},
      {"cuMemcpyHtoDAsync_v2_ptsz", reinterpret_cast<void*>(&shim_htod_async1)},
      {"cuMemcpyDtoHAsync_v2", reinterpret_cast<void*>(&shim_dtoh_async0)},
      {"cuMemcpyDtoHAsync_v2_ptsz", reinterpret_cast<void*>(&shim_dtoh_async1)},
      {"cuMemcpyAsync", reinterpret_cast<void*>(&shim_copy_async0)},
      {"cuMemcpyAsync_ptsz", reinterpret_cast<void*>(&shim_copy_async1)},
  };
  if (name[0] != 'c' || name[1] != 'u') return nullptr;  // fast path for every other lookup
  for (const auto& e : table)
    if (std::strcmp(name, e.name) == 0) return e.fn;
  return nullptr;
}

}  // namespace

// ---- runtime entry points ---------------------------------------------------
//
// The runtime may reach the driver's copy functions through private entry
// points rather than cuGetProcAddress (MEMLAKE_SHIM_LOG=1 shows which it
// asks for). For programs linked with the shared runtime (libcudart.so:
// PyTorch, most Python packages, `nvcc -cudart shared`), the copies are
// therefore also taken one level up, at cudaMemcpy/cudaMemcpyAsync; a
// statically linked runtime cannot be interposed there. The declarations
// below are the runtime's ABI (cudaError_t and cudaMemcpyKind are ints,
// cudaStream_t is CUstream); cuda_runtime_api.h is not needed for them.

namespace {

constexpr int kHostToHost = 0, kDeviceToDevice = 3;
constexpr int kRtErrorUnknown = 999;

// The runtime's own function behind ours (the next definition in the
// dynamic linker's search order).
template <class Fn>
Fn next_rt(const char* name) {
  DlsymFn sym = real_dlsym();
  return sym ? reinterpret_cast<Fn>(sym(RTLD_NEXT, name)) : nullptr;
}

// CUresult of the copy engine's path -> cudaError_t (the first codes agree:
// invalid value 1, out of memory 2, not initialised 3).
int to_rt(CUresult r) { return r <= CUDA_ERROR_NOT_INITIALIZED ? static_cast<int>(r) : kRtErrorUnknown; }

int rt_copy(void* dst, const void* src, size_t n, int kind, CUstream stream, bool sync, bool* handled) {
  *handled = false;
  if (kind == kHostToHost || kind == kDeviceToDevice) return 0;
  CUresult r = copy_on(dst, src, n, stream, sync, handled);
  return to_rt(r);
}

}  // namespace

// A runtime entry point NAME(PARAMS): memlake's TAKE decides (setting
// `handled`); what it does not take goes to the runtime's own NAME(ARGS).
#define SHIM_RT(NAME, PARAMS, ARGS, TAKE)                                \
  SHIM_EXPORT int shim_rt_##NAME PARAMS __asm__(#NAME);                  \
  int shim_rt_##NAME PARAMS {                                            \
    using Next = int(*) PARAMS;                                          \
    static const Next next = next_rt<Next>(#NAME);                       \
    bool handled;                                                        \
    const int r = TAKE;                                                  \
    if (handled) return r;                                               \
    return next ? next ARGS : kRtErrorUnknown;                           \
  }
#define SHIM_RT_COPY_PARAMS (void* d, const void* s, size_t n, int kind)
#define SHIM_RT_COPY_ASYNC_PARAMS (void* d, const void* s, size_t n, int kind, CUstream st)
SHIM_RT(cudaMemcpy, SHIM_RT_COPY_PARAMS, (d, s, n, kind), rt_copy(d, s, n, kind, nullptr, true, &handled))
SHIM_RT(cudaMemcpy_ptds, SHIM_RT_COPY_PARAMS, (d, s, n, kind), rt_copy(d, s, n, kind, CU_STREAM_PER_THREAD, true, &handled))
SHIM_RT(cudaMemcpyAsync, SHIM_RT_COPY_ASYNC_PARAMS, (d, s, n, kind, st), rt_copy(d, s, n, kind, legacy(st), false, &handled))
SHIM_RT(cudaMemcpyAsync_ptsz, SHIM_RT_COPY_ASYNC_PARAMS, (d, s, n, kind, st),
        rt_copy(d, s, n, kind, per_thread(st), false, &handled))

// ---- runtime allocation entry points
//
// Taken at the shared runtime too, for speed: the runtime spends about
// 0.35 us in cudaMalloc+cudaFree before it reaches the driver's entry
// points (static runtime on the H200, docs/results.md 5d), twice memlake's
// whole allocation and free. What the runtime would add is kept: a context
// must be current (the runtime creates its primary context lazily, so it is
// asked to, with its own idiom cudaFree(0)), cudaFree waits for the device,
// and a pointer memlake does not own goes to the runtime unchanged.

namespace {

bool rt_context() {
  int dev = 0;
  if (current_device(&dev) == CUDA_SUCCESS) return true;
  static const auto init = next_rt<int (*)(void*)>("cudaFree");
  return init && init(nullptr) == 0 && current_device(&dev) == CUDA_SUCCESS;
}

// memlake's answer to a runtime allocation, if it takes it (*handled).
int rt_alloc(void** p, size_t n, CUstream stream, bool* handled) {
  *handled = false;
  if (!p || n == 0 || !allocator() || !rt_context()) return 0;
  CUdeviceptr d = 0;
  const CUresult r = alloc_on(&d, n, stream, handled);
  if (*handled && r == CUDA_SUCCESS) *p = reinterpret_cast<void*>(d);
  return to_rt(r);
}

int rt_free(void* p, CUstream stream, bool async, bool* handled) {
  *handled = false;
  if (!p) return 0;  // cudaFree(0): the runtime's (it initialises the context)
  return to_rt(free_on(reinterpret_cast<CUdeviceptr>(p), stream, async, handled));
}

}  // namespace

SHIM_RT(cudaMalloc, (void** p, size_t n), (p, n), rt_alloc(p, n, nullptr, &handled))
SHIM_RT(cudaFree, (void* p), (p), rt_free(p, nullptr, false, &handled))
SHIM_RT(cudaMallocAsync, (void** p, size_t n, CUstream st), (p, n, st), rt_alloc(p, n, legacy(st), &handled))
SHIM_RT(cudaMallocAsync_ptsz, (void** p, size_t n, CUstream st), (p, n, st), rt_alloc(p, n, per_thread(st), &handled))
SHIM_RT(cudaFreeAsync, (void* p, CUstream st), (p, st), rt_free(p, legacy(st), true, &handled))
SHIM_RT(cudaFreeAsync_ptsz, (void* p, CUstream st), (p, st), rt_free(p, per_thread(st), true, &handled))

// ---- dlsym ----------------------------------------------------------------

namespace {
// Base address of libmemlake.so: its cuda backend looks the driver up with
// dlsym too and must get the real functions (the copy engine's own DMA
// would otherwise come back into the shim).
const void* memlake_base() {
  static const void* base = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&memlake_version), &info) ? info.dli_fbase : nullptr;
  }();
  return base;
}
}  // namespace

SHIM_EXPORT void* dlsym(void* handle, const char* name) noexcept {
  DlsymFn sym = real_dlsym();
  if (!sym) return nullptr;
  void* caller = __builtin_return_address(0);
  void* p = sym(handle, name);
  // Only a symbol that really resolves to the driver's is replaced; the
  // shim's own lookups of the real functions go through real_dlsym().
  if (p && handle != RTLD_NEXT)
    if (void* h = hook_for_symbol(name)) {
      Dl_info info{};
      if (dladdr(caller, &info) && info.dli_fbase == memlake_base()) return p;  // memlake itself
      log_lookup("dlsym", name, 0, 0, true);
      return h;
    }
  return p;
}
