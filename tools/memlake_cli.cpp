// memlake command-line tool.
//   memlake replay TRACE [options]   replay an allocation log and report
//   memlake options [--markdown]     the configuration table
//   memlake version
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/options.h"
#include "memlake/memlake.h"
#include "bench/alloc_bench.h"
#include "bench/copy_bench.h"
#include "bench/path_bench.h"
#include "obs/stats_server.h"
#include "trace/replay.h"

namespace {

const char* kUsage =
    "usage: memlake <command> [options]\n"
    "\n"
    "commands:\n"
    "  replay TRACE   replay an RMM-style allocation log (.csv or .csv.gz) through memlake\n"
    "  bench alloc    allocator micro-benchmarks: hot path, stitch and growth cost\n"
    "  bench copy     host<->device bandwidth: memlake's copy engine vs the plain driver copy\n"
    "  stat [PID]     live statistics of processes serving them (MEMLAKE_STATS_SERVER=1);\n"
    "                 --json or --prometheus for machine-readable output\n"
    "  top            the same, refreshed (--interval SECONDS, --iterations N)\n"
    "  options        print the configuration table (MEMLAKE_* variables)\n"
    "  version        print the version\n"
    "\n"
    "replay options:\n"
    "  --backend host|cuda     primitives backend (default: host)\n"
    "  --granularity SIZE      page size, e.g. 2M (default: the backend's)\n"
    "  --cap SIZE              memory cap, e.g. 24G (default: none)\n"
    "  --no-stitch             plain page-granular caching, for comparison\n"
    "  --set KEY=VALUE         any option of `memlake options`\n"
    "  --sweep KEY=V1,V2,...   replay once per value and print one row each (e.g. handle_size=0,8M,16M;\n"
    "                          KEY device_lag sweeps --device-lag: device_lag=0,1ms,5ms)\n"
    "  --device-lag T          the device finishes work T after it was queued (trace time: 500us, 2ms, 0.1s;\n"
    "                          host backend): frees stay pending as on a GPU trailing the host (default 0)\n"
    "  --cold N                time every N-th allocation and free after reading --cold-bytes (64M) of other\n"
    "                          memory first: their latency with the CPU caches cold, as between a framework's ops\n"
    "  --device N              device ordinal (default 0)\n"
    "  --json                  machine-readable output\n"
    "  --progress/--no-progress  progress on stderr (default: when stderr is a terminal)\n"
    "  --check                 verify the allocator's internal consistency at the end\n"
    "\n"
    "bench alloc options: --backend host|cuda, --granularity SIZE, --quick, --json,\n"
    "  --fragmented (also the C ABI loop after the shim probe's 11 GiB fragmenting pattern)\n"
    "bench copy options:  --backend host|cuda, --min SIZE (64K), --max SIZE (1G), --reps N, --json,\n"
    "                     --threads N, --chunk SIZE, --h2d-streams N (the engine's; default MEMLAKE_COPY_THREADS/_CHUNK/_H2D_STREAMS),\n"
    "                     --plain-memcpy (no non-temporal stores), --no-ramp (every piece full size from the start),\n"
    "                     --min-piece SIZE (1M: the ramp's first pieces and the schedule's last),\n"
    "                     --svg FILE (plot of GB/s against size)\n"
    "                     --registration: cost of registering a pageable buffer against what it saves per copy\n"
    "                     --multipath [--loopback K]: measured topology, then direct vs multi-path H2D/D2H into\n"
    "                       GPU 0 (--loopback K: K peers emulated on GPU 0, to check the mechanism on one GPU)\n";

// `--sweep device_lag=...` sweeps --device-lag rather than an option.
constexpr const char* kLagKey = "device_lag";

// A duration in microseconds: a number with us, ms or s (a bare number is us).
std::uint64_t parse_duration_us(const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  const std::string unit = end ? std::string(end) : std::string();
  const double scale = unit.empty() || unit == "us" ? 1 : unit == "ms" ? 1e3 : unit == "s" ? 1e6 : -1;
  if (v.empty() || end == v.c_str() || scale < 0 || !(x >= 0) || x * scale > 1e15)
    memlake::throw_error(memlake::Errc::invalid_argument,
                         "--device-lag: '" + v + "' is not a duration (e.g. 500us, 2ms, 0.1s)");
  return static_cast<std::uint64_t>(x * scale + 0.5);
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "memlake: %s\n\n%s", msg.c_str(), kUsage);
  return 2;
}

int cmd_options(bool markdown) {
  if (markdown) {
    std::printf("| key | environment variable | default | meaning |\n|---|---|---|---|\n");
    for (const auto& o : memlake::option_table())
      std::printf("| `%s` | `%s` | `%s` | %s |\n", o.key, o.env, o.default_value, o.doc);
    return 0;
  }
  for (const auto& o : memlake::option_table())
    std::printf("%-18s %-26s default %-8s\n    %s\n", o.key, o.env, o.default_value, o.doc);
  return 0;
}

int cmd_replay(const std::vector<std::string>& args) {
  memlake::trace::ReplayConfig cfg;
  try {
    cfg.options = memlake::Options::from_env();
  } catch (const memlake::Error& e) {
    return usage_error(e.what());
  }
  cfg.options.backend = "host";  // the default for replay; --backend cuda for the GPU
  std::string path;
  bool json = false;
  int progress = -1;
  std::string sweep_key;
  std::vector<std::string> sweep_values;
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= args.size()) throw memlake::Error(memlake::Errc::invalid_argument, a + " needs a value");
        return args[++i];
      };
      if (a == "--backend") cfg.options.set("backend", value());
      else if (a == "--granularity") cfg.options.set("granularity", value());
      else if (a == "--cap") cfg.options.set("memory_cap", value());
      else if (a == "--no-stitch") cfg.options.stitch = false;
      else if (a == "--set") {
        std::string kv = value();
        auto eq = kv.find('=');
        if (eq == std::string::npos) return usage_error("--set expects KEY=VALUE, got '" + kv + "'");
        cfg.options.set(kv.substr(0, eq), kv.substr(eq + 1));
      } else if (a == "--sweep") {
        const std::string kv = value();
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq + 1 == kv.size())
          return usage_error("--sweep expects KEY=V1,V2,..., got '" + kv + "'");
        sweep_key = kv.substr(0, eq);
        std::string rest = kv.substr(eq + 1);
        for (std::size_t at = 0; at <= rest.size();) {
          const std::size_t comma = std::min(rest.find(',', at), rest.size());
          sweep_values.push_back(rest.substr(at, comma - at));
          at = comma + 1;
        }
        memlake::Options probe = cfg.options;  // a bad key or value is an error now, not after a replay
        for (const std::string& v : sweep_values)
          if (sweep_key == kLagKey)
            parse_duration_us(v);
          else
            probe.set(sweep_key, v);
      } else if (a == "--device") cfg.device = std::stoi(value());
      else if (a == "--json") json = true;
      else if (a == "--progress") progress = 1;
      else if (a == "--no-progress") progress = 0;
      else if (a == "--check") cfg.check = true;
      else if (a == "--cold") {
        const long n = std::stol(value());
        if (n < 1) return usage_error("--cold expects a positive N (every N-th allocation and free)");
        cfg.cold_every = static_cast<std::uint64_t>(n);
      } else if (a == "--cold-bytes") cfg.cold_bytes = memlake::parse_size(value());
      else if (a == "--device-lag") cfg.device_lag_us = parse_duration_us(value());
      else if (a.size() > 1 && a[0] == '-') return usage_error("unknown option " + a);
      else if (path.empty()) path = a;
      else return usage_error("more than one trace given");
    }
  } catch (const memlake::Error& e) {
    return usage_error(e.what());
  } catch (const std::exception&) {
    return usage_error("bad --device or --cold value");
  }
  if (path.empty()) return usage_error("replay needs a TRACE file");
  if (progress < 0) progress = isatty(2) ? 1 : 0;
  if (progress)
    cfg.progress = [](double f, std::uint64_t events) {
      std::fprintf(stderr, "\rreplay %5.1f%%  %llu events", 100.0 * f, static_cast<unsigned long long>(events));
      if (f >= 1.0) std::fprintf(stderr, "\n");
      std::fflush(stderr);
    };
  try {
    if (!sweep_key.empty()) {
      std::vector<memlake::trace::ReplayResult> rs;
      for (const std::string& v : sweep_values) {
        memlake::trace::ReplayConfig c = cfg;
        if (sweep_key == kLagKey)
          c.device_lag_us = parse_duration_us(v);
        else
          c.options.set(sweep_key, v);
        if (progress) std::fprintf(stderr, "%s=%s\n", sweep_key.c_str(), v.c_str());
        rs.push_back(memlake::trace::replay(path, c));
      }
      std::fputs((json ? memlake::trace::sweep_json(sweep_key, sweep_values, rs) + "\n"
                       : memlake::trace::sweep_text(sweep_key, sweep_values, rs))
                     .c_str(),
                 stdout);
      return 0;
    }
    auto r = memlake::trace::replay(path, cfg);
    std::fputs((json ? memlake::trace::replay_json(r) + "\n" : memlake::trace::replay_text(r)).c_str(), stdout);
    return 0;
  } catch (const memlake::Error& e) {
    if (progress) std::fprintf(stderr, "\n");
    std::fprintf(stderr, "memlake replay: %s\n", e.what());
    return e.code() == memlake::Errc::invalid_argument ? 2 : 1;
  }
}

const char* kStatHeader = "PID      DEV BACK      RESERVED    ALLOCATED   UTIL   LARGEST FREE STITCH   DRIVER   OOMS\n";

// Prints each server's reply; returns how many answered.
int print_stats(const std::vector<int>& pids, const std::string& request) {
  const std::string dir = memlake::obs::socket_dir();
  int answered = 0;
  if (request == "text") std::fputs(kStatHeader, stdout);
  for (int pid : pids) {
    try {
      std::fputs(memlake::obs::query(dir + "/" + std::to_string(pid) + ".sock", request).c_str(), stdout);
      ++answered;
    } catch (const memlake::Error& e) {
      std::fprintf(stderr, "memlake stat: %d: %s\n", pid, e.what());
    }
  }
  return answered;
}

int cmd_stat(const std::vector<std::string>& args, bool top) {
  std::string request = "text";
  double interval = 1.0;
  long iterations = -1;
  std::vector<int> pids;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    try {
      if (a == "--json") request = "json";
      else if (a == "--prometheus") request = "prometheus";
      else if (a == "--interval" && i + 1 < args.size()) interval = std::stod(args[++i]);
      else if (a == "--iterations" && i + 1 < args.size()) iterations = std::stol(args[++i]);
      else if (!a.empty() && a[0] != '-') pids.push_back(std::stoi(a));
      else return usage_error("unknown stat option " + a);
    } catch (const std::exception&) {
      return usage_error("bad value for " + a);
    }
  }
  const bool all = pids.empty();
  for (long it = 0; iterations < 0 || it < iterations; ++it) {
    std::vector<int> targets = all ? memlake::obs::list_servers() : pids;
    if (top) std::fputs("\x1b[H\x1b[2J", stdout);
    if (targets.empty()) {
      std::fprintf(top ? stdout : stderr, "no process is serving memlake statistics in %s (run it with MEMLAKE_STATS_SERVER=1)\n",
                   memlake::obs::socket_dir().c_str());
      if (!top) return 1;
    } else if (print_stats(targets, request) == 0 && !top) {
      return 1;
    }
    std::fflush(stdout);
    if (!top) return 0;
    if (iterations >= 0 && it + 1 >= iterations) break;
    usleep(static_cast<useconds_t>(interval * 1e6));
  }
  return 0;
}

int cmd_bench_copy(const std::vector<std::string>& args) {
  memlake::bench::CopyBenchConfig cfg;
  bool json = false, registration = false, multipath = false;
  int loopback = 0;
  std::string svg;
  try {
    cfg.options = memlake::Options::from_env();  // a bad MEMLAKE_* value is a usage error, like a bad flag
    cfg.options.backend = "host";
    for (std::size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= args.size()) throw memlake::Error(memlake::Errc::invalid_argument, a + " needs a value");
        return args[++i];
      };
      if (a == "--backend") cfg.options.set("backend", value());
      else if (a == "--svg") svg = value();
      else if (a == "--min") cfg.min_bytes = memlake::parse_size(value());
      else if (a == "--max") cfg.max_bytes = memlake::parse_size(value());
      else if (a == "--reps") cfg.reps = std::stoi(value());
      else if (a == "--threads") cfg.options.set("copy_threads", value());
      else if (a == "--chunk") cfg.options.set("copy_chunk", value());
      else if (a == "--h2d-streams") cfg.options.set("copy_h2d_streams", value());
      else if (a == "--plain-memcpy") cfg.streaming_stores = false;
      else if (a == "--no-ramp") cfg.ramp = false;
      else if (a == "--min-piece") cfg.min_piece = memlake::parse_size(value());
      else if (a == "--json") json = true;
      else if (a == "--registration") registration = true;
      else if (a == "--multipath") multipath = true;
      else if (a == "--loopback") loopback = std::stoi(value());
      else return usage_error("unknown bench copy option " + a);
    }
    if (cfg.min_bytes == 0 || cfg.min_bytes > cfg.max_bytes) return usage_error("--min must be > 0 and <= --max");
    if (loopback < 0 || loopback > 7) return usage_error("--loopback must be 0..7");
    if (registration || multipath) {
      memlake::bench::PathBenchConfig pc;
      pc.options = cfg.options;
      pc.max_bytes = cfg.max_bytes;
      pc.min_bytes = std::max(cfg.min_bytes, std::min<std::size_t>(cfg.max_bytes, std::size_t{64} << 20));
      pc.reps = std::max(2, cfg.reps / 2);
      pc.loopback = loopback;
      bool ok = true, ok2 = true;
      if (registration) std::fputs(memlake::bench::run_registration_bench(pc, &ok).c_str(), stdout);
      if (multipath) std::fputs(memlake::bench::run_multipath_bench(pc, &ok2).c_str(), stdout);
      return ok && ok2 ? 0 : 1;
    }
    int threads = 0;
    auto s = memlake::bench::run_copy_bench(cfg, &threads);
    std::fputs((json ? memlake::bench::copy_json(s, threads) + "\n" : memlake::bench::copy_table(s, threads)).c_str(), stdout);
    if (!svg.empty()) {
      FILE* f = std::fopen(svg.c_str(), "w");
      if (!f) throw memlake::Error(memlake::Errc::invalid_argument, "cannot write " + svg);
      std::fputs(memlake::bench::copy_svg(s, "host<->device copy bandwidth (" + cfg.options.backend + " backend)").c_str(), f);
      std::fclose(f);
      std::fprintf(stderr, "plot: %s\n", svg.c_str());
    }
    for (const auto& x : s)
      if (!x.verified) return 1;
    return 0;
  } catch (const memlake::Error& e) {
    std::fprintf(stderr, "memlake bench copy: %s\n", e.what());
    return e.code() == memlake::Errc::invalid_argument ? 2 : 1;
  } catch (const std::exception&) {
    return usage_error("bad number");
  }
}

int cmd_bench(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "copy") return cmd_bench_copy(args);
  if (args.empty() || args[0] != "alloc") return usage_error("bench needs a subject: alloc or copy");
  memlake::Options o;
  o.backend = "host";
  bool quick = false, json = false, fragmented = false;
  try {
    for (std::size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      if ((a == "--backend" || a == "--granularity") && i + 1 < args.size())
        o.set(a.substr(2), args[++i]);
      else if (a == "--quick") quick = true;
      else if (a == "--json") json = true;
      else if (a == "--fragmented") fragmented = true;
      else return usage_error("unknown bench option " + a);
    }
    auto s = memlake::bench::run_all(o, quick, fragmented);
    std::fputs((json ? memlake::bench::samples_json(s) + "\n" : memlake::bench::samples_table(s)).c_str(), stdout);
    return 0;
  } catch (const memlake::Error& e) {
    std::fprintf(stderr, "memlake bench: %s\n", e.what());
    return e.code() == memlake::Errc::invalid_argument ? 2 : 1;
  }
}

}  // namespace

int cmd_sim(const std::vector<std::string>& args);  // tools/sim_cmd.cpp
int main(int argc, char** argv) {
  if (argc < 2) return usage_error("no command");
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "replay") return cmd_replay(args);
  if (cmd == "sim") return cmd_sim(args);
  if (cmd == "bench") return cmd_bench(args);
  if (cmd == "stat") return cmd_stat(args, false);
  if (cmd == "top") return cmd_stat(args, true);
  if (cmd == "options") return cmd_options(!args.empty() && args[0] == "--markdown");
  if (cmd == "version" || cmd == "--version") {
    std::printf("memlake %s\n", memlake_version());
    return 0;
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  return usage_error("unknown command '" + cmd + "'");
}
