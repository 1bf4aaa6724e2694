// Backend decorators: composable layers over any Backend (RMM-style
// adaptors). CountingBackend counts every primitive call and the time spent
// in it (wall clock, two clock reads per call); FaultyBackend
// makes chosen calls fail, for tests of the layers above.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <initializer_list>
#include <mutex>

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

// Fails primitive calls on demand: fail_nth(op, n) makes the n-th next call
// of `op` (1 = the very next) throw Errc::driver (or out_of_memory for
// create); fail_randomly() fails each counted call with probability p.
class FaultyBackend final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  void fail_nth(Op op, int n);
  // Only the listed ops fail; an empty list means every op.
  void fail_randomly(double p, std::uint64_t seed, std::initializer_list<Op> ops = {});
  void stop_failing();
  std::uint64_t faults_injected() const { return injected_; }

 protected:
  void before(Op op) override;

 private:
  std::mutex mu_;
  std::array<int, kNumOps> countdown_{};
  double p_ = 0;
  std::array<bool, kNumOps> random_ops_{};
  std::uint64_t rng_ = 0;
  std::uint64_t injected_ = 0;
};

}  // namespace memlake::prim
