// C ABI call sequences (issue 24): the input is a program of calls on one
// allocator (host backend: real aliasing memory) mixing valid and hostile
// arguments: allocations of any size, frees of live, freed, interior and
// random pointers, evictions (offload, discard, asynchronous), restores,
// settles, sleep and wake, caps, lookups, copies out with bad lengths, stats.
// A reference model checks after every call that each status is one the
// ABI allows for that call, that every resident allocation still holds its
// bytes, and that the statistics count exactly the live requested bytes.
// Any violation aborts (libFuzzer keeps the input).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "memlake/memlake.h"

namespace {

struct In {
  const std::uint8_t* d;
  std::size_t n, at = 0;
  bool more() const { return at < n; }
  std::uint8_t u8() { return at < n ? d[at++] : 0; }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | u8();
    return v;
  }
};

enum class St { Resident, Evicted, Discarded };

struct Live {
  std::uint8_t* p;
  std::size_t n;
  std::uint8_t seed;
  bool large;
  St st;
  bool ahead = false;  // restored without a wait and not ready() since: not to be touched before ready()
};

void fill(Live& l) {
  for (std::size_t i = 0; i < l.n; i += 4093) l.p[i] = static_cast<std::uint8_t>(l.seed + i);
  l.p[l.n - 1] = static_cast<std::uint8_t>(l.seed ^ 0x5a);
}

// Resident and usable by the host: a restore ahead is ready() first (memory
// pressure may have taken it back; ready() brings it, or leaves it evicted
// when there is no room).
bool touchable(memlake_allocator* a, Live& l) {
  if (l.st == St::Resident && l.ahead) {
    const memlake_status s = memlake_restore_ready(a, l.p, 0);
    if (s != MEMLAKE_OK && s != MEMLAKE_ERROR_OUT_OF_MEMORY) std::abort();
    l.ahead = false;
    if (s != MEMLAKE_OK) l.st = St::Evicted;
  }
  return l.st == St::Resident;
}

bool intact(const Live& l) {
  for (std::size_t i = 0; i < l.n; i += 4093)
    if (i != l.n - 1 && l.p[i] != static_cast<std::uint8_t>(l.seed + i)) return false;
  return l.p[l.n - 1] == static_cast<std::uint8_t>(l.seed ^ 0x5a);
}

// A violated expectation: the line and memlake's last error, then abort.
#define require(ok)                                                                                     \
  do {                                                                                                  \
    if (!(ok)) {                                                                                        \
      std::fprintf(stderr, "fuzz_capi: line %d: %s (last error: %s)\n", __LINE__, #ok, memlake_last_error()); \
      std::abort();                                                                                     \
    }                                                                                                   \
  } while (0)

constexpr std::size_t kSmallMax = 16 << 10;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  In in{data, size};
  memlake_options* o = nullptr;
  require(memlake_options_create(&o, 0) == MEMLAKE_OK);
  require(memlake_options_set(o, "backend", "host") == MEMLAKE_OK);
  require(memlake_options_set(o, "granularity", "64K") == MEMLAKE_OK);
  require(memlake_options_set(o, "small_max", "16K") == MEMLAKE_OK);
  require(memlake_options_set(o, "handle_size", in.u8() & 1 ? "0" : "256K") == MEMLAKE_OK);
  memlake_allocator* a = nullptr;
  require(memlake_create(o, &a) == MEMLAKE_OK);
  memlake_options_destroy(o);
  std::vector<Live> live;
  std::vector<void*> freed;
  std::vector<std::uint8_t> host(1 << 16);
  std::uint8_t seed = 1;
  bool discarded_sleep = false;
  for (int step = 0; step < 128 && in.more(); ++step) {
    const std::uint8_t op = in.u8() % 14;
    const std::size_t idx = live.empty() ? 0 : in.u8() % live.size();
    switch (op) {
      case 0:
      case 1: {  // alloc, up to 512 KiB (more would only spend the budget on page faults)
        const std::size_t n = (in.u32() % (in.u8() & 1 ? 64u << 10 : 512u << 10)) + 1;
        void* p = nullptr;
        const memlake_status s = memlake_alloc(a, n, 0, nullptr, &p);
        require(s == MEMLAKE_OK || s == MEMLAKE_ERROR_OUT_OF_MEMORY);
        if (s == MEMLAKE_OK) {
          require(p != nullptr);
          live.push_back(Live{static_cast<std::uint8_t*>(p), n, seed++, n > kSmallMax, St::Resident});
          fill(live.back());
        }
        break;
      }
      case 2: {  // free a live allocation, whatever its state
        if (live.empty()) break;
        require(memlake_free(a, live[idx].p, 0, nullptr) == MEMLAKE_OK);
        freed.push_back(live[idx].p);
        live.erase(live.begin() + static_cast<long>(idx));
        break;
      }
      case 3: {  // hostile frees: freed, interior, random pointers
        const std::uint8_t k = in.u8() % 3;
        void* p = nullptr;
        if (k == 0 && !freed.empty()) p = freed[in.u8() % freed.size()];
        if (k == 1 && !live.empty() && live[idx].n > 1) p = live[idx].p + 1 + in.u8() % (live[idx].n - 1);
        if (k == 2) p = reinterpret_cast<void*>(static_cast<std::uintptr_t>(in.u32()) << 12 | 0x10);
        if (!p) break;
        bool is_live = false;
        for (const Live& l : live) is_live = is_live || l.p == p;
        if (is_live) break;  // a freed address handed out again
        require(memlake_free(a, p, 0, nullptr) == MEMLAKE_ERROR_INVALID_ARGUMENT);
        break;
      }
      case 4: {  // evict: offload or discard, maybe asynchronous
        if (live.empty()) break;
        Live& l = live[idx];
        const int mode = (in.u8() & 1 ? MEMLAKE_SLEEP_DISCARD : MEMLAKE_SLEEP_OFFLOAD) | (in.u8() & 1 ? MEMLAKE_EVICT_ASYNC : 0);
        const memlake_status s = memlake_evict(a, l.p, 0, mode);
        if (!l.large || l.st != St::Resident) {
          require(s == MEMLAKE_ERROR_INVALID_ARGUMENT);
        } else {
          require(s == MEMLAKE_OK);
          l.st = (mode & 0xff) == MEMLAKE_SLEEP_DISCARD ? St::Discarded : St::Evicted;
        }
        break;
      }
      case 5: {  // restore
        if (live.empty()) break;
        Live& l = live[idx];
        // Sometimes without a wait (a prefetch), then ready() now or never: a later free, evict or
        // sleep must order itself after the copy.
        const bool nowait = in.u8() & 1;
        const memlake_status s = nowait ? memlake_restore_ex(a, l.p, 0, MEMLAKE_RESTORE_NO_WAIT) : memlake_restore(a, l.p, 0);
        const bool readied = nowait && s == MEMLAKE_OK && (in.u8() & 1);
        if (readied) require(memlake_restore_ready(a, l.p, 0) == MEMLAKE_OK);
        if (l.st != St::Resident && s == MEMLAKE_OK) l.ahead = nowait && !readied;
        if (l.st == St::Resident) {
          require(s == MEMLAKE_ERROR_INVALID_ARGUMENT);
        } else {
          require(s == MEMLAKE_OK || s == MEMLAKE_ERROR_OUT_OF_MEMORY);
          if (s == MEMLAKE_OK) {
            require(memlake_settle(a, 0, 1, nullptr) == MEMLAKE_OK);
            if (l.st == St::Discarded) fill(l);  // contents undefined: write them anew
            l.st = St::Resident;
          }
        }
        break;
      }
      case 6: {
        size_t settled = 0;
        require(memlake_settle(a, 0, in.u8() & 1, &settled) == MEMLAKE_OK);
        break;
      }
      case 7: {  // sleep everything, then wake
        const int mode = in.u8() & 1 ? MEMLAKE_SLEEP_DISCARD : MEMLAKE_SLEEP_OFFLOAD;
        const memlake_status s = memlake_sleep(a, 0, nullptr, nullptr, 0, mode, nullptr);
        require(s == MEMLAKE_OK || s == MEMLAKE_ERROR_INVALID_ARGUMENT || s == MEMLAKE_ERROR_OUT_OF_MEMORY);
        if (s != MEMLAKE_OK) break;
        const memlake_status w = memlake_wake(a, 0, nullptr);
        require(w == MEMLAKE_OK || w == MEMLAKE_ERROR_OUT_OF_MEMORY);
        if (w != MEMLAKE_OK) {
          // Under a cap some of it may stay asleep: lift the cap and wake the rest.
          require(memlake_set_memory_cap(a, 0) == MEMLAKE_OK);
          require(memlake_wake(a, 0, nullptr) == MEMLAKE_OK);
        }
        if (mode == MEMLAKE_SLEEP_DISCARD) {
          discarded_sleep = true;
          for (Live& l : live)
            if (l.large && touchable(a, l)) fill(l);
        }
        break;
      }
      case 8:
        require(memlake_empty_cache(a, 0) == MEMLAKE_OK);
        break;
      case 9: {  // a cap (0 = none), sometimes below what is live
        const std::size_t cap = static_cast<std::size_t>(in.u8()) << 18;
        require(memlake_set_memory_cap(a, cap) == MEMLAKE_OK);
        break;
      }
      case 10: {  // statistics: bounded JSON, live bytes counted exactly
        char buf[64];
        const std::size_t need = memlake_stats_json(a, buf, sizeof buf);
        require(need > 0 && need < (1u << 20));
        memlake_stats st{};
        st.struct_size = sizeof st;
        require(memlake_get_stats(a, 0, &st) == MEMLAKE_OK);
        std::uint64_t sum = 0;
        for (const Live& l : live) sum += l.n;
        require(st.requested_bytes.current == sum);
        memlake_residency_stats rs{};
        rs.struct_size = sizeof rs;
        require(memlake_get_residency_stats(a, 0, &rs) == MEMLAKE_OK);
        break;
      }
      case 11: {  // lookup of live, interior and random pointers
        size_t n = 0;
        if (!live.empty()) {
          require(memlake_lookup(a, live[idx].p, 0, &n, nullptr) == MEMLAKE_OK && n == live[idx].n);
          if (live[idx].n > 1) require(memlake_lookup(a, live[idx].p + 1, 0, &n, nullptr) == MEMLAKE_ERROR_INVALID_ARGUMENT);
        }
        const memlake_status s = memlake_lookup(a, reinterpret_cast<void*>(static_cast<std::uintptr_t>(in.u32()) | 1), 0, &n, nullptr);
        require(s == MEMLAKE_ERROR_INVALID_ARGUMENT);
        break;
      }
      case 12: {  // copies out of a resident allocation; lengths past its end
        if (live.empty() || live[idx].st != St::Resident) break;
        const Live& l = live[idx];
        const std::size_t room = std::min(l.n, host.size());
        const std::size_t len = in.u32() % (room + 1);
        require(memlake_copy(a, host.data(), l.p, len, 0, nullptr) == MEMLAKE_OK);
        require(std::memcmp(host.data(), l.p, len) == 0);
        if (l.n < host.size()) {  // past the allocation: refused, or read from a neighbour
          const memlake_status s = memlake_copy(a, host.data(), l.p, l.n + 1 + in.u8() % (host.size() - l.n), 0, nullptr);
          require(s == MEMLAKE_OK || s == MEMLAKE_ERROR_INVALID_ARGUMENT);
        }
        break;
      }
      case 13: {  // absurd sizes
        void* p = nullptr;
        const std::size_t n = in.u8() & 1 ? SIZE_MAX - in.u8() : (std::size_t{1} << 62);
        const memlake_status s = memlake_alloc(a, n, 0, nullptr, &p);
        require(s == MEMLAKE_ERROR_OUT_OF_MEMORY || s == MEMLAKE_ERROR_INVALID_ARGUMENT);
        require(p == nullptr);
        break;
      }
    }
    (void)discarded_sleep;
    for (Live& l : live)
      if (touchable(a, l)) require(intact(l));
  }
  memlake_destroy(a);
  return 0;
}
