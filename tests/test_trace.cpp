// Trace reading and replay.
#include <cstdio>
#include <fstream>

#include "support.h"
#include "trace/replay.h"
#include "memlake/memlake.h"
#include "trace/trace.h"

namespace memlake::test {
namespace {

std::string tmp_path(const std::string& name) {
  return ::testing::TempDir() + "memlake_" + std::to_string(::getpid()) + "_" + name;
}

std::string write_text(const std::string& name, const std::string& body) {
  std::string p = tmp_path(name);
  std::ofstream(p) << body;
  return p;
}

TEST(Trace, ReadsPlainAndGzipAlike) {
  const std::string gz = tmp_path("t.csv.gz");
  {
    trace::Writer w(gz);
    w.write({trace::Action::segment_alloc, 0, 0x1000, 4 << 20, 0, 0});
    w.write({trace::Action::allocate, 1, 0x1000, 3 << 20, 0, 0});
    w.write({trace::Action::free, 2, 0x1000, 3 << 20, 0, 0});
  }
  trace::Reader r(gz);
  trace::Event e;
  ASSERT_TRUE(r.next(e));
  EXPECT_EQ(e.action, trace::Action::segment_alloc);
  ASSERT_TRUE(r.next(e));
  EXPECT_EQ(e.action, trace::Action::allocate);
  EXPECT_EQ(e.ptr, 0x1000u);
  EXPECT_EQ(e.size, 3u << 20);
  EXPECT_EQ(e.time_us, 1u);
  ASSERT_TRUE(r.next(e));
  EXPECT_FALSE(r.next(e));
  std::remove(gz.c_str());
}

TEST(Trace, BrokenLineNamesItsLineNumberAndReaderGoesOn) {
  auto p = write_text("bad.csv",
                      "Thread,Time,Action,Pointer,Size,Stream\n"
                      "0,0,allocate,0x10,100,0\n"
                      "0,1,allocate,0x20,12ab,0\n"
                      "0,2,resize,0x20,5,0\n"
                      "0,3,free\n"
                      "0,4,free,0x10,100,0\n");
  trace::Reader r(p);
  trace::Event e;
  ASSERT_TRUE(r.next(e));
  std::string msg;
  EXPECT_EQ(error_of([&] { r.next(e); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find(":3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad size"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { r.next(e); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find(":4: unknown action 'resize'"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { r.next(e); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find(":5: expected 6 fields, found 3"), std::string::npos) << msg;
  ASSERT_TRUE(r.next(e));
  EXPECT_EQ(e.action, trace::Action::free);
  std::remove(p.c_str());
}

TEST(Trace, HeaderWithoutRequiredColumnsIsRejected) {
  auto p = write_text("hdr.csv", "a,b,c\n1,2,3\n");
  std::string msg;
  EXPECT_EQ(error_of([&] { trace::Reader r(p); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("lacks a required column"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { trace::Reader r(tmp_path("missing.csv")); }, &msg), Errc::invalid_argument);
  std::remove(p.c_str());
}

TEST(Replay, MeasuresUtilizationAndNativeBaseline) {
  // Fragmenting pattern: 8 x 1 MiB-and-a-bit live, free every other, then
  // ask for 4 x 2-page blocks: a non-stitching allocator must grow.
  std::string body = "Thread,Time,Action,Pointer,Size,Stream\n0,0,segment_alloc,0x0,67108864,0\n";
  const std::uint64_t page = 2 << 20;
  for (int i = 0; i < 8; ++i) body += "0,1,allocate," + std::to_string(0x100000000ull + i * page) + "," + std::to_string(page) + ",0\n";
  for (int i = 0; i < 8; i += 2) body += "0,2,free," + std::to_string(0x100000000ull + i * page) + "," + std::to_string(page) + ",0\n";
  for (int i = 0; i < 2; ++i) body += "0,3,allocate," + std::to_string(0x200000000ull + i * 2 * page) + "," + std::to_string(2 * page) + ",0\n";
  auto p = write_text("frag.csv", body);
  trace::ReplayConfig cfg;
  cfg.options.backend = "host";
  cfg.check = true;
  auto r = trace::replay(p, cfg);
  EXPECT_EQ(r.allocs, 10u);
  EXPECT_EQ(r.peak_live, 8 * page);
  EXPECT_EQ(r.stats.reserved.peak, 8 * page) << "stitching reuses the four freed pages";
  EXPECT_DOUBLE_EQ(r.utilization, 1.0);
  EXPECT_EQ(r.native_peak_reserved, 64u << 20);
  EXPECT_EQ(r.stats.stitches, 2u);
  cfg.options.stitch = false;
  auto n = trace::replay(p, cfg);
  EXPECT_EQ(n.stats.reserved.peak, 12 * page) << "without stitching the 2-page blocks need new memory";
  EXPECT_NE(trace::replay_json(r).find("\"utilization\":1.000000"), std::string::npos);
  EXPECT_NE(trace::replay_text(r).find("utilization       1.0000"), std::string::npos);
  // The sweep table (memlake replay --sweep stitch=1,0): one row per value.
  const std::string t = trace::sweep_text("stitch", {"1", "0"}, {r, n});
  EXPECT_NE(t.find("\nstitch "), std::string::npos) << t;
  EXPECT_NE(t.find(" util "), std::string::npos) << t;
  EXPECT_NE(t.find("\n1                1.0000"), std::string::npos) << t;
  EXPECT_NE(t.find("\n0                0.6667"), std::string::npos) << t;
  const std::string j = trace::sweep_json("stitch", {"1", "0"}, {r, n});
  EXPECT_EQ(j.rfind("{\"key\":\"stitch\",\"runs\":[{\"value\":\"1\",\"replay\":{", 0), 0u) << j;
  std::remove(p.c_str());
}

// The timeline of `memlake report`: bounded however long the trace, buckets cover every
// event once and in order, and the peaks survive the merging (min/max per bucket).
TEST(Replay, TimelineIsBoundedAndKeepsThePeaks) {
  const std::uint64_t page = 2 << 20;
  std::string body = "Thread,Time,Action,Pointer,Size,Stream\n0,0,segment_alloc,0x0,1073741824,0\n";
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t size = (i == 617 ? 40 : 1 + i % 3) * page;  // one spike, late in the trace
    body += "0," + std::to_string(10 + i) + ",allocate,0x100000000," + std::to_string(size) + ",0\n";
    body += "0," + std::to_string(10 + i) + ",free,0x100000000," + std::to_string(size) + ",0\n";
  }
  auto p = write_text("timeline.csv", body);
  trace::ReplayConfig cfg;
  cfg.options.backend = "host";
  cfg.timeline_buckets = 16;
  auto r = trace::replay(p, cfg);
  ASSERT_EQ(r.events, 2001u);
  ASSERT_GE(r.timeline.size(), 8u);
  ASSERT_LE(r.timeline.size(), 16u);
  std::uint64_t next = 1, live = 0, reserved = 0, native = 0;
  for (const trace::TimelineBucket& b : r.timeline) {
    EXPECT_EQ(b.first_event, next);
    EXPECT_GE(b.last_event, b.first_event);
    next = b.last_event + 1;
    for (int i = 0; i < trace::kTimelineSeries; ++i) {
      EXPECT_LE(b.lo[i].value, b.hi[i].value);
      EXPECT_GE(b.lo[i].event, b.first_event);
      EXPECT_LE(b.hi[i].event, b.last_event);
    }
    live = std::max(live, b.hi[trace::kLive].value);
    reserved = std::max(reserved, b.hi[trace::kReserved].value);
    native = std::max(native, b.hi[trace::kNativeReserved].value);
    EXPECT_EQ(b.lo[trace::kLive].value, 0u) << "every bucket of more than one event has a free in it";
  }
  EXPECT_EQ(next, r.events + 1);
  EXPECT_EQ(live, 40 * page);
  EXPECT_EQ(live, r.peak_live);
  EXPECT_EQ(reserved, r.stats.reserved.peak);
  EXPECT_EQ(native, r.native_peak_reserved);
  cfg.timeline_buckets = 0;
  EXPECT_TRUE(trace::replay(p, cfg).timeline.empty());
}

TEST(Replay, LateMapsCountOnlyTheTracesSecondHalf) {
  // The same request repeated: everything after the first one is a cache hit,
  // so the second half maps nothing. A new, larger size in the second half maps.
  const std::uint64_t page = 2 << 20;
  auto loop = [&](std::string& body, int n, std::uint64_t ptr, std::uint64_t size) {
    for (int i = 0; i < n; ++i) {
      body += "0,1,allocate," + std::to_string(ptr) + "," + std::to_string(size) + ",0\n";
      body += "0,2,free," + std::to_string(ptr) + "," + std::to_string(size) + ",0\n";
    }
  };
  std::string settled = "Thread,Time,Action,Pointer,Size,Stream\n", changing = settled;
  loop(settled, 1000, 0x100000000ull, 3 * page);
  loop(changing, 500, 0x100000000ull, 3 * page);
  loop(changing, 500, 0x100000000ull, 5 * page);
  trace::ReplayConfig cfg;
  cfg.options.backend = "host";
  cfg.options.handle_size = 0;
  const auto a = write_text("settled.csv", settled), b = write_text("changing.csv", changing);
  const auto ra = trace::replay(a, cfg), rb = trace::replay(b, cfg);
  EXPECT_EQ(ra.stats.calls[prim::Op::map], 3u);
  EXPECT_EQ(ra.late_maps, 0u);
  EXPECT_GT(rb.late_maps, 0u);
  EXPECT_EQ(rb.late_maps, rb.stats.calls[prim::Op::map] - 3u) << "the first half mapped the 3-page view only";
  EXPECT_NE(trace::replay_json(rb).find("\"late_maps\":" + std::to_string(rb.late_maps)), std::string::npos);
  EXPECT_NE(trace::sweep_text("x", {"1"}, {rb}).find(" late map "), std::string::npos);
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST(Replay, MalformedLineStopsWithItsNumber) {
  auto p = write_text("stop.csv",
                      "Thread,Time,Action,Pointer,Size,Stream\n0,0,allocate,0x10,4096,0\n0,1,allocate,0x10,4096,0\n");
  trace::ReplayConfig cfg;
  cfg.options.backend = "host";
  std::string msg;
  EXPECT_EQ(error_of([&] { trace::replay(p, cfg); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find(":3: pointer 0x10 allocated twice"), std::string::npos) << msg;
  std::remove(p.c_str());
}

TEST(Replay, CapTurnsIntoCountedOutOfMemory) {
  auto p = write_text("cap.csv",
                      "Thread,Time,Action,Pointer,Size,Stream\n0,0,allocate,0x10,4194304,0\n"
                      "0,1,allocate,0x20,4194304,0\n0,2,free,0x20,4194304,0\n0,3,free,0x10,4194304,0\n");
  trace::ReplayConfig cfg;
  cfg.options.backend = "host";
  cfg.options.memory_cap = 6 << 20;
  auto r = trace::replay(p, cfg);
  EXPECT_EQ(r.ooms, 1u);
  EXPECT_EQ(r.unmatched_frees, 1u) << "the free of the refused allocation";
  EXPECT_EQ(r.stats.num_ooms, 1u);
  // The first refusal is kept with its line and the allocator's message (sizes and cap).
  EXPECT_EQ(r.first_oom_line, 3u);
  EXPECT_NE(r.first_oom.find("cannot allocate 4.00 MiB"), std::string::npos) << r.first_oom;
  EXPECT_NE(r.first_oom.find("cap 6.00 MiB"), std::string::npos) << r.first_oom;
  EXPECT_NE(trace::replay_text(r).find("the first, at line 3: out of memory"), std::string::npos)
      << trace::replay_text(r);
  EXPECT_NE(trace::replay_json(r).find("\"first_oom_line\":3,"), std::string::npos);
  std::remove(p.c_str());
}

TEST(Tracing, TraceOptionWritesAReplayableLog) {
  for (const char* name : {"cap.csv", "cap.csv.gz"}) {
    const std::string path = tmp_path(std::string("traced_") + name);
    memlake_options* o = nullptr;
    ASSERT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
    memlake_options_set(o, "backend", "host");
    memlake_options_set(o, "trace", path.c_str());
    memlake_allocator* a = nullptr;
    ASSERT_EQ(memlake_create(o, &a), MEMLAKE_OK) << memlake_last_error();
    void *p1, *p2, *p3;
    memlake_alloc(a, 5 << 20, 0, nullptr, &p1);
    memlake_alloc(a, 100, 0, nullptr, &p2);
    memlake_free(a, p1, 0, nullptr);
    memlake_alloc(a, 3 << 20, 0, nullptr, &p3);
    int x;
    EXPECT_NE(memlake_free(a, &x, 0, nullptr), MEMLAKE_OK);  // a failed free is not traced
    memlake_free(a, p2, 0, nullptr);
    memlake_free(a, p3, 0, nullptr);
    memlake_destroy(a);
    memlake_options_destroy(o);
    trace::Reader r(path);
    trace::Event e;
    std::vector<trace::Event> ev;
    while (r.next(e)) ev.push_back(e);
    ASSERT_EQ(ev.size(), 6u) << name;
    EXPECT_EQ(ev[0].action, trace::Action::allocate);
    EXPECT_EQ(ev[0].size, 5u << 20);
    EXPECT_EQ(ev[0].ptr, reinterpret_cast<std::uintptr_t>(p1));
    EXPECT_EQ(ev[2].action, trace::Action::free);
    EXPECT_EQ(ev[2].ptr, reinterpret_cast<std::uintptr_t>(p1));
    EXPECT_EQ(ev[2].size, 5u << 20);
    EXPECT_LE(ev[0].time_us, ev[5].time_us);
    trace::ReplayConfig cfg;
    cfg.options.backend = "host";
    auto rr = trace::replay(path, cfg);
    EXPECT_EQ(rr.allocs, 3u);
    EXPECT_EQ(rr.frees, 3u);
    EXPECT_EQ(rr.unmatched_frees, 0u);
    std::remove(path.c_str());
  }
}

TEST(Tracing, UnwritablePathIsAClearError) {
  memlake_options* o = nullptr;
  ASSERT_EQ(memlake_options_create(&o, 0), MEMLAKE_OK);
  memlake_options_set(o, "backend", "host");
  memlake_options_set(o, "trace", "/nonexistent/dir/t.csv");
  memlake_allocator* a = nullptr;
  EXPECT_EQ(memlake_create(o, &a), MEMLAKE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memlake_last_error()).find("cannot write trace"), std::string::npos) << memlake_last_error();
  memlake_options_destroy(o);
}

TEST(Replay, SharedTraceIfPresent) {
  const std::string p = MEMLAKE_SHARED_TRACES "/opt13b-LR.csv.gz";
  if (!std::ifstream(p)) GTEST_SKIP() << "no shared trace at " << p;
  trace::ReplayConfig cfg;
  cfg.options.backend = "host";
  cfg.check = true;
  auto r = trace::replay(p, cfg);
  EXPECT_EQ(r.allocs, 22328u);
  EXPECT_GE(r.utilization, 0.97);
}

}  // namespace
}  // namespace memlake::test
