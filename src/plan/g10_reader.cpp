#include "plan/g10_reader.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "core/error.h"

namespace memlake::plan {
namespace {

bool exists(const std::string& f) {
  struct stat st{};
  return ::stat(f.c_str(), &st) == 0;
}

[[noreturn]] void fail_at(const std::string& file, int line, const std::string& what) {
  std::string m;
  appendf(m, "%s:%d: %s", file.c_str(), line, what.c_str());
  throw_error(Errc::invalid_argument, m);
}

// "<index> <value> <unit>" lines, index 0, 1, 2, ... Calls f(index, value, line).
template <typename F>
int read_indexed(const std::string& file, const char* unit, F f) {
  std::ifstream in(file);
  if (!in) throw_error(Errc::invalid_argument, "cannot open " + file);
  std::string raw;
  int line = 0, count = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::istringstream ss(raw);
    std::string idx, val, u, extra;
    if (!(ss >> idx)) continue;  // blank line
    if (!(ss >> val >> u) || (ss >> extra)) fail_at(file, line, std::string("expected '<kernel> <value> ") + unit + "'");
    char* end = nullptr;
    long k = std::strtol(idx.c_str(), &end, 10);
    if (*end != '\0' || k != count) fail_at(file, line, "expected kernel index " + std::to_string(count) + ", got '" + idx + "'");
    double v = std::strtod(val.c_str(), &end);
    if (*end != '\0' || !(v >= 0)) fail_at(file, line, "bad value '" + val + "'");
    if (u != unit) fail_at(file, line, "unit '" + u + "', expected '" + unit + "'");
    f(count, v, line);
    ++count;
  }
  return count;
}

}  // namespace

void read_g10_kernel_times(const std::string& file, Profile& p) {
  const int nk = static_cast<int>(p.kernels.size());
  int n = read_indexed(file, "ms", [&](int k, double v, int line) {
    if (k >= nk)
      fail_at(file, line, "more kernel times than the network has kernels (" + std::to_string(nk) + ")");
    p.kernels[k].seconds = v / 1e3;
  });
  if (n != nk)
    fail_at(file, n + 1, "has " + std::to_string(n) + " kernel times, the network has " + std::to_string(nk) + " kernels");
}

void read_g10_workspaces(const std::string& file, Profile& p) {
  const int nk = static_cast<int>(p.kernels.size());
  int n = read_indexed(file, "B", [&](int k, double v, int line) {
    if (k >= nk) fail_at(file, line, "more workspace sizes than the network has kernels (" + std::to_string(nk) + ")");
    if (v > 0) {
      TensorId t = p.add_tensor("workspace#" + std::to_string(k), g10_page_round(static_cast<std::uint64_t>(v)), false);
      p.kernels[k].writes.push_back(t);
    }
  });
  if (n != nk)
    fail_at(file, n + 1, "has " + std::to_string(n) + " workspace sizes, the network has " + std::to_string(nk) + " kernels");
}

Profile read_g10_workload(const std::string& dir, const std::string& model, const G10WorkloadOptions& opt) {
  if (model.empty() || model.find('/') != std::string::npos || model.find("..") != std::string::npos)
    throw_error(Errc::invalid_argument, "bad model name '" + model + "'");
  if (opt.batch <= 0) throw_error(Errc::invalid_argument, "batch size must be positive");
  const std::string net = dir + "/frontend/Nets/" + model + ".txt";
  const std::string b = std::to_string(opt.batch);
  const std::string times = dir + "/results/" + model + "/cudnn" + b + ".txt";
  const std::string ws = dir + "/results/" + model + "/cudnn" + b + "Workspace.txt";
  if (!exists(net)) throw_error(Errc::invalid_argument, "no network file " + net + " (unknown model '" + model + "'?)");
  if (!exists(times))
    throw_error(Errc::invalid_argument, "no kernel times " + times + " (G10 did not measure " + model + " at batch " + b + ")");
  Profile p;
  p.name = model + "/" + b;
  // A transformer file starts with a number (an operator id).
  std::ifstream probe(net);
  std::string first;
  probe >> first;
  const bool transformer = !first.empty() && first.find_first_not_of("0123456789") == std::string::npos;
  if (transformer) {
    int border = opt.weight_border;
    if (border < 0) {
      if (model.rfind("BERT", 0) == 0) border = 210;
      else if (model.rfind("VIT", 0) == 0) border = 184;
      else if (model.rfind("NeRF", 0) == 0) border = 7;
      else throw_error(Errc::invalid_argument, "model '" + model + "': unknown weight border; give one");
    }
    read_g10_transformer(net, opt.batch, border, p);
  } else {
    int hw = opt.input_hw > 0 ? opt.input_hw : (model.rfind("Inception", 0) == 0 ? 299 : 224);
    read_g10_cnn(net, opt.batch, hw, p);
  }
  read_g10_kernel_times(times, p);
  if (exists(ws)) read_g10_workspaces(ws, p);
  p.finalize();
  return p;
}

}  // namespace memlake::plan
