#include <chrono>
#include <cstdlib>
#include <type_traits>

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

void FaultyBackend::fail_nth(Op op, int n) {
  std::lock_guard<std::mutex> g(mu_);
  countdown_[static_cast<int>(op)] = n;
}

void FaultyBackend::fail_randomly(double p, std::uint64_t seed, std::initializer_list<Op> ops) {
  std::lock_guard<std::mutex> g(mu_);
  p_ = p;
  random_ops_.fill(ops.size() == 0);
  for (Op op : ops) random_ops_[static_cast<int>(op)] = true;
  rng_ = seed * 0x9E3779B97F4A7C15ull + 1;
}

void FaultyBackend::stop_failing() {
  std::lock_guard<std::mutex> g(mu_);
  countdown_.fill(0);
  p_ = 0;
}

void FaultyBackend::before(Op op) {
  bool fail = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    int& c = countdown_[static_cast<int>(op)];
    if (c > 0 && --c == 0) fail = true;
    if (!fail && p_ > 0 && random_ops_[static_cast<int>(op)]) {
      rng_ ^= rng_ << 13;
      rng_ ^= rng_ >> 7;
      rng_ ^= rng_ << 17;
      fail = static_cast<double>(rng_ % 1000000) / 1e6 < p_;
    }
    if (fail) ++injected_;
  }
  if (fail) {
    Errc code = op == Op::create ? Errc::out_of_memory : Errc::driver;
    throw_error(code, std::string("injected fault in ") + op_name(op));
  }
}

}  // namespace memlake::prim
