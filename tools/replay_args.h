// What `memlake replay` and `memlake report` share: the allocator they replay
// through (--backend, --granularity, --cap, --set KEY=VALUE over the
// MEMLAKE_* environment, the host backend by default) and the progress line.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "core/error.h"
#include "core/options.h"
#include "trace/replay.h"

namespace memlake::cli {

struct AllocatorArgs {
  std::string backend, granularity, cap;
  std::vector<std::string> sets;
};

inline void add_allocator_options(CLI::App* sub, AllocatorArgs& a) {
  sub->add_option("--backend", a.backend, "primitives backend: host or cuda (default: host)");
  sub->add_option("--granularity", a.granularity, "page size, e.g. 2M (default: the backend's)");
  sub->add_option("--cap", a.cap, "memory cap, e.g. 24G (default: none)");
  sub->add_option("--set", a.sets, "KEY=VALUE: any option of `memlake options` (repeatable)")->allow_extra_args(false);
}

// The environment's options, then these; Errc::invalid_argument on a bad one.
inline Options allocator_options(const AllocatorArgs& a, bool stitch = true) {
  Options o = Options::from_env();
  o.backend = "host";  // the default for a replay; --backend cuda for the GPU
  if (!a.backend.empty()) o.set("backend", a.backend);
  if (!a.granularity.empty()) o.set("granularity", a.granularity);
  if (!a.cap.empty()) o.set("memory_cap", a.cap);
  if (!stitch) o.stitch = false;
  for (const std::string& kv : a.sets) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw_error(Errc::invalid_argument, "--set expects KEY=VALUE, got '" + kv + "'");
    o.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return o;
}

// "replay  42.0%  123456 events" on stderr, rewritten in place.
inline void print_replay_progress(double f, std::uint64_t events) {
  std::fprintf(stderr, "\rreplay %5.1f%%  %llu events", 100.0 * f, static_cast<unsigned long long>(events));
  if (f >= 1.0) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

}  // namespace memlake::cli
