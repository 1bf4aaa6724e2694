#include "core/options.h"

#include <cctype>
#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <functional>

#include "core/error.h"

namespace memlake {
namespace {

struct Entry {
  OptionInfo info;
  std::function<void(Options&, const std::string&)> set;
  std::function<std::string(const Options&)> get;
};

bool parse_bool(const std::string& key, const std::string& v) {
  std::string s;
  for (char c : v) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "1" || s == "true" || s == "on" || s == "yes") return true;
  if (s == "0" || s == "false" || s == "off" || s == "no") return false;
  throw_error(Errc::invalid_argument, "option " + key + ": '" + v + "' is not a boolean (use 1/0, on/off, true/false)");
}

std::string size_str(std::size_t v) { return std::to_string(v); }

// A whole number in [lo, hi]; `what` names it in the error ("thread count").
int parse_int(const std::string& key, const std::string& v, long lo, long hi, const char* what) {
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE || n < lo || n > hi)
    throw_error(Errc::invalid_argument, "option " + key + ": '" + v + "' is not a " + what + " (" + std::to_string(lo) +
                                            ".." + std::to_string(hi) + ")");
  return static_cast<int>(n);
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {{"backend", "MEMLAKE_BACKEND", "cuda", "Primitives backend: 'cuda' (GPU, driver loaded at run time) or 'host' (Linux memory)."},
       [](Options& o, const std::string& v) {
         if (v != "cuda" && v != "host")
           throw_error(Errc::invalid_argument, "option backend: '" + v + "' is not 'cuda' or 'host'");
         o.backend = v;
       },
       [](const Options& o) { return o.backend; }},
      {{"granularity", "MEMLAKE_GRANULARITY", "0",
        "Page size: the unit of physical memory and of stitching. 0 = the backend's (2 MiB on H200). Larger pages mean fewer driver calls per stitch and more rounding waste."},
       [](Options& o, const std::string& v) { o.granularity = parse_size(v); },
       [](const Options& o) { return size_str(o.granularity); }},
      {{"handle_size", "MEMLAKE_HANDLE_SIZE", "auto",
        "Growth creates physical handles of this size (a multiple of the page size, e.g. 8M) for the bulk of a shortfall worth at least two of them, single pages otherwise; an allocation that takes a large handle takes it whole. Fewer, larger handles mean fewer driver calls (cuMemSetAccess costs per handle). 0 = one page per handle; auto = 8M where that is a multiple of a smaller page, else one page per handle."},
       [](Options& o, const std::string& v) { o.handle_size = v == "auto" ? Options::kAutoHandleSize : parse_size(v); },
       [](const Options& o) { return o.handle_size == Options::kAutoHandleSize ? std::string("auto") : size_str(o.handle_size); }},
      {{"large_handle_size", "MEMLAKE_LARGE_HANDLE_SIZE", "0",
        "A second, larger growth handle (a multiple of handle_size, e.g. 16M): a shortfall worth at least two of them gets them for its bulk, the rest as handle_size says. Big tensors then cost fewer handles to map (the driver's time goes with handles mapped): replays map 20-48 % fewer handles with 16M, at 0.3-0.8 % lower utilization on some traces. 0 = off (the default: under PyTorch on the H200 it cut LR's driver time 41 % but R's utilization fell from 0.996 to 0.924, allocations rounding up to whole 16 MiB handles)."},
       [](Options& o, const std::string& v) { o.large_handle_size = parse_size(v); },
       [](const Options& o) { return size_str(o.large_handle_size); }},
      {{"small_max", "MEMLAKE_SMALL_MAX", "1048576",
        "Requests of at most this many bytes are packed into shared one-page slabs (512-byte aligned); larger ones get whole pages."},
       [](Options& o, const std::string& v) { o.small_max = parse_size(v); },
       [](const Options& o) { return size_str(o.small_max); }},
      {{"memory_cap", "MEMLAKE_MEMORY_CAP", "0",
        "Most physical memory to reserve per device, in bytes (suffixes K, M, G, T). 0 = no cap. Past it, requests fail with out-of-memory."},
       [](Options& o, const std::string& v) { o.memory_cap = parse_size(v); },
       [](const Options& o) { return size_str(o.memory_cap); }},
      {{"stitch", "MEMLAKE_STITCH", "1",
        "Stitch free pages into new virtual ranges before asking the driver for memory. 0 = plain page-granular caching (for comparison)."},
       [](Options& o, const std::string& v) { o.stitch = parse_bool("stitch", v); },
       [](const Options& o) { return std::string(o.stitch ? "1" : "0"); }},
      {{"tail_share", "MEMLAKE_TAIL_SHARE", "1",
        "A large allocation may begin inside the last page of a live one made just before on the same stream, where the pages after it are free (or its view can grow): neighbours share a boundary page instead of each wasting its last page's tail, as blocks inside expandable_segments' segments do. Such a page goes back to the pool when both are freed; an eviction unmaps the pages an allocation holds alone, and the shared one once both neighbours are evicted. 0 = every large allocation has whole pages of its own."},
       [](Options& o, const std::string& v) { o.tail_share = parse_bool("tail_share", v); },
       [](const Options& o) { return std::string(o.tail_share ? "1" : "0"); }},
      {{"recent_spans", "MEMLAKE_RECENT_SPANS", "0",
        "Large spans freed a moment ago kept as they are (at most 4 of one size) for the next allocation of the same size on the same stream: a hit skips the page pool's index work. Given back before any stitch or new memory. 0 = off (the default until measured under PyTorch: on the LRV trace 32 cut the hot path's instructions by 60 % but mapped 37 % more)."},
       [](Options& o, const std::string& v) { o.recent_spans = parse_int("recent_spans", v, 0, 4096, "count"); },
       [](const Options& o) { return std::to_string(o.recent_spans); }},
      {{"max_mapped_ratio", "MEMLAKE_MAX_MAPPED_RATIO", "2",
        "Cached virtual views are kept until mapped memory exceeds this multiple of reserved memory; then idle views whose GPU work has completed are unmapped, least recently used first (past twice the bound the host waits for the others). Every view that maps a page is re-indexed when the page is taken or freed: 2 (was 4) maps a few more handles and saves host time on every allocation (PyTorch LRV, H200)."},
       [](Options& o, const std::string& v) {
         char* end = nullptr;
         double d = std::strtod(v.c_str(), &end);
         if (v.empty() || *end != '\0' || !(d >= 1.0) || !std::isfinite(d))
           throw_error(Errc::invalid_argument, "option max_mapped_ratio: '" + v + "' is not a number >= 1");
         o.max_mapped_ratio = d;
       },
       [](const Options& o) { return std::to_string(o.max_mapped_ratio); }},
      {{"host_memory_limit", "MEMLAKE_HOST_MEMORY_LIMIT", "0",
        "Host backend only: physical memory it may create, in bytes (emulates a device's size). 0 = no limit."},
       [](Options& o, const std::string& v) { o.host_memory_limit = parse_size(v); },
       [](const Options& o) { return size_str(o.host_memory_limit); }},
      {{"trace", "MEMLAKE_TRACE", "",
        "Write every allocation and free to this file as an RMM-style log (Thread,Time,Action,Pointer,Size,Stream; '.gz' compresses), for `memlake replay`. '%p' in the path becomes the pid, '%r' the rank (RANK, else LOCAL_RANK, else 0). Created 0600; a symbolic link there is refused. Flushed every second and on SIGTERM. Empty = off."},
       [](Options& o, const std::string& v) { o.trace = v; },
       [](const Options& o) { return o.trace; }},
      {{"copy_threads", "MEMLAKE_COPY_THREADS", "0",
        "Host threads of the copy engine (memlake_copy, memlake.copy) for staged pageable copies. 0 = one per core, at most 16."},
       [](Options& o, const std::string& v) { o.copy_threads = parse_int("copy_threads", v, 0, 256, "thread count"); },
       [](const Options& o) { return std::to_string(o.copy_threads); }},
      {{"copy_chunk", "MEMLAKE_COPY_CHUNK", "4194304",
        "Size of the copy engine's pinned staging buffers (2 per copy thread): the unit one thread copies before handing it to the DMA engine."},
       [](Options& o, const std::string& v) {
         const std::size_t n = parse_size(v);
         if (n < 4096 || n > (std::size_t{1} << 30))
           throw_error(Errc::invalid_argument, "option copy_chunk: '" + v + "' is not between 4K and 1G");
         o.copy_chunk = n;
       },
       [](const Options& o) { return size_str(o.copy_chunk); }},
      {{"host_tier", "MEMLAKE_HOST_TIER", "0",
        "Pinned host memory for the residency engine (memlake_sleep with offload, memlake_evict), allocated once per device at its first use or by memlake_host_tier_reserve / memlake.host_tier(), and reused: pinning at eviction time costs about 50x the copy. 0 = the pool grows on demand, by what each eviction lacks."},
       [](Options& o, const std::string& v) { o.host_tier = parse_size(v); },
       [](const Options& o) { return size_str(o.host_tier); }},
      {{"disk_tier", "MEMLAKE_DISK_TIER", "",
        "Residency: a directory on local disk for the tier below the host tier (memlake_demote, memlake.demote()): one unnamed file (O_TMPFILE, 0600, gone when the process ends), O_DIRECT where the file system allows it, every extent checksummed (CRC-32C) and checked before it is mapped again. Empty = no disk tier."},
       [](Options& o, const std::string& v) { o.disk_tier = v; },
       [](const Options& o) { return o.disk_tier; }},
      {{"disk_tier_limit", "MEMLAKE_DISK_TIER_LIMIT", "0",
        "Residency: most bytes the disk tier's file may hold; a demotion past it fails with out-of-memory and the bytes stay in the host tier. 0 = what the disk holds."},
       [](Options& o, const std::string& v) { o.disk_tier_limit = parse_size(v); },
       [](const Options& o) { return size_str(o.disk_tier_limit); }},
      {{"tier_handle_size", "MEMLAKE_TIER_HANDLE_SIZE", "268435456",
        "Residency: an allocation that comes back to the GPU by a wake is mapped in power-of-two handles of at most this size (rounded down to a power of two of pages), largest first: fewer handles make the next sleep cheaper (the driver's unmap and release cost per handle). A restore (memlake_restore, memlake.torch.tier()) takes new pages as growth does (handle_size): its pages are soon free for other allocations, which would take a large handle whole."},
       [](Options& o, const std::string& v) {
         const std::size_t n = parse_size(v);
         if (n == 0 || n > (std::size_t{2} << 30))
           throw_error(Errc::invalid_argument, "option tier_handle_size: '" + v + "' is not between 1 byte and 2G");
         o.tier_handle_size = n;
       },
       [](const Options& o) { return size_str(o.tier_handle_size); }},
      {{"copy_h2d_streams", "MEMLAKE_COPY_H2D_STREAMS", "4",
        "DMA streams for the copy engine's staged host-to-device copies: the host threads spread their pieces over them, so several copy engines read host memory at once (measured on the H200 at 256 MiB: 34.5 GB/s with 1, 39.7 with 4); device-to-host copies use one."},
       [](Options& o, const std::string& v) { o.copy_h2d_streams = parse_int("copy_h2d_streams", v, 1, 16, "stream count"); },
       [](const Options& o) { return std::to_string(o.copy_h2d_streams); }},
      {{"copy_register_after", "MEMLAKE_COPY_REGISTER_AFTER", "0",
        "Registration cache: a pageable host buffer of 8 MiB or more copied this many times (same address and size) is page-locked and then copied by DMA directly. 0 = never. The buffer must be released with memlake_copy_forget / memlake.copy_forget before it is freed."},
       [](Options& o, const std::string& v) { o.copy_register_after = parse_int("copy_register_after", v, 0, 1000000, "count"); },
       [](const Options& o) { return std::to_string(o.copy_register_after); }},
      {{"copy_register_limit", "MEMLAKE_COPY_REGISTER_LIMIT", "8589934592",
        "Registration cache: host bytes kept page-locked at most; the least recently copied buffers are unregistered first."},
       [](Options& o, const std::string& v) { o.copy_register_limit = parse_size(v); },
       [](const Options& o) { return size_str(o.copy_register_limit); }},
      {{"copy_topology", "MEMLAKE_COPY_TOPOLOGY", "",
        "Copies over several paths (GLake MultiPath): a copy to or from GPU g is split over g's own PCIe link and peer GPUs' links, forwarded over NVLink. Empty = the direct path only. 'measure' = measure every GPU's links at the first copy (about a second); otherwise a described topology, lines separated by ';' (e.g. 'gpus 2; pcie 24; nvlink all 200'; grammar in src/io/planner.h), or @FILE holding one."},
       [](Options& o, const std::string& v) { o.copy_topology = v; },
       [](const Options& o) { return o.copy_topology; }},
      {{"daemon_socket", "MEMLAKE_DAEMON_SOCKET", "",
        "The memory daemon's socket (`memlake daemon`), for memlake_share / memlake_attach (memlake.torch.share_weights) and daemon_pool. Empty = $XDG_RUNTIME_DIR/memlake/daemon.sock, else /tmp/memlake-<uid>/daemon.sock. The socket's directory must be writable by its owner only and the daemon must run as this user, root or that owner."},
       [](Options& o, const std::string& v) {
         if (v.size() > 100) throw_error(Errc::invalid_argument, "option daemon_socket: longer than a socket path may be");
         o.daemon_socket = v;
       },
       [](const Options& o) { return o.daemon_socket; }},
      {{"daemon_pool", "MEMLAKE_DAEMON_POOL", "0",
        "Take physical pages from the memory daemon's shared pool (quotas per process, pages back to the pool when the process ends, even by SIGKILL; the daemon may ask this process to trim its cache) instead of from the driver. 0 = off."},
       [](Options& o, const std::string& v) { o.daemon_pool = parse_bool("daemon_pool", v); },
       [](const Options& o) { return std::string(o.daemon_pool ? "1" : "0"); }},
      {{"daemon_pool_min", "MEMLAKE_DAEMON_POOL_MIN", "0",
        "With daemon_pool: the guaranteed bytes this process asks for (at most what the daemon's policy grants). 0 = the policy's."},
       [](Options& o, const std::string& v) { o.daemon_pool_min = parse_size(v); },
       [](const Options& o) { return size_str(o.daemon_pool_min); }},
      {{"daemon_pool_max", "MEMLAKE_DAEMON_POOL_MAX", "0",
        "With daemon_pool: the most bytes this process may hold (at most what the daemon's policy grants). 0 = the policy's."},
       [](Options& o, const std::string& v) { o.daemon_pool_max = parse_size(v); },
       [](const Options& o) { return size_str(o.daemon_pool_max); }},
      {{"stats_server", "MEMLAKE_STATS_SERVER", "0",
        "Serve this process's statistics on a Unix socket ($XDG_RUNTIME_DIR/memlake or /tmp/memlake-UID, same user only) for `memlake stat` and `memlake top`."},
       [](Options& o, const std::string& v) { o.stats_server = parse_bool("stats_server", v); },
       [](const Options& o) { return std::string(o.stats_server ? "1" : "0"); }},
      {{"shim", "MEMLAKE_SHIM", "1",
        "With libmemlake_preload.so in LD_PRELOAD: route cudaMalloc/cudaFree/cudaMallocAsync/cudaFreeAsync and cuMemAlloc/cuMemFree(Async) to memlake. 0 = pass every call to the driver untouched."},
       [](Options& o, const std::string& v) { o.shim = parse_bool("shim", v); },
       [](const Options& o) { return std::string(o.shim ? "1" : "0"); }},
      {{"capture_check", "MEMLAKE_CAPTURE_CHECK", "hooks",
        "How memlake.torch.enable() learns that a stream is being captured into a CUDA graph. 'hooks': from memlake_capture_begin/end and memlake_graph_pool_release (memlake.torch wraps torch.cuda.CUDAGraph to call them): allocations of a capture come from the graph's pool, kept apart until the graph is released; no driver query per allocation (one on the slow path refuses a capture nobody announced). 'query': ask the driver on every allocation on a stream other than the legacy default stream and refuse a capture (the pre-hooks behaviour). 'off': neither (only when no graph is ever captured outside memlake.torch.pool())."},
       [](Options& o, const std::string& v) {
         if (v == "hooks") o.capture_check = Options::CaptureCheck::hooks;
         else if (v == "query" || v == "1") o.capture_check = Options::CaptureCheck::query;
         else if (v == "off" || v == "0") o.capture_check = Options::CaptureCheck::off;
         else throw_error(Errc::invalid_argument, "option capture_check: '" + v + "' is not 'hooks', 'query' or 'off'");
       },
       [](const Options& o) {
         return std::string(o.capture_check == Options::CaptureCheck::hooks   ? "hooks"
                            : o.capture_check == Options::CaptureCheck::query ? "query"
                                                                              : "off");
       }},
      {{"shim_sync_free", "MEMLAKE_SHIM_SYNC_FREE", "1",
        "Shim: cudaFree/cuMemFree wait for the device's work first, as the driver's do, so the memory can be reused at once by any stream. 0 = no wait: only safe when freed memory is no longer used by queued work."},
       [](Options& o, const std::string& v) { o.shim_sync_free = parse_bool("shim_sync_free", v); },
       [](const Options& o) { return std::string(o.shim_sync_free ? "1" : "0"); }},
      {{"shim_copy", "MEMLAKE_SHIM_COPY", "0",
        "Shim: cudaMemcpy/cudaMemcpyAsync (and cuMemcpyHtoD/DtoH[Async], cuMemcpy[Async]) between pageable host memory and the device, 8 MiB or more, go through memlake's copy engine (staged, several threads). 0 = the driver copies them."},
       [](Options& o, const std::string& v) { o.shim_copy = parse_bool("shim_copy", v); },
       [](const Options& o) { return std::string(o.shim_copy ? "1" : "0"); }},
      {{"shim_log", "MEMLAKE_SHIM_LOG", "0",
        "Shim: print to stderr every driver entry point the program looks up through cuGetProcAddress and whether memlake replaced it (and the names it replaces through dlsym), and the first copy decisions. For diagnosis."},
       [](Options& o, const std::string& v) { o.shim_log = parse_bool("shim_log", v); },
       [](const Options& o) { return std::string(o.shim_log ? "1" : "0"); }},
      {{"guard", "MEMLAKE_GUARD", "0",
        "Debug mode: every allocation gets its own view, ending (512-byte aligned) right before an unmapped guard page, so an overrun faults. Host backend: the fault names the allocation."},
       [](Options& o, const std::string& v) { o.guard = parse_bool("guard", v); },
       [](const Options& o) { return std::string(o.guard ? "1" : "0"); }},
      {{"quarantine", "MEMLAKE_QUARANTINE", "0",
        "Debug mode: a freed allocation's range stays unmapped and reserved for the next N frees, so a use after free faults instead of corrupting another allocation."},
       [](Options& o, const std::string& v) {
         char* end = nullptr;
         errno = 0;
         unsigned long long n = std::strtoull(v.c_str(), &end, 10);
         if (v.empty() || *end != '\0' || !std::isdigit(static_cast<unsigned char>(v[0])) || errno == ERANGE)
           throw_error(Errc::invalid_argument, "option quarantine: '" + v + "' is not a count of frees");
         o.quarantine = static_cast<std::size_t>(n);
       },
       [](const Options& o) { return std::to_string(o.quarantine); }},
  };
  return table;
}

const Entry& find(const std::string& key) {
  for (const Entry& e : entries())
    if (key == e.info.key) return e;
  std::string known;
  for (const Entry& e : entries()) known += std::string(known.empty() ? "" : ", ") + e.info.key;
  throw_error(Errc::invalid_argument, "unknown option '" + key + "' (known: " + known + ")");
}

}  // namespace

std::size_t parse_size(const std::string& s) {
  // A number: digits with at most one '.', at least one digit; then an optional unit.
  std::size_t i = 0, digits = 0, dots = 0;
  for (; i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'); ++i)
    (s[i] == '.' ? dots : digits) += 1;
  if (digits == 0 || dots > 1) throw_error(Errc::invalid_argument, "'" + s + "' is not a size (examples: 4096, 2M, 1.5G)");
  const double v = std::strtod(s.substr(0, i).c_str(), nullptr);
  std::string unit;
  for (; i < s.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(s[i]))) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
  double mult = 1;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") mult = 1024.0 * 1024 * 1024 * 1024;
  else throw_error(Errc::invalid_argument, "'" + s + "': unknown size unit '" + unit + "' (use K, M, G or T)");
  // Rounded to whole bytes, at most 2^63 (8 EiB): the old bound, 1.8e19, let
  // 9999999T through to an overflowing llround, and a size near 2^64 overflows
  // the sums the allocator makes with it (cap + request).
  const double bytes = std::floor(v * mult + 0.5);
  constexpr double kLimit = 9223372036854775808.0;  // 2^63
  if (!(bytes <= kLimit)) throw_error(Errc::invalid_argument, "'" + s + "' is too large (at most 8 EiB)");
  return static_cast<std::size_t>(bytes);
}

const std::vector<OptionInfo>& option_table() {
  static const std::vector<OptionInfo> infos = [] {
    std::vector<OptionInfo> v;
    for (const Entry& e : entries()) v.push_back(e.info);
    return v;
  }();
  return infos;
}

void Options::set(const std::string& key, const std::string& value) {
  Options copy = *this;  // leave *this untouched on error
  const Entry& e = find(key);
  try {
    e.set(copy, value);
  } catch (const Error& err) {
    const std::string what = err.what(), prefix = "option " + key + ":";
    if (what.rfind(prefix, 0) == 0) throw;
    throw_error(err.code(), prefix + " " + what);  // every message names its key
  }
  *this = copy;
}

std::string Options::get(const std::string& key) const { return find(key).get(*this); }

Options Options::from_env() {
  Options o;
  for (const Entry& e : entries()) {
    const char* v = std::getenv(e.info.env);
    if (!v || !*v) continue;
    try {
      e.set(o, v);
    } catch (const Error& err) {
      throw_error(Errc::invalid_argument, std::string(e.info.env) + ": " + err.what());
    }
  }
  return o;
}

}  // namespace memlake
