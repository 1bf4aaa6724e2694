// The machine a plan is made for and simulated on. Sizes are bytes and
// bandwidths bytes per second; the text form (machine_set) takes G10's
// units, binary gigabytes: "gpu_mem=40" is 40 GiB, "pcie=15.754" is
// 15.754 GiB/s (G10's artifact computes with GB = 2^30 throughout).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memlake::plan {

struct Machine {
  std::uint64_t gpu_bytes;    // GPU memory for tensors
  std::uint64_t host_bytes;   // host memory for tensors (0: no host tier)
  double pcie_bps;            // GPU link, host to GPU (host and SSD traffic share it)
  double pcie_out_bps;        // GPU link, GPU to host ("pcie" sets both directions)
  double ssd_read_bps;        // SSD -> GPU
  double ssd_write_bps;       // GPU -> SSD
  double pcie_latency_s;      // per transfer
  double ssd_read_latency_s;  // per transfer, added to the PCIe latency
  double ssd_write_latency_s;
  double fault_latency_s;     // a kernel that finds a tensor missing pays this once (UVM fault handling)
  double gpu_clock_hz;        // only to print times in G10's unit (cycles)
  // UVM semantics (G10's simulator): a kernel may start while its inputs are
  // still arriving and ends when both its work and their copies are done.
  // Off: a kernel starts only once every input is on the GPU (memlake's
  // residency engine: no kernel ever touches an unmapped page).
  bool overlap_arrivals;

  // G10's artifact defaults: A100-40GB, 128 GiB host, PCIe 3 x16 (15.754),
  // SSD 3.2 GiB/s (12/16 us), 5 us PCIe latency, 45 us system latency, 1.2 GHz.
  static Machine g10_default();
  // The lent H200: 55 GB/s pinned copies each way, local disk ~1 GB/s with
  // O_DIRECT (measured, ../shared/g10/README), 141 GB.
  static Machine h200();
};

// Sets one parameter from "key=value"; InvalidArgument naming an unknown key
// or a bad value. Keys: gpu_mem host_mem (GiB) gpu_bytes host_bytes (bytes) pcie pcie_out ssd ssd_read ssd_write
// pcie_latency_us ssd_read_latency_us ssd_write_latency_us fault_latency_us gpu_ghz.
void machine_set(Machine& m, const std::string& key_value);
std::vector<std::string> machine_keys();
std::string describe(const Machine& m);

}  // namespace memlake::plan
