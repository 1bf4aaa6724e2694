// Fidelity of `memlake sim` against G10's published results, on the five
// workloads of its headline table (data: tests/data/g10, Apache-2.0).
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>

#include "plan/g10_reader.h"
#include "plan/simulator.h"

using namespace memlake::plan;

namespace {

struct Published {
  const char* model;
  int batch;
  double overcommit_percent;  // G10's "M =": all tensors / GPU memory
  double g10_units;           // G10's iteration (prefetch_lru), Gcycles at 1.2 GHz
  double ideal_units;         // G10's ideal
  double tolerance;           // on g10's fraction of ideal, relative
};

// example_results/overall_performance/all.base.txt
const Published kTable[] = {
    {"BERT_Base", 256, 370.10, 8.773229325, 8.742558777, 0.03},
    {"VIT", 1280, 461.11, 6.647685439, 4.459141336, 0.03},
    {"Inceptionv3", 1536, 1969.46, 73.303772339, 71.633241480, 0.03},
    {"ResNet152", 1280, 2715.45, 137.304113890, 135.107260924, 0.03},
    // SSD-bound (200+ GB each way through the 3.2 GiB/s SSD): within 3% since
    // faults go ahead of a prefetch already moving, as G10's batcher serves
    // them (0.849 before, when a fault waited for that prefetch's last byte).
    {"SENet154", 1024, 4277.81, 170.748120306, 159.444570406, 0.03},
};

// So that test names and failures say which workload.
void PrintTo(const Published& w, std::ostream* os) { *os << w.model << "/" << w.batch; }

std::string data_dir() { return std::string(MEMLAKE_SOURCE_DIR) + "/tests/data/g10"; }

Profile load(const Published& w) {
  G10WorkloadOptions o;
  o.batch = w.batch;
  return read_g10_workload(data_dir(), w.model, o);
}

}  // namespace

class PlanFidelity : public ::testing::TestWithParam<Published> {};

TEST_P(PlanFidelity, WorkloadMatchesG10) {
  const Published& w = GetParam();
  Profile p = load(w);
  const Machine m = Machine::g10_default();
  // Same tensors: G10's overcommitment figure is all tensor bytes over 40 GiB.
  EXPECT_NEAR(100.0 * static_cast<double>(p.total_bytes()) / static_cast<double>(m.gpu_bytes), w.overcommit_percent, 0.01);
  // Same kernel times: the ideal, in G10's unit.
  const double ideal_units = p.ideal_seconds() * m.gpu_clock_hz / 1e9;
  EXPECT_NEAR(ideal_units / w.ideal_units, 1.0, 0.03);
  SimResult ideal = simulate(p, m, make_planner("ideal")->plan(p, m));
  EXPECT_NEAR(ideal.iteration_s, p.ideal_seconds(), 1e-9);
}

TEST_P(PlanFidelity, G10PolicyMatchesG10sPublishedFraction) {
  const Published& w = GetParam();
  Profile p = load(w);
  const Machine m = Machine::g10_default();
  SimResult r = simulate(p, m, make_planner("g10")->plan(p, m));
  const double published = w.ideal_units / w.g10_units;
  EXPECT_NEAR(r.fraction_of_ideal() / published, 1.0, w.tolerance)
      << w.model << ": ours " << r.fraction_of_ideal() << ", G10 " << published;
}

TEST_P(PlanFidelity, MemlakeIsNoWorseThanG10) {
  const Published& w = GetParam();
  Profile p = load(w);
  const Machine m = Machine::g10_default();
  SimResult g10 = simulate(p, m, make_planner("g10")->plan(p, m));
  SimResult ml = simulate(p, m, make_planner("memlake")->plan(p, m));
  // Under the same cost model memlake's plan is never slower than G10's.
  EXPECT_GE(ml.fraction_of_ideal(), g10.fraction_of_ideal() - 1e-9) << w.model;
  // Against G10's published numbers (their simulator): at least as good on
  // every one of the five (docs/results.md §7a).
  const double published = w.ideal_units / w.g10_units;
  EXPECT_GE(ml.fraction_of_ideal(), published - 1e-9) << w.model << " below G10's published";
}

INSTANTIATE_TEST_SUITE_P(G10Table, PlanFidelity, ::testing::ValuesIn(kTable),
                         [](const ::testing::TestParamInfo<Published>& i) { return std::string(i.param.model); });

TEST(PlanFidelityAll, MemlakeGeometricMean) {
  double log_sum = 0;
  for (const Published& w : kTable) {
    Profile p = load(w);
    const Machine m = Machine::g10_default();
    log_sum += std::log(simulate(p, m, make_planner("memlake")->plan(p, m)).fraction_of_ideal());
  }
  const double geo = std::exp(log_sum / 5);
  RecordProperty("memlake_geomean", std::to_string(geo));
  EXPECT_GE(geo, MEMLAKE_GEOMEAN_FLOOR);
}
