// The C ABI: a thin shell that maps exceptions to status codes.
#include "memlake/memlake.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/device_allocator.h"
#include "core/error.h"
#include "core/fault_report.h"
#include "core/labels.h"
#include "io/copy_engine.h"
#include "io/multipath.h"
#include "obs/stats_server.h"
#include "plan/latest_start.h"
#include "plan/profile_text.h"
#include "vt/virtual_tensor.h"
#include "daemon/client.h"
#include "daemon/daemon.h"

using memlake::Errc;
using memlake::Error;
using memlake::Options;
using memlake::core::DeviceAllocator;

struct memlake_options {
  Options o;
};

struct memlake_allocator {
  Options opts;
  std::shared_ptr<memlake::trace::Tracer> tracer;  // MEMLAKE_TRACE
  std::mutex mu;  // guards the device map, not the devices
  std::map<int, std::unique_ptr<DeviceAllocator>> devices;
  std::map<int, std::unique_ptr<memlake::io::CopyEngine>> engines;  // destroyed before devices

  // Multi-path copies (MEMLAKE_COPY_TOPOLOGY): a described topology is
  // parsed at creation; the executor is made at the first copy. Destroyed
  // before the devices whose backends it uses.
  std::optional<memlake::io::Topology> topology;
  std::mutex paths_mu;
  bool paths_made = false;
  std::unique_ptr<memlake::io::MultiPath> paths;  // null: the direct path only

  memlake::io::CopyOptions copy_options() const {
    memlake::io::CopyOptions co;
    co.threads = opts.copy_threads;
    co.chunk = opts.copy_chunk;
    co.h2d_streams = opts.copy_h2d_streams;
    co.registration.after = opts.copy_register_after;
    co.registration.limit = opts.copy_register_limit;
    co.registration.min_bytes = co.direct_below;
    return co;
  }
  // The direct-path engine of device d (memlake_copy asks multipath_for first).
  memlake::io::CopyEngine& engine(int d) {
    DeviceAllocator& dev = device(d);
    std::lock_guard<std::mutex> g(mu);
    auto it = engines.find(d);
    if (it != engines.end()) return *it->second;
    return *engines.emplace(d, std::make_unique<memlake::io::CopyEngine>(dev.backend(), copy_options())).first->second;
  }
  // The multi-path executor over every GPU of the topology, or null when
  // none is configured or the machine has one GPU. A failure to make it
  // (a GPU of the topology missing, say) is the copy's error, every time.
  memlake::io::MultiPath* multipath() {
    if (opts.copy_topology.empty()) return nullptr;
    std::lock_guard<std::mutex> g(paths_mu);
    if (paths_made) return paths.get();
    const bool measure = !topology;
    const int n = measure ? (opts.backend == "cuda" ? memlake::prim::cuda_device_count() : 1) : topology->gpus;
    if (n >= 2) {
      std::vector<memlake::prim::Backend*> gpus;
      for (int i = 0; i < n; ++i) gpus.push_back(&device(i).backend());
      memlake::io::MultiPathOptions mo;
      mo.copy = copy_options();
      paths = std::make_unique<memlake::io::MultiPath>(
          gpus, measure ? memlake::io::measure_topology(gpus, std::size_t{64} << 20) : *topology, mo);
    }
    paths_made = true;
    return paths.get();
  }
  // The executor when device d is one of its GPUs, else null (the direct path).
  memlake::io::MultiPath* multipath_for(int d) {
    memlake::io::MultiPath* mp = multipath();
    return mp && d >= 0 && d < mp->topology().gpus ? mp : nullptr;
  }

  DeviceAllocator& device(int d) {
    if (DeviceAllocator* known = published(d)) return *known;  // every call but a device's first: no lock
    std::lock_guard<std::mutex> g(mu);
    auto it = devices.find(d);
    if (it != devices.end()) return *it->second;
    if (d < 0) memlake::throw_error(Errc::invalid_argument, "device " + std::to_string(d) + " is not a device ordinal");
    auto dev = opts.daemon_pool ? pooled_device(d) : std::make_unique<DeviceAllocator>(d, opts);
    dev->set_tracer(tracer);
    DeviceAllocator& made = *devices.emplace(d, std::move(dev)).first->second;
    if (d < kPublished) by_ordinal[d].store(&made, std::memory_order_release);
    return made;
  }
  DeviceAllocator* existing(int d) {
    if (DeviceAllocator* known = published(d)) return known;
    std::lock_guard<std::mutex> g(mu);
    auto it = devices.find(d);
    return it == devices.end() ? nullptr : it->second.get();
  }

  // ---- memlaked (issue 22). Declared after the devices: destroyed first.
  std::mutex daemon_mu;
  std::shared_ptr<memlake::daemon::DaemonClient> daemon;
  struct Shared {
    int device;
    memlake::daemon::SharedMapping m;
  };
  std::map<std::uintptr_t, Shared> shared;  // guarded by daemon_mu
  memlake::daemon::DaemonClient& daemon_client() {
    std::lock_guard<std::mutex> g(daemon_mu);
    return daemon_client_locked();
  }
  memlake::daemon::DaemonClient& daemon_client_locked() {
    if (!daemon) {
      memlake::daemon::DaemonClient::Config c;
      c.socket = opts.daemon_socket;
      c.name = "pid " + std::to_string(::getpid());
      c.min = opts.daemon_pool_min;
      c.max = opts.daemon_pool_max;
      daemon = std::make_shared<memlake::daemon::DaemonClient>(c);
    }
    return *daemon;
  }
  // A device whose physical pages come from the daemon's pool; the daemon's
  // trim requests empty this allocator's caches.
  std::unique_ptr<DeviceAllocator> pooled_device(int d) {
    memlake::prim::BackendConfig bc;
    bc.kind = opts.backend;
    bc.device = d;
    bc.granularity = opts.granularity;
    bc.host_memory_limit = opts.host_memory_limit;
    std::shared_ptr<memlake::daemon::DaemonClient> client;
    bool first = false;
    {
      std::lock_guard<std::mutex> g(daemon_mu);
      first = !daemon;
      daemon_client_locked();
      client = daemon;
    }
    auto backend = std::make_unique<memlake::daemon::DaemonPoolBackend>(memlake::prim::make_backend(bc), client);
    if (first) {
      client->listen([this](std::uint64_t want) {  // the shortfall only, not the whole cache
        for (int i = 0; i < kPublished && want > 0; ++i)
          if (DeviceAllocator* dev = published(i)) try {
              want -= std::min<std::uint64_t>(want, dev->empty_cache(want));
            } catch (const std::exception&) {  // that device keeps what it could not give; the others still try
            }
      });
    }
    return std::make_unique<DeviceAllocator>(std::move(backend), opts);
  }

 private:
  // Devices, once made, by ordinal: the per-tensor calls find theirs without
  // taking `mu`. A device lives as long as the allocator.
  static constexpr int kPublished = 64;
  std::array<std::atomic<DeviceAllocator*>, kPublished> by_ordinal{};
  DeviceAllocator* published(int d) const {
    return d >= 0 && d < kPublished ? by_ordinal[d].load(std::memory_order_acquire) : nullptr;
  }

 public:
};

namespace {

thread_local std::string t_last_error;

// One stats server per process serves every allocator that asked for it.
std::mutex g_served_mu;
std::vector<memlake_allocator*> g_served;
std::unique_ptr<memlake::obs::StatsServer> g_server;

std::vector<memlake::core::Stats> served_stats();
void serve_stats(memlake_allocator* a);
void unserve_stats(memlake_allocator* a);

template <class F>
memlake_status guarded(F&& f) {
  try {
    f();
    return MEMLAKE_OK;
  } catch (const Error& e) {
    t_last_error = e.what();
    return static_cast<memlake_status>(e.code());
  } catch (const std::bad_alloc&) {
    t_last_error = "host memory exhausted (std::bad_alloc)";
    return MEMLAKE_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    t_last_error = e.what();
    return MEMLAKE_ERROR_INTERNAL;
  }
}

memlake_status null_arg(const char* what) {
  t_last_error = std::string(what) + " is NULL";
  return MEMLAKE_ERROR_INVALID_ARGUMENT;
}

memlake_status unknown_flags(const char* fn, int flags) {
  t_last_error = std::string(fn) + ": unknown flags " + std::to_string(flags);
  return MEMLAKE_ERROR_INVALID_ARGUMENT;
}

memlake_status size_unset(const char* type) {
  t_last_error = std::string(type) + ".struct_size is not set";
  return MEMLAKE_ERROR_INVALID_ARGUMENT;
}

void fill(memlake_stat* out, const memlake::core::Stat& s) {
  out->current = s.current;
  out->peak = s.peak;
}

void to_c(const memlake::core::Stats& s, memlake_stats* out) {
  memlake_stats c{};
  c.struct_size = out->struct_size;
  c.device = s.device;
  fill(&c.requested_bytes, s.requested);
  fill(&c.allocated_bytes, s.allocated);
  fill(&c.reserved_bytes, s.reserved);
  fill(&c.mapped_bytes, s.mapped);
  fill(&c.active_blocks, s.active);
  c.num_allocs = s.num_allocs;
  c.num_frees = s.num_frees;
  c.num_ooms = s.num_ooms;
  c.small_allocs = s.small_allocs;
  c.cache_hits = s.cache_hits;
  c.stitch_reuses = s.stitch_reuses;
  c.stitches = s.stitches;
  c.grows = s.grows;
  c.repairs = s.repairs;
  c.slow_paths = s.slow_paths;
  c.slow_path_ns = s.slow_path_ns;
  c.host_ns = s.host_ns;
  c.pages_created = s.pages_created;
  c.views = s.views;
  c.stitched_views = s.stitched_views;
  c.small_slabs = s.small_slabs;
  c.largest_free_bytes = s.largest_free;
  c.page_size = s.page_size;
  c.memory_cap = s.memory_cap;
  for (int i = 0; i < memlake::prim::kNumOps && i < 16; ++i) {
    c.primitive_calls[i] = s.calls.calls[i];
    c.primitive_ns[i] = s.calls.ns[i];
  }
  std::memcpy(out, &c, std::min<std::size_t>(out->struct_size, sizeof c));
}

using Lookup = memlake::core::DeviceAllocator::Lookup;

// An operation on a live allocation of `a` that says whether ptr was one
// (op returns false): MEMLAKE_ERROR_INVALID_ARGUMENT then, with no message
// logged, since the callers (the shim) pass foreign pointers on.
template <class Op>
memlake_status if_owned(memlake_allocator* a, const void* ptr, int device, size_t* size, void** stream, Op&& op) {
  if (!a || !ptr) return MEMLAKE_ERROR_INVALID_ARGUMENT;
  bool found = false;
  memlake_status s = guarded([&] {
    DeviceAllocator* d = a->existing(device);
    Lookup l{};
    if (!d || !op(*d, &l)) return;
    found = true;
    if (size) *size = l.size;
    if (stream) *stream = l.stream;
  });
  return s != MEMLAKE_OK ? s : found ? MEMLAKE_OK : MEMLAKE_ERROR_INVALID_ARGUMENT;
}

}  // namespace

extern "C" {

memlake_status memlake_options_create(memlake_options** out, int from_env) {
  if (!out) return null_arg("out");
  return guarded([&] { *out = new memlake_options{from_env ? Options::from_env() : Options::defaults()}; });
}

memlake_status memlake_options_set(memlake_options* o, const char* key, const char* value) {
  if (!o || !key || !value) return null_arg("options, key or value");
  return guarded([&] { o->o.set(key, value); });
}

size_t memlake_options_get(const memlake_options* o, const char* key, char* buf, size_t len) {
  if (!o || !key) return 0;
  std::string v;
  if (guarded([&] { v = o->o.get(key); }) != MEMLAKE_OK) return 0;
  if (buf && len) {
    std::size_t n = std::min(len - 1, v.size());
    std::memcpy(buf, v.data(), n);
    buf[n] = '\0';
  }
  return v.size();
}

void memlake_options_destroy(memlake_options* o) { delete o; }

const char* memlake_option_key(int i) {
  const auto& t = memlake::option_table();
  return i >= 0 && static_cast<std::size_t>(i) < t.size() ? t[i].key : nullptr;
}

namespace {
// MEMLAKE_COPY_TOPOLOGY's described topology: the text itself, or @FILE.
memlake::io::Topology read_topology(const std::string& v) {
  std::string text = v;
  if (!v.empty() && v[0] == '@') {
    std::ifstream f(v.substr(1));
    if (!f) memlake::throw_error(Errc::invalid_argument, "option copy_topology: cannot read " + v.substr(1));
    text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  try {
    return memlake::io::Topology::parse(text);
  } catch (const Error& e) {
    memlake::throw_error(Errc::invalid_argument, std::string("option copy_topology: ") + e.what());
  }
}
}  // namespace

memlake_status memlake_create(const memlake_options* opts, memlake_allocator** out) {
  if (!out) return null_arg("out");
  return guarded([&] {
    auto a = std::make_unique<memlake_allocator>();
    a->opts = opts ? opts->o : Options::from_env();
    // Validate the backend now so that misconfiguration surfaces at creation.
    if (a->opts.backend == "cuda") {
      std::string why;
      if (!memlake::prim::cuda_available(&why)) memlake::throw_error(Errc::unavailable, "cuda backend unavailable: " + why);
    }
    if (!a->opts.copy_topology.empty() && a->opts.copy_topology != "measure") a->topology = read_topology(a->opts.copy_topology);
    if (!a->opts.trace.empty()) a->tracer = std::make_shared<memlake::trace::Tracer>(a->opts.trace);
    if (a->opts.stats_server) serve_stats(a.get());
    *out = a.release();
  });
}

void memlake_destroy(memlake_allocator* a) {
  if (!a) return;
  if (a->opts.stats_server) unserve_stats(a);
  if (a->daemon) {
    a->daemon->stop_listening();  // its thread calls into the devices
    std::lock_guard<std::mutex> g(a->daemon_mu);
    for (auto& [va, s] : a->shared) {
      try {
        memlake::daemon::unshare(*a->daemon, a->device(s.device).backend(), s.m);
      } catch (...) {
      }
    }
    a->shared.clear();
  }
  delete a;
}

memlake_status memlake_alloc(memlake_allocator* a, size_t size, int device, void* stream, void** ptr) {
  if (!a || !ptr) return null_arg("allocator or ptr");
  *ptr = nullptr;
  return guarded([&] { *ptr = a->device(device).alloc(size, stream); });
}

memlake_status memlake_free(memlake_allocator* a, void* ptr, int device, void* stream) {
  (void)stream;  // the allocation remembers its stream
  if (!a) return null_arg("allocator");
  if (!ptr) return MEMLAKE_OK;
  return guarded([&] {
    DeviceAllocator* d = a->existing(device);
    if (!d)
      memlake::throw_error(Errc::invalid_argument, "free(" + memlake::hex_ptr(reinterpret_cast<std::uintptr_t>(ptr)) +
                                                       "): not a live allocation: device " + std::to_string(device) +
                                                       " has no allocations (double free or foreign pointer)");
    d->free(ptr);
  });
}

memlake_status memlake_lookup(memlake_allocator* a, const void* ptr, int device, size_t* size, void** stream) {
  return if_owned(a, ptr, device, size, stream, [&](DeviceAllocator& d, Lookup* l) { return d.lookup(ptr, l); });
}

memlake_status memlake_free_if_owned(memlake_allocator* a, void* ptr, int device, void** stream) {
  return if_owned(a, ptr, device, nullptr, stream, [&](DeviceAllocator& d, Lookup* l) { return d.free_if_owned(ptr, l); });
}

memlake_status memlake_empty_cache(memlake_allocator* a, int device) {
  if (!a) return null_arg("allocator");
  return guarded([&] {
    if (DeviceAllocator* d = a->existing(device)) d->empty_cache();
  });
}

memlake_status memlake_set_memory_cap(memlake_allocator* a, size_t bytes) {
  if (!a) return null_arg("allocator");
  return guarded([&] {
    std::lock_guard<std::mutex> g(a->mu);
    a->opts.memory_cap = bytes;
    for (auto& [id, d] : a->devices) d->set_memory_cap(bytes);
  });
}

memlake_status memlake_reset_peak_stats(memlake_allocator* a, int device) {
  if (!a) return null_arg("allocator");
  return guarded([&] {
    if (DeviceAllocator* d = a->existing(device)) d->reset_peaks();
  });
}

const char* memlake_prim_op_name(int op) {
  if (op < 0 || op >= memlake::prim::kNumOps) return "";
  return memlake::prim::op_name(static_cast<memlake::prim::Op>(op));
}

memlake_status memlake_get_stats(memlake_allocator* a, int device, memlake_stats* stats) {
  if (!a || !stats) return null_arg("allocator or stats");
  if (stats->struct_size < offsetof(memlake_stats, requested_bytes)) return size_unset("memlake_stats");
  return guarded([&] {
    memlake::core::Stats s;
    s.device = device;
    if (DeviceAllocator* d = a->existing(device)) s = d->stats();
    to_c(s, stats);
  });
}

memlake_status memlake_watermark(memlake_allocator* a, int device, int reset, memlake_stat* out) {
  if (!a || !out) return null_arg("allocator or out");
  return guarded([&] {
    memlake::core::Stat w;
    if (DeviceAllocator* d = a->existing(device)) w = d->watermark(reset != 0);
    fill(out, w);
  });
}

size_t memlake_stats_json(memlake_allocator* a, char* buf, size_t len) {
  if (!a) return 0;
  std::string j = "{\"devices\":[";
  guarded([&] {
    std::lock_guard<std::mutex> g(a->mu);
    bool first = true;
    for (auto& [id, d] : a->devices) {
      if (!first) j += ',';
      j += memlake::core::stats_json(d->stats());
      first = false;
    }
  });
  j += "]";
  if (a->tracer)  // MEMLAKE_TRACE's health: a failed write is not silent
    j += std::string(",\"trace\":{\"write_failed\":") + (a->tracer->write_failed() ? "true" : "false") +
         ",\"events_lost\":" + std::to_string(a->tracer->events_lost()) + "}";
  j += "}";
  if (buf && len) {
    std::size_t n = std::min(len - 1, j.size());
    std::memcpy(buf, j.data(), n);
    buf[n] = '\0';
  }
  return j.size();
}

namespace {
memlake::daemon::Digest parse_id(const char* hex) {
  memlake::daemon::Digest d{};
  if (!memlake::daemon::from_hex(hex, &d))
    memlake::throw_error(Errc::invalid_argument, "a content id is 64 hexadecimal digits");
  return d;
}
}  // namespace

memlake_status memlake_content_id(memlake_allocator* a, const void* ptr, size_t nbytes, int device, char id_hex[65]) {
  if (!a || !ptr || !id_hex) return null_arg("allocator, ptr or id_hex");
  return guarded([&] {
    auto& b = a->device(device).backend();
    const auto d = b.pointer_kind(ptr) == memlake::prim::Backend::PointerKind::device
                       ? memlake::daemon::content_id_device(b, reinterpret_cast<std::uintptr_t>(ptr), nbytes)
                       : memlake::daemon::content_id(ptr, nbytes);  // host bytes (a file being loaded)
    std::memcpy(id_hex, memlake::daemon::to_hex(d).c_str(), 65);
  });
}

memlake_status memlake_share(memlake_allocator* a, const void* ptr, size_t nbytes, int device, const char* id_hex,
                             void** shared) {
  if (!a || !ptr || !shared) return null_arg("allocator, ptr or shared");
  *shared = nullptr;
  return guarded([&] {
    std::optional<memlake::daemon::Digest> id;
    if (id_hex) id = parse_id(id_hex);
    auto& backend = a->device(device).backend();
    auto& client = a->daemon_client();
    auto m = memlake::daemon::share(client, backend, reinterpret_cast<std::uintptr_t>(ptr), nbytes, id ? &*id : nullptr);
    std::lock_guard<std::mutex> g(a->daemon_mu);
    a->shared[m.va] = {device, m};
    *shared = reinterpret_cast<void*>(m.va);
  });
}

memlake_status memlake_attach(memlake_allocator* a, const char* id_hex, int device, void** shared, size_t* nbytes) {
  if (!a || !id_hex || !shared) return null_arg("allocator, id_hex or shared");
  *shared = nullptr;
  return guarded([&] {
    const auto id = parse_id(id_hex);
    auto m = memlake::daemon::attach(a->daemon_client(), a->device(device).backend(), id);
    std::lock_guard<std::mutex> g(a->daemon_mu);
    a->shared[m.va] = {device, m};
    *shared = reinterpret_cast<void*>(m.va);
    if (nbytes) *nbytes = m.bytes;
  });
}

memlake_status memlake_unshare(memlake_allocator* a, void* shared) {
  if (!a || !shared) return null_arg("allocator or shared");
  return guarded([&] {
    std::lock_guard<std::mutex> g(a->daemon_mu);
    auto it = a->shared.find(reinterpret_cast<std::uintptr_t>(shared));
    if (it == a->shared.end())
      memlake::throw_error(Errc::invalid_argument, "memlake_unshare: " + memlake::hex_ptr(reinterpret_cast<std::uintptr_t>(shared)) +
                                                       " is not a pointer memlake_share or memlake_attach returned");
    memlake_allocator::Shared s = it->second;
    a->shared.erase(it);
    memlake::daemon::unshare(*a->daemon, a->device(s.device).backend(), s.m);
  });
}

size_t memlake_daemon_status(const char* socket, char* buf, size_t len) {
  std::string j;
  if (guarded([&] { j = memlake::daemon::daemon_status(socket ? socket : ""); }) != MEMLAKE_OK) return 0;
  if (buf && len) {
    std::size_t n = std::min(len - 1, j.size());
    std::memcpy(buf, j.data(), n);
    buf[n] = '\0';
  }
  return j.size();
}

memlake_status memlake_plan(const char* profile, const char* machine, const char* policy, char* buf, size_t len,
                            size_t* needed) {
  if (!profile || !needed) return null_arg("profile or needed");
  return guarded([&] {
    namespace plan = memlake::plan;
    std::istringstream in(profile);
    plan::ProfileFile f = plan::read_profile_text(in, "profile");
    plan::Machine m = plan::Machine::h200();
    for (const auto& kv : f.machine) plan::machine_set(m, kv);
    std::istringstream ms(machine ? machine : "");
    for (std::string kv; ms >> kv;) plan::machine_set(m, kv);
    const std::string report = plan::plan_report(f.profile, m, policy ? policy : "latest-start");
    *needed = report.size();
    if (buf && len) {
      const std::size_t n = std::min(len - 1, report.size());
      std::memcpy(buf, report.data(), n);
      buf[n] = '\0';
    }
  });
}

memlake_status memlake_copy(memlake_allocator* a, void* dst, const void* src, size_t nbytes, int device, void* stream) {
  if (!a || !dst || !src) return null_arg("allocator, dst or src");
  return guarded([&] {
    using memlake::Errc;
    if (device < 0) memlake::throw_error(Errc::invalid_argument, "memlake_copy: device " + std::to_string(device) + " < 0");
    if (nbytes == 0) return;
    const auto d0 = reinterpret_cast<std::uintptr_t>(dst), s0 = reinterpret_cast<std::uintptr_t>(src);
    if (nbytes > UINTPTR_MAX - d0 || nbytes > UINTPTR_MAX - s0)
      memlake::throw_error(Errc::invalid_argument, "memlake_copy: " + std::to_string(nbytes) + " bytes from " +
                                                       memlake::hex_ptr(s0) + " to " + memlake::hex_ptr(d0) +
                                                       " wrap around the address space");
    memlake::prim::Backend& be = a->device(device).backend();
    using K = memlake::prim::Backend::PointerKind;
    const K dk = be.pointer_kind(dst), sk = be.pointer_kind(src);
    // The device range must end in device memory too (a length past the allocation is misuse, not a fault).
    const void* dlast = reinterpret_cast<const void*>((dk == K::device ? d0 : s0) + nbytes - 1);
    if ((dk == K::device) != (sk == K::device) && be.pointer_kind(dlast) != K::device)
      memlake::throw_error(Errc::invalid_argument, "memlake_copy: " + std::to_string(nbytes) + " bytes from device address " +
                                                       memlake::hex_ptr(dk == K::device ? d0 : s0) +
                                                       " run past device memory");
    if (d0 < s0 + nbytes && s0 < d0 + nbytes)
      memlake::throw_error(Errc::invalid_argument, "memlake_copy: the " + std::to_string(nbytes) + " bytes at " +
                                                       memlake::hex_ptr(s0) + " and " + memlake::hex_ptr(d0) + " overlap");
    memlake::io::MultiPath* const mp = a->multipath_for(device);
    const auto dptr = reinterpret_cast<std::uintptr_t>(dk == K::device ? dst : src);
    if (dk == K::device && sk != K::device) {
      if (mp)
        mp->to_device(device, dptr, src, nbytes, stream);
      else
        a->engine(device).to_device(dptr, src, nbytes, stream);
    } else if (sk == K::device && dk != K::device) {
      if (mp)
        mp->to_host(device, dst, dptr, nbytes, stream);
      else
        a->engine(device).to_host(dst, dptr, nbytes, stream);
    } else
      memlake::throw_error(memlake::Errc::invalid_argument,
                           std::string("memlake_copy: need one host and one device pointer (dst is ") +
                               (dk == K::device ? "device" : "host") + ", src is " + (sk == K::device ? "device" : "host") +
                               " memory)");
  });
}

memlake_status memlake_copy_forget(memlake_allocator* a, const void* ptr, size_t nbytes) {
  if (!a || !ptr) return null_arg("allocator or ptr");
  return guarded([&] {
    if (memlake::io::MultiPath* mp = a->multipath())
      for (int d = 0; d < mp->topology().gpus; ++d) mp->engine(d).forget(ptr, nbytes);
    std::lock_guard<std::mutex> g(a->mu);
    for (auto& [d, e] : a->engines) e->forget(ptr, nbytes);
  });
}

memlake_status memlake_get_copy_stats(memlake_allocator* a, int device, memlake_copy_stats* out) {
  if (!a || !out) return null_arg("allocator or stats");
  if (out->struct_size < offsetof(memlake_copy_stats, threads)) return size_unset("memlake_copy_stats");
  return guarded([&] {
    // Only what exists is read: a query never starts an engine.
    memlake_copy_stats c{};
    c.struct_size = out->struct_size;
    memlake::io::MultiPath* mp = nullptr;
    {
      std::lock_guard<std::mutex> g(a->paths_mu);
      mp = a->paths.get();
    }
    memlake::io::CopyStats e;
    if (mp && device >= 0 && device < mp->topology().gpus) {
      e = mp->engine(device).stats();
      const memlake::io::MultiPathStats m = mp->stats();
      c.paths_gpus = static_cast<std::uint32_t>(mp->topology().gpus);
      c.transfers = m.transfers;
      c.split = m.split;
      for (std::size_t i = 0; i < m.bytes_via.size() && i < 16; ++i) c.bytes_via[i] = m.bytes_via[i];
    } else {
      std::lock_guard<std::mutex> g(a->mu);
      auto it = a->engines.find(device);
      if (it != a->engines.end()) e = it->second->stats();
    }
    c.threads = static_cast<std::uint32_t>(e.threads);
    c.copies = e.copies;
    c.bytes = e.bytes;
    c.direct = e.direct;
    c.pinned = e.pinned;
    c.staged = e.staged;
    c.registered = e.registered;
    c.chunks = e.chunks;
    c.lane_copy_ns = e.lane_copy_ns;
    c.lane_wait_ns = e.lane_wait_ns;
    std::memcpy(out, &c, std::min<std::size_t>(out->struct_size, sizeof c));
  });
}

size_t memlake_describe_address(unsigned long long addr, char* buf, size_t len) {
  const std::string d = memlake::core::fault::describe(static_cast<std::uintptr_t>(addr));
  if (buf && len) {
    const std::size_t n = std::min(len - 1, d.size());
    std::memcpy(buf, d.data(), n);
    buf[n] = '\0';
  }
  return d.size();
}

// ---- Residency

namespace {
// The devices a residency call applies to: one, or every device in use (-1).
std::vector<DeviceAllocator*> devices_of(memlake_allocator* a, int device) {
  std::vector<DeviceAllocator*> out;
  if (device >= 0) {
    out.push_back(&a->device(device));
    return out;
  }
  if (device != -1) memlake::throw_error(Errc::invalid_argument, "device " + std::to_string(device) + ": an ordinal or -1 (every device)");
  std::lock_guard<std::mutex> g(a->mu);
  for (auto& [d, dev] : a->devices) out.push_back(dev.get());
  return out;
}

memlake::residency::Mode sleep_mode(int mode) {
  if (mode != MEMLAKE_SLEEP_OFFLOAD && mode != MEMLAKE_SLEEP_DISCARD)
    memlake::throw_error(Errc::invalid_argument, "sleep mode " + std::to_string(mode) + ": 0 (offload) or 1 (discard)");
  return mode == MEMLAKE_SLEEP_OFFLOAD ? memlake::residency::Mode::offload : memlake::residency::Mode::discard;
}

bool report_unset(const memlake_residency_report* r) {
  return r && r->struct_size < offsetof(memlake_residency_report, seconds) + sizeof(double);
}
}  // namespace

memlake_status memlake_tag_register(const char* name, unsigned flags, int* id) {
  if (!name || !id) return null_arg("name or id");
  return guarded([&] { *id = memlake::core::label_id(name, flags); });
}

memlake_status memlake_tag_set(int id, int* previous) {
  return guarded([&] {
    if (id < 0 || id > memlake::core::kMaxLabels) memlake::throw_error(Errc::invalid_argument, "tag id " + std::to_string(id) + " out of range");
    const int prev = memlake::core::set_current_label(static_cast<std::uint16_t>(id));
    if (previous) *previous = prev;
  });
}

memlake_status memlake_sleep(memlake_allocator* a, int device, const int* tags, const int* modes, size_t ntags,
                             int mode, memlake_residency_report* report) {
  if (!a || (ntags && !tags)) return null_arg("allocator or tags");
  if (report_unset(report)) return size_unset("memlake_residency_report");
  return guarded([&] {
    std::vector<memlake::residency::Residency::Select> what;
    for (size_t i = 0; i < ntags; ++i) {
      if (tags[i] <= 0 || tags[i] > memlake::core::kMaxLabels ||
          memlake::core::label_name(static_cast<std::uint16_t>(tags[i])).empty())
        memlake::throw_error(Errc::invalid_argument, "sleep: tag id " + std::to_string(tags[i]) + " is not registered");
      what.push_back({static_cast<std::uint16_t>(tags[i]), sleep_mode(modes ? modes[i] : mode)});
    }
    if (what.empty()) what.push_back({0, sleep_mode(mode)});
    memlake_residency_report r{};
    for (DeviceAllocator* d : devices_of(a, device)) {
      const memlake::residency::SleepReport s = d->sleep(what);
      r.allocations += static_cast<uint32_t>(s.allocations);
      r.offloaded_bytes += s.offloaded;
      r.kept_bytes += s.kept;
      r.discarded_bytes += s.discarded;
      r.released_bytes += s.released;
      r.seconds += s.seconds;
    }
    if (report) {
      r.struct_size = report->struct_size;
      *report = r;
    }
  });
}

memlake_status memlake_wake(memlake_allocator* a, int device, memlake_residency_report* report) {
  if (!a) return null_arg("allocator");
  if (report_unset(report)) return size_unset("memlake_residency_report");
  return guarded([&] {
    memlake_residency_report r{};
    bool any = false;
    for (DeviceAllocator* d : devices_of(a, device)) {
      if (device == -1 && !d->residency_stats().asleep) continue;  // "every device": those asleep
      any = true;
      const memlake::residency::WakeReport w = d->wake();
      r.allocations += static_cast<uint32_t>(w.allocations);
      r.restored_bytes += w.restored;
      r.refilled_bytes += w.refilled;
      r.seconds += w.seconds;
    }
    if (!any) memlake::throw_error(Errc::invalid_argument, "wake: no device is asleep");
    if (report) {
      r.struct_size = report->struct_size;
      *report = r;
    }
  });
}

memlake_status memlake_evict(memlake_allocator* a, void* ptr, int device, int mode) {
  if (!a || !ptr) return null_arg("allocator or ptr");
  return guarded([&] {
    a->device(device).evict(ptr, sleep_mode(mode & ~MEMLAKE_EVICT_ASYNC), (mode & MEMLAKE_EVICT_ASYNC) == 0);
  });
}

memlake_status memlake_demote(memlake_allocator* a, void* ptr, int device) {
  return memlake_demote_ex(a, ptr, device, 0);
}

memlake_status memlake_demote_ex(memlake_allocator* a, void* ptr, int device, int flags) {
  if (!a || !ptr) return null_arg("allocator or ptr");
  if (flags & ~MEMLAKE_DEMOTE_ASYNC) return unknown_flags("memlake_demote_ex", flags);
  return guarded([&] { a->device(device).demote(ptr, (flags & MEMLAKE_DEMOTE_ASYNC) == 0); });
}

memlake_status memlake_fetch(memlake_allocator* a, void* ptr, int device) {
  if (!a || !ptr) return null_arg("allocator or ptr");
  return guarded([&] { a->device(device).fetch(ptr); });
}

memlake_status memlake_settle(memlake_allocator* a, int device, int wait, size_t* settled) {
  if (!a) return null_arg("allocator");
  return guarded([&] {
    std::size_t n = 0;
    if (DeviceAllocator* d = a->existing(device)) n = d->settle(wait != 0);
    if (settled) *settled = n;
  });
}

memlake_status memlake_restore(memlake_allocator* a, void* ptr, int device) {
  return memlake_restore_ex(a, ptr, device, 0);
}

memlake_status memlake_restore_ex(memlake_allocator* a, void* ptr, int device, int flags) {
  if (!a || !ptr) return null_arg("allocator or ptr");
  if (flags & ~MEMLAKE_RESTORE_NO_WAIT) return unknown_flags("memlake_restore_ex", flags);
  return guarded([&] { a->device(device).restore(ptr, (flags & MEMLAKE_RESTORE_NO_WAIT) == 0); });
}

memlake_status memlake_restore_ready(memlake_allocator* a, void* ptr, int device) {
  if (!a) return null_arg("allocator");
  return guarded([&] {
    if (DeviceAllocator* d = a->existing(device)) d->restore_ready(ptr);
  });
}

memlake_status memlake_mark_spare(memlake_allocator* a, void* ptr, int device) {
  if (!a) return null_arg("allocator");
  if (!ptr) return null_arg("ptr");
  return guarded([&] { a->device(device).mark_spare(ptr); });
}

memlake_status memlake_host_tier_reserve(memlake_allocator* a, int device, size_t bytes) {
  if (!a) return null_arg("allocator");
  return guarded([&] { a->device(device).reserve_host_tier(bytes); });
}

memlake_status memlake_get_residency_stats(memlake_allocator* a, int device, memlake_residency_stats* out) {
  if (!a || !out) return null_arg("allocator or stats");
  if (out->struct_size < offsetof(memlake_residency_stats, leaving_now)) return size_unset("memlake_residency_stats");
  return guarded([&] {
    memlake::residency::ResidencyStats s;
    if (DeviceAllocator* d = a->existing(device)) s = d->residency_stats();
    const memlake_residency_stats c{static_cast<uint32_t>(sizeof(memlake_residency_stats)),
                                   s.asleep,
                                   s.sleeps,
                                   s.wakes,
                                   s.evictions,
                                   s.restores,
                                   s.bytes_evicted,
                                   s.bytes_restored,
                                   s.bytes_discarded,
                                   s.evicted_now,
                                   s.evicted_bytes_now,
                                   s.host_capacity,
                                   s.host_used,
                                   s.last_sleep_s,
                                   s.last_wake_s,
                                   s.leaving_now,
                                   s.demotions,
                                   s.disk_used,
                                   s.disk_file,
                                   s.disk_written,
                                   s.disk_read,
                                   s.disk_direct ? 1u : 0u,
                                   0u,
                                   s.disk_write_s,
                                   s.disk_read_s,
                                   s.fetches,
                                   s.disk_failures,
                                   s.disk_writing_now,
                                   s.disk_reading_now,
                                   s.disk_busy_s,
                                   s.ahead_now,
                                   s.ahead_bytes_now,
                                   s.reclaimed,
                                   s.reclaimed_bytes,
                                   s.spare_now,
                                   s.spare_bytes_now,
                                   s.pressure_waits,
                                   s.pressure_s,
                                   s.leaving_bytes_now};
    const uint32_t size = out->struct_size;  // an older caller's struct: the fields it has
    std::memcpy(out, &c, std::min<std::size_t>(size, sizeof c));
    out->struct_size = size;
  });
}

// ---- Virtual tensors (src/vt). A tensor uses its allocator's backend for
// the device: destroy tensors before their allocator.
struct memlake_vt {
  memlake::prim::Backend* be;
  std::unique_ptr<memlake::vt::VirtualTensor> t;
};

memlake_status memlake_vt_create(memlake_allocator* a, int device, size_t bytes, size_t memory_limit, memlake_vt** out) {
  if (!a || !out) return null_arg("allocator or out");
  *out = nullptr;
  return guarded([&] {
    auto v = std::make_unique<memlake_vt>();
    v->be = &a->device(device).backend();
    v->t = std::make_unique<memlake::vt::VirtualTensor>(*v->be, bytes, memory_limit);
    *out = v.release();
  });
}

void memlake_vt_destroy(memlake_vt* vt) {
  if (!vt) return;
  try {
    vt->be->synchronize_device();
  } catch (...) {
  }
  delete vt;
}

memlake_status memlake_vt_map(memlake_vt* vt, size_t first, size_t count, void* stream) {
  if (!vt) return null_arg("vt");
  return guarded([&] { vt->t->map(first, count, stream); });
}

memlake_status memlake_vt_unmap(memlake_vt* vt, size_t first, size_t count, int backing, void* stream) {
  if (!vt) return null_arg("vt");
  return guarded([&] {
    if (backing != MEMLAKE_VT_ZERO && backing != MEMLAKE_VT_SINK)
      memlake::throw_error(Errc::invalid_argument, "memlake_vt_unmap: backing " + std::to_string(backing) +
                                                       " is neither MEMLAKE_VT_ZERO nor MEMLAKE_VT_SINK");
    vt->t->unmap(first, count, static_cast<memlake::vt::PageState>(backing), stream);
  });
}

memlake_status memlake_vt_set_memory_limit(memlake_vt* vt, size_t bytes) {
  if (!vt) return null_arg("vt");
  return guarded([&] { vt->t->set_memory_limit(bytes); });
}

memlake_status memlake_vt_pages(memlake_vt* vt, size_t first, size_t count, uint8_t* out) {
  if (!vt || (!out && count)) return null_arg("vt or out");
  return guarded([&] {
    if (first > vt->t->pages() || count > vt->t->pages() - first) vt->t->state(vt->t->pages());  // throws, naming the range
    for (size_t i = 0; i < count; ++i) out[i] = static_cast<uint8_t>(vt->t->state(first + i));
  });
}

memlake_status memlake_vt_get_stats(memlake_vt* vt, memlake_vt_stats* stats) {
  if (!vt || !stats) return null_arg("vt or stats");
  if (stats->struct_size == 0) return size_unset("memlake_vt_stats");
  return guarded([&] {
    const memlake::vt::VirtualTensorStats s = vt->t->stats();
    memlake_vt_stats c{};
    c.struct_size = stats->struct_size;
    c.base = vt->t->base();
    c.bytes = s.bytes;
    c.page_size = s.page_size;
    c.pages = s.pages;
    c.private_pages = s.private_pages;
    c.zero_pages = s.zero_pages;
    c.sink_pages = s.sink_pages;
    c.hole_pages = s.hole_pages;
    c.physical_bytes = s.physical_bytes;
    c.physical_peak = s.physical_peak;
    c.memory_limit = s.memory_limit;
    c.pages_mapped = s.pages_mapped;
    c.pages_unmapped = s.pages_unmapped;
    c.syncs = s.syncs;
    std::memcpy(stats, &c, std::min<size_t>(stats->struct_size, sizeof c));
  });
}

memlake_status memlake_capture_begin(memlake_allocator* a, int device, void* stream, uint64_t pool_id) {
  if (!a) return null_arg("allocator");
  return guarded([&] { a->device(device).capture_begin(stream, pool_id); });
}

memlake_status memlake_capture_end(memlake_allocator* a, int device, void* stream) {
  if (!a) return null_arg("allocator");
  return guarded([&] { a->device(device).capture_end(stream); });
}

memlake_status memlake_graph_pool_release(memlake_allocator* a, int device, uint64_t pool_id) {
  if (!a) return null_arg("allocator");
  return guarded([&] { a->device(device).graph_pool_release(pool_id); });
}

const char* memlake_last_error(void) { return t_last_error.c_str(); }
const char* memlake_version(void) { return MEMLAKE_VERSION_STRING; }  // from VERSION (CMake)

namespace {
std::mutex g_default_mu;
memlake_allocator* g_default = nullptr;
std::atomic<memlake_allocator*> g_default_ready{nullptr};  // g_default once made
std::string g_default_error;  // why the default allocator could not be made

struct TorchOutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};
}  // namespace

memlake_allocator* memlake_default(void) {
  // Every tensor's malloc and free asks: once made, the default is read without the lock.
  if (memlake_allocator* a = g_default_ready.load(std::memory_order_acquire)) return a;
  std::lock_guard<std::mutex> g(g_default_mu);
  if (!g_default && g_default_error.empty()) {
    if (memlake_create(nullptr, &g_default) != MEMLAKE_OK) g_default_error = "memlake default allocator: " + t_last_error;
  }
  // Intentionally never destroyed: frameworks free tensors during exit.
  if (!g_default) t_last_error = g_default_error;
  g_default_ready.store(g_default, std::memory_order_release);
  return g_default;
}

memlake_status memlake_default_init(const memlake_options* opts) {
  std::lock_guard<std::mutex> g(g_default_mu);
  if (g_default) {
    t_last_error = "the default allocator already exists (configure it before its first use)";
    return MEMLAKE_ERROR_INVALID_ARGUMENT;
  }
  memlake_status s = memlake_create(opts, &g_default);
  if (s == MEMLAKE_OK) {
    g_default_error.clear();
    g_default_ready.store(g_default, std::memory_order_release);
  }
  return s;
}

void* memlake_torch_pool_malloc(ssize_t size, int device, void* stream) {
  memlake_allocator* a = memlake_default();
  if (!a) return nullptr;
  if (size < 0) {
    t_last_error = "negative size " + std::to_string(size);
    return nullptr;
  }
  void* p = nullptr;
  memlake_alloc(a, static_cast<size_t>(size), device, stream, &p);
  return p;
}

void* memlake_torch_malloc(ssize_t size, int device, void* stream) {
  memlake_allocator* a = memlake_default();
  void* p = nullptr;
  bool capturing = false;
  memlake_status st = MEMLAKE_ERROR_OUT_OF_MEMORY;
  if (a && size > 0) {
    // One device lookup serves the capture check and the allocation (this runs per tensor).
    st = guarded([&] {
      DeviceAllocator& d = a->device(device);
      switch (a->opts.capture_check) {
        case Options::CaptureCheck::hooks:  // captures are announced; slow paths refuse any other
          if (!d.capture_guarded()) d.set_capture_guard(true);
          break;
        case Options::CaptureCheck::query: capturing = d.is_capturing(stream); break;
        case Options::CaptureCheck::off: break;
      }
      if (!capturing) p = d.alloc(static_cast<std::size_t>(size), stream);
    });
  } else {
    p = memlake_torch_pool_malloc(size, device, stream);  // size 0, negative size, or no allocator
  }
  if (capturing)
    throw std::runtime_error(
        "memlake: allocation during CUDA graph capture is refused with capture_check=query (freed memory "
        "would be reused while the graph still uses it); use capture_check=hooks (the default: memlake.torch "
        "announces captures), memlake.torch.pool(), or no memlake");
  if (!p && size > 0) {
    std::string why = t_last_error;
    // A failure, not a full device (no allocator at all: no driver, bad options): not retryable as OOM.
    if (!a || (st != MEMLAKE_OK && st != MEMLAKE_ERROR_OUT_OF_MEMORY))
      throw std::runtime_error("memlake: allocation of " + std::to_string(size) + " bytes failed: " + why);
    const char* prefix = "out of memory: ";
    if (why.rfind(prefix, 0) == 0) why = why.substr(std::strlen(prefix));
    throw TorchOutOfMemory("memlake: CUDA out of memory. " + why);
  }
  return p;
}

void memlake_torch_free(void* ptr, size_t size, int device, void* stream) {
  (void)size;
  memlake_allocator* a = memlake_default();
  if (a) memlake_free(a, ptr, device, stream);
}

}  // extern "C"

namespace {

std::vector<memlake::core::Stats> served_stats() {
  std::vector<memlake::core::Stats> out;
  std::lock_guard<std::mutex> g(g_served_mu);
  for (memlake_allocator* a : g_served) {
    std::lock_guard<std::mutex> ga(a->mu);
    for (auto& [id, d] : a->devices) out.push_back(d->stats());
  }
  return out;
}

// `memlake sleep PID` / `memlake wake PID` through the stats socket (same
// user only: the server checks the peer's uid before any request):
//   "sleep offload|discard [TAG...]" and "wake", for every served allocator.
// Replies "ok {...}" with the report, or "error: ...". "" = not a command.
std::string remote_command(const std::string& req) {
  std::vector<std::string> words;
  for (std::size_t i = 0; i < req.size();) {
    const std::size_t j = std::min(req.find(' ', i), req.size());
    if (j > i) words.push_back(req.substr(i, j - i));
    i = j + 1;
  }
  if (words.empty() || (words[0] != "sleep" && words[0] != "wake")) return "";
  // Held throughout: an allocator being destroyed waits (unserve_stats).
  std::lock_guard<std::mutex> g(g_served_mu);
  memlake_residency_report total{};
  std::string err;
  const bool sleep = words[0] == "sleep";
  int mode = MEMLAKE_SLEEP_OFFLOAD;
  std::vector<int> tags;
  if (sleep) {
    if (words.size() < 2 || (words[1] != "offload" && words[1] != "discard"))
      return "error: expected 'sleep offload|discard [TAG...]'\n";
    mode = words[1] == "offload" ? MEMLAKE_SLEEP_OFFLOAD : MEMLAKE_SLEEP_DISCARD;
    for (std::size_t i = 2; i < words.size(); ++i) {
      const int id = memlake::core::find_label(words[i]);
      if (!id) return "error: no tag '" + memlake::obs::printable(words[i]) + "' in this process\n";
      tags.push_back(id);
    }
  } else if (words.size() != 1) {
    return "error: expected 'wake'\n";
  }
  for (memlake_allocator* a : g_served) {
    memlake_residency_report r{};
    r.struct_size = sizeof r;
    const memlake_status st = sleep ? memlake_sleep(a, -1, tags.data(), nullptr, tags.size(), mode, &r)
                                    : memlake_wake(a, -1, &r);
    if (st != MEMLAKE_OK) {
      err = memlake_last_error();
      continue;
    }
    total.allocations += r.allocations;
    total.offloaded_bytes += r.offloaded_bytes;
    total.kept_bytes += r.kept_bytes;
    total.discarded_bytes += r.discarded_bytes;
    total.released_bytes += r.released_bytes;
    total.restored_bytes += r.restored_bytes;
    total.refilled_bytes += r.refilled_bytes;
    total.seconds += r.seconds;
  }
  if (!err.empty()) return "error: " + err + "\n";
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "ok {\"allocations\":%u,\"offloaded_bytes\":%llu,\"kept_bytes\":%llu,\"discarded_bytes\":%llu,"
                "\"released_bytes\":%llu,\"restored_bytes\":%llu,\"refilled_bytes\":%llu,\"milliseconds\":%llu}\n",
                total.allocations, static_cast<unsigned long long>(total.offloaded_bytes),
                static_cast<unsigned long long>(total.kept_bytes), static_cast<unsigned long long>(total.discarded_bytes),
                static_cast<unsigned long long>(total.released_bytes),
                static_cast<unsigned long long>(total.restored_bytes),
                static_cast<unsigned long long>(total.refilled_bytes),
                static_cast<unsigned long long>(total.seconds * 1e3));
  return buf;
}

void serve_stats(memlake_allocator* a) {
  std::lock_guard<std::mutex> g(g_served_mu);
  if (!g_server) {
    // A runtime directory that is not private (another user's /tmp/memlake-UID)
    // costs the statistics, not the allocator: warn once, create it anyway.
    try {
      g_server = std::make_unique<memlake::obs::StatsServer>(served_stats, memlake::obs::socket_dir(), 1000,
                                                             remote_command);
    } catch (const memlake::Error& e) {
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true)) std::fprintf(stderr, "memlake: stats server not started: %s\n", e.what());
    }
  }
  g_served.push_back(a);
}

void unserve_stats(memlake_allocator* a) {
  std::unique_ptr<memlake::obs::StatsServer> stop;
  {
    std::lock_guard<std::mutex> g(g_served_mu);
    g_served.erase(std::remove(g_served.begin(), g_served.end(), a), g_served.end());
    if (g_served.empty()) stop = std::move(g_server);
  }
  // stop (joining the serving thread) outside the lock the thread may be waiting for
}

}  // namespace
