#include "plan/machine.h"

#include <cerrno>
#include <cstdlib>

#include "core/error.h"

namespace memlake::plan {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}

Machine Machine::g10_default() {
  Machine m{};
  m.gpu_bytes = static_cast<std::uint64_t>(40 * kGiB);
  m.host_bytes = static_cast<std::uint64_t>(128 * kGiB);
  m.pcie_bps = m.pcie_out_bps = 15.754 * kGiB;
  m.ssd_read_bps = m.ssd_write_bps = 3.2 * kGiB;
  m.pcie_latency_s = 5e-6;
  m.ssd_read_latency_s = 12e-6;
  m.ssd_write_latency_s = 16e-6;
  m.fault_latency_s = 45e-6;
  m.gpu_clock_hz = 1.2e9;
  m.overlap_arrivals = true;
  return m;
}

Machine Machine::h200() {
  Machine m = g10_default();
  m.gpu_bytes = static_cast<std::uint64_t>(139 * kGiB);
  m.host_bytes = static_cast<std::uint64_t>(96 * kGiB);
  m.pcie_bps = m.pcie_out_bps = 55e9;
  m.ssd_read_bps = m.ssd_write_bps = 1e9;
  m.gpu_clock_hz = 1.98e9;
  m.overlap_arrivals = false;
  return m;
}

std::vector<std::string> machine_keys() {
  return {"gpu_mem", "gpu_bytes", "host_mem", "host_bytes", "pcie", "pcie_out", "ssd", "ssd_read", "ssd_write", "pcie_latency_us",
          "ssd_read_latency_us", "ssd_write_latency_us", "fault_latency_us", "gpu_ghz", "overlap"};
}

void machine_set(Machine& m, const std::string& kv) {
  std::size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0)
    throw_error(Errc::invalid_argument, "machine parameter '" + kv + "': expected KEY=VALUE");
  const std::string key = kv.substr(0, eq), val = kv.substr(eq + 1);
  if (key == "gpu_bytes" || key == "host_bytes") {  // exact, in bytes
    errno = 0;
    char* e = nullptr;
    const unsigned long long b = std::strtoull(val.c_str(), &e, 10);
    if (val.empty() || *e != '\0' || errno == ERANGE || val.find_first_not_of("0123456789") != std::string::npos)
      throw_error(Errc::invalid_argument, "machine parameter '" + key + "': bad value '" + val + "'");
    (key == "gpu_bytes" ? m.gpu_bytes : m.host_bytes) = b;
    return;
  }
  char* end = nullptr;
  double v = std::strtod(val.c_str(), &end);
  if (val.empty() || *end != '\0' || !(v >= 0) || v > 1e9)
    throw_error(Errc::invalid_argument, "machine parameter '" + key + "': bad value '" + val + "'");
  auto positive = [&] {
    if (v <= 0) throw_error(Errc::invalid_argument, "machine parameter '" + key + "' must be positive");
  };
  if (key == "gpu_mem") positive(), m.gpu_bytes = static_cast<std::uint64_t>(v * kGiB);
  else if (key == "host_mem") m.host_bytes = static_cast<std::uint64_t>(v * kGiB);
  else if (key == "pcie") positive(), m.pcie_bps = m.pcie_out_bps = v * kGiB;
  else if (key == "pcie_out") positive(), m.pcie_out_bps = v * kGiB;
  else if (key == "ssd") positive(), m.ssd_read_bps = m.ssd_write_bps = v * kGiB;
  else if (key == "ssd_read") positive(), m.ssd_read_bps = v * kGiB;
  else if (key == "ssd_write") positive(), m.ssd_write_bps = v * kGiB;
  else if (key == "pcie_latency_us") m.pcie_latency_s = v * 1e-6;
  else if (key == "ssd_read_latency_us") m.ssd_read_latency_s = v * 1e-6;
  else if (key == "ssd_write_latency_us") m.ssd_write_latency_s = v * 1e-6;
  else if (key == "fault_latency_us") m.fault_latency_s = v * 1e-6;
  else if (key == "gpu_ghz") positive(), m.gpu_clock_hz = v * 1e9;
  else if (key == "overlap") {
    if (v != 0 && v != 1) throw_error(Errc::invalid_argument, "machine parameter 'overlap' is 0 or 1");
    m.overlap_arrivals = v == 1;
  }
  else {
    std::string known;
    for (const auto& k : machine_keys()) known += (known.empty() ? "" : ", ") + k;
    throw_error(Errc::invalid_argument, "unknown machine parameter '" + key + "' (known: " + known + ")");
  }
}

std::string describe(const Machine& m) {
  std::string s;
  appendf(s, "GPU %.1f GiB, host %.1f GiB, PCIe %.3f GiB/s, SSD %.2f/%.2f GiB/s (read/write)", m.gpu_bytes / kGiB,
          m.host_bytes / kGiB, m.pcie_bps / kGiB, m.ssd_read_bps / kGiB, m.ssd_write_bps / kGiB);
  return s;
}

}  // namespace memlake::plan
