// memlake bench alloc|copy|residency: allocator micro-benchmarks, copy
// bandwidth, the residency engine's evict/restore bandwidth.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "bench/alloc_bench.h"
#include "bench/copy_bench.h"
#include "bench/path_bench.h"
#include "bench/residency_bench.h"
#include "cli.h"
#include "core/error.h"
#include "core/options.h"

namespace memlake::cli {
namespace {

struct AllocArgs {
  std::string backend, granularity;
  bool quick = false, json = false, fragmented = false;
};

int run_bench_alloc(const AllocArgs& a) {
  Options o;
  o.backend = "host";
  try {
    if (!a.backend.empty()) o.set("backend", a.backend);
    if (!a.granularity.empty()) o.set("granularity", a.granularity);
    auto s = bench::run_all(o, a.quick, a.fragmented);
    std::fputs((a.json ? bench::samples_json(s) + "\n" : bench::samples_table(s)).c_str(), stdout);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "memlake bench: %s\n", e.what());
    return e.code() == Errc::invalid_argument ? 2 : 1;
  }
}

struct CopyArgs {
  std::string backend, svg, min, max, threads, chunk, h2d_streams, min_piece;
  int reps = -1, loopback = 0;
  bool plain_memcpy = false, no_ramp = false, json = false, registration = false, multipath = false;
};

int run_bench_copy(const CopyArgs& a) {
  bench::CopyBenchConfig cfg;
  try {
    cfg.options = Options::from_env();  // a bad MEMLAKE_* value is a usage error, like a bad flag
    cfg.options.backend = "host";
    if (!a.backend.empty()) cfg.options.set("backend", a.backend);
    if (!a.min.empty()) cfg.min_bytes = parse_size(a.min);
    if (!a.max.empty()) cfg.max_bytes = parse_size(a.max);
    if (a.reps >= 0) cfg.reps = a.reps;
    if (!a.threads.empty()) cfg.options.set("copy_threads", a.threads);
    if (!a.chunk.empty()) cfg.options.set("copy_chunk", a.chunk);
    if (!a.h2d_streams.empty()) cfg.options.set("copy_h2d_streams", a.h2d_streams);
    if (a.plain_memcpy) cfg.streaming_stores = false;
    if (a.no_ramp) cfg.ramp = false;
    if (!a.min_piece.empty()) cfg.min_piece = parse_size(a.min_piece);
    if (cfg.min_bytes == 0 || cfg.min_bytes > cfg.max_bytes) return usage_error("--min must be > 0 and <= --max");
    if (a.loopback < 0 || a.loopback > 7) return usage_error("--loopback must be 0..7");
    if (a.registration || a.multipath) {
      bench::PathBenchConfig pc;
      pc.options = cfg.options;
      pc.max_bytes = cfg.max_bytes;
      pc.min_bytes = std::max(cfg.min_bytes, std::min<std::size_t>(cfg.max_bytes, std::size_t{64} << 20));
      pc.reps = std::max(2, cfg.reps / 2);
      pc.loopback = a.loopback;
      bool ok = true, ok2 = true;
      if (a.registration) std::fputs(bench::run_registration_bench(pc, &ok).c_str(), stdout);
      if (a.multipath) std::fputs(bench::run_multipath_bench(pc, &ok2).c_str(), stdout);
      return ok && ok2 ? 0 : 1;
    }
    int threads = 0;
    auto s = bench::run_copy_bench(cfg, &threads);
    std::fputs((a.json ? bench::copy_json(s, threads) + "\n" : bench::copy_table(s, threads)).c_str(), stdout);
    if (!a.svg.empty()) {
      FILE* f = std::fopen(a.svg.c_str(), "w");
      if (!f) throw Error(Errc::invalid_argument, "cannot write " + a.svg);
      std::fputs(bench::copy_svg(s, "host<->device copy bandwidth (" + cfg.options.backend + " backend)").c_str(), f);
      std::fclose(f);
      std::fprintf(stderr, "plot: %s\n", a.svg.c_str());
    }
    for (const auto& x : s)
      if (!x.verified) return 1;
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "memlake bench copy: %s\n", e.what());
    return e.code() == Errc::invalid_argument ? 2 : 1;
  } catch (const std::exception&) {
    return usage_error("bad number");
  }
}

struct ResidencyArgs {
  std::string backend, sizes, piece, disk;
  int reps = -1;
  bool json = false;
};

int run_bench_residency(const ResidencyArgs& a) {
  bench::ResidencyBenchConfig cfg;
  try {
    cfg.options = Options::from_env();
    cfg.options.backend = "host";
    if (!a.backend.empty()) cfg.options.set("backend", a.backend);
    if (!a.sizes.empty()) {
      cfg.sizes.clear();
      std::size_t at = 0;
      while (at <= a.sizes.size()) {
        const std::size_t comma = std::min(a.sizes.find(',', at), a.sizes.size());
        cfg.sizes.push_back(parse_size(a.sizes.substr(at, comma - at)));
        at = comma + 1;
      }
    }
    if (!a.piece.empty()) cfg.piece = parse_size(a.piece);
    if (a.reps >= 0) cfg.reps = a.reps;
    if (!a.disk.empty()) cfg.options.disk_tier = a.disk;
    for (std::size_t s : cfg.sizes)
      if (s == 0) return usage_error("--sizes must be positive");
    if (cfg.piece == 0 || cfg.reps < 1) return usage_error("--piece and --reps must be positive");
    auto s = bench::run_residency_bench(cfg);
    std::fputs((a.json ? bench::residency_json(s) + "\n" : bench::residency_table(s)).c_str(), stdout);
    for (const auto& x : s)
      if (!x.verified) return 1;
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "memlake bench residency: %s\n", e.what());
    return e.code() == Errc::invalid_argument ? 2 : 1;
  } catch (const std::exception&) {
    return usage_error("bad number");
  }
}


Action setup_bench(CLI::App& app) {
  auto* sub = app.add_subcommand("bench", "benchmarks: bench alloc (the allocator), bench copy (host<->device copies), bench residency (evict/restore)");
  auto* alloc = sub->add_subcommand("alloc", "allocator micro-benchmarks: hot path, stitch and growth cost");
  auto aa = std::make_shared<AllocArgs>();
  alloc->add_option("--backend", aa->backend, "host or cuda (default: host)");
  alloc->add_option("--granularity", aa->granularity, "page size, e.g. 2M");
  alloc->add_flag("--quick", aa->quick, "fewer repetitions");
  alloc->add_flag("--json", aa->json, "machine-readable output");
  alloc->add_flag("--fragmented", aa->fragmented,
                  "also the C ABI loop after the shim probe's 11 GiB fragmenting pattern");
  auto* copy = sub->add_subcommand("copy", "host<->device bandwidth: memlake's copy engine vs the plain driver copy");
  auto ca = std::make_shared<CopyArgs>();
  copy->add_option("--backend", ca->backend, "host or cuda (default: host)");
  copy->add_option("--min", ca->min, "smallest size (default 64K)");
  copy->add_option("--max", ca->max, "largest size (default 1G)");
  copy->add_option("--reps", ca->reps, "repetitions per size (default 5)")->check(CLI::NonNegativeNumber);
  copy->add_option("--threads", ca->threads, "the engine's host threads (default MEMLAKE_COPY_THREADS)");
  copy->add_option("--chunk", ca->chunk, "the engine's staging chunk (default MEMLAKE_COPY_CHUNK)");
  copy->add_option("--h2d-streams", ca->h2d_streams, "the engine's H2D streams (default MEMLAKE_COPY_H2D_STREAMS)");
  copy->add_flag("--plain-memcpy", ca->plain_memcpy, "no non-temporal stores");
  copy->add_flag("--no-ramp", ca->no_ramp, "every piece full size from the start");
  copy->add_option("--min-piece", ca->min_piece, "the ramp's first pieces and the schedule's last (default 1M)");
  copy->add_option("--svg", ca->svg, "FILE: plot of GB/s against size");
  copy->add_flag("--json", ca->json, "machine-readable output");
  copy->add_flag("--registration", ca->registration,
                 "cost of registering a pageable buffer against what it saves per copy");
  copy->add_flag("--multipath", ca->multipath,
                 "measured topology, then direct vs multi-path H2D/D2H into GPU 0");
  copy->add_option("--loopback", ca->loopback, "K peers emulated on GPU 0 for --multipath (0..7)");
  auto ra = std::make_shared<ResidencyArgs>();
  auto* res = sub->add_subcommand("residency", "evict/restore bandwidth of the residency engine vs plain pinned copies");
  res->add_option("--backend", ra->backend, "host or cuda (default: host)");
  res->add_option("--sizes", ra->sizes, "bytes per direction, comma-separated (default 1G,4G,16G)");
  res->add_option("--piece", ra->piece, "allocation size (default 256M)");
  res->add_option("--reps", ra->reps, "repeats, alternated with the plain copies (default 3)")->check(CLI::NonNegativeNumber);
  res->add_option("--disk", ra->disk, "also measure the disk tier in this directory (demote, restore from disk) against plain O_DIRECT file I/O");
  res->add_flag("--json", ra->json, "machine-readable output");
  return [alloc, copy, res, aa, ca, ra] {
    if (alloc->parsed()) return run_bench_alloc(*aa);
    if (copy->parsed()) return run_bench_copy(*ca);
    if (res->parsed()) return run_bench_residency(*ra);
    return usage_error("bench needs a subject: alloc, copy or residency");
  };
}

}  // namespace

MEMLAKE_CLI_COMMAND(20, setup_bench);

}  // namespace memlake::cli
