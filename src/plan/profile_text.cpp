// The text profile (profile_text.h).
#include "plan/profile_text.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace memlake::plan {
namespace {

constexpr std::size_t kMaxLine = 1 << 20;
constexpr std::size_t kMaxItems = 1 << 24;  // tensors or kernels
constexpr std::uint64_t kMaxTotal = 1ULL << 60;  // bytes of all tensors together

[[noreturn]] void fail(const std::string& file, std::size_t line, const std::string& what) {
  std::string m;
  appendf(m, "%s:%zu: ", file.c_str(), line);
  throw_error(Errc::invalid_argument, m + what);
}

bool name_ok(const std::string& s) { return !s.empty() && s.size() <= 4096; }

// A decimal index below n (a tensor or a kernel declared above), or -1.
long long index_below(const std::string& s, std::size_t n) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return (*end != '\0' || v < 0 || v >= static_cast<long long>(n)) ? -1 : v;
}

}  // namespace

ProfileFile read_profile_text(std::istream& in, const std::string& file) {
  ProfileFile out;
  Profile& p = out.profile;
  p.name = file;
  std::string line;
  std::size_t no = 0;
  bool header = false;
  std::uint64_t total = 0;
  while (std::getline(in, line)) {
    ++no;
    if (line.size() > kMaxLine) fail(file, no, "line longer than 1 MiB");
    if (const auto h = line.find('#'); h != std::string::npos) line.resize(h);
    std::istringstream ls(line);
    std::string word;
    if (!(ls >> word)) continue;
    if (!header) {
      int v = 0;
      if (word != "memlake-profile" || !(ls >> v) || v != 1)
        fail(file, no, "not a memlake profile (expected 'memlake-profile 1' first)");
      header = true;
      continue;
    }
    std::string name, extra;
    if (word == "name") {
      if (!(ls >> name) || !name_ok(name) || (ls >> extra)) fail(file, no, "expected 'name NAME'");
      p.name = name;
    } else if (word == "machine") {
      if (!(ls >> name) || name.find('=') == std::string::npos || (ls >> extra))
        fail(file, no, "expected 'machine KEY=VALUE'");
      out.machine.push_back(name);
    } else if (word == "tensor") {
      std::string bytes, kind;
      if (!(ls >> name >> bytes >> kind) || (ls >> extra) || !name_ok(name))
        fail(file, no, "expected 'tensor NAME BYTES persistent|transient'");
      char* end = nullptr;
      errno = 0;
      const unsigned long long b = std::strtoull(bytes.c_str(), &end, 10);
      if (bytes[0] == '-' || *end != '\0' || errno == ERANGE || b > (1ULL << 56))
        fail(file, no, "tensor " + name + ": bad size '" + bytes + "'");
      if (kind != "persistent" && kind != "transient")
        fail(file, no, "tensor " + name + ": '" + kind + "' is neither persistent nor transient");
      if (p.tensors.size() >= kMaxItems) fail(file, no, "too many tensors");
      if (b > kMaxTotal - total) fail(file, no, "the tensors' sizes add up to over 1 EiB");
      total += b;
      p.add_tensor(name, b, kind == "persistent");
    } else if (word == "kernel") {
      std::string secs;
      if (!(ls >> name >> secs) || !name_ok(name)) fail(file, no, "expected 'kernel NAME SECONDS [TENSOR_ID ...]'");
      char* end = nullptr;
      const double s = std::strtod(secs.c_str(), &end);
      if (*end != '\0' || !std::isfinite(s) || s < 0 || s > 1e6)
        fail(file, no, "kernel " + name + ": bad time '" + secs + "'");
      Kernel k;
      k.name = name;
      k.seconds = s;
      std::string id;
      while (ls >> id) {
        const long long t = index_below(id, p.tensors.size());
        if (t < 0) fail(file, no, "kernel " + name + ": '" + id + "' is not a tensor declared above");
        k.reads.push_back(static_cast<TensorId>(t));
      }
      if (p.kernels.size() >= kMaxItems) fail(file, no, "too many kernels");
      p.kernels.push_back(std::move(k));
    } else if (word == "move") {
      std::string kind, id, at, tier;
      if (!(ls >> kind >> id >> at) || (kind != "evict" && kind != "prefetch"))
        fail(file, no, "expected 'move evict|prefetch TENSOR_ID KERNEL [host|ssd]'");
      if (ls >> tier) {
        if ((tier != "host" && tier != "ssd") || (ls >> extra)) fail(file, no, "move: tier '" + tier + "' is not host or ssd");
      }
      const long long t = index_below(id, p.tensors.size());
      if (t < 0) fail(file, no, "move: '" + id + "' is not a tensor declared above");
      const long long k = index_below(at, p.kernels.size());
      if (k < 0) fail(file, no, "move: '" + at + "' is not a kernel declared above");
      if (out.moves.size() >= kMaxItems) fail(file, no, "too many moves");
      out.moves.push_back({kind == "evict" ? Move::Evict : Move::Prefetch, static_cast<TensorId>(t), static_cast<int>(k),
                           tier == "ssd" ? Tier::Ssd : (kind == "evict" ? Tier::Host : Tier::Gpu)});
    } else {
      fail(file, no, "unknown line '" + word + "' (name, machine, tensor, kernel, move)");
    }
  }
  if (in.bad()) fail(file, no, "read error");
  if (!header) fail(file, no, "empty: not a memlake profile");
  if (p.kernels.empty()) fail(file, no, "no kernels");
  p.finalize();
  return out;
}

ProfileFile read_profile_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw_error(Errc::invalid_argument, "cannot open profile " + path + ": " + std::strerror(errno));
  return read_profile_text(f, path);
}

std::string profile_text(const Profile& p, const std::vector<std::string>& machine) {
  std::string s = "memlake-profile 1\n";
  if (!p.name.empty() && p.name.find_first_of(" \t\n#") == std::string::npos) s += "name " + p.name + "\n";
  for (const auto& kv : machine) s += "machine " + kv + "\n";
  for (const Tensor& t : p.tensors)
    appendf(s, "tensor %s %llu %s\n", t.name.c_str(), static_cast<unsigned long long>(t.bytes),
            t.persistent ? "persistent" : "transient");
  for (const Kernel& k : p.kernels) {
    appendf(s, "kernel %s %.9g", k.name.c_str(), k.seconds);
    for (const auto* list : {&k.reads, &k.writes})
      for (TensorId t : *list) appendf(s, " %d", t);
    s += "\n";
  }
  return s;
}

}  // namespace memlake::plan
