// CUDA backend: the primitives contract over the CUDA driver API.
//
// libcuda.so.1 is opened with dlopen at first use, so libmemlake links and
// loads on machines without a GPU driver; only then does make_backend("cuda")
// fail, with Errc::unavailable and the reason. cuda.h supplies the types.
// This is the only file in memlake that includes cuda.h.
#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <type_traits>

#include "core/error.h"
#include "prim/kernels.h"
#include "prim/prim.h"

#if MEMLAKE_HAVE_CUDA_H
#include <cuda.h>

namespace memlake::prim {
namespace {

// The driver entry points memlake uses, resolved once.
struct Driver {
#define MEMLAKE_CU_FN(name) decltype(&::name) name = nullptr;
#define MEMLAKE_CU_FN_SYM(name, sym) decltype(&::name) name = nullptr;
#include "prim/cuda_functions.inc"
#undef MEMLAKE_CU_FN
#undef MEMLAKE_CU_FN_SYM
  // Optional (sharing between processes): null where the driver lacks them.
  decltype(&::cuMemExportToShareableHandle) cuMemExportToShareableHandle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) cuMemImportFromShareableHandle = nullptr;
  // Optional (the content-id kernel, hash_leaves): null where the driver lacks them.
  decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
  decltype(&::cuModuleUnload) cuModuleUnload = nullptr;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
  decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
  decltype(&::cuMemAlloc) cuMemAlloc = nullptr;  // cuMemAlloc_v2
  decltype(&::cuMemFree) cuMemFree = nullptr;    // cuMemFree_v2
  bool has_modules() const {
    return cuModuleLoadData && cuModuleUnload && cuModuleGetFunction && cuLaunchKernel && cuMemAlloc && cuMemFree;
  }
  // Optional (labels only): cuDeviceGetUuid_v2, else cuDeviceGetUuid (same signature).
  CUresult (*cuDeviceGetUuid)(CUuuid*, CUdevice) = nullptr;
  void* lib = nullptr;
  std::string error;  // why the driver is unusable; empty if usable
};

Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    d.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!d.lib) {
      const char* e = dlerror();
      d.error = std::string("cannot load the CUDA driver libcuda.so.1 (") + (e ? e : "unknown") +
                "); is an NVIDIA driver installed?";
      return;
    }
    bool ok = true;
#define MEMLAKE_CU_FN(name) MEMLAKE_CU_FN_SYM(name, #name)
#define MEMLAKE_CU_FN_SYM(name, sym)                                          \
  d.name = reinterpret_cast<decltype(&::name)>(dlsym(d.lib, sym));            \
  if (!d.name) {                                                              \
    d.error = std::string("libcuda.so.1 lacks ") + sym + " (driver too old)"; \
    ok = false;                                                               \
  }
#include "prim/cuda_functions.inc"
#undef MEMLAKE_CU_FN
#undef MEMLAKE_CU_FN_SYM
    if (!ok) return;
    d.cuMemExportToShareableHandle =
        reinterpret_cast<decltype(&::cuMemExportToShareableHandle)>(dlsym(d.lib, "cuMemExportToShareableHandle"));
    d.cuMemImportFromShareableHandle =
        reinterpret_cast<decltype(&::cuMemImportFromShareableHandle)>(dlsym(d.lib, "cuMemImportFromShareableHandle"));
    auto opt = [&](auto& fn, const char* sym) { fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(d.lib, sym)); };
    opt(d.cuModuleLoadData, "cuModuleLoadData");
    opt(d.cuModuleUnload, "cuModuleUnload");
    opt(d.cuModuleGetFunction, "cuModuleGetFunction");
    opt(d.cuLaunchKernel, "cuLaunchKernel");
    opt(d.cuMemAlloc, "cuMemAlloc_v2");
    opt(d.cuMemFree, "cuMemFree_v2");
    using UuidFn = CUresult (*)(CUuuid*, CUdevice);
    d.cuDeviceGetUuid = reinterpret_cast<UuidFn>(dlsym(d.lib, "cuDeviceGetUuid_v2"));
    if (!d.cuDeviceGetUuid) d.cuDeviceGetUuid = reinterpret_cast<UuidFn>(dlsym(d.lib, "cuDeviceGetUuid"));
    CUresult r = d.cuInit(0);
    if (r != CUDA_SUCCESS) {
      const char* name = nullptr;
      d.cuGetErrorName(r, &name);
      d.error = std::string("cuInit failed: ") + (name ? name : "unknown error");
    }
  });
  return d;
}

std::string err_name(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  driver().cuGetErrorName(r, &name);
  driver().cuGetErrorString(r, &text);
  std::string s = name ? name : ("CUresult " + std::to_string(static_cast<int>(r)));
  if (text) s += std::string(" (") + text + ")";
  return s;
}

void check(CUresult r, const char* call, const std::string& detail = {}) {
  if (r == CUDA_SUCCESS) return;
  std::string msg = std::string("cuda backend: ") + call + (detail.empty() ? "" : "(" + detail + ")") +
                    " failed: " + err_name(r);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) throw_error(Errc::out_of_memory, msg);
  if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_INVALID_HANDLE ||
      r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED || r == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)
    throw_error(Errc::invalid_argument, msg);
  throw_error(Errc::driver, msg);
}

// A non-blocking query's answer: complete (CUDA_SUCCESS), not yet (CUDA_ERROR_NOT_READY),
// or a driver error, thrown.
bool ready(CUresult r, const char* call) {
  if (r == CUDA_ERROR_NOT_READY) return false;
  check(r, call);
  return true;
}

std::string range(std::uintptr_t va, std::size_t size) { return hex_ptr(va) + ", " + std::to_string(size); }

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, std::size_t granularity) : device_(device) {
    Driver& d = driver();
    check(d.cuDeviceGet(&dev_, device), "cuDeviceGet", std::to_string(device));
    int vmm = 0;
    check(d.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev_),
          "cuDeviceGetAttribute");
    if (!vmm) throw_error(Errc::unavailable, "cuda backend: device " + std::to_string(device) + " does not support virtual memory management");
    check(d.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
    prop_.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop_.location.id = device;
    prop_.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    std::size_t min_g = 0, rec_g = 0;
    check(d.cuMemGetAllocationGranularity(&min_g, &prop_, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
    check(d.cuMemGetAllocationGranularity(&rec_g, &prop_, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), "cuMemGetAllocationGranularity");
    gran_ = granularity ? granularity : rec_g;
    if (gran_ % min_g != 0)
      throw_error(Errc::invalid_argument, "cuda backend: granularity " + std::to_string(gran_) +
                                              " is not a multiple of the device minimum " + std::to_string(min_g));
    check(d.cuDeviceTotalMem(&total_, dev_), "cuDeviceTotalMem");
    CUuuid u{};
    if (d.cuDeviceGetUuid && d.cuDeviceGetUuid(&u, dev_) == CUDA_SUCCESS) {  // "" if it cannot tell
      static const char hex[] = "0123456789abcdef";
      uuid_ = "GPU-";
      for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) uuid_ += '-';
        const auto b = static_cast<unsigned char>(u.bytes[i]);
        uuid_ += hex[b >> 4];
        uuid_ += hex[b & 15];
      }
    }
  }
  ~CudaBackend() override {
    Driver& d = driver();
    if (module_) {  // unloaded in its context, without throwing
      CUcontext cur = nullptr, dummy = nullptr;
      d.cuCtxGetCurrent(&cur);
      const bool pushed = cur != ctx_ && d.cuCtxPushCurrent(ctx_) == CUDA_SUCCESS;
      d.cuModuleUnload(module_);
      if (pushed) d.cuCtxPopCurrent(&dummy);
    }
    d.cuDevicePrimaryCtxRelease(dev_);
  }

  std::string name() const override { return "cuda"; }
  int device() const override { return device_; }
  std::string uuid() const override { return uuid_; }
  std::size_t granularity() const override { return gran_; }
  std::size_t total_memory() const override { return total_; }

  std::uintptr_t reserve(std::size_t size, std::size_t align) override {
    Ctx c(this);
    CUdeviceptr p = 0;
    check(driver().cuMemAddressReserve(&p, size, align ? align : gran_, 0, 0), "cuMemAddressReserve", std::to_string(size));
    return static_cast<std::uintptr_t>(p);
  }
  void free_reservation(std::uintptr_t va, std::size_t size) override {
    Ctx c(this);
    check(driver().cuMemAddressFree(va, size), "cuMemAddressFree", range(va, size));
  }
  PhysHandle create(std::size_t size) override {
    Ctx c(this);
    CUmemGenericAllocationHandle h = 0;
    check(driver().cuMemCreate(&h, size, &prop_, 0), "cuMemCreate", std::to_string(size));
    return static_cast<PhysHandle>(h);
  }
  PhysHandle create_shareable(std::size_t size) override {
    Ctx c(this);
    CUmemAllocationProp p = prop_;
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemGenericAllocationHandle h = 0;
    check(driver().cuMemCreate(&h, size, &p, 0), "cuMemCreate", std::to_string(size) + ", shareable");
    return static_cast<PhysHandle>(h);
  }
  int export_fd(PhysHandle h, bool) override {
    if (!driver().cuMemExportToShareableHandle)
      throw_error(Errc::unavailable, "cuda backend: the driver lacks cuMemExportToShareableHandle");
    Ctx c(this);
    int fd = -1;
    check(driver().cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "cuMemExportToShareableHandle");
    return fd;
  }
  PhysHandle import_fd(int fd, std::size_t) override {
    if (!driver().cuMemImportFromShareableHandle)
      throw_error(Errc::unavailable, "cuda backend: the driver lacks cuMemImportFromShareableHandle");
    Ctx c(this);
    CUmemGenericAllocationHandle h = 0;
    check(driver().cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          "cuMemImportFromShareableHandle");
    return static_cast<PhysHandle>(h);
  }
  void release(PhysHandle h) override {
    Ctx c(this);
    check(driver().cuMemRelease(h), "cuMemRelease");
  }
  void map(std::uintptr_t va, std::size_t size, PhysHandle h) override {
    Ctx c(this);
    check(driver().cuMemMap(va, size, 0, h, 0), "cuMemMap", range(va, size));
  }
  void unmap(std::uintptr_t va, std::size_t size) override {
    Ctx c(this);
    check(driver().cuMemUnmap(va, size), "cuMemUnmap", range(va, size));
  }
  void set_access(std::uintptr_t va, std::size_t size, Access a) override {
    Ctx c(this);
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = device_;
    desc.flags = a == Access::read_write ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                 : a == Access::read     ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                         : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    check(driver().cuMemSetAccess(va, size, &desc, 1), "cuMemSetAccess", range(va, size));
  }

  Stream create_stream() override {
    Ctx c(this);
    CUstream s = nullptr;
    check(driver().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return s;
  }
  void destroy_stream(Stream s) override {
    Ctx c(this);
    check(driver().cuStreamDestroy(static_cast<CUstream>(s)), "cuStreamDestroy");
  }
  Event record_event(Stream s) override {
    Ctx c(this);
    CUevent e = nullptr;
    check(driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    CUresult r = driver().cuEventRecord(e, static_cast<CUstream>(s));
    if (r != CUDA_SUCCESS) {
      driver().cuEventDestroy(e);
      check(r, "cuEventRecord");
    }
    return reinterpret_cast<Event>(e);
  }
  bool query_event(Event e) override {
    Ctx c(this);
    return ready(driver().cuEventQuery(reinterpret_cast<CUevent>(e)), "cuEventQuery");
  }
  bool query_stream(Stream s) override {
    // Querying a stream under capture is illegal and would invalidate the capture: its
    // work is not known complete, so say so (the caller falls back to an event).
    if (is_capturing(s)) return false;
    Ctx c(this);
    return ready(driver().cuStreamQuery(static_cast<CUstream>(s)), "cuStreamQuery");
  }
  void wait_event(Event e) override {
    Ctx c(this);
    check(driver().cuEventSynchronize(reinterpret_cast<CUevent>(e)), "cuEventSynchronize");
  }
  void destroy_event(Event e) override {
    Ctx c(this);
    check(driver().cuEventDestroy(reinterpret_cast<CUevent>(e)), "cuEventDestroy");
  }
  void synchronize_stream(Stream s) override {
    Ctx c(this);
    check(driver().cuStreamSynchronize(static_cast<CUstream>(s)), "cuStreamSynchronize");
  }
  void synchronize_device() override {
    Ctx c(this);
    check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
  }
  bool is_capturing(Stream s) override {
    // The legacy default stream (PyTorch's default stream) cannot be captured: the driver
    // refuses to begin a capture on it. Answered without the driver, which costs about
    // 2 us per tensor under PyTorch (docs/results.md §4d).
    if (s == nullptr || s == reinterpret_cast<Stream>(CU_STREAM_LEGACY)) return false;
    Ctx c(this);  // PyTorch allocates from threads (autograd's) with no current context
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    check(driver().cuStreamIsCapturing(static_cast<CUstream>(s), &st), "cuStreamIsCapturing");
    return st != CU_STREAM_CAPTURE_STATUS_NONE;
  }
  void* alloc_pinned(std::size_t n) override {
    Ctx c(this);
    void* p = nullptr;
    check(driver().cuMemHostAlloc(&p, n, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc", std::to_string(n));
    return p;
  }
  void free_pinned(void* p) override {
    Ctx c(this);
    check(driver().cuMemFreeHost(p), "cuMemFreeHost");
  }
  PointerKind pointer_kind(const void* p) override {
    Ctx c(this);
    unsigned int type = 0;
    CUresult r = driver().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                reinterpret_cast<CUdeviceptr>(p));
    if (r != CUDA_SUCCESS) return PointerKind::pageable;  // unknown to CUDA: ordinary host memory
    return type == CU_MEMORYTYPE_DEVICE ? PointerKind::device : PointerKind::pinned;
  }
  void copy_to_device_async(std::uintptr_t dst, const void* src, std::size_t n, Stream s) override {
    Ctx c(this);
    check(driver().cuMemcpyHtoDAsync(dst, src, n, static_cast<CUstream>(s)), "cuMemcpyHtoDAsync", range(dst, n));
  }
  void copy_to_host_async(void* dst, std::uintptr_t src, std::size_t n, Stream s) override {
    Ctx c(this);
    check(driver().cuMemcpyDtoHAsync(dst, src, n, static_cast<CUstream>(s)), "cuMemcpyDtoHAsync", range(src, n));
  }
  void stream_wait(Stream s, Event e) override {
    Ctx c(this);
    check(driver().cuStreamWaitEvent(static_cast<CUstream>(s), reinterpret_cast<CUevent>(e), 0), "cuStreamWaitEvent");
  }
  void register_host(void* p, std::size_t n) override {
    Ctx c(this);
    check(driver().cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE), "cuMemHostRegister",
          range(reinterpret_cast<std::uintptr_t>(p), n));
  }
  void unregister_host(void* p) override {
    Ctx c(this);
    check(driver().cuMemHostUnregister(p), "cuMemHostUnregister", hex_ptr(reinterpret_cast<std::uintptr_t>(p)));
  }
  bool can_access_peer(int peer) override {
    if (peer == device_) return true;
    CUdevice other = 0;
    check(driver().cuDeviceGet(&other, peer), "cuDeviceGet", std::to_string(peer));
    int ok = 0;
    check(driver().cuDeviceCanAccessPeer(&ok, dev_, other), "cuDeviceCanAccessPeer");
    return ok != 0;
  }
  void grant_peer(std::uintptr_t va, std::size_t size, int peer) override {
    Ctx c(this);
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = peer;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(driver().cuMemSetAccess(va, size, &desc, 1), "cuMemSetAccess", range(va, size) + " for peer " + std::to_string(peer));
  }
  void copy_device_async(std::uintptr_t dst, std::uintptr_t src, std::size_t n, Stream s) override {
    Ctx c(this);
    check(driver().cuMemcpyDtoDAsync(dst, src, n, static_cast<CUstream>(s)), "cuMemcpyDtoDAsync",
          hex_ptr(dst) + " <- " + range(src, n));
  }
  bool hash_leaves(std::uintptr_t va, std::size_t n, std::size_t leaf_bytes, std::uint8_t* digests_out) override {
    if (leaf_bytes == 0) throw_error(Errc::invalid_argument, "cuda backend: hash_leaves with a leaf of 0 bytes");
    const CUfunction f = hash_kernel();
    if (!f) return false;
    if (n == 0) return true;
    Driver& d = driver();
    Ctx c(this);
    const std::size_t leaves = (n + leaf_bytes - 1) / leaf_bytes, bytes = 32 * leaves;
    constexpr unsigned kBlock = 32;  // one warp a block: the leaves spread over every SM
    const std::size_t grid = (leaves + kBlock - 1) / kBlock;
    if (grid > 0x7fffffff) throw_error(Errc::invalid_argument, "cuda backend: hash_leaves over too many leaves");
    CUdeviceptr digests = 0;
    // A full device is the usual case under memlake: the host path needs no device memory.
    if (const CUresult r = d.cuMemAlloc(&digests, bytes); r == CUDA_ERROR_OUT_OF_MEMORY) return false;
    else check(r, "cuMemAlloc", std::to_string(bytes) + " bytes of leaf digests");
    struct Free {
      CUdeviceptr p;
      ~Free() { driver().cuMemFree(p); }
    } free_digests{digests};
    CUstream s = nullptr;
    check(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    struct Destroy {  // before the digests are freed, also when a call below throws
      CUstream s;
      ~Destroy() {
        driver().cuStreamSynchronize(s);
        driver().cuStreamDestroy(s);
      }
    } destroy_stream{s};
    CUdeviceptr data = va;
    unsigned long long len = n, leaf = leaf_bytes;
    void* args[] = {&data, &len, &leaf, &digests};
    const std::string what = std::string(kHashKernelEntry) + " over " + range(va, n);
    const CUresult launched = d.cuLaunchKernel(f, static_cast<unsigned>(grid), 1, 1, kBlock, 1, 1, 0, s, args, nullptr);
    if (launched == CUDA_ERROR_OUT_OF_MEMORY || launched == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) return false;
    check(launched, "cuLaunchKernel", what);
    check(d.cuMemcpyDtoHAsync(digests_out, digests, bytes, s), "cuMemcpyDtoHAsync", "leaf digests of " + what);
    check(d.cuStreamSynchronize(s), "cuStreamSynchronize", what);  // a fault in the kernel shows here
    return true;
  }
  void write(std::uintptr_t dst, const void* src, std::size_t n) override {
    Ctx c(this);
    check(driver().cuMemcpyHtoD(dst, src, n), "cuMemcpyHtoD", range(dst, n));
  }
  void read(void* dst, std::uintptr_t src, std::size_t n) override {
    Ctx c(this);
    check(driver().cuMemcpyDtoH(dst, src, n), "cuMemcpyDtoH", range(src, n));
  }

 private:
  // Makes the device's primary context current for the duration of a call,
  // leaving the caller's context untouched (push/pop only when it differs).
  struct Ctx {
    explicit Ctx(CudaBackend* b) {
      CUcontext cur = nullptr;
      driver().cuCtxGetCurrent(&cur);
      if (cur != b->ctx_) {
        check(driver().cuCtxPushCurrent(b->ctx_), "cuCtxPushCurrent");
        pushed = true;
      }
    }
    ~Ctx() {
      if (pushed) {
        CUcontext dummy;
        driver().cuCtxPopCurrent(&dummy);
      }
    }
    bool pushed = false;
  };

  // The content-id kernel in this backend's context: its module is loaded
  // (the driver compiles the PTX) at the first call and kept until the
  // backend goes. nullptr where it cannot be: built without nvcc, a driver
  // without the module API, or one that refuses the PTX (too old for its
  // version, say), said once on stderr; hash_leaves then answers false.
  CUfunction hash_kernel() {
    std::lock_guard<std::mutex> g(kernel_mu_);
    if (kernel_ || kernel_settled_) return kernel_;
    Driver& d = driver();
    if (!kHashKernelPtx || !d.has_modules()) {
      kernel_settled_ = true;
      return nullptr;
    }
    Ctx c(this);
    CUmodule m = nullptr;
    const CUresult r = d.cuModuleLoadData(&m, kHashKernelPtx);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;  // no room for the module now: the host path, a new try next time
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_INVALID_PTX || r == CUDA_ERROR_NO_BINARY_FOR_GPU ||
        r == CUDA_ERROR_JIT_COMPILER_NOT_FOUND || r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_NOT_SUPPORTED) {
      std::fprintf(stderr, "memlake: content ids are hashed on the host: cuModuleLoadData(%s) failed: %s\n",
                   kHashKernelEntry, err_name(r).c_str());
      kernel_settled_ = true;
      return nullptr;
    }
    check(r, "cuModuleLoadData", kHashKernelEntry);
    CUfunction f = nullptr;
    const CUresult gf = d.cuModuleGetFunction(&f, m, kHashKernelEntry);
    if (gf != CUDA_SUCCESS) {
      d.cuModuleUnload(m);
      check(gf, "cuModuleGetFunction", kHashKernelEntry);
    }
    module_ = m;
    kernel_ = f;
    return kernel_;
  }

  int device_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUmemAllocationProp prop_{};
  std::size_t gran_ = 0;
  std::size_t total_ = 0;
  std::string uuid_;  // "GPU-...", "" if the driver cannot tell
  std::mutex kernel_mu_;         // hash_kernel(): loaded once; tried again after an error or out of memory
  bool kernel_settled_ = false;  // no kernel in this build or driver: never tried again
  CUmodule module_ = nullptr;
  CUfunction kernel_ = nullptr;
};

}  // namespace

bool cuda_available(std::string* why) {
  Driver& d = driver();
  if (!d.error.empty()) {
    if (why) *why = d.error;
    return false;
  }
  int n = 0;
  if (d.cuDeviceGetCount(&n) != CUDA_SUCCESS || n == 0) {
    if (why) *why = "the CUDA driver reports no device";
    return false;
  }
  return true;
}

int cuda_device_count() {
  if (!cuda_available()) return 0;
  int n = 0;
  driver().cuDeviceGetCount(&n);
  return n;
}

std::unique_ptr<Backend> make_cuda_backend(int device, std::size_t granularity) {
  std::string why;
  if (!cuda_available(&why)) throw_error(Errc::unavailable, "cuda backend unavailable: " + why);
  if (device < 0 || device >= cuda_device_count())
    throw_error(Errc::invalid_argument, "cuda backend: no device " + std::to_string(device) + " (" +
                                            std::to_string(cuda_device_count()) + " present)");
  return std::make_unique<CudaBackend>(device, granularity);
}

}  // namespace memlake::prim

#else  // !MEMLAKE_HAVE_CUDA_H

namespace memlake::prim {
bool cuda_available(std::string* why) {
  if (why) *why = "memlake was built without the CUDA headers (cuda.h)";
  return false;
}
int cuda_device_count() { return 0; }
std::unique_ptr<Backend> make_cuda_backend(int, std::size_t) {
  throw_error(Errc::unavailable, "cuda backend unavailable: memlake was built without the CUDA headers (cuda.h)");
}
}  // namespace memlake::prim

#endif
