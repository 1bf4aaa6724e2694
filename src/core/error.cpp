#include "core/error.h"

#include <charconv>

#include <cstdarg>
#include <cstdio>
#include <vector>

namespace memlake {

const char* errc_name(Errc c) noexcept {
  switch (c) {
    case Errc::ok: return "ok";
    case Errc::out_of_memory: return "out_of_memory";
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::driver: return "driver_error";
    case Errc::unavailable: return "unavailable";
    case Errc::internal: return "internal";
  }
  return "unknown";
}

void throw_error(Errc code, const std::string& what) { throw Error(code, what); }

std::string human_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return human_bytes(bytes);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s (%llu bytes)", human_bytes(bytes).c_str(), static_cast<unsigned long long>(bytes));
  return buf;
}

void appendf(std::string& out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  va_list again;
  va_copy(again, ap);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n >= static_cast<int>(sizeof buf)) {  // longer than the stack buffer: format again, exactly
    std::vector<char> big(static_cast<std::size_t>(n) + 1);
    std::vsnprintf(big.data(), big.size(), fmt, again);
    out.append(big.data(), static_cast<std::size_t>(n));
  } else if (n > 0) {
    out.append(buf, static_cast<std::size_t>(n));
  }
  va_end(again);
}

std::string hex_ptr(std::uintptr_t p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(p));
  return buf;
}

}  // namespace memlake

namespace memlake {
std::string fixed(double v, int decimals) {
  char b[128];
  const auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, decimals);
  return r.ec == std::errc() ? std::string(b, r.ptr) : std::string("0");
}
}  // namespace memlake
