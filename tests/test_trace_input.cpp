// Traces as untrusted input and as output that must survive: bounded lines,
// truncated and corrupt gzip streams, real RMM logs, private trace files,
// reported write errors, flushing on a timer and on SIGTERM.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#if MEMLAKE_HAVE_ZLIB
#include <zlib.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "support.h"
#include "trace/replay.h"
#include "trace/trace.h"
#include "trace/tracer.h"

#if MEMLAKE_HAVE_ZLIB  // gzip traces throughout
namespace memlake::test {
namespace {

std::string tmp_path(const std::string& name) {
  return ::testing::TempDir() + "memlake_in_" + std::to_string(::getpid()) + "_" + name;
}

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::string write_gz(const std::string& name, const std::string& body) {
  const std::string p = tmp_path(name);
  gzFile g = gzopen(p.c_str(), "wb");
  gzwrite(g, body.data(), static_cast<unsigned>(body.size()));
  gzclose(g);
  return p;
}

const char* kHeader = "Thread,Time,Action,Pointer,Size,Stream\n";

// Reads every event; returns the count, or throws what the reader threw.
std::uint64_t count_events(const std::string& p, trace::ReaderOptions o = {}, bool* truncated = nullptr) {
  trace::Reader r(p, o);
  trace::Event e;
  std::uint64_t n = 0;
  while (r.next(e)) ++n;
  if (truncated) *truncated = r.truncated();
  return n;
}

TEST(TraceInput, AGzipBombLineIsABoundedErrorWithFileAndLine) {
  // 16 MiB of one line, 16 KiB compressed: the reader used to buffer it whole
  // (a larger one ended in bad_alloc) and quote it whole in the message.
  std::string body = std::string(kHeader) + "0,0,allocate,0x10,4096,0\n" + std::string(16 << 20, 'a') + "\n";
  const std::string p = write_gz("bomb.csv.gz", body);
  body.clear();
  EXPECT_LT(read_file(p).size(), 100000u);
  std::string msg;
  EXPECT_EQ(error_of([&] { count_events(p); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find(p + ":3: line longer than 4096 bytes"), std::string::npos) << msg.substr(0, 300);
  EXPECT_LT(msg.size(), 400u);
  std::remove(p.c_str());
}

TEST(TraceInput, ErrorMessagesQuoteAtMost80BytesAndEscapeControlBytes) {
  const std::string p = tmp_path("ctl.csv");
  write_file(p, std::string(kHeader) + "0,0,\x1b[2Jallocate" + std::string(300, 'x') + ",0x10,4096,0\n");
  std::string msg;
  EXPECT_EQ(error_of([&] { count_events(p); }, &msg), Errc::invalid_argument);
  EXPECT_EQ(msg.find('\x1b'), std::string::npos) << msg;
  EXPECT_NE(msg.find("\\x1b[2J"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 400u) << msg;
  std::remove(p.c_str());
}

std::string events_body(int n) {
  std::string body = kHeader;
  for (int i = 0; i < n; ++i) {
    char line[96];
    std::snprintf(line, sizeof line, "0,%d,allocate,0x%x,4096,0\n0,%d,free,0x%x,4096,0\n", 2 * i, 0x1000 * (i + 1),
                  2 * i + 1, 0x1000 * (i + 1));
    body += line;
  }
  return body;
}

TEST(TraceInput, AGzipTraceCutAtALineBoundaryIsAnError) {
  const std::string p = write_gz("whole.csv.gz", events_body(200));
  ASSERT_EQ(count_events(p), 400u);
  const std::string bytes = read_file(p);
  // Without its 8-byte trailer (CRC, length) every line still decompresses:
  // this replayed as a complete trace.
  const std::string cut = tmp_path("cut.csv.gz");
  write_file(cut, bytes.substr(0, bytes.size() - 8));
  std::string msg;
  EXPECT_EQ(error_of([&] { count_events(cut); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find(cut + ":"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gzip stream ends early"), std::string::npos) << msg;
  // A replay refuses it as well, after releasing what it allocated.
  trace::ReplayConfig cfg;
  cfg.options.backend = "host";
  EXPECT_EQ(error_of([&] { trace::replay(cut, cfg); }), Errc::invalid_argument);
  // Asked for, the readable prefix is there, and said to be a prefix.
  bool truncated = false;
  EXPECT_EQ(count_events(cut, {true}, &truncated), 400u);
  EXPECT_TRUE(truncated);
  std::remove(cut.c_str());
  std::remove(p.c_str());
}

TEST(TraceInput, AGzipTraceCutMidStreamGivesOnlyWholeLines) {
  const std::string p = write_gz("mid.csv.gz", events_body(2000));
  const std::string bytes = read_file(p);
  const std::string cut = tmp_path("mid_cut.csv.gz");
  write_file(cut, bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(error_of([&] { count_events(cut); }), Errc::invalid_argument);
  bool truncated = false;
  const std::uint64_t n = count_events(cut, {true}, &truncated);  // no "bad line" for the cut one
  EXPECT_TRUE(truncated);
  EXPECT_GT(n, 0u);
  EXPECT_LT(n, 4000u);
  std::remove(cut.c_str());
  std::remove(p.c_str());
}

TEST(TraceInput, AGzipTraceWithABadCrcIsAnError) {
  const std::string p = write_gz("crc.csv.gz", events_body(50));
  std::string bytes = read_file(p);
  bytes[bytes.size() - 8] = static_cast<char>(bytes[bytes.size() - 8] ^ 0x55);  // the CRC's first byte
  write_file(p, bytes);
  std::string msg;
  EXPECT_EQ(error_of([&] { count_events(p, {true}); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("cannot read"), std::string::npos) << msg;
  std::remove(p.c_str());
}

// Lines exactly as RMM's logging_resource_adaptor writes them: spdlog's
// "%t,%H:%M:%S.%f," then "allocate,{},{},{}" (fmt: pointers as 0x..., a null
// one as 0x0) or, in RMM's later printf style, "allocate,%llx,%zu,%llx"
// (hex without 0x); "allocate failure" with a null pointer when the
// upstream resource threw.
TEST(TraceInput, ReadsRealRmmLogsBothPointerStyles) {
  const std::string fmt_style =
      "Thread,Time,Action,Pointer,Size,Stream\n"
      "140573312345856,23:59:59.998000,allocate,0x7f8a40000000,1048576,0x0\n"
      "140573312345856,23:59:59.999000,allocate,0x7f8a40100000,2097152,0x55d3c1a0\n"
      "140573312345856,23:59:59.999500,allocate failure,0x0,85899345920,0x0\n"
      "140573312345856,00:00:00.000250,free,0x7f8a40000000,1048576,0x0\n"
      "140573312345856,00:00:00.001000,free,0x7f8a40100000,2097152,0x55d3c1a0\n";
  const std::string printf_style =
      "Thread,Time,Action,Pointer,Size,Stream\n"
      "140573312345856,10:00:00.000001,allocate,7f8a40000000,1048576,0\n"
      "140573312345856,10:00:00.000002,allocate,7f8a40100000,2097152,55d3c1a0\n"
      "140573312345856,10:00:00.000003,allocate failure,0,85899345920,0\n"
      "140573312345856,10:00:00.000004,free,7f8a40000000,1048576,0\n"
      "140573312345856,10:00:00.000005,free,7f8a40100000,2097152,55d3c1a0\n";
  for (const std::string& body : {fmt_style, printf_style}) {
    const std::string p = tmp_path("rmm.csv");
    write_file(p, body);
    trace::Reader r(p);
    trace::Event e;
    ASSERT_TRUE(r.next(e));
    EXPECT_EQ(e.action, trace::Action::allocate);
    EXPECT_EQ(e.ptr, 0x7f8a40000000u);
    EXPECT_EQ(e.thread, 140573312345856u);
    const std::uint64_t t0 = e.time_us;
    ASSERT_TRUE(r.next(e));
    EXPECT_EQ(e.stream, 0x55d3c1a0u);
    ASSERT_TRUE(r.next(e));
    EXPECT_EQ(e.action, trace::Action::allocate_failure);
    EXPECT_EQ(e.size, 85899345920u);
    ASSERT_TRUE(r.next(e));
    EXPECT_EQ(e.action, trace::Action::free);
    if (&body == &fmt_style) { EXPECT_EQ(e.time_us - t0, 2250u) << "past midnight the clock is unwrapped"; }
    trace::ReplayConfig cfg;
    cfg.options.backend = "host";
    const auto rr = trace::replay(p, cfg);
    EXPECT_EQ(rr.allocs, 2u);
    EXPECT_EQ(rr.frees, 2u);
    EXPECT_EQ(rr.unmatched_frees, 0u);
    EXPECT_EQ(rr.recorded_failures, 1u);
    EXPECT_NE(trace::replay_json(rr).find("\"recorded_failures\":1"), std::string::npos);
    EXPECT_NE(trace::replay_text(rr).find("recorded failures 1"), std::string::npos);
    std::remove(p.c_str());
  }
}

TEST(TraceInput, TimeInSecondsWithAFractionIsMicroseconds) {
  const std::string p = tmp_path("secs.csv");
  write_file(p, std::string(kHeader) + "1,1634567890.123456,allocate,0x7f8a40000000,1024,0x7f8a38001020\n"
                                       "1,1634567890.5,deallocate,0x7f8a40000000,1024,0x7f8a38001020\n");
  trace::Reader r(p);
  trace::Event e;
  ASSERT_TRUE(r.next(e));
  EXPECT_EQ(e.time_us, 1634567890123456u);
  ASSERT_TRUE(r.next(e));
  EXPECT_EQ(e.action, trace::Action::free);
  EXPECT_EQ(e.time_us, 1634567890500000u);
  std::remove(p.c_str());
}

TEST(TraceOutput, FilesArePrivateAndSymlinksAreRefused) {
  const std::string p = tmp_path("priv.csv"), target = tmp_path("victim"), link = tmp_path("link.csv.gz");
  { trace::Writer w(p); }
  struct stat st{};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::chmod(p.c_str(), 0644), 0);  // an existing file is made private too
  { trace::Writer w(p); }
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  write_file(target, "precious");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  std::string msg;
  EXPECT_EQ(error_of([&] { trace::Tracer t(link); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("symbolic link"), std::string::npos) << msg;
  EXPECT_EQ(read_file(target), "precious") << "the link's target was truncated";
  for (const std::string& f : {p, target, link}) std::remove(f.c_str());
}

TEST(TraceOutput, PidAndRankInThePath) {
  const std::string pid = std::to_string(::getpid());
  ::unsetenv("RANK");
  ::unsetenv("LOCAL_RANK");
  EXPECT_EQ(trace::expand_trace_path("t.%p.%r.csv.gz"), "t." + pid + ".0.csv.gz");
  ::setenv("LOCAL_RANK", "5", 1);
  EXPECT_EQ(trace::expand_trace_path("t.%r"), "t.5");
  ::setenv("RANK", "12", 1);
  EXPECT_EQ(trace::expand_trace_path("t.%r"), "t.12");
  ::setenv("RANK", "../x", 1);  // never a path separator
  EXPECT_EQ(trace::expand_trace_path("t.%r"), "t.____");
  EXPECT_EQ(trace::expand_trace_path("100%%.%q"), "100%.%q");
  ::unsetenv("RANK");
  ::unsetenv("LOCAL_RANK");
  const std::string pattern = tmp_path("rank.%p.csv");
  {
    trace::Tracer t(pattern);
    EXPECT_EQ(t.path(), tmp_path("rank." + pid + ".csv"));
    t.allocated(reinterpret_cast<void*>(0x1000), 64, nullptr);
  }
  EXPECT_EQ(count_events(tmp_path("rank." + pid + ".csv")), 1u);
  std::remove(tmp_path("rank." + pid + ".csv").c_str());
}

TEST(TraceOutput, AWriteErrorIsReportedOnceAndCounted) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  ::testing::internal::CaptureStderr();
  {
    trace::Tracer t("/dev/full");
    for (int i = 0; i < 20000; ++i) t.allocated(reinterpret_cast<void*>(0x1000 + 64 * i), 64, nullptr);
    t.flush();
    for (int i = 0; i < 10; ++i) t.freed(reinterpret_cast<void*>(0x1000), 64, nullptr);
    t.flush();
    EXPECT_TRUE(t.write_failed());
    EXPECT_GE(t.events_lost(), 10u);
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("memlake: trace /dev/full: "), std::string::npos) << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_EQ(err.find("memlake: trace"), err.rfind("memlake: trace")) << "reported more than once: " << err;
}

// Forks a child that traces `n` events to `path` and then runs `then`.
pid_t traced_child(const std::string& path, int n, int ready_fd, void (*then)()) {
  const pid_t child = ::fork();
  if (child != 0) return child;
  ::alarm(60);  // never outlive the test
  {
    auto* t = new trace::Tracer(path);  // never destroyed: the process ends as `then` says
    for (int i = 0; i < n; ++i) t->allocated(reinterpret_cast<void*>(0x100000 + 0x1000 * i), 4096, nullptr);
    const char c = 'r';
    (void)!::write(ready_fd, &c, 1);
  }
  then();
  ::_exit(0);
}

// Named *DeathTest*: they fork (TSan's run leaves those out).
TEST(TraceOutputDeathTest, AKilledProcessLeavesAReadablePrefixWithinSeconds) {
  const std::string p = tmp_path("killed.csv.gz");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = traced_child(p, 500, fds[1], [] {
    for (;;) ::pause();
  });
  char c;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  // The events reach the file by the flusher's clock, without any exit or
  // signal: poll for them (generously), then SIGKILL.
  std::uint64_t n = 0;
  for (int i = 0; i < 100 && n < 500; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    try {
      n = count_events(p, {true});
    } catch (const Error&) {
      n = 0;  // not even a header yet
    }
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(n, 500u) << "events still buffered in the killed process";
  bool truncated = false;
  EXPECT_EQ(count_events(p, {true}, &truncated), 500u);
  EXPECT_TRUE(truncated) << "a killed process writes no gzip trailer";
  std::remove(p.c_str());
}

TEST(TraceOutputDeathTest, SigtermLeavesACompleteTrace) {
  const std::string p = tmp_path("termed.csv.gz");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = traced_child(p, 700, fds[1], [] { ::raise(SIGTERM); });
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_TRUE(WIFSIGNALED(status)) << "SIGTERM's default action (termination) must still happen";
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(count_events(p), 700u) << "a complete gzip stream, every event in it";
  std::remove(p.c_str());
}

TEST(TraceOutputDeathTest, SigtermChainsToTheProgramsOwnHandler) {
  const std::string p = tmp_path("chained.csv.gz");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::alarm(60);
    static volatile sig_atomic_t got = 0;
    struct sigaction sa{};
    sa.sa_handler = [](int) { got = 1; };
    ::sigaction(SIGTERM, &sa, nullptr);  // the program's handler, installed before memlake's
    trace::Tracer t(p);
    for (int i = 0; i < 300; ++i) t.allocated(reinterpret_cast<void*>(0x100000 + 0x1000 * i), 4096, nullptr);
    ::raise(SIGTERM);
    // Still running: the trace is flushed (a readable prefix), not closed.
    bool ok = got == 1;
    try {
      ok = ok && count_events(p, {true}) == 300;
    } catch (...) {
      ok = false;
    }
    t.allocated(reinterpret_cast<void*>(0x10), 16, nullptr);
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the program's handler did not run, or the trace was not flushed";
  std::remove(p.c_str());
}

}  // namespace
}  // namespace memlake::test
#endif  // MEMLAKE_HAVE_ZLIB
