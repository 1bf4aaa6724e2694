// src/plan: profile, G10 reader errors, planners and simulator on synthetic
// profiles (CPU only, no data files beyond tests/data/g10).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>

#include "core/error.h"
#include "plan/g10_reader.h"
#include "plan/latest_start.h"
#include "plan/planner_util.h"
#include "plan/profile_text.h"
#include "plan/simulator.h"

using namespace memlake::plan;
using memlake::Errc;
using memlake::Error;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

// A chain of `n` layers: forward writes an activation, backward reads it.
Profile chain_profile(int n, std::uint64_t act, double kernel_s) {
  Profile p;
  p.name = "chain";
  std::vector<TensorId> acts, weights;
  for (int i = 0; i < n; ++i) {
    acts.push_back(p.add_tensor("a" + std::to_string(i), act, false));
    weights.push_back(p.add_tensor("w" + std::to_string(i), act / 8, true));
  }
  for (int i = 0; i < n; ++i) {
    Kernel k{"fwd" + std::to_string(i), kernel_s, {weights[i]}, {acts[i]}};
    if (i > 0) k.reads.push_back(acts[i - 1]);
    p.kernels.push_back(k);
  }
  for (int i = n - 1; i >= 0; --i) p.kernels.push_back({"bwd" + std::to_string(i), kernel_s, {acts[i], weights[i]}, {weights[i]}});
  p.finalize();
  return p;
}

Machine small_machine(std::uint64_t gpu) {
  Machine m = Machine::g10_default();
  m.gpu_bytes = gpu;
  m.host_bytes = 64ULL << 30;
  m.pcie_bps = m.pcie_out_bps = 10e9;
  m.ssd_read_bps = m.ssd_write_bps = 2e9;
  m.overlap_arrivals = false;
  return m;
}

// Random profile: kernels use a few tensors each; some tensors persistent.
Profile random_profile(std::mt19937& rng) {
  Profile p;
  p.name = "random";
  std::uniform_int_distribution<int> nk(20, 120), nt(10, 80), sz(1, 64), pick(0, 1000000);
  const int K = nk(rng), T = nt(rng);
  for (int t = 0; t < T; ++t) p.add_tensor("t" + std::to_string(t), sz(rng) * kMiB, pick(rng) % 5 == 0);
  for (int k = 0; k < K; ++k) {
    Kernel kr;
    kr.name = "k" + std::to_string(k);
    kr.seconds = (1 + pick(rng) % 50) * 1e-4;
    const int uses = 1 + pick(rng) % 4;
    for (int u = 0; u < uses; ++u) {
      TensorId t = pick(rng) % T;
      (pick(rng) % 2 ? kr.reads : kr.writes).push_back(t);
    }
    p.kernels.push_back(kr);
  }
  p.finalize();
  return p;
}

std::uint64_t max_working_set(const Profile& p) {
  std::uint64_t m = 0;
  for (std::size_t k = 0; k < p.kernels.size(); ++k) m = std::max(m, p.working_set(static_cast<int>(k)));
  return m;
}

std::string temp_file(const std::string& content) {
  char path[] = "/tmp/memlake_plan_XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << content;
  return path;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace

TEST(PlanProfile, LivenessAndWorkingSets) {
  Profile p = chain_profile(3, 100 * kMiB, 0.01);
  ASSERT_EQ(p.kernels.size(), 6u);
  EXPECT_EQ(p.first_use(0), 0);  // a0 written by fwd0
  EXPECT_EQ(p.last_use(0), 5);   // read by bwd0, the last kernel
  EXPECT_EQ(p.next_use(0, 2), 5);
  EXPECT_NEAR(p.ideal_seconds(), 0.06, 1e-12);
  EXPECT_EQ(p.persistent_bytes(), 3 * (100 * kMiB / 8));
  // At bwd2 (kernel 3) all three activations are alive.
  EXPECT_EQ(p.live_bytes(3), p.persistent_bytes() + 3 * 100 * kMiB);
  EXPECT_EQ(p.working_set(1), 100 * kMiB / 8 + 2 * 100 * kMiB);
}

TEST(PlanProfile, RejectsAnUnknownTensor) {
  Profile p;
  p.add_tensor("x", 10, false);
  p.kernels.push_back({"k", 1.0, {0, 7}, {}});
  EXPECT_NE(error_of([&] { p.finalize(); }).find("uses tensor 7"), std::string::npos);
}

TEST(PlanProfile, IntervalsCoverEveryGapAndWrapForWeights) {
  Profile p = chain_profile(3, 100 * kMiB, 0.01);
  auto iv = inactive_intervals(p);
  // a0: used at 0, 1 (read by fwd1) and 5: one gap [2,5).
  bool found_a0 = false, found_w0_wrap = false;
  for (const auto& i : iv) {
    if (i.tensor == 0) {
      EXPECT_EQ(i.start, 2);
      EXPECT_EQ(i.end, 5);
      EXPECT_FALSE(i.looped);
      found_a0 = true;
    }
    // w2 (tensor 5): used at 2 and 3; its gap wraps from 4 to 2.
    if (i.tensor == 5 && i.looped) {
      EXPECT_EQ(i.start, 4);
      EXPECT_EQ(i.end, 2);
      found_w0_wrap = true;
    }
  }
  EXPECT_TRUE(found_a0);
  EXPECT_TRUE(found_w0_wrap);
}

TEST(PlanMachine, UnknownParameterIsNamed) {
  Machine m = Machine::g10_default();
  machine_set(m, "ssd=6.4");
  EXPECT_NEAR(m.ssd_read_bps, 6.4 * 1024 * 1024 * 1024, 1);
  std::string e = error_of([&] { machine_set(m, "warp_drive=3"); });
  EXPECT_NE(e.find("unknown machine parameter 'warp_drive'"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { machine_set(m, "pcie=fast"); }).find("bad value 'fast'"), std::string::npos);
  EXPECT_NE(error_of([&] { machine_set(m, "gpu_mem=0"); }).find("must be positive"), std::string::npos);
}

TEST(PlanPolicies, UnknownPolicyIsNamed) {
  EXPECT_NE(error_of([] { make_planner("belady2"); }).find("unknown policy 'belady2'"), std::string::npos);
}

TEST(PlanSimulator, IdealIsTheSumOfKernelTimes) {
  Profile p = chain_profile(8, 64 * kMiB, 0.01);
  Machine m = small_machine(16 * kMiB);  // far too small, but ideal has no limit
  SimResult r = simulate(p, m, make_planner("ideal")->plan(p, m));
  EXPECT_NEAR(r.iteration_s, p.ideal_seconds(), 1e-9);
  EXPECT_NEAR(r.fraction_of_ideal(), 1.0, 1e-12);
  EXPECT_EQ(r.to_host + r.to_ssd, 0u);
}

TEST(PlanSimulator, AWorkloadThatCannotFitSaysWhichKernelAndWhy) {
  Profile p = chain_profile(4, 64 * kMiB, 0.01);
  Machine m = small_machine(100 * kMiB);  // fwd1 needs 2 activations + a weight = 136 MiB
  try {
    simulate(p, m, make_planner("lru")->plan(p, m));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::out_of_memory);
    EXPECT_NE(std::string(e.what()).find("alone needs"), std::string::npos) << e.what();
  }
}

TEST(PlanSimulator, OnDemandMigrationMovesBytesAndStalls) {
  Profile p = chain_profile(16, 64 * kMiB, 0.005);
  Machine m = small_machine(400 * kMiB);
  ASSERT_GT(p.peak_live_bytes(), m.gpu_bytes);
  SimResult r = simulate(p, m, make_planner("lru")->plan(p, m));
  EXPECT_GT(r.to_host, 0u);
  EXPECT_EQ(r.to_host, r.from_host);  // one iteration in steady state: what leaves comes back
  EXPECT_GT(r.stall_s, 0);
  EXPECT_NEAR(r.iteration_s, p.ideal_seconds() + r.stall_s, 1e-9);
  EXPECT_LE(r.peak_gpu_bytes, m.gpu_bytes);
  EXPECT_EQ(r.launched_missing, 0u);
}

// A fault is served ahead of a prefetch already moving on the same link (G10's
// batcher drains its page-fault queues before its prefetch queues in every
// batch): the small tensor does not wait for the big one's remaining bytes.
TEST(PlanSimulator, AFaultGoesAheadOfAPrefetchAlreadyMoving) {
  Profile p;
  p.name = "fault-first";
  const TensorId big = p.add_tensor("big", 1024 * kMiB, false);
  const TensorId small = p.add_tensor("small", 1 * kMiB, false);
  const TensorId other = p.add_tensor("other", 1 * kMiB, false);
  p.kernels.push_back({"write", 0.01, {}, {big, small}});
  p.kernels.push_back({"idle", 1.0, {other}, {}});
  p.kernels.push_back({"use-small", 2.0, {small}, {}});
  p.kernels.push_back({"use-big", 0.01, {big}, {}});
  p.finalize();
  Machine m = small_machine(4096 * kMiB);
  Schedule s;
  s.moves = {{Move::Evict, big, 1, Tier::Ssd}, {Move::Evict, small, 1, Tier::Ssd}, {Move::Prefetch, big, 2, Tier::Gpu}};
  s.sort();
  SimResult r = simulate(p, m, s);
  EXPECT_EQ(r.from_ssd, 1025 * kMiB);
  EXPECT_EQ(r.demand_fetch_bytes, 1 * kMiB);
  // The fault: its latency and 1 MiB from the SSD (about 0.6 ms), not the
  // 0.54 s that 1 GiB takes at 2 GB/s; big arrives while use-small runs.
  EXPECT_LT(r.stall_s, 0.01);
}

TEST(PlanSimulator, PlannedPrefetchHidesTheCopiesThatLruStallsOn) {
  Profile p = chain_profile(24, 64 * kMiB, 0.02);
  Machine m = small_machine(600 * kMiB);
  ASSERT_GT(p.peak_live_bytes(), m.gpu_bytes);
  SimResult lru = simulate(p, m, make_planner("lru")->plan(p, m));
  SimResult g10 = simulate(p, m, make_planner("g10")->plan(p, m));
  SimResult ml = simulate(p, m, make_planner("memlake")->plan(p, m));
  EXPECT_GT(g10.fraction_of_ideal(), lru.fraction_of_ideal());
  EXPECT_GE(ml.fraction_of_ideal(), g10.fraction_of_ideal() - 1e-9);
  EXPECT_GT(ml.fraction_of_ideal(), 0.95);
}

// The planner property test: on random profiles and budgets, for every
// policy, (1) every tensor a plan evicts is prefetched again no later than
// its next use, (2) executing the plan (strict residency) never launches a
// kernel with a tensor off the GPU and never exceeds the GPU budget.
TEST(PlanProperty, EveryTensorIsBackBeforeItsUseAndTheBudgetHolds) {
  std::mt19937 rng(12345);
  int planned_evictions = 0;
  for (int round = 0; round < 60; ++round) {
    Profile p = random_profile(rng);
    const std::uint64_t ws = max_working_set(p);
    const std::uint64_t peak = p.peak_live_bytes();
    std::uniform_real_distribution<double> f(0.0, 1.0);
    // A budget between the largest working set and the peak (+slack).
    const std::uint64_t budget = ws + static_cast<std::uint64_t>(f(rng) * static_cast<double>(peak - std::min(peak, ws) + kMiB));
    Machine m = small_machine(budget);
    m.host_bytes = static_cast<std::uint64_t>(f(rng) * static_cast<double>(p.total_bytes()));  // sometimes SSD too
    for (const auto& name : planner_names()) {
      SCOPED_TRACE("round " + std::to_string(round) + " policy " + name);
      Schedule s = make_planner(name)->plan(p, m);
      const int K = static_cast<int>(p.kernels.size());
      for (const Move& mv : s.moves) {
        ASSERT_GE(mv.at, 0);
        ASSERT_LT(mv.at, K);
        if (mv.kind != Move::Evict) continue;
        ++planned_evictions;
        // Never evicts what the kernel it is issued at uses.
        const auto& used = p.used_by(mv.at);
        ASSERT_FALSE(std::binary_search(used.begin(), used.end(), mv.tensor));
        // A prefetch of it follows, at or before its next use (wrapping).
        int next = p.next_use(mv.tensor, mv.at);
        if (next < 0) {
          if (!p.tensors[mv.tensor].persistent) continue;  // dead: nothing to bring back
          next = p.first_use(mv.tensor) + K;
        }
        bool back = false;
        for (const Move& pf : s.moves) {
          if (pf.kind != Move::Prefetch || pf.tensor != mv.tensor) continue;
          int at = pf.at < mv.at ? pf.at + K : pf.at;
          if (at >= mv.at && at <= next) back = true;
        }
        EXPECT_TRUE(back) << "tensor " << mv.tensor << " evicted at " << mv.at << " not back by " << next;
      }
      SimResult r = simulate(p, m, s);
      EXPECT_EQ(r.launched_missing, 0u);
      if (!s.unlimited_gpu) {
        EXPECT_LE(r.peak_gpu_bytes, budget);
      }
      EXPECT_GE(r.iteration_s, p.ideal_seconds() - 1e-9);
    }
  }
  EXPECT_GT(planned_evictions, 0);  // the rounds exercised planned moves
}

TEST(PlanG10Reader, MalformedNetworkNamesFileAndLine) {
  std::string f = temp_file("Net(\n  (conv): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1))\n  (bad): Frobnicate(7)\n)\n");
  Profile p;
  std::string e = error_of([&] { read_g10_cnn(f, 4, 32, p); });
  EXPECT_NE(e.find(f + ":3: unsupported layer type 'Frobnicate'"), std::string::npos) << e;
  std::string g = temp_file("Net(\n  (conv): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1))\n");
  Profile q;
  e = error_of([&] { read_g10_cnn(g, 4, 32, q); });
  EXPECT_NE(e.find("unterminated 'Net(' opened at line 1"), std::string::npos) << e;
  std::remove(f.c_str());
  std::remove(g.c_str());
}

TEST(PlanG10Reader, MalformedOperatorListNamesFileAndLine) {
  std::string f = temp_file("5\nRelu\n1\n2\n2\n99\nx\n-------------------\n");
  Profile p;
  std::string e = error_of([&] { read_g10_transformer(f, 4, 0, p); });
  EXPECT_NE(e.find(f + ":7: expected a dimension, got 'x'"), std::string::npos) << e;
  std::remove(f.c_str());
}

TEST(PlanG10Reader, KernelTimesMustMatchTheNetwork) {
  std::string net = temp_file("Net(\n  (conv): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), bias=False)\n  (relu): ReLU(inplace=True)\n)\n");
  Profile p;
  read_g10_cnn(net, 2, 16, p);
  // LoadData, conv, relu forward; loss; relu, conv (weight, input, update) backward.
  ASSERT_EQ(p.kernels.size(), 8u);
  std::string ok, bad;
  for (int i = 0; i < 8; ++i) ok += std::to_string(i) + " 0.5 ms\n";
  read_g10_kernel_times(temp_file(ok), p);
  EXPECT_DOUBLE_EQ(p.kernels[3].seconds, 0.5e-3);
  std::string few = temp_file("0 1 ms\n1 1 ms\n");
  std::string e = error_of([&] { read_g10_kernel_times(few, p); });
  EXPECT_NE(e.find("has 2 kernel times, the network has 8 kernels"), std::string::npos) << e;
  std::string unit = temp_file("0 1 ms\n1 1 us\n");
  e = error_of([&] { read_g10_kernel_times(unit, p); });
  EXPECT_NE(e.find(unit + ":2: unit 'us'"), std::string::npos) << e;
}

// ---- the tier() profile: the text format and the latest-start planner -------

namespace {

// What memlake.torch.tier() profiles: a forward, then one kernel per
// parameter step (its optimizer states used once), `gap_s` apart.
Profile tier_profile(int n, std::uint64_t bytes, double gap_s, double forward_s) {
  Profile p;
  p.name = "tier";
  p.kernels.push_back({"forward", forward_s, {}, {}});
  for (int i = 0; i < n; ++i) {
    const TensorId t = p.add_tensor("layer" + std::to_string(i) + ".states", bytes, true);
    p.kernels.push_back({"step" + std::to_string(i), gap_s, {t}, {}});
  }
  p.finalize();
  return p;
}

Machine link_machine(std::uint64_t gpu, double gbps) {
  Machine m = Machine::h200();
  m.gpu_bytes = gpu;
  m.pcie_bps = m.pcie_out_bps = gbps * 1e9;
  return m;
}

}  // namespace

TEST(PlanProfileText, RoundTripsWithItsMachineLines) {
  Profile p = tier_profile(5, 3 * kMiB, 0.002, 0.05);
  const std::string text = profile_text(p, {"gpu_bytes=123456789", "pcie=40"});
  std::istringstream in(text);
  ProfileFile f = read_profile_text(in, "t.txt");
  EXPECT_EQ(f.profile.name, "tier");
  ASSERT_EQ(f.profile.kernels.size(), p.kernels.size());
  ASSERT_EQ(f.profile.tensors.size(), p.tensors.size());
  EXPECT_EQ(f.profile.tensors[4].bytes, 3 * kMiB);
  EXPECT_TRUE(f.profile.tensors[4].persistent);
  EXPECT_EQ(f.profile.uses(2), std::vector<int>{3});
  EXPECT_NEAR(f.profile.ideal_seconds(), p.ideal_seconds(), 1e-12);
  ASSERT_EQ(f.machine.size(), 2u);
  Machine m = Machine::h200();
  for (const auto& kv : f.machine) machine_set(m, kv);
  EXPECT_EQ(m.gpu_bytes, 123456789u);  // exact bytes, not GiB rounded
  EXPECT_DOUBLE_EQ(m.pcie_out_bps, m.pcie_bps);
}

TEST(PlanProfileText, EveryMalformedLineIsAnErrorWithFileAndLine) {
  const std::pair<const char*, const char*> bad[] = {
      {"tensor a 1 persistent\n", "t.txt:1: not a memlake profile"},
      {"memlake-profile 2\n", "t.txt:1: not a memlake profile"},
      {"memlake-profile 1\ntensor a x persistent\n", "t.txt:2: tensor a: bad size"},
      {"memlake-profile 1\ntensor a -5 persistent\n", "t.txt:2: tensor a: bad size"},
      {"memlake-profile 1\ntensor a 5 sometimes\n", "t.txt:2: tensor a: 'sometimes'"},
      {"memlake-profile 1\ntensor a 5 persistent\nkernel k 0.1 1\n", "t.txt:3: kernel k: '1' is not a tensor"},
      {"memlake-profile 1\nkernel k -1\n", "t.txt:2: kernel k: bad time"},
      {"memlake-profile 1\nkernel k nan\n", "t.txt:2: kernel k: bad time"},
      {"memlake-profile 1\nwarp 9\n", "t.txt:2: unknown line 'warp'"},
      {"memlake-profile 1\nmachine gpu_mem\n", "t.txt:2: expected 'machine KEY=VALUE'"},
      {"memlake-profile 1\n# only a comment\n", "t.txt:2: no kernels"},
      {"memlake-profile 1\ntensor a 5 persistent\nkernel k 0.1 0\nmove evict 1 0\n", "t.txt:4: move: '1' is not a tensor"},
      {"memlake-profile 1\ntensor a 5 persistent\nkernel k 0.1 0\nmove evict 0 1\n", "t.txt:4: move: '1' is not a kernel"},
      {"memlake-profile 1\ntensor a 5 persistent\nkernel k 0.1 0\nmove fly 0 0\n", "t.txt:4: expected 'move evict|prefetch"},
      {"memlake-profile 1\ntensor a 5 persistent\nkernel k 0.1 0\nmove evict 0 0 tape\n", "t.txt:4: move: tier 'tape'"},
      {"memlake-profile 1\ntensor a 5 persistent\nkernel k 0.1 0\nmove evict -1 0\n", "t.txt:4: move: '-1' is not a tensor"},
      {"", "t.txt:0: empty"},
  };
  for (const auto& [text, want] : bad) {
    std::istringstream in(text);
    try {
      read_profile_text(in, "t.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what() << " / want " << want;
    }
  }
  Machine m = Machine::h200();
  for (const char* kv : {"gpu_bytes=-1", "gpu_bytes=1e9", "gpu_bytes=99999999999999999999999", "pcie_out=0"})
    EXPECT_THROW(machine_set(m, kv), Error) << kv;
}

TEST(PlanProfileText, MoveLinesAreTheRecordedPlanAndSimulateAsGiven) {
  // Two steps' states and a GPU with room for one of them: the recorded plan sends b out
  // before the forward and a out before b's step, each coming back in time for its own.
  const char* text =
      "memlake-profile 1\n"
      "machine gpu_bytes=3145728\n"
      "tensor a 2097152 persistent\n"
      "tensor b 2097152 persistent\n"
      "kernel fwd 0.010\n"
      "kernel sa 0.001 0\n"
      "kernel sb 0.001 1\n"
      "move evict 1 0 host\n"
      "move prefetch 0 0\n"
      "move evict 0 2\n"
      "move prefetch 1 2\n";
  std::istringstream in(text);
  ProfileFile f = read_profile_text(in, "t.txt");
  ASSERT_EQ(f.moves.size(), 4u);
  EXPECT_EQ(f.moves[0].kind, Move::Evict);
  EXPECT_EQ(f.moves[0].tensor, 1);
  EXPECT_EQ(f.moves[0].at, 0);
  EXPECT_EQ(f.moves[0].tier, Tier::Host);
  EXPECT_EQ(f.moves[1].kind, Move::Prefetch);
  Machine m = Machine::h200();
  for (const auto& kv : f.machine) machine_set(m, kv);
  Schedule s;
  s.moves = f.moves;
  s.sort();
  SimResult r = simulate(f.profile, m, s);
  EXPECT_EQ(r.to_host, 2 * 2097152u);  // each out once per iteration, as recorded
  EXPECT_EQ(r.from_host, 2 * 2097152u);
  EXPECT_EQ(r.demand_fetch_bytes, 0u);  // nothing fetched on a fault
  EXPECT_LE(r.peak_gpu_bytes, 3145728u);
}

TEST(PlanLatestStart, WhenNothingHidesEveryRestoreIsIssuedAsEarlyAsTheRoomAllows) {
  // 20 steps 2 ms apart, 256 MiB each, a link that moves one in 5.4 ms and
  // room for 3: no resident prefix lets every restore hide. Each restore is
  // issued as early as the room allows (not at its use, one at a time), and
  // the simulator finds that faster than restores on demand.
  const std::uint64_t b = 256 * kMiB;
  Profile p = tier_profile(20, b, 0.002, 0.100);
  Machine m = link_machine(3 * b, 50);
  LatestStartPlan lp = plan_latest_start(p, m);
  EXPECT_TRUE(lp.resident.empty());
  ASSERT_EQ(lp.tiered.size(), 20u);
  EXPECT_LE(lp.window_bytes, 3 * b);
  int ahead = 0;
  for (TensorId t : lp.tiered) {
    const int use = p.uses(t).front();
    EXPECT_LE(lp.issue[t], use) << p.tensors[t].name;
    ahead += lp.issue[t] < use;
  }
  EXPECT_GE(ahead, 15) << "most restores are issued before their use";
  Schedule on_demand;
  for (TensorId t : lp.tiered) {
    const int use = p.uses(t).front();
    on_demand.moves.push_back({Move::Evict, t, (use + 1) % static_cast<int>(p.kernels.size()), Tier::Host});
    on_demand.moves.push_back({Move::Prefetch, t, use, Tier::Gpu});
  }
  on_demand.victim = VictimRule::FurthestNextUse;
  on_demand.sort();
  const SimResult bounded = simulate(p, m, lp.schedule), late = simulate(p, m, on_demand);
  EXPECT_LT(bounded.iteration_s, late.iteration_s * 0.9) << bounded.iteration_s << " vs " << late.iteration_s;
  EXPECT_LE(bounded.peak_gpu_bytes, m.gpu_bytes);
  // The predicted stall is what the link cannot hide: at least the bytes' transfer beyond backward's time.
  EXPECT_GT(lp.stall_s, 20 * (b / 50e9) - 20 * 0.002 - 0.100 - 1e-9);
  EXPECT_LT(lp.stall_s, 20 * (b / 50e9));
}

TEST(PlanLatestStart, RestoresAreIssuedOneStepAheadWhenTheLinkKeepsUp) {
  // 20 steps 10 ms apart, 256 MiB of states each, room for 6: the link
  // (50 GB/s) moves one in 5.4 ms, so each restore is issued one step ahead.
  const std::uint64_t b = 256 * kMiB;
  Profile p = tier_profile(20, b, 0.010, 0.100);
  Machine m = link_machine(6 * b, 50);
  LatestStartPlan lp = plan_latest_start(p, m);
  EXPECT_EQ(lp.stall_s, 0);
  EXPECT_FALSE(lp.resident.empty());
  EXPECT_FALSE(lp.tiered.empty());
  EXPECT_LE(lp.resident_bytes + lp.window_bytes, 6 * b);
  for (TensorId t : lp.tiered) {
    const int use = p.uses(t).front();
    EXPECT_EQ(lp.issue[t], use - 1) << p.tensors[t].name;
  }
  // The earliest uses stay: every resident one comes before every tiered one.
  EXPECT_LT(p.uses(lp.resident.back()).front(), p.uses(lp.tiered.front()).front());
  // Moves: out right after the use, back at the issue kernel; the simulator
  // finds no stall beyond what the link cannot hide.
  for (const Move& mv : lp.schedule.moves) {
    if (mv.kind == Move::Evict) EXPECT_EQ(mv.at, (p.uses(mv.tensor).front() + 1) % static_cast<int>(p.kernels.size()));
    else EXPECT_EQ(mv.at, lp.issue[mv.tensor]);
  }
  const SimResult r = simulate(p, m, lp.schedule);
  EXPECT_GT(r.fraction_of_ideal(), 0.95) << r.iteration_s << " vs " << r.ideal_s;
  EXPECT_EQ(r.to_ssd, 0u);
  // memlake's planner weighs this plan too: it does no worse.
  EXPECT_LE(simulate(p, m, make_planner("memlake")->plan(p, m)).iteration_s, r.iteration_s * (1 + 1e-9));
}

TEST(PlanLatestStart, ASlowLinkIssuesFurtherAheadOrPredictsAStallAndHostOverflowGoesToSsd) {
  const std::uint64_t b = 256 * kMiB;
  Profile p = tier_profile(20, b, 0.001, 0.0);
  Machine m = link_machine(8 * b, 5);
  m.host_bytes = 4 * b;
  LatestStartPlan lp = plan_latest_start(p, m);
  bool ahead = false;
  for (TensorId t : lp.tiered) ahead = ahead || lp.issue[t] < p.uses(t).front() - 1;
  EXPECT_TRUE(lp.stall_s > 0 || ahead);
  int to_ssd = 0;
  for (const Move& mv : lp.schedule.moves) to_ssd += mv.kind == Move::Evict && mv.tier == Tier::Ssd;
  EXPECT_GT(to_ssd, 0);
}

TEST(PlanLatestStart, ABudgetBelowOneTensorNamesItAndTheSizes) {
  Profile p = tier_profile(3, 64 * kMiB, 0.001, 0.01);
  try {
    plan_latest_start(p, link_machine(10 * kMiB, 50));
    ADD_FAILURE() << "planned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::out_of_memory);
    const std::string w = e.what();
    EXPECT_NE(w.find("layer0.states"), std::string::npos) << w;
    EXPECT_NE(w.find("67108864 bytes"), std::string::npos) << w;
    EXPECT_NE(w.find("10485760 bytes"), std::string::npos) << w;
  }
  // The Planner face leaves it to the executor instead.
  EXPECT_TRUE(make_planner("latest-start")->plan(p, link_machine(10 * kMiB, 50)).moves.empty());
  // And the report (the C ABI's) carries the plan and the simulation.
  const std::string rep = plan_report(p, link_machine(1 << 30, 50), "latest-start");
  EXPECT_NE(rep.find("policy latest-start\n"), std::string::npos) << rep;
  EXPECT_NE(rep.find("\nsim iteration_s "), std::string::npos) << rep;
  EXPECT_NE(rep.find("tensor 0 resident"), std::string::npos) << rep;
}

// bounded() on ~300 candidates x ~400 kernels, sizes mixed: time,
// issue <= use, issues monotone in use order, window vs room, simulator peak.
TEST(PlanLatestStart, BoundedRestoresAtScaleStayInOrderAndBeatRestoresOnDemand) {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    Profile p;
    p.name = "scale";
    const int K = 400, N = 300;
    std::vector<std::vector<TensorId>> reads(K);
    std::uniform_int_distribution<int> kd(1, K - 1);
    std::uniform_int_distribution<int> mb(8, 512);
    for (int i = 0; i < N; ++i) {
      const TensorId t = p.add_tensor("s" + std::to_string(i), mb(rng) * kMiB, true);
      reads[kd(rng)].push_back(t);
    }
    std::uniform_real_distribution<double> gap(0.0002, 0.004);
    for (int k = 0; k < K; ++k) p.kernels.push_back({"k" + std::to_string(k), k == 0 ? 0.05 : gap(rng), reads[k], {}});
    p.finalize();
    std::uint64_t total = 0, big = 0;
    for (const auto& t : p.tensors) total += t.bytes;
    for (int k = 0; k < K; ++k) { std::uint64_t x = 0; for (TensorId t : reads[k]) x += p.tensors[t].bytes; big = std::max(big, x); }
    const double f[] = {1.05, 1.3, 2, 4};
    Machine m = link_machine(seed > 4 ? static_cast<std::uint64_t>(big * f[seed % 4]) : std::max<std::uint64_t>(big * 2, total / 20), 25);
    const auto t0 = std::chrono::steady_clock::now();
    LatestStartPlan lp = plan_latest_start(p, m);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(secs, 1.0) << "seed " << seed;
    int prev_issue = -1, prev_use = -1;
    std::vector<std::pair<int, int>> order;
    for (TensorId t : lp.tiered) order.push_back({p.uses(t).front(), lp.issue[t]});
    std::stable_sort(order.begin(), order.end(), [](auto a, auto b) { return a.first < b.first; });
    int bad_order = 0, after_use = 0;
    for (auto [use, issue] : order) {
      after_use += issue > use;
      bad_order += issue < prev_issue;
      prev_issue = issue;
      prev_use = use;
    }
    (void)prev_use;
    EXPECT_EQ(after_use, 0);
    EXPECT_EQ(bad_order, 0);
    const SimResult r = simulate(p, m, lp.schedule);
    EXPECT_LE(r.peak_gpu_bytes, m.gpu_bytes);
    Schedule od;
    for (TensorId t : lp.tiered) {
      const int use = p.uses(t).front();
      od.moves.push_back({Move::Evict, t, (use + 1) % K, Tier::Host});
      od.moves.push_back({Move::Prefetch, t, use, Tier::Gpu});
    }
    od.victim = VictimRule::FurthestNextUse;
    od.sort();
    const SimResult r2 = simulate(p, m, od);
    EXPECT_LE(r.iteration_s, r2.iteration_s);
  }
}
