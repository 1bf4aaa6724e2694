#include "trace/tracer.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

namespace memlake::trace {
namespace {

// Process-wide state of the open traces. Allocated once and never destroyed:
// the exit hook, the SIGTERM handler and tracers destroyed during static
// destruction all use it, in any order.
struct Registry {
  std::mutex mu;
  std::vector<Tracer*> tracers;
  bool closed_at_exit = false;       // the exit hook ran: nothing to flush any more
  std::thread flusher;               // flushes every tracer every second, while there are tracers
  bool flusher_running = false;
  std::uint64_t flusher_gen = 0;     // of the latest flusher started
  std::uint64_t stopped_gen = 0;     // flushers of this generation and older exit
  int wake[2] = {-1, -1};            // wakes the flusher: 's' stop, 't' SIGTERM
  std::atomic<pid_t> flusher_tid{0};     // set by the flusher once it runs
  std::atomic<bool> flusher_alive{false};  // started (perhaps not yet running), not stopped
  std::atomic<std::uint64_t> term_requests{0}, term_done{0};
  struct sigaction prev_term{};
  bool term_default_kills = false;   // the chained disposition is SIG_DFL: closing is safe
};

Registry& reg() {
  static Registry* r = new Registry;
  return *r;
}

pid_t gettid_safe() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

void flusher_loop(std::uint64_t gen) {
  Registry& r = reg();
  r.flusher_tid = gettid_safe();
  for (;;) {
    pollfd p{r.wake[0], POLLIN, 0};
    const int n = ::poll(&p, 1, 1000);
    bool term = false;
    if (n > 0) {
      char buf[16];
      const ssize_t got = ::read(r.wake[0], buf, sizeof buf);
      for (ssize_t i = 0; i < got; ++i)
        if (buf[i] == 't') term = true;
    }
    std::lock_guard<std::mutex> g(r.mu);
    // Stopping is decided under the lock (a wake-up byte only shortens the
    // wait): a newer flusher that took the byte does not leave this one running.
    if (gen <= r.stopped_gen) return;
    const std::uint64_t asked = r.term_requests.load();
    for (Tracer* t : r.tracers) {
      if (term && r.term_default_kills) t->close();  // the process ends now: a complete file
      else t->flush();
    }
    if (term) r.term_done = asked;
  }
}

// Stops the flusher (r.mu held); the caller joins the returned thread
// without the lock.
std::thread stop_flusher_locked(Registry& r) {
  if (!r.flusher_running) return {};
  r.stopped_gen = r.flusher_gen;
  r.flusher_running = false;
  r.flusher_alive = false;
  const char c = 's';
  (void)!::write(r.wake[1], &c, 1);
  return std::move(r.flusher);
}

// SIGTERM: let the flusher write every trace out, wait for it (bounded, with
// async-signal-safe calls only), then chain to the previous disposition.
void on_term(int sig, siginfo_t* info, void* ctx) {
  const int saved = errno;
  Registry& r = reg();
  if (r.flusher_alive.load() && r.flusher_tid.load() != gettid_safe()) {
    const std::uint64_t ticket = r.term_requests.fetch_add(1) + 1;
    const char c = 't';
    (void)!::write(r.wake[1], &c, 1);
    for (int i = 0; i < 300 && r.term_done.load() < ticket; ++i) {  // at most 3 s
      timespec ts{0, 10 * 1000 * 1000};
      ::nanosleep(&ts, nullptr);
    }
  }
  const struct sigaction& prev = r.prev_term;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, ctx);
  } else if (prev.sa_handler == SIG_DFL) {
    ::sigaction(sig, &prev, nullptr);  // re-raised once this handler returns (the signal is blocked until then)
    ::raise(sig);
  } else if (prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  }
  errno = saved;
}

void close_all_at_exit() {
  Registry& r = reg();
  std::thread flusher;
  {
    std::lock_guard<std::mutex> g(r.mu);
    r.closed_at_exit = true;
    for (Tracer* t : r.tracers) t->close();
    flusher = stop_flusher_locked(r);
  }
  if (flusher.joinable()) flusher.join();
}

// A forked child has no flusher thread, and the parent's tracers write the
// parent's file: the child drops their events (a child traces with a new
// Tracer, "%p" naming its own file) and starts a flusher of its own.
void prepare_fork() { reg().mu.lock(); }
void parent_after_fork() { reg().mu.unlock(); }
void child_after_fork();

void start_flusher_locked(Registry& r) {  // r.mu held
  if (r.flusher_running || r.closed_at_exit) return;
  if (r.wake[0] < 0 && ::pipe2(r.wake, O_CLOEXEC | O_NONBLOCK) != 0) return;  // no flusher: flushed at exit only
  r.flusher_tid = 0;
  r.flusher = std::thread(flusher_loop, ++r.flusher_gen);
  r.flusher_running = true;
  r.flusher_alive = true;
}

// SIGTERM: memlake's handler, chaining to the disposition it replaced. Checked
// at every new tracer, so a program that set its own handler since is chained
// too (and its handler still runs).
void install_term_handler_locked(Registry& r) {  // r.mu held
  struct sigaction cur{};
  if (::sigaction(SIGTERM, nullptr, &cur) != 0) return;
  if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_term) return;
  struct sigaction sa{};
  sa.sa_sigaction = on_term;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  r.prev_term = cur;
  r.term_default_kills = !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL;
  ::sigaction(SIGTERM, &sa, nullptr);
}

void install_hooks_once() {
  static const bool done = [] {
    (void)reg();  // constructed before the exit hook is registered, never destroyed
    std::atexit(close_all_at_exit);
    ::pthread_atfork(prepare_fork, parent_after_fork, child_after_fork);
    return true;
  }();
  (void)done;
}

}  // namespace

struct TracerFork {
  static void orphan(Tracer* t) { t->orphaned_ = true; }
};

namespace {
void child_after_fork() {
  Registry& r = reg();
  for (Tracer* t : r.tracers) TracerFork::orphan(t);
  r.tracers.clear();
  if (r.flusher_running) {
    new (&r.flusher) std::thread();  // the old handle names a thread of the parent: forget it, call nothing on it
    r.flusher_running = false;
    r.flusher_alive = false;
  }
  if (r.wake[0] >= 0) {  // the parent's pipe: a flusher of this process gets its own
    ::close(r.wake[0]);
    ::close(r.wake[1]);
    r.wake[0] = r.wake[1] = -1;
  }
  r.flusher_tid = 0;
  r.mu.unlock();
}
}  // namespace

std::string expand_trace_path(const std::string& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char c = pattern[++i];
    if (c == 'p') {
      out += std::to_string(::getpid());
    } else if (c == 'r') {
      const char* rank = std::getenv("RANK");
      if (!rank || !*rank) rank = std::getenv("LOCAL_RANK");
      std::string v = rank && *rank ? rank : "0";
      for (char& ch : v)
        if (!(ch >= '0' && ch <= '9')) ch = '_';  // a rank is a number; never a path separator
      out += v;
    } else if (c == '%') {
      out += '%';
    } else {
      out += '%';
      out += c;
    }
  }
  return out;
}

Tracer::Tracer(const std::string& path)
    : path_(expand_trace_path(path)), w_(std::make_unique<Writer>(path_)), t0_(std::chrono::steady_clock::now()) {
  install_hooks_once();
  Registry& r = reg();
  std::lock_guard<std::mutex> g(r.mu);
  r.tracers.push_back(this);
  install_term_handler_locked(r);
  start_flusher_locked(r);
}

Tracer::~Tracer() {
  std::thread flusher;
  {
    Registry& r = reg();
    std::lock_guard<std::mutex> g(r.mu);  // the flusher holds it while it touches tracers
    for (auto it = r.tracers.begin(); it != r.tracers.end(); ++it)
      if (*it == this) {
        r.tracers.erase(it);
        break;
      }
    // No thread lingers once the last trace is gone (a process that forks
    // later, or a sanitizer, finds it single-threaded again).
    if (r.tracers.empty()) flusher = stop_flusher_locked(r);
  }
  if (flusher.joinable()) flusher.join();
  if (orphaned_) {
    (void)w_.release();  // the parent's stream: neither flushed nor closed here
    return;
  }
  close();
}

void Tracer::report_failure() {
  if (!w_ || !w_->failed() || failed_.exchange(true)) return;
  std::fprintf(stderr, "memlake: trace %s: %s; later events are lost\n", path_.c_str(), w_->error().c_str());
}

void Tracer::flush() {
  if (orphaned_) return;
  std::lock_guard<std::mutex> g(mu_);
  if (!w_ || !dirty_) return;
  dirty_ = false;
  if (!w_->flush()) report_failure();
}

void Tracer::close() {
  if (orphaned_) return;
  std::lock_guard<std::mutex> g(mu_);
  if (!w_) return;
  if (!w_->close()) report_failure();
  w_.reset();
}

void Tracer::write(Action a, const void* ptr, std::size_t size, const void* stream) {
  if (orphaned_) return;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> g(mu_);
  if (!w_) return;
  if (failed_) {
    ++lost_;
    return;
  }
  auto [it, fresh] = threads_.emplace(std::this_thread::get_id(), threads_.size());
  (void)fresh;
  Event e;
  e.action = a;
  e.time_us = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now - t0_).count());
  e.ptr = reinterpret_cast<std::uintptr_t>(ptr);
  e.size = size;
  e.stream = reinterpret_cast<std::uintptr_t>(stream);
  e.thread = it->second;
  dirty_ = true;
  if (!w_->write(e)) {
    ++lost_;
    report_failure();
  }
}

void Tracer::allocated(const void* ptr, std::size_t size, const void* stream) {
  write(Action::allocate, ptr, size, stream);
}
void Tracer::freed(const void* ptr, std::size_t size, const void* stream) { write(Action::free, ptr, size, stream); }

}  // namespace memlake::trace
