// The primitives contract, on both backends.
#include "support.h"

namespace memlake::test {
namespace {

class PrimTest : public BackendTest {};

TEST_P(PrimTest, MapSetAccessWriteRead) {
  auto be = make_backend();
  const std::size_t g = be->granularity();
  auto va = be->reserve(2 * g, 0);
  EXPECT_EQ(va % g, 0u);
  auto h = be->create(2 * g);
  be->map(va, 2 * g, h);
  be->set_access(va, 2 * g, prim::Access::read_write);
  fill(*be, reinterpret_cast<void*>(va), 2 * g, 7);
  EXPECT_TRUE(holds(*be, reinterpret_cast<void*>(va), 2 * g, 7));
  be->unmap(va, 2 * g);
  be->release(h);
  be->free_reservation(va, 2 * g);
}

TEST_P(PrimTest, TwoMappingsOfOneHandleAlias) {
  auto be = make_backend();
  const std::size_t g = be->granularity();
  auto a = be->reserve(g, 0), b = be->reserve(g, 0);
  auto h = be->create(g);
  be->map(a, g, h);
  be->map(b, g, h);
  be->set_access(a, g, prim::Access::read_write);
  be->set_access(b, g, prim::Access::read_write);
  fill(*be, reinterpret_cast<void*>(a), g, 11);
  EXPECT_TRUE(holds(*be, reinterpret_cast<void*>(b), g, 11)) << "write through one view must be read through the other";
  be->unmap(a, g);
  EXPECT_TRUE(holds(*be, reinterpret_cast<void*>(b), g, 11)) << "unmapping one alias keeps the other";
  be->unmap(b, g);
  be->release(h);
  be->free_reservation(a, g);
  be->free_reservation(b, g);
}

TEST_P(PrimTest, HandleIsOnlyMappedWhole) {
  auto be = make_backend();
  const std::size_t g = be->granularity();
  auto va = be->reserve(2 * g, 0);
  auto h = be->create(2 * g);
  EXPECT_NE(error_of([&] { be->map(va, g, h); }), Errc::ok) << "mapping part of a handle must fail";
  be->release(h);
  be->free_reservation(va, 2 * g);
}

TEST_P(PrimTest, UnalignedSizeRejected) {
  auto be = make_backend();
  EXPECT_NE(error_of([&] { be->create(be->granularity() + 1); }), Errc::ok);
}

TEST_P(PrimTest, EventsAndStreams) {
  auto be = make_backend();
  prim::Stream s = be->create_stream();
  prim::Event e = be->record_event(s);
  be->wait_event(e);
  EXPECT_TRUE(be->query_event(e));
  be->destroy_event(e);
  be->synchronize_stream(s);
  EXPECT_TRUE(be->query_stream(s)) << "synchronised: nothing pending";
  be->destroy_stream(s);
}

TEST_P(PrimTest, StreamsNotCapturedAreSaidSo) {
  auto be = make_backend();
  EXPECT_FALSE(be->is_capturing(nullptr)) << "the legacy default stream is never captured";
  prim::Stream s = be->create_stream();
  EXPECT_FALSE(be->is_capturing(s));
  be->destroy_stream(s);
}

MEMLAKE_INSTANTIATE_BACKENDS(PrimTest);

// Host-only rules the CUDA driver enforces too, checked precisely here.
TEST(HostBackend, MappingIsInaccessibleUntilSetAccess) {
  prim::HostBackend be(0, 64 << 10, 0);
  auto va = be.reserve(64 << 10, 0);
  auto h = be.create(64 << 10);
  be.map(va, 64 << 10, h);
  char c = 1;
  EXPECT_EQ(error_of([&] { be.write(va, &c, 1); }), Errc::invalid_argument);
  be.set_access(va, 64 << 10, prim::Access::read);
  EXPECT_EQ(error_of([&] { be.write(va, &c, 1); }), Errc::invalid_argument) << "read-only mapping";
  be.set_access(va, 64 << 10, prim::Access::read_write);
  EXPECT_EQ(error_of([&] { be.write(va, &c, 1); }), Errc::ok);
  be.unmap(va, 64 << 10);
  be.release(h);
  be.free_reservation(va, 64 << 10);
  EXPECT_EQ(be.live_handles(), 0u);
}

TEST(HostBackend, RejectsDoubleMapAndPartialUnmap) {
  prim::HostBackend be(0, 64 << 10, 0);
  const std::size_t g = 64 << 10;
  auto va = be.reserve(2 * g, 0);
  auto h1 = be.create(g), h2 = be.create(g);
  be.map(va, g, h1);
  EXPECT_EQ(error_of([&] { be.map(va, g, h2); }), Errc::invalid_argument);
  be.map(va + g, g, h2);
  std::string msg;
  EXPECT_EQ(error_of([&] { be.unmap(va, g / 2); }, &msg), Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { be.free_reservation(va, 2 * g); }), Errc::invalid_argument) << "still mapped";
  be.unmap(va, 2 * g);  // several whole mappings at once
  be.release(h1);
  be.release(h2);
  be.free_reservation(va, 2 * g);
  EXPECT_EQ(be.live_handles(), 0u);
  EXPECT_EQ(be.live_reservations(), 0u);
}

TEST(HostBackend, ReleasedWhileMappedLivesUntilUnmapped) {
  prim::HostBackend be(0, 64 << 10, 0);
  const std::size_t g = 64 << 10;
  auto va = be.reserve(g, 0);
  auto h = be.create(g);
  be.map(va, g, h);
  be.set_access(va, g, prim::Access::read_write);
  fill(be, reinterpret_cast<void*>(va), g, 3);
  be.release(h);
  EXPECT_TRUE(holds(be, reinterpret_cast<void*>(va), g, 3));
  EXPECT_EQ(be.live_handles(), 1u);
  be.unmap(va, g);
  EXPECT_EQ(be.live_handles(), 0u);
  be.free_reservation(va, g);
}

TEST(HostBackend, MemoryLimitIsOutOfMemory) {
  prim::HostBackend be(0, 64 << 10, 128 << 10);
  auto a = be.create(128 << 10);
  std::string msg;
  EXPECT_EQ(error_of([&] { be.create(64 << 10); }, &msg), Errc::out_of_memory);
  EXPECT_NE(msg.find("limit"), std::string::npos) << msg;
  be.release(a);
}

TEST(HostBackend, HeldStreamCompletesOnWait) {
  prim::HostBackend be(0, 64 << 10, 0);
  prim::Stream s = be.create_stream();
  EXPECT_TRUE(be.query_stream(s));
  be.hold(s);
  prim::Event e = be.record_event(s);
  EXPECT_FALSE(be.query_event(e));
  EXPECT_FALSE(be.query_stream(s)) << "held: its work is pending";
  be.wait_event(e);
  EXPECT_TRUE(be.query_event(e));
  EXPECT_TRUE(be.query_stream(s));
  be.destroy_event(e);
  be.destroy_stream(s);
}

TEST(HostBackend, DeviceLagCompletesWorkLaterOrWhenWaitedFor) {
  prim::HostBackend be(0, 64 << 10, 0);
  prim::Stream s = be.create_stream();
  be.set_lag(100);
  be.advance_clock(1000);
  prim::Event e = be.record_event(s);  // work queued up to 1000 completes at 1100
  be.advance_clock(1050);
  EXPECT_FALSE(be.query_event(e));
  EXPECT_FALSE(be.query_stream(s)) << "work queued at 1000 is still running";
  be.advance_clock(1100);
  EXPECT_TRUE(be.query_event(e));
  EXPECT_FALSE(be.query_stream(s)) << "work queued at 1050 is not";
  be.advance_clock(1040);  // the clock never moves back
  prim::Event f = be.record_event(s);
  EXPECT_FALSE(be.query_event(f));
  be.wait_event(f);  // the host blocks until the device has run it
  EXPECT_TRUE(be.query_event(f));
  EXPECT_TRUE(be.query_stream(s)) << "nothing queued since";
  be.advance_clock(1150);
  EXPECT_FALSE(be.query_stream(s)) << "work queued at 1100 is pending again";
  prim::Event g = be.record_event(s);
  be.synchronize_device();
  EXPECT_TRUE(be.query_event(g));
  be.set_lag(0);
  be.advance_clock(1200);
  EXPECT_TRUE(be.query_stream(s)) << "no lag: work completes at once";
  for (prim::Event x : {e, f, g}) be.destroy_event(x);
  be.destroy_stream(s);
}

TEST(CudaBackend, AbsentDriverIsReportedClearly) {
  std::string why;
  if (prim::cuda_available(&why)) GTEST_SKIP() << "a CUDA driver is present";
  prim::BackendConfig c;
  c.kind = "cuda";
  std::string msg;
  EXPECT_EQ(error_of([&] { prim::make_backend(c); }, &msg), Errc::unavailable);
  EXPECT_NE(msg.find("cuda backend unavailable"), std::string::npos) << msg;
}

}  // namespace
}  // namespace memlake::test
