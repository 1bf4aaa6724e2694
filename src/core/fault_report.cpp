#include "core/fault_report.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace memlake::core::fault {
namespace {

enum Kind : std::uint32_t { kGuard = 1, kFreed = 2 };

struct Entry {
  std::atomic<std::uintptr_t> begin{0};
  std::uintptr_t end = 0, alloc = 0;
  std::size_t size = 0;
  std::uint64_t free_no = 0;
  std::uint32_t kind = 0;
};

constexpr std::size_t kEntries = 1 << 16;
Entry g_table[kEntries];
std::mutex g_mu;
std::atomic<std::uint64_t> g_frees{0};
struct sigaction g_previous;
std::once_flag g_once;

// Async-signal-safe: no allocation, no locks.
int format(std::uintptr_t addr, char* msg, std::size_t len) {
  for (Entry& e : g_table) {
    const std::uintptr_t b = e.begin.load(std::memory_order_acquire);
    if (!b || addr < b || addr >= e.end) continue;
    if (e.kind == kGuard)
      return std::snprintf(msg, len,
                           "memlake: out-of-bounds access at 0x%llx: %llu bytes past the end of allocation 0x%llx (%llu bytes)\n",
                           static_cast<unsigned long long>(addr), static_cast<unsigned long long>(addr - (e.alloc + e.size)),
                           static_cast<unsigned long long>(e.alloc), static_cast<unsigned long long>(e.size));
    return std::snprintf(msg, len, "memlake: use after free at 0x%llx: allocation 0x%llx (%llu bytes), freed %llu frees ago\n",
                         static_cast<unsigned long long>(addr), static_cast<unsigned long long>(e.alloc),
                         static_cast<unsigned long long>(e.size),
                         static_cast<unsigned long long>(g_frees.load() - e.free_no));
  }
  return 0;
}

void handler(int sig, siginfo_t* info, void* ctx) {
  char msg[256];
  const int n = format(reinterpret_cast<std::uintptr_t>(info->si_addr), msg, sizeof msg);
  if (n > 0) (void)!::write(2, msg, static_cast<std::size_t>(std::min<int>(n, sizeof msg - 1)));
  // Hand the fault on: to the previous handler, else the default action.
  if (g_previous.sa_flags & SA_SIGINFO && g_previous.sa_sigaction) {
    g_previous.sa_sigaction(sig, info, ctx);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN && g_previous.sa_handler) {
    g_previous.sa_handler(sig);
    return;
  }
  ::signal(sig, SIG_DFL);  // returning re-executes the access, which now kills the process
}

void add(std::uintptr_t begin, std::uintptr_t end, std::uintptr_t alloc, std::size_t size, std::uint64_t free_no,
         std::uint32_t kind) {
  std::lock_guard<std::mutex> g(g_mu);
  for (Entry& e : g_table)
    if (e.begin.load(std::memory_order_relaxed) == 0) {
      e.end = end;
      e.alloc = alloc;
      e.size = size;
      e.free_no = free_no;
      e.kind = kind;
      e.begin.store(begin, std::memory_order_release);
      return;
    }
  // Table full: the fault is still caught, only not named.
}

}  // namespace

void install() {
  std::call_once(g_once, [] {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSEGV, &sa, &g_previous);
  });
}

void add_guard(std::uintptr_t begin, std::uintptr_t end, std::uintptr_t alloc, std::size_t size) {
  add(begin, end, alloc, size, 0, kGuard);
}

void add_freed(std::uintptr_t begin, std::uintptr_t end, std::uintptr_t alloc, std::size_t size, std::uint64_t free_no) {
  add(begin, end, alloc, size, free_no, kFreed);
}

void remove(std::uintptr_t begin) {
  std::lock_guard<std::mutex> g(g_mu);
  for (Entry& e : g_table)
    if (e.begin.load(std::memory_order_relaxed) == begin) {
      e.begin.store(0, std::memory_order_release);
      return;
    }
}

void set_free_count(std::uint64_t n) { g_frees.store(n); }

std::string describe(std::uintptr_t addr) {
  char msg[256];
  const int n = format(addr, msg, sizeof msg);
  if (n <= 0) return {};
  std::string s(msg, static_cast<std::size_t>(std::min<int>(n, sizeof msg - 1)));
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace memlake::core::fault
