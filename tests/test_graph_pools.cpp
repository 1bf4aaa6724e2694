// CUDA graph pools (docs/design/graphs.md), on the host backend: memory a
// capture allocates stays the graph's until the graph is released, even once
// its users free it; nothing is queried or synchronised while a capture is in
// progress; a capture nobody announced is refused on the slow path.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/device_allocator.h"
#include "core/error.h"
#include "memlake/memlake.h"
#include "prim/decorators.h"
#include "prim/host_backend.h"

namespace memlake::test {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// The host backend, with streams that say they are being captured.
class CapturingBackend : public prim::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  bool is_capturing(prim::Stream s) override { return s == captured; }
  prim::Stream captured = nullptr;
};

Options host_options() {
  Options o;
  o.backend = "host";
  return o;
}

struct Fixture {
  prim::HostBackend* host = nullptr;
  CapturingBackend* capt = nullptr;
  std::unique_ptr<core::DeviceAllocator> d;
  Fixture() {
    auto h = std::make_unique<prim::HostBackend>(0, std::size_t{2} << 20, 0);
    host = h.get();
    auto c = std::make_unique<CapturingBackend>(std::move(h));
    capt = c.get();
    d = std::make_unique<core::DeviceAllocator>(std::move(c), host_options());
  }
  void fill(void* p, std::size_t n, unsigned char v) {
    std::vector<unsigned char> b(n, v);
    d->backend().write(reinterpret_cast<std::uintptr_t>(p), b.data(), n);
  }
  bool holds(void* p, std::size_t n, unsigned char v) {
    std::vector<unsigned char> b(n);
    d->backend().read(b.data(), reinterpret_cast<std::uintptr_t>(p), n);
    for (unsigned char x : b)
      if (x != v) return false;
    return true;
  }
};

Errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return Errc::ok;
}

TEST(GraphPools, BlocksFreedDuringCaptureStayTheGraphs) {
  Fixture f;
  prim::Stream s = f.d->backend().create_stream();
  prim::Stream other = f.d->backend().create_stream();
  f.d->capture_begin(s, 7);
  void* big = f.d->alloc(16 * kMiB, s);
  void* small = f.d->alloc(4096, s);
  f.fill(big, 16 * kMiB, 0xA1);
  f.fill(small, 4096, 0xB2);
  f.d->free(big);    // the graph's kernels still use it at every replay
  f.d->free(small);
  EXPECT_EQ(f.d->alloc(16 * kMiB, s), big) << "a later allocation of the capture reuses the pool's block";
  EXPECT_EQ(f.d->alloc(4096, s), small);
  f.d->free(big);
  f.d->free(small);
  f.d->capture_end(s);
  const auto gs = f.d->graph_stats();
  EXPECT_EQ(gs.pools, 1u);
  EXPECT_EQ(gs.free_blocks, 2u);
  // Nobody else gets that memory while the graph lives, on any stream.
  std::vector<void*> eager;
  for (prim::Stream st : {s, other, static_cast<prim::Stream>(nullptr)}) {
    for (int i = 0; i < 3; ++i) {
      void* p = f.d->alloc(16 * kMiB, st);
      void* q = f.d->alloc(4096, st);
      EXPECT_NE(p, big);
      EXPECT_NE(q, small);
      f.fill(p, 16 * kMiB, 0x11);
      f.fill(q, 4096, 0x22);
      eager.push_back(p);
      eager.push_back(q);
    }
  }
  EXPECT_TRUE(f.holds(big, 16 * kMiB, 0xA1)) << "no eager allocation aliases the graph's pages";
  EXPECT_TRUE(f.holds(small, 4096, 0xB2));
  for (void* p : eager) f.d->free(p);
  f.d->check();
  // Released: the memory serves others again.
  f.d->graph_pool_release(7);
  EXPECT_EQ(f.d->graph_stats().pools, 0u);
  EXPECT_EQ(f.d->graph_stats().free_blocks, 0u);
  f.d->check();
  EXPECT_EQ(f.d->stats().active.current, 0u);
  EXPECT_NO_THROW(f.d->empty_cache());
  EXPECT_EQ(f.d->stats().reserved.current, 0u) << "every page went back once the pool was released";
  f.d->backend().destroy_stream(s);
  f.d->backend().destroy_stream(other);
}

TEST(GraphPools, ALiveBlockOutlivesItsPool) {
  Fixture f;
  prim::Stream s = f.d->backend().create_stream();
  f.d->capture_begin(s, 1);
  void* out = f.d->alloc(10 * kMiB, s);  // the graph's static output, held by the user
  void* tmp = f.d->alloc(3 * kMiB, s);
  f.fill(out, 10 * kMiB, 0x5A);
  f.d->free(tmp);
  f.d->capture_end(s);
  f.d->graph_pool_release(1);
  EXPECT_TRUE(f.holds(out, 10 * kMiB, 0x5A));
  EXPECT_EQ(f.d->graph_stats().held_blocks, 1u);
  f.d->check();
  f.d->free(out);  // an ordinary free now, on the capture stream
  EXPECT_EQ(f.d->graph_stats().pools, 0u);
  EXPECT_EQ(f.d->stats().active.current, 0u);
  f.d->check();
  EXPECT_EQ(code_of([&] { f.d->free(out); }), Errc::invalid_argument) << "double free";
  f.d->backend().destroy_stream(s);
}

TEST(GraphPools, APoolSharedByGraphsLivesUntilTheLastIsReleased) {
  Fixture f;
  prim::Stream s = f.d->backend().create_stream();
  f.d->capture_begin(s, 3);
  void* a = f.d->alloc(8 * kMiB, s);
  f.d->free(a);
  f.d->capture_end(s);
  f.d->capture_begin(s, 3);  // a second graph into the same pool (pool=g1.pool())
  EXPECT_EQ(f.d->alloc(8 * kMiB, s), a) << "graphs sharing a pool share its freed blocks";
  f.d->free(a);
  f.d->capture_end(s);
  f.d->graph_pool_release(3);
  EXPECT_EQ(f.d->graph_stats().free_blocks, 1u) << "the second graph still uses it";
  f.d->graph_pool_release(3);
  EXPECT_EQ(f.d->graph_stats().pools, 0u);
  f.d->check();
  f.d->backend().destroy_stream(s);
}

TEST(GraphPools, MisuseIsReported) {
  Fixture f;
  prim::Stream s = f.d->backend().create_stream();
  EXPECT_EQ(code_of([&] { f.d->capture_end(s); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([&] { f.d->graph_pool_release(9); }), Errc::invalid_argument);
  f.d->capture_begin(s, 9);
  EXPECT_EQ(code_of([&] { f.d->capture_begin(s, 9); }), Errc::invalid_argument) << "captured twice";
  EXPECT_EQ(code_of([&] { f.d->graph_pool_release(9); }), Errc::invalid_argument) << "being captured into";
  EXPECT_EQ(code_of([&] { f.d->empty_cache(); }), Errc::invalid_argument) << "would synchronise during capture";
  void* p = f.d->alloc(4 * kMiB, s);
  f.d->free(p);
  EXPECT_EQ(code_of([&] { f.d->free(p); }), Errc::invalid_argument) << "a pool block freed twice";
  f.d->capture_end(s);
  f.d->graph_pool_release(9);
  f.d->check();
  f.d->backend().destroy_stream(s);
}

TEST(GraphPools, NothingIsQueriedOrSynchronisedDuringCapture) {
  Fixture f;
  prim::Stream s = f.d->backend().create_stream();
  prim::Stream busy = f.d->backend().create_stream();
  // Memory freed on a busy stream: an allocation elsewhere would normally
  // record an event there, query it, and under a cap wait for it.
  void* p = f.d->alloc(32 * kMiB, busy);
  f.host->hold(busy);
  f.d->free(p);
  const auto before = f.d->stats().calls;
  f.d->capture_begin(s, 5);
  void* q = f.d->alloc(32 * kMiB, s);  // grows: the busy stream's pages are not usable yet
  void* r = f.d->alloc(1000, s);
  f.d->free(r);
  f.d->capture_end(s);
  const auto during = f.d->stats().calls;
  EXPECT_EQ(during[prim::Op::event_record], before[prim::Op::event_record]);
  EXPECT_EQ(during[prim::Op::event_query], before[prim::Op::event_query]);
  EXPECT_EQ(during[prim::Op::synchronize], before[prim::Op::synchronize]);
  EXPECT_EQ(during[prim::Op::unmap], before[prim::Op::unmap]);
  f.d->free(q);
  f.d->graph_pool_release(5);  // synchronises the device: that lifts the hold
  f.d->check();
  f.d->backend().destroy_stream(s);
  f.d->backend().destroy_stream(busy);
}

TEST(GraphPools, AnUnannouncedCaptureIsRefusedOnTheSlowPath) {
  Fixture f;
  prim::Stream s = f.d->backend().create_stream();
  f.d->set_capture_guard(true);
  f.capt->captured = s;
  EXPECT_EQ(code_of([&] { f.d->alloc(16 * kMiB, s); }), Errc::invalid_argument)
      << "nothing cached fits: the slow path asks the driver and refuses";
  f.d->capture_begin(s, 2);
  void* p = nullptr;
  EXPECT_NO_THROW(p = f.d->alloc(16 * kMiB, s)) << "announced: served from the graph's pool";
  f.d->free(p);
  f.d->capture_end(s);
  f.d->graph_pool_release(2);
  f.d->set_capture_guard(false);
  f.capt->captured = nullptr;
  f.d->check();
  f.d->backend().destroy_stream(s);
}

TEST(GraphPools, TheCApi) {
  memlake_options* o = nullptr;
  ASSERT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
  ASSERT_EQ(memlake_options_set(o, "backend", "host"), MEMLAKE_OK);
  EXPECT_EQ(memlake_options_set(o, "capture_check", "sometimes"), MEMLAKE_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(memlake_options_set(o, "capture_check", "hooks"), MEMLAKE_OK);
  memlake_allocator* a = nullptr;
  ASSERT_EQ(memlake_create(o, &a), MEMLAKE_OK);
  memlake_options_destroy(o);
  void* s = reinterpret_cast<void*>(0x1234);  // any stream handle the backend accepts as a key
  ASSERT_EQ(memlake_capture_begin(a, 0, nullptr, 42), MEMLAKE_OK);
  void* p = nullptr;
  ASSERT_EQ(memlake_alloc(a, 5 << 20, 0, nullptr, &p), MEMLAKE_OK);
  ASSERT_EQ(memlake_free(a, p, 0, nullptr), MEMLAKE_OK);
  EXPECT_EQ(memlake_capture_end(a, 0, s), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memlake_graph_pool_release(a, 0, 42), MEMLAKE_ERROR_INVALID_ARGUMENT) << memlake_last_error();
  ASSERT_EQ(memlake_capture_end(a, 0, nullptr), MEMLAKE_OK);
  void* q = nullptr;
  ASSERT_EQ(memlake_alloc(a, 5 << 20, 0, nullptr, &q), MEMLAKE_OK);
  EXPECT_NE(q, p) << "the graph's block is not handed out";
  ASSERT_EQ(memlake_graph_pool_release(a, 0, 42), MEMLAKE_OK);
  EXPECT_EQ(memlake_graph_pool_release(a, 0, 42), MEMLAKE_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(memlake_free(a, q, 0, nullptr), MEMLAKE_OK);
  EXPECT_EQ(memlake_capture_begin(nullptr, 0, nullptr, 1), MEMLAKE_ERROR_INVALID_ARGUMENT);
  memlake_destroy(a);
}

}  // namespace
}  // namespace memlake::test
