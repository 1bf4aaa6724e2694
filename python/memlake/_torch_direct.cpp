// memlake as PyTorch's CUDA allocator without CUDAPluggableAllocator (issue 27).
//
// CUDAPluggableAllocator costs every tensor more than memlake itself: a
// std::function call each way, and a mutex with an unordered_map emplace on
// allocation and a mutex, find and erase on free (it remembers each pointer's
// size, device and stream for the free function). This file subclasses
// c10::cuda::CUDACachingAllocator::CUDAAllocator directly: allocate() calls
// libmemlake's memlake_torch_malloc and returns a DataPtr whose context is the
// pointer itself and whose deleter is a plain function, one per device
// ordinal (memlake's free needs the device, not the size or the stream: the
// allocation remembers its stream). No heap allocation, map or lock is added
// per tensor. Out of memory is thrown as c10::OutOfMemoryError (what
// PyTorch's bindings raise as torch.OutOfMemoryError), as _torch_oom.cpp does.
//
// Everything else mirrors CUDAPluggableAllocator with none of its optional
// functions set (what memlake.torch.enable() installed before): graph pool
// calls, recordStream, setMemoryFraction and emptyCache do nothing (memlake
// learns of captures from memlake.torch's CUDAGraph wrappers), and what the
// pluggable allocator refuses is refused here too, except that the device
// statistics, the peak reset and cacheInfo (cuDNN's workspace sizing) are
// answered from memlake's statistics.
//
// Compiled against the installed PyTorch by memlake._torch_oom.build()
// (torch.utils.cpp_extension), linked to the libmemlake the package loaded,
// and installed by memlake.torch.enable() through memlake_torch_direct_install().
//
// The methods below carry no `override`: the interface changes between
// PyTorch versions (parameters added, methods added or removed), and a method
// the installed version does not declare is then an unused member instead of
// a compile error, while one it declares pure and no overload here matches
// leaves the class abstract (a compile error: enable() falls back to the
// pluggable allocator). Mirrored: torch/csrc/cuda/CUDAPluggableAllocator.h/.cpp
// and c10/cuda/CUDACachingAllocator.h of PyTorch 2.10/2.11 and main.
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#if defined(__has_include)
#if __has_include(<torch/csrc/cuda/CUDAPluggableAllocator.h>)
#include <torch/csrc/cuda/CUDAPluggableAllocator.h>
#define MEMLAKE_HAVE_CHANGE_CURRENT_ALLOCATOR 1
#endif
#endif

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>
#include <type_traits>
#include <utility>
#include <vector>

extern "C" {
struct memlake_allocator;
// From include/memlake/memlake.h (the status enum is an int).
void* memlake_torch_malloc(ssize_t size, int device, void* stream);
void memlake_torch_free(void* ptr, size_t size, int device, void* stream);
// _torch_oom.cpp (built into the same library): memlake_torch_malloc with out of memory as c10's type.
void* memlake_torch_malloc_oom(ssize_t size, int device, void* stream);
memlake_allocator* memlake_default(void);
int memlake_free_if_owned(memlake_allocator* a, void* ptr, int device, void** stream);
int memlake_reset_peak_stats(memlake_allocator* a, int device);
const char* memlake_last_error(void);

struct memlake_stat_prefix {
  uint64_t current, peak;
};
// The leading fields of memlake_stats (memlake.h): memlake_get_stats copies
// min(struct_size, its own size) bytes, so a prefix is a valid argument.
struct memlake_stats_prefix {
  uint32_t struct_size;
  int32_t device;
  memlake_stat_prefix requested_bytes, allocated_bytes, reserved_bytes, mapped_bytes, active_blocks;
  uint64_t num_allocs, num_frees, num_ooms, small_allocs;
  uint64_t cache_hits, stitch_reuses, stitches, grows, pages_created;
  uint64_t views, stitched_views, small_slabs, largest_free_bytes;
  uint64_t page_size, memory_cap;
};
int memlake_get_stats(memlake_allocator* a, int device, memlake_stats_prefix* stats);
}

// Types a PyTorch version may lack (OomRejectionObserver is recent): qualified lookup finds
// PyTorch's own declaration first and these only where it has none, so the methods that take
// them below always compile and override exactly where PyTorch declares them.
namespace memlake_torch_direct_fallback {
struct OomRejectionObserver {};
struct ShareableHandle {};
struct StreamSegmentSize {};
}  // namespace memlake_torch_direct_fallback
namespace c10::cuda::CUDACachingAllocator {
using namespace ::memlake_torch_direct_fallback;
}  // namespace c10::cuda::CUDACachingAllocator

namespace {

namespace cca = c10::cuda::CUDACachingAllocator;
// c10::CachingDeviceAllocator::Stat in recent PyTorch, CUDACachingAllocator::Stat before.
using Stat = std::decay_t<decltype(std::declval<cca::DeviceStats&>().allocated_bytes[0])>;
constexpr size_t kAggregate = 0;  // StatType::AGGREGATE
using c10::DeviceIndex;
using c10::cuda::MempoolId_t;

bool g_convert_oom = true;  // MEMLAKE_TORCH_OOM=0 keeps libmemlake's RuntimeError (set at install)

[[noreturn]] void unsupported(const char* what) {
  TORCH_CHECK(false, "memlake (memlake.torch.enable()) does not support ", what,
              " (PyTorch's pluggable allocator does not either)");
}

// Out of memory as c10::OutOfMemoryError: _torch_oom.cpp's wrapper, compiled into this library too.
void* malloc_on(size_t size, DeviceIndex device, cudaStream_t stream) {
  return g_convert_oom ? memlake_torch_malloc_oom(static_cast<ssize_t>(size), device, stream)
                       : memlake_torch_malloc(static_cast<ssize_t>(size), device, stream);
}

// A pointer whose device is not known (raw_delete): the current device is
// tried first, then every other. Off the tensor path (allocate() gives each
// tensor its device's deleter).
void free_unknown_device(void* ptr) {
  if (!ptr) return;
  memlake_allocator* a = memlake_default();
  TORCH_CHECK(a, "memlake: free(", ptr, ") with no memlake allocator: ", memlake_last_error());
  DeviceIndex cur = -1;
  if (c10::cuda::GetDevice(&cur) == cudaSuccess && cur >= 0 && memlake_free_if_owned(a, ptr, cur, nullptr) == 0)
    return;
  const int n = static_cast<int>(c10::cuda::device_count());
  for (int d = 0; d < n; ++d)
    if (d != cur && memlake_free_if_owned(a, ptr, d, nullptr) == 0) return;
  TORCH_CHECK(false, "memlake: free(", ptr, "): not a live memlake allocation (double free or foreign pointer)");
}

void raw_deleter_fn(void* ptr) {
  try {
    free_unknown_device(ptr);
  } catch (const std::exception&) {
    // A deleter runs from destructors: nothing to throw to.
  }
}

// One deleter per device ordinal: the DataPtr's context is the pointer itself.
template <int D>
void delete_on(void* ptr) {
  memlake_torch_free(ptr, 0, D, nullptr);
}

constexpr int kDeleters = 64;

template <int... I>
constexpr std::array<c10::DeleterFnPtr, sizeof...(I)> make_deleters(std::integer_sequence<int, I...>) {
  return {{&delete_on<I>...}};
}

constexpr std::array<c10::DeleterFnPtr, kDeleters> kDeleterFor = make_deleters(std::make_integer_sequence<int, kDeleters>{});

inline c10::DeleterFnPtr deleter_for(DeviceIndex device) {
  return device >= 0 && device < kDeleters ? kDeleterFor[device] : &raw_deleter_fn;
}

memlake_stats_prefix read_stats(DeviceIndex device) {
  memlake_stats_prefix s{};
  s.struct_size = sizeof s;
  memlake_allocator* a = memlake_default();
  TORCH_CHECK(a, "memlake: no allocator: ", memlake_last_error());
  TORCH_CHECK(memlake_get_stats(a, device, &s) == 0, "memlake: statistics of device ", static_cast<int>(device),
              ": ", memlake_last_error());
  return s;
}

void set_stat(Stat& out, const memlake_stat_prefix& in) {
  out.current = static_cast<int64_t>(in.current);
  out.peak = static_cast<int64_t>(in.peak);
}

class MemlakeAllocator final : public cca::CUDAAllocator {
 public:
  // ---- c10::Allocator

  c10::DataPtr allocate(size_t size) override {
    DeviceIndex device = -1;
    C10_CUDA_CHECK(c10::cuda::GetDevice(&device));
    const c10::Device dev(c10::DeviceType::CUDA, device);
    if (size == 0) return {nullptr, nullptr, deleter_for(device), dev};
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device).stream();
    void* p = malloc_on(size, device, stream);
    return {p, p, deleter_for(device), dev};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &raw_deleter_fn; }

  void copy_data(void* dest, const void* src, std::size_t count) const {
    C10_CUDA_CHECK(cudaMemcpy(dest, src, count, cudaMemcpyKind::cudaMemcpyDeviceToDevice));
  }

  // ---- c10::DeviceAllocator / CUDAAllocator

  void* raw_alloc(size_t nbytes) {
    DeviceIndex device = -1;
    C10_CUDA_CHECK(c10::cuda::GetDevice(&device));
    if (nbytes == 0) return nullptr;
    return malloc_on(nbytes, device, c10::cuda::getCurrentCUDAStream(device).stream());
  }

  void* raw_alloc_with_stream(size_t nbytes, cudaStream_t stream) {
    DeviceIndex device = -1;
    C10_CUDA_CHECK(c10::cuda::GetDevice(&device));
    if (nbytes == 0) return nullptr;
    return malloc_on(nbytes, device, stream);
  }

  void raw_delete(void* ptr) { free_unknown_device(ptr); }

  void init(int /*device_count*/) { initialized_ = true; }
  bool initialized() { return initialized_; }

  double getMemoryFraction(DeviceIndex /*device*/) { unsupported("getMemoryFraction"); }
  void setMemoryFraction(double /*fraction*/, DeviceIndex /*device*/) {}  // the pluggable one: a no-op
  std::vector<cca::StreamSegmentSize> getExpandableSegmentSizes(DeviceIndex /*device*/) {
    unsupported("getExpandableSegmentSizes");
  }

  // The pluggable allocator without a reset function does nothing here; so does memlake.torch.enable()
  // (memlake.empty_cache(device) gives memlake's cache back).
  void emptyCache(MempoolId_t /*mempool_id*/) {}
  void emptyCache() {}

  void enable(bool /*value*/) {}
  bool isEnabled() const { return true; }

  void cacheInfo(DeviceIndex device, size_t* largestBlock) {
    // cuDNN's benchmark mode bounds its workspace by this. As the native allocator: the largest
    // free block held, else what the device has free (here within memlake's cap).
    const memlake_stats_prefix s = read_stats(device);
    size_t largest = static_cast<size_t>(s.largest_free_bytes);
    if (largest == 0) {
      c10::cuda::CUDAGuard guard(device);
      size_t free_bytes = 0, total = 0;
      C10_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
      largest = free_bytes;
      if (s.memory_cap > 0)
        largest = std::min<size_t>(largest, s.memory_cap > s.reserved_bytes.current
                                                ? static_cast<size_t>(s.memory_cap - s.reserved_bytes.current)
                                                : 0);
    }
    *largestBlock = largest;
  }

  void* getBaseAllocation(void* ptr, size_t* /*size*/) { return ptr; }

  void recordStream(const c10::DataPtr& /*ptr*/, c10::cuda::CUDAStream /*stream*/) {}

  cca::DeviceStats getDeviceStats(DeviceIndex device) {
    const memlake_stats_prefix s = read_stats(device);
    cca::DeviceStats out;
    const size_t all = kAggregate;
    set_stat(out.allocated_bytes[all], s.allocated_bytes);
    set_stat(out.active_bytes[all], s.allocated_bytes);
    set_stat(out.requested_bytes[all], s.requested_bytes);
    set_stat(out.reserved_bytes[all], s.reserved_bytes);
    set_stat(out.allocation[all], s.active_blocks);
    set_stat(out.active[all], s.active_blocks);
    out.allocation[all].allocated = static_cast<int64_t>(s.num_allocs);
    out.allocation[all].freed = static_cast<int64_t>(s.num_frees);
    out.num_ooms = static_cast<int64_t>(s.num_ooms);
    return out;
  }

  void resetAccumulatedStats(DeviceIndex /*device*/) { unsupported("resetAccumulatedStats"); }

  void resetPeakStats(DeviceIndex device) {
    memlake_allocator* a = memlake_default();
    TORCH_CHECK(a && memlake_reset_peak_stats(a, device) == 0, "memlake: reset_peak_stats: ", memlake_last_error());
  }

  cca::SnapshotInfo snapshot(MempoolId_t /*mempool_id*/, bool /*include_traces*/) { unsupported("snapshot"); }
  cca::SnapshotInfo snapshot(MempoolId_t /*mempool_id*/) { unsupported("snapshot"); }
  cca::SnapshotInfo snapshot() { unsupported("snapshot"); }

  // CUDA graphs: memlake learns of captures from memlake.torch's CUDAGraph wrappers
  // (memlake_capture_begin/end, memlake_graph_pool_release), as under the pluggable allocator.
  void beginAllocateToPool(DeviceIndex /*device*/, MempoolId_t /*mempool_id*/,
                           std::function<bool(cudaStream_t)> /*filter*/) {}
  void endAllocateToPool(DeviceIndex /*device*/, MempoolId_t /*mempool_id*/) {}
  void releasePool(DeviceIndex /*device*/, MempoolId_t /*mempool_id*/) {}

  cca::ShareableHandle shareIpcHandle(void* /*ptr*/) { unsupported("shareIpcHandle"); }
  std::shared_ptr<void> getIpcDevPtr(std::string /*handle*/) { unsupported("getIpcDevPtr"); }

  void recordHistory(bool /*enabled*/, cca::CreateContextFn /*context_recorder*/, size_t /*alloc_trace_max_entries*/,
                     cca::RecordContext /*when*/, bool /*clearHistory*/,
                     const std::vector<std::string>& /*skip_actions*/) {
    unsupported("recordHistory");
  }
  void recordHistory(bool /*enabled*/, cca::CreateContextFn /*context_recorder*/, size_t /*alloc_trace_max_entries*/,
                     cca::RecordContext /*when*/, bool /*clearHistory*/) {
    unsupported("recordHistory");
  }
  void recordHistory(bool /*enabled*/, cca::CreateContextFn /*context_recorder*/, size_t /*alloc_trace_max_entries*/,
                     cca::RecordContext /*when*/) {
    unsupported("recordHistory");
  }

  void attachOutOfMemoryObserver(cca::OutOfMemoryObserver /*observer*/) { unsupported("attachOutOfMemoryObserver"); }
  void attachOomRejectionObserver(cca::OomRejectionObserver /*observer*/) {
    unsupported("attachOomRejectionObserver");
  }
  void attachAllocatorTraceTracker(cca::AllocatorTraceTracker /*tracker*/) {
    unsupported("attachAllocatorTraceTracker");
  }

  std::shared_ptr<cca::AllocatorState> getCheckpointState(DeviceIndex /*device*/, MempoolId_t /*id*/) {
    unsupported("getCheckpointState");
  }
  cca::CheckpointDelta setCheckpointPoolState(DeviceIndex /*device*/, std::shared_ptr<cca::AllocatorState> /*pps*/) {
    unsupported("setCheckpointPoolState");
  }

  void enablePeerAccess(DeviceIndex dev, DeviceIndex dev_to_access) {
    c10::cuda::CUDAGuard device_guard(dev);
    cudaError_t err = cudaDeviceEnablePeerAccess(dev_to_access, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();  // already enabled: clear the error
    } else {
      C10_CUDA_CHECK(err);
    }
  }

  cudaError_t memcpyAsync(void* dst, int /*dstDevice*/, const void* src, int /*srcDevice*/, size_t count,
                          cudaStream_t stream, bool /*p2p_enabled*/) {
    return cudaMemcpyAsync(dst, src, count, cudaMemcpyDeviceToDevice, stream);
  }

  std::string name() { return "memlake"; }

 private:
  bool initialized_ = false;
};

MemlakeAllocator* instance() {
  static MemlakeAllocator* a = new MemlakeAllocator();  // never destroyed: tensors are freed during exit
  return a;
}

std::string g_error;

}  // namespace

extern "C" {

// Makes memlake PyTorch's CUDA allocator, as torch.cuda.memory.change_current_allocator does for a
// pluggable one (torch/csrc/cuda/CUDAPluggableAllocator.cpp changeCurrentAllocator: refused once the
// current allocator is initialized, i.e. once PyTorch set CUDA up). convert_oom: out of memory as
// c10::OutOfMemoryError (torch.OutOfMemoryError) rather than libmemlake's std::runtime_error.
// 0 on success (also when already installed); else nonzero, memlake_torch_direct_error() says why.
int memlake_torch_direct_install(int convert_oom) {
  try {
    MemlakeAllocator* a = instance();
    g_convert_oom = convert_oom != 0;
    if (cca::allocator.load() == a) return 0;
#if defined(MEMLAKE_HAVE_CHANGE_CURRENT_ALLOCATOR)
    // PyTorch's own function also keeps the shared_ptr that torch.cuda.memory._get_current_allocator() returns.
    a->init(0);
    torch::cuda::CUDAPluggableAllocator::changeCurrentAllocator(
        std::shared_ptr<cca::CUDAAllocator>(a, [](cca::CUDAAllocator*) {}));
#else
    TORCH_CHECK(!cca::allocator.load()->initialized(), "Can't swap an already initialized allocator");
    a->init(0);
    cca::allocator.store(a);
#endif
    return 0;
  } catch (const c10::Error& e) {
    g_error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    g_error = e.what();
  }
  return 1;
}

const char* memlake_torch_direct_error(void) { return g_error.c_str(); }

// 1 while memlake's direct allocator is PyTorch's current CUDA allocator.
int memlake_torch_direct_installed(void) { return cca::allocator.load() == instance() ? 1 : 0; }

}  // extern "C"
