// The option parser: "key=value" (or a size alone) from arbitrary bytes.
// Every input is applied or refused with Errc::invalid_argument, and a
// refused one leaves the options as they were.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/options.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  const std::size_t eq = in.find('=');
  try {
    (void)memlake::parse_size(in);
  } catch (const memlake::Error&) {
  }
  if (eq == std::string::npos) return 0;
  memlake::Options o;
  const std::string key = in.substr(0, eq), value = in.substr(eq + 1);
  const std::string before = memlake::Options{}.get("memory_cap");
  try {
    o.set(key, value);
    (void)o.get(key);
  } catch (const memlake::Error&) {
    if (o.get("memory_cap") != before) std::abort();  // a failed set changed the options
  }
  return 0;
}
