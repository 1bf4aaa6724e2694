// StreamTracker: which frees of a stream are known complete. An idle stream
// answers at once without an event (so a view freed on it can be repaired or
// reused by another stream right away); a busy one gets one event covering
// every free so far, and a later poll learns from it.
#include <gtest/gtest.h>

#include "core/stream_tracker.h"
#include "prim/host_backend.h"

namespace memlake::test {
namespace {

TEST(StreamTracker, AnIdleStreamIsCompleteWithoutAnEvent) {
  prim::HostBackend be(0, 64 << 10, 0);
  core::StreamTracker tracker(be);
  prim::Stream s = be.create_stream();
  const core::Tag t = tracker.tag_of(s);
  const std::uint64_t a = tracker.note_free(t);
  const std::uint64_t b = tracker.note_free(t);
  EXPECT_EQ(tracker.poll(t, a), b) << "idle: both frees complete";
  EXPECT_EQ(tracker.pending_events(), 0u);
  EXPECT_TRUE(tracker.done(t, b));
  be.destroy_stream(s);
}

TEST(StreamTracker, ABusyStreamIsLearnedFromOneEvent) {
  prim::HostBackend be(0, 64 << 10, 0);
  core::StreamTracker tracker(be);
  prim::Stream s = be.create_stream();
  const core::Tag t = tracker.tag_of(s);
  be.hold(s);  // kernels still running on s
  const std::uint64_t a = tracker.note_free(t);
  EXPECT_FALSE(tracker.done(t, a));
  EXPECT_EQ(tracker.pending_events(), 1u);
  EXPECT_FALSE(tracker.done(t, a)) << "still running";
  EXPECT_EQ(tracker.pending_events(), 1u) << "the event already covers it: no second one";
  const std::uint64_t b = tracker.note_free(t);  // a later free, after the hold
  tracker.wait(t, a);                             // lifts the hold
  EXPECT_TRUE(tracker.done(t, a));
  EXPECT_TRUE(tracker.done(t, b)) << "the stream is idle now: the later free is complete too";
  EXPECT_EQ(tracker.pending_events(), 0u);
  be.destroy_stream(s);
}

}  // namespace
}  // namespace memlake::test
