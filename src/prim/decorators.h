// Backend decorators: composable layers over any Backend (RMM-style
// adaptors). CountingBackend counts every primitive call and the time spent
// in it (wall clock, two clock reads per call); FaultyBackend makes chosen
// calls of any entry point fail, for tests of the layers above.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <vector>

#include "core/error.h"

#include "prim/prim.h"

namespace memlake::prim {

// Forwards every call to an inner backend. Decorators override what they
// need and call through with `inner()`.
class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  Backend& inner() { return *inner_; }
  const Backend& inner() const { return *inner_; }

  std::string name() const override { return inner_->name(); }
  int device() const override { return inner_->device(); }
  std::string uuid() const override { return inner_->uuid(); }
  std::size_t granularity() const override { return inner_->granularity(); }
  std::size_t total_memory() const override { return inner_->total_memory(); }
  std::uintptr_t reserve(std::size_t size, std::size_t align) override;
  void free_reservation(std::uintptr_t va, std::size_t size) override;
  PhysHandle create(std::size_t size) override;
  void release(PhysHandle h) override;
  void map(std::uintptr_t va, std::size_t size, PhysHandle h) override;
  void unmap(std::uintptr_t va, std::size_t size) override;
  void set_access(std::uintptr_t va, std::size_t size, Access a) override;
  Stream create_stream() override { return inner_->create_stream(); }
  void destroy_stream(Stream s) override { inner_->destroy_stream(s); }
  Event record_event(Stream s) override;
  bool query_event(Event e) override;
  bool query_stream(Stream s) override;  // counted as an event query
  void wait_event(Event e) override;  // counted as synchronize: the host blocks
  void destroy_event(Event e) override { inner_->destroy_event(e); }
  void synchronize_stream(Stream s) override;
  void synchronize_device() override;
  bool is_capturing(Stream s) override { return inner_->is_capturing(s); }
  void* alloc_pinned(std::size_t n) override { return inner_->alloc_pinned(n); }
  void free_pinned(void* p) override { inner_->free_pinned(p); }
  PointerKind pointer_kind(const void* p) override { return inner_->pointer_kind(p); }
  void copy_to_device_async(std::uintptr_t dst, const void* src, std::size_t n, Stream s) override {
    inner_->copy_to_device_async(dst, src, n, s);
  }
  void copy_to_host_async(void* dst, std::uintptr_t src, std::size_t n, Stream s) override {
    inner_->copy_to_host_async(dst, src, n, s);
  }
  void stream_wait(Stream s, Event e) override { inner_->stream_wait(s, e); }
  void register_host(void* p, std::size_t n) override { inner_->register_host(p, n); }
  void unregister_host(void* p) override { inner_->unregister_host(p); }
  bool can_access_peer(int peer) override { return inner_->can_access_peer(peer); }
  void grant_peer(std::uintptr_t va, std::size_t size, int peer) override { inner_->grant_peer(va, size, peer); }
  void copy_device_async(std::uintptr_t dst, std::uintptr_t src, std::size_t n, Stream s) override {
    inner_->copy_device_async(dst, src, n, s);
  }
  void write(std::uintptr_t dst, const void* src, std::size_t n) override { inner_->write(dst, src, n); }
  void read(void* dst, std::uintptr_t src, std::size_t n) override { inner_->read(dst, src, n); }
  bool hash_leaves(std::uintptr_t va, std::size_t n, std::size_t leaf_bytes, std::uint8_t* digests_out) override {
    return inner_->hash_leaves(va, n, leaf_bytes, digests_out);
  }
  PhysHandle create_shareable(std::size_t size) override;  // counted as create
  int export_fd(PhysHandle h, bool read_only) override { return inner_->export_fd(h, read_only); }
  PhysHandle import_fd(int fd, std::size_t size) override;  // counted as create

 protected:
  // Called before and after (when it returned normally) each counted
  // primitive; decorators hook here.
  virtual void before(Op) {}
  virtual void after(Op) {}

 private:
  // before(op), the call, after(op); the call's result is passed through.
  template <class F>
  decltype(auto) counted(Op op, F&& call);

  std::unique_ptr<Backend> inner_;
};

struct OpCounts {
  std::array<std::uint64_t, kNumOps> calls{};
  std::array<std::uint64_t, kNumOps> ns{};  // wall-clock time inside the calls
  std::uint64_t operator[](Op op) const { return calls[static_cast<int>(op)]; }
  std::uint64_t total_calls() const { return sum(calls); }
  std::uint64_t total_ns() const { return sum(ns); }

 private:
  static std::uint64_t sum(const std::array<std::uint64_t, kNumOps>& per_op) {
    std::uint64_t n = 0;
    for (auto c : per_op) n += c;
    return n;
  }
};

class CountingBackend final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  OpCounts counts() const;
  void reset_counts();

 protected:
  void before(Op op) override;
  void after(Op op) override;

 private:
  std::array<std::atomic<std::uint64_t>, kNumOps> counts_{};
  std::array<std::atomic<std::uint64_t>, kNumOps> ns_{};
};

// Every Backend entry point that can fail, for fault injection: finer and
// wider than Op (which counts the allocator's calls): streams, pinned
// memory, registration, copies and peers too. Only the pure queries
// (name, device, granularity, total_memory, pointer_kind) and the tests'
// write/read never fail.
enum class FaultSite : int {
  reserve,
  free_reservation,
  create,
  release,
  map,
  unmap,
  set_access,
  create_stream,
  destroy_stream,
  event_record,
  event_query,
  stream_query,
  wait_event,
  destroy_event,
  synchronize_stream,
  synchronize_device,
  is_capturing,
  alloc_pinned,
  free_pinned,
  copy_to_device,
  copy_to_host,
  copy_device,
  stream_wait,
  register_host,
  unregister_host,
  can_access_peer,
  grant_peer,
  count_,
};
inline constexpr int kNumFaultSites = static_cast<int>(FaultSite::count_);
const char* fault_site_name(FaultSite s) noexcept;

// Fails calls on demand, before they reach the inner backend (a failed call
// has no effect, as a failed driver call). fail_nth(site, n) makes the n-th
// next call of `site` (1 = the very next) throw; fail_randomly() fails each
// call of the chosen sites with probability p (seeded, deterministic). The
// error is Errc::out_of_memory for create and alloc_pinned, Errc::driver
// for the rest, unless set_fault_code() says otherwise. The Op overloads
// address every site of that counted op (Op::synchronize: wait_event and
// both synchronizes; Op::event_query: event and stream queries).
class FaultyBackend final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  void fail_nth(FaultSite site, int n);
  void fail_nth(Op op, int n);
  // Only the listed sites fail; an empty list means every site.
  void fail_randomly(double p, std::uint64_t seed, std::initializer_list<FaultSite> sites);
  void fail_randomly(double p, std::uint64_t seed, std::initializer_list<Op> ops = {});
  void fail_randomly(double p, std::uint64_t seed, const std::vector<FaultSite>& sites);
  void set_fault_code(FaultSite site, Errc code);
  void stop_failing();
  std::uint64_t faults_injected() const;
  std::uint64_t faults_injected(FaultSite site) const;

  std::uintptr_t reserve(std::size_t size, std::size_t align) override;
  void free_reservation(std::uintptr_t va, std::size_t size) override;
  PhysHandle create(std::size_t size) override;
  void release(PhysHandle h) override;
  void map(std::uintptr_t va, std::size_t size, PhysHandle h) override;
  void unmap(std::uintptr_t va, std::size_t size) override;
  void set_access(std::uintptr_t va, std::size_t size, Access a) override;
  Stream create_stream() override;
  void destroy_stream(Stream s) override;
  Event record_event(Stream s) override;
  bool query_event(Event e) override;
  bool query_stream(Stream s) override;
  void wait_event(Event e) override;
  void destroy_event(Event e) override;
  void synchronize_stream(Stream s) override;
  void synchronize_device() override;
  bool is_capturing(Stream s) override;
  void* alloc_pinned(std::size_t n) override;
  void free_pinned(void* p) override;
  void copy_to_device_async(std::uintptr_t dst, const void* src, std::size_t n, Stream s) override;
  void copy_to_host_async(void* dst, std::uintptr_t src, std::size_t n, Stream s) override;
  void copy_device_async(std::uintptr_t dst, std::uintptr_t src, std::size_t n, Stream s) override;
  void stream_wait(Stream s, Event e) override;
  void register_host(void* p, std::size_t n) override;
  void unregister_host(void* p) override;
  bool can_access_peer(int peer) override;
  void grant_peer(std::uintptr_t va, std::size_t size, int peer) override;

 private:
  void maybe_fail(FaultSite site);  // throws when this call is to fail

  mutable std::mutex mu_;
  std::array<int, kNumFaultSites> countdown_{};
  double p_ = 0;
  std::array<bool, kNumFaultSites> random_sites_{};
  std::array<Errc, kNumFaultSites> codes_{};
  bool codes_set_ = false;
  std::uint64_t rng_ = 0;
  std::array<std::uint64_t, kNumFaultSites> injected_{};
};

}  // namespace memlake::prim
