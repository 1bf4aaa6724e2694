// memlake replay TRACE [options]: replay an allocation log through memlake.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "replay_args.h"
#include "core/error.h"
#include "core/options.h"
#include "trace/replay.h"

namespace memlake::cli {
namespace {

// `--sweep device_lag=...` sweeps --device-lag rather than an option.
constexpr const char* kLagKey = "device_lag";

// A duration in microseconds: a number with us, ms or s (a bare number is us).
std::uint64_t parse_duration_us(const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  const std::string unit = end ? std::string(end) : std::string();
  const double scale = unit.empty() || unit == "us" ? 1 : unit == "ms" ? 1e3 : unit == "s" ? 1e6 : -1;
  if (v.empty() || end == v.c_str() || scale < 0 || !(x >= 0) || x * scale > 1e15)
    throw_error(Errc::invalid_argument, "--device-lag: '" + v + "' is not a duration (e.g. 500us, 2ms, 0.1s)");
  return static_cast<std::uint64_t>(x * scale + 0.5);
}

struct ReplayArgs {
  std::string path, sweep, device, cold, cold_bytes, device_lag;
  AllocatorArgs alloc;
  bool no_stitch = false, json = false, check = false;
  int progress = -1;
};

int run_replay(const ReplayArgs& a) {
  trace::ReplayConfig cfg;
  std::string sweep_key;
  std::vector<std::string> sweep_values;
  try {
    cfg.options = allocator_options(a.alloc, !a.no_stitch);
    if (!a.sweep.empty()) {
      const std::string& kv = a.sweep;
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq + 1 == kv.size())
        return usage_error("--sweep expects KEY=V1,V2,..., got '" + kv + "'");
      sweep_key = kv.substr(0, eq);
      const std::string rest = kv.substr(eq + 1);
      for (std::size_t at = 0; at <= rest.size();) {
        const std::size_t comma = std::min(rest.find(',', at), rest.size());
        sweep_values.push_back(rest.substr(at, comma - at));
        at = comma + 1;
      }
      Options probe = cfg.options;  // a bad key or value is an error now, not after a replay
      for (const std::string& v : sweep_values)
        if (sweep_key == kLagKey)
          parse_duration_us(v);
        else
          probe.set(sweep_key, v);
    }
    if (!a.device.empty()) cfg.device = std::stoi(a.device);
    if (!a.cold.empty()) {
      const long n = std::stol(a.cold);
      if (n < 1) return usage_error("--cold expects a positive N (every N-th allocation and free)");
      cfg.cold_every = static_cast<std::uint64_t>(n);
    }
    if (!a.cold_bytes.empty()) cfg.cold_bytes = parse_size(a.cold_bytes);
    if (!a.device_lag.empty()) cfg.device_lag_us = parse_duration_us(a.device_lag);
    cfg.check = a.check;
  } catch (const Error& e) {
    return usage_error(e.what());
  } catch (const std::exception&) {
    return usage_error("bad --device or --cold value");
  }
  const bool progress = a.progress < 0 ? isatty(2) : a.progress;
  if (progress) cfg.progress = print_replay_progress;
  try {
    if (!sweep_key.empty()) {
      std::vector<trace::ReplayResult> rs;
      for (const std::string& v : sweep_values) {
        trace::ReplayConfig c = cfg;
        if (sweep_key == kLagKey)
          c.device_lag_us = parse_duration_us(v);
        else
          c.options.set(sweep_key, v);
        if (progress) std::fprintf(stderr, "%s=%s\n", sweep_key.c_str(), v.c_str());
        rs.push_back(trace::replay(a.path, c));
      }
      std::fputs((a.json ? trace::sweep_json(sweep_key, sweep_values, rs) + "\n"
                         : trace::sweep_text(sweep_key, sweep_values, rs))
                     .c_str(),
                 stdout);
      return 0;
    }
    auto r = trace::replay(a.path, cfg);
    std::fputs((a.json ? trace::replay_json(r) + "\n" : trace::replay_text(r)).c_str(), stdout);
    return 0;
  } catch (const Error& e) {
    if (progress) std::fprintf(stderr, "\n");
    std::fprintf(stderr, "memlake replay: %s\n", e.what());
    return e.code() == Errc::invalid_argument ? 2 : 1;
  }
}

Action setup_replay(CLI::App& app) {
  auto* sub = app.add_subcommand("replay", "replay an RMM-style allocation log (.csv or .csv.gz) through memlake");
  auto a = std::make_shared<ReplayArgs>();
  sub->add_option("TRACE", a->path, "the allocation log (Thread,Time,Action,Pointer,Size,Stream)")->required();
  add_allocator_options(sub, a->alloc);
  sub->add_flag("--no-stitch", a->no_stitch, "plain page-granular caching, for comparison");
  sub->add_option("--sweep", a->sweep,
                  "KEY=V1,V2,...: replay once per value, one row each (e.g. handle_size=0,8M,16M; "
                  "KEY device_lag sweeps --device-lag: device_lag=0,1ms,5ms)");
  sub->add_option("--device-lag", a->device_lag,
                  "T: the device finishes work T after it was queued (trace time: 500us, 2ms, 0.1s; host "
                  "backend): frees stay pending as on a GPU trailing the host (default 0)");
  sub->add_option("--cold", a->cold,
                  "N: time every N-th allocation and free after reading --cold-bytes of other memory first: "
                  "their latency with the CPU caches cold, as between a framework's ops");
  sub->add_option("--cold-bytes", a->cold_bytes, "SIZE read before each cold sample (default 64M)");
  sub->add_option("--device", a->device, "device ordinal (default 0)");
  sub->add_flag("--json", a->json, "machine-readable output");
  sub->add_flag_callback("--progress", [a] { a->progress = 1; }, "progress on stderr (default: when stderr is a terminal)");
  sub->add_flag_callback("--no-progress", [a] { a->progress = 0; }, "no progress on stderr");
  sub->add_flag("--check", a->check, "verify the allocator's internal consistency at the end");
  return [a] { return run_replay(*a); };
}

}  // namespace

MEMLAKE_CLI_COMMAND(10, setup_replay);

}  // namespace memlake::cli
