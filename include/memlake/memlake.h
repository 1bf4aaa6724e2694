/* memlake: a defragmenting (stitching) caching allocator over CUDA virtual
 * memory. Stable C ABI: used by PyTorch's pluggable allocator, the Python
 * package (ctypes) and any C/C++ program.
 *
 * Conventions
 *  - Functions returning memlake_status return MEMLAKE_OK (0) on success;
 *    on failure memlake_last_error() gives a message for this thread.
 *  - Structs passed in or out begin with `struct_size`; set it to
 *    sizeof(the struct) (the _init functions do) so the library can grow
 *    them compatibly.
 *  - `stream` is a CUstream / cudaStream_t (NULL = default stream). Memory
 *    freed on a stream is reused at once by that stream and by other streams
 *    only after the work queued before the free has completed.
 *  - All functions are thread-safe.
 */
#ifndef MEMLAKE_H
#define MEMLAKE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only the C ABI is exported from libmemlake.so; everything else is hidden. */
#ifndef MEMLAKE_API
#define MEMLAKE_API __attribute__((visibility("default")))
#endif

#define MEMLAKE_VERSION_MAJOR 0
#define MEMLAKE_VERSION_MINOR 1

typedef enum memlake_status {
  MEMLAKE_OK = 0,
  MEMLAKE_ERROR_OUT_OF_MEMORY = 1,    /* valid request, no memory (cap or device full) */
  MEMLAKE_ERROR_INVALID_ARGUMENT = 2, /* misuse: double free, foreign pointer, bad option */
  MEMLAKE_ERROR_DRIVER = 3,           /* the CUDA driver (or host kernel) failed */
  MEMLAKE_ERROR_UNAVAILABLE = 4,      /* backend cannot run here (no driver, no device) */
  MEMLAKE_ERROR_INTERNAL = 5
} memlake_status;

typedef struct memlake_allocator memlake_allocator;

/* Options: the same table as the MEMLAKE_* environment variables
 * (`memlake options` prints it). Set with memlake_options_set by key. */
typedef struct memlake_options memlake_options;
MEMLAKE_API memlake_status memlake_options_create(memlake_options** out, int from_env);
MEMLAKE_API memlake_status memlake_options_set(memlake_options* o, const char* key, const char* value);
/* Writes the value as text into buf (NUL-terminated); returns the length needed. */
MEMLAKE_API size_t memlake_options_get(const memlake_options* o, const char* key, char* buf, size_t len);
MEMLAKE_API void memlake_options_destroy(memlake_options* o);
/* Key of option number i (0, 1, ...), NULL past the last. */
MEMLAKE_API const char* memlake_option_key(int i);

/* opts may be NULL: defaults plus the MEMLAKE_* environment. Devices are
 * set up lazily, on first use. */
MEMLAKE_API memlake_status memlake_create(const memlake_options* opts, memlake_allocator** out);
/* Frees everything, live allocations included, after synchronising. */
MEMLAKE_API void memlake_destroy(memlake_allocator* a);

/* size 0 gives *ptr = NULL and MEMLAKE_OK. */
MEMLAKE_API memlake_status memlake_alloc(memlake_allocator* a, size_t size, int device, void* stream, void** ptr);
/* NULL is a no-op. An unknown pointer gives MEMLAKE_ERROR_INVALID_ARGUMENT. */
MEMLAKE_API memlake_status memlake_free(memlake_allocator* a, void* ptr, int device, void* stream);

/* Whether ptr is the start of a live allocation of this allocator on
 * `device`: MEMLAKE_OK with its requested size and the stream it belongs to
 * (either out-pointer may be NULL), or MEMLAKE_ERROR_INVALID_ARGUMENT
 * (nothing is changed, no error is logged). */
MEMLAKE_API memlake_status memlake_lookup(memlake_allocator* a, const void* ptr, int device, size_t* size, void** stream);
/* memlake_lookup and memlake_free in one step (one lock): frees ptr if it
 * is a live allocation of this allocator on `device` and returns MEMLAKE_OK
 * with the stream it belonged to in *stream (may be NULL); otherwise
 * MEMLAKE_ERROR_INVALID_ARGUMENT, nothing changed and no error logged. For
 * callers that pass foreign pointers on, like the LD_PRELOAD shim. */
MEMLAKE_API memlake_status memlake_free_if_owned(memlake_allocator* a, void* ptr, int device, void** stream);
MEMLAKE_API memlake_status memlake_empty_cache(memlake_allocator* a, int device);
/* bytes = 0 removes the cap. Applies to every device, current and future. */
MEMLAKE_API memlake_status memlake_set_memory_cap(memlake_allocator* a, size_t bytes);
MEMLAKE_API memlake_status memlake_reset_peak_stats(memlake_allocator* a, int device);

/* MEMLAKE_OP_SYNCHRONIZE counts every wait of the host for the device: a stream, the
   whole device, or one event (e.g. before memory freed by a kernel is unmapped). */
typedef enum memlake_prim_op {
  MEMLAKE_OP_RESERVE = 0, MEMLAKE_OP_FREE_RESERVATION, MEMLAKE_OP_CREATE, MEMLAKE_OP_RELEASE,
  MEMLAKE_OP_MAP, MEMLAKE_OP_UNMAP, MEMLAKE_OP_SET_ACCESS, MEMLAKE_OP_EVENT_RECORD,
  MEMLAKE_OP_EVENT_QUERY, MEMLAKE_OP_SYNCHRONIZE, MEMLAKE_NUM_OPS
} memlake_prim_op;
MEMLAKE_API const char* memlake_prim_op_name(int op);

typedef struct memlake_stat { uint64_t current, peak; } memlake_stat;

typedef struct memlake_stats {
  uint32_t struct_size;
  int32_t device;
  memlake_stat requested_bytes; /* bytes asked for by live allocations */
  memlake_stat allocated_bytes; /* after rounding */
  memlake_stat reserved_bytes;  /* physical memory held */
  memlake_stat mapped_bytes;    /* virtual memory mapped */
  memlake_stat active_blocks;
  uint64_t num_allocs, num_frees, num_ooms, small_allocs;
  uint64_t cache_hits, stitch_reuses, stitches, grows, pages_created;
  uint64_t views, stitched_views, small_slabs, largest_free_bytes;
  uint64_t page_size, memory_cap;
  uint64_t primitive_calls[16]; /* indexed by memlake_prim_op */
  uint64_t primitive_ns[16];    /* wall-clock ns spent in those calls (since 0.1: check struct_size) */
  uint64_t repairs;             /* idle cached views re-mapped in part instead of a new stitch (check struct_size) */
  uint64_t slow_paths;          /* large requests no cached view served at once (check struct_size) */
  uint64_t slow_path_ns;        /* wall-clock ns in them, driver calls included (check struct_size) */
  uint64_t host_ns;             /* wall-clock ns inside every alloc and free, slow paths and driver calls
                                   included: the allocator's whole host cost (check struct_size) */
} memlake_stats;

/* stats->struct_size must be set. A device never used reports zeros. */
MEMLAKE_API memlake_status memlake_get_stats(memlake_allocator* a, int device, memlake_stats* stats);
/* The allocated-bytes watermark of `device`: out->current is the bytes of
 * live allocations now (allocated_bytes.current: rounded, evicted ones
 * included, since they stay allocated), out->peak the highest that count has
 * been since the watermark's last reset (or the device's first use). reset
 * != 0 restarts the watermark at the current bytes after reading it. Apart
 * from the statistics' peaks: memlake_reset_peak_stats does not reset the
 * watermark and a reset here leaves allocated_bytes.peak alone, so a caller
 * can measure what a stretch of work allocated and freed inside itself
 * (peak - current at its start) without disturbing what the user sees. One
 * watermark per device, shared by every caller. A device never used reports
 * zeros; a NULL allocator or out is MEMLAKE_ERROR_INVALID_ARGUMENT. */
MEMLAKE_API memlake_status memlake_watermark(memlake_allocator* a, int device, int reset, memlake_stat* out);
/* JSON of every used device: {"devices":[...]}; returns the length needed
 * (excluding the NUL); writes at most len bytes including the NUL. */
MEMLAKE_API size_t memlake_stats_json(memlake_allocator* a, char* buf, size_t len);

/* ---- Copies between host and device memory (the copy engine).
 * Direction from the pointers: host (pageable or pinned) to device, or
 * device to host. Pinned host memory goes straight to DMA; large pageable
 * copies are pipelined through pinned staging buffers. Ordered on `stream`:
 * the copy starts after the work queued on it before the call, and later
 * work starts after the copy. A host-to-device copy returns once `src` may
 * be reused, except that a pinned `src` must stay untouched until the stream
 * reaches the copy. A device-to-host copy returns with the data in `dst`. */
MEMLAKE_API memlake_status memlake_copy(memlake_allocator* a, void* dst, const void* src, size_t nbytes, int device,
                                        void* stream);

/* With the registration cache on (MEMLAKE_COPY_REGISTER_AFTER > 0), host
 * buffers copied repeatedly stay page-locked. Before freeing such a buffer,
 * call this: it unregisters whatever the cache holds of [ptr, ptr+nbytes) on
 * every device (waiting for a copy still using it). Harmless otherwise. */
MEMLAKE_API memlake_status memlake_copy_forget(memlake_allocator* a, const void* ptr, size_t nbytes);

/* What the copy engine of `device` has done (zeros before its first copy;
 * a query never starts an engine). With MEMLAKE_COPY_TOPOLOGY naming two
 * or more GPUs, copies go over several paths (a copy to or from GPU g is
 * split over g's own PCIe link and peer GPUs' links, forwarded over
 * NVLink); then paths_gpus is the topology's GPU count and the multi-path
 * fields count every device's transfers. stats->struct_size must be set. */
typedef struct memlake_copy_stats {
  uint32_t struct_size;
  uint32_t threads;           /* host threads of the engine (staging copies) */
  uint64_t copies, bytes;     /* copies through this engine and their bytes */
  uint64_t direct;            /* small pageable copies handed to the driver */
  uint64_t pinned;            /* pinned host memory sent straight to DMA */
  uint64_t staged;            /* pageable, pipelined through pinned staging buffers */
  uint64_t registered;        /* pageable, sent straight to DMA by the registration cache */
  uint64_t chunks;            /* staging pieces moved */
  uint32_t paths_gpus;        /* multi-path: GPUs of the topology, 0 = direct path only */
  uint32_t reserved0;
  uint64_t transfers, split;  /* multi-path: transfers, and those that used more than the direct path */
  uint64_t bytes_via[16];     /* multi-path: bytes each GPU's PCIe link carried */
  uint64_t lane_copy_ns;      /* staged copies, summed over host threads: ns in the host memcpy ... */
  uint64_t lane_wait_ns;      /* ... and ns waiting for a staging buffer or its DMA (check struct_size) */
} memlake_copy_stats;
MEMLAKE_API memlake_status memlake_get_copy_stats(memlake_allocator* a, int device, memlake_copy_stats* stats);

/* With MEMLAKE_GUARD or MEMLAKE_QUARANTINE on: names the allocation an
 * address belongs to the guard page or the quarantined range of, e.g. the
 * faulting address of a GPU kernel's illegal access (from the kernel log's
 * Xid 31 line or compute-sanitizer). Writes a line like
 * "memlake: out-of-bounds access at 0x..: N bytes past the end of allocation
 * 0x.. (S bytes)" and returns its length, or 0 when the address lies in no
 * such range (then buf holds ""). Writes at most len bytes including the NUL. */
MEMLAKE_API size_t memlake_describe_address(unsigned long long addr, char* buf, size_t len);

/* ---- Residency: memory leaves the GPU and comes back at the same address.
 * An allocation's bytes go to pinned host memory (or are dropped), its
 * physical pages are given back, its virtual address stays reserved; when
 * it comes back, pages are mapped at that address again, so pointers,
 * tensors, views and captured CUDA graphs stay valid. Only large
 * allocations (over small_max) move; small ones share slabs and stay.
 *
 * Tags say which memory an allocation belongs to ("weights", "kv", ...):
 * every allocation a thread makes gets the tag set on that thread. A tag
 * registered with MEMLAKE_TAG_READONLY is mapped read-only after a wake and
 * keeps its host copy, so the next sleep copies nothing (a device write to
 * it then faults). */
#define MEMLAKE_TAG_READONLY 1u
/* Registers a tag, or finds it: its id (1..255) in *id. The flags given
 * for a known name must match. */
MEMLAKE_API memlake_status memlake_tag_register(const char* name, unsigned flags, int* id);
/* This thread's tag for new allocations (0 = none); *previous (may be
 * NULL) receives the one it replaces. */
MEMLAKE_API memlake_status memlake_tag_set(int id, int* previous);

typedef enum memlake_sleep_mode {
  MEMLAKE_SLEEP_OFFLOAD = 0, /* bytes kept in pinned host memory, back on wake */
  MEMLAKE_SLEEP_DISCARD = 1  /* bytes dropped (a cache to refill); contents undefined after wake */
} memlake_sleep_mode;

typedef struct memlake_residency_report {
  uint32_t struct_size;
  uint32_t allocations;       /* allocations that left (sleep) or came back (wake) */
  uint64_t offloaded_bytes;   /* sleep: copied to the host tier */
  uint64_t kept_bytes;        /* sleep: read-only, host copy still true: not copied */
  uint64_t discarded_bytes;   /* sleep: dropped */
  uint64_t released_bytes;    /* sleep: GPU memory given back to the driver (cache included) */
  uint64_t restored_bytes;    /* wake: copied back */
  uint64_t refilled_bytes;    /* wake: discarded allocations mapped again */
  double seconds;
} memlake_residency_report;

/* Every large allocation with one of `tags` (ntags ids; ntags 0 = all) on
 * `device` (-1 = every device in use) leaves the GPU, after the work queued
 * so far on the device has completed, in modes[i] for tags[i] (modes NULL:
 * all in `mode`); then the allocator's cache is given back to the driver.
 * One call may offload the weights and discard the cache: the host unmaps
 * what needs no copy while the copies run. Fails with OUT_OF_MEMORY before
 * anything moves when the host tier cannot hold the offload, with
 * INVALID_ARGUMENT when already asleep and nothing selected is left on the
 * GPU (a first sleep that selects nothing still gives the cache back, and
 * memlake_wake ends it). Sleeping more
 * tags while asleep is allowed. report may be NULL (else set struct_size). */
MEMLAKE_API memlake_status memlake_sleep(memlake_allocator* a, int device, const int* tags, const int* modes,
                                         size_t ntags, int mode, memlake_residency_report* report);
/* Brings back everything memlake_sleep took, at the same addresses; returns
 * once the bytes are back. INVALID_ARGUMENT when not asleep; on
 * OUT_OF_MEMORY what is back stays back and the rest can be woken again. */
MEMLAKE_API memlake_status memlake_wake(memlake_allocator* a, int device, memlake_residency_report* report);
/* One allocation leaves the GPU (after the work queued on its stream; its
 * pages stay in the allocator's pool for others) or comes back (the copy
 * is queued, and its stream waits for it). mode: MEMLAKE_SLEEP_OFFLOAD or
 * MEMLAKE_SLEEP_DISCARD, with MEMLAKE_EVICT_ASYNC or'ed in to return once
 * the copy is queued: the allocation is then leaving (still mapped; do not
 * write it) until its copy completes, and memlake_settle, or any later
 * residency call, unmaps it. Restoring a leaving allocation cancels its
 * eviction. Evictions and restores use separate streams: both directions
 * move at once. */
#define MEMLAKE_EVICT_ASYNC 0x100
MEMLAKE_API memlake_status memlake_evict(memlake_allocator* a, void* ptr, int device, int mode);
MEMLAKE_API memlake_status memlake_restore(memlake_allocator* a, void* ptr, int device);
/* memlake_restore with flags. MEMLAKE_RESTORE_NO_WAIT: the copy is queued and
 * the allocation's stream does not wait for it yet; memlake_restore_ready
 * makes it wait, where its work needs the bytes, so a restore issued ahead
 * overlaps the work queued in between. No kernel may touch the allocation
 * before that. A free, an evict or a sleep of it in between waits for the
 * copy first (on its stream). Until memlake_restore_ready its host copy is
 * kept: an evict in between needs no copy, and an allocation or restore that
 * runs out of memory takes such allocations back (the latest restored
 * first) before it fails; memlake_restore_ready of one taken back restores
 * it again and waits. memlake_restore_ready of an allocation with no
 * pending copy does nothing; with ptr NULL it covers every allocation of the
 * device with a copy pending (memlake.torch calls it before a CUDA graph
 * capture begins: a restore during a capture is refused). */
#define MEMLAKE_RESTORE_NO_WAIT 0x1
MEMLAKE_API memlake_status memlake_restore_ex(memlake_allocator* a, void* ptr, int device, int flags);
MEMLAKE_API memlake_status memlake_restore_ready(memlake_allocator* a, void* ptr, int device);
/* A resident allocation the caller does not touch again before memlake_restore_ready
 * (a saved activation kept for backward): under memory pressure, after restores
 * ahead, spare allocations are evicted (first marked first; copied out after the
 * work queued on their stream, waited for) rather than an allocation failing;
 * memlake_restore_ready restores one so taken (and waits), and ends the mark
 * otherwise. A free ends it too. MEMLAKE_ERROR_INVALID_ARGUMENT if evicted or
 * being moved. Since 0.12. */
MEMLAKE_API memlake_status memlake_mark_spare(memlake_allocator* a, void* ptr, int device);
/* Unmaps the leaving allocations of `device` whose copies completed (wait
 * != 0: all of them, blocking until their copies complete); *settled (may
 * be NULL) gets how many. Also completes the disk tier's asynchronous moves
 * that are over (wait: all of them) and gives back the host extents of
 * restores whose copies completed; a MEMLAKE_DEMOTE_ASYNC write that failed
 * since the last call is returned here, once (DRIVER; its bytes stayed in
 * the host tier; *settled is then not written, the evictions are settled). */
MEMLAKE_API memlake_status memlake_settle(memlake_allocator* a, int device, int wait, size_t* settled);
/* An evicted allocation's bytes move from the pinned host tier to the disk
 * tier (option disk_tier: a directory; one unnamed O_DIRECT file, every
 * extent CRC-32C checksummed); memlake_restore reads them back and checks
 * them before anything is mapped. OUT_OF_MEMORY when the disk or the
 * disk_tier_limit is full, DRIVER on an I/O error or a checksum mismatch
 * (the bytes stay where they were), INVALID_ARGUMENT when not evicted,
 * discarded, asleep, on disk already or without a disk tier. */
MEMLAKE_API memlake_status memlake_demote(memlake_allocator* a, void* ptr, int device);
/* memlake_demote with flags. MEMLAKE_DEMOTE_ASYNC: the write is queued on the
 * disk tier's I/O threads and the call returns at once (OUT_OF_MEMORY for a
 * full disk still comes here); the host tier's copy is given back once the
 * write completes. A write that fails leaves the bytes in the host tier and
 * the next memlake_settle returns its error (DRIVER). A restore or free of
 * the allocation meanwhile waits for the write. */
#define MEMLAKE_DEMOTE_ASYNC 0x1
MEMLAKE_API memlake_status memlake_demote_ex(memlake_allocator* a, void* ptr, int device, int flags);
/* Read-ahead: an evicted allocation on the disk tier has its bytes read back
 * into the host tier in the background (each part checked), so that its
 * memlake_restore is a plain copy from the host; a restore meanwhile waits
 * for the read. Nothing when its bytes are in the host tier already or on
 * their way. A read that fails leaves it on disk: its restore reads it
 * itself and returns that error. */
MEMLAKE_API memlake_status memlake_fetch(memlake_allocator* a, void* ptr, int device);
/* Pins host memory for the host tier of `device` now (at least `bytes`
 * free), so that a later sleep pins nothing. */
MEMLAKE_API memlake_status memlake_host_tier_reserve(memlake_allocator* a, int device, size_t bytes);

typedef struct memlake_residency_stats {
  uint32_t struct_size;
  uint32_t asleep;
  uint64_t sleeps, wakes, evictions, restores;
  uint64_t bytes_evicted, bytes_restored, bytes_discarded;
  uint64_t evicted_now, evicted_bytes_now; /* allocations (bytes) off the GPU now */
  uint64_t host_capacity, host_used;       /* pinned host tier */
  double last_sleep_seconds, last_wake_seconds;
  /* Since 0.9 (a caller's smaller struct_size gets the fields above only): */
  uint64_t leaving_now;                    /* asynchronous evictions whose copies are in flight */
  uint64_t demotions;                      /* host tier -> disk tier moves, in all */
  uint64_t disk_used, disk_file;           /* disk tier: bytes held, size of its file */
  uint64_t disk_written, disk_read;        /* bytes through the disk tier, in all */
  uint32_t disk_direct;                    /* 1: O_DIRECT, 0: buffered I/O (or no disk tier) */
  uint32_t reserved_;
  /* Since 0.10: seconds in the disk tier's own file I/O (its checksums run beside it), in all:
   * disk_written / disk_write_seconds is the tier's write throughput, without the waits of
   * the moves around it. */
  double disk_write_seconds, disk_read_seconds;
  /* Since 0.11: asynchronous disk moves (memlake_demote_ex, memlake_fetch). disk_write_seconds
   * and disk_read_seconds count the time with at least one request in flight (overlapping
   * moves once). */
  uint64_t fetches;                        /* read-aheads completed, in all */
  uint64_t disk_failures;                  /* asynchronous moves that failed, in all */
  uint64_t disk_writing_now, disk_reading_now; /* bytes of asynchronous moves in flight */
  double disk_busy_seconds;                /* seconds with any disk request in flight, either direction */
  /* Since 0.12: restores queued without a wait (MEMLAKE_RESTORE_NO_WAIT) keep their host copy until
   * memlake_restore_ready; until then out-of-memory takes them back (reclaimed) instead of failing,
   * and memlake_restore_ready brings them back again. */
  uint64_t ahead_now, ahead_bytes_now;     /* restored ahead, not ready yet */
  uint64_t reclaimed, reclaimed_bytes;     /* taken back under memory pressure, in all */
  uint64_t spare_now, spare_bytes_now;     /* marked spare (memlake_mark_spare), not ready yet */
  uint64_t pressure_waits;                 /* allocations or restores out of memory that freed pages and retried */
  double pressure_seconds;                 /* time in them: waits for copies out, prefetches and spares taken back */
  /* Since 0.13: */
  uint64_t leaving_bytes_now;              /* bytes of the evictions in flight (still on the GPU) */
} memlake_residency_stats;
MEMLAKE_API memlake_status memlake_get_residency_stats(memlake_allocator* a, int device, memlake_residency_stats* stats);

/* ---- CUDA graph capture (docs/design/graphs.md).
 * memlake_capture_begin: from now until memlake_capture_end, allocations on
 * `stream` (of `device`) come from graph pool `pool_id` (any number naming
 * the pool; PyTorch's mempool id). A block of a pool freed during or after
 * the capture stays the pool's: it serves only later allocations of the same
 * size on the same stream of a capture into that pool, and no other memory
 * is handed out at its address, until the pool is released. While a capture
 * is in progress on a device, memlake queries and synchronises nothing there
 * (that would invalidate the capture) and unmaps nothing.
 * Each memlake_capture_begin counts one graph of the pool;
 * memlake_graph_pool_release is called once per graph when it is destroyed
 * or reset. At the last one the device is synchronised, the pool's freed
 * blocks return to the cache and its live ones are freed when their users
 * free them. INVALID_ARGUMENT: a stream captured twice, memlake_capture_end
 * for a stream not captured, release of an unknown pool or of one being
 * captured into. */
MEMLAKE_API memlake_status memlake_capture_begin(memlake_allocator* a, int device, void* stream, uint64_t pool_id);
MEMLAKE_API memlake_status memlake_capture_end(memlake_allocator* a, int device, void* stream);
MEMLAKE_API memlake_status memlake_graph_pool_release(memlake_allocator* a, int device, uint64_t pool_id);

/* ---- Virtual tensors: one reserved range, physical pages only where data
 * lives, addresses that never move (the KV cache's mechanism; see
 * docs/design/kv_cache.md). Every page of the range is PRIVATE (its own
 * memory, zero-filled when mapped), ZERO (the tensor's shared zero page:
 * reads give zeros; mapped read-write, write only zeros) or SINK (its shared
 * scratch page, mapped read-write: writes nobody reads). A new tensor is all
 * ZERO and costs two pages of physical memory. Map and unmap wait for the
 * work queued on `stream` before they replace a mapping (only then); other
 * streams are the caller's to order. memory_limit (0 = none) caps the
 * physical bytes: mapping past it, or past the device's memory, is
 * MEMLAKE_ERROR_OUT_OF_MEMORY and changes nothing. Pages outside the
 * tensor: MEMLAKE_ERROR_INVALID_ARGUMENT. Not thread-safe per tensor. */
typedef struct memlake_vt memlake_vt;
typedef enum memlake_vt_page {
  MEMLAKE_VT_ZERO = 0, MEMLAKE_VT_SINK = 1, MEMLAKE_VT_PRIVATE = 2,
  MEMLAKE_VT_HOLE = 3 /* unmapped after a driver failure; the next map or unmap maps it again */
} memlake_vt_page;
typedef struct memlake_vt_stats {
  uint32_t struct_size;
  uint32_t reserved0;
  uint64_t base;            /* the tensor's first byte (device virtual address) */
  uint64_t bytes;           /* reserved size (a multiple of page_size) */
  uint64_t page_size, pages;
  uint64_t private_pages, zero_pages, sink_pages, hole_pages;
  uint64_t physical_bytes;  /* private pages plus the two shared pages */
  uint64_t physical_peak;
  uint64_t memory_limit;
  uint64_t pages_mapped, pages_unmapped; /* private pages mapped / given back so far */
  uint64_t syncs;           /* waits for the stream before a remap */
} memlake_vt_stats;
/* Reserves `bytes` (rounded up to the page size) on `device`, through the
 * backend of allocator `a` (its primitives; not its cache or cap). */
MEMLAKE_API memlake_status memlake_vt_create(memlake_allocator* a, int device, size_t bytes, size_t memory_limit,
                                             memlake_vt** out);
/* Synchronises the device, then unmaps and frees everything. NULL: no-op. */
MEMLAKE_API void memlake_vt_destroy(memlake_vt* vt);
/* Pages [first, first+count) become PRIVATE; those already PRIVATE keep their bytes. */
MEMLAKE_API memlake_status memlake_vt_map(memlake_vt* vt, size_t first, size_t count, void* stream);
/* Pages [first, first+count) become `backing` (MEMLAKE_VT_ZERO or MEMLAKE_VT_SINK). */
MEMLAKE_API memlake_status memlake_vt_unmap(memlake_vt* vt, size_t first, size_t count, int backing, void* stream);
MEMLAKE_API memlake_status memlake_vt_set_memory_limit(memlake_vt* vt, size_t bytes);
/* The state of `count` pages from `first` into out[0..count) (memlake_vt_page values). */
MEMLAKE_API memlake_status memlake_vt_pages(memlake_vt* vt, size_t first, size_t count, uint8_t* out);
MEMLAKE_API memlake_status memlake_vt_get_stats(memlake_vt* vt, memlake_vt_stats* stats);
/* ---- The memory daemon (`memlake daemon`, docs/design/daemon.md): one copy
 * of read-only bytes (model weights) for every process that has the same
 * bytes. The daemon's socket is option daemon_socket (MEMLAKE_DAEMON_SOCKET).
 *
 * memlake_content_id: the id (64 hex digits + NUL) of nbytes of device
 * memory (or host memory): a BLAKE2b tree hash, computed by host threads over
 * the bytes copied through pinned staging (no GPU kernel).
 * memlake_share: publishes the nbytes at ptr (device memory of `device`)
 * under id_hex (NULL: their content id) and returns them mapped read-only
 * at *shared: the first process copies its bytes into the daemon's pages,
 * every later one maps those pages without copying. ptr stays the caller's
 * (free it; *shared holds the same bytes). Writing through *shared faults.
 * memlake_attach: maps bytes published under id_hex (MEMLAKE_ERROR_UNAVAILABLE
 * when nothing is) read-only; *nbytes receives their size.
 * memlake_unshare: unmaps a pointer memlake_share/attach returned and lets
 * the daemon free the pages once nobody holds them.
 * memlake_daemon_status: the daemon's JSON view (what its policy lets this
 * user see); socket NULL or "" = the default path; returns the length needed
 * (excluding the NUL), 0 on error (memlake_last_error says why). */
MEMLAKE_API memlake_status memlake_content_id(memlake_allocator* a, const void* ptr, size_t nbytes, int device,
                                              char id_hex[65]);
MEMLAKE_API memlake_status memlake_share(memlake_allocator* a, const void* ptr, size_t nbytes, int device,
                                         const char* id_hex, void** shared);
MEMLAKE_API memlake_status memlake_attach(memlake_allocator* a, const char* id_hex, int device, void** shared,
                                          size_t* nbytes);
MEMLAKE_API memlake_status memlake_unshare(memlake_allocator* a, void* shared);
MEMLAKE_API size_t memlake_daemon_status(const char* socket, char* buf, size_t len);

/* Planning (src/plan, docs/design/tiering.md): the planner that
 * memlake.torch.tier() runs and `memlake sim` simulates. `profile` is a
 * profile in its text form ("memlake-profile 1", tensor and kernel lines);
 * the machine is the H200's, then the profile's machine lines, then
 * `machine` (NULL or space-separated KEY=VALUE: gpu_bytes host_bytes pcie
 * pcie_out ssd ...); `policy` NULL is "latest-start" (also: ideal, lru, g10,
 * memlake). Writes the plan as text (one fact per line, see
 * src/plan/latest_start.h) into buf, NUL-terminated when len > 0, and the
 * length it needs (excluding the NUL) into *needed; a result longer than
 * len - 1 is cut: call again with a larger buf. MEMLAKE_ERROR_OUT_OF_MEMORY:
 * the budget cannot hold the iteration (the message names the tensor and
 * the sizes); MEMLAKE_ERROR_INVALID_ARGUMENT: a malformed profile (its
 * line), an unknown machine key or policy. */
MEMLAKE_API memlake_status memlake_plan(const char* profile, const char* machine, const char* policy, char* buf,
                                        size_t len, size_t* needed);

/* Message of the last failed call on this thread ("" if none). */
MEMLAKE_API const char* memlake_last_error(void);
MEMLAKE_API const char* memlake_version(void);

/* ---- The process-wide default allocator and PyTorch's pluggable-allocator
 * signatures.
 *
 * memlake_default() creates the default allocator on first use, from the
 * MEMLAKE_* environment, unless memlake_default_init() configured it
 * before. memlake_default_init() fails with INVALID_ARGUMENT once the
 * default exists.
 *
 * Two allocation entry points exist, because PyTorch treats failures
 * differently on its two paths:
 *  - memlake_torch_malloc: for change_current_allocator (memlake replaces
 *    PyTorch's allocator). PyTorch does not check this pointer, so on
 *    failure this function throws a C++ exception (std::runtime_error whose
 *    message begins "memlake: CUDA out of memory"), which PyTorch raises in
 *    Python as RuntimeError. It never returns NULL for size > 0. C callers
 *    must use memlake_alloc instead. CUDA graph capture: with option
 *    capture_check=hooks (the default) memlake learns of captures from
 *    memlake_capture_begin/end below (memlake.torch calls them) and asks
 *    the driver only on slow paths, refusing (throwing for) a capture it
 *    was not told of; with capture_check=query it asks on every allocation
 *    on a stream other than the legacy default stream and refuses every
 *    capture.
 *  - memlake_torch_pool_malloc: for torch.cuda.MemPool (PyTorch's caching
 *    allocator on top asks memlake for segments). Returns NULL on failure:
 *    PyTorch then frees its cache, retries, and raises
 *    torch.OutOfMemoryError. memlake_last_error() gives memlake's reason.
 *   torch.cuda.memory.CUDAPluggableAllocator(path_to_libmemlake.so,
 *       "memlake_torch_malloc", "memlake_torch_free") */
MEMLAKE_API memlake_allocator* memlake_default(void);
MEMLAKE_API memlake_status memlake_default_init(const memlake_options* opts);
MEMLAKE_API void* memlake_torch_malloc(ssize_t size, int device, void* stream);
MEMLAKE_API void* memlake_torch_pool_malloc(ssize_t size, int device, void* stream);
MEMLAKE_API void memlake_torch_free(void* ptr, size_t size, int device, void* stream);

#ifdef __cplusplus
}
#endif
#endif /* MEMLAKE_H */
