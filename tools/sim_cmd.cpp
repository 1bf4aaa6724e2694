// `memlake sim DIR MODEL/BATCH`: plan and simulate one training iteration of
// a G10 workload under a policy (src/plan/), on G10's default machine or one
// described with --set KEY=VALUE.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "core/error.h"
#include "plan/g10_reader.h"
#include "plan/profile_text.h"
#include "plan/simulator.h"

namespace {

using namespace memlake::plan;

const char kSimUsage[] =
    "Usage: memlake sim DIR MODEL/BATCH [options]\n"
    "       memlake sim --profile FILE [options]\n"
    "  DIR          G10's data (frontend/Nets, results/<model>/cudnn<batch>*.txt)\n"
    "  --profile F  a memlake profile (memlake.torch.tier()'s save_profile, docs/design/tiering.md):\n"
    "               its machine lines apply over --machine (default h200 for a profile), then --set\n"
    "  --policy P   ideal, lru, g10, memlake or all (default: all); with --profile also recorded:\n"
    "               the moves the profiled run executed (its \"move\" lines)\n"
    "  --machine M  g10 (default: G10's artifact: A100 40 GiB, 128 GiB host, PCIe 15.754, SSD 3.2)\n"
    "               or h200 (55 GB/s copies, ~1 GB/s disk)\n"
    "  --set K=V    a machine parameter (GiB, GiB/s, us): gpu_mem host_mem pcie ssd ssd_read\n"
    "               ssd_write pcie_latency_us ssd_read_latency_us ssd_write_latency_us\n"
    "               fault_latency_us gpu_ghz overlap (1: kernels overlap their inputs' arrival, UVM)\n"
    "  --strict     same as --set overlap=0: a kernel starts only with all inputs on the GPU\n"
    "  --json       one JSON object\n"
    "  --sweep S    host (0-256 GiB), ssd (3.2-32 GiB/s) or pcie (16-128 GiB/s): fraction of ideal\n"
    "  --svg FILE   with --sweep: also plot it\n";

int sim_usage_error(const std::string& what) {
  std::fprintf(stderr, "memlake sim: %s\n%s", what.c_str(), kSimUsage);
  return 2;
}

struct Row {
  std::string policy;
  SimResult r;
  double plan_s = 0, sim_s = 0;
  std::size_t moves = 0;
};

// The schedule simulated on the machine, as a row of the table.
Row run_schedule(const Profile& p, const Machine& m, const std::string& name, const Schedule& s, double plan_s) {
  Row row;
  row.policy = name;
  const auto t0 = std::chrono::steady_clock::now();
  row.r = simulate(p, m, s);
  row.sim_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  row.plan_s = plan_s;
  row.moves = s.moves.size();
  return row;
}

Row run_policy(const Profile& p, const Machine& m, const std::string& policy) {
  const auto t0 = std::chrono::steady_clock::now();
  Schedule s = make_planner(policy)->plan(p, m);
  return run_schedule(p, m, policy, s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

double gb(std::uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0); }

void print_text(const Profile& p, const Machine& m, const std::vector<Row>& rows) {
  std::printf("workload %s: %zu kernels, %zu tensors, %.1f GiB in all, peak live %.1f GiB, weights %.2f GiB\n",
              p.name.c_str(), p.kernels.size(), p.tensors.size(), gb(p.total_bytes()), gb(p.peak_live_bytes()),
              gb(p.persistent_bytes()));
  std::printf("machine  %s, %s\n", describe(m).c_str(),
              m.overlap_arrivals ? "kernels overlap their inputs' arrival (UVM)" : "strict residency");
  std::printf("ideal    %.3f s (%.3f G10 units: Gcycles at %.2f GHz)\n\n", p.ideal_seconds(),
              p.ideal_seconds() * m.gpu_clock_hz / 1e9, m.gpu_clock_hz / 1e9);
  std::printf("bytes per iteration in GiB (->host: GPU to host, ssd->: SSD to GPU, demand: fetched on a fault)\n");
  std::printf("%-12s %10s %8s %9s %9s %9s %9s %9s %9s %7s %6s\n", "policy", "iter s", "of ideal", "stall s",
              "->host", "host->", "->ssd", "ssd->", "demand", "moves", "plan s");
  for (const Row& r : rows)
    std::printf("%-12s %10.3f %8.3f %9.3f %8.1fG %8.1fG %8.1fG %8.1fG %8.1fG %7zu %6.2f\n", r.policy.c_str(),
                r.r.iteration_s, r.r.fraction_of_ideal(), r.r.stall_s, gb(r.r.to_host), gb(r.r.from_host),
                gb(r.r.to_ssd), gb(r.r.from_ssd), gb(r.r.demand_fetch_bytes), r.moves, r.plan_s + r.sim_s);
}

void print_json(const Profile& p, const Machine& m, const std::vector<Row>& rows) {
  std::printf("{\"workload\":\"%s\",\"kernels\":%zu,\"tensors\":%zu,\"total_bytes\":%llu,\"peak_live_bytes\":%llu,",
              p.name.c_str(), p.kernels.size(), p.tensors.size(), static_cast<unsigned long long>(p.total_bytes()),
              static_cast<unsigned long long>(p.peak_live_bytes()));
  std::printf("\"machine\":{\"gpu_bytes\":%llu,\"host_bytes\":%llu,\"pcie_bps\":%.0f,\"ssd_read_bps\":%.0f,"
              "\"ssd_write_bps\":%.0f,\"overlap_arrivals\":%s},",
              static_cast<unsigned long long>(m.gpu_bytes), static_cast<unsigned long long>(m.host_bytes), m.pcie_bps,
              m.ssd_read_bps, m.ssd_write_bps, m.overlap_arrivals ? "true" : "false");
  std::printf("\"ideal_s\":%.6f,\"g10_units\":%.6f,\"results\":[", p.ideal_seconds(),
              p.ideal_seconds() * m.gpu_clock_hz / 1e9);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SimResult& r = rows[i].r;
    std::printf("%s{\"policy\":\"%s\",\"iteration_s\":%.6f,\"g10_units\":%.6f,\"fraction_of_ideal\":%.6f,"
                "\"stall_s\":%.6f,\"bytes\":{\"to_host\":%llu,\"from_host\":%llu,\"to_ssd\":%llu,\"from_ssd\":%llu},"
                "\"demand_fetch_bytes\":%llu,\"demand_evict_bytes\":%llu,\"faults\":%llu,\"peak_gpu_bytes\":%llu,"
                "\"peak_host_bytes\":%llu,\"moves\":%zu,\"plan_s\":%.4f,\"sim_s\":%.4f}",
                i ? "," : "", rows[i].policy.c_str(), r.iteration_s, r.iteration_s * m.gpu_clock_hz / 1e9,
                r.fraction_of_ideal(), r.stall_s, static_cast<unsigned long long>(r.to_host),
                static_cast<unsigned long long>(r.from_host), static_cast<unsigned long long>(r.to_ssd),
                static_cast<unsigned long long>(r.from_ssd), static_cast<unsigned long long>(r.demand_fetch_bytes),
                static_cast<unsigned long long>(r.demand_evict_bytes), static_cast<unsigned long long>(r.faults),
                static_cast<unsigned long long>(r.peak_gpu_bytes), static_cast<unsigned long long>(r.peak_host_bytes),
                rows[i].moves, rows[i].plan_s, rows[i].sim_s);
  }
  std::printf("]}\n");
}

struct Sweep {
  std::string key, unit;
  std::vector<double> values;
};

Sweep sweep_of(const std::string& what) {
  if (what == "host") return {"host_mem", "GiB", {0, 16, 32, 64, 128, 256}};
  if (what == "ssd") return {"ssd", "GiB/s", {3.2, 6.4, 12.8, 19.2, 25.6, 32}};
  if (what == "pcie") return {"pcie", "GiB/s", {15.754, 32, 64, 128}};
  memlake::throw_error(memlake::Errc::invalid_argument, "--sweep: '" + what + "' is not host, ssd or pcie");
}

void write_svg(const std::string& file, const Profile& p, const Sweep& sw, const std::vector<std::string>& pols,
               const std::vector<std::vector<double>>& frac) {
  std::FILE* f = std::fopen(file.c_str(), "w");
  if (!f) memlake::throw_error(memlake::Errc::invalid_argument, "cannot write " + file);
  const double W = 640, H = 400, L = 60, R = 120, T = 40, B = 50;
  const char* colors[] = {"#444", "#d62728", "#1f77b4", "#2ca02c"};
  std::fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='sans-serif' font-size='12'>\n", W, H);
  std::fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
  std::fprintf(f, "<text x='%.0f' y='20' font-size='14'>%s: fraction of ideal vs %s (%s)</text>\n", L, p.name.c_str(),
               sw.key.c_str(), sw.unit.c_str());
  const std::size_t n = sw.values.size();
  auto x = [&](std::size_t i) { return L + (W - L - R) * (n > 1 ? static_cast<double>(i) / (n - 1) : 0.5); };
  auto y = [&](double v) { return T + (H - T - B) * (1 - v); };
  std::fprintf(f, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='black'/>\n", L, y(0), W - R, y(0));
  std::fprintf(f, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='black'/>\n", L, y(0), L, y(1));
  for (int t = 0; t <= 4; ++t)
    std::fprintf(f, "<text x='%.0f' y='%.0f' text-anchor='end'>%.2f</text>\n", L - 6, y(t / 4.0) + 4, t / 4.0);
  for (std::size_t i = 0; i < n; ++i)
    std::fprintf(f, "<text x='%.1f' y='%.0f' text-anchor='middle'>%g</text>\n", x(i), y(0) + 18, sw.values[i]);
  for (std::size_t q = 0; q < pols.size(); ++q) {
    std::fprintf(f, "<polyline fill='none' stroke-width='2' stroke='%s' points='", colors[q % 4]);
    for (std::size_t i = 0; i < n; ++i) std::fprintf(f, "%.1f,%.1f ", x(i), y(std::min(1.0, frac[q][i])));
    std::fprintf(f, "'/>\n<text x='%.0f' y='%.0f' fill='%s'>%s</text>\n", W - R + 8, T + 16.0 * q, colors[q % 4],
                 pols[q].c_str());
  }
  std::fprintf(f, "</svg>\n");
  std::fclose(f);
}

}  // namespace

int cmd_sim(const std::vector<std::string>& args) {
  std::vector<std::string> pos, sets;
  std::string policy = "all", machine, sweep, svg, profile;
  bool json = false, strict = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw memlake::Error(memlake::Errc::invalid_argument, a + " needs a value");
      return args[++i];
    };
    try {
      if (a == "--policy") policy = value();
      else if (a == "--machine") machine = value();
      else if (a == "--profile") profile = value();
      else if (a == "--set") sets.push_back(value());
      else if (a == "--json") json = true;
      else if (a == "--strict") strict = true;
      else if (a == "--sweep") sweep = value();
      else if (a == "--svg") svg = value();
      else if (a == "--help" || a == "-h") {
        std::fputs(kSimUsage, stdout);
        return 0;
      } else if (a.size() > 1 && a[0] == '-') return sim_usage_error("unknown option " + a);
      else pos.push_back(a);
    } catch (const memlake::Error& e) {
      return sim_usage_error(e.what());
    }
  }
  if (profile.empty() && pos.size() != 2) return sim_usage_error("expected DIR and MODEL/BATCH");
  if (!profile.empty() && !pos.empty()) return sim_usage_error("--profile takes no DIR or MODEL/BATCH");
  const std::size_t slash = profile.empty() ? pos[1].rfind('/') : 0;
  if (profile.empty() && (slash == std::string::npos || slash == 0 || slash + 1 == pos[1].size()))
    return sim_usage_error("expected MODEL/BATCH, e.g. BERT_Base/256, got '" + pos[1] + "'");
  if (!svg.empty() && sweep.empty()) return sim_usage_error("--svg goes with --sweep");
  if (machine.empty()) machine = profile.empty() ? "g10" : "h200";
  try {
    Machine m;
    if (machine == "g10") m = Machine::g10_default();
    else if (machine == "h200") m = Machine::h200();
    else return sim_usage_error("--machine: '" + machine + "' is not g10 or h200");
    Profile p;
    Schedule recorded;  // a profile's "move" lines: the plan its run executed
    if (!profile.empty()) {
      ProfileFile f = read_profile_file(profile);
      for (const auto& kv : f.machine) machine_set(m, kv);
      recorded = f.recorded();
      p = std::move(f.profile);
    }
    for (const auto& kv : sets) machine_set(m, kv);
    if (strict) m.overlap_arrivals = false;
    std::vector<std::string> pols;
    if (policy == "all") pols = planner_names();
    else if (policy == "recorded" && !profile.empty()) {
      // only the run's own moves (below)
    } else {
      make_planner(policy);  // validates the name
      pols = {policy};
    }
    if (profile.empty()) {
      G10WorkloadOptions opt;
      const std::string bstr = pos[1].substr(slash + 1);
      char* end = nullptr;
      long b = std::strtol(bstr.c_str(), &end, 10);
      if (*end != '\0' || b <= 0 || b > 1000000) return sim_usage_error("bad batch size '" + bstr + "'");
      opt.batch = static_cast<int>(b);
      p = read_g10_workload(pos[0], pos[1].substr(0, slash), opt);
    }
    if (sweep.empty()) {
      std::vector<Row> rows;
      for (const auto& pol : pols) rows.push_back(run_policy(p, m, pol));
      // What the profiled run itself executed, moves as recorded; anything else on demand.
      if (!recorded.moves.empty() && (policy == "all" || policy == "recorded"))
        rows.push_back(run_schedule(p, m, "recorded", recorded, 0));
      if (json) print_json(p, m, rows);
      else print_text(p, m, rows);
      return 0;
    }
    Sweep sw = sweep_of(sweep);
    std::vector<std::vector<double>> frac(pols.size());
    if (!json) {
      std::printf("workload %s, fraction of ideal (%.3f s) vs %s in %s\n%-10s", p.name.c_str(), p.ideal_seconds(),
                  sw.key.c_str(), sw.unit.c_str(), sw.key.c_str());
      for (const auto& pol : pols) std::printf(" %9s", pol.c_str());
      std::printf("\n");
    } else {
      std::printf("{\"workload\":\"%s\",\"sweep\":\"%s\",\"rows\":[", p.name.c_str(), sw.key.c_str());
    }
    for (std::size_t i = 0; i < sw.values.size(); ++i) {
      Machine mm = m;
      char kv[64];
      std::snprintf(kv, sizeof kv, "%s=%g", sw.key.c_str(), sw.values[i]);
      machine_set(mm, kv);
      // Like G10's SSD sweep: the link is at least 32 GiB/s, and at least the SSD's.
      if (sweep == "ssd") mm.pcie_bps = mm.pcie_out_bps = std::max(mm.ssd_read_bps, 32.0 * 1024 * 1024 * 1024);
      if (!json) std::printf("%-10g", sw.values[i]);
      else std::printf("%s{\"value\":%g,\"fraction_of_ideal\":{", i ? "," : "", sw.values[i]);
      for (std::size_t q = 0; q < pols.size(); ++q) {
        double f = 0;
        try {
          f = run_policy(p, mm, pols[q]).r.fraction_of_ideal();
        } catch (const memlake::Error& e) {
          if (e.code() != memlake::Errc::out_of_memory) throw;
        }
        frac[q].push_back(f);
        if (!json) std::printf(" %9.3f", f);
        else std::printf("%s\"%s\":%.6f", q ? "," : "", pols[q].c_str(), f);
      }
      if (!json) std::printf("\n");
      else std::printf("}}");
    }
    if (json) std::printf("]}\n");
    if (!svg.empty()) write_svg(svg, p, sw, pols, frac);
    return 0;
  } catch (const memlake::Error& e) {
    std::fprintf(stderr, "memlake sim: %s\n", e.what());
    return e.code() == memlake::Errc::invalid_argument ? 2 : 1;
  }
}

namespace memlake::cli {
namespace {

// sim parses its own arguments (G10 workloads take free-form --set K=V).
Action setup_sim(CLI::App& app) {
  auto* sub = app.add_subcommand("sim", "plan and simulate a G10 workload's training iteration under a policy");
  sub->prefix_command();
  sub->set_help_flag();  // sim prints its own usage for --help
  return [sub] { return cmd_sim(sub->remaining()); };
}

}  // namespace

MEMLAKE_CLI_COMMAND(45, setup_sim);

}  // namespace memlake::cli
