// The primitives layer: the one narrow contract over physical memory and
// virtual address ranges that everything above it is written against.
//
// It mirrors CUDA's virtual memory management (cuMemAddressReserve,
// cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemRelease) plus the
// few stream-ordering operations an allocator needs (events, synchronize).
// Two implementations exist: `cuda` (driver API, loaded with dlopen) and
// `host` (memfd pages mmap'ed into PROT_NONE reservations). Both obey the
// same rules, which are the CUDA rules that matter to an allocator:
//
//  * Every size and virtual address passed in is a multiple of
//    granularity(). Violations throw Errc::invalid_argument.
//  * A physical handle is mapped whole: map(va, size, h) requires size ==
//    the size the handle was created with. There is no partial mapping.
//  * map() only targets an unmapped part of a live reservation.
//  * A fresh mapping is not accessible until set_access() covers it.
//  * unmap(va, size) must cover whole mappings (one or several adjacent).
//  * A handle may be mapped at several addresses at once (aliasing); the
//    memory is shared. release() of a still-mapped handle is allowed: the
//    memory lives until its last mapping goes (CUDA semantics).
//  * unmap()/release() do not wait for device work: callers synchronise
//    (event or stream) before unmapping memory kernels may still touch.
//
// Thread safety: implementations are safe to call from several threads;
// callers above serialise per device anyway.
//
// Only src/prim/cuda_backend.cpp includes cuda.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace memlake::prim {

using PhysHandle = std::uint64_t;  // opaque; 0 is never a valid handle
using Stream = void*;              // CUstream / cudaStream_t; nullptr = default
using Event = std::uint64_t;       // opaque; 0 is never a valid event

enum class Access { none, read, read_write };

// Which primitive; indexes the call counters.
enum class Op : int {
  reserve,
  free_reservation,
  create,
  release,
  map,
  unmap,
  set_access,
  event_record,
  event_query,
  synchronize,  // the host blocks: a stream, the device, or one event (wait_event)
  count_,
};
inline constexpr int kNumOps = static_cast<int>(Op::count_);
const char* op_name(Op op) noexcept;

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;  // "host", "cuda"
  virtual int device() const = 0;        // device ordinal this backend serves
  // The device's stable identity for labels: cuda "GPU-xxxxxxxx-xxxx-..." (the
  // form nvidia-smi prints, "" if the driver cannot tell), host "host-<device>".
  virtual std::string uuid() const { return {}; }
  // Unit of every size and address; the unit of physical memory creation.
  virtual std::size_t granularity() const = 0;
  // Physical memory of the device; 0 if unknown (host backend).
  virtual std::size_t total_memory() const = 0;

  // Virtual ranges. reserve() returns a range aligned to `align` (0 means
  // granularity()). free_reservation() requires that nothing is mapped in it.
  virtual std::uintptr_t reserve(std::size_t size, std::size_t align) = 0;
  virtual void free_reservation(std::uintptr_t va, std::size_t size) = 0;

  // Physical memory. create() throws Errc::out_of_memory when the device (or
  // the host backend's limit) is exhausted.
  virtual PhysHandle create(std::size_t size) = 0;
  virtual void release(PhysHandle h) = 0;

  virtual void map(std::uintptr_t va, std::size_t size, PhysHandle h) = 0;
  virtual void unmap(std::uintptr_t va, std::size_t size) = 0;
  virtual void set_access(std::uintptr_t va, std::size_t size, Access a) = 0;

  // Stream ordering. record_event() captures the work submitted to `s` so
  // far; query_event() is true once that work is complete.
  virtual Stream create_stream() = 0;
  virtual void destroy_stream(Stream s) = 0;
  virtual Event record_event(Stream s) = 0;
  virtual bool query_event(Event e) = 0;
  // True once all work submitted to `s` so far is complete (cuStreamQuery);
  // never blocks. Exact at once, where an event recorded just now may still
  // read as pending for a while on an idle stream. False for a stream under
  // graph capture (querying it would break the capture). Counted as an event query.
  virtual bool query_stream(Stream s) = 0;
  virtual void wait_event(Event e) = 0;  // host blocks until complete
  virtual void destroy_event(Event e) = 0;
  virtual void synchronize_stream(Stream s) = 0;
  virtual void synchronize_device() = 0;
  // True while `s` is being captured into a CUDA graph (host: never).
  virtual bool is_capturing(Stream s) = 0;

  // ---- Copies (the copy engine's primitives; not counted as allocator calls)
  // Page-locked host memory that DMA can read and write directly.
  virtual void* alloc_pinned(std::size_t n) = 0;  // throws Errc::out_of_memory
  virtual void free_pinned(void* p) = 0;
  enum class PointerKind { pageable, pinned, device };
  virtual PointerKind pointer_kind(const void* p) = 0;
  // Queued on `s`; asynchronous when the host side is pinned.
  virtual void copy_to_device_async(std::uintptr_t dst, const void* src, std::size_t n, Stream s) = 0;
  virtual void copy_to_host_async(void* dst, std::uintptr_t src, std::size_t n, Stream s) = 0;
  // Work queued on `s` after this call waits for `e`. `e` may come from
  // another device's backend (cross-device ordering).
  virtual void stream_wait(Stream s, Event e) = 0;

  // Page-locks existing host memory [p, p+n) so DMA reads and writes it
  // directly (cuMemHostRegister, portable to every context). Afterwards
  // pointer_kind() reports it pinned. The memory must stay allocated until
  // unregister_host(p) (p: the address passed to register_host): freeing a
  // registered buffer leaves the driver with stale pages. Costly (the
  // driver pins page by page), so only worth it for buffers used again.
  virtual void register_host(void* p, std::size_t n) = 0;
  virtual void unregister_host(void* p) = 0;

  // ---- Peers (multi-path copies)
  // Whether this device can access memory of device `peer` directly
  // (cuDeviceCanAccessPeer; a device can always access its own).
  virtual bool can_access_peer(int peer) = 0;
  // Makes this backend's mapped range [va, va+size) readable and writable
  // by device `peer` too (cuMemSetAccess with the peer's location), keeping
  // this device's own access. Sizes follow the granularity rule.
  virtual void grant_peer(std::uintptr_t va, std::size_t size, int peer) = 0;
  // Device-to-device copy queued on `s` (this device's stream). Each side is
  // memory this device can access: its own, or a peer's range granted to it.
  virtual void copy_device_async(std::uintptr_t dst, std::uintptr_t src, std::size_t n, Stream s) = 0;

  // Synchronous byte copies between host memory and mapped, accessible
  // device virtual memory. Used by tests and tools, not by the allocator.
  virtual void write(std::uintptr_t dst, const void* src, std::size_t n) = 0;
  virtual void read(void* dst, std::uintptr_t src, std::size_t n) = 0;

  // ---- Device work (one narrow operation, for the daemon's content ids)
  // BLAKE2b-256 of every leaf_bytes-long leaf of the mapped, readable device
  // range [va, va+n) (the last leaf may be shorter), computed on the device:
  // digests_out receives 32 bytes per leaf, ceil(n / leaf_bytes) of them, in
  // order. Returns false, having done nothing, where the backend cannot (host
  // backend; cuda built without nvcc, or a driver that refuses the embedded
  // PTX): the caller hashes the bytes itself. Blocks until the digests are
  // on the host; driver errors throw. Not counted as an allocator call.
  virtual bool hash_leaves(std::uintptr_t va, std::size_t n, std::size_t leaf_bytes, std::uint8_t* digests_out);

  // ---- Sharing between processes (POSIX file descriptors)
  // create_shareable() is create() for memory another process may map: the
  // cuda backend asks for CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR (a plain
  // create()'s handle cannot be exported), the host backend gives the handle
  // its own memfd. export_fd() returns a new descriptor the caller owns
  // (passed on with SCM_RIGHTS); `read_only` asks for one that cannot be
  // mapped writable (host: the memfd reopened O_RDONLY, enforced by the
  // kernel; cuda: not expressible, the importer's set_access decides).
  // import_fd() makes a handle of `size` bytes (the size it was created
  // with) from such a descriptor without taking it; release() it as any
  // other. A handle imported from a read-only descriptor refuses
  // set_access(read_write) with Errc::invalid_argument. Backends that cannot
  // share throw Errc::unavailable.
  virtual PhysHandle create_shareable(std::size_t size);
  virtual int export_fd(PhysHandle h, bool read_only);
  virtual PhysHandle import_fd(int fd, std::size_t size);
};

struct BackendConfig {
  std::string kind = "cuda";      // "cuda" | "host"
  int device = 0;
  std::size_t granularity = 0;    // 0: backend default (host 2 MiB, cuda recommended)
  std::size_t host_memory_limit = 0;  // host backend: physical limit, 0 = none
};

// Throws Errc::unavailable when the backend cannot run here (no driver,
// built without CUDA headers, no such device) with a message saying why.
std::unique_ptr<Backend> make_backend(const BackendConfig& cfg);

// Cheap probe used by tests and tools to decide whether to skip.
bool cuda_available(std::string* why = nullptr);
int cuda_device_count();

}  // namespace memlake::prim
