#include <chrono>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "prim/decorators.h"
#include "prim/host_backend.h"

namespace memlake::prim {

std::unique_ptr<Backend> make_cuda_backend(int device, std::size_t granularity);  // cuda_backend.cpp

const char* op_name(Op op) noexcept {
  switch (op) {
    case Op::reserve: return "reserve";
    case Op::free_reservation: return "free_reservation";
    case Op::create: return "create";
    case Op::release: return "release";
    case Op::map: return "map";
    case Op::unmap: return "unmap";
    case Op::set_access: return "set_access";
    case Op::event_record: return "event_record";
    case Op::event_query: return "event_query";
    case Op::synchronize: return "synchronize";
    case Op::count_: break;
  }
  return "?";
}

std::unique_ptr<Backend> make_backend(const BackendConfig& cfg) {
  if (cfg.kind == "host") return std::make_unique<HostBackend>(cfg.device, cfg.granularity, cfg.host_memory_limit);
  if (cfg.kind == "cuda") return make_cuda_backend(cfg.device, cfg.granularity);
  throw_error(Errc::invalid_argument, "unknown backend '" + cfg.kind + "' (expected 'cuda' or 'host')");
}

PhysHandle Backend::create_shareable(std::size_t) {
  throw_error(Errc::unavailable, "the " + name() + " backend cannot create memory shared between processes");
}
int Backend::export_fd(PhysHandle, bool) {
  throw_error(Errc::unavailable, "the " + name() + " backend cannot export memory to another process");
}
PhysHandle Backend::import_fd(int, std::size_t) {
  throw_error(Errc::unavailable, "the " + name() + " backend cannot import memory of another process");
}
bool Backend::hash_leaves(std::uintptr_t, std::size_t, std::size_t, std::uint8_t*) { return false; }

// ---- ForwardingBackend -------------------------------------------------

template <class F>
decltype(auto) ForwardingBackend::counted(Op op, F&& call) {
  before(op);
  if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
    call();
    after(op);
  } else {
    auto r = call();
    after(op);
    return r;
  }
}

std::uintptr_t ForwardingBackend::reserve(std::size_t size, std::size_t align) {
  return counted(Op::reserve, [&] { return inner_->reserve(size, align); });
}
void ForwardingBackend::free_reservation(std::uintptr_t va, std::size_t size) {
  counted(Op::free_reservation, [&] { inner_->free_reservation(va, size); });
}
PhysHandle ForwardingBackend::create(std::size_t size) {
  return counted(Op::create, [&] { return inner_->create(size); });
}
PhysHandle ForwardingBackend::create_shareable(std::size_t size) {
  return counted(Op::create, [&] { return inner_->create_shareable(size); });
}
PhysHandle ForwardingBackend::import_fd(int fd, std::size_t size) {
  return counted(Op::create, [&] { return inner_->import_fd(fd, size); });
}
void ForwardingBackend::release(PhysHandle h) {
  counted(Op::release, [&] { inner_->release(h); });
}
void ForwardingBackend::map(std::uintptr_t va, std::size_t size, PhysHandle h) {
  counted(Op::map, [&] { inner_->map(va, size, h); });
}
void ForwardingBackend::unmap(std::uintptr_t va, std::size_t size) {
  counted(Op::unmap, [&] { inner_->unmap(va, size); });
}
void ForwardingBackend::set_access(std::uintptr_t va, std::size_t size, Access a) {
  counted(Op::set_access, [&] { inner_->set_access(va, size, a); });
}
Event ForwardingBackend::record_event(Stream s) {
  return counted(Op::event_record, [&] { return inner_->record_event(s); });
}
bool ForwardingBackend::query_event(Event e) {
  return counted(Op::event_query, [&] { return inner_->query_event(e); });
}
bool ForwardingBackend::query_stream(Stream s) {
  return counted(Op::event_query, [&] { return inner_->query_stream(s); });
}
void ForwardingBackend::wait_event(Event e) {
  counted(Op::synchronize, [&] { inner_->wait_event(e); });
}
void ForwardingBackend::synchronize_stream(Stream s) {
  counted(Op::synchronize, [&] { inner_->synchronize_stream(s); });
}
void ForwardingBackend::synchronize_device() {
  counted(Op::synchronize, [&] { inner_->synchronize_device(); });
}

// ---- CountingBackend ---------------------------------------------------

namespace {
// Start of the primitive call in progress on this thread (calls do not nest).
thread_local std::chrono::steady_clock::time_point t_call_start;
}  // namespace

void CountingBackend::before(Op op) {
  counts_[static_cast<int>(op)].fetch_add(1, std::memory_order_relaxed);
  t_call_start = std::chrono::steady_clock::now();
}

void CountingBackend::after(Op op) {
  const auto d = std::chrono::steady_clock::now() - t_call_start;
  ns_[static_cast<int>(op)].fetch_add(static_cast<std::uint64_t>(std::chrono::nanoseconds(d).count()),
                                      std::memory_order_relaxed);
}

OpCounts CountingBackend::counts() const {
  OpCounts c;
  for (int i = 0; i < kNumOps; ++i) {
    c.calls[i] = counts_[i].load(std::memory_order_relaxed);
    c.ns[i] = ns_[i].load(std::memory_order_relaxed);
  }
  return c;
}

void CountingBackend::reset_counts() {
  for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
  for (auto& c : ns_) c.store(0, std::memory_order_relaxed);
}

// ---- FaultyBackend -----------------------------------------------------

const char* fault_site_name(FaultSite s) noexcept {
  switch (s) {
    case FaultSite::reserve: return "reserve";
    case FaultSite::free_reservation: return "free_reservation";
    case FaultSite::create: return "create";
    case FaultSite::release: return "release";
    case FaultSite::map: return "map";
    case FaultSite::unmap: return "unmap";
    case FaultSite::set_access: return "set_access";
    case FaultSite::create_stream: return "create_stream";
    case FaultSite::destroy_stream: return "destroy_stream";
    case FaultSite::event_record: return "event_record";
    case FaultSite::event_query: return "event_query";
    case FaultSite::stream_query: return "stream_query";
    case FaultSite::wait_event: return "wait_event";
    case FaultSite::destroy_event: return "destroy_event";
    case FaultSite::synchronize_stream: return "synchronize_stream";
    case FaultSite::synchronize_device: return "synchronize_device";
    case FaultSite::is_capturing: return "is_capturing";
    case FaultSite::alloc_pinned: return "alloc_pinned";
    case FaultSite::free_pinned: return "free_pinned";
    case FaultSite::copy_to_device: return "copy_to_device";
    case FaultSite::copy_to_host: return "copy_to_host";
    case FaultSite::copy_device: return "copy_device";
    case FaultSite::stream_wait: return "stream_wait";
    case FaultSite::register_host: return "register_host";
    case FaultSite::unregister_host: return "unregister_host";
    case FaultSite::can_access_peer: return "can_access_peer";
    case FaultSite::grant_peer: return "grant_peer";
    case FaultSite::count_: break;
  }
  return "?";
}

namespace {
// The sites of a counted op.
std::vector<FaultSite> sites_of(Op op) {
  switch (op) {
    case Op::reserve: return {FaultSite::reserve};
    case Op::free_reservation: return {FaultSite::free_reservation};
    case Op::create: return {FaultSite::create};
    case Op::release: return {FaultSite::release};
    case Op::map: return {FaultSite::map};
    case Op::unmap: return {FaultSite::unmap};
    case Op::set_access: return {FaultSite::set_access};
    case Op::event_record: return {FaultSite::event_record};
    case Op::event_query: return {FaultSite::event_query, FaultSite::stream_query};
    case Op::synchronize: return {FaultSite::wait_event, FaultSite::synchronize_stream, FaultSite::synchronize_device};
    case Op::count_: break;
  }
  return {};
}
Errc default_code(FaultSite s) {
  return s == FaultSite::create || s == FaultSite::alloc_pinned ? Errc::out_of_memory : Errc::driver;
}
}  // namespace

void FaultyBackend::fail_nth(FaultSite site, int n) {
  std::lock_guard<std::mutex> g(mu_);
  countdown_[static_cast<int>(site)] = n;
}

void FaultyBackend::fail_nth(Op op, int n) {
  for (FaultSite s : sites_of(op)) fail_nth(s, n);
}

void FaultyBackend::fail_randomly(double p, std::uint64_t seed, const std::vector<FaultSite>& sites) {
  std::lock_guard<std::mutex> g(mu_);
  p_ = p;
  random_sites_.fill(sites.empty());
  for (FaultSite s : sites) random_sites_[static_cast<int>(s)] = true;
  rng_ = seed * 0x9E3779B97F4A7C15ull + 1;
}

void FaultyBackend::fail_randomly(double p, std::uint64_t seed, std::initializer_list<FaultSite> sites) {
  fail_randomly(p, seed, std::vector<FaultSite>(sites));
}

void FaultyBackend::fail_randomly(double p, std::uint64_t seed, std::initializer_list<Op> ops) {
  std::vector<FaultSite> sites;
  for (Op op : ops)
    for (FaultSite s : sites_of(op)) sites.push_back(s);
  fail_randomly(p, seed, sites);
}

void FaultyBackend::set_fault_code(FaultSite site, Errc code) {
  std::lock_guard<std::mutex> g(mu_);
  if (!codes_set_) {
    for (int i = 0; i < kNumFaultSites; ++i) codes_[i] = default_code(static_cast<FaultSite>(i));
    codes_set_ = true;
  }
  codes_[static_cast<int>(site)] = code;
}

void FaultyBackend::stop_failing() {
  std::lock_guard<std::mutex> g(mu_);
  countdown_.fill(0);
  p_ = 0;
}

std::uint64_t FaultyBackend::faults_injected() const {
  std::lock_guard<std::mutex> g(mu_);
  std::uint64_t n = 0;
  for (auto c : injected_) n += c;
  return n;
}

std::uint64_t FaultyBackend::faults_injected(FaultSite site) const {
  std::lock_guard<std::mutex> g(mu_);
  return injected_[static_cast<int>(site)];
}

void FaultyBackend::maybe_fail(FaultSite site) {
  const int i = static_cast<int>(site);
  Errc code;
  {
    std::lock_guard<std::mutex> g(mu_);
    bool fail = false;
    int& c = countdown_[i];
    if (c > 0 && --c == 0) fail = true;
    if (!fail && p_ > 0 && random_sites_[i]) {
      rng_ ^= rng_ << 13;
      rng_ ^= rng_ >> 7;
      rng_ ^= rng_ << 17;
      fail = static_cast<double>(rng_ % 1000000) / 1e6 < p_;
    }
    if (!fail) return;
    ++injected_[i];
    code = codes_set_ ? codes_[i] : default_code(site);
  }
  throw_error(code, std::string("injected fault in ") + fault_site_name(site));
}

std::uintptr_t FaultyBackend::reserve(std::size_t size, std::size_t align) {
  maybe_fail(FaultSite::reserve);
  return ForwardingBackend::reserve(size, align);
}
void FaultyBackend::free_reservation(std::uintptr_t va, std::size_t size) {
  maybe_fail(FaultSite::free_reservation);
  ForwardingBackend::free_reservation(va, size);
}
PhysHandle FaultyBackend::create(std::size_t size) {
  maybe_fail(FaultSite::create);
  return ForwardingBackend::create(size);
}
void FaultyBackend::release(PhysHandle h) {
  maybe_fail(FaultSite::release);
  ForwardingBackend::release(h);
}
void FaultyBackend::map(std::uintptr_t va, std::size_t size, PhysHandle h) {
  maybe_fail(FaultSite::map);
  ForwardingBackend::map(va, size, h);
}
void FaultyBackend::unmap(std::uintptr_t va, std::size_t size) {
  maybe_fail(FaultSite::unmap);
  ForwardingBackend::unmap(va, size);
}
void FaultyBackend::set_access(std::uintptr_t va, std::size_t size, Access a) {
  maybe_fail(FaultSite::set_access);
  ForwardingBackend::set_access(va, size, a);
}
Stream FaultyBackend::create_stream() {
  maybe_fail(FaultSite::create_stream);
  return ForwardingBackend::create_stream();
}
void FaultyBackend::destroy_stream(Stream s) {
  maybe_fail(FaultSite::destroy_stream);
  ForwardingBackend::destroy_stream(s);
}
Event FaultyBackend::record_event(Stream s) {
  maybe_fail(FaultSite::event_record);
  return ForwardingBackend::record_event(s);
}
bool FaultyBackend::query_event(Event e) {
  maybe_fail(FaultSite::event_query);
  return ForwardingBackend::query_event(e);
}
bool FaultyBackend::query_stream(Stream s) {
  maybe_fail(FaultSite::stream_query);
  return ForwardingBackend::query_stream(s);
}
void FaultyBackend::wait_event(Event e) {
  maybe_fail(FaultSite::wait_event);
  ForwardingBackend::wait_event(e);
}
void FaultyBackend::destroy_event(Event e) {
  maybe_fail(FaultSite::destroy_event);
  ForwardingBackend::destroy_event(e);
}
void FaultyBackend::synchronize_stream(Stream s) {
  maybe_fail(FaultSite::synchronize_stream);
  ForwardingBackend::synchronize_stream(s);
}
void FaultyBackend::synchronize_device() {
  maybe_fail(FaultSite::synchronize_device);
  ForwardingBackend::synchronize_device();
}
bool FaultyBackend::is_capturing(Stream s) {
  maybe_fail(FaultSite::is_capturing);
  return ForwardingBackend::is_capturing(s);
}
void* FaultyBackend::alloc_pinned(std::size_t n) {
  maybe_fail(FaultSite::alloc_pinned);
  return ForwardingBackend::alloc_pinned(n);
}
void FaultyBackend::free_pinned(void* p) {
  maybe_fail(FaultSite::free_pinned);
  ForwardingBackend::free_pinned(p);
}
void FaultyBackend::copy_to_device_async(std::uintptr_t dst, const void* src, std::size_t n, Stream s) {
  maybe_fail(FaultSite::copy_to_device);
  ForwardingBackend::copy_to_device_async(dst, src, n, s);
}
void FaultyBackend::copy_to_host_async(void* dst, std::uintptr_t src, std::size_t n, Stream s) {
  maybe_fail(FaultSite::copy_to_host);
  ForwardingBackend::copy_to_host_async(dst, src, n, s);
}
void FaultyBackend::copy_device_async(std::uintptr_t dst, std::uintptr_t src, std::size_t n, Stream s) {
  maybe_fail(FaultSite::copy_device);
  ForwardingBackend::copy_device_async(dst, src, n, s);
}
void FaultyBackend::stream_wait(Stream s, Event e) {
  maybe_fail(FaultSite::stream_wait);
  ForwardingBackend::stream_wait(s, e);
}
void FaultyBackend::register_host(void* p, std::size_t n) {
  maybe_fail(FaultSite::register_host);
  ForwardingBackend::register_host(p, n);
}
void FaultyBackend::unregister_host(void* p) {
  maybe_fail(FaultSite::unregister_host);
  ForwardingBackend::unregister_host(p);
}
bool FaultyBackend::can_access_peer(int peer) {
  maybe_fail(FaultSite::can_access_peer);
  return ForwardingBackend::can_access_peer(peer);
}
void FaultyBackend::grant_peer(std::uintptr_t va, std::size_t size, int peer) {
  maybe_fail(FaultSite::grant_peer);
  ForwardingBackend::grant_peer(va, size, peer);
}

}  // namespace memlake::prim
